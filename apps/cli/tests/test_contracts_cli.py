"""`sextant recurring contracts|show|accept|override|reject` against the real admission app (served
over HTTP from a thread, on the in-memory event store seeded with a recurring job whose contract is
inferred): each verb reaches its route; an infeasible override prints the problem naming the field
and exits 1; an unreachable API is one line and exit 1."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from sextant_admission.memtesting import Registry, Served
from sextant_admission.memtesting import served as serve_admission
from sextant_cli.main import main
from sextant_core.profiles import policy_set
from sextant_core.recurring.decisions import template_id
from sextant_core.testing.builders import server
from sextant_core.testing.loop import InProcessPlatform, steady_agent
from sextant_core.testing.recurring import runs

TID = template_id("default", "etl-hourly-0")


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    """The admission app in open mode (no tenants: tenant `default`), served on a free port."""
    p = InProcessPlatform(policy_set("foundation"), steady_agent)
    p.submit([server("s1", cores=16, memory_gb=128.0)])
    p.submit(runs("default", "etl-hourly", 6))
    with serve_admission(p.log, api_auth="open", registry=Registry(tenants=(), active=False)) as out:
        yield out


def cli(served: Served, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["recurring", *args, "--api", served.url])
    return code, capsys.readouterr().out


def as_json(text: str) -> Any:
    return json.loads(text)


def test_contracts_lists_the_template_with_its_terms(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(served, capsys, "contracts")
    assert code == 0
    assert TID in out and "inferred" in out and "1800" in out  # d = 1 800 s


def test_show_prints_the_contract(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(served, capsys, "show", TID)
    assert code == 0
    doc = as_json(out)
    assert doc["contract"]["version"] == 1 and doc["contract"]["earliest_start_s"] == 30.0


def test_an_infeasible_override_prints_the_field_and_fails(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    before = served.log_types()
    code, out = cli(served, capsys, "override", TID, "--deadline-s", "300")
    assert code == 1
    assert as_json(out)["errors"][0]["path"] == "$.deadline_s"
    assert served.log_types() == before


def test_override_accept_and_reject_are_recorded(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(served, capsys, "override", TID, "--deadline-s", "1500", "--skyline", "3,3,3,3,3,3,3,3,3,3")
    assert code == 0 and as_json(out)["verdict"] == "override"
    code, out = cli(served, capsys, "accept", TID, "--version", "1")
    assert code == 0 and as_json(out) == {"template_id": TID, "version": 1, "verdict": "accept"}
    code, out = cli(served, capsys, "reject", TID)
    assert code == 0 and as_json(out)["verdict"] == "reject"
    assert served.log_types()[-3:] == ["ContractSignedOff"] * 3
    code, out = cli(served, capsys, "contracts", "--status", "rejected")
    assert code == 0 and TID in out


def test_a_stale_version_is_refused(served: Served, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = cli(served, capsys, "accept", TID, "--version", "7")
    assert code == 1 and as_json(out)["status"] == 409


def test_an_unreachable_api_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code = main(["recurring", "contracts", "--api", f"http://127.0.0.1:{port}"])
    err = capsys.readouterr().err
    assert code == 1 and "cannot reach the API" in err and len(err.strip().splitlines()) == 1
