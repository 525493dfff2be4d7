"""The performance model (planning/model.py): curves, factors, aggregates — arithmetic shown."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.planning.model import efficiency_curve, flatten_plateau, model_for, scale_up_curve

from .conftest import World


@pytest.mark.parametrize(("row", "max_cores", "expected"), [
    ({"c2": 10.0, "c4": 14.0}, 6, [5, 10, 12, 14, 14, 14]),        # 10·1/2; c2; (10+14)/2 at c3; flat past c4
    ({"c1": 4.0, "c4": 3.0}, 4, [3.5] * 4),                        # isotonic: 4 > 3 pooled to their mean 3.5
    ({"c1": 5.0, "c2": 10.4, "c4": 9.6, "c8": 10.0}, 8,            # plateau noise averages: (10.4+9.6+10)/3 = 10
     [5, 10, 10, 10, 10, 10, 10, 10]),
    ({"c2-m8": 6.0, "c2-m16": 8.0}, 2, [4, 8]),                   # same cores: the best column (8)
    ({"c8": 8.0, "bogus": 99.0, "c4": -1.0}, 2, [1, 2]),           # unparsable / non-positive ignored: 8·c/8
], ids=["interpolate", "monotone", "plateau", "knobs", "ignored"])
def test_scale_up_curve(row: dict[str, float], max_cores: int, expected: list[float]) -> None:
    got = scale_up_curve(row, max_cores, fallback_level=1.0, requested_cores=1)
    np.testing.assert_allclose(got, expected)


def test_plateau_is_flattened() -> None:
    # top 10.4; with ε = 4 %: first c with U ≥ 10.4/1.04 = 10 is c = 2 → held at 10 from there
    curve = np.array([5.0, 10.0, 10.2, 10.4])
    np.testing.assert_allclose(flatten_plateau(curve, 0.04), [5.0, 10.0, 10.0, 10.0])
    np.testing.assert_allclose(flatten_plateau(curve, 0.0), curve)


def test_scale_up_curve_without_a_row_scales_to_the_request() -> None:
    # level 6, request 3 cores: 6·min(c, 3)/3 = 2, 4, 6, 6
    np.testing.assert_allclose(scale_up_curve({}, 4, fallback_level=6.0, requested_cores=3), [2, 4, 6, 6])


@pytest.mark.parametrize(("row", "nodes", "eff"), [
    ({"n1": 10.0, "n2": 18.0, "n4": 40.0}, [1, 2, 4], [1.0, 0.9, 1.0]),  # 18/(2·10), 40/(4·10)
    ({"n2": 20.0, "n4": 30.0}, [2, 4], [1.0, 0.75]),                     # no n1: n2 counts as 1; (30/4)/(20/2)
    ({"x": 1.0}, [], []),
], ids=["with-n1", "without-n1", "none"])
def test_efficiency_curve(row: dict[str, float], nodes: list[int], eff: list[float]) -> None:
    ks, e = efficiency_curve(row)
    np.testing.assert_allclose(ks, nodes)
    np.testing.assert_allclose(e, eff)


def test_model_from_a_classification() -> None:
    # the plan's reference run is c1 (c_ref = 1): S(c) = U(c)/U(1) = 1, 1.6, 1.6, ...
    st = (World().server("a1", platform="A", cores=8).server("b1", platform="B", cores=4)
          .workload("w", heterogeneity={"A": 10.0, "B": 5.0}, scale_up={"c1": 10.0, "c2": 16.0},
                    ref="A", admit=True).state())
    m = model_for(st, st.workloads["w"], 8)
    assert m.reference_cores == 1
    assert m.factor("A") == 10.0 and m.factor("B") == 5.0        # the heterogeneity row is the level
    assert m.factor("C") == pytest.approx(np.sqrt(50.0))          # geometric mean of 10 and 5
    assert m.node("B", 2) == pytest.approx(8.0)                   # H(B)·S(2) = 5·1.6
    assert m.best_single == pytest.approx(16.0)                   # S(8) (flat) · H(A)


def test_reference_cores_from_the_heterogeneity_runs() -> None:
    from sextant_contracts import events as ev
    from sextant_contracts.model import Classification
    from sextant_core.testing.builders import record

    w = World().server("a1", platform="A", cores=8)
    w.workload("w", heterogeneity={"A": 20.0}, scale_up={"c1": 10.0, "c2": 16.0, "c4": 20.0}, ref=None, admit=False)
    runs = (ev.ProfileRun(run_id="r1", classification=Classification.SCALE_UP, column="c2", platform="A", cores=2),
            ev.ProfileRun(run_id="r2", classification=Classification.HETEROGENEITY, column="B", platform="B",
                          cores=2))
    w.events.insert(2, ev.ProfilingPlanned(at=1.0, workload_id="w", runs=runs, decision=record(9)))
    w.events.insert(3, ev.ProfilingCompleted(at=1.0, workload_id="w", samples=0))
    st = fold_without_dup(w)
    m = model_for(st, st.workloads["w"], 4)
    # c_ref = 2: S = U/16 = 0.625, 1, 1.125, 1.25; node(A, 4) = 20 · 1.25
    assert m.reference_cores == 2 and m.node("A", 4) == pytest.approx(25.0)


def fold_without_dup(w: World):  # type: ignore[no-untyped-def]
    """The builder's own (empty) plan events come after ours and are dropped."""
    from sextant_contracts import events as ev
    from sextant_core.state import fold

    seen: set[str] = set()
    out = []
    for e in w.events:
        if isinstance(e, ev.ProfilingPlanned | ev.ProfilingCompleted):
            if e.TYPE in seen:
                continue
            seen.add(e.TYPE)
        out.append(e)
    return fold(out)


