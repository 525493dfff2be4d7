"""The web console, `/console/` on the API's own app (docs/console/README.md): server-side pages
(Jinja2) with htmx for partial updates and server-sent events for live tails; every asset is
vendored in `static/` (no CDN: the machines have no internet).

Auth is the API's (`Gatekeeper`): `POST /console/login` exchanges a token once for a session
cookie (`sessions`); actions need the session's CSRF token; a tenant sees its own workloads only —
on every page and stream a workload of another tenant is a 404, like a missing one (`read`); an
operator sees everything. No console route is in the OpenAPI document (`include_in_schema=False`).

Pages: overview (with QoS met over time), workloads (filtered and paged on the server), a workload
(timeline, target vs measured, classification rows with confidence, its decisions, a target change),
a decision (the lines of `sextant explain`, from `sextant_core.explain`), the event log with a live
tail and the cluster as of a past log position (the log folded by `sextant_core.state.evolve.fold`,
the projection every service uses), servers (an operator's heat map of load and interference
pressure per source, who runs where), tenants and their usage (an operator manages them).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from importlib.resources import files
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response, StreamingResponse
from jinja2 import Environment, PackageLoader, select_autoescape
from sextant_contracts.envelope import Envelope
from sextant_contracts.model import WorkloadKind
from sextant_core.domain.lifecycle import WorkloadPhase
from sextant_core.explain import explain_decision
from sextant_core.state.evolve import fold
from sextant_core.state.model import ClusterState
from sextant_kit.tenancy import TenancyError

from ..auth import Principal, Unauthenticated
from ..handlers import Conflict, NotFound, live_workload, revoke, update_target
from . import read
from .sessions import COOKIE, Session, Sessions
from .targets import parse_target, target_inputs

if TYPE_CHECKING:
    from ..api import ApiContext

PREFIX = "/console"
PAGE_SIZES = (50, 100, 500)
LOG_PAGE = 100
STATIC = {"htmx.min.js": "text/javascript", "console.js": "text/javascript", "console.css": "text/css",
          "uPlot.iife.min.js": "text/javascript", "uPlot.min.css": "text/css"}
AS_OF_CACHE = 4  # states rebuilt at past positions kept (the log page's "as of" view)
HEADERS = {  # no inline script or style anywhere: the policy forbids them
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                               "frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store",
}
_env = Environment(loader=PackageLoader("sextant_admission.console"), autoescape=select_autoescape(),
                   trim_blocks=True, lstrip_blocks=True)


class _Who:
    """An authenticated console request: its session and the API principal of its token."""

    def __init__(self, session: Session, principal: Principal) -> None:
        self.session, self.principal = session, principal

    @property
    def scope(self) -> str | None:
        return self.principal.scope

    @property
    def name(self) -> str:
        p = self.principal
        return f"{p.tenant} (operator)" if p.operator else (p.tenant or "open mode (every tenant)")


def _render(name: str, who: _Who | None, status: int = 200, **data: Any) -> HTMLResponse:
    html = _env.get_template(name).render(who=who, csrf=who.session.csrf if who else "", prefix=PREFIX, **data)
    return HTMLResponse(html, status_code=status, headers=HEADERS)


def _not_found(who: _Who | None, what: str) -> HTMLResponse:
    return _render("not_found.html", who, 404, what=what)


def router(ctx: ApiContext, sessions: Sessions | None = None) -> APIRouter:  # noqa: C901 - one route per page
    sessions = sessions or Sessions()
    r = APIRouter(prefix=PREFIX, include_in_schema=False)

    async def who_of(request: Request) -> _Who | None:
        sid = request.cookies.get(COOKIE)
        session = sessions.get(sid)
        if session is None:
            return None
        try:
            principal = await ctx.gate.principal(f"Bearer {session.token}" if session.token else None)
        except Unauthenticated:  # revoked or rotated since the login, or tokens now required
            sessions.close(sid)
            return None
        return _Who(session, principal)

    def to_login() -> Response:
        return RedirectResponse(f"{PREFIX}/login", status_code=303, headers=HEADERS)

    async def form_of(request: Request) -> dict[str, str]:
        body = (await request.body())[:16 * 1024].decode("utf-8", "replace")
        return {k: v[0] for k, v in parse_qs(body, keep_blank_values=True).items()}

    @r.get("/login")
    async def login_page(request: Request) -> Response:
        if await who_of(request) is not None:
            return RedirectResponse(f"{PREFIX}/", status_code=303, headers=HEADERS)
        return _render("login.html", None)

    @r.post("/login")
    async def login(request: Request) -> Response:
        token = (await form_of(request)).get("token", "").strip() or None
        try:
            await ctx.gate.principal(f"Bearer {token}" if token else None)
        except Unauthenticated as exc:
            return _render("login.html", None, 401, error=str(exc))
        response = RedirectResponse(f"{PREFIX}/", status_code=303, headers=HEADERS)
        response.set_cookie(COOKIE, sessions.open(token), max_age=int(sessions.max_age_s), path=PREFIX,
                            httponly=True, samesite="strict", secure=request.url.scheme == "https")
        return response

    @r.post("/logout")
    async def logout(request: Request) -> Response:
        who = await who_of(request)
        if who is not None and Sessions.csrf_ok(who.session, (await form_of(request)).get("csrf")):
            sessions.close(request.cookies.get(COOKIE))
        response = to_login()
        response.delete_cookie(COOKIE, path=PREFIX)
        return response

    @r.get("/static/{name}")
    async def static(name: str) -> Response:
        if name not in STATIC:
            return Response(status_code=404)
        body = files(__package__).joinpath("static", name).read_bytes()
        return Response(body, media_type=STATIC[name], headers={"Cache-Control": "max-age=3600",
                                                                 "X-Content-Type-Options": "nosniff"})

    @r.get("/")
    async def overview(request: Request) -> Response:
        if (who := await who_of(request)) is None:
            return to_login()
        await ctx.catch_up()
        state = ctx.decider.state
        recent = await _recent(ctx, who.scope, LOG_PAGE, decisions_only=True, limit=20)
        return _render("overview.html", who, o=read.overview(state, who.scope), recent=recent,
                       qos_chart=read.qos_over_time(state, who.scope))

    @r.get("/workloads")
    async def workloads(request: Request) -> Response:
        if (who := await who_of(request)) is None:
            return to_login()
        q = request.query_params
        f = read.Filters(tenant=(q.get("tenant") or None) if who.scope is None else None,
                         kind=_one_of(q.get("kind"), [k.value for k in WorkloadKind]),
                         state=_one_of(q.get("state"), [p.value for p in WorkloadPhase]),
                         qos=_one_of(q.get("qos"), list(read.QOS_FILTERS)))
        limit = int(q["limit"]) if q.get("limit", "").isdigit() and int(q["limit"]) in PAGE_SIZES else PAGE_SIZES[0]
        await ctx.catch_up()
        page = read.listing(ctx.decider.state, who.scope, f, after=q.get("after") or None, limit=limit)
        keep = {k: v for k, v in (("tenant", f.tenant), ("kind", f.kind), ("state", f.state), ("qos", f.qos),
                                  ("limit", str(limit))) if v}
        nxt = f"{PREFIX}/workloads?" + urlencode({**keep, "after": page.next_after}) if page.next_after else None
        first = f"{PREFIX}/workloads?" + urlencode(keep)
        name = "workload_rows.html" if request.headers.get("hx-request") else "workloads.html"
        return _render(name, who, page=page, f=f, limit=limit, next=nxt, first=first,
                       kinds=[k.value for k in WorkloadKind], phases=[p.value for p in WorkloadPhase],
                       qos_filters=read.QOS_FILTERS, sizes=PAGE_SIZES)

    @r.get("/workloads/{workload_id}")
    async def workload(request: Request, workload_id: str) -> Response:
        if (who := await who_of(request)) is None:
            return to_login()
        await ctx.catch_up()
        state = ctx.decider.state
        w = read.visible(state, who.scope, workload_id)
        if w is None:
            return _not_found(who, f"workload {workload_id}")
        timeline = [read.event_row(e) for e in await ctx.store.read_stream(f"{read.WORKLOAD_STREAM}{workload_id}")]
        from .. import views

        return _render("workload.html", who, w=views.view(state, w), qos=read.qos_of(w),
                       classification=read.classification_rows(w), measured=read.measured(w), timeline=timeline,
                       last=max((e["position"] or 0 for e in timeline), default=0),
                       target_inputs=target_inputs(w.kind, w.target), error=request.query_params.get("error"))

    @r.get("/workloads/{workload_id}/decisions/{decision_id}")
    async def decision(request: Request, workload_id: str, decision_id: str) -> Response:
        if (who := await who_of(request)) is None:
            return to_login()
        await ctx.catch_up()
        if read.visible(ctx.decider.state, who.scope, workload_id) is None:
            return _not_found(who, f"workload {workload_id}")
        stream = await ctx.store.read_stream(f"{read.WORKLOAD_STREAM}{workload_id}")
        found = next((e for e in stream if (e.payload.get("decision") or {}).get("decision_id") == decision_id),
                     None)
        if found is None or found.position is None:
            return _not_found(who, f"decision {decision_id} of workload {workload_id}")
        log = await _log_upto(ctx, found.position)
        lines = await asyncio.to_thread(explain_decision, log, decision_id)
        return _render("decision.html", who, workload_id=workload_id, decision_id=decision_id,
                       **_explained(lines), event=read.event_row(found))

    @r.post("/workloads/{workload_id}/revoke")
    async def revoke_action(request: Request, workload_id: str) -> Response:
        if (who := await who_of(request)) is None:
            return to_login()
        if not Sessions.csrf_ok(who.session, (await form_of(request)).get("csrf")):
            return _render("not_found.html", who, 403, what="this form (its CSRF token is missing or stale)")
        await ctx.catch_up()
        try:
            live_workload(ctx.decider.state, workload_id, who.scope)
            await revoke(ctx.store, ctx.decider.state, workload_id)
        except NotFound:
            return _not_found(who, f"workload {workload_id}")
        except Conflict as exc:
            return _render("not_found.html", who, 409, what=str(exc))
        return RedirectResponse(f"{PREFIX}/workloads/{workload_id}", status_code=303, headers=HEADERS)

    @r.post("/workloads/{workload_id}/target")
    async def target_action(request: Request, workload_id: str) -> Response:
        """The API's `PATCH /v1/workloads/{id}` from a form: same checks, same `update_target`."""
        if (who := await who_of(request)) is None:
            return to_login()
        form = await form_of(request)
        if not Sessions.csrf_ok(who.session, form.get("csrf")):
            return _csrf_refused(who)
        await ctx.catch_up()
        try:
            live_workload(ctx.decider.state, workload_id, who.scope)
            target = parse_target(form, ctx.decider.state.workloads[workload_id].kind)
            await update_target(ctx.store, ctx.decider.state, workload_id, target)
        except NotFound:
            return _not_found(who, f"workload {workload_id}")
        except Conflict as exc:
            return _render("not_found.html", who, 409, what=str(exc))
        except ValueError as exc:
            return RedirectResponse(f"{PREFIX}/workloads/{workload_id}?" + urlencode({"error": str(exc)[:300]}),
                                    status_code=303, headers=HEADERS)
        return RedirectResponse(f"{PREFIX}/workloads/{workload_id}", status_code=303, headers=HEADERS)

    @r.get("/servers")
    async def servers_page(request: Request) -> Response:
        if (who := await who_of(request)) is None:
            return to_login()
        if who.scope is not None:  # load, pressure and residents are every tenant's: an operator's only
            return _not_found(who, "page /console/servers")
        await ctx.catch_up()
        return _render("servers.html", who, s=read.servers(ctx.decider.state))

    @r.get("/tenants")
    async def tenants_page(request: Request) -> Response:
        if (who := await who_of(request)) is None:
            return to_login()
        await ctx.catch_up()
        usage = read.tenants_usage(ctx.decider.state, who.scope)
        if who.scope is None:
            registered = {t.name: t for t in await ctx.gate.registry.list()}
        else:
            registered = {t.name: t for t in [await ctx.gate.registry.get(who.scope)] if t is not None}
            usage.setdefault(who.scope, {})
        names = sorted(set(usage) | set(registered))
        return _render("tenants.html", who, names=names, usage=usage, registered=registered,
                       manage=who.principal.sees_all, made=None)

    @r.get("/tenants/{name}")
    async def tenant_page(request: Request, name: str) -> Response:
        if (who := await who_of(request)) is None:
            return to_login()
        if who.scope is not None and name != who.scope:
            return _not_found(who, f"tenant {name}")
        await ctx.catch_up()
        registered = await ctx.gate.registry.get(name)
        usage = read.tenants_usage(ctx.decider.state, name).get(name)
        if registered is None and usage is None:
            return _not_found(who, f"tenant {name}")
        return _render("tenant.html", who, tenant=name, t=registered, u=usage, manage=who.principal.sees_all)

    @r.post("/tenants")
    async def tenant_create(request: Request) -> Response:
        """`sextant tenants create NAME [--operator]`: an operator's (or open mode's) only; the
        new token is shown once, on the answer to this POST."""
        if (who := await who_of(request)) is None:
            return to_login()
        form = await form_of(request)
        if not Sessions.csrf_ok(who.session, form.get("csrf")):
            return _csrf_refused(who)
        if not who.principal.sees_all:
            return _render("not_found.html", who, 403, what="tenant management (an operator's)")
        try:
            limits = {k: _positive(form.get(k)) for k in ("max_active_workloads", "max_cores")}
            made, token = await ctx.gate.registry.create(form.get("name", "").strip(), operator=form.get("operator") == "on",
                                                         **limits)
        except (TenancyError, ValueError) as exc:
            return _render("not_found.html", who, 422, what=f"such tenant: {exc}")
        return _render("tenant_made.html", who, t=made, token=token)

    @r.post("/tenants/{name}/revoke")
    async def tenant_revoke(request: Request, name: str) -> Response:
        """`sextant tenants revoke NAME`: the tenant and every token it has (its workloads stay)."""
        if (who := await who_of(request)) is None:
            return to_login()
        if not Sessions.csrf_ok(who.session, (await form_of(request)).get("csrf")):
            return _csrf_refused(who)
        if not who.principal.sees_all:
            return _render("not_found.html", who, 403, what="tenant management (an operator's)")
        try:
            await ctx.gate.registry.revoke(name)
        except TenancyError:
            return _not_found(who, f"tenant {name}")
        if (await who_of(request)) is None:  # revoked its own operator tenant: signed out
            return to_login()
        return RedirectResponse(f"{PREFIX}/tenants/{name}", status_code=303, headers=HEADERS)

    as_of: dict[int, ClusterState] = {}

    async def state_at(position: int) -> ClusterState:
        """The state the log folds to at `position` (`fold`, the services' own projection), a few kept."""
        if position not in as_of:
            log = await _log_upto(ctx, position)
            as_of[position] = await asyncio.to_thread(fold, log)
            while len(as_of) > AS_OF_CACHE:
                del as_of[next(iter(as_of))]
        return as_of[position]

    @r.get("/log")
    async def log_page(request: Request) -> Response:
        if (who := await who_of(request)) is None:
            return to_login()
        await ctx.catch_up()
        last = await ctx.store.last_position()
        raw = request.query_params.get("at", "")
        if raw.isdigit() and 0 < int(raw) <= last:
            at = int(raw)
            past = await state_at(at)
            rows = await _recent(ctx, who.scope, LOG_PAGE * 10, limit=LOG_PAGE, upto=at)
            return _render("log.html", who, rows=rows, last=last, at=at, o=read.overview(past, who.scope),
                           s=read.servers(past) if who.scope is None else None)
        rows = await _recent(ctx, who.scope, LOG_PAGE * 10, limit=LOG_PAGE)
        return _render("log.html", who, rows=rows, last=last, at=None,
                       error=f"no log position {raw}" if raw else None)

    @r.get("/log/stream")
    async def log_stream(request: Request) -> Response:
        if (who := await who_of(request)) is None:
            return Response(status_code=401, headers=HEADERS)
        return _sse(ctx, _after(request), lambda env: read.stream_visible(ctx.decider.state, who.scope, env.stream))

    @r.get("/workloads/{workload_id}/stream")
    async def workload_stream(request: Request, workload_id: str) -> Response:
        if (who := await who_of(request)) is None:
            return Response(status_code=401, headers=HEADERS)
        await ctx.catch_up()
        if read.visible(ctx.decider.state, who.scope, workload_id) is None:
            return _not_found(who, f"workload {workload_id}")
        stream = f"{read.WORKLOAD_STREAM}{workload_id}"
        return _sse(ctx, _after(request), lambda env: env.stream == stream)

    @r.get("/{rest:path}")
    async def unknown(request: Request, rest: str) -> Response:
        return _not_found(await who_of(request), f"page /console/{rest}")

    return r


