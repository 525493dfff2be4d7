"""Straggler detection (Quasar §4.3), step 1: which servers run tasks at least 50 % slower than
the median task (the TaskTracker view). Steps 2–3 (an in-place interference probe on those
servers, a change > 20 % relaunches the tasks elsewhere) are `Adaptive.assess_tasks` and
`Adaptive.assess_probe(purpose="straggler")`.

[IMPL CHOICE] "slower" compares progress rates: a task is a candidate when its rate is at most
median / `slowdown` (its duration ≥ `slowdown` × the median's). Finished tasks (progress ≥ 1) are
left out of the median: the question is which of the *running* tasks lag. Servers are returned in
first-appearance order, each once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def slow_tasks(rates: Sequence[float], progress: Sequence[float], slowdown: float) -> list[int]:
    """Indices of running tasks at least `slowdown` × slower than the median running task."""
    idx = [i for i in range(len(rates)) if i >= len(progress) or progress[i] < 1.0]
    if len(idx) < 2:
        return []
    med = float(np.median([rates[i] for i in idx]))
    if med <= 0:
        return []
    return [i for i in idx if rates[i] * slowdown <= med]


def slow_servers(servers: Sequence[str], rates: Sequence[float], progress: Sequence[float],
                 slowdown: float) -> list[str]:
    out: dict[str, None] = {}
    for i in slow_tasks(rates, progress, slowdown):
        if i < len(servers):
            out.setdefault(servers[i], None)
    return list(out)


def reference_server(servers: Sequence[str], rates: Sequence[float]) -> str | None:
    """A healthy node to probe alongside: the server of the task whose rate is closest to the
    median (ties by server id); None without tasks."""
    if not servers or not rates:
        return None
    med = float(np.median(rates))
    i = min(range(min(len(servers), len(rates))), key=lambda j: (abs(rates[j] - med), servers[j]))
    return servers[i]


# --- ladder 8.4: a node effect that makes a task straggle ----------------------------------------


def progress_rates(servers: Sequence[str], rates: Sequence[float], progress: Sequence[float]) -> list[float]:
    """Per task, a quantity proportional to its progress rate (fraction of the task per second),
    from one task view. A task's progress rate is its work rate over its size, and the view gives
    the work rate (`rates`) but not the size. [IMPL CHOICE] the tasks of one node started
    together and run at the node's rate, so they have done the same work and their progress is
    inversely proportional to their size: size ∝ (median progress of the node) / progress, taking
    the nodes' median task sizes as equal. Hence rate × progress / (its node's median progress);
    0 for a node whose median progress is 0."""
    med: dict[str, float] = {}
    for sv in dict.fromkeys(servers):
        ps = [progress[i] for i in range(min(len(servers), len(progress))) if servers[i] == sv]
        med[sv] = float(np.median(ps)) if ps else 0.0
    out = []
    for i, sv in enumerate(servers):
        m = med.get(sv, 0.0)
        r = rates[i] if i < len(rates) else 0.0
        p = progress[i] if i < len(progress) else 0.0
        out.append(r * p / m if m > 0 else 0.0)
    return out


def straggling_nodes(servers: Sequence[str], rates: Sequence[float], normalised: Sequence[float],
                     progress: Sequence[float], job_slowdown: float | None, *, slowdown: float,
                     half: float) -> list[tuple[str, float, float]]:
    """The servers whose node effect makes one of its tasks a straggler: (server, the node's
    estimated slowdown, its slowest task's progress rate / the job's median), in first-appearance
    order.

    - Node effect: with other nodes, the node's median `normalised` rate is at least `slowdown` ×
      below the median of the other nodes' tasks (their ratio is the node's slowdown); alone,
      the job's own slowdown over its latest telemetry window (`job_slowdown`, ≥ `slowdown` is
      needed; None: unknown, no verdict; `math.inf`: unknown, left to the in-place probe).
    - Task effect: one of its tasks' progress rate (`progress_rates`) is below `half` × the
      job's median, and would not be without the node effect (that rate × the node's slowdown
      ≥ `half` × the median): a task slow everywhere (data skew) is not the node's doing."""
    prates = progress_rates(servers, rates, progress)
    if not prates:
        return []
    med = float(np.median(prates))
    if med <= 0:
        return []
    nodes = list(dict.fromkeys(servers))
    out: list[tuple[str, float, float]] = []
    for sv in nodes:
        mine = [i for i, s in enumerate(servers) if s == sv]
        if len(nodes) > 1:
            others = [normalised[i] for i, s in enumerate(servers) if s != sv and i < len(normalised)]
            node = float(np.median([normalised[i] for i in mine if i < len(normalised)] or [0.0]))
            peer = float(np.median(others)) if others else 0.0
            if node <= 0 or peer <= 0:
                continue
            factor = peer / node
        elif job_slowdown is not None:
            factor = job_slowdown
        else:
            continue
        if factor < slowdown:
            continue
        worst = min(prates[i] for i in mine) / med
        if worst < half <= worst * factor:
            out.append((sv, factor, worst))
    return out


def new_slowdown(observed: Sequence[tuple[float, float, object]], since: float, drop: float,
                 first: bool) -> bool:
    """Did the job's rate just fall? Its latest projected-completion ratio (`observed`: (time,
    ratio, …), oldest first) is at most `drop` × the previous one, that previous window wholly
    after `since` (the latest allocation change) — or, when `first` (no allocation change since
    it started), the latest is its first window (nothing to compare with: a node effect seen
    then is as new as the window)."""
    after = [o for o in observed if o[0] > since + 1e-9]
    if len(after) == 1:
        return first
    if len(after) < 2:
        return False
    (t1, r1, *_), (t2, r2, *_) = after[-2], after[-1]
    return t1 - (t2 - t1) >= since - 1e-9 and r1 > 0 and r2 <= drop * r1


def job_slowdown(observed: Sequence[tuple[float, float, object]], required_s: float | None, started_at: float,
                 since: float, drop: float) -> float | None:
    """How many times slower a job runs than over its previous telemetry window, from its two
    latest observations ((time, ratio to target, …)), or None: fewer than two, the earlier window
    not wholly after `since` (the latest allocation change), or the ratio not below `drop` × the
    previous one (no slowdown worth judging).

    `required_s` None: a rate target, the ratio is the rate, f = the ratio's fall. Otherwise a
    completion-time target (ratio = `required_s` / projected seconds): the projection is elapsed
    + remaining work / current rate, so the time left, projected − elapsed, shrinks by the
    window's length at a constant rate and grows × f when the rate falls f-fold: f ≈ left now /
    (left before − window); the ratio's fall when the job is nearly done (left before ≤ the
    window)."""
    if len(observed) < 2 or (required_s is not None and required_s <= 0):
        return None
    (t1, r1, *_), (t2, r2, *_) = observed[-2], observed[-1]
    window = t2 - t1
    if window <= 0 or r1 <= 0 or r2 <= 0 or t1 - window < since - 1e-9 or r2 > drop * r1:
        return None
    if required_s is None:
        return r1 / r2
    left1 = required_s / r1 - (t1 - started_at)
    left2 = required_s / r2 - (t2 - started_at)
    if left1 - window <= 0 or left2 <= 0:
        return r1 / r2
    return max(left2 / (left1 - window), r1 / r2)
