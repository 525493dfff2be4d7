"""Recurring contracts over REST (`contracts.py`) on the admission app, over the in-memory event
store: list and show, accept / override / reject recorded as `ContractSignedOff` and planned by the
planning decider, a recurring submission recognised from its template, tenant scoping; bad input
(an infeasible override, a malformed skyline, no field, a stale version) is a clear error naming
the field, and the log is unchanged."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import pytest
from sextant_admission import memtesting as harness
from sextant_admission.memtesting import as_
from sextant_contracts import recurring as rc
from sextant_contracts.envelope import Envelope
from sextant_core.profiles import policy_set
from sextant_core.recurring.decisions import template_id
from sextant_core.testing.builders import server
from sextant_core.testing.loop import InProcessPlatform, steady_agent
from sextant_core.testing.recurring import runs

POLICY = "foundation"
ACME = template_id("acme", "etl-hourly-0")
GLOBEX = template_id("globex", "report-daily-0")


def history() -> list[Envelope]:
    """A server, acme's hourly job (contract inferred) and globex's (runs only, no contract)."""
    p = InProcessPlatform(policy_set(POLICY), steady_agent)
    p.submit([server("s1", cores=16, memory_gb=128.0)])
    p.submit(runs("acme", "etl-hourly", 6))
    p.submit(runs("globex", "report-daily", 2))
    return p.log


@asynccontextmanager
async def api(seed: Sequence[Envelope]) -> AsyncIterator[harness.Api]:
    async with harness.api(seed, policy=POLICY, registry=harness.Registry()) as a:
        yield a


@pytest.fixture(scope="module")
def seed() -> list[Envelope]:
    return history()


async def test_list_and_show_are_the_callers_own(seed: list[Envelope]) -> None:
    async with api(seed) as a:
        mine = (await a.client.get("/v1/contracts", headers=as_("acme"))).json()["items"]
        assert [c["template_id"] for c in mine] == [ACME]
        c = mine[0]
        assert c["status"] == "inferred" and c["runs"] == 6
        assert (c["contract"]["version"], c["contract"]["deadline_s"], c["contract"]["skyline_peak"]) == (1, 1800.0, 4)
        assert c["detection"]["period_s"] == 3600.0 and c["reservation"] is None
        shown = await a.client.get(f"/v1/contracts/{ACME}", headers=as_("acme"))
        assert shown.status_code == 200 and shown.json() == c
        assert (await a.client.get(f"/v1/contracts/{ACME}", headers=as_("globex"))).status_code == 404
        every = (await a.client.get("/v1/contracts", headers={"Authorization": "Bearer op"})).json()["items"]
        assert {x["template_id"] for x in every} == {ACME, GLOBEX}
        inferred = (await a.client.get("/v1/contracts?status=observed", headers=as_("globex"))).json()["items"]
        assert [x["template_id"] for x in inferred] == [GLOBEX]


async def test_accept_is_recorded_and_planning_reserves_it(seed: list[Envelope]) -> None:
    async with api(seed) as a:
        before = len(await a.log())
        r = await a.client.post(f"/v1/contracts/{ACME}/accept", headers=as_("acme"))
        assert r.status_code == 202, r.text
        assert r.json() == {"template_id": ACME, "version": 1, "verdict": "accept"}
        log = await a.log()
        assert len(log) == before + 1 and log[-1].type == "ContractSignedOff" and log[-1].source == "admission"
        out = await a.planned()
        assert [e.TYPE for e in out] == ["ReservationPlanned"]
        assert isinstance(out[0], rc.ReservationPlanned) and out[0].reservation.earliest == 1


async def test_override_and_reject_are_recorded_with_their_fields(seed: list[Envelope]) -> None:
    async with api(seed) as a:
        r = await a.client.post(f"/v1/contracts/{ACME}/override", headers=as_("acme"),
                                json={"deadline_s": 1500.0, "skyline": [3] * 10})
        assert r.status_code == 202, r.text
        e = (await a.log())[-1].event()
        assert isinstance(e, rc.ContractSignedOff) and (e.verdict, e.deadline_s, e.skyline) == (
            "override", 1500.0, (3,) * 10)
        shown = (await a.client.get(f"/v1/contracts/{ACME}", headers=as_("acme"))).json()
        assert shown["status"] == "overridden" and shown["terms"]["overridden"] == ["deadline_s", "skyline"]
        r = await a.client.post(f"/v1/contracts/{ACME}/reject", headers=as_("acme"), json={"version": 1})
        assert r.status_code == 202 and (await a.log())[-1].event().verdict == "reject"  # type: ignore[attr-defined]


@pytest.mark.parametrize(("body", "path", "code"), [
    ({"deadline_s": 300.0}, "$.deadline_s", "infeasible"),  # 5 minutes for a 10-minute skyline
    ({"skyline": [40] * 10}, "$.skyline", "infeasible"),  # 40 containers on 16 cores
    ({"earliest_start_s": 1500.0}, "$.deadline_s", "infeasible"),  # [25, 30) minutes: too short
], ids=["deadline", "skyline", "earliest-late"])
async def test_an_infeasible_override_is_a_422_naming_the_field(seed: list[Envelope], body: dict[str, Any],
                                                               path: str, code: str) -> None:
    async with api(seed) as a:
        before = len(await a.log())
        r = await a.client.post(f"/v1/contracts/{ACME}/override", headers=as_("acme"), json=body)
        assert r.status_code == 422, r.text
        problem = r.json()
        assert problem["errors"][0]["path"] == path and problem["errors"][0]["code"] == code
        assert len(await a.log()) == before  # nothing written


async def test_a_period_override_that_turns_a_reservation_off_kilter_is_a_422(seed: list[Envelope]) -> None:
    async with api(seed) as a:
        assert (await a.client.post(f"/v1/contracts/{ACME}/accept", headers=as_("acme"))).status_code == 202
        log = await a.log()
        planned = await a.planned()  # what planning would append: the reservation
        await a.store.append(f"template-{ACME}", None, [Envelope.wrap(
            planned[0], id="plan-1", source="planning", stream_version=0, time=1.0, causation_id=log[-1].id)])
        before = len(await a.log())
        r = await a.client.post(f"/v1/contracts/{ACME}/override", headers=as_("acme"), json={"period_s": 3540.0})
        assert r.status_code == 422 and r.json()["errors"][0]["path"] == "$.period_s", r.text
        assert len(await a.log()) == before


@pytest.mark.parametrize("body", [
    {"skyline": [-1, 2]},
    {"skyline": []},
    {"skyline": "big"},
    {},
    {"deadline_s": 900, "colour": "red"},
], ids=["negative", "empty", "not-a-list", "no-field", "unknown-field"])
async def test_a_malformed_override_is_a_422_and_writes_nothing(seed: list[Envelope], body: dict[str, Any]) -> None:
    async with api(seed) as a:
        before = len(await a.log())
        r = await a.client.post(f"/v1/contracts/{ACME}/override", headers=as_("acme"), json=body)
        assert r.status_code == 422, r.text
        assert r.json()["errors"]
        assert len(await a.log()) == before


async def test_no_contract_yet_or_a_stale_version_is_a_409(seed: list[Envelope]) -> None:
    async with api(seed) as a:
        r = await a.client.post(f"/v1/contracts/{GLOBEX}/accept", headers=as_("globex"))
        assert r.status_code == 409 and "contract-not-inferred" in r.json()["type"]
        r = await a.client.post(f"/v1/contracts/{ACME}/accept", headers=as_("acme"), json={"version": 2})
        assert r.status_code == 409 and r.json()["current_version"] == 1
        r = await a.client.post(f"/v1/contracts/{ACME}/accept", headers=as_("globex"))
        assert r.status_code == 404


async def test_a_recurring_submission_is_recognised_from_its_template(seed: list[Envelope]) -> None:
    body = {"name": "etl-hourly-77", "kind": "batch", "target": {"type": "completion_time", "seconds": 600},
            "spec": {"type": "twin", "ref": "etl"}}
    async with api(seed) as a:
        r = await a.client.post("/v1/workloads", headers=as_("acme"), json=body)
        assert r.status_code == 202 and r.json()["template_id"] == ACME
        other = await a.client.post("/v1/workloads", headers=as_("acme"), json={**body, "name": "adhoc-query"})
        assert other.json()["template_id"] is None
        # another tenant's job of the same name is not acme's template
        assert (await a.client.post("/v1/workloads", headers=as_("globex"), json=body)).json()["template_id"] is None
        shown = (await a.client.get(f"/v1/contracts/{ACME}", headers=as_("acme"))).json()
        assert shown["submissions"] == [r.json()["id"]]


def test_the_console_shows_a_template_s_events_to_its_tenant_only(seed: list[Envelope]) -> None:
    from sextant_admission.console.read import stream_visible
    from sextant_core.state import fold

    state = fold(seed)
    stream = f"template-{ACME}"
    assert stream_visible(state, "acme", stream) and stream_visible(state, None, stream)
    assert not stream_visible(state, "globex", stream)
    assert not stream_visible(state, "acme", "template-unknown")


PROFILE = {"input_bytes": 4e11, "shuffle_bytes": 1e11, "output_bytes": 2.5e10, "map_tasks": 400, "reduce_tasks": 50}


async def test_a_profile_is_recorded_and_planning_runs_a_corral_round(seed: list[Envelope]) -> None:
    async with api(seed) as a:
        before = len(await a.log())
        r = await a.client.post(f"/v1/contracts/{ACME}/profile", headers=as_("acme"), json=PROFILE)
        assert r.status_code == 202, r.text
        assert r.json()["template_id"] == ACME and r.json()["profile"]["map_slots"] == 8
        log = await a.log()
        assert len(log) == before + 1 and log[-1].type == "AnalyticsProfileDeclared" and log[-1].source == "admission"
        out = await a.planned()
        # the seed's server has no rack: the round says why the job is not planned
        assert [e.TYPE for e in out] == ["CorralPlanDecided"]
        assert isinstance(out[0], rc.CorralPlanDecided) and [d.template_id for d in out[0].deferred] == [ACME]
        assert (await a.client.post(f"/v1/contracts/{ACME}/profile", headers=as_("globex"),
                                    json=PROFILE)).status_code == 404


@pytest.mark.parametrize(("change", "path"), [
    ({"input_bytes": -1.0}, "$.input_bytes"),
    ({"shuffle_bytes": 0}, "$.shuffle_bytes"),
    ({"reduce_tasks": 0}, "$.reduce_tasks"),
    ({"disk_bytes_s": -3.0}, "$.disk_bytes_s"),
    ({"colour": "red"}, "$.colour"),
], ids=["negative-input", "zero-shuffle", "no-reducers", "negative-disk", "unknown-field"])
async def test_a_bad_profile_is_a_422_naming_the_field_and_writes_nothing(seed: list[Envelope], change: dict[str, Any],
                                                                         path: str) -> None:
    async with api(seed) as a:
        before = len(await a.log())
        r = await a.client.post(f"/v1/contracts/{ACME}/profile", headers=as_("acme"), json={**PROFILE, **change})
        assert r.status_code == 422, r.text
        assert r.json()["errors"][0]["path"] == path, r.text
        assert len(await a.log()) == before
