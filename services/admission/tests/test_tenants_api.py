"""Virtual clusters over REST (`tenants.py`) on the admission app, over the in-memory event store:
an operator's capacity is recorded as `VcCapacitySet` and planning allocates on it; usage is the
caller's own (another tenant's is a 404); every refusal (a tenant's token: 403, a malformed
capacity: 422 naming the field, an unknown tenant: 404) writes nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
from sextant_admission import memtesting as harness
from sextant_admission.memtesting import as_
from sextant_contracts import events as ev
from sextant_contracts import vc
from sextant_contracts.envelope import Envelope
from sextant_core.profiles import policy_set
from sextant_core.testing.builders import server, submitted
from sextant_core.testing.loop import InProcessPlatform, steady_agent

POLICY = "foundation"
OP = {"Authorization": "Bearer op"}
TENANTS = ("acme", "globex")


def history(capacity: bool) -> list[Envelope]:
    """Two servers, an acme job placed and completed, a globex job; acme owns 1 server if `capacity`."""
    p = InProcessPlatform(policy_set(POLICY), steady_agent)
    p.submit([server("s1"), server("s2")])
    if capacity:
        p.submit([vc.VcCapacitySet(at=1.0, tenant="acme", servers=1)])
    p.submit([submitted("a1", tenant="acme", cores=8, memory_gb=16.0, fast_path=True, at=10.0)])
    p.submit([ev.WorkloadCompleted(at=250.0, workload_id="a1")])
    p.submit([submitted("g1", tenant="globex", cores=8, memory_gb=16.0, fast_path=True, at=300.0)])
    return p.log


@asynccontextmanager
async def api(seed: Sequence[Envelope]) -> AsyncIterator[harness.Api]:
    async with harness.api(seed, policy=POLICY, registry=harness.Registry(TENANTS)) as a:
        yield a


@pytest.fixture(scope="module")
def plain() -> list[Envelope]:
    return history(capacity=False)


@pytest.fixture(scope="module")
def with_capacity() -> list[Envelope]:
    return history(capacity=True)


async def test_an_operator_sets_a_capacity_and_planning_allocates_on_it(plain: list[Envelope]) -> None:
    async with api(plain) as a:
        before = len(await a.log())
        r = await a.client.put("/v1/tenants/globex/capacity", headers=OP, json={"servers": 1})
        assert r.status_code == 202, r.text
        assert r.json() == {"tenant": "globex", "servers": 1, "previous": None}
        log = await a.log()
        assert len(log) == before + 1 and log[-1].type == "VcCapacitySet" and log[-1].source == "admission"
        e = log[-1].event()
        assert isinstance(e, vc.VcCapacitySet) and (e.tenant, e.servers, e.by) == ("globex", 1, "ops")
        out = await a.planned()
        assert [x.TYPE for x in out] == ["VcAllocationDecided"]
        assert isinstance(out[0], vc.VcAllocationDecided)
        # globex owns 1 of the 2 servers and holds 1 (its job); acme, whose job ended before any
        # VC existed, is not a row
        assert [(s.tenant, s.capacity, s.demand, s.held, s.allocation) for s in out[0].shares] == [
            ("globex", 1, 1, 1, 1)]
        again = await a.client.put("/v1/tenants/globex/capacity", headers=OP, json={"servers": 2})
        assert again.json()["previous"] == 1


@pytest.mark.parametrize(("headers", "status"), [(as_("acme"), 403), (as_("globex"), 403), ({}, 401),
                                                 ({"Authorization": "Bearer nope"}, 401)],
                         ids=["tenant", "the-tenant-itself", "no-token", "unknown-token"])
async def test_only_an_operator_sets_a_capacity_and_a_refusal_writes_nothing(
        plain: list[Envelope], headers: dict[str, str], status: int) -> None:
    async with api(plain) as a:
        before = len(await a.log())
        r = await a.client.put("/v1/tenants/acme/capacity", headers=headers, json={"servers": 5})
        assert r.status_code == status, r.text
        # a tenant's token is refused before its body is read: a malformed one is a 403 too
        bad = await a.client.put("/v1/tenants/acme/capacity", headers=headers, json={"servers": -1})
        assert bad.status_code == status
        assert len(await a.log()) == before


@pytest.mark.parametrize(("body", "path"), [
    ({"servers": -1}, "$.servers"),
    ({"servers": 1.5}, "$.servers"),
    ({"servers": "3"}, "$.servers"),
    ({"servers": 2_000_000}, "$.servers"),
    ({}, "$.servers"),
    ({"servers": 3, "cores": 8}, "$.cores"),
], ids=["negative", "fraction", "text", "huge", "missing", "unknown-field"])
async def test_a_malformed_capacity_is_a_422_naming_the_field_and_writes_nothing(
        plain: list[Envelope], body: dict[str, Any], path: str) -> None:
    async with api(plain) as a:
        before = len(await a.log())
        r = await a.client.put("/v1/tenants/acme/capacity", headers=OP, json=body)
        assert r.status_code == 422, r.text
        assert [e["path"] for e in r.json()["errors"]] == [path]
        assert len(await a.log()) == before


async def test_an_unknown_or_misnamed_tenant_is_refused_and_nothing_is_written(plain: list[Envelope]) -> None:
    async with api(plain) as a:
        before = len(await a.log())
        r = await a.client.put("/v1/tenants/initech/capacity", headers=OP, json={"servers": 1})
        assert r.status_code == 404 and r.json()["type"].endswith("tenant-not-found")
        r = await a.client.put("/v1/tenants/Not A Name/capacity", headers=OP, json={"servers": 1})
        assert r.status_code == 422 and r.json()["errors"][0]["in"] == "path"
        assert len(await a.log()) == before


async def test_usage_is_the_callers_own_and_an_operator_reads_any(with_capacity: list[Envelope]) -> None:
    async with api(with_capacity) as a:
        r = await a.client.get("/v1/tenants/acme/usage", headers=as_("acme"))
        assert r.status_code == 200, r.text
        u = r.json()
        # acme owns 1 server, its job ran 10 s → 250 s alone: stretch (250 − 10) / max(240, 60) = 1;
        # as of the last event (globex placed at 300 s on acme's idle server) nothing has been lent yet
        assert (u["capacity"], u["demand"], u["held"], u["allocation"], u["load"]) == (1, 0, 0, 0, 0.0)
        assert (u["completed"], u["stretch"], u["policy"]) == (1, 1.0, "sextant")
        assert u["lent_server_hours"] == 0.0 and u["received_server_hours"] == 0.0
        assert (await a.client.get("/v1/tenants/acme/usage", headers=as_("globex"))).status_code == 404
        g = await a.client.get("/v1/tenants/globex/usage", headers=as_("globex"))
        assert g.status_code == 200 and g.json()["capacity"] is None and g.json()["load"] is None
        assert (await a.client.get("/v1/tenants/acme/usage", headers=OP)).json() == u
        assert (await a.client.get("/v1/tenants/initech/usage", headers=OP)).status_code == 404


def test_the_console_shows_a_tenant_its_own_capacity_and_no_one_elses_or_the_allocation(
        with_capacity: list[Envelope]) -> None:
    from sextant_admission.console.read import stream_visible
    from sextant_core.state import fold

    state = fold(with_capacity)
    assert stream_visible(state, "acme", "tenant-acme") and stream_visible(state, None, "tenant-acme")
    assert not stream_visible(state, "globex", "tenant-acme")
    assert not stream_visible(state, "acme", vc.VC_STREAM) and stream_visible(state, None, vc.VC_STREAM)
