"""`python -m sextant_planning.main`: the planning service process."""

from __future__ import annotations

import asyncio

from sextant_kit.bootstrap import serve
from sextant_kit.runtime import decider_task

from .api import routers
from .handlers import make_decider
from .settings import Settings


def main() -> None:
    settings = Settings()  # type: ignore[call-arg]
    decider = make_decider(settings)
    asyncio.run(serve(settings, [decider_task(decider)], routers=lambda rt: routers(decider, rt)))


if __name__ == "__main__":
    main()
