"""Corral's online scenario under load (`online_load`) and re-planning on observed estimates."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from sextant_sim.corral import replan as replan_mod
from sextant_sim.corral import workloads as wl
from sextant_sim.corral.experiment import run_policy
from sextant_sim.corral.network import Topology
from sextant_sim.corral.online_load import load_point, scale_sizes
from sextant_sim.corral.perturbation import perturb, run_corral_on


def _jobs(seed: int = 2, n: int = 20) -> list[wl.Job]:
    return wl.with_arrivals(wl.w1(seed, task_scale=20.0, n_jobs=n), seed, horizon=300.0)


def test_scale_sizes_multiplies_the_bytes_only() -> None:
    jobs = _jobs()
    big = scale_sizes(jobs, 5.0)
    for a, b in zip(jobs, big, strict=True):
        assert (b.input_bytes, b.shuffle_bytes, b.output_bytes) == pytest.approx(
            (5 * a.input_bytes, 5 * a.shuffle_bytes, 5 * a.output_bytes))
        assert (b.id, b.maps, b.reducers, b.arrival, b.b_map, b.b_reduce) == (
            a.id, a.maps, a.reducers, a.arrival, a.b_map, a.b_reduce)
    with pytest.raises(ValueError):
        scale_sizes(jobs, 0.0)


def test_load_point_figures_are_consistent_and_grow_with_load() -> None:
    t = Topology(racks=3, machines=4, slots=2)
    light = load_point(_jobs(), t, 2)
    heavy = load_point(scale_sizes(_jobs(), 4.0), t, 2, lp=False)
    for row in (light, heavy):
        assert row["jobs"] == 20
        for p in ("yarn", "corral"):
            s = row[p]
            assert 0.0 <= s["queue_share"] <= 1.0 and 0.0 <= s["busy"] <= s["peak_busy"] <= 1.0
            assert s["service_median"] <= s["median_jct"] + 1e-9
        # the isolated floor bounds every job under every policy: no gain beyond the headroom
        assert row["headroom_median"] <= 0.0
        assert row["median_jct_vs_yarn"] >= row["headroom_median"] - 1e-9
    assert light["lp_online"] is not None and light["lp_online"] <= light["plan_objective"] + 1e-6
    assert light["lp_gap"] >= -1e-6
    assert heavy["lp_online"] is None and heavy["lp_gap"] is None
    assert heavy["yarn"]["median_jct"] > light["yarn"]["median_jct"]  # every task moves 4× the bytes
    assert load_point(_jobs(), t, 2) == light  # deterministic


def test_replanning_on_exact_estimates_is_the_plain_replanner() -> None:
    """Told = observed: re-planning on observed arrivals and sizes changes nothing against the
    runtime's re-planner of `run_policy`."""
    t = Topology(racks=3, machines=4, slots=2)
    jobs = _jobs(4, 24)
    a = run_corral_on(jobs, jobs, t, 4, replan_period=30.0)
    b = run_policy("corral", jobs, t, 4, online=True, replan_period=30.0)
    assert a["replanner"].replans > 0
    assert np.array_equal(a["result"].completion, b["result"].completion) and a["makespan"] == b["makespan"]
    assert a["replanner"].moved == b["replanner"].moved


def test_a_replan_sees_told_arrivals_until_jobs_arrive(monkeypatch: pytest.MonkeyPatch) -> None:
    t = Topology(racks=3, machines=4, slots=2)
    jobs = _jobs(5, 24)
    planned, actual = perturb(jobs, 5, jitter=120.0, fraction=1.0)
    told = {round(j.arrival, 9) for j in planned}
    true_only = {round(j.arrival, 9) for j in actual} - told
    seen: list[tuple[float, np.ndarray]] = []
    clock = [0.0]
    real_plan, real_replan = replan_mod.plan, replan_mod.Replanner._replan

    def spy(lat: np.ndarray, arrivals: np.ndarray, **kw: Any) -> Any:
        seen.append((clock[0], np.asarray(arrivals).copy()))
        return real_plan(lat, arrivals, **kw)

    def at(self: replan_mod.Replanner, now: float, jobs: Any) -> None:
        clock[0] = now
        real_replan(self, now, jobs)

    monkeypatch.setattr(replan_mod, "plan", spy)
    monkeypatch.setattr(replan_mod.Replanner, "_replan", at)
    out = run_corral_on(planned, actual, t, 5, replan_period=40.0)
    assert out["replanner"].replans == len(seen) > 0 and np.isfinite(out["result"].completion).all()
    ahead_seen = 0
    for now, arr in seen:
        ahead = {round(float(a), 9) for a in arr if a > now}  # jobs not arrived by the re-plan
        assert ahead <= told and not ahead & true_only  # their told arrival, not the true one
        ahead_seen += len(ahead)
    assert ahead_seen > 0
    again = run_corral_on(planned, actual, t, 5, replan_period=40.0)
    assert np.array_equal(again["result"].completion, out["result"].completion)