def _csrf_refused(who: _Who) -> HTMLResponse:
    return _render("not_found.html", who, 403, what="this form (its CSRF token is missing or stale)")


def _positive(raw: str | None) -> int | None:
    """An optional limit of the tenant form: empty is none, else a positive integer."""
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"a limit must be a positive integer, not {raw!r}")
    return int(raw)


def _one_of(value: str | None, allowed: list[str]) -> str | None:
    return value if value in allowed else None


def _after(request: Request) -> int:
    raw = request.headers.get("last-event-id") or request.query_params.get("after") or "0"
    return int(raw) if raw.isdigit() else 0


async def _recent(ctx: ApiContext, scope: str | None, window: int, *, limit: int,
                  decisions_only: bool = False, upto: int | None = None) -> list[dict[str, Any]]:
    """The newest `limit` events of the last `window` positions (up to `upto`, default the log's
    end) that `scope` may see, newest first."""
    last = await ctx.store.last_position() if upto is None else upto
    rows = [e for e in await ctx.store.read_all(max(0, last - window), window) if (e.position or 0) <= last]
    state = ctx.decider.state
    out = [read.event_row(e) for e in rows if read.stream_visible(state, scope, e.stream)
           and (not decisions_only or "decision" in e.payload)]
    return out[::-1][:limit]


