"""Allocation of servers between virtual clusters (VCs): one small policy per rule, one registry.

Every policy answers the same question at every arrival, completion and capacity change: given
each VC's capacity `c` (its guarantee), its demand `d` (servers its active jobs could use) and the
`total` servers of the cell (the VCs' capacities plus the system machines), how many servers each
VC should hold. Steps shared by all (spec §2.2, the recommended formalisation):

1. guarantee `g = min(d, c)` — a VC under its capacity gets its whole demand (property 1);
2. free pool `F = total − Σ g` — idle capacity of under-loaded VCs plus the system machines;
3. excess `e = max(d − c, 0)`, split by weighted water-filling (`waterfill`): the policies differ
   only in the weights, i.e. in who gets the free pool when it is scarce.

Contract of `targets`: integral, `0 ≤ targets ≤ d`, `targets ≥ g`, `Σ targets ≤ total`, and
`Σ targets = min(total, Σ d)` for every work-conserving policy (all but `strict`). Pure and
deterministic: ties break on the VC's row index (the VC order is the caller's, e.g. sorted ids).

Spec gaps decided here: MaxMin is *unweighted* max-min over the excess (property 3 needs it;
"maximise the minimum allocation" of the absolute extra servers); demand counts queued as well as
running jobs; a VC's capacity is a number of servers (cores + memory capacities are converted to
server-equivalents by the caller, not here); capacity weights are at least 1, so a VC that owns
no servers still borrows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from .history import History
from .waterfill import FloatArray, IntArray, waterfill


class Policy(Protocol):
    NAME: ClassVar[str]
    # True when `Σ targets = min(total, Σ d)`: then, whenever `Σ d ≤ total`, targets are the demands
    # and a caller may skip the call (the simulator does, between contended periods)
    WORK_CONSERVING: ClassVar[bool]

    def targets(self, capacity: IntArray, demand: IntArray, total: int, history: History) -> IntArray:
        """Servers per VC; see the module contract."""
        ...


def capacity_weights(capacity: IntArray) -> FloatArray:
    """Capacities as pool weights, at least 1: a VC that owns nothing may still borrow."""
    return np.maximum(capacity, 1).astype(np.float64)


def split(capacity: IntArray, demand: IntArray, total: int, weights: FloatArray) -> IntArray:
    """Steps 1–3: guarantees, then the free pool water-filled over the excess with `weights`."""
    g = np.minimum(demand, capacity)
    excess = np.maximum(demand - capacity, 0)
    free = int(total - g.sum())
    return g + waterfill(free, excess, weights)


@dataclass(frozen=True)
class MaxMin:
    """Instantaneous MaxMin (the paper's baseline, spec §2.2 properties 1–4): the free pool is
    shared equally between over-demanding VCs, so the least demanding are satisfied first."""

    NAME: ClassVar[str] = "maxmin"
    WORK_CONSERVING: ClassVar[bool] = True

    def targets(self, capacity: IntArray, demand: IntArray, total: int, history: History) -> IntArray:
        return split(capacity, demand, total, np.ones(capacity.shape))


@dataclass(frozen=True)
class CapacityWeighted:
    """Instantaneous, free pool shared in proportion to capacity (Hadoop Fair Scheduler weights):
    VCs at the same load get the same fraction of their excess. No history."""

    NAME: ClassVar[str] = "capacity_weighted"
    WORK_CONSERVING: ClassVar[bool] = True

    def targets(self, capacity: IntArray, demand: IntArray, total: int, history: History) -> IntArray:
        return split(capacity, demand, total, capacity_weights(capacity))


@dataclass(frozen=True)
class Strict:
    """Strict history (deficit round-robin / credit-scheduler style): a VC whose `balance` is in
    debt borrows nothing, whatever the free pool; the others share it by capacity. Not
    work-conserving by design — the paper's §6 argument that debt blocks borrowing in idle times."""

    NAME: ClassVar[str] = "strict"
    WORK_CONSERVING: ClassVar[bool] = False

    def targets(self, capacity: IntArray, demand: IntArray, total: int, history: History) -> IntArray:
        w = capacity_weights(capacity) * (history.balance >= 0)
        return split(capacity, demand, total, w)


@dataclass(frozen=True)
class Decayed:
    """Decayed-usage fair share (Slurm's fair-share factor `2^(−usage/shares)`, Kueue's admission
    fair sharing): weight `c · 2^(−(U_i/ΣU)/(c_i/Σc))` with `U` usage decayed by its half-life."""

    NAME: ClassVar[str] = "decayed"
    WORK_CONSERVING: ClassVar[bool] = True
    # the exponent's scale k in `2^(−k · usage share / capacity share)` (Slurm: 1)
    strength: float = 1.0
    # base weight 1 (MaxMin's) instead of the capacity: the variant of bench/fairness_frontier.py
    equal_base: bool = False

    def targets(self, capacity: IntArray, demand: IntArray, total: int, history: History) -> IntArray:
        c = capacity_weights(capacity)
        base = np.ones_like(c) if self.equal_base else c
        u_sum = float(history.usage.sum())
        if u_sum <= 0:
            return split(capacity, demand, total, base)
        factor = np.exp2(-self.strength * (history.usage / u_sum) / (c / c.sum()))
        return split(capacity, demand, total, base * factor)


@dataclass(frozen=True)
class SextantHistory:
    """Sextant's history-aware policy — our design; the paper proposes none (spec §2.3, §6).

    A VC's `History.credit` is what the others owe it: earned by lending capacity that others
    used, spent by borrowing while another over-demanding VC was left short, decayed (a finite
    window). With `repay_first`, VCs that are owed (credit > 0) share the free pool first, by
    capacity, up to their excess — the credit scheduler's UNDER-before-OVER, so a lender is repaid
    when it over-demands; the rest goes to every over-demanding VC, equally (`rest_equal`, as
    MaxMin) or by capacity, each weight scaled by `exp(beta · clip(credit / (c · unit_s), −cap,
    cap))`. Using capacity nobody wanted costs no credit, and every weight stays > 0:
    work-conserving, no server idles while a job waits. The configuration was chosen on the
    synthetic seeds 1–5 (bench/fairness.py).
    """

    NAME: ClassVar[str] = "sextant"
    WORK_CONSERVING: ClassVar[bool] = True
    beta: float = 0.0
    repay_first: bool = True
    rest_equal: bool = True
    cap: float = 3.0
    unit_s: float = 86400.0

    def targets(self, capacity: IntArray, demand: IntArray, total: int, history: History) -> IntArray:
        c = capacity_weights(capacity)
        h = np.clip(history.credit / (c * self.unit_s), -self.cap, self.cap)
        w = (np.ones_like(c) if self.rest_equal else c) * np.exp(self.beta * h)
        if not self.repay_first:
            return split(capacity, demand, total, w)
        g = np.minimum(demand, capacity)
        excess = np.maximum(demand - capacity, 0)
        free = int(total - g.sum())
        first = waterfill(free, excess, c * (history.credit > 0))
        return g + first + waterfill(free - int(first.sum()), excess - first, w)


POLICIES: dict[str, type] = {p.NAME: p for p in (MaxMin, CapacityWeighted, Strict, Decayed, SextantHistory)}


def make_policy(name: str, **args: float | bool) -> Policy:
    """The policy registered under `name` with `args` (KeyError on an unknown name)."""
    cls = POLICIES[name]
    policy: Policy = cls(**args)
    return policy

