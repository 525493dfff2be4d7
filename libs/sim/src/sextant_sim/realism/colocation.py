"""The pairwise co-location matrix of the twin, and the pair screen on a small platform.

`colocation_matrix(seed, rows=…, cols=…, world=…)`: single-node batch victims × co-runners on the
reference platform (the catalogue's high-end platform) at full occupancy; value = the victim's
speed factor next to that co-runner (co-located / alone), as measured — with the twin's own
profiling noise on each of the two runs, like the measured matrices REALISM.md's bands come from
(85 % of the true factors are within 1 % of 1, and without run-to-run noise those near-1 columns
are perfectly structured, which no measurement is). Victims and co-runners are
drawn from the world's own generator (`workloads.generate.generate`, the batch families of
`FAMILIES` round-robin, streams ``rng_for(seed, "realism-victim"|"realism-corunner", family, j)``:
no scenario workload uses them) and the factor is the world's own interference model
(`interference.model`, the graded one by default) — an observable outcome of the ground truth,
what a co-location experiment on real hardware would measure (REALISM.md, Gavel's form).

`interference_scores(seed, rows=…, world=…)`: the matrix the classifier fills — tolerated and
caused scores (20 columns) measured noise-free on the reference platform — reported beside the
outcome, never calibrated on.

`pair_keep_share(seed, pairs=…, world=…)`: the share of random batch pairs that both keep
≥ `KEEP` of their speed when they share a small platform (`SMALL_PLATFORM`) at half occupancy —
the second calibration screen: the co-location bands are measured on the reference platform and
do not fix how harsh the small platforms, where most work runs, are.
"""

from __future__ import annotations

import numpy as np

from .. import groundtruth, interference
from ..arrivals import rng_for
from ..platforms import Catalogue, catalogue
from ..workloads.base import WorkloadTruth
from ..workloads.generate import DrawOptions, generate
from ..workloads.performance import concept_matrix
from .stats import Matrix

FAMILIES = ("paragon-st", "paragon-mt", "paragon-mp", "paragon-io")
# every family of the bundled scenarios but memcached-large (one 24 h deployment): the all-family
# matrix, reported beside the batch one (multi-node families' caused multiplier is set on it)
ALL_FAMILIES = (*FAMILIES, "hadoop", "spark", "storm", "memcached", "webserver", "cassandra")
CATALOGUE = "paragon-ec2"
SMALL_PLATFORM = "m3.xlarge"  # 4 cores: the most common small EC2 type of the Paragon catalogue
KEEP = 0.98


def _draws(seed: int, stream: str, n: int, world: str, cat: Catalogue,
           families: tuple[str, ...] = FAMILIES) -> list[WorkloadTruth]:
    gt = groundtruth.load(groundtruth.world_file(world))
    concepts = concept_matrix(cat, gt)
    out = []
    for i in range(n):
        fam, j = families[i % len(families)], i // len(families)
        out.append(generate(f"{stream}:{fam}:{j}", fam, rng_for(seed, stream, fam, j), cat, concepts, gt,
                            DrawOptions()))
    return out


def _pair_factors(victims: list[WorkloadTruth], corunners: list[WorkloadTruth], world: str, cat: Catalogue,
                  platform: str, occupancy: float, model: str) -> np.ndarray:
    """(victims × co-runners) speed factor of the victim next to the co-runner on `platform`."""
    gt = groundtruth.load(groundtruth.world_file(world))
    m = interference.model(model, gt)
    scale = interference.pressure_scale(cat, gt)[cat.index(platform)]
    vc = np.stack([v.caused for v in victims]) / scale
    vt = np.stack([v.tolerated for v in victims])
    cc = np.stack([c.caused for c in corunners]) / scale
    ct = np.stack([c.tolerated for c in corunners])
    r, k = len(victims), len(corunners)
    c = np.stack([np.repeat(vc, k, axis=0), np.tile(cc, (r, 1))], axis=1)
    t = np.stack([np.repeat(vt, k, axis=0), np.tile(ct, (r, 1))], axis=1)
    f = m.factors(c, t, np.full(r * k, occupancy))
    return np.asarray(f[:, 0], dtype=float).reshape(r, k)


