"""Scenarios: typed YAML files (this folder) describing a cluster, workload groups and their
arrival processes, the world's variant (ground-truth world, interference model, noise scale) and
telemetry cadence.

`load_scenario(name_or_path, **overrides)` validates the file into a frozen `Scenario`;
`names()` lists the bundled ones. Overrides are the scenario parameters a sensitivity study varies
(`world`, `interference_model`, `noise_scale`, group `count` via `scale_counts`).
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator


class _M(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Arrivals(_M):
    """`fixed`: every `interval_s`; `gaussian`: N(interval_s, sigma_s²) interarrivals (floored at
    0); `poisson`: exponential interarrivals of mean `interval_s`. The first arrives at `start_s`."""

    process: Literal["fixed", "gaussian", "poisson"] = "fixed"
    interval_s: float = Field(gt=0)
    sigma_s: float = Field(default=0.0, ge=0)
    start_s: float = Field(default=0.0, ge=0)


class Burst(_M):
    """`count` extra arrivals every `interval_s`, starting right after the `after`-th arrival of the
    group's main stream (Paragon §5: 1 000 apps at < 0.1 s after the first 3 750)."""

    after: int = Field(ge=0)
    count: int = Field(gt=0)
    interval_s: float = Field(gt=0)


class Group(_M):
    name: str
    count: int = Field(gt=0)
    mix: dict[str, float]
    arrivals: Arrivals
    bursts: tuple[Burst, ...] = ()
    reservations: Literal["exact", "twitter"] = "exact"
    phases: str | None = None
    load_trace: Literal["flat", "diurnal", "fluctuating", "spike"] = "flat"
    trace_segment_s: float = Field(default=900.0, gt=0)
    duration_scale: float = Field(default=1.0, gt=0)
    lifetime_s: float | None = Field(default=None, gt=0)  # fixed duration/lifetime (overrides the draw)
    stragglers: float = Field(default=0.0, ge=0, le=1)  # share of analytics jobs with an injected slow node
    best_effort: bool = False
    priority: int = Field(default=0, ge=0, le=9)
    tenant: str = "default"

    @property
    def total(self) -> int:
        return self.count + sum(b.count for b in self.bursts)


class Failures(_M):
    """Server failures: exponential time to failure per server (mean `mtbf_s`), repaired after an
    exponential `mttr_s`. Drawn from the scenario seed, identical for every profile."""

    mtbf_s: float = Field(gt=0)
    mttr_s: float = Field(gt=0)


class Telemetry(_M):
    period_s: float = Field(default=600.0, gt=0)  # PerformanceObserved + QosVerdict per workload
    tick_s: float = Field(default=60.0, gt=0)  # Tick events (and utilisation samples)
    # [IMPL CHOICE] (adaptation) the node agent closes a single-node workload's telemetry window early
    # (one more PerformanceObserved + QosVerdict) when the residents of its server change — a
    # co-runner starts, moves, is resized, pauses or ends. A real node agent knows when it starts
    # and stops co-runners; it does not know their phases. Each window then has one set of
    # neighbours, so a step inside a window is the workload's own (docs/twin.md, "The world").
    split_at_resident_changes: bool = False
    # [IMPL CHOICE] (adaptation) the telemetry period of single-node workloads when it differs from
    # `period_s` (None: the same)
    single_period_s: float | None = Field(default=None, gt=0)
    # (stragglers) the TaskTracker view of analytics jobs per task, as LATE needs it: each task its
    # own work (the job's task sizes), progress, age and copy number (`TaskAttemptsObserved`;
    # `adaptation.hooks`). False: one progress per node (`TasksObserved`, the logs before it)
    task_attempts: bool = False


class PaperResult(_M):
    """A result the paper reports for this scenario, quoted in docs/results/baselines.md."""

    source: str
    qos_met_fraction: dict[str, float] = Field(default_factory=dict)
    mean_performance: dict[str, float] = Field(default_factory=dict)
    notes: str = ""


class Scenario(_M):
    name: str
    description: str
    paper: str = ""
    catalogue: str
    groups: tuple[Group, ...]
    interference_model: Literal["graded", "threshold", "logistic"] = "graded"
    # the ground truth the scenario runs in (`groundtruth.WORLDS`): v4 (latent resource demands,
    # the default) or v3 (interference independent per source, the stress world)
    world: Literal["v3", "v4"] = "v4"
    noise_scale: float = Field(default=1.0, ge=0)
    telemetry: Telemetry = Telemetry()
    failures: Failures | None = None
    horizon_s: float | None = Field(default=None, gt=0)
    paper_result: PaperResult | None = None

    @model_validator(mode="after")
    def _unique_groups(self) -> Scenario:
        names = [g.name for g in self.groups]
        if len(set(names)) != len(names):
            raise ValueError("group names must be unique")
        return self

    @property
    def workloads(self) -> int:
        return sum(g.total for g in self.groups)


def names() -> list[str]:
    return sorted(p.name[:-5] for p in resources.files(__package__).iterdir() if p.name.endswith(".yaml"))


def load_scenario(name_or_path: str | Path, **overrides: Any) -> Scenario:
    """A bundled scenario by name, or a YAML file by path, with top-level field overrides."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") and path.exists():
        raw = yaml.safe_load(path.read_text())
    else:
        res = resources.files(__package__).joinpath(f"{name_or_path}.yaml")
        if not res.is_file():
            raise KeyError(f"unknown scenario {name_or_path!r}; known: {', '.join(names())}")
        raw = yaml.safe_load(res.read_text())
    raw.update({k: v for k, v in overrides.items() if v is not None})
    return Scenario.model_validate(raw)
