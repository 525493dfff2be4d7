"""Named policy sets. Later issues register richer ones (`sextant`, `paragon`, baselines).

Earlier versions: a decision records its profile and policy version, and a log outlives the code,
so `policy_set("NAME@VERSION")` builds profile NAME as it was at VERSION where the profile keeps
it (`register_past`); replay asks for it when the current version differs from the recorded one
(`sextant_core.replay`). `names()` lists the current profiles only.
"""

from __future__ import annotations

from collections.abc import Callable

from .policies import AdmitAll, ObservedOnlyClassifier, PolicySet
from .profiling.plan import DefaultProfilingPlan

_FACTORIES: dict[str, Callable[[], PolicySet]] = {}
_PAST: dict[str, Callable[[str], PolicySet]] = {}  # name -> factory(version), KeyError if not kept
AT = "@"
VC = "~vc="


def at_version(name: str, version: str) -> str:
    """The profile name that denotes `name` at policy version `version` (before a `~vc=` part)."""
    head, vc, vc_policy = name.partition(VC)
    return f"{head}{AT}{version}{vc}{vc_policy}"


def register(name: str) -> Callable[[Callable[[], PolicySet]], Callable[[], PolicySet]]:
    def deco(fn: Callable[[], PolicySet]) -> Callable[[], PolicySet]:
        if name in _FACTORIES:
            raise ValueError(f"policy profile {name!r} registered twice")
        _FACTORIES[name] = fn
        return fn

    return deco


def register_past(name: str) -> Callable[[Callable[[str], PolicySet]], Callable[[str], PolicySet]]:
    """Register the builder of `name` at an earlier version (it raises KeyError for a version it
    does not keep)."""
    def deco(fn: Callable[[str], PolicySet]) -> Callable[[str], PolicySet]:
        if name in _PAST:
            raise ValueError(f"past versions of {name!r} registered twice")
        _PAST[name] = fn
        return fn

    return deco


def with_vc_policy(name: str, vc_policy: str) -> str:
    """The profile `name` whose virtual clusters are allocated by `vc_policy` (a
    `sextant_core.fairness` policy): `name` itself for the default, else `NAME~vc=POLICY` — the
    name every decision records, so replay rebuilds the same policy set."""
    from .fairness.platform import DEFAULT_POLICY, check_policy

    return name if check_policy(vc_policy) == DEFAULT_POLICY else f"{name}{VC}{vc_policy}"


def policy_set(name: str) -> PolicySet:
    """The policy set `name` (current version), or `NAME@VERSION` (an earlier version kept);
    either followed by `~vc=POLICY` (`with_vc_policy`)."""
    head, vc, vc_policy = name.partition(VC)
    if vc:
        from dataclasses import replace

        from .fairness.platform import check_policy

        try:
            check_policy(vc_policy)
        except ValueError as exc:
            raise KeyError(str(exc)) from None
        return replace(policy_set(head), profile=name, vc_policy=vc_policy)
    base, at, version = name.partition(AT)
    if at:
        try:
            return _PAST[base](version)
        except KeyError:
            raise KeyError(f"policy profile {base!r} has no version {version!r} kept") from None
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


def _sextant_at(name: str, version: str, **kw: object) -> PolicySet:
    """A `sextant`-based profile at an earlier planner version (`policysets.PLANNER_VERSIONS`)."""
    from .planning.policysets import sextant_policy_set

    return sextant_policy_set(name=name, version=version, **kw)  # type: ignore[arg-type]


@register_past("sextant")
def _sextant_past(version: str) -> PolicySet:
    return _sextant_at("sextant", version)


@register_past("sextant-dense")
def _sextant_dense_past(version: str) -> PolicySet:
    from .planning.policysets import DENSE_PROFILING

    return _sextant_at("sextant-dense", version, profiling=DENSE_PROFILING)


@register_past("no-adaptation")
def _no_adaptation_past(version: str) -> PolicySet:
    return _sextant_at("no-adaptation", version)


@register("sextant-dense")
def _sextant_dense() -> PolicySet:
    """`sextant` profiling every platform and every interference source (`policysets.DENSE_PROFILING`)."""
    from .planning.policysets import DENSE_PROFILING, sextant_policy_set

    return sextant_policy_set(name="sextant-dense", profiling=DENSE_PROFILING)


@register("sextant-adaptive-profiling")
def _sextant_adaptive_profiling() -> PolicySet:
    """`sextant` profiling by prior uncertainty within 10 runs a workload
    (`policysets.ADAPTIVE_PROFILING`, `profiling.adaptive`)."""
    from .planning.policysets import ADAPTIVE_PROFILING, sextant_policy_set

    return sextant_policy_set(name="sextant-adaptive-profiling", profiling=ADAPTIVE_PROFILING)


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

    from .planning.policysets import ADAPTATION_VERSION, sextant_policy_set
    from .reprovisioning.adaptive import LADDERS, VERSION, Adaptive

    base = sextant_policy_set(name="sextant-adaptive", version=ADAPTATION_VERSION)
    return replace(base, version=f"{base.version}+{VERSION}",
                   reprovisioner=Adaptive(planner=base.planner, params=LADDERS[VERSION]))


@register_past("sextant-adaptive")
def _sextant_adaptive_past(version: str) -> PolicySet:
    """`sextant-adaptive` at `PLANNER+LADDER`: an earlier planner version and a ladder version
    kept in `reprovisioning.adaptive.LADDERS`."""
    from dataclasses import replace

    from .reprovisioning.adaptive import LADDERS, Adaptive

    planner, plus, ladder = version.partition("+")
    if not plus or ladder not in LADDERS:
        raise KeyError(version)
    base = _sextant_at("sextant-adaptive", planner)
    return replace(base, version=version, reprovisioner=Adaptive(planner=base.planner, params=LADDERS[ladder]))


@register("no-adaptation")
def _no_adaptation() -> PolicySet:
    """`sextant` that never adjusts a running workload (the `no-adaptation` baseline)."""
    from .planning.policysets import ADAPTATION_VERSION, sextant_policy_set

    return sextant_policy_set(name="no-adaptation", version=ADAPTATION_VERSION)
