"""Settings of the planning service: the kit's shared settings (SEXTANT_*) plus its own."""

from __future__ import annotations

from pydantic import field_validator
from sextant_core.fairness.platform import DEFAULT_POLICY, check_policy
from sextant_kit.settings import KitSettings


class Settings(KitSettings):
    service_name: str = "planning"
    # SEXTANT_VC_POLICY: the policy allocating servers between virtual clusters (tenants with a
    # capacity; docs/fairness/platform.md): maxmin, capacity_weighted, strict, decayed or sextant
    vc_policy: str = DEFAULT_POLICY

    @field_validator("vc_policy")
    @classmethod
    def _known(cls, v: str) -> str:
        return check_policy(v)
