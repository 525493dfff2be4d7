"""`make up` / `make down` (docs/api/README.md): after `sextant-infra up`, `sextant up` starts the platform's
processes detached, under supervisord, with the API on $SEXTANT_API_HOST:$SEXTANT_API_PORT (127.0.0.1:8080 unless
set; here a free port, the machine is shared), and `sextant down` stops exactly them. A workload
submitted to the API reaches Kafka through the platform's relay: the broker's end offsets of the
workload-events topic move.

The stack is the session's real PostgreSQL (a database of this test's own) and Kafka, written to
`stack.env` the way `sextant-infra up` writes it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from sextant_admission.testing import own_database
from sextant_cli.platform import SERVICES
from sextant_contracts.topics import WORKLOAD_EVENTS
from sextant_infra.processes import free_port, pid_alive
from sextant_kit.testing import sextant, topic_end_offsets, until, write_stack_env

pytestmark = pytest.mark.integration


def records(bootstrap: str) -> int:
    return sum(asyncio.run(topic_end_offsets(bootstrap, WORKLOAD_EVENTS.name)).values())


def test_sextant_up_serves_the_api_and_down_stops_it(pg_node: Any, stack_env: dict[str, str],
                                                     tmp_path: Path) -> None:
    with own_database(pg_node, "api_up") as url:
        run = tmp_path / "run"
        run.mkdir()
        write_stack_env(run, url, stack_env["SEXTANT_KAFKA_BOOTSTRAP"])
        port = free_port()
        env = {"SEXTANT_API_PORT": str(port)}
        up = sextant("up", "--run-dir", str(run), env=env)
        pids: dict[str, int] = {}
        try:
            assert up.returncode == 0, up.stdout + up.stderr
            platform = json.loads((run / "platform.json").read_text())
            recorded = platform["processes"]
            assert set(recorded) == {*SERVICES, "relay", "agent"}
            assert platform["api"] == f"http://127.0.0.1:{port}"
            assert recorded["admission"]["port"] == port
            ps = sextant("ps", "--json", "--run-dir", str(run), env=env)
            assert ps.returncode == 0, ps.stdout + ps.stderr
            pids = {n: p["pid"] for n, p in json.loads(ps.stdout)["processes"].items()}
            assert set(pids) == set(recorded) and all(isinstance(p, int) for p in pids.values())
            api = f"http://127.0.0.1:{port}"
            assert httpx.get(f"{api}/readyz", timeout=10).status_code == 200
            assert httpx.get(f"{api}/openapi.json", timeout=10).json()["info"]["title"] == "sextant-admission"
            bootstrap = stack_env["SEXTANT_KAFKA_BOOTSTRAP"]
            before = records(bootstrap)
            submitted = httpx.post(f"{api}/v1/workloads", timeout=30, json={  # no tenant yet: auth is open
                "kind": "batch", "target": {"type": "completion_time", "seconds": 60},
                "spec": {"type": "container", "image": "busybox", "command": ["true"]}})
            assert submitted.status_code == 202, submitted.text
            until("the submission reached Kafka (end offsets moved)", lambda: records(bootstrap) > before, 60,
                  every_s=0.2)
            again = sextant("up", "--run-dir", str(run), env=env)
            assert again.returncode == 0 and "already up" in again.stdout
        finally:
            down = sextant("down", "--run-dir", str(run), env=env)
        assert down.returncode == 0, down.stdout + down.stderr
        assert pids and not [n for n, p in pids.items() if pid_alive(p)], "a process outlived `sextant down`"
        assert not (run / "platform.json").exists()
