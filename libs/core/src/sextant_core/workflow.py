"""One service's reaction to one input event, as a pure function (DESIGN §3–§4).

`step(state, event, service=..., params=..., causation=...)` runs the process manager on the state
that already includes `event`, keeps the commands the service handles, decides them one after the
other and folds each decision's events before deciding the next. The caller appends the returned
events *immediately after* `state.position` (a head-conditional append), so every decision's
`state_position` is exactly the log position of the state it saw: decision *i* sees the log up to
`state.position + (events of decisions 0..i-1)`. Replay runs the very same function.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.collector import collector_paused
from sextant_contracts.envelope import Envelope

from .decide import DECIDED_COMMANDS, Decision, decide, seed_for
from .policies import PolicySet
from .process import react, reacts_to
from .state.evolve import evolve, fold_events
from .state.model import ClusterState

SERVICES = ("admission", "profiling", "classification", "planning", "reprovisioning", "telemetry")


@dataclass(frozen=True, slots=True)
class StepResult:
    state: ClusterState  # after folding the outputs (positions as they will be appended)
    events: tuple[ev.Event, ...]
    decisions: tuple[tuple[cmd.Command, Decision], ...]
    agent_commands: tuple[cmd.Command, ...]


def commands_for(service: str, state: ClusterState, event: ev.Event) -> tuple[cmd.Command, ...]:
    return tuple(c for c in react(state, event) if service == c.HANDLER)


class ReactionHost(Protocol):
    """Where a reaction runs: the log's current state, how a decided event is appended to it, and
    what happens to a command the host does not decide (the cluster agent's, another service's)."""

    @property
    def state(self) -> ClusterState: ...

    def apply(self, event: ev.Event) -> None:
        """Append `event` right after `state.position` and fold it into `state`."""
        ...

    def execute(self, command: cmd.Command) -> None:
        """A command of the reaction that `decides` left to the host (it may append events)."""
        ...


def react_and_decide(host: ReactionHost, event: ev.Event, *, params: PolicySet,
                     decides: Callable[[cmd.Command], bool],
                     causation: tuple[str, ...] = ()) -> tuple[tuple[cmd.Command, Decision], ...]:
    """The react → decide → fold loop, written once (the services' `step`, the twin's engine).

    The process manager's commands for `event` (already folded into `host.state`) are taken in
    order: each one `decides` accepts is decided on the host's state at that moment — with the
    seed of `seed_for` and the time `event.at` — and its events are applied before the next
    command is decided; every other command goes to `host.execute`. Deterministic given the host."""
    decisions: list[tuple[cmd.Command, Decision]] = []
    for c in react(host.state, event):
        if not decides(c):
            host.execute(c)
            continue
        state = host.state
        d = decide(state, c, params=params, seed=seed_for(c, state), at=event.at, causation=causation)
        decisions.append((c, d))
        for e in d.events:
            host.apply(e)
    return tuple(decisions)


def decided_by(service: str) -> Callable[[cmd.Command], bool]:
    """The commands `service` decides: its own, when the core decides their type."""
    return lambda c: service == c.HANDLER and c.HANDLER != "agent" and type(c) in DECIDED_COMMANDS


@dataclass(slots=True)
class _Pure:
    """A `ReactionHost` over an immutable state: applied events are folded and collected; the
    agent's commands are collected when the service is the agent, others dropped."""

    state: ClusterState
    service: str
    events: list[ev.Event] = field(default_factory=list)
    agent: list[cmd.Command] = field(default_factory=list)

    def apply(self, event: ev.Event) -> None:
        self.state = evolve(self.state, event, self.state.position + 1)
        self.events.append(event)

    def execute(self, command: cmd.Command) -> None:
        if command.HANDLER == "agent" and self.service == "agent":
            self.agent.append(command)


def step(state: ClusterState, event: ev.Event, *, service: str, params: PolicySet,
         causation: tuple[str, ...] = ()) -> StepResult:
    """React to `event` (already folded into `state`) as `service`. Pure and deterministic."""
    host = _Pure(state, service)
    decisions = react_and_decide(host, event, params=params, decides=decided_by(service), causation=causation)
    return StepResult(state=host.state, events=tuple(host.events), decisions=decisions,
                      agent_commands=tuple(host.agent))


class Decider:
    """A service's view of the log: holds the (immutable) folded state and reacts to inputs.

    The holder is the only mutable thing: `fold` advances it over stored envelopes (in position
    order, each exactly once), `handle` runs `step` on the current state without changing it, and
    the runner folds the stored outputs afterwards. Used by the services and by `sextant replay`.
    """

    def __init__(self, service: str, params: PolicySet, state: ClusterState | None = None) -> None:
        if service not in SERVICES and service != "agent":
            raise ValueError(f"unknown service {service!r}")
        self.service = service
        self.params = params
        self.state = state if state is not None else ClusterState()

    @property
    def position(self) -> int:
        return max(self.state.position, 0)

    def fold(self, envelopes: Iterable[Envelope]) -> None:
        """Advance over `envelopes`, the cyclic garbage collector paused (as `state.fold`; a run
        of one workload's samples in one copy, `fold_events`)."""
        def unfolded(last: int) -> Iterator[tuple[ev.Event, int]]:
            for env in envelopes:
                if env.position is None or env.position <= last:
                    continue  # already folded (or not from the log)
                last = env.position  # the state's position once `env` is folded
                yield env.event(), last

        with collector_paused():
            self.state = fold_events(unfolded(self.state.position), self.state)

    def snapshot(self) -> bytes:
        """The folded state as bytes (a disposable cache; only the same code may restore it)."""
        return pickle.dumps(self.state, protocol=5)

    def restore(self, blob: bytes) -> None:
        state = pickle.loads(blob)
        if not isinstance(state, ClusterState):
            raise TypeError("not a ClusterState snapshot")
        self.state = state

    def reacts(self, envelope: Envelope) -> bool:
        """False when `envelope` can never produce a command (no reaction for its type): the host
        may skip catching up and handling it. Unknown types are left to `handle`."""
        try:
            return reacts_to(ev.event_class(envelope.type))
        except KeyError:
            return True

    def handle(self, envelope: Envelope) -> StepResult:
        """React to `envelope`, which must already be folded. A record that is not part of this
        log (past its head, or about a workload the log never saw — stale data on a shared topic)
        is ignored."""
        event = envelope.event()
        foreign = (envelope.position is not None and envelope.position > self.state.position) or (
            isinstance(event, ev.WorkloadEvent) and event.workload_id not in self.state.workloads)
        if foreign:
            return StepResult(state=self.state, events=(), decisions=(), agent_commands=())
        return step(self.state, event, service=self.service, params=self.params, causation=(envelope.id,))
