"""Corral's twin network: racks of machines under an oversubscribed core, max-min fair flows.

Topology (jalaparti.md §4.5.2, §8): `racks` × `machines` machines, each with a NIC of `nic` bytes/s
up and down; each rack reaches the core over one uplink and one downlink of `machines · nic / O`
(O = oversubscription, 5:1 on the testbed); inside a rack, full bisection at NIC speed. The core
itself never bottlenecks (a folded Clos). Links are numbered:

- `up(x)`, `down(x)` for machine x's NIC (0 .. 2·M − 1);
- `rack_up(k)`, `rack_down(k)` for rack k's core links (2·M .. 2·M + 2·R − 1);
- one *container link* per slot (the task's own rate cap: disk and CPU for a map's read, the disk
  write for a reducer's fetches), after them;
- a last dummy link of infinite capacity pads a flow's link row (`PAD`).

A flow is a row of link indices; `max_min(links, capacity)` gives every flow its max-min fair rate
by progressive filling: all unfrozen flows rise together until a link saturates, the flows on it
freeze, and so on. Each round is a few NumPy operations over the flow × link-row array, and the
number of rounds is the number of distinct bottleneck levels (measured in docs/corral/twin.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

LINKS_PER_FLOW = 5  # source NIC, source rack uplink, destination rack downlink, destination NIC, container
_EPS = 1e-9


@dataclass(frozen=True)
class Topology:
    """Racks, machines per rack, slots per machine, NIC and oversubscription (bytes/s)."""

    racks: int = 7
    machines: int = 30  # per rack
    slots: int = 16  # containers per machine (32 cores, a slot ≈ 2 cores: §2.2, §4.5.2)
    nic: float = 1.25e9  # 10 Gbps
    oversubscription: float = 5.0

    def __post_init__(self) -> None:
        if min(self.racks, self.machines, self.slots) < 1 or self.nic <= 0 or self.oversubscription < 1:
            raise ValueError("a topology needs racks, machines and slots ≥ 1, nic > 0 and O ≥ 1")

    @property
    def n_machines(self) -> int:
        return self.racks * self.machines

    @property
    def n_containers(self) -> int:
        return self.n_machines * self.slots

    @property
    def core_link(self) -> float:
        """A rack's uplink (= downlink) capacity: machines · nic / O."""
        return self.machines * self.nic / self.oversubscription

    def rack_of(self, machine: int) -> int:
        return machine // self.machines

    def up(self, machine: int) -> int:
        return machine

    def down(self, machine: int) -> int:
        return self.n_machines + machine

    def rack_up(self, rack: int) -> int:
        return 2 * self.n_machines + rack

    def rack_down(self, rack: int) -> int:
        return 2 * self.n_machines + self.racks + rack

    def container(self, slot: int) -> int:
        return 2 * self.n_machines + 2 * self.racks + slot

    @property
    def pad(self) -> int:
        """The dummy link (infinite capacity) that pads a flow's row."""
        return 2 * self.n_machines + 2 * self.racks + self.n_containers

    @property
    def n_links(self) -> int:
        return self.pad + 1

    def base_capacity(self) -> np.ndarray:
        """Link capacities without background traffic; container links start at 0 (set per task)."""
        cap = np.zeros(self.n_links)
        cap[: 2 * self.n_machines] = self.nic
        cap[2 * self.n_machines: 2 * self.n_machines + 2 * self.racks] = self.core_link
        cap[self.pad] = np.inf
        return cap

    def path(self, src: int | None, dst: int, src_rack: int | None = None) -> list[int]:
        """The network links of a transfer to machine `dst`: from machine `src`, or (shuffle fetches
        aggregated per rack, `src=None`) from rack `src_rack` (its machines' NICs are not a term)."""
        d_rack = self.rack_of(dst)
        s_rack = self.rack_of(src) if src is not None else src_rack
        links = [] if src is None else [self.up(src)]
        if s_rack != d_rack:
            links += [self.rack_up(int(s_rack)), self.rack_down(d_rack)]  # type: ignore[arg-type]
        links.append(self.down(dst))
        return links


def max_min(links: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Max-min fair rates of flows (rows of `links`, link indices, padded with an ∞-capacity link).

    Progressive filling: every unfrozen flow's rate rises by the same amount until the first link
    saturates; its flows freeze; repeat until all flows are frozen. A flow whose links are all
    infinite would rise forever: it is given rate ∞ (callers never create one). Exact up to float
    rounding; O(rounds · F · K) with rounds ≤ the number of saturated links.
    """
    n_flows = links.shape[0]
    rate = np.zeros(n_flows)
    if n_flows == 0:
        return rate
    remaining = capacity.astype(float).copy()
    active = np.arange(n_flows)
    n_links = capacity.shape[0]
    finite = np.isfinite(capacity)
    tolerance = _EPS * np.where(finite, np.maximum(capacity, 1.0), 0.0)
    while active.size:
        rows = links[active]
        count = np.bincount(rows.ravel(), minlength=n_links)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(count > 0, remaining / np.maximum(count, 1), np.inf)
        step = float(share[rows].min())
        if not np.isfinite(step):
            rate[active] = np.inf
            break
        rate[active] += step
        remaining -= step * count
        saturated = (count > 0) & finite & (remaining <= tolerance)
        frozen = saturated[rows].any(axis=1)
        active = active[~frozen]
    return rate
