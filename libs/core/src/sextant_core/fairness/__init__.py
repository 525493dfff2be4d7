"""Fairness over time between virtual clusters (VCs): capacity sharing with a history.

Tenants own a VC capacity (servers), their guarantee; idle capacity is lent to busy VCs. Pure
and deterministic: arrays in, arrays out, one row per VC in the caller's fixed order.

    from sextant_core.fairness import make_policy, History, HistoryParams, advance, settle, Fifo

Modules: `waterfill` (integer weighted max-min split), `policies` (MaxMin — the paper's
instantaneous baseline —, capacity-weighted, strict history, decayed usage, and Sextant's
history-aware policy, ours), `history` (lent/received server-seconds, credit, usage, balance: a
fold of allocation intervals, so replay rebuilds them), `settle` (targets → servers held when
preemption loses work), `vc_schedulers` (servers → jobs inside a VC: FIFO, equal share).
Spec: the shared paper notes `spec/vc_fairness.md`; how it works: docs/fairness.md.
"""

from .history import History, HistoryParams, advance
from .policies import (
           POLICIES,
           CapacityWeighted,
           Decayed,
           MaxMin,
           Policy,
           SextantHistory,
           Strict,
           make_policy,
           split,
)
from .settle import settle
from .vc_schedulers import VC_SCHEDULERS, EqualShare, Fifo, VCScheduler
from .waterfill import waterfill

__all__ = ["POLICIES", "VC_SCHEDULERS", "CapacityWeighted", "Decayed", "EqualShare", "Fifo", "History",
           "HistoryParams", "MaxMin", "Policy", "SextantHistory", "Strict", "VCScheduler", "advance",
           "make_policy", "settle", "split", "waterfill"]
