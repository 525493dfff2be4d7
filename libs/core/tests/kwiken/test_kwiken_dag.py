"""The stage DAG, its end-to-end latency (max over paths of sums) and input errors (kwiken/dag.py)."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.kwiken.dag import KwikenInputError, StageDag, check_budget, end_to_end
from sextant_core.kwiken.reissue import reissue_curve


def diamond() -> StageDag:
    # 0 → {1, 2} → 3
    return StageDag(("fe", "a", "b", "agg"), ((0, 1), (0, 2), (1, 3), (2, 3)), (1.0, 1.0, 1.0, 1.0))


@pytest.mark.parametrize(("lat", "expected"), [
    ([1, 2, 5, 1], 1 + 5 + 1),   # the path through b
    ([1, 7, 5, 1], 1 + 7 + 1),   # the path through a
    ([0, 0, 0, 3], 3),
], ids=["via-b", "via-a", "sink-only"])
def test_end_to_end_is_the_longest_path(lat: list[float], expected: float) -> None:
    assert end_to_end(diamond(), np.array([lat], float))[0] == expected


def test_a_chain_adds_up_and_the_order_is_topological() -> None:
    d = StageDag(("c", "a", "b"), ((1, 2), (2, 0)), (1.0, 2.0, 1.0))
    assert d.order == (1, 2, 0)
    assert end_to_end(d, np.array([[1.0, 2.0, 4.0]]))[0] == 7.0
    assert np.isclose(d.normalised_costs().sum(), 1.0)


def test_a_cycle_is_refused_naming_the_edges() -> None:
    with pytest.raises(KwikenInputError) as e:
        StageDag(("a", "b", "c"), ((0, 1), (1, 2), (2, 1)), (1.0, 1.0, 1.0))
    assert e.value.field == "edges" and "cycle" in str(e.value)


@pytest.mark.parametrize("budget", [0.0, -0.1, 1.5, float("nan")], ids=["zero", "negative", "above-one", "nan"])
def test_a_budget_outside_zero_one_is_refused(budget: float) -> None:
    with pytest.raises(KwikenInputError) as e:
        check_budget(budget)
    assert e.value.field == "budget"


def test_a_stage_without_samples_is_refused() -> None:
    with pytest.raises(KwikenInputError) as e:
        reissue_curve(np.array([]))
    assert e.value.field == "samples"


@pytest.mark.parametrize(("kw", "field"), [
    ({"costs": (1.0, 0.0)}, "costs"),
    ({"fanout": (1, 0)}, "fanout"),
    ({"edges": ((0, 5),)}, "edges"),
], ids=["zero-cost", "zero-fanout", "dangling-edge"])
def test_bad_stage_fields_are_named(kw: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"names": ("a", "b"), "edges": ((0, 1),), "costs": (1.0, 1.0)} | kw
    with pytest.raises(KwikenInputError) as e:
        StageDag(**args)  # type: ignore[arg-type]
    assert e.value.field == field
