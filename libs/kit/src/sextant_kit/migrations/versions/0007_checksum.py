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
from importlib import import_module

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# the argument types after the first ones, shared by both functions (0003, 0006)
_REST = ("bigint, text[], text[], integer[], text[], text[], integer[], text[], integer[], text[], "
         "double precision[], text[], text[], text[], text[], text[]")
OLD_APPEND = f"sextant_append(text, text, bigint, {_REST})"
OLD_APPEND_MANY = f"sextant_append_many(text, text[], bigint[], {_REST})"
NEW_APPEND = f"sextant_append(text, text, bigint, {_REST}, text[])"
NEW_APPEND_MANY = f"sextant_append_many(text, text[], bigint[], {_REST}, text[])"


def _with_checksum(sql: str, edits: Sequence[tuple[str, str]]) -> str:
    """An earlier migration's function with `edits` applied, each exactly once."""
    for old, new in edits:
        if sql.count(old) != 1:
            raise RuntimeError(f"migration 0007: {old!r} not found once in the earlier function")
        sql = sql.replace(old, new)
    return sql


# sextant_append (0003) with p_checksum written into events.checksum
APPEND = _with_checksum(import_module("sextant_kit.migrations.versions.0003_append_function").FUNCTION, [
    ("p_correlation_id text[], p_topic text[])", "p_correlation_id text[], p_topic text[], p_checksum text[])"),
    ("payload, traceparent, causation_id, correlation_id)\n",
     "payload, traceparent, causation_id, correlation_id, checksum)\n"),
    ("u.traceparent, u.causation_id, u.correlation_id\n", "u.traceparent, u.causation_id, u.correlation_id, u.checksum\n"),
    ("p_traceparent, p_causation_id, p_correlation_id)\n", "p_traceparent, p_causation_id, p_correlation_id, p_checksum)\n"),
    ("traceparent, causation_id, correlation_id, ord)", "traceparent, causation_id, correlation_id, checksum, ord)"),
])
# sextant_append_many (0006) passing p_checksum on
APPEND_MANY = _with_checksum(import_module("sextant_kit.migrations.versions.0006_append_many").FUNCTION, [
    ("p_correlation_id text[], p_topic text[])", "p_correlation_id text[], p_topic text[], p_checksum text[])"),
    ("p_correlation_id, p_topic);", "p_correlation_id, p_topic, p_checksum);"),
])


def upgrade() -> None:
    op.execute("ALTER TABLE events ADD COLUMN checksum text")
    op.execute(f"DROP FUNCTION IF EXISTS {OLD_APPEND_MANY}")
    op.execute(f"DROP FUNCTION IF EXISTS {OLD_APPEND}")
    op.execute(APPEND)
    op.execute(APPEND_MANY)


def downgrade() -> None:
    op.execute(f"DROP FUNCTION IF EXISTS {NEW_APPEND_MANY}")
    op.execute(f"DROP FUNCTION IF EXISTS {NEW_APPEND}")
    op.execute(import_module("sextant_kit.migrations.versions.0003_append_function").FUNCTION)
    op.execute(import_module("sextant_kit.migrations.versions.0006_append_many").FUNCTION)
    op.execute("ALTER TABLE events DROP COLUMN checksum")
