"""Corral's resource selector (jalaparti.md §4.2): a deadline job gets a virtual cluster ⟨N, B⟩.

The datacenter is a three-level tree (`Tree`): machines with VM slots and a link to their rack,
racks with an uplink to their pod, pods with an uplink to the core; arrays indexed rack-major, so
per-rack and per-pod sums are reshapes (64 000 VMs cost a few vectorised operations per tuple).

Oktopus allocation (`place`). A subtree holding m of a request's N VMs must reserve
min(m, N − m)·B on its uplink. Gap choice (§9.3): a subtree's capacity for the request is N when
its free slots hold all N (nothing crosses its uplink), else min(free, ⌊residual / B⌋) summed up
from its children — the contiguous range from 0, so every partial fill is feasible. The lowest
level with a subtree able to host N is used, best fit there (fewest free slots, then lowest index),
and VMs are packed greedily into its children, the child with the most capacity first (ties by
index). `place` only computes; `commit` applies and `release` rolls back (a tentative allocation
is one that is never committed).

Imbalance (§4.2.1, §9.1): Σ (1 − u)² over the resources the allocation changes — machines and
racks and pods whose slots it takes (u = occupied fraction) and the links whose reservation it
raises (u = reserved fraction). Gap choice: with one pod the pod level is the whole cluster and is
not a term (the worked example has no pod term).

Strategies (§4.4.1): Baseline (the designated tuple), Corral-R (random candidates until one fits,
seeded), Corral-I (least imbalance among tuples meeting the deadline), Corral-T (also faster
tuples; least imbalance × time), Strawman (fastest tuple). A request no tuple fits is rejected.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np

from .mrcute import JobProfile, _stage_terms, latency_a, shuffle_bandwidth


@dataclass
class Tree:
    """Mutable occupancy of a tree datacenter (the selector's working state; `commit`/`release`)."""

    pods: int
    racks_per_pod: int
    machines_per_rack: int
    slots_per_machine: int
    nic: float  # machine-to-rack link capacity
    oversubscription: float  # rack uplink = machines·nic / O; pod uplink = racks·rack uplink / O

    def __post_init__(self) -> None:
        n_m = self.pods * self.racks_per_pod * self.machines_per_rack
        self.free = np.full(n_m, self.slots_per_machine, dtype=np.int64)
        self.m_cap = self.nic
        self.r_cap = self.machines_per_rack * self.nic / self.oversubscription
        self.p_cap = self.racks_per_pod * self.r_cap / self.oversubscription
        self.m_res = np.full(n_m, self.m_cap)
        self.r_res = np.full(self.pods * self.racks_per_pod, self.r_cap)
        self.p_res = np.full(self.pods, self.p_cap)

    @property
    def n_racks(self) -> int:
        return self.pods * self.racks_per_pod

    @property
    def vms(self) -> int:
        return int(self.free.size * self.slots_per_machine)

    def occupancy(self) -> float:
        return 1.0 - float(self.free.sum()) / self.vms


@dataclass(frozen=True)
class Allocation:
    """Where a tuple's VMs go: per-machine VM counts and the bandwidth reserved on each level."""

    n: int
    b: float
    machines: np.ndarray  # indices
    counts: np.ndarray  # VMs per listed machine
    racks: np.ndarray
    rack_counts: np.ndarray
    pods: np.ndarray
    pod_counts: np.ndarray

    def reservation(self, counts: np.ndarray) -> np.ndarray:
        return np.minimum(counts, self.n - counts) * self.b


def _capacity(free: np.ndarray, residual: np.ndarray, n: int, b: float) -> np.ndarray:
    if b <= 0:
        return np.minimum(free, n)
    k = np.floor(residual / b + 1e-9).astype(np.int64)
    return np.where(free >= n, n, np.minimum(free, k))


def _fill(caps: np.ndarray, want: int) -> np.ndarray:
    """Greedy: the largest capacities first (stable ties by index), up to `want` VMs in total."""
    order = np.argsort(-caps, kind="stable")
    take = np.zeros_like(caps)
    c = caps[order]
    before = np.concatenate(([0], np.cumsum(c)[:-1]))
    take[order] = np.clip(want - before, 0, c)
    return take


def place(t: Tree, n: int, b: float) -> Allocation | None:
    """The Oktopus placement of ⟨n, b⟩ on `t`, or None when it does not fit (nothing is changed)."""
    if n < 1:
        return None
    mpr, rpp = t.machines_per_rack, t.racks_per_pod
    m_cap = _capacity(t.free, t.m_res, n, b)
    rack_free = t.free.reshape(t.n_racks, mpr).sum(axis=1)
    r_sum = np.minimum(m_cap.reshape(t.n_racks, mpr).sum(axis=1), n)
    r_cap = _capacity(r_sum, t.r_res, n, b)
    pod_free = rack_free.reshape(t.pods, rpp).sum(axis=1)
    p_sum = np.minimum(r_cap.reshape(t.pods, rpp).sum(axis=1), n)
    p_cap = _capacity(p_sum, t.p_res, n, b)

    def best(ok: np.ndarray, free: np.ndarray) -> int:
        idx = np.flatnonzero(ok)
        return int(idx[np.argmin(free[idx])])

    per_pod = np.zeros(t.pods, dtype=np.int64)
    if (m_cap >= n).any():
        m = best(m_cap >= n, t.free)
        mach_take = {m: n}
    else:
        if (r_cap >= n).any():
            rack_take = np.zeros(t.n_racks, dtype=np.int64)
            rack_take[best(r_cap >= n, rack_free)] = n
        else:
            if (p_cap >= n).any():
                per_pod[best(p_cap >= n, pod_free)] = n
            elif p_cap.sum() >= n:
                per_pod = _fill(p_cap, n)
            else:
                return None
            rack_take = np.zeros(t.n_racks, dtype=np.int64)
            for p in np.flatnonzero(per_pod):
                sl = slice(p * rpp, (p + 1) * rpp)
                rack_take[sl] = _fill(r_cap[sl], int(per_pod[p]))
        mach_take = {}
        for r in np.flatnonzero(rack_take):
            sl = slice(r * mpr, (r + 1) * mpr)
            take = _fill(m_cap[sl], int(rack_take[r]))
            for i in np.flatnonzero(take):
                mach_take[int(r) * mpr + int(i)] = int(take[i])
    machines = np.fromiter(mach_take, dtype=np.int64)
    counts = np.fromiter(mach_take.values(), dtype=np.int64)
    racks, inv = np.unique(machines // mpr, return_inverse=True)
    rack_counts = np.bincount(inv, weights=counts).astype(np.int64)
    pods, pinv = np.unique(racks // rpp, return_inverse=True)
    pod_counts = np.bincount(pinv, weights=rack_counts).astype(np.int64)
    return Allocation(n, float(b), machines, counts, racks, rack_counts, pods, pod_counts)


def imbalance(t: Tree, a: Allocation) -> float:
    """Σ (1 − u)² over the resources `a` changes, u measured after the allocation."""
    mpr, rpp, s = t.machines_per_rack, t.racks_per_pod, t.slots_per_machine
    total = float((((t.free[a.machines] - a.counts) / s) ** 2).sum())
    rack_free = t.free.reshape(t.n_racks, mpr).sum(axis=1)[a.racks] - a.rack_counts
    total += float(((rack_free / (mpr * s)) ** 2).sum())
    terms = [(t.m_res[a.machines], a.reservation(a.counts), t.m_cap), (t.r_res[a.racks], a.reservation(a.rack_counts), t.r_cap)]
    if t.pods > 1:
        pod_free = t.free.reshape(t.pods, rpp * mpr).sum(axis=1)[a.pods] - a.pod_counts
        total += float(((pod_free / (rpp * mpr * s)) ** 2).sum())
        terms.append((t.p_res[a.pods], a.reservation(a.pod_counts), t.p_cap))
    for res, resv, cap in terms:
        changed = resv > 0
        total += float((((res[changed] - resv[changed]) / cap) ** 2).sum())
    return total


def commit(t: Tree, a: Allocation, sign: int = 1) -> None:
    """Apply `a` to `t` (sign −1 releases it: the roll back of a tentative or finished allocation)."""
    np.subtract.at(t.free, a.machines, sign * a.counts)
    np.subtract.at(t.m_res, a.machines, sign * a.reservation(a.counts))
    np.subtract.at(t.r_res, a.racks, sign * a.reservation(a.rack_counts))
    np.subtract.at(t.p_res, a.pods, sign * a.reservation(a.pod_counts))


def release(t: Tree, a: Allocation) -> None:
    commit(t, a, -1)


def min_bandwidth(p: JobProfile, size: float, n: np.ndarray, deadline: float) -> np.ndarray:
    """Per N, the least per-VM bandwidth B with Model A time ≤ deadline (NaN where none does)."""
    t_map, w_red, red_in, red_out = _stage_terms(p, size, np.asarray(n, dtype=float))
    budget = deadline - t_map - w_red * red_out / p.b_reduce
    with np.errstate(divide="ignore", invalid="ignore"):
        inv_net = budget / (w_red * red_in) - 1.0 / p.b_disk  # 1 / min(B_D, B) allowed
        need = 1.0 / inv_net
    return np.where((budget > 0) & (inv_net > 0) & (need <= p.b_disk), need, np.nan)


@dataclass(frozen=True)
class Candidate:
    n: int
    b: float
    time: float


def wave_breakpoints(p: JobProfile, n_max: int) -> np.ndarray:
    """The least N for each (map waves, reduce waves) pair, up to `n_max`, ascending.

    Model A depends on N only through the wave counts, so every larger N with the same waves has
    the same time and the same least B: it only takes more VM slots. These N values are the
    union of ⌈M / (k·M_c)⌉ and ⌈R / (k·R_c)⌉ over k ≥ 1 (O(√M + √R) values).
    """
    out: set[int] = set()
    for tasks, slots in ((p.map_tasks, p.map_slots), (p.reduce_tasks, p.reduce_slots)):
        per_wave = -(-tasks // slots)  # N at one wave
        for waves in range(1, per_wave + 1):
            n = -(-per_wave // waves)
            if waves > 1 and n == -(-per_wave // (waves - 1)):
                continue
            out.add(n)
    return np.array(sorted(v for v in out if v <= n_max), dtype=np.int64)


def candidates(
    p: JobProfile,
    size: float,
    deadline: float,
    *,
    n_max: int,
    b_step: float,
    b_max: float,
    n_points: int | None = None,
    faster: int = 0,
) -> list[Candidate]:
    """The MRCute-feasible tuples for a deadline (§9.2 gap choice).

    N: the wave breakpoints up to `n_max` (`wave_breakpoints`: no N that only adds VMs), or with
    `n_points` a geometric grid of that many values in [1, n_max] (the grid used before; it held
    N values with the waves of a smaller N, which Corral-I's imbalance liked: they fill machines).
    For each N, the least B meeting the deadline rounded up to a multiple of `b_step` (tuples
    needing more than `b_max` are dropped). `faster` > 0 adds, per N, that many higher B steps
    (doubling) for Corral-T.
    """
    if n_points is None:
        ns = wave_breakpoints(p, n_max)
    else:
        ns = np.unique(np.geomspace(1, n_max, n_points).round().astype(np.int64))
    need = min_bandwidth(p, size, ns, deadline)
    out = []
    for n, bmin in zip(ns, need, strict=True):
        if not np.isfinite(bmin):
            continue
        b = max(b_step, float(np.ceil(bmin / b_step - 1e-9) * b_step))
        for k in range(faster + 1):
            bk = min(b * 2**k, b_max) if k else b
            if bk > b_max or (k and bk == b):
                break
            out.append(Candidate(int(n), bk, float(latency_a(p, size, int(n), bk))))
    return out


class Strategy(enum.StrEnum):
    BASELINE = "baseline"
    CORRAL_R = "corral-r"
    CORRAL_I = "corral-i"
    CORRAL_T = "corral-t"
    STRAWMAN = "strawman"


@dataclass(frozen=True)
class Selection:
    candidate: Candidate
    allocation: Allocation
    imbalance: float


def select(
    t: Tree,
    cands: list[Candidate],
    strategy: Strategy,
    *,
    deadline: float,
    rng: np.random.Generator | None = None,
) -> Selection | None:
    """Choose and tentatively place a tuple (not committed); None = reject the request.

    Baseline is given its one tuple as `cands`; Corral-I the deadline grid (`candidates(faster=0)`),
    Corral-T the grid with faster tuples, scored imbalance × time. Tuples slower than the deadline
    are never chosen; ties go to the earlier candidate.
    """
    if strategy is Strategy.CORRAL_R:
        gen = rng if rng is not None else np.random.default_rng(0)
        for i in gen.permutation(len(cands)):
            a = place(t, cands[i].n, cands[i].b)
            if a is not None:
                return Selection(cands[i], a, imbalance(t, a))
        return None
    if strategy is Strategy.STRAWMAN:
        ordered = sorted(cands, key=lambda c: (c.time, c.n, c.b))
        for c in ordered:
            a = place(t, c.n, c.b)
            if a is not None:
                return Selection(c, a, imbalance(t, a))
        return None
    best: tuple[float, int, Selection] | None = None
    for i, c in enumerate(cands):
        if c.time > deadline * (1 + 1e-9):
            continue
        a = place(t, c.n, c.b)
        if a is None:
            continue
        imb = imbalance(t, a)
        score = imb * c.time if strategy is Strategy.CORRAL_T else imb
        if best is None or (score, i) < best[:2]:
            best = (score, i, Selection(c, a, imb))
    return None if best is None else best[2]


__all__ = [
    "Allocation",
    "Candidate",
    "Selection",
    "Strategy",
    "Tree",
    "candidates",
    "commit",
    "imbalance",
    "min_bandwidth",
    "place",
    "release",
    "select",
    "shuffle_bandwidth",
    "wave_breakpoints",
]
