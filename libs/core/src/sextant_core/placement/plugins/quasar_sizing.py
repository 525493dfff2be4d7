"""Quasar's per-server sizing (Quasar §4.1–4.2): how many cores each server must give the newcomer
to meet its target alone, and what it would then reach — the columns the Quasar filters and
scores read. Arithmetic (pure functions, one vectorised pass over the candidate table):

**Interference factor** predicted for the newcomer on server s (spec quasar.md §9 item 1: a graded
penalty rather than a hard cut; Paragon §2.3 defines t as the pressure at which the workload slows
by 5 %, so the slowdown of one source is taken as 5 % at x = pressure / tolerance = 1):

    slow(s, k) = min(cap, 0.05 · x^α),  x = c_server(s, k) / max(t_new(k), 1)
    f(s)       = Πₖ (1 − slow(s, k))

α (> 0, default 3) says how fast slowdown grows; with α → ∞ it is Paragon's threshold view.

**Sizing.** With base(s) = H(platform of s) · f(s) and the scale-up curve U(1..C), the smallest
c with U(c) · base(s) ≥ R (R = required node performance) is

    c*(s) = 1 + searchsorted(U, R / base(s))      (U is non-decreasing)

If c* ≤ free cores, the row is *sized* to c* and its predicted ratio is U(c*) · base(s) / R ≥ 1;
otherwise it is sized to min(free cores, c_sat) ("as close as possible"; c_sat = the smallest c at
the top of the curve, beyond which more cores add nothing) and its ratio is < 1. Rows with no free
core are sized 0 (ratio 0).

Extra columns (set by the planner with `CandidateTable.with_extra`): `sized_cores` (int, n),
`predicted_ratio` (float, n). Filters:

- `quasar-fit`: sized_cores ≥ 1 (`no_free_cores`) and the request's memory fits
  (`insufficient_memory`, same 1e-9 GiB tolerance as `fit`).
- `quasar-target`: predicted_ratio ≥ `min_ratio` (default 1: the target is met; `below_target`).
  The planner relaxes `min_ratio` to 0 to place "as close as possible".
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from pydantic import Field

from ..framework import FilterVerdict, PluginArgs, verdict
from ..registry import register_plugin
from ..request import PlacementRequest
from ..table import CandidateTable, FloatArray, IntArray
from .fit import MEMORY_EPS_GB

SIZED = "sized_cores"
RATIO = "predicted_ratio"
QOS_SLOWDOWN = 0.05


def interference_factor(caused_sum: FloatArray, tolerated_new: FloatArray, alpha: float = 3.0,
                        cap: float = 0.8) -> FloatArray:
    """f(s) per row: Πₖ (1 − min(cap, 0.05 · (c_server / max(t_new, 1))^α))."""
    x = caused_sum / np.maximum(tolerated_new, 1.0)[None, :]
    np.maximum(x, 0.0, out=x)
    if alpha == 2.0:  # numpy's power takes x·x for a scalar exponent 2; square is the same product, vectorised
        np.square(x, out=x)
    else:
        np.power(x, alpha, out=x)
    x *= QOS_SLOWDOWN
    np.minimum(x, cap, out=x)
    np.subtract(1.0, x, out=x)
    out: FloatArray = np.prod(x, axis=1)
    return out


def saturation(curve: FloatArray) -> int:
    """c_sat: the smallest c with U(c) at the top of the (non-decreasing) curve; 0 if empty."""
    if len(curve) == 0:
        return 0
    return int(np.searchsorted(curve, float(curve[-1]), side="left")) + 1


def size_rows(base: FloatArray, required: float, curve: FloatArray,
              free_cores: IntArray) -> tuple[IntArray, FloatArray]:
    """(sized cores, predicted ratio) per row; see the module docstring."""
    n, cmax = len(base), len(curve)
    free = np.clip(free_cores, 0, saturation(curve)).astype(np.int64)
    if cmax == 0 or not np.isfinite(required):  # unreachable: as much as each server has
        return free, np.zeros(n)
    if required <= 0:  # nothing required: the least resources, one core
        one = np.minimum(free, 1)
        return one, np.where(one > 0, np.inf, 0.0)
    positive = base > 0
    if positive.all():
        need = required / base
    else:
        with np.errstate(divide="ignore"):
            need = np.where(positive, required / np.where(positive, base, 1.0), np.inf)
    cstar = np.searchsorted(curve, need, side="left").astype(np.int64) + 1
    sized = np.minimum(cstar, free)  # c* where it fits (c* ≤ free), else the free cores
    perf = np.concatenate(([0.0], curve))[sized] * base  # U(sized), 0 for 0 cores
    ratio: FloatArray = perf / required
    return sized, ratio


class _NoArgs(PluginArgs):
    pass


@register_plugin
class QuasarFit:
    NAME: ClassVar[str] = "quasar-fit"
    REASONS: ClassVar[tuple[str, ...]] = ("no_free_cores", "insufficient_memory")
    Args: ClassVar[type[PluginArgs]] = _NoArgs

    def filter(self, table: CandidateTable, request: PlacementRequest, args: PluginArgs) -> FilterVerdict:
        sized = table.extra[SIZED]
        cores_ok = sized >= 1
        mem_ok = table.free_memory_gb + MEMORY_EPS_GB >= request.memory_gb
        return verdict(cores_ok & mem_ok, cores_ok.astype(np.int64))  # 0 no_free_cores, 1 insufficient_memory


class TargetArgs(PluginArgs):
    min_ratio: float = Field(1.0, ge=0.0)


@register_plugin
class QuasarTarget:
    NAME: ClassVar[str] = "quasar-target"
    REASONS: ClassVar[tuple[str, ...]] = ("below_target",)
    Args: ClassVar[type[PluginArgs]] = TargetArgs

    def filter(self, table: CandidateTable, request: PlacementRequest, args: TargetArgs) -> FilterVerdict:
        ok = table.extra[RATIO] >= args.min_ratio
        return verdict(ok, np.zeros(len(table), dtype=np.int64))
