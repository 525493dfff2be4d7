"""The satisficing single-node choice (planning/satisfice.py): sure rows (target met with the
margin), then quietest, emptiest, best platform × interference, server id — table tests of the
pure order, and the planner's choice through `decide` beside the ranked one (version 5.1)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sextant_core.planning.assess import SizingParams
from sextant_core.planning.satisfice import SatisficeParams, first_k, margin_for, satisficing_order
from sextant_core.planning.sextant import SextantParams, SextantPlanner
from sextant_core.profiles import policy_set

from .conftest import World, chosen, place

CURVE = np.array([10.0, 18.0, 24.0, 30.0])  # U(1..4)
P = SatisficeParams(margin=0.0, confidence_margin=0.0)


def order(factor: list[float], used: list[int], base: list[float], *, required: float = 9.0,
          margin: float = 0.0, sized: list[int] | None = None, ratio: list[float] | None = None) -> list[int]:
    n = len(factor)
    choice = satisficing_order(np.arange(n), base=np.array(base), factor=np.array(factor), used=np.array(used),
                               free_cores=np.full(n, 4), sized=np.array(sized or [1] * n),
                               ratio=np.array(ratio or [1.1] * n), required=required, curve=CURVE,
                               margin=margin, params=P)
    assert choice is not None
    return choice.rows.tolist()


@pytest.mark.parametrize(("factor", "used", "base", "expected"), [
    # quietest first: f = 1.0 beats 0.99 (buckets of 0.005), whatever the room or the platform
    ([0.99, 1.0, 1.0], [0, 6, 2], [2.0, 1.0, 1.0], [2, 1, 0]),
    # equally quiet → emptiest (fewest cores in use), whatever the platform
    ([1.0, 1.0, 1.0], [4, 0, 2], [1.0, 1.0, 2.0], [1, 2, 0]),
    # equally quiet and empty → best base in 2 % log buckets (1.0 and 1.01 tie → server id)
    ([1.0, 1.0, 1.0], [0, 0, 0], [1.0, 1.5, 1.01], [1, 0, 2]),
], ids=["quietest-first", "then-emptiest", "then-best-platform-then-id"])
def test_the_order(factor: list[float], used: list[int], base: list[float], expected: list[int]) -> None:
    assert order(factor, used, base) == expected


def test_sure_rows_first_and_resized_for_the_margin() -> None:
    # R = 9, margin 0.1 → R' = 9.9. Row 0 (base 1, empty): U(c) ≥ 9.9 → c = 1 (10): sure, ratio 10/9 = 1.11.
    # Row 1 (base 0.5, emptier still? no: used 0 too) needs U ≥ 19.8 → c = 3 (24 · 0.5 = 12 ≥ 9.9): sure.
    # Row 2 (base 0.95, used 0) needs U ≥ 10.42 → c = 2 (18 · 0.95 = 17.1): sure.
    n = 3
    choice = satisficing_order(np.arange(n), base=np.array([1.0, 0.5, 0.95]), factor=np.ones(n),
                               used=np.array([3, 0, 0]), free_cores=np.array([4, 4, 4]), sized=np.array([1, 2, 1]),
                               ratio=np.array([10 / 9, 1.0, 0.95 * 10 / 9]), required=9.0, curve=CURVE,
                               margin=0.1, params=P)
    assert choice is not None and choice.sure
    # emptiest first (rows 1, 2 unused), then the better base (0.95 > 0.5), then row 0 (3 cores used)
    assert choice.rows.tolist() == [2, 1, 0]
    assert choice.sized.tolist() == [2, 3, 1]
    assert choice.ratio.tolist() == pytest.approx([17.1 / 9, 12 / 9, 10 / 9])


def test_no_sure_row_keeps_every_feasible_row_at_its_size() -> None:
    # R = 9, margin 0.5 → R' = 13.5: row 0 (base 0.5, 1 free core): 10 · 0.5 < 13.5, not sure; so
    # nothing is sure and the feasible rows keep their own size and ratio
    choice = satisficing_order(np.array([0]), base=np.array([0.5]), factor=np.ones(1), used=np.zeros(1, dtype=int),
                               free_cores=np.array([1]), sized=np.array([1]), ratio=np.array([1.0]),
                               required=5.0, curve=CURVE, margin=0.5, params=P)
    assert choice is not None and not choice.sure
    assert choice.sized.tolist() == [1] and choice.ratio.tolist() == [1.0]
    assert satisficing_order(np.zeros(0, dtype=int), base=np.ones(1), factor=np.ones(1), used=np.zeros(1, dtype=int),
                             free_cores=np.ones(1, dtype=int), sized=np.ones(1, dtype=int), ratio=np.ones(1),
                             required=5.0, curve=CURVE, margin=0.0, params=P) is None


@pytest.mark.parametrize(("confidence", "expected"), [
    (None, 0.02),  # no confidence reported: the margin alone
    ({"heterogeneity": 1.0, "interference": 1.0}, 0.02),
    ({"heterogeneity": 0.5, "interference": 0.9}, 0.02 + 0.1 * 0.5),  # the lower of the two
    ({"scale_up": 0.0}, 0.02),  # other classifications do not count
], ids=["none", "certain", "lower-of-two", "others-ignored"])
def test_the_margin_widens_with_uncertainty(confidence: dict[str, float] | None, expected: float) -> None:
    assert margin_for(SatisficeParams(margin=0.02, confidence_margin=0.1), confidence) == pytest.approx(expected)


HET = {"A": 10.0, "B": 5.0}
UP = {"c1": 10.0, "c2": 18.0, "c4": 30.0}


def planner(**kw: Any) -> SextantPlanner:
    return SextantPlanner(SextantParams(sizing=SizingParams(margin=0.0, alpha=3.0), **kw))


def test_the_planner_spreads_to_an_empty_server_that_meets_the_target() -> None:
    # R = 12. a1 (A, H = 10) already runs a quiet resident on 2 cores: U(2) = 18 ≥ 12 → 2 cores, ratio 1.5.
    # b1 (B, H = 5) is empty: U(c) · 0.5 ≥ 12 · 1.02 → U ≥ 24.48 → c = 4 (U(3) = 24 falls short; 30 · 0.5 = 15).
    # Ranked (fewest cores first): a1 with 2 cores. Satisficing: both quiet (f = 1), b1 emptier → b1, 4 cores.
    st = (World().server("a1", platform="A", cores=8).server("b1", platform="B", cores=8)
          .workload("r", on=(("a1", 2, 1.0),), ref="A")
          .workload("new", target={"type": "instruction_rate", "ips": 12}, heterogeneity=HET, scale_up=UP).state())
    assert chosen(place(st, planner(choice="rank"))) == (("a1", 2, 1.0),)
    d = place(st, planner(satisfice=SatisficeParams(margin=0.02, confidence_margin=0.0)))
    assert chosen(d) == (("b1", 4, 1.0),)
    assert "satisficed" in d.events[0].trace.notes  # type: ignore[attr-defined]


def test_the_planner_ranks_when_asked_and_the_versions_are_kept() -> None:
    assert policy_set("sextant").planner.params.choice == "satisfice"  # type: ignore[attr-defined]
    old = policy_set("sextant@5.1")
    assert old.version == "5.1" and old.planner.params.choice == "rank"  # type: ignore[attr-defined]
    with pytest.raises(KeyError):
        policy_set("sextant@0.1")
    with pytest.raises(ValueError):
        SextantParams(choice="best")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_first_k_is_the_head_of_the_lexicographic_sort(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 300  # few distinct values per key: many ties, resolved by the next key, then the unique row
    keys = (rng.integers(0, 3, n), rng.integers(0, 4, n), rng.integers(-2, 2, n), rng.permutation(n))
    assert first_k(keys, 7).tolist() == np.lexsort(keys[::-1])[:7].tolist()
    assert first_k(keys, n + 5).tolist() == np.lexsort(keys[::-1]).tolist()
