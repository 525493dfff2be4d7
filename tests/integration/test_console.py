"""The web console in a real headless Chromium (Debian's `chromium`, installed by `make install`,
driven by Playwright with its executable path; docs/console/README.md).

One served API (the same app as the process, `served_api`) over a PostgreSQL database of this
module's own, seeded by appending to the store (not through the API): the committed platform log
(36 workloads of tenant `default`, real placement decisions), one workload each for tenants `alpha`
and `beta`, and 10 000 workloads of tenant `bulk`. The browser is missing: the tests fail.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sextant_admission.testing import create_tenants, own_database, served_api
from sextant_cli.demo import read_recorded
from sextant_contracts.envelope import Envelope
from sextant_kit.eventstore.postgres import PostgresEventStore
from sextant_kit.testing.platform import sextant

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AXE = FIXTURES / "vendor" / "axe.min.js"  # axe-core 4.14.1 (MPL-2.0), npm axe-core@4.14.1 axe.min.js
BULK = 10_000
SEED = "console-test-seed"


def chromium_path() -> str:
    path = os.environ.get("SEXTANT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("no chromium: `make install` installs Debian's chromium package (browser tests never skip)",
                    pytrace=False)
    return path


def _submitted(template: Envelope, wid: str, tenant: str) -> Envelope:
    return template.model_copy(update={
        "id": f"seed-{wid}", "stream": f"workload-{wid}", "stream_version": 1, "position": None,
        "payload": {**template.payload, "workload_id": wid, "tenant": tenant, "name": wid}})


async def _append(url: str, envelopes: list[Envelope], input_id: str) -> None:
    store = PostgresEventStore.from_url(url)
    try:
        await store.append_and_track(SEED, input_id, None, envelopes)
    finally:
        await store.close()


def _run(coro: Any) -> Any:
    """`asyncio.run` in a thread of its own: Playwright's sync API keeps a loop running in this one."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


class World:
    def __init__(self, url: str, base: str, tokens: dict[str, str], log: list[Envelope]) -> None:
        self.url, self.base, self.tokens, self.log = url, base, tokens, log
        self.template = next(e for e in log if e.type == "WorkloadSubmitted")
        placed = next(e for e in log if e.type == "PlacementDecided")
        self.placed_wid = placed.payload["workload_id"]
        self.decision_id = placed.payload["decision"]["decision_id"]

    def submit(self, wid: str, tenant: str) -> None:
        """A new workload appended straight to the store (as another process would)."""
        _run(_append(self.url, [_submitted(self.template, wid, tenant)], f"seed-{wid}"))


@pytest.fixture(scope="module")
def world(pg_node: Any) -> Iterator[World]:
    with own_database(pg_node, "console") as url:
        tokens = create_tenants(url, alpha={}, beta={}, ops={"operator": True})
        log = read_recorded(FIXTURES / "platform-log.jsonl.gz")
        # positions 1..N as recorded (the decisions' state positions point into them)
        _run(_append(url, [e.model_copy(update={"position": None}) for e in log], "seed-fixture"))
        w = World(url, "", tokens, log)
        _run(_append(url, [_submitted(w.template, "wl-alpha-1", "alpha"),
                                  _submitted(w.template, "wl-beta-1", "beta")]
                            + [_submitted(w.template, f"wl-bulk-{i:05d}", "bulk") for i in range(BULK)], "seed-bulk"))
        with served_api(url, api_auth="tokens") as base:
            w.base = base
            yield w


@pytest.fixture(scope="module")
def browser(world: World) -> Iterator[Any]:  # the world first: its set-up runs no loop of Playwright's
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield b
        finally:
            b.close()


class Session:
    """A browser context signed in with one tenant's token; console errors (a CSP refusal, a
    script error) are collected."""

    def __init__(self, browser: Any, world: World, who: str, **options: Any) -> None:
        self.world = world
        self.context = browser.new_context(base_url=world.base, **options)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto("/console/login")
        self.page.get_by_label("API token").fill(world.tokens[who])
        self.page.get_by_role("button", name="Sign in").click()
        self.page.wait_for_url("**/console/")

    def goto(self, path: str) -> Any:
        return self.page.goto(path)

    def close(self) -> None:
        self.context.close()


