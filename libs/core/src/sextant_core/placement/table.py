"""The candidate table: one row per registered server, as NumPy columns (STYLE 7).

Rows are the servers of the state sorted by server id, so "the lowest row among equals" is the
deterministic tie-break of every placement. Columns (n = rows, S = 10 interference sources in
`INTERFERENCE_SOURCES` order):

| column | dtype, shape | meaning |
|---|---|---|
| `server_ids` | tuple[str] | sorted ids |
| `platforms` | tuple[str] | sorted distinct platform names; `platform_code` indexes it |
| `up`, `drained`, `schedulable` | bool (n,) | server flags; schedulable = up and not drained |
| `cap_cores`, `free_cores` | int64 (n,) | cores |
| `cap_memory_gb`, `free_memory_gb` | float64 (n,) | GiB |
| `residents` | int64 (n,) | number of resident workloads |
| `caused_sum` | float64 (n, S), Fortran order | Σ residents' caused scores (0 on an empty server) |
| `tolerated_min` | float64 (n, S), Fortran order | min residents' tolerated scores (100 on an empty server) |
| `best_effort_cores`, `best_effort_memory_gb` | (n,) | held by best-effort residents |
| `headroom` | float64 (n,) or None | ARQ's server quality Q_s (`headroom`), kept by the index; None: compute it |
| `extra` | name → (n,) array | caller-supplied columns (e.g. the twin's ground truth for `oracle`) |

[IMPL CHOICE] The table keeps unschedulable servers as rows; the `schedulable` filter plugin that
every profile starts with removes them with a constant reason (`server_down`, `server_drained`),
as the k8s `NodeUnschedulable` filter does. Extra columns therefore align with all servers.

Speed: a `TableIndex` keeps the columns of the last state(s) it saw and follows
`ClusterState.server_journal` to rewrite only the rows that changed since, so a decision on a
10 000-server cell costs a few row writes instead of a 10 000-iteration Python loop. A full
rebuild happens only when no cached table lies on the state's lineage within the walk bound, when
the row set changed (a new server or a platform change) or when the journal restarted.
Arrays handed out are read-only views of the index's buffers: a table is valid until the same
index serves a *different* state; `CandidateTable.copy()` keeps one for longer. An index is not
thread-safe; give each planner (and each thread) its own.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..state.model import (
    N_SOURCES,
    ClusterState,
    ServerJournal,
    ServerState,
    WorkloadState,
    server_aggregates,
)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def _frozen(a: npt.NDArray[Any]) -> npt.NDArray[Any]:
    v = a.view()
    v.flags.writeable = False
    return v


@dataclass(frozen=True, slots=True, eq=False)
class CandidateTable:
    """Read-only columns of the candidate servers; see the module docstring for each column."""

    server_ids: tuple[str, ...]
    platforms: tuple[str, ...]
    platform_code: IntArray
    up: BoolArray
    drained: BoolArray
    cap_cores: IntArray
    free_cores: IntArray
    cap_memory_gb: FloatArray
    free_memory_gb: FloatArray
    residents: IntArray
    caused_sum: FloatArray
    tolerated_min: FloatArray
    best_effort_cores: IntArray
    best_effort_memory_gb: FloatArray
    extra: Mapping[str, npt.NDArray[Any]] = field(default_factory=dict)
    headroom: FloatArray | None = None

    def __len__(self) -> int:
        return len(self.server_ids)

    @property
    def schedulable(self) -> BoolArray:
        return self.up & ~self.drained

    def row(self, server_id: str) -> int:
        """The row of `server_id` (KeyError if absent); O(log n) over the sorted ids."""
        i = bisect.bisect_left(self.server_ids, server_id)
        if i == len(self.server_ids) or self.server_ids[i] != server_id:
            raise KeyError(server_id)
        return i

    def with_extra(self, columns: Mapping[str, npt.ArrayLike]) -> CandidateTable:
        """A table with caller columns added (each must have one value per row)."""
        extra = dict(self.extra)
        for name, col in columns.items():
            arr = np.asarray(col)
            if arr.shape[:1] != (len(self),):
                raise ValueError(f"extra column {name!r} has shape {arr.shape}, expected ({len(self)}, ...)")
            extra[name] = _frozen(arr)
        return replace(self, extra=extra)

    def take(self, rows: Sequence[int]) -> CandidateTable:
        """A table of the given rows only (in that order), extra columns included."""
        idx = np.asarray(rows, dtype=np.int64)
        arrays: dict[str, Any] = {name: _frozen(np.asarray(getattr(self, name))[idx]) for name in _ARRAY_FIELDS}
        extra = {k: _frozen(np.asarray(v)[idx]) for k, v in self.extra.items()}
        return replace(self, server_ids=tuple(self.server_ids[i] for i in rows), extra=extra, **arrays)

    def copy(self) -> CandidateTable:
        """A table with private copies of every array (survives later index updates)."""
        arrays = {name: _frozen(np.array(getattr(self, name))) for name in _ARRAY_FIELDS}
        head = None if self.headroom is None else _frozen(np.array(self.headroom))
        return replace(self, extra={k: _frozen(np.array(v)) for k, v in self.extra.items()}, headroom=head,
                       **arrays)  # type: ignore[arg-type]


def headroom(tolerated_min: FloatArray, caused_sum: FloatArray) -> FloatArray:
    """ARQ's server quality per row (Paragon §4, `admission.quality.server_quality`):
    Q_s = Σ_k clip(min(t_server(k), 100 − c_server(k)), 0, 100) / S, summed source by source in
    `INTERFERENCE_SOURCES` order — the order numpy's mean takes over the table's Fortran-order
    columns, and the same for one row alone, so a row rewritten by the index gets the float a
    whole-table computation gives it."""
    h = np.clip(np.minimum(tolerated_min, 100.0 - caused_sum), 0.0, 100.0)
    out: FloatArray = np.array(h[:, 0])
    for k in range(1, h.shape[1]):
        out += h[:, k]
    out /= h.shape[1]
    return out


def _row_headroom(tolerated_min: tuple[float, ...], caused_sum: tuple[float, ...]) -> float:
    """`headroom` of one server from its aggregates: the same IEEE operations in the same order
    (min, clip, the sum source by source, the division), in Python floats (a changed row costs
    no numpy call). Only the sign of a zero may differ from numpy's, which no pool depends on."""
    acc = 0.0
    for k, (t, c) in enumerate(zip(tolerated_min, caused_sum, strict=True)):
        h = min(max(min(t, 100.0 - c), 0.0), 100.0)
        acc = h if k == 0 else acc + h
    return acc / len(tolerated_min)


