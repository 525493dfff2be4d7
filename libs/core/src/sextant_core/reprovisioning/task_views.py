"""Straggler detection of ladder 8.8 (`straggler_rule` "views"): a node effect read from two
consecutive task views of one job (`WorkloadState.task_views`), not from one view and the job's
projected-completion ratio (ladder 8.4, `stragglers.straggling_nodes`).

A true straggler (docs/adaptation/stragglers.md) is a task whose progress rate (fraction of the
task per second) is below `half` × its job's median because of its node, and would not be without
it. One view gives each task's work rate and progress but not its size; two views give what is
needed, per task, without assuming anything about the sizes of other nodes' tasks:

- **The node's slowdown over the latest window** `f` = the node's median work rate in the
  earlier view / in the later one (a node effect that began between them: a failing disk, an
  unmodelled neighbour). Measured per node, so a two-node job needs no peer and a one-node job
  no ratio history.
- **Each task's own progress rate before the window**: its progress / the seconds its attempt had
  run, both at the earlier view (a task's size is its own: a large task has progressed less in the
  same time). [IMPL CHOICE] that is its mean rate since it started, which equals the rate just
  before the window when the node ran at one speed until then; the later view's rate is that / f.
- **The test**, the truth's own: a task of the node is below `half` × the job's median progress
  rate (every task, the node's included) and would not be without the node effect (× f ≥ half).
  The node effect must be the node's: `f` ≥ `slowdown`, and, with other nodes, ≥ `slowdown` ×
  the median slowdown of the other nodes (the job slowing everywhere — a phase — is not a node).

A node's first view (no earlier view of its attempts) and a view across an in-place resize are
handled by `find` and `resized_nodes`; the probes that follow are `Adaptive.assess_probe`'s.
Pure: no clock, no randomness; servers in first-appearance order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..state.model import TaskView


@dataclass(frozen=True, slots=True)
class NodeVerdict:
    """A node whose effect makes one of its tasks straggle: its slowdown over the latest window
    (`factor`), relative to the job's other nodes (`relative`; = `factor` alone) and its slowest
    task's progress rate as a share of the job's median (`worst`, < half)."""

    server: str
    factor: float
    relative: float
    worst: float


def comparable(before: TaskView, now: TaskView) -> bool:
    """The two views describe the same tasks: the same slots on the same servers, the earlier
    one with every attempt's age."""
    n = len(now.servers)
    return (before.at < now.at and before.servers == now.servers and n > 0
            and len(before.rates) == n and len(now.rates) == n and len(before.progress) == n
            and len(before.elapsed) == n)


def _median(xs: Sequence[float]) -> float:
    return float(np.median(xs)) if xs else 0.0


def node_slowdowns(before: TaskView, now: TaskView) -> dict[str, float]:
    """Per server, its median work rate in `before` / in `now` (`comparable` views; a server
    without a positive rate in both is left out)."""
    out: dict[str, float] = {}
    for sv in dict.fromkeys(now.servers):
        idx = [i for i, s in enumerate(now.servers) if s == sv]
        r1 = _median([before.rates[i] for i in idx])
        r2 = _median([now.rates[i] for i in idx])
        if r1 > 0 and r2 > 0:
            out[sv] = r1 / r2
    return out


