"""SEXTANT_VC_POLICY: the platform setting choosing the VC allocation policy of planning."""

from __future__ import annotations

import pytest
from pydantic import ValidationError
from sextant_planning.handlers import make_decider
from sextant_planning.settings import Settings

BASE = {"database_url": "postgresql+asyncpg://u@h:1/d", "kafka_bootstrap": "h:2", "policy_profile": "foundation"}


def test_the_default_is_sextant_and_keeps_the_profile_name() -> None:
    d = make_decider(Settings(**BASE))  # type: ignore[arg-type]
    assert (d.params.profile, d.params.vc_policy) == ("foundation", "sextant")


def test_another_policy_is_named_in_the_profile_every_decision_records() -> None:
    d = make_decider(Settings(**BASE, vc_policy="decayed"))  # type: ignore[arg-type]
    assert (d.params.profile, d.params.vc_policy) == ("foundation~vc=decayed", "decayed")


def test_an_unknown_policy_fails_at_start_up() -> None:
    with pytest.raises(ValidationError, match="unknown VC policy"):
        Settings(**BASE, vc_policy="fifo")  # type: ignore[arg-type]
