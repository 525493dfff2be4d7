"""A submission's target must fit its kind (`sextant_core.qos.TARGETS_BY_KIND`): a misfit is a
validation error on `target`, so the API answers 422 naming `$.target` instead of accepting a
workload no agent can judge."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sextant_admission.schemas import WorkloadRequest


def body(kind: str, target: dict[str, object]) -> dict[str, object]:
    return {"kind": kind, "target": target, "spec": {"type": "twin", "ref": "w00001"}}


@pytest.mark.parametrize(("kind", "target"), [
    ("service", {"type": "completion_time", "seconds": 60}),
    ("service", {"type": "instruction_rate", "ips": 1e9}),
    ("analytics", {"type": "instruction_rate", "ips": 1e9}),
    ("batch", {"type": "throughput_latency", "qps": 10, "p99_latency_ms": 5}),
])
def test_a_target_that_does_not_fit_the_kind_is_refused_on_target(kind: str, target: dict[str, object]) -> None:
    with pytest.raises(ValidationError) as err:
        WorkloadRequest.model_validate(body(kind, target))
    (e,) = err.value.errors()
    assert e["loc"] == ("target",) and e["type"] == "target_kind"
    assert e["msg"].startswith(f"a {kind} workload takes a target of type")


def test_the_fitting_pairs_are_accepted() -> None:
    for kind, target in [("service", {"type": "throughput_latency", "qps": 10, "p99_latency_ms": 5}),
                         ("analytics", {"type": "deadline", "at": 1e9}),
                         ("batch", {"type": "instruction_rate", "ips": 1e9})]:
        assert WorkloadRequest.model_validate(body(kind, target)).target.type == target["type"]
