"""The admission service's handlers.

- `submit(...)`: the edge of the system. It validates a `SubmitWorkload` command, mints the
  workload id (once — the log records it), and appends `WorkloadSubmitted` with its outbox row in
  one transaction, tracked under the idempotency key so a retried request records nothing twice.
- `update_target(...)`: `TargetUpdated` on a live workload (the process manager then asks the
  planner to re-plan it, `PlaceWorkload(reason="target_updated")`).
- `first_submission(...)` / `same_submission(...)`: what an idempotency key already recorded, so a
  replay with the same body returns the first result and one with another body is refused.
- `check_quota(...)`: a tenant's active-workload and core quotas against the folded state.
- the decider for `admission`: ARQ admission after classification (`AdmitWorkload`), decided by the
  core with the policy set named by `SEXTANT_POLICY_PROFILE`.

Errors are a small tree (`AdmissionError`) translated to HTTP only in `api.py` (and to dead-letter
reasons in `frontdoor.py`).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Protocol

from sextant_contracts import events as ev
from sextant_contracts.commands import SubmitWorkload
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id
from sextant_contracts.model import PerformanceTarget
from sextant_core.domain.lifecycle import HOLDING, TERMINAL
from sextant_core.profiles import policy_set
from sextant_core.state.model import ClusterState
from sextant_core.workflow import Decider
from sextant_kit.errors import ConcurrencyError
from sextant_kit.ports import EventStore, TrackingRecorder
from sextant_kit.telemetry import current_traceparent

from .settings import Settings

SERVICE = "admission"
API_CONSUMER = "admission-api"


def make_decider(settings: Settings) -> Decider:
    return Decider(SERVICE, policy_set(settings.policy_profile))


def submitted_event(command: SubmitWorkload, at: float) -> ev.WorkloadSubmitted:
    return ev.WorkloadSubmitted(at=at, **command.model_dump())


async def submit(store: TrackingRecorder, command: SubmitWorkload, *, idempotency_key: str | None = None,
                 now: float | None = None) -> tuple[str, bool]:
    """Record the submission; returns (workload id, created). A replayed idempotency key returns
    the first workload's id and `created=False`."""
    at = time.time() if now is None else now
    key = idempotency_key or uuid.uuid4().hex
    event = submitted_event(command, at)
    env = Envelope.wrap(event, id=derive_id("submit", command.tenant, key), source=SERVICE, stream_version=0,
                        time=at, traceparent=current_traceparent(), correlation_id=command.workload_id)
    stored = await store.append_and_track(API_CONSUMER, f"{command.tenant}:{key}", None, [env])
    return command.workload_id, stored is not None


def new_workload_id(tenant: str, idempotency_key: str | None = None) -> str:
    """Minted at the edge, once per submission (DESIGN §5). With an idempotency key the id is
    derived from (tenant, key), so a retried request names the same workload."""
    if idempotency_key:
        return derive_id("workload", tenant, idempotency_key)
    return uuid.uuid4().hex


class AdmissionError(Exception):
    pass


class NotFound(AdmissionError, LookupError):
    pass


class Conflict(AdmissionError):
    pass


class KeyReused(AdmissionError):
    """An idempotency key already names a submission with another body."""


class QuotaExceeded(AdmissionError):
    pass


async def first_submission(store: EventStore, workload_id: str) -> ev.WorkloadSubmitted | None:
    """The `WorkloadSubmitted` that created `workload_id`, if any."""
    head = await store.read_stream(f"workload-{workload_id}", 0, 1)
    if not head:
        return None
    e = head[0].event()
    return e if isinstance(e, ev.WorkloadSubmitted) else None


def same_submission(first: ev.WorkloadSubmitted, command: SubmitWorkload) -> bool:
    """Does `command` ask for what `first` recorded (the key's first body)?"""
    recorded = first.model_dump(include=set(SubmitWorkload.model_fields))
    return recorded == command.model_dump()


class Store(EventStore, TrackingRecorder, Protocol):
    """The event store with tracking (PostgreSQL in the service, memory in unit tests)."""


