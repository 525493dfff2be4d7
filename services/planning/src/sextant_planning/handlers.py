"""The planning service's handlers: the core's decider for `planning`, nothing else.

Which events it reacts to and what it decides is the core's business (`sextant_core.process`
routes commands by their HANDLER; `sextant_core.decide` decides them with the policy set named
by `SEXTANT_POLICY_PROFILE`, the VC allocation policy by `SEXTANT_VC_POLICY`). This module only wires the decider to the process.
"""

from __future__ import annotations

from sextant_core.profiles import policy_set, with_vc_policy
from sextant_core.workflow import Decider

from .settings import Settings

SERVICE = "planning"


def make_decider(settings: Settings) -> Decider:
    """Planning under the platform's profile, its VC allocation policy named in it (the default
    keeps the profile's own name, so its decisions are recorded exactly as before)."""
    return Decider(SERVICE, policy_set(with_vc_policy(settings.policy_profile, settings.vc_policy)))
