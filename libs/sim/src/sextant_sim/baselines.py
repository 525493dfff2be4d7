"""The baseline profiles of the papers as `PolicySet`s, runnable by the twin.

Names (exactly): `least-loaded`, `heterogeneity-oblivious`, `interference-oblivious`, `random`,
`reservation-least-loaded`, `oracle`. All but `oracle` get their planner from the core's placement
framework (`sextant_core.placement.planner_for(name)`, policy version `1+placement-framework`);
`framework_planner` falls back to the core's `FirstFitPlanner` (version `1+first-fit`) only for a
name the framework does not register — none of these.
Their classifier is the classification engine (`CollaborativeClassifier`, seeded with
the twin's offline campaign — what Paragon's NH/NI use, Paragon's own classification), so every
profile decides on the same kind of information; `classifier="estimates"` swaps in the estimate
port instead (`estimates.py`: ground truth + Table III noise — the planning side alone, as the
baselines were measured before the engine existed), and a `Classifier` object may be passed.
`oracle` places with the ground truth (`oracle.py`); it is an upper bound, not a policy Sextant
could run, so its classifier (which it never reads) is always the cheap estimate port.

`oracle-estimates` is the oracle's planner fed the estimate port instead of the truth
(`oracle.EstimatedOracleView`): the information ladder's second rung. Its variants
(`ORACLE_ESTIMATES`) scale the port's noise (× 0.5, × 2) or keep only the platform-speed or only
the interference noise. Their view is built by `oracle.oracle_view` (the runner binds it to the world).
`oracle-measured-dense` (`ORACLE_MEASURED`) is the oracle's planner fed the rows the classification
engine returns under the dense profiling plan (`oracle.MeasuredOracleView`): its classifier and
profiling plan are `sextant-dense`'s (`classifier=` does not apply), the rest is the oracle's.

`sextant-true-rows` is `sextant` fed the *true* classification rows: the estimate port with its
noise at 0 (`EstimateSource.variant(0.0)`: the true per-platform speeds, scale-up and scale-out
shapes, and the interference scores the microbenchmark ramp reads on the reference platform) —
the planning side alone, against `oracle` (the same information, placed by the truth's planner).
Its classifier is fixed: `classifier=` does not apply to it.

`sextant-reference-rows` / `sextant-reference-dense` (`REFERENCE_ROWS`) are `sextant` /
`sextant-dense` fed the reference estimator's posterior rows from exactly the entries their plan
measured (`refrows.py`, a sanctioned truth reader; docs/quality/information.md): the QoS any
classifier could reach from those entries. They need the run's `setup` (`policy_set(setup=...)`).

`reservation-least-loaded` (Quasar §6.5 "reservation + LL") places, least-loaded, the *reservation*
of `reservations.py` (user over-/under-provisioning for single-node jobs, framework self-sizing
for analytics, peak provisioning by an autoscaler for services) instead of the requirement;
`reservation-paragon` (a planning profile) gets the same sizer here.

Every profile profiles (the default plan), admits everything (`AdmitAll`) and never adapts
(`NoAdaptation`): the baselines differ only where the papers' baselines differ — in placement.

Versions of the four placement baselines (`BASELINE_VERSIONS`; `least-loaded@2` etc., the
unsuffixed name is version 1, unchanged): 1 classifies with the default engine
(`CollaborativeClassifier()`, engine 1) and profiles with the papers' plan (`DefaultProfilingPlan()`,
5 runs); 2 uses `sextant` 9's classification engine (`policysets.ENGINE_OF["9"]`) and profiling plan
(`policysets.PROFILING_OF["9"]`, the adaptive plan, ≤ 10 runs) — the decision-quality
acceptance's "best baseline": the baselines on the same engine and profiling plan as `sextant`
(docs/quality/planning.md, "Stress world against the baselines at version 2"). Version 2 is pinned to `sextant` 9,
not to whatever `sextant`'s default later becomes, so its decisions replay.
Profiles registered in `sextant_core.profiles` (e.g. `foundation`, later `sextant`, `paragon`) run
as registered.
"""

