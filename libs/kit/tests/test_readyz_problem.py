"""/readyz's 503 is a problem document (RFC 9457) and is documented in OpenAPI, so a schema-driven
fuzzer can check it like any other answer."""

from __future__ import annotations

import httpx
from sextant_kit.app import create_app


async def ok() -> bool:
    return True


async def down() -> bool:
    raise ConnectionRefusedError("no broker")


async def test_readyz_503_is_a_documented_problem_document() -> None:
    app = create_app("svc", checks={"postgres": ok, "kafka": down})
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        r = await c.get("/readyz")
    assert r.status_code == 503 and r.headers["content-type"] == "application/problem+json"
    body = r.json()
    assert body["status"] == 503 and body["type"].endswith("/not-ready") and "kafka" in body["detail"]
    assert body["instance"] == "/readyz" and body["ready"] is False
    assert body["checks"] == {"kafka": False, "postgres": True}
    documented = app.openapi()["paths"]["/readyz"]["get"]["responses"]["503"]["content"]
    assert documented["application/problem+json"]["schema"] == {"$ref": "#/components/schemas/ProblemDocument"}
