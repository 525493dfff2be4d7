"""The reservation plan (Morpheus §6; spec §3.4, §3.6): time-indexed cores and memory over one
cyclic LCM window (one day of one-minute steps by default), on top of the capacity ledger.

- A *periodic* reservation (period P dividing the window) repeats one LowCost allocation at the
  same offset in every period of the window: one ledger claim (`ClaimKind.PERIODIC`) holds all
  its instances. Its [earliest, deadline) is in period coordinates and spans at most one period.
- A *non-periodic* reservation (an off-kilter period such as 58 min, a period longer than the
  window, an ad-hoc job) is one instance at window steps [earliest, deadline), planned with the
  same LowCost on the residual (`ClaimKind.NON_PERIODIC`): it sees periodic load and the other
  non-periodic load, while periodic jobs ignore it.
- Adding a periodic reservation never moves another periodic one; if it displaces non-periodic
  reservations (ledger rule 3) they are re-planned on the new residual, oldest first; one that no
  longer fits is dropped and reported (`PlanUpdate.dropped`).
- An override (a user's change to a contract, a re-inferred skyline) re-plans that reservation
  alone, all or nothing: `Unplaceable` leaves the plan you had.
- Extensions (DRA, `recurring/dra.py`) are extra ledger claims of one instance, released with
  the instance (`end_instance`) or the reservation.
- QoS placements (`hold`) are open-ended guarantees over the whole window that must fit in what
  every reservation leaves (`recurring/placements.py`).

The plan is immutable; every change returns a new one. `canonical()` is its byte-exact form (the
determinism tests compare it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace

import immutables
import numpy as np

from .ledger import CapacityLedger, Claim, ClaimKind, LedgerError, Tier
from .lowcost import Allocation, Job, LowCostParams, place


class PlanError(LedgerError):
    """A plan operation was refused; the plan it was called on is unchanged."""


class Unplaceable(PlanError):
    """No allocation of the reservation fits in [earliest, deadline) with the capacity left."""


@dataclass(frozen=True)
class ReservationRequest:
    """A reservation to plan. `skyline`: containers per step (the LP's R*); `period`: steps
    (None: one non-periodic instance); [earliest, deadline): steps, in period coordinates for a
    periodic reservation, window steps otherwise; a container is `cores` × `memory_gb`."""

    reservation_id: str
    skyline: tuple[int, ...]
    earliest: int
    deadline: int
    period: int | None = None
    cores: float = 1.0
    memory_gb: float = 8.0
    gang: int = 1


@dataclass(frozen=True)
class Reservation:
    request: ReservationRequest
    allocation: Allocation
    periodic: bool
    period: int  # steps between instances (the window for a non-periodic reservation)


@dataclass(frozen=True)
class PlanUpdate:
    plan: Plan
    reservation: Reservation | None
    replanned: tuple[Reservation, ...] = ()
    dropped: tuple[str, ...] = ()


@dataclass(frozen=True, eq=False)
class Plan:
    ledger: CapacityLedger
    reservations: immutables.Map[str, Reservation]
    extensions: immutables.Map[str, tuple[str, ...]]  # reservation id -> extension claim ids
    params: LowCostParams = LowCostParams()
    step_seconds: int = 60
    # derived from the extension claims, kept so that `reserved` and `extension_area` cost O(1)
    # per claim rather than a pass over every claim (DRA asks them every minute for every instance)
    extension_load: immutables.Map[str, np.ndarray] = field(default_factory=immutables.Map)  # rid -> (W,) containers
    extension_size: immutables.Map[str, int] = field(default_factory=immutables.Map)  # claim id -> container-steps

    @staticmethod
    def create(cores: float | np.ndarray, memory_gb: float | np.ndarray, steps: int = 1440, step_seconds: int = 60,
               params: LowCostParams = LowCostParams()) -> Plan:
        return Plan(CapacityLedger.create(cores, memory_gb, steps), immutables.Map(), immutables.Map(), params,
                    step_seconds)

    @property
    def window(self) -> int:
        return self.ledger.steps

    def is_periodic(self, request: ReservationRequest) -> bool:
        p = request.period
        return p is not None and 0 < p <= self.window and self.window % p == 0

    def get(self, reservation_id: str) -> Reservation:
        try:
            return self.reservations[reservation_id]
        except KeyError:
            raise PlanError(f"no reservation {reservation_id!r}") from None

    def add(self, request: ReservationRequest) -> PlanUpdate:
        """Plan a new reservation with LowCost (module doc); raises `Unplaceable` or `PlanError`."""
        if request.reservation_id in self.reservations:
            raise PlanError(f"reservation {request.reservation_id!r} already exists")
        res = self._place(request)
        update = self.ledger.claim(self._claim(res))
        plan = replace(self, ledger=update.ledger, reservations=self.reservations.set(request.reservation_id, res))
        return plan._replan(res, update.displaced)

    def override(self, request: ReservationRequest) -> PlanUpdate:
        """Re-plan an existing reservation from a changed request, all or nothing."""
        old = self.get(request.reservation_id)
        base = self._drop_extensions(request.reservation_id)
        rest = replace(base, ledger=base.ledger.release(request.reservation_id))
        res = rest._place(request)
        if res.periodic != old.periodic:
            raise PlanError(f"an override cannot turn {request.reservation_id!r} periodic or non-periodic")
        update = base.ledger.replace(request.reservation_id, self._claim(res))
        plan = replace(base, ledger=update.ledger, reservations=base.reservations.set(request.reservation_id, res))
        return plan._replan(res, update.displaced)

    def adopt(self, request: ReservationRequest, allocation: Allocation) -> Plan:
        """Claim a reservation decided earlier (an allocation read back from the log) as it was,
        without re-planning it; raises `ClaimInfeasible` (nothing changed) when it no longer fits
        and `PlanError` when it is already there. Displaced residual claims are re-planned."""
        if request.reservation_id in self.reservations:
            raise PlanError(f"reservation {request.reservation_id!r} already exists")
        periodic = self.is_periodic(request)
        period = int(request.period) if periodic and request.period else self.window
        res = Reservation(request, allocation, periodic, period)
        update = self.ledger.claim(self._claim(res))
        plan = replace(self, ledger=update.ledger, reservations=self.reservations.set(request.reservation_id, res))
        return plan._replan(res, update.displaced).plan

    def hold(self, claim_id: str, cores: float | np.ndarray, memory_gb: float | np.ndarray,
             kind: ClaimKind = ClaimKind.PLACEMENT, steps: np.ndarray | None = None) -> Plan:
        """Claim `cores` and `memory_gb` at every step of the window for a QoS placement (it is
        open-ended) or its reissue load (`ClaimKind.REISSUE`), or at window `steps` (unique; amounts
        per step or one) for a Corral rack plan (`ClaimKind.RACK_PLAN`): it must fit in what every claim leaves, so a
        placement displaces no non-periodic reservation [choice: a placement decision re-plans no
        reservation]; raises `ClaimInfeasible` (nothing changed) when it does not fit."""
        at = np.arange(self.window) if steps is None else steps
        claim = Claim.of(claim_id, kind, at, cores, memory_gb, owner=claim_id)
        return replace(self, ledger=self.ledger.claim(claim, within=Tier.RESIDUAL).ledger)

    def remove(self, reservation_id: str) -> Plan:
        self.get(reservation_id)
        base = self._drop_extensions(reservation_id)
        return replace(base, ledger=base.ledger.release(reservation_id),
                       reservations=base.reservations.delete(reservation_id))

    def instance_steps(self, reservation_id: str) -> tuple[np.ndarray, np.ndarray]:
        """(window steps, containers) of every instance of the reservation in the window."""
        r = self.get(reservation_id)
        return _footprint(r, self.window)

    def reserved(self, reservation_id: str, step: int) -> int:
        """Containers the reservation holds at window `step`, its extensions included."""
        r = self.get(reservation_id)
        at = step % self.window
        # one instance per period, each at most a period long: step `at` meets at most one of its steps
        j = (at - r.allocation.offset) % r.period
        total = r.allocation.containers[j] if j < len(r.allocation.containers) else 0
        ext = self.extension_load.get(reservation_id)
        return int(total) + (0 if ext is None else int(ext[at]))

    def extend(self, reservation_id: str, claim_id: str, steps: np.ndarray, containers: int) -> Plan:
        """Add `containers` to one instance at window `steps` (a DRA extension); raises
        `ClaimInfeasible` (nothing changed) when the plan has no room."""
        r = self.get(reservation_id)
        claim = Claim.of(claim_id, ClaimKind.EXTENSION, np.asarray(steps) % self.window,
                         containers * r.request.cores, containers * r.request.memory_gb, owner=reservation_id)
        update = self.ledger.claim(claim)
        ext = self.extensions.set(reservation_id, (*self.extensions.get(reservation_id, ()), claim_id))
        load = np.array(self.extension_load.get(reservation_id, np.zeros(self.window, dtype=np.int64)))
        np.add.at(load, np.asarray(steps) % self.window, containers)
        load.setflags(write=False)
        plan = replace(self, ledger=update.ledger, extensions=ext,
                       extension_load=self.extension_load.set(reservation_id, load),
                       extension_size=self.extension_size.set(claim_id, containers * int(np.asarray(steps).size)))
        return plan._replan(None, update.displaced).plan

    def extension_area(self, reservation_id: str, prefix: str) -> int:
        """Extra container-steps held by the extensions whose claim id starts with `prefix`."""
        self.get(reservation_id)
        return sum(self.extension_size[c] for c in self.extensions.get(reservation_id, ()) if c.startswith(prefix))

    def end_instance(self, reservation_id: str, prefix: str) -> Plan:
        """Release the extensions whose claim id starts with `prefix` (one finished instance)."""
        ids = self.extensions.get(reservation_id, ())
        gone = [c for c in ids if c.startswith(prefix)]
        if not gone:
            return self
        keep = tuple(c for c in ids if not c.startswith(prefix))
        r = self.get(reservation_id)
        axis, size = (0, r.request.cores) if r.request.cores > 0 else (1, r.request.memory_gb)
        load = np.array(self.extension_load[reservation_id])
        sizes = self.extension_size.mutate()
        for c in gone:
            claim = self.ledger.claims[c]
            load[claim.steps] -= np.round(claim.amount[axis] / size).astype(np.int64)
            del sizes[c]
        load.setflags(write=False)
        return replace(self, ledger=self.ledger.release_all(gone), extensions=self.extensions.set(reservation_id, keep),
                       extension_load=self.extension_load.set(reservation_id, load), extension_size=sizes.finish())

    def canonical(self) -> bytes:
        """Byte-exact form: reservations sorted by id with offsets and containers, and the ledger digest."""
        body = {rid: [r.allocation.offset, list(r.allocation.containers), r.period, r.periodic]
                for rid, r in sorted(self.reservations.items())}
        return json.dumps({"reservations": body, "ledger": self.ledger.digest()}, sort_keys=True,
                          separators=(",", ":")).encode()

    # --- internals ---------------------------------------------------------------------------

    def _place(self, request: ReservationRequest) -> Reservation:
        if not request.skyline or min(request.skyline) < 0 or sum(request.skyline) == 0:
            raise PlanError(f"reservation {request.reservation_id!r} has an empty or negative skyline")
        if request.cores < 0 or request.memory_gb < 0 or request.cores + request.memory_gb <= 0 or request.gang < 1:
            raise PlanError(f"reservation {request.reservation_id!r} has a malformed container or gang")
        periodic = self.is_periodic(request)
        period = int(request.period) if periodic and request.period else self.window
        if not 0 <= request.earliest < request.deadline <= request.earliest + period:
            raise PlanError(f"reservation {request.reservation_id!r}: [earliest, deadline) must be a non-empty "
                            f"range of at most one period ({period} steps)")
        if not periodic and request.deadline > self.window:
            raise PlanError(f"reservation {request.reservation_id!r}: a non-periodic instance must end in the window")
        tier = Tier.GUARANTEE if periodic else Tier.RESIDUAL
        job = Job(request.skyline, request.earliest, request.deadline, period, request.cores, request.memory_gb,
                  request.gang)
        alloc = place(self.ledger.used(tier), self.ledger.capacity, job, self.params)
        if alloc is None:
            raise Unplaceable(f"reservation {request.reservation_id!r} does not fit in [{request.earliest}, "
                              f"{request.deadline}) with the capacity left")
        return Reservation(request, alloc, periodic, period)

    def _claim(self, r: Reservation) -> Claim:
        steps, containers = _footprint(r, self.window)
        kind = ClaimKind.PERIODIC if r.periodic else ClaimKind.NON_PERIODIC
        return Claim.of(r.request.reservation_id, kind, steps, containers * r.request.cores,
                        containers * r.request.memory_gb, owner=r.request.reservation_id)

    def _drop_extensions(self, reservation_id: str) -> Plan:
        ids = self.extensions.get(reservation_id, ())
        if not ids:
            return self
        sizes = self.extension_size.mutate()
        for c in ids:
            del sizes[c]
        return replace(self, ledger=self.ledger.release_all(ids), extensions=self.extensions.delete(reservation_id),
                       extension_load=self.extension_load.delete(reservation_id), extension_size=sizes.finish())

    def _replan(self, res: Reservation | None, displaced: tuple[Claim, ...]) -> PlanUpdate:
        plan, replanned, dropped = self, [], []
        for c in sorted(displaced, key=lambda c: c.seq):
            old = plan.reservations[c.claim_id]
            plan = replace(plan, reservations=plan.reservations.delete(c.claim_id))
            try:
                again = plan._place(old.request)
                plan = replace(plan, ledger=plan.ledger.claim(plan._claim(again)).ledger,
                               reservations=plan.reservations.set(c.claim_id, again))
                replanned.append(again)
            except LedgerError:
                dropped.append(c.claim_id)
        return PlanUpdate(plan, res, tuple(replanned), tuple(dropped))


def _footprint(r: Reservation, window: int) -> tuple[np.ndarray, np.ndarray]:
    a = r.allocation
    rel = a.offset + np.arange(len(a.containers))
    reps = window // r.period if r.periodic else 1
    steps = (rel[None, :] + r.period * np.arange(reps)[:, None]).ravel() % window
    return steps, np.tile(np.asarray(a.containers, dtype=np.float64), reps)

