"""Settings of the admission service: the kit's shared settings (SEXTANT_*) plus its own."""

from __future__ import annotations

from pydantic import Field
from sextant_kit.settings import KitSettings


class Settings(KitSettings):
    service_name: str = "admission"
    max_body_bytes: int = Field(default=64 * 1024, gt=0)  # SEXTANT_MAX_BODY_BYTES: larger bodies get 413
    # SEXTANT_API_AUTH: `tokens` = every /v1 request needs a tenant's token; `open` = no tokens, the
    # body's `tenant` is trusted (a single-user machine); `auto` = `open` until the first tenant is
    # created, `tokens` from then on (see docs/api/README.md).
    api_auth: str = Field(default="auto", pattern="^(auto|tokens|open)$")
    # per-tenant defaults when a tenant has no limit of its own (SEXTANT_RATE_PER_S, ...)
    rate_per_s: float = Field(default=100.0, gt=0)
    rate_burst: int = Field(default=200, gt=0)
    max_active_workloads: int | None = Field(default=None, gt=0)
    max_cores: int | None = Field(default=None, gt=0)
    front_door: bool = True  # SEXTANT_FRONT_DOOR: consume sextant.submissions, publish sextant.decisions
    # SEXTANT_READY_CONSUMERS: the consumer groups (comma-separated) /readyz requires alive and
    # consuming (sextant_kit.kafka.lag.ConsumerWatch): the deciders and the agent. Empty: none (an
    # API started alone, as in the API fuzzing test). SEXTANT_READY_STALL_S: how long a group may
    # keep a lag without committing before it counts as not consuming.
    ready_consumers: str = "profiling,classification,planning,reprovisioning,telemetry,agent"
    ready_stall_s: float = Field(default=30.0, gt=0)
