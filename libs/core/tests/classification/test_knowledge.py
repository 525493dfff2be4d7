"""The knowledge base fold: what gets appended, chunked storage, digests, robustness."""

from __future__ import annotations

import math
import pickle

import numpy as np
from sextant_contracts import events as ev
from sextant_contracts.model import Classification, WorkloadKind
from sextant_core.classification.knowledge import KnowledgeBase, Matrix, evolve
from sextant_core.classification.normalise import Normalisation
from sextant_core.classification.observations import cells
from sextant_core.classification.rowlog import CHUNK, GENESIS
from sextant_core.testing.builders import record

HET = Classification.HETEROGENEITY


def _run(i: int, cls: Classification, col: str, platform: str = "A", cores: int = 1, nodes: int = 1) -> ev.ProfileRun:
    return ev.ProfileRun(run_id=f"r{i}", classification=cls, column=col, platform=platform, cores=cores, nodes=nodes)


def _fold(kb: KnowledgeBase, events: list[ev.Event]) -> KnowledgeBase:
    for e in events:
        kb = evolve(kb, e)
    return kb


def _workload(wid: str, kind: WorkloadKind, runs: list[ev.ProfileRun], values: list[tuple[float, float | None]]
              ) -> list[ev.Event]:
    out: list[ev.Event] = [
        ev.WorkloadSubmitted(at=1, workload_id=wid, tenant="t", kind=kind,
                             target={"type": "completion_time", "seconds": 9.0}, spec={"type": "twin", "ref": wid}),
        ev.ProfilingPlanned(at=2, workload_id=wid, runs=tuple(runs), decision=record())]
    for r, (v, c) in zip(runs, values, strict=True):
        out.append(ev.ProfileSampleRecorded(at=3, workload_id=wid, run_id=r.run_id, classification=r.classification,
                                            column=r.column, value=v, caused=c))
    return out


RUNS = [_run(0, Classification.SCALE_UP, "c2", cores=2), _run(1, Classification.SCALE_UP, "c8", cores=8),
        _run(2, HET, "B", platform="B", cores=2), _run(3, Classification.SCALE_OUT, "n2", cores=2, nodes=2),
        _run(4, Classification.INTERFERENCE, "llc_cap", cores=2), _run(5, Classification.INTERFERENCE, "tlb", cores=2)]
VALUES = [(10.0, None), (30.0, None), (7.0, None), (18.0, None), (60.0, 20.0), (80.0, 5.0)]


def test_reference_run_fills_heterogeneity_and_one_node_scale_out() -> None:
    c = cells("analytics", RUNS, [(r.run_id, r.classification.value, r.column, v, cz)
                                  for r, (v, cz) in zip(RUNS, VALUES, strict=True)])
    assert c[(Classification.SCALE_UP, "analytics")] == [("c2", 10.0), ("c8", 30.0)]
    assert sorted(c[(HET, "analytics")]) == [("A", 10.0), ("B", 7.0)]  # every matrix is per kind
    assert sorted(c[(Classification.SCALE_OUT, "analytics")]) == [("n1", 10.0), ("n2", 18.0)]
    assert sorted(c[(Classification.INTERFERENCE, "analytics")]) == [
        ("c:llc_cap", 20.0), ("c:tlb", 5.0), ("t:llc_cap", 60.0), ("t:tlb", 80.0)]
    batch = cells("batch", RUNS[:3], [("r0", "scale_up", "c2", 10.0, None)])
    assert (Classification.SCALE_OUT, "batch") not in batch  # single-node jobs: no n1 entry


def test_classification_appends_measured_cells_only_and_clears_the_pending_row() -> None:
    events = _workload("w1", WorkloadKind.ANALYTICS, RUNS, VALUES)
    kb = _fold(KnowledgeBase(), events)
    assert len(kb.pending["w1"].samples) == 6 and not kb.matrices
    kb = evolve(kb, ev.WorkloadClassified(at=4, workload_id="w1", decision=record(),
                                          heterogeneity={"A": 1.0, "B": 2.0, "C": 99.0}))
    het = kb.matrix(HET, "analytics")
    assert set(het.columns) == {"A", "B"}  # the predicted C was not appended
    row = het.rows[0]
    assert row.row_id == "w1"
    assert dict(zip((het.columns[i] for i in row.cols), row.values, strict=True)) == {
        "A": math.log(10.0), "B": math.log(7.0)}
    inter = kb.matrix(Classification.INTERFERENCE, "analytics")
    assert dict(zip((inter.columns[i] for i in inter.rows[0].cols), inter.rows[0].values, strict=True)) == {
        "t:llc_cap": 0.6, "t:tlb": 0.8, "c:llc_cap": 0.2, "c:tlb": 0.05}
    assert kb.pending["w1"].samples == () and kb.appended == 4


