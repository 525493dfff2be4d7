"""The twin's offline profiling campaign (`sextant_sim.seeding`) and its use in twin runs."""

from __future__ import annotations

import json
import math

import pytest
from sextant_contracts import codec
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_contracts.model import Classification, WorkloadKind
from sextant_core.classification.engine import clear_memo
from sextant_core.classification.knowledge import KnowledgeBase
from sextant_core.decide import decide, seed_for
from sextant_core.state.evolve import evolve
from sextant_core.state.model import EMPTY
from sextant_sim import baselines, seeding
from sextant_sim.estimates import EstimateSource
from sextant_sim.groundtruth import SOURCES
from sextant_sim.oracle import OracleView
from sextant_sim.runner import run_profile
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import Setup, prepare


@pytest.fixture(scope="module")
def smoke() -> Setup:
    return prepare(load_scenario("smoke"), 1)


@pytest.fixture(scope="module")
def ec2() -> Setup:
    return prepare(load_scenario("paragon-ec2-2500"), 6)


def test_campaign_draws_its_own_workloads_per_kind_round_robin_over_the_scenario_families(smoke: Setup) -> None:
    # smoke: batch = 4 Paragon families, analytics = hadoop, service = webserver; 30 per kind
    camp = seeding.campaign(smoke)
    kinds = [w.truth.kind for w in camp]
    assert kinds.count(WorkloadKind.BATCH) == kinds.count(WorkloadKind.ANALYTICS) == 30
    assert kinds.count(WorkloadKind.SERVICE) == 30
    batch = [w.truth.family for w in camp if w.truth.kind is WorkloadKind.BATCH]
    assert batch[:4] == ["paragon-io", "paragon-mp", "paragon-mt", "paragon-st"]  # sorted, round robin
    assert {w.truth.family for w in camp} == {"paragon-st", "paragon-mt", "paragon-mp", "paragon-io", "hadoop",
                                               "webserver"}
    scenario_refs = {t.ref for t in smoke.truths.values()}
    assert all(w.row_id.startswith("seed:") and w.truth.ref not in scenario_refs for w in camp)
    assert len({w.row_id for w in camp}) == len(camp)


def test_every_seed_row_is_dense(ec2: Setup) -> None:
    camp = seeding.campaign(ec2, per_kind=12)
    for w in camp:
        p = w.profile
        # batch: the reference configuration (1 core) on every platform
        assert set(p.heterogeneity) == {q.platform_id for q in ec2.cat.platforms}
        assert set(p.scale_up) == {"c1", "c2", "c4", "c8", "c16", "c32"}  # cr1.8xlarge has 32 cores
        assert set(p.tolerated) == set(p.caused) == set(SOURCES)
        assert not p.scale_out  # single-node kinds have no scale-out row
        assert all(0.0 <= v <= 100.0 for v in (*p.tolerated.values(), *p.caused.values()))


def test_a_service_seed_is_profiled_at_its_reference_where_it_fits(smoke: Setup) -> None:
    # smoke platforms: big 8, mid 4, small 2 cores; the webserver's reference is 4 cores -> big and mid only
    w = next(w for w in seeding.campaign(smoke, per_kind=2) if w.truth.kind is WorkloadKind.SERVICE)
    assert seeding.reference_cores(smoke, w.truth) == 4
    assert set(w.profile.heterogeneity) <= {"big", "mid"} and "big" in w.profile.heterogeneity


def test_a_service_seed_is_profiled_at_the_configuration_the_online_plan_gives_it(ec2: Setup) -> None:
    # the plan's reference run of a service is sized from its request (profiling.plan.service_reference);
    # seeds measured elsewhere (e.g. at memcached-large's 8 threads, where online runs use 4 cores)
    # put rows of another configuration into the matrices a new service is folded into
    servers = [ev.ServerRegistered(at=0, server_id=f"s-{p.platform_id}", platform=p.platform_id,
                                   capacity={"cores": p.cores, "memory_gb": p.memory_gb}) for p in ec2.cat.platforms]
    base = EMPTY
    for e in servers:
        base = evolve(base, e, base.position + 1)
    params = baselines.policy_set("sextant", estimates=None, oracle=None)  # type: ignore[arg-type]
    camp = [w for w in seeding.campaign(ec2, tuple(ec2.gt.families)) if w.truth.kind is WorkloadKind.SERVICE]
    differs = 0
    for w in camp:
        wid = f"w-{w.row_id}"
        st = evolve(base, ev.WorkloadSubmitted(at=1, workload_id=wid, tenant="t", kind=w.truth.kind,
                                               target={"type": "completion_time", "seconds": 1.0},
                                               spec={"type": "twin", "ref": wid},
                                               requested_cores=w.truth.requested_cores), base.position + 1)
        c = cmd.PlanProfiling(workload_id=wid)
        for e in decide(st, c, params=params, seed=seed_for(c, st), at=1).events:
            st = evolve(st, e, st.position + 1)
        ref = next(r for r in st.workloads[wid].profile_runs if r.classification is Classification.SCALE_UP)
        assert seeding.reference_cores(ec2, w.truth) == ref.cores
        assert all(p.cores >= ref.cores for p in ec2.cat.platforms if p.platform_id in w.profile.heterogeneity)
        differs += w.truth.threads != ref.cores
    assert differs > 0  # the threads would not do: some services' online reference is elsewhere


