"""Quasar's scale-out walk (planning/scaleout.py): ranking, prefix, trim, as close as possible."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.placement import Budget
from sextant_core.planning.model import PerformanceModel
from sextant_core.planning.scaleout import spread


def model(service: bool = False, eff: tuple[float, ...] = ()) -> PerformanceModel:
    # U(c) = c for c = 1..8 (linear), H = 1; E from `eff` at nodes 1..len(eff)
    nodes = np.arange(1, len(eff) + 1, dtype=float) if eff else np.zeros(0)
    return PerformanceModel(reference_cores=1, platform_factor={"A": 1.0}, default_factor=1.0,
                            curve=np.arange(1, 9, dtype=float), nodes=nodes, efficiency=np.array(eff),
                            service=service)


def run(m: PerformanceModel, required: float, base: list[float], free: list[int], mem: list[float] | None = None,
        max_servers: int = 64) -> object:
    n = len(base)
    return spread(m, required, np.ones(n, bool), np.array(base), np.array(free, dtype=np.int64),
                  np.array(mem if mem is not None else [64.0] * n), 1.0, max_servers, Budget(10_000))


def test_scale_up_first_then_out_then_trim() -> None:
    # every node gives 8 (full cores): prefixes 8, 16, 24 → 3 nodes for R = 20;
    # trim κ: 3·κ ≥ 20 → κ = 7 (21); κ = 6 gives 18 < 20
    sp = run(model(), 20.0, [1.0, 1.0, 1.0, 1.0], [8, 8, 8, 8])
    assert sp.met and sp.rows == (0, 1, 2) and sp.cores == (7, 7, 7) and sp.aggregate == pytest.approx(21.0)


def test_better_servers_first_lower_ranked_in_larger_numbers() -> None:
    # node perf = 8·base: rows 2 (8·1.0), 0 (8·0.5), 1 (8·0.25); R = 14 → 8 + 4 = 12 < 14, + 2 = 14 → 3 nodes
    sp = run(model(), 14.0, [0.5, 0.25, 1.0], [8, 8, 8])
    assert sp.met and sp.rows == (2, 0, 1)


def test_free_cores_and_memory_bound_a_node() -> None:
    # row 0 has 3 free cores, row 1 memory for 2 cores (2 GiB at 1 GiB/core): 3 + 2 = 5 ≥ 5
    sp = run(model(), 5.0, [1.0, 1.0], [3, 8], mem=[64.0, 2.0])
    assert sp.met and sp.cores == (3, 2)


def test_service_is_bound_by_its_weakest_node() -> None:
    # service: n · min. Ranked 8, 8, 2: prefixes 8, 16, 3·2 = 6 → R = 12 met at 2 nodes (κ = 6: 2·6 = 12)
    sp = run(model(service=True), 12.0, [1.0, 1.0, 0.25], [8, 8, 8])
    assert sp.met and sp.rows == (0, 1) and sp.cores == (6, 6)


def test_as_close_as_possible_keeps_the_best_prefix() -> None:
    # service, R = 100 unreachable: prefixes 8, 16, 6 → the best is 2 nodes (16), not met
    sp = run(model(service=True), 100.0, [1.0, 1.0, 0.25], [8, 8, 8])
    assert not sp.met and sp.rows == (0, 1) and sp.aggregate == pytest.approx(16.0)


def test_efficiency_counts() -> None:
    # E(1) = 1, E(2) = 0.5: 2 nodes give 0.5·16 = 8 < 10 → not met; best prefix is... 1 node = 8, 2 = 8 → first
    sp = run(model(eff=(1.0, 0.5)), 10.0, [1.0, 1.0], [8, 8])
    assert not sp.met and sp.rows == (0,)


def test_max_servers_and_nothing_eligible() -> None:
    sp = run(model(), 20.0, [1.0] * 4, [8] * 4, max_servers=2)
    assert not sp.met and len(sp.rows) == 2
    assert run(model(), 5.0, [1.0], [0]) is None
