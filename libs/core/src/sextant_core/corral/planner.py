"""Corral's offline planner for recurring jobs (jalaparti.md §4.3): racks per job and priorities.

Input: `latency` (jobs × R), `latency[j, r-1]` = L_j(r), the expected time of job j on r racks
(Model B, plus the data-balance penalty of `with_data_penalty`); arrival times for the online
scenario (zeros for a batch). Output: a `Plan` — racks, start time T_j and priority of each job.

- `prioritize(latency, widths, arrivals)`: the LPT extension of Fig. 4.2. Batch order: widest job
  first, then longest; online: by arrival, ties in the batch order. Each job takes the r_j racks
  that free earliest (ties by rack index) and starts when the last of them is free (not before its
  arrival). O(J·R).
- `plan(latency, arrivals, online)`: the provisioning loop (start at one rack each, repeatedly give
  the currently longest job with r_j < R one more rack, keep the best objective seen; J·(R−1)
  rounds). Gap choices (§9.6, §9.9): ties of the longest job go to the lowest index; the loop runs
  to the end (no early stop); priorities are ranks of ascending T_j, ties by job index.
- `free` (both): the racks' initial free times (default all 0), for re-planning while jobs run
  (the runtime's periodic re-planning, `sextant_sim.corral.replan`).
- `lp_batch_bound(latency)`: LP-Batch (eqs. 4.2–4.5) with SciPy's HiGHS; a lower bound on the
  makespan of every schedule that holds each job's racks for L_j(r_j) (benchmark only).
- `lp_online_bound(latency, arrivals)`: LP-Online (eqs. 4.7–4.10) with SciPy's HiGHS, the thesis's
  d_jr made operational by completion intervals; a lower bound on the mean completion − arrival of
  every such schedule whose jobs start at or after their arrivals (benchmark only; see its
  docstring).
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog


@dataclass(frozen=True)
class Plan:
    widths: np.ndarray  # r_j
    starts: np.ndarray  # T_j
    finishes: np.ndarray  # T_j + L_j(r_j)
    racks: tuple[tuple[int, ...], ...]  # R_j
    priorities: np.ndarray  # 0 = highest (earliest start)
    objective: float  # makespan (batch) or mean completion − arrival (online)


def with_data_penalty(latency: np.ndarray, input_bytes: np.ndarray, rack_core_bandwidth: float) -> np.ndarray:
    """L'_j(r) = L_j(r) + α·D_j/r with α = 1 / rack-to-core bandwidth (§4.3.4)."""
    r = np.arange(1, latency.shape[1] + 1, dtype=float)
    return latency + np.asarray(input_bytes, dtype=float)[:, None] / (r[None, :] * rack_core_bandwidth)


def _order(latency: np.ndarray, widths: np.ndarray, arrivals: np.ndarray, online: bool) -> np.ndarray:
    jobs = np.arange(len(widths))
    lw = latency[jobs, widths - 1]
    keys: tuple[np.ndarray, ...] = (jobs, -lw, -widths)  # lexsort: last key is primary
    if online:
        keys = (*keys, arrivals)
    return np.lexsort(keys)


def prioritize(latency: np.ndarray, widths: np.ndarray, arrivals: np.ndarray | None = None, *, online: bool = False,
               free: np.ndarray | None = None) -> Plan:
    """Fig. 4.2 for fixed widths r_j (see the module docstring)."""
    n_jobs, n_racks = latency.shape
    arr = np.zeros(n_jobs) if arrivals is None else np.asarray(arrivals, dtype=float)
    free = np.zeros(n_racks) if free is None else np.asarray(free, dtype=float).copy()
    starts = np.zeros(n_jobs)
    lw = latency[np.arange(n_jobs), widths - 1]
    racks: list[tuple[int, ...]] = [()] * n_jobs
    for j in _order(latency, widths, arr, online).tolist():
        r = int(widths[j])
        chosen = np.argsort(free, kind="stable")[:r]
        t = max(float(free[chosen].max()), float(arr[j]))
        free[chosen] = t + lw[j]
        starts[j] = t
        racks[j] = tuple(sorted(chosen.tolist()))
    finishes = starts + lw
    objective = float((finishes - arr).mean()) if online else float(finishes.max())
    priorities = np.empty(n_jobs, dtype=np.int64)
    priorities[np.lexsort((np.arange(n_jobs), starts))] = np.arange(n_jobs)
    return Plan(widths.copy(), starts, finishes, tuple(racks), priorities, objective)


