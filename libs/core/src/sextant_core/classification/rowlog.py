"""Append-only, persistent row storage for the utility matrices.

A matrix grows by one row per classified workload and the cluster state keeps every intermediate
version (a decision may hold the snapshot it saw), so appending must not copy the matrix. Rows are
kept sparse (column indices + normalised values) in fixed-size chunks: a full chunk is frozen and
shared by every later version, an append copies only the open tail (≤ `CHUNK` row references) and,
when the tail fills, the tuple of chunk references (m / `CHUNK` pointers). Appending to a
10 000-row matrix therefore copies at most a few hundred pointers and never a float.

Each row carries a chained sha256 digest of every row up to it, so "the first n rows" have an
identity (`digest_at(n)`) that a trained model can be keyed and verified by.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator
from dataclasses import dataclass

CHUNK = 256
GENESIS = "0" * 64


@dataclass(frozen=True, slots=True)
class Row:
    """One sparse row: `cols` (ascending matrix column indices) and `values` (normalised).

    `width` is the number of matrix columns after this row was appended; `digest` chains this row
    onto the digest of the rows before it.
    """

    row_id: str
    cols: tuple[int, ...]
    values: tuple[float, ...]
    width: int
    digest: str


def chain(prev: str, row_id: str, cols: tuple[int, ...], values: tuple[float, ...]) -> str:
    h = hashlib.sha256(prev.encode())
    h.update(row_id.encode("utf-8"))
    h.update(b"\x1f")
    h.update(struct.pack(f"<{len(cols)}q", *cols))
    h.update(struct.pack(f"<{len(values)}d", *values))
    return h.hexdigest()


@dataclass(frozen=True, slots=True)
class RowLog:
    chunks: tuple[tuple[Row, ...], ...] = ()
    tail: tuple[Row, ...] = ()

    def __len__(self) -> int:
        return len(self.chunks) * CHUNK + len(self.tail)

    def __getitem__(self, i: int) -> Row:
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(i)
        c, r = divmod(i, CHUNK)
        return self.chunks[c][r] if c < len(self.chunks) else self.tail[r]

    def append(self, row: Row) -> RowLog:
        tail = self.tail + (row,)
        if len(tail) == CHUNK:
            return RowLog(chunks=self.chunks + (tail,), tail=())
        return RowLog(chunks=self.chunks, tail=tail)

    def head(self, n: int) -> Iterator[Row]:
        """The first `n` rows, in order."""
        left = n
        for chunk in (*self.chunks, self.tail):
            if left <= 0:
                return
            yield from chunk[:left]
            left -= len(chunk)

    def digest_at(self, n: int) -> str:
        """Digest of the first `n` rows (GENESIS for none)."""
        return GENESIS if n == 0 else self[n - 1].digest

    @property
    def digest(self) -> str:
        return self.digest_at(len(self))
