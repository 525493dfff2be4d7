"""The project's own infrastructure: real PostgreSQL and Kafka nodes, the stack CLI, the fixtures
and the "nothing skipped" guard.

Stop/start and failure tests use private nodes (not the session's), so other tests never see an
outage they did not ask for.
"""

from __future__ import annotations

import asyncio
import json
import socket
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg
import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from sextant_contracts.topics import ALL_TOPICS
from sextant_infra.kafka import KafkaNode
from sextant_infra.postgres import PostgresNode
from sextant_infra.processes import InfraError, pid_alive, port_open
from sextant_infra.stack import main as infra_main
from sextant_infra.topics import TopicSpec, admin_client, ensure_topics
from sextant_kit.testing import topic_end_offsets

integration = pytest.mark.integration
TopicFactory = Callable[..., Awaitable[list[str]]]


def dsn_of(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


# -- fixtures ---------------------------------------------------------------------------------

@integration
async def test_fresh_pg_url_is_a_new_empty_database(pg_url: str, fresh_pg_url: str) -> None:
    assert fresh_pg_url != pg_url and fresh_pg_url.startswith("postgresql+asyncpg://sextant@127.0.0.1:")
    conn = await asyncpg.connect(dsn_of(fresh_pg_url))
    try:
        assert await conn.fetchval("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == 0
        await conn.execute("CREATE TABLE only_here (x int)")
        assert await conn.fetchval("SHOW fsync") == "on"
        assert await conn.fetchval("SHOW max_connections") == "200"
    finally:
        await conn.close()
    shared = await asyncpg.connect(dsn_of(pg_url))
    try:
        assert await shared.fetchval("SELECT to_regclass('public.only_here')") is None
    finally:
        await shared.close()


@integration
async def test_kafka_topics_factory_makes_distinct_ready_topics(kafka_bootstrap: str,
                                                               kafka_topics: TopicFactory) -> None:
    names = await kafka_topics(n=2, partitions=4)
    again = await kafka_topics()
    assert len(set(names + again)) == 3
    assert await topic_end_offsets(kafka_bootstrap, names[0]) == {0: 0, 1: 0, 2: 0, 3: 0}
    with pytest.raises(LookupError):
        await topic_end_offsets(kafka_bootstrap, "no-such-topic-here")


@integration
async def test_stack_env_points_at_the_session_servers_with_every_topic(stack_env: dict[str, str]) -> None:
    assert set(stack_env) == {"SEXTANT_DATABASE_URL", "SEXTANT_KAFKA_BOOTSTRAP"}
    conn = await asyncpg.connect(dsn_of(stack_env["SEXTANT_DATABASE_URL"]))
    try:
        assert await conn.fetchval("SELECT current_database()") == "sextant"
    finally:
        await conn.close()
    for topic in ALL_TOPICS:
        ends = await topic_end_offsets(stack_env["SEXTANT_KAFKA_BOOTSTRAP"], topic.name)
        assert len(ends) == topic.partitions


# -- stop / start keeps data ----------------------------------------------------------------------

@integration
async def test_postgres_stop_start_keeps_data_and_port() -> None:
    node = PostgresNode(die_with_parent=True)
    try:
        node.start()
        port = node.port
        node.psql("CREATE TABLE kept (v text); INSERT INTO kept VALUES ('before restart')", "sextant")
        node.stop()
        assert not node.running() and not port_open(port or 0)
        node.start()
        assert node.port == port
        assert node.psql("SELECT v FROM kept", "sextant") == "before restart"
    finally:
        node.remove()
    assert node.base_dir is not None and not node.base_dir.exists()


@integration
async def test_kafka_stop_start_keeps_topic_data_and_port(tmp_path: Path) -> None:
    node = KafkaNode(tmp_path / "kafka", die_with_parent=True)
    try:
        node.start()
        bootstrap = node.bootstrap
        await ensure_topics(bootstrap, [TopicSpec("kept", partitions=2)])
        producer = AIOKafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True)
        await producer.start()
        try:
            for i in range(10):
                await producer.send_and_wait("kept", key=str(i).encode(), value=f"m{i}".encode())
        finally:
            await producer.stop()
        node.stop()
        assert not node.running() and not port_open(node.port or 0)
        node.start()
        assert node.bootstrap == bootstrap
        assert sum((await topic_end_offsets(bootstrap, "kept")).values()) == 10
        consumer = AIOKafkaConsumer("kept", bootstrap_servers=bootstrap, group_id="after-restart",
                                    auto_offset_reset="earliest", enable_auto_commit=False)
        await consumer.start()
        try:
            values: set[bytes] = set()
            for _ in range(60):
                batch = await consumer.getmany(timeout_ms=500)
                values |= {r.value for rs in batch.values() for r in rs if r.value is not None}
                if len(values) == 10:
                    break
        finally:
            await consumer.stop()
        assert values == {f"m{i}".encode() for i in range(10)}
    finally:
        node.stop()


# -- start-up failures carry the log tail ------------------------------------------------------------

@integration
def test_kafka_broker_start_failure_raises_with_log_tail(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        node = KafkaNode(tmp_path / "kafka", port=taken.getsockname()[1], die_with_parent=True)
        with pytest.raises(InfraError) as err:
            node.start()
    message = str(err.value)
    assert "exited during start-up" in message and "last lines of" in message
    assert "Address already in use" in message
    assert not node.running()


@integration
def test_kafka_bad_config_raises_with_log_tail(tmp_path: Path) -> None:
    node = KafkaNode(tmp_path / "kafka", extra_config={"num.io.threads": "many"}, die_with_parent=True)
    with pytest.raises(InfraError) as err:
        node.start()
    assert "Invalid value many for configuration num.io.threads" in str(err.value)


@integration
def test_postgres_bad_config_raises_with_log_tail() -> None:
    node = PostgresNode(settings={"max_connections": "lots"}, die_with_parent=True)
    try:
        with pytest.raises(InfraError) as err:
            node.start()
    finally:
        node.remove()
    message = str(err.value)
    assert "PostgreSQL exited during start-up" in message
    assert 'invalid value for parameter "max_connections"' in message


# -- the stack CLI (make up / make down) --------------------------------------------------------------

@integration
def test_stack_cli_up_is_idempotent_and_down_stops_everything(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    try:
        assert infra_main(["--run-dir", str(run), "up"]) == 0
        state = json.loads((run / "stack.json").read_text())
        env = dict(line.split("=", 1) for line in (run / "stack.env").read_text().splitlines())
        assert env["SEXTANT_KAFKA_BOOTSTRAP"] == state["kafka"]["bootstrap"]
        assert env["SEXTANT_DATABASE_URL"] == state["postgres"]["url"]
        pids = (state["postgres"]["pid"], state["kafka"]["pid"])
        assert all(pid_alive(p) for p in pids)

        async def partition_counts() -> dict[str, int]:
            admin = await admin_client(env["SEXTANT_KAFKA_BOOTSTRAP"])
            try:
                return {t["topic"]: len(t["partitions"]) for t in await admin.describe_topics()}
            finally:
                await admin.close()

        counts = asyncio.run(partition_counts())
        assert {t.name: t.partitions for t in ALL_TOPICS}.items() <= counts.items()

        capsys.readouterr()
        assert infra_main(["--run-dir", str(run), "up"]) == 0
        assert "already up" in capsys.readouterr().out
        assert json.loads((run / "stack.json").read_text())["kafka"]["pid"] == pids[1]
        assert infra_main(["--run-dir", str(run), "status"]) == 0
        assert infra_main(["--run-dir", str(run), "env"]) == 0
        assert f"export SEXTANT_KAFKA_BOOTSTRAP={env['SEXTANT_KAFKA_BOOTSTRAP']}" in capsys.readouterr().out

        assert infra_main(["--run-dir", str(run), "down"]) == 0
        assert not any(pid_alive(p) for p in pids)
        assert infra_main(["--run-dir", str(run), "status"]) == 3
        assert infra_main(["--run-dir", str(run), "env"]) == 1
    finally:
        infra_main(["--run-dir", str(run), "down", "--purge"])
    assert not Path(state["postgres"]["base_dir"]).exists()


# -- the "nothing skipped" guard (runs pytest in a subprocess; no real servers needed) ----------------

GUARD_CONFTEST = """
import pytest

@pytest.fixture(scope="session")
def pg_node():
    return "fake postgres"

@pytest.fixture(scope="session")
def kafka_node():
    return "fake kafka"

@pytest.fixture
def pg_url(pg_node):
    return "postgresql+asyncpg://x"

@pytest.fixture(params=["memory", "postgres"])
def store(request):
    return request.getfixturevalue("pg_url") if request.param == "postgres" else "memory"
"""


def run_guarded(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, tests: str, *,
                postgres: int, kafka: int, enforce: bool = True, args: tuple[str, ...] = ()) -> pytest.RunResult:
    pytester.makeconftest(GUARD_CONFTEST)
    pytester.makepyfile(test_guarded=textwrap.dedent(tests))
    (pytester.path / "tests" / "integration").mkdir(parents=True, exist_ok=True)
    (pytester.path / "tests" / "integration" / "EXPECTED.toml").write_text(
        f"postgres = {postgres}\nkafka = {kafka}\n")
    if enforce:
        monkeypatch.setenv("SEXTANT_ENFORCE_INTEGRATION", "1")
    else:
        monkeypatch.delenv("SEXTANT_ENFORCE_INTEGRATION", raising=False)
    return pytester.runpytest_inprocess("-p", "sextant_kit.testing.integration_guard",
                                         "-p", "no:cacheprovider", "-p", "no:asyncio", *args)


USES_BOTH = """
def test_pg(pg_url):
    assert pg_url
def test_kafka(kafka_node):
    assert kafka_node
def test_unit():
    assert True
"""


def test_guard_passes_when_minimums_are_met(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_guarded(pytester, monkeypatch, USES_BOTH, postgres=1, kafka=1)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*integration guard ok*postgres: 1, kafka: 1*"])


def test_guard_fails_the_run_when_too_few_used_real_servers(pytester: pytest.Pytester,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_guarded(pytester, monkeypatch, USES_BOTH, postgres=2, kafka=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*integration guard: FAILED*",
                                 "*only 1 passing test(s) used the real postgres (expected at least 2*"])


def test_guard_fails_the_run_on_a_skipped_integration_test(pytester: pytest.Pytester,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    tests = USES_BOTH + """
import pytest
def test_skips_itself(kafka_node):
    pytest.skip("no broker today")
"""
    result = run_guarded(pytester, monkeypatch, tests, postgres=1, kafka=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*integration test skipped: test_guarded.py::test_skips_itself*"])


def test_guard_does_not_count_failing_tests(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    tests = """
def test_pg_fails(pg_url):
    assert False
"""
    result = run_guarded(pytester, monkeypatch, tests, postgres=1, kafka=0)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*only 0 passing test(s) used the real postgres*"])


def test_guard_counts_servers_requested_dynamically(pytester: pytest.Pytester,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    tests = """
def test_store(store):
    assert store
"""
    result = run_guarded(pytester, monkeypatch, tests, postgres=1, kafka=0)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*integration guard ok*postgres: 1, kafka: 0*"])
    result = run_guarded(pytester, monkeypatch, tests, postgres=2, kafka=0)
    assert result.ret == 1


def test_guard_only_reports_when_not_enforced(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_guarded(pytester, monkeypatch, USES_BOTH, postgres=5, kafka=5, enforce=False)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*integration guard not enforced*postgres: 1, kafka: 1*"])


def test_guard_counts_and_enforces_over_every_xdist_worker(pytester: pytest.Pytester,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`make test` runs under pytest-xdist: the tests run in worker processes, the controller counts
    the reports of all of them (two workers here, four tests: each worker ran some) and enforces."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # the workers start with the plugins named only
    xdist = ("-p", "xdist.plugin", "-n", "2", "--dist", "load")
    tests = USES_BOTH + """
def test_pg_too(pg_url):
    assert pg_url
"""
    result = run_guarded(pytester, monkeypatch, tests, postgres=2, kafka=1, args=xdist)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*2 workers*", "*integration guard ok*postgres: 2, kafka: 1*"])
    skipping = tests + """
import pytest
def test_skips_itself(kafka_node):
    pytest.skip("no broker today")
"""
    result = run_guarded(pytester, monkeypatch, skipping, postgres=3, kafka=1, args=xdist)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*integration guard: FAILED*",
                                 "*only 2 passing test(s) used the real postgres (expected at least 3*",
                                 "*integration test skipped: test_guarded.py::test_skips_itself*"])
