"""The knowledge base: every classification matrix, rebuilt from events as a pure fold.

`KnowledgeBase` is an immutable value inside `ClusterState` (field ``knowledge``); the cluster
fold calls `evolve(kb, event)` for every event. It reacts to:

* ``KnowledgeSeeded``       — appends one dense offline row (Paragon §2.2, Quasar §3.2);
* ``WorkloadSubmitted``     — remembers the workload's kind (its scale-up/scale-out group);
* ``ProfilingPlanned``      — remembers the runs (a new plan starts a new pending row);
* ``ProfileSampleRecorded`` — collects the measurement into the workload's pending row;
* ``WorkloadClassified``    — appends the pending row, mapped to cells (`observations.cells`), to
  each matrix it touches, then clears it. Only *measured* cells are appended, never predictions
  (appending estimates would feed the model its own output). A reclassified workload (a new
  phase) appends a new row;
* ``WorkloadCompleted/Failed/Revoked`` — drops a pending row that was never classified;
* ``ModelRetrained``        — records which model (rank, row prefix, content hash) is current.

The fold never trains anything: a ``ModelRetrained`` event only records the model's identity (the
first ``rows`` rows of the matrix, the rank, the hash). The numbers are a pure function of those
rows and the engine's parameters, computed on first use by the classifier and verified against
the hash (`classifier.model_for`). Folding therefore stays O(1)-ish per event.

Values that the matrix's normalisation cannot represent (a non-positive performance, a score
outside 0..100, NaN) are skipped and counted in ``Matrix.rejected``; the fold never raises on
measurement data.

**Version.** Each matrix's current model has a version string ``r<rows>-k<rank>-<hash12>`` that
decisions record (``WorkloadClassified.model_versions``); ``KnowledgeBase.appended`` counts rows
appended over all matrices.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import chain as chain_iter

import numpy as np
from immutables import Map
from sextant_contracts import events as ev
from sextant_contracts.model import Classification

from ..dispatch import Dispatch
from ..records import copy_with as replace
from .normalise import FloatArray, Normalisation, normalise_one
from .observations import GROUP_ALL, Sample, cells, interference_cells
from .rowlog import Row, RowLog, chain

NORMALISATION: dict[Classification, Normalisation] = {
    Classification.SCALE_UP: Normalisation.LOG,
    Classification.SCALE_OUT: Normalisation.LOG,
    Classification.HETEROGENEITY: Normalisation.LOG,
    Classification.INTERFERENCE: Normalisation.SCORE,
}


def matrix_key(classification: Classification, group: str) -> str:
    return f"{classification.value}/{group}"


@dataclass(frozen=True, slots=True)
class ModelFact:
    """What a ``ModelRetrained`` event fixed: the model of the first `rows` rows at `rank`."""

    rows: int
    rank: int
    width: int
    content_hash: str
    version: str
    position: int  # trigger position (the state the retraining decision saw)
    fingerprint: ev.Fingerprint = ev.MODEL_FINGERPRINT  # how `content_hash` was computed


@dataclass(frozen=True, slots=True)
class Matrix:
    """One utility matrix: columns in order of first appearance, rows append-only."""

    classification: Classification
    group: str
    normalisation: Normalisation
    columns: tuple[str, ...] = ()
    index: Map[str, int] = field(default_factory=Map)
    rows: RowLog = field(default_factory=RowLog)
    model: ModelFact | None = None
    rejected: int = 0

    @property
    def key(self) -> str:
        return matrix_key(self.classification, self.group)

    def __len__(self) -> int:
        return len(self.rows)

    def with_row(self, row_id: str, values: Iterable[tuple[str, float]]) -> Matrix:
        """Append a row of raw ``(column, value)`` cells; duplicates of a column are averaged in
        normalised space (a geometric mean for performance). Returns self if nothing is valid."""
        acc: dict[str, list[float]] = {}
        rejected = 0
        for col, raw in values:
            z = normalise_one(self.normalisation, raw)
            if z is None:
                rejected += 1
                continue
            acc.setdefault(col, []).append(z)
        if not acc:
            return replace(self, rejected=self.rejected + rejected) if rejected else self
        columns, index = self.columns, self.index
        for col in acc:  # new columns in first-seen order
            if col not in index:
                index = index.set(col, len(columns))
                columns = columns + (col,)
        pairs = sorted((index[c], math.fsum(v) / len(v)) for c, v in acc.items())
        cols = tuple(i for i, _ in pairs)
        vals = tuple(v for _, v in pairs)
        row = Row(row_id=row_id, cols=cols, values=vals, width=len(columns),
                  digest=chain(self.rows.digest, row_id, cols, vals))
        return replace(self, columns=columns, index=index, rows=self.rows.append(row),
                       rejected=self.rejected + rejected)

    def width_at(self, n: int) -> int:
        return 0 if n == 0 else self.rows[n - 1].width

    def dense(self, n: int | None = None) -> tuple[FloatArray, np.ndarray, list[str]]:
        """The first `n` rows (all if None) as (y, mask, row ids), width = `width_at(n)`."""
        n = len(self.rows) if n is None else n
        width = self.width_at(n)
        y = np.zeros((n, width))
        mask = np.zeros((n, width), dtype=bool)
        rows = list(self.rows.head(n))
        # every row's cells in one scatter (the same values, copied: no arithmetic)
        counts = [len(row.cols) for row in rows]
        at = np.repeat(np.arange(n, dtype=np.int64), counts)
        cols = np.fromiter(chain_iter.from_iterable(row.cols for row in rows), dtype=np.int64, count=len(at))
        y[at, cols] = np.fromiter(chain_iter.from_iterable(row.values for row in rows), dtype=np.float64,
                                  count=len(at))
        mask[at, cols] = True
        return y, mask, [row.row_id for row in rows]


@dataclass(frozen=True, slots=True)
class Pending:
    """A workload's profiling since its last classification."""

    kind: str
    runs: tuple[ev.ProfileRun, ...] = ()
    samples: tuple[Sample, ...] = ()
    classified: int = 0  # how many rows this workload has appended so far


