"""Resident protection (planning/protect.py, planner version 7): the guard's arithmetic on a
crafted server, and the planner's choice beside version 6.1 (D1 alone) on a state where they differ."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sextant_contracts import events as ev
from sextant_core.planning.assess import SizingParams
from sextant_core.planning.protect import ResidentGuard
from sextant_core.planning.sextant import BREAKS_A_RESIDENT, PROTECTED, WAIVED, SextantParams, SextantPlanner
from sextant_core.planning.targets import QOS_FRACTION
from sextant_core.profiles import policy_set
from sextant_core.testing.world import SOURCES, World, chosen, place, vec

FLAT = {"c1": 1.0, "c2": 1.0, "c4": 1.0}  # a single-threaded workload: more cores add nothing
HET = {"A": 1.0}
RATE = {"type": "instruction_rate", "ips": QOS_FRACTION}  # R = 0.95: alone on A it predicts 1 / 0.95


def resident(world: World, wid: str, server: str, cores: int = 1, **kw: Any) -> World:
    return world.workload(wid, target=RATE, heterogeneity=HET, scale_up=FLAT, on=((server, cores, 1.0),), **kw)


def newcomer(world: World, caused: dict[str, float]) -> World:
    return world.workload("new", target=RATE, heterogeneity=HET, scale_up=FLAT, caused=caused)


SENSITIVE = vec(100.0, memory_bw=50.0, llc_cap=50.0)  # tolerates 50 on two shared sources
PRESS = vec(0.0, memory_bw=49.0, llc_cap=49.0)  # within D1 on both (49 ≤ 50), but the two slowdowns multiply


def guard_broken(pessimism: float, caused: dict[str, float], min_head: float = 1.0) -> int:
    st = resident(World().server("a1"), "r", "a1", tolerated=SENSITIVE).state()
    from sextant_core.placement.table import TableIndex

    table = TableIndex().table(st)
    c_new = np.array([caused[s] for s in SOURCES])
    g = ResidentGuard(SizingParams(), pessimism, min_head)
    return int(g.broken(st, table, np.array([0]), c_new, at=5.0, max_cores=8)[0])


@pytest.mark.parametrize(("caused", "pessimism", "expected"), [
    # one source at x = 45/50: slowdown 0.05 · 0.9² = 4.05 %; 1.0526 · 0.9595 = 1.010 ≥ 1 → kept
    (vec(0.0, memory_bw=45.0), 0.0, 0),
    # the same loss counted twice (pessimism 1): 1.0526 − 2 · 0.0426 = 0.967 < 1 → broken
    (vec(0.0, memory_bw=45.0), 1.0, 1),
    # two sources at x = 0.98: 1.0526 · (1 − 0.048)² = 0.954 < 1 → broken, though D1 passes both
    (PRESS, 0.0, 1),
    # nothing pressed on what it is sensitive to
    (vec(0.0, network_bw=30.0), 0.0, 0),
], ids=["within-margin", "pessimism-doubles-the-loss", "two-sources-multiply", "insensitive-source"])
def test_the_guard_counts_broken_residents(caused: dict[str, float], pessimism: float, expected: int) -> None:
    assert guard_broken(pessimism, caused) == expected


def test_a_resident_already_predicted_to_miss_is_not_protected() -> None:
    # min_head 1.06 > 1 / 0.95: the resident's own prediction alone is below the bar → unprotected
    assert guard_broken(0.0, PRESS, min_head=1.06) == 0


def two_servers() -> Any:
    # a1 is the emptier server (its resident holds 1 core, b1's 2), so the satisficing order
    # prefers it; but a1's resident is sensitive to what the newcomer causes, b1's is not.
    w = World().server("a1").server("b1")
    w = resident(w, "r", "a1", tolerated=SENSITIVE)
    w = resident(w, "q", "b1", cores=2)
    return newcomer(w, PRESS).state()


def test_version_7_spares_the_resident_that_version_6_1_breaks() -> None:
    st = two_servers()
    old = place(st, SextantPlanner(SextantParams(residents="d1")))
    assert chosen(old)[0][0] == "a1"
    # pessimism 0: q (tolerating 100) loses 2.4 % of 1.0526 and keeps its target; r would not
    new = place(st, SextantPlanner(SextantParams(resident_pessimism=0.0)))
    assert chosen(new)[0][0] == "b1"
    assert PROTECTED in new.events[0].trace.notes  # type: ignore[attr-defined]


def test_when_every_row_breaks_a_resident_waive_places_and_closest_defers() -> None:
    st = newcomer(resident(World().server("a1"), "r", "a1", tolerated=SENSITIVE), PRESS).state()
    waived = place(st, SextantPlanner(SextantParams(resident_fallback="waive")))
    assert chosen(waived)[0][0] == "a1"
    assert WAIVED in waived.events[0].trace.notes  # type: ignore[attr-defined]
    deferred = place(st, SextantPlanner(SextantParams(resident_fallback="closest")))
    e = deferred.events[0]
    assert isinstance(e, ev.PlacementDeferred) and e.reasons == (BREAKS_A_RESIDENT,)


def test_the_versions_are_kept() -> None:
    now = policy_set("sextant")
    assert now.version == "9.4" and now.planner.params.residents == "protect"  # type: ignore[attr-defined]
    assert not now.admission.params.class_fifo and now.planner.params.sizing.units == "kind"  # type: ignore[attr-defined]
    for v, units in (("8.2", "wide"), ("8.1", "kind"), ("8", "wide")):
        kept = policy_set(f"sextant@{v}")  # the same admission; planner 8 or 8.1; engine 3 or 2
        assert kept.planner.params.sizing.units == units and not kept.admission.params.class_fifo  # type: ignore[attr-defined]
        assert kept.planner.params.residents == "protect"  # type: ignore[attr-defined]
    seven = policy_set("sextant@7")
    assert seven.planner.params.residents == "protect" and seven.admission.params.class_fifo  # type: ignore[attr-defined]
    for v in ("6.1", "6", "5.1"):
        old = policy_set(f"sextant@{v}")
        assert old.planner.params.residents == "d1" and old.admission.params.class_fifo  # type: ignore[attr-defined]
    with pytest.raises(ValueError):
        SextantParams(residents="none")
    with pytest.raises(ValueError):
        SextantParams(resident_fallback="evict")


def test_per_core_sources_feel_the_heaviest_co_runner_and_the_cache_is_pure() -> None:
    # r tolerates 50 on `core` (a per-core source); q already causes 45 there. The newcomer's 45
    # makes the heaviest co-runner 45, not a sum of 90: x = 0.9, 1.0526 · 0.9595 ≥ 1 → kept. On a
    # shared source (memory_bw) the same numbers add up to 90: x = 1.8 → broken.
    from sextant_core.placement.table import TableIndex

    def count(source: str) -> int:
        w = resident(World().server("a1"), "r", "a1", tolerated=vec(100.0, **{source: 50.0}))
        st = resident(w, "q", "a1", caused=vec(0.0, **{source: 45.0})).state()
        c_new = np.array([vec(0.0, **{source: 45.0})[s] for s in SOURCES])
        g = ResidentGuard(SizingParams())
        table = TableIndex().table(st)
        first = int(g.broken(st, table, np.array([0]), c_new, at=5.0, max_cores=8)[0])
        assert int(g.broken(st, table, np.array([0]), c_new, at=5.0, max_cores=8)[0]) == first  # cached: same
        return first

    assert count("core") == 0
    assert count("memory_bw") == 1


def test_the_guard_looks_at_most_resident_scan_rows_deep() -> None:
    # s0..s5 (1 core in use each) host a sensitive resident; z9 (2 cores in use, so last in the
    # satisficing order) an insensitive one. The first chunk (5 rows) all break a resident: with
    # resident_scan 5 the least-broken of them is taken (waived); deeper, z9 breaks nobody.
    w = World()
    for i in range(6):
        w = resident(w.server(f"s{i}"), f"r{i}", f"s{i}", tolerated=SENSITIVE)
    st = newcomer(resident(w.server("z9"), "q", "z9", cores=2), PRESS).state()
    shallow = place(st, SextantPlanner(SextantParams(resident_pessimism=0.0, resident_scan=5)))
    assert chosen(shallow)[0][0] == "s0" and WAIVED in shallow.events[0].trace.notes  # type: ignore[attr-defined]
    deep = place(st, SextantPlanner(SextantParams(resident_pessimism=0.0)))
    assert chosen(deep)[0][0] == "z9" and PROTECTED in deep.events[0].trace.notes  # type: ignore[attr-defined]


def test_version_8_guards_the_as_close_as_possible_choice() -> None:
    # the newcomer needs 2 where it predicts 1 (A) or 0.9 (B): no row meets its target, so it goes
    # as close as possible. Version 7 takes the closest row, a1 (A), whatever its resident r
    # loses; version 8 takes the closest row that breaks nobody, b1 (B, q insensitive).
    w = World().server("a1").server("b1", platform="B")
    w = resident(w, "r", "a1", tolerated=SENSITIVE)
    w = w.workload("q", target=RATE, heterogeneity={"A": 1.0, "B": 1.0}, scale_up=FLAT, on=(("b1", 1, 1.0),))
    st = w.workload("new", target={"type": "instruction_rate", "ips": 2.0}, heterogeneity={"A": 1.0, "B": 0.9},
                    scale_up=FLAT, caused=PRESS).state()
    seven = place(st, SextantPlanner(SextantParams(closest_guard=False)))
    assert chosen(seven)[0][0] == "a1"
    eight = place(st, SextantPlanner(SextantParams(closest_guard=True)))
    notes = eight.events[0].trace.notes  # type: ignore[attr-defined]
    assert chosen(eight)[0][0] == "b1" and "as_close_as_possible" in notes and PROTECTED in notes
    # when the only row breaks its resident, version 8 still places there (the waive fallback)
    alone = resident(World().server("a1"), "r", "a1", tolerated=SENSITIVE)
    st1 = alone.workload("new", target={"type": "instruction_rate", "ips": 2.0}, heterogeneity=HET,
                         scale_up=FLAT, caused=PRESS).state()
    waived = place(st1, SextantPlanner(SextantParams(closest_guard=True)))
    assert chosen(waived)[0][0] == "a1" and WAIVED in waived.events[0].trace.notes  # type: ignore[attr-defined]