def _objective(lw: list[float], order: list[int], widths: list[int], arr: list[float], n_racks: int, online: bool,
               free: list[float] | None = None) -> float:
    """`prioritize`'s objective alone. The objective depends only on the racks' free *times* (which
    rack of equal time a job takes changes nothing), so the racks are kept as a sorted multiset:
    parallel lists of distinct free times and how many racks free at each. A job takes the r
    earliest, starts at the r-th's time (or its arrival) and returns r racks at its end: O(groups)
    per job instead of O(r · R)."""
    times, counts = [0.0], [n_racks]
    if free is not None:
        times = sorted(set(free))
        counts = [free.count(t) for t in times]
    worst, total = 0.0, 0.0
    for j in order:
        r = widths[j]
        need, k = r, 0
        while counts[k] < need:
            need -= counts[k]
            k += 1
        t = max(times[k], arr[j])
        if counts[k] == need:
            del times[:k + 1], counts[:k + 1]
        else:
            counts[k] -= need
            del times[:k], counts[:k]
        end = t + lw[j]
        i = bisect.bisect_left(times, end)
        if i < len(times) and times[i] == end:
            counts[i] += r
        else:
            times.insert(i, end)
            counts.insert(i, r)
        worst = max(worst, end)
        total += end - arr[j]
    return total / len(order) if online else worst


def plan(latency: np.ndarray, arrivals: np.ndarray | None = None, *, online: bool = False,
         keep_if_better: bool = False, free: np.ndarray | None = None) -> Plan:
    """The provisioning × prioritization heuristic (§4.3.4): the best plan of the J·(R−1) explored.

    `keep_if_better` adds the other reading of the loop's "keep it if objective improves": the
    longest job not yet settled tries every wider allocation, keeps the best one if it improves
    the objective, and is settled (at most J·(R−1) more candidates); the better of the two paths
    is returned. The thesis's path only ever widens the longest job, so a job is widened only once
    every longer one is, and jobs that gain from width but are not the longest stay narrow.
    """
    lat = np.asarray(latency, dtype=float)
    n_jobs, n_racks = lat.shape
    arr = np.zeros(n_jobs) if arrivals is None else np.asarray(arrivals, dtype=float)
    arr_l = arr.tolist()
    free_l = None if free is None else np.asarray(free, dtype=float).tolist()
    widths = np.ones(n_jobs, dtype=np.int64)
    jobs = np.arange(n_jobs)

    def score(w: np.ndarray) -> float:
        order = _order(lat, w, arr, online).tolist()
        return _objective(lat[jobs, w - 1].tolist(), order, w.tolist(), arr_l, n_racks, online, free_l)

    best_w, best = widths.copy(), score(widths)
    while (widths < n_racks).any():
        current = np.where(widths < n_racks, lat[jobs, widths - 1], -np.inf)
        widths[int(np.argmax(current))] += 1
        obj = score(widths)
        if obj < best:
            best_w, best = widths.copy(), obj
    if keep_if_better:
        widths = np.ones(n_jobs, dtype=np.int64)
        held = score(widths)
        open_ = np.ones(n_jobs, dtype=bool)
        while open_.any():
            j = int(np.argmax(np.where(open_, lat[jobs, widths - 1], -np.inf)))
            open_[j] = False
            base, pick = widths[j], widths[j]
            for r in range(base + 1, n_racks + 1):
                widths[j] = r
                obj = score(widths)
                if obj < held:
                    held, pick = obj, r
            widths[j] = pick
        if held < best:
            best_w, best = widths.copy(), held
    return prioritize(lat, best_w, arrivals, online=online, free=free)


