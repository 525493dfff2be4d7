"""Names and methods (docs/api/README.md, "Errors"): a workload name with a control character (NUL, an
escape sequence) or a bidirectional-formatting character (U+202E, ...) is a 422 naming `$.name`
and nothing is stored; a known path with a method it does not serve is a 405 with `Allow`; every
error, on every path (outside `/v1` too), is a problem document.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from sextant_admission.testing import InProcessApi, api_under_test, own_database
from sextant_kit.problems import MEDIA_TYPE, TYPE_BASE

pytestmark = pytest.mark.integration

WL = "/v1/workloads"
VALID: dict[str, Any] = {"kind": "batch", "target": {"type": "completion_time", "seconds": 600},
                         "spec": {"type": "twin", "ref": "w-1"}}
BAD_NAMES = {"nul": "a\x00b", "escape": "\x1b[31mred\x1b[0m", "newline": "two\nlines", "del": "a\x7fb",
             "c1": "a\x9bb", "rlo": "invoice\u202etxt.exe", "isolate": "a\u2066b\u2069", "lrm": "a\u200eb"}


@pytest.fixture(scope="module")
async def api(pg_node: Any) -> AsyncIterator[tuple[InProcessApi, dict[str, str]]]:
    with own_database(pg_node, "api_names") as url:
        async with api_under_test(url, api_auth="tokens") as api:
            yield api, await api.tenant("alpha")


def _problem(r: Any, status: int, slug: str, instance: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(MEDIA_TYPE)
    doc = r.json()
    assert (doc["type"], doc["status"], doc["instance"]) == (TYPE_BASE + slug, status, instance)
    assert doc["title"] and doc["detail"]
    return dict(doc)


@pytest.mark.parametrize("case", list(BAD_NAMES))
async def test_a_name_with_control_or_bidi_characters_is_refused(api: tuple[InProcessApi, dict[str, str]],
                                                                 case: str) -> None:
    client, alpha = api
    before = await client.log_size()
    r = await client.client.post(WL, json={**VALID, "name": BAD_NAMES[case]}, headers=alpha)
    doc = _problem(r, 422, "validation-failed", WL)
    assert [e["path"] for e in doc["errors"]] == ["$.name"]
    assert await client.log_size() == before


async def test_a_printable_unicode_name_is_accepted(api: tuple[InProcessApi, dict[str, str]]) -> None:
    client, alpha = api
    r = await client.client.post(WL, json={**VALID, "name": "ночной отчёт — 夜間 (v2)"}, headers=alpha)
    assert r.status_code == 202, r.text


@pytest.mark.parametrize(("method", "path", "allow"), [
    ("PUT", WL, "GET, POST"),
    ("DELETE", WL, "GET, POST"),
    ("PUT", f"{WL}/some-id", "DELETE, GET, PATCH"),
    ("POST", "/v1/state", "GET"),
    ("POST", "/readyz", "GET"),
])
async def test_a_method_a_path_does_not_serve_is_a_405_with_allow(api: tuple[InProcessApi, dict[str, str]],
                                                                  method: str, path: str, allow: str) -> None:
    client, alpha = api
    r = await client.client.request(method, path, headers=alpha, json={})
    _problem(r, 405, "method-not-allowed", path)
    assert r.headers["allow"] == allow


@pytest.mark.parametrize("path", ["/nope", "/v2/workloads", "/v1/nope", "/"])
async def test_an_unknown_path_is_a_404_problem_everywhere(api: tuple[InProcessApi, dict[str, str]],
                                                          path: str) -> None:
    client, alpha = api
    _problem(await client.client.get(path, headers=alpha), 404, "not-found", path)
