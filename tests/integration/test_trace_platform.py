"""Acceptance "Traces" (docs/platform.md, Observability): one submission's trace id is found in the
spans of every process it crossed and in their log lines.

The platform's eight processes run over the session's PostgreSQL (a database of this module's own)
and Kafka with the one documented setting `SEXTANT_OTEL_EXPORTER=jsonl` (each process writes
`<run dir>/traces/<process>.jsonl`) and the default sampling; one workload is submitted over REST
and followed until it runs. The trace of its `POST /v1/workloads` must hold spans of admission,
the relay, profiling, the agent, classification and planning — and each process with a span in
that trace must have written a log line carrying the trace id; the trace stays within the
documented budget of spans per workload.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sextant_admission.testing import create_tenants, own_database
from sextant_cli.demo import submissions
from sextant_cli.platform import SERVICES, Platform
from sextant_kit.telemetry import read_spans, trace_id_of
from sextant_kit.testing import read_log, until

pytestmark = [pytest.mark.integration, pytest.mark.slow]

PROCESSES = (*SERVICES, "relay", "agent")
CROSSED = {"admission", "relay", "profiling", "agent", "classification", "planning"}
DEADLINE_S = 240.0


@dataclass
class Traced:
    trace_id: str
    spans: list[dict[str, Any]]
    logs: dict[str, str]
    metrics: dict[str, str]  # process -> its /metrics text


@pytest.fixture(scope="module")
def traced(pg_node: Any, stack_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Traced]:
    with own_database(pg_node, "trace_platform") as url:
        create_tenants(url)  # migrations only: no tenant, the API is open
        run_dir = Path(tmp_path_factory.mktemp("trace-platform"))
        env = {**stack_env, "SEXTANT_DATABASE_URL": url, "SEXTANT_AGENT_SCENARIO": "platform-demo",
               "SEXTANT_AGENT_SEED": "7", "SEXTANT_AGENT_SPEED": "30", "SEXTANT_TICK_PERIOD_S": "1.0",
               "SEXTANT_OTEL_EXPORTER": "jsonl", "SEXTANT_RUN_DIR": str(run_dir)}
        platform = Platform(run_dir, env)
        try:
            platform.start_all(PROCESSES)
            platform.wait_ready()
            (_, body), = submissions("platform-demo", 7, 1)
            with httpx.Client(base_url=platform.url("admission"), timeout=30.0) as client:
                r = client.post("/v1/workloads", json=body)
                assert r.status_code == 202, r.text
                wid = r.json()["id"]
                until(f"{wid} running", lambda: client.get(f"/v1/workloads/{wid}").json()["state"]
                      in ("running", "completed"), DEADLINE_S)
            metrics = {name: httpx.get(f"{platform.url(name)}/metrics", timeout=30.0) for name in PROCESSES}
        finally:
            platform.stop()
        log = asyncio.run(read_log(url))
    (submitted,) = [e for e in log if e.type == "WorkloadSubmitted" and e.payload["workload_id"] == wid]
    trace_id = trace_id_of(submitted.traceparent)
    assert trace_id is not None
    spans = [s for p in sorted((run_dir / "traces").glob("*.jsonl")) for s in read_spans(p)]
    logs = {p.stem: p.read_text(encoding="utf-8", errors="replace") for p in (run_dir / "logs").glob("*.log")}
    yield Traced(trace_id, spans, logs, {n: r.text for n, r in metrics.items() if r.status_code == 200})


def test_one_submission_is_one_trace_across_the_processes_and_their_logs(traced: Traced) -> None:
    mine = [s for s in traced.spans if s["trace_id"] == traced.trace_id]
    by_service = collections.Counter(s["service"] for s in mine)
    assert set(by_service) >= CROSSED, f"no spans of {sorted(CROSSED - set(by_service))} in the trace: {by_service}"
    (post,) = [s for s in mine if s["kind"] == "SERVER" and s["name"] == "POST /v1/workloads"]
    assert post["parent_span_id"] is None and post["service"] == "admission"
    missing = [name for name in by_service if f"trace_id={traced.trace_id}" not in traced.logs.get(name, "")]
    assert not missing, f"the trace id is in no log line of {missing}"


def test_polling_is_not_in_the_trace_and_a_workload_stays_within_its_span_budget(traced: Traced) -> None:
    from sextant_kit.telemetry import SPANS_PER_WORKLOAD

    mine = [s for s in traced.spans if s["trace_id"] == traced.trace_id]
    assert len(mine) <= SPANS_PER_WORKLOAD, collections.Counter((s["service"], s["name"]) for s in mine)
    roots = [s for s in traced.spans if s["parent_span_id"] is None]
    assert not [s for s in roots if s["kind"] == "CLIENT"], "database polling exported as root spans"


def test_every_process_serves_its_metrics(traced: Traced) -> None:
    assert set(traced.metrics) == set(PROCESSES)
    for name, text in traced.metrics.items():
        assert f'sextant_restarts_total{{process="{name}"}} 0.0' in text, name
        assert "process_cpu_seconds_total" in text, name
    assert 'sextant_http_request_seconds_count{method="POST",route="/v1/workloads",status="202"} 1.0' \
        in traced.metrics["admission"]
    assert 'sextant_decisions_total{consumer="planning",type="PlacementDecided"} 1.0' in traced.metrics["planning"]
    assert 'sextant_decision_latency_seconds_count{consumer="planning"} 1.0' in traced.metrics["planning"]
    assert 'sextant_consumer_lag{consumer="planning",partition=' in traced.metrics["planning"]
    assert "# TYPE sextant_arq_queue_length gauge" in traced.metrics["admission"]