def lp_batch_bound(latency: np.ndarray) -> float:
    """min T s.t. Σ_r x_jr = 1, T ≥ Σ_r x_jr L_j(r), T·R ≥ Σ x_jr L_j(r)·r, 0 ≤ x ≤ 1 (HiGHS)."""
    lat = np.asarray(latency, dtype=float)
    n_jobs, n_racks = lat.shape
    nx = n_jobs * n_racks
    c = np.zeros(nx + 1)
    c[-1] = 1.0
    rows = np.repeat(np.arange(n_jobs), n_racks)
    a_eq = sparse.csr_matrix((np.ones(nx), (rows, np.arange(nx))), shape=(n_jobs, nx + 1))
    per_job = sparse.csr_matrix((lat.ravel(), (rows, np.arange(nx))), shape=(n_jobs, nx + 1)).tolil()
    per_job[:, nx] = -1.0
    r = np.arange(1, n_racks + 1, dtype=float)
    capacity = np.append((lat * r[None, :]).ravel(), -float(n_racks))
    a_ub = sparse.vstack([per_job.tocsr(), sparse.csr_matrix(capacity)])
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(n_jobs + 1), A_eq=a_eq, b_eq=np.ones(n_jobs),
                  bounds=[(0.0, 1.0)] * nx + [(0.0, None)], method="highs")
    if res.status != 0:
        raise RuntimeError(f"LP-Batch did not solve: {res.message}")
    return float(res.fun)


def _completion_ranges(k0: int, n_intervals: int, fine: int) -> list[tuple[int, int]]:
    """Candidate completion ranges [k_lo, k_hi] (inclusive interval indices) from k0: `fine` single
    intervals, then ranges doubling in length, up to the last interval."""
    out, lo, length = [], k0, 1
    while lo <= n_intervals:
        hi = min(lo + length - 1, n_intervals)
        out.append((lo, hi))
        lo = hi + 1
        if len(out) >= fine:
            length *= 2
    return out


