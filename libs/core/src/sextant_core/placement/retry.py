"""Incremental retries of deferred placements (`Planner.could_use`, process.py).

A deferred workload is retried when capacity comes back on some servers (`freed`). For a planner
whose filters are row-local (a server passes or fails on its own columns: `ROW_LOCAL`), a retry
can succeed only if a freed server passes them — every other server only lost capacity or gained
residents since the last attempt — so a retry where no freed server passes is answered without
running the search. For a profile with other filters only capacity is checked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from ..state.model import ClusterState
from .framework import Profile
from .plugins.fit import MEMORY_EPS_GB
from .request import PlacementRequest
from .table import CandidateTable

ROW_LOCAL = frozenset({"schedulable", "fit", "interference-d1", "interference-d2"})
"""Filters whose verdict on a server reads only that server's columns and the request."""


def rows_pass(profile: Profile, table: CandidateTable, rows: Sequence[int], request: PlacementRequest) -> bool:
    """Some of `rows` passes every filter of `profile` (all of them row-local) for `request`."""
    if not rows:
        return False
    sub = table.take(rows)
    alive = np.ones(len(rows), dtype=np.bool_)
    for step in profile.filters:
        alive &= step.plugin.filter(sub, request, step.args).mask
        if not alive.any():
            return False
    return True


def fits_any(state: ClusterState, freed: Iterable[str], cores: int, memory_gb: float, *,
             exclude: str | None = None) -> bool:
    """Some schedulable server of `freed` has `cores` and `memory_gb` free (`fit`'s arithmetic;
    a server whose capacity is below `cores` counts as fitting with all its cores, as a planner
    that caps a request at the server size would place it); `exclude` = a workload already there."""
    for sid in freed:
        s = state.servers.get(sid)
        if s is None or not s.schedulable or (exclude is not None and exclude in s.residents):
            continue
        if s.free_cores >= min(cores, s.capacity.cores) and s.free_memory_gb + MEMORY_EPS_GB >= memory_gb:
            return True
    return False


def spread_could_fit(table: CandidateTable, cores: int, memory_gb: float) -> bool:
    """A spread of `cores` one-core units (memory_gb / cores each) could fit the whole table's
    free capacity (an upper bound: every schedulable server counted, however its filters rule)."""
    unit = memory_gb / cores
    ok = table.schedulable & (table.free_cores >= 1) & (table.free_memory_gb + MEMORY_EPS_GB >= unit)
    if not ok.any():
        return False
    by_mem = np.floor((table.free_memory_gb[ok] + MEMORY_EPS_GB) / unit) if unit > 0 else table.free_cores[ok]
    return int(np.minimum(table.free_cores[ok], by_mem).sum()) >= cores


def request_could_fit(state: ClusterState, table_of: Callable[[], CandidateTable], freed: Iterable[str],
                      cores: int, memory_gb: float, *, scale_out: bool) -> bool:
    """Whether a capacity-filtered search for (`cores`, `memory_gb`) could now succeed: the whole
    request on a freed server, or — when the planner spreads — one unit on a freed server and
    enough capacity in the cluster for all of them."""
    freed = tuple(freed)
    if fits_any(state, freed, cores, memory_gb):
        return True
    if not scale_out or cores <= 1:
        return False
    return fits_any(state, freed, 1, memory_gb / cores) and spread_could_fit(table_of(), cores, memory_gb)
