"""Every example of docs/api/README.md runs: the fenced blocks are read from the document itself.

- the `sextant tenants` block: each line runs as written (optional `[...]` parts included, `ID` the
  id of the token the previous lines printed last) against a database of this test's own, and
  exits 0; the operator it creates is listed as one;
- the submission (a `json` block with `kind`) is accepted by the API: 202;
- the problem document (a `json` block with `type`) is what the API answers to that submission
  with the field its `detail` names set to 0: the same type, title, status, detail and errors.
"""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sextant_admission.testing import api_under_test, own_database

pytestmark = pytest.mark.integration

DOC = Path(__file__).resolve().parents[2] / "docs" / "api" / "README.md"
TOKEN_ID = re.compile(r"sxt_([0-9a-f]{12})_")


def blocks(lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


def json_examples() -> tuple[dict[str, Any], dict[str, Any]]:
    docs = [json.loads(b) for b in blocks("json")]
    submission = next(d for d in docs if "kind" in d)
    problem = next(d for d in docs if "type" in d and str(d["type"]).startswith("https://"))
    return submission, problem


def test_the_tenants_block_runs_line_by_line(pg_node: Any) -> None:
    cli = [b for b in blocks("") if "sextant tenants" in b]
    assert len(cli) == 1
    lines = [line.split("#", 1)[0].strip() for line in cli[0].splitlines()]
    lines = [line for line in lines if line]
    assert lines and all(line.startswith("sextant tenants ") for line in lines)
    with own_database(pg_node, "api_docs_cli") as url:
        last_token_id = ""
        listed = ""
        for line in lines:
            words = re.sub(r"[\[\]]", "", line).split()[2:]
            words = [last_token_id if w == "ID" else w for w in words]
            r = subprocess.run([sys.executable, "-m", "sextant_cli", "tenants", "--url", url, *words],
                               capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})
            assert r.returncode == 0, (line, r.stdout, r.stderr)
            if found := TOKEN_ID.findall(r.stdout):
                last_token_id = found[-1]
            listed = r.stdout
        assert re.search(r"ops\s+│\s+operator", listed), listed


async def test_the_submission_is_accepted_and_the_problem_is_what_the_api_answers(pg_node: Any) -> None:
    submission, problem = json_examples()
    field = problem["errors"][0]["path"]  # $.target.qps
    bad = copy.deepcopy(submission)
    node = bad
    keys = field.removeprefix("$.").split(".")
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = 0
    with own_database(pg_node, "api_docs") as url:
        async with api_under_test(url, api_auth="tokens") as api:
            alpha = await api.tenant("alpha")
            r = await api.client.post("/v1/workloads", json=submission, headers=alpha)
            assert r.status_code == 202, r.text
            r = await api.client.post("/v1/workloads", json=bad, headers=alpha)
            got = r.json()
            assert r.status_code == problem["status"]
            for member in ("type", "title", "status", "detail", "errors", "instance"):
                assert got[member] == problem[member], member
