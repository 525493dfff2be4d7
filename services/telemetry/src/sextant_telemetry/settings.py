"""Settings of the telemetry service: the kit's shared settings (SEXTANT_*) plus its own."""

from __future__ import annotations

from sextant_kit.settings import KitSettings


class Settings(KitSettings):
    service_name: str = "telemetry"
    tick_period_s: float = 1.0  # SEXTANT_TICK_PERIOD_S: how often a Tick is logged
    verdict_window_s: float = 2.0  # SEXTANT_VERDICT_WINDOW_S: samples aggregated per QoS verdict
