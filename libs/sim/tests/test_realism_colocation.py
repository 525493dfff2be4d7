"""The co-location matrix of `sextant_sim.realism` and the report of `bench/realism.py`."""

from __future__ import annotations

import csv
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from sextant_kit.testing import load_script
from sextant_sim import groundtruth
from sextant_sim.realism import colocation

BENCH_DIR = Path(__file__).resolve().parents[3] / "bench"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script(BENCH_DIR / "realism.py", "bench_realism")  # imports its sibling quality.py


def test_the_matrix_is_the_victims_speed_factor_as_measured() -> None:
    truth = colocation.colocation_matrix(4, rows=24, cols=12, measured=False)
    seen = colocation.colocation_matrix(4, rows=24, cols=12)
    assert truth.values.shape == (24, 12) and truth.row_ids == seen.row_ids
    assert np.all(truth.values > 0) and np.all(truth.values <= 1.0)
    assert len({r.split(":")[1] for r in truth.row_ids}) == 4  # the four batch families
    # each entry is the ratio of two runs with the profiling noise: log sd perf_sd·√2
    sd = float(np.log(seen.values / truth.values).std())
    expected = groundtruth.load().noise.perf_sd * np.sqrt(2)
    assert 0.7 * expected < sd < 1.3 * expected
    # the same draw with the same seed: byte-identical
    assert np.array_equal(seen.values, colocation.colocation_matrix(4, rows=24, cols=12).values)


def test_a_harsher_platform_keeps_fewer_pairs_fast() -> None:
    small = colocation.pair_keep_share(2, pairs=200)
    big = colocation.pair_keep_share(2, pairs=200, platform="cr1.8xlarge")
    assert 0.0 < small < big <= 1.0


def test_the_report_dumps_the_matrix_and_marks_unbuilt_ones(bench: ModuleType, tmp_path: Path) -> None:
    def unbuilt() -> None:
        raise NotImplementedError

    assert bench._matrix_report("scaleout", unbuilt, tmp_path) == {"error": "not built"}
    r = bench.one_seed(1, "v4", True, tmp_path)
    assert set(r["colocation"]) >= {"twin", "band", "within"}
    assert set(r["colocation"]["twin"]) == {"r1", "r3", "corr", "rms"}
    assert r["interference_scores"]["calibrated_on"] is False
    rows = list(csv.reader((tmp_path / "colocation.csv").open()))
    assert rows[0][0] == "id" and len(rows) == 1 + 80 and len(rows[0]) == 1 + 40
    assert all(float(v) > 0 for row in rows[1:] for v in row[1:])
