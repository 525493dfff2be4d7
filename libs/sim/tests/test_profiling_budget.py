"""`sextant-adaptive-profiling` (the plan of `sextant` 9) in the twin: within its budget, accounted,
deterministic."""

from __future__ import annotations

import hashlib
import io
import json

import pytest
from sextant_sim.runner import RunResult, run_profile
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import Setup, prepare

PROFILE = "sextant-adaptive-profiling"


@pytest.fixture(scope="module")
def setup() -> Setup:
    return prepare(load_scenario("smoke"), 1)


def _run(setup: Setup, profile: str) -> tuple[RunResult, str]:
    buf = io.StringIO()
    res = run_profile(setup, profile, 1, log_out=buf)
    return res, buf.getvalue()


def _planned_runs(log: str) -> list[dict[str, object]]:
    lines = [json.loads(line) for line in log.splitlines()]
    return [r for x in lines if x["type"] == "ProfilingPlanned" for r in x["event"]["runs"]]


def test_the_budget_holds_and_the_log_accounts_for_it(setup: Setup) -> None:
    res, log = _run(setup, PROFILE)
    base, base_log = _run(setup, "sextant@8")  # the papers' plan (sextant 9 profiles as PROFILE does)
    s, b = res.summary, base.summary
    assert 0 < s["profiling_runs_per_workload"] <= 10.0  # the budget: at most 10 runs a workload
    assert s["profiling_runs_per_workload"] > b["profiling_runs_per_workload"]  # it buys more than the papers' 5
    for summary, text in ((s, log), (b, base_log)):  # the summary's accounting is the log's runs
        runs = _planned_runs(text)
        assert summary["profiling_runs_per_workload"] == round(len(runs) / len(setup.subs), 4)
        core_s = sum(float(r["cores"]) * float(r["nodes"]) * float(r["duration_s"]) for r in runs)  # type: ignore[arg-type]
        assert summary["profiling_server_share"] == pytest.approx(core_s / (setup.cat.cores * summary["simulated_seconds"]),
                                                                  rel=1e-3)


def test_the_adaptive_profile_replays_byte_for_byte(setup: Setup) -> None:
    one, two = _run(setup, PROFILE)[1], _run(setup, PROFILE)[1]
    assert hashlib.sha256(one.encode()).hexdigest() == hashlib.sha256(two.encode()).hexdigest()
