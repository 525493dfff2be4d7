"""The twin's profiler (Paragon §2.3, Table III; Quasar §3.2): noisy runs and microbenchmark ramps."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_contracts.events import ProfileRun
from sextant_contracts.model import Classification
from sextant_sim import interference
from sextant_sim.arrivals import IDEAL_IPS
from sextant_sim.groundtruth import SOURCES
from sextant_sim.interference import QOS_SLOWDOWN, caused_scores, tolerated_scores
from sextant_sim.profiler import score_noise_sd
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import Setup, prepare


@pytest.fixture(scope="module")
def smoke() -> Setup:
    return prepare(load_scenario("smoke"), 1)


def _single(st: Setup):  # type: ignore[no-untyped-def]
    return next(s for s in st.subs if s.truth.shape == "single" and s.truth.threads == 1)


def test_a_performance_run_measures_the_truth_with_log_normal_noise(smoke: Setup) -> None:
    sub = _single(smoke)
    ref = smoke.cat.reference()
    run = ProfileRun(run_id="het-1", classification=Classification.HETEROGENEITY, column=ref.platform_id,
                     platform=ref.platform_id, cores=1)
    true = smoke.profiler.performance(sub.truth, smoke.cat.index(ref.platform_id), 1, 1)
    # independent noise per (workload id, run id): the same truth under 400 ids
    vals = np.array([smoke.profiler.measure(f"x{i}", sub.truth, run).value for i in range(400)])
    err = np.log(vals / true)
    sd = smoke.gt.noise.perf_sd
    assert abs(float(err.mean())) < 3 * sd / np.sqrt(400) + 1e-9
    assert 0.8 * sd < float(err.std()) < 1.2 * sd
    # and it is deterministic: the same run of the same workload measures the same value
    assert smoke.profiler.measure("x1", sub.truth, run).value == vals[1]


def test_alone_on_its_best_platform_with_all_threads_a_job_runs_at_the_ideal_rate(smoke: Setup) -> None:
    sub = _single(smoke)
    best = int(np.argmax(sub.truth.speed))
    assert smoke.profiler.performance(sub.truth, best, sub.truth.threads, 1) == pytest.approx(IDEAL_IPS)


def test_tolerated_score_is_the_ramp_intensity_of_a_five_percent_slowdown(smoke: Setup) -> None:
    m = smoke.model
    own = np.full(10, 5.0)
    tol = np.array([20.0, 30.0, 40.0, 50.0, 60.0, 25.0, 35.0, 45.0, 55.0, 65.0])
    scores = tolerated_scores(m, own, tol, 1.0)
    slow = m.single_source(scores, own, tol, 1.0)
    assert np.allclose(slow, QOS_SLOWDOWN, atol=1e-4)
    below = m.single_source(scores - 1.0, own, tol, 1.0)
    assert np.all(below < QOS_SLOWDOWN)


def test_ramp_scores_order_workloads_like_their_truth() -> None:
    from sextant_sim import groundtruth

    m = interference.model("graded", groundtruth.load())
    own = np.zeros(10)
    weak = tolerated_scores(m, own, np.full(10, 20.0), 1.0)
    strong = tolerated_scores(m, own, np.full(10, 60.0), 1.0)
    assert np.all(strong > weak)
    assert np.all(tolerated_scores(m, own, np.full(10, 1000.0), 1.0) == 100.0)  # never slows: 100
    quiet = caused_scores(m, np.full(10, 5.0), 1.0)
    loud = caused_scores(m, np.full(10, 30.0), 1.0)
    assert np.all(loud > quiet)


def test_interference_runs_carry_table_iii_noise(smoke: Setup) -> None:
    sub = _single(smoke)
    ref = smoke.cat.reference().platform_id
    tol, caused = smoke.profiler.interference(sub.truth, smoke.cat.index(ref))
    k = SOURCES.index("network_bw")  # Table III: network the most accurate, L1-i the least
    j = SOURCES.index("l1i")
    errs: dict[int, list[float]] = {k: [], j: []}
    for src in (k, j):
        run = ProfileRun(run_id=f"intf-{src}", classification=Classification.INTERFERENCE,
                         column=SOURCES[src], platform=ref)
        for i in range(300):
            errs[src].append(smoke.profiler.measure(f"y{i}", sub.truth, run).value - tol[src])
    sd = score_noise_sd(smoke.gt, tol, 1.0)
    for src in (k, j):
        e = np.array(errs[src])
        inside = (tol[src] + e > 0.5) & (tol[src] + e < 99.5)  # clipping to [0, 100] biases the edges
        assert 0.75 * sd[src] < float(e[inside].std()) < 1.25 * sd[src]
    assert sd[j] > 2 * sd[k]


def test_noise_scale_zero_gives_the_truth(smoke: Setup) -> None:
    st = prepare(load_scenario("smoke", noise_scale=0.0), 1)
    sub = _single(st)
    ref = st.cat.reference().platform_id
    tol, _ = st.profiler.interference(sub.truth, st.cat.index(ref))
    run = ProfileRun(run_id="intf-0", classification=Classification.INTERFERENCE, column=SOURCES[0], platform=ref)
    assert st.profiler.measure("w", sub.truth, run).value == pytest.approx(float(np.clip(tol[0], 0, 100)))
