"""The placement framework: plugin shapes, profiles, one columnar evaluation pass, ranking.

A plugin (STYLE 7, after the k8s scheduler framework made columnar) has a constant `NAME`, a
validated pydantic `Args`, and a `filter` and/or a `score`, each taking the whole candidate table:

- `filter(table, request, args) -> FilterVerdict(mask, codes)`: `mask[i]` is True when row i
  passes; for a rejected row `codes[i]` indexes the plugin's constant `REASONS` (−1 on passing
  rows). Reasons are constant strings, so traces aggregate them by counting.
- `score(table, request, args) -> float array in 0..100`, higher is better. The framework clips
  to [0, 100] and maps NaN to 0 defensively; plugins must not rely on it.

A `Profile` is an ordered list of filter steps and weighted score steps. `evaluate` runs every
filter over every row (so `explain` can show each verdict, including on rows an earlier filter
already removed) and counts, per filter, the rows it removed among those that survived the
filters before it (the trace's "how many servers each filter removed and why"). The total score
is the weighted mean Σ wᵢ·sᵢ / Σ wᵢ (0 when no scorer), so totals stay in 0..100.

Ties: `ranked_rows` orders feasible rows by total score descending, then by row ascending; rows
are sorted by server id, so equal scores go to the smallest server id.

Work budget (DESIGN §5): a search is bounded by candidates examined, never by a clock. One
columnar pass charges one unit per row; sequential steps (the scale-out walk, the planner's
backtracking passes) charge per candidate they look at and stop when `Budget.exhausted`.
[IMPL CHOICE] the first full pass always runs, even if it alone exceeds the limit: it is the
least work that can decide anything; `budget_exhausted` then says so in the trace.

Designed for `sextant_core.planning`: per-source margins, difficulty orders and a `slack` argument live in
`plugins/interference.py`, so backtracking = re-running `evaluate` with
`profile.with_args(name, slack=δ)` and a shared `Budget`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, NamedTuple, Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict

from .request import PlacementRequest
from .table import BoolArray, CandidateTable, FloatArray, IntArray

DEFAULT_BUDGET = 1_000_000
"""Candidates examined per decision unless the profile or planner says otherwise."""


class PluginArgs(BaseModel):
    """Base of every plugin's `Args`: immutable, unknown fields rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class FilterVerdict(NamedTuple):
    mask: BoolArray  # True = passes
    codes: IntArray  # index into REASONS where rejected, -1 where passed


@runtime_checkable
class FilterPlugin(Protocol):
    NAME: ClassVar[str]
    Args: ClassVar[type[PluginArgs]]
    REASONS: ClassVar[tuple[str, ...]]

    def filter(self, table: CandidateTable, request: PlacementRequest, args: Any) -> FilterVerdict: ...


@runtime_checkable
class ScorePlugin(Protocol):
    NAME: ClassVar[str]
    Args: ClassVar[type[PluginArgs]]

    def score(self, table: CandidateTable, request: PlacementRequest, args: Any) -> FloatArray: ...


def verdict(mask: BoolArray, first_failure: IntArray) -> FilterVerdict:
    """A verdict from a pass mask and, per row, the reason code that applies if it failed."""
    ff = np.asarray(first_failure, dtype=np.int64)
    return FilterVerdict(mask, np.where(mask, np.int64(-1), ff))  # −1 where passed, one pass


@dataclass(frozen=True, slots=True)
class Step:
    """One plugin use in a profile: the plugin, its validated args, its weight (scorers)."""

    plugin: Any  # FilterPlugin | ScorePlugin
    args: PluginArgs
    weight: float = 1.0

    @property
    def name(self) -> str:
        return str(self.plugin.NAME)


@dataclass(frozen=True, slots=True)
class Profile:
    """Filters (in order) + weighted scorers + how to spread a request that fits no single server.

    `scale_out`: spread over several servers in score order when none fits the whole request;
    `max_servers`: the most servers one spread may use; `budget`: candidates examined per decision.
    """

    name: str
    filters: tuple[Step, ...]
    scorers: tuple[Step, ...]
    scale_out: bool = True
    max_servers: int = 256
    budget: int = DEFAULT_BUDGET
    version: str = "1"
    description: str = ""

    def with_args(self, plugin: str, **changes: Any) -> Profile:
        """The profile with `plugin`'s args updated (validated again), e.g. a relaxed slack."""
        if not any(s.name == plugin for s in (*self.filters, *self.scorers)):
            raise KeyError(f"profile {self.name!r} has no plugin {plugin!r}")

        def upd(steps: tuple[Step, ...]) -> tuple[Step, ...]:
            return tuple(replace(s, args=type(s.args).model_validate({**s.args.model_dump(), **changes}))
                         if s.name == plugin else s for s in steps)
        return replace(self, filters=upd(self.filters), scorers=upd(self.scorers))


@dataclass
class Budget:
    """Work budget in candidates examined (DESIGN §5: never a clock)."""

    limit: int
    used: int = 0

    def charge(self, n: int) -> None:
        self.used += n

    @property
    def exhausted(self) -> bool:
        return self.used >= self.limit


@dataclass(frozen=True, slots=True)
class FilterOutcome:
    name: str
    reasons: tuple[str, ...]
    verdict: FilterVerdict
    removed: Mapping[str, int]  # reason -> rows removed among the survivors of earlier filters


