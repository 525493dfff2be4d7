"""The start-up helpers PostgreSQL and Kafka share (sextant_infra/processes.py), without servers."""

from __future__ import annotations

from pathlib import Path

import pytest
from sextant_infra.processes import InfraError, fail_with_log, logged_since


def test_logged_since_reads_only_past_the_offset(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    assert not logged_since(log, 0, "ready")  # no file yet
    log.write_bytes(b"starting\nready to accept connections\n")
    assert logged_since(log, 0, "ready to accept")
    assert not logged_since(log, log.stat().st_size, "ready to accept")  # an earlier start's line


def test_fail_with_log_raises_with_the_tail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "server.log"
    log.write_text("line 1\nFATAL: could not bind\n")
    with pytest.raises(InfraError, match="(?s)broker exited; last lines of .*could not bind"):
        fail_with_log("broker exited", log)
    assert "FATAL: could not bind" in capsys.readouterr().err
