"""The starting reprovisioning policy: violations → spaced reclassification requests."""

from __future__ import annotations

import pytest
from sextant_contracts import commands as cmd
from sextant_contracts import events as ev
from sextant_core.decide import decide
from sextant_core.process import react
from sextant_core.profiles import policy_set
from sextant_core.reprovisioning.simple import due
from sextant_core.state import fold
from sextant_core.testing.builders import alloc, server, submitted, through_placement


@pytest.mark.parametrize(("violations", "expected"), [
    (0, False), (1, False), (2, True), (3, False), (5, False), (6, True), (14, True), (30, True), (31, False),
], ids=lambda v: str(v))
def test_due_at_2_6_14_30(violations: int, expected: bool) -> None:
    # 2^(k+1) - 2: 2, 6, 14, 30
    assert due(violations) is expected


def test_second_violation_requests_reclassification_then_replanning() -> None:
    policy = policy_set("foundation")
    a = alloc(("s1", 2, 2.0))
    events = [server("s1"), submitted("w1", cores=2, fast_path=True), *through_placement("w1", a),
              ev.WorkloadStarted(at=3, workload_id="w1", allocation=a)]
    verdict = ev.QosVerdict(at=4, workload_id="w1", met=False, ratio_to_target=0.5, window_s=1)
    st = fold([*events, verdict, verdict.model_copy(update={"at": 5})])
    (review,) = react(st, verdict)
    assert review == cmd.ReviewWorkload(workload_id="w1", reason="qos_violation")
    d = decide(st, review, params=policy, seed=1, at=5.0)
    (req,) = d.events
    assert isinstance(req, ev.ReclassificationRequested) and req.reason == "qos_violation x2"
    st = fold([req], st)
    assert react(st, req) == (cmd.PlanProfiling(workload_id="w1"),)
    # a third violation asks nothing new
    st3 = fold([verdict.model_copy(update={"at": 6})], st)
    assert decide(st3, review, params=policy, seed=1, at=6.0).events == ()
