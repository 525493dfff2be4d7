"""`sextant recurring analyse TRACE`: recurring jobs of a job trace (docs/recurring.md). The
platform's contract verbs (`contracts`, `show`, `accept`, `override`, `reject`) are `contracts.py`'s.

    sextant recurring analyse jobs.csv.gz [--train-days 21] [--json PATH] [--top 15] [--quiet]

TRACE is a CSV (optionally gzip-compressed) with the header
`job_id,submit_s,schedule_s,end_s,end_event,user,sched_class,lname` (the Google 2011 job table of
`shared/data/google-2011-jobs/`): times in seconds from the start of the record, empty when
missing; `lname` is the template key. The command detects periodic templates on the first
`--train-days` days, predicts the rest's submit slots and run-time P95
(`sextant_core.recurring.analysis`), prints a table of the largest templates and the scores, and
with `--json` writes the metrics and every detected template.

Bad input: a wrong header, a row with the wrong number of cells, a cell that is not a number, a
missing or negative submit time — the error names the line, the exit status is 2 and nothing is
written. A template with too few runs gets no prediction (it is reported as not periodic, or
without a run-time prediction); gaps in the record are reported and their slots left unscored.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from sextant_core.recurring.analysis import AnalysisParams, JobTable, TraceAnalysis, analyse

from . import contracts

HEADER = ("job_id", "submit_s", "schedule_s", "end_s", "end_event", "user", "sched_class", "lname")
DAY_S = 86400.0


class TraceError(ValueError):
    """The trace file cannot be read as a job table; the message names the line."""


def _open(path: Path) -> io.TextIOBase:
    with open(path, "rb") as raw:
        magic = raw.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")  # noqa: SIM115 (closed by the caller's with)


def load_jobs(path: str | Path) -> JobTable:
    """Parse TRACE (format above) into a `JobTable`; raises `TraceError` naming the bad line."""
    p = Path(path)
    cols: list[list[float]] = [[] for _ in HEADER]
    try:
        with _open(p) as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None or tuple(h.strip() for h in header) != HEADER:
                raise TraceError(f"{p}:1: header must be {','.join(HEADER)}")
            for line, row in enumerate(reader, start=2):
                if len(row) != len(HEADER):
                    raise TraceError(f"{p}:{line}: {len(row)} cells, expected {len(HEADER)}")
                for i, cell in enumerate(row):
                    try:
                        v = float(cell) if cell else math.nan
                    except ValueError:
                        raise TraceError(f"{p}:{line}: {HEADER[i]} {cell!r} is not a number") from None
                    cols[i].append(v)
                if not row[1] or float(row[1]) < 0 or not row[7]:
                    raise TraceError(f"{p}:{line}: submit_s and lname are required and submit_s must be >= 0")
    except (OSError, EOFError, gzip.BadGzipFile, UnicodeDecodeError) as e:
        if isinstance(e, FileNotFoundError):
            raise TraceError(f"{p}: no such file") from None
        raise TraceError(f"{p}: unreadable ({e})") from None
    a = [np.asarray(c, dtype=float) for c in cols]
    if len(a[0]) == 0:
        raise TraceError(f"{p}: no jobs")
    return JobTable(job_id=a[0], submit_s=a[1], schedule_s=a[2], end_s=a[3], end_event=a[4],
                    sched_class=np.nan_to_num(a[6], nan=-1.0), template=a[7].astype(np.int64))


def report(result: TraceAnalysis, top: int) -> str:
    """The table of the `top` largest detected templates, then the scores."""
    lines = [f"{'template':>9} {'jobs':>6} {'arrivals':>8} {'label':>6} {'period s':>10} {'cv':>6} "
             f"{'slots':>6} {'scored':>6} {'hits':>5}"]
    for tp in sorted(result.templates, key=lambda x: (-x.template.n_jobs, x.template.key))[:top]:
        t = tp.template
        lab = _label(t.natural_period_s or 0.0)
        lines.append(f"{t.key:>9} {t.n_jobs:>6} {t.n_arrivals:>8} {lab:>6} {t.period_s:>10.1f} {t.cv:>6.3f} "
                     f"{tp.score.slots:>6} {tp.score.scored:>6} {tp.score.hits:>5}")
    m = result.metrics
    lines.append("")
    for k in ("periodic_templates", "periodic_job_share", "still_running_share", "slot_hit_rate", "slot_recall",
              "p95_coverage", "p95_median_ratio", "baseline_p95_coverage", "baseline_p95_median_ratio",
              "kill_share", "record_gaps", "slots_in_record_gaps"):
        lines.append(f"{k:<28} {m[k]}")
    return "\n".join(lines)


def _label(period_s: float) -> str:
    return f"{period_s / 3600:g}h" if period_s >= 3600 else f"{period_s / 60:g}m"


def to_json(result: TraceAnalysis) -> dict[str, Any]:
    return {"train_end_s": result.train_end_s, "test_end_s": result.test_end_s, "metrics": result.metrics,
            "record_gaps": [list(g) for g in result.record_gaps],
            "templates": [{"template": tp.template.key, "jobs": tp.template.n_jobs,
                           "arrivals": tp.template.n_arrivals, "natural_period_s": tp.template.natural_period_s,
                           "period_s": round(tp.template.period_s, 3), "phase_s": round(tp.template.phase_s, 3),
                           "cv": round(tp.template.cv, 4), "slots": tp.score.slots, "scored": tp.score.scored,
                           "hits": tp.score.hits} for tp in result.templates]}


def write_json_atomically(path: str | Path, doc: dict[str, Any]) -> None:
    """Write `doc` to `path` via a temporary file and a rename: a failure leaves no partial file."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, target)


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("trace", metavar="TRACE")
    p.add_argument("--train-days", type=float, default=21.0, help="training window from time 0 (default 21)")
    p.add_argument("--json", dest="json_path", metavar="PATH", help="also write the metrics and templates")
    p.add_argument("--top", type=int, default=15, help="templates in the table (default 15)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=run)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("recurring", help="recurring jobs: periods, submit slots, run times (Morpheus)")
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    a = verbs.add_parser("analyse", help="detect templates and periods; predict the last days from the first",
                         description=__doc__.split("\n\n")[0] if __doc__ else None)
    _add_arguments(a)
    contracts.add_verbs(verbs)


def run(args: argparse.Namespace) -> int:
    def say(msg: str) -> None:
        if not args.quiet:
            print(f"recurring: {msg}", file=sys.stderr, flush=True)

    try:
        if not args.train_days > 0:
            raise TraceError("--train-days must be > 0")
        say(f"reading {args.trace}")
        jobs = load_jobs(args.trace)
        result = analyse(jobs, args.train_days * DAY_S, AnalysisParams(), progress=say)
        if args.json_path:
            write_json_atomically(args.json_path, to_json(result))
    except (TraceError, ValueError, OSError) as e:
        print(f"recurring analyse: error: {e}", file=sys.stderr)
        return 2
    print(report(result, args.top))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="sextant recurring analyse",
                                description=__doc__.split("\n\n")[0] if __doc__ else None)
    _add_arguments(p)
    return int(run(p.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
