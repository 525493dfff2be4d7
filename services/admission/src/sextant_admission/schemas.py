"""The public API's request and response bodies (docs/api/openapi.json is generated from them).

The request bodies reuse the contracts' value types (`PerformanceTarget`, `WorkloadSpec`), so a
request that validates here is a valid `SubmitWorkload` command / `TargetUpdated` event. Their documented
schema (`Target`, `Spec`) says what validation enforces: the `type` tag of a union member is
required (pydantic's own schema gives it a default, so a generated client — or schemathesis —
would send members without it and get 422s the document did not announce).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)
from pydantic_core import PydanticCustomError
from sextant_contracts.model import PerformanceTarget, WorkloadKind, WorkloadSpec
from sextant_core.qos import TARGETS_BY_KIND, target_fits
from sextant_kit.tenancy import NAME_PATTERN


def _tag_required(union: Any) -> dict[str, Any]:
    """The JSON schema of a discriminated union of flat models, members inlined, `type` required."""
    schema = TypeAdapter(union).json_schema()
    defs = schema.get("$defs", {})
    members = []
    for ref in schema["oneOf"]:
        member = dict(defs[ref["$ref"].rsplit("/", 1)[-1]])
        member["required"] = sorted({*member.get("required", []), "type"})
        members.append(member)
    return {"oneOf": members}


Target = Annotated[PerformanceTarget, WithJsonSchema(_tag_required(PerformanceTarget))]
Spec = Annotated[WorkloadSpec, WithJsonSchema(_tag_required(WorkloadSpec))]


# A name is shown in listings and terminals: no control character (C0, DEL, C1: NUL, escape
# sequences, newlines) and no bidirectional-formatting character (ALM, LRM, RLM, the embeddings and
# overrides U+202A..U+202E, the isolates U+2066..U+2069), which could make it print as another name.
DISPLAY_NAME_PATTERN = r"^[^\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]*$"


class WorkloadRequest(BaseModel):
    """`POST /v1/workloads` (and the payload of a `SubmitWorkload` on `sextant.submissions`).

    `tenant` may be left out: it is the token's tenant; naming another tenant is refused (403).
    `best_effort` workloads may be evicted to make room; otherwise `priority` 0..9 orders them.
    """

    model_config = ConfigDict(extra="forbid")
    tenant: str | None = Field(default=None, pattern=NAME_PATTERN)
    name: str = Field(default="", max_length=200, pattern=DISPLAY_NAME_PATTERN,
                      description="printable: no control or bidirectional-formatting characters")
    kind: WorkloadKind
    target: Target
    spec: Spec
    priority: int = Field(default=0, ge=0, le=9)
    best_effort: bool = False
    requested_cores: int | None = Field(default=None, gt=0, le=100_000)
    requested_memory_gb: float | None = Field(default=None, gt=0, le=1e6)

    @field_validator("target")
    @classmethod
    def _target_fits_kind(cls, target: Any, info: ValidationInfo) -> Any:
        kind = info.data.get("kind")
        if kind is not None and not target_fits(kind, target):
            raise PydanticCustomError("target_kind", misfit(kind))
        return target


def misfit(kind: WorkloadKind) -> str:
    """Why a target does not fit a workload of `kind` (`sextant_core.qos.TARGETS_BY_KIND`)."""
    return f"a {kind.value} workload takes a target of type {' or '.join(TARGETS_BY_KIND[kind])}"


class TargetPatch(BaseModel):
    """`PATCH /v1/workloads/{id}`: a new performance target; the workload is re-planned."""

    model_config = ConfigDict(extra="forbid")
    target: Target


class Accepted(BaseModel):
    id: str = Field(description="the workload id")
    created: bool = Field(description="false when an Idempotency-Key replay returned the first result")
    state: str = Field(description="the workload's state after the request")
    template_id: str | None = Field(default=None, description="the recurring template the submission was "
                                                                "recognised as an instance of (its name's template), if any")


class Queue(BaseModel):
    arq_class: int | None
    position: int = Field(description="0 = next to be admitted in its class")
    expected_wait_s: float | None


class Qos(BaseModel):
    met: bool
    ratio_to_target: float | None
    verdicts: int
    violations: int


class Assignment(BaseModel):
    server_id: str
    cores: int
    memory_gb: float


class AllocationView(BaseModel):
    assignments: list[Assignment]
    config: dict[str, float] = {}


class WorkloadView(BaseModel):
    """A workload as its owner sees it: state, allocation, latest QoS verdict, queue (while queued)."""

    id: str
    tenant: str
    name: str
    kind: str
    state: str
    target: dict[str, Any]
    priority: int
    best_effort: bool
    submitted_at: float | None
    started_at: float | None
    ended_at: float | None
    allocation: AllocationView | None
    qos: Qos | None
    queue: Queue | None = None
    end_reason: str | None = None


class WorkloadPage(BaseModel):
    items: list[WorkloadView]
    next_cursor: str | None = Field(description="pass as `cursor` for the next page; null on the last page")
    next: str | None = Field(description="the same as next_cursor (older clients)")


class StateView(BaseModel):
    model_config = ConfigDict(extra="allow")
    position: int
    workloads: dict[str, int]
