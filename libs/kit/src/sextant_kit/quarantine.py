"""Quarantine: a record whose handling keeps raising is set aside, never a poison pill.

A consumer that cannot handle a record (its handler raised on every attempt; not a transient
outage, which is waited out) appends `RecordQuarantined` — naming the record, its type, the
consumer and the error — tracked under the record's id in the same transaction, so the record is
never handled again and the consumer goes on with the next one. A record from Kafka also goes to
the dead-letter topic with `dlq_reason=quarantined`. When the record names a workload, the fold
fails that workload with reason `quarantined` (`sextant_core.state.evolve`), and the process
manager tells the agent to stop it.

Deliberate refusals are not quarantines: `PoisonMessage` (an invalid submission, an unknown type)
is dead-lettered with its own documented reason and records nothing. Nor is a log a decider cannot
fold (`errors.LogUnfoldable`, transient): no record is to blame, so the consumer waits.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_contracts.ids import derive_id

REASON = "quarantined"


def workload_of(payload: Mapping[str, Any] | None) -> str | None:
    """The workload a record's payload names (`workload_id`), None when it names none."""
    wid = (payload or {}).get("workload_id")
    return wid if isinstance(wid, str) and wid else None


def quarantine(consumer: str, record_id: str, record_type: str, workload_id: str | None, exc: BaseException,
               *, at: float, causation_id: str | None = None, correlation_id: str | None = None,
               traceparent: str | None = None) -> Envelope:
    """The `RecordQuarantined` envelope of a record `consumer` could not handle (a derived id: a
    second quarantine of the same record by the same consumer is the same event)."""
    event = ev.RecordQuarantined(at=at, consumer=consumer, record_id=record_id[:256], record_type=record_type[:128],
                                 workload_id=workload_id, error=f"{type(exc).__name__}: {exc}"[:2000])
    return Envelope.wrap(event, id=derive_id("quarantine", consumer, record_id), source=consumer, stream_version=0,
                         time=at, causation_id=causation_id, correlation_id=correlation_id or event.stream,
                         traceparent=traceparent)
