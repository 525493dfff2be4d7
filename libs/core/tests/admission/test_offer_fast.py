"""`TargetAvailability.offer` and `pools` (admission/) against the formulas they replaced, on
random cells and newcomers: the same eligible, could-serve and meets rows and the same cores."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.admission.availability import TargetAvailability
from sextant_core.admission.quality import pools, table_quality
from sextant_core.placement.plugins.paragon_residual import residual_violations
from sextant_core.placement.plugins.quasar_sizing import RATIO, SIZED
from sextant_core.planning.assess import Assessor
from sextant_core.testing.cells import FLAT, random_cell
from sextant_core.testing.world import SOURCES


@pytest.mark.parametrize("seed", range(5))
def test_offer_equals_the_formulas_it_replaced(seed: int) -> None:
    world, _ = random_cell(seed)
    rng = np.random.default_rng(50 + seed)
    for k in range(6):  # newcomers with targets from easy to out of reach, any size
        world.workload(f"new{k}", target={"type": "instruction_rate", "ips": float(rng.uniform(0.3, 3.0))},
                       heterogeneity={"A": 1.0, "B": float(rng.uniform(0.5, 1.2))},
                       scale_up={"c1": 1.0, "c2": float(rng.uniform(1.0, 2.0)), "c4": float(rng.uniform(1.0, 3.0))}
                       if k % 2 else FLAT,
                       cores=int(rng.integers(1, 5)), memory_gb=float(rng.uniform(0.5, 40.0)),
                       tolerated={s: float(rng.uniform(20, 100)) for s in SOURCES},
                       caused={s: float(rng.uniform(0, 60)) for s in SOURCES})
    state = world.state()
    seen = set()
    for k in range(6):
        w = state.workloads[f"new{k}"]
        offer = TargetAvailability(Assessor()).offer(state, w, 5.0, 3)
        a = Assessor().assess(state, w, 5.0, 3)
        t = a.table
        sized = t.extra[SIZED]
        room = t.schedulable & (sized >= 1) & (t.free_memory_gb + 1e-9 >= a.request.memory_gb)
        d1 = ~residual_violations(t.extra["residual"], a.request.caused).any(axis=1)
        full = a.model.curve[np.clip(t.cap_cores, 1, a.model.max_cores) - 1]
        could = t.schedulable & (a.model.factors(t.platforms)[t.platform_code] * full >= a.required.value)
        meets = room & d1 & (t.extra[RATIO] >= 1.0)
        cores = int(np.median(sized[meets])) if meets.any() else int(max(1, w.requested_cores or 1))
        assert np.array_equal(offer.eligible, room & d1)
        assert np.array_equal(offer.could_serve, could)
        assert offer.meets is not None and np.array_equal(offer.meets, meets)
        assert offer.cores == cores
        assert np.array_equal(pools(table_quality(t)), np.clip((table_quality(t) // 10).astype(np.int64), 0, 9))
        seen.add((bool(meets.any()), bool(could.all())))
    assert len(seen) > 1  # newcomers that meet somewhere and ones that do not
