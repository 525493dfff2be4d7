"""Settings of the planning service: the kit's shared settings (SEXTANT_*) plus its own."""

from __future__ import annotations

from sextant_kit.settings import KitSettings


class Settings(KitSettings):
    service_name: str = "planning"
