"""Replay re-derives every decision of a log; it is not a tautology (mutations are caught)."""

from __future__ import annotations

from typing import Any

import pytest
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_core.policies import FirstFitPlanner, PolicySet
from sextant_core.profiles import policy_set
from sextant_core.replay import replay
from sextant_core.state import fold
from sextant_core.testing.builders import server, submitted
from sextant_core.testing.loop import InProcessPlatform

POLICY = policy_set("foundation")


def agent(c: cmd.Command, at: float) -> list[ev.Event]:
    if isinstance(c, cmd.ExecuteProfileRuns):
        return [ev.ProfileSampleRecorded(at=at + 1, workload_id=c.workload_id, run_id=r.run_id,
                                         classification=r.classification, column=r.column,
                                         value=1.0 + i / 10, caused=10.0 if r.classification == "interference" else None)
                for i, r in enumerate(c.runs)] + [ev.ProfilingCompleted(at=at + 1, workload_id=c.workload_id,
                                                                       samples=len(c.runs))]
    if isinstance(c, cmd.StartWorkload):
        return [ev.WorkloadStarted(at=at + 1, workload_id=c.workload_id, allocation=c.allocation)]
    return []


def platform_log() -> list:  # type: ignore[type-arg]
    p = InProcessPlatform(POLICY, agent)
    p.submit([server("s1", cores=4), server("s2", cores=4, platform="B")])
    for i in range(6):
        p.submit([submitted(f"w{i}", at=10.0 + i, cores=3)])
    p.submit([ev.WorkloadCompleted(at=50, workload_id="w0")])
    return p.log


def test_replay_of_a_clean_log_finds_no_difference() -> None:
    log = platform_log()
    report = replay(log, policy_set)
    assert report.ok, report.differences[:3]
    decisions = sum(1 for e in log if isinstance(e.event(), ev.DecisionEvent))
    assert report.decisions == decisions > 20
    assert report.state == fold(log)
    assert report.summary() == f"replay: {decisions} decisions re-derived, 0 differences"


def test_changed_sample_value_is_a_difference() -> None:
    log = platform_log()
    i = next(i for i, e in enumerate(log) if e.type == "ProfileSampleRecorded")
    log[i] = log[i].model_copy(update={"payload": {**log[i].payload, "value": 7.5}})
    report = replay(log, policy_set)
    assert not report.ok
    assert any("WorkloadClassified" in d.what for d in report.differences)
    # a block that differs is folded as recorded, not as re-derived
    assert report.state == fold(log)


def test_changed_policy_parameter_is_a_difference() -> None:
    log = platform_log()

    class GreedyFirst(FirstFitPlanner):  # a different policy under the same name and version
        def place(self, state, w, ctx):  # type: ignore[no-untyped-def]
            out = super().place(state, w, ctx)
            return out if out.allocation is None else type(out)(allocation=None, reasons=("changed",))

    changed = PolicySet(**{**{f: getattr(POLICY, f) for f in POLICY.__dataclass_fields__}, "planner": GreedyFirst()})
    report = replay(log, lambda name: changed)
    assert not report.ok


def test_replay_from_a_snapshot_matches_replay_from_scratch() -> None:
    log = platform_log()
    cut = len(log) // 2
    snapshot = fold(log[:cut])
    by_id = {e.id: e.event() for e in log[:cut]}
    report = replay(log[cut:], policy_set, state=snapshot, lookup=by_id.get)
    assert report.ok, report.differences[:3]
    assert report.state == replay(log, policy_set).state


def test_a_model_that_cannot_be_rebuilt_is_a_reported_difference_and_the_replay_goes_on() -> None:
    """`ModelMismatch` (a classification model the log recorded cannot be rebuilt from it: a
    changed sample under a learning classifier) is a difference of that decision, not a crash."""
    from dataclasses import replace

    from sextant_core.classification.engine import ModelMismatch

    class Unrebuildable:
        def classify(self, *args: object) -> object:
            raise ModelMismatch("scale_up/batch: rebuilt model 000 != recorded 111")

    log = platform_log()
    report = replay(log, lambda name: replace(policy_set(name), classifier=Unrebuildable()))
    failed = [d for d in report.differences if d.what.startswith("re-derivation failed: scale_up/batch")]
    assert len(failed) == 6  # every classification of the six workloads, and the replay read to the end
    assert report.events == len(log)


