"""Acceptance "Fuzzing", the OpenAPI document and the CLI verbs (docs/api/README.md), against the admission
service running as a process.

- docs/api/openapi.json is what the code generates and what the running service serves
  (regenerate with `.venv/bin/python -m sextant_admission.openapi`);
- schemathesis generates requests from that document for every operation — valid ones (positive
  mode) and schema-violating ones (negative mode) — and sends them to the admission service running
  as a process over the real PostgreSQL and Kafka, with a tenant token: no response is a server
  error, every status code and content type is documented, every body matches its schema.
  The {workload_id} operations are also fuzzed about a live workload ("existing"). The outbox
  relay runs beside the service, and the fixture asserts that the live submission moved the
  broker's end offsets of the workload-events topic (these tests use the real Kafka).
  Bounded and deterministic: `EXAMPLES` per operation and mode, `derandomize=True` (the examples
  are a function of the test), no example database;
- the CLI: `sextant tenants create` prints the token alone on its last line; `submit`, `status`,
  `list`, `update` and `revoke` go through the API with `--token` or `$SEXTANT_TOKEN`; a revoked
  token is refused.
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from sextant_admission.openapi import DEFAULT_PATH, document, render
from sextant_admission.testing import create_tenants, own_database
from sextant_cli.platform import Platform
from sextant_contracts.topics import WORKLOAD_EVENTS
from sextant_kit import testing as kit_testing
from sextant_kit.testing import topic_end_offsets

EXAMPLES = 30
SCHEMA = schemathesis.openapi.from_path(DEFAULT_PATH)
# every operation, /readyz included: its 503 (a dependency down) is a documented problem document
OPERATIONS = sorted(op.ok().label for op in SCHEMA.get_all_operations())
CHECKS = [schemathesis.checks.not_a_server_error, schemathesis.checks.status_code_conformance,
          schemathesis.checks.content_type_conformance, schemathesis.checks.response_schema_conformance]
MODES = {"positive": schemathesis.GenerationMode.POSITIVE, "negative": schemathesis.GenerationMode.NEGATIVE}


def _has_inputs(label: str) -> bool:
    """Does the operation take anything a negative example can break (a body, or a parameter other
    than the Authorization header the tests set)? /healthz and /v1/state do not."""
    op = SCHEMA.find_operation_by_label(label)
    spec = op.definition.raw if op is not None else {}
    params = [p for p in spec.get("parameters", []) if p.get("name", "").lower() != "authorization"]
    return bool(params or spec.get("requestBody"))


# "existing": positive examples about a live workload of the tenant (the fixture submits it), so the
# 200/202/409 answers of the {workload_id} operations are fuzzed too, not only their 404s
CASES = [(label, mode) for label in OPERATIONS for mode in MODES if mode == "positive" or _has_inputs(label)] + \
    [(label, "existing") for label in sorted(OPERATIONS, key=lambda x: x.startswith("DELETE"))  # revoke last
     if "{workload_id}" in label]
REGENERATE = "run `.venv/bin/python -m sextant_admission.openapi` and commit docs/api/openapi.json"


def test_openapi_file_matches_the_code() -> None:
    assert DEFAULT_PATH.read_text() == render(document()), f"docs/api/openapi.json is stale: {REGENERATE}"


@dataclass
class Served:
    url: str
    db: str
    headers: dict[str, str]
    counts: dict[str, int]
    workload_id: str


def offsets_moved(bootstrap: str, topic: str, before: int, deadline_s: float = 60.0) -> bool:
    """Poll the broker until the sum of `topic`'s end offsets exceeds `before`."""
    end = time.monotonic() + deadline_s
    while sum(asyncio.run(topic_end_offsets(bootstrap, topic)).values()) <= before:
        if time.monotonic() > end:
            return False
        time.sleep(0.2)
    return True


