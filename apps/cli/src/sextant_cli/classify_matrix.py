"""`sextant classify-matrix IN.csv OUT.csv`: collaborative filtering on any matrix (docs/classification.md).

Input: CSV, first row = header (its first cell names the id column, the others are column ids),
first column = row id (unique), every other cell a positive real or empty (= unknown). Output: the
same header, rows and ids, with every cell filled: known cells unchanged, unknown cells the
engine's estimate (`sextant_core.classification.complete_matrix`: log normalisation, initial SVD
+ ALS, Bayesian fold-in; rank and regularisation chosen by cross-validation unless given).
A row with no value is allowed: it gets the column-bias fill (global mean + column bias in the
engine's normalised space, confidence 0) and does not influence the other rows.

    sextant classify-matrix in.csv out.csv [--rank K] [--reg λ] [--normalise log|linear]
                                           [--confidence conf.csv] [--quiet]
    python -m sextant_cli.classify_matrix ...   (same arguments)

Python: `classify_csv(in_path, out_path, ...)` returns the `Completion`. Bad input (ragged rows,
unparseable or non-positive values, duplicate ids, a column with no value — named by its header)
is reported with the row/column at fault and exit status 2; nothing is written then.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sextant_core.classification import Completion, MatrixError, Normalisation, complete_matrix


@dataclass(frozen=True, slots=True)
class CsvMatrix:
    id_header: str
    columns: list[str]
    row_ids: list[str]
    values: np.ndarray  # float, NaN = unknown


def read_matrix(path: str | Path) -> CsvMatrix:
    """Parse the CSV format above; raises `MatrixError` naming the offending cell."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = [r for r in csv.reader(f) if r and any(c.strip() for c in r)]
    if not rows:
        raise MatrixError(f"{path}: empty file")
    header, body = rows[0], rows[1:]
    if len(header) < 2:
        raise MatrixError(f"{path}: the header needs an id column and at least one value column")
    values = np.full((len(body), len(header) - 1), np.nan)
    ids: list[str] = []
    for i, row in enumerate(body, start=2):
        if len(row) != len(header):
            raise MatrixError(f"{path}:{i}: {len(row)} cells, the header has {len(header)}")
        ids.append(row[0].strip())
        for j, cell in enumerate(row[1:]):
            cell = cell.strip()
            if not cell:
                continue
            try:
                v = float(cell)
            except ValueError:
                raise MatrixError(f"{path}:{i}: column {header[j + 1]!r}: {cell!r} is not a number") from None
            if not math.isfinite(v):
                raise MatrixError(f"{path}:{i}: column {header[j + 1]!r}: {cell!r} is not finite")
            values[i - 2, j] = v
    return CsvMatrix(id_header=header[0], columns=[h.strip() for h in header[1:]], row_ids=ids, values=values)


def write_matrix(path: str | Path, m: CsvMatrix, values: np.ndarray) -> None:
    """Write `values` with `m`'s header and ids; floats in shortest round-trip form (`repr`)."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow([m.id_header, *m.columns])
        for rid, row in zip(m.row_ids, values, strict=True):
            w.writerow([rid, *(repr(float(v)) for v in row)])


def classify_csv(in_path: str | Path, out_path: str | Path, *, rank: int | None = None, reg: float | None = None,
                 normalise: str = "log", confidence_path: str | Path | None = None) -> Completion:
    """Read `in_path`, fill every unknown cell, write `out_path` (and the per-cell confidence)."""
    m = read_matrix(in_path)
    try:
        out = complete_matrix(m.values, m.row_ids, rank=rank, reg=reg, normalisation=Normalisation(normalise))
    except MatrixError as e:
        raise MatrixError(f"{in_path}: {_named(str(e), m.columns)}") from None
    write_matrix(out_path, m, out.filled)
    if confidence_path is not None:
        write_matrix(confidence_path, m, out.confidence)
    return out


def _named(message: str, columns: list[str]) -> str:
    """Replace column indices in a core error by the CSV's column ids."""
    if "have no known value" in message:
        idx = message.split("column(s) ", 1)[1].split(" have", 1)[0]
        names = ", ".join(repr(columns[int(i)]) for i in idx.split(", "))
        return f"column(s) {names} have no known value"
    return message


def _add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", metavar="IN.csv")
    p.add_argument("output", metavar="OUT.csv")
    p.add_argument("--rank", type=int, help="latent factors (default: chosen by cross-validation)")
    p.add_argument("--reg", type=float, help="regularisation λ (default: chosen by cross-validation)")
    p.add_argument("--normalise", choices=[n.value for n in (Normalisation.LOG, Normalisation.LINEAR)],
                   default="log", help="log (default; values must be > 0) or linear")
    p.add_argument("--confidence", metavar="PATH", help="also write a per-cell confidence matrix (0..1)")
    p.add_argument("--quiet", action="store_true", help="no summary on stderr")
    p.set_defaults(func=run)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = sub.add_parser("classify-matrix", help="fill the unknown cells of a CSV matrix (collaborative filtering)",
                       description=__doc__.split("\n\n")[0] if __doc__ else None)
    _add_arguments(p)


def run(args: argparse.Namespace) -> int:
    try:
        out = classify_csv(args.input, args.output, rank=args.rank, reg=args.reg, normalise=args.normalise,
                           confidence_path=args.confidence)
    except (MatrixError, OSError) as e:
        print(f"classify-matrix: error: {e}", file=sys.stderr)
        return 2
    if not args.quiet:
        sel = out.selection
        how = "given" if sel is None else f"{sel.method}, cv mse {sel.cv_error:.4g}"
        m, n = out.filled.shape
        print(f"classify-matrix: {m} rows × {n} columns, rank {out.rank}, reg {out.reg:g} ({how}), "
              f"normalisation {out.normalisation.value} -> {args.output}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="sextant classify-matrix",
                                description=__doc__.split("\n\n")[0] if __doc__ else None)
    _add_arguments(p)
    return run(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