def progress_rates(before: TaskView | None, now: TaskView, slowdowns: dict[str, float],
                   fall: float) -> list[float | None]:
    """Per task, its progress rate at `now` (fraction of the task per second); None: unknown.

    - Without an earlier view of the same attempts (`before` None): progress / age, its mean rate
      since it started (the first view after a node effect shows it from the attempt's start: the
      agent integrates a window at its closing rate, docs/adaptation/stragglers.md).
    - Its node slowed within the window (slowdown ≥ `fall`): its mean rate until `before` over
      that slowdown (the rate before the window, from its own size, then the node's fall).
    - Otherwise its rate over the window, Δprogress / Δt; a task that finished meanwhile counts
      at its mean rate (progress / age)."""
    out: list[float | None] = []
    for i, sv in enumerate(now.servers):
        p, age = now.progress[i], now.elapsed[i] if i < len(now.elapsed) else 0.0
        mean_now = p / age if p > 0 and age > 0 else None
        if before is None:
            out.append(mean_now)
            continue
        p1, a1, f = before.progress[i], before.elapsed[i], slowdowns.get(sv)
        if f is not None and f >= fall:
            out.append(p1 / a1 / f if p1 > 0 and a1 > 0 else None)
        elif p < 1.0 and p > p1:
            out.append((p - p1) / (now.at - before.at))
        else:
            out.append(mean_now)
    return out


def straggling_nodes(servers: Sequence[str], prates: Sequence[float | None], slowdowns: dict[str, float], *,
                     slowdown: float, half: float, any_task: bool = False) -> list[NodeVerdict]:
    """The nodes whose effect makes one of their tasks straggle (module docstring): a node whose
    slowdown (`slowdowns`; math.inf: unknown, left to the in-place probe) is ≥ `slowdown`, and
    ≥ `slowdown` × the median of the other nodes' when they have one, with a task whose progress
    rate (`prates`) is below `half` × the job's median and would not be without it.

    `any_task` False (ladders 8.8–8.10): only the node's slowest task is tested, so a node whose
    slowest task is slow anywhere (data skew: × f still below half) is passed over even when
    another of its tasks straggles because of it. True (8.12): any task of the node, as the truth
    judges (`NodeVerdict.worst` is then the slowest task that passes)."""
    known = [x for x in prates if x is not None]
    med = _median(known)
    if med <= 0:
        return []
    out: list[NodeVerdict] = []
    for sv, fs in slowdowns.items():
        others = [v for s, v in slowdowns.items() if s != sv]
        rel = fs / _median(others) if others and _median(others) > 0 else fs
        if fs < slowdown or rel < slowdown:
            continue
        mine = [x for s, x in zip(servers, prates, strict=True) if s == sv and x is not None]
        if not mine:
            continue
        shares = [x / med for x in mine]
        if any_task:
            hit = [x for x in shares if x < half <= x * fs]
            if hit:
                out.append(NodeVerdict(sv, fs, rel, min(hit)))
            continue
        worst = min(shares)
        if worst < half <= worst * fs:
            out.append(NodeVerdict(sv, fs, rel, worst))
    return out


def previous(views: Sequence[TaskView], at: float, since: float) -> TaskView | None:
    """The latest kept view taken before `at`, if taken at or after `since` (the job's latest
    allocation change: an older view describes other slots); None otherwise."""
    before = next((v for v in reversed(views) if v.at < at - 1e-9), None)
    if before is None or before.at < since - 1e-9:
        return None
    return before


def view_of(at: float, servers: Sequence[str], rates: Sequence[float], progress: Sequence[float],
            elapsed: Sequence[float]) -> TaskView:
    return TaskView(at=at, servers=tuple(servers), rates=tuple(rates), progress=tuple(progress),
                    elapsed=tuple(elapsed))


def peer_slowdowns(servers: Sequence[str], normalised: Sequence[float]) -> dict[str, float]:
    """Per server of a job on several nodes, the median of the other nodes' `normalised` rates
    (relative to what the classification expects of each node) / its own (ladder 8.4's node
    effect, for a first view: no earlier rate of the node to compare with)."""
    nodes = list(dict.fromkeys(servers))
    out: dict[str, float] = {}
    if len(nodes) < 2:
        return out
    for sv in nodes:
        mine = _median([normalised[i] for i, s in enumerate(servers) if s == sv and i < len(normalised)])
        peer = _median([normalised[i] for i, s in enumerate(servers) if s != sv and i < len(normalised)])
        if mine > 0 and peer > 0:
            out[sv] = peer / mine
    return out


