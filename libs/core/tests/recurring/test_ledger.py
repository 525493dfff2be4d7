"""The capacity ledger (recurring/ledger.py): the rules of precedence, clear all-or-nothing errors."""

from __future__ import annotations

import numpy as np
import pytest
from sextant_core.recurring.ledger import (
    CapacityLedger,
    Claim,
    ClaimInfeasible,
    ClaimKind,
    DuplicateClaim,
    LedgerError,
    Tier,
    UnknownClaim,
)


def ledger(cores: float = 10.0, memory: float = 80.0, steps: int = 8) -> CapacityLedger:
    return CapacityLedger.create(cores, memory, steps)


def claim(cid: str, kind: ClaimKind, steps: list[int], cores: float, memory: float | None = None) -> Claim:
    return Claim.of(cid, kind, steps, cores, 8 * cores if memory is None else memory)


def test_guarantees_of_any_kind_share_one_pool() -> None:
    # a QoS placement holding 6 cores at steps 0-3 leaves 4 for a periodic reservation there
    led = ledger().claim(claim("w1", ClaimKind.PLACEMENT, [0, 1, 2, 3], 6)).ledger
    led = led.claim(claim("r1", ClaimKind.PERIODIC, [2, 3, 4], 4)).ledger
    assert led.headroom(Tier.GUARANTEE)[0].tolist() == [4, 4, 0, 0, 6, 10, 10, 10]
    with pytest.raises(ClaimInfeasible) as err:
        led.claim(claim("r2", ClaimKind.PERIODIC, [3], 1))
    assert (err.value.step, err.value.resource) == (3, "cores")
    assert err.value.short_by == pytest.approx(1.0)
    with pytest.raises(ClaimInfeasible):  # nor may a placement take what a reservation holds
        led.claim(claim("w2", ClaimKind.PLACEMENT, [2], 1))


def test_residual_claims_see_everything_and_guarantees_ignore_them() -> None:
    led = ledger().claim(claim("adhoc", ClaimKind.NON_PERIODIC, [0, 1], 8)).ledger
    with pytest.raises(ClaimInfeasible):  # 8 + 3 > 10 for another residual claim
        led.claim(claim("adhoc2", ClaimKind.NON_PERIODIC, [1], 3))
    up = led.claim(claim("periodic", ClaimKind.PERIODIC, [1, 2], 3))  # a guarantee does not see it...
    assert [c.claim_id for c in up.displaced] == ["adhoc"]  # ...and displaces it (8 + 3 > 10 at step 1)
    assert "adhoc" not in up.ledger.claims
    assert up.ledger.used(Tier.RESIDUAL)[0].tolist() == [0, 3, 3, 0, 0, 0, 0, 0]


def test_displacement_releases_the_newest_overlapping_residual_claims_first() -> None:
    led = ledger()
    for i, st in enumerate([[0], [0], [0], [5]]):
        led = led.claim(claim(f"n{i}", ClaimKind.NON_PERIODIC, st, 3)).ledger
    # step 0 holds n0, n1, n2 (9 of 10). A guarantee of 5 at step 0 needs 4 cores freed: n2 then n1
    # go (newest first); n0 stays; n3 (step 5) is never touched.
    up = led.claim(claim("g", ClaimKind.PLACEMENT, [0], 5))
    assert [c.claim_id for c in up.displaced] == ["n2", "n1"]
    assert sorted(up.ledger.claims) == ["g", "n0", "n3"]


def test_memory_is_checked_too() -> None:
    with pytest.raises(ClaimInfeasible) as err:
        ledger().claim(claim("big-mem", ClaimKind.PERIODIC, [4], 1, memory=81))
    assert (err.value.step, err.value.resource) == (4, "memory_gb")


def test_an_override_that_does_not_fit_leaves_the_ledger_as_it_was() -> None:
    led = ledger().claim(claim("a", ClaimKind.PERIODIC, [0, 1], 5)).ledger
    led = led.claim(claim("b", ClaimKind.PERIODIC, [1], 4)).ledger
    before = led.digest()
    with pytest.raises(ClaimInfeasible):  # a grows to 7 at step 1 where b holds 4: 11 > 10
        led.replace("a", claim("a", ClaimKind.PERIODIC, [0, 1], 7))
    assert led.digest() == before and led.get("a").amount[0].tolist() == [5, 5]
    ok = led.replace("a", claim("a", ClaimKind.PERIODIC, [0, 1], 6)).ledger  # 6 + 4 = 10 fits
    assert ok.get("a").seq == led.get("a").seq  # an override keeps its place
    assert ok.headroom(Tier.GUARANTEE)[0, :2].tolist() == [4, 0]


def test_release_gives_the_capacity_back_and_errors_are_clear() -> None:
    led = ledger().claim(claim("a", ClaimKind.EXTENSION, [7], 10)).ledger
    assert led.release("a").headroom(Tier.GUARANTEE)[0].tolist() == [10] * 8
    with pytest.raises(UnknownClaim):
        led.release("nope")
    with pytest.raises(DuplicateClaim):
        led.claim(claim("a", ClaimKind.PERIODIC, [0], 1))
    with pytest.raises(LedgerError, match="outside the window"):
        led.claim(claim("far", ClaimKind.PERIODIC, [8], 1))
    with pytest.raises(LedgerError, match="negative"):
        claim("neg", ClaimKind.PERIODIC, [0], -1)


def test_the_ledger_is_immutable() -> None:
    led = ledger()
    led.claim(claim("a", ClaimKind.PERIODIC, [0], 5))
    assert len(led.claims) == 0
    with pytest.raises(ValueError):
        led.load[0, 0, 0] = 1.0  # read-only arrays
    assert np.all(led.headroom(Tier.GUARANTEE) == led.capacity)


def test_time_varying_capacity() -> None:
    led = CapacityLedger.create(np.array([4, 4, 0, 4]), 100.0, 4)
    with pytest.raises(ClaimInfeasible) as err:
        led.claim(claim("a", ClaimKind.PERIODIC, [1, 2], 1, memory=1))
    assert err.value.step == 2
