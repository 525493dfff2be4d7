"""The residual index's one-pass rebuild (planning/residual.py `_reduce_all`) against the row-by-row
reduction it replaced, on random cells: the same m and max c on every row, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.planning.residual import EMPTY_M, ResidualIndex
from sextant_core.state.model import N_SOURCES
from sextant_core.testing.cells import random_cell


@pytest.mark.parametrize(("seed", "kappa", "per_core"), [(0, 1.0, True), (1, 0.9, True), (2, 1.0, False),
                                                          (3, 0.75, False), (4, 1.0, True)])
def test_rebuild_equals_the_row_by_row_reduction(seed: int, kappa: float, per_core: bool) -> None:
    world, _ = random_cell(seed, servers=20)
    state = world.server("z-empty").state()  # and one server without residents
    index = ResidualIndex(kappa=kappa, per_core=per_core)
    m = np.array(index.minimum(state))
    assert index.rebuilds == 1
    busy = 0
    for i, s in enumerate(state.sorted_servers()):
        want_m, want_c = index._reduce(*index._residents(state, s.server_id))  # one row, as before
        assert m[i].tobytes() == want_m.tobytes()
        assert index._cmax[i].tobytes() == want_c.tobytes()
        busy += bool(s.residents)
        if not s.residents:
            assert (m[i] == EMPTY_M).all() and (index._cmax[i] == 0.0).all()
    assert 0 < busy < len(state.servers)  # empty and busy rows both covered
    assert index._residual.tobytes() == index.residual_of(m, index._csum).tobytes()
    assert m.shape == (len(state.servers), N_SOURCES)
