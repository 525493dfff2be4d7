"""The per-tenant counts the fold keeps (`fairness.load`, `ClusterState.load` and
`schedulable_servers`) always equal a full recount, after any sequence of workload and server
events; and the allocation is recomputed when the cell's schedulable servers change."""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_contracts import events as ev
from sextant_contracts import vc
from sextant_contracts.model import Allocation, CompletionTimeTarget
from sextant_core.decide import decide, seed_for
from sextant_core.domain.lifecycle import IllegalTransition, WorkloadPhase
from sextant_core.fairness.load import recount, weight
from sextant_core.process import react
from sextant_core.profiles import policy_set
from sextant_core.replay import replay
from sextant_core.state import ClusterState, evolve, fold
from sextant_core.testing.builders import alloc, record, server, submitted, through_placement
from sextant_core.testing.loop import InProcessPlatform, steady_agent

N_WORKLOADS, N_SERVERS = 8, 5


def servers_of(first: int, n: int) -> Allocation:
    """`n` assignments, two per server from server `first` on: `n` = 3 holds 2 distinct servers."""
    return alloc(*((f"s{(first + k // 2) % N_SERVERS}", 1, 1.0) for k in range(n)))


def candidate(kind: int, i: int, j: int, n: int, at: float) -> ev.Event:
    """One event of kind `kind` about workload `w<i>` (tenant `t<i % 3>`) or server `s<j>`; the
    fold may refuse it for the workload's phase (the caller skips it then)."""
    w, s, r = f"w{i}", f"s{j}", record(int(at))
    make: list[Callable[[], ev.Event]] = [
        lambda: submitted(w, at=at, tenant=f"t{i % 3}", fast_path=bool(n % 2)),
        lambda: ev.ProfilingPlanned(at=at, workload_id=w, decision=r, runs=()),
        lambda: ev.ProfilingCompleted(at=at, workload_id=w, samples=0),
        lambda: ev.WorkloadClassified(at=at, workload_id=w, decision=r),
        lambda: ev.WorkloadQueued(at=at, workload_id=w, decision=r, arq_class=0, position=0, expected_wait_s=0.0,
                                  reason="busy"),
        lambda: ev.WorkloadAdmitted(at=at, workload_id=w, decision=r, arq_class=0),
        lambda: ev.PlacementDeferred(at=at, workload_id=w, decision=r, reasons=("full",)),
        lambda: ev.PlacementDecided(at=at, workload_id=w, decision=r, allocation=servers_of(j, n)),
        lambda: ev.WorkloadStarted(at=at, workload_id=w, allocation=servers_of(j, n)),
        lambda: ev.AllocationAdjusted(at=at, workload_id=w, decision=r, action="scale_out",
                                      allocation=servers_of(j, n), reason="slow"),
        lambda: ev.MigrationDecided(at=at, workload_id=w, decision=r, allocation=servers_of(j, n), cost_s=1.0,
                                    gain=0.1, reason="better"),
        lambda: ev.WorkloadCompleted(at=at, workload_id=w),
        lambda: ev.WorkloadFailed(at=at, workload_id=w, reason="crash"),
        lambda: ev.WorkloadRevoked(at=at, workload_id=w, reason="user"),
        lambda: ev.RecordQuarantined(at=at, consumer="planning", record_id=f"r{at}", workload_id=w, error="x"),
        lambda: ev.TargetUpdated(at=at, workload_id=w, target=CompletionTimeTarget(seconds=50.0)),
        lambda: server(s, at=at),
        lambda: ev.ServerFailed(at=at, server_id=s),
        lambda: ev.ServerRecovered(at=at, server_id=s),
        lambda: ev.ServerDrained(at=at, server_id=s),
    ]
    return make[kind % len(make)]()


P = WorkloadPhase
# the kinds of `candidate` a workload in each phase may see next (its lifecycle, mostly forward,
# the ends, the re-plans), so random walks reach placed and running workloads; 16–19: servers
NEXT: dict[WorkloadPhase | None, tuple[int, ...]] = {
    None: (0,), P.SUBMITTED: (3, 3, 3, 1, 12, 13, 14, 15), P.PROFILING: (2, 2, 12), P.PROFILED: (3, 3, 13),
    P.CLASSIFIED: (5, 5, 4, 12), P.QUEUED: (5, 5, 4, 13), P.ADMITTED: (7, 7, 6, 12), P.DEFERRED: (7, 7, 6, 13, 14),
    P.PLACED: (8, 8, 8, 6, 7, 11, 12, 14), P.RUNNING: (9, 9, 10, 10, 7, 6, 15, 1, 3, 11, 12, 13, 14),
    P.COMPLETED: (11, 12, 0), P.FAILED: (11, 13), P.REVOKED: (12, 0),
}


def next_kind(state: ClusterState, server_event: int, i: int, choice: int) -> int:
    """A server event (kinds 16–19) when `server_event` < 4, else one of `NEXT[w<i>'s phase]`."""
    if server_event < 4:
        return 16 + server_event
    w = state.workloads.get(f"w{i}")
    options = NEXT[None if w is None else w.phase]
    return options[choice % len(options)]


def assert_counts_match(state: ClusterState) -> None:
    assert state.load == recount(state.workloads.values())
    assert state.schedulable_servers == sum(s.up and not s.drained for s in state.servers.values())


@settings(max_examples=150, deadline=None)
@given(steps=st.lists(st.tuples(st.integers(0, 19), st.integers(0, N_WORKLOADS - 1), st.integers(0, N_SERVERS - 1),
                                st.integers(1, 3), st.integers(0, 10)), max_size=150))