async def _log_upto(ctx: ApiContext, position: int, batch: int = 5000) -> list[Envelope]:
    out: list[Envelope] = []
    while (not out or (out[-1].position or 0) < position) and \
            (chunk := await ctx.store.read_all(out[-1].position or 0 if out else 0, batch)):
        out.extend(e for e in chunk if (e.position or 0) <= position)
    return out


def _explained(lines: list[str]) -> dict[str, Any]:
    """`sextant explain`'s lines, as the decision page lays them out: the filters' verdicts and the
    candidates in tables (their text exactly as the CLI prints it), every other line as is."""
    filters, candidates, rest = [], [], []
    for line in lines:
        if line.startswith("  filter "):
            plugin, _, verdicts = line[len("  filter "):].partition(": ")
            filters.append((plugin, verdicts))
        elif line.startswith("  candidate "):
            server, _, score = line[len("  candidate "):].partition(": score ")
            candidates.append((server, score))
        else:
            rest.append(line.strip())
    return {"lines": rest, "filters": filters, "candidates": candidates}


def _sse(ctx: ApiContext, after: int, keep: Callable[[Envelope], bool]) -> StreamingResponse:
    """Server-sent events: every kept event past `after`, then live (the store's tail, woken by
    PostgreSQL's notifications: no polling by the browser). The decider folds an event before it is
    judged, so a tenant's new workload is known when its first event arrives."""

    async def events() -> AsyncIterator[str]:
        yield "retry: 2000\n\n"
        async for env in ctx.store.tail(after):
            if (env.position or 0) > ctx.decider.position:
                await ctx.catch_up()
            if keep(env):
                yield f"id: {env.position}\nevent: logged\ndata: {json.dumps(read.event_row(env))}\n\n"

    return StreamingResponse(events(), media_type="text/event-stream",
                             headers={**HEADERS, "X-Accel-Buffering": "no"})
