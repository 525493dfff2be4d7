"""Consumer-group health read from the broker: how far behind each group is, and whether it has a
live member. Used by `sextant ps` (the lag column) and by the API's `/readyz` (a decider that is
down or not consuming makes the platform not ready).

- `group_lag(bootstrap, groups)` → {group: `GroupLag`}: `members` (live members the coordinator
  knows; a process killed with SIGKILL stays a member until its session times out, 10 s by
  default), `state` (Kafka's: Stable, Empty, Dead, ...), `lag` (records written after the group's
  committed offset, summed over the partitions it has committed; None before its first commit)
  and `committed` (partition → offset).
- `ConsumerWatch(bootstrap, groups, stall_s)` reads the groups every `interval_s` in its own task
  (`run(stop)`, with broker clients it keeps), so `/readyz` answers at once: `check()` is False
  when a group has no live member, or has a lag that has not moved its committed offsets for
  `stall_s` seconds (alive but not consuming), or when there has been no reading for three
  intervals (the broker does not answer).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GroupLag:
    group: str
    state: str
    members: int
    lag: int | None
    committed: dict[tuple[str, int], int] = field(default_factory=dict)


async def group_lag(bootstrap: str, groups: Iterable[str]) -> dict[str, GroupLag]:
    """Each group's state, live members and lag (see the module docstring)."""
    names = list(dict.fromkeys(groups))
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False)
    await admin.start()
    try:
        await consumer.start()
        try:
            return await _read(admin, consumer, names)
        finally:
            await consumer.stop()
    finally:
        await admin.close()


async def _read(admin: AIOKafkaAdminClient, consumer: AIOKafkaConsumer, names: Sequence[str]) -> dict[str, GroupLag]:
    described: dict[str, tuple[str, int]] = {}
    # only groups the broker lists are described, one per request: aiokafka 0.14 cannot decode
    # Kafka 4's answer for an unknown group, nor one describing several groups (the connection
    # fails with "Buffer underrun")
    known = {str(g[0]) for g in await admin.list_consumer_groups()}
    for name in names:
        if name not in known:
            continue
        for response in await admin.describe_consumer_groups([name]):
            for g in response.groups:  # (error_code, group_id, state, protocol_type, protocol, members, ...)
                described[str(g[1])] = (str(g[2]), len(g[5]))
    out = {}
    for name in names:
        offsets = await admin.list_consumer_group_offsets(name)
        committed = {tp: om.offset for tp, om in offsets.items() if om.offset >= 0}
        ends = await consumer.end_offsets(list(committed)) if committed else {}
        lag = sum(max(0, ends[tp] - off) for tp, off in committed.items()) if committed else None
        state, members = described.get(name, ("Dead", 0))
        out[name] = GroupLag(name, state, members, lag,
                             {(tp.topic, tp.partition): off for tp, off in sorted(committed.items(), key=_key)})
    return out


def _key(item: tuple[TopicPartition, int]) -> tuple[str, int]:
    return item[0].topic, item[0].partition


class ConsumerWatch:
    """Readiness of a set of consumer groups (see the module docstring); `down` names the groups
    that failed the last reading."""

    def __init__(self, bootstrap: str, groups: Sequence[str], *, stall_s: float = 30.0, interval_s: float = 2.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.bootstrap = bootstrap
        self.groups = tuple(groups)
        self.stall_s = stall_s
        self.interval_s = interval_s
        self.clock = clock
        self.down: list[str] = list(self.groups)
        self.ready = not self.groups
        self.read_at: float | None = None
        self._moved: dict[str, tuple[dict[tuple[str, int], int], float]] = {}

    async def check(self) -> bool:
        """The last reading's verdict (a readiness check: no broker call)."""
        if not self.groups:
            return True
        fresh = self.read_at is not None and self.clock() - self.read_at <= 3 * self.interval_s
        return self.ready and fresh

    async def run(self, stop: asyncio.Event) -> None:
        """Read the groups every `interval_s` until `stop` is set (a process task: it never ends
        before)."""
        if not self.groups:
            await stop.wait()
            return
        clients: tuple[AIOKafkaAdminClient, AIOKafkaConsumer] | None = None
        try:
            while not stop.is_set():
                try:
                    if clients is None:
                        clients = (AIOKafkaAdminClient(bootstrap_servers=self.bootstrap),
                                   AIOKafkaConsumer(bootstrap_servers=self.bootstrap, enable_auto_commit=False))
                        await clients[0].start()
                        await clients[1].start()
                    self.judge(await _read(*clients, self.groups))
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # noqa: BLE001 - a broker in trouble: not ready, new clients
                    log.info("consumer watch: no reading (%r)", exc)
                    await _close(clients)
                    clients = None
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=self.interval_s)
        finally:
            await _close(clients)

    def judge(self, lags: dict[str, GroupLag]) -> bool:
        """The rule on one reading."""
        now = self.clock()
        down = []
        for name in self.groups:
            g = lags.get(name)
            if g is None or g.members == 0:
                down.append(name)
                continue
            last = self._moved.get(name)
            if last is None or last[0] != g.committed or not g.lag:
                self._moved[name] = (g.committed, now)
            elif now - last[1] > self.stall_s:
                down.append(name)
        self.down = down
        self.ready = not down
        self.read_at = now
        return self.ready


async def _close(clients: tuple[AIOKafkaAdminClient, AIOKafkaConsumer] | None) -> None:
    if clients is None:
        return
    with contextlib.suppress(Exception):
        await clients[1].stop()
    with contextlib.suppress(Exception):
        await clients[0].close()
