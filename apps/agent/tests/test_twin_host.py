"""The twin executor hosts the twin's agent as the simulator's engine does (`sextant_sim.host`)."""

from __future__ import annotations

from sextant_agent.twin import TwinExecutor
from sextant_sim.engine import Engine
from sextant_sim.host import PRIORITY, AgentHost


def test_it_declares_the_agent_host_protocol() -> None:
    assert AgentHost in TwinExecutor.__mro__ and AgentHost in Engine.__mro__


def test_equal_time_happenings_pop_in_the_engines_order() -> None:
    """Scheduled in the reverse of the table's order at one instant, they come out in the
    table's order (server failure first, telemetry after the world's milestones), not in
    scheduling order as a single default priority would give."""
    executor = TwinExecutor("smoke", 1, speed=1000.0, wall0=0.0)
    executor._heap.clear()
    kinds = sorted(PRIORITY, key=lambda k: (PRIORITY[k], k), reverse=True)
    for k in kinds:
        executor.schedule(5.0, k, "x", 0)
    popped = [entry[3] for entry in sorted(executor._heap)]
    assert popped == sorted(kinds, key=lambda k: PRIORITY[k])  # stable: ties in scheduling order
    assert popped[0] == "fail" and popped.index("milestone") < popped.index("observe")
