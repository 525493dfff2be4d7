"""DRA (recurring/dra.py): the ρ rule, extensions as skyline, admission through the plan, the
per-instance bound; the fair-share fallback."""

from __future__ import annotations

import pytest
from sextant_core.recurring import dra
from sextant_core.recurring.dra import DraParams, fair_share, reprovision
from sextant_core.recurring.plan import Plan, ReservationRequest

HALF = DraParams(bound_fraction=0.5)  # a bound of 25 container-steps on the job below


def one_job(cores: float = 100.0) -> Plan:
    """A daily job pinned to steps 10-14 with 10 containers a step (window = the skyline)."""
    return Plan.create(cores, 8 * cores, 60).add(ReservationRequest("j", (10,) * 5, 10, 15, period=60)).plan


@pytest.mark.parametrize(("used", "pending", "granted", "reason"), [
    (8, 0, 0, dra.NO_SHORTFALL),   # demand 8 ≤ alloc 10
    (10, 5, 5, dra.GRANTED),       # demand 15 ≤ cap ρ·10 = 20: extra 15 − 10
    (10, 40, 10, dra.GRANTED),     # demand 50 > cap 20: target 20, extra 10 (the cap bounds the total)
], ids=["no-shortfall", "below-cap", "capped-at-rho"])
def test_rho_rule(used: int, pending: int, granted: int, reason: str) -> None:
    p, d = reprovision(one_job(), "j", "run1", 12, used, pending)
    assert (d.granted, d.reason, d.cap) == (granted, reason, 20)
    assert p.reserved("j", 12) == 10 + granted
    assert p.reserved("j", 13) == 10  # for T = one step only


def test_rho_scales_the_cap() -> None:
    _, d = reprovision(one_job(), "j", "run1", 12, 10, 40, params=DraParams(rho=3.0))
    assert (d.cap, d.granted) == (30, 20)


def test_extensions_count_as_skyline_after_the_planned_end() -> None:
    p, loose = one_job(), DraParams(bound_fraction=2.0)  # a bound of 100 container-steps
    # step 15: the skyline ended (alloc 0) but R_recent over [13, 15] is 10 -> cap 20
    p, d = reprovision(p, "j", "run1", 15, 0, 18, params=loose)
    assert (d.allocated, d.cap, d.granted) == (0, 20, 18)
    # step 16: R_recent over [14, 16] is max(10, 18, 0) = 18 -> cap 36, so the job keeps going
    _, d = reprovision(p, "j", "run1", 16, 0, 30, params=HALF)  # a bound of 25 leaves 7 after 18
    assert d.granted == 7
    p, d = reprovision(p, "j", "run1", 16, 0, 30, params=loose)
    assert (d.cap, d.granted) == (36, 30)
    # a step with no recent allocation at all cannot be extended (the cap is 0)
    _, d = reprovision(p, "j", "run1", 40, 0, 5)
    assert (d.cap, d.granted, d.reason) == (0, 0, dra.CAPPED)


def test_the_plan_admits_only_what_fits_and_grants_partially() -> None:
    # 14 cores: the job holds 10 at step 12, so an extension of 10 gets only 4
    p, d = reprovision(one_job(cores=14.0), "j", "run1", 12, 10, 40)
    assert (d.asked, d.granted, d.reason) == (10, 4, dra.PARTIAL)
    assert p.reserved("j", 12) == 14
    p2, d = reprovision(p, "j", "run1", 12, 14, 40)  # nothing left
    assert (d.granted, d.reason) == (0, dra.PLAN_FULL) and p2 is p


def test_the_per_instance_bound() -> None:
    # bound = 0.5 × 50 container-steps = 25, counted from the instance's own extensions
    p = one_job()
    p, d10 = reprovision(p, "j", "run1", 10, 10, 40, params=HALF)  # cap 2·10: +10
    p, d11 = reprovision(p, "j", "run1", 11, 10, 40, params=HALF)  # step 10 held 20, so cap 40: asks 30, 15 left
    assert (d10.granted, d11.granted, d11.asked) == (10, 15, 30)
    assert p.extension_area("j", "j/run1/") == 25
    _, d = reprovision(p, "j", "run1", 12, 10, 40, params=HALF)
    assert (d.granted, d.reason) == (0, dra.BOUND_EXHAUSTED)
    _, d = reprovision(p, "j", "run2", 14, 10, 40, params=HALF)  # another instance has its own bound
    assert (d.granted, d.reason) == (10, dra.GRANTED)


def test_end_instance_releases_its_extensions() -> None:
    p, _ = reprovision(one_job(), "j", "run1", 12, 10, 5)
    assert p.reserved("j", 12) == 15
    assert p.end_instance("j", "j/run1/").reserved("j", 12) == 10
    assert len(p.remove("j").ledger.claims) == 0


@pytest.mark.parametrize(("capacity", "reserved", "demand", "want"), [
    # reserved jobs first (a: 4 of its 6), then 6 left, max-min fair: b 1 (all it wants), c and d
    # split the remaining 5 -> 3 and 2 (the remainder to the first id)
    (10, {"a": 6}, {"a": 4, "b": 1, "c": 9, "d": 9}, {"a": 4, "b": 1, "c": 3, "d": 2}),
    # a cold-start job with no reservation still gets its fair share of unused reserved capacity
    (10, {"a": 8}, {"a": 2, "cold": 20}, {"a": 2, "cold": 8}),
    # demand beyond a reservation competes fairly with the others
    (10, {"a": 2}, {"a": 10, "b": 10}, {"a": 6, "b": 4}),
], ids=["max-min", "cold-start", "excess"])
def test_fair_share(capacity: int, reserved: dict[str, int], demand: dict[str, int], want: dict[str, int]) -> None:
    assert fair_share(capacity, reserved, demand) == want


def test_fair_share_refuses_impossible_inputs() -> None:
    with pytest.raises(ValueError):
        fair_share(5, {"a": 6}, {"a": 6})
    with pytest.raises(ValueError):
        fair_share(5, {}, {"a": -1})
