"""Platform catalogues of the twin: server configurations with per-resource capacities.

A `Platform` is one server configuration (Paragon's SC, Quasar's platform). Its capacities are
what the world uses to compute speed and interference pressure; `ServerCapacity` is the subset the
cluster state sees (cores, memory, disk and network bandwidth, LLC).

Catalogues (counts from the papers, everything else invented where the papers are silent):

- `paragon-local`: Paragon Table V, 10 configurations, 40 servers, 178 cores.
- `paragon-ec2`: Paragon Table VI, 14 instance types, 1 000 servers, 7 355 vCPUs (the table's sum;
  the caption's 7 339 and Fig. 15's 4 960 are inconsistencies of the paper).
- `quasar-local`: Quasar Table 1, platforms A–J, 4 servers each (counts are not given) = 40 servers.
  [IMPL CHOICE] platform G has 12 cores (the second text extraction; the first reads 8).
- `quasar-ec2`: the 14 EC2 types of Paragon Table VI, scaled to 200 servers (largest remainder).
- `smoke`: 3 small platforms, 6 servers, for tests.

[GAP] The papers give no clock, microarchitecture, cache-bandwidth, memory-bandwidth, disk or
network figures for most platforms. The values below are plausible for the hardware named (EC2
ECU ratings give the per-core speed of the instance types); they are part of the ground truth and
are versioned with it (`TWIN_VERSION`).

Units: `ghz` GHz, `ipc` relative instructions per clock (1.0 = Westmere/Sandy Bridge class),
memory GiB, `llc_mb` MiB, bandwidths GB/s.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from sextant_contracts.model import ServerCapacity


@dataclass(frozen=True, slots=True)
class Platform:
    platform_id: str
    cores: int
    memory_gb: float
    ghz: float
    ipc: float
    llc_mb: float
    mem_bw_gbs: float
    disk_bw_gbs: float
    net_bw_gbs: float
    count: int

    @property
    def capacity(self) -> ServerCapacity:
        return ServerCapacity(cores=self.cores, memory_gb=self.memory_gb, disk_bw_gbs=self.disk_bw_gbs,
                              network_bw_gbs=self.net_bw_gbs, llc_mb=self.llc_mb)

    @property
    def per_core_speed(self) -> float:
        """Single-thread compute capability (GHz × relative IPC)."""
        return self.ghz * self.ipc


@dataclass(frozen=True, slots=True)
class Catalogue:
    name: str
    platforms: tuple[Platform, ...]

    @property
    def servers(self) -> int:
        return sum(p.count for p in self.platforms)

    @property
    def cores(self) -> int:
        return sum(p.count * p.cores for p in self.platforms)

    def reference(self) -> Platform:
        """The high-end platform profiling runs on: most cores, then most memory, then the id —
        the same rule as `sextant_core.profiling.plan.DefaultProfilingPlan`."""
        return sorted(self.platforms, key=lambda p: (-p.cores, -p.memory_gb, p.platform_id))[0]

    def index(self, platform_id: str) -> int:
        for i, p in enumerate(self.platforms):
            if p.platform_id == platform_id:
                return i
        raise KeyError(platform_id)


def _p(pid: str, cores: int, mem: float, ghz: float, ipc: float, llc: float, mbw: float, disk: float,
       net: float, count: int) -> Platform:
    return Platform(pid, cores, mem, ghz, ipc, llc, mbw, disk, net, count)


PARAGON_LOCAL = Catalogue("paragon-local", (
    _p("xeon-l5609", 8, 24, 1.87, 1.00, 12, 25.6, 0.15, 0.125, 1),
    _p("xeon-x5650", 12, 24, 2.67, 1.00, 12, 32.0, 0.15, 0.125, 2),
    _p("xeon-x5670", 12, 48, 2.93, 1.00, 12, 32.0, 0.20, 1.25, 2),
    _p("xeon-l5640", 12, 48, 2.27, 1.00, 12, 32.0, 0.20, 1.25, 1),
    _p("xeon-mp", 4, 8, 3.16, 0.55, 1, 6.4, 0.08, 0.125, 5),
    _p("xeon-e5345", 4, 32, 2.33, 0.80, 8, 10.6, 0.10, 0.125, 8),
    _p("xeon-e5335", 4, 16, 2.00, 0.80, 8, 10.6, 0.10, 0.125, 8),
    _p("opteron-240", 2, 4, 1.80, 0.65, 2, 6.4, 0.06, 0.125, 7),
    _p("atom-330", 2, 4, 1.60, 0.45, 1, 4.2, 0.05, 0.125, 5),
    _p("atom-d510", 2, 8, 1.66, 0.45, 1, 6.4, 0.05, 0.125, 1),
))

# EC2 2013 instance types (Paragon Table VI). ghz×ipc follows the ECU per vCPU of each type.
PARAGON_EC2 = Catalogue("paragon-ec2", (
    _p("m1.small", 1, 1.7, 1.0, 0.50, 1.5, 1.5, 0.04, 0.03, 78),
    _p("m1.medium", 1, 3.75, 2.0, 0.50, 3, 2.5, 0.05, 0.06, 69),
    _p("m1.large", 2, 7.5, 2.0, 0.50, 6, 5.0, 0.08, 0.06, 82),
    _p("m1.xlarge", 4, 15, 2.0, 0.50, 12, 8.0, 0.10, 0.12, 81),
    _p("m3.xlarge", 4, 15, 2.6, 1.00, 10, 12.0, 0.08, 0.12, 82),
    _p("m3.2xlarge", 8, 30, 2.6, 1.00, 20, 20.0, 0.10, 0.12, 68),
    _p("c1.medium", 2, 1.7, 2.33, 0.70, 6, 4.0, 0.05, 0.06, 67),
    _p("c1.xlarge", 8, 7, 2.33, 0.70, 12, 10.0, 0.10, 0.12, 65),
    _p("m2.xlarge", 2, 17.1, 2.67, 1.00, 8, 6.0, 0.05, 0.06, 73),
    _p("m2.2xlarge", 4, 34.2, 2.67, 1.00, 8, 10.0, 0.08, 0.12, 70),
    _p("m2.4xlarge", 8, 68.4, 2.67, 1.00, 8, 16.0, 0.10, 0.12, 58),
    _p("cr1.8xlarge", 32, 244, 2.6, 1.05, 40, 51.0, 0.25, 1.25, 62),
    _p("hi1.4xlarge", 16, 60.5, 2.4, 1.0, 20, 25.0, 2.00, 1.25, 72),
    _p("hs1.8xlarge", 16, 117, 2.2, 1.1, 20, 25.0, 2.40, 1.25, 73),
))

QUASAR_LOCAL = Catalogue("quasar-local", (
    _p("A", 2, 4, 1.60, 0.45, 1, 4.2, 0.05, 0.125, 4),
    _p("B", 4, 8, 2.00, 0.80, 8, 10.6, 0.10, 0.125, 4),
    _p("C", 8, 12, 1.87, 1.00, 12, 25.6, 0.15, 0.125, 4),
    _p("D", 8, 16, 2.33, 0.80, 8, 10.6, 0.10, 0.125, 4),
    _p("E", 8, 20, 2.27, 1.00, 12, 25.6, 0.15, 1.25, 4),
    _p("F", 8, 24, 2.67, 1.00, 12, 32.0, 0.20, 1.25, 4),
    _p("G", 12, 16, 2.00, 0.90, 12, 25.6, 0.15, 0.125, 4),
    _p("H", 12, 24, 2.93, 1.00, 12, 32.0, 0.20, 1.25, 4),
    _p("I", 16, 48, 2.40, 1.05, 20, 40.0, 0.30, 1.25, 4),
    _p("J", 24, 48, 2.60, 1.10, 30, 51.0, 0.40, 1.25, 4),
))


def _scaled(source: Catalogue, name: str, servers: int) -> Catalogue:
    """The same platforms with counts scaled to `servers` (largest remainder, ties by order)."""
    total = source.servers
    raw = [p.count * servers / total for p in source.platforms]
    counts = [int(r) for r in raw]
    order = sorted(range(len(raw)), key=lambda i: (-(raw[i] - counts[i]), i))
    for i in order[: servers - sum(counts)]:
        counts[i] += 1
    return Catalogue(name, tuple(replace(p, count=c) for p, c in zip(source.platforms, counts, strict=True)))


QUASAR_EC2 = _scaled(PARAGON_EC2, "quasar-ec2", 200)

SMOKE = Catalogue("smoke", (
    _p("big", 8, 32, 2.6, 1.00, 20, 20.0, 0.20, 1.25, 2),
    _p("mid", 4, 16, 2.4, 0.90, 8, 10.0, 0.10, 0.125, 2),
    _p("small", 2, 4, 1.6, 0.50, 2, 4.0, 0.05, 0.125, 2),
))

CATALOGUES: dict[str, Catalogue] = {c.name: c for c in
                                    (PARAGON_LOCAL, PARAGON_EC2, QUASAR_LOCAL, QUASAR_EC2, SMOKE)}


def catalogue(name: str) -> Catalogue:
    try:
        return CATALOGUES[name]
    except KeyError:
        raise KeyError(f"unknown platform catalogue {name!r}; known: {', '.join(sorted(CATALOGUES))}") from None


def server_ids(cat: Catalogue) -> list[tuple[str, Platform]]:
    """(server id, platform) for every server, in catalogue order; ids `s0000`, `s0001`, ... so
    that sorting by id equals catalogue order (the placement tie-break)."""
    out: list[tuple[str, Platform]] = []
    for p in cat.platforms:
        for _ in range(p.count):
            out.append((f"s{len(out):04d}", p))
    return out
