"""Scenario files: every bundled one is valid typed YAML; a bad one fails with a clear message."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError
from sextant_sim.scenarios import Scenario, load_scenario, names
from sextant_sim.setup import prepare

QUASAR = ("quasar-ec2-200", "quasar-memcached-diurnal", "quasar-hadoop-stragglers")


def test_bundled_scenarios_include_the_paper_scenarios() -> None:
    have = set(names())
    assert {"smoke", "paragon-ec2-2500", "paragon-ec2-5000", "paragon-ec2-8500", *QUASAR} <= have


@pytest.mark.parametrize("name", names())
def test_every_bundled_scenario_loads_into_a_frozen_typed_model(name: str) -> None:
    sc = load_scenario(name)
    assert isinstance(sc, Scenario)
    assert sc.name == name
    assert sc.workloads > 0
    with pytest.raises(ValidationError):
        sc.name = "x"  # type: ignore[misc]


def test_quasar_ec2_200_is_1200_mixed_workloads_one_per_second_on_200_servers() -> None:
    st = prepare(load_scenario("quasar-ec2-200"), 6)
    assert len(st.servers) == 200 and len(st.subs) == 1200
    assert {s.truth.kind.value for s in st.subs} == {"batch", "analytics", "service"}
    gaps = {round(b.at - a.at, 6) for a, b in zip(st.subs, st.subs[1:], strict=False)}
    assert gaps == {1.0}
    targets = {type(s.event.target).__name__ for s in st.subs}
    assert targets == {"InstructionRateTarget", "CompletionTimeTarget", "ThroughputLatencyTarget"}
    assert not any(s.event.best_effort for s in st.subs)
    assert 0.8 <= st.peak_demand_ratio() <= 1.0  # "almost all cores at steady state"


def test_memcached_diurnal_has_one_24h_service_and_best_effort_fillers() -> None:
    st = prepare(load_scenario("quasar-memcached-diurnal"), 6)
    svc = [s for s in st.subs if s.truth.service is not None]
    assert len(svc) == 1
    sv = svc[0].truth.service
    assert sv is not None and svc[0].truth.ideal_s == 86400.0
    loads = [f for _, f in sv.trace]
    assert len(loads) == 96 and max(loads) > 0.9 and min(loads) < 0.45  # a day, trough ~35 %
    fillers = [s for s in st.subs if s.truth.service is None]
    assert fillers and all(s.event.best_effort for s in fillers)


def test_hadoop_stragglers_jobs_have_tasks_and_injected_stragglers() -> None:
    st = prepare(load_scenario("quasar-hadoop-stragglers"), 6)
    jobs = [s.truth.analytics for s in st.subs]
    assert all(a is not None for a in jobs)
    assert sum(a.injected is not None for a in jobs if a is not None) >= 10
    assert all(len(a.task_work) >= 20 and a.waves(8) >= 1 for a in jobs if a is not None)


def test_unknown_scenario_lists_the_known_names() -> None:
    with pytest.raises(KeyError) as exc:
        load_scenario("no-such-scenario")
    assert "smoke" in str(exc.value) and "quasar-ec2-200" in str(exc.value)


@pytest.mark.parametrize(("patch", "field"), [
    ("", None),  # duplicate group names (see below)
    ("interference_model: quadratic\n", "interference_model"),
    ("bogus_key: 1\n", "bogus_key"),
    ("noise_scale: -1\n", "noise_scale"),
], ids=["duplicate-groups", "bad-literal", "unknown-key", "negative"])
def test_a_bad_scenario_file_fails_naming_the_field(tmp_path: Path, patch: str, field: str | None) -> None:
    base = (Path(__file__).parents[1] / "src/sextant_sim/scenarios/smoke.yaml").read_text()
    if field is None:
        bad = base.replace("  - name: frameworks", "  - name: batch")  # duplicate group names
        field = "group names must be unique"
    else:
        bad = base + patch
    path = tmp_path / "bad.yaml"
    path.write_text(bad)
    with pytest.raises(ValidationError) as exc:
        load_scenario(path)
    assert field in str(exc.value)


def test_a_group_with_a_wrong_type_names_the_group_field(tmp_path: Path) -> None:
    base = (Path(__file__).parents[1] / "src/sextant_sim/scenarios/smoke.yaml").read_text()
    path = tmp_path / "bad.yaml"
    path.write_text(base.replace("count: 14", "count: many"))
    with pytest.raises(ValidationError) as exc:
        load_scenario(path)
    assert "groups.0.count" in str(exc.value)
