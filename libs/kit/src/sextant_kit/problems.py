"""RFC 9457 problem documents for every HTTP error (DESIGN §1, §8).

Every error response of a Sextant API is `application/problem+json`:

    {"type": "https://sextant.dev/problems/<slug>", "title": "...", "status": 422,
     "detail": "...", "instance": "/v1/workloads/abc", "errors": [...]}

- `Problem(status, slug, title, detail, **extra)` is the exception handlers raise; extra members
  (e.g. `retry_after_s`) are added to the body.
- a validation failure (422) carries `errors`: one entry per bad field with `path` (a JSONPath
  into the request body, `$.target.qps`, or the parameter, `query.limit`), `in` (body, query,
  header, path), `detail` and `code` (pydantic's error type). Discriminated-union tags that
  pydantic inserts in its locations are removed, so the path names the field the client sent.
- `problem_route(max_body_bytes)` is the route class of a public router: it turns every error of
  its routes into a problem document, and answers 413 for a body over the limit and 415 for a body
  that is not JSON before the body is parsed. `problem_responses(...)` documents them in OpenAPI.
- JSON has no Infinity or NaN, but Python's parser accepts the literals `Infinity`, `-Infinity`,
  `NaN` and turns an overflowing number (`1e400`) into infinity: `non_finite_errors(doc)` lists
  every such number as a field error (code `finite_number`), and a body that has one is a 422
  `validation-failed` naming each field, before the route sees it.
- `not_found_route(router)` adds a catch-all so an unknown path under the router's prefix is a
  problem document too — or a 405 with `Allow` (the methods the path's routes serve, sorted) when
  the path is known and the method is not.
- `install(app)` makes every other HTTP error of the app (a path outside the routers, a method an
  app route does not serve: 404, 405 with `Allow`) a problem document too.
- any other exception is a problem too: 503 (`Retry-After: 1`) when a dependency is unavailable
  (`errors.is_transient`), 500 otherwise (logged with its traceback).
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from .errors import is_transient

log = logging.getLogger(__name__)

MEDIA_TYPE = "application/problem+json"
TYPE_BASE = "https://sextant.dev/problems/"

TITLES = {400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not found",
          405: "Method not allowed", 406: "Not acceptable", 409: "Conflict", 413: "Content too large",
          415: "Unsupported media type", 422: "Unprocessable content", 429: "Too many requests",
          500: "Internal server error", 503: "Service unavailable"}
SLUGS = {400: "bad-request", 401: "unauthorized", 403: "forbidden", 404: "not-found",
         405: "method-not-allowed", 406: "not-acceptable", 409: "conflict", 413: "body-too-large",
         415: "unsupported-media-type", 422: "validation-failed", 429: "too-many-requests",
         500: "internal-error", 503: "unavailable"}


class FieldError(BaseModel):
    path: str = Field(description="JSONPath of the bad field in the body ($.a.b), or in.name for a parameter")
    in_: str = Field(alias="in", description="body | query | header | path")
    detail: str
    code: str


class ProblemDocument(BaseModel):
    """The body of every error response (RFC 9457)."""

    model_config = ConfigDict(extra="allow")
    type: str
    title: str
    status: int = Field(ge=400, le=599)
    detail: str
    instance: str
    errors: list[FieldError] | None = None


class Problem(Exception):
    """An error that becomes a problem document. `slug` names the problem type."""

    def __init__(self, status: int, slug: str | None = None, detail: str = "", *, title: str | None = None,
                 headers: Mapping[str, str] | None = None, **extra: Any) -> None:
        super().__init__(detail)
        self.status = status
        self.slug = slug or SLUGS.get(status, "error")
        self.title = title or TITLES.get(status, "Error")
        self.detail = detail or self.title
        self.headers = dict(headers or {})
        self.extra = extra


def body(status: int, slug: str, title: str, detail: str, instance: str, **extra: Any) -> dict[str, Any]:
    return {"type": TYPE_BASE + slug, "title": title, "status": status, "detail": detail,
            "instance": instance, **extra}


def response(status: int, slug: str | None, detail: str, instance: str, *, title: str | None = None,
             headers: Mapping[str, str] | None = None, **extra: Any) -> JSONResponse:
    doc = body(status, slug or SLUGS.get(status, "error"), title or TITLES.get(status, "Error"),
               detail or TITLES.get(status, "Error"), instance, **extra)
    return JSONResponse(doc, status_code=status, media_type=MEDIA_TYPE, headers=dict(headers or {}))


def field_path(loc: Sequence[Any], sent: Any) -> str:
    """A JSONPath for pydantic's `loc` (without its leading 'body'), walking what the client sent so
    the union tags pydantic inserts (`target.throughput_latency.qps`) are dropped."""
    parts: list[str] = []
    cur = sent
    items = list(loc)
    for i, key in enumerate(items):
        if isinstance(cur, dict) and isinstance(key, str) and key in cur:
            parts.append(f".{key}")
            cur = cur[key]
        elif isinstance(cur, list) and isinstance(key, int) and 0 <= key < len(cur):
            parts.append(f"[{key}]")
            cur = cur[key]
        elif isinstance(cur, dict) and isinstance(key, str) and i + 1 < len(items):
            continue  # a discriminator tag, not a member of the document
        else:
            parts.append(f"[{key}]" if isinstance(key, int) else f".{key}")
            cur = None
    return "$" + "".join(parts)


def validation_errors(errors: Iterable[Mapping[str, Any]], sent: Any) -> list[dict[str, Any]]:
    out = []
    for e in errors:
        loc = list(e.get("loc", ()))
        where = str(loc[0]) if loc else "body"
        path = field_path(loc[1:], sent) if where == "body" else ".".join(str(x) for x in loc)
        out.append({"path": path, "in": where, "detail": str(e.get("msg", "invalid")),
                    "code": str(e.get("type", "invalid"))})
    return out


FINITE_CODE = "finite_number"


def non_finite_errors(doc: Any, where: str = "body") -> list[dict[str, Any]]:
    """A field error (`path`, `in`, `detail`, `code` = `finite_number`) for every non-finite number
    (infinity, NaN) in a parsed JSON document, in document order."""
    out: list[dict[str, Any]] = []

    def walk(value: Any, path: str) -> None:
        if isinstance(value, float) and not math.isfinite(value):
            out.append({"path": path, "in": where, "detail": "must be a finite number", "code": FINITE_CODE})
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, f"{path}.{key}")
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]")

    walk(doc, "$")
    return out


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI `responses` entries documenting problem documents for `statuses`."""
    ref = {"$ref": "#/components/schemas/ProblemDocument"}
    return {s: {"model": ProblemDocument, "description": TITLES.get(s, "Error"),
                "content": {MEDIA_TYPE: {"schema": ref}}} for s in statuses}


