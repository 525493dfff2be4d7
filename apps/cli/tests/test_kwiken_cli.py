"""`sextant kwiken plan WORKLOAD` against the real admission app (served over HTTP from a thread,
on the in-memory event store, seeded with a service whose first Kwiken plan is on the log): the
plan's stages and decision are printed; a workload without stages or without a plan is one line on
stderr naming the reason, exit 1."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from sextant_admission.memtesting import Registry, Served
from sextant_admission.memtesting import served as serve_admission
from sextant_cli.main import main
from sextant_contracts import kwiken as kw
from sextant_contracts.envelope import Envelope
from sextant_core.profiles import policy_set
from sextant_core.testing.builders import server, submitted
from sextant_core.testing.kwiken import declared, window
from sextant_core.testing.loop import InProcessPlatform, steady_agent


@pytest.fixture(scope="module")
def log() -> list[Envelope]:
    p = InProcessPlatform(policy_set("foundation"), steady_agent)
    p.submit([server("s1", cores=16, memory_gb=64.0), submitted("svc", tenant="acme", cores=2, fast_path=True),
              submitted("b1", tenant="acme", cores=1, fast_path=True), submitted("bare", tenant="acme", cores=1)])
    p.submit([declared("svc", at=20.0), window(100.0, 1, workload_id="svc")])  # the first plan
    p.submit([declared("bare", at=30.0)])
    return p.log


@pytest.fixture(scope="module")
def served(log: list[Envelope]) -> Iterator[Served]:
    with serve_admission(log, api_auth="tokens", registry=Registry(tenants=("acme",))) as out:
        yield out


def _plan(log: list[Envelope]) -> tuple[Envelope, kw.KwikenPlanDecided]:
    env = next(e for e in log if e.type == "KwikenPlanDecided")
    plan = env.event()
    assert isinstance(plan, kw.KwikenPlanDecided)
    return env, plan


def test_the_plan_is_printed_with_its_stages_and_decision(
        served: Served, log: list[Envelope], capsys: pytest.CaptureFixture[str]) -> None:
    _env, plan = _plan(log)
    code = main(["kwiken", "plan", "svc", "--api", served.url, "--token", "op"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert plan.decision.decision_id in out and "plan first" in out
    lookup = next(s for s in plan.stages if s.stage == "lookup")
    row = next(line for line in out.splitlines() if line.strip().startswith("lookup"))
    assert f"{lookup.partial_p:g}" in row.split()


def test_json_prints_the_api_document(served: Served, log: list[Envelope], capsys: pytest.CaptureFixture[str]) -> None:
    env, plan = _plan(log)
    assert main(["kwiken", "plan", "svc", "--json", "--api", served.url, "--token", "op"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["event_id"] == env.id and [s["stage"] for s in doc["stages"]] == [s.stage for s in plan.stages]


@pytest.mark.parametrize(("wid", "says"), [("b1", "has not declared its stages"), ("bare", "has no Kwiken plan yet"),
                                           ("nope", "no workload nope")], ids=["no-stages", "no-plan", "unknown"])
def test_no_plan_is_one_line_on_stderr_and_exit_1(served: Served, capsys: pytest.CaptureFixture[str], wid: str,
                                                  says: str) -> None:
    code = main(["kwiken", "plan", wid, "--api", served.url, "--token", "op"])
    got = capsys.readouterr()
    assert code == 1 and got.out == ""
    assert got.err.startswith("sextant kwiken plan: ") and says in got.err and got.err.count("\n") == 1