_ARRAY_FIELDS = ("platform_code", "up", "drained", "cap_cores", "free_cores", "cap_memory_gb",
                 "free_memory_gb", "residents", "caused_sum", "tolerated_min", "best_effort_cores",
                 "best_effort_memory_gb")


class _Buffers:
    """The writable columns behind a table, plus what they were last synchronised to."""

    def __init__(self, servers: list[ServerState]) -> None:
        n = len(servers)
        self.server_ids = tuple(s.server_id for s in servers)
        self.row_of = {sid: i for i, sid in enumerate(self.server_ids)}
        self.platforms = tuple(sorted({s.platform for s in servers}))
        code = {p: i for i, p in enumerate(self.platforms)}
        self.platform_code = np.fromiter((code[s.platform] for s in servers), np.int64, n)
        self.up = np.fromiter((s.up for s in servers), np.bool_, n)
        self.drained = np.fromiter((s.drained for s in servers), np.bool_, n)
        self.cap_cores = np.fromiter((s.capacity.cores for s in servers), np.int64, n)
        self.free_cores = np.fromiter((s.free_cores for s in servers), np.int64, n)
        self.cap_memory_gb = np.fromiter((s.capacity.memory_gb for s in servers), np.float64, n)
        self.free_memory_gb = np.fromiter((s.free_memory_gb for s in servers), np.float64, n)
        self.residents = np.fromiter((len(s.residents) for s in servers), np.int64, n)
        # Fortran order: per-source columns are contiguous, so (n, S) ⊕ (S,) broadcasts run
        # with long inner loops (~6× faster than C order for S = 10)
        self.caused_sum = np.asfortranarray(np.array([s.caused_sum for s in servers], np.float64).reshape(n, N_SOURCES))
        self.tolerated_min = np.asfortranarray(
            np.array([s.tolerated_min for s in servers], np.float64).reshape(n, N_SOURCES))
        self.best_effort_cores = np.fromiter((s.best_effort_cores for s in servers), np.int64, n)
        self.best_effort_memory_gb = np.fromiter((s.best_effort_memory_gb for s in servers), np.float64, n)
        self.headroom = headroom(self.tolerated_min, self.caused_sum) if n else np.zeros(0)
        self.node: ServerJournal | None = None
        self.servers: object = None
        arrays: dict[str, Any] = {name: _frozen(getattr(self, name)) for name in _ARRAY_FIELDS}
        self.table = CandidateTable(server_ids=self.server_ids, platforms=self.platforms, **arrays,
                                    headroom=_frozen(self.headroom))

    def write(self, i: int, s: ServerState) -> None:
        self.up[i] = s.up
        self.drained[i] = s.drained
        self.cap_cores[i] = s.capacity.cores
        self.free_cores[i] = s.free_cores
        self.cap_memory_gb[i] = s.capacity.memory_gb
        self.free_memory_gb[i] = s.free_memory_gb
        self.residents[i] = len(s.residents)
        self.caused_sum[i] = s.caused_sum
        self.tolerated_min[i] = s.tolerated_min
        self.best_effort_cores[i] = s.best_effort_cores
        self.best_effort_memory_gb[i] = s.best_effort_memory_gb
        self.headroom[i] = _row_headroom(s.tolerated_min, s.caused_sum)


