"""The admission service's OpenAPI document, generated from the code.

    python -m sextant_admission.openapi            # rewrite docs/api/openapi.json
    python -m sextant_admission.openapi --check    # exit 1 when the file differs from the code

`document()` builds the app exactly as the process does (`sextant_kit.app.create_app` with the API's
routers) without connecting to anything; a test compares it with the served `/openapi.json` and
with the file in the repository.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, cast

from fastapi import FastAPI
from sextant_kit.app import create_app

from .api import ApiContext, routers

DEFAULT_PATH = Path(__file__).resolve().parents[4] / "docs" / "api" / "openapi.json"


def app() -> FastAPI:
    unused: Any = None  # the routes only touch the context when they serve a request

    async def nothing() -> None:
        return None

    ctx = ApiContext(decider=cast(Any, unused), store=cast(Any, unused), gate=cast(Any, unused), catch_up=nothing)
    return create_app("admission", routers=tuple(routers(ctx)), metrics_gate=nothing)  # documents /metrics' 401, 403


def document() -> dict[str, Any]:
    return app().openapi()


def render(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m sextant_admission.openapi")
    p.add_argument("path", nargs="?", default=str(DEFAULT_PATH))
    p.add_argument("--check", action="store_true", help="compare instead of writing")
    args = p.parse_args(argv)
    path = Path(args.path)
    text = render(document())
    if args.check:
        if not path.exists() or path.read_text() != text:
            print(f"{path} is out of date: run `python -m sextant_admission.openapi`", file=sys.stderr)
            return 1
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
