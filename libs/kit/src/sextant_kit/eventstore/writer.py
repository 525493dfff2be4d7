"""The append: tracking, position assignment, optimistic concurrency, outbox, notify — one call.

Everything runs inside the database function `sextant_append` (migration 0003; 0007 adds the
rows' checksums, `rows.row_values`), called as ONE autocommit statement: one round trip per
append, and the statement's implicit transaction is the append transaction.

**How commit order equals position order.** Global positions come from a one-row counter
(`log_head`), not from a sequence. The function runs
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

**Order inside the function.** (1) the tracking row (`ON CONFLICT DO NOTHING`: an input already
tracked returns no row and writes nothing), taken before the log lock, always in that order, so the
two locks cannot deadlock; (2) the log lock and the positions; (3) the expected log head and the
expected stream versions — read by statements whose snapshots are taken after the lock was granted
(each command of a VOLATILE plpgsql function takes a fresh snapshot under READ COMMITTED), so the
optimistic-concurrency check cannot race; (4) events and outbox rows in one statement; (5) NOTIFY
(delivered at commit). The unique constraint (`stream`, `stream_version`) remains as a second line
of defence.

**Cost.** Appends are serialised from the counter update to the commit: the lock is held for a few
statements inside the server, no client round trip, and the commit is asynchronous (no fsync under
the lock); durability is restored after the commit, outside the lock, by a barrier whose WAL
flushes concurrent writers share (`durability.py`). Throughput is bounded by ~1 / (hold time)
appends per second whatever the number of writers — batching amortises it (see
`bench/eventstore.py` and docs/results/eventstore.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import asyncpg
from sextant_contracts.envelope import Envelope
from sqlalchemy import bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY, BIGINT, DOUBLE_PRECISION, INTEGER, TEXT
from sqlalchemy.exc import DBAPIError, IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection

from .. import outbox
from ..errors import ConcurrencyError, DuplicateEventError, HeadMovedError
from .batches import StreamBatch, number
from .rows import row_values

_ARRAYS: dict[str, Any] = {
    "streams": TEXT, "x_stream": TEXT, "x_expected": INTEGER, "id": TEXT, "stream": TEXT, "ordinal": INTEGER,
    "type": TEXT, "schema_version": INTEGER, "source": TEXT, "time": DOUBLE_PRECISION, "payload": TEXT,
    "traceparent": TEXT, "causation_id": TEXT, "correlation_id": TEXT, "topic": TEXT, "checksum": TEXT,
}
_CALL = text(
    "SELECT r_stream, r_version, r_head FROM sextant_append(:consumer, :input_id, :input_position, "
    ":expected_head, :streams, :x_stream, :x_expected, :id, :stream, :ordinal, :type, :schema_version, "
    ":source, :time, :payload, :traceparent, :causation_id, :correlation_id, :topic, :checksum)"
).bindparams(bindparam("consumer", type_=TEXT), bindparam("input_id", type_=TEXT),
             bindparam("input_position", type_=BIGINT), bindparam("expected_head", type_=BIGINT),
             *(bindparam(name, type_=ARRAY(t)) for name, t in _ARRAYS.items()))
_PG_TYPES = {TEXT: "text", INTEGER: "integer", DOUBLE_PRECISION: "double precision"}
_KEY_VALUE = re.compile(r"\(id\)=\((?P<id>[^)]*)\)")


def call_params(batches: Sequence[StreamBatch], topic_of: outbox.TopicResolver, *, consumer: str | None,
                input_id: str | None, input_position: int | None,
                expected_head: int | None) -> dict[str, Any]:
    """The arguments of `sextant_append` for these batches (topics resolved first: an unknown
    stream fails before anything is sent)."""
    p: dict[str, Any] = {name: [] for name in _ARRAYS}
    p.update(consumer=consumer, input_id=input_id, input_position=input_position, expected_head=expected_head)
    ordinals: dict[str, int] = {}
    for b in batches:
        if b.expected is not None:
            p["x_stream"].append(b.stream)
            p["x_expected"].append(b.expected)
        for env in b.envelopes:
            ordinals[b.stream] = ordinals.get(b.stream, 0) + 1
            payload, checksum = row_values(env)
            for name, value in (("id", env.id), ("stream", b.stream), ("ordinal", ordinals[b.stream]),
                                ("type", env.type), ("schema_version", env.schema_version),
                                ("source", env.source), ("time", env.time),
                                ("payload", payload), ("traceparent", env.traceparent),
                                ("causation_id", env.causation_id), ("correlation_id", env.correlation_id),
                                ("topic", topic_of(env.stream)), ("checksum", checksum)):
                p[name].append(value)
    p["streams"] = list(ordinals)
    return p


async def write(conn: AsyncConnection, batches: Sequence[StreamBatch], topic_of: outbox.TopicResolver, *,
                consumer: str | None = None, input_id: str | None = None, input_position: int | None = None,
                expected_head: int | None = None) -> list[Envelope] | None:
    """Run one append on `conn` (which must be in AUTOCOMMIT mode: the call is the transaction).

    Returns the stored envelopes, or None when `consumer` already tracked `input_id` (nothing was
    written). Raises ConcurrencyError / HeadMovedError / DuplicateEventError (nothing written).
    """
    params = call_params(batches, topic_of, consumer=consumer, input_id=input_id,
                         input_position=input_position, expected_head=expected_head)
    if consumer is None and not params["id"]:
        return []
    try:
        rows = (await conn.execute(_CALL, params)).all()
    except DBAPIError as exc:
        raise _translate(exc, batches, expected_head) from None
    if not rows:
        return None
    if rows[0].r_head is None:  # tracked, no outputs
        return []
    versions = {r.r_stream: int(r.r_version) for r in rows}
    position = int(rows[0].r_head) - len(params["id"]) + 1
    stored: list[Envelope] = []
    for b in batches:  # the function's numbering: version = current + ordinal within the stream
        stored.extend(number(b, versions[b.stream], position))
        versions[b.stream] += len(b.envelopes)  # a stream may come back in a later run
        position += len(b.envelopes)
    return stored


_MANY_ARGS = ("consumer", "input_ids", "input_positions", "expected_head", *_ARRAYS)
_MANY_TYPES = {"consumer": "text", "input_ids": "text[]", "input_positions": "bigint[]", "expected_head": "bigint",
               **{name: f"{_PG_TYPES[t]}[]" for name, t in _ARRAYS.items()}}
_CALL_MANY = ("SELECT r_stream, r_version, r_head FROM sextant_append_many("
              + ", ".join(f"${i}::{_MANY_TYPES[name]}" for i, name in enumerate(_MANY_ARGS, 1)) + ")")


async def write_many(conn: Any, inputs: Sequence[tuple[str, int | None]], batches: Sequence[StreamBatch],
                     topic_of: outbox.TopicResolver, *, consumer: str,
                     expected_head: int | None = None) -> list[Envelope] | None:
    """Run one batched append (`sextant_append_many`, migration 0006) on a raw asyncpg connection
    outside any transaction (the call is the transaction): the tracking rows of `inputs` (event
    id, position) and `batches`, the outputs of all of them in order. Raw asyncpg, not SQLAlchemy:
    the hot path of every consumer (one prepared statement per connection, no Core compilation).

    Returns the stored envelopes, or None when an input was already tracked (nothing was written).
    Raises ConcurrencyError / HeadMovedError / DuplicateEventError (nothing written).
    """
    params = call_params(batches, topic_of, consumer=consumer, input_id=None, input_position=None,
                         expected_head=expected_head)
    params["input_ids"] = [i for i, _ in inputs]
    params["input_positions"] = [p for _, p in inputs]
    try:
        rows = await conn.fetch(_CALL_MANY, *(params[name] for name in _MANY_ARGS))
    except asyncpg.PostgresError as exc:
        if exc.sqlstate == "SX003":
            return None
        raise _translate_driver(exc, exc, batches, expected_head) from None
    if not rows or rows[0]["r_head"] is None:  # tracked, no outputs
        return []
    versions = {r["r_stream"]: int(r["r_version"]) for r in rows}
    position = int(rows[0]["r_head"]) - len(params["id"]) + 1
    stored: list[Envelope] = []
    for b in batches:
        stored.extend(number(b, versions[b.stream], position))
        versions[b.stream] += len(b.envelopes)
        position += len(b.envelopes)
    return stored


def _translate(exc: DBAPIError, batches: Sequence[StreamBatch], expected_head: int | None) -> Exception:
    driver = exc.orig.__cause__ if exc.orig is not None and exc.orig.__cause__ is not None else exc.orig
    return _translate_driver(exc, driver, batches, expected_head)


def _translate_driver(exc: Exception, driver: Any, batches: Sequence[StreamBatch],
                      expected_head: int | None) -> Exception:
    """The kit's error for a failed append (`exc` as raised, `driver` the asyncpg error)."""
    sqlstate = getattr(driver, "sqlstate", None)
    detail = getattr(driver, "detail", None) or ""
    if sqlstate == "SX001":
        d = json.loads(detail)
        return ConcurrencyError(d["stream"], d["expected"], d["actual"])
    if sqlstate == "SX002":
        return HeadMovedError(expected_head if expected_head is not None else -1, int(detail))
    if isinstance(exc, IntegrityError) or sqlstate == "23505":
        constraint = getattr(driver, "constraint_name", None) or ""
        message = f"{driver} {constraint} {detail}"
        if "uq_events_id" in message:
            m = _KEY_VALUE.search(message)
            return DuplicateEventError(m.group("id") if m else batches[0].envelopes[0].id)
        if "uq_events_stream_version" in message:
            return ConcurrencyError(batches[0].stream, None, None)
    return exc
