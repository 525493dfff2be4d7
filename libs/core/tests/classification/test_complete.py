"""`complete_matrix` (the classify-matrix engine) on matrices it did not make (docs/classification.md)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sextant_core.classification.complete import MatrixError, complete_matrix, typical_known


def _bias_fill(y: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Exact least-squares fit of μ + b_u + c_i to the known cells (the baseline the engine must halve)."""
    m, n = y.shape
    rows, cols = np.nonzero(mask)
    design = np.zeros((len(rows), 1 + m + n))
    design[:, 0] = 1.0
    design[np.arange(len(rows)), 1 + rows] = 1.0
    design[np.arange(len(rows)), 1 + m + cols] = 1.0
    theta = np.linalg.lstsq(design, y[rows, cols], rcond=None)[0]
    return theta[0] + theta[1:1 + m][:, None] + theta[1 + m:][None, :]


def _bias_fills(a: np.ndarray, mask: np.ndarray) -> list[np.ndarray]:
    """Additive in raw space, and multiplicative (additive in log space)."""
    return [_bias_fill(a, mask), np.exp(_bias_fill(np.log(a), mask))]


def _rel_err(pred: np.ndarray, truth: np.ndarray, cells: np.ndarray) -> float:
    return float(np.mean(np.abs(pred[cells] / truth[cells] - 1.0)))


@pytest.mark.parametrize("rank", [2, 3])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_beats_bias_fills_by_half_and_keeps_known_cells(builders, seed: int, rank: int) -> None:
    # independently generated: positive gamma factors, 10 dense rows, the rest with 2-4 known cells
    a = builders.raw_low_rank(seed, 150, 10, rank)
    mask = builders.sparse_mask(seed, 150, 10, 10, 2, 4)
    x = np.where(mask, a, np.nan)
    out = complete_matrix(x, [f"w{i:03d}" for i in range(150)])
    assert not np.isnan(out.filled).any()
    hidden = ~mask
    ours = _rel_err(out.filled, a, hidden)
    baseline = min(_rel_err(f, a, hidden) for f in _bias_fills(a, mask))
    assert ours <= 0.5 * baseline, (ours, baseline, out.rank)
    assert np.all(np.abs(out.filled[mask] / a[mask] - 1.0) <= 0.05)
    assert np.all(out.confidence[mask] == 1.0)
    assert np.all((out.confidence >= 0) & (out.confidence <= 1))


def test_rank_one_positive_matrix_is_filled_exactly(builders) -> None:
    # raw rank 1 = u_r·v_c, i.e. a pure row-bias + column-bias model after the log: exact
    a = builders.raw_low_rank(7, 150, 10, 1)
    mask = builders.sparse_mask(7, 150, 10, 10, 2, 4)
    out = complete_matrix(np.where(mask, a, np.nan), [f"w{i}" for i in range(150)])
    assert _rel_err(out.filled, a, ~mask) < 1e-4
    assert _rel_err(out.filled, a, ~mask) <= 0.5 * _rel_err(_bias_fills(a, mask)[0], a, ~mask)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1000), perm_seed=st.integers(0, 1000))
def test_permuting_rows_permutes_the_output_bit_for_bit(builders, seed: int, perm_seed: int) -> None:
    a = builders.raw_low_rank(seed, 30, 6, 2)
    mask = builders.sparse_mask(seed, 30, 6, 6, 2, 4)
    x = np.where(mask, a, np.nan)
    ids = [f"r{i}" for i in range(30)]
    perm = np.random.default_rng(perm_seed).permutation(30)
    one = complete_matrix(x, ids)
    two = complete_matrix(x[perm], [ids[i] for i in perm])
    assert one.filled[perm].tobytes() == two.filled.tobytes()
    assert one.confidence[perm].tobytes() == two.confidence.tobytes()
    assert (one.rank, one.reg) == (two.rank, two.reg)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1000))
def test_same_input_same_output_bit_for_bit(builders, seed: int) -> None:
    a = builders.raw_low_rank(seed, 30, 6, 2)
    x = np.where(builders.sparse_mask(seed, 30, 6, 6, 2, 4), a, np.nan)
    ids = [f"r{i}" for i in range(30)]
    one, two = complete_matrix(x, ids), complete_matrix(x.copy(), list(ids))
    assert one.filled.tobytes() == two.filled.tobytes()
    assert one.selection == two.selection


def test_rank_and_reg_given_skip_selection(builders) -> None:
    a = builders.raw_low_rank(3, 40, 6, 2)
    x = np.where(builders.sparse_mask(3, 40, 6, 6, 2, 4), a, np.nan)
    out = complete_matrix(x, [str(i) for i in range(40)], rank=2, reg=0.05)
    assert (out.rank, out.reg, out.selection) == (2, 0.05, None)


def test_linear_normalisation_accepts_non_positive_values(builders) -> None:
    a = builders.raw_low_rank(4, 40, 6, 1) - 3.0
    mask = builders.sparse_mask(4, 40, 6, 8, 3, 4)
    out = complete_matrix(np.where(mask, a, np.nan), [str(i) for i in range(40)], normalisation="linear")
    assert (a < 0).any()
    assert np.abs(out.filled - a)[~mask].mean() < 0.1 * np.abs(a).mean()


def test_typical_known_is_the_median_of_sparse_rows() -> None:
    mask = np.zeros((5, 6), dtype=bool)
    mask[0] = True  # full row: ignored
    for i, k in enumerate((2, 3, 3, 4), start=1):
        mask[i, :k] = True
    assert typical_known(mask) == 3
    assert typical_known(np.ones((3, 3), dtype=bool)) == 2


@pytest.mark.parametrize("x,ids,match", [
    (np.array([[1.0, np.nan], [2.0, np.nan]]), ["a", "b"], "no known value"),
    (np.array([[1.0, 2.0], [2.0, 3.0]]), ["a", "a"], "unique"),
    (np.array([[1.0, -2.0], [2.0, 3.0]]), ["a", "b"], "> 0"),
    (np.array([[1.0, 2.0]]), ["a", "b"], "row ids"),
    (np.zeros((0, 3)), [], "at least one row"),
], ids=["empty-column", "duplicate-ids", "non-positive", "id-count", "no-rows"])
def test_bad_input_is_a_clear_error(x: np.ndarray, ids: list[str], match: str) -> None:
    with pytest.raises(MatrixError, match=match):
        complete_matrix(x, ids)