from __future__ import annotations

from typing import Any

from sextant_core import profiles as core_profiles
from sextant_core.classification.classifier import CollaborativeClassifier
from sextant_core.placement import planner_for
from sextant_core.policies import (
    AdmitAll,
    Classifier,
    FirstFitPlanner,
    NoAdaptation,
    Planner,
    PolicySet,
    ProfilingPolicy,
)
from sextant_core.profiling.plan import DefaultProfilingPlan

from .estimates import EstimateClassifier, EstimateSource
from .oracle import (
    ORACLE_ESTIMATES,
    ORACLE_MEASURED,
    EstimatedOracleView,
    MeasuredOracleView,
    OraclePlanner,
    OracleView,
)
from .reservations import reservation_size

BASELINES = ("least-loaded", "heterogeneity-oblivious", "interference-oblivious", "random",
             "reservation-least-loaded", "oracle")
VERSION = "1"
# the placement baselines kept at more than one version ("NAME@VERSION"), and the `sextant`
# version whose classification engine and profiling plan each version uses (None: the default
# engine and the papers' plan)
VERSIONED = ("least-loaded", "heterogeneity-oblivious", "interference-oblivious", "random")
BASELINE_VERSIONS: dict[str, str | None] = {VERSION: None, "2": "9"}


def framework_planner(profile: str) -> tuple[Planner, str]:
    """(planner, source): the placement framework's planner for `profile`, or first-fit for a name it lacks.
    `reservation-*` profiles place the reservation (`reservations.reservation_size`)."""
    options: dict[str, Any] = {"sizer": reservation_size} if profile.startswith("reservation-") else {}
    try:
        return planner_for(profile, **options), "placement-framework"
    except KeyError:
        return FirstFitPlanner(), "first-fit"


def names() -> list[str]:
    versioned = {f"{b}@{v}" for b in VERSIONED for v in BASELINE_VERSIONS if v != VERSION}
    return sorted(set(BASELINES) | versioned | set(ORACLE_ESTIMATES) | set(ORACLE_MEASURED) | set(TRUE_ROWS)
                  | set(REFERENCE_ROWS) | set(core_profiles.names()))


def _engine_and_plan(version: str) -> tuple[Classifier, ProfilingPolicy]:
    """The classifier and profiling plan of baseline version `version` (`BASELINE_VERSIONS`)."""
    sextant = BASELINE_VERSIONS[version]
    if sextant is None:
        return CollaborativeClassifier(), DefaultProfilingPlan()
    from sextant_core.classification.engine import ENGINE_VERSIONS
    from sextant_core.planning import policysets

    return CollaborativeClassifier(ENGINE_VERSIONS[policysets.ENGINE_OF[sextant]]), policysets.PROFILING_OF[sextant]


CLASSIFIERS = ("cf", "estimates")
# profile -> (planning profile it runs, noise factor of the estimate port it is fed)
TRUE_ROWS: dict[str, tuple[str, float]] = {"sextant-true-rows": ("sextant", 0.0)}
# profile -> (planning profile it runs: its profiling plan and planner, prior draws per kind, scores
# posterior or as measured) of the reference rows (`refrows.ReferenceRowsClassifier`: the reference
# estimator's posterior rows from exactly the entries the plan measured; docs/quality/information.md)
REFERENCE_ROWS: dict[str, tuple[str, int, str]] = {"sextant-reference-rows": ("sextant", 4000, "posterior"),
                                                   "sextant-reference-dense": ("sextant-dense", 4000, "measured")}


def _planning_set(profile: str, classifier: Classifier, name: str | None = None) -> PolicySet:
    """The core's planning profile `profile` (`sextant`, `sextant-dense`, `paragon`) with the
    twin's `classifier`, named `name` (default: `profile`)."""
    from sextant_core.planning import policysets

    if profile == "paragon":
        return policysets.paragon_policy_set(classifier=classifier, name=name or profile)
    plans = {"sextant-dense": policysets.DENSE_PROFILING, "sextant-adaptive-profiling": policysets.ADAPTIVE_PROFILING}
    dense = {"profiling": plans[profile]} if profile in plans else {}
    return policysets.sextant_policy_set(classifier=classifier, name=name or profile, **dense)  # type: ignore[arg-type]


