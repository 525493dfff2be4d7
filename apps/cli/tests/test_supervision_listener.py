"""The restart counter of `sextant_cli.supervision`, a supervisord event listener, spoken to in
supervisord's protocol (a header line with `len`, then the payload; it answers READY and
`RESULT 2\\nOK`): a start after an exit or a failed start is a restart, the first start is not; the
pid of each program's latest RUNNING is recorded (to find programs a dead supervisord left)."""

from __future__ import annotations

import io
import json
from pathlib import Path

from sextant_cli.supervision import listen, restarts, strays


def event(name: str, payload: str) -> str:
    return f"ver:3.0 server:supervisor serial:1 pool:restart-counter poolserial:1 eventname:{name} " \
           f"len:{len(payload)}\n{payload}"


def test_restarts_and_pids_are_recorded(tmp_path: Path) -> None:
    stream = "".join([
        event("PROCESS_STATE_STARTING", "processname:planning groupname:planning from_state:STOPPED tries:0"),
        event("PROCESS_STATE_RUNNING", "processname:planning groupname:planning from_state:STARTING pid:101"),
        event("PROCESS_STATE_EXITED", "processname:planning groupname:planning from_state:RUNNING expected:0 pid:101"),
        event("PROCESS_STATE_STARTING", "processname:planning groupname:planning from_state:EXITED tries:0"),
        event("PROCESS_STATE_BACKOFF", "processname:planning groupname:planning from_state:STARTING tries:1"),
        event("PROCESS_STATE_STARTING", "processname:planning groupname:planning from_state:BACKOFF tries:1"),
        event("PROCESS_STATE_RUNNING", "processname:planning groupname:planning from_state:STARTING pid:202"),
        event("PROCESS_STATE_STARTING", "processname:agent groupname:agent from_state:STOPPED tries:0"),
    ])
    out = io.StringIO()
    listen(tmp_path / "restarts.json", stdin=io.StringIO(stream), stdout=out)
    assert json.loads((tmp_path / "restarts.json").read_text()) == {"pids": {"planning": 202},
                                                                    "restarts": {"planning": 2}}
    assert restarts(tmp_path) == {"planning": 2}
    assert out.getvalue() == "READY\n" + "RESULT 2\nOKREADY\n" * 8


def test_a_recorded_pid_is_a_stray_only_while_it_runs_its_module(tmp_path: Path) -> None:
    import os

    (tmp_path / "restarts.json").write_text(json.dumps({"restarts": {}, "pids": {"planning": os.getpid()}}))
    # this process runs Python (`python -m pytest`, or an xdist worker's `python -c ...`)
    assert strays(tmp_path, {"planning": "python"}) == {"planning": os.getpid()}
    assert strays(tmp_path, {"planning": "sextant_planning.main"}) == {}  # a reused pid is not taken
