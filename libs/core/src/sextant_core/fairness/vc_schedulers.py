"""VC-level schedulers: how the servers a VC holds are split between its active jobs.

The system scheduler (`policies`) decides servers per VC; a VC-level scheduler decides servers
per job inside each VC (the spec's two-level model, §2.1; its intra-VC policy is unspecified,
§6 gap 4 — FIFO is our default). Columnar: the active jobs of all VCs come as arrays, grouped by
VC (`vc` non-decreasing) and, inside a VC, in the scheduler's order (submission order here).

Contract of `shares(vc, parallelism, held)`: integral per-job servers `x` with
`0 ≤ x ≤ parallelism` and, per VC, `Σ x = min(held[vc], Σ parallelism)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from .waterfill import IntArray, waterfill


class VCScheduler(Protocol):
    NAME: ClassVar[str]
    # True when only a prefix of each VC's order can get servers (at most `held` jobs, each job
    # using ≥ 1): a caller may then pass just the first `held[v]` jobs of each VC
    PREFIX: ClassVar[bool]

    def shares(self, vc: IntArray, parallelism: IntArray, held: IntArray) -> IntArray: ...


def _group_starts(vc: IntArray) -> IntArray:
    """Index of the first job of each job's VC (`vc` grouped)."""
    n = vc.shape[0]
    first = np.ones(n, dtype=bool)
    first[1:] = vc[1:] != vc[:-1]
    return np.maximum.accumulate(np.where(first, np.arange(n), 0))


@dataclass(frozen=True)
class Fifo:
    """First come, first served: each job in order takes as many servers as it can use."""

    NAME: ClassVar[str] = "fifo"
    PREFIX: ClassVar[bool] = True

    def shares(self, vc: IntArray, parallelism: IntArray, held: IntArray) -> IntArray:
        if vc.shape[0] == 0:
            return np.zeros(0, dtype=np.int64)
        cum = np.cumsum(parallelism)
        before = cum - parallelism  # servers taken by earlier jobs, all VCs together
        start = _group_starts(vc)
        before_in_vc = before - before[start]
        return np.clip(held[vc] - before_in_vc, 0, parallelism).astype(np.int64)


@dataclass(frozen=True)
class EqualShare:
    """Max-min fair between the jobs of a VC (processor sharing capped at each job's parallelism)."""

    NAME: ClassVar[str] = "equal"
    PREFIX: ClassVar[bool] = False

    def shares(self, vc: IntArray, parallelism: IntArray, held: IntArray) -> IntArray:
        out = np.zeros(vc.shape[0], dtype=np.int64)
        bounds = np.flatnonzero(np.r_[True, vc[1:] != vc[:-1], True])
        for lo, hi in zip(bounds[:-1], bounds[1:], strict=True):
            p = parallelism[lo:hi]
            out[lo:hi] = waterfill(int(held[vc[lo]]), p, np.ones(hi - lo))
        return out


VC_SCHEDULERS: dict[str, type] = {s.NAME: s for s in (Fifo, EqualShare)}