async def submit_once(store: Store, command: SubmitWorkload, key: str | None,
                      *, now: float | None = None) -> tuple[str, bool]:
    """`submit`, honouring the idempotency key: a replay with the same body returns the first
    workload (created=False); another body under the same key raises `KeyReused`."""
    if key:
        first = await first_submission(store, command.workload_id)
        if first is not None:
            if not same_submission(first, command):
                raise KeyReused(key)
            return command.workload_id, False
    wid, created = await submit(store, command, idempotency_key=key, now=now)
    if not created and key:  # a concurrent request with the same key won: same check
        first = await first_submission(store, wid)
        if first is not None and not same_submission(first, command):
            raise KeyReused(key)
    return wid, created


def check_quota(state: ClusterState, tenant: str, *, max_active: int | None, max_cores: int | None,
                requested_cores: int | None) -> None:
    """Refuse a new workload of `tenant` over its quota: `max_active` live workloads, or
    `max_cores` cores held by its placed and running workloads (plus the cores this one asks
    for, when it names them). Raises `QuotaExceeded`."""
    if max_active is None and max_cores is None:
        return
    mine = [w for w in state.workloads.values() if w.tenant == tenant and w.phase not in TERMINAL]
    if max_active is not None and len(mine) >= max_active:
        raise QuotaExceeded(f"tenant {tenant!r} has {len(mine)} active workloads; its quota is {max_active}")
    if max_cores is not None:
        held = sum(w.allocation.total_cores for w in mine if w.phase in HOLDING and w.allocation is not None)
        if held + (requested_cores or 0) > max_cores:
            raise QuotaExceeded(f"tenant {tenant!r} holds {held} cores (+{requested_cores or 0} asked); "
                                f"its quota is {max_cores}")


def live_workload(state: ClusterState, workload_id: str, tenant: str | None) -> None:
    """Raise `NotFound` unless `workload_id` exists and belongs to `tenant` (None: any tenant) —
    another tenant's workload is indistinguishable from a missing one; `Conflict` if it ended."""
    w = state.workloads.get(workload_id)
    if w is None or (tenant is not None and w.tenant != tenant):
        raise NotFound(workload_id)
    if w.phase in TERMINAL:
        raise Conflict(f"workload is already {w.phase.value}")


async def update_target(store: EventStore, state: ClusterState, workload_id: str, target: PerformanceTarget,
                        *, now: float | None = None, attempts: int = 3) -> None:
    """Record `TargetUpdated` for a live workload (optimistic concurrency on its stream, as
    `revoke`); the process manager re-plans it."""
    live_workload(state, workload_id, None)
    await _append_to_workload(store, workload_id, "target",
                              lambda at: ev.TargetUpdated(at=at, workload_id=workload_id, target=target),
                              now=now, attempts=attempts)


async def _append_to_workload(store: EventStore, workload_id: str, what: str,
                              make: Callable[[float], ev.WorkloadEvent], *, now: float | None,
                              attempts: int) -> None:
    for _ in range(attempts):
        version = await store.stream_version(f"workload-{workload_id}")
        at = time.time() if now is None else now
        env = Envelope.wrap(make(at), id=derive_id(what, workload_id, version), source=SERVICE,
                            stream_version=version + 1, time=at, traceparent=current_traceparent())
        try:
            await store.append(env.stream, version, [env])
            return
        except ConcurrencyError:
            continue
    raise Conflict("the workload keeps changing; retry")


async def revoke(store: EventStore, state: ClusterState, workload_id: str, reason: str = "revoked by owner",
                 *, now: float | None = None, attempts: int = 3) -> None:
    """Record `WorkloadRevoked` for a live workload; its resources are released by the fold and
    the agent stops it. Optimistic concurrency on the workload's stream: a racing event makes us
    re-check (a workload that ended meanwhile is a `Conflict`)."""
    live_workload(state, workload_id, None)
    await _append_to_workload(store, workload_id, "revoke",
                              lambda at: ev.WorkloadRevoked(at=at, workload_id=workload_id, reason=reason),
                              now=now, attempts=attempts)
