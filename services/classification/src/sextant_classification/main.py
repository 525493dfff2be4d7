"""`python -m sextant_classification.main`: the classification service process."""

from __future__ import annotations

from sextant_kit.deciding import run_decider

from .api import routers
from .handlers import make_decider
from .settings import Settings


def main() -> None:
    settings = Settings()  # type: ignore[call-arg]
    decider = make_decider(settings)
    run_decider(settings, decider, lambda rt: routers(decider, rt))


if __name__ == "__main__":
    main()