@pytest.fixture(scope="module")
def ops(browser: Any, world: World) -> Iterator[Session]:
    s = Session(browser, world, "ops")
    yield s
    s.close()


@pytest.fixture(scope="module")
def alpha(browser: Any, world: World) -> Iterator[Session]:
    s = Session(browser, world, "alpha")
    yield s
    s.close()


def test_the_token_becomes_an_httponly_strict_cookie_and_never_a_url(ops: Session, browser: Any,
                                                                       world: World) -> None:
    (cookie,) = ops.context.cookies()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/console"
    assert world.tokens["ops"] not in cookie["value"] and world.tokens["ops"] not in ops.page.url
    assert ops.page.evaluate("document.cookie") == ""  # out of scripts' reach
    anonymous = browser.new_context(base_url=world.base)
    try:
        page = anonymous.new_page()
        page.goto("/console/workloads")
        assert page.url.endswith("/console/login")  # no session: the login page, nothing else
        page.get_by_label("API token").fill("sxt_not-a-token")
        page.get_by_role("button", name="Sign in").click()
        assert page.get_by_role("alert").is_visible() and anonymous.cookies() == []
        assert anonymous.request.get(f"{world.base}/console/log/stream").status == 401
    finally:
        anonymous.close()


def test_each_page_renders(ops: Session, world: World) -> None:
    pages = {"/console/": "Overview", "/console/workloads": "Workloads",
             f"/console/workloads/{world.placed_wid}": f"Workload {world.placed_wid}",
             f"/console/workloads/{world.placed_wid}/decisions/{world.decision_id}": f"Decision {world.decision_id[:12]}",
             "/console/log": "Event log"}
    for path, title in pages.items():
        response = ops.goto(path)
        assert response.status == 200, path
        assert ops.page.get_by_role("heading", level=1).inner_text() == title
    ops.goto(f"/console/workloads/{world.placed_wid}")
    assert ops.page.locator("#h-class + table tbody tr").count() >= 4  # the classification rows, with confidence
    assert re.search(r"\d\.\d\d", ops.page.locator("#h-class + table tbody tr").first.inner_text())
    assert ops.page.locator("#h-measured ~ table tbody tr td.num").count() >= 2
    assert ops.errors == []  # no script error, nothing refused by the content security policy


def test_the_decision_view_shows_what_sextant_explain_prints(ops: Session, world: World) -> None:
    r = sextant("explain", world.decision_id[:12], env={"SEXTANT_DATABASE_URL": world.url})
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    candidates = [tuple(line.strip()[len("candidate "):].split(": score ")) for line in lines
                  if line.startswith("  candidate ")]
    filters = [(plugin, verdicts.strip()) for plugin, _, verdicts in
               (line.strip()[len("filter "):].partition(":") for line in lines if line.startswith("  filter "))]
    assert candidates, r.stdout
    ops.goto(f"/console/workloads/{world.placed_wid}/decisions/{world.decision_id}")

    def table(testid: str) -> list[tuple[str, ...]]:
        rows = ops.page.get_by_test_id(testid).locator("tbody tr").all()
        return [tuple(c.inner_text() for c in row.locator("td").all()) for row in rows]

    assert table("candidates") == candidates
    assert table("filters") == (filters or [("no server refused",)])
    shown = ops.page.get_by_test_id("explain-lines").inner_text()
    for line in lines:
        if not line.startswith(("  candidate ", "  filter ")) and not line.startswith("  verdicts"):
            assert line.strip() in shown


