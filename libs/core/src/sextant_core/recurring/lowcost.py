"""LowCost: the online, incremental, cost-based packing of one reservation (Morpheus §6; spec §3.5).

The plan's window has W steps; the job has period P (W = M·P; a non-periodic instance is the
case P = W, M = 1), an earliest step a and a deadline d (half-open [a, d), in period coordinates,
d − a ≤ P) and stages k = 0..K−1, one per step of its skyline: stage k needs s_k containers in
total, at most s_k in one step (the §5 max-parallelism rule) and at least one gang g.

Cost of a step: c(t) = max over resources of load/capacity (cores, memory) with the tier's load
(`recurring/ledger.py`). A periodic job sees the folded cost c(τ) = max_m c(τ + m·P) over its M
instances and the folded free room min_m; capacity that changes over the day makes the fold an
upper bound of each resource's increment (max_m of size/capacity), exact for a constant capacity.

For one candidate end step e, stages are placed one by one in reverse order (K−1 down to 0):

- stage k's window I = [τl, τr]: τr is the step right before stage k+1's leftmost step (e for
  the last stage; stages never share a step), and its length is ⌈(τr − a + 1)·s_k / Σ_{k'≤k} s_k'⌉
  (the stage's share of the demand still to place), cut so that each earlier stage keeps a step;
- its demand is placed unit by unit, each unit to the cheapest eligible step of
  [τ^cur − 1, τr] ∩ I (τ^cur = the stage's leftmost non-empty step; the stage grows leftwards one
  step at a time, so it has no holes), with the cost recomputed after every unit; ties go to the
  later step; a step is eligible while it has free room and the stage holds fewer than s_k there.

A stage holds at most `units_per_stage` units (below), so it spans at most that many steps and
each unit looks at the stage's steps plus one. `place_ends` runs this greedy for every candidate
end point at once (NumPy over end points); `place_at` / `stage` are the same greedy for one end
point, unit by unit in plain Python (the reference the tests compare it with).

LowCost repeats this for candidate end points and keeps the allocation with the lowest peak cost
(max over its steps of c after placing it), then the lowest total cost, then the latest end.

Choices where the spec leaves gaps (§8.7):

- unit size q = g·⌈s_k / (g·units_per_stage)⌉ containers (at most `units_per_stage` = 8 units per
  stage, so a stage stretches over at most 8 steps; the last unit is trimmed to s_k): the greedy's
  granularity, like Hadoop's smoothness factor; q = g when s_k ≤ 8·g;
- candidate end points: at most `max_end_points` (16) evenly spaced over [a + K − 1, d − 1],
  always including d − 1 (a work budget, not a timeout);
- no feasible end point: `place` returns None and the caller refuses the reservation (it is never
  half-placed);
- an optional alignment penalty `alignment_weight`·|mid(allocation) − (a + d)/2| / (d − a) is added
  to the peak when comparing end points (spec §3.7, for jobs whose input or consumer times vary);
  0 by default.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

FREE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class LowCostParams:
    max_end_points: int = 16
    units_per_stage: int = 8
    alignment_weight: float = 0.0


@dataclass(frozen=True)
class Job:
    """What LowCost packs: `stages` (containers per skyline step), [earliest, deadline) in period
    coordinates (steps), `period` steps (the window length for a non-periodic instance), the
    container's size and the gang (minimum parallelism, containers)."""

    stages: tuple[int, ...]
    earliest: int
    deadline: int
    period: int
    cores: float = 1.0
    memory_gb: float = 8.0
    gang: int = 1


@dataclass(frozen=True)
class Allocation:
    """`containers[j]` at period step `offset + j` (contiguous; one instance, repeated every period)."""

    offset: int
    containers: tuple[int, ...]
    peak_cost: float
    total_cost: float


@dataclass(frozen=True)
class Folded:
    """A job's view of the plan over its window [a, d): normalised load and per-container cost
    increment per resource (2, D), and free room in containers (D,)."""

    load: np.ndarray
    step_cost: np.ndarray
    free: np.ndarray


