"""Per-server residual tolerance for the exact D1 check (`placement/plugins/paragon_residual.py`).

    m(s, k)        = min over residents r of (κ · t_r(k) + c_r(k))   (100 on an empty server)
    residual(s, k) = m(s, k) − c_server(s, k)

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
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from sextant_contracts.events import WorkloadClassified

from ..placement.table import CandidateTable
from ..state.model import N_SOURCES, ClusterState, ServerJournal, interference_vectors
from .arrays import FloatArray

EMPTY_M = 100.0


class ResidualIndex:
    def __init__(self, *, kappa: float = 1.0, min_walk: int = 256) -> None:
        if not 0 < kappa <= 1:
            raise ValueError("kappa must be in (0, 1]")
        self._kappa = kappa
        self._min_walk = min_walk
        self._ids: tuple[str, ...] = ()
        self._row: dict[str, int] = {}
        self._m: FloatArray = np.zeros((0, N_SOURCES))
        self._servers: object = None
        self._node: ServerJournal | None = None
        self._memo: dict[str, tuple[WorkloadClassified | None, tuple[float, ...]]] = {}
        self.rebuilds = 0
        self.syncs = 0
        self._checked: tuple[int, int] = (0, -1)

    def _tc(self, state: ClusterState, rid: str) -> tuple[float, ...] | None:
        w = state.workloads.get(rid)
        if w is None:
            return None
        hit = self._memo.get(rid)
        if hit is not None and hit[0] is w.classification:
            return hit[1]
        t, c = interference_vectors(w.classification)
        v = tuple(self._kappa * a + b for a, b in zip(t, c, strict=True))
        self._memo[rid] = (w.classification, v)
        return v

    def row(self, state: ClusterState, server_id: str, exclude: str | None = None) -> FloatArray:
        """m(s, ·) of one server, optionally without one resident."""
        out = np.full(N_SOURCES, np.inf)
        s = state.servers.get(server_id)
        for rid in s.residents if s is not None else ():
            if rid == exclude:
                continue
            v = self._tc(state, rid)
            if v is not None:
                np.minimum(out, v, out=out)
        out[np.isinf(out)] = EMPTY_M  # no (known) resident: the empty server's t + c = 100 + 0
        return out

    def _rebuild(self, state: ClusterState) -> None:
        servers = state.sorted_servers()
        self._ids = tuple(s.server_id for s in servers)
        self._row = {sid: i for i, sid in enumerate(self._ids)}
        self._m = np.full((len(servers), N_SOURCES), EMPTY_M)
        for i, s in enumerate(servers):
            if s.residents:
                self._m[i] = self.row(state, s.server_id)
        self.rebuilds += 1

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
        for sid in server_ids:
            i = self._row.get(sid)
            if i is None:
                continue
            self._m[i] = self.row(state, sid)

    def minimum(self, state: ClusterState) -> FloatArray:
        """m(s, k) for every server of `state` (rows in sorted id order); a read-only view."""
        if self._servers is not state.servers:
            if self._node is None or not self._sync(state):
                self._rebuild(state)
            self._servers = state.servers
            self._node = state.server_journal
        view = self._m.view()
        view.flags.writeable = False
        return view

    def residual(self, state: ClusterState, table: CandidateTable, exclude: str | None = None) -> FloatArray:
        """residual(s, k) = m(s, k) − c_server(s, k), aligned with `table` (whose aggregates may
        already exclude `exclude`, a workload being re-placed: its rows are recomputed without it)."""
        m = self.minimum(state)
        if self._checked != (id(table.server_ids), self.rebuilds):
            if len(m) != len(table) or self._ids != table.server_ids:
                raise ValueError("residual index and candidate table disagree on the servers")
            self._checked = (id(table.server_ids), self.rebuilds)
        if exclude is not None:
            w = state.workloads.get(exclude)
            if w is not None and w.allocation is not None:
                m = np.array(m)
                for sid in w.allocation.servers:
                    i = self._row.get(sid)
                    if i is not None:
                        m[i] = self.row(state, sid, exclude=exclude)
        out: FloatArray = m - table.caused_sum
        return out
