"""`ArqAdmission`: Paragon's admission control with resource-quality classes (Paragon §4) — the
`AdmissionPolicy` of the `sextant` and `paragon` profiles. It runs after classification.

For workload w (quality, classes, pools: `quality.py`; queues: `queues.py`; Eq. 2: `waiting.py`;
stability: `stability.py`; servers' offers: `availability.py`):

1. class i = decile of Q_w; the class queue, w's position in it (w keeps its place; a newcomer
   joins the tail).
2. [GAP] kinds other than `batch` are admitted at once (class recorded): ARQ is described for
   single-node applications (spec §9 item 18), a service loses requests for every second it waits,
   and multi-node jobs are sized by the planner's scale-out. Best-effort workloads too: they only
   ever take leftovers.
3. FIFO per class: a workload behind others of its class waits its turn (`behind_in_class`;
   [GAP] its expected wait is the head's expected wait × (position + 1), a rough guide).
   `ArqParams.class_fifo` False (`sextant` from planner version 8): only a workload that would
   itself wait waits its turn — one that steps 4 admits now (own pool or a bypass) is admitted
   past the queue (note `past_queue`). [IMPL CHOICE] the head waits for a server meeting *its*
   requirement; with strict FIFO its whole class waited with it although their own pool had
   servers for them: on paragon-ec2-2500 seed 1 (true rows, planner 7) the heads of classes 4
   and 5, queued at t ≈ 1 255 s, held 190 workloads until the next `Tick` (1 500 s), and 174
   of the 359 workloads the oracle meets and `sextant-true-rows` misses had queued behind a
   head (docs/quality/planning.md).
4. "Meets" = a server that is eligible now with predicted ratio ≥ 1. Admit if one is in w's own
   pool (`own_pool`), else in a pool above through empty queues (`bypass_up`, `queues.reserved_from`),
   else in a pool below (`bypass_down`: predicted to meet, so no loss expected).
5. Otherwise Eq. 2 (`waiting.switch_time`): wait for the own pool vs. divert now to the best
   eligible server (quality = its ratio^`quality_exponent`). Queue (`waiting_for_pool`, with
   the expected wait) or admit (`diverted_down`; `slack_exhausted` when no slack is left; and
   `no_capacity` is never a reason to wait when nothing can free up).

Estimates ([GAP] CT_a and the busy periods, spec §9 items 11–12): the mean residual busy time B
is the mean age (now − started_at) of the residents of up to `sample_servers` servers taken at
even strides over the servers with residents (at least `min_residual_s`); CT_a = 0.95 × a
completion target's seconds (Paragon's optimum: QoS = 95 % of it), else `ct_factor` × B, clipped
to [`min_ct_s`, `max_ct_s`]. Busy slots m = the residents of the servers that could serve w.

The outcome's detail has the class, the quality, the pools, ρ on cores (`stability.core_load`;
≥ 1 adds the trace note `unstable`) and every quantity of Eq. 2, for `explain`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from sextant_contracts.model import CompletionTimeTarget, DecisionTrace

from ..policies import AdmissionOutcome
from ..state.model import ClusterState, WorkloadState
from .availability import Availability, Offer
from .quality import class_of, pools, table_quality, workload_quality
from .queues import class_queues, reserved_from
from .stability import core_load
from .waiting import slack, switch_time

if TYPE_CHECKING:
    from ..context import DecisionContext

QUEUEING_KINDS = frozenset({"batch"})


@dataclass(frozen=True, slots=True)
class ArqParams:
    quality_exponent: float = 4.0
    ct_factor: float = 1.5
    min_ct_s: float = 60.0
    max_ct_s: float = 86400.0
    min_residual_s: float = 60.0
    sample_servers: int = 32
    grid_points: int = 64
    class_fifo: bool = True  # False: a workload its own pool (or a bypass) serves now passes the queue


class ArqAdmission:
    def __init__(self, availability: Availability, params: ArqParams | None = None) -> None:
        self.availability = availability
        self.params = params or ArqParams()

    def admit(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> AdmissionOutcome:
        q_w = workload_quality(w.classification)
        cls = class_of(q_w)
        queues = class_queues(state)
        mine = queues[cls]
        position = mine.index(w.workload_id) if w.workload_id in mine else len(mine)
        detail: dict[str, Any] = {"class": cls, "quality": round(q_w, 6), "position": position}
        if w.kind.value not in QUEUEING_KINDS or w.best_effort:
            return self._admit(cls, "not_queued_kind", detail)
        if position > 0 and self.params.class_fifo:
            return self._behind(state, mine, cls, position, detail)
        offer = self.availability.offer(state, w, ctx.at, ctx.seed)
        quality = table_quality(offer.table)
        meets = offer.meets if offer.meets is not None else offer.eligible & (offer.ratio >= 1.0)
        pool = pools(quality[meets])  # the pools of the servers that meet (element-wise: the same values)
        above = reserved_from(queues, cls)
        detail.update(reserved_from=above, meets=int(np.count_nonzero(meets)),
                      eligible=int(np.count_nonzero(offer.eligible)))
        notes = ("past_queue",) if position > 0 else ()
        if (pool == cls).any():
            return self._admit(cls, "own_pool", detail, notes)
        if ((pool > cls) & (pool < above)).any():
            return self._admit(cls, "bypass_up", detail, notes)
        if (pool < cls).any():
            return self._admit(cls, "bypass_down", detail, notes)
        if position > 0:  # it would wait: it waits its turn behind its class
            return self._behind(state, mine, cls, position, detail)
        return self._eq2(state, w, cls, position, offer, pools(quality) < above, detail, ctx.at)

    def _behind(self, state: ClusterState, mine: tuple[str, ...], cls: int, position: int,
                detail: dict[str, Any]) -> AdmissionOutcome:
        head = state.workloads.get(mine[0])
        ahead = (head.expected_wait_s or 0.0) if head is not None else 0.0
        return self._queue(cls, position, ahead * (position + 1), "behind_in_class", detail)

    # --- Eq. 2 ----------------------------------------------------------------------------------

    def _eq2(self, state: ClusterState, w: WorkloadState, cls: int, position: int, offer: Offer,
             allowed: Any, detail: dict[str, Any], at: float) -> AdmissionOutcome:
        p = self.params
        t = offer.table
        residual = self.mean_residual(state, offer, at)
        ct = self.compute_time(w, residual)
        s_a = slack(ct, max(at - w.submitted_at, 0.0))
        best = offer.eligible & allowed
        q_other = float(np.clip(offer.ratio[best], 0.0, 1.0).max()) ** p.quality_exponent if best.any() else 0.0
        busy = int(t.residents[offer.could_serve].sum())
        dec = switch_time(s_a, 1.0, q_other, busy, residual, p.grid_points)
        waiting = sum(self._cores(state, x) for x in state.queued) + sum(self._cores(state, x) for x in state.deferred)
        used = float((t.cap_cores - t.free_cores)[t.schedulable].sum())
        rho = core_load(used, waiting, float(t.cap_cores[t.schedulable].sum()))
        detail.update(ct_s=round(ct, 3), slack_s=round(s_a, 3), mean_residual_s=round(residual, 3), busy=busy,
                      q_other=round(q_other, 6), switch_at_s=round(dec.switch_at_s, 3),
                      value_wait=round(dec.value_wait, 6), value_switch=round(dec.value_switch, 6),
                      rho=round(rho, 6) if math.isfinite(rho) else None)
        notes = ("unstable",) if rho >= 1.0 else ()
        if dec.wait:
            return self._queue(cls, position, dec.expected_wait_s, "waiting_for_pool", detail, notes)
        reason = "slack_exhausted" if s_a <= 0 else ("no_capacity" if busy == 0 else "diverted_down")
        return self._admit(cls, reason, detail, notes)

    def mean_residual(self, state: ClusterState, offer: Offer, at: float) -> float:
        """B: the mean age of the residents of a strided sample of busy servers (see docstring)."""
        t = offer.table
        busy_rows = np.flatnonzero(t.residents > 0)
        if len(busy_rows) == 0:
            return self.params.min_residual_s
        k = min(self.params.sample_servers, len(busy_rows))
        picks = busy_rows[np.linspace(0, len(busy_rows) - 1, k).astype(np.int64)]
        ages = []
        for r in picks:
            s = state.servers.get(t.server_ids[int(r)])
            for rid in s.residents if s is not None else ():
                x = state.workloads.get(rid)
                if x is not None and x.started_at is not None:
                    ages.append(max(at - x.started_at, 0.0))
        mean = math.fsum(ages) / len(ages) if ages else 0.0
        return max(mean, self.params.min_residual_s)

    def compute_time(self, w: WorkloadState, residual: float) -> float:
        p = self.params
        ct = 0.95 * w.target.seconds if isinstance(w.target, CompletionTimeTarget) else p.ct_factor * residual
        return float(min(max(ct, p.min_ct_s), p.max_ct_s))

    @staticmethod
    def _cores(state: ClusterState, wid: str) -> int:
        x = state.workloads.get(wid)
        return (x.requested_cores or 1) if x is not None else 0

    # --- outcomes -------------------------------------------------------------------------------

    @staticmethod
    def _admit(cls: int, reason: str, detail: dict[str, Any], notes: tuple[str, ...] = ()) -> AdmissionOutcome:
        return AdmissionOutcome(admitted=True, arq_class=cls, reason=reason,
                                trace=DecisionTrace(notes=(reason, *notes)), detail={**detail, "reason": reason})

    @staticmethod
    def _queue(cls: int, position: int, wait: float, reason: str, detail: dict[str, Any],
               notes: tuple[str, ...] = ()) -> AdmissionOutcome:
        return AdmissionOutcome(admitted=False, arq_class=cls, position=position, expected_wait_s=round(wait, 3),
                                reason=reason, trace=DecisionTrace(notes=(reason, *notes)),
                                detail={**detail, "reason": reason})
