"""sextant_append_many(): one append for a whole fetched batch of a consumer's inputs

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-29

The tracking rows of every input, then the outputs of all of them exactly as `sextant_append`
writes one input's (it is called with no consumer: positions under the `log_head` lock, expected
head and versions, events, outbox, notify — one transaction, the statement's). An input already
tracked (or twice in the batch) raises SQLSTATE SX003 — the whole call is rolled back, nothing is
written, and the caller falls back to one append per input (sextant_kit/eventstore/writer.py).
"""
from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FUNCTION = r"""
CREATE OR REPLACE FUNCTION sextant_append_many(
    p_consumer text, p_input_ids text[], p_input_positions bigint[],
    -- the rest as sextant_append's, passed on to it
    p_expected_head bigint, p_streams text[], p_x_stream text[], p_x_expected integer[], p_id text[],
    p_stream text[], p_ordinal integer[], p_type text[], p_schema_version integer[], p_source text[],
    p_time double precision[], p_payload text[], p_traceparent text[], p_causation_id text[],
    p_correlation_id text[], p_topic text[])
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
        p_traceparent, p_causation_id, p_correlation_id, p_topic);
END
$fn$;
"""


def upgrade() -> None:
    op.execute(FUNCTION)


def downgrade() -> None:
    op.execute("DROP FUNCTION IF EXISTS sextant_append_many(text, text[], bigint[], bigint, text[], text[], "
               "integer[], text[], text[], integer[], text[], integer[], text[], double precision[], text[], "
               "text[], text[], text[], text[])")
