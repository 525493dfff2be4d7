"""pytest plugin: "nothing skipped" — prove the integration tiers really ran against real servers.

Rules (DESIGN: integration tiers are never silently skipped):
- A test *used* real PostgreSQL when `pg_node` was active for it (requesting `pg_url`,
  `fresh_pg_url`, `stack_env` or any fixture built on them counts, statically or through
  `request.getfixturevalue`), real Kafka when `kafka_node` was. Tests whose static fixture
  closure includes them are automatically marked `integration` at collection.
- It *counts* when its call phase passed (and its teardown did not fail).
- With `SEXTANT_ENFORCE_INTEGRATION=1` (exported by `make test`), the session fails (exit code 1,
  reason printed in an "integration guard" section) when fewer tests counted than the minimums
  `postgres = N` and `kafka = M` in `<rootdir>/tests/integration/EXPECTED.toml`, when that file is
  missing or malformed, or when any test marked `integration` was skipped or xfailed.
  Engineers adding integration tests bump the minimums in the same commit.
- Without the variable it only prints the counts.
- Under pytest-xdist (`-n N`) each worker tests with servers of its own; a worker stamps every
  report with the servers its test used (`sextant_servers`) and whether it is marked
  `integration` (`sextant_integration`), the attributes travel with the report to the controller,
  and only the controller counts and enforces — over the reports of all workers.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ENFORCE_ENV = "SEXTANT_ENFORCE_INTEGRATION"
EXPECTED_FILE = Path("tests") / "integration" / "EXPECTED.toml"
REAL_FIXTURES: dict[str, str] = {"postgres": "pg_node", "kafka": "kafka_node"}


@dataclass
class Tally:
    """What the guard saw during the session."""

    passed: dict[str, set[str]] = field(default_factory=lambda: {k: set() for k in REAL_FIXTURES})
    skipped: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    enforced: bool = False


TALLY = pytest.StashKey[Tally]()
REQUEST = pytest.StashKey[pytest.FixtureRequest]()


def uses(item: pytest.Item) -> list[str]:
    """Which real servers (`postgres`, `kafka`) the item used: its static fixture closure plus
    every fixture activated for it so far (dynamic `getfixturevalue` requests included)."""
    names = set(getattr(item, "fixturenames", ()))
    request = item.stash.get(REQUEST, None)
    if request is not None:
        names |= set(request.fixturenames)
    return [kind for kind, fixture in REAL_FIXTURES.items() if fixture in names]


@pytest.fixture(autouse=True)
def _sextant_integration_probe(request: pytest.FixtureRequest) -> None:
    """Keep the test's request so `uses()` also sees fixtures requested dynamically."""
    request.node.stash[REQUEST] = request


def expected_minimums(path: Path) -> dict[str, int]:
    """Parse EXPECTED.toml: every kind of REAL_FIXTURES must map to a non-negative int."""
    data = tomllib.loads(path.read_text())
    out = {}
    for kind in REAL_FIXTURES:
        value = data.get(kind)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{path}: `{kind}` must be a non-negative integer, got {value!r}")
        out[kind] = value
    return out


def verdict(tally: Tally, minimums: dict[str, int]) -> list[str]:
    """Reasons the run must fail (empty when the guard is satisfied)."""
    problems = [f"only {len(tally.passed[kind])} passing test(s) used the real {kind} "
                f"(expected at least {minimum}, see {EXPECTED_FILE})"
                for kind, minimum in minimums.items() if len(tally.passed[kind]) < minimum]
    problems += [f"integration test skipped: {nodeid}" for nodeid in tally.skipped]
    return problems


def pytest_configure(config: pytest.Config) -> None:
    config.stash[TALLY] = Tally()
    config.pluginmanager.register(_Counter(config.stash[TALLY]), "sextant-integration-counter")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if uses(item) and item.get_closest_marker("integration") is None:
            item.add_marker(pytest.mark.integration)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    report.sextant_servers = uses(item)  # type: ignore[attr-defined]  # plain data: xdist serializes it
    report.sextant_integration = item.get_closest_marker("integration") is not None  # type: ignore[attr-defined]
    return report


class _Counter:
    """Per-session plugin (registered at configure) counting the reports this process sees: its own
    tests' in a single process, every worker's in the xdist controller."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        servers = getattr(report, "sextant_servers", None)
        if servers is None:  # a report this plugin did not stamp
            return
        if report.skipped and getattr(report, "sextant_integration", False):
            self.tally.skipped.append(report.nodeid)
        elif report.when == "call" and report.passed:
            for kind in servers:
                self.tally.passed[kind].add(report.nodeid)
        elif report.when == "teardown" and report.failed:
            for ids in self.tally.passed.values():
                ids.discard(report.nodeid)


def _is_xdist_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    tally = session.config.stash.get(TALLY, None)
    if tally is None or os.environ.get(ENFORCE_ENV) != "1" or _is_xdist_worker(session.config):
        return
    if exitstatus == pytest.ExitCode.INTERRUPTED:
        return
    tally.enforced = True
    path = session.config.rootpath / EXPECTED_FILE
    try:
        tally.problems = verdict(tally, expected_minimums(path))
    except (OSError, ValueError) as exc:
        tally.problems = [f"cannot read the integration minimums: {exc}"]
    if tally.problems and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    tally = config.stash.get(TALLY, None)
    if tally is None:
        return
    counts = ", ".join(f"{kind}: {len(ids)}" for kind, ids in tally.passed.items())
    if tally.problems:
        terminalreporter.write_sep("=", "integration guard: FAILED", red=True)
        for problem in tally.problems:
            terminalreporter.write_line(f"  {problem}", red=True)
        terminalreporter.write_line(f"  passing tests that used real servers: {counts}")
    elif tally.enforced or any(tally.passed.values()):
        state = "ok" if tally.enforced else f"not enforced ({ENFORCE_ENV} unset)"
        terminalreporter.write_line(f"integration guard {state}: passing tests that used real servers: {counts}")
