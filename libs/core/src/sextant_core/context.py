"""`DecisionContext`: what a policy may know besides the state — the time, its random stream and
the provenance every decision event records.

It lives in its own module so that the policy protocols (`policies.py`) and the dispatcher
(`decide.py`) both depend on it and not on each other. It imports nothing of the core.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sextant_contracts.ids import derive_id
from sextant_contracts.model import DecisionRecord


@dataclass(frozen=True, slots=True)
class DecisionContext:
    """The inputs of one decision other than the state.

    `at` is the time of the triggering event (seconds, virtual in the twin), `seed` the decision's
    seed (`decide.seed_for`), `state_position` the log position of the state decided on (-1: the
    empty state), `causation` the ids of the events that caused it, `profile` and
    `policy_version` the `PolicySet`'s name and version.
    """

    at: float
    seed: int
    state_position: int
    causation: tuple[str, ...]
    profile: str
    policy_version: str

    def rng(self) -> np.random.Generator:
        """A fresh generator on `seed`: the same draws every time it is asked (no shared stream)."""
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence(self.seed)))

    def record(self, kind: str, workload_id: str, model_version: str = "") -> DecisionRecord:
        """The `DecisionRecord` of a decision of `kind` about `workload_id`; its id is derived from
        the kind, the workload, the state's position and the causation (same inputs, same id)."""
        did = derive_id(kind, workload_id, self.state_position, *self.causation)
        return DecisionRecord(decision_id=did, causation=self.causation,
                              state_position=max(self.state_position, 0), profile=self.profile,
                              policy_version=self.policy_version, model_version=model_version,
                              seed=self.seed)
