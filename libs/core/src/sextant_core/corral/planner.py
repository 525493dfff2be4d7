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
- `lp_batch_bound(latency)`: LP-Batch (eqs. 4.2–4.5) with SciPy's HiGHS; a lower bound on the
  makespan of every schedule that holds each job's racks for L_j(r_j) (benchmark only).
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


def prioritize(latency: np.ndarray, widths: np.ndarray, arrivals: np.ndarray | None = None, *, online: bool = False) -> Plan:
    """Fig. 4.2 for fixed widths r_j (see the module docstring)."""
    n_jobs, n_racks = latency.shape
    arr = np.zeros(n_jobs) if arrivals is None else np.asarray(arrivals, dtype=float)
    free = np.zeros(n_racks)
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


def _objective(lw: list[float], order: list[int], widths: list[int], arr: list[float], n_racks: int, online: bool) -> float:
    """`prioritize`'s objective alone. The objective depends only on the racks' free *times* (which
    rack of equal time a job takes changes nothing), so the racks are kept as a sorted multiset:
    parallel lists of distinct free times and how many racks free at each. A job takes the r
    earliest, starts at the r-th's time (or its arrival) and returns r racks at its end: O(groups)
    per job instead of O(r · R)."""
    times, counts = [0.0], [n_racks]
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


def plan(latency: np.ndarray, arrivals: np.ndarray | None = None, *, online: bool = False) -> Plan:
    """The provisioning × prioritization heuristic (§4.3.4): the best plan of the J·(R−1) explored."""
    lat = np.asarray(latency, dtype=float)
    n_jobs, n_racks = lat.shape
    arr = np.zeros(n_jobs) if arrivals is None else np.asarray(arrivals, dtype=float)
    arr_l = arr.tolist()
    widths = np.ones(n_jobs, dtype=np.int64)
    jobs = np.arange(n_jobs)

    def score(w: np.ndarray) -> float:
        order = _order(lat, w, arr, online).tolist()
        return _objective(lat[jobs, w - 1].tolist(), order, w.tolist(), arr_l, n_racks, online)

    best_w, best = widths.copy(), score(widths)
    while (widths < n_racks).any():
        current = np.where(widths < n_racks, lat[jobs, widths - 1], -np.inf)
        widths[int(np.argmax(current))] += 1
        obj = score(widths)
        if obj < best:
            best_w, best = widths.copy(), obj
    return prioritize(lat, best_w, arrivals, online=online)


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
