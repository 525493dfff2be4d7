"""pytest plugin: the order in which pytest-xdist hands test files to its workers (`make test`).

With `--dist loadfile` every test file is one unit of work — a worker runs a whole file, so a
module-scoped fixture (a platform of eight processes) is set up once — and a worker takes the
next unit when it is done. The units are handed out in this order, as the path tells:

0. `tests/architecture/` — seconds in all; first because they read the repository tree that
   `tests/e2e/test_chaos.py` writes its results into (`bench/results/chaos.json` and its page) at
   its end, minutes later, so they never read a half-written pair;
1. `tests/e2e/`, its files one unit (the platform under chaos and outages: minutes each, eight
   processes each; one after the other on one worker, so that the two never compete with each
   other for the CPU and their bounded waits keep the margin they have in a single process),
2. `tests/integration/` (each file starts processes or servers),
3. everything else (unit tests: many short files that fill the gaps at the end).

So the long e2e runs start at once on one worker instead of ending the run, and the other
worker works through the integration files meanwhile.
Within a rank xdist's own order stands (most tests first, then collection order).

So the long e2e runs start at once on one worker instead of ending the run, and the other
worker works through the integration files meanwhile. Each
worker is its own pytest session: it starts its own PostgreSQL and Kafka on first request
(`sextant_kit.testing.fixtures`) and its integration tests use those, never another worker's;
the integration guard counts over all workers (`sextant_kit.testing.integration_guard`).

Without `-n`, or with another `--dist` mode, this plugin changes nothing.
"""

from __future__ import annotations

import collections
from typing import Any

import pytest

E2E = "tests/e2e/"
ORDER = ("tests/architecture/", E2E, "tests/integration/")


def rank(nodeid: str) -> int:
    """The place of a test's file in the order of the module docstring (0 to 3)."""
    return next((i for i, prefix in enumerate(ORDER) if nodeid.startswith(prefix)), len(ORDER))


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # before xdist's own (a firstresult hook)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getoption("dist", None) != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class InOrder(LoadFileScheduling):  # type: ignore[misc]
        """`loadfile`, its queue of files stably sorted by `rank`. The queue is reordered, never the
        collection: workers address tests by their index in it."""

        ranked = False

        def _split_scope(self, nodeid: str) -> str:
            return E2E if nodeid.startswith(E2E) else str(super()._split_scope(nodeid))

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ranked:  # the first assignment: the queue holds every file
                queue = self.workqueue.items()  # type: ignore[has-type]
                self.workqueue = collections.OrderedDict(sorted(queue, key=lambda kv: rank(kv[0])))
                self.ranked = True
            super()._assign_work_unit(node)

    return InOrder(config, log)
