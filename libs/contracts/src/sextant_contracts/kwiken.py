"""Kwiken on the platform (docs/kwiken/platform.md): a service's stage DAG, its per-stage latency
samples and the plan decided from them. All are workload events (stream `workload-<id>`).

- `ServiceStagesDeclared` — fact (API): the stages of a service workload (DAG edges by stage
  name, fan-out, relative cost, partial answers and their utility model), its reissue budget and
  utility-loss budget, both in (0, 1]. Validation names the field (`edges`, `stages`,
  `reissue_budget`, ...): a cycle, an edge to an unknown stage or a budget outside (0, 1] fails.
- `StageLatenciesObserved` — fact (agent / twin): one window of per-stage latency samples, a
  *bounded sample* of at most `MAX_SAMPLES` values per stage (not a quantile sketch: the core
  replays reissues on samples and the drift test is a two-sample KS test, both need raw values):
  each stage's latency as served, and for a partial-answer stage its single responders' too
  (`StageSamples`).
- `KwikenPlanDecided` — decision: per stage the reissue policy, fraction and timeout, and for
  partial-answer stages the stopping rule (T_c, T_d, p); `trigger` `first` or `drift`.
`PlanKwiken` asks for the decision (handler `reprovisioning`).
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, ValidationInfo, field_validator

from .commands import Command
from .events import DecisionEvent, WorkloadEvent
from .model import Frozen

MAX_STAGES = 150
MAX_SAMPLES = 512
_NAME = Field(min_length=1, max_length=64)
Budget = Annotated[float, Field(gt=0, le=1)]


class StageSpec(Frozen):
    """One stage: `cost` its relative per-request cost (any positive scale), `fanout` its
    responders, `partial` whether it may answer with part of them; `utility` the utility model of a
    partial answer (`fraction`: utility = fraction of responders that answered)."""

    name: str = _NAME
    cost: float = Field(default=1.0, gt=0, le=1e6)
    fanout: int = Field(default=1, ge=1, le=10_000)
    partial: bool = False
    utility: Literal["fraction"] = "fraction"


class ServiceStages(Frozen):
    """A service's stage DAG and Kwiken budgets (module doc). `edges`: (from, to) stage names.
    Also the body of `PUT /v1/workloads/{id}/stages`."""

    stages: tuple[StageSpec, ...] = Field(min_length=1, max_length=MAX_STAGES)
    edges: tuple[tuple[str, str], ...] = Field(default=(), max_length=MAX_STAGES * 40)
    reissue_budget: Budget = 0.05
    loss_budget: Budget = 0.001

    @field_validator("stages")
    @classmethod
    def _unique(cls, v: tuple[StageSpec, ...]) -> tuple[StageSpec, ...]:
        names = [s.name for s in v]
        if len(set(names)) != len(names):
            raise ValueError("stage names must be unique")
        return v

    @field_validator("edges")
    @classmethod
    def _acyclic(cls, v: tuple[tuple[str, str], ...], info: ValidationInfo) -> tuple[tuple[str, str], ...]:
        stages = info.data.get("stages")
        if stages is None:
            return v
        names = {s.name: i for i, s in enumerate(stages)}
        succ: dict[str, list[str]] = {n: [] for n in names}
        for a, b in v:
            for n in (a, b):
                if n not in names:
                    raise ValueError(f"edge ({a}, {b}) names an unknown stage {n!r}")
            if a == b:
                raise ValueError(f"edge ({a}, {b}) is a self-loop")
            succ[a].append(b)
        indeg = {n: 0 for n in names}
        for _a, b in v:
            indeg[b] += 1
        ready = [n for n, d in indeg.items() if d == 0]
        seen = 0
        while ready:
            n = ready.pop()
            seen += 1
            for m in succ[n]:
                indeg[m] -= 1
                if indeg[m] == 0:
                    ready.append(m)
        if seen != len(names):
            raise ValueError("the stage graph has a cycle")
        return v

    def index(self) -> dict[str, int]:
        return {s.name: i for i, s in enumerate(self.stages)}


class ServiceStagesDeclared(WorkloadEvent, ServiceStages):
    """The fact that a service declared its stages (`ServiceStages`), recorded by the API."""

    TYPE: ClassVar[str] = "ServiceStagesDeclared"


_Latency = Annotated[float, Field(ge=0, allow_inf_nan=False)]


class StageSamples(Frozen):
    """Latency samples (ms) of one stage in one window, each a bounded uniform sample.

    `samples_ms`: the stage's latency **as served** to the request — from the stage's start to its
    answer, with the plan in force applied: after its reissues; for a fan-out stage, its slowest
    responder, or, answering partially, the stopping time `min(T_c, max(T_min, t_p + T_d), t_all)`.
    `responder_ms`: latencies of single responders of a partial-answer stage (what its stopping rule
    is fitted on; not changed by a plan); empty when not collected. A window recorded before this
    field existed has none, and the core then reads a partial stage's `samples_ms` as one
    responder's latencies, as it did when that window was recorded (replay unchanged).
    """

    stage: str = _NAME
    samples_ms: tuple[_Latency, ...] = Field(min_length=1, max_length=MAX_SAMPLES)
    responder_ms: tuple[_Latency, ...] = Field(default=(), max_length=MAX_SAMPLES)


class StageLatenciesObserved(WorkloadEvent):
    """One window [`window_start_s`, + `window_s`) of a service's per-stage latency samples."""

    TYPE: ClassVar[str] = "StageLatenciesObserved"
    window_start_s: float = Field(ge=0)
    window_s: float = Field(gt=0)
    stages: tuple[StageSamples, ...] = Field(min_length=1, max_length=MAX_STAGES)


class StagePlanEntry(Frozen):
    """A stage's part of a plan: reissue `policy` (`none`, `timeout`, `immediate`,
    `two-after-timeout`) at `fraction` with `timeout_ms` (None: no timeout); a partial-answer stage
    stops at `min(T_c, max(T_min, t_p + T_d), t_all)` (`partial_*`, None when the stage does not
    answer partially; `partial_t_c_ms` / `partial_t_d_ms` None: infinite; `partial_t_min_ms` None: 0,
    as in every plan recorded before it existed)."""

    stage: str = _NAME
    policy: str = Field(max_length=32)
    fraction: float = Field(ge=0, le=1)
    timeout_ms: float | None = None
    partial_t_c_ms: float | None = None
    partial_t_d_ms: float | None = None
    partial_p: float | None = None
    partial_t_min_ms: float | None = None
    samples: int = Field(ge=0)


class KwikenPlanDecided(DecisionEvent):
    """Kwiken's plan of a service (docs/kwiken/platform.md). `drift`: the stages whose distribution
    failed the KS test against the samples the previous plan used (empty for the first plan)."""

    TYPE: ClassVar[str] = "KwikenPlanDecided"
    trigger: Literal["first", "drift"]
    stages: tuple[StagePlanEntry, ...]
    reissue_budget: float = Field(gt=0, le=1)
    loss_budget: float = Field(gt=0, le=1)
    reissue_spent: float = Field(ge=0)
    drift: tuple[str, ...] = ()


class PlanKwiken(Command):
    """To reprovisioning: (re)compute the service's Kwiken plan if it has none or its stages drifted."""

    TYPE: ClassVar[str] = "PlanKwiken"
    HANDLER: ClassVar[str] = "reprovisioning"
