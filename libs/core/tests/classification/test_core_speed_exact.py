"""The decision core's exact speed-ups (docs/platform/replay.md, "Decision core") compute what the
previous code computed, bit for bit: each previous implementation is kept here as the reference
and compared on random inputs, edge cases included."""

from __future__ import annotations

import random

import numpy as np
import pytest
from sextant_contracts.model import Classification
from sextant_core.classification import engine
from sextant_core.classification.knowledge import Matrix
from sextant_core.classification.normalise import Normalisation
from sextant_core.classification.rowlog import CHUNK

HET = Classification.HETEROGENEITY


def _reference_dense(m: Matrix, n: int | None = None) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """`Matrix.dense` before the scatter: one row at a time."""
    n = len(m.rows) if n is None else n
    width = m.width_at(n)
    y = np.zeros((n, width))
    mask = np.zeros((n, width), dtype=bool)
    ids: list[str] = []
    for i, row in enumerate(m.rows.head(n)):
        cols = list(row.cols)
        y[i, cols] = row.values
        mask[i, cols] = True
        ids.append(row.row_id)
    return y, mask, ids


def _random_matrix(rng: random.Random, rows: int, norm: Normalisation = Normalisation.LOG) -> Matrix:
    m = Matrix(classification=HET, group="all", normalisation=norm)
    for i in range(rows):
        cells = [(f"c{rng.randrange(12)}", rng.choice([rng.uniform(1e-3, 1e4), 1.0, 0.5, 0.0, -1.0]))
                 for _ in range(rng.randint(0, 6))]
        m = m.with_row(f"w{i}", cells)
    return m


@pytest.mark.parametrize("seed", range(6))
def test_dense_scatters_the_rows_the_loop_wrote(seed: int) -> None:
    rng = random.Random(seed)
    m = _random_matrix(rng, rng.choice([0, 1, 7, CHUNK + 3, 2 * CHUNK]))
    for n in sorted({0, len(m), len(m) // 2, min(1, len(m)), max(len(m) - 1, 0)}):
        y, mask, ids = m.dense(n)
        ry, rmask, rids = _reference_dense(m, n)
        assert y.shape == ry.shape and y.dtype == ry.dtype and mask.dtype == rmask.dtype
        assert y.tobytes() == ry.tobytes() and mask.tobytes() == rmask.tobytes() and ids == rids
    y, mask, ids = m.dense()
    assert y.tobytes() == _reference_dense(m)[0].tobytes()


def test_the_engines_dense_is_memoised_read_only_and_keyed_by_the_prefix() -> None:
    engine.clear_memo()
    rng = random.Random(7)
    m = _random_matrix(rng, 60)
    assert len(m) > 31  # rows with no valid cell are not appended
    y, mask, ids = engine.dense(m, 30)
    ry, rmask, rids = _reference_dense(m, 30)
    assert y.tobytes() == ry.tobytes() and mask.tobytes() == rmask.tobytes() and ids == tuple(rids)
    assert engine.dense(m, 30)[0] is y  # the memo
    assert not y.flags.writeable and not mask.flags.writeable
    with pytest.raises(ValueError):
        y[0, 0] = 1.0
    # a matrix with other rows under the same key and count: another digest, other arrays
    other = _random_matrix(random.Random(8), 60)
    assert engine.dense(other, 30)[0].tobytes() == _reference_dense(other, 30)[0].tobytes()
    assert engine.dense(m, 31)[0].shape[0] == 31
    engine.clear_memo()
    assert engine.dense(m, 30)[0] is not y