def test_reclassification_appends_a_new_row_and_revocation_drops_the_pending_row() -> None:
    kb = _fold(KnowledgeBase(), _workload("w1", WorkloadKind.BATCH, RUNS[:3], VALUES[:3]))
    kb = evolve(kb, ev.WorkloadClassified(at=4, workload_id="w1", decision=record()))
    kb = _fold(kb, _workload("w1", WorkloadKind.BATCH, RUNS[:3], VALUES[:3])[1:])
    kb = evolve(kb, ev.WorkloadClassified(at=5, workload_id="w1", decision=record()))
    assert [r.row_id for r in kb.matrix(HET, "batch").rows.head(2)] == ["w1", "w1#1"]
    kb = _fold(kb, _workload("w2", WorkloadKind.BATCH, RUNS[:1], VALUES[:1]))
    kb = evolve(kb, ev.WorkloadRevoked(at=6, workload_id="w2"))
    assert "w2" not in kb.pending


def test_bad_measurements_are_counted_not_raised() -> None:
    m = Matrix(classification=HET, group="all", normalisation=Normalisation.LOG)
    m2 = m.with_row("a", [("A", -1.0), ("B", float("nan")), ("C", 2.0)])
    assert m2.columns == ("C",) and m2.rejected == 2
    m3 = m2.with_row("b", [("A", 0.0)])
    assert len(m3) == 1 and m3.rejected == 3


def test_duplicate_cells_are_averaged_in_normalised_space() -> None:
    m = Matrix(classification=HET, group="all", normalisation=Normalisation.LOG).with_row("a", [("A", 2.0), ("A", 8.0)])
    assert m.rows[0].values[0] == math.log(4.0)  # geometric mean


def test_appending_shares_full_chunks_and_copies_no_floats() -> None:
    m = Matrix(classification=HET, group="all", normalisation=Normalisation.LOG)
    for i in range(CHUNK * 3 + 5):
        m = m.with_row(f"w{i}", [(f"p{i % 7}", 1.0 + i)])
    m2 = m.with_row("new", [("p0", 3.0)])
    assert all(a is b for a, b in zip(m.rows.chunks, m2.rows.chunks, strict=True))  # shared, not copied
    assert len(m2.rows.tail) == 6 and len(m2) == len(m) + 1
    y, mask, ids = m2.dense()
    assert y.shape == (CHUNK * 3 + 6, 7) and mask.sum() == len(m2) and ids[-1] == "new"
    assert y[-1, 0] == math.log(3.0)


def test_digests_identify_row_prefixes() -> None:
    a = Matrix(classification=HET, group="all", normalisation=Normalisation.LOG)
    assert a.rows.digest == GENESIS
    a1 = a.with_row("x", [("A", 1.0)])
    a2 = a1.with_row("y", [("B", 2.0)])
    b2 = a1.with_row("y", [("B", 2.0000001)])
    assert a2.rows.digest_at(1) == b2.rows.digest_at(1) == a1.rows.digest
    assert a2.rows.digest != b2.rows.digest


def test_model_retrained_for_rows_the_log_lacks_is_ignored() -> None:
    kb = KnowledgeBase().append(HET, "all", "x", [("A", 1.0)])
    e = ev.ModelRetrained(at=1, classification=HET, group="all", model_version="v", content_hash="h",
                          rows=5, columns=1, rank=0, trigger_position=0)
    assert evolve(kb, e) is kb
    ok = evolve(kb, e.model_copy(update={"rows": 1}))
    assert ok.matrix(HET, "all").model.rows == 1


def test_knowledge_base_survives_a_pickle_round_trip() -> None:
    kb = _fold(KnowledgeBase(), _workload("w1", WorkloadKind.ANALYTICS, RUNS, VALUES))
    kb = evolve(kb, ev.WorkloadClassified(at=4, workload_id="w1", decision=record()))
    back = pickle.loads(pickle.dumps(kb))
    assert back == kb
    np.testing.assert_array_equal(back.matrix(HET, "analytics").dense()[0], kb.matrix(HET, "analytics").dense()[0])
