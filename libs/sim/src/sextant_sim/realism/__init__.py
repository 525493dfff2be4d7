"""The twin's observable matrices and their statistics, compared with measured data (../shared/REALISM.md).

Three observable outcomes of the ground truth are dumped and compared at the measured shapes:

- `colocation_matrix` (`colocation.py`): single-node batch victims × co-runners on the reference
  platform at full occupancy; value = the victim's speed factor (co-located / alone).
- `heterogeneity_matrix` (`performance.py`): workloads × platforms; value = speed on the platform.
- `scaleout_matrix` (`performance.py`): analytics workloads × {1, 2, 4, 8} nodes; value = throughput.

`stats.py` computes the statistics of `shared/tools/realism_check.py` (rank-1 / rank-3 share,
mean |corr| between columns, interaction rms, on log values after removing row and column means,
averaged over random sub-matrices of the measured shape). Calibration reads these outcomes only —
never a classifier's error or a policy's score.
"""

from .colocation import colocation_matrix
from .performance import heterogeneity_matrix, scaleout_matrix
from .stats import BANDS, Matrix, band_stats, within_band, write_csv

__all__ = ["BANDS", "Matrix", "band_stats", "colocation_matrix", "heterogeneity_matrix", "scaleout_matrix",
           "within_band", "write_csv"]
