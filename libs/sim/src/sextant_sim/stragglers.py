"""Straggler ground truth of a run, and scoring a detector against it (Quasar §4.3).

Two kinds of stragglers exist in the twin's analytics jobs:
- intrinsic: tasks whose work is ≥ 1.5× the median (`AnalyticsTruth.straggler`, data skew), drawn
  with the job; they lengthen its tail wherever it runs;
- injected (scenario `stragglers` share, ground truth v2 `stragglers`): one server of the job turns
  slow during its bulk stage; the world records (job, server, time, slowdown) when it happens.

`truth(engine)` lists both; `score(truth, detections)` gives precision and recall of a detector
that reports (workload id, server id) pairs, counting a detection as true when that pair was
injected [IMPL CHOICE: server-level, since the twin's telemetry is per node, not per task], and
the detection delay from the injection. This module reads the ground truth: it is evaluation, not
policy (`SANCTIONED_TRUTH_READ`), and no policy may import it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engine import Engine

SANCTIONED_TRUTH_READ = "straggler-truth"


@dataclass(frozen=True, slots=True)
class Injected:
    workload_id: str
    server_id: str
    at: float
    slowdown: float


@dataclass(frozen=True, slots=True)
class StragglerTruth:
    injected: tuple[Injected, ...]
    intrinsic_tasks: dict[str, int]  # workload id -> tasks ≥ 1.5× the median (analytics jobs only)
    planned: tuple[str, ...]  # jobs drawn with an injected straggler (it happens only if they run far enough)

    def as_json(self) -> dict[str, Any]:
        return {"injected": [{"workload_id": i.workload_id, "server_id": i.server_id, "at": round(i.at, 6),
                              "slowdown": round(i.slowdown, 6)} for i in self.injected],
                "planned": list(self.planned),
                "intrinsic_tasks": dict(sorted(self.intrinsic_tasks.items()))}


def truth(engine: Engine) -> StragglerTruth:
    """The stragglers of a finished (or running) engine's world."""
    inj = tuple(Injected(w, s, at, f) for w, s, at, f in engine.world.stragglers)
    intrinsic: dict[str, int] = {}
    planned: list[str] = []
    for sub in engine.setup.subs:
        an = sub.truth.analytics
        if an is None:
            continue
        intrinsic[sub.workload_id] = int(an.straggler.sum())
        if an.injected is not None:
            planned.append(sub.workload_id)
    return StragglerTruth(injected=inj, intrinsic_tasks=intrinsic, planned=tuple(planned))


@dataclass(frozen=True, slots=True)
class Score:
    precision: float
    recall: float
    true_positives: int
    detections: int
    injected: int
    mean_delay_s: float | None  # mean (detection time − injection time) over true positives


def score(t: StragglerTruth, detections: Iterable[tuple[str, str, float]]) -> Score:
    """Score (workload id, server id, time) detections (the first per pair counts). Precision is
    1.0 with no detections and recall 1.0 with nothing injected (nothing to miss)."""
    first: dict[tuple[str, str], float] = {}
    for w, s, at in detections:
        first[(w, s)] = min(at, first.get((w, s), at))
    truth_at = {(i.workload_id, i.server_id): i.at for i in t.injected}
    hits = [k for k in first if k in truth_at]
    delays = [first[k] - truth_at[k] for k in hits]
    return Score(precision=len(hits) / len(first) if first else 1.0,
                 recall=len(hits) / len(truth_at) if truth_at else 1.0,
                 true_positives=len(hits), detections=len(first), injected=len(truth_at),
                 mean_delay_s=sum(delays) / len(delays) if delays else None)