def fold(used: np.ndarray, capacity: np.ndarray, job: Job) -> Folded:
    """Fold the (2, W) tier load and capacity over the job's instances and cut its window."""
    w = capacity.shape[1]
    if job.period <= 0 or w % job.period:
        raise ValueError(f"period {job.period} does not divide the window {w}")
    size = np.array([job.cores, job.memory_gb])[:, None, None]
    m = w // job.period
    cap = capacity.reshape(2, m, job.period)
    use = used.reshape(2, m, job.period)
    with np.errstate(divide="ignore", invalid="ignore"):
        norm = np.where(cap > 0, use / np.where(cap > 0, cap, 1.0), np.where(use > 0, np.inf, 0.0))
        inc = np.where(cap > 0, size / np.where(cap > 0, cap, 1.0), np.where(size > 0, np.inf, 0.0))
        room = np.where(size > 0, np.floor((cap - use) / np.where(size > 0, size, 1.0) + FREE_TOLERANCE), np.inf)
    idx = np.arange(job.earliest, job.deadline) % job.period
    free = np.maximum(room.min(axis=(0, 1)), 0.0)[idx]
    return Folded(norm.max(axis=1)[:, idx], inc.max(axis=1)[:, idx], np.minimum(free, np.iinfo(np.int32).max))


def place(used: np.ndarray, capacity: np.ndarray, job: Job, params: LowCostParams = LowCostParams()) -> Allocation | None:
    """The LowCost allocation of one instance of `job` (module doc), or None when nothing fits."""
    k = len(job.stages)
    span = job.deadline - job.earliest
    if k == 0 or span < k or span > job.period or job.earliest < 0:
        return None
    f = fold(used, capacity, job)
    ends = np.unique(np.round(np.linspace(k - 1, span - 1, max(1, params.max_end_points))).astype(np.int64))
    ends = np.append(ends[ends < span - 1], span - 1)[::-1]  # latest first
    alloc, ok = place_ends(f, job, ends, params.units_per_stage)
    if not ok.any():
        return None
    cost = (f.load[:, None, :] + alloc[None] * f.step_cost[:, None, :]).max(axis=0)
    held = alloc > 0
    peak = np.where(held, cost, -np.inf).max(axis=1)
    total = np.where(held, cost, 0.0).sum(axis=1)
    score = peak
    if params.alignment_weight:
        first = np.argmax(held, axis=1)
        score = peak + params.alignment_weight * np.abs((first + ends) / 2 - (span - 1) / 2) / span
    score = np.where(ok & held.any(axis=1), score, np.inf)
    best = int(np.lexsort((-ends, total, score))[0])  # lowest peak (+ penalty), then total, then latest end
    if not np.isfinite(score[best]):
        return None
    first, last = int(np.flatnonzero(held[best])[0]), int(ends[best])
    return Allocation(job.earliest + first, tuple(int(v) for v in alloc[best, first:last + 1]), float(peak[best]),
                      float(total[best]))


