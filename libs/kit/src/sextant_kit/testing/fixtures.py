"""pytest plugin: the real PostgreSQL and the real Kafka, started once per test run, lazily.

Fixture names are a contract other packages' tests rely on:

| fixture | scope | value |
|---|---|---|
| `pg_node` | session | `sextant_infra.postgres.PostgresNode`, started on first request |
| `pg_url` | session | `postgresql+asyncpg://sextant@127.0.0.1:PORT/sextant` (shared database) |
| `fresh_pg_url` | function | asyncpg SQLAlchemy URL of a brand-new empty database, dropped afterwards |
| `kafka_node` | session | `sextant_infra.kafka.KafkaNode`, started on first request |
| `kafka_bootstrap` | session | `"127.0.0.1:PORT"` |
| `kafka_topics` | function | `await kafka_topics(n=1, partitions=1) -> list[str]`: fresh, uniquely named topics with leaders |
| `stack_env` | session | `{"SEXTANT_DATABASE_URL", "SEXTANT_KAFKA_BOOTSTRAP"}` for subprocesses; every topic of `ALL_TOPICS` exists |

A server that cannot start makes every test that requests it ERROR with the server's log tail
(`sextant_infra.processes.InfraError`): nothing is skipped. The servers are tied to this
process (they are SIGKILLed by the kernel if pytest dies) and stopped at session end; the
PostgreSQL folder is deleted, Kafka's run folder stays under pytest's basetemp for post-mortems.

With `SEXTANT_NO_SERVERS=1` (exported by `make test-unit`, the tier without servers) a test that
requests either server fails at once instead of starting it: the fast tier stays fast and honest,
and a test that needs a server without being marked `integration` is found.

Registering this module also registers `sextant_kit.testing.integration_guard` and
`sextant_kit.testing.parallel` (the pytest-xdist file order of `make test`).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from sextant_infra.kafka import KafkaNode
    from sextant_infra.postgres import PostgresNode

pytest_plugins = ["sextant_kit.testing.integration_guard", "sextant_kit.testing.parallel"]

TopicFactory = Callable[..., Awaitable[list[str]]]
NO_SERVERS_ENV = "SEXTANT_NO_SERVERS"


def _servers_allowed(kind: str) -> None:
    """Fail the requesting test when this run must start no server (`make test-unit`)."""
    if os.environ.get(NO_SERVERS_ENV) == "1":
        pytest.fail(f"{kind} requested with {NO_SERVERS_ENV}=1: mark the test `integration` "
                    f"(it runs under `make test`)", pytrace=False)


@pytest.fixture(scope="session")
def pg_node() -> Iterator[PostgresNode]:
    """The session's PostgreSQL server (see module table)."""
    _servers_allowed("PostgreSQL")
    from sextant_infra.postgres import PostgresNode

    node = PostgresNode(die_with_parent=True)
    try:
        node.start()
        yield node
    finally:
        node.remove()


@pytest.fixture(scope="session")
def pg_url(pg_node: PostgresNode) -> str:
    """SQLAlchemy asyncpg URL of the shared `sextant` database."""
    return pg_node.url


@pytest.fixture
def fresh_pg_url(pg_node: PostgresNode, request: pytest.FixtureRequest) -> Iterator[str]:
    """A brand-new empty database for this test only (dropped, sessions and all, afterwards)."""
    name = f"t_{_slug(request.node.name, 24).replace('-', '_').replace('.', '_')}_{uuid.uuid4().hex[:10]}"
    pg_node.create_database(name)
    try:
        yield pg_node.url_for(name)
    finally:
        pg_node.drop_database(name)


@pytest.fixture(scope="session")
def kafka_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KafkaNode]:
    """The session's Kafka broker (see module table)."""
    _servers_allowed("Kafka")
    from sextant_infra.kafka import KafkaNode

    node = KafkaNode(Path(tmp_path_factory.mktemp("kafka")), die_with_parent=True)
    try:
        node.start()
        yield node
    finally:
        node.stop()


@pytest.fixture(scope="session")
def kafka_bootstrap(kafka_node: KafkaNode) -> str:
    """`"127.0.0.1:PORT"` of the session's broker."""
    return kafka_node.bootstrap


@pytest.fixture
def kafka_topics(kafka_bootstrap: str, request: pytest.FixtureRequest) -> TopicFactory:
    """Async factory of fresh topics: `await kafka_topics(n=1, partitions=1) -> list[str]`.

    Names are `test-<test-name>-<random>-<i>`, unique per call; on return every partition has a
    leader, so producing at once succeeds.
    """
    from sextant_infra.topics import TopicSpec, ensure_topics

    base = _slug(request.node.name, 60).replace(".", "-")

    async def create(n: int = 1, partitions: int = 1) -> list[str]:
        tag = uuid.uuid4().hex[:8]
        names = [f"test-{base}-{tag}-{i}" for i in range(n)]
        await ensure_topics(kafka_bootstrap, [TopicSpec(name, partitions) for name in names])
        return names

    return create


@pytest.fixture(scope="session")
def stack_env(pg_url: str, kafka_bootstrap: str) -> dict[str, str]:
    """Environment for subprocesses (services, CLI) pointing at the session's servers.

    Every topic of `sextant_contracts.topics.ALL_TOPICS` exists when this returns. Merge it with
    `os.environ` yourself: it holds only the Sextant variables.
    """
    from sextant_infra.stack import default_topics, run_sync
    from sextant_infra.topics import ensure_topics

    run_sync(ensure_topics(kafka_bootstrap, default_topics()))
    return {"SEXTANT_DATABASE_URL": pg_url, "SEXTANT_KAFKA_BOOTSTRAP": kafka_bootstrap}


def _slug(text: str, limit: int) -> str:
    """A Kafka/PostgreSQL-safe fragment of a test name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.")[:limit].lower() or "t"
