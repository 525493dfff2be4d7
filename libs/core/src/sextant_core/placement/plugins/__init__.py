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
"""

from . import fit, interference, least_allocated, platform_score, random_score, schedulable

__all__ = ["fit", "interference", "least_allocated", "platform_score", "random_score", "schedulable"]
