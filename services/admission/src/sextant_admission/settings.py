"""Settings of the admission service: the kit's shared settings (SEXTANT_*) plus its own."""

from __future__ import annotations

from sextant_kit.settings import KitSettings


class Settings(KitSettings):
    service_name: str = "admission"
    max_body_bytes: int = 64 * 1024  # SEXTANT_MAX_BODY_BYTES
