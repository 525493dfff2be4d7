"""From targets to servers actually held, for jobs that lose their work when preempted.

Malleable jobs (the spec's set-up) can follow every new target at once at no cost. Rigid jobs (one
processor each, killed on preemption, as in the LCG replay) cannot, so `settle` moves towards the
targets with as little preemption as the guarantees allow (a choice of ours, the spec leaves
reclamation open, §6 gap 9):

1. free servers go first to VCs below their guarantee `min(d, c)`, then to VCs below target;
2. a VC above its target keeps its extra servers until its jobs finish (no preemption to
   rebalance the free pool between borrowers);
3. only a VC still below its guarantee preempts, from the VCs most above their targets.

Contract: integral; `held ≥ min(demand, capacity)` wherever the targets give it; `Σ held ≤ total`;
work-conserving — if servers stay free, every VC holds its target or all of its demand.
"""

from __future__ import annotations

import numpy as np

from .waterfill import IntArray, waterfill


def settle(targets: IntArray, current: IntArray, capacity: IntArray, demand: IntArray,
           total: int) -> IntArray:
    """Servers per VC after this event; `current` is what each VC holds now (≤ its demand)."""
    held = np.minimum(current, demand).astype(np.int64)
    if np.array_equal(held, targets):
        return held
    guarantee = np.minimum(np.minimum(demand, capacity), targets)
    free = int(total - held.sum())
    ones = np.ones(held.shape)
    if free > 0:
        held = held + waterfill(free, np.maximum(guarantee - held, 0), ones)
        free = int(total - held.sum())
        held = held + waterfill(free, np.maximum(targets - held, 0), ones)
    short = np.maximum(guarantee - held, 0)
    need = int(short.sum())
    if need > 0:
        surplus = np.maximum(held - targets, 0)
        take = _from_the_top(need, surplus)
        held = held - take + waterfill(int(take.sum()), short, ones)
    return held


def _from_the_top(amount: int, surplus: IntArray) -> IntArray:
    """Take `amount` (≤ Σ surplus) levelling the largest surpluses down first (ties: lower index)."""
    amount = min(amount, int(surplus.sum()))
    if amount <= 0:
        return np.zeros(surplus.shape, dtype=np.int64)
    keep = waterfill(int(surplus.sum()) - amount, surplus, np.ones(surplus.shape))
    return surplus - keep
