"""`sextant demo --keep`: the platform stays up, the way to stop it is printed, and Ctrl-C,
SIGTERM or a process that exits ends the wait (the caller then stops everything)."""

from __future__ import annotations

import argparse
import os
import signal
import threading
from types import SimpleNamespace
from typing import Any

from sextant_cli import demo


class FakePopen:
    def __init__(self) -> None:
        self.code: int | None = None

    def poll(self) -> int | None:
        return self.code


def fake_platform(popen: FakePopen) -> Any:
    return SimpleNamespace(procs={"admission": SimpleNamespace(popen=popen)}, url=lambda _: "http://127.0.0.1:9")


def test_keep_is_an_option_of_demo() -> None:
    parser = argparse.ArgumentParser()
    demo.register(parser.add_subparsers())
    assert parser.parse_args(["demo", "--keep"]).keep is True
    assert parser.parse_args(["demo"]).keep is False


def test_keep_up_says_how_to_stop_and_returns_on_sigterm(capsys: Any) -> None:
    popen = FakePopen()
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGTERM))
    timer.start()
    demo.keep_up(fake_platform(popen))
    out = capsys.readouterr().out
    assert "http://127.0.0.1:9/console/" in out and "Ctrl-C" in out and f"kill {os.getpid()}" in out
    assert "stopping the platform" in out
    assert signal.getsignal(signal.SIGTERM) is not signal.default_int_handler  # restored


def test_keep_up_returns_when_a_process_exits(capsys: Any) -> None:
    popen = FakePopen()
    threading.Timer(0.2, lambda: setattr(popen, "code", 1)).start()
    demo.keep_up(fake_platform(popen))
    assert "exited" in capsys.readouterr().out