class ProbeAll:
    """A reprovisioner that probes every workload it reviews (a probe round reviews every running
    one): the round's block holds one `ProbeRequested` per running workload."""

    def review(self, state: Any, w: Any, reason: str, ctx: Any) -> tuple[ev.Event, ...]:
        return (ev.ProbeRequested(at=ctx.at, workload_id=w.workload_id, decision=ctx.record("probe", w.workload_id),
                                  probe_id=f"probe-{int(ctx.at)}", sources=("l1d",), reason=reason),)


def probe_round_log() -> tuple[list[Any], PolicySet]:
    probing = PolicySet(**{**{f: getattr(POLICY, f) for f in POLICY.__dataclass_fields__},
                           "profile": "probe-all", "reprovisioner": ProbeAll()})
    p = InProcessPlatform(probing, agent)
    p.submit([server("s1", cores=8)])
    p.submit([submitted("w1", at=10.0, cores=1), submitted("w2", at=11.0, cores=1)])
    p.submit([ev.Tick(at=600.0, seq=10, period_s=60.0)])  # the first tick of a probe round
    return p.log, probing


def test_a_blocks_last_decision_is_compared_not_re_derived_again() -> None:
    # the round's block is [probe w1, probe w2]: re-running the round on the state that already
    # holds the probe of w1 would probe w1 first again — a second reaction, not the recorded one
    log, probing = probe_round_log()
    probes = [e for e in log if e.type == "ProbeRequested"]
    assert [e.payload["workload_id"] for e in probes] == ["w1", "w2"] and probes[1].position == probes[0].position + 1
    report = replay(log, lambda name: probing)
    assert report.ok, report.differences[:3]
    assert report.blocks == sum(1 for i, e in enumerate(log) if isinstance(e.event(), ev.DecisionEvent) and (
        i == 0 or (log[i - 1].source, log[i - 1].causation_id) != (e.source, e.causation_id)))


def test_a_recorded_block_longer_than_its_re_derivation_is_a_difference() -> None:
    log, probing = probe_round_log()
    i = next(i for i, e in enumerate(log) if e.type == "ProbeRequested")
    log = [e.with_position(k + 1) for k, e in enumerate([*log[:i + 1], log[i + 1], *log[i + 1:]])]  # w2's twice
    report = replay(log, lambda name: probing)
    assert any(d.what == "block longer than re-derived" for d in report.differences), report.differences
    assert report.state == fold(log)


def test_a_log_cut_inside_a_block_is_folded_as_recorded() -> None:
    log, probing = probe_round_log()
    i = next(i for i, e in enumerate(log) if e.type == "ProbeRequested")
    log = log[:i + 1]  # w2's probe, the block's last event, is not in the log
    report = replay(log, lambda name: probing)
    assert [d.what for d in report.differences] == ["log ends inside a re-derived block"]
    assert report.state == fold(log)


def test_a_matched_block_is_not_folded_twice_and_the_state_is_the_fold_of_the_log(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sextant_core.replay as replay_module

    log = platform_log()
    folds = 0
    real = replay_module.evolve

    def counting(*args: Any) -> Any:
        nonlocal folds
        folds += 1
        return real(*args)

    monkeypatch.setattr(replay_module, "evolve", counting)
    report = replay(log, policy_set)
    assert report.ok and report.state == fold(log)
    # the events of the blocks that matched byte for byte came folded with their re-derivation
    decisions = sum(1 for e in log if isinstance(e.event(), ev.DecisionEvent))
    assert folds <= len(log) - decisions
