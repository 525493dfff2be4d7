"""The minute-stepped cluster of the Morpheus twin: guaranteed + opportunistic capacity, elastic
jobs with the debt semantics (spec/morpheus.md §3.6, §7).

A job instance is a sequence of phases (`Instances.work` container-minutes at up to
`Instances.par` containers). It becomes runnable at the first whole minute after its start
(`max(submit, input available)`). Each minute, for the running instances:

1. **demand** = min(max parallelism of the current phase, the phase's remaining work) — what the
   job would use now (used + pending containers, the signal DRA reads);
2. **guaranteed** = min(demand, what the policy guarantees it now) — the user's static allocation
   (`UserStatic`), a plan's reservation (`ReservationTable`, with a fallback for jobs that have
   none) or anything else implementing `GuaranteePolicy`; if the guarantees in use exceed the
   cluster they are cut max-min fairly (the baseline's users may promise more than exists);
3. **opportunistic** (unless `opportunistic=False`, the paper's "worst case"): what the
   guarantees leave — unreserved capacity and reserved-but-unused capacity alike — is shared
   max-min fairly (weighted water-filling) between the instances' unmet demand (weight 1 each)
   and the ad-hoc load (`adhoc_weight`), spec §3.6 "redistributed fairly";
4. the allocation a(t) (containers, averaged over the minute) advances the phase's work by a(t).

Debt semantics: a job that gets less than its demand falls behind and its later phases start
later, so it uses the later allocation to catch up — exactly the LP's assumption that a shortfall
is repaid by later capacity, never by earlier surplus. Choices: a phase that completes mid-minute
hands over to the next phase at the next minute (the rest of the minute is lost, identically for
every policy); an instance finishes at the fraction of the minute its last work needed; one not
finished `grace_minutes` after the horizon has `end_s` nan (a miss). Terminal failures
(`succeeded` False) run their part and stop.

`simulate` returns the start, end and (with `record=True`) the used containers of every instance
minute by minute (the telemetry skylines the LP learns from).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from .workload import Instances

EPS = 1e-9


class GuaranteePolicy(Protocol):
    """What each running instance is guaranteed this minute (containers, before min with demand).

    `active` are instance indices, `demand` their demand now; a stateful policy (DRA) may use
    `demand` to extend its reservations. Must return an array shaped like `active`."""

    def guaranteed(self, minute: int, active: np.ndarray, demand: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class UserStatic:
    """The baseline: every instance is guaranteed its user-given static allocation."""

    containers: np.ndarray  # per instance

    def guaranteed(self, minute: int, active: np.ndarray, demand: np.ndarray) -> np.ndarray:
        return np.asarray(self.containers[active])


@dataclass(frozen=True)
class ReservationTable:
    """Periodic reservations, one per template: the plan's skyline `containers[t, k]` at minute
    `offset_min[t] + k` of every period of template t (period starts wall-clock aligned, as the
    SLO extractor's); `has[t]` False = no reservation: the instance gets `fallback`'s guarantee.
    An instance is covered by the reservation of the period it was submitted in, so a late job
    finds part of its reservation gone (that is what reservations do)."""

    containers: np.ndarray  # (T, L) minutes of the reservation
    offset_min: np.ndarray  # (T,) within the period
    has: np.ndarray  # (T,) bool
    period_start_min: np.ndarray  # (I,) per instance
    template: np.ndarray  # (I,)
    fallback: GuaranteePolicy

    def guaranteed(self, minute: int, active: np.ndarray, demand: np.ndarray) -> np.ndarray:
        tm = self.template[active]
        k = minute - self.period_start_min[active] - self.offset_min[tm]
        inside = self.has[tm] & (k >= 0) & (k < self.containers.shape[1])
        res = np.where(inside, self.containers[tm, np.clip(k, 0, self.containers.shape[1] - 1)], 0.0)
        return np.asarray(np.where(self.has[tm], res, self.fallback.guaranteed(minute, active, demand)))


def reservation_table(inst: Instances, period_s: Mapping[int, float],
                      allocations: Mapping[int, tuple[int, Sequence[float]]], templates: int,
                      fallback: GuaranteePolicy) -> ReservationTable:
    """The plug-in point of a plan: `allocations[t] = (offset, containers per minute)` of template
    t's periodic reservation, `offset` in minutes from the start of its period `period_s[t]` (the
    planning side's period coordinates: a LowCost `Allocation`'s offset and containers). Templates
    without one get `fallback`. `templates` is the number of templates (keys 0..templates-1)."""
    width = max((len(c) for _, c in allocations.values()), default=1)
    table = np.zeros((templates, max(width, 1)))
    offset = np.zeros(templates, dtype=np.int64)
    has = np.zeros(templates, dtype=bool)
    for t, (off, cont) in sorted(allocations.items()):
        table[t, :len(cont)] = cont
        offset[t], has[t] = off, True
    per = np.array([period_s.get(int(t), 60.0) for t in inst.template])
    start = (np.floor(inst.submit_s / per) * per / 60.0).astype(np.int64)
    return ReservationTable(table, offset, has, start, inst.template, fallback)


def waterfill(want: np.ndarray, weight: np.ndarray, capacity: float) -> np.ndarray:
    """Weighted max-min fair shares: x_i = min(want_i, weight_i · λ) with Σ x = capacity (or
    x = want when everything fits). `weight` > 0."""
    total = float(want.sum())
    if total <= capacity + EPS:
        return want.copy()
    if capacity <= 0:
        return np.zeros_like(want)
    r = want / weight
    order = np.argsort(r, kind="stable")
    rs, ds, ws = r[order], want[order], weight[order]
    sat = np.cumsum(ds) - ds  # want of the entries below each one
    w_above = ws[::-1].cumsum()[::-1]  # weight of each entry and those above it
    lam = (capacity - sat) / w_above  # level if entries from k upwards are capped by λ
    k = int(np.argmax(lam <= rs))  # first entry whose want is not met at its level
    return np.asarray(np.minimum(want, weight * lam[k]))


@dataclass(frozen=True)
class Outcome:
    start_min: np.ndarray
    end_s: np.ndarray  # nan: not finished
    used_inst: np.ndarray  # telemetry: (instance, minute, containers) rows, if recorded
    used_minute: np.ndarray
    used: np.ndarray
    adhoc_served: np.ndarray  # containers per minute

    def skylines(self, idx: np.ndarray) -> dict[int, np.ndarray]:
        """`skyline` of each instance in `idx` (recorded ones), from one sort of the telemetry."""
        keep = np.isin(self.used_inst, idx)
        inst, minute, used = self.used_inst[keep], self.used_minute[keep], self.used[keep]
        order = np.lexsort((minute, inst))
        inst, minute, used = inst[order], minute[order], used[order]
        cuts = np.flatnonzero(np.diff(inst)) + 1
        out: dict[int, np.ndarray] = {}
        for i_arr, m_arr, u_arr in zip(np.split(inst, cuts), np.split(minute, cuts), np.split(used, cuts),
                                       strict=True):
            if i_arr.size:
                i = int(i_arr[0])
                sky = np.zeros(int(m_arr[-1] - self.start_min[i]) + 1)
                sky[m_arr - self.start_min[i]] = u_arr
                out[i] = sky
        return out

    def skyline(self, i: int) -> np.ndarray:
        """Used containers of instance `i` per minute from its start (empty if not recorded)."""
        rows = self.used_inst == i
        if not rows.any():
            return np.zeros(0)
        out = np.zeros(int(self.used_minute[rows].max()) - int(self.start_min[i]) + 1)
        out[self.used_minute[rows] - self.start_min[i]] = self.used[rows]
        return out


def simulate(inst: Instances, capacity: float, policy: GuaranteePolicy, *, adhoc: np.ndarray | None = None,
             opportunistic: bool = True, adhoc_weight: float = 10.0, horizon_min: int | None = None,
             grace_minutes: int = 1440, record: bool = False, include: np.ndarray | None = None) -> Outcome:
    """Run the instances on a cluster of `capacity` containers (module doc). `include` (a boolean
    mask over the instances) runs only those; the others never start (`end_s` nan)."""
    start_min = np.ceil(inst.start_s / 60.0 - EPS).astype(np.int64)
    order = np.argsort(start_min, kind="stable")
    if include is not None:
        order = order[np.asarray(include, dtype=bool)[order]]
    n = int(order.size)
    last = int(horizon_min if horizon_min is not None else (start_min.max() + 1 if n else 0)) + grace_minutes
    ph = np.zeros(inst.count, dtype=np.int64)
    rem = inst.work[:, 0].copy()
    end_s = np.full(inst.count, np.nan)
    adhoc_arr = np.zeros(last) if adhoc is None else np.pad(adhoc, (0, max(0, last - adhoc.size)))[:last]
    served = np.zeros(last)
    rec_i: list[np.ndarray] = []
    rec_t: list[np.ndarray] = []
    rec_u: list[np.ndarray] = []
    act = np.zeros(0, dtype=np.int64)
    nxt = 0
    sorted_start = start_min[order]
    for t in range(max(int(sorted_start[0]), 0) if n else 0, last):
        hi = nxt + int(np.searchsorted(sorted_start[nxt:], t, side="right"))
        if hi > nxt:
            act = np.concatenate([act, order[nxt:hi]])
            nxt = hi
        if act.size == 0:
            if nxt >= n:
                break
            continue
        demand = np.minimum(inst.par[act, ph[act]], rem[act])
        g = np.minimum(demand, np.maximum(policy.guaranteed(t, act, demand), 0.0))
        if g.sum() > capacity + EPS:
            g = waterfill(g, np.ones_like(g), capacity)
        a = g
        if opportunistic:
            left = max(capacity - float(g.sum()), 0.0)
            want = np.append(demand - g, adhoc_arr[t])
            x = waterfill(want, np.append(np.ones(act.size), adhoc_weight), left)
            a = g + x[:-1]
            served[t] = x[-1]
        if record:
            rec_i.append(act)
            rec_t.append(np.full(act.size, t))
            rec_u.append(a)
        before = rem[act]
        rem[act] = before - a
        fin = rem[act] <= EPS
        if fin.any():
            done_i = act[fin]
            ph[done_i] += 1
            nph = inst.phases[done_i]
            over = ph[done_i] >= nph
            with np.errstate(divide="ignore", invalid="ignore"):
                frac = np.where(a[fin] > 0, before[fin] / a[fin], 1.0)
            end_s[done_i[over]] = (t + np.minimum(frac[over], 1.0)) * 60.0
            going = done_i[~over]
            rem[going] = inst.work[going, ph[going]]
            act = act[~np.isin(act, done_i[over])]
    return Outcome(start_min, end_s, _cat(rec_i, np.int64), _cat(rec_t, np.int64), _cat(rec_u, np.float64), served)


def _cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
    return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype=dtype)
