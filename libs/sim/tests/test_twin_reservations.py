"""Reservation sizing (`sextant_sim.reservations`): Quasar §1.1's over/under-provisioning shares,
deterministic per workload, and what `reservation-least-loaded` places differs from `least-loaded`."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_contracts.model import WorkloadKind
from sextant_sim.reservations import MODELS, reservation_factor
from sextant_sim.runner import compare


@pytest.mark.parametrize("kind", list(MODELS), ids=[k.value for k in MODELS])
def test_shares_and_ranges_follow_the_model(kind: WorkloadKind) -> None:
    (over_share, (lo, hi)), (under_share, (ulo, uhi)) = MODELS[kind]
    f = np.array([reservation_factor(f"w{i:05d}", kind) for i in range(4000)])
    over, under = f > 1.0 + 1e-12, f < 1.0 - 1e-12
    # 4 000 draws: a share's standard error is ≤ 0.8 points; allow 3
    assert abs(over.mean() - over_share) < 0.03
    assert abs(under.mean() - under_share) < 0.03 or ulo == 1.0  # ÷[1, 1.5] can draw exactly 1
    assert f[over].min() >= lo - 1e-9 and f[over].max() <= hi + 1e-9
    assert f[under].min() >= 1.0 / uhi - 1e-9


def test_twitter_users_over_reserve_by_up_to_10x() -> None:
    f = np.array([reservation_factor(f"w{i:05d}", WorkloadKind.BATCH) for i in range(4000)])
    assert f.max() > 8.0 and f.min() < 0.25  # ×[1.2, 10] over, ÷[1.2, 5] under


def test_the_factor_is_a_pure_function_of_the_workload() -> None:
    assert reservation_factor("w00042", WorkloadKind.SERVICE) == reservation_factor("w00042", WorkloadKind.SERVICE)
    assert reservation_factor("w00042", WorkloadKind.BATCH) != reservation_factor("w00043", WorkloadKind.BATCH)


def test_reservation_least_loaded_is_not_least_loaded() -> None:
    doc = compare("smoke", ["least-loaded", "reservation-least-loaded"], seed=2)
    ll, res = doc["profiles"]["least-loaded"], doc["profiles"]["reservation-least-loaded"]
    assert (ll["qos_met_fraction"], ll["overprovisioning"]) != (res["qos_met_fraction"], res["overprovisioning"])
    # over-reserved cores sit idle: more of what is allocated is not used
    assert res["overprovisioning"] > ll["overprovisioning"]


def test_the_largest_server_is_recomputed_when_the_servers_change() -> None:
    from sextant_core.state.evolve import evolve
    from sextant_core.state.model import ClusterState
    from sextant_core.testing.builders import server
    from sextant_sim.reservations import largest_server_cores

    s1 = evolve(ClusterState(), server("a", cores=8))
    assert largest_server_cores(s1) == 8
    s2 = evolve(s1, server("b", cores=32))
    assert largest_server_cores(s2) == 32  # a new servers map: not the remembered answer
    assert largest_server_cores(s1) == 8
