"""The framework: trace counts, ranking ties, weighted totals, registry and profile validation,
plugins and columns supplied from outside the package."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import pytest
from pydantic import ValidationError
from sextant_core.placement import (
    Budget,
    FilterVerdict,
    PluginArgs,
    evaluate,
    get_profile,
    make_profile,
    place_request,
    ranked_rows,
    register_plugin,
    register_profile,
    verdict,
)
from sextant_core.placement.framework import best_row

from .conftest import request, row10, table_of


def test_trace_counts_each_filter_among_survivors() -> None:
    # s0 down; s1 drained; s2 lacks cores; s3 lacks memory; s4 down AND lacks cores; s5 violates
    # D1 on core; s6, s7 pass. Expect: schedulable removes 3 (2 down, 1 drained), fit removes 2
    # (s2 cores, s3 memory: s4 is already gone), d1 removes 1, 2 feasible.
    t = table_of(8, up=[0, 1, 1, 1, 0, 1, 1, 1], drained=[0, 1, 0, 0, 0, 0, 0, 0],
                 free_cores=[8, 8, 1, 8, 1, 8, 8, 8], free_memory_gb=[32, 32, 32, 1, 32, 32, 32, 32],
                 tolerated_min=[row10(100)] * 5 + [row10(100, core=10)] + [row10(100)] * 2)
    p = make_profile("t-counts", filters=["fit", "interference-d1", "interference-d2"], scorers=["least-allocated"])
    out = place_request(p, t, request(2, 4.0, caused=row10(0, core=20)))
    assert out.trace.filtered == {"schedulable": {"server_down": 2, "server_drained": 1},
                                  "fit": {"insufficient_cores": 1, "insufficient_memory": 1},
                                  "interference-d1": {"d1_core": 1}, "interference-d2": {}}
    assert out.detail["feasible"] == 2 and out.trace.examined == 8
    assert [s for s, _ in out.trace.top] == ["s6", "s7"]


def test_ties_break_by_server_id_everywhere() -> None:
    total = np.array([5.0, 9.0, 9.0, 1.0, 9.0])
    feasible = np.array([True, False, True, True, True])
    # row 1 is infeasible; rows 2 and 4 tie at 9 → row 2 first; then 0 (5), then 3 (1)
    assert ranked_rows(total, feasible).tolist() == [2, 4, 0, 3]
    assert ranked_rows(total, feasible, 1).tolist() == [2]
    assert ranked_rows(total, feasible, 2).tolist() == [2, 4]
    assert best_row(total, feasible) == 2
    assert best_row(total, np.zeros(5, bool)) is None


@pytest.mark.parametrize("k", [1, 3, 5, 50])
def test_top_k_equals_full_sort_prefix(k: int) -> None:
    rng = np.random.default_rng(k)
    total = rng.integers(0, 5, 200).astype(float)  # many ties
    feasible = rng.random(200) < 0.7
    full = ranked_rows(total, feasible)
    assert ranked_rows(total, feasible, k).tolist() == full[:k].tolist()


def test_total_is_the_weighted_mean_of_scores() -> None:
    t = table_of(2, platforms=("A", "B"), platform_code=[0, 1], free_cores=[8, 4])
    p = make_profile("t-weights", filters=["fit"], scorers=[("platform", 3.0), ("least-allocated", 1.0)])
    e = evaluate(p, t, request(1, 1.0, performance={"A": 1.0, "B": 2.0}))
    # s0: platform 100·1/2 = 50; least-allocated cores 100·7/8 = 87.5, memory 100·31/32 = 96.875 → 92.1875
    #     total (3·50 + 92.1875)/4 = 60.546875
    # s1: platform 100; cores 100·3/8 = 37.5, memory 96.875 → 67.1875; total (300 + 67.1875)/4 = 91.796875
    assert e.total.tolist() == pytest.approx([60.546875, 91.796875])


def test_budget_counts_candidates_and_reports_exhaustion() -> None:
    t = table_of(4)
    p = make_profile("t-budget", filters=["fit"], scorers=["least-allocated"], budget=3)
    out = place_request(p, t, request())
    # the first pass is always done (4 rows) even though the limit is 3
    assert out.allocation is not None and out.trace.examined == 4 and out.trace.budget_exhausted
    # a spread would need a second pass: with the budget spent, the request waits instead
    big = place_request(p, t, request(12, 12.0))
    assert big.allocation is None and big.reasons == ("fit/insufficient_cores", "budget/exhausted")
    b = Budget(10)
    evaluate(p, t, request(), b)
    evaluate(p, t, request(), b)
    assert b.used == 8 and not b.exhausted


def test_profiles_validate_names_args_and_kinds() -> None:
    with pytest.raises(KeyError, match="unknown placement plugin 'nope'"):
        make_profile("t-x", filters=["nope"])
    with pytest.raises(ValidationError):
        make_profile("t-x", filters=[("interference-d1", {"slack": -1})])
    with pytest.raises(ValidationError):
        make_profile("t-x", filters=[("fit", {"typo": True})])
    with pytest.raises(TypeError, match="not a scorer"):
        make_profile("t-x", scorers=["fit"])
    with pytest.raises(ValueError, match="registered twice"):
        register_profile(make_profile("least-loaded"))
    p = make_profile("t-x", filters=["fit"])
    assert [s.name for s in p.filters] == ["schedulable", "fit"]  # schedulable always first


def test_with_args_relaxes_one_plugin() -> None:
    p = get_profile("heterogeneity-oblivious")
    q = p.with_args("interference-d1", slack=5.0)
    d1 = next(s for s in q.filters if s.name == "interference-d1")
    assert d1.args.slack == 5.0  # type: ignore[attr-defined]
    assert next(s for s in p.filters if s.name == "interference-d1").args.slack == 0.0  # type: ignore[attr-defined]
    with pytest.raises(KeyError):
        p.with_args("platform", unknown="zero")


def test_reuse_takes_earlier_verdicts_and_scores_and_changes_nothing() -> None:
    # s1 violates D1 on core by 10 points: strict removes it, slack 10 keeps it. The relaxed pass
    # reusing the strict one runs only the step whose args changed (interference-d1) and equals
    # a pass from scratch in every verdict, count, score and total.
    t = table_of(3, free_cores=[8, 8, 1], tolerated_min=[row10(100), row10(100, core=10), row10(100)])
    r = request(2, 4.0, caused=row10(0, core=20))
    p = make_profile("t-reuse", filters=["fit", "interference-d1"], scorers=["least-allocated"])
    strict = evaluate(p, t, r, Budget(100))
    relaxed = p.with_args("interference-d1", slack=10.0)
    again, fresh = evaluate(relaxed, t, r, Budget(100), reuse=strict), evaluate(relaxed, t, r, Budget(100))
    assert again.feasible.tolist() == fresh.feasible.tolist() == [True, True, False]
    assert [f.removed for f in again.filters] == [f.removed for f in fresh.filters]
    for a, b in zip(again.filters, fresh.filters, strict=True):
        np.testing.assert_array_equal(a.verdict.codes, b.verdict.codes)
    np.testing.assert_array_equal(again.total, fresh.total)
    # filters: schedulable (always first), fit, interference-d1
    assert again.filters[2].verdict is not strict.filters[2].verdict  # args changed: run again
    assert again.filters[1].verdict is strict.filters[1].verdict  # same args: reused
    # another request: nothing is reused
    assert evaluate(p, t, request(1, 1.0), reuse=strict).filters[1].verdict is not strict.filters[1].verdict


def test_scores_if_feasible_skips_scoring_only_when_nothing_is_feasible() -> None:
    t = table_of(2, free_cores=[1, 1])
    p = make_profile("t-lazy", filters=["fit"], scorers=["least-allocated"])
    none = evaluate(p, t, request(2, 4.0), scores_if_feasible=True)  # no server has 2 free cores
    assert not none.scored and not none.feasible.any() and none.total.tolist() == [0.0, 0.0]
    assert [s.name for s in none.scores] == ["least-allocated"]  # names and weights still reported
    some = evaluate(p, t, request(1, 4.0), scores_if_feasible=True)
    np.testing.assert_array_equal(some.total, evaluate(p, t, request(1, 4.0)).total)
    # an unscored pass lends no scores: a relaxed pass that finds rows scores them itself
    r = request(2, 4.0)
    relaxed = evaluate(make_profile("t-lazy2", filters=[], scorers=["least-allocated"]), t, r,
                       reuse=evaluate(p, t, r, scores_if_feasible=True))
    fresh = evaluate(make_profile("t-lazy3", filters=[], scorers=["least-allocated"]), t, r)
    assert (fresh.total > 0).all()
    np.testing.assert_array_equal(relaxed.total, fresh.total)


class _TruthArgs(PluginArgs):
    column: str = "truth"


@register_plugin
class _Truth:
    """A plugin defined outside the package, reading a caller column (as the twin's oracle does)."""

    NAME: ClassVar[str] = "test-truth"
    REASONS: ClassVar[tuple[str, ...]] = ("truth_says_no",)
    Args: ClassVar[type[PluginArgs]] = _TruthArgs

    def filter(self, table, request, args):  # type: ignore[no-untyped-def]
        col = table.extra[args.column]
        return verdict(col > 0, np.zeros(len(col), np.int64))

    def score(self, table, request, args):  # type: ignore[no-untyped-def]
        return np.asarray(table.extra[args.column], float)


def test_external_plugin_and_extra_columns() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        register_plugin(_Truth)
    p = make_profile("t-truth", filters=["fit", "test-truth"], scorers=["test-truth"])
    t = table_of(4).with_extra({"truth": [0.0, 30.0, 70.0, 70.0]})
    out = place_request(p, t, request())
    # s0 rejected (0 ≤ 0); s2 and s3 tie at 70 → s2
    assert out.allocation is not None and out.allocation.servers == ("s2",)
    assert out.trace.filtered["test-truth"] == {"truth_says_no": 1}


def test_filter_shape_is_checked() -> None:
    @register_plugin
    class _Bad:
        NAME: ClassVar[str] = "test-bad-shape"
        REASONS: ClassVar[tuple[str, ...]] = ("x",)
        Args: ClassVar[type[PluginArgs]] = PluginArgs

        def filter(self, table, request, args):  # type: ignore[no-untyped-def]
            return FilterVerdict(np.ones(1, bool), np.zeros(1, np.int64))

    with pytest.raises(ValueError, match="shapes"):
        evaluate(make_profile("t-bad", filters=["test-bad-shape"]), table_of(3), request())
