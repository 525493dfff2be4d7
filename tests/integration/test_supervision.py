"""Supervision (README "make up"; docs/platform.md "Supervision"): `sextant up` runs the platform's
processes under supervisord, which restarts a dead one; `sextant ps --json` shows each process
(`{"processes": {NAME: {"pid", "alive", "restarts", "lag"}}}`); after a `kill -9` the process
comes back with a new pid and its restart count rose, and `sextant up` (what `make up` runs)
finds the platform up. While a decider is stopped the API's `/readyz` answers 503, and 200 again
once it is back. Should supervisord itself be killed, `sextant down` still stops every process.

The stack is the session's real PostgreSQL (a database of this test's own) and Kafka, written to
`stack.env` the way `sextant-infra up` writes it. Waits are bounded polls, not timings.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sextant_admission.testing import own_database
from sextant_cli.platform import SERVICES
from sextant_infra.processes import free_port, pid_alive
from sextant_kit.testing import platform_ps, readyz, sextant, until, write_stack_env

pytestmark = pytest.mark.integration

NAMES = {*SERVICES, "relay", "agent"}


def test_a_killed_process_is_restarted_and_readyz_says_when_a_decider_is_down(
        pg_node: Any, stack_env: dict[str, str], tmp_path: Path) -> None:
    with own_database(pg_node, "supervision") as url:
        run = tmp_path / "run"
        run.mkdir()
        write_stack_env(run, url, stack_env["SEXTANT_KAFKA_BOOTSTRAP"])
        port = free_port()
        env = {"SEXTANT_API_PORT": str(port), "SEXTANT_RUN_DIR": str(run)}
        api = f"http://127.0.0.1:{port}"

        def ps() -> dict[str, Any]:
            return platform_ps(env)

        up = sextant("up", env=env)
        seen: dict[str, Any] = {}
        try:
            assert up.returncode == 0, up.stdout + up.stderr
            seen = ps()
            assert set(seen) == NAMES
            for name, p in seen.items():
                assert p["alive"] is True and isinstance(p["pid"], int) and p["restarts"] == 0, (name, p)
                assert p["lag"] is None or p["lag"] >= 0, (name, p)
            old = seen["planning"]["pid"]
            os.kill(old, signal.SIGKILL)
            back = until("planning restarted", lambda: (lambda p: p if p["alive"] and p["pid"] != old else None)(
                ps()["planning"]))
            assert back["restarts"] == 1
            again = sextant("up", env=env)
            assert again.returncode == 0 and "already up" in again.stdout, again.stdout + again.stderr
            assert ps()["planning"]["pid"] == back["pid"]
            until("the API ready", lambda: readyz(api) == 200)

            ctl = [sys.executable, "-m", "supervisor.supervisorctl", "-c", str(run / "supervisord.conf")]
            subprocess.run([*ctl, "stop", "planning"], check=True, capture_output=True, timeout=60)
            until("/readyz 503 while planning is stopped", lambda: readyz(api) == 503)
            subprocess.run([*ctl, "start", "planning"], check=True, capture_output=True, timeout=60)
            until("/readyz 200 once planning is back", lambda: readyz(api) == 200)

            seen = until("every process running", lambda: (lambda p: p if all(x["alive"] for x in p.values()) else None)(
                ps()))
            os.kill(int((run / "supervisord.pid").read_text()), signal.SIGKILL)  # its programs live on
            assert ps() == {} and all(pid_alive(p["pid"]) for p in seen.values())
        finally:
            down = sextant("down", env=env)  # stops them: the pids the restart counter recorded
        assert down.returncode == 0, down.stdout + down.stderr
        assert not [n for n, p in seen.items() if p.get("pid") and pid_alive(p["pid"])], "a process outlived down"
        assert not (run / "platform.json").exists()
