"""The admission service's handlers.

- `submit(...)`: the edge of the system. It validates a `SubmitWorkload` command, mints the
  workload id (once — the log records it), and appends `WorkloadSubmitted` with its outbox row in
  one transaction, tracked under the idempotency key so a retried request records nothing twice.
- the decider for `admission`: ARQ admission after classification (`AdmitWorkload`), decided by the
  core with the policy set named by `SEXTANT_POLICY_PROFILE`.
"""

from __future__ import annotations

import time
import uuid

from sextant_contracts import events as ev
from sextant_contracts.commands import SubmitWorkload
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id
from sextant_core.domain.lifecycle import TERMINAL
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


class NotFound(LookupError):
    pass


class Conflict(RuntimeError):
    pass


async def revoke(store: EventStore, state: ClusterState, workload_id: str, reason: str = "revoked by owner",
                 *, now: float | None = None, attempts: int = 3) -> None:
    """Record `WorkloadRevoked` for a live workload; its resources are released by the fold and
    the agent stops it. Optimistic concurrency on the workload's stream: a racing event makes us
    re-check (a workload that ended meanwhile is a `Conflict`)."""
    w = state.workloads.get(workload_id)
    if w is None:
        raise NotFound(workload_id)
    if w.phase in TERMINAL:
        raise Conflict(f"workload is already {w.phase.value}")
    for _ in range(attempts):
        version = await store.stream_version(f"workload-{workload_id}")
        at = time.time() if now is None else now
        env = Envelope.wrap(ev.WorkloadRevoked(at=at, workload_id=workload_id, reason=reason),
                            id=derive_id("revoke", workload_id, version), source=SERVICE,
                            stream_version=version + 1, time=at, traceparent=current_traceparent())
        try:
            await store.append(env.stream, version, [env])
            return
        except ConcurrencyError:
            continue
    raise Conflict("the workload keeps changing; retry")