def test_the_live_tail_shows_a_newly_appended_event(ops: Session, world: World) -> None:
    ops.goto("/console/log")
    before = int(ops.page.get_by_test_id("last-position").inner_text())
    world.submit("wl-live-ops", "default")
    row = ops.page.locator("tbody[data-tail] tr.fresh", has_text="wl-live-ops")
    row.wait_for(timeout=60_000)
    assert int(row.locator("td").first.inner_text()) > before
    assert "WorkloadSubmitted" in row.inner_text()


def test_a_tenant_sees_only_its_own_workloads_on_every_page_and_stream(alpha: Session, world: World) -> None:
    base = world.base
    for path in ("/console/workloads/wl-beta-1", f"/console/workloads/{world.placed_wid}",
                 f"/console/workloads/{world.placed_wid}/decisions/{world.decision_id}"):
        assert alpha.goto(path).status == 404, path
    assert alpha.context.request.get(f"{base}/console/workloads/wl-beta-1/stream").status == 404
    assert alpha.goto("/console/workloads/wl-alpha-1").status == 200
    for path in ("/console/", "/console/workloads", "/console/workloads?tenant=beta", "/console/log"):
        alpha.goto(path)
        text = alpha.page.content()
        assert "wl-beta-1" not in text and "wl-bulk-" not in text and world.placed_wid not in text, path
    alpha.goto("/console/workloads")
    assert alpha.page.get_by_test_id("matching").inner_text() == "1 matching"
    alpha.goto("/console/log")  # the live tail: beta's new workload never arrives, alpha's does
    world.submit("wl-beta-live", "beta")
    world.submit("wl-alpha-live", "alpha")
    alpha.page.locator("tbody[data-tail] tr.fresh", has_text="wl-alpha-live").wait_for(timeout=60_000)
    assert "wl-beta-live" not in alpha.page.locator("tbody[data-tail]").inner_text()


def test_actions_need_the_csrf_token(alpha: Session, world: World) -> None:
    world.submit("wl-alpha-revoke", "alpha")
    url = f"{world.base}/console/workloads/wl-alpha-revoke/revoke"
    assert alpha.context.request.post(url, form={"csrf": "forged"}, max_redirects=0).status == 403
    assert alpha.context.request.post(f"{world.base}/console/workloads/wl-beta-1/revoke",
                                      form={"csrf": "forged"}, max_redirects=0).status == 403
    alpha.goto("/console/workloads/wl-alpha-revoke")
    assert alpha.page.get_by_test_id("state").inner_text() != "revoked"
    alpha.page.get_by_role("button", name="Revoke this workload").click()
    alpha.page.wait_for_load_state()
    assert alpha.page.get_by_test_id("state").inner_text() == "revoked"


def test_a_page_backed_by_10000_workloads_renders(ops: Session, world: World) -> None:
    assert ops.goto("/console/workloads?tenant=bulk&limit=500").status == 200
    assert ops.page.get_by_test_id("matching").inner_text() == f"{BULK} matching"
    assert ops.page.locator("#rows tbody tr").count() == 500
    ops.page.get_by_role("link", name="Next page").click()
    ops.page.wait_for_load_state()
    assert ops.page.locator("#rows tbody tr").first.inner_text().startswith("wl-bulk-00500")
    ops.goto("/console/")
    assert int(ops.page.get_by_test_id("total").inner_text()) >= BULK + 36


def test_no_serious_accessibility_violations(browser: Any, world: World) -> None:
    script = AXE.read_text()
    ops = Session(browser, world, "ops", bypass_csp=True)  # axe is injected inline: the policy would refuse it
    for path in ("/console/", "/console/workloads", f"/console/workloads/{world.placed_wid}",
                 f"/console/workloads/{world.placed_wid}/decisions/{world.decision_id}", "/console/log"):
        ops.goto(path)
        ops.page.add_script_tag(content=script)
        found = ops.page.evaluate("async () => (await axe.run(document)).violations"
                                  ".map(v => ({id: v.id, impact: v.impact, n: v.nodes.length}))")
        serious = [v for v in found if v["impact"] in ("serious", "critical")]
        assert serious == [], (path, serious)
    ops.close()
