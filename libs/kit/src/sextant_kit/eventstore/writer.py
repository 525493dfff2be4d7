"""The append transaction body: position assignment, optimistic concurrency, outbox, notify.

**How commit order equals position order.** Global positions come from a one-row counter
(`log_head`), not from a sequence. Inside the append transaction the writer runs
`UPDATE log_head SET position = position + n RETURNING position`; the row lock that UPDATE takes is
held until the transaction ends. A second writer blocks on the same row until the first commits
(or rolls back), and only then reads the advanced counter. Hence:

- positions are handed out in the order transactions commit — PostgreSQL makes a transaction
  visible (ProcArrayEndTransaction) before it releases its locks, so when writer B can read the
  counter, writer A's rows are already visible to every new snapshot;
- a rolled-back append also rolls back its counter increment: positions are contiguous, with no
  gaps at all (a sequence would leave gaps, and a reader could not tell a gap from an in-flight
  transaction).

A reader that has seen position p can therefore resume at "position > p" and never miss an event.

**Cost.** Appends are serialised from the counter update to the commit: one writer at a time holds
the lock for two round trips (counter; versions + events + outbox) and its commit. The commit is
asynchronous (no fsync under the lock); durability is restored after the commit, outside the
lock, by a barrier whose WAL flushes concurrent writers share (`durability.py`). Throughput is
bounded by ~1 / (hold time) transactions per second whatever the number of writers — batching
amortises it (see `bench/eventstore.py` and docs/benchmarks.md). The lock is taken as late as
possible: tracking rows are inserted first (see `tracking.py`).

Stream versions are read under the same lock (by the insert statement itself, whose snapshot is
taken after the lock was granted), so the optimistic-concurrency check cannot race; the unique
constraint (`stream`, `stream_version`) remains as a second line of defence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sextant_contracts import codec
from sextant_contracts.envelope import Envelope
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from .. import outbox
from ..errors import ConcurrencyError, DuplicateEventError, HeadMovedError
from .batches import StreamBatch, number
from .schema import LOG_HEAD_ID, NOTIFY_CHANNEL

# One round trip: takes the log lock, advances the counter, queues the NOTIFY (delivered at
# commit) and makes this transaction's commit asynchronous (see durability.py: the caller runs a
# durability barrier after the commit, outside the lock).
_TAKE_POSITIONS = text("UPDATE log_head SET position = position + :n WHERE id = :id "
                       "RETURNING position, pg_notify(:channel, position::text) IS NULL AS notified, "
                       "set_config('synchronous_commit', 'off', true) AS commit_mode")
# One round trip for the rest: read every stream's current version (this statement's snapshot is
# taken after the lock was granted, so it sees every earlier append), check the expected versions,
# and — only if they all hold — insert the events (version = current + ordinal within the stream)
# and their outbox rows. Returns each stream's version before the insert and whether a check failed.
_INSERT = text("""
WITH cur AS (
  SELECT s.stream, coalesce((SELECT max(e.stream_version) FROM events e WHERE e.stream = s.stream), 0)
         AS version
  FROM unnest(CAST(:streams AS text[])) AS s(stream)
), bad AS (
  SELECT 1 FROM cur
  JOIN unnest(CAST(:x_stream AS text[]), CAST(:x_expected AS integer[])) AS x(stream, expected)
    ON x.stream = cur.stream
  WHERE cur.version <> x.expected
), stored AS (
  INSERT INTO events (position, id, stream, stream_version, type, schema_version, source, time, payload,
                      traceparent, causation_id, correlation_id)
  SELECT u.position, u.id, u.stream, cur.version + u.ordinal, u.type, u.schema_version, u.source, u.time,
         u.payload, u.traceparent, u.causation_id, u.correlation_id
  FROM unnest(CAST(:position AS bigint[]), CAST(:id AS text[]), CAST(:stream AS text[]),
              CAST(:ordinal AS integer[]), CAST(:type AS text[]), CAST(:schema_version AS integer[]),
              CAST(:source AS text[]), CAST(:time AS double precision[]), CAST(:payload AS text[]),
              CAST(:traceparent AS text[]), CAST(:causation_id AS text[]), CAST(:correlation_id AS text[]))
       AS u(position, id, stream, ordinal, type, schema_version, source, time, payload, traceparent,
            causation_id, correlation_id)
  JOIN cur ON cur.stream = u.stream
  WHERE NOT EXISTS (SELECT 1 FROM bad)
  RETURNING position
), queued AS (
  INSERT INTO outbox (position, topic, traceparent)
  SELECT o.position, o.topic, o.traceparent
  FROM unnest(CAST(:o_position AS bigint[]), CAST(:o_topic AS text[]), CAST(:o_traceparent AS text[]))
       AS o(position, topic, traceparent)
  WHERE NOT EXISTS (SELECT 1 FROM bad)
)
SELECT cur.stream, cur.version, EXISTS (SELECT 1 FROM bad) AS conflict FROM cur
""")
_COLUMNS = ("position", "id", "stream", "ordinal", "type", "schema_version", "source", "time",
            "payload", "traceparent", "causation_id", "correlation_id")
_KEY_VALUE = re.compile(r"\(id\)=\((?P<id>[^)]*)\)")


async def write(conn: AsyncConnection, batches: Sequence[StreamBatch],
                topic_of: outbox.TopicResolver, expected_head: int | None = None) -> list[Envelope]:
    """Store `batches` inside the caller's transaction; returns the stored envelopes.

    Must be the LAST thing the transaction does before committing (it takes the log lock).
    With `expected_head`, the log must end at that position when the lock is taken (HeadMovedError
    otherwise). Raises ConcurrencyError / DuplicateEventError / HeadMovedError; the caller's
    transaction must then roll back.
    """
    total = sum(len(b.envelopes) for b in batches)
    if total == 0:
        return []
    for b in batches:  # resolve topics before taking the lock: an unknown stream fails fast
        for env in b.envelopes:
            topic_of(env.stream)
    taken = await conn.execute(_TAKE_POSITIONS, {"n": total, "id": LOG_HEAD_ID, "channel": NOTIFY_CHANNEL})
    head = int(taken.scalar_one())
    position = head - total + 1
    if expected_head is not None and position - 1 != expected_head:
        raise HeadMovedError(expected_head, position - 1)
    ordinals: dict[str, int] = {}
    rows: list[dict[str, object]] = []
    for b in batches:
        for env in b.envelopes:
            ordinals[b.stream] = ordinals.get(b.stream, 0) + 1
            rows.append({"position": position + len(rows), "id": env.id, "stream": b.stream,
                         "ordinal": ordinals[b.stream], "type": env.type,
                         "schema_version": env.schema_version, "source": env.source, "time": env.time,
                         "payload": codec.dumps(env.payload), "traceparent": env.traceparent,
                         "causation_id": env.causation_id, "correlation_id": env.correlation_id})
    pinned = [(b.stream, b.expected) for b in batches if b.expected is not None]
    params: dict[str, list[object]] = {c: [r[c] for r in rows] for c in _COLUMNS}
    params.update(streams=list(ordinals), x_stream=[s for s, _ in pinned], x_expected=[e for _, e in pinned])
    items = [(r["position"], topic_of(str(r["stream"])), r["traceparent"]) for r in rows]
    items = [i for i in items if i[1] is not None]
    params.update(o_position=[i[0] for i in items], o_topic=[i[1] for i in items],
                  o_traceparent=[i[2] for i in items])
    try:
        result = (await conn.execute(_INSERT, params)).all()
    except IntegrityError as exc:
        raise _translate(exc, [b.envelopes[0] for b in batches]) from None
    versions = {r.stream: int(r.version) for r in result}
    stored: list[Envelope] = []
    for b in batches:  # the same numbering as the statement's; raises ConcurrencyError if refused
        stored.extend(number(b, versions[b.stream], position))
        versions[b.stream] += len(b.envelopes)  # a stream may come back in a later run
        position += len(b.envelopes)
    assert not any(r.conflict for r in result), "a refused append must have raised"
    return stored


def _translate(exc: IntegrityError, stored: Sequence[Envelope]) -> Exception:
    driver = exc.orig.__cause__ if exc.orig is not None and exc.orig.__cause__ is not None else exc.orig
    constraint = getattr(driver, "constraint_name", None) or ""
    message = f"{exc.orig} {constraint} {getattr(driver, 'detail', '')}"
    if "uq_events_id" in message:
        m = _KEY_VALUE.search(message)
        return DuplicateEventError(m.group("id") if m else stored[0].id)
    if "uq_events_stream_version" in message:
        return ConcurrencyError(stored[0].stream, None, None)
    return exc
