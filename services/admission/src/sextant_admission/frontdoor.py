"""The Kafka front door (docs/api/README.md, docs/api/asyncapi.yaml).

**In: `sextant.submissions`.** Integrations publish a `SubmitWorkload` as a CloudEvent in binary
mode: headers `ce_specversion=1.0`, `ce_type=SubmitWorkload`, `ce_id` (the submission's unique id —
it plays the role of the REST Idempotency-Key), `ce_source`, `ce_time`, `ce_subject` (any, e.g.
the integration's job id), and `authorization: Bearer <tenant token>`; the value is the JSON body
of `POST /v1/workloads`. The workload id is derived from (tenant, ce_id), exactly as the REST API
derives it from (tenant, Idempotency-Key), so a resent message names the same workload. A message
whose `ce_id` this consumer already accepted is a duplicate (CloudEvents: source + id identify an
event) and is skipped like a redelivery, whatever its body.

The consumer (`admission-submissions`) is the kit's `ConsumerLoop`: the accepted submission's
`WorkloadSubmitted` is appended with the tracking row in one transaction (a redelivery is skipped).
A message that cannot be accepted — undecodable, another `ce_type`, missing/unknown/revoked token,
invalid body (a non-finite number included: `Infinity`, `NaN`, `1e400`), another tenant named, a `ce_id` the REST API already used (as an Idempotency-Key)
with another body, over quota — is
dead-lettered to `sextant.dlq` with `dlq_reason` (one of `REASONS`) and `dlq_error` (the detail),
a `SubmissionRejected` notice is published on `sextant.decisions`, and the loop goes on.

**Out: `sextant.decisions`.** The `admission-decisions` consumer forwards the public events of
every workload (`PUBLIC`) from `sextant.events.workloads`, unchanged (same `ce_id`, payload and
CloudEvents headers) plus a `sextant_tenant` header, keyed by workload id (per-workload order).
Delivery is at least once: consumers deduplicate on `ce_id`. The submission's `ce_id` is the
`ce_causationid` of its `WorkloadSubmitted`, so an integration can match its messages to outcomes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError
from sextant_contracts import codec
from sextant_contracts.commands import SubmitWorkload
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id
from sextant_contracts.topics import DECISIONS, SUBMISSIONS, WORKLOAD_EVENTS
from sextant_core.workflow import Decider
from sextant_kit.bootstrap import Runtime, with_patience
from sextant_kit.consumer import ConsumerLoop, Outputs
from sextant_kit.errors import PoisonMessage
from sextant_kit.ports import EventStore, Publisher, Record, RecordSource
from sextant_kit.problems import non_finite_errors, validation_errors
from sextant_kit.runtime import read_ends
from sextant_kit.telemetry import current_traceparent

from .auth import Gatekeeper, Unauthenticated, bearer
from .handlers import (
    SERVICE,
    QuotaExceeded,
    check_quota,
    first_submission,
    new_workload_id,
    same_submission,
    submitted_event,
)
from .schemas import WorkloadRequest

log = logging.getLogger(__name__)

SUBMISSIONS_CONSUMER = "admission-submissions"
DECISIONS_CONSUMER = "admission-decisions"
TOKEN_HEADER = "authorization"
REJECTED = "SubmissionRejected"
REASONS = ("undecodable", "unknown-type", "unauthenticated", "invalid", "forbidden-tenant",
           "idempotency-key-reused", "quota-exceeded")
PUBLIC = frozenset({"WorkloadSubmitted", "WorkloadQueued", "WorkloadAdmitted", "PlacementDecided",
                    "PlacementDeferred", "WorkloadStarted", "TargetUpdated", "AllocationAdjusted",
                    "MigrationDecided", "WorkloadCompleted", "WorkloadRevoked", "WorkloadFailed"})


async def catch_up(decider: Decider, store: EventStore, batch: int = 2000) -> None:
    """Fold the log past the decider's position (idempotent: folded positions are skipped), up to
    the head a short read saw (`runtime.read_ends`)."""
    while rows := await store.read_all(decider.position, limit=batch):
        decider.fold(rows)
        if read_ends(rows, batch):
            break


class Refused(PoisonMessage):
    """A submission that is not accepted: `reason` is one of `REASONS`, `detail` says why."""

    def __init__(self, reason: str, detail: str, errors: list[dict[str, Any]] | None = None) -> None:
        super().__init__(reason)
        self.detail = detail
        self.errors = errors or []

    def __str__(self) -> str:
        return self.detail


class HeaderCapture:
    """A `RecordSource` that remembers each fetched record's token header by `ce_id` (the consumer
    loop hands its handler the decoded envelope, which has no room for credentials)."""

    def __init__(self, source: RecordSource) -> None:
        self.source = source
        self.tokens: dict[str, str | None] = {}

    async def fetch(self, timeout: float, max_records: int) -> list[Record]:
        records = await self.source.fetch(timeout, max_records)
        self.tokens = {i: r.header(TOKEN_HEADER) for r in records if (i := r.header("ce_id"))}
        return records

    async def commit(self, offsets: Mapping[tuple[str, int], int]) -> None:
        await self.source.commit(offsets)


class SubmissionHandler:
    def __init__(self, decider: Decider, store: EventStore, gate: Gatekeeper, publisher: Publisher,
                 tokens: HeaderCapture) -> None:
        self.decider = decider
        self.store = store
        self.gate = gate
        self.publisher = publisher
        self.tokens = tokens

    async def __call__(self, env: Envelope) -> Outputs:
        try:
            return await self._accept(env)
        except Refused as exc:
            await self._notify(env, exc)
            raise

    async def _accept(self, env: Envelope) -> Outputs:
        if env.type != SubmitWorkload.TYPE:
            raise Refused("unknown-type", f"ce_type {env.type!r} is not accepted here; send SubmitWorkload")
        try:
            tenant = await self.gate.token_tenant(bearer(self.tokens.tokens.get(env.id)))
        except Unauthenticated as exc:
            raise Refused("unauthenticated", str(exc)) from None
        if errors := non_finite_errors(env.payload):
            raise Refused("invalid", "; ".join(f"{e['path']}: {e['detail']}" for e in errors)[:1000], errors)
        try:
            body = WorkloadRequest.model_validate(env.payload)
        except ValidationError as exc:
            errors = validation_errors([{**e, "loc": ("body", *e["loc"])} for e in exc.errors()], env.payload)
            raise Refused("invalid", "; ".join(f"{e['path']}: {e['detail']}" for e in errors)[:1000],
                          errors) from None
        if body.tenant is not None and body.tenant != tenant.name:
            raise Refused("forbidden-tenant", f"this token may not act for tenant {body.tenant!r}")
        command = SubmitWorkload(workload_id=new_workload_id(tenant.name, env.id),
                                 **{**body.model_dump(), "tenant": tenant.name})
        await catch_up(self.decider, self.store)
        first = await first_submission(self.store, command.workload_id)
        if first is not None:
            if not same_submission(first, command):
                raise Refused("idempotency-key-reused", f"ce_id {env.id!r} was used with another body")
            return Outputs(items=())  # a resent submission: already accepted
        limits = self.gate.limits_of(tenant)
        try:
            check_quota(self.decider.state, tenant.name, max_active=limits.max_active_workloads,
                        max_cores=limits.max_cores, requested_cores=command.requested_cores)
        except QuotaExceeded as exc:
            raise Refused("quota-exceeded", str(exc)) from None
        at = time.time()
        out = Envelope.wrap(submitted_event(command, at), id=derive_id("submit", tenant.name, env.id),
                            source=SERVICE, stream_version=0, time=at, traceparent=current_traceparent(),
                            causation_id=env.id, correlation_id=command.workload_id)
        return Outputs(items=(out,))

    async def _notify(self, env: Envelope, exc: Refused) -> None:
        body = {"submission_id": env.id, "reason": exc.reason, "detail": exc.detail, "errors": exc.errors}
        headers = [("ce_specversion", b"1.0"), ("ce_id", derive_id("rejected", env.id).encode()),
                   ("ce_source", SERVICE.encode()), ("ce_type", REJECTED.encode()),
                   ("ce_time", time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()).encode()),
                   ("ce_subject", env.stream.encode()), ("ce_causationid", env.id.encode()),
                   ("content-type", b"application/json")]
        try:
            await self.publisher.publish(DECISIONS.name, env.stream.encode(), codec.dumpb(body), headers)
        except Exception as err:  # the dead letter still records it
            log.warning("could not publish the rejection of %s: %r", env.id, err)


def forwarded(env: Envelope) -> bool:
    """Whether `DecisionForwarder` re-publishes `env` (it ignores the others: no span, no tracking
    look-up for them in the consumer loop)."""
    return env.type in PUBLIC


class DecisionForwarder:
    """Handler of `admission-decisions`: re-publishes public workload events on the decisions
    topic with the workload's tenant; produces nothing in the log."""

    def __init__(self, decider: Decider, store: EventStore, publisher: Publisher) -> None:
        self.decider = decider
        self.store = store
        self.publisher = publisher

    async def __call__(self, env: Envelope) -> Outputs:
        if not forwarded(env):
            return Outputs(items=())
        if env.position is None or env.position > self.decider.position:
            await catch_up(self.decider, self.store)
        wid = str(env.payload.get("workload_id", ""))
        w = self.decider.state.workloads.get(wid)
        key, value, headers = env.to_kafka()
        headers = [*headers, ("sextant_tenant", (w.tenant if w is not None else "").encode())]
        await self.publisher.publish(DECISIONS.name, wid.encode() or key, value, headers)
        return Outputs(items=())


