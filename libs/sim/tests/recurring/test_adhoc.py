from __future__ import annotations

import numpy as np
import pytest
from sextant_sim.recurring.adhoc import adhoc_load


def test_adhoc_load_reaches_three_quarters_of_the_cluster_and_no_more() -> None:
    load = adhoc_load(7, 30 * 1440, 1000.0)
    assert load.min() >= 0 and load.max() <= 750.0 + 1e-9
    assert (load >= 700.0).mean() > 0.005  # bursts come close to the 75 % cap
    assert 100.0 < load.mean() < 300.0  # ad-hoc is 10–20 % of the cluster on average


def test_adhoc_load_is_seeded() -> None:
    np.testing.assert_array_equal(adhoc_load(1, 500, 10.0), adhoc_load(1, 500, 10.0))
    assert not np.array_equal(adhoc_load(1, 500, 10.0), adhoc_load(2, 500, 10.0))


def test_adhoc_load_refuses_a_bad_share() -> None:
    with pytest.raises(ValueError):
        adhoc_load(1, 10, 10.0, mean_share=0.9, peak_share=0.75)
