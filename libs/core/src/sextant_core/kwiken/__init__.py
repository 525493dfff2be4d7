"""Kwiken: per-stage tail-latency budgets for services that are DAGs of stages (jalaparti.md §5).

Pure and deterministic: functions of empirical latency samples, a `StageDag` and explicit seeds.
`dag` (the DAG, its end-to-end latency, input errors), `curves` (lower convex hull), `reissue`
(reissue policies and their variance curves), `partial` (partial answers at fan-out stages),
`sumvar` (the budget split), `budget` (loss composition), `catchup` (speeding up late requests).
"""

from .curves import Curve
from .dag import KwikenInputError, StageDag

__all__ = ["Curve", "KwikenInputError", "StageDag"]
