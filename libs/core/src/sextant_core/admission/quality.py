"""Resource quality of workloads and servers, ARQ classes and server pools (Paragon §4).

**Workload quality (demand), Eq. 1.** The paper writes Q = Σ c over the shared resources and
says that Qs "range from 0 to 100 %", while describing demanding workloads as those with "high
caused and low tolerated interference". [GAP] (spec paragon.md §9 item 10) — our choice: the mean
over the 10 sources of the larger of the two pressures a workload puts on co-location,

    Q_w = (1/10) · Σ_k max(c_k, 100 − t_k)        in 0..100,

so Eq. 1's Σ c, normalised to 0..100, is the case where every workload tolerates everything, and a
workload is demanding when it causes a lot *or* tolerates little on a source. Missing scores are
neutral (t = 100, c = 0), as everywhere in the core.

**Server quality (headroom).** [GAP] the paper keeps (t, c) per server but does not say how a
server's quality is computed. Ours is the same scale read from the server's side — what it can
still absorb: Q_s = (1/10) · Σ_k min(t_server(k), 100 − c_server(k)), with t_server = min over
residents of t and c_server = Σ over residents of c (an empty server: 100).

**Classes and pools.** [GAP] "ten classes", bounds unstated; the natural choice: equal deciles,
class(q) = min(9, ⌊q / 10⌋). Class 9 holds the most demanding workloads; pool i holds the servers
whose headroom falls in decile i. A class-i workload is served from pool i (best fit: "a pool of
servers of the corresponding resource quality"); the pool above (i + 1) has more headroom than it
needs ("wastes quality but preserves QoS"), the pools below have less ("performance may
degrade"). Pools are recomputed at every decision from the current server aggregates (the [PROPOSAL]
of the spec: "re-computed as load changes").
"""

from __future__ import annotations

import numpy as np
from sextant_contracts.events import WorkloadClassified

from ..placement.table import CandidateTable, FloatArray, IntArray
from ..state.model import interference_vectors

CLASSES = 10


def workload_quality(c: WorkloadClassified | None) -> float:
    """Q_w in 0..100 (see the module docstring)."""
    t, caused = interference_vectors(c)
    return float(np.mean(np.maximum(np.asarray(caused), 100.0 - np.asarray(t))))


def server_quality(tolerated_min: FloatArray, caused_sum: FloatArray) -> FloatArray:
    """Q_s per row in 0..100 from the per-server aggregates (n, S)."""
    head = np.minimum(tolerated_min, 100.0 - caused_sum)
    out: FloatArray = np.clip(head, 0.0, 100.0).mean(axis=1)
    return out


def table_quality(t: CandidateTable) -> FloatArray:
    """Q_s per row of a candidate table: the column the table index keeps (`CandidateTable.headroom`,
    the same floats) when the table has it, else computed."""
    return t.headroom if t.headroom is not None else server_quality(t.tolerated_min, t.caused_sum)


def class_of(q: float) -> int:
    """ARQ class of a quality in 0..100: its decile (0..9)."""
    return int(min(CLASSES - 1, max(0, int(q // 10))))


def pools(q: FloatArray) -> IntArray:
    """Pool (decile) of each server quality: ⌊q / 10⌋ clipped to 0..9.

    Speed: numpy's float `//` costs a divmod per element (about as much as the rest of an ARQ
    decision at 10 000 rows). For q ≥ 0, `q // 10` is the exact floor of the real quotient
    (CPython's and numpy's divmod: fmod is exact, so is (q − fmod) / 10); here q / 10 rounded
    and floored is corrected by exact comparisons with the integer bounds (d · 10 is exact for
    these small d), which gives that same integer (libs/core/tests/admission/test_quality.py
    compares the two)."""
    d = q / 10.0
    np.floor(d, out=d)
    bound = d * 10.0
    d -= bound > q  # q / 10 rounded up onto the next integer
    bound += 10.0
    d += bound <= q  # rounded down below it
    out: IntArray = d.astype(np.int64)  # NaN: as `q // 10` gives it, then clipped as before
    np.clip(out, 0, CLASSES - 1, out=out)
    return out
