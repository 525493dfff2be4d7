"""Everything a run derives from (scenario, seed) alone — shared by every profile of a `compare`.

Building it once and handing it to each profile's engine is both faster and the guarantee of common
random numbers: the same arrivals, the same ground truths, the same server failures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import groundtruth, interference
from .arrivals import Submission, rng_for, submissions
from .platforms import Catalogue, Platform, catalogue, server_ids
from .profiler import Profiler
from .scenarios import Scenario
from .workloads.base import WorkloadTruth
from .workloads.performance import concept_matrix


@dataclass(frozen=True, slots=True)
class Failure:
    at: float
    server_id: str
    repaired_at: float


@dataclass(frozen=True, slots=True)
class Setup:
    scenario: Scenario
    seed: int
    gt: groundtruth.GroundTruth
    cat: Catalogue
    servers: tuple[tuple[str, Platform], ...]
    scale: np.ndarray
    subs: tuple[Submission, ...]
    truths: dict[str, WorkloadTruth]
    failures: tuple[Failure, ...]
    horizon: float
    model: interference.InterferenceModel
    profiler: Profiler

    @property
    def twin_version(self) -> str:
        """`twin_version` of the world this setup was drawn in (`Scenario.world`)."""
        return groundtruth.world_version(self.scenario.world)

    @property
    def demand_capacity_ratio(self) -> float:
        """Σ needed cores of all workloads / cluster cores: the load a scenario offers if everything
        ran at once (an upper bound of the concurrent demand; Paragon §5 defines load by cores)."""
        return sum(s.truth.needed_cores for s in self.subs) / self.cat.cores

    def peak_demand_ratio(self) -> float:
        """Peak over time of the cores concurrently needed if every workload ran ideally from its
        arrival for its ideal time, over cluster cores."""
        edges: list[tuple[float, int]] = []
        for s in self.subs:
            edges.append((s.at, s.truth.needed_cores))
            edges.append((s.at + s.truth.ideal_s, -s.truth.needed_cores))
        edges.sort()
        cur = peak = 0
        for _, d in edges:
            cur += d
            peak = max(peak, cur)
        return peak / self.cat.cores


def _failures(sc: Scenario, seed: int, servers: list[tuple[str, Platform]], horizon: float) -> tuple[Failure, ...]:
    if sc.failures is None:
        return ()
    rng = rng_for(seed, "failures")
    out: list[Failure] = []
    for sid, _ in servers:
        t = 0.0
        while True:
            t += float(rng.exponential(sc.failures.mtbf_s))
            if t >= horizon:
                break
            repair = float(rng.exponential(sc.failures.mttr_s))
            out.append(Failure(at=round(t, 6), server_id=sid, repaired_at=round(t + repair, 6)))
            t += repair
    out.sort(key=lambda f: (f.at, f.server_id))
    return tuple(out)


def prepare(sc: Scenario, seed: int) -> Setup:
    gt = groundtruth.load(groundtruth.world_file(sc.world))
    cat = catalogue(sc.catalogue)
    concepts = concept_matrix(cat, gt)
    subs = submissions(sc, seed, cat, concepts, gt)
    servers = server_ids(cat)
    last = max((s.at for s in subs), default=0.0)
    longest = max((s.truth.ideal_s for s in subs), default=0.0)
    horizon = sc.horizon_s if sc.horizon_s is not None else last + 3.0 * longest + 3600.0
    model = interference.model(sc.interference_model, gt)
    scale = interference.pressure_scale(cat, gt)
    return Setup(scenario=sc, seed=seed, gt=gt, cat=cat, servers=tuple(servers), scale=scale,
                 subs=tuple(subs), truths={s.workload_id: s.truth for s in subs},
                 failures=_failures(sc, seed, servers, horizon), horizon=horizon, model=model,
                 profiler=Profiler(cat, gt, model, scale, seed, sc.noise_scale))
