"""The API verbs find the API the way `make up` started it: the URL `sextant up` recorded in the run
folder (`$SEXTANT_RUN_DIR`, default the repository's `.run/`), then the environment
(`SEXTANT_API_URL`, then `SEXTANT_API_HOST` / `SEXTANT_API_PORT`); `--api` overrides all. An
unreachable API is one line on stderr and exit status 1, never a traceback.

The "API" here is a local HTTP server that answers an empty workload page and records the paths
it was asked for; the CLI runs as a subprocess, as a user runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from sextant_infra.processes import free_port


class FakeApi:
    def __init__(self) -> None:
        self.paths: list[str] = []
        seen = self.paths

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                seen.append(self.path)
                body = json.dumps({"items": [], "next_cursor": None, "next": None}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_api() -> Iterator[FakeApi]:
    api = FakeApi()
    yield api
    api.close()


def sextant(args: list[str], run_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SEXTANT_API")}
    clean.pop("SEXTANT_TOKEN", None)
    return subprocess.run([sys.executable, "-m", "sextant_cli.main", *args], capture_output=True, text=True,
                          timeout=60, env={**clean, "SEXTANT_RUN_DIR": str(run_dir), **env}, cwd=run_dir)


def record_api(run_dir: Path, url: str) -> None:
    (run_dir / "platform.json").write_text(json.dumps({"api": url, "processes": {}}))


def test_the_url_recorded_in_the_run_folder_comes_first(fake_api: FakeApi, tmp_path: Path) -> None:
    record_api(tmp_path, f"http://127.0.0.1:{fake_api.port}")
    r = sextant(["list"], tmp_path, SEXTANT_API_PORT=str(free_port()))
    assert r.returncode == 0, r.stderr
    assert fake_api.paths and fake_api.paths[0].startswith("/v1/workloads")


def test_then_the_environment(fake_api: FakeApi, tmp_path: Path) -> None:
    r = sextant(["list"], tmp_path, SEXTANT_API_PORT=str(fake_api.port))
    assert r.returncode == 0, r.stderr
    assert fake_api.paths and fake_api.paths[0].startswith("/v1/workloads")


def test_an_unreachable_api_is_one_line_and_exit_1(tmp_path: Path) -> None:
    port = free_port()
    r = sextant(["status", "some-id"], tmp_path, SEXTANT_API_PORT=str(port))
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"127.0.0.1:{port}" in lines[0], r.stderr
