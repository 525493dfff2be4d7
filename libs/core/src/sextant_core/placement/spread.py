"""Scale-out: spread a request that fits no single server over several, in score order.

Arithmetic (pure): with m = memory_gb / cores (GiB per core, kept proportional), walk the ranked
rows; each takes c = min(free cores, cores still to place, ⌊(free memory + ε) / m⌋) cores and
c · m GiB (the last part takes exactly the memory still to place, so the parts sum to the
request). A row that can take no core is skipped. The walk stops when everything is placed, after
`max_servers` parts, or when the work budget is spent; an incomplete spread places nothing.
Memory is rounded to 1e-9 GiB as `evolve` does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from .framework import Budget
from .plugins.fit import MEMORY_EPS_GB
from .table import FloatArray, IntArray


@dataclass(frozen=True, slots=True)
class Spread:
    parts: tuple[tuple[int, int, float], ...]  # (row, cores, memory GiB)
    complete: bool
    examined: int


def spread(rows: Sequence[int], free_cores: IntArray, free_memory_gb: FloatArray, cores: int,
           memory_gb: float, max_servers: int, budget: Budget | None = None) -> Spread:
    per_core = memory_gb / cores
    left_c, left_m = cores, memory_gb
    parts: list[tuple[int, int, float]] = []
    examined = 0
    for row in rows:
        if left_c == 0 or len(parts) >= max_servers or (budget is not None and budget.exhausted):
            break
        examined += 1
        if budget is not None:
            budget.charge(1)
        fc, fm = int(free_cores[row]), float(free_memory_gb[row])
        c = min(fc, left_c, math.floor((fm + MEMORY_EPS_GB) / per_core))
        if c == left_c and left_m > fm + MEMORY_EPS_GB:  # rounding at the edge: leave a core
            c -= 1
        if c < 1:
            continue
        m = round(left_m, 9) if c == left_c else round(c * per_core, 9)
        parts.append((int(row), c, m))
        left_c -= c
        left_m -= m
    return Spread(parts=tuple(parts), complete=left_c == 0, examined=examined)