@dataclass(frozen=True, slots=True)
class KnowledgeBase:
    matrices: Map[str, Matrix] = field(default_factory=Map)
    pending: Map[str, Pending] = field(default_factory=Map)
    appended: int = 0

    def matrix(self, classification: Classification, group: str) -> Matrix | None:
        return self.matrices.get(matrix_key(classification, group))

    def append(self, classification: Classification, group: str, row_id: str,
               values: Iterable[tuple[str, float]]) -> KnowledgeBase:
        key = matrix_key(classification, group)
        m = self.matrices.get(key) or Matrix(classification=classification, group=group,
                                             normalisation=NORMALISATION[classification])
        m2 = m.with_row(row_id, values)
        if m2 is m:
            return self
        grew = len(m2) > len(m)
        return replace(self, matrices=self.matrices.set(key, m2), appended=self.appended + int(grew))

    def pending_cells(self, workload_id: str) -> dict[tuple[Classification, str], list[tuple[str, float]]]:
        """The cells the workload's pending row would append (what its classification uses)."""
        p = self.pending.get(workload_id)
        return {} if p is None else cells(p.kind, p.runs, p.samples)

    @classmethod
    def seeded(cls, events: Iterable[ev.KnowledgeSeeded]) -> KnowledgeBase:
        """A knowledge base folded from seed events only (same result as folding them in a log)."""
        kb = cls()
        for e in events:
            kb = evolve(kb, e)
        return kb


EMPTY_KB = KnowledgeBase()


# --- the fold ----------------------------------------------------------------------------------


def evolve(kb: KnowledgeBase, event: ev.Event) -> KnowledgeBase:
    """Fold one event into the knowledge base (events it does not know leave it unchanged)."""
    return _apply(event, kb)


@Dispatch
def _apply(event: ev.Event, kb: KnowledgeBase) -> KnowledgeBase:
    return kb