@pytest.mark.parametrize(("service", "perfs", "expected"), [
    (False, [10.0, 6.0], 0.9 * 16.0),     # batch: E(2)·Σ = 0.9·(10+6)
    (True, [10.0, 6.0], 0.9 * 2 * 6.0),   # service: E(2)·n·min = 0.9·2·6
    (False, [7.0], 7.0),                  # one node: E(1) = 1
], ids=["batch-sum", "service-min", "single"])
def test_aggregate(service: bool, perfs: list[float], expected: float) -> None:
    st = (World().server("a1").workload("w", kind="service" if service else "analytics",
                                         scale_out={"n1": 10.0, "n2": 18.0}).state())
    m = model_for(st, st.workloads["w"], 8)
    assert m.aggregate(perfs) == pytest.approx(expected)


@pytest.mark.parametrize("scale_out", [{}, {"n1": 10.0, "n2": 18.0}, {"n2": 20.0, "n4": 30.0, "n8": 80.0}],
                         ids=["no-row", "n1-n2", "from-n2"])
def test_scale_outs_equals_scale_out_one_by_one(scale_out: dict[str, float]) -> None:
    # E(k) for k = 1..12 at once: the same floats as E(1), E(2), ... (1 for k <= 1 or no row)
    st = World().server("a1").workload("w", kind="analytics", scale_out=scale_out).state()
    m = model_for(st, st.workloads["w"], 8)
    ks = np.arange(1, 13, dtype=np.float64)
    assert m.scale_outs(ks).tolist() == [m.scale_out(int(k)) for k in ks]


def test_the_assessor_keeps_the_last_workloads_model_while_its_inputs_are_the_same() -> None:
    from dataclasses import replace

    from sextant_core.planning.assess import Assessor

    st = World().server("a1").workload("w", kind="analytics", scale_out={"n1": 10.0, "n2": 18.0}).state()
    w = st.workloads["w"]
    a = Assessor()
    m = a.model(st, w, 8)
    assert a.model(st, w, 8) is m  # admission, then placement: computed once
    assert m.curve.tolist() == model_for(st, w, 8, a.params.plateau).curve.tolist()
    assert a.model(st, w, 16) is not m  # more cores on the cell
    assert a.model(st, replace(w, requested_cores=3), 16).reference_cores == 3  # another request


def test_isotonic_fast_path_equals_pooling() -> None:
    # a non-decreasing row skips the pooling: the same floats as pooling gives (singleton blocks)
    from sextant_core.planning.model import isotonic

    def pooled(ys: np.ndarray) -> np.ndarray:
        blocks: list[list[float]] = []
        for y in ys.tolist():
            blocks.append([y, 1.0])
            while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]:
                s, n = blocks.pop()
                blocks[-1][0] += s
                blocks[-1][1] += n
        return np.concatenate([np.full(int(n), s / n) for s, n in blocks]) if blocks else np.zeros(0)

    rng = np.random.default_rng(3)
    cases = [np.zeros(0), np.array([2.0]), np.array([1.0, 1.0, 2.0]), np.array([1.0, 3.0, 2.0])]
    cases += [np.sort(rng.uniform(0.1, 9, int(rng.integers(1, 8)))) for _ in range(50)]
    cases += [rng.uniform(0.1, 9, int(rng.integers(1, 8))) for _ in range(50)]
    for ys in cases:
        got, want = isotonic(ys), pooled(ys)
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes()
