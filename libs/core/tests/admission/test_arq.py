"""ARQ admission (admission/arq.py) through `decide`: own pool, bypass up (and its bound), bypass
down, Eq. 2 wait vs divert, FIFO per class, kinds that never queue, the queued event's fields."""

from __future__ import annotations

from typing import Any

import pytest
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_core.admission.arq import ArqAdmission, ArqParams
from sextant_core.admission.availability import ParagonAvailability, TargetAvailability
from sextant_core.decide import Decision, decide, seed_for
from sextant_core.planning.assess import Assessor, SizingParams
from sextant_core.state import ClusterState, fold

from .conftest import World, policy, vec

UP = {"c1": 10.0, "c2": 18.0}
HET = {"A": 10.0}
LONG = {"type": "completion_time", "seconds": 10000.0}
PER_S = dict(heterogeneity={"A": 2e-4}, scale_up={"c1": 2e-4, "c2": 3e-4})  # rows in 1/s for completion targets


def arq(**kw: Any) -> ArqAdmission:
    return ArqAdmission(TargetAvailability(Assessor(SizingParams(margin=0.0))), ArqParams(**kw))


def admit(st: ClusterState, wid: str = "new", a: ArqAdmission | None = None, at: float = 5.0) -> Decision:
    c = cmd.AdmitWorkload(workload_id=wid)
    return decide(st, c, params=policy(None, admission=a or arq()), seed=seed_for(c, st), at=at)


def reason(d: Decision) -> str:
    e = d.events[0]
    return e.trace.notes[0] if isinstance(e, ev.WorkloadAdmitted) else e.reason  # type: ignore[attr-defined]


def newcomer(w: World, **kw: Any) -> World:
    base: dict[str, Any] = dict(heterogeneity=HET, scale_up=UP, target={"type": "instruction_rate", "ips": 9.0},
                                admit=False)
    base.update(kw)
    return w.workload("new", **base)


def test_class_zero_on_an_empty_cluster_bypasses_up() -> None:
    # Q_w = 0 → class 0; the empty server has headroom 100 → pool 9, reached through empty queues
    d = admit(newcomer(World().server("s1")).state())
    assert isinstance(d.events[0], ev.WorkloadAdmitted) and d.events[0].arq_class == 0
    assert reason(d) == "bypass_up"


def test_own_pool() -> None:
    # a resident tolerating 5 everywhere: headroom min(5, 100) = 5 → pool 0 = the class-0 workload's own
    st = newcomer(World().server("s1").workload("r", on=(("s1", 1, 1.0),), tolerated=vec(5))).state()
    assert reason(admit(st)) == "own_pool"


def test_bypass_down_when_predicted_to_meet() -> None:
    # class 5 (tolerates 45: Q = 55); the only server has headroom 25 (pool 2) and is fine for it
    st = newcomer(World().server("s1").workload("r", on=(("s1", 1, 1.0),), tolerated=vec(25)),
                  tolerated=vec(45)).state()
    d = admit(st)
    assert d.events[0].arq_class == 5 and reason(d) == "bypass_down"  # type: ignore[attr-defined]


def test_pools_kept_for_a_waiting_class_above_force_eq2() -> None:
    # the class-0 newcomer may not take pool ≥ 3 while class 3 waits; the only server (pool 9) is
    # out of bounds → Eq. 2: CT = 0.95 · 10000, S = 475 − 4 = 471 s; one busy slot (the resident on
    # s2, a server that could serve) frees at rate 1/60 → waiting beats a diversion worth 0
    w = World().server("s1").server("s2", cores=1).workload("r", on=(("s2", 1, 1.0),))
    w.queued("q3", 3, tolerated=vec(65))
    st = newcomer(w, target=LONG, **PER_S).state()
    d = admit(st)
    e = d.events[0]
    assert isinstance(e, ev.WorkloadQueued) and e.reason == "waiting_for_pool"
    assert e.arq_class == 0 and e.position == 0 and e.expected_wait_s > 0
    assert d.detail["reserved_from"] == 3 and d.detail["slack_s"] == pytest.approx(471.0)


