"""Retrain bookkeeping: when the rank is cross-validated again and when it is kept."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from sextant_contracts.model import Classification
from sextant_core.classification import engine
from sextant_core.classification.engine import EngineParams, choose_rank
from sextant_core.classification.knowledge import Matrix, ModelFact
from sextant_core.classification.normalise import Normalisation


def _matrix(rows: int, model_rows: int | None, rank: int = 3) -> Matrix:
    m = Matrix(classification=Classification.HETEROGENEITY, group="batch", normalisation=Normalisation.LOG)
    r = np.random.default_rng(0)
    for i in range(rows):
        m = m.with_row(f"w{i}", [(f"p{j}", float(np.exp(r.normal()))) for j in range(6)])
    if model_rows is None:
        return m
    return replace(m, model=ModelFact(rows=model_rows, rank=rank, width=6, content_hash="h", version="v",
                                      position=0))


@pytest.fixture()
def cv_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []

    class Sel:
        rank = 1

    def fake(y, *a, **k):  # type: ignore[no-untyped-def]
        calls.append(len(y))
        return Sel()

    monkeypatch.setattr(engine, "select_rank", fake)
    return calls


@pytest.mark.parametrize(("model_rows", "rows", "cv"), [
    (None, 40, True),   # no model yet: cross-validate
    (40, 50, False),    # 40 and 50 both have 6 bits (32..63): keep rank 3
    (40, 63, False),
    (40, 64, True),     # crossed 64: cross-validate again
    (100, 130, True),   # 100 (7 bits) -> 130 (8 bits)
], ids=["first", "same-power", "edge-63", "crosses-64", "crosses-128"])
def test_rank_is_cross_validated_only_when_rows_cross_a_power_of_two(cv_calls: list[int], model_rows: int | None,
                                                                     rows: int, cv: bool) -> None:
    rank = choose_rank(_matrix(rows, model_rows), rows, EngineParams())
    assert (len(cv_calls) == 1) is cv
    assert rank == (1 if cv else 3)


def test_reselection_can_be_switched_off(cv_calls: list[int]) -> None:
    assert choose_rank(_matrix(50, 40), 50, EngineParams(reselect_doubling=False)) == 1
    assert len(cv_calls) == 1


def test_services_performance_matrices_get_a_row_bias_prior_and_the_others_do_not() -> None:
    def prior(cls: Classification, group: str, norm: Normalisation = Normalisation.LOG) -> bool:
        m = Matrix(classification=cls, group=group, normalisation=norm)
        return engine.fit_params(m, EngineParams()).row_bias_prior

    assert prior(Classification.HETEROGENEITY, "service") and prior(Classification.SCALE_UP, "service")
    assert not prior(Classification.SCALE_OUT, "service")  # QPS ∝ nodes: exact in log space already
    assert not prior(Classification.HETEROGENEITY, "batch") and not prior(Classification.SCALE_UP, "analytics")
    assert prior(Classification.INTERFERENCE, "batch", Normalisation.SCORE)
    assert not engine.fit_params(Matrix(classification=Classification.HETEROGENEITY, group="service",
                                        normalisation=Normalisation.LOG),
                                 EngineParams(bias_prior_matrices=())).row_bias_prior
    assert EngineParams().tag() != EngineParams(bias_prior_matrices=()).tag()  # models are not shared


def test_with_the_bias_prior_a_rows_level_tells_its_family_and_so_its_unmeasured_columns() -> None:
    # two families in one unit: "fast" rows (level ~e^10) flat across columns, "slow" rows (level ~e^5)
    # 3x faster on columns 4-5; both agree on columns 0-1, which are all a new row measured
    from sextant_core.classification.factorize import train
    from sextant_core.classification.foldin import fold_in
    from sextant_core.classification.params import FitParams

    r = np.random.default_rng(3)
    shape = {"fast": np.zeros(6), "slow": np.array([0.0, 0.0, 0.3, 0.5, 1.1, 1.1])}
    level = {"fast": 10.0, "slow": 5.0}
    fams = ["fast", "slow"] * 20
    y = np.array([level[f] + r.normal(0, 0.3) + shape[f] + r.normal(0, 0.02, 6) for f in fams])
    mask = np.ones_like(y, dtype=bool)
    truth = level["slow"] + 0.1 + shape["slow"]
    cols = np.array([0, 1])
    err = {}
    for bp in (False, True):
        model = train(y, mask, FitParams(rank=1, row_bias_prior=bp)).model
        est = fold_in(model, cols, truth[cols])
        err[bp] = float(np.abs(est.mean[4:] - truth[4:]).mean())
    assert err[True] < 0.1 < err[False] / 3  # the flat prior cannot tell the families apart


def test_a_retrain_decided_again_on_the_same_rows_is_not_trained_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """A decision re-made after a refused append (the log's head moved) repeats its retrain: the
    second one reuses the first one's model, and the event it records is the same."""
    engine.clear_memo()
    trained: list[int] = []
    real = engine.train

    def counting(y, *a, **k):  # type: ignore[no-untyped-def]
        trained.append(len(y))
        return real(y, *a, **k)

    monkeypatch.setattr(engine, "train", counting)
    m = _matrix(40, None)
    first, model = engine.retrain(m, EngineParams(), at=1.0, trigger_position=7)
    again, model2 = engine.retrain(m, EngineParams(), at=2.0, trigger_position=9)
    assert trained == [40] and model2 is model
    assert (again.content_hash, again.rank, again.rows) == (first.content_hash, first.rank, first.rows)
    assert (again.at, again.trigger_position) == (2.0, 9)
    engine.retrain(m.with_row("w40", [("p0", 1.0)]), EngineParams(), at=3.0, trigger_position=10)
    engine.retrain(m, EngineParams(retrain_min_rows=5, selection_rows=100), at=3.0, trigger_position=10)
    assert trained == [40, 41, 40]  # another row, other parameters: trained
    engine.clear_memo()
    engine.retrain(m, EngineParams(), at=1.0, trigger_position=7)
    assert trained == [40, 41, 40, 40]
