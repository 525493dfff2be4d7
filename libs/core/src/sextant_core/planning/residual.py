"""Per-server residual tolerance for the exact D1 check (`placement/plugins/paragon_residual.py`).

    m(s, k)        = min over residents r of (κ · t_r(k) + c_r(k))   (100 on an empty server)
    residual(s, k) = m(s, k) − c_server(s, k)                        shared sources
    residual(s, k) = min over residents r of κ · t_r(k)               per-core sources

[IMPL CHOICE] (Paragon spec §9 item 4: how pressures of several co-runners combine.) The
*shared* sources (memory and LLC capacity and bandwidth, network, storage) add up, as the server
aggregate c_server = Σ c does. The *per-core* sources (L1-i, L1-d, TLB, core: `PER_CORE`) are
private to a core and contend only through the one co-runner sharing it (hyper-threads), so a
resident feels the heaviest co-runner, not the sum: resident r tolerates a newcomer on such a
source iff c_new(k) ≤ κ · t_r(k), and the pressure on a newcomer there is the residents' maximum
(`pressure`: `c_server` with the per-core columns replaced by max_r c_r). `per_core=False` gives
the all-additive reading (every source summed).

κ = 1 is the exact form of Paragon's D1 (a resident may be pushed up to its tolerance, the point
where it slows by 5 %). [IMPL CHOICE] κ < 1 (`SizingParams.resident_headroom`) keeps every
resident's pressure at or below κ of its tolerance: in a world where slowdown already starts
below the tolerance (Paragon §2.3 defines t as the 5 % point, not as a cliff), the residents keep
a margin. A newcomer passes iff residual − c_new ≥ −slack on every source.

`ResidualIndex.residual(state, table)` returns the (n, S) residual column aligned with the
candidate table's rows (servers sorted by id). Like `placement.table.TableIndex` it follows
`ClusterState.server_journal`: between two states of one lineage only the servers whose rows
changed are recomputed; otherwise (first use, another lineage, a new server, a restarted
journal, or more changes than `max(min_walk, n // 4)`) it rebuilds every row. Unclassified
residents and missing scores are neutral (t = 100, c = 0), as in the server aggregates.
It is a cache of a pure function of the state: results never depend on the call history.
Not thread-safe; one per planner.

Speed: the state's `residual` and `pressure` columns (no workload excluded) are kept row by row
with m, so a decision reads them instead of combining two (n, S) arrays (the same element-wise
arithmetic, so the same values). They are read-only views of the index's buffers, valid until
the index serves another state (as the candidate table's columns are). The (n, S) buffers are
in Fortran order, like the table's aggregates: a decision's per-source arithmetic on them runs
in long inner loops (about twice as fast at 10 000 rows; the values do not depend on the layout).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from sextant_contracts.events import WorkloadClassified
from sextant_contracts.model import INTERFERENCE_SOURCES

from ..placement.table import CandidateTable
from ..state.model import N_SOURCES, ClusterState, ServerJournal, ServerState, resident_vectors
from .arrays import FloatArray

EMPTY_M = 100.0
PER_CORE_SOURCES = ("l1i", "l1d", "tlb", "core")
PER_CORE = np.array([s.value in PER_CORE_SOURCES for s in INTERFERENCE_SOURCES])


def _frozen(a: FloatArray) -> FloatArray:
    view = a.view()
    view.flags.writeable = False
    return view


class ResidualIndex:
    def __init__(self, *, kappa: float = 1.0, min_walk: int = 256, per_core: bool = True) -> None:
        if not 0 < kappa <= 1:
            raise ValueError("kappa must be in (0, 1]")
        self._kappa = kappa
        self._per_core = PER_CORE if per_core else np.zeros(N_SOURCES, dtype=np.bool_)
        self._min_walk = min_walk
        self._ids: tuple[str, ...] = ()
        self._row: dict[str, int] = {}
        self._m: FloatArray = np.zeros((0, N_SOURCES))
        self._servers: object = None
        self._node: ServerJournal | None = None
        self._cmax: FloatArray = np.zeros((0, N_SOURCES))
        self._csum: FloatArray = np.zeros((0, N_SOURCES))  # c_server per row (the servers' aggregates)
        self._pressure: FloatArray = np.zeros((0, N_SOURCES))  # `pressure` of the state, no exclusion
        self._residual: FloatArray = np.zeros((0, N_SOURCES))  # `residual` of the state, no exclusion
        self._raw: dict[str, tuple[WorkloadClassified | None, bool, FloatArray, FloatArray]] = {}
        self.rebuilds = 0
        self.syncs = 0
        self._checked: tuple[int, int] = (0, -1)

    def row(self, state: ClusterState, server_id: str, exclude: str | None = None) -> FloatArray:
        """m(s, ·) of one server, optionally without one resident."""
        return self._rows(state, server_id, exclude)[0]

    def _raw_tc(self, state: ClusterState, rid: str) -> tuple[FloatArray, FloatArray] | None:
        w = state.workloads.get(rid)
        if w is None:
            return None
        hit = self._raw.get(rid)
        if hit is not None and hit[0] is w.classification and hit[1] == w.guarded:
            return hit[2], hit[3]
        t, c = resident_vectors(w)
        v = (np.array(t), np.array(c))
        self._raw[rid] = (w.classification, w.guarded, *v)
        return v

    def _residents(self, state: ClusterState, server_id: str,
                   exclude: str | None = None) -> tuple[FloatArray, FloatArray]:
        ts, cs = [], []
        s = state.servers.get(server_id)
        for rid in s.residents if s is not None else ():
            if rid == exclude:
                continue
            v = self._raw_tc(state, rid)
            if v is not None:
                ts.append(v[0])
                cs.append(v[1])
        if not ts:
            return np.zeros((0, N_SOURCES)), np.zeros((0, N_SOURCES))
        return np.stack(ts), np.stack(cs)

    def _rows(self, state: ClusterState, server_id: str, exclude: str | None = None) -> FloatArray:
        """(2, S): m(s, ·) and max_r c_r(s, ·) of one server, optionally without one resident."""
        return np.stack(self._reduce(*self._residents(state, server_id, exclude)))

    def _reduce(self, t: FloatArray, c: FloatArray) -> tuple[FloatArray, FloatArray]:
        """m and max(0, max_r c_r) from the residents' stacked t and c (r, S): each resident
        contributes κt + c (κt on per-core sources); no (known) resident: the empty server's
        t + c = 100 + 0."""
        if not len(t):
            return np.full(N_SOURCES, EMPTY_M), np.zeros(N_SOURCES)
        kt = self._kappa * t
        return np.where(self._per_core, kt, kt + c).min(axis=0), np.maximum(c.max(axis=0), 0.0)

    def _rebuild(self, state: ClusterState) -> None:
        servers = state.sorted_servers()
        self._ids = tuple(s.server_id for s in servers)
        self._row = {sid: i for i, sid in enumerate(self._ids)}
        # Fortran order, like the table's aggregates: `pressure` and `residual` combine them
        # with `caused_sum` column by column (the values do not depend on the layout)
        self._m = np.full((len(servers), N_SOURCES), EMPTY_M, order="F")
        self._cmax = np.zeros((len(servers), N_SOURCES), order="F")
        self._csum = np.asfortranarray(np.array([s.caused_sum for s in servers], np.float64).reshape(-1, N_SOURCES))
        self._reduce_all(state, servers)
        self._pressure = np.where(self._per_core, self._cmax, self._csum)
        self._residual = self.residual_of(self._m, self._csum)
        self.rebuilds += 1

    def _reduce_all(self, state: ClusterState, servers: list[ServerState]) -> None:
        """`_reduce` of every server's residents into the rows of m and max c, in one pass: the
        residents' (t, c) stacked in row order, then a segmented minimum / maximum per server row
        (`np.minimum.reduceat`: the same element-wise κt + c and the same exact minima and maxima
        as row by row; a row with no known resident keeps the empty server's 100 and 0)."""
        ts: list[FloatArray] = []
        cs: list[FloatArray] = []
        owner: list[int] = []
        for i, s in enumerate(servers):
            for rid in s.residents:
                v = self._raw_tc(state, rid)
                if v is not None:
                    ts.append(v[0])
                    cs.append(v[1])
                    owner.append(i)
        if not owner:
            return
        t, c = np.array(ts), np.array(cs)
        kt = self._kappa * t
        own = np.array(owner, dtype=np.int64)
        starts = np.flatnonzero(np.concatenate(([True], own[1:] != own[:-1])))
        rows = own[starts]
        self._m[rows] = np.minimum.reduceat(np.where(self._per_core, kt, kt + c), starts, axis=0)
        self._cmax[rows] = np.maximum(np.maximum.reduceat(c, starts, axis=0), 0.0)

    def _sync(self, state: ClusterState) -> bool:
        if self._servers is None or len(self._ids) != len(state.servers):
            return False
        limit = max(self._min_walk, len(state.servers) // 4)
        changed: list[str] = []
        node = state.server_journal
        while node is not None and len(changed) <= limit:
            if node is self._node:
                self._write(state, dict.fromkeys(changed))
                self.syncs += 1
                return True
            if node.added:
                return False
            changed.append(node.server_id)
            node = node.prev
        return False

    def _write(self, state: ClusterState, server_ids: Iterable[str]) -> None:
        rows = []
        for sid in server_ids:
            i = self._row.get(sid)
            if i is None:
                continue
            t, c = self._residents(state, sid)
            self._m[i], self._cmax[i] = self._reduce(t, c)
            s = state.servers.get(sid)
            if s is not None:
                self._csum[i] = s.caused_sum
            rows.append(i)
        if rows:  # the same element-wise arithmetic as the full columns of `_rebuild`, on these rows
            self._pressure[rows] = np.where(self._per_core, self._cmax[rows], self._csum[rows])
            self._residual[rows] = self.residual_of(self._m[rows], self._csum[rows])

    def minimum(self, state: ClusterState) -> FloatArray:
        """m(s, k) for every server of `state` (rows in sorted id order); a read-only view."""
        if self._servers is not state.servers:
            if self._node is None or not self._sync(state):
                self._rebuild(state)
            self._servers = state.servers
            self._node = state.server_journal
        return _frozen(self._m)

    def residual_of(self, m: FloatArray, caused_sum: FloatArray) -> FloatArray:
        """residual from m and c_server rows (per-core sources: m alone, see the module doc)."""
        out: FloatArray = np.where(self._per_core, m, m - caused_sum)
        return out

    def pressure(self, state: ClusterState, table: CandidateTable, exclude: str | None = None) -> FloatArray:
        """The pressure residents put on a newcomer per row: c_server, with the per-core sources
        replaced by the residents' maximum (aligned with `table`; `exclude` as in `residual`).
        Without `exclude`, `table` is the state's own table (`TableIndex.table(state)`), and the
        index's column, kept row by row, is returned (a read-only view)."""
        self.minimum(state)
        if exclude is None:
            return _frozen(self._pressure)
        cmax = self._excluded(state, exclude)[1]
        out: FloatArray = np.where(self._per_core, cmax, table.caused_sum)
        return out

    def _excluded(self, state: ClusterState, exclude: str) -> tuple[FloatArray, FloatArray]:
        m, cmax = np.array(self._m), np.array(self._cmax)
        w = state.workloads.get(exclude)
        if w is not None and w.allocation is not None:
            for sid in w.allocation.servers:
                i = self._row.get(sid)
                if i is not None:
                    m[i], cmax[i] = self._rows(state, sid, exclude=exclude)
        return m, cmax

    def residual(self, state: ClusterState, table: CandidateTable, exclude: str | None = None) -> FloatArray:
        """residual(s, k) = m(s, k) − c_server(s, k), aligned with `table` (whose aggregates may
        already exclude `exclude`, a workload being re-placed: its rows are recomputed without it)."""
        m = self.minimum(state)
        if self._checked != (id(table.server_ids), self.rebuilds):
            if len(m) != len(table) or self._ids != table.server_ids:
                raise ValueError("residual index and candidate table disagree on the servers")
            self._checked = (id(table.server_ids), self.rebuilds)
        if exclude is None:  # `table` is the state's own table, as in `pressure`
            return _frozen(self._residual)
        return self.residual_of(self._excluded(state, exclude)[0], table.caused_sum)
