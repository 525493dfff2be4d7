"""Resident protection: a newcomer may not take a server where it would make a resident that is
predicted to meet its target stop meeting it (the `sextant` planner from version 7).

Paragon's D1 check (`residual.py`) keeps every resident's pressure at or below its tolerance on
each source *separately*; but the tolerance is the pressure at which one source alone slows the
resident by 5 % — the whole QoS margin of a workload on its best platform — and slowdowns of
several sources multiply. On paragon-ec2-2500 (true rows, seed 1) 58 % of the workloads the
oracle meets and `sextant` misses had started alone on a server and were slowed by the
newcomers placed next to them later (docs/quality/planning.md). The oracle protects them: a
server is feasible only if no resident that meets its requirement would stop meeting it. This
module applies the same rule with the planner's own predictions only (the residents'
classification rows, allocations and targets, as recorded in the state; never a measurement the
log does not carry).

For a resident r of server s (a guaranteed single-node workload, classified, with a reachable
requirement R_r, `targets.py`) and a newcomer causing c_new:

    head_r      = H_r(platform of s) · S_r(cores of r) / R_r      (`model.py`; 1 = just meets)
    p_r(k)      = c_server(s, k) − c_r(k)                         shared sources
    p_r(k)      = max over the other residents r' of c_r'(k)       per-core sources (`residual.py`)
    f_r(p)      = Πₖ (1 − min(cap, 0.05 · (p(k) / max(t_r(k), 1))^α))   (`interference_factor`)
    before      = head_r · f_r(p_r)
    after       = head_r · f_r(p_r + c_new)       (per-core: max(p_r, c_new))
    broken      ⟺ before ≥ min_head  and  before − (1 + pessimism) · (before − after) < 1

(α, cap: the sizing's, `SizingParams`; `min_head` 1 by default). A resident already predicted to
miss is not protected (as in the oracle). `pessimism` ≥ 0 inflates the predicted loss: residents
that ran alone lose more, over their run, than the one-step α-model predicts (later co-runners,
their phases, queueing on shared bandwidth); the planner's default is 1 (`SextantParams`).

[GAP] only single-node residents are protected: a multi-node resident's aggregate (scale-out
efficiency, a service's weakest node) is not re-predicted per node. Best-effort residents have no
guarantee and are not protected (eviction is their contract).

`ResidentGuard.broken(...)` counts the broken residents per candidate row; `harm(...)` adds their
summed shortfall Σ (1 − (before − loss)) (what planner 8's waive fallback minimises). It reads each
resident's cached (tolerated, caused, head before the requirement) — keyed by the resident's
classification, profiling plan and allocation objects, so a cache of a pure function of the state;
results never depend on the call history. Not thread-safe; one per planner.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..placement.plugins.quasar_sizing import QOS_SLOWDOWN
from ..placement.table import CandidateTable
from ..state.model import ClusterState, WorkloadState, resident_vectors
from .arrays import FloatArray, IntArray
from .assess import SizingParams
from .model import PerformanceModel, model_for
from .residual import PER_CORE
from .targets import requirement

_KEPT = 1 << 16  # resident entries kept before the cache is cleared


@dataclass(frozen=True, slots=True)
class _Resident:
    """What protecting one resident on its server needs, fixed while its inputs are."""

    key: tuple[object, object, object, object]  # compared by identity
    max_cores: int  # the curve's length its model was built for
    tolerated: FloatArray
    caused: FloatArray
    model: PerformanceModel
    level: float  # H_r(platform) · S_r(cores): its predicted performance alone


def factors(pressure: FloatArray, tolerated: FloatArray, alpha: float, cap: float) -> FloatArray:
    """f per row: Πₖ (1 − min(cap, 0.05 · (max(p, 0) / max(t, 1))^α)) — `interference_factor`
    with a tolerance per row (each resident its own)."""
    x = np.maximum(pressure, 0.0) / np.maximum(tolerated, 1.0)
    out: FloatArray = np.prod(1.0 - np.minimum(cap, QOS_SLOWDOWN * x ** alpha), axis=1)
    return out


class ResidentGuard:
    def __init__(self, sizing: SizingParams, pessimism: float = 0.0, min_head: float = 1.0) -> None:
        if pessimism < 0 or min_head <= 0:
            raise ValueError("pessimism must be >= 0 and min_head > 0")
        self.sizing = sizing
        self.pessimism = pessimism
        self.min_head = min_head
        self._cache: dict[str, _Resident] = {}

    def _entry(self, state: ClusterState, r: WorkloadState, server_id: str, max_cores: int) -> _Resident | None:
        alloc = r.allocation
        if (alloc is None or r.best_effort or r.classification is None or len(alloc.assignments) != 1
                or alloc.assignments[0].server_id != server_id):
            return None
        key = (r.classification, r.profile_runs, alloc, r.guarded)
        hit = self._cache.get(r.workload_id)
        if hit is not None and hit.max_cores == max_cores and all(a is b for a, b in zip(hit.key, key, strict=True)):
            return hit
        server = state.servers.get(server_id)
        if server is None:
            return None
        model = model_for(state, r, max(max_cores, 1), self.sizing.plateau)
        level = model.factor(server.platform) * model.up(alloc.assignments[0].cores)
        t, c = resident_vectors(r)
        if len(self._cache) >= _KEPT:
            self._cache.clear()
        entry = _Resident(key=key, max_cores=max_cores, tolerated=np.array(t), caused=np.array(c), model=model, level=level)
        self._cache[r.workload_id] = entry
        return entry

    def _head(self, r: WorkloadState, e: _Resident, at: float) -> float:
        """head_r: its predicted performance alone over its requirement at `at` (0: unprotected)."""
        own = r.requested_cores or e.model.reference_cores
        req = requirement(r.target, now=at, submitted_at=r.submitted_at, best_single=e.model.best_single,
                          margin=self.sizing.margin, best_requested=e.model.best_at(own))
        return e.level / req.value if req.reachable else 0.0

    def broken(self, state: ClusterState, table: CandidateTable, rows: IntArray, caused_new: FloatArray,
               at: float, *, exclude: str | None = None, max_cores: int = 1) -> IntArray:
        """Per row of `rows` (indices into `table`): how many residents the newcomer (pressure
        `caused_new`) would break there (module docstring). `exclude`: the newcomer itself when
        it is re-placed (not its own resident)."""
        return self.harm(state, table, rows, caused_new, at, exclude=exclude, max_cores=max_cores)[0]

    def harm(self, state: ClusterState, table: CandidateTable, rows: IntArray, caused_new: FloatArray,
             at: float, *, exclude: str | None = None, max_cores: int = 1) -> tuple[IntArray, FloatArray]:
        """Per row of `rows`: (the residents broken, as `broken`; their summed shortfall
        Σ (1 − (before − loss)) over the broken ones: how far below their targets they are
        predicted to fall).

        Speed: the residents are gathered row by row (Python), then the protected ones of every
        row are stacked and their before / after factors computed in one pass — the same
        element-wise operations and per-row products as row by row, so the same floats
        (libs/core/tests/planning/test_protect_batch.py compares the two on random cells)."""
        out = np.zeros(len(rows), dtype=np.int64)
        short = np.zeros(len(rows), dtype=np.float64)
        block = self._gather(state, table, rows, at, exclude, max_cores)
        if block is None:
            return out, short
        groups, t, c, heads, first, second, csum = block
        p = self.sizing
        # per-core sources: the heaviest *other* co-runner (top two of the row's members)
        others_max = np.where(c >= first, second, first)
        shared = csum - c
        before = np.where(PER_CORE[None, :], others_max, shared)
        after = np.where(PER_CORE[None, :], np.maximum(others_max, caused_new[None, :]),
                         shared + caused_new[None, :])
        fb = heads * factors(before, t, p.alpha, p.slowdown_cap)
        fa = heads * factors(after, t, p.alpha, p.slowdown_cap)
        loss = (1.0 + self.pessimism) * (fb - fa)
        hit = (fb >= self.min_head) & (fb - loss < 1.0)
        left = 1.0 - (fb - loss)
        for i, start, stop in groups:
            h = hit[start:stop]
            if h.any():
                out[i] = int(h.sum())
                short[i] = float(left[start:stop][h].sum())
        return out, short

    def _gather(self, state: ClusterState, table: CandidateTable, rows: IntArray, at: float, exclude: str | None,
                max_cores: int) -> tuple[list[tuple[int, int, int]], FloatArray, FloatArray, FloatArray, FloatArray,
                                         FloatArray, FloatArray] | None:
        """The protected residents of `rows`, stacked (one line each, grouped by row in order):
        (groups (i, start, stop), t, c, head, and their row's top two members' caused and
        c_server, one line per resident). None when no row has one."""
        groups: list[tuple[int, int, int]] = []
        ts: list[FloatArray] = []
        cs: list[FloatArray] = []
        heads: list[float] = []
        line: list[int] = []  # the row block of each protected resident
        tops: list[FloatArray] = []
        csums: list[FloatArray] = []
        for i, row in enumerate(rows.tolist()):
            sid = table.server_ids[row]
            server = state.servers.get(sid)
            if server is None or not server.residents:
                continue
            members = [w for rid in server.residents
                       if rid != exclude and (w := state.workloads.get(rid)) is not None]
            entries = [(w, self._entry(state, w, sid, max_cores)) for w in members]
            protected = [(e, h) for w, e in entries if e is not None and (h := self._head(w, e, at)) > 0]
            if not protected:
                continue
            # every member presses (protected or not); unclassified ones are neutral, as in the aggregates
            pressed = np.array([resident_vectors(w)[1] for w in members], dtype=np.float64)
            top = np.sort(pressed, axis=0)[::-1]
            second = top[1] if len(top) > 1 else np.zeros_like(top[0])
            tops.append(np.stack((top[0], second)))
            csums.append(table.caused_sum[row])
            start = len(heads)
            for e, h in protected:
                ts.append(e.tolerated)
                cs.append(e.caused)
                heads.append(h)
                line.append(len(csums) - 1)
            groups.append((i, start, len(heads)))
        if not groups:
            return None
        at_row = np.array(line, dtype=np.int64)
        top2 = np.stack(tops)[at_row]
        return (groups, np.stack(ts), np.stack(cs), np.array(heads), top2[:, 0], top2[:, 1],
                np.stack(csums)[at_row])


def first_unbroken(guard: ResidentGuard, state: ClusterState, table: CandidateTable, order: IntArray,
                   caused_new: FloatArray, at: float, *, exclude: str | None, max_cores: int,
                   chunk: int = 8) -> tuple[int | None, int]:
    """The first row of `order` (rows in preference order) where the newcomer breaks no resident,
    checked in growing chunks (most choices stop in the first); with how many rows were checked."""
    start, size = 0, chunk
    while start < len(order):
        part = order[start:start + size]
        ok = np.flatnonzero(guard.broken(state, table, part, caused_new, at, exclude=exclude,
                                         max_cores=max_cores) == 0)
        if len(ok):
            return int(part[ok[0]]), start + int(ok[0]) + 1
        start += size
        size *= 2
    return None, len(order)

