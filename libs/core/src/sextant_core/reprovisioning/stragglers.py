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
