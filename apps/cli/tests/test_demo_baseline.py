"""`sextant demo` runs the flagship and sets its QoS beside the twin's least-loaded baseline on the
same workloads (sextant_cli/baseline.py)."""

from __future__ import annotations

import argparse

from sextant_cli import baseline
from sextant_cli.demo import DEFAULT_PROFILE, register


def test_the_demo_runs_the_flagship_by_default() -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    assert DEFAULT_PROFILE == "sextant-adaptive"
    assert parser.parse_args(["demo"]).profile == "sextant-adaptive"
    assert parser.parse_args(["demo", "--profile", "foundation"]).profile == "foundation"


def test_both_sides_count_the_last_verdict_per_kind() -> None:
    views = [
        {"kind": "batch", "state": "completed", "qos": {"met": True, "ratio_to_target": 1.2}},
        {"kind": "batch", "state": "completed", "qos": {"met": False, "ratio_to_target": 0.6}},
        {"kind": "batch", "state": "failed", "qos": None},
        {"kind": "service", "state": "completed", "qos": {"met": True, "ratio_to_target": 1.0}},
    ]
    got = baseline.from_views(views)
    # batch: 3 workloads, 2 judged, 1 met; mean ratio (1.2 + 0.6) / 2 = 0.9
    assert got["batch"] == baseline.KindQos(workloads=3, completed=2, failed=1, judged=2, met=1,
                                            mean_ratio=(1.2 + 0.6) / 2)
    assert got["all"].judged == 3 and got["all"].met == 2
    log = ['{"type": "WorkloadSubmitted", "event": {"workload_id": "a", "kind": "batch"}}',
           '{"type": "QosVerdict", "event": {"workload_id": "a", "met": false, "ratio_to_target": 0.5}}',
           '{"type": "QosVerdict", "event": {"workload_id": "a", "met": true, "ratio_to_target": 1.5}}',
           '{"type": "WorkloadCompleted", "event": {"workload_id": "a"}}']
    assert baseline.from_log(log)["batch"] == baseline.KindQos(workloads=1, completed=1, judged=1, met=1,
                                                              mean_ratio=1.5)


def test_the_twin_baseline_runs_the_same_first_workloads() -> None:
    twin = baseline.twin_baseline("smoke", 1, limit=6)
    assert twin["all"].workloads == 6
    assert twin["all"].completed + twin["all"].failed == 6 and twin["all"].judged > 0
    rows = baseline.comparison_rows(twin, twin)
    assert rows[-1][0] == "all" and rows[-1][2] == rows[-1][3]
