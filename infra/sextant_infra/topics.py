"""Topic provisioning with aiokafka's admin client.

Contract of `ensure_topics(bootstrap, topics)`: afterwards every topic exists with at least its
declared partition count (missing topics are created with replication factor 1 and, when the
spec has `retention_ms`, that `retention.ms`; existing topics with fewer partitions are grown,
never shrunk) and every partition has a leader, so a producer can write at once. It returns the
names it created. It is idempotent and safe to call concurrently with itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from aiokafka.admin import AIOKafkaAdminClient, NewPartitions, NewTopic
from aiokafka.errors import KafkaConnectionError

from .processes import InfraError

_TOPIC_ALREADY_EXISTS = 36
_RETRIABLE_DESCRIBE = {3, 5}  # UNKNOWN_TOPIC_OR_PARTITION, LEADER_NOT_AVAILABLE


class TopicLike(Protocol):
    """What ensure_topics needs of a topic (sextant_contracts.topics.Topic fits)."""

    @property
    def name(self) -> str: ...

    @property
    def partitions(self) -> int: ...


@dataclass(frozen=True, slots=True)
class TopicSpec:
    """An ad-hoc topic (tests, tools)."""

    name: str
    partitions: int = 1
    retention_ms: int | None = None


async def admin_client(bootstrap: str, *, attempts: int = 20) -> AIOKafkaAdminClient:
    """A started admin client; retries the first connection (a broker that just started)."""
    last: Exception | None = None
    for _ in range(attempts):
        admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30_000)
        try:
            await admin.start()
            return admin
        except KafkaConnectionError as exc:
            last = exc
            await admin.close()
            await asyncio.sleep(0.5)
    raise InfraError(f"cannot reach Kafka at {bootstrap}: {last}")


async def ensure_topics(bootstrap: str, topics: Iterable[TopicLike], *, timeout: float = 60.0) -> list[str]:
    """Create or grow `topics` on the broker at `bootstrap` (see module contract)."""
    wanted = {t.name: t for t in topics}
    if not wanted:
        return []
    admin = await admin_client(bootstrap)
    try:
        existing = await _partition_counts(admin, list(wanted))
        missing = [t for name, t in wanted.items() if name not in existing]
        created: list[str] = []
        if missing:
            created = await _create(admin, missing)
        grow = {name: NewPartitions(total_count=t.partitions)
                for name, t in wanted.items() if 0 < existing.get(name, 0) < t.partitions}
        if grow:
            await admin.create_partitions(grow)
        await _wait_leaders(admin, wanted, timeout)
        return created
    finally:
        await admin.close()


async def _create(admin: AIOKafkaAdminClient, missing: list[TopicLike]) -> list[str]:
    new = []
    for t in missing:
        retention = getattr(t, "retention_ms", None)
        configs = {"retention.ms": str(retention)} if retention is not None else {}
        new.append(NewTopic(name=t.name, num_partitions=t.partitions, replication_factor=1,
                            topic_configs=configs))
    resp = await admin.create_topics(new)
    created = []
    for item in resp.topic_errors:
        name, code = item[0], item[1]
        if code == 0:
            created.append(name)
        elif code != _TOPIC_ALREADY_EXISTS:
            message = item[2] if len(item) > 2 else ""
            raise InfraError(f"creating topic {name} failed: error {code} {message}")
    return created


async def _partition_counts(admin: AIOKafkaAdminClient, names: list[str]) -> dict[str, int]:
    """Partition count of each of `names` that exists."""
    described: list[dict[str, Any]] = await admin.describe_topics(names)
    return {t["topic"]: len(t["partitions"]) for t in described if t["error_code"] == 0}


async def _wait_leaders(admin: AIOKafkaAdminClient, wanted: dict[str, TopicLike], timeout: float) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    pending: list[str] = list(wanted)
    while True:
        described: list[dict[str, Any]] = await admin.describe_topics(pending)
        pending = [t["topic"] for t in described if not _ready(t, wanted[t["topic"]].partitions)]
        if not pending:
            return
        for t in described:
            if t["error_code"] not in (0, *_RETRIABLE_DESCRIBE):
                raise InfraError(f"topic {t['topic']}: metadata error {t['error_code']}")
        if loop.time() > deadline:
            raise InfraError(f"topics without leaders after {timeout:.0f} s: {pending}")
        await asyncio.sleep(0.1)


def _ready(described: dict[str, Any], partitions: int) -> bool:
    parts = described["partitions"]
    return (described["error_code"] == 0 and len(parts) >= partitions
            and all(p["error_code"] == 0 and p["leader"] >= 0 for p in parts))


__all__ = ["TopicLike", "TopicSpec", "admin_client", "ensure_topics"]
