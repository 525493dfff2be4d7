"""Sharing history of the virtual clusters: a fold of allocation intervals.

Every allocation decision holds until the next event, so the history is advanced interval by
interval with `advance(history, dt, capacity, demand, allocation, total, params)`: the same
sequence of (interval, allocation) gives the same history bit for bit, which is how replay
rebuilds credits and usage from the log (a platform event would carry `dt`, demand and allocation
per VC). Exponential decay is integrated exactly over the interval (no step-size dependence).

Quantities (per VC `i`, server-seconds; `c` capacity, `a` allocation, `M` all servers):

- `lent`: capacity the VC did not use (`max(c − a, 0)`) that borrowers actually used. Borrowers
  are counted as using the VCs' idle capacity before the system machines (our attribution; the
  system machines are the cell's own, kept for its maintenance), so
  `lent_i = idle_i · min(1, borrowed / Σ idle)` (spec §2.4's "contributed" server-hours).
- `received`: servers held above capacity, `max(a − c, 0)`.
- `credit` (Sextant's history-aware policy — our design, not the paper's): earns `lent`, spends
  `received` only while another over-demanding VC was left short (the servers were contended),
  and decays with `credit_half_life_s`. Borrowing capacity that nobody else wanted costs nothing.
- `usage` (decayed-usage fair share, as Slurm's fair-share factor and Kueue's admission fair
  sharing): `a` decayed with `usage_half_life_s`.
- `balance` (strict history, deficit round-robin / credit-scheduler style): earns the VC's
  proportional share of the whole cluster `c · M / Σc`, spends `a`, never decays nor forgets:
  debt is never forgiven, savings never expire.

How this goes through the one capacity ledger of the planning side: a VC's guarantee
`min(demand, capacity)` is a claim of the ledger with VC-guarantee precedence, and the borrowed
servers are claims of the lowest precedence, revocable; this module only needs the per-interval
allocations the ledger records, so it folds the ledger's events instead of the simulator's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .waterfill import FloatArray, IntArray


@dataclass(frozen=True)
class HistoryParams:
    """Half-lives in seconds (> 0)."""

    credit_half_life_s: float = 3 * 86400.0
    usage_half_life_s: float = 1 * 86400.0


@dataclass(frozen=True)
class History:
    """Per-VC history (server-seconds), arrays of one row per VC in a fixed VC order."""

    lent: FloatArray
    received: FloatArray
    credit: FloatArray
    usage: FloatArray
    balance: FloatArray

    @staticmethod
    def empty(n: int) -> History:
        z = np.zeros(n, dtype=np.float64)
        return History(z, z.copy(), z.copy(), z.copy(), z.copy())


def _decayed(x: FloatArray, rate: FloatArray, dt: float, half_life: float) -> FloatArray:
    """x(t+dt) for dx/dt = rate − λx, λ = ln 2 / half_life, rate constant over the interval."""
    lam = math.log(2.0) / half_life
    k = math.exp(-lam * dt)
    return x * k + rate * ((1.0 - k) / lam)


def advance(h: History, dt: float, capacity: IntArray, demand: IntArray, allocation: IntArray,
            total: int, params: HistoryParams) -> History:
    """The history after `dt` seconds (≥ 0) of `allocation` under `demand` (see the module doc)."""
    if dt <= 0:
        return h
    c = capacity.astype(np.float64)
    a = allocation.astype(np.float64)
    over = a - c
    borrowed = np.maximum(over, 0.0)
    idle_own = np.maximum(-over, 0.0)
    b_sum = float(borrowed.sum())
    i_sum = float(idle_own.sum())
    lend_rate = idle_own * min(1.0, b_sum / i_sum) if i_sum > 0 else idle_own

    unserved = (demand > capacity) & (demand > allocation)  # over-demanding and short of demand
    others_short = int(unserved.sum()) - unserved  # other over-demanding VCs left short
    earn = lend_rate - np.where(others_short > 0, borrowed, 0.0)
    c_sum = float(c.sum())
    share = c * (total / c_sum) if c_sum > 0 else c * 0.0
    return History(
        lent=h.lent + lend_rate * dt,
        received=h.received + borrowed * dt,
        credit=_decayed(h.credit, earn, dt, params.credit_half_life_s),
        usage=_decayed(h.usage, a, dt, params.usage_half_life_s),
        balance=h.balance + (share - a) * dt,
    )
