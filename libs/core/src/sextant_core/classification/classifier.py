"""`CollaborativeClassifier`: the `sextant_core.policies.Classifier` of the classification engine.

For a workload it takes the cells its profiling filled (the knowledge base's pending row, mapped
by `observations.cells`), and for each of the four classifications folds them into the current
model of the matrix of the workload's group (`foldin.fold_in`): the dense row, in raw units, plus
a confidence. Known cells keep their measured value (duplicates averaged in normalised space).

`retrains(state, w, ctx)` is called by ``decide._classify`` before `classify`: it returns the
``ModelRetrained`` events due (`engine.needs_retrain`) for the workload's matrices; the decision
appends them right *after* its ``WorkloadClassified`` (a decision block starts with its decision
event, and the retrain pins its row prefix, so the order of the two in the log does not change
the model). The classification already uses the retrained models.

Output mapping ([IMPL CHOICE]):
* ``heterogeneity``: one entry per platform column of the matrix; a platform registered in the
  cluster but absent from the matrix (nobody was ever profiled on it — Paragon §2.2 would profile
  the seed workloads on it) gets the geometric mean of the row and adds nothing to the confidence;
* ``scale_up`` / ``scale_out``: every column of the group's matrix;
* ``tolerated`` / ``caused``: per interference source (columns ``t:``/``c:``), 0..100;
* ``confidence[c]`` for c in scale_up, scale_out, heterogeneity, interference: the mean entry
  confidence (`foldin.confidence`) over the *estimated* cells; 1.0 if every cell was measured;
  0.0 when the matrix has no model (the measured cells are then returned as they are);
* ``model_versions["<classification>/<group>"]`` = the model version used (or ``none``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from sextant_contracts import events as ev
from sextant_contracts.model import Classification

from ..policies import Classified, RetrainingClassifier
from ..state.model import ClusterState, WorkloadState
from . import analogs
from .engine import EngineParams, analog_bank, debias_caused, model_for, needs_retrain, retrain
from .foldin import confidence, fold_in
from .knowledge import KnowledgeBase, Matrix, matrix_key
from .normalise import Normalisation, backward, forward, normalise_one, tolerance
from .observations import CAUSED_PREFIX, TOLERATED_PREFIX, group_of

if TYPE_CHECKING:
    from ..context import DecisionContext

CLASSIFICATIONS: tuple[Classification, ...] = tuple(Classification)


class CollaborativeClassifier(RetrainingClassifier):
    """SVD + PQ-reconstruction classifier (Paragon §2, Quasar §3) over the event-sourced matrices."""

    def __init__(self, params: EngineParams | None = None) -> None:
        self.params = params or EngineParams()

    # --- retraining ------------------------------------------------------------------------

    def _matrices(self, kb: KnowledgeBase, kind: str) -> list[Matrix]:
        out = []
        for cls in CLASSIFICATIONS:
            m = kb.matrix(cls, group_of(cls, kind))
            if m is not None:
                out.append(m)
        return out

    def retrains(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> tuple[ev.ModelRetrained, ...]:
        kb = state.knowledge
        out = []
        for m in self._matrices(kb, w.kind.value):
            if needs_retrain(m, self.params):
                event, _ = retrain(m, self.params, at=ctx.at, trigger_position=ctx.state_position)
                out.append(event)
        return tuple(out)

    # --- classification --------------------------------------------------------------------

    def estimate(self, matrix: Matrix | None, observed: Sequence[tuple[str, float]],
                 other: dict[str, float] | analogs.JointEvidence | None = None
                 ) -> tuple[dict[str, float], float, str]:
        """(column -> raw estimate, confidence 0..1, model version) for one matrix row; `other`:
        the workload's fit in its other matrices (`analogs.evidence`, engine 3's `joint`; or the
        same by bank row, `analogs.JointEvidence`)."""
        known = _known(matrix, observed)
        if matrix is None:
            return known, 0.0, "none"
        kind = matrix.normalisation
        model = model_for(matrix, self.params)
        if model is None:
            return dict(sorted(known.items())), 0.0, "none"
        ci, z, zeros = _model_entries(matrix, model.n_columns, known, observed)
        est = fold_in(model, ci, z)
        point = est.mean
        ap = self.params.analog_params(matrix.key) if kind is Normalisation.LOG else None
        bk = analog_bank(matrix) if ap is not None else None
        if ap is not None and bk is not None:
            point = analogs.estimate(bk, ci, z, est.mean, est.std, ap, zeros=zeros, other=other)
        raw = backward(kind, point)
        conf = confidence(est.std, tolerance(kind))
        out: dict[str, float] = {}
        confs = []
        for i, col in enumerate(matrix.columns[: model.n_columns]):
            if col in known:
                out[col] = known[col]
            else:
                out[col] = float(raw[i])
                confs.append(float(conf[i]))
        for col, val in known.items():
            out.setdefault(col, val)
        fact = matrix.model
        return out, float(np.mean(confs)) if confs else 1.0, fact.version if fact is not None else "none"

    def evidence(self, matrix: Matrix | None, observed: Sequence[tuple[str, float]], *,
                 weights: bool = True) -> dict[str, float]:
        """`fit` as `analogs.evidence`'s dict (empty where `fit` is None)."""
        f = self.fit(matrix, observed, weights=weights)
        return {} if f is None else f.as_dict()

    def fit(self, matrix: Matrix | None, observed: Sequence[tuple[str, float]], *,
            weights: bool = True) -> analogs.Fit | None:
        """The log weights of the analog rows of a performance matrix given the workload's entries
        there, by bank row (`analogs.fit`, with the matrix's analog parameters); None where the
        matrix has no analog fold-in or no model. `weights` False: only the model and the analog
        bank are fetched (what a classification whose other matrices do not read this fit still
        does, in the same order: a model that cannot be rebuilt fails at the same matrix), and
        the result is None."""
        ap = self.params.analog_params(matrix.key) if matrix is not None else None
        if matrix is None or ap is None or matrix.normalisation is not Normalisation.LOG:
            return None
        model = model_for(matrix, self.params)
        bk = analog_bank(matrix)
        if bk is None or model is None or not weights:
            return None
        ci, z, zeros = _model_entries(matrix, model.n_columns, _known(matrix, observed), observed)
        return analogs.fit(bk, ci, z, ap.tau, ap.beta, zeros=zeros, zero_penalty=ap.zero_penalty)

    def classify(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> Classified:
        kb = state.knowledge
        kind = w.kind.value
        pending = kb.pending_cells(w.workload_id)
        rows: dict[Classification, dict[str, float]] = {}
        conf: dict[str, float] = {}
        versions: dict[str, str] = {}
        joint = any(p.joint for _, p in self.params.analogs)
        # the matrices whose analog fold-in reads the other matrices' fits (`AnalogParams.joint`):
        # only they get `_other`, and a fit only they read is computed (the others' models and
        # banks are still fetched, in the same order)
        reads = {cls for cls in CLASSIFICATIONS if joint and _joint(self.params, cls, kind)}
        fits: dict[Classification, analogs.Fit | None] = {}
        for cls in CLASSIFICATIONS if joint else ():
            group = group_of(cls, kind)
            fits[cls] = self.fit(kb.matrix(cls, group), pending.get((cls, group), []), weights=bool(reads - {cls}))
        for cls in CLASSIFICATIONS:
            group = group_of(cls, kind)
            m = kb.matrix(cls, group)
            values, c, version = self.estimate(m, pending.get((cls, group), []),
                                               _other_evidence(fits, cls) if cls in reads else None)
            rows[cls] = values
            conf[cls.value] = round(c, 6)
            versions[f"{cls.value}/{group}"] = version
        het = _with_platforms(rows[Classification.HETEROGENEITY], state)
        inter = rows[Classification.INTERFERENCE]
        tolerated = {k[len(TOLERATED_PREFIX):]: v for k, v in inter.items() if k.startswith(TOLERATED_PREFIX)}
        caused = debias_caused({k[len(CAUSED_PREFIX):]: v for k, v in inter.items() if k.startswith(CAUSED_PREFIX)},
                               self.params.caused_offset)
        return Classified(scale_up=rows[Classification.SCALE_UP], scale_out=rows[Classification.SCALE_OUT],
                          heterogeneity=het, tolerated=tolerated, caused=caused, confidence=conf,
                          model_versions=versions)


def _known(matrix: Matrix | None, observed: Sequence[tuple[str, float]]) -> dict[str, float]:
    """The measured cells a row can hold (duplicates averaged), by column."""
    meas: dict[str, list[float]] = {}
    for col, v in observed:
        if isinstance(v, int | float) and math.isfinite(v):
            meas.setdefault(col, []).append(float(v))
    known: dict[str, float] = {}
    for col, vs in sorted(meas.items()):
        mean = _mean_raw(vs, matrix)
        if mean is not None:
            known[col] = mean
    return known


def _model_entries(matrix: Matrix, n_columns: int, known: dict[str, float], observed: Sequence[tuple[str, float]]
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(column indices, normalised values) of the known cells in the model's columns, and the
    columns of a performance row that measured exactly 0 and nothing else (censored entries)."""
    cols, vals = [], []
    for col, val in known.items():
        i = matrix.index.get(col)
        if i is not None and i < n_columns:
            cols.append(i)
            vals.append(val)
    z = forward(matrix.normalisation, np.array(vals)) if vals else np.zeros(0)
    zeros: list[int] = []
    if matrix.normalisation is Normalisation.LOG:
        for col in sorted({c for c, v in observed if v == 0.0 and c not in known}):
            i = matrix.index.get(col)
            if i is not None and i < n_columns:
                zeros.append(i)
    return np.array(cols, dtype=np.int64), z, np.array(zeros, dtype=np.int64)


def _other(fits: dict[Classification, dict[str, float]], cls: Classification) -> dict[str, float]:
    """Row id -> summed log weight of the workload's matrices other than `cls` (those with a fit);
    a row absent from one of them gets `analogs.NO_EVIDENCE` there."""
    others = [f for c, f in fits.items() if c is not cls and f]
    ids = sorted({i for f in others for i in f})
    if len(others) == 1:  # fsum of one term: the term (+ 0.0: fsum's zero is +0.0)
        (a,) = others
        out = {i: a[i] + 0.0 for i in ids}
    elif len(others) == 2:  # fsum of two finite terms: their IEEE sum (correctly rounded either way)
        a, b = others
        no = analogs.NO_EVIDENCE
        out = {i: a.get(i, no) + b.get(i, no) + 0.0 for i in ids}
    else:
        return {i: math.fsum(f.get(i, analogs.NO_EVIDENCE) for f in others) for i in ids}
    if all(math.isfinite(v) for v in out.values()):
        return out
    return {i: math.fsum(f.get(i, analogs.NO_EVIDENCE) for f in others) for i in ids}  # inf/nan: fsum's own rules


def _other_evidence(fits: dict[Classification, analogs.Fit | None], cls: Classification
                    ) -> analogs.JointEvidence | dict[str, float]:
    """What `cls`'s analog fold-in reads of the workload's other matrices: by bank row
    (`analogs.JointEvidence`) where that is exactly `_other`'s dict, else `_other`'s dict."""
    joint = analogs.JointEvidence([f for c, f in fits.items() if c is not cls and f is not None])
    if joint.exact():
        return joint
    return _other({c: f.as_dict() for c, f in fits.items() if f is not None}, cls)


def _joint(params: EngineParams, cls: Classification, kind: str) -> bool:
    """Whether the analog fold-in of the workload's `cls` matrix reads its other matrices' fits."""
    ap = params.analog_params(matrix_key(cls, group_of(cls, kind)))
    return ap is not None and bool(ap.joint)


def _mean_raw(values: Sequence[float], matrix: Matrix | None) -> float | None:
    """Mean of repeated measurements in the matrix's normalised space (geometric for LOG)."""
    kind = matrix.normalisation if matrix is not None else Normalisation.LINEAR
    zs = [z for z in (normalise_one(kind, v) for v in values) if z is not None]
    if not zs:
        return None
    return float(backward(kind, np.array([math.fsum(zs) / len(zs)]))[0])


def _with_platforms(het: dict[str, float], state: ClusterState) -> dict[str, float]:
    platforms = sorted({s.platform for s in state.servers.values()})
    missing = [p for p in platforms if p not in het]
    if not het or not missing:
        return het
    gmean = math.exp(math.fsum(math.log(v) for v in het.values() if v > 0) / max(1, len(het)))
    return {**het, **{p: gmean for p in missing}}
