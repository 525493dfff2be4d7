"""The twin's ground-truth parameters: one versioned YAML file (`CURRENT`, now `v4.yaml`), validated here.

Older versions stay loadable (`load("v1.yaml")`) so a report made with them can be reproduced.
A scenario runs in a named *world* (`WORLDS`, `Scenario.world`): `v4` (the default, `CURRENT`) or
`v3` (interference drawn independently per source — the stress world of robustness tables).

`load()` returns the typed parameters; `TWIN_VERSION` is `"<version>-<hash8>"` of the file's parsed content,
so any edit to the world shows in every report (`sim compare` JSON `twin_version`). Only the
world-building modules (workloads/, interference.py, cluster.py) and the two sanctioned readers
(`oracle.py`, `estimates.py`) may use these parameters — `tests/architecture/test_no_peeking.py`.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from importlib import resources
from typing import Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from sextant_contracts.model import INTERFERENCE_SOURCES

SOURCES = tuple(s.value for s in INTERFERENCE_SOURCES)
CURRENT = "v4.yaml"


class _M(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class LogRange(_M):
    log: tuple[float, float]


Range = tuple[float, float]
Draw = Range | LogRange


class Performance(_M):
    concepts: tuple[str, ...]
    cache_cap_mb: float = Field(gt=0)
    membw_cap_gbs: float = Field(gt=0)
    noise_sigma: float = Field(ge=0)
    pathology_rate: float = Field(ge=0, le=1)
    pathology_factor: Range
    # v4 (absent before: defaults reproduce v3): structured and idiosyncratic deviations from the
    # concept model, drawn from the workload's performance stream (`workloads/performance.py`)
    cpu_traits: int = Field(default=0, ge=0)  # unmodelled microarchitecture traits per CPU model
    cpu_trait_sd: float = Field(default=0.0, ge=0)  # sd of a workload's log-speed loading on each
    idiosyncratic_sigma: float = Field(default=0.0, ge=0)  # per (workload, platform) log-speed noise


class AnalyticsScaleOut(_M):
    """v4 shape of an analytics job's scale-out curve beyond v3's n^beta / (1 + kappa (n − 1))
    (`workloads/performance.py`, `AnalyticsTruth.efficiency`)."""

    overhead: Range  # share of a node's time lost to distribution once the job spans ≥ 2 nodes
    coherency: Draw  # delta of the crosstalk term delta · n (n − 1) (Gunther's scalability law)
    irregularity_sd: float = Field(ge=0)  # sd of the log deviation at each power-of-two node count


class ServiceScaleOut(_M):
    """v4 sub-linear services: aggregate capacity ∝ n^exponent, the exponent drawn per service from
    its family's range (`default` for a family not listed)."""

    exponent: dict[str, Range]

    @field_validator("exponent")
    @classmethod
    def _has_default(cls, v: dict[str, Range]) -> dict[str, Range]:
        if "default" not in v:
            raise ValueError("services.exponent needs a `default` range")
        if any(not 0.0 < lo <= hi <= 1.0 for lo, hi in v.values()):
            raise ValueError("a service exponent lies in (0, 1]: services scale at most linearly")
        return v


class ScaleOut(_M):
    """v4 scale-out (absent before v4: analytics follow v3's curve, services scale exactly n×)."""

    analytics: AnalyticsScaleOut
    services: ServiceScaleOut


class Interference(_M):
    classes: dict[str, Literal["capacity", "bandwidth", "private"]]
    platform_resource: dict[str, str]
    platform_gamma: dict[str, float]
    alpha: dict[str, float]
    bandwidth_kappa: float = Field(ge=0)
    private_q: float = Field(ge=1)
    private_sharing: dict[str, float]
    max_slowdown: float = Field(gt=0, lt=1)
    min_factor: float = Field(gt=0, le=1)
    bandwidth_saturation: float = Field(gt=0, lt=1)
    threshold_beta: float = Field(gt=0)
    heavy_caused: Range
    sensitive_tolerated: Range
    heavy_sensitive: float = Field(ge=0, le=1)
    extra_sensitive: dict[int, float]
    extra_weight: float = Field(ge=0)
    logistic_width: float = Field(gt=0)

    @field_validator("classes", "platform_resource", "platform_gamma")
    @classmethod
    def _all_sources(cls, v: dict[str, object]) -> dict[str, object]:
        if tuple(sorted(v)) != tuple(sorted(SOURCES)):
            raise ValueError(f"must name exactly the 10 sources {SOURCES}")
        return v