def test_multi_node_seeds_have_a_scale_out_row_up_to_100_nodes(smoke: Setup) -> None:
    w = next(w for w in seeding.campaign(smoke, per_kind=2) if w.truth.kind is WorkloadKind.ANALYTICS)
    assert set(w.profile.scale_out) == {f"n{n}" for n in seeding.SCALE_OUT_NODES}
    assert max(seeding.SCALE_OUT_NODES) == 100 and w.profile.scale_out["n100"] > w.profile.scale_out["n1"]


def test_measurements_are_noisy_like_real_profiling_runs(ec2: Setup) -> None:
    # perf_sd = 1.5 %: the seed's c1 entry differs from the noise-free value, by less than 5 sd
    errs = []
    high = ec2.cat.index(ec2.cat.reference().platform_id)
    for w in seeding.campaign(ec2, per_kind=12):
        true = ec2.profiler.performance(w.truth, high, 1, 1)
        errs.append(math.log(w.profile.scale_up["c1"] / true))
    assert all(e != 0.0 for e in errs)
    assert max(abs(e) for e in errs) < 5 * ec2.gt.noise.perf_sd * ec2.scenario.noise_scale


def test_campaign_is_deterministic_and_depends_on_the_seed(smoke: Setup) -> None:
    a = seeding.seeding_events(smoke)
    seeding._CACHE.clear()
    b = seeding.seeding_events(smoke)
    assert [codec.dumpb(e) for e in a] == [codec.dumpb(e) for e in b]
    other = seeding.seeding_events(prepare(load_scenario("smoke"), 2))
    assert codec.dumpb(a[0]) != codec.dumpb(other[0])


def test_only_profiles_that_learn_from_the_knowledge_base_are_seeded(smoke: Setup) -> None:
    view = OracleView(smoke)
    src = EstimateSource(smoke.truths, smoke.profiler, smoke.cat, smoke.gt, smoke.seed, 1.0)
    sextant = baselines.policy_set("sextant", estimates=src, oracle=view)
    least = baselines.policy_set("least-loaded", estimates=src, oracle=view)  # the engine by default
    on_estimates = baselines.policy_set("least-loaded", estimates=src, oracle=view, classifier="estimates")
    oracle = baselines.policy_set("oracle", estimates=src, oracle=view)
    assert len(seeding.events_for(smoke, sextant)) == 90 * 4 - 30  # batch rows have no scale-out
    assert len(seeding.events_for(smoke, least)) == 90 * 4 - 30
    assert seeding.events_for(smoke, on_estimates) == ()
    assert seeding.events_for(smoke, oracle) == ()


@pytest.fixture(scope="module")
def sextant_log() -> list[dict[str, object]]:
    res = run_profile("smoke", "sextant", seed=1, keep_log=True)
    lines = res.engine.log.lines if res.engine.log is not None else None
    assert lines is not None
    return [json.loads(line) for line in lines]


def test_a_sextant_run_starts_from_the_seeds_in_its_log(sextant_log: list[dict[str, object]]) -> None:
    types = [r["type"] for r in sextant_log]
    first_other = next(i for i, t in enumerate(types) if t not in ("ServerRegistered", "KnowledgeSeeded"))
    assert types[:first_other].count("KnowledgeSeeded") == 330
    assert "KnowledgeSeeded" not in types[first_other:]
    state = EMPTY
    for r in sextant_log[:first_other]:
        state = evolve(state, _event(r), int(r["position"]))  # type: ignore[arg-type]
    kb = state.knowledge
    assert isinstance(kb, KnowledgeBase)
    assert len(kb.matrix(Classification.HETEROGENEITY, "batch")) == 30  # matrices are per kind
    assert len(kb.matrix(Classification.SCALE_OUT, "analytics")) == 30


def test_replay_of_a_seeded_run_rebuilds_every_classification(sextant_log: list[dict[str, object]]) -> None:
    # re-derive every classification block (WorkloadClassified + its ModelRetrained events) from the
    # fold of the log before it, with every model retrained from the log (memo cleared)
    clear_memo()
    params = baselines.policy_set("sextant", estimates=None, oracle=None)  # type: ignore[arg-type]
    state = EMPTY
    checked = retrained = 0
    i = 0
    while i < len(sextant_log):
        r = sextant_log[i]
        e = _event(r)
        if isinstance(e, ev.WorkloadClassified):
            c = cmd.ClassifyWorkload(workload_id=e.workload_id)
            d = decide(state, c, params=params, seed=seed_for(c, state), at=e.at,
                       causation=(str(r["causation"]),))
            recorded = [codec.dumpb(_event(x)) for x in sextant_log[i:i + len(d.events)]]
            assert recorded == [codec.dumpb(x) for x in d.events]
            checked += 1
            retrained += sum(isinstance(x, ev.ModelRetrained) for x in d.events)
        state = evolve(state, e, int(r["position"]))  # type: ignore[arg-type]
        i += 1
    assert checked == 16 and retrained >= 4  # every workload classified; the seeded matrices trained


def _event(r: dict[str, object]) -> ev.Event:
    cls = ev.event_class(str(r["type"]))
    return cls.model_validate(r["event"])
