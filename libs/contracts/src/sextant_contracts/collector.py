"""`collector_paused()`: Python's cyclic garbage collector off inside a block, then as it was.

For bulk work that allocates only acyclic objects which outlive it — decoding a batch of stored
rows (`sextant_kit.eventstore.rows`), folding events into the cluster state
(`sextant_core.state.evolve.fold`, `Decider.fold`). Every collection such allocations trigger
finds nothing to free, but traverses the young objects and, as the heap grows, every object held
(the decoded log, the state): measured on the replay bench's 20 000-envelope log, about half of
the decode's CPU time and a quarter of the fold's (docs/platform/replay.md, fourth and fifth
rounds). Garbage is never held back beyond the block: the collector runs again as soon as it is
restored, and memory freed by reference counting (every state an event replaces) is freed at
once, paused or not.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector off inside the block, then as it was (module doc)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


@contextmanager
def held_frozen() -> Iterator[None]:
    """The objects alive at the block's start out of the collector's reach inside it (`gc.freeze`),
    then back in its oldest generation (`gc.unfreeze`). For work that holds a large, long-lived
    heap it does not change while it allocates and frees its own objects (re-deriving the
    decisions of a decoded log, `sextant_core.replay`): the collections its allocations trigger
    traverse only what it made, not the held heap; its own garbage, cycles included, is collected
    as always. A caller that has frozen objects of its own (`gc.get_freeze_count()`) is left as it
    is (an unfreeze would release its objects too): the block then runs without this."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
