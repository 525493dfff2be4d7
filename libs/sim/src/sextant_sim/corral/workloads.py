"""W1, W2, W3: the planner evaluation's workloads (jalaparti.md §4.6, Table 4.1), seeded.

A `Job` is one MapReduce stage: map tasks read `input_bytes` in equal blocks, write
`shuffle_bytes` of intermediate data, reducers fetch it and write `output_bytes`. Rates are the
CPU-bound per-task processing rates (bytes/s). `task_scale` divides task counts (bytes unchanged:
fewer, larger tasks) for quick runs; the statistics below hold at `task_scale = 1`.

- **W1** (Quantcast-derived): 100 jobs, 50 % small (5–50 tasks), 35 % medium (51–500), 15 % large
  (1 000–2 000), map tasks of 256 MB; selectivity (input / shuffle, and shuffle / output)
  log-uniform in [1/4, 4]; reducers = ⌈maps / 4⌉.
- **W2** (SWIM Yahoo): 400 jobs; 90 % tiny (input 10–200 MB, shuffle ≤ 75 MB, one or two maps), two
  jobs reading ≈ 5.5 TB (5.3–5.7 TB, 1 GB maps, shuffle half the input), the rest medium (1–100 GB).
- **W3** (Cosmos sample): 200 jobs; tasks, input and intermediate bytes lognormal with the Table 4.1
  medians and 95th percentiles (tasks 180 / 2 060, input 7.1 / 162.3 GB, intermediate 6 / 71.5 GB),
  drawn by stratified quantiles (one draw per 1/J-quantile band, shuffled) through a Gaussian
  copula (ρ = 0.95: bigger jobs have more tasks, so per-task bytes stay near the table's medians' ratio) so a 200-job sample hits the table; reducers = ⌈tasks / 5⌉.

- **SWIM** (Facebook 2010, the SWIM project's 24 one-hour samples: `data/swim-fb-2010/` (the repository's copy of `shared/data/`), a
  real mix, not a thesis workload): `swim` draws 200 of the file's 25 428 jobs, one per 1/J band
  of input bytes (stratified, so a batch's input quantiles follow the file's), and keeps each
  job's own input, shuffle and output bytes. [IMPL CHOICE] The file has no task counts: maps =
  ⌈input / 256 MB⌉ capped at 4 000 (larger jobs get larger blocks), reducers = one per GB (Hive's
  bytes per reducer then) of the larger of shuffle and output, capped at 999 (Model B charges a
  reducer its output: a map-only job writing 283 GB through one reducer was planned at 2 400 s,
  and the planner saw the whole batch as rack-time bound); bytes below 1 MB count as 1 MB (the twin has no
  map-only or empty jobs: a third of the file shuffles nothing); jobs that read the same input path
  read their own copies (the thesis's assumption, §4.4; `swim_rows` keeps the path ids).

Gap choices (the thesis gives only the statistics above): the class shares of W1, the medium jobs
of W2, the copula, the reducer counts and the per-task rates (log-uniform 50–200 MB/s).
"""

from __future__ import annotations

import gzip
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

import numpy as np
from scipy.stats import norm

MB = 1e6
GB = 1e9
TB = 1e12


@dataclass(frozen=True)
class Job:
    id: int
    maps: int
    reducers: int
    input_bytes: float
    shuffle_bytes: float
    output_bytes: float
    b_map: float  # CPU-bound map processing rate, bytes/s
    b_reduce: float
    arrival: float = 0.0

    @property
    def tasks(self) -> int:
        return self.maps + self.reducers


def _rates(rng: np.random.Generator) -> tuple[float, float]:
    lo, hi = math.log(50 * MB), math.log(200 * MB)
    return float(math.exp(rng.uniform(lo, hi))), float(math.exp(rng.uniform(lo, hi)))


def _scaled(maps: int, reducers: int, scale: float) -> tuple[int, int]:
    return max(1, round(maps / scale)), max(1, round(reducers / scale))


