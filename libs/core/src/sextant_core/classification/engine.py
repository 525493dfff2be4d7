"""Training and retrieving the model of a matrix: retrain triggers, rank choice, hash check.

**Retrain trigger ([IMPL CHOICE], DESIGN §5: by event counts).** A matrix is retrained when it
has rows but no model, or when the rows appended since its model reach
``max(retrain_min_rows, ceil(retrain_fraction × rows of the model))`` — by default 50 rows or 10 %,
so a 10 000-row matrix is retrained every 1 000 new rows and the amortised retraining cost per
classification stays about constant as the matrix grows. Between retrains new rows are folded in
against the current column factors (`foldin`).

**Rank.** ``FitParams.rank`` None (the default) = cross-validated at the first retrain and whenever
the row count crosses a power of two (`choose_rank`), kept in between
(`selection.select_rank`, pseudo-new rows with `cv_keep` = 2 known cells, the profiling density)
on the rows with ≥ 3 entries plus an evenly spaced sample of the others, capped at
`selection_rows` rows (a rank scan stops after 2 ranks without improvement); the chosen rank is recorded in ``ModelRetrained.rank`` and replay trains
with the recorded rank (it never re-runs the selection).

**Models are memoised by content.** `model_for` keys a trained model by (matrix, digest of the row
prefix, rank, parameters); the memo is a bounded cache of a pure function, so it changes speed,
never results. A recomputed model whose hash differs from the recorded one raises
`ModelMismatch`: the decision would otherwise silently differ from the log (a parameter or
numerics change without a policy version bump).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass, field, replace

import numpy as np
from sextant_contracts import events as ev

from .analogs import AnalogBank, AnalogParams, bank
from .factorize import FactorModel, train
from .knowledge import Matrix, model_version
from .normalise import Normalisation
from .params import FitParams
from .selection import PATIENCE, select_rank

_MEMO: OrderedDict[tuple[str, str, int, str], FactorModel] = OrderedDict()
_MEMO_SIZE = 64
# retrains by (matrix, row-prefix digest, the model it replaces, parameters): a decision refused
# because the log's head moved (`HeadMovedError`) is decided again at once, and its retrain (rank
# cross-validation + training, seconds on a loaded machine) must not be paid again — else a slow
# retrain loses every race against the clock's ticks (CI saw 31 attempts for one classification)
_RETRAINED: OrderedDict[tuple[str, str, tuple[int, int] | None, str, str], FactorModel] = OrderedDict()
_RETRAINED_SIZE = 32
# the dense rows of a matrix's row prefix, by (matrix, rows, width, digest): a retrain reads them for
# its rank choice and its training, and the analog bank of the new model right after (read-only)
_DENSE: OrderedDict[tuple[str, int, int, str], tuple[np.ndarray, np.ndarray, tuple[str, ...]]] = OrderedDict()
_DENSE_SIZE = 8


class ModelMismatch(RuntimeError):
    """The model rebuilt from the log does not match the hash its `ModelRetrained` recorded."""


@dataclass(frozen=True, slots=True)
class EngineParams:
    """Parameters of the classification engine (part of the policy version)."""

    fit: FitParams = field(default_factory=FitParams)
    retrain_min_rows: int = 50
    retrain_fraction: float = 0.10
    selection_rows: int = 2000
    cv_keep: int = 2
    score_bias_prior: bool = True  # `FitParams.row_bias_prior` for interference-score matrices
    reselect_doubling: bool = True  # rank CV only when the row count crosses a power of two
    # performance matrices ("<classification>/<group>") whose rows share one unit, so that a row's
    # level says something about its shape: there the fold-in gets a row-bias prior too (see
    # `fit_params`)
    bias_prior_matrices: tuple[str, ...] = ("heterogeneity/service", "scale_up/service")
    # performance matrices whose hidden cells come from the analog fold-in (`analogs`: analog rows
    # mixed with the factor model's predictive, the relative-error point estimate), with its
    # parameters per matrix; none in engine version 1. It changes predictions, never the models.
    analogs: tuple[tuple[str, AnalogParams], ...] = ()
    # engine 3.1: b of the caused scores' censoring offset — every caused score the engine reports
    # (measured or predicted) is max(0, score − b) (`debias_caused`). It changes the reported rows,
    # never the models (so it is not in `tag`: engines 3 and 3.1 share their fitted models)
    caused_offset: float = 0.0

    def tag(self) -> str:
        return (f"{self.fit.tag()}:sel={self.selection_rows}:keep={self.cv_keep}:dbl={int(self.reselect_doubling)}"
                + (f":bp={','.join(self.bias_prior_matrices)}" if self.bias_prior_matrices else "")
                + "".join(f":{k}={p.tag()}" for k, p in self.analogs))

    def analog_params(self, matrix_key: str) -> AnalogParams | None:
        """The analog fold-in's parameters for a matrix, or None where it is not used."""
        return next((p for k, p in self.analogs if k == matrix_key), None)


