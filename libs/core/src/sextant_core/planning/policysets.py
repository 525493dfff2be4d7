"""The planning policy sets, registered in `sextant_core.profiles` under these names:

| profile | admission | planner (size → placement) |
|---|---|---|
| `sextant` | ARQ on the Sextant assessment | Quasar joint sizing to the target on Paragon's filters, the single node chosen by satisficing (`SextantPlanner`) |
| `paragon` | ARQ on Paragon's availability | the workload's *request* placed by Paragon's greedy selector (`ParagonPlanner`) |
| `reservation-paragon` | admit all | a *reservation* placed by Paragon's greedy selector |

All three profile with the default plan (`DefaultProfilingPlan`), classify with the collaborative
filtering engine (`CollaborativeClassifier`) unless a classifier is passed, and never adapt a
running workload (`NoAdaptation`: reprovisioning is `sextant_core.reprovisioning`).

`reservation-paragon` is Quasar §6's "reservation + Paragon" baseline: what differs from `paragon`
is the size placed, the reservation, which the caller supplies as a `Sizer` (default: the
workload's request, i.e. the user's own reservation — as for the placement framework's
`reservation-least-loaded`); and, as in Quasar's evaluation, it has no ARQ: a reservation that
does not fit waits as a deferred placement.

Versions: `sextant` is at `VERSION` (its classification engine: `ENGINE_OF`); `PLANNER_VERSIONS` keeps the planner parameters of every
earlier version whose decisions differ (5.1: the ranked single-node choice), so a log recorded
under it still replays (`sextant_policy_set(version=...)`, `profiles.policy_set("NAME@VERSION")`);
6: a scale-out spread that ended on one node gave it the whole request's memory, unchecked
(`SextantParams.scale_out_memory`); 6.1 and earlier: no resident protection beyond D1
(`SextantParams.residents`); 7 and earlier: ARQ's strict FIFO per class (`ARQ_VERSIONS`); 8 and
earlier: one unit band for every target (`SizingParams.units = "wide"`), the papers' profiling plan
(`PROFILING_OF`) and every predicted platform level taken as is.
`paragon` and `reservation-paragon` are at `PARAGON_VERSION`.

Hooks for the twin (`libs/sim`): `sextant_policy_set(classifier=...)`,
`paragon_policy_set(classifier=...)` and `reservation_paragon_policy_set(classifier=..., sizer=...)`
build the same sets with the twin's classifier / reservation sizer.
"""

from __future__ import annotations

from ..admission.arq import ArqAdmission, ArqParams
from ..admission.availability import ParagonAvailability, TargetAvailability
from ..placement.request import Sizer, requested_size
from ..placement.table import TableIndex
from ..policies import AdmitAll, Classifier, NoAdaptation, PolicySet, ProfilingPolicy
from ..profiling.adaptive import AdaptiveProfilingPlan
from ..profiling.plan import DefaultProfilingPlan
from .assess import Assessor, SizingParams
from .greedy import GreedyParams
from .paragon import ParagonPlanner
from .satisfice import SatisficeParams
from .sextant import SextantParams, SextantPlanner

