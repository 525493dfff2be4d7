"""Validation and numbering of append batches, shared by the PostgreSQL and in-memory stores so
both enforce the same contract (see `ports.py`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sextant_contracts.envelope import Envelope

from ..errors import ConcurrencyError


@dataclass(frozen=True, slots=True)
class StreamBatch:
    """Envelopes for one stream; `expected` None = append at the end."""

    stream: str
    expected: int | None
    envelopes: tuple[Envelope, ...]


def single(stream: str, expected: int | None, envelopes: Sequence[Envelope]) -> list[StreamBatch]:
    """The batch of an `append` call, validated."""
    batch = StreamBatch(stream, expected, tuple(envelopes))
    validate(batch)
    return [batch] if batch.envelopes else []


def group(outputs: Sequence[Envelope], expected: Mapping[str, int | None] | None) -> list[StreamBatch]:
    """Outputs of `append_and_track` cut into runs of consecutive envelopes of one stream, in the
    given order — positions follow the caller's order exactly (a decider's outputs must land in the
    order it decided them). `expected` pins a stream's version at its first run; validated."""
    exp = dict(expected or {})
    out: list[StreamBatch] = []
    run: list[Envelope] = []
    for env in outputs:
        if run and env.stream != run[0].stream:
            out.append(StreamBatch(run[0].stream, exp.pop(run[0].stream, None), tuple(run)))
            run = []
        run.append(env)
    if run:
        out.append(StreamBatch(run[0].stream, exp.pop(run[0].stream, None), tuple(run)))
    ids = [e.id for e in outputs]
    if len(set(ids)) != len(ids):
        raise ValueError("an envelope id appears twice in one append")
    for b in out:
        validate(b)
    return out


def validate(batch: StreamBatch) -> None:
    """ValueError unless every envelope is of the stream, ids are distinct, and (with an expected
    version) the versions run expected+1, expected+2, ..."""
    ids = set()
    for i, env in enumerate(batch.envelopes):
        if env.stream != batch.stream:
            raise ValueError(f"envelope {env.id} belongs to {env.stream!r}, not {batch.stream!r}")
        if env.id in ids:
            raise ValueError(f"envelope id {env.id} appears twice in one append")
        ids.add(env.id)
        if batch.expected is not None and env.stream_version != batch.expected + 1 + i:
            raise ValueError(f"envelope {env.id} has version {env.stream_version}, "
                             f"expected {batch.expected + 1 + i}")
    if batch.expected is not None and batch.expected < 0:
        raise ValueError("expected_version must be >= 0 or None")


def number(batch: StreamBatch, current: int, first_position: int) -> list[Envelope]:
    """The batch's envelopes as stored: versions after `current`, positions from `first_position`.

    Raises ConcurrencyError when the stream is not at the expected version.
    """
    if batch.expected is not None and batch.expected != current:
        raise ConcurrencyError(batch.stream, batch.expected, current)
    return [env.model_copy(update={"stream_version": current + 1 + i, "position": first_position + i})
            for i, env in enumerate(batch.envelopes)]


def split(stored: Sequence[Envelope], sizes: Sequence[int]) -> list[list[Envelope]]:
    """`stored` cut into consecutive runs of `sizes` (a batched append's outputs, per input)."""
    out: list[list[Envelope]] = []
    start = 0
    for n in sizes:
        out.append(list(stored[start:start + n]))
        start += n
    if start != len(stored):
        raise ValueError(f"{len(stored)} stored envelopes for {start} outputs")
    return out
