"""A run of one workload's `ProfileSampleRecorded` is folded in one copy (`state.evolve.fold_events`,
`_fold_samples`; `Decider.fold`): the same state as `evolve` of each event — on every committed
fixture log and on the cases the one-copy path must refuse or get right (late facts, unknown
workloads, no pending row, the clock and positions, the queues, another handler registered)."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from sextant_cli.demo import read_recorded
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_core.classification.knowledge import KnowledgeBase
from sextant_core.domain.lifecycle import IllegalTransition, WorkloadPhase
from sextant_core.profiles import policy_set
from sextant_core.state.evolve import EMPTY, evolve, fold, fold_events
from sextant_core.state.model import ClusterState
from sextant_core.workflow import Decider

E = importlib.import_module("sextant_core.state.evolve")
FIXTURES = sorted((Path(__file__).resolve().parents[4] / "tests" / "fixtures").glob("*.jsonl.gz"))


def one_by_one(pairs: list[tuple[ev.Event, int | None]], state: ClusterState = EMPTY) -> ClusterState:
    for event, position in pairs:
        state = evolve(state, event, position)
    return state


def sample_runs(events: list[ev.Event]) -> int:
    """How many runs of ≥ 2 consecutive samples of one workload `events` holds."""
    runs, n, last = 0, 0, None
    for e in [*events, None]:
        key = e.workload_id if isinstance(e, ev.ProfileSampleRecorded) else None
        if key is not None and key == last:
            n += 1
            continue
        runs += n >= 2
        n, last = (1, key) if key is not None else (0, None)
    return runs


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_every_fixture_log_folds_to_the_one_by_one_state(path: Path) -> None:
    log = read_recorded(path)
    pairs = [(env.event(), env.position) for env in log]
    assert fold_events(pairs, EMPTY) == one_by_one(pairs) == fold(log)
    decider = Decider("planning", policy_set("sextant-adaptive"))
    decider.fold(log)
    assert decider.state == one_by_one(pairs)


@pytest.fixture(scope="module")
def platform() -> tuple[ClusterState, list[tuple[ev.ProfileSampleRecorded, int | None]]]:
    """(the platform log's state before its first run of samples, that run)."""
    log = read_recorded(next(p for p in FIXTURES if p.name.startswith("platform")))
    pairs = [(env.event(), env.position) for env in log]
    assert sample_runs([e for e, _ in pairs]) >= 5
    i = next(i for i, (e, _) in enumerate(pairs) if isinstance(e, ev.ProfileSampleRecorded))
    j = next(j for j in range(i, len(pairs)) if not isinstance(pairs[j][0], ev.ProfileSampleRecorded))
    return one_by_one(pairs[:i]), pairs[i:j]  # type: ignore[return-value]


def same(pairs: list[tuple[Any, int | None]], state: ClusterState) -> ClusterState:
    batched = fold_events(pairs, state)
    assert batched == one_by_one(pairs, state)
    return batched


def test_a_run_folds_its_samples_in_order(platform: tuple[ClusterState, list[Any]],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    state, run = platform
    assert len(run) >= 6
    wid = run[0][0].workload_id
    after = same(run, state)
    calls: list[ev.Event] = []
    monkeypatch.setattr(E, "evolve", lambda st, e, p=None: calls.append(e) or evolve(st, e, p))
    assert fold_events(run, state) == after and calls == []  # in one copy, not event by event
    assert len(after.workloads[wid].samples) == len(state.workloads[wid].samples) + len(run)
    assert len(after.knowledge.pending[wid].samples) == len(state.knowledge.pending[wid].samples) + len(run)
    assert after.position == run[-1][1] and after.now == max(state.now, *(e.at for e, _ in run))


def test_the_clock_and_positions_end_where_one_by_one_leaves_them(platform: tuple[ClusterState, list[Any]]) -> None:
    state, run = platform
    ats = [state.now + 5.0, state.now + 1.0, state.now + 5.0, state.now]
    odd = [(e.model_copy(update={"at": at}), p) for (e, p), at in zip(run, ats, strict=False)]
    same(odd, state)
    same([(e, None) for e, _ in run], state)  # no positions: the state's kept
    same([(e, p if k % 2 else None) for k, (e, p) in enumerate(run)], state)  # the last one given wins
    same([(e, None if k == len(run) - 1 else p) for k, (e, p) in enumerate(run)], state)
    same([(e.model_copy(update={"at": 0.0}), p) for e, p in run], state)  # nothing after the clock


def test_late_samples_unknown_workloads_and_no_pending_row(platform: tuple[ClusterState, list[Any]]) -> None:
    state, run = platform
    wid = run[0][0].workload_id
    w = state.workloads[wid]
    done = state.with_(workloads=state.workloads.set(wid, E.replace(w, phase=WorkloadPhase.COMPLETED)))
    assert same(run, done).workloads[wid].samples == w.samples  # late facts: ignored
    submitted = state.with_(workloads=state.workloads.set(wid, E.replace(w, phase=WorkloadPhase.SUBMITTED)))
    same(run, submitted)
    running = state.with_(workloads=state.workloads.set(wid, E.replace(w, phase=WorkloadPhase.RUNNING)))
    same(run, running)
    same(run, state.with_(knowledge=KnowledgeBase()))  # no pending row: the knowledge base unchanged
    same(run, state.with_(queued=("x", wid), deferred=(wid,)))  # left the queues, as `_step` does
    gone = [(e.model_copy(update={"workload_id": "nobody"}), p) for e, p in run]
    with pytest.raises(IllegalTransition):
        fold_events(gone, state)
    with pytest.raises(IllegalTransition):
        one_by_one(gone, state)


def test_runs_end_at_another_workload_or_type(platform: tuple[ClusterState, list[Any]]) -> None:
    state, run = platform
    other = [(e.model_copy(update={"workload_id": "nobody"}), p) for e, p in run[:1]]
    tick = (ev.Tick(at=state.now, seq=99, period_s=60.0), None)
    with pytest.raises(IllegalTransition):  # the foreign sample after the run: raised as one by one
        fold_events([*run[:2], *other, *run[2:]], state)
    same([*run[:2], tick, *run[2:]], state)
    same(run[:1], state)


def test_another_handler_for_samples_folds_one_by_one(platform: tuple[ClusterState, list[Any]]) -> None:
    state, run = platform
    seen: list[int | None] = []

    def counting(event: ev.ProfileSampleRecorded, st: ClusterState) -> ClusterState:
        seen.append(event.run_id)  # type: ignore[arg-type]
        return E._sample_recorded(event, st)

    E._apply.register(ev.ProfileSampleRecorded, counting)
    try:
        batched = fold_events(run, state)
        assert seen == [e.run_id for e, _ in run]
    finally:
        E._apply.register(ev.ProfileSampleRecorded, E._sample_recorded)
    assert batched == one_by_one(run, state)
    assert E._apply.dispatch(ev.ProfileSampleRecorded) is E._sample_recorded


def test_the_decider_skips_what_it_folded_inside_a_run(platform: tuple[ClusterState, list[Any]]) -> None:
    state, run = platform
    envs = [Envelope.wrap(e, id=f"e{k}", source="agent", stream_version=k, time=e.at).with_position(p)
            for k, (e, p) in enumerate(run)]
    shuffled = [envs[0], envs[1], envs[0], envs[3], envs[2], envs[4]]  # a repeat and one out of order
    decider = Decider("planning", policy_set("sextant-adaptive"))
    decider.state = state
    decider.fold(shuffled)
    expected = state
    for env in shuffled:
        if env.position is not None and env.position > expected.position:
            expected = evolve(expected, env.event(), env.position)
    assert decider.state == expected
    assert len(decider.state.workloads[run[0][0].workload_id].samples) == len(state.workloads[run[0][0].workload_id].samples) + 4
