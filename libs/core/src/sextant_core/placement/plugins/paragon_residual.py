"""`paragon-d1-residual`: Paragon's D1 check made exact for servers with several residents
(Paragon §3.2; spec paragon.md §9 items 4–5).

Paragon's D1(k) = t_server(k) − c_new(k) compares what the newcomer causes with the least
tolerant resident's *whole* tolerance, as if the other residents exerted no pressure on it. With
additive pressure ([GAP] item 4: we read c as additive intensity units, as the server aggregate
c_server = Σ c already does), a resident r feels Σ_{o≠r} c_o = c_server − c_r, so the newcomer
fits resident r on source k iff

    t_r(k) − (c_server(k) − c_r(k)) − c_new(k) ≥ 0.

The per-server *residual tolerance* is therefore

    residual(s, k) = min_r (t_r(k) + c_r(k)) − c_server(k)        (100 on an empty server)

and the exact D1 is residual(s, k) − c_new(k) ≥ −slack. It is never looser than Paragon's D1
where a resident's own pressure is what it tolerates least, and it stops a newcomer from being
put next to two residents whose pressures already add up to a third's tolerance.

The column comes from the caller (`extra["residual"]`, shape (n, S), e.g. from
`sextant_core.planning.residual.ResidualIndex`); without it the filter falls back to Paragon's
t_server − c_new. Sources are checked in D1's difficulty order (decreasing c_new, Paragon §3.2),
so a rejected server's constant reason names the first violated source, e.g. `d1r_llc_cap`.
"""

from __future__ import annotations

from typing import ClassVar

from sextant_contracts.model import INTERFERENCE_SOURCES

from ..framework import FilterVerdict, PluginArgs
from ..registry import register_plugin
from ..request import PlacementRequest
from ..table import BoolArray, CandidateTable, FloatArray
from .interference import SlackArgs, d1_order, first_violation

RESIDUAL = "residual"


def residual_violations(residual: FloatArray, caused_new: FloatArray, slack: float = 0.0) -> BoolArray:
    """(n, S) True where residual(s, k) − c_new(k) < −slack."""
    out: BoolArray = residual < (caused_new - slack)[None, :]
    return out


def residual_column(table: CandidateTable) -> FloatArray:
    """The residual tolerance column, or Paragon's t_server when the caller supplied none."""
    col = table.extra.get(RESIDUAL)
    return table.tolerated_min if col is None else col


@register_plugin
class ParagonD1Residual:
    NAME: ClassVar[str] = "paragon-d1-residual"
    REASONS: ClassVar[tuple[str, ...]] = tuple(f"d1r_{s.value}" for s in INTERFERENCE_SOURCES)
    Args: ClassVar[type[PluginArgs]] = SlackArgs

    def filter(self, table: CandidateTable, request: PlacementRequest, args: SlackArgs) -> FilterVerdict:
        bad = residual_violations(residual_column(table), request.caused, args.slack)
        mask, codes = first_violation(bad, d1_order(request.caused))
        return FilterVerdict(mask, codes)