class LatentSide(_M):
    """How one side (caused or tolerated) maps a workload's latent vector to its 10 sources:
    level = `scale` · ((Λ·v)_s + `base`) · exp(`noise` · ε_s − `noise`²/2), ε_s ~ N(0, 1) per
    source (idiosyncratic, mean-preserving)."""

    scale: float = Field(gt=0)
    base: float = Field(ge=0)
    noise: float = Field(ge=0)


class Latent(_M):
    """Interference from latent resource demands (v4; absent in v1–v3, whose interference is drawn
    independently per source from the family's roles).

    Each workload draws a demand d (one value per factor) log-normally around its family's
    centroid (`centroids[family]`, per-instance log spread `spread` per factor), and a sensitivity
    σ = d^`coupling` · exp(`sensitivity_spread` · η) (a workload that uses a resource is usually hurt
    by pressure on it). `loadings[source]` (one weight per factor) says which sources share
    hardware. Caused pressure is monotone increasing in (Λ·d)_s, the tolerated score monotone
    decreasing in (Λ·σ)_s: τ_s = `tolerated_max` / (1 + `tolerated.scale` · ((Λ·σ)_s + base) · noise).
    Caused levels are per thread (× threads^0.6), or × the family's `caused_scale` when it sets
    one; multi-node families (analytics, services) × `multi_node_caused` on top. `phase_factor[phase model]` names the
    factor a phase model moves."""

    factors: tuple[str, ...]
    loadings: dict[str, tuple[float, ...]]
    centroids: dict[str, tuple[float, ...]]
    spread: float = Field(ge=0)
    coupling: float = Field(ge=0)
    sensitivity_spread: float = Field(ge=0)
    caused: LatentSide
    tolerated: LatentSide
    tolerated_max: float = Field(gt=3, le=100)
    multi_node_caused: float = Field(gt=0)
    phase_factor: dict[str, str]

    @model_validator(mode="after")
    def _shapes(self) -> Latent:
        k = len(self.factors)
        if tuple(sorted(self.loadings)) != tuple(sorted(SOURCES)):
            raise ValueError(f"loadings must name exactly the 10 sources {SOURCES}")
        for name, vec in (*self.loadings.items(), *self.centroids.items()):
            if len(vec) != k or min(vec) < 0:
                raise ValueError(f"{name}: {k} non-negative values expected (one per factor)")
        for model, f in self.phase_factor.items():
            if f not in self.factors:
                raise ValueError(f"phase model {model!r} moves unknown factor {f!r}")
        return self

    def matrix(self) -> np.ndarray:
        """Λ, (10 sources × factors), rows in `SOURCES` order."""
        return np.array([self.loadings[s] for s in SOURCES], dtype=float)


class Memory(_M):
    oom_headroom: float = Field(gt=0)


class Noise(_M):
    score_sd: float = Field(ge=0)
    source_factor: dict[str, float]
    level_factor: dict[str, float]
    perf_sd: float = Field(ge=0)
    telemetry_sd: float = Field(ge=0)


class Roles(_M):
    """A family's interference roles: weights of its heavy sources, how many, base levels."""

    heavy: dict[str, float]
    heavy_count: dict[int, float]
    caused_base: tuple[float, float]
    tolerated_base: tuple[float, float]
    caused_scale: float | None = None  # caused × this (None: × the workload's threads per node)
    heavy_sensitive: float | None = Field(default=None, ge=0, le=1)  # overrides the global one

    @field_validator("heavy")
    @classmethod
    def _known(cls, v: dict[str, float]) -> dict[str, float]:
        unknown = set(v) - set(SOURCES)
        if unknown:
            raise ValueError(f"unknown sources {sorted(unknown)}")
        return v