def _validation_response(exc: RequestValidationError, instance: str) -> JSONResponse:
    sent = exc.body
    if isinstance(sent, bytes | str):
        try:
            sent = json.loads(sent)
        except ValueError:
            sent = None
    errors = validation_errors(exc.errors(), sent)
    if any(e["code"] == "json_invalid" for e in errors):
        return response(422, "malformed-json", "the body is not valid JSON", instance, errors=errors)
    n = len(errors)
    return response(422, "validation-failed", f"{n} invalid field{'s' if n != 1 else ''}: "
                    + ", ".join(e["path"] for e in errors[:10]), instance, errors=errors)


def problem_route(max_body_bytes: int = 64 * 1024) -> type[APIRoute]:
    """An `APIRoute` class (for `APIRouter(route_class=...)`) whose every error is a problem
    document: `Problem`, validation failures (422 with `errors`), HTTP exceptions, and — checked
    before the body is parsed — 413 for a body over `max_body_bytes` and 415 for a body that is not
    JSON (`application/json` or `application/*+json`)."""

    class ProblemRoute(APIRoute):
        def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
            inner = super().get_route_handler()

            async def handler(request: Request) -> Response:
                path = request.url.path
                try:
                    if request.method in ("POST", "PUT", "PATCH"):
                        refused = await _guard_body(request, max_body_bytes)
                        if refused is not None:
                            return refused
                    return await inner(request)
                except Problem as exc:
                    return response(exc.status, exc.slug, exc.detail, path, title=exc.title,
                                    headers=exc.headers, **exc.extra)
                except RequestValidationError as exc:
                    return _validation_response(exc, path)
                except StarletteHTTPException as exc:
                    detail = exc.detail if isinstance(exc.detail, str) else TITLES.get(exc.status_code, "Error")
                    return response(exc.status_code, None, detail, path, headers=exc.headers)
                except Exception as exc:  # a dependency is down (503, retry) or a bug (500): still a problem
                    if is_transient(exc):
                        log.warning("%s %s: dependency unavailable: %r", request.method, path, exc)
                        return response(503, None, "a dependency (database or broker) is unavailable; retry",
                                        path, headers={"Retry-After": "1"})
                    log.exception("%s %s failed", request.method, path)
                    return response(500, None, "the server failed to handle the request", path)

            return handler

    return ProblemRoute