def place_ends(f: Folded, job: Job, ends: np.ndarray, units_per_stage: int) -> tuple[np.ndarray, np.ndarray]:
    """The greedy of the module doc for every end point at once: containers per window step
    (E, D) and whether each end point fit (E,). Row e equals `place_at(f, job, ends[e], ...)`."""
    e_n, d = len(ends), f.free.shape[0]
    rows = np.arange(e_n)
    alloc = np.zeros((e_n, d), dtype=np.int64)
    ok = np.ones(e_n, dtype=bool)
    tr = ends.astype(np.int64).copy()
    prefix = np.cumsum(np.asarray(job.stages, dtype=np.int64))
    g = max(1, job.gang)
    for k in range(len(job.stages) - 1, -1, -1):
        s = int(job.stages[k])
        ok &= tr >= k
        if s == 0:
            tr -= 1
            continue
        trc = np.maximum(tr, k)
        length = -(-(trc + 1) * s // int(prefix[k]))
        tl = trc - np.maximum(1, np.minimum(length, trc - k + 1)) + 1
        q = g * -(-s // (g * units_per_stage))
        n = -(-s // q)
        ii = np.arange(n)
        t = trc[:, None] - ii[None, :]  # the steps a stage can use: trc, trc − 1, ... (at most n)
        tt = np.maximum(t, 0)
        base0, base1 = f.load[0][tt], f.load[1][tt]
        inc0, inc1 = f.step_cost[0][tt] * q, f.step_cost[1][tt] * q
        cap = np.where(t >= tl[:, None], np.minimum(f.free[tt] // q, n), 0).astype(np.int64)
        x = np.zeros((e_n, n), dtype=np.int64)  # units at trc, trc − 1, ...
        opened = np.zeros(e_n, dtype=np.int64)
        last = np.zeros(e_n, dtype=np.int64)
        for u in range(n):
            w = u + 1  # after u units at most u steps are open, so candidates are i ≤ u
            xi = x[:, :w]
            cost = np.maximum(base0[:, :w] + xi * inc0[:, :w], base1[:, :w] + xi * inc1[:, :w])
            cost[(ii[None, :w] > opened[:, None]) | (xi >= cap[:, :w])] = np.inf
            pick = np.argmin(cost, axis=1)  # first minimum: the latest step
            ok &= cost[rows, pick] < np.inf
            x[rows, pick] += 1
            np.maximum(opened, pick + 1, out=opened)
            last = pick
        c = x * q
        c[rows, last] -= n * q - s
        for i in range(n):
            put = ok & (i < opened)
            alloc[rows[put], trc[put] - i] = c[put, i]
        tr = trc - opened
    return alloc, ok


def place_at(f: Folded, job: Job, end: int, prefix: np.ndarray, units_per_stage: int,
             lists: tuple[list[float], ...] | None = None) -> np.ndarray | None:
    """Containers per window step with the last stage ending at window step `end`, or None."""
    cols = lists if lists is not None else as_lists(f)
    alloc = np.zeros(f.free.shape[0], dtype=np.int64)
    tr = end
    for k in range(len(job.stages) - 1, -1, -1):
        s = int(job.stages[k])
        if tr < k:
            return None
        if s == 0:
            tr -= 1
            continue
        length = -(-(tr + 1) * s // int(prefix[k]))
        tl = tr - max(1, min(length, tr - k + 1)) + 1
        got = stage(cols, tl, tr, s, job.gang, units_per_stage)
        if got is None:
            return None
        first, containers = got
        alloc[first:first + len(containers)] = containers
        tr = first - 1
    return alloc


def as_lists(f: Folded) -> tuple[list[float], ...]:
    """The folded arrays as Python lists (the per-unit loop reads single elements)."""
    return f.load[0].tolist(), f.load[1].tolist(), f.step_cost[0].tolist(), f.step_cost[1].tolist(), f.free.tolist()


def stage(cols: tuple[list[float], ...], tl: int, tr: int, s: int, gang: int,
          units_per_stage: int) -> tuple[int, list[int]] | None:
    """One stage of s containers in [tl, tr] (the greedy of the module doc, unit by unit):
    (first step, containers per step up to tr), or None when it does not fit.

    The stage holds at most `units_per_stage` units, so it spans at most that many steps and each
    unit scans at most one step more than the stage already holds."""
    load0, load1, cost0, cost1, free = cols
    g = max(1, gang)
    q = g * -(-s // (g * units_per_stage))
    n = -(-s // q)
    x: list[int] = []  # units at tr, tr − 1, ... (the stage's steps, right to left)
    last = -1
    for _ in range(n):
        best, pick = np.inf, -1
        for i in range(min(len(x) + 1, tr - tl + 1)):
            t = tr - i
            xi = x[i] if i < len(x) else 0
            if xi >= n or (xi + 1) * q > free[t]:
                continue
            c = max(load0[t] + xi * (cost0[t] * q), load1[t] + xi * (cost1[t] * q))
            if c < best:
                best, pick = c, i
        if pick < 0 or best == np.inf:
            return None
        if pick == len(x):
            x.append(0)
        x[pick] += 1
        last = pick
    out = [u * q for u in reversed(x)]
    out[len(x) - 1 - last] -= n * q - s
    return tr - len(x) + 1, out
