"""The classifier inside the platform loop: events, retrains, replay, model verification."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import Classification, WorkloadKind
from sextant_core.classification.classifier import CollaborativeClassifier
from sextant_core.classification.engine import (
    ENGINE_VERSIONS,
    EngineParams,
    ModelMismatch,
    clear_memo,
    debias_caused,
    model_for,
    needs_retrain,
)
from sextant_core.classification.knowledge import KnowledgeBase
from sextant_core.classification.seeding import seed_events
from sextant_core.policies import AdmitAll, FirstFitPlanner, NoAdaptation, PolicySet
from sextant_core.profiling.plan import DefaultProfilingPlan
from sextant_core.replay import replay
from sextant_core.state import fold
from sextant_core.testing.builders import server
from sextant_core.testing.loop import InProcessPlatform
from sextant_core.testing.synthetic import SyntheticWorld, TrueWorkload

WORLD = SyntheticWorld(seed=3, platforms=4, max_cores=8, nodes=4)
HIGH = "p00"
ENGINE = EngineParams(retrain_min_rows=4)
POLICY = PolicySet(profile="cf-test", version="1", profiling=DefaultProfilingPlan(),
                   classifier=CollaborativeClassifier(ENGINE), admission=AdmitAll(),
                   planner=FirstFitPlanner(), reprovisioner=NoAdaptation())
KINDS = (WorkloadKind.BATCH, WorkloadKind.ANALYTICS, WorkloadKind.SERVICE)
TRUTH: dict[str, TrueWorkload] = {}


def policies(name: str) -> PolicySet:
    if name != POLICY.profile:
        raise KeyError(name)
    return POLICY


def agent(c: cmd.Command, at: float) -> list[ev.Event]:
    if isinstance(c, cmd.ExecuteProfileRuns):
        t = TRUTH[c.workload_id]
        out: list[ev.Event] = []
        for r in c.runs:
            if r.classification is Classification.INTERFERENCE:
                value, caused = t.tolerated[r.column], t.caused[r.column]
            else:
                value, caused = t.perf(r.platform, r.cores, r.nodes), None
            out.append(ev.ProfileSampleRecorded(at=at + 1, workload_id=c.workload_id, run_id=r.run_id,
                                                classification=r.classification, column=r.column,
                                                value=value, caused=caused))
        return out + [ev.ProfilingCompleted(at=at + 1, workload_id=c.workload_id, samples=len(c.runs))]
    if isinstance(c, cmd.StartWorkload):
        return [ev.WorkloadStarted(at=at + 1, workload_id=c.workload_id, allocation=c.allocation)]
    return []


def submit(wid: str, kind: WorkloadKind, at: float) -> ev.WorkloadSubmitted:
    return ev.WorkloadSubmitted(at=at, workload_id=wid, tenant="t", kind=kind,
                                target={"type": "completion_time", "seconds": 100.0},
                                spec={"type": "twin", "ref": wid}, requested_cores=1, requested_memory_gb=1.0)


@pytest.fixture(scope="module")
def log() -> list:  # type: ignore[type-arg]
    p = InProcessPlatform(POLICY, agent)
    p.submit([server("s0", platform=HIGH, cores=8, memory_gb=64)]
             + [server(f"s{i}", platform=f"p0{i}", cores=4) for i in range(1, 4)])
    seeds = [WORLD.workload(i, k) for k in KINDS for i in range(10)]
    p.submit(list(seed_events([s.seed(HIGH) for s in seeds])))
    for i in range(12):
        kind = KINDS[i % 3]
        TRUTH[f"w{i}"] = WORLD.workload(100 + i, kind)
        p.submit([submit(f"w{i}", kind, at=10.0 + i)])
    return p.log


def test_retrains_follow_the_classification_in_its_block(log) -> None:
    types = [e.type for e in log]
    first = types.index("WorkloadClassified")
    assert types[first + 1] == "ModelRetrained"  # no model yet: the first classification trains
    for i, t in enumerate(types):
        if t == "ModelRetrained":
            j = i
            while types[j] == "ModelRetrained":
                j -= 1
            assert types[j] == "WorkloadClassified"
            assert log[i].source == "classification" and log[i].causation_id == log[j].causation_id


def test_every_matrix_gets_rows_and_a_model(log) -> None:
    kb = fold(log).knowledge
    assert isinstance(kb, KnowledgeBase)
    het = kb.matrix(Classification.HETEROGENEITY, "batch")  # matrices are per kind
    assert het is not None and len(het) == 10 + 4  # 10 batch seeds + every classified batch workload
    assert het.model is not None and het.model.rows >= 10
    assert kb.matrix(Classification.SCALE_OUT, "batch") is None  # single-node jobs have no scale-out
    assert len(kb.pending) == 12 and all(not p.samples for p in kb.pending.values())


def test_classification_carries_versions_and_two_measured_cells_per_row(log) -> None:
    c = [e.event() for e in log if e.type == "WorkloadClassified"][-1]
    assert c.model_versions["heterogeneity/service"].startswith("r")  # w11 is a service
    assert set(c.heterogeneity) == set(WORLD.platforms)
    assert set(c.tolerated) == set(c.caused) and len(c.tolerated) == 10
    assert all(0.0 <= v <= 100.0 for v in (*c.tolerated.values(), *c.caused.values()))
    assert 0.0 < c.confidence["heterogeneity"] <= 1.0
    kb = fold(log).knowledge
    row = kb.matrix(Classification.HETEROGENEITY, "service").rows[-1]
    assert len(row.cols) == 2  # the reference run + one heterogeneity run


def test_estimates_are_close_to_the_truth(log) -> None:
    errs = []
    for e in log:
        if e.type == "WorkloadClassified":
            c, t = e.event(), TRUTH[e.event().workload_id]
            truth = {p: t.perf(p) for p in WORLD.platforms}
            ratio = np.array([c.heterogeneity[p] / truth[p] for p in WORLD.platforms])
            errs.append(np.abs(ratio / np.exp(np.mean(np.log(ratio))) - 1.0))  # shape, not level
    assert np.mean(errs) < 0.10


def test_replay_rebuilds_every_model_and_decision(log) -> None:
    clear_memo()  # force every model to be retrained from the log and checked against its hash
    report = replay(log, policies)
    assert report.ok, report.differences[:3]
    assert report.state == fold(log)


def test_a_different_engine_cannot_reuse_the_recorded_model(log) -> None:
    kb = fold(log).knowledge
    het = kb.matrix(Classification.HETEROGENEITY, "batch")
    other = EngineParams(fit=ENGINE.fit.__class__(reg=0.5))
    clear_memo()
    with pytest.raises(ModelMismatch, match="recorded"):
        model_for(het, other)
    assert model_for(het, ENGINE) is not None


def test_retrain_is_due_after_the_documented_number_of_rows(log) -> None:
    het = fold(log).knowledge.matrix(Classification.HETEROGENEITY, "batch")
    params = EngineParams(retrain_min_rows=50, retrain_fraction=0.1)
    fact = het.model
    assert not needs_retrain(het, params)
    grown = het
    for i in range(49 - (len(het) - fact.rows)):
        grown = grown.with_row(f"x{i}", [("p01", 1.0)])
    assert not needs_retrain(grown, params)
    assert needs_retrain(grown.with_row("last", [("p01", 1.0)]), params)  # 50 = max(50, 10 % of rows)


def test_seeded_knowledge_equals_the_folded_seeds() -> None:
    seeds = seed_events([WORLD.workload(i, WorkloadKind.SERVICE).seed(HIGH) for i in range(5)])
    kb = KnowledgeBase.seeded(seeds)
    assert kb == fold(seeds).knowledge
    assert len(kb.matrix(Classification.SCALE_OUT, "service")) == 5
    cols = kb.matrix(Classification.INTERFERENCE, "service").columns
    assert len(cols) == 20 and all(c.startswith("t:") for c in cols[:10]) and cols[10] == "c:core"


def test_a_fast_path_workload_gets_population_estimates_with_no_confidence(log) -> None:
    from sextant_core.decide import decide, seed_for

    st = fold(log)
    sub = submit("fast", WorkloadKind.SERVICE, at=99.0).model_copy(update={"fast_path": True})
    st = fold([sub], st)
    c = cmd.ClassifyWorkload(workload_id="fast")
    d = decide(st, c, params=POLICY, seed=seed_for(c, st), at=99.0)
    out = d.events[0]
    assert isinstance(out, ev.WorkloadClassified)
    assert out.confidence == {"scale_up": 0.0, "scale_out": 0.0, "heterogeneity": 0.0, "interference": 0.0}
    assert set(out.heterogeneity) == set(WORLD.platforms) and len(out.tolerated) == 10
    before = fold(log).knowledge.matrix(Classification.HETEROGENEITY, "service")
    after = fold(d.events, st).knowledge.matrix(Classification.HETEROGENEITY, "service")
    assert len(after) == len(before)  # nothing measured, nothing appended


@pytest.mark.parametrize(("scores", "offset", "expected"), [
    ({"llc_cap": 0.5, "memory_bw": 3.0, "network_bw": 40.0}, 3.0, {"llc_cap": 0.0, "memory_bw": 0.0, "network_bw": 37.0}),
    ({"llc_cap": 4.5, "memory_bw": 100.0}, 3.0, {"llc_cap": 1.5, "memory_bw": 97.0}),
    ({"llc_cap": 0.5, "memory_bw": 3.0}, 0.0, {"llc_cap": 0.5, "memory_bw": 3.0}),
    ({"llc_cap": 2.0}, 1.0, {"llc_cap": 1.0}),
])
def test_caused_scores_lose_the_offset_and_stay_at_or_above_zero(scores, offset, expected) -> None:
    assert debias_caused(scores, offset) == pytest.approx(expected)


def test_engine_3_1_reports_engine_3_rows_with_the_caused_offset_only(log) -> None:
    state = fold(log)
    w = state.workloads["w4"]  # a batch workload
    base = CollaborativeClassifier(ENGINE_VERSIONS["3"]).classify(state, w, None)  # type: ignore[arg-type]
    debiased = CollaborativeClassifier(ENGINE_VERSIONS["3.1"]).classify(state, w, None)  # type: ignore[arg-type]
    offset = ENGINE_VERSIONS["3.1"].caused_offset
    assert offset > 0 and ENGINE_VERSIONS["3"].caused_offset == 0.0
    assert debiased.caused == pytest.approx({k: max(0.0, v - offset) for k, v in base.caused.items()})
    assert any(v > 0 for v in base.caused.values()) and debiased.caused != base.caused
    assert (debiased.tolerated, debiased.heterogeneity, debiased.scale_up) == (base.tolerated, base.heterogeneity,
                                                                            base.scale_up)
    assert ENGINE_VERSIONS["3.1"].tag() == ENGINE_VERSIONS["3"].tag()  # the same fitted models
