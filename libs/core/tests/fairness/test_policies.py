"""Contracts of every allocation policy (sextant_core.fairness.policies), on random inputs, and
the behaviour that tells the history policies apart."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from sextant_core.fairness import POLICIES, History, HistoryParams, advance, make_policy

vcs = st.integers(1, 8)


@st.composite
def cases(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int, History]:
    n = draw(vcs)
    cap = np.array(draw(st.lists(st.integers(0, 50), min_size=n, max_size=n)), dtype=np.int64)
    dem = np.array(draw(st.lists(st.integers(0, 120), min_size=n, max_size=n)), dtype=np.int64)
    total = int(cap.sum()) + draw(st.integers(0, 40))
    vals = st.lists(st.floats(-1e6, 1e6), min_size=n, max_size=n)
    hist = History(*(np.array(draw(vals)) for _ in range(5)))
    return cap, dem, total, History(hist.lent, hist.received, hist.credit, np.abs(hist.usage), hist.balance)


@settings(max_examples=150, deadline=None)
@given(cases(), st.sampled_from(sorted(POLICIES)))
def test_targets_respect_demand_guarantee_and_the_cell(case: tuple, name: str) -> None:
    cap, dem, total, hist = case
    got = make_policy(name).targets(cap, dem, total, hist)
    assert got.dtype == np.int64
    assert (got <= dem).all()  # never more than a VC can use
    assert (got >= np.minimum(dem, cap)).all()  # a VC under its guarantee with demand gets it
    assert got.sum() <= total  # never more than the cell
    if name != "strict":  # every other policy is work-conserving
        assert got.sum() == min(total, dem.sum())


def test_strict_history_blocks_a_vc_in_debt_even_when_servers_are_idle() -> None:
    cap, dem = np.array([10, 10]), np.array([30, 5])
    debt = History.empty(2)
    debt = History(debt.lent, debt.received, debt.credit, debt.usage, np.array([-1.0, 5.0]))
    got = make_policy("strict").targets(cap, dem, 40, debt)
    assert got.tolist() == [10, 5]  # 25 servers idle while VC0 waits for 20: the §6 argument
    assert make_policy("sextant").targets(cap, dem, 40, debt).tolist() == [30, 5]


def test_decayed_usage_gives_less_of_the_pool_to_the_heavier_past_user() -> None:
    cap, dem = np.array([10, 10]), np.array([30, 30])
    used = History(np.zeros(2), np.zeros(2), np.zeros(2), np.array([3.0, 1.0]), np.zeros(2))
    got = make_policy("decayed").targets(cap, dem, 30, used)
    assert got[0] < got[1] and got.sum() == 30


def test_decayed_equal_base_is_maxmin_without_history_and_its_strength_sharpens_the_penalty() -> None:
    # capacities 40 and 10, both over-demanding by 30, 20 free servers
    cap, dem, total = np.array([40, 10]), np.array([70, 40]), 70
    none = History.empty(2)
    eq = make_policy("decayed", equal_base=True)
    assert eq.targets(cap, dem, total, none).tolist() == make_policy("maxmin").targets(cap, dem, total, none).tolist()
    assert make_policy("decayed").targets(cap, dem, total, none).tolist() == [56, 14]  # capacity base: 4:1
    # the small VC used as much as the large one: per unit of capacity, 4 × more
    used = History(np.zeros(2), np.zeros(2), np.zeros(2), np.array([1.0, 1.0]), np.zeros(2))
    mild = eq.targets(cap, dem, total, used)
    sharp = make_policy("decayed", equal_base=True, strength=3.0).targets(cap, dem, total, used)
    assert mild[0] > 50 and sharp[0] > mild[0] and sharp.sum() == mild.sum() == total


def test_borrowing_servers_nobody_wanted_costs_no_credit_but_lending_used_servers_earns() -> None:
    p = HistoryParams(credit_half_life_s=1e12)  # no decay over the test's hour
    cap, total = np.array([10, 10]), 30
    # VC0 idle, VC1 uses 25 servers, nobody waits: 15 borrowed of a pool of 10 + 10 idle + ... = 20
    h = advance(History.empty(2), 3600.0, cap, np.array([0, 25]), np.array([0, 25]), total, p)
    assert h.credit[1] == 0.0  # uncontended borrowing: no debt
    assert h.credit[0] > 0.0 and h.lent[0] > 0.0  # VC0's idle servers were used by VC1
    assert h.received[1] == 15 * 3600.0
    # the same borrowing while VC0 waits for more than it holds (contended) costs VC1 credit
    h2 = advance(History.empty(2), 3600.0, cap, np.array([20, 30]), np.array([12, 18]), total, p)
    assert h2.credit[1] < 0.0
    # VC1 alone wants more than it gets (VC0 is under its capacity): its borrowing took servers
    # nobody else wanted, so it costs nothing even though VC1 itself is short
    h3 = advance(History.empty(2), 3600.0, cap, np.array([5, 40]), np.array([5, 25]), total, p)
    assert h3.credit[1] == 0.0 and h3.credit[0] > 0.0


def test_history_is_a_fold_replaying_the_same_intervals_gives_the_same_bytes() -> None:
    rng = np.random.default_rng(3)
    steps = [(float(rng.uniform(1, 600)), rng.integers(0, 20, 3), rng.integers(0, 20, 3)) for _ in range(50)]
    cap, p = np.array([5, 8, 12]), HistoryParams()

    def run() -> History:
        h = History.empty(3)
        for dt, d, a in steps:
            h = advance(h, dt, cap, d, np.minimum(a, d), 40, p)
        return h

    a, b = run(), run()
    for f in ("lent", "received", "credit", "usage", "balance"):
        assert getattr(a, f).tobytes() == getattr(b, f).tobytes()


def test_decay_is_exact_so_splitting_an_interval_changes_nothing() -> None:
    cap, d, a, p = np.array([4, 4]), np.array([0, 9]), np.array([0, 9]), HistoryParams()
    one = advance(History.empty(2), 7200.0, cap, d, a, 12, p)
    two = advance(advance(History.empty(2), 3000.0, cap, d, a, 12, p), 4200.0, cap, d, a, 12, p)
    np.testing.assert_allclose(one.credit, two.credit, rtol=1e-12)
    np.testing.assert_allclose(one.usage, two.usage, rtol=1e-12)