def find(views: Sequence[TaskView], now: TaskView, normalised: Sequence[float], since: float, *, slowdown: float,
         half: float, fall: float, alone_first: bool, any_task: bool = False) -> list[NodeVerdict]:
    """Ladder 8.8's verdicts on one task view (`now`) given the job's kept views (`views`) and
    its latest allocation change (`since`):

    - with an earlier view of the same attempts: the nodes that slowed ≥ `fall` × within the
      window (`node_slowdowns`), each task's rate from its own progress (`progress_rates`);
    - the first view of its attempts: progress / age per task; the node effect against the other
      nodes from the classification's expectations (`peer_slowdowns`), or, alone, unknown (∞:
      the in-place probe decides) when `alone_first`."""
    before = previous(views, now.at, since)
    last = previous(views, now.at, -math.inf)
    if before is not None and comparable(before, now):
        f = {sv: x for sv, x in node_slowdowns(before, now).items() if x >= fall}
        pr = progress_rates(before, now, f, fall)
    elif last is not None and resized(last, now):
        return resized_nodes(last, now, slowdown=slowdown, half=half, fall=fall, any_task=any_task)
    else:
        # only the nodes seen for the first time: attempts no older than the latest earlier view
        # (a node resized in place keeps its attempts, and its effect is not new)
        fresh = {sv for sv in dict.fromkeys(now.servers)
                 if last is None or _median([now.elapsed[i] for i, s in enumerate(now.servers)
                                             if s == sv and i < len(now.elapsed)]) <= now.at - last.at + 1e-6}
        pr = progress_rates(None, now, {}, fall)
        f = {sv: x for sv, x in peer_slowdowns(now.servers, normalised).items() if sv in fresh}
        if alone_first and len(fresh) == 1 == len(set(now.servers)):
            f = {now.servers[0]: math.inf}
    if not f:
        return []
    return straggling_nodes(now.servers, pr, f, slowdown=slowdown, half=half, any_task=any_task)


def resized(before: TaskView, now: TaskView) -> bool:
    """The same nodes (two or more), some with another number of slots: resized in place."""
    nodes = set(now.servers)
    return (len(nodes) > 1 and set(before.servers) == nodes and before.servers != now.servers
            and len(before.elapsed) == len(before.servers) == len(before.progress) == len(before.rates))


def resized_nodes(before: TaskView, now: TaskView, *, slowdown: float, half: float,
                  fall: float, any_task: bool = False) -> list[NodeVerdict]:
    """`find` across an in-place resize of a job on several nodes: a slot's work rate changes with
    its node's cores, so a node's fall is its median rate ratio (`before` / `now`) over the median
    ratio of the other nodes (the same resize everywhere cancels); each task of `before` counts at
    its mean rate until then (progress / age) over its node's relative fall (1 below `fall`) — the
    tasks and progress of `before`, whose slots `now` no longer matches one to one."""
    raw: dict[str, float] = {}
    for sv in dict.fromkeys(now.servers):
        r1 = _median([r for s, r in zip(before.servers, before.rates, strict=True) if s == sv])
        r2 = _median([r for s, r in zip(now.servers, now.rates, strict=False) if s == sv])
        if r1 > 0 and r2 > 0:
            raw[sv] = r1 / r2
    rel = {sv: x / _median([v for s, v in raw.items() if s != sv]) for sv, x in raw.items()
           if len(raw) > 1 and _median([v for s, v in raw.items() if s != sv]) > 0}
    pr: list[float | None] = []
    for i, sv in enumerate(before.servers):
        p, age, f = before.progress[i], before.elapsed[i], rel.get(sv, 1.0)
        pr.append(p / age / (f if f >= fall else 1.0) if p > 0 and age > 0 and sv in rel else None)
    return straggling_nodes(before.servers, pr, rel, slowdown=slowdown, half=half, any_task=any_task)
