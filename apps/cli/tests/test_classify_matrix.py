"""`sextant classify-matrix`: the CSV front end of the classification engine."""

from __future__ import annotations

import csv
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sextant_cli.classify_matrix import classify_csv, main, read_matrix


def _write(path: Path, header: list[str], rows: list[list[str]]) -> None:
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def _low_rank_csv(path: Path, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    r = np.random.default_rng(seed)
    a = r.gamma(2.0, 1.0, size=(60, 2)) @ r.gamma(2.0, 1.0, size=(2, 7))
    mask = np.zeros(a.shape, dtype=bool)
    mask[:8] = True
    for i in range(8, 60):
        mask[i, r.choice(7, int(r.integers(2, 5)), replace=False)] = True
    _write(path, ["app", *[f"sc{j}" for j in range(7)]],
           [[f"app{i}", *[repr(float(a[i, j])) if mask[i, j] else "" for j in range(7)]] for i in range(60)])
    return a, mask


def test_fills_every_cell_and_keeps_the_known_ones(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, mask = _low_rank_csv(tmp_path / "in.csv")
    assert main([str(tmp_path / "in.csv"), str(tmp_path / "out.csv"), "--confidence", str(tmp_path / "c.csv")]) == 0
    out = read_matrix(tmp_path / "out.csv")
    assert out.row_ids == [f"app{i}" for i in range(60)] and out.columns == [f"sc{j}" for j in range(7)]
    assert out.id_header == "app" and not np.isnan(out.values).any()
    np.testing.assert_array_equal(out.values[mask], a[mask])  # known cells round-trip exactly
    assert np.mean(np.abs(out.values[~mask] / a[~mask] - 1)) < 0.10
    conf = read_matrix(tmp_path / "c.csv").values
    assert np.all(conf[mask] == 1.0) and np.all((conf >= 0) & (conf <= 1))
    assert "rank" in capsys.readouterr().err


def test_same_input_same_bytes(tmp_path: Path) -> None:
    _low_rank_csv(tmp_path / "in.csv", seed=1)
    classify_csv(tmp_path / "in.csv", tmp_path / "a.csv")
    classify_csv(tmp_path / "in.csv", tmp_path / "b.csv")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()


def test_options_override_the_selection(tmp_path: Path) -> None:
    _low_rank_csv(tmp_path / "in.csv", seed=2)
    out = classify_csv(tmp_path / "in.csv", tmp_path / "o.csv", rank=1, reg=0.5)
    assert (out.rank, out.reg, out.selection) == (1, 0.5, None)


@pytest.mark.parametrize("rows,message", [
    ([["a", "1", "x"]], "'x' is not a number"),
    ([["a", "1"]], "2 cells, the header has 3"),
    ([["a", "1", ""], ["b", "2", ""]], "column(s) 'c2' have no known value"),
    ([["a", "1", "-2"]], "> 0"),
    ([["a", "1", "2"], ["a", "3", "4"]], "unique"),
], ids=["not-a-number", "ragged", "empty-column", "non-positive", "duplicate-id"])
def test_bad_input_fails_clearly_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                    rows: list[list[str]], message: str) -> None:
    _write(tmp_path / "in.csv", ["id", "c1", "c2"], rows)
    assert main([str(tmp_path / "in.csv"), str(tmp_path / "out.csv")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "out.csv").exists()


def test_registered_in_the_sextant_cli(tmp_path: Path) -> None:
    from sextant_cli.main import main as sextant

    _low_rank_csv(tmp_path / "in.csv", seed=3)
    assert sextant(["classify-matrix", str(tmp_path / "in.csv"), str(tmp_path / "o.csv"), "--quiet"]) == 0
    assert (tmp_path / "o.csv").exists()


# --- empty rows and empty columns ------------------------------------------------------------------

def _matrix_csv(path: Path, values: np.ndarray, mask: np.ndarray) -> None:
    _write(path, ["id", *[f"k{j}" for j in range(values.shape[1])]],
           [[f"r{i}", *[repr(float(values[i, j])) if mask[i, j] else "" for j in range(values.shape[1])]]
            for i in range(values.shape[0])])


@st.composite
def _sparse_matrices(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """Any sparsity pattern whose every column has a value; empty rows are likely (and forced in
    a good share of the examples)."""
    m = draw(st.integers(1, 9))
    n = draw(st.integers(1, 6))
    cells = st.floats(0.01, 1000.0, allow_nan=False, allow_infinity=False)
    values = np.array(draw(st.lists(st.lists(cells, min_size=n, max_size=n), min_size=m, max_size=m)))
    mask = np.array(draw(st.lists(st.lists(st.booleans(), min_size=n, max_size=n), min_size=m, max_size=m)))
    for j in range(n):  # every column keeps a value
        if not mask[:, j].any():
            mask[draw(st.integers(0, m - 1)), j] = True
    if draw(st.booleans()):  # an extra empty row
        values = np.vstack([values, np.ones((1, n))])
        mask = np.vstack([mask, np.zeros((1, n), dtype=bool)])
    return values, mask


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_sparse_matrices())
def test_fills_any_matrix_whose_every_column_has_a_value(case: tuple[np.ndarray, np.ndarray]) -> None:
    """Property: every cell filled with a finite positive value, known cells unchanged, empty rows
    get the column-bias fill (the same row for all of them, confidence 0)."""
    values, mask = case
    with tempfile.TemporaryDirectory() as d:
        src, out, conf = Path(d) / "in.csv", Path(d) / "out.csv", Path(d) / "conf.csv"
        _matrix_csv(src, values, mask)
        assert main([str(src), str(out), "--confidence", str(conf), "--quiet"]) == 0
        got = read_matrix(out)
        c = read_matrix(conf).values
    assert got.row_ids == [f"r{i}" for i in range(values.shape[0])]
    assert np.all(np.isfinite(got.values)) and np.all(got.values > 0)
    np.testing.assert_array_equal(got.values[mask], values[mask])
    empty = ~mask.any(axis=1)
    if empty.sum() > 1:
        assert np.all(got.values[empty] == got.values[empty][0])
    assert np.all(c[empty] == 0.0) and np.all(c[mask] == 1.0)


def test_an_empty_row_gets_the_column_bias_fill(tmp_path: Path) -> None:
    """The fill of an empty row is μ + c_i of the trained model (log space), and the other rows'
    output is the same with or without the empty row."""
    from sextant_core.classification import complete_matrix
    from sextant_core.classification.factorize import train
    from sextant_core.classification.params import FitParams

    a, mask = _low_rank_csv(tmp_path / "in.csv", seed=4)
    x = np.where(mask, a, np.nan)
    ids = [f"app{i}" for i in range(len(x))]
    with_empty = complete_matrix(np.vstack([x, np.full((1, x.shape[1]), np.nan)]), [*ids, "zz-empty"], rank=2,
                                 reg=0.1)
    without = complete_matrix(x, ids, rank=2, reg=0.1)
    np.testing.assert_array_equal(with_empty.filled[:-1], without.filled)
    order = sorted(range(len(ids)), key=lambda i: ids[i])
    fit = train(np.where(mask, np.log(a), 0.0)[order], mask[order], FitParams(rank=2, reg=0.1))
    np.testing.assert_allclose(with_empty.filled[-1], np.exp(fit.model.mu + fit.model.col_bias), rtol=1e-12)
    assert np.all(with_empty.confidence[-1] == 0.0)


def test_a_column_with_no_value_is_named_even_beside_an_empty_row(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    _write(tmp_path / "in.csv", ["id", "cpu", "disk", "net"], [["a", "1", "", "2"], ["b", "", "", ""], ["c", "3", "", "4"]])
    assert main([str(tmp_path / "in.csv"), str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err
    assert "column(s) 'disk' have no known value" in err and "Singular" not in err
    assert not (tmp_path / "out.csv").exists()
