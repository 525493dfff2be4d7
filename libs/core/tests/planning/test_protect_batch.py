"""The resident guard's batched `harm` (planning/protect.py) against the row-by-row computation it
replaced, on random cells: the same counts and the same shortfall floats, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.placement.table import CandidateTable, TableIndex
from sextant_core.planning.assess import SizingParams
from sextant_core.planning.protect import ResidentGuard, factors
from sextant_core.planning.residual import PER_CORE
from sextant_core.state import ClusterState
from sextant_core.state.model import resident_vectors
from sextant_core.testing.cells import random_state
from sextant_core.testing.world import SOURCES


def reference_harm(g: ResidentGuard, state: ClusterState, table: CandidateTable, rows: np.ndarray,
                   caused_new: np.ndarray, at: float, *, exclude: str | None,
                   max_cores: int) -> tuple[np.ndarray, np.ndarray]:
    """`ResidentGuard.harm` as it was computed before (planner 8): one row at a time."""
    out = np.zeros(len(rows), dtype=np.int64)
    short = np.zeros(len(rows), dtype=np.float64)
    p = g.sizing
    for i, row in enumerate(rows.tolist()):
        sid = table.server_ids[row]
        server = state.servers.get(sid)
        if server is None or not server.residents:
            continue
        members = [(rid, w) for rid in server.residents
                   if rid != exclude and (w := state.workloads.get(rid)) is not None]
        entries = [(w, g._entry(state, w, sid, max_cores)) for _, w in members]
        protected = [(w, e, h) for w, e in entries if e is not None and (h := g._head(w, e, at)) > 0]
        if not protected:
            continue
        csum = table.caused_sum[row]
        cs = np.array([resident_vectors(w)[1] for _, w in members], dtype=np.float64)
        t = np.stack([e.tolerated for _, e, _ in protected])
        c = np.stack([e.caused for _, e, _ in protected])
        top = np.sort(cs, axis=0)[::-1]
        first = top[0]
        second = top[1] if len(top) > 1 else np.zeros_like(first)
        others_max = np.where(c >= first[None, :], second[None, :], first[None, :])
        shared = csum[None, :] - c
        before = np.where(PER_CORE[None, :], others_max, shared)
        after = np.where(PER_CORE[None, :], np.maximum(others_max, caused_new[None, :]), shared + caused_new[None, :])
        heads = np.array([h for _, _, h in protected])
        fb = heads * factors(before, t, p.alpha, p.slowdown_cap)
        fa = heads * factors(after, t, p.alpha, p.slowdown_cap)
        loss = (1.0 + g.pessimism) * (fb - fa)
        hit = (fb >= g.min_head) & (fb - loss < 1.0)
        out[i] = int(hit.sum())
        short[i] = float((1.0 - (fb - loss))[hit].sum())
    return out, short


@pytest.mark.parametrize("seed", range(6))
def test_batched_harm_equals_the_row_by_row_harm(seed: int) -> None:
    state, wids = random_state(seed)
    table = TableIndex().table(state)
    rng = np.random.default_rng(100 + seed)
    hits = 0
    for trial in range(12):
        pessimism = float(rng.choice([0.0, 1.0, 3.0]))
        min_head = float(rng.choice([1.0, 0.98]))
        new, old = ResidentGuard(SizingParams(), pessimism, min_head), ResidentGuard(SizingParams(), pessimism, min_head)
        rows = rng.permutation(len(table))[: int(rng.integers(1, len(table) + 1))].astype(np.int64)
        caused_new = rng.uniform(0, 40, len(SOURCES))
        exclude = wids[int(rng.integers(0, len(wids)))] if trial % 3 == 0 and wids else None
        got = new.harm(state, table, rows, caused_new, 5.0, exclude=exclude, max_cores=16)
        want = reference_harm(old, state, table, rows, caused_new, 5.0, exclude=exclude, max_cores=16)
        assert np.array_equal(got[0], want[0])
        assert got[1].tobytes() == want[1].tobytes()  # the same floats, not merely close
        hits += int(want[0].sum())
    assert hits > 0  # the cells do break residents: the comparison covers the shortfall sums