class Family(_M):
    """One family of ground-truth workloads (a Paragon kind, a framework, a service)."""

    kind: Literal["batch", "analytics", "service"]
    shape: Literal["single", "analytics", "service"]
    threads: dict[int, float]
    parallel_fraction: Range
    footprint_gb: Draw
    duration_s: Draw
    activity: Range
    sensitivity: dict[str, Range]
    interference: Roles
    requested_memory_over: Range
    # analytics
    tasks: tuple[int, int] | None = None
    reference_nodes: tuple[int, int] | None = None
    scale_out_beta: Range | None = None
    scale_out_kappa: Range | None = None
    straggler_rate: float | None = None
    straggler_factor: Range | None = None
    # services
    qps_per_core: Range | None = None
    base_latency_ms: Range | None = None
    latency_bound_ms: Range | None = None
    reference_utilisation: float | None = None


class ReservationShare(_M):
    share: float = Field(ge=0, le=1)
    factor: LogRange


class PhaseModel(_M):
    """A three-phase model. v1/v2: `magnitude` (uniform) sets the memory pressure of phase 2 and
    `speed_drop` (uniform, independent) its speed. v3: `magnitude` is any draw and sets both —
    speed × (1 − `speed_per_magnitude` · m) — and `speed_drop` is absent."""

    boundaries: tuple[Range, Range]
    magnitude: Draw
    sources: tuple[str, ...]
    footprint_growth: Range
    speed_drop: Range | None = None
    speed_per_magnitude: float | None = Field(default=None, gt=0)

    @model_validator(mode="after")
    def _one_speed_model(self) -> PhaseModel:
        if (self.speed_per_magnitude is None) == (self.speed_drop is None):
            raise ValueError("a phase model has exactly one of speed_drop and speed_per_magnitude")
        return self


class Stragglers(_M):
    """Injected stragglers (v2): slow-down factor and the fraction of bulk work where it starts."""

    slowdown: Range
    start: Range


class GroundTruth(_M):
    version: str
    performance: Performance
    interference: Interference
    memory: Memory
    noise: Noise
    families: dict[str, Family]
    reservations: dict[str, dict[str, ReservationShare]]
    phases: dict[str, PhaseModel]
    stragglers: Stragglers | None = None  # absent in v1
    scaleout: ScaleOut | None = None  # absent before v4
    latent: Latent | None = None  # absent in v1–v3: interference independent per source

    @model_validator(mode="after")
    def _latent_families(self) -> GroundTruth:
        if self.latent is not None:
            missing = sorted(set(self.families) - set(self.latent.centroids))
            if missing:
                raise ValueError(f"latent.centroids misses families {missing}")
        return self


def _raw(name: str = CURRENT) -> bytes:
    return resources.files(__package__).joinpath(name).read_bytes()


@lru_cache(maxsize=4)
def load(name: str = CURRENT) -> GroundTruth:
    """The validated ground-truth parameters (cached; the model is frozen)."""
    return GroundTruth.model_validate(yaml.safe_load(_raw(name)))


def twin_version(name: str = CURRENT) -> str:
    """`"<version>-<hash8>"`: the file's `version` and the SHA-256 of its parsed content as
    canonical JSON — every change of a value changes it, a change of a comment does not."""
    gt = load(name)
    content = json.dumps(yaml.safe_load(_raw(name)), sort_keys=True, separators=(",", ":"))
    return f"{gt.version}-{hashlib.sha256(content.encode()).hexdigest()[:8]}"


# Named worlds a scenario can select (`Scenario.world`): the default is the current ground truth;
# `v3` keeps interference independent per source (no latent demands) — a stress world for
# robustness tables, where two profiled sources say nothing about the other eight.
WORLDS = {"v3": "v3.yaml", "v4": "v4.yaml"}
DEFAULT_WORLD = "v4"


def world_file(world: str) -> str:
    """The ground-truth file of a named world (`WORLDS`)."""
    try:
        return WORLDS[world]
    except KeyError:
        raise KeyError(f"unknown world {world!r}; known: {', '.join(sorted(WORLDS))}") from None


def world_version(world: str) -> str:
    """`twin_version` of a named world's file: what reports print as `twin_version`."""
    return twin_version(world_file(world))


TWIN_VERSION = twin_version()