def build_table(state: ClusterState) -> CandidateTable:
    """A fresh table of every server of `state` (a Python loop over the servers: O(n))."""
    return _Buffers(state.sorted_servers()).table


@dataclass
class IndexStats:
    """What an index did, for benchmarks: full builds, incremental syncs, cache hits."""

    rebuilds: int = 0
    syncs: int = 0
    hits: int = 0


class TableIndex:
    """Incrementally maintained candidate tables for the states of up to `lineages` lineages.

    `table(state)` returns the table of `state`: the cached one if `state.servers` is the map it
    was built from; else, walking `state.server_journal` back at most `max(min_walk, n // 4)`
    entries, the cached table of an ancestor state with the changed rows rewritten in place;
    else a full rebuild that replaces the least recently used cache entry.
    """

    def __init__(self, *, lineages: int = 2, min_walk: int = 256) -> None:
        if lineages < 1:
            raise ValueError("lineages must be >= 1")
        self._lineages = lineages
        self._min_walk = min_walk
        self._entries: list[_Buffers] = []  # most recently used first
        self.stats = IndexStats()

    def table(self, state: ClusterState) -> CandidateTable:
        for i, buf in enumerate(self._entries):
            if buf.servers is state.servers:
                self._touch(i)
                self.stats.hits += 1
                return buf.table
        synced = self._sync(state)
        if synced is None:
            buf = _Buffers(state.sorted_servers())
            self._entries.insert(0, buf)
            del self._entries[self._lineages:]
            self.stats.rebuilds += 1
        else:
            buf = synced
        buf.node = state.server_journal
        buf.servers = state.servers
        return buf.table

    def _touch(self, i: int) -> None:
        if i:
            self._entries.insert(0, self._entries.pop(i))

    def _sync(self, state: ClusterState) -> _Buffers | None:
        """Bring a cached ancestor's buffers up to `state`; None if there is none to use."""
        if not self._entries:
            return None
        by_node = {id(b.node): i for i, b in enumerate(self._entries) if b.node is not None}
        limit = max(self._min_walk, len(state.servers) // 4)
        changed: list[str] = []
        node = state.server_journal
        while node is not None and len(changed) <= limit:
            i = by_node.get(id(node))
            if i is not None and self._entries[i].node is node:
                buf = self._entries[i]
                if len(buf.server_ids) != len(state.servers):
                    return None
                for sid in dict.fromkeys(changed):
                    row = buf.row_of.get(sid)
                    s = state.servers.get(sid)
                    if row is None or s is None:
                        return None
                    buf.write(row, s)
                self._touch(i)
                self.stats.syncs += 1
                return buf
            if node.added:
                return None
            changed.append(node.server_id)
            node = node.prev
        return None


def without_workload(table: CandidateTable, state: ClusterState, w: WorkloadState) -> CandidateTable:
    """The table as if `w` did not hold its allocation (for re-placing a placed/running workload):
    its cores and memory are free again and its interference leaves its servers' aggregates.
    Copies the affected columns; the input table is unchanged."""
    if w.allocation is None:
        return table
    free_cores = np.array(table.free_cores)
    free_mem = np.array(table.free_memory_gb)
    residents = np.array(table.residents)
    caused = np.array(table.caused_sum)
    tolerated = np.array(table.tolerated_min)
    be_cores = np.array(table.best_effort_cores)
    be_mem = np.array(table.best_effort_memory_gb)
    for a in w.allocation.assignments:
        s = state.servers.get(a.server_id)
        if s is None or w.workload_id not in s.residents:
            continue
        i = table.row(a.server_id)
        free_cores[i] += a.cores
        free_mem[i] = round(free_mem[i] + a.memory_gb, 9)
        residents[i] -= 1
        agg = server_aggregates(a.server_id, s.residents, state.workloads, exclude=w.workload_id)
        caused[i] = agg["caused_sum"]
        tolerated[i] = agg["tolerated_min"]
        be_cores[i] = agg["best_effort_cores"]
        be_mem[i] = agg["best_effort_memory_gb"]
    return replace(table, free_cores=_frozen(free_cores), free_memory_gb=_frozen(free_mem),
                   residents=_frozen(residents), caused_sum=_frozen(caused),
                   tolerated_min=_frozen(tolerated), best_effort_cores=_frozen(be_cores), headroom=None,
                   best_effort_memory_gb=_frozen(be_mem))