# 6: the satisficing single-node choice (`satisfice.py`); 6.1: scale-out node memory as checked;
# 7: resident protection (`protect.py`); 8: ARQ admits past its class queue (`ArqParams.class_fifo`),
# the as-close-as-possible choice guarded, the waived row the least shortfall (`SextantParams`), and
# the classification engine's analog fold-in (engine 2, `ENGINE_OF`)
# 8.1: throughput and time targets read against rows of relative speed with a narrower band, and a
# multi-node kind's relative requirement from its requested allocation (`SizingParams.units`);
# 8.2: the planner of 8 with classification engine 3 (censored entries, collapse candidates, the
# other matrices' evidence); 9: the planner of 8.1 with engine 3, profiling at its budget — the
# adaptive plan, ≤ 10 runs a workload (`PROFILING_OF`; docs/quality/profiling.md, "Sextant 9");
# 9.1: 9 with engine 3.1 — the caused scores read past the profiling ramp's censoring at 0
# (`classification.engine.debias_caused`; docs/quality/profiling.md, "Planner fed engine rows"):
# `sextant-dense` seeds 1–2 +2.9 / +4.2 points, `sextant` seeds 1–5 mean 0.423 → 0.421 (not better)
# 9.2: 9 with engine 3.2 — services' scale-up reads a measured 0 through shifted analogs
# (`classification.analogs.shift_bank`; docs/classification/engine-3.2.md)
# 9.3: 9 without the D1 check for workloads with a target (`SextantParams.d1_filter`); seeds 1/2
# 0.362/0.453 → 0.380/0.432: not better (docs/quality/planning.md, "Which interference check loses")
# 9.4: 9 with, for estimated rows, a single node sized to at least the request
# (`SizingParams.request_floor`) and the platforms predicted more than 5 % (the QoS bar's width)
# below the best feasible one ordered last, satisficing and as close as possible
# (`SatisficeParams.platform_tier`); seeds 1/2 0.362/0.453 → 0.453/0.496 (floor alone 0.439 on
# seed 1; tier 0.02: 0.456/0.490); docs/quality/planning.md, "Sizing and platform choice"
VERSION = "9.4"
# the planner of the adaptation profiles (`sextant-adaptive`, `no-adaptation`, the reprovisioning
# baselines): 9 until their studies (docs/adaptation.md: phases, stragglers, diurnal) are re-run at 9.4
ADAPTATION_VERSION = "9"
PARAGON_VERSION = "5.1"
# measured for version 9 on paragon-ec2-2500 seed 1 with the adaptive plan (QoS met 0.361; docs/
# quality/profiling.md, "Sextant 9") and not adopted: `SizingParams.unmeasured_discount` 0.05 → 0.351,
# 0.12 → 0.346; `SizingParams.slow_gate` 0.05 → 0.346; the coverage platform choice → 0.320
_WIDE = SizingParams(units="wide")  # the unit reading of planner 8 and older
# sextant planner version -> its parameters (the current one and every earlier one still replayed)
PLANNER_VERSIONS: dict[str, SextantParams] = {
    VERSION: SextantParams(sizing=SizingParams(request_floor=1.0), satisfice=SatisficeParams(platform_tier=0.05)),
    "9.3": SextantParams(d1_filter=False),
    "9.2": SextantParams(),
    "9.1": SextantParams(),
    "9": SextantParams(),
    "8.2": SextantParams(sizing=_WIDE),
    "8.1": SextantParams(),
    "8": SextantParams(sizing=_WIDE),
    "7": SextantParams(sizing=_WIDE, closest_guard=False, resident_waive="fewest"),
    "6.1": SextantParams(sizing=_WIDE, residents="d1", closest_guard=False, resident_waive="fewest"),
    "6": SextantParams(sizing=_WIDE, scale_out_memory="request", residents="d1", closest_guard=False,
                       resident_waive="fewest"),
    "5.1": SextantParams(sizing=_WIDE, choice="rank", scale_out_memory="request", residents="d1",
                         closest_guard=False, resident_waive="fewest")}
# sextant planner version -> the ARQ parameters of its admission (`ArqParams()` when not listed)
ARQ_VERSIONS: dict[str, ArqParams] = {v: ArqParams(class_fifo=False) for v in (VERSION, "9.3", "9.2", "9.1", "9", "8.2", "8.1", "8")}


# sextant version -> the classification engine's version (`classification.engine.ENGINE_VERSIONS`);
# versions not listed classify with engine 1 (as do `paragon`, `reservation-paragon` and the baselines)
ENGINE_OF: dict[str, str] = {VERSION: "3", "9.3": "3", "9.2": "3.2", "9.1": "3.1", "9": "3", "8.2": "3", "8.1": "2", "8": "2"}


def _classifier(classifier: Classifier | None, engine: str = "1") -> Classifier:
    if classifier is not None:
        return classifier
    from ..classification.classifier import CollaborativeClassifier
    from ..classification.engine import ENGINE_VERSIONS

    return CollaborativeClassifier(ENGINE_VERSIONS[engine])


