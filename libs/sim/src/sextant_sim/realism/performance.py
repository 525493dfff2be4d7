"""The platform-speed and scaling matrices of the twin (owned by the scale-out/heterogeneity work).

`heterogeneity_matrix(seed, rows=…)`: workloads × the catalogue's platforms; value = the workload's
per-core speed on the platform (fastest = 1), `WorkloadTruth.speed`. Rows are fresh workloads of the
scenario's families (default paragon-ec2-2500: its four batch families on the 14 EC2 types), drawn
round-robin over the families (sorted) from the stream ``rng_for(seed, "realism", family, j)`` with
the default draw options — no scenario workload's stream — so the dump does not depend on arrival
order and costs no scenario build.

`scaleout_matrix(seed, rows=…)`: analytics workloads × (1, 2, 4, 8) nodes; value = the bulk
throughput at that node count relative to one node, as the world computes it (`cluster.World`):
n nodes of the catalogue's reference platform, `threads` cores each, aggregate
Σ speed · scale-up(threads) · `AnalyticsTruth.efficiency(n)`, capped at one slot per task.
Rows are the ground truth's analytics families (sorted), round-robin, same stream convention.

`world` names the ground-truth file (default the current one), so v3 and v4 can be compared.
"""

from __future__ import annotations

import numpy as np

from .. import groundtruth
from ..arrivals import rng_for
from ..platforms import catalogue
from ..scenarios import load_scenario
from ..workloads.base import WorkloadTruth
from ..workloads.generate import DrawOptions, generate
from ..workloads.performance import concept_matrix
from .stats import Matrix

NODES = (1, 2, 4, 8)


def _draws(seed: int, rows: int, families: list[str], catalogue_name: str, world: str) -> list[WorkloadTruth]:
    gt = groundtruth.load(world)
    cat = catalogue(catalogue_name)
    concepts = concept_matrix(cat, gt)
    out = []
    for i in range(rows):
        fam, j = families[i % len(families)], i // len(families)
        out.append(generate(f"realism:{fam}:{j}", fam, rng_for(seed, "realism", fam, j), cat, concepts, gt,
                            DrawOptions()))
    return out


def heterogeneity_matrix(seed: int, *, rows: int = 240, scenario: str = "paragon-ec2-2500",
                         world: str = groundtruth.CURRENT) -> Matrix:
    """`rows` workloads of `scenario`'s families × its catalogue's platforms; value = speed (max 1)."""
    sc = load_scenario(scenario)
    families = sorted({f for g in sc.groups for f in g.mix})
    truths = _draws(seed, rows, families, sc.catalogue, world)
    cat = catalogue(sc.catalogue)
    return Matrix(row_ids=tuple(t.ref for t in truths), col_ids=tuple(p.platform_id for p in cat.platforms),
                  values=np.array([t.speed for t in truths], dtype=float))


def scaleout_matrix(seed: int, *, rows: int = 240, catalogue_name: str = "quasar-ec2",
                    world: str = groundtruth.CURRENT) -> Matrix:
    """`rows` analytics workloads × `NODES`; value = bulk throughput on n reference-platform nodes
    relative to one node's."""
    gt = groundtruth.load(world)
    families = sorted(f for f, fam in gt.families.items() if fam.shape == "analytics")
    truths = _draws(seed, rows, families, catalogue_name, world)
    cat = catalogue(catalogue_name)
    ref = cat.index(cat.reference().platform_id)
    values = []
    for t in truths:
        an = t.analytics
        assert an is not None
        per_node = float(t.speed[ref]) * t.scale_up(t.threads)
        rate = [min(n * per_node * an.efficiency(n), float(len(an.task_work))) for n in NODES]
        values.append([r / rate[0] for r in rate])
    return Matrix(row_ids=tuple(t.ref for t in truths), col_ids=tuple(f"n{n}" for n in NODES),
                  values=np.array(values, dtype=float))
