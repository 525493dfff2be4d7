"""A Kwiken plan's reissues are real extra load on the twin (`World.set_reissue`, behind the agent's
Kwiken setting): a service reissuing a share r busies r × its cores more on its server and presses
its co-runner harder; a share of 0 restores the server exactly; on the in-process platform the
first plan's `reissue_spent` lands on the service's servers, a restarted executor resumes it, and
without the setting the world never sees it."""

from __future__ import annotations

import numpy as np
from sextant_agent.twin import TwinExecutor
from sextant_contracts import kwiken as kw
from sextant_core.testing.builders import alloc

from .test_kwiken_windows import Cluster

SVC, CO = "w00002", "w00001"  # platform-demo seed 1: a webserver service and a 2-thread batch job


def _shared_server() -> tuple[TwinExecutor, int]:
    ex = TwinExecutor("platform-demo", 1, speed=1.0, wall0=0.0)
    sid = ex.setup.servers[0][0]
    for wid in (SVC, CO):
        ex.world.start(wid, ex.setup.truths[wid], alloc((sid, 2, 4.0)), 0.0)
    return ex, ex.world.sidx[sid]


def _factor(ex: TwinExecutor, wid: str, s: int) -> float:
    return next(n.factor for n in ex.world.active[wid].nodes if n.server == s)


def test_a_reissue_share_busies_its_cores_and_presses_the_co_runner_until_it_is_zero() -> None:
    ex, s = _shared_server()
    w = ex.world
    a = w.active[SVC]
    busy0, factor0, caused0 = float(w.busy[s]), _factor(ex, CO, s), w.caused_now(a, s).copy()
    base = busy0 - sum(w._node_busy(w.active[CO], n) for n in w.active[CO].nodes)  # the service's own busy
    w.set_reissue(SVC, 0.1, 5.0)
    # 2 cores on the server, 10 % reissued: 0.2 busy cores more; pressure × (base + 0.2) / base
    assert abs(float(w.busy[s]) - (busy0 + 0.2)) < 1e-12
    assert np.allclose(w.caused_now(a, s), caused0 * (base + 0.2) / base)
    assert _factor(ex, CO, s) < factor0  # the co-runner feels it
    assert w.usage[-1] == (5.0, float(w.busy.sum()), float(w.allocated.sum()))
    w.set_reissue(SVC, 0.0, 9.0)
    assert float(w.busy[s]) == busy0 and _factor(ex, CO, s) == factor0
    assert np.array_equal(w.caused_now(a, s), caused0)


def test_a_batch_job_or_an_unknown_workload_takes_no_reissue_share() -> None:
    ex, s = _shared_server()
    busy0 = float(ex.world.busy[s])
    ex.world.set_reissue(CO, 0.5, 5.0)
    ex.world.set_reissue("nope", 0.5, 5.0)
    assert ex.world.active[CO].reissue == 0.0 and float(ex.world.busy[s]) == busy0


def _plan(c: Cluster) -> kw.KwikenPlanDecided:
    return next(x for e in c.p.log if isinstance(x := e.event(), kw.KwikenPlanDecided))


def test_the_plan_in_force_is_extra_load_on_the_service_servers_only_with_the_setting() -> None:
    on, off = Cluster(reissue_load=True), Cluster()
    on.run_service()
    off.run_service()
    plan = _plan(on)
    assert plan.reissue_spent > 0 and plan == _plan(off)  # the same log up to the plan: no co-runner
    a_on, a_off = on.ex.world.active["svc-1"], off.ex.world.active["svc-1"]
    assert a_on.reissue == plan.reissue_spent and a_off.reissue == 0.0 and a_on.nodes
    for n in a_on.nodes:
        extra = float(on.ex.world.busy[n.server] - off.ex.world.busy[n.server])
        assert abs(extra - plan.reissue_spent * n.cores) < 1e-9, (extra, plan.reissue_spent, n.cores)
    # a restarted executor re-launches the service from the log with the plan's share
    again = TwinExecutor("platform-demo", 1, speed=1.0, wall0=0.0, reissue_load=True)
    for env in on.p.log:
        again.observe(env.event(), on.state)
    again.resume(on.state, on.ex.now)
    assert again.world.active["svc-1"].reissue == plan.reissue_spent
