"""Durability barrier: appends commit asynchronously, then wait for the WAL flush outside the lock.

**Why.** Positions are serialised by the `log_head` row lock, held until the transaction ends
(`writer.py`). With a synchronous commit, "ends" includes the WAL flush (an fsync, ~3 ms on the
reference machine), so every append in the system would queue behind one fsync at a time. Instead
the append transaction commits with `synchronous_commit = off` (set inside the transaction by the
position statement): the commit record is written and the lock released at once; then, outside
the lock, the store runs a **barrier** — a one-row upsert in `durability_barrier` committed
synchronously. Its commit flushes the WAL up to its own commit record, which lies after the
commit records of every transaction committed before it (the WAL is one sequential stream), so
once the barrier returns, the append is on disk. Concurrent barriers share fsyncs (PostgreSQL's
group flush), so N writers pay far less than N fsyncs.

**What leaves the database is always durable.** `append`/`append_and_track` return only after a
barrier (so an HTTP 201 or a Kafka offset commit follows durability); the relay's `pending()` runs
a barrier before returning rows to publish; `read_all`/`tail` run one before returning rows past
the last position known to be durable. A PostgreSQL *server* crash can therefore lose only appends
that no caller was told about and nobody read.

**In the read itself** (`barrier_if_newer`): `read_all` and the relay's `pending()` carry the
barrier in their statement, written only when the snapshot holds rows past the highest position
known durable — one round trip for the read and its barrier (before: a read, then a barrier).

**Cost of a barrier.** One round trip and one (shared) WAL flush. The statement also returns the
log head its snapshot saw: every position up to it committed before the barrier, so all of them
are durable when it returns — one barrier covers any amount of history.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncEngine

from .rawconn import raw_connection

# Autocommit single statement, committed with the server's synchronous_commit (on by default; a
# server configured with it off gives up durability everywhere anyway).
BARRIER_SQL = ("INSERT INTO durability_barrier (pid, n) VALUES (pg_backend_pid(), 1) "
               "ON CONFLICT (pid) DO UPDATE SET n = durability_barrier.n + 1 "
               "RETURNING (SELECT position FROM log_head WHERE id = 1)")


def barrier_if_newer(param: str, table: str = "events") -> str:
    """A `WITH` clause that puts a barrier in a read (one round trip instead of two): the upsert of
    `BARRIER_SQL`, done only when `table` holds a row past position `param` (the highest position
    known durable) in the statement's snapshot. A read with it returns only rows committed before
    that snapshot, whose commit records precede the upsert's in the WAL: once the statement
    (autocommit, committed synchronously) returns, each row it read is durable — a row past the
    mark made the statement write, hence flush; without one, no row read needed it, and a statement
    that wrote nothing commits without a WAL record or a flush."""
    return ("WITH durability_barrier_bump AS (INSERT INTO durability_barrier (pid, n) "
            f"SELECT pg_backend_pid(), 1 WHERE EXISTS (SELECT 1 FROM {table} WHERE position > {param}) "
            "ON CONFLICT (pid) DO UPDATE SET n = durability_barrier.n + 1) ")


class DurabilityBarrier:
    """Tracks the highest position known to be on disk and raises it with barriers."""

    def __init__(self, engine: AsyncEngine) -> None:
        self._engine = engine
        self.durable_position = 0

    async def ensure(self, position: int) -> None:
        """Return once every position <= `position` is durable (no round trip if known)."""
        if position <= self.durable_position:
            return
        async with raw_connection(self._engine) as raw:
            head = await raw.fetchval(BARRIER_SQL)
        self.durable_position = max(self.durable_position, int(head or 0))

    def covered(self, position: int) -> None:
        """Every position <= `position` is durable: a read with `barrier_if_newer` returned it."""
        self.durable_position = max(self.durable_position, position)
