"""Random cells for equivalence tests of the decision core's fast paths (no pytest import).

`random_cell(seed)` folds, with `testing.world.World`, servers on two platforms and 0–4 residents
per server (random tolerated and caused rows; some best-effort, some spread over two servers),
each with an instruction-rate target around what it predicts, so that some residents are
protected by the resident guard and some newcomers break them. Same seed, same events, same state.
"""

from __future__ import annotations

import numpy as np

from ..state import ClusterState
from .world import SOURCES, World

FLAT = {"c1": 1.0, "c2": 1.0, "c4": 1.0}  # more cores add nothing


def random_cell(seed: int, servers: int = 14, cores: int = 16) -> tuple[World, list[str]]:
    """The world (servers and placed residents) and the residents' ids."""
    rng = np.random.default_rng(seed)
    w = World()
    for k in range(servers):
        w.server(f"s{k:02d}", platform="AB"[k % 2], cores=cores)
    wids: list[str] = []
    for k in range(servers):
        for j in range(int(rng.integers(0, 5))):
            wid = f"r{k:02d}-{j}"
            on: tuple[tuple[str, int, float], ...] = ((f"s{k:02d}", int(rng.integers(1, 4)), 1.0),)
            if rng.random() < 0.1:
                on += ((f"s{(k + 1) % servers:02d}", 1, 1.0),)
            w.workload(wid, target={"type": "instruction_rate", "ips": float(rng.uniform(0.8, 1.05))},
                       heterogeneity={"A": 1.0, "B": float(rng.uniform(0.85, 1.0))}, scale_up=FLAT,
                       tolerated={s: float(rng.uniform(20, 100)) for s in SOURCES},
                       caused={s: float(rng.uniform(0, 35)) for s in SOURCES if rng.random() < 0.8},
                       best_effort=bool(rng.random() < 0.1), on=on)
            wids.append(wid)
    return w, wids


def random_state(seed: int, servers: int = 14) -> tuple[ClusterState, list[str]]:
    w, wids = random_cell(seed, servers)
    return w.state(), wids
