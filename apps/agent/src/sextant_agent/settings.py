"""Settings of the cluster agent (SEXTANT_*): which twin scenario it embodies and how fast."""

from __future__ import annotations

from pydantic import Field
from sextant_kit.settings import KitSettings


class Settings(KitSettings):
    service_name: str = "agent"
    agent_scenario: str = "smoke"  # SEXTANT_AGENT_SCENARIO: the twin's servers and ground truths
    agent_seed: int = Field(default=1, ge=0)
    agent_speed: float = Field(default=60.0, gt=0, description="virtual seconds per wall second")
    agent_step_s: float = Field(default=0.02, gt=0, description="wall seconds between clock steps")
    agent_inject_failures: bool = False  # replay the scenario's server failures on the platform
    # SEXTANT_AGENT_RECURRING_RUNS: a named workload's end also records RecurringRunObserved, and a
    # running instance of a reserved template a RecurringInstanceObserved every plan step (DRA)
    agent_recurring_runs: bool = False
    # SEXTANT_AGENT_KWIKEN_SAMPLES: a running service with declared stages records one
    # StageLatenciesObserved per 60-s window of log time, the twin's requests under the plan in force,
    # and the plan's reissues are extra load on the service's twin servers
    agent_kwiken_samples: bool = False
