"""`bench/recurring_platform.py`'s pure parts: the latency of a sign-off read from a small synthetic
log (its planning decision found by causation), the per-seed summary and worst over seeds, and the
seeded templates it prepares (distinct, and each gets a contract from the platform's own decisions,
in process). No platform is started and no time is asserted on the wall clock."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from sextant_contracts.envelope import Envelope
from sextant_core.profiles import policy_set
from sextant_core.testing.builders import server
from sextant_core.testing.loop import InProcessPlatform, steady_agent
from sextant_kit.testing import load_script

BENCH = Path(__file__).resolve().parents[3] / "bench"


@pytest.fixture(scope="module")
def rp() -> ModuleType:
    return load_script(BENCH / "recurring_platform.py", "bench_recurring_platform")  # imports e2e.py, quality.py


def env(type_: str, id_: str, time: float, tid: str, position: int, causation: str | None = None,
        **payload: Any) -> Envelope:
    return Envelope(id=id_, type=type_, source="test", stream=f"template-{tid}", stream_version=position,
                    position=position, schema_version=1, time=time, causation_id=causation,
                    payload={"template_id": tid, **payload})


def synthetic_log() -> list[Envelope]:
    """Three sign-offs: A planned 1.5 s after its request, B refused, C never decided; a daily
    re-plan of A (caused by something else) and a sign-off of a template the bench did not send."""
    return [
        env("ContractSignedOff", "so-a", 100.2, "A", 1, verdict="accept"),
        env("ContractSignedOff", "so-b", 101.3, "B", 2, verdict="override"),
        env("ReservationRefused", "d-b", 102.0, "B", 3, causation="so-b", field="deadline_s"),
        env("ContractSignedOff", "so-c", 102.1, "C", 4, verdict="accept"),
        env("ReservationPlanned", "d-a", 101.5, "A", 5, causation="so-a", change="new"),
        env("ReservationPlanned", "d-a2", 150.0, "A", 6, causation="inferred-a", change="reinferred"),
        env("ContractSignedOff", "so-x", 103.0, "X", 7, verdict="accept"),
        env("ReservationPlanned", "d-x", 103.5, "X", 8, causation="so-x", change="new"),
    ]


def test_a_signoffs_latency_ends_at_the_decision_it_caused(rp: ModuleType) -> None:
    sent = {"A": 100.0, "B": 101.0, "C": 102.0}
    rows = {r["template_id"]: r for r in rp.signoff_latencies(synthetic_log(), sent)}
    assert set(rows) == {"A", "B", "C"}  # X was not sent by the bench
    a, b, c = rows["A"], rows["B"], rows["C"]
    assert (a["decision"], a["latency_ms"], a["api_ms"], a["pipeline_ms"]) == ("ReservationPlanned", 1500.0, 200.0, 1300.0)
    assert (b["decision"], b["latency_ms"], b["verdict"]) == ("ReservationRefused", 1000.0, "override")
    assert (c["decision"], c["latency_ms"], c["pipeline_ms"], c["api_ms"]) == (None, None, None, 100.0)


def test_the_summary_counts_refusals_and_the_undecided(rp: ModuleType) -> None:
    rows = rp.signoff_latencies(synthetic_log(), {"A": 100.0, "B": 101.0, "C": 102.0})
    s = rp.summary(rows, sent=4, api_refused=1)  # a fourth request got a 422: nothing written
    assert (s["count"], s["refused"], s["refused_by_api"], s["undecided"]) == (2, 2, 1, 1)
    assert (s["p50_ms"], s["p99_ms"], s["max_ms"]) == (1000.0, 1500.0, 1500.0)
    empty = rp.summary([], sent=0, api_refused=0)
    assert empty["count"] == 0 and empty["p99_ms"] is None and empty["max_ms"] is None


def test_worst_takes_the_slowest_seed_and_the_most_refused(rp: ModuleType) -> None:
    a = {"p50_ms": 10.0, "p95_ms": 20.0, "p99_ms": 30.0, "max_ms": 40.0, "refused": 0, "undecided": 2, "count": 300}
    b = {"p50_ms": 12.0, "p95_ms": 18.0, "p99_ms": 50.0, "max_ms": 35.0, "refused": 3, "undecided": 0, "count": 297}
    w = rp.worst({"6": a, "7": b})
    assert w == {"p50_ms": 12.0, "p95_ms": 20.0, "p99_ms": 50.0, "max_ms": 40.0, "refused": 3, "undecided": 2,
                 "count": 297}


def test_the_prepared_templates_are_distinct_seeded_and_get_contracts(rp: ModuleType) -> None:
    templates = rp.template_runs(6, 4, first_day=20000)
    assert templates == rp.template_runs(6, 4, first_day=20000)
    assert rp.template_runs(7, 4, first_day=20000) != templates
    ids = [runs[0].template_id for runs in templates]
    assert len(set(ids)) == 4 and all(len({r.template_id for r in runs}) == 1 for runs in templates)
    p = InProcessPlatform(policy_set("sextant-adaptive"), steady_agent)
    p.submit([server("s1", cores=64, memory_gb=512.0)])
    for runs in templates:
        p.submit(runs)
    inferred = {e.payload["template_id"] for e in p.log if e.type == "ContractInferred"}
    assert inferred == set(ids)