@pytest.fixture(scope="module")
def served(pg_node: Any, stack_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with own_database(pg_node, "api_fuzz") as url:
        token = create_tenants(url, fuzz={})["fuzz"]
        env = {**stack_env, "SEXTANT_DATABASE_URL": url, "SEXTANT_API_AUTH": "tokens", "SEXTANT_FRONT_DOOR": "0",
               "SEXTANT_READY_CONSUMERS": ""}  # the API alone: no decider to wait for
        platform = Platform(Path(tmp_path_factory.mktemp("api-fuzz")), env)
        try:
            platform.start("admission")
            platform.start("relay")
            platform.wait_ready()
            bootstrap = stack_env["SEXTANT_KAFKA_BOOTSTRAP"]
            before = sum(asyncio.run(topic_end_offsets(bootstrap, WORKLOAD_EVENTS.name)).values())
            headers = {"Authorization": f"Bearer {token}"}
            live = httpx.post(f"{platform.url('admission')}/v1/workloads", headers=headers, timeout=30, json={
                "kind": "service", "target": {"type": "throughput_latency", "qps": 100, "p99_latency_ms": 10},
                "spec": {"type": "container", "image": "nginx"}})
            assert live.status_code == 202, live.text
            assert offsets_moved(bootstrap, WORKLOAD_EVENTS.name, before), \
                "the live submission never reached Kafka (end offsets of the workload-events topic unchanged)"
            yield Served(platform.url("admission"), url, headers, {}, live.json()["id"])
        finally:
            platform.stop()


@pytest.mark.integration
def test_the_service_serves_the_document_in_the_repository(served: Served) -> None:
    served_doc = httpx.get(f"{served.url}/openapi.json", timeout=10).json()
    assert served_doc == json.loads(DEFAULT_PATH.read_text()), f"the served document differs: {REGENERATE}"


@pytest.mark.integration
@pytest.mark.parametrize(("label", "mode"), CASES, ids=[f"{label} {mode}" for label, mode in CASES])
def test_generated_requests_get_documented_answers(served: Served, label: str, mode: str) -> None:
    operation = SCHEMA.find_operation_by_label(label)
    assert operation is not None
    if mode == "existing":
        strategy = SCHEMA.get_case_strategy(operation, path_parameters={"workload_id": served.workload_id})
    else:
        strategy = SCHEMA.get_case_strategy(operation, generation_mode=MODES[mode])
    statuses: list[int] = []

    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None, print_blob=True,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    @given(case=strategy)
    def run(case: schemathesis.Case) -> None:
        response = case.call_and_validate(base_url=served.url, headers=served.headers, checks=CHECKS)
        statuses.append(response.status_code)

    run()
    served.counts[f"{label} {mode}"] = len(statuses)
    print(f"\n{label} {mode}: {len(statuses)} examples, statuses {dict(sorted(Counter(statuses).items()))}")
    assert statuses, "no request was generated"
    assert all(s < 500 for s in statuses)


def sextant(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return kit_testing.sextant(*args, env={"COLUMNS": "200", **(env or {})}, timeout=120)


@pytest.mark.integration
def test_cli_tenants_and_workload_verbs_go_through_the_api(served: Served, tmp_path: Path) -> None:
    created = sextant("tenants", "--url", served.db, "create", "cli-team", "--max-workloads", "5")
    assert created.returncode == 0, created.stderr
    token = created.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"sxt_[0-9a-f]{12}_[A-Za-z0-9_-]{43}", token), created.stdout
    listed = sextant("tenants", "--url", served.db, "list")
    assert "cli-team" in listed.stdout and "active" in listed.stdout
    taken = sextant("tenants", "--url", served.db, "create", "cli-team")
    assert taken.returncode == 1 and "exists" in taken.stdout
    second = sextant("tenants", "--url", served.db, "token", "cli-team").stdout.strip().splitlines()[-1]
    token_id = second.split("_")[1]
    assert httpx.get(f"{served.url}/v1/workloads", headers={"Authorization": f"Bearer {second}"}).status_code == 200
    assert sextant("tenants", "--url", served.db, "revoke", "cli-team", "--token", token_id).returncode == 0
    assert httpx.get(f"{served.url}/v1/workloads", headers={"Authorization": f"Bearer {second}"}).status_code == 401

    body = tmp_path / "w.json"
    body.write_text(json.dumps({"kind": "batch", "target": {"type": "completion_time", "seconds": 60},
                                "spec": {"type": "container", "image": "busybox", "command": ["true"]}}))
    api = ["--api", served.url]
    sub = sextant("submit", str(body), *api, "--token", token, "--idempotency-key", "cli-1")
    assert sub.returncode == 0, sub.stdout + sub.stderr
    wid = json.loads(sub.stdout)["id"]
    with_env = {"SEXTANT_TOKEN": token}
    status = sextant("status", wid, *api, env=with_env)
    assert status.returncode == 0 and json.loads(status.stdout)["tenant"] == "cli-team"
    assert wid[:12] in sextant("list", *api, env=with_env).stdout
    new = json.dumps({"type": "completion_time", "seconds": 30})
    assert sextant("update", wid, "--target", new, *api, env=with_env).returncode == 0
    assert json.loads(sextant("status", wid, *api, env=with_env).stdout)["target"]["seconds"] == 30
    assert sextant("revoke", wid, *api, env=with_env).returncode == 0
    again = sextant("revoke", wid, *api, env=with_env)
    assert again.returncode == 1 and json.loads(again.stdout)["status"] == 409
    other = sextant("status", wid, *api, "--token", served.headers["Authorization"].split()[1])
    assert other.returncode == 1 and json.loads(other.stdout)["status"] == 404  # another tenant's

    assert sextant("tenants", "--url", served.db, "revoke", "cli-team").returncode == 0
    refused = sextant("status", wid, *api, env=with_env)
    assert refused.returncode == 1 and json.loads(refused.stdout)["status"] == 401