def w1(seed: int, task_scale: float = 1.0, n_jobs: int = 100) -> list[Job]:
    rng = np.random.default_rng([seed, 1])
    classes = rng.permutation(np.repeat([0, 1, 2], [n_jobs // 2, round(n_jobs * 0.35), n_jobs - n_jobs // 2 - round(n_jobs * 0.35)]))
    bounds = {0: (5, 50), 1: (51, 500), 2: (1000, 2000)}
    jobs = []
    for j, c in enumerate(classes.tolist()):
        lo, hi = bounds[c]
        tasks = int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
        tasks = min(hi, max(lo, tasks))
        reducers = max(1, math.ceil(tasks / 5))
        maps = tasks - reducers
        size = maps * 256 * MB
        s_map, s_red = (float(4.0 ** rng.uniform(-1, 1)) for _ in range(2))
        bm, br = _rates(rng)
        m, r = _scaled(maps, reducers, task_scale)
        jobs.append(Job(j, m, r, size, size / s_map, size / s_map / s_red, bm, br))
    return jobs


def w2(seed: int, task_scale: float = 1.0, n_jobs: int = 400) -> list[Job]:
    rng = np.random.default_rng([seed, 2])
    n_tiny = round(0.9 * n_jobs)
    kinds = rng.permutation(np.repeat([0, 1, 2], [n_tiny, 2, n_jobs - n_tiny - 2]))
    jobs = []
    for j, k in enumerate(kinds.tolist()):
        bm, br = _rates(rng)
        if k == 0:
            size = float(math.exp(rng.uniform(math.log(10 * MB), math.log(200 * MB))))
            shuffle = min(75 * MB, size * float(rng.uniform(0.05, 0.5)))
            maps, reducers = (1 if size <= 128 * MB else 2), 1
            jobs.append(Job(j, maps, reducers, size, shuffle, shuffle * float(rng.uniform(0.2, 1.0)), bm, br))
            continue
        if k == 1:
            size = float(rng.uniform(5.3, 5.7)) * TB
            maps = round(size / GB)
            shuffle = 0.5 * size
        else:
            size = float(math.exp(rng.uniform(math.log(1 * GB), math.log(100 * GB))))
            maps = math.ceil(size / (256 * MB))
            shuffle = size / float(4.0 ** rng.uniform(-1, 1))
        reducers = max(1, math.ceil(maps / 5))
        m, r = _scaled(maps, reducers, task_scale)
        jobs.append(Job(j, m, r, size, shuffle, shuffle / float(4.0 ** rng.uniform(-1, 1)), bm, br))
    return jobs


W3_TABLE = {"tasks": (180.0, 2060.0), "input": (7.1 * GB, 162.3 * GB), "shuffle": (6 * GB, 71.5 * GB)}
Z95 = float(norm.ppf(0.95))


def w3(seed: int, task_scale: float = 1.0, n_jobs: int = 200) -> list[Job]:
    rng = np.random.default_rng([seed, 3])
    # stratified normal scores: the i-th of J bands' midpoints, one permutation per margin, coupled
    # by a Gaussian copula (the shared factor keeps large jobs large in every margin)
    u = (np.arange(n_jobs) + 0.5) / n_jobs
    z = norm.ppf(u)
    shared = rng.permutation(z)
    rho = 0.95
    cols = {}
    for name, (med, p95) in W3_TABLE.items():
        own = rng.permutation(z)
        mixed = rho * shared + math.sqrt(1 - rho * rho) * own
        ranks = np.argsort(np.argsort(mixed, kind="stable"), kind="stable")
        sigma = math.log(p95 / med) / Z95
        cols[name] = med * np.exp(sigma * z[ranks])  # exact stratified marginals, copula order
    jobs = []
    for j in range(n_jobs):
        tasks = max(2, int(round(cols["tasks"][j])))
        reducers = max(1, math.ceil(tasks / 5))
        maps = tasks - reducers
        size, shuffle = float(cols["input"][j]), float(cols["shuffle"][j])
        bm, br = _rates(rng)
        m, r = _scaled(maps, reducers, task_scale)
        jobs.append(Job(j, m, r, size, shuffle, shuffle / float(4.0 ** rng.uniform(-1, 1)), bm, br))
    return jobs


# the repository's copy of shared/data/swim-fb-2010 (New BSD; LICENSE beside it), so tests run on a clean clone
SWIM_TRACE = (Path(__file__).resolve().parents[5] / "data" / "swim-fb-2010"
              / "FB-2010_samples_24_times_1hr_withInputPaths_0.tsv.gz")
SWIM_MIN_BYTES = 1 * MB
SWIM_MAX_MAPS = 4000
SWIM_MAX_REDUCERS = 999


@dataclass(frozen=True)
class SwimTrace:
    """The SWIM file's columns: input, shuffle and output bytes, and the input path id per job."""

    input: np.ndarray
    shuffle: np.ndarray
    output: np.ndarray
    path: np.ndarray  # int: "inputPath17" → 17


@cache
def load_swim(path: Path = SWIM_TRACE) -> SwimTrace:
    """Read the SWIM FB-2010 file (tab-separated, no header; README beside it)."""
    cols: list[list[float]] = [[], [], [], []]
    with gzip.open(path, "rt") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            for c, k in enumerate((3, 4, 5)):
                cols[c].append(float(fields[k]))
            cols[3].append(float(fields[6].removeprefix("inputPath")))
    return SwimTrace(np.asarray(cols[0]), np.asarray(cols[1]), np.asarray(cols[2]), np.asarray(cols[3], dtype=np.int64))


def swim_rows(seed: int, n_jobs: int = 200, trace: SwimTrace | None = None) -> np.ndarray:
    """Indices of the file's jobs in a batch: one uniform draw in each of `n_jobs` equal-count bands
    of the jobs sorted by input bytes (ties by file order), in a seeded random order."""
    t = load_swim() if trace is None else trace
    rng = np.random.default_rng([seed, 4])
    by_input = np.argsort(t.input, kind="stable")
    edges = np.linspace(0, len(by_input), n_jobs + 1).round().astype(np.int64)
    picks = np.array([by_input[rng.integers(lo, hi)] for lo, hi in zip(edges[:-1], edges[1:], strict=True)])
    return picks[rng.permutation(n_jobs)]


def swim(seed: int, task_scale: float = 1.0, n_jobs: int = 200, trace: SwimTrace | None = None) -> list[Job]:
    """The SWIM batch (module docstring): the rows of `swim_rows`, task counts from their bytes."""
    t = load_swim() if trace is None else trace
    rows = swim_rows(seed, n_jobs, t)
    rng = np.random.default_rng([seed, 5])
    jobs = []
    for j, i in enumerate(rows.tolist()):
        size, shuffle, out = (max(SWIM_MIN_BYTES, float(x[i])) for x in (t.input, t.shuffle, t.output))
        maps = min(SWIM_MAX_MAPS, math.ceil(size / (256 * MB)))
        reducers = min(SWIM_MAX_REDUCERS, math.ceil(max(shuffle, out) / GB))
        bm, br = _rates(rng)
        m, r = _scaled(maps, reducers, task_scale)
        jobs.append(Job(j, m, r, size, shuffle, out, bm, br))
    return jobs


WORKLOADS: dict[str, Callable[..., list[Job]]] = {"W1": w1, "W2": w2, "W3": w3, "SWIM": swim}


def with_arrivals(jobs: list[Job], seed: int, horizon: float = 3600.0) -> list[Job]:
    """The online scenario: arrivals uniform over [0, horizon) seconds (§4.5, 60 minutes)."""
    at = np.random.default_rng([seed, 9]).uniform(0.0, horizon, size=len(jobs))
    return [replace(j, arrival=float(a)) for j, a in zip(jobs, at, strict=True)]
