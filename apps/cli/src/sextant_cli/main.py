"""`sextant` — the command line. Sub-commands are registered by the modules that own them:

    sextant sim run|compare ...        the cluster twin (sextant_sim.cli)
    sextant classify-matrix IN OUT     collaborative filtering on any CSV matrix
    sextant recurring analyse TRACE    recurring jobs of a job trace: periods, slots, run times
    sextant db migrate                 create/upgrade the event store schema
    sextant demo                       the end-to-end demonstration (make demo)

The CLI is an edge application (apps/): it may use kit, core and sim; nothing imports it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

import sextant_kit  # noqa: F401  (pins numpy's SIMD kernels before any command imports numpy)

# (module, attribute) pairs that expose `register(subparsers)`; a missing optional module is
# reported when its command is used, not at start-up.
_COMMAND_MODULES = (
    "sextant_sim.cli",
    "sextant_cli.classify_matrix",
    "sextant_cli.recurring",
    "sextant_cli.db",
    "sextant_cli.replay",
    "sextant_cli.ops",
    "sextant_cli.tenants",
    "sextant_cli.stages",
    "sextant_cli.kwiken",
    "sextant_cli.demo",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sextant", description="Sextant, a QoS-aware cluster manager")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in _COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    result = args.func(args)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
