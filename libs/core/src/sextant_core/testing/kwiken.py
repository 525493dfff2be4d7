"""Builders for Kwiken platform tests: a three-stage service's declaration and a window of its
per-stage latency samples (lognormal with a 3 % slow mode, 10× the median)."""

from __future__ import annotations

import numpy as np
from sextant_contracts import kwiken as kw

STAGES = (kw.StageSpec(name="front", cost=1.0), kw.StageSpec(name="lookup", cost=2.0, fanout=50, partial=True),
          kw.StageSpec(name="agg", cost=1.0))
EDGES = (("front", "lookup"), ("lookup", "agg"))


def declared(workload_id: str = "svc-1", at: float = 10.0, **kw_: object) -> kw.ServiceStagesDeclared:
    args: dict[str, object] = {"stages": STAGES, "edges": EDGES, "reissue_budget": 0.05, "loss_budget": 0.001}
    args.update(kw_)
    return kw.ServiceStagesDeclared(at=at, workload_id=workload_id, **args)  # type: ignore[arg-type]


def window(at: float, seed: int, scale: float = 1.0, n: int = 250, workload_id: str = "svc-1"
           ) -> kw.StageLatenciesObserved:
    rng = np.random.default_rng(seed)
    stages = tuple(kw.StageSamples(stage=s.name, samples_ms=tuple(
        float(v) for v in np.round(scale * 10.0 * rng.lognormal(0.0, 0.8, n) * np.where(rng.random(n) < 0.03, 10, 1),
                                   3))) for s in STAGES)
    return kw.StageLatenciesObserved(at=at, workload_id=workload_id, window_start_s=at - 60.0, window_s=60.0,
                                     stages=stages)