# engine version -> parameters. A `WorkloadClassified` is a function of the log and these, so a
# log recorded under a version replays only with it: every version a policy set records is kept.
# 1: the factor model's fold-in (posterior mean). 2: the analog fold-in where it measured better
# on the twin's seeds 1–5 (docs/classification/reference.md).
ENGINE_VERSIONS: dict[str, EngineParams] = {
    "1": EngineParams(),
    "2": EngineParams(analogs=(("scale_up/batch", AnalogParams(tau=0.02, beta=0.3, mix=0.2)),
                               ("heterogeneity/batch", AnalogParams(tau=0.05, beta=0.3, mix=0.2)),
                               ("scale_up/analytics", AnalogParams(tau=0.02, beta=0.3, mix=0.2)),
                               ("scale_out/analytics", AnalogParams(tau=0.15, beta=None, mix=0.5)),
                               ("heterogeneity/analytics", AnalogParams(tau=0.15, beta=None, mix=0.8)),
                               ("scale_up/service", AnalogParams(tau=0.05, beta=0.3, mix=0.2)),
                               ("scale_out/service", AnalogParams(tau=0.02, beta=1.0, mix=0.5)),
                               ("heterogeneity/service", AnalogParams(tau=0.05, beta=0.3, mix=0.2)))),
    # 3: engine 2 plus, where the twin's seeds 1–5 measured better (docs/classification/reference.md),
    # the workload's censored (0) entries, collapse candidates, the anchored or shrunk level offset
    # and the evidence of the workload's other matrices (`analogs`)
    "3": EngineParams(analogs=(("scale_up/batch", AnalogParams(tau=0.02, beta=0.3, mix=0.2)),
                               ("heterogeneity/batch", AnalogParams(tau=0.08, beta=0.1, mix=0.2, shrink=True,
                                                                    joint=0.1)),
                               ("scale_up/analytics", AnalogParams(tau=0.02, beta=0.3, mix=0.2)),
                               ("scale_out/analytics", AnalogParams(tau=0.15, beta=None, mix=0.5)),
                               ("heterogeneity/analytics", AnalogParams(tau=0.15, beta=None, mix=0.8)),
                               ("scale_up/service", AnalogParams(tau=0.05, beta=0.3, mix=0.1, zero_penalty=5.0,
                                                                 joint=0.1, anchor=True)),
                               ("scale_out/service", AnalogParams(tau=0.02, beta=1.0, mix=0.5)),
                               ("heterogeneity/service", AnalogParams(tau=0.05, beta=0.3, mix=0.2, zero_penalty=5.0,
                                                                      collapse=3.0, collapse_depth=7.0)))),
}
# 3.1 (sextant 9.1): engine 3 with the caused scores' censoring offset (docs/quality/profiling.md,
# "Planner fed engine rows")
ENGINE_VERSIONS["3.1"] = replace(ENGINE_VERSIONS["3"], caused_offset=2.0)
# 3.2 (sextant 9.2): engine 3 with services' scale-up reading a measured 0 through the analogs
# that also served nothing there, shifted by a constant (`analogs.shift_bank`, "capacity minus a
# constant"; steps chosen on the twin's seeds 1–5, docs/classification/engine-3.2.md)
SHIFT_GRID_3_2 = (0.0, 0.05, 0.1, 0.15, 0.2)
ENGINE_VERSIONS["3.2"] = replace(ENGINE_VERSIONS["3"], analogs=tuple(
    (k, replace(p, shift_grid=SHIFT_GRID_3_2) if k == "scale_up/service" else p)
    for k, p in ENGINE_VERSIONS["3"].analogs))
