"""The oracle (ground-truth placement) is the yardstick: on `smoke`, averaged over seeds, it is at
least as good as every baseline on QoS met and on mean normalised performance.

[IMPL CHOICE / known limit] The oracle is a per-workload greedy with perfect knowledge, not a global
optimum, hence the average over seeds here; docs/results/baselines.md reports per scenario. One
single-seed ordering is pinned: `smoke` seed 6, where the oracle had lost to interference-oblivious
by starting a hopeless analytics job (module docstring of `sextant_sim.oracle`).
"""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from sextant_sim.baselines import BASELINES
from sextant_sim.runner import compare, run_profile

SEEDS = (1, 2, 3, 4)


@pytest.mark.slow
def test_oracle_is_at_least_as_good_as_every_baseline_on_smoke_on_average() -> None:
    runs = [compare("smoke", list(BASELINES), seed=s)["profiles"] for s in SEEDS]
    for metric in ("qos_met_fraction", "mean_normalized_performance"):
        mean = {p: float(np.mean([r[p][metric] for r in runs])) for p in BASELINES}
        for p in BASELINES:
            assert mean["oracle"] >= mean[p], (metric, p, mean)
    # and it is not a tie by construction: the oracle is strictly better than least-loaded
    assert np.mean([r["oracle"]["qos_met_fraction"] for r in runs]) > \
        np.mean([r["least-loaded"]["qos_met_fraction"] for r in runs])


def test_a_hopeless_analytics_job_waits_instead_of_holding_servers() -> None:
    """`smoke` seed 6: the hadoop job w00003 wants 48 cores (6 reference nodes) on a 28-core cluster
    and cannot finish in time anywhere. Started at once, it held both mid servers for 1 561 s and the
    oracle met QoS for 0.4375 of the workloads < interference-oblivious's 0.5. It now waits and runs
    only after the last arrival, on servers nobody else uses."""
    buf = io.StringIO()
    oracle = run_profile("smoke", "oracle", 6, log_out=buf)
    events = [json.loads(line) for line in buf.getvalue().splitlines()]
    setup = oracle.engine.setup
    assert setup.truths["w00003"].analytics is not None
    first = next(e for e in events if e["type"] in ("PlacementDecided", "PlacementDeferred")
                 and e["event"]["workload_id"] == "w00003")
    assert first["type"] == "PlacementDeferred"
    assert first["event"]["reasons"] == ["oracle/target_unreachable"]
    placed = [e["event"] for e in events if e["type"] == "PlacementDecided" and e["event"]["workload_id"] == "w00003"]
    last_arrival = max(s.at for s in setup.subs)
    assert all(p["at"] > last_arrival for p in placed)
    for p in ("interference-oblivious", "least-loaded"):
        other = run_profile("smoke", p, 6).summary
        assert oracle.summary["qos_met_fraction"] >= other["qos_met_fraction"], p
    assert oracle.summary["qos_met_fraction"] >= 0.75


def _batch(ratio: list[float], broken: list[int]) -> object:
    from sextant_sim.oracle import _Batch

    n = len(ratio)
    return _Batch(servers=[], factor_new=np.ones(n), ratio_new=np.array(ratio), broken=np.array(broken),
                  het=np.ones(n), order=np.arange(n))


def test_without_a_feasible_server_the_oracle_takes_the_best_ratio_that_breaks_nobody() -> None:
    from sextant_sim.oracle import OraclePlanner

    # no row reaches ratio 1; row 0 has the best ratio but breaks a resident: row 2 (0.8 > 0.7) wins
    rows, ok = OraclePlanner._single(None, _batch([0.95, 0.7, 0.8], [1, 0, 0]))  # type: ignore[arg-type]
    assert (rows, ok) == ([2], False)


def test_the_oracle_waits_rather_than_break_a_resident() -> None:
    from sextant_sim.oracle import OraclePlanner

    rows, ok = OraclePlanner._single(None, _batch([0.95, 0.9], [1, 2]))  # type: ignore[arg-type]
    assert (rows, ok) == ([], False)


def test_the_oracle_knows_when_servers_will_fail() -> None:
    from sextant_sim.oracle import OracleView
    from sextant_sim.scenarios import load_scenario
    from sextant_sim.setup import prepare

    setup = prepare(load_scenario("smoke"), 6)
    assert setup.failures, "smoke draws server failures"
    view = OracleView(setup)
    f = setup.failures[0]
    assert view.fails_within(f.server_id, f.at - 10.0, f.at + 1e-6)  # [start, end) holds f.at
    assert not view.fails_within(f.server_id, f.at - 10.0, f.at)  # end is exclusive
    nxt = [g.at for g in setup.failures if g.server_id == f.server_id and g.at > f.at]
    assert not view.fails_within(f.server_id, f.at + 1e-6, nxt[0] if nxt else setup.horizon)
    others = {sid for sid, _ in setup.servers} - {g.server_id for g in setup.failures}
    assert all(not view.fails_within(s, 0.0, setup.horizon) for s in others)