# `sextant-dense`: a profiling run on every platform and a ramp of every interference source
# (capped by what the cell has). Chosen on paragon-ec2-2500 seed 1 with the classification engine
# (docs/quality.md): QoS met 0.188 with the papers' 2 entries per row, 0.437 with 6 platforms and
# 10 sources, 0.527 with every platform and 10 sources — the engine's platform and interference
# errors (5–6 % and 13–17 points with 2 entries, docs/classification.md) are larger than the
# 5 % QoS margin. The price is profiling: 25 runs a workload instead of 5, in parallel (the twin
# charges their time, not the servers they occupy; docs/quality.md reports it).
DENSE_PROFILING = DefaultProfilingPlan(entries=64, interference_entries=64)
# `sextant-adaptive-profiling`: the platforms and interference sources whose prior uncertainty
# weighs most, within 10 runs a workload (docs/quality/profiling.md). platform_weight chosen on
# paragon-ec2-2500 seeds 1–2 (QoS met): 1 → 0.288 / 0.270 (2 platforms + 6 sources), 4 → 0.338 /
# 0.418, 20 → 0.385 / 0.448 (6 platforms + the 2 sources of the floor; a floor of 1 source: 0.376).
ADAPTIVE_PROFILING = AdaptiveProfilingPlan(max_runs=10, platform_weight=20.0)
# sextant version -> its profiling plan when none is passed (versions not listed: the papers' plan,
# `DefaultProfilingPlan()`); 9: `ADAPTIVE_PROFILING`, at most 10 runs a workload
PROFILING_OF: dict[str, ProfilingPolicy] = {v: ADAPTIVE_PROFILING for v in (VERSION, "9.3", "9.2", "9.1", "9")}


def sextant_policy_set(*, classifier: Classifier | None = None, params: SextantParams | None = None,
                       arq: ArqParams | None = None, name: str = "sextant",
                       profiling: ProfilingPolicy | None = None, version: str = VERSION) -> PolicySet:
    """`sextant` at `version` (a key of `PLANNER_VERSIONS`: KeyError otherwise); `params`, `arq`
    and `profiling` override that version's planner, admission (`ARQ_VERSIONS`) and profiling plan
    (`PROFILING_OF`)."""
    p = params or PLANNER_VERSIONS[version]
    arq = arq or ARQ_VERSIONS.get(version, ArqParams())
    assessor = Assessor(p.sizing)  # shared by admission and planning: one incremental index
    return PolicySet(profile=name, version=version, profiling=profiling or PROFILING_OF.get(version, DefaultProfilingPlan()),
                     classifier=_classifier(classifier, ENGINE_OF.get(version, "1")),
                     admission=ArqAdmission(TargetAvailability(assessor), arq),
                     planner=SextantPlanner(p, assessor=assessor), reprovisioner=NoAdaptation())


def paragon_policy_set(*, classifier: Classifier | None = None, params: GreedyParams | None = None,
                       arq: ArqParams | None = None, name: str = "paragon") -> PolicySet:
    index = TableIndex()
    return PolicySet(profile=name, version=PARAGON_VERSION, profiling=DefaultProfilingPlan(),
                     classifier=_classifier(classifier),
                     admission=ArqAdmission(ParagonAvailability(requested_size, index), arq),
                     planner=ParagonPlanner(params=params, index=index), reprovisioner=NoAdaptation())


def reservation_paragon_policy_set(*, classifier: Classifier | None = None, sizer: Sizer = requested_size,
                                   params: GreedyParams | None = None,
                                   name: str = "reservation-paragon") -> PolicySet:
    return PolicySet(profile=name, version=PARAGON_VERSION, profiling=DefaultProfilingPlan(),
                     classifier=_classifier(classifier), admission=AdmitAll(),
                     planner=ParagonPlanner(sizer=sizer, params=params), reprovisioner=NoAdaptation())