CURRENT_ENGINE = "3"


def debias_caused(caused: dict[str, float], offset: float) -> dict[str, float]:
    """The caused scores read past the ramp's censoring at 0: max(0, score − `offset`) each
    (engine 3.1, `EngineParams.caused_offset`); `caused` itself when `offset` is 0.

    A profiling ramp's caused score is a noisy reading clipped at 0 (no probe reads negative
    pressure): for the many (workload, source) entries whose true score is near 0 the clipped
    reading is on average about 0.4 × the noise sd too high (Paragon Table III: sd ≈ 7–9 points at
    low scores, so ≈ 3 points), and the seed rows the engine predicts from are read the same way.
    Summed over a server's residents the excess fills the residual tolerance of D1 and the
    predicted interference of a newcomer (paragon-ec2-2500 seed 1, every entry measured: + 2.8
    points per score against the truth). Subtracting one offset from every score removes most of
    it; high scores, where the reading is unbiased, lose `offset` points of tens. `offset` 2 was
    chosen on paragon-ec2-2500 seed 1 (QoS met, bench/planner_rows_diagnosis.py): `sextant` (the
    adaptive plan) 0 → 0.362, 1 → 0.376, 2 → 0.380, 4 → 0.368; `sextant-dense` (every entry
    profiled) 0 → 0.637, 2 → 0.666, 3 → 0.677, 4 → 0.693, 6 → 0.686. A larger offset moves the
    losses from slow platforms to interference, sooner where most scores are predicted."""
    if offset <= 0:
        return caused
    return {k: max(0.0, float(v) - offset) for k, v in caused.items()}


def needs_retrain(matrix: Matrix, params: EngineParams) -> bool:
    n = len(matrix)
    if n == 0:
        return False
    if matrix.model is None:
        return True
    due = max(params.retrain_min_rows, math.ceil(params.retrain_fraction * matrix.model.rows))
    return n - matrix.model.rows >= due


def fit_params(matrix: Matrix, params: EngineParams) -> FitParams:
    """The engine's `FitParams` for one matrix: a row-bias prior where rows share one unit
    (`Normalisation.SCORE`, interference scores; see `FitParams.row_bias_prior`), and in the
    performance matrices named by `EngineParams.bias_prior_matrices`.

    [IMPL CHOICE] services' heterogeneity and scale-up: every row is QPS within a latency bound,
    and the level tells the families apart (memcached serves tens of thousands per core, a
    storage service or a web server hundreds) and with them how the row goes across platforms
    (an I/O-bound store is 3–4× faster on the SSD platforms). With the flat row-bias prior the
    fold-in of two entries ignores the level. Measured (`bench/classification.py`, 100 new services
    of the twin, 2 entries, avg / p90 %): heterogeneity 57.5 / 136 -> 52.8 / 104, scale-up
    74.5 / 36.6 -> 71.1 / 28.4; the synthetic world (levels unrelated to shapes) unchanged within
    0.6 points. Batch rows would gain 0.3–0.5 points on the twin but lose 0.5 (heterogeneity) on the
    synthetic world, analytics rows lose 0.9–1.2 on the twin: not used there. Costs the exact scale
    equivariance of those rows' predictions (`normalise`): their unit is fixed (QPS)."""
    return _fit_entry(matrix, params)[1]


