"""`Platform.wait_ready` restarts a process that lost its port to another process between
`free_port()` and its bind (once in `make test`: the API then waited 180 s for a decider that had
exited), and still fails at once, naming it, when a process dies for another reason."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest
from sextant_cli import platform as plat

# a stand-in service: binds SEXTANT_HTTP_PORT like uvicorn (same message when taken), answers /readyz
STANDIN = '''
import os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
if os.environ.get("STANDIN_CRASH"):
    print("boom", flush=True); sys.exit(3)
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.end_headers(); self.wfile.write(b"{}")
    def log_message(self, *a):
        pass
try:
    s = HTTPServer(("127.0.0.1", int(os.environ["SEXTANT_HTTP_PORT"])), H)
except OSError as e:
    print(f"ERROR:    [Errno {e.errno}] error while attempting to bind: address already in use", flush=True)
    sys.exit(1)
s.serve_forever()
'''


@pytest.fixture
def standin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> plat.Platform:
    (tmp_path / "standin_svc.py").write_text(STANDIN)
    monkeypatch.setitem(plat.MODULES, "standin", "standin_svc")
    return plat.Platform(tmp_path / "run", {"PYTHONPATH": str(tmp_path) + ":" + ":".join(sys.path)})


def test_a_process_that_lost_its_port_is_restarted_on_another(standin: plat.Platform) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        standin.ports["standin"] = port  # as if free_port() had handed out a port taken since
        standin.start("standin")
        try:
            standin.wait_ready(("standin",), timeout_s=30)
            assert standin.ports["standin"] != port
            assert standin.procs["standin"].popen.poll() is None
        finally:
            standin.stop()


def test_a_process_that_dies_otherwise_fails_at_once_with_its_name(standin: plat.Platform) -> None:
    standin.start("standin", {"STANDIN_CRASH": "1"})
    with pytest.raises(plat.PlatformError, match="standin exited with 3"):
        standin.wait_ready(("standin",), timeout_s=30)
