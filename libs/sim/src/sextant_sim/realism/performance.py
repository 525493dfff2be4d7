"""The platform-speed and scaling matrices of the twin (owned by the scale-out/heterogeneity work).

`heterogeneity_matrix(seed, rows=…)`: workloads × the catalogue's platforms; value = the workload's
speed on the platform (fastest = 1).
`scaleout_matrix(seed, rows=…)`: analytics workloads × (1, 2, 4, 8) nodes; value = throughput at
that node count relative to one node.
"""

from __future__ import annotations

from .stats import Matrix


def heterogeneity_matrix(seed: int, *, rows: int = 120) -> Matrix:
    raise NotImplementedError("heterogeneity_matrix: being written with twin v4's performance model")


def scaleout_matrix(seed: int, *, rows: int = 120) -> Matrix:
    raise NotImplementedError("scaleout_matrix: being written with twin v4's scale-out model")
