"""The DAG library of the Kwiken request simulator: a documented generator of service DAGs.

Shapes follow jalaparti.md §2.1 and the issue's bounds: a front-end source stage, layers of
parallel stages, an aggregation sink.

- Stage count: lognormal with median 14 and 90th percentile 81 (§2.1), clipped to [4, 150].
- Depth (middle layers): uniform in [1, ⌈1.5·√(N−2)⌉], at least enough layers that none holds more
  than 40 stages, at most N−2.
- Edges: each stage of a layer draws its in-degree `1 + ⌊Exp(mean 1.5)⌋` (capped at 40 and the
  previous layer's size) from the previous layer; a stage left without a successor gets an edge to
  a random stage of the next layer; the sink reads the whole last layer.
- High fan-out stages: each middle stage independently with probability 0.1, with a responder count
  log-uniform in [100, 2000]; they may return partial answers.
- Stage latency laws: `families.draw_family`; costs: `StageFamily.cost`.

`library(seed, count)` is a pure function of its arguments; `dag_of_size(seed, n)` draws one DAG of
exactly `n` stages (the 150-stage DAG of the combined experiment).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sextant_core.kwiken.dag import StageDag

from .families import StageFamily, draw_family

FANOUT_PROB = 0.1
RESPONDERS = (100, 2000)
MAX_FAN_IN = 40


@dataclass(frozen=True)
class Service:
    """A DAG and the latency law of each of its stages."""

    name: str
    dag: StageDag
    families: tuple[StageFamily, ...]


def dag_of_size(seed: int, index: int, n: int) -> Service:
    rng = np.random.default_rng([seed, 2323, index, n])
    n = int(min(150, max(4, n)))
    mid = n - 2
    min_depth = -(-mid // MAX_FAN_IN)
    drawn = int(rng.integers(1, int(np.ceil(1.5 * np.sqrt(mid))) + 1))
    depth = min(mid, max(min_depth, drawn))
    sizes = np.ones(depth, int)
    for _ in range(mid - depth):
        open_layers = np.flatnonzero(sizes < MAX_FAN_IN)
        sizes[rng.choice(open_layers)] += 1
    layers: list[list[int]] = [[0]]
    nxt = 1
    for k in sizes:
        layers.append(list(range(nxt, nxt + int(k))))
        nxt += int(k)
    layers.append([n - 1])
    edges: set[tuple[int, int]] = set()
    for prev, cur in zip(layers[:-2], layers[1:-1], strict=True):
        for s in cur:
            k = int(min(len(prev), MAX_FAN_IN, 1 + int(rng.exponential(1.5))))
            for p in rng.choice(prev, size=k, replace=False):
                edges.add((int(p), s))
        for p in prev:
            if not any(a == p for a, _ in edges):
                edges.add((p, int(rng.choice(cur))))
    for p in layers[-2]:
        edges.add((p, n - 1))
    fams: list[StageFamily] = []
    for s in range(n):
        fanout = 1
        if 0 < s < n - 1 and rng.random() < FANOUT_PROB:
            fanout = int(np.exp(rng.uniform(*np.log(RESPONDERS))))
        fams.append(draw_family(rng, fanout))
    dag = StageDag(tuple(f"stage-{s}" for s in range(n)), tuple(sorted(edges)),
                   tuple(f.cost() for f in fams), tuple(f.responders for f in fams),
                   tuple(f.responders > 1 for f in fams))
    return Service(f"dag-{seed}-{index}", dag, tuple(fams))


def stage_count(rng: np.random.Generator) -> int:
    sigma = np.log(81 / 14) / 1.2816
    return int(min(150, max(4, round(float(np.exp(np.log(14) + sigma * rng.standard_normal()))))))


def library(seed: int, count: int = 45) -> list[Service]:
    """`count` services; DAG sizes as documented above."""
    rng = np.random.default_rng([seed, 45])
    return [dag_of_size(seed, i, stage_count(rng)) for i in range(count)]