# (id(params), matrix key, normalisation) -> (params, its `fit_params`, their tag): the parameters
# are frozen, so the same object gives the same values (kept in the entry: its id is not reused)
_FIT: dict[tuple[int, str, Normalisation], tuple[EngineParams, FitParams, str]] = {}
_FIT_SIZE = 256


def _fit_entry(matrix: Matrix, params: EngineParams) -> tuple[EngineParams, FitParams, str]:
    key = (id(params), matrix.key, matrix.normalisation)
    hit = _FIT.get(key)
    if hit is not None and hit[0] is params:
        return hit
    prior = ((params.score_bias_prior and matrix.normalisation is Normalisation.SCORE)
             or matrix.key in params.bias_prior_matrices)
    fit = replace(params.fit, row_bias_prior=prior)
    if len(_FIT) >= _FIT_SIZE:
        _FIT.clear()
    hit = _FIT[key] = (params, fit, fit.tag())
    return hit


def _memo_key(matrix: Matrix, rows: int, rank: int, params: EngineParams) -> tuple[str, str, int, str]:
    return (matrix.key, matrix.rows.digest_at(rows), rank, _fit_entry(matrix, params)[2])


def _remember(key: tuple[str, str, int, str], model: FactorModel) -> None:
    _MEMO[key] = model
    _MEMO.move_to_end(key)
    while len(_MEMO) > _MEMO_SIZE:
        _MEMO.popitem(last=False)


def dense(matrix: Matrix, rows: int) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """`matrix.dense(rows)` as read-only arrays (and the ids as a tuple), memoised by the row
    prefix's digest: the same rows give the same arrays."""
    key = (matrix.key, rows, matrix.width_at(rows), matrix.rows.digest_at(rows))
    hit = _DENSE.get(key)
    if hit is None:
        y, mask, ids = matrix.dense(rows)
        y.setflags(write=False)
        mask.setflags(write=False)
        hit = _DENSE[key] = (y, mask, tuple(ids))
        while len(_DENSE) > _DENSE_SIZE:
            _DENSE.popitem(last=False)
    _DENSE.move_to_end(key)
    return hit


def _selection_subset(mask: np.ndarray, cap: int) -> np.ndarray:
    """Row indices for rank selection: every row with ≥ 3 entries, plus evenly spaced others."""
    rich = np.flatnonzero(mask.sum(axis=1) >= 3)
    rest = np.flatnonzero(mask.sum(axis=1) < 3)
    room = max(cap - len(rich), 0)
    if len(rest) > room:
        rest = rest[np.linspace(0, len(rest) - 1, room).astype(np.int64)] if room else rest[:0]
    return np.sort(np.concatenate([rich, rest]))


def choose_rank(matrix: Matrix, rows: int, params: EngineParams) -> int:
    """The rank to train `matrix`'s first `rows` rows with (fixed, or cross-validated).

    [IMPL CHOICE] cross-validation runs when the matrix has no model yet or when its row count
    crosses a power of two since the current model (32, 64, 128, …; `reselect_doubling`); the
    other retrains keep the current model's rank. The rank CV is most of a retrain's cost:
    growing the three batch matrices of a paragon-ec2-2500 run from 30 seeds to 2 530 rows takes
    81 retrains — 298 s with a CV each, 26 s with this rule (measured on the loaded 2-core
    machine; docs/classification.md).
    """
    if params.fit.rank is not None:
        return max(0, min(params.fit.rank, max(matrix.width_at(rows) - 1, 0)))
    fact = matrix.model
    if (params.reselect_doubling and fact is not None and fact.rows > 0
            and rows.bit_length() == fact.rows.bit_length()):
        return max(0, min(fact.rank, max(matrix.width_at(rows) - 1, 0)))
    y, mask, ids = dense(matrix, rows)
    sub = _selection_subset(mask, params.selection_rows)
    keep = mask[sub].any(axis=0)
    if not keep.all():  # a column seen only outside the subset: add its rows back
        extra = np.flatnonzero(mask[:, ~keep].any(axis=1))
        sub = np.union1d(sub, extra)
    sel = select_rank(y[sub], mask[sub], [ids[i] for i in sub], fit_params(matrix, params), keep=params.cv_keep,
                      patience=PATIENCE)
    return sel.rank