@_apply.register
def _(event: ev.KnowledgeSeeded, kb: KnowledgeBase) -> KnowledgeBase:
    if event.classification is Classification.INTERFERENCE:
        values = interference_cells(event.values, event.caused)
    else:
        values = list(event.values.items())
    return kb.append(event.classification, event.group, event.row_id, values)


@_apply.register
def _(event: ev.WorkloadSubmitted, kb: KnowledgeBase) -> KnowledgeBase:
    return replace(kb, pending=kb.pending.set(event.workload_id, Pending(kind=event.kind.value)))


@_apply.register
def _(event: ev.ProfilingPlanned, kb: KnowledgeBase) -> KnowledgeBase:
    p = kb.pending.get(event.workload_id)
    if p is None:
        return kb
    return replace(kb, pending=kb.pending.set(event.workload_id, replace(p, runs=event.runs, samples=())))


@_apply.register
def _sample_recorded(event: ev.ProfileSampleRecorded, kb: KnowledgeBase) -> KnowledgeBase:
    p = kb.pending.get(event.workload_id)
    if p is None:
        return kb
    s: Sample = (event.run_id, event.classification.value, event.column, event.value, event.caused)
    return replace(kb, pending=kb.pending.set(event.workload_id, replace(p, samples=p.samples + (s,))))


def samples_batchable() -> bool:
    """Whether `add_samples` is what this fold's `ProfileSampleRecorded` handler does (no other
    handler registered for the type)."""
    return _apply.dispatch(ev.ProfileSampleRecorded) is _sample_recorded


def add_samples(kb: KnowledgeBase, workload_id: str, events: list[ev.ProfileSampleRecorded]) -> KnowledgeBase:
    """`evolve` of each of `events` (samples of `workload_id`, in order) in one copy: the same
    knowledge base (`state.evolve.fold_events`)."""
    p = kb.pending.get(workload_id)
    if p is None:
        return kb
    new = (*p.samples, *[(e.run_id, e.classification.value, e.column, e.value, e.caused) for e in events])
    return replace(kb, pending=kb.pending.set(workload_id, replace(p, samples=new)))


@_apply.register
def _(event: ev.WorkloadClassified, kb: KnowledgeBase) -> KnowledgeBase:
    p = kb.pending.get(event.workload_id)
    if p is None:
        return kb
    row_id = event.workload_id if p.classified == 0 else f"{event.workload_id}#{p.classified}"
    out = kb
    for (cls, group), values in sorted(cells(p.kind, p.runs, p.samples).items()):
        out = out.append(cls, group, row_id, values)
    done = replace(p, runs=(), samples=(), classified=p.classified + (out is not kb))
    return replace(out, pending=out.pending.set(event.workload_id, done))


def _drop(event: ev.WorkloadEvent, kb: KnowledgeBase) -> KnowledgeBase:
    if event.workload_id not in kb.pending:
        return kb
    return replace(kb, pending=kb.pending.delete(event.workload_id))


_apply.register(ev.WorkloadCompleted, _drop)
_apply.register(ev.WorkloadFailed, _drop)
_apply.register(ev.WorkloadRevoked, _drop)


def model_version(rows: int, rank: int, content_hash: str) -> str:
    return f"r{rows}-k{rank}-{content_hash[:12]}"


@_apply.register
def _(event: ev.ModelRetrained, kb: KnowledgeBase) -> KnowledgeBase:
    m = kb.matrix(event.classification, event.group)
    if m is None or event.rows > len(m):
        return kb  # a model of rows this log does not have: nothing to attach it to
    fact = ModelFact(rows=event.rows, rank=event.rank, width=event.columns,
                     content_hash=event.content_hash, version=event.model_version,
                     position=event.trigger_position, fingerprint=event.fingerprint)
    return replace(kb, matrices=kb.matrices.set(m.key, replace(m, model=fact)))


__all__ = ["EMPTY_KB", "GROUP_ALL", "KnowledgeBase", "Matrix", "ModelFact", "Pending", "add_samples", "evolve",
           "samples_batchable",
           "matrix_key", "model_version"]
