"""Chaos under supervision (`pytest -m chaos`, docs/platform.md "Supervision"): the platform runs as
`make up` runs it (`sextant up`: supervisord); while workloads are submitted over REST, each of
the six services and the agent is killed with SIGKILL once, and nobody restarts anything by hand.

It checks: supervisord restarted each victim (its pid changed, its restart count rose); every
accepted workload reaches a terminal state (0 lost); every decision id is recorded once and every
planning request (`WorkloadAdmitted`) caused exactly one placement decision (0 duplicated);
`sextant replay` re-derives every decision with 0 differences. Each victim's recovery time (kill →
running again, and kill → the API ready again) is printed and written to
`bench/results/chaos.json`, not asserted. Waits are bounded polls.
"""

from __future__ import annotations

import asyncio
import collections
import importlib.util
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest
from sextant_admission.testing import own_database
from sextant_cli.demo import submissions
from sextant_cli.platform import SERVICES
from sextant_cli.replay import read_log
from sextant_infra.processes import free_port
from sextant_kit.testing import platform_ps, readyz, sextant, until, write_stack_env

pytestmark = [pytest.mark.integration, pytest.mark.e2e, pytest.mark.chaos]

VICTIMS = (*SERVICES, "agent")
TERMINAL = {"completed", "failed", "revoked"}
RESULTS = Path(__file__).resolve().parents[2] / "bench" / "results" / "chaos.json"


KILLED_PROFILE = "sextant-adaptive"


class Submitter(threading.Thread):
    """Submits the twin scenario's workloads one after another (each with its own Idempotency-Key,
    retried with the same key while the API is down) until stopped; `accepted` are the ids of 202s."""

    def __init__(self, api: str, bodies: list[dict[str, Any]], every_s: float) -> None:
        super().__init__(daemon=True)
        self.api, self.bodies, self.every_s = api, bodies, every_s
        self.accepted: list[str] = []
        self.halt = threading.Event()

    def run(self) -> None:
        with httpx.Client(base_url=self.api, timeout=10) as client:
            for body in itertools.cycle(self.bodies):
                if self.halt.is_set():
                    return
                key = uuid.uuid4().hex
                while not self.halt.is_set():
                    try:
                        r = client.post("/v1/workloads", json=body, headers={"Idempotency-Key": key})
                    except httpx.HTTPError:
                        time.sleep(0.5)
                        continue
                    if r.status_code == 202:
                        self.accepted.append(r.json()["id"])
                        break
                    assert r.status_code >= 500, r.text  # a refusal would be a bug of the test
                    time.sleep(0.5)
                self.halt.wait(self.every_s)


