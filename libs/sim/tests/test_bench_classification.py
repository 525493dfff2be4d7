"""`bench/classification.py` on the twin: workloads are submitted and profiled as the twin does."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import numpy as np
import pytest
from sextant_contracts.model import Classification, WorkloadKind
from sextant_core.profiling.plan import column_cores
from sextant_kit.testing import load_script

BENCH = Path(__file__).resolve().parents[3] / "bench" / "classification.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script(BENCH, "bench_classification")


@pytest.fixture(scope="module")
def src(bench: ModuleType) -> object:
    return bench.TwinSource(1, scenario="smoke")


def test_bench_submits_the_request_the_twin_submits(bench: ModuleType, src: object) -> None:
    subs = [s for s in src.setup.subs if s.truth.kind is WorkloadKind.SERVICE]  # type: ignore[attr-defined]
    assert subs
    for s in subs[:5]:
        mine = bench.submission(src, s.workload_id, bench.TwinWorkload(s.workload_id, s.truth.kind, s.truth), 1.0)
        assert mine.requested_cores == s.event.requested_cores
        assert mine.requested_memory_gb == s.event.requested_memory_gb


def test_a_service_is_profiled_near_its_request_and_scored_at_that_reference(bench: ModuleType, src: object) -> None:
    state = bench.initial_state(src)
    p = bench.policy(2, bench.EngineParams())
    rng = np.random.default_rng(0)
    seen = 0
    for i in range(12):
        w = src.new(i, WorkloadKind.SERVICE)  # type: ignore[attr-defined]
        if w.truth.requested_cores < 2:
            continue
        wid = f"t-{i}"
        state, _c, info, _dt = bench.classify_one(src, state, p, wid, w, 10.0 + i, rng)
        ws = state.workloads[wid]
        assert ws.requested_cores == w.truth.requested_cores
        ref = next(r for r in ws.profile_runs if r.classification is Classification.SCALE_UP)
        # the reference is sized from the request (never the 1-core column for a multi-core request)
        assert column_cores(ref.column) == ref.cores > 1
        # heterogeneity truth is scored at the plan's reference configuration
        assert info["ref_cores"] == ref.cores
        assert all(r.cores == ref.cores for r in ws.profile_runs
                   if r.classification is not Classification.SCALE_UP)
        seen += 1
    assert seen >= 3