def frontdoor_tasks(decider: Decider, gate_of: Any) -> list[Any]:
    """`bootstrap.serve` tasks: the submissions consumer and the decisions forwarder.
    `gate_of(runtime)` returns the process's `Gatekeeper`."""

    async def submissions(rt: Runtime, stop: asyncio.Event) -> None:
        source = rt.source(SUBMISSIONS_CONSUMER, [SUBMISSIONS.name])
        await with_patience(f"{SUBMISSIONS_CONSUMER}: kafka consumer", source.start, rt.settings.retry_backoff_s,
                            rt.settings.retry_backoff_max_s, stop)
        capture = HeaderCapture(source)
        handler = SubmissionHandler(decider, rt.store, gate_of(rt), rt.publisher, capture)
        loop = ConsumerLoop(name=SUBMISSIONS_CONSUMER, source=capture, store=rt.store, handler=handler,
                            dead_letters=rt.publisher, output_source=SERVICE,
                            tracer=rt.telemetry.tracer(SUBMISSIONS_CONSUMER))
        rt.consumers[SUBMISSIONS_CONSUMER] = loop
        await loop.run(stop)

    async def decisions(rt: Runtime, stop: asyncio.Event) -> None:
        source = rt.source(DECISIONS_CONSUMER, [WORKLOAD_EVENTS.name])
        await with_patience(f"{DECISIONS_CONSUMER}: kafka consumer", source.start, rt.settings.retry_backoff_s,
                            rt.settings.retry_backoff_max_s, stop)
        loop = ConsumerLoop(name=DECISIONS_CONSUMER, source=source, store=rt.store,
                            handler=DecisionForwarder(decider, rt.store, rt.publisher),
                            dead_letters=rt.publisher, tracer=rt.telemetry.tracer(DECISIONS_CONSUMER),
                            track_empty=False, reacts=forwarded)
        rt.consumers[DECISIONS_CONSUMER] = loop
        await loop.run(stop)

    submissions.__name__ = "submissions"
    decisions.__name__ = "decisions"
    return [submissions, decisions]
