"""`sextant tenants capacity|usage` against the real admission app (served over HTTP from a
thread, on the in-memory event store): an operator's capacity is recorded; a tenant's token and a
malformed capacity print the problem (403; 422 naming the field), exit 1 and write nothing; usage
prints the tenant's view."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from sextant_admission.memtesting import Registry, Served
from sextant_admission.memtesting import served as serve_admission
from sextant_cli.main import main
from sextant_contracts.envelope import Envelope
from sextant_core.testing.builders import server


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    """`op`: an operator's token; `tok-acme`: tenant acme's; one server on the log."""
    s1 = server("s1")
    seed = [Envelope.wrap(s1, id="s1", source="edge", stream_version=1, time=0.0)]
    with serve_admission(seed, api_auth="tokens", registry=Registry(tenants=("acme",))) as out:
        yield out


def cli(served: Served, capsys: pytest.CaptureFixture[str], token: str, *args: str) -> tuple[int, Any]:
    code = main(["tenants", *args, "--api", served.url, "--token", token])
    return code, json.loads(capsys.readouterr().out)


def test_an_operator_sets_a_capacity_and_the_tenant_reads_its_usage(
        served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(served, capsys, "op", "capacity", "acme", "3")
    assert code == 0 and out == {"tenant": "acme", "servers": 3, "previous": None}
    assert served.log_types()[-1] == "VcCapacitySet"
    code, out = cli(served, capsys, "tok-acme", "usage", "acme")
    assert code == 0 and (out["tenant"], out["capacity"], out["demand"]) == ("acme", 3, 0)


@pytest.mark.parametrize(("token", "servers", "status"), [("tok-acme", "2", 403), ("op", "-1", 422),
                                                          ("op", "two", 422)], ids=["tenant", "negative", "text"])
def test_a_refused_capacity_prints_the_problem_exits_1_and_writes_nothing(
        served: Served, capsys: pytest.CaptureFixture[str], token: str, servers: str, status: int) -> None:
    before = served.log_types()
    code, out = cli(served, capsys, token, "capacity", "acme", servers)
    assert code == 1 and out["status"] == status
    if status == 422:
        assert out["errors"][0]["path"] == "$.servers"
    assert served.log_types() == before


def test_another_tenants_usage_is_a_404(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(served, capsys, "tok-acme", "usage", "ops")
    assert code == 1 and out["status"] == 404
