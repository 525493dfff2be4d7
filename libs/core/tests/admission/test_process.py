"""The process manager moves ARQ queues (the additive ARQ hooks in process.py)."""

from __future__ import annotations

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_core.process import react
from sextant_core.testing.builders import record

from .conftest import World


def admits(cmds: tuple[cmd.Command, ...]) -> list[str]:
    return [c.workload_id for c in cmds if isinstance(c, cmd.AdmitWorkload)]


def world() -> World:
    return (World().server("s1").workload("r", on=(("s1", 1, 1.0),))
            .queued("a", 3).queued("b", 1).queued("c", 3, position=1))


def test_capacity_freed_retries_every_class_head() -> None:
    w = world()
    done = ev.WorkloadCompleted(at=9.0, workload_id="r")
    w.events.append(done)
    assert admits(react(w.state(), done)) == ["a", "b"]  # class 3's head, then class 1's; not c


def test_a_tick_retries_the_heads() -> None:
    w = world()
    tick = ev.Tick(at=300.0, seq=1, period_s=300.0)
    w.events.append(tick)
    assert admits(react(w.state(), tick)) == ["a", "b"]


def test_an_admission_moves_its_class_queue_on() -> None:
    w = world()
    adm = ev.WorkloadAdmitted(at=9.0, workload_id="a", decision=record(9), arq_class=3)
    w.events.append(adm)
    out = react(w.state(), adm)
    assert isinstance(out[0], cmd.PlaceWorkload) and out[0].workload_id == "a"
    assert admits(out) == ["c"]  # the new head of class 3


def test_no_queue_no_extra_commands() -> None:
    w = World().server("s1").workload("r", on=(("s1", 1, 1.0),))
    tick = ev.Tick(at=300.0, seq=1, period_s=300.0)
    w.events.append(tick)
    assert react(w.state(), tick) == ()