def test_no_slack_left_means_admit_now() -> None:
    # CT = 0.95 · 100 = 95 → S = 4.75 − 4 = 0.75; at 10 s: 4.75 − 9 < 0 → admitted (bounded wait)
    w = World().server("s1").server("s2", cores=1).workload("r", on=(("s2", 1, 1.0),))
    w.queued("q3", 3, tolerated=vec(65))
    st = newcomer(w, target={"type": "completion_time", "seconds": 100.0}, **PER_S).state()
    assert reason(admit(st, at=10.0)) == "slack_exhausted"


def test_fifo_within_a_class() -> None:
    w = World().server("s1")
    w.queued("first", 0)
    d = admit(newcomer(w).state())
    e = d.events[0]
    # the head's expected wait 10 s × (position 1 + 1)
    assert isinstance(e, ev.WorkloadQueued) and e.reason == "behind_in_class" and e.position == 1
    assert e.expected_wait_s == pytest.approx(20.0)


@pytest.mark.parametrize(("kind", "best_effort"), [("service", False), ("analytics", False), ("batch", True)])
def test_kinds_that_never_queue(kind: str, best_effort: bool) -> None:
    w = World().server("s1")
    w.queued("first", 0)
    target = {"type": "throughput_latency", "qps": 9.0, "p99_latency_ms": 1.0} if kind == "service" else LONG
    d = admit(newcomer(w, kind=kind, best_effort=best_effort, target=target).state())
    assert isinstance(d.events[0], ev.WorkloadAdmitted) and reason(d) == "not_queued_kind"


def test_still_queued_at_the_same_position_emits_nothing() -> None:
    w = World().server("s1").server("s2", cores=1).workload("r", on=(("s2", 1, 1.0),))
    w.queued("q3", 3, tolerated=vec(65))
    st = newcomer(w, target=LONG, **PER_S).state()
    first = admit(st)
    st = fold(first.events, st)
    again = admit(st, at=6.0)
    assert again.events == () and again.detail["still_queued"] == "waiting_for_pool"


def test_paragon_availability_uses_its_strict_filters() -> None:
    # Paragon's reading: platform within 95 % of the best, D1 and D2 strict. B is 0.9 of A → not
    # "suitable"; the A server is held by a resident it cannot tolerate (D2: 40 > 30) → nothing meets
    w = (World().server("a1", platform="A").server("b1", platform="B")
         .workload("r", on=(("a1", 1, 1.0),), caused=vec(0, core=40)))
    st = newcomer(w, heterogeneity={"A": 1.0, "B": 0.9}, tolerated=vec(100, core=30), target=LONG).state()
    a = ArqAdmission(ParagonAvailability())
    d = admit(st, a=a)
    assert d.detail["meets"] == 0 and d.detail["eligible"] == 1  # only b1 is eligible


def test_class_fifo_off_admits_past_a_waiting_head() -> None:
    # the class-0 head waits; the newcomer's own pool (the lone server, its resident tolerating 5:
    # pool 0) meets it: strict FIFO queues it behind the head, `class_fifo=False` admits it now
    w = World().server("s1").workload("r", on=(("s1", 1, 1.0),), tolerated=vec(5))
    w.queued("first", 0)
    st = newcomer(w).state()
    fifo = admit(st).events[0]
    assert isinstance(fifo, ev.WorkloadQueued) and fifo.reason == "behind_in_class"
    d = admit(st, a=arq(class_fifo=False))
    e = d.events[0]
    assert isinstance(e, ev.WorkloadAdmitted) and e.trace.notes == ("own_pool", "past_queue")


def test_class_fifo_off_still_queues_one_that_would_wait() -> None:
    # nothing meets the newcomer (its pool and the ones above are reserved for class 3, which
    # waits): it does not run Eq. 2 ahead of the head of its class, it waits its turn behind it
    w = World().server("s1").server("s2", cores=1).workload("r", on=(("s2", 1, 1.0),))
    w.queued("q3", 3, tolerated=vec(65))
    w.queued("first", 0)
    st = newcomer(w, target=LONG, **PER_S).state()
    e = admit(st, a=arq(class_fifo=False)).events[0]
    assert isinstance(e, ev.WorkloadQueued) and e.reason == "behind_in_class" and e.position == 1
