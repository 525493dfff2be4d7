"""One capacity ledger: every promise of cluster capacity goes through it, so no two mechanisms
promise the same cores.

The ledger covers one cyclic window of `steps` time steps (the plan's LCM window: one day of
one-minute steps) and two resources (cores, memory in GB). A *claim* is a time-indexed amount of
both resources at some steps of the window (`Claim`). Claims come from:

- QoS placements (`ClaimKind.PLACEMENT`): a placed workload's cores and memory from its start
  over its expected run (every step of the window when open-ended);
- periodic reservations (`ClaimKind.PERIODIC`): one claim per recurring job, covering all its
  instances in the window at their fixed offset (`recurring/plan.py`);
- reprovisioning extensions (`ClaimKind.EXTENSION`): DRA's minute-long growth of one instance;
- non-periodic reservations (`ClaimKind.NON_PERIODIC`): one instance of an ad-hoc, off-kilter or
  longer-than-a-day job, planned on the residual;
- reissue load (`ClaimKind.REISSUE`): the extra work a Kwiken plan spends on reissues, a share of
  its service's placement (`recurring/placements.py`), in the residual tier.
- Corral rack plans (`ClaimKind.RACK_PLAN`): the cores and memory of the racks a planned analytics
  job holds over its predicted run (`recurring/racks.py`), a guarantee that displaces nothing.

Rules of precedence.

1. Two tiers. *Guarantees* (placements, periodic reservations, extensions) come first; the
   *residual* tier (non-periodic reservations) plans on what guarantees leave
   (Morpheus §6: periodic jobs have strict priority over non-periodic ones). Later claimants
   slot in the same way: virtual-cluster guarantees and rack plans as guarantees, reissue load
   in the residual tier.
2. Inside a tier, first come, first kept: an admitted claim is never moved or shrunk by a later
   claim of its tier. A guarantee that does not fit in capacity − guarantees is refused; a
   residual claim that does not fit in capacity − everything is refused.
3. A guarantee may displace residual claims: when admitting it overflows some step, residual
   claims that touch an overflowing step are released, the most recently admitted first, until
   nothing overflows. They are returned (`LedgerUpdate.displaced`) for re-planning; the ledger
   itself never re-plans.
4. Replacing a claim (a contract override, a re-inferred skyline) keeps its place in the order
   of admission and is all-or-nothing: the old claim is released, the new one checked against
   the rest, and if it does not fit the error names the step and resource and the ledger is the
   one you had.

The structure is immutable: every operation returns a new ledger (the per-tier load arrays are
copied, 2 × 2 × steps floats; the claims live in a persistent map), so an error can never leave
anything half-written and a decider can keep the ledger a decision saw.

QoS placements and Kwiken's reissue load use it through planning's placement gate (`recurring/placements.py`): a placement
is checked as a PLACEMENT claim (`Plan.hold`) against every reservation before it is recorded, and
every placed workload is a claim of the plan the reservation decisions rebuild; the choice of
servers stays the planner's (the ledger is a cell aggregate).
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import immutables
import numpy as np

RESOURCES = ("cores", "memory_gb")
TOLERANCE = 1e-9  # relative slack of the capacity check (float sums of claims)


class Tier(enum.IntEnum):
    GUARANTEE = 0
    RESIDUAL = 1


class ClaimKind(enum.StrEnum):
    PLACEMENT = "placement"
    PERIODIC = "periodic"
    EXTENSION = "extension"
    NON_PERIODIC = "non_periodic"
    REISSUE = "reissue"
    RACK_PLAN = "rack_plan"

    @property
    def tier(self) -> Tier:
        return Tier.RESIDUAL if self in (ClaimKind.NON_PERIODIC, ClaimKind.REISSUE) else Tier.GUARANTEE


class LedgerError(ValueError):
    """A ledger operation was refused; the ledger it was called on is unchanged."""


class UnknownClaim(LedgerError):
    pass


class DuplicateClaim(LedgerError):
    pass


class ClaimInfeasible(LedgerError):
    """The claim does not fit: at `step`, `resource` would exceed what its tier may use by `short_by`."""

    def __init__(self, claim_id: str, step: int, resource: str, short_by: float) -> None:
        self.claim_id, self.step, self.resource, self.short_by = claim_id, step, resource, short_by
        super().__init__(f"claim {claim_id!r} does not fit: step {step} needs {short_by:.6g} more "
                         f"{resource} than its tier has left")


@dataclass(frozen=True, eq=False)
class Claim:
    """`amount[r, j]` of resource `RESOURCES[r]` at step `steps[j]` (sorted, unique, in the window).

    `seq` (the admission order) is set by the ledger."""

    claim_id: str
    kind: ClaimKind
    steps: np.ndarray
    amount: np.ndarray
    owner: str = ""
    seq: int = -1

    @staticmethod
    def of(claim_id: str, kind: ClaimKind, steps: Sequence[int] | np.ndarray,
           cores: float | Sequence[float] | np.ndarray, memory_gb: float | Sequence[float] | np.ndarray,
           owner: str = "") -> Claim:
        """A claim from per-step amounts; repeated steps are summed, zero steps dropped."""
        st = np.asarray(steps, dtype=np.int64)
        amt = np.vstack([np.broadcast_to(np.asarray(cores, dtype=np.float64), st.shape),
                         np.broadcast_to(np.asarray(memory_gb, dtype=np.float64), st.shape)])
        if (amt < 0).any() or not np.all(np.isfinite(amt)):
            raise LedgerError(f"claim {claim_id!r} has a negative or non-finite amount")
        uniq, inv = np.unique(st, return_inverse=True)
        summed = np.zeros((2, len(uniq)))
        for r in range(2):
            np.add.at(summed[r], inv, amt[r])
        keep = summed.any(axis=0)
        return Claim(claim_id, kind, _frozen(uniq[keep]), _frozen(summed[:, keep]), owner)


@dataclass(frozen=True)
class LedgerUpdate:
    ledger: CapacityLedger
    displaced: tuple[Claim, ...] = ()


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class CapacityLedger:
    """Capacity (2, steps), load per tier (2 tiers, 2, steps) and the admitted claims (module doc)."""

    capacity: np.ndarray
    load: np.ndarray
    claims: immutables.Map[str, Claim]
    next_seq: int = 0

    @staticmethod
    def create(cores: float | Sequence[float] | np.ndarray, memory_gb: float | Sequence[float] | np.ndarray,
               steps: int = 1440) -> CapacityLedger:
        """An empty ledger; capacities are constants or one value per step."""
        cap = np.vstack([np.broadcast_to(np.asarray(cores, dtype=np.float64), (steps,)),
                         np.broadcast_to(np.asarray(memory_gb, dtype=np.float64), (steps,))])
        if (cap < 0).any() or not np.all(np.isfinite(cap)):
            raise LedgerError("capacity must be finite and non-negative")
        return CapacityLedger(_frozen(cap), _frozen(np.zeros((len(Tier), 2, steps))), immutables.Map())

    @property
    def steps(self) -> int:
        return int(self.capacity.shape[1])

    def headroom(self, tier: Tier) -> np.ndarray:
        """(2, steps): what a new claim of `tier` may still take (capacity − tiers ≤ `tier`)."""
        return self.capacity - self.load[: tier + 1].sum(axis=0)

    def used(self, tier: Tier) -> np.ndarray:
        """(2, steps): the load a claim of `tier` must respect (its own tier and the ones above)."""
        return self.load[: tier + 1].sum(axis=0)

    def get(self, claim_id: str) -> Claim:
        try:
            return self.claims[claim_id]
        except KeyError:
            raise UnknownClaim(f"no claim {claim_id!r}") from None

    def claim(self, c: Claim, within: Tier | None = None) -> LedgerUpdate:
        """Admit `c` (rules 1–3 of the module doc) or raise `ClaimInfeasible` / `DuplicateClaim`.
        `within`: `c` must also fit in what the claims of tiers ≤ `within` leave — a guarantee
        asked with `within=Tier.RESIDUAL` displaces nothing (QoS placements, `Plan.hold`)."""
        if c.claim_id in self.claims:
            raise DuplicateClaim(f"claim {c.claim_id!r} already exists")
        if within is not None and c.steps.size:
            self._check(c, self.headroom(within)[:, c.steps])
        return self._admit(c, self.next_seq, self.next_seq + 1)

    def release(self, claim_id: str) -> CapacityLedger:
        c = self.get(claim_id)
        load = self.load.copy()
        load[c.kind.tier][:, c.steps] -= c.amount
        return CapacityLedger(self.capacity, _frozen(load), self.claims.delete(claim_id), self.next_seq)

    def replace(self, claim_id: str, c: Claim) -> LedgerUpdate:
        """Swap claim `claim_id` for `c` (same id or a new one) at the old claim's place (rule 4)."""
        old = self.get(claim_id)
        rest = self.release(claim_id)
        if c.claim_id != claim_id and c.claim_id in rest.claims:
            raise DuplicateClaim(f"claim {c.claim_id!r} already exists")
        return rest._admit(c, old.seq, self.next_seq)

    def release_all(self, claim_ids: Iterable[str]) -> CapacityLedger:
        out = self
        for cid in claim_ids:
            out = out.release(cid)
        return out

    def _admit(self, c: Claim, seq: int, next_seq: int) -> LedgerUpdate:
        if c.steps.size and (c.steps[0] < 0 or c.steps[-1] >= self.steps):
            raise LedgerError(f"claim {c.claim_id!r} has steps outside the window [0, {self.steps})")
        tier = c.kind.tier
        self._check(c, self.headroom(tier)[:, c.steps])
        load = self.load.copy()
        load[tier][:, c.steps] += c.amount
        claims = self.claims.set(c.claim_id, Claim(c.claim_id, c.kind, c.steps, c.amount, c.owner, seq))
        displaced: list[Claim] = []
        if tier == Tier.GUARANTEE:
            claims, displaced = _displace(self.capacity, load, claims, c.steps)
        return LedgerUpdate(CapacityLedger(self.capacity, _frozen(load), claims, next_seq), tuple(displaced))

    def _check(self, c: Claim, room: np.ndarray) -> None:
        short = c.amount - room - TOLERANCE * np.maximum(self.capacity[:, c.steps], 1.0)
        if (short > 0).any():
            r, j = np.unravel_index(int(np.argmax(short > 0)), short.shape)
            raise ClaimInfeasible(c.claim_id, int(c.steps[j]), RESOURCES[r], float(c.amount[r, j] - room[r, j]))

    def digest(self) -> str:
        """SHA-256 of the claims in canonical JSON (ids sorted; amounts with repr floats)."""
        body = [[cid, c.kind.value, c.owner, c.seq, c.steps.tolist(), c.amount.tolist()]
                for cid, c in sorted(self.claims.items())]
        return hashlib.sha256(json.dumps(body, separators=(",", ":")).encode()).hexdigest()


def _displace(capacity: np.ndarray, load: np.ndarray, claims: immutables.Map[str, Claim],
              steps: np.ndarray) -> tuple[immutables.Map[str, Claim], list[Claim]]:
    """Release residual claims, newest first, while a step of `steps` overflows (rule 3); in place on `load`."""
    over = _overflow(capacity, load, steps)
    if not over.size:
        return claims, []
    residual = sorted((c for c in claims.values() if c.kind.tier == Tier.RESIDUAL), key=lambda c: -c.seq)
    out: list[Claim] = []
    for c in residual:
        if not np.isin(c.steps, over, assume_unique=True).any():
            continue
        load[Tier.RESIDUAL][:, c.steps] -= c.amount
        claims = claims.delete(c.claim_id)
        out.append(c)
        over = _overflow(capacity, load, over)
        if not over.size:
            break
    return claims, out


def _overflow(capacity: np.ndarray, load: np.ndarray, steps: np.ndarray) -> np.ndarray:
    total = load[:, :, steps].sum(axis=0)
    bad = (total > capacity[:, steps] * (1 + TOLERANCE) + TOLERANCE).any(axis=0)
    return steps[bad]
