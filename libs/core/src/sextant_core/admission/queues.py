"""The ARQ class queues as they stand in the state (Paragon §4: one FIFO queue per class).

`ClusterState.queued` holds every queued workload in admission order and each `WorkloadState`
its `arq_class`; the class queues are that order filtered by class. `class_queues` memoises the
split per `queued` tuple (the tuple object is shared by successive states until the queue
changes), so a decision costs one pass over the queue only when it changed. Pure: the result
depends only on the state.

`reserved_from(queues, cls)` is the bypass rule read as a pool bound (Paragon §4 "Queue
bypassing"): a workload of class i may take servers of its own pool and of the pools above it
only up to, not including, the first class above i whose queue is non-empty — those servers are
kept for the workloads waiting there. [GAP] the paper says "the queue directly above"; applied
literally, a workload could never use the empty servers (the top pool) of an idle cluster, so we
apply it transitively through empty queues. 10 means nothing is reserved.
"""

from __future__ import annotations

from ..state.model import ClusterState
from .quality import CLASSES

Queues = tuple[tuple[str, ...], ...]
_memo: dict[int, tuple[tuple[str, ...], Queues]] = {}
_MEMO_SIZE = 8


def class_queues(state: ClusterState) -> Queues:
    """The queue of each class 0..9 (workload ids in admission order)."""
    q = state.queued
    hit = _memo.get(id(q))
    if hit is not None and hit[0] is q:
        return hit[1]
    by: list[list[str]] = [[] for _ in range(CLASSES)]
    for wid in q:
        w = state.workloads.get(wid)
        if w is not None and w.arq_class is not None:
            by[min(max(w.arq_class, 0), CLASSES - 1)].append(wid)
    out = tuple(tuple(x) for x in by)
    if len(_memo) >= _MEMO_SIZE:
        _memo.pop(next(iter(_memo)))
    _memo[id(q)] = (q, out)
    return out


def heads(state: ClusterState) -> tuple[str, ...]:
    """The head of every non-empty class queue, in class order (most demanding first)."""
    return tuple(q[0] for q in reversed(class_queues(state)) if q)


def reserved_from(queues: Queues, cls: int) -> int:
    """The lowest pool above `cls` kept for a waiting class (10 = none)."""
    for j in range(cls + 1, CLASSES):
        if queues[j]:
            return j
    return CLASSES
