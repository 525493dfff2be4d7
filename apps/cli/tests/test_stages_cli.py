"""`sextant stages ID FILE` against the real admission app (the server of test_tenants_vc_cli):
a cycle is the API's 422 naming `$.edges`, printed, exit 1, nothing written; a well-formed body for
a workload the log does not know is a 404."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sextant_cli.main import main

from .test_tenants_vc_cli import Served, served  # noqa: F401  (the served API fixture)

BODY = {"stages": [{"name": "a"}, {"name": "b"}], "edges": [["a", "b"]], "reissue_budget": 0.05}


def run(served: Served, capsys: pytest.CaptureFixture[str], tmp_path: Path, body: object) -> tuple[int, dict]:  # noqa: F811
    f = tmp_path / "stages.json"
    f.write_text(json.dumps(body))
    code = main(["stages", "svc", str(f), "--api", served.url, "--token", "op"])
    return code, json.loads(capsys.readouterr().out)


def test_a_cycle_is_a_422_naming_edges_and_writes_nothing(
        served: Served, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:  # noqa: F811
    before = served.log_types()
    code, out = run(served, capsys, tmp_path, {**BODY, "edges": [["a", "b"], ["b", "a"]]})
    assert code == 1 and out["status"] == 422 and out["errors"][0]["path"].startswith("$.edges")
    assert served.log_types() == before


def test_an_unknown_workload_is_a_404(served: Served, capsys: pytest.CaptureFixture[str],  # noqa: F811
                                      tmp_path: Path) -> None:
    code, out = run(served, capsys, tmp_path, BODY)
    assert code == 1 and out["status"] == 404
