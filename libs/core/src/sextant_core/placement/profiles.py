"""Named placement profiles: the papers' baselines (and any profile registered later).

| profile | filters (after `schedulable`) | scorers (weight) |
|---|---|---|
| `least-loaded` | fit | least-allocated (1) |
| `heterogeneity-oblivious` | fit, interference-d1, interference-d2 | random (1) |
| `interference-oblivious` | fit | platform (10), least-allocated (1) |
| `random` | fit | random (1) |
| `reservation-least-loaded` | fit | least-allocated (1) |

Readings of the papers' baselines ([IMPL CHOICE]):
- `least-loaded` (Paragon §5 LL): keeps the workload's core and memory request, puts it on the
  server with the most free cores and memory.
- `heterogeneity-oblivious` (Paragon NH): interference-aware through the D1/D2 filters, but the
  platform is random: a uniformly random server among those that pass.
- `interference-oblivious` (Paragon NI): the best predicted platform first, interference ignored;
  least-allocated breaks the ties inside a platform (weight 10:1, so the platform dominates
  unless platforms predict within a few percent of each other).
- `random`: a uniformly random server that fits.
- `reservation-least-loaded` (Quasar §6 "reservation + LL"): the same placement as
  `least-loaded`; what differs is the size placed, the *reservation*, which the caller supplies
  through the planner's sizer (the workload's request by default: user over-provisioning; the
  twin's sizers model framework self-sizing and autoscaling).

`oracle` is registered by the twin with `register_profile`, using plugins it registers itself.
"""

from __future__ import annotations

from . import plugins as _plugins  # noqa: F401  (registers the built-in plugins)
from .framework import Profile
from .registry import make_profile

_PROFILES: dict[str, Profile] = {}


def register_profile(profile: Profile) -> Profile:
    """Register a profile under its name (a second registration of a name raises)."""
    if profile.name in _PROFILES:
        raise ValueError(f"placement profile {profile.name!r} registered twice")
    _PROFILES[profile.name] = profile
    return profile


def get_profile(name: str) -> Profile:
    try:
        return _PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown placement profile {name!r}; known: {', '.join(sorted(_PROFILES))}") from None


def profile_names() -> list[str]:
    return sorted(_PROFILES)


LEAST_LOADED = register_profile(make_profile(
    "least-loaded", filters=["fit"], scorers=["least-allocated"],
    description="requested cores+memory on the server with the most free cores+memory"))

HETEROGENEITY_OBLIVIOUS = register_profile(make_profile(
    "heterogeneity-oblivious", filters=["fit", "interference-d1", "interference-d2"], scorers=["random"],
    description="interference-aware (D1/D2 filters), random platform"))

INTERFERENCE_OBLIVIOUS = register_profile(make_profile(
    "interference-oblivious", filters=["fit"], scorers=[("platform", 10.0), ("least-allocated", 1.0)],
    description="best predicted platform first, interference-blind"))

RANDOM = register_profile(make_profile(
    "random", filters=["fit"], scorers=["random"], description="a random server that fits"))

RESERVATION_LEAST_LOADED = register_profile(make_profile(
    "reservation-least-loaded", filters=["fit"], scorers=["least-allocated"],
    description="the reservation (sizer's size; by default the request) placed least-loaded"))

BASELINES: tuple[str, ...] = ("least-loaded", "heterogeneity-oblivious", "interference-oblivious", "random",
                              "reservation-least-loaded")