def test_the_incremental_counts_equal_a_full_recount_after_any_event_sequence(
        steps: list[tuple[int, int, int, int, int]]) -> None:
    state = fold([server(f"s{k}") for k in range(3)])
    for t, (server_event, i, j, n, choice) in enumerate(steps):
        kind = next_kind(state, server_event, i, choice)
        try:
            state = evolve(state, candidate(kind, i, j, n, at=1.0 + t))
        except (IllegalTransition, KeyError):
            continue  # not applicable (in this phase, or to an unknown workload): no log holds it
        assert_counts_match(state)


def test_a_workload_weighs_its_distinct_servers_while_it_holds_them_and_1_while_it_waits() -> None:
    # two assignments on s0 and one on s1: 2 distinct servers
    state = fold([server("s0"), server("s1"), submitted("w", fast_path=True)])
    assert weight(state.workloads["w"]) == (1, 0) and weight(None) == (0, 0)
    state = fold(through_placement("w", alloc(("s0", 1, 1.0), ("s1", 1, 1.0), ("s0", 2, 1.0))), state)
    assert weight(state.workloads["w"]) == (2, 2) and dict(state.load) == {"t1": (2, 2)}
    state = fold([ev.WorkloadCompleted(at=3.0, workload_id="w")], state)
    assert weight(state.workloads["w"]) == (0, 0) and dict(state.load) == {}  # its tenant left the map


# --- capacity changes of the cell ------------------------------------------------------------------


def cap(tenant: str, servers: int) -> vc.VcCapacitySet:
    return vc.VcCapacitySet(at=1.0, tenant=tenant, servers=servers, by="ops")


SERVER_EVENTS = {
    "registered": lambda: server("s9", at=50.0),
    "failed": lambda: ev.ServerFailed(at=50.0, server_id="s1"),
    "drained": lambda: ev.ServerDrained(at=50.0, server_id="s1"),
}


def allocated(state: ClusterState, reason: vc.Reason, at: float) -> ClusterState:
    """`state` with planning's allocation for `reason` folded in."""
    c = vc.AllocateVcs(reason=reason)
    return fold(decide(state, c, params=policy_set("foundation"), seed=seed_for(c, state), at=at).events, state)


def test_a_server_that_registers_fails_is_drained_or_returns_reallocates() -> None:
    ahead = fold([server("s0"), server("s1"), cap("a", 1), submitted("w", tenant="a", fast_path=True)])
    # a decider reacting to s1's registration with the capacity already folded but nothing
    # allocated yet: the capacity's own reaction allocates, not this one
    assert react(ahead, server("s1")) == ()
    state = allocated(ahead, "capacity", 2.0)
    assert state.vcs.last is not None and state.vcs.last.total == 2
    for name, make in SERVER_EVENTS.items():
        e = make()
        after = fold([e], state)
        assert after.schedulable_servers != 2, name
        assert react(after, e)[0] == vc.AllocateVcs(reason="servers"), name
    failed = allocated(fold([ev.ServerFailed(at=50.0, server_id="s1")], state), "servers", 50.0)
    assert failed.vcs.last.total == 1  # type: ignore[union-attr]
    back = ev.ServerRecovered(at=60.0, server_id="s1")
    assert react(fold([back], failed), back)[0] == vc.AllocateVcs(reason="servers")  # total 1 → 2 again
    # a change that leaves the total as the allocation in force has it asks for nothing new
    assert vc.AllocateVcs(reason="servers") not in react(fold([server("s0", at=50.0)], state), server("s0", at=50.0))
    assert vc.AllocateVcs(reason="servers") not in react(fold([back], state), back)  # s1 was up already


def test_without_capacities_a_server_change_allocates_nothing() -> None:
    state = fold([server("s0"), server("s1"), submitted("w", fast_path=True)])
    for make in SERVER_EVENTS.values():
        e = make()
        assert not [c for c in react(fold([e], state), e) if isinstance(c, vc.AllocateVcs)]
    recovered = ev.ServerRecovered(at=60.0, server_id="s1")
    assert not [c for c in react(fold([recovered], state), recovered) if isinstance(c, vc.AllocateVcs)]


def platform_with(*batches: list[ev.Event]) -> list[tuple[str, int]]:
    """(reason, total) of every allocation after 4 servers, capacities a 2 and b 2, one job of a
    and then `batches` (each handed to the platform at once); replay must re-derive them all."""
    p = InProcessPlatform(policy_set("foundation"), steady_agent)
    p.submit([server(f"s{i}") for i in range(4)])
    p.submit([cap("a", 2), cap("b", 2)])
    p.submit([submitted("a0", at=10.0, cores=8, memory_gb=16.0, tenant="a", fast_path=True)])
    for batch in batches:
        p.submit(batch)
    assert replay(p.log, policy_set).ok
    return [(d.reason, d.total) for d in (e.event() for e in p.log if e.type == "VcAllocationDecided")]  # type: ignore[attr-defined]


def test_on_the_platform_server_changes_reallocate_with_the_new_total_and_replay() -> None:
    failed, drained = ev.ServerFailed(at=20.0, server_id="s3"), ev.ServerDrained(at=21.0, server_id="s2")
    back, new = ev.ServerRecovered(at=30.0, server_id="s3"), server("s4", at=31.0)
    got = platform_with([failed], [drained], [back], [new])
    assert got == [("capacity", 4)] * 2 + [("arrival", 4), ("servers", 3), ("servers", 2), ("servers", 3),
                                           ("servers", 4)]
    # handed over at once, planning reacts to the first with both folded: one allocation, total 2
    assert platform_with([failed, drained])[3:] == [("servers", 2)]
