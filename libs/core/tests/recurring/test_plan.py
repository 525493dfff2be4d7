"""The plan (recurring/plan.py): fixed offsets, residual planning, all-or-nothing overrides,
incrementality and byte-exact determinism."""

from __future__ import annotations

import contextlib
import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_core.recurring.ledger import ClaimKind, Tier
from sextant_core.recurring.plan import Plan, PlanError, ReservationRequest, Unplaceable


def plan(cores: float = 10.0, steps: int = 240) -> Plan:
    return Plan.create(cores, 8 * cores, steps)


def test_a_periodic_reservation_repeats_at_a_fixed_offset() -> None:
    p = plan().add(ReservationRequest("hourly", (4, 4), 10, 30, period=60)).plan
    r = p.get("hourly")
    steps, containers = p.instance_steps("hourly")
    assert r.periodic and r.period == 60
    offsets = sorted({int(s) % 60 for s in steps})
    assert len(steps) == 4 * len(r.allocation.containers)  # 4 instances in a 240-step window
    assert offsets == list(range(r.allocation.offset, r.allocation.offset + len(r.allocation.containers)))
    assert r.allocation.offset >= 10 and r.allocation.offset + len(r.allocation.containers) <= 30
    assert containers.sum() == 4 * 8  # every instance gets the whole skyline (8 container-steps)
    assert p.ledger.get("hourly").kind is ClaimKind.PERIODIC


def test_off_kilter_and_long_periods_are_non_periodic_instances() -> None:
    p = plan()
    assert not p.is_periodic(ReservationRequest("x", (1,), 0, 5, period=58))
    assert not p.is_periodic(ReservationRequest("x", (1,), 0, 5, period=480))
    q = p.add(ReservationRequest("odd", (3, 3), 100, 110, period=58)).plan
    assert q.ledger.get("odd").kind is ClaimKind.NON_PERIODIC
    assert len(q.instance_steps("odd")[0]) == len(q.get("odd").allocation.containers)


def test_periodic_jobs_displace_non_periodic_ones_which_are_replanned_or_dropped() -> None:
    p = plan(cores=10.0, steps=60)
    p = p.add(ReservationRequest("adhoc", (8,), 20, 22)).plan  # one instance in steps 20-21
    assert p.get("adhoc").allocation.containers == (4, 4)  # flat cost: units alternate between the two
    # a periodic job at step 21 needing 7 of 10 cores: 4 + 7 > 10, so the ad-hoc one is displaced and
    # re-planned on what is left (3 cores at step 21, 10 at step 20)
    up = p.add(ReservationRequest("daily", (7,), 21, 22, period=60))
    assert [r.request.reservation_id for r in up.replanned] == ["adhoc"] and up.dropped == ()
    moved = up.plan.get("adhoc").allocation
    assert moved.offset == 20 and sum(moved.containers) == 8 and moved.containers[1] <= 3
    assert (up.plan.ledger.used(Tier.RESIDUAL) <= up.plan.ledger.capacity + 1e-9).all()
    # a periodic job that fills the whole window leaves no room: the ad-hoc reservation is dropped
    full = plan(cores=10.0, steps=4).add(ReservationRequest("adhoc", (8,), 0, 4)).plan
    up = full.add(ReservationRequest("wall", (10, 10, 10, 10), 0, 4, period=4))
    assert up.dropped == ("adhoc",) and "adhoc" not in up.plan.reservations


def test_adding_never_moves_existing_periodic_reservations() -> None:
    rng = np.random.default_rng(2)
    p = plan(cores=40.0)
    for i in range(12):
        k = int(rng.integers(2, 8))
        a = int(rng.integers(0, 30))
        p = p.add(ReservationRequest(f"r{i}", tuple(int(v) for v in rng.integers(1, 8, k)), a, a + 3 * k,
                                     period=60)).plan
    before = {rid: r.allocation for rid, r in p.reservations.items()}
    after = p.add(ReservationRequest("new", (5, 9, 3), 0, 60, period=60)).plan
    assert {rid: after.get(rid).allocation for rid in before} == before


def test_an_override_that_does_not_fit_leaves_the_plan_as_it_was() -> None:
    p = plan(cores=10.0, steps=60)
    p = p.add(ReservationRequest("a", (6, 6), 0, 10, period=60)).plan
    p = p.add(ReservationRequest("b", (6, 6), 0, 10, period=60)).plan
    before = p.canonical()
    # the user says "10× more data from tomorrow": 60 containers a step do not fit in 10 cores
    with pytest.raises(Unplaceable, match="'a'"):
        p.override(ReservationRequest("a", (60, 60), 0, 10, period=60))
    assert p.canonical() == before
    grown = p.override(ReservationRequest("a", (4, 4, 4, 4), 0, 10, period=60)).plan
    assert grown.get("a").request.skyline == (4, 4, 4, 4) and grown.get("b") == p.get("b")