def retrain(matrix: Matrix, params: EngineParams, *, at: float, trigger_position: int
            ) -> tuple[ev.ModelRetrained, FactorModel]:
    """Train `matrix` on all its rows now; the event to record it and the model (memoised; a
    second call on the same rows, model and parameters returns the first one's model untrained)."""
    rows = len(matrix)
    fact = matrix.model
    key = (matrix.key, matrix.rows.digest_at(rows), None if fact is None else (fact.rows, fact.rank),
           params.tag(), _fit_entry(matrix, params)[2])
    model = _RETRAINED.get(key)
    if model is None:
        rank = choose_rank(matrix, rows, params)
        y, mask, _ = dense(matrix, rows)
        model = train(y, mask, replace(fit_params(matrix, params), rank=rank)).model
        _RETRAINED[key] = model
        while len(_RETRAINED) > _RETRAINED_SIZE:
            _RETRAINED.popitem(last=False)
    _RETRAINED.move_to_end(key)
    _remember(_memo_key(matrix, rows, model.rank, params), model)
    h = model.content_hash()
    event = ev.ModelRetrained(at=at, classification=matrix.classification, group=matrix.group,
                              model_version=model_version(rows, model.rank, h), content_hash=h,
                              rows=rows, columns=model.n_columns, rank=model.rank,
                              trigger_position=max(trigger_position, 0))
    return event, model


def model_for(matrix: Matrix, params: EngineParams) -> FactorModel | None:
    """The matrix's current model (None before its first ``ModelRetrained``), rebuilt if needed."""
    fact = matrix.model
    if fact is None:
        return None
    key = _memo_key(matrix, fact.rows, fact.rank, params)
    model = _MEMO.get(key)
    if model is not None:
        _MEMO.move_to_end(key)
        return model
    y, mask, _ = dense(matrix, fact.rows)
    model = train(y, mask, replace(fit_params(matrix, params), rank=fact.rank)).model
    h = model.content_hash(fact.fingerprint)
    # a model recorded with the legacy raw-bytes hash is reproducible only on a CPU whose BLAS
    # kernel rounds like the recording one's: elsewhere it is rebuilt from its rows unchecked
    if h != fact.content_hash and fact.fingerprint != ev.LEGACY_FINGERPRINT:
        raise ModelMismatch(f"{matrix.key}: rebuilt model {h[:12]} != recorded {fact.content_hash[:12]} "
                            f"({fact.version}); engine parameters or numerics changed")
    _remember(key, model)
    return model


_BANKS: OrderedDict[tuple[str, str], AnalogBank] = OrderedDict()


def analog_bank(matrix: Matrix) -> AnalogBank | None:
    """The analog rows of the matrix's current model's row prefix (memoised by its digest): rows
    with ≥ 3 entries (≥ 5 in a score matrix, whose new rows have 4)."""
    fact = matrix.model
    if fact is None:
        return None
    key = (matrix.key, matrix.rows.digest_at(fact.rows))
    hit = _BANKS.get(key)
    if hit is None:
        y, mask, ids = dense(matrix, fact.rows)
        # a score row of the default plan has 4 entries (2 ramps): the dense rows have 20
        hit = _BANKS[key] = bank(y, mask, 5 if matrix.normalisation is Normalisation.SCORE else 3, ids=ids)
        while len(_BANKS) > _MEMO_SIZE:
            _BANKS.popitem(last=False)
    _BANKS.move_to_end(key)
    return hit


def clear_memo() -> None:
    """Forget every memoised model (tests use it to force rebuilds from the log)."""
    _RETRAINED.clear()
    _MEMO.clear()
    _BANKS.clear()
    _DENSE.clear()
    _FIT.clear()
