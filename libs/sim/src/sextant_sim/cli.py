"""`sextant sim run|compare|list`: the cluster twin from the command line (docs/twin.md, "How to run").

    sextant sim run SCENARIO --profile P [--seed N] [--out DIR] [--quiet]
        one profile on one scenario: a progress bar, then a summary table; with --out DIR the JSONL
        event log (events.jsonl), summary.json and PNG plots (performance.png: sorted normalised
        performance; utilisation.png: per-server utilisation heat map), plus stragglers.json for
        scenarios with analytics jobs.
    sextant sim compare SCENARIO --profiles P1,P2,... [--seed N] [--json PATH] [--quiet]
        several profiles on the same arrivals (common random numbers); one table; --json writes
        {"scenario", "seed", "twin_version", "profiles": {NAME: {metrics}}}.
    Both take --world v3|v4: the ground truth (default the scenario's own, v4); v3 is the stress
    world whose interference is independent per source. `twin_version` names the world's file.
    sextant sim list
        the bundled scenarios (with their demand/capacity ratios) and the profiles.

SCENARIO is a bundled name or a path to a scenario YAML file. An unknown scenario or profile, or an
invalid scenario file, is reported on stderr with the valid names and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from rich.console import Console

from . import baselines, groundtruth
from .scenarios import Scenario, load_scenario, names
from .setup import prepare

EXIT_USAGE = 2


class UsageError(Exception):
    """A bad scenario or profile name, or an invalid scenario file (exit status 2)."""


def _scenario(name: str, world: str | None = None) -> Scenario:
    try:
        return load_scenario(name, world=world)
    except KeyError as e:
        raise UsageError(f"unknown scenario {name!r}; known: {', '.join(names())} (or a path to a .yaml file)") from e
    except ValidationError as e:
        raise UsageError(f"invalid scenario {name!r}:\n{e}") from e


def _profiles(raw: str) -> list[str]:
    wanted = [p.strip() for p in raw.split(",") if p.strip()]
    known = baselines.names()
    bad = [p for p in wanted if p not in known]
    if bad or not wanted:
        raise UsageError(f"unknown profile {', '.join(map(repr, bad)) or '(none given)'}; known: {', '.join(known)}")
    return wanted


def _out(quiet: bool) -> Console:
    """stdout; wide when not a terminal (files, pipes), so tables are never squeezed."""
    return Console(quiet=quiet, width=None if sys.stdout.isatty() else 200)


def _progress(console: Console, label: str, total: int) -> tuple[Callable[[float, int, int], None], Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TextColumn("t={task.fields[now]:.0f}s"), TimeElapsedColumn(), console=console, transient=True)
    task = bar.add_task(label, total=total, now=0.0)

    def update(now: float, ended: int, total: int) -> None:
        bar.update(task, completed=ended, now=now)

    return update, bar


def cmd_run(args: argparse.Namespace) -> int:
    from .report import summary_table, write_outputs
    from .runner import run_profile

    sc = _scenario(args.scenario, args.world)
    (profile,) = _profiles(args.profile)
    err = Console(stderr=True, quiet=args.quiet)
    out_dir = Path(args.out) if args.out else None
    setup = prepare(sc, args.seed)
    update, bar = _progress(err, f"{sc.name} · {profile}", len(setup.subs))
    log = None
    try:
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            log = (out_dir / "events.jsonl").open("w", encoding="utf-8")
        with bar:
            res = run_profile(setup, profile, args.seed, log_out=log, progress=None if args.quiet else update,
                              keep_heatmap=out_dir is not None, classifier=args.classifier)
    finally:
        if log is not None:
            log.close()
    _out(args.quiet).print(summary_table(sc.name, profile, args.seed, res.summary, setup.twin_version))
    if out_dir is not None:
        written = write_outputs(out_dir, sc.name, profile, args.seed, res)
        err.print(f"wrote {out_dir / 'events.jsonl'}, " + ", ".join(str(p) for p in written))
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from .report import compare_json, compare_table
    from .runner import run_profile, write_json

    sc = _scenario(args.scenario, args.world)
    profiles = _profiles(args.profiles)
    err = Console(stderr=True, quiet=args.quiet)
    setup = prepare(sc, args.seed)
    results: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()
    for p in profiles:
        update, bar = _progress(err, f"{sc.name} · {p}", len(setup.subs))
        with bar:
            results[p] = run_profile(setup, p, args.seed, progress=None if args.quiet else update,
                                     classifier=args.classifier).summary
    doc = compare_json(sc.name, args.seed, results, setup.twin_version)
    doc["classifier"] = args.classifier
    extra = (f" · demand/capacity {setup.demand_capacity_ratio:.3f} (peak {setup.peak_demand_ratio():.3f})"
             f" · {len(setup.servers)} servers")
    _out(args.quiet).print(compare_table(doc, extra))
    if args.json:
        write_json(doc, args.json)
        err.print(f"wrote {args.json} ({time.perf_counter() - started:.1f} s)")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    for n in names():
        sc = load_scenario(n)
        print(f"{n:32s} {sc.workloads:6d} workloads  catalogue {sc.catalogue}")
    print("profiles: " + ", ".join(baselines.names()))
    return 0


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except UsageError as e:
            print(f"sextant sim: error: {e}", file=sys.stderr)
            return EXIT_USAGE

    return run


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("scenario", help="bundled scenario name or path to a scenario YAML")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quiet", action="store_true", help="no progress bar, no table")
    p.add_argument("--world", choices=sorted(groundtruth.WORLDS), default=None,
                   help="the ground truth to run in (default: the scenario's, v4 unless it says otherwise); "
                        "v3 = interference independent per source, the stress world")
    p.add_argument("--classifier", choices=baselines.CLASSIFIERS, default="cf",
                   help="what the baselines and sextant/paragon classify with: the classification engine "
                        "(cf, default) or the twin's estimate port (truth + Table III noise)")


def _add(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("run", help="run one profile on a scenario")
    _common(p)
    p.add_argument("--profile", required=True, help="profile name (see `sextant sim list`)")
    p.add_argument("--out", help="directory for events.jsonl, summary.json and plots")
    p.set_defaults(func=_guard(cmd_run))
    c = sub.add_parser("compare", help="several profiles on the same arrivals, one table")
    _common(c)
    c.add_argument("--profiles", required=True, help="comma-separated profile names")
    c.add_argument("--json", help="write the comparison as JSON to this path")
    c.set_defaults(func=_guard(cmd_compare))
    ls = sub.add_parser("list", help="bundled scenarios and profiles")
    ls.set_defaults(func=cmd_list)


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add `sim` (with run, compare, list) to the `sextant` command line."""
    sim = subparsers.add_parser("sim", help="the cluster twin: run or compare profiles on scenarios",
                                description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = sim.add_subparsers(dest="sim_command", metavar="SUBCOMMAND")
    sub.required = True
    _add(sub)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sextant")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(argv)
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
