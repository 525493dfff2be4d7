"""The four properties of the instantaneous MaxMin scheduler (spec vc_fairness.md §2.2), one test
each, and the choices the spec leaves open (unweighted sharing, history ignored)."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.fairness import CapacityWeighted, History, MaxMin, SextantHistory

NONE = History.empty(2)


def arr(*v: int) -> np.ndarray:
    return np.array(v, dtype=np.int64)


def test_property_1_an_under_loaded_vc_gets_its_whole_demand_and_lends_the_rest() -> None:
    # VC0 demands 300 of its 900; VC1 demands 1 000 of its 350: 600 idle servers of VC0 + 100
    # system ones = 700 free, VC1's excess is 650 → VC1 gets 350 + 650
    got = MaxMin().targets(arr(900, 350), arr(300, 1000), 1350, NONE)
    assert got.tolist() == [300, 1000]


@pytest.mark.parametrize(("demand", "expected"), [
    # free pool 1350 − 350 − 350 = 650 over excesses 400 and 500: equal level 325 each
    ((750, 850), [675, 675]),
    # excess 100 and 900: the smaller is satisfied, the other gets 650 − 100 = 550
    ((450, 1250), [450, 900]),
], ids=["both-short", "one-satisfied"])
def test_property_2_over_demanding_vcs_compete_for_the_free_pool(demand: tuple[int, int],
                                                                expected: list[int]) -> None:
    got = MaxMin().targets(arr(350, 350), arr(*demand), 1350, NONE)
    assert got.tolist() == expected
    assert (got < arr(*demand)).any()  # at least one of them waits: its stretch can exceed 1


def test_property_3_the_smaller_vc_at_the_same_load_is_satisfied_first() -> None:
    # load 1.5 on capacities 900 and 350: excesses 450 and 175; a scarce pool of 400 free servers:
    # equal level 200 > 175, so the 350 VC gets all 525 and the 900 VC 900 + 225 = 1 125 of 1 350
    got = MaxMin().targets(arr(900, 350), arr(1350, 525), 1250 + 400, NONE)
    assert got.tolist() == [1125, 525]
    # capacity weighting (a choice the spec leaves open, gap 2) gives both the same fraction
    weighted = CapacityWeighted().targets(arr(900, 350), arr(1350, 525), 1250 + 400, NONE)
    assert (weighted - arr(900, 350)).tolist() == [288, 112]


def test_property_4_maxmin_ignores_what_a_vc_lent_before() -> None:
    lender = History(lent=np.array([9e7, 0.0]), received=np.array([0.0, 9e7]), credit=np.array([9e7, -9e7]),
                     usage=np.array([0.0, 9e7]), balance=np.array([9e7, -9e7]))
    c, d, total = arr(900, 350), arr(1350, 525), 1650
    assert MaxMin().targets(c, d, total, lender).tolist() == MaxMin().targets(c, d, total, NONE).tolist()
    # ours repays the lender: with credit the large VC gets more of the scarce pool than MaxMin gives
    ours = SextantHistory().targets(c, d, total, lender)
    assert ours[0] > 1125 and ours.sum() == 1650
