"""Non-finite numbers (docs/api/README.md, "Errors"): JSON has no Infinity or NaN, but Python's parser
accepts the literals `Infinity`, `-Infinity`, `NaN` and turns an overflowing literal (`1e400`) into
infinity. Every such number in a request body is a 422 `validation-failed` whose `errors` name the
field (code `finite_number`), on POST and on PATCH, and the log is unchanged.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sextant_admission.testing import InProcessApi, api_under_test, own_database
from sextant_kit.problems import MEDIA_TYPE, TYPE_BASE

pytestmark = pytest.mark.integration

WL = "/v1/workloads"
JSON = {"Content-Type": "application/json"}
SUBMIT = ('{"kind": "batch", "target": {"type": "deadline", "at": %s}, '
          '"spec": {"type": "twin", "ref": "w-1"}}')
PATCH = '{"target": {"type": "deadline", "at": %s}}'
LITERALS = ["Infinity", "-Infinity", "NaN", "1e400"]


@pytest.fixture(scope="module")
async def api(pg_node: Any) -> AsyncIterator[tuple[InProcessApi, dict[str, str], str]]:
    with own_database(pg_node, "api_nonfinite") as url:
        async with api_under_test(url, api_auth="tokens") as api:
            alpha = await api.tenant("alpha")
            r = await api.client.post(WL, content=(SUBMIT % "1e12").encode(), headers={**alpha, **JSON})
            assert r.status_code == 202, r.text
            yield api, alpha, r.json()["id"]


def _names_the_field(r: Any, instance: str) -> None:
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith(MEDIA_TYPE)
    doc = r.json()
    assert doc["type"] == TYPE_BASE + "validation-failed" and doc["instance"] == instance
    assert [(e["path"], e["in"], e["code"]) for e in doc["errors"]] == [("$.target.at", "body", "finite_number")]


@pytest.mark.parametrize("literal", LITERALS)
async def test_a_non_finite_number_is_a_422_naming_the_field_on_post_and_patch(
        api: tuple[InProcessApi, dict[str, str], str], literal: str) -> None:
    client, alpha, wid = api
    before = await client.log_size()
    _names_the_field(await client.client.post(WL, content=(SUBMIT % literal).encode(), headers={**alpha, **JSON}),
                     WL)
    _names_the_field(await client.client.patch(f"{WL}/{wid}", content=(PATCH % literal).encode(),
                                               headers={**alpha, **JSON}), f"{WL}/{wid}")
    assert await client.log_size() == before, "a refused request appended to the log"