@pytest.mark.parametrize(("request_", "match"), [
    (ReservationRequest("e", (), 0, 10, period=60), "empty"),
    (ReservationRequest("z", (0, 0), 0, 10, period=60), "empty"),
    (ReservationRequest("w", (1,), 0, 70, period=60), "at most one period"),
    (ReservationRequest("r", (1,), 10, 10, period=60), "at most one period"),
    (ReservationRequest("g", (1,), 0, 10, period=60, gang=0), "malformed"),
    (ReservationRequest("m", (1,), 0, 10, period=60, cores=0.0, memory_gb=0.0), "malformed"),
    (ReservationRequest("n", (1,), 230, 250, period=None), "end in the window"),
], ids=["empty", "zero", "window>period", "empty-window", "gang", "container", "outside"])
def test_malformed_requests_are_refused(request_: ReservationRequest, match: str) -> None:
    p = plan()
    with pytest.raises(PlanError, match=match):
        p.add(request_)
    assert len(p.reservations) == 0


def test_remove_gives_capacity_back() -> None:
    p = plan().add(ReservationRequest("a", (3,), 0, 5, period=60)).plan
    assert p.remove("a").ledger.headroom(Tier.GUARANTEE)[0].tolist() == [10.0] * 240
    with pytest.raises(PlanError):
        p.remove("zz")
    with pytest.raises(PlanError, match="already exists"):
        p.add(ReservationRequest("a", (3,), 0, 5, period=60))


def build(requests: list[ReservationRequest]) -> Plan:
    p = Plan.create(50.0, 400.0, 1440)
    for r in requests:
        with contextlib.suppress(Unplaceable):
            p = p.add(r).plan
    return p


def test_same_requests_same_plan_byte_for_byte() -> None:
    rng = np.random.default_rng(11)
    reqs = []
    for i in range(40):
        period = [60, 240, 1440, None][i % 4]
        k = int(rng.integers(2, 20))
        span = min(period or 1440, 3 * k)
        a = int(rng.integers(0, (period or 1440) - span + 1))
        reqs.append(ReservationRequest(f"r{i:02d}", tuple(int(v) for v in rng.integers(1, 12, k)), a, a + span, period))
    one, two = build(reqs), build(reqs)
    assert one.canonical() == two.canonical()
    assert len(one.reservations) >= 30  # the plan did real work
    assert hashlib.sha256(one.canonical()).hexdigest() == hashlib.sha256(two.canonical()).hexdigest()
    # the ledger holds exactly the reservations' footprints, each tier within capacity
    load = np.zeros((2, 1440))
    for rid, r in one.reservations.items():
        steps, containers = one.instance_steps(rid)
        np.add.at(load[0 if r.periodic else 1], steps, containers)
    assert np.allclose(one.ledger.load[:, 0, :], load)
    assert (one.ledger.used(Tier.RESIDUAL) <= one.ledger.capacity + 1e-9).all()


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_placed_instance_is_whole_in_its_window_and_within_capacity(data: st.DataObject) -> None:
    p = Plan.create(20.0, 100.0, 120)
    for i in range(data.draw(st.integers(1, 8))):
        period = data.draw(st.sampled_from([30, 60, 120, None]))
        k = data.draw(st.integers(1, 6))
        sky = tuple(data.draw(st.lists(st.integers(0, 12), min_size=k, max_size=k)))
        span = data.draw(st.integers(k, period or 120))
        a = data.draw(st.integers(0, (period or 120) - span))
        req = ReservationRequest(f"r{i}", sky, a, a + span, period, memory_gb=data.draw(st.sampled_from([2.0, 8.0])))
        try:
            p = p.add(req).plan
        except (Unplaceable, PlanError):
            continue
        r = p.get(f"r{i}")
        alloc = r.allocation
        assert a <= alloc.offset and alloc.offset + len(alloc.containers) <= a + span
        assert sum(alloc.containers) == sum(sky)  # the whole skyline, every instance
        assert max(alloc.containers) <= max(sky)  # never above the job's max parallelism
    assert (p.ledger.used(Tier.RESIDUAL) <= p.ledger.capacity + 1e-9).all()


def test_adopt_claims_a_recorded_allocation_as_it_was() -> None:
    from sextant_core.recurring.ledger import ClaimInfeasible

    req = ReservationRequest("r1", (2, 3, 3), 0, 30, period=60)
    added = plan().add(req).plan
    again = plan().adopt(req, added.get("r1").allocation)  # as a plan rebuilt from the log
    assert again.canonical() == added.canonical()
    with pytest.raises(PlanError):
        again.adopt(req, added.get("r1").allocation)
    small = plan(cores=0.5)
    with pytest.raises(ClaimInfeasible):  # a container of 1 core does not fit half a core: nothing changed
        small.adopt(req, added.get("r1").allocation)
    assert small.canonical() == plan(cores=0.5).canonical()