def test_every_process_killed_once_while_submitting(pg_node: Any, stack_env: dict[str, str],
                                                     tmp_path: Path) -> None:
    with own_database(pg_node, "chaos") as url:
        run = tmp_path / "run"
        run.mkdir()
        write_stack_env(run, url, stack_env["SEXTANT_KAFKA_BOOTSTRAP"])
        port = free_port()
        env = {"SEXTANT_API_PORT": str(port), "SEXTANT_RUN_DIR": str(run), "SEXTANT_AGENT_SCENARIO": "smoke",
               "SEXTANT_AGENT_SPEED": "60", "SEXTANT_POLICY_PROFILE": KILLED_PROFILE}
        api = f"http://127.0.0.1:{port}"

        def ps() -> dict[str, Any]:
            return platform_ps(env, polling=True)

        def states_now() -> dict[str, str]:
            try:
                r = httpx.get(f"{api}/v1/workloads", params={"limit": 1000}, timeout=30)
                return {v["id"]: v["state"] for v in r.json()["items"]} if r.status_code == 200 else {}
            except httpx.HTTPError:
                return {}

        def ready() -> bool:
            return readyz(api, timeout=5) == 200

        def moment() -> str:
            """What the platform looked like when a wait ran out: /readyz, the processes, the states."""
            try:
                body = httpx.get(f"{api}/readyz", timeout=5).text
            except httpx.HTTPError as exc:
                body = repr(exc)
            try:
                procs = json.dumps(ps())
            except Exception as exc:  # noqa: BLE001 - an account, not a check
                procs = repr(exc)
            counts = collections.Counter(states_now().values())
            return f"readyz: {body}\nps: {procs}\nstates: {dict(counts)}\nload: {os.getloadavg()}"

        up = sextant("up", env=env)
        assert up.returncode == 0, up.stdout + up.stderr
        bodies = [b for _, b in submissions("smoke", 1, 0)]
        submitter = Submitter(api, bodies[1:], every_s=1.0)
        recovery: dict[str, dict[str, float]] = {}
        try:
            # the chaos starts on a warm platform: the flagship's first classification trains the
            # models of the seeded matrices (with rank selection), minutes on a loaded machine, and
            # its consumer commits nothing meanwhile (/readyz: not consuming). One workload warms it
            # before the submitter starts, so no backlog piles up behind that first classification
            # (seen at load 12: 280 workloads waiting, none classified after 240 s).
            first = until("the first workload accepted", lambda: _submit(api, bodies[0]), 60, explain=moment)
            submitter.accepted.append(first)
            until("a first workload classified, the API ready", lambda: ready() and any(
                s not in ("submitted", "profiling", "profiled") for s in states_now().values()), 240, explain=moment)
            submitter.start()
            for victim in VICTIMS:
                before = ps()[victim]
                assert before["alive"], (victim, before)
                t0 = time.monotonic()
                os.kill(before["pid"], signal.SIGKILL)
                back = until(f"{victim} restarted", lambda v=victim, b=before: (
                    lambda p: p if p.get("alive") and p["pid"] != b["pid"] else None)(ps().get(v, {})), 90, 0.25)
                running_s = time.monotonic() - t0
                until(f"the API ready after killing {victim}", ready, 120, 0.25, explain=moment)
                recovery[victim] = {"running_s": round(running_s, 2), "ready_s": round(time.monotonic() - t0, 2)}
                assert back["restarts"] > before["restarts"], (victim, before, back)
            submitter.halt.set()
            submitter.join(timeout=30)
            accepted = set(submitter.accepted)
            assert accepted

            def states() -> dict[str, str]:
                r = httpx.get(f"{api}/v1/workloads", params={"limit": 1000}, timeout=30)
                return {v["id"]: v["state"] for v in r.json()["items"]}

            def all_terminal() -> bool:
                s = states()
                return accepted <= set(s) and all(s[w] in TERMINAL for w in accepted)

            until("every accepted workload terminal", all_terminal, 150, 0.25, explain=moment)
        finally:
            submitter.halt.set()
            down = sextant("down", env=env)
        assert down.returncode == 0, down.stdout + down.stderr

        log = asyncio.run(read_log(url))
        ids = [e.payload["decision"]["decision_id"] for e in log if "decision" in e.payload]
        assert len(ids) == len(set(ids)), "a decision was recorded twice"
        placements = collections.Counter(e.causation_id for e in log
                                         if e.type in ("PlacementDecided", "PlacementDeferred"))
        admitted = [e.id for e in log if e.type == "WorkloadAdmitted"]
        assert admitted and all(placements.get(a, 0) == 1 for a in admitted), "a lost or duplicated placement"
        replayed = sextant("replay", "--url", url, env=env, timeout=300)
        assert replayed.returncode == 0, replayed.stdout[-2000:] + replayed.stderr[-2000:]
        assert " 0 differences" in replayed.stdout.strip().splitlines()[-1]

        report = {"machine": {"cores": os.cpu_count(), "python": sys.version.split()[0]},
                  "commit": _commit(), "workloads_accepted": len(accepted), "decisions": len(ids),
                  "recovery": recovery}
        print("\nrecovery after kill -9 (s):", json.dumps(recovery))
        write_results(report)


def _submit(api: str, body: dict[str, Any]) -> str | None:
    """POST one workload; its id on 202, None while the API cannot take it."""
    try:
        r = httpx.post(f"{api}/v1/workloads", json=body, timeout=10)
    except httpx.HTTPError:
        return None
    return str(r.json()["id"]) if r.status_code == 202 else None


def _commit() -> str:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                       cwd=RESULTS.parent, check=False)
    return r.stdout.strip() or "unknown"


def write_results(report: dict[str, Any]) -> None:
    """`bench/results/chaos.json` and its page `docs/results/chaos.md` (bench/results_docs.py), so
    the results pages stay generated from their JSON."""
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    spec = importlib.util.spec_from_file_location("results_docs", RESULTS.parents[1] / "results_docs.py")
    assert spec is not None and spec.loader is not None
    results_docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(results_docs)
    page = RESULTS.parents[2] / "docs" / "results" / "chaos.md"
    page.write_text(results_docs.page("chaos", json.loads(RESULTS.read_text())))
