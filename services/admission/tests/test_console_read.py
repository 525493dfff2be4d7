"""The console's new read models and its target form, pure: folded events, no I/O."""

from __future__ import annotations

from dataclasses import replace

import pytest
from sextant_admission.console import read
from sextant_admission.console.targets import parse_target, target_inputs
from sextant_contracts.model import CompletionTimeTarget, InstructionRateTarget, WorkloadKind
from sextant_core.state import fold
from sextant_core.testing.builders import alloc, server, submitted, through_placement


def placed_state():  # type: ignore[no-untyped-def]
    return fold([server("s1", cores=8), server("s2", cores=4), submitted("a", tenant="t1", cores=6),
                 *through_placement("a", alloc(("s1", 6, 4.0))), submitted("b", tenant="t2")])


def test_heat_buckets_clamp_a_share_into_five_steps() -> None:
    assert [read.heat(v) for v in (-1.0, 0.0, 0.19, 0.2, 0.5, 0.99, 1.0, 7.0)] == [0, 0, 0, 1, 2, 4, 4, 4]


def test_servers_show_load_pressure_per_source_and_who_runs_where() -> None:
    s = read.servers(placed_state())
    assert len(s["sources"]) == 10 and [r["id"] for r in s["rows"]] == ["s1", "s2"]
    s1, s2 = s["rows"]
    assert (s1["used"], s1["cores"], s1["load_heat"]) == (6, 8, 3) and s1["residents"] == [("a", "t1")]
    assert s2["load"] == 0.0 and s2["residents"] == [] and len(s1["pressure"]) == 10


def test_tenant_usage_counts_workloads_live_ones_and_held_cores_in_scope() -> None:
    state = placed_state()
    usage = read.tenants_usage(state, None)
    assert list(usage) == ["t1", "t2"]
    assert (usage["t1"]["workloads"], usage["t1"]["live"], usage["t1"]["cores"]) == (1, 1, 6)
    assert usage["t2"]["cores"] == 0 and usage["t2"]["unmeasured"] == 1
    assert list(read.tenants_usage(state, "t2")) == ["t2"]


def test_qos_over_time_is_the_share_met_per_span_in_scope() -> None:
    state = placed_state()
    a = replace(state.workloads["a"], observed=((0.0, 1.2, ()), (1.0, 0.8, ()), (10.0, 1.0, ())))
    state = replace(state, workloads=state.workloads.set("a", a))
    chart = read.qos_over_time(state, None, bins=2)
    assert chart == {"t": [2.5, 7.5], "met": [0.5, 1.0]}
    assert read.qos_over_time(state, "t2") == {"t": [], "met": []}


def test_a_target_form_becomes_the_contracts_target_or_says_why_not() -> None:
    batch = WorkloadKind.BATCH
    assert parse_target({"type": "completion_time", "completion_time.seconds": "90"}, batch) == \
        CompletionTimeTarget(seconds=90.0)
    assert parse_target({"type": "instruction_rate", "instruction_rate.ips": "1e9", "deadline.at": "x"}, batch) == \
        InstructionRateTarget(ips=1e9)
    with pytest.raises(ValueError, match="takes a target of type"):
        parse_target({"type": "throughput_latency", "throughput_latency.qps": "1"}, batch)
    with pytest.raises(ValueError, match="greater than 0"):
        parse_target({"type": "completion_time", "completion_time.seconds": "-1"}, batch)
    with pytest.raises(ValueError, match="a number is needed"):
        parse_target({"type": "completion_time", "completion_time.seconds": ""}, batch)


def test_the_target_form_offers_the_kinds_types_with_the_current_values() -> None:
    inputs = target_inputs(WorkloadKind.BATCH, CompletionTimeTarget(seconds=90.0))
    assert [i["type"] for i in inputs] == ["completion_time", "deadline", "instruction_rate"]
    assert inputs[0]["selected"] and inputs[0]["fields"][0]["value"] == 90.0
    assert not inputs[2]["selected"] and inputs[2]["fields"][0]["value"] == ""
    service = target_inputs(WorkloadKind.SERVICE, None)
    assert [f["name"] for f in service[0]["fields"]] == ["throughput_latency.qps", "throughput_latency.p99_latency_ms"]
