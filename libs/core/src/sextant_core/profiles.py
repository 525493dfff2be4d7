"""Named policy sets. Later issues register richer ones (`sextant`, `paragon`, baselines)."""

from __future__ import annotations

from collections.abc import Callable

from .policies import AdmitAll, ObservedOnlyClassifier, PolicySet
from .profiling.plan import DefaultProfilingPlan

_FACTORIES: dict[str, Callable[[], PolicySet]] = {}


def register(name: str) -> Callable[[Callable[[], PolicySet]], Callable[[], PolicySet]]:
    def deco(fn: Callable[[], PolicySet]) -> Callable[[], PolicySet]:
        if name in _FACTORIES:
            raise ValueError(f"policy profile {name!r} registered twice")
        _FACTORIES[name] = fn
        return fn

    return deco


def policy_set(name: str) -> PolicySet:
    try:
        return _FACTORIES[name]()
    except KeyError:
        raise KeyError(f"unknown policy profile {name!r}; known: {', '.join(sorted(_FACTORIES))}") from None


def names() -> list[str]:
    return sorted(_FACTORIES)


@register("foundation")
def _foundation() -> PolicySet:
    from .placement.planner import planner_for
    from .reprovisioning.simple import ReclassifyOnViolation

    return PolicySet(profile="foundation", version="3", profiling=DefaultProfilingPlan(),
                     classifier=ObservedOnlyClassifier(), admission=AdmitAll(),
                     planner=planner_for("least-loaded"), reprovisioner=ReclassifyOnViolation())


# --- Sextant, Paragon and reservation + Paragon (sextant_core.planning.policysets) -------


@register("sextant")
def _sextant() -> PolicySet:
    from .planning.policysets import sextant_policy_set

    return sextant_policy_set()


@register("sextant-dense")
def _sextant_dense() -> PolicySet:
    """`sextant` profiling every platform and every interference source (`policysets.DENSE_PROFILING`)."""
    from .planning.policysets import DENSE_PROFILING, sextant_policy_set

    return sextant_policy_set(name="sextant-dense", profiling=DENSE_PROFILING)


@register("paragon")
def _paragon() -> PolicySet:
    from .planning.policysets import paragon_policy_set

    return paragon_policy_set()


@register("reservation-paragon")
def _reservation_paragon() -> PolicySet:
    from .planning.policysets import reservation_paragon_policy_set

    return reservation_paragon_policy_set()


# --- monitoring and reprovisioning (sextant_core.reprovisioning) -------------------------


@register("sextant-adaptive")
def _sextant_adaptive() -> PolicySet:
    """`sextant` plus the adjustment ladder (`reprovisioning.adaptive.Adaptive`); its planner
    proposes the migrations."""
    from dataclasses import replace

    from .planning.policysets import sextant_policy_set
    from .reprovisioning.adaptive import VERSION, Adaptive

    base = sextant_policy_set(name="sextant-adaptive")
    return replace(base, version=f"{base.version}+{VERSION}", reprovisioner=Adaptive(planner=base.planner))


@register("no-adaptation")
def _no_adaptation() -> PolicySet:
    """`sextant` that never adjusts a running workload (the `no-adaptation` baseline)."""
    from .planning.policysets import sextant_policy_set

    return sextant_policy_set(name="no-adaptation")
