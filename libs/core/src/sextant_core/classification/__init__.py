"""The classification engine (Paragon §2, Quasar §3; docs/classification.md): collaborative filtering of the four
classifications over event-sourced utility matrices.

Numerics (no state): `normalise` (entry normalisation), `factorize` (initial SVD + ALS training),
`foldin` (a new row against trained column factors, with confidences), `selection` (rank and
regularisation by cross-validation), `complete` (`complete_matrix`, the ``classify-matrix`` engine).

Knowledge (a pure fold): `rowlog` (chunked append-only rows), `observations` (samples -> cells),
`knowledge` (`KnowledgeBase`, `evolve`), `seeding` (offline seed events).

Decisions: `engine` (retrain triggers, memoised models), `classifier` (`CollaborativeClassifier`,
the `policies.Classifier`). Import the classifier from its module: it depends on the cluster state,
which itself holds a `KnowledgeBase`.
"""

from .complete import Completion, MatrixError, complete_matrix
from .knowledge import KnowledgeBase
from .normalise import Normalisation
from .params import FitParams
from .seeding import SeedProfile, seed_events

__all__ = ["Completion", "FitParams", "KnowledgeBase", "MatrixError", "Normalisation", "SeedProfile",
           "complete_matrix", "seed_events"]
