"""Typed settings, read only at the edge (STYLE 10): pydantic-settings, environment prefix
`SEXTANT_`, fail fast on a missing or malformed value.

Every process shares `KitSettings` (where the database and the broker are, how to export traces,
where to serve HTTP); a service extends it with its own fields. `REQUIRED_ENV` lists the variables
a deployment must set — docker-compose.yml is checked against it by a test.
"""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

REQUIRED_ENV = ("SEXTANT_DATABASE_URL", "SEXTANT_KAFKA_BOOTSTRAP", "SEXTANT_SERVICE_NAME")


class KitSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="SEXTANT_", extra="ignore", frozen=True)

    service_name: str = Field(min_length=1, description="the process's name in logs, traces, tracking")
    database_url: str = Field(min_length=1, description="postgresql+asyncpg://user@host:port/db")
    kafka_bootstrap: str = Field(min_length=1, description="host:port[,host:port]")
    http_host: str = "127.0.0.1"
    http_port: int = Field(default=0, ge=0, le=65535, description="0: pick a free port")
    # trace export, one setting (telemetry.tracing_config; docs/platform.md, Observability):
    # none | jsonl (a file per process under <run_dir>/traces/) | otlp (to a collector)
    otel_exporter: str = Field(default="none", pattern="^(none|otlp|jsonl|memory)$")
    otel_endpoint: str = ""  # OTLP HTTP collector, e.g. http://collector:4318 (default: OTEL_EXPORTER_OTLP_*)
    otel_file: str = ""  # JSON-lines span file (default: <run_dir>/traces/<service_name>.jsonl)
    otel_sample_polling: bool = True  # drop root database spans (polling); false keeps them
    log_level: str = Field(default="INFO", pattern="(?i)^(debug|info|warning|error|critical)$")
    policy_profile: str = "sextant-adaptive"  # SEXTANT_POLICY_PROFILE: the flagship; any registered profile
    run_dir: str = ".run"
    retry_backoff_s: float = Field(default=0.5, gt=0)
    retry_backoff_max_s: float = Field(default=5.0, gt=0)
    # a decider's snapshot every `snapshot_every` folded events, at most every
    # `snapshot_min_interval_s` seconds (runtime.py; snapshots are disposable caches)
    snapshot_every: int = Field(default=5000, ge=1)
    snapshot_min_interval_s: float = Field(default=30.0, ge=0)
