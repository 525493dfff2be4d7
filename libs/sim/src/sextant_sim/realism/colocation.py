"""The pairwise co-location matrix of the twin (owned by the interference calibration work).

`colocation_matrix(seed, rows=…, cols=…)`: single-node batch victims × co-runners on the reference
platform at full occupancy; value = the victim's speed factor next to that co-runner (co-located /
alone), in (0, 1].
"""

from __future__ import annotations

from .stats import Matrix


def colocation_matrix(seed: int, *, rows: int = 240, cols: int = 180) -> Matrix:
    raise NotImplementedError("colocation_matrix: being written with twin v4's interference model")
