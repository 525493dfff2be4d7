"""No peeking: the `sextant` profile decides from what was observed, never from what a
workload *is*. Two platforms see the same observations (servers, submissions' targets and sizes,
profiling samples, starts) for workloads whose hidden identity differs (their spec points at
another ground-truth record, their names differ); every decision they make must be byte-identical.

This is the core-level form (same log of observations ⇒ same decisions, through the whole
workflow: profiling plan, classification, ARQ admission, sizing and placement). The twin-level
form — two twins with different hidden truth and the same observations — runs in libs/sim once
its API for swapping the truth exists.
"""

from __future__ import annotations

from collections.abc import Sequence

from sextant_contracts import codec
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.ids import seed_from
from sextant_core.profiles import policy_set
from sextant_core.testing.loop import InProcessPlatform

PLATFORMS = ("A", "B", "C")


def observed(c: cmd.Command, at: float) -> Sequence[ev.Event]:
    """The agent's facts: a function of the workload id and the run only (the observations)."""
    if isinstance(c, cmd.ExecuteProfileRuns):
        out: list[ev.Event] = []
        for r in c.runs:
            h = seed_from(c.workload_id, r.column) % 1000 / 1000.0
            if r.classification == "interference":
                out.append(ev.ProfileSampleRecorded(at=at, workload_id=c.workload_id, run_id=r.run_id,
                                                    classification=r.classification, column=r.column,
                                                    value=40 + 60 * h, caused=30 * h))
            else:
                out.append(ev.ProfileSampleRecorded(at=at, workload_id=c.workload_id, run_id=r.run_id,
                                                    classification=r.classification, column=r.column,
                                                    value=1e9 * (0.6 + 0.4 * h) * r.cores))
        return [*out, ev.ProfilingCompleted(at=at, workload_id=c.workload_id, samples=len(out))]
    if isinstance(c, cmd.StartWorkload):
        return [ev.WorkloadStarted(at=at, workload_id=c.workload_id, allocation=c.allocation)]
    return []


def run(truth: str) -> list[str]:
    p = InProcessPlatform(policy_set("sextant"), observed)
    servers = [ev.ServerRegistered(at=0.0, server_id=f"s{i:02d}", platform=PLATFORMS[i % 3],
                                   capacity={"cores": 4 + 4 * (i % 3), "memory_gb": 32.0}) for i in range(9)]
    p.submit(servers)
    for i in range(12):
        kind = ("batch", "batch", "analytics", "service")[i % 4]
        target = ({"type": "instruction_rate", "ips": 9e8} if kind == "batch" else
                  {"type": "completion_time", "seconds": 3600.0} if kind == "analytics" else
                  {"type": "throughput_latency", "qps": 5e4, "p99_latency_ms": 1.0})
        p.submit([ev.WorkloadSubmitted(at=10.0 * (i + 1), workload_id=f"w{i:02d}", tenant="t", kind=kind,
                                       target=target, name=f"{truth}-job-{i}",
                                       spec={"type": "twin", "ref": f"{truth}:{i * 7919 % 101}"},
                                       requested_cores=1 + i % 3, requested_memory_gb=2.0)])
    return [codec.dumps(e.event()) for e in p.log if e.event().DECISION]


def test_same_observations_same_decisions_whatever_the_hidden_truth() -> None:
    a, b = run("truth-A"), run("truth-B")
    kinds = {codec.loads(x)["decision"]["profile"] for x in a}
    placed = [x for x in a if "allocation" in codec.loads(x)]
    assert kinds == {"sextant"} and len(a) == 12 * 4  # profiling, classification, admission, placement
    assert len(placed) == 12
    assert a == b
