"""Event-driven simulator of VC capacity sharing (the spec's §2.5 set-up; desmoj replaced by a
small deterministic loop).

At every event — a batch of arrivals at one instant, or a completion — the core recomputes the
allocation: the policy's targets (`sextant_core.fairness.policies`), the servers each VC holds
(targets at once for malleable jobs; `settle` for rigid ones, whose preemption loses the work
done), then the VC-level scheduler's servers per job. Between events every job progresses at
its servers (server-seconds per second) and the history is advanced over the interval.

Rigid jobs (`rigid=True`, the LCG log's one-processor jobs) restart from zero when preempted:
their lost work is counted. With `reclaim=True` a rigid VC above its target is preempted at once
(its most recently submitted running jobs first, the VC scheduler's order) so every target takes
effect at the event that sets it, instead of `settle`'s wait for borrowers' jobs to end: the
reclamation ablation of bench/fairness_frontier.py, whose price is the work it throws away. Malleable jobs (the synthetic set-up) keep their progress. Deterministic:
no randomness, ties in order of job rows; the same inputs give the same floats.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sextant_core.fairness import History, HistoryParams, Policy, VCScheduler, advance, settle
from sextant_core.fairness.vc_schedulers import Fifo

from .workloads import FloatArray, IntArray, Jobs


@dataclass(frozen=True)
class SimResult:
    done: FloatArray  # completion time of each job (s)
    lost_work: float  # server-seconds of work thrown away by preemption
    preemptions: int
    busy_in_window: float  # server-seconds used during the submission window
    idle_while_waiting: float  # server-seconds idle while some job waited for a server
    history: History  # lent / received / credit / usage / balance at the end
    events: int
    end: float


def simulate(jobs: Jobs, capacity: IntArray, total: int, policy: Policy, *,
             scheduler: VCScheduler | None = None, params: HistoryParams | None = None,
             rigid: bool = False, reclaim: bool = False) -> SimResult:
    """Run `jobs` to completion on `total` servers under `policy`; see the module docstring."""
    sched = scheduler or Fifo()
    params = params or HistoryParams()
    n = jobs.submit.shape[0]
    nv = jobs.n_vcs
    cap = capacity.astype(np.int64)
    rem = jobs.work.copy()
    xg = np.zeros(n, dtype=np.int64)  # servers of each job now
    done = np.full(n, np.nan)
    hist = History.empty(nv)
    key = jobs.vc * n + np.arange(n)  # active jobs kept grouped by VC, in row order inside a VC
    vc_base = np.arange(nv, dtype=np.int64) * n
    act = np.zeros(0, dtype=np.int64)
    act_key = np.zeros(0, dtype=np.int64)
    cand = np.zeros(0, dtype=np.int64)  # the jobs the scheduler saw last (all running ones among them)
    held = np.zeros(nv, dtype=np.int64)
    demand = np.zeros(nv, dtype=np.int64)
    t, nxt = 0.0, 0
    lost, preempt, busy_w, iww, events = 0.0, 0, 0.0, 0.0, 0
    while nxt < n or act.shape[0]:
        t_arr = jobs.submit[nxt] if nxt < n else np.inf
        xc = xg[cand]
        run = xc > 0
        if run.any():
            ttf = np.where(run, rem[cand] / np.maximum(xc, 1), np.inf)
            first = int(np.argmin(ttf))
            t_done = t + float(ttf[first])
        else:
            first, t_done = -1, np.inf
        t_next = min(t_arr, t_done)
        dt = t_next - t
        if dt > 0:
            used = int(xc.sum())
            rem[cand] -= xc * dt
            busy_w += used * max(0.0, min(t_next, jobs.horizon) - t)
            iww += min(total - used, int(demand.sum()) - used) * dt
            hist = advance(hist, dt, cap, demand, held, total, params)
        t = t_next
        if t_done <= t_arr and first >= 0:
            rem[cand[first]] = 0.0
            fin_rows = cand[run & (rem[cand] <= 1e-9 * jobs.work[cand] + 1e-9)]
            done[fin_rows] = t
            xg[fin_rows] = 0
            np.subtract.at(demand, jobs.vc[fin_rows], jobs.parallelism[fin_rows])
            gone = np.searchsorted(act_key, key[fin_rows])
            act = np.delete(act, gone)
            act_key = np.delete(act_key, gone)
        if nxt < n and jobs.submit[nxt] <= t:
            hi = int(np.searchsorted(jobs.submit, t, side="right"))
            nk = np.sort(key[nxt:hi])
            pos = np.searchsorted(act_key, nk)
            act = np.insert(act, pos, nk % n)
            act_key = np.insert(act_key, pos, nk)
            np.add.at(demand, jobs.vc[nxt:hi], jobs.parallelism[nxt:hi])
            nxt = hi
        events += 1
        if policy.WORK_CONSERVING and int(demand.sum()) <= total:
            held = demand.copy()  # the policy's contract: every demand is met
        else:
            targets = policy.targets(cap, demand, total, hist)
            held = settle(targets, np.minimum(held, demand), cap, demand, total) if rigid and not reclaim else targets
        old = cand[xg[cand] > 0]
        if sched.PREFIX:
            starts = np.searchsorted(act_key, vc_base).tolist()
            ends = starts[1:] + [act.shape[0]]
            cand = np.concatenate([act[s:min(s + h, e)] for s, e, h in zip(starts, ends, held.tolist(), strict=True)])
        else:
            cand = act
        xg[old] = 0
        xg[cand] = sched.shares(jobs.vc[cand], jobs.parallelism[cand], held)
        if rigid:
            killed = old[xg[old] == 0]
            if killed.shape[0]:
                lost += float((jobs.work[killed] - rem[killed]).sum())
                rem[killed] = jobs.work[killed]
                preempt += int(killed.shape[0])
    return SimResult(done, lost, preempt, busy_w, iww, hist, events, t)
