"""`SEXTANT_NO_SERVERS=1` (`make test-unit`): a test that requests a real server fails, none starts."""

from __future__ import annotations

import pytest
from sextant_kit.testing.fixtures import NO_SERVERS_ENV

PROBE = """
def test_wants_postgres(pg_node):
    pass

def test_wants_kafka(kafka_bootstrap):
    pass

def test_needs_nothing():
    pass
"""


def test_a_server_request_fails_fast_without_starting_it(pytester: pytest.Pytester,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(NO_SERVERS_ENV, "1")
    pytester.makepyfile(test_probe=PROBE)
    result = pytester.runpytest("-p", "sextant_kit.testing.fixtures", "-p", "no:cacheprovider", "-p", "no:asyncio")
    result.assert_outcomes(passed=1, errors=2)
    result.stdout.fnmatch_lines(["*PostgreSQL requested with SEXTANT_NO_SERVERS=1*",
                                 "*Kafka requested with SEXTANT_NO_SERVERS=1*"])
