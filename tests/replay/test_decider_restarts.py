"""A decision is a function of the folded state, the input and the seed — never of what the
deciding process did before. Under `sextant-adaptive`, on a contended cluster (deferrals, ARQ
queueing, reclassifications, adjustments, probes), the recorded decisions are re-derived with 0
differences by deciders whose caches have any history:

- **restarted anywhere**: a cold policy set started at a block boundary from the pickled fold of
  the log before it (what a restarted service restores from its snapshot: no server journal, no
  memo, no index), against a log whose decisions were taken by warm deciders;
- **retried**: every policy call first re-runs its previous call (a decision on an older state
  that an append refused) and runs twice (decided, refused because the head moved, decided
  again) — only the last answer is recorded, as in the services' consumer loop.

The log is made in process (`sextant_core.testing.loop.InProcessPlatform`): the committed
platform fixture's knowledge seeds, six of its servers (one per platform) and its 36 submissions
at a faster pace, answered by a deterministic stand-in agent.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sextant_cli.demo import read_recorded
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.envelope import Envelope
from sextant_core.policies import PolicySet
from sextant_core.profiles import policy_set
from sextant_core.replay import replay
from sextant_core.state import fold
from sextant_core.testing.loop import InProcessPlatform

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "platform-log.jsonl.gz"
PROFILE = "sextant-adaptive"
POLICIES = ("profiling", "classifier", "admission", "planner", "reprovisioner")

pytestmark = pytest.mark.slow


def _u(*parts: object) -> float:
    """A deterministic number in [0, 1) from `parts`."""
    return int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:8], 16) / 2**32


def agent(c: cmd.Command, at: float) -> list[ev.Event]:
    """Profiling samples, starts and probe results as pure functions of the command."""
    if isinstance(c, cmd.ExecuteProfileRuns):
        out: list[ev.Event] = []
        for r in c.runs:
            if r.classification == "interference":
                value, caused = round(10 + 80 * _u(c.workload_id, r.column), 3), round(5 + 60 * _u(c.workload_id, r.column, "c"), 3)
            else:
                value, caused = round(1e8 * (1 + 4 * _u(c.workload_id)) * r.cores ** 0.8 * (0.5 + _u(r.platform)), 3), None
            out.append(ev.ProfileSampleRecorded(at=at + 1, workload_id=c.workload_id, run_id=r.run_id,
                                                classification=r.classification, column=r.column, value=value,
                                                caused=caused))
        return [*out, ev.ProfilingCompleted(at=at + 1, workload_id=c.workload_id, samples=len(c.runs))]
    if isinstance(c, cmd.StartWorkload):
        return [ev.WorkloadStarted(at=at + 1, workload_id=c.workload_id, allocation=c.allocation)]
    if isinstance(c, cmd.ProbeInterference):
        return [ev.InterferenceProbed(at=at + 1, workload_id=c.workload_id, probe_id=c.probe_id, purpose=c.purpose,
                                      tolerated={s: round(5 + 50 * _u(c.probe_id, s), 3) for s in c.sources},
                                      caused={s: round(10 + 70 * _u(c.probe_id, s, "c"), 3) for s in c.sources})]
    return []


@pytest.fixture(scope="module")
def log() -> list[Envelope]:
    recorded = read_recorded(FIXTURE)
    first: dict[str, ev.Event] = {}
    for e in recorded:
        if e.type == "ServerRegistered":
            first.setdefault(e.payload["platform"], e.event())
    p = InProcessPlatform(policy_set(PROFILE), agent)
    p.submit([e.event() for e in recorded if e.type == "KnowledgeSeeded"])
    p.submit(list(first.values())[:6])
    subs = [e.event() for e in recorded if e.type == "WorkloadSubmitted"]
    for i, s in enumerate(subs):  # 40 s apart: probe rounds (every 600 s) at 1200, 1800 and 2400
        at = 1000.0 + 40 * i
        p.submit([s.model_copy(update={"at": at})])
        running = [w for _, w in sorted(p.deciders["planning"].state.workloads.items()) if w.phase.value == "running"]
        if running:
            p.submit([ev.PerformanceObserved(at=at + 5, workload_id=w.workload_id, value=1.0,
                                             ratio_to_target=round(0.4 + 0.8 * _u(w.workload_id, i), 3))
                      for w in running])
            w = running[-1]
            if i % 4 == 1 and w.allocation is not None and w.kind.value != "service":  # a slow node
                # the node of the 4th task falls 2.5× between two task views, and that task, 2.5×
                # the others' size, straggles (ladder 8.8's rule, `reprovisioning.task_views`)
                servers = tuple(w.allocation.servers[k % len(w.allocation.servers)] for k in range(4))
                ratio = p.deciders["planning"].state.workloads[w.workload_id].observed[-1][1]
                slow = tuple(0.4 if sv == servers[3] else 1.0 for sv in servers)
                before = (0.3, 0.3, 0.3, 0.12)
                now = tuple(round(b + b / 60 / (2.5 if r < 1 else 1.0) * 0.5, 6) for b, r in zip(before, slow, strict=True))
                p.submit([ev.PerformanceObserved(at=at + 5.5, workload_id=w.workload_id, value=1.0,
                                                 ratio_to_target=round(ratio * 0.4, 3)),
                          ev.TaskAttemptsObserved(at=at + 5.5, workload_id=w.workload_id, servers=servers,
                                                  rates=(1.0,) * 4, progress=before, elapsed=(60.0,) * 4,
                                                  attempts=(0,) * 4),
                          ev.TaskAttemptsObserved(at=at + 6, workload_id=w.workload_id, servers=servers,
                                                  rates=slow, progress=now, elapsed=(60.5,) * 4, attempts=(0,) * 4)])
            if i % 3 == 2:
                p.submit([ev.WorkloadCompleted(at=at + 8, workload_id=running[0].workload_id)])
        p.submit([ev.Tick(at=at + 30, seq=i + 1, period_s=40.0)])
    return p.log


def test_the_log_is_a_contended_flagship_log(log: list[Envelope]) -> None:
    kinds = Counter(e.type for e in log)
    assert kinds["PlacementDeferred"] >= 5 and kinds["WorkloadQueued"] >= 5, kinds
    assert kinds["ReclassificationRequested"] >= 5 and kinds["AllocationAdjusted"] >= 1, kinds
    assert kinds["ModelRetrained"] >= 1 and kinds["PlacementDecided"] > kinds["WorkloadSubmitted"], kinds
    probes = Counter(e.payload["purpose"] for e in log if e.type == "ProbeRequested")
    assert probes["proactive"] >= 1 and probes["straggler"] >= 1, probes


def block_starts(log: list[Envelope]) -> list[int]:
    """Indexes where a block of outputs (or a fact) begins: where a process can have restarted."""
    return [i for i in range(1, len(log))
            if (log[i].source, log[i].causation_id) != (log[i - 1].source, log[i - 1].causation_id)]


def test_a_decider_restarted_at_any_block_rederives_the_same(log: list[Envelope]) -> None:
    starts = block_starts(log)
    decisions = 0
    for k in (0.35, 0.55, 0.75, 0.9):
        cut = starts[int(k * len(starts))]
        snapshot = pickle.loads(pickle.dumps(fold(log[:cut]), protocol=5))  # as `Decider.snapshot`
        assert snapshot.server_journal is None  # what a restored service starts from
        by_id = {e.id: e.event() for e in log[:cut]}
        report = replay(log[cut:], functools.cache(policy_set), state=snapshot, lookup=by_id.get)
        assert report.ok, (cut, report.differences[:3])
        decisions += report.decisions
    assert decisions >= 200


class Retrying:
    """A policy whose every call first re-runs its previous call (a decision on an older state,
    refused) and then runs twice (decided, refused, decided again); the last answer is returned."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._previous: dict[str, tuple[tuple[Any, ...], dict[str, Any]]] = {}

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr):
            return attr

        def call(*args: Any, **kw: Any) -> Any:
            if name in self._previous:
                prev_args, prev_kw = self._previous[name]
                attr(*prev_args, **prev_kw)
            attr(*args, **kw)
            self._previous[name] = (args, kw)
            return attr(*args, **kw)

        return call


def retrying(name: str) -> PolicySet:
    base = policy_set(name)
    fields = {f: getattr(base, f) for f in base.__dataclass_fields__}
    return PolicySet(**{**fields, **{f: Retrying(fields[f]) for f in POLICIES}})


def test_retried_and_refused_decisions_leave_nothing_in_what_is_recorded(log: list[Envelope]) -> None:
    policies: Callable[[str], PolicySet] = functools.cache(retrying)
    report = replay(log, policies)
    assert report.ok, report.differences[:3]
    assert report.decisions == sum(1 for e in log if isinstance(e.event(), ev.DecisionEvent)) >= 400