async def _guard_body(request: Request, max_bytes: int) -> Response | None:
    path = request.url.path
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > max_bytes:
        return response(413, None, f"the body has {length} bytes; the limit is {max_bytes}", path)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            return response(413, None, f"the body exceeds the limit of {max_bytes} bytes", path)
        chunks.append(chunk)
    raw = b"".join(chunks)
    request._body = raw  # what FastAPI parses next (Starlette caches the body there)
    ctype = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if raw and not _is_json(ctype):
        return response(415, None, f"content type {ctype or '(none)'!r} is not supported; send application/json",
                        path)
    if raw:
        try:
            doc = json.loads(raw)
        except ValueError as exc:  # also a body that is not UTF-8 (FastAPI would answer a bare 400)
            return response(422, "malformed-json", "the body is not valid JSON", path,
                            errors=[{"path": "$", "in": "body", "detail": str(exc)[:200], "code": "json_invalid"}])
        if errors := non_finite_errors(doc):
            n = len(errors)
            return response(422, "validation-failed", f"{n} invalid field{'s' if n != 1 else ''}: "
                            + ", ".join(e["path"] for e in errors[:10]), path, errors=errors)
    return None


def _is_json(ctype: str) -> bool:
    return ctype == "application/json" or (ctype.startswith("application/") and ctype.endswith("+json"))


CATCH_ALL = "unknown_path"


def not_found_route(router: APIRouter) -> None:
    """Add (last) a catch-all under the router's prefix: an unknown path is a 404 problem; a known
    path asked with a method none of its routes serves is a 405 with `Allow`."""

    @router.api_route("/{rest:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"], include_in_schema=False,
                      name=CATCH_ALL)
    async def _unknown(request: Request, rest: str) -> Response:
        allowed = allowed_methods(router.routes, request.url.path)
        if allowed:
            raise Problem(405, None, f"{request.method} is not served at {request.url.path}; "
                          f"allowed: {', '.join(allowed)}", headers={"Allow": ", ".join(allowed)})
        raise Problem(404, "not-found", f"no resource at {request.url.path}")


def allowed_methods(routes: Iterable[Any], path: str) -> list[str]:
    """The methods the routes matching `path` serve (catch-alls aside), sorted."""
    return sorted({m for r in routes if isinstance(r, APIRoute) and r.name != CATCH_ALL and r.path_regex.match(path)
                   for m in (r.methods or ())})


def install(app: FastAPI) -> None:
    """Every HTTP error the app raises outside a problem route (an unknown path, a method an app
    route does not serve) becomes a problem document; `Allow` is kept, its methods sorted."""

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        headers = dict(exc.headers or {})
        if "Allow" in headers:
            headers["Allow"] = ", ".join(sorted(m.strip() for m in headers["Allow"].split(",")))
        path = request.url.path
        if exc.status_code == 404:
            detail = f"no resource at {path}"
        elif exc.status_code == 405:
            detail = f"{request.method} is not served at {path}; allowed: {headers.get('Allow', '-')}"
        else:
            detail = exc.detail if isinstance(exc.detail, str) else TITLES.get(exc.status_code, "Error")
        return response(exc.status_code, None, detail, path, headers=headers)

    async def invalid(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, RequestValidationError)
        return _validation_response(exc, request.url.path)

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(RequestValidationError, invalid)
