"""sextant_append(): the whole append (tracking, positions, versions, events, outbox, notify) in one call

Revision ID: 0003
Revises: 0002
Create Date: 2025-11-22

One round trip per append instead of five (see sextant_kit/eventstore/writer.py for the
contract). Each SQL command inside a VOLATILE plpgsql function takes a fresh snapshot under READ
COMMITTED, so the version read after the `log_head` lock sees every append committed before it.
Errors: SQLSTATE SX001 = a stream is not at its expected version (DETAIL: JSON stream/expected/
actual), SX002 = the log head moved (DETAIL: the actual head); unique violations as usual.
"""
from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FUNCTION = r"""
CREATE OR REPLACE FUNCTION sextant_append(
    p_consumer text, p_input_id text, p_input_position bigint, p_expected_head bigint,
    p_streams text[], p_x_stream text[], p_x_expected integer[],
    p_id text[], p_stream text[], p_ordinal integer[], p_type text[], p_schema_version integer[],
    p_source text[], p_time double precision[], p_payload text[], p_traceparent text[],
    p_causation_id text[], p_correlation_id text[], p_topic text[])
RETURNS TABLE (r_stream text, r_version integer, r_head bigint)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    n integer := coalesce(array_length(p_id, 1), 0);
    new_head bigint;
    bad record;
BEGIN
    IF p_consumer IS NOT NULL THEN
        INSERT INTO tracking (consumer, event_id, position)
        VALUES (p_consumer, p_input_id, p_input_position)
        ON CONFLICT (consumer, event_id) DO NOTHING;
        IF NOT FOUND THEN
            RETURN;  -- already tracked: no row at all
        END IF;
    END IF;
    IF n = 0 THEN
        r_stream := NULL; r_version := NULL; r_head := NULL;
        RETURN NEXT;
        RETURN;
    END IF;
    -- the log lock, held until commit: commit order = position order
    UPDATE log_head SET position = position + n WHERE id = 1 RETURNING position INTO new_head;
    IF p_expected_head IS NOT NULL AND new_head - n <> p_expected_head THEN
        RAISE EXCEPTION 'log head moved' USING ERRCODE = 'SX002', DETAIL = (new_head - n)::text;
    END IF;
    SELECT x.stream, x.expected, cur.version INTO bad
    FROM unnest(p_x_stream, p_x_expected) AS x(stream, expected)
    CROSS JOIN LATERAL (SELECT coalesce(max(e.stream_version), 0) AS version
                        FROM events e WHERE e.stream = x.stream) AS cur
    WHERE cur.version <> x.expected
    LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'stream not at the expected version' USING ERRCODE = 'SX001',
            DETAIL = json_build_object('stream', bad.stream, 'expected', bad.expected,
                                       'actual', bad.version)::text;
    END IF;
    PERFORM set_config('synchronous_commit', 'off', true);  -- durability: barrier after commit
    RETURN QUERY
    WITH cur AS (
        SELECT s.stream, coalesce((SELECT max(e.stream_version) FROM events e WHERE e.stream = s.stream), 0)
               AS version
        FROM unnest(p_streams) AS s(stream)
    ), stored AS (
        INSERT INTO events (position, id, stream, stream_version, type, schema_version, source, time,
                            payload, traceparent, causation_id, correlation_id)
        SELECT new_head - n + u.ord, u.id, u.stream, cur.version + u.ordinal, u.type, u.schema_version,
               u.source, u.time, u.payload, u.traceparent, u.causation_id, u.correlation_id
        FROM unnest(p_id, p_stream, p_ordinal, p_type, p_schema_version, p_source, p_time, p_payload,
                    p_traceparent, p_causation_id, p_correlation_id)
             WITH ORDINALITY AS u(id, stream, ordinal, type, schema_version, source, time, payload,
                                  traceparent, causation_id, correlation_id, ord)
        JOIN cur ON cur.stream = u.stream
        RETURNING 1
    ), queued AS (
        INSERT INTO outbox (position, topic, traceparent)
        SELECT new_head - n + o.ord, o.topic, o.traceparent
        FROM unnest(p_topic, p_traceparent) WITH ORDINALITY AS o(topic, traceparent, ord)
        WHERE o.topic IS NOT NULL
        RETURNING 1
    )
    SELECT cur.stream, cur.version, new_head FROM cur;
    PERFORM pg_notify('sextant_events', new_head::text);
END
$fn$;
"""


def upgrade() -> None:
    op.execute(FUNCTION)


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS sextant_append(text, text, bigint, bigint, text[], text[], integer[], "
               "text[], text[], integer[], text[], integer[], text[], double precision[], text[], text[], "
               "text[], text[], text[])")
