"""MRCute models A and B, the DAG critical path, profile estimation and the input-size predictor."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sextant_core.corral.mrcute import (
    DAY,
    HOUR,
    JobProfile,
    dag_latency,
    estimate_profile,
    latency_a,
    latency_b,
    predict_input_size,
    shuffle_bandwidth,
)
from sextant_core.kwiken.dag import StageDag

GB = 1e9
MB = 1e6


def profile(**kw: float) -> JobProfile:
    base = dict(s_map=2.0, s_reduce=4.0, b_map_p=50 * MB, b_reduce_p=40 * MB, b_disk=125 * MB,
                map_tasks=160, reduce_tasks=20, map_slots=8, reduce_slots=2)
    base.update(kw)
    return JobProfile(**base)  # type: ignore[arg-type]


def test_model_a_by_hand() -> None:
    p = profile()
    size = 16 * GB
    # N = 10: map waves ceil(160/80)=2, reduce waves ceil(20/20)=1; B = 50 MB/s
    t_map = 2 * (size / 160) / (50 * MB)
    b_sh = 1 / (1 / (50 * MB) + 1 / (125 * MB))
    t_sh = 1 * (size / (2 * 20)) / b_sh
    t_red = 1 * (size / (2 * 4 * 20)) / (40 * MB)
    assert float(latency_a(p, size, 10, 50 * MB)) == pytest.approx(t_map + t_sh + t_red)


def test_model_a_waves_and_bandwidth_cap() -> None:
    p = profile()
    t = latency_a(p, 16 * GB, np.array([5, 10, 20, 40]), 50 * MB)
    assert np.all(np.diff(t[:3]) < 0)  # more machines, fewer waves
    assert t[3] == t[2]  # one wave of each already at 20 machines: more machines buy nothing
    # bandwidth above the disk's buys nothing (the Sort plateau of §2.3)
    assert float(latency_a(p, 16 * GB, 10, 125 * MB)) == float(latency_a(p, 16 * GB, 10, 1000 * MB))
    assert float(shuffle_bandwidth(p, 1e12)) == pytest.approx(125 * MB / 2)


def test_model_b_one_rack_versus_several() -> None:
    p = profile(map_tasks=1, reduce_tasks=1)  # one wave everywhere: only the shuffle term moves
    kw = dict(machines_per_rack=30, nic=1.25 * GB, oversubscription=5.0)
    size = 100 * GB
    t = latency_b(p, size, np.array([1, 2, 3]), **kw)  # type: ignore[arg-type]
    d_s = size / 2
    base = size / 1 / p.b_map + (size / 8) / p.b_reduce
    local1 = d_s / 30 * (29 / 30) / (1.25 * GB * 0.8)
    assert float(t[0]) == pytest.approx(base + local1)
    core2 = d_s / 60 * 0.5 / (1.25 * GB / 5)
    assert float(t[1]) == pytest.approx(base + core2)
    assert float(t[1]) > float(t[0])  # the §4.3.2 check: 2 racks can be slower than 1
    with pytest.raises(ValueError):
        latency_b(p, size, 1, machines_per_rack=30, nic=1.0, oversubscription=1.0)


def test_dag_latency_is_the_critical_path() -> None:
    dag = StageDag(names=("a", "b", "c", "d"), edges=((0, 1), (0, 2), (1, 3), (2, 3)), costs=(1, 1, 1, 1))
    assert dag_latency(dag, [1.0, 5.0, 2.0, 1.0]) == pytest.approx(7.0)
    assert dag_latency(dag, [1.0, 2.0, 9.0, 1.0]) == pytest.approx(11.0)


def test_estimate_profile_recovers_a_known_program() -> None:
    p = profile()
    sizes = np.array([10, 12, 11, 50]) * GB  # the last run is an outlier in size only
    prof = estimate_profile(
        input_bytes=sizes,
        map_output_bytes=sizes / 2,
        reduce_output_bytes=sizes / 8,
        map_task_seconds=sizes / 160 / (50 * MB),
        reduce_task_seconds=sizes / 2 / 20 / (40 * MB),
        map_tasks=160,
        reduce_tasks=20,
        b_disk=125 * MB,
    )
    assert prof.s_map == pytest.approx(p.s_map) and prof.s_reduce == pytest.approx(p.s_reduce)
    assert prof.b_map_p == pytest.approx(p.b_map_p) and prof.b_reduce_p == pytest.approx(p.b_reduce_p)
    with pytest.raises(ValueError):
        estimate_profile(input_bytes=[], map_output_bytes=[], reduce_output_bytes=[], map_task_seconds=[],
                         reduce_task_seconds=[], map_tasks=1, reduce_tasks=1, b_disk=1.0)


def test_input_size_predictor_same_hour_and_day_type() -> None:
    monday = 4 * DAY  # 1970-01-05 was a Monday
    times, sizes = [], []
    for d in range(14):
        weekend = (d % 7) >= 5
        for h in (2, 14):
            times.append(monday + d * DAY + h * HOUR + 60)
            sizes.append((100.0 if weekend else 10.0) * (3 if h == 14 else 1) + d)
    # a Tuesday at 14:xx of the third week: weekdays' 14:00 runs only
    at = monday + 15 * DAY + 14 * HOUR + 300
    want = np.mean([30.0 + d for d in range(14) if d % 7 < 5])
    assert predict_input_size(times, sizes, at) == pytest.approx(want)
    # a Sunday at 02:xx: the weekend runs
    at = monday + 20 * DAY + 2 * HOUR
    assert predict_input_size(times, sizes, at) == pytest.approx(np.mean([100.0 + d for d in (5, 6, 12, 13)]))
    # an hour never seen falls back to every earlier run; no history raises
    assert predict_input_size(times, sizes, monday + 15 * DAY + 7 * HOUR) == pytest.approx(np.mean(sizes))
    with pytest.raises(ValueError):
        predict_input_size(times, sizes, monday)


def test_profile_validation() -> None:
    with pytest.raises(ValueError):
        profile(s_map=0.0)
    with pytest.raises(ValueError):
        profile(map_tasks=0)
    assert math.isfinite(float(latency_a(profile(), GB, 1, 1 * MB)))
