"""A target must fit its workload's kind (`sextant_core.qos.TARGETS_BY_KIND`, docs/api/README.md): over
REST, a misfit is a 422 problem naming `$.target`, on POST and on PATCH, and records nothing."""

from __future__ import annotations

from typing import Any

import pytest
from sextant_admission.testing import api_under_test, own_database
from sextant_kit.problems import TYPE_BASE

pytestmark = pytest.mark.integration
WL = "/v1/workloads"
SERVICE = {"kind": "service", "target": {"type": "throughput_latency", "qps": 100, "p99_latency_ms": 5},
           "spec": {"type": "container", "image": "memcached:1.6"}}


def misfit(r: Any, kind: str) -> None:
    assert r.status_code == 422, r.text
    doc = r.json()
    assert doc["type"] == TYPE_BASE + "validation-failed"
    (err,) = doc["errors"]
    assert err["path"] == "$.target" and err["code"] == "target_kind"
    assert err["detail"].startswith(f"a {kind} workload takes a target of type")


async def test_a_target_that_does_not_fit_the_kind_is_a_422_on_post_and_patch(pg_node: Any) -> None:
    with own_database(pg_node, "target_kinds") as url:
        async with api_under_test(url, api_auth="open") as api:
            r = await api.client.post(WL, json={**SERVICE, "target": {"type": "completion_time", "seconds": 60}})
            misfit(r, "service")
            accepted = await api.client.post(WL, json=SERVICE)
            assert accepted.status_code == 202, accepted.text
            before = await api.log_size()
            r = await api.client.patch(f"{WL}/{accepted.json()['id']}",
                                       json={"target": {"type": "instruction_rate", "ips": 1e9}})
            misfit(r, "service")
            assert await api.log_size() == before
            ok = await api.client.patch(f"{WL}/{accepted.json()['id']}",
                                        json={"target": {"type": "throughput_latency", "qps": 50, "p99_latency_ms": 5}})
            assert ok.status_code == 202, ok.text
