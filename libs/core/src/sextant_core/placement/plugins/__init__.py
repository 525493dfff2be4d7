"""The built-in placement plugins; importing this package registers them.

| NAME | kind | module |
|---|---|---|
| `schedulable` | filter | `schedulable.py` |
| `fit` | filter | `fit.py` |
| `interference-d1`, `interference-d2` | filters | `interference.py` |
| `least-allocated` | score | `least_allocated.py` |
| `random` | score | `random_score.py` |
| `platform` | score | `platform_score.py` |
| `least-added-pressure`, `interference-fit` | scores | `interference.py` |
| `paragon-d1-residual` | filter | `paragon_residual.py` |
| `paragon-arq-pool` | filter | `paragon_arq.py` |
| `quasar-fit`, `quasar-target` | filters | `quasar_sizing.py` |
| `quasar-quality`, `quasar-least-cores`, `quasar-packing` | scores | `quasar_scores.py` |
"""

from . import (
    fit,
    interference,
    least_allocated,
    paragon_arq,
    paragon_residual,
    platform_score,
    quasar_scores,
    quasar_sizing,
    random_score,
    schedulable,
)

__all__ = ["fit", "interference", "least_allocated", "paragon_arq", "paragon_residual", "platform_score",
           "quasar_scores", "quasar_sizing", "random_score", "schedulable"]
