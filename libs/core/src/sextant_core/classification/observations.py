"""Which matrix cells a workload's profiling samples fill (Quasar §3.2, Paragon §2.4).

Matrices are named by classification and *group*. **[IMPL CHOICE] groups = workload kinds**
(`batch`, `analytics`, `service`) for all four classifications. Scale-up and scale-out differ by
kind in their columns (framework parameters for analytics, no scale-out for single-node jobs).
Heterogeneity and interference have the same columns for every kind and were first one shared
matrix (group ``all``, more rows); measured on the twin (`bench/classification.py --source twin`,
2 entries per row) the shared matrices were worse: a service's "performance" (the highest QPS
within its latency bound) is not proportional to its platform's speed, so service rows in the
shared heterogeneity matrix made it noisy for everyone (batch heterogeneity 10.0 % -> 6.1 % avg
error per kind); families of one kind share interference roles (I/O jobs: storage and network), so
per-kind interference matrices predict better too (batch 15.2 -> 12.5 points). ``GROUP_ALL``
remains for matrices without kinds (external data).

**[IMPL CHOICE] one interference matrix.** Tolerated and caused scores of one workload come from
the same ramps, so they are one row of a 20-column matrix: columns ``t:<source>`` (tolerated) and
``c:<source>`` (caused, oriented so that higher = more pressure, as the contract defines it). Two
ramps give four entries of that row; the joint model learns how tolerance and pressure go together
(Paragon reconstructs two matrices "using the process twice"; the joint row is never worse when
the two are unrelated — the column factors then separate into blocks).

**Run reuse (Quasar §3.2: "one more run" per classification).** The *reference run* is the first
scale-up run of the plan (single node). Its sample also gives the heterogeneity entry of its
platform (unless that platform was measured by a heterogeneity run) and, for the multi-node kinds
(``analytics``, ``service``), the 1-node scale-out entry ``n1`` (unless measured). The plan runs
the other heterogeneity and scale-out runs with the reference configuration, so the entries of a
row are comparable. The default plan's 2 scale-up runs + 1 scale-out run + 1 heterogeneity run +
2 interference ramps thus yield 2 entries in every row (4 in the joint interference row).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sextant_contracts.events import ProfileRun
from sextant_contracts.model import Classification

GROUP_ALL = "all"
TOLERATED_PREFIX = "t:"
CAUSED_PREFIX = "c:"

Sample = tuple[str, str, str, float, "float | None"]  # run_id, classification, column, value, caused
CellKey = tuple[Classification, str]  # (classification, group)

_PER_KIND = frozenset(Classification)  # every classification is kept per kind (see above)
MULTI_NODE_KINDS = frozenset({"analytics", "service"})  # kinds with a scale-out matrix (Quasar Table 2)


def group_of(classification: Classification, kind: str) -> str:
    """The matrix group of a workload kind for one classification."""
    return kind if classification in _PER_KIND else GROUP_ALL


def interference_cells(tolerated: dict[str, float] | Iterable[tuple[str, float]],
                       caused: dict[str, float] | Iterable[tuple[str, float]]) -> list[tuple[str, float]]:
    t = tolerated.items() if isinstance(tolerated, dict) else tolerated
    c = caused.items() if isinstance(caused, dict) else caused
    return [(TOLERATED_PREFIX + s, v) for s, v in t] + [(CAUSED_PREFIX + s, v) for s, v in c]


def node_column(nodes: int) -> str:
    return f"n{nodes}"


def cells(kind: str, runs: Sequence[ProfileRun], samples: Sequence[Sample]) -> dict[CellKey, list[tuple[str, float]]]:
    """Map samples to ``{(classification, group): [(column, raw value), ...]}`` (duplicates kept)."""
    out: dict[CellKey, list[tuple[str, float]]] = {}

    def put(cls: Classification, col: str, value: float) -> None:
        out.setdefault((cls, group_of(cls, kind)), []).append((col, value))

    for _run, cls_name, col, value, caused in samples:
        cls = Classification(cls_name)
        if cls is Classification.INTERFERENCE:
            for c, v in interference_cells([(col, value)], [] if caused is None else [(col, caused)]):
                put(cls, c, v)
        else:
            put(cls, col, value)
    ref = next((r for r in runs if r.classification is Classification.SCALE_UP), None)
    ref_values = [s[3] for s in samples if ref is not None and s[0] == ref.run_id]
    if ref is None or not ref_values:
        return out
    het_cols = {c for c, _ in out.get((Classification.HETEROGENEITY, group_of(Classification.HETEROGENEITY, kind)), [])}
    if ref.platform not in het_cols and ref.nodes == 1:
        for v in ref_values:
            put(Classification.HETEROGENEITY, ref.platform, v)
    so_key = (Classification.SCALE_OUT, group_of(Classification.SCALE_OUT, kind))
    if kind in MULTI_NODE_KINDS and ref.nodes == 1 and node_column(1) not in {c for c, _ in out.get(so_key, [])}:
        for v in ref_values:
            put(Classification.SCALE_OUT, node_column(1), v)
    return out