def colocation_matrix(seed: int, *, rows: int = 240, cols: int = 180, world: str = groundtruth.DEFAULT_WORLD,
                      model: str = "graded", measured: bool = True,
                      families: tuple[str, ...] = FAMILIES) -> Matrix:
    """The victims' speed factors; `measured` (default) as an experiment measures them: the ratio of
    two runs (co-located, alone), each with the twin's profiling noise (log-normal, sd
    `noise.perf_sd`, as `profiler.Profiler.measure`), so log sd perf_sd·√2 per pair, from the
    stream ``rng_for(seed, "realism-measure")``. `measured=False`: the noise-free truth.
    `families` (default the batch ones) are drawn round-robin for both victims and co-runners; a
    multi-node workload stands for one of its nodes (its per-node caused pressure, at peak load)."""
    cat = catalogue(CATALOGUE)
    victims = _draws(seed, "realism-victim", rows, world, cat, families)
    corunners = _draws(seed, "realism-corunner", cols, world, cat, families)
    f = _pair_factors(victims, corunners, world, cat, cat.reference().platform_id, 1.0, model)
    if measured:
        sd = groundtruth.load(groundtruth.world_file(world)).noise.perf_sd
        e = rng_for(seed, "realism-measure").standard_normal((2, rows, cols))
        f = f * np.exp(sd * (e[0] - e[1]))
    return Matrix(row_ids=tuple(v.ref for v in victims), col_ids=tuple(c.ref for c in corunners), values=f)


def interference_scores(seed: int, *, rows: int = 400, world: str = groundtruth.DEFAULT_WORLD,
                        model: str = "graded") -> Matrix:
    """Batch workloads × (tolerated, caused) scores per source on the reference platform, as the
    twin's noise-free microbenchmark ramp measures them (caused floored at 0.01 to stay positive)."""
    cat = catalogue(CATALOGUE)
    gt = groundtruth.load(groundtruth.world_file(world))
    m = interference.model(model, gt)
    ws = _draws(seed, "realism-victim", rows, world, cat)
    vals = []
    for w in ws:
        tol = interference.tolerated_scores(m, w.caused, w.tolerated, 1.0)
        cau = interference.caused_scores(m, w.caused, 1.0)
        vals.append(np.concatenate([tol, np.maximum(cau, 0.01)]))
    cols = tuple(f"tolerated:{s}" for s in groundtruth.SOURCES) + tuple(f"caused:{s}" for s in groundtruth.SOURCES)
    return Matrix(row_ids=tuple(w.ref for w in ws), col_ids=cols, values=np.array(vals))


def pair_keep_share(seed: int, *, pairs: int = 2000, world: str = groundtruth.DEFAULT_WORLD,
                    model: str = "graded", platform: str = SMALL_PLATFORM) -> float:
    """Share of random batch pairs (one per row, i-th victim with i-th co-runner) that both keep
    ≥ `KEEP` of their speed together on `platform` at half occupancy."""
    cat = catalogue(CATALOGUE)
    a = _draws(seed, "realism-pair-a", pairs, world, cat)
    b = _draws(seed, "realism-pair-b", pairs, world, cat)
    gt = groundtruth.load(groundtruth.world_file(world))
    m = interference.model(model, gt)
    scale = interference.pressure_scale(cat, gt)[cat.index(platform)]
    c = np.stack([np.stack([x.caused, y.caused]) for x, y in zip(a, b, strict=True)]) / scale
    t = np.stack([np.stack([x.tolerated, y.tolerated]) for x, y in zip(a, b, strict=True)])
    f = m.factors(c, t, np.full(pairs, 0.5))
    return float(np.mean(np.all(f >= KEEP, axis=1)))
