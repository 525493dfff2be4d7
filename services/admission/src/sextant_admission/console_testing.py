"""The web console's browser harness, shared by its tests (tests/integration/test_console.py), its
benchmark (bench/console.py) and `make docs-screens` (bench/console_screens.py).

`console_world(pg_node, log, bulk=N)` seeds a database of its own by appending to the store
(not through the API): a recorded platform log (`sextant_cli.demo.read_recorded`; positions 1..N as recorded),
tenants `alpha`, `beta` and the operator `ops` (tokens returned), one workload each for `alpha`
and `beta`, and `bulk` workloads of tenant `bulk`; then serves the API's app over HTTP
(`served_api`) and yields a `World`. `signed_in(browser, world, who)` is a Playwright context
signed in through the login form with that tenant's token, collecting console errors.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sextant_contracts.envelope import Envelope
from sextant_kit.eventstore.postgres import PostgresEventStore

from .testing import create_tenants, own_database, served_api

SEED = "console-test-seed"


def chromium_path() -> str | None:
    """Debian's chromium (`make install` installs it), or `$SEXTANT_CHROMIUM`; None when absent."""
    return os.environ.get("SEXTANT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def submitted(template: Envelope, wid: str, tenant: str) -> Envelope:
    """`template` (a recorded `WorkloadSubmitted`) as a new workload `wid` of `tenant`."""
    return template.model_copy(update={
        "id": f"seed-{wid}", "stream": f"workload-{wid}", "stream_version": 1, "position": None,
        "payload": {**template.payload, "workload_id": wid, "tenant": tenant, "name": wid}})


async def append(url: str, envelopes: list[Envelope], input_id: str) -> None:
    store = PostgresEventStore.from_url(url)
    try:
        await store.append_and_track(SEED, input_id, None, envelopes)
    finally:
        await store.close()


def run(coro: Any) -> Any:
    """`asyncio.run` in a thread of its own: Playwright's sync API keeps a loop running in this one."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


class World:
    """The seeded database (`url`), the served API (`base`), the tokens and the recorded log."""

    def __init__(self, url: str, base: str, tokens: dict[str, str], log: list[Envelope]) -> None:
        self.url, self.base, self.tokens, self.log = url, base, tokens, log
        self.template = next(e for e in log if e.type == "WorkloadSubmitted")
        placed = next(e for e in log if e.type == "PlacementDecided")
        self.placed_wid = placed.payload["workload_id"]
        self.decision_id = placed.payload["decision"]["decision_id"]
        self.placed_position = placed.position

    def submit(self, wid: str, tenant: str) -> None:
        """A new workload appended straight to the store (as another process would)."""
        run(append(self.url, [submitted(self.template, wid, tenant)], f"seed-{wid}"))


@contextmanager
def console_world(pg_node: Any, log: list[Envelope], *, bulk: int) -> Iterator[World]:
    with own_database(pg_node, "console") as url:
        tokens = create_tenants(url, alpha={}, beta={}, ops={"operator": True})
        run(append(url, [e.model_copy(update={"position": None}) for e in log], "seed-fixture"))
        w = World(url, "", tokens, log)
        run(append(url, [submitted(w.template, "wl-alpha-1", "alpha"), submitted(w.template, "wl-beta-1", "beta")]
                   + [submitted(w.template, f"wl-bulk-{i:05d}", "bulk") for i in range(bulk)], "seed-bulk"))
        with served_api(url, api_auth="tokens") as base:
            w.base = base
            yield w


class Signed:
    """A browser context signed in with one tenant's token; console errors (a CSP refusal, a
    script error) are collected in `errors`."""

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

    def csrf(self) -> str:
        """The session's CSRF token, as every page's sign-out form carries it."""
        return str(self.page.locator("form.logout input[name=csrf]").get_attribute("value"))

    def close(self) -> None:
        self.context.close()


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Debian chromium driven by Playwright (no Playwright browser download)."""
    from playwright.sync_api import sync_playwright

    path = chromium_path()
    if not path:
        raise RuntimeError("no chromium: `make install` installs Debian's chromium package")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox", "--disable-dev-shm-usage"])
        try:
            yield b
        finally:
            b.close()