def policy_set(profile: str, *, estimates: EstimateSource, oracle: OracleView,
               classifier: Classifier | str | None = None, setup: Any = None) -> PolicySet:
    """The `PolicySet` for `profile` in a twin run (estimates and oracle view bound to it).
    `classifier`: a `Classifier`, or "cf" (the default: the classification engine) or
    "estimates" (the twin's estimate port) for the baselines and the planning profiles.
    `setup`: the run's `Setup` (typed `Any`: this decision-side module imports no ground-truth
    module), which only the reference-rows profiles (`REFERENCE_ROWS`) read."""
    if profile in REFERENCE_ROWS:  # a planning profile fed the reference estimator's rows
        if setup is None:
            raise ValueError(f"{profile} needs the run's setup (its prior is the scenario's generator)")
        from .refrows import ReferenceRowsClassifier

        base, draws, scores = REFERENCE_ROWS[profile]
        return _planning_set(base, ReferenceRowsClassifier(setup, draws, scores=scores), name=profile)
    if classifier is None:
        classifier = "cf"
    if isinstance(classifier, str) and classifier not in CLASSIFIERS:
        raise ValueError(f"unknown classifier {classifier!r}; known: {', '.join(CLASSIFIERS)}")
    chosen: Classifier | None = (EstimateClassifier(estimates) if classifier == "estimates"
                                 else None if classifier == "cf" else classifier)  # type: ignore[assignment]
    if profile in TRUE_ROWS:  # a planning profile fed the port without noise: the true rows
        base, factor = TRUE_ROWS[profile]
        return _planning_set(base, EstimateClassifier(estimates.variant(factor)), name=profile)
    if profile in ORACLE_MEASURED:  # the oracle's placement on the rows a planning profile measures
        if not isinstance(oracle, MeasuredOracleView):
            raise ValueError(f"{profile} needs its measured view: build it with oracle.oracle_view")
        fed = core_profiles.policy_set(ORACLE_MEASURED[profile])  # its classifier and plan, as it runs
        return PolicySet(profile=profile, version=f"{VERSION}+oracle", profiling=fed.profiling,
                         classifier=fed.classifier, admission=AdmitAll(), planner=OraclePlanner(oracle),
                         reprovisioner=NoAdaptation())
    if profile == "reservation-paragon":  # a planning profile, with the twin's reservation sizer
        from sextant_core.planning.policysets import reservation_paragon_policy_set

        return reservation_paragon_policy_set(classifier=chosen, sizer=reservation_size)
    if profile in ("sextant", "sextant-dense", "sextant-adaptive-profiling", "paragon") and chosen is not None:
        return _planning_set(profile, chosen)
    base, at, version = profile.partition("@")
    if at and base in VERSIONED:
        if version not in BASELINE_VERSIONS:
            raise KeyError(f"policy profile {base!r} has no version {version!r} kept")
    else:
        base, version = profile, VERSION
    is_oracle = profile == "oracle" or profile in ORACLE_ESTIMATES
    if base not in BASELINES and not is_oracle:
        return core_profiles.policy_set(profile)
    engine, plan = _engine_and_plan(version)
    if is_oracle:
        if profile in ORACLE_ESTIMATES and not isinstance(oracle, EstimatedOracleView):
            raise ValueError(f"{profile} needs its estimated view: build it with oracle.oracle_view")
        cls: Classifier = EstimateClassifier(estimates)
    else:
        cls = chosen if chosen is not None else engine
    if is_oracle:
        planner: Planner = OraclePlanner(oracle)
        source = "oracle"
    else:
        planner, source = framework_planner(base)
    return PolicySet(profile=profile, version=f"{version}+{source}", profiling=plan,
                     classifier=cls, admission=AdmitAll(), planner=planner, reprovisioner=NoAdaptation())
