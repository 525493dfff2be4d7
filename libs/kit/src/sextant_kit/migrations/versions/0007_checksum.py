"""events.checksum: the writer's checksum of each stored payload (trusted decoding)

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-29

A nullable `checksum` column on `events`, and `sextant_append` / `sextant_append_many` with one
more array argument, `p_checksum`, written into it (`sextant_contracts.trusted.stored_checksum`:
NULL for a payload that is no valid canonical event). Rows written before this migration keep a
NULL checksum and are read back validated, as before (`sextant_kit/eventstore/rows.py`). The
functions of 0003 and 0006 are dropped (their signatures differ): every writer of this version
passes the checksums.
"""
from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_APPEND = "sextant_append(text, text, bigint, bigint, text[], text[], integer[], text[], text[], integer[], text[], integer[], text[], double precision[], text[], text[], text[], text[], text[])"
OLD_APPEND_MANY = "sextant_append_many(text, text[], bigint[], bigint, text[], text[], integer[], text[], text[], integer[], text[], integer[], text[], double precision[], text[], text[], text[], text[], text[])"
NEW_APPEND = "sextant_append(text, text, bigint, bigint, text[], text[], integer[], text[], text[], integer[], text[], integer[], text[], double precision[], text[], text[], text[], text[], text[], text[])"
NEW_APPEND_MANY = "sextant_append_many(text, text[], bigint[], bigint, text[], text[], integer[], text[], text[], integer[], text[], integer[], text[], double precision[], text[], text[], text[], text[], text[], text[])"

APPEND = r"""
CREATE OR REPLACE FUNCTION sextant_append(
    p_consumer text, p_input_id text, p_input_position bigint, p_expected_head bigint,
    p_streams text[], p_x_stream text[], p_x_expected integer[],
    p_id text[], p_stream text[], p_ordinal integer[], p_type text[], p_schema_version integer[],
    p_source text[], p_time double precision[], p_payload text[], p_traceparent text[],
    p_causation_id text[], p_correlation_id text[], p_topic text[], p_checksum text[])
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
                            payload, traceparent, causation_id, correlation_id, checksum)
        SELECT new_head - n + u.ord, u.id, u.stream, cur.version + u.ordinal, u.type, u.schema_version,
               u.source, u.time, u.payload, u.traceparent, u.causation_id, u.correlation_id, u.checksum
        FROM unnest(p_id, p_stream, p_ordinal, p_type, p_schema_version, p_source, p_time, p_payload,
                    p_traceparent, p_causation_id, p_correlation_id, p_checksum)
             WITH ORDINALITY AS u(id, stream, ordinal, type, schema_version, source, time, payload,
                                  traceparent, causation_id, correlation_id, checksum, ord)
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

APPEND_MANY = r"""
CREATE OR REPLACE FUNCTION sextant_append_many(
    p_consumer text, p_input_ids text[], p_input_positions bigint[],
    -- the rest as sextant_append's, passed on to it
    p_expected_head bigint, p_streams text[], p_x_stream text[], p_x_expected integer[], p_id text[],
    p_stream text[], p_ordinal integer[], p_type text[], p_schema_version integer[], p_source text[],
    p_time double precision[], p_payload text[], p_traceparent text[], p_causation_id text[],
    p_correlation_id text[], p_topic text[], p_checksum text[])
RETURNS TABLE (r_stream text, r_version integer, r_head bigint)
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
    tracked integer;  -- tracking rows inserted
BEGIN
    INSERT INTO tracking (consumer, event_id, position)
    SELECT p_consumer, t.id, t.pos FROM unnest(p_input_ids, p_input_positions) AS t(id, pos)
    ON CONFLICT (consumer, event_id) DO NOTHING;
    GET DIAGNOSTICS tracked = ROW_COUNT;
    IF tracked <> coalesce(array_length(p_input_ids, 1), 0) THEN
        RAISE EXCEPTION 'an input is already tracked' USING ERRCODE = 'SX003';
    END IF;
    RETURN QUERY SELECT * FROM sextant_append(NULL, NULL, NULL, p_expected_head, p_streams, p_x_stream,
        p_x_expected, p_id, p_stream, p_ordinal, p_type, p_schema_version, p_source, p_time, p_payload,
        p_traceparent, p_causation_id, p_correlation_id, p_topic, p_checksum);
END
$fn$;
"""


def upgrade() -> None:
    op.execute("ALTER TABLE events ADD COLUMN checksum text")
    op.execute(f"DROP FUNCTION IF EXISTS {OLD_APPEND_MANY}")
    op.execute(f"DROP FUNCTION IF EXISTS {OLD_APPEND}")
    op.execute(APPEND)
    op.execute(APPEND_MANY)


def downgrade() -> None:
    from importlib import import_module

    op.execute(f"DROP FUNCTION IF EXISTS {NEW_APPEND_MANY}")
    op.execute(f"DROP FUNCTION IF EXISTS {NEW_APPEND}")
    op.execute(import_module("sextant_kit.migrations.versions.0003_append_function").FUNCTION)
    op.execute(import_module("sextant_kit.migrations.versions.0006_append_many").FUNCTION)
    op.execute("ALTER TABLE events DROP COLUMN checksum")
