"""The web console in a real headless Chromium (Debian's `chromium`, installed by `make install`,
driven by Playwright with its executable path; docs/console/README.md).

One served API (the same app as the process, `served_api`) over a PostgreSQL database of this
module's own, seeded by appending to the store (not through the API): the committed platform log
(36 workloads of tenant `default`, real placement decisions), one workload each for tenants `alpha`
and `beta`, and 10 000 workloads of tenant `bulk`. The browser is missing: the tests fail.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sextant_admission.console_testing import Signed as Session
from sextant_admission.console_testing import World, chromium, chromium_path, console_world
from sextant_cli.demo import read_recorded
from sextant_kit.testing.platform import sextant

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
AXE = FIXTURES / "vendor" / "axe.min.js"  # axe-core 4.14.1 (MPL-2.0), npm axe-core@4.14.1 axe.min.js
BULK = 10_000


@pytest.fixture(scope="module")
def world(pg_node: Any) -> Iterator[World]:
    with console_world(pg_node, read_recorded(FIXTURES / "platform-log.jsonl.gz"), bulk=BULK) as w:
        yield w


@pytest.fixture(scope="module")
def browser(world: World) -> Iterator[Any]:  # the world first: its set-up runs no loop of Playwright's
    if not chromium_path():
        pytest.fail("no chromium: `make install` installs Debian's chromium package (browser tests never skip)",
                    pytrace=False)
    with chromium() as b:
        yield b


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
                 f"/console/workloads/{world.placed_wid}/decisions/{world.decision_id}", "/console/log",
                 "/console/servers", f"/console/log?at={world.placed_position}", "/console/tenants",
                 "/console/tenants/alpha", "/console/workloads/wl-alpha-1"):
        ops.goto(path)
        ops.page.add_script_tag(content=script)
        found = ops.page.evaluate("async () => (await axe.run(document)).violations"
                                  ".map(v => ({id: v.id, impact: v.impact, n: v.nodes.length}))")
        serious = [v for v in found if v["impact"] in ("serious", "critical")]
        assert serious == [], (path, serious)
    ops.close()


def test_the_new_pages_render_with_their_charts(ops: Session, world: World) -> None:
    pages = {"/console/servers": "Servers", "/console/tenants": "Tenants", "/console/tenants/bulk": "Tenant bulk",
             f"/console/log?at={world.placed_position}": "Event log"}
    for path, title in pages.items():
        assert ops.goto(path).status == 200, path
        assert ops.page.get_by_role("heading", level=1).inner_text() == title
    ops.goto("/console/servers")
    heat = ops.page.get_by_test_id("heat-map")
    assert heat.locator("tbody tr").count() >= 2 and heat.locator("thead th").count() == 4 + 10  # 10 sources
    assert heat.locator("td.heat0, td.heat1, td.heat2, td.heat3, td.heat4").count() >= 11
    ops.goto("/console/tenants/bulk")
    assert ops.page.get_by_test_id("tenant-workloads").inner_text() == str(BULK)
    for path, chart in (("/console/", "qos-chart"), (f"/console/workloads/{world.placed_wid}", "measured-chart")):
        ops.goto(path)  # uPlot draws into the element: a canvas and the legend's series
        ops.page.locator(f"[data-testid={chart}][data-drawn=true] canvas").wait_for(timeout=10_000)
        assert ops.page.locator(f"[data-testid={chart}] .u-legend .u-series").count() >= 2
    assert ops.errors == []  # no script error, nothing refused by the content security policy


def test_the_log_page_shows_the_cluster_as_of_a_past_position(ops: Session, world: World) -> None:
    at = world.placed_position
    submitted = {e.payload["workload_id"] for e in world.log if e.type == "WorkloadSubmitted" and e.position <= at}
    ops.goto("/console/log")
    ops.page.get_by_label("Show the cluster as of log position").fill(str(at))
    ops.page.get_by_role("button", name="Show").click()
    ops.page.wait_for_load_state()
    assert ops.page.get_by_test_id("as-of").inner_text() == str(at)
    assert int(ops.page.get_by_test_id("as-of-total").inner_text()) == len(submitted)
    assert world.placed_wid in ops.page.get_by_test_id("heat-map").inner_text()  # placed at this position
    ops.goto(f"/console/log?at={at - 1}")
    assert world.placed_wid not in ops.page.get_by_test_id("heat-map").inner_text()  # not yet
    assert ops.page.locator("tbody[data-tail]").count() == 0  # read-only: no live tail on a past state
    assert ops.page.locator("table.events tbody tr td.num").first.inner_text() == str(at - 1)


def test_a_tenant_changes_a_target_through_the_api_path_and_needs_csrf(alpha: Session, world: World) -> None:
    import httpx

    world.submit("wl-alpha-target", "alpha")
    api = f"{world.base}/v1/workloads/wl-alpha-target"
    bearer = {"Authorization": f"Bearer {world.tokens['alpha']}"}
    alpha.goto("/console/workloads/wl-alpha-target")
    alpha.page.get_by_label("Target type").select_option("completion_time")
    alpha.page.get_by_label("Completion time (s)").fill("1234")
    alpha.page.get_by_role("button", name="Change target").click()
    alpha.page.wait_for_load_state()
    assert httpx.get(api, headers=bearer).json()["target"] == {"type": "completion_time", "seconds": 1234.0}
    assert "TargetUpdated" in alpha.page.locator("table.events").inner_text()
    alpha.page.get_by_label("Target type").select_option("instruction_rate")
    alpha.page.get_by_label("Instruction rate (instructions/s)").fill("-5")  # the contract's bound: > 0
    alpha.page.get_by_role("button", name="Change target").click()
    alpha.page.wait_for_load_state()
    assert "greater than 0" in alpha.page.get_by_test_id("target-error").inner_text()
    form = {"type": "instruction_rate", "instruction_rate.ips": "5"}
    url = f"{world.base}/console/workloads/wl-alpha-target/target"
    assert alpha.context.request.post(url, form=form, max_redirects=0).status == 403  # no CSRF token
    assert alpha.context.request.post(url, form={**form, "csrf": "forged"}, max_redirects=0).status == 403
    assert alpha.context.request.post(f"{world.base}/console/workloads/wl-beta-1/target",
                                      form={**form, "csrf": alpha.csrf()}, max_redirects=0).status == 404
    assert httpx.get(api, headers=bearer).json()["target"]["seconds"] == 1234.0  # nothing changed


def test_new_pages_keep_tenants_apart_and_tenant_management_is_an_operators(
        alpha: Session, ops: Session, browser: Any, world: World) -> None:
    base = world.base
    for path in ("/console/servers", "/console/tenants/beta", "/console/tenants/bulk"):
        assert alpha.goto(path).status == 404, path
    for path in ("/console/tenants", "/console/tenants/alpha", f"/console/log?at={world.placed_position}",
                 "/console/log?at=" + str(len(world.log) + 5)):
        assert alpha.goto(path).status == 200, path
        text = alpha.page.content()
        assert "wl-beta-1" not in text and "wl-bulk-" not in text and world.placed_wid not in text, path
        assert "beta" not in alpha.page.locator("main").inner_text(), path
    assert "Create tenant" not in alpha.page.content()
    csrf = alpha.csrf()
    assert alpha.context.request.post(f"{base}/console/tenants", form={"csrf": csrf, "name": "mallory"},
                                      max_redirects=0).status == 403
    assert alpha.context.request.post(f"{base}/console/tenants/beta/revoke", form={"csrf": csrf},
                                      max_redirects=0).status == 403
    assert ops.context.request.post(f"{base}/console/tenants", form={"name": "mallory"},
                                    max_redirects=0).status == 403  # an operator's form without its CSRF token
    ops.goto("/console/tenants")
    ops.page.get_by_label("Name").fill("gamma")
    ops.page.get_by_role("button", name="Create tenant").click()
    token = ops.page.get_by_test_id("new-token").inner_text()
    assert token.startswith("sxt_")
    world.tokens["gamma"] = token
    gamma = Session(browser, world, "gamma")
    try:
        assert gamma.page.get_by_test_id("who").inner_text() == "gamma"
        ops.goto("/console/tenants/gamma")
        ops.page.get_by_role("button", name="Revoke tenant gamma").click()
        ops.page.wait_for_load_state()
        assert ops.page.get_by_test_id("tenant-status").inner_text() == "revoked"
        gamma.goto("/console/")
        assert gamma.page.url.endswith("/console/login")  # its token is revoked: its session ended
    finally:
        gamma.close()


def _tab_order(page: Any, presses: int) -> list[tuple[str, bool]]:
    """What each Tab press focuses (its accessible text) and whether its focus is visible (an outline)."""
    out = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        out.append(tuple(page.evaluate("""() => {
            const el = document.activeElement, s = getComputedStyle(el);
            const label = el.labels && el.labels.length ? el.labels[0].innerText : (el.innerText || el.value);
            return [label.trim(), s.outlineStyle !== "none" && parseFloat(s.outlineWidth) > 0];
        }""")))
    return out


def test_keyboard_navigation_reaches_the_form_links_and_actions_in_order(alpha: Session, ops: Session,
                                                                          world: World) -> None:
    ops.goto("/console/workloads")
    first_rows = [a.inner_text() for a in ops.page.locator("#rows tbody tr td:first-child a").all()[:2]]
    order = _tab_order(ops.page, 16)
    assert [name for name, _ in order[:15]] == [
        "Skip to content", "Overview", "Workloads", "Servers", "Event log", "Tenants", "Sign out",
        "Tenant", "Kind", "State", "QoS", "Per page", "Filter", *first_rows]  # then the listing's links
    assert all(visible for _, visible in order), order
    alpha.goto("/console/workloads/wl-alpha-1")
    names = [name for name, _ in _tab_order(alpha.page, 14)]
    actions = ["Revoke this workload", "Target type", "Change target"]
    assert all(a in names for a in actions), names
    assert [names.index(a) for a in actions] == sorted(names.index(a) for a in actions)
    assert names.index("Sign out") < names.index("Revoke this workload")