def lp_online_bound(latency: np.ndarray, arrivals: np.ndarray, *, intervals: int = 240, fine: int = 12) -> float:
    """LP-Online: a lower bound on (1/J) Σ_j (C_j − A_j) over every schedule in which job j takes
    r_j of the R racks for L_j(r_j) from a start ≥ A_j, without preemption (HiGHS).

    The thesis's LP (eqs. 4.7–4.10): x_jr ∈ [0, 1], Σ_r x_jr = 1, T_j ≥ Σ_r x_jr (L_j(r) + d_jr), a
    rack-time capacity. It does not say how d_jr ("delay in scheduling job j on r racks, relative to
    its arrival") is obtained (jalaparti.md §9.5), and with d_jr = 0 its capacity row (4.9) follows
    from (4.8) (R·T_j ≥ r·L_j(r)): the bound would ignore queueing. Here the delay comes from
    *completion intervals*, the interval-indexed relaxation of scheduling with release dates:

    - from the first arrival, time is cut into `intervals` equal intervals (τ_{k−1}, τ_k] spanning
      the arrivals, the longest job and all the work spread over the R racks;
    - y_jrq ≥ 0 = job j on r racks completes within the candidate range q of intervals: `fine`
      single intervals from the first it can complete in (τ_k ≥ A_j + L_j(r)), then ranges of
      doubling length to the last interval, then a *tail* (after τ_K); x_jr = Σ_q y_jrq, and
      Σ_{r,q} y_jrq = 1 (4.7);
    - j's completion − arrival is Σ y_jrq · (max(τ_lo(q)−1, A_j + L_j(r)) − A_j): L_j(r) plus the
      delay d_jrq = max(0, τ_lo(q)−1 − A_j − L_j(r)) the start of its range implies (4.8);
    - capacity (4.9) per window of time: the jobs arriving at or after τ_a and completing by τ_b run
      inside [τ_a, τ_b], so Σ r·L_j(r)·y_jrq over them (a range counts if it ends by τ_b) ≤
      R·(τ_b − τ_a), for every a < b (cumulative sums P_ab, one equality row each, keep it sparse).

    Any schedule of that kind is a feasible point (y = 1 on its width and the range holding its
    completion) with an objective at or below its mean, so the optimum is a lower bound; the
    coarse ranges and the tail (no capacity term) only weaken it. It is at least mean_j min_r
    L_j(r) (tested, with the bound at or below brute-force optima on small instances).
    """
    lat = np.asarray(latency, dtype=float)
    arr = np.asarray(arrivals, dtype=float)
    n_jobs, n_racks = lat.shape
    k_n = intervals
    area = lat * np.arange(1, n_racks + 1, dtype=float)[None, :]
    t0 = float(arr.min())
    span = float(arr.max() - t0 + lat.min(axis=1).max() + area.min(axis=1).sum() / n_racks)
    tau = t0 + max(span, 1e-9) / k_n * np.arange(k_n + 1)
    group = np.searchsorted(tau, arr, side="right") - 1  # τ_g ≤ A_j, exactly in floats

    def p_index(a: int, b: int) -> int:  # P_ab for 0 ≤ a < b ≤ K, row-major over a
        return a * k_n - a * (a - 1) // 2 + (b - a - 1)

    n_p = k_n * (k_n + 1) // 2
    cost: list[float] = []
    y_job: list[int] = []
    y_row: list[int] = []  # the P row (g, k_hi) a candidate feeds; −1 for the tail
    y_area: list[float] = []
    for j in range(n_jobs):
        g = int(group[j])
        for r in range(n_racks):
            end = float(arr[j] + lat[j, r])
            k0 = max(1, int(np.searchsorted(tau, end, side="left")))
            for lo, hi in _completion_ranges(k0, k_n, fine):
                cost.append(max(float(tau[lo - 1]), end) - arr[j])
                y_row.append(p_index(g, hi))  # g < k0 ≤ hi: the job ends after its arrival
                y_area.append(float(area[j, r]))
                y_job.append(j)
            cost.append(max(float(tau[k_n]), end) - arr[j])  # the tail
            y_row.append(-1)
            y_area.append(0.0)
            y_job.append(j)
    n_y = len(cost)
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    cap = np.empty(n_p)
    for a in range(k_n):  # P_ab − P_{a+1,b} − P_{a,b−1} + P_{a+1,b−1} − Σ area·y(g = a, k_hi = b) = 0
        for b in range(a + 1, k_n + 1):
            row = p_index(a, b)
            cap[row] = n_racks * (tau[b] - tau[a])
            terms = [(row, 1.0)]
            if b - a >= 2:
                terms += [(p_index(a + 1, b), -1.0), (p_index(a, b - 1), -1.0)]
            if b - a >= 3:
                terms.append((p_index(a + 1, b - 1), 1.0))
            for col, v in terms:
                rows.append(row)
                cols.append(n_y + col)
                vals.append(v)
    y_row_a = np.asarray(y_row)
    fed = np.flatnonzero(y_row_a >= 0)
    rows.extend(y_row_a[fed].tolist())
    cols.extend(fed.tolist())
    vals.extend((-np.asarray(y_area)[fed]).tolist())
    n_var = n_y + n_p
    a_p = sparse.csr_matrix((vals, (rows, cols)), shape=(n_p, n_var))
    a_assign = sparse.csr_matrix((np.ones(n_y), (y_job, np.arange(n_y))), shape=(n_jobs, n_var))
    bounds = np.column_stack([np.zeros(n_var), np.concatenate([np.ones(n_y), cap])])
    c = np.concatenate([np.asarray(cost) / n_jobs, np.zeros(n_p)])
    res = linprog(c, A_eq=sparse.vstack([a_assign, a_p]).tocsr(), b_eq=np.concatenate([np.ones(n_jobs), np.zeros(n_p)]),
                  bounds=bounds, method="highs-ipm")  # the P chains: IPM ≈ 10× simplex here
    if res.status != 0:
        raise RuntimeError(f"LP-Online did not solve: {res.message}")
    return float(res.fun)
