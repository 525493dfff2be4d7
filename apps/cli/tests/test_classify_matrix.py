"""`sextant classify-matrix`: the CSV front end of the classification engine."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
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