@dataclass(frozen=True, slots=True)
class ScoreOutcome:
    name: str
    weight: float
    scores: FloatArray


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Everything one pass computed; `feasible` = passed every filter. `scored` False: no row was
    feasible and the pass was asked to skip scoring then (`evaluate(..., scores_if_feasible=True)`):
    every score and the total are 0, not computed."""

    table: CandidateTable
    request: PlacementRequest
    profile: Profile
    feasible: BoolArray
    filters: tuple[FilterOutcome, ...]
    scores: tuple[ScoreOutcome, ...]
    total: FloatArray
    examined: int
    extra: Mapping[str, Any] = field(default_factory=dict)
    scored: bool = True


def count_reasons(newly_removed: BoolArray, codes: IntArray, reasons: Sequence[str]) -> dict[str, int]:
    """Rows removed per reason, in REASONS order, zero counts omitted."""
    if not newly_removed.any():
        return {}
    if len(reasons) == 1:  # a rejected row's code indexes REASONS: it can only be 0
        return {reasons[0]: int(np.count_nonzero(newly_removed))}
    counts = np.bincount(codes[newly_removed], minlength=len(reasons))
    return {reasons[i]: int(c) for i, c in enumerate(counts) if c}


def _known(reuse: Evaluation | None, table: CandidateTable, request: PlacementRequest) -> dict[tuple[str, Any], Any]:
    """(plugin, args) -> verdict or scores already computed by `reuse` for the same table and request."""
    if reuse is None or reuse.table is not table or reuse.request is not request:
        return {}
    known: dict[tuple[str, Any], Any] = {}
    for step, f in zip(reuse.profile.filters, reuse.filters, strict=True):
        known[(f.name, step.args)] = f.verdict
    if reuse.scored:
        for step, sc in zip(reuse.profile.scorers, reuse.scores, strict=True):
            known[(sc.name, step.args)] = sc.scores
    return known


def evaluate(profile: Profile, table: CandidateTable, request: PlacementRequest,
             budget: Budget | None = None, reuse: Evaluation | None = None, *,
             scores_if_feasible: bool = False) -> Evaluation:
    """Run every filter and scorer of `profile` over `table` for `request` (one pass).

    `reuse`: an earlier evaluation of the same table and request; a step whose plugin and args
    it already ran takes that verdict or score instead of running again (plugins are pure
    functions of table, request and args, so the evaluation is the same; the budget is charged
    the same). `scores_if_feasible`: when no row passes every filter, the scorers are not run
    (`Evaluation.scored` is False) — for callers that read scores of feasible rows only."""
    n = len(table)
    alive = np.ones(n, dtype=np.bool_)
    outcomes = []
    known = _known(reuse, table, request)
    for step in profile.filters:
        v = known.get((step.name, step.args))
        if v is None:
            v = step.plugin.filter(table, request, step.args)
        if v.mask.shape != (n,) or v.codes.shape != (n,):
            raise ValueError(f"filter {step.name} returned shapes {v.mask.shape}, {v.codes.shape} for {n} rows")
        newly = np.greater(alive, v.mask)  # alive and rejected here
        outcomes.append(FilterOutcome(step.name, step.plugin.REASONS, v,
                                      count_reasons(newly, v.codes, step.plugin.REASONS)))
        alive &= v.mask
    scored = []
    total = np.zeros(n)
    weights = 0.0
    skip = scores_if_feasible and not alive.any()
    for step in profile.scorers:
        if skip:
            scored.append(ScoreOutcome(step.name, step.weight, np.zeros(n)))
            continue
        s = known.get((step.name, step.args))
        if s is None:
            # own copy, clipped (±inf → 100 / 0); then NaN → 0 (as nan_to_num before the clip would)
            s = np.clip(np.asarray(step.plugin.score(table, request, step.args), dtype=np.float64), 0.0, 100.0)
            if not np.isfinite(s).all():
                np.nan_to_num(s, copy=False, nan=0.0)
        if s.shape != (n,):
            raise ValueError(f"scorer {step.name} returned shape {s.shape} for {n} rows")
        scored.append(ScoreOutcome(step.name, step.weight, s))
        if step.weight:
            total += step.weight * s
            weights += step.weight
    if weights > 0:
        total /= weights
    if budget is not None:
        budget.charge(n)
    return Evaluation(table=table, request=request, profile=profile, feasible=alive,
                      filters=tuple(outcomes), scores=tuple(scored), total=total, examined=n, scored=not skip)


def ranked_rows(total: FloatArray, feasible: BoolArray, k: int | None = None) -> IntArray:
    """Feasible rows by total descending, row ascending (the server-id tie-break); the first k."""
    rows = np.flatnonzero(feasible)
    if k is not None and 0 < k < len(rows):
        vals = total[rows]
        kth = np.partition(vals, len(vals) - k)[len(vals) - k]
        rows = rows[vals >= kth]  # every row tied with the k-th stays in the running
    order = np.lexsort((rows, -total[rows]))
    out = rows[order]
    return out if k is None else out[:k]


def best_row(total: FloatArray, feasible: BoolArray) -> int | None:
    """The single best feasible row (ties → smallest row), None if nothing is feasible."""
    if not feasible.any():
        return None
    masked = np.where(feasible, total, -np.inf)
    return int(np.argmax(masked))  # argmax returns the first maximum: the smallest server id
