"""A service's stage DAG and its end-to-end latency (jalaparti.md §5.2, eq. 5.1).

A request enters at the source stages and leaves when every sink stage has finished; a stage starts
when all its predecessors have finished. The end-to-end latency of a request is therefore the
longest source-to-sink path sum of its stage latencies, `L_w = max_p Σ_{s∈p} L_s`. It is computed
for many requests at once: a latency matrix has one row per request and one column per stage.

Bad input raises `KwikenInputError` naming the offending field (the platform turns it into a 422).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np


class KwikenInputError(ValueError):
    """Invalid input to a Kwiken computation; `field` names what is wrong (e.g. `edges`, `budget`)."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


def check_budget(budget: float, field_name: str = "budget") -> float:
    """A budget is a fraction of extra work (or of utility loss) in (0, 1]."""
    b = float(budget)
    if not (0.0 < b <= 1.0) or not np.isfinite(b):
        raise KwikenInputError(field_name, f"must lie in (0, 1], got {budget!r}")
    return b


@dataclass(frozen=True)
class StageDag:
    """Stages `0..n-1` named by `names`, `edges` as (from, to) index pairs.

    `costs` are the relative per-request costs of the stages (any positive scale; `normalised_costs`
    rescales them to sum 1, §5.2), `fanout` the number of responders of each stage (1 for an ordinary
    stage), `partial` whether a stage may return a partial answer. `order` is a topological order
    (ties by index, so it is deterministic); a cycle raises `KwikenInputError("edges")`.
    """

    names: tuple[str, ...]
    edges: tuple[tuple[int, int], ...]
    costs: tuple[float, ...]
    fanout: tuple[int, ...] = ()
    partial: tuple[bool, ...] = ()
    order: tuple[int, ...] = field(init=False)
    preds: tuple[tuple[int, ...], ...] = field(init=False)

    def __post_init__(self) -> None:
        n = len(self.names)
        if n == 0:
            raise KwikenInputError("names", "a DAG needs at least one stage")
        if len(set(self.names)) != n:
            raise KwikenInputError("names", "stage names must be unique")
        if len(self.costs) != n or not all(np.isfinite(c) and c > 0 for c in self.costs):
            raise KwikenInputError("costs", f"one positive finite cost per stage ({n}) is required")
        fan = self.fanout or (1,) * n
        part = self.partial or (False,) * n
        if len(fan) != n or any(int(f) < 1 for f in fan):
            raise KwikenInputError("fanout", f"one fan-out >= 1 per stage ({n}) is required")
        if len(part) != n:
            raise KwikenInputError("partial", f"one flag per stage ({n}) is required")
        preds: list[list[int]] = [[] for _ in range(n)]
        for a, b in self.edges:
            if not (0 <= a < n and 0 <= b < n) or a == b:
                raise KwikenInputError("edges", f"edge ({a}, {b}) does not join two distinct stages")
            preds[b].append(a)
        object.__setattr__(self, "fanout", tuple(int(f) for f in fan))
        object.__setattr__(self, "partial", tuple(bool(p) for p in part))
        object.__setattr__(self, "preds", tuple(tuple(sorted(set(p))) for p in preds))
        object.__setattr__(self, "order", _topological(n, self.preds))

    @property
    def n(self) -> int:
        return len(self.names)

    def normalised_costs(self) -> np.ndarray:
        """The costs rescaled to sum 1 (§5.2: `Σ_s c_s = 1`)."""
        c = np.asarray(self.costs, dtype=float)
        return c / c.sum()

    def sinks(self) -> list[int]:
        has_succ = {a for a, _ in self.edges}
        return [s for s in range(self.n) if s not in has_succ]

    @classmethod
    def sequential(cls, costs: Sequence[float]) -> StageDag:
        """A chain of stages 0 → 1 → … (a convenience for tests and examples)."""
        n = len(costs)
        return cls(tuple(f"s{i}" for i in range(n)), tuple((i, i + 1) for i in range(n - 1)), tuple(costs))


def _topological(n: int, preds: tuple[tuple[int, ...], ...]) -> tuple[int, ...]:
    indeg = [len(p) for p in preds]
    succs: list[list[int]] = [[] for _ in range(n)]
    for b, ps in enumerate(preds):
        for a in ps:
            succs[a].append(b)
    ready = sorted(s for s in range(n) if indeg[s] == 0)
    out: list[int] = []
    while ready:
        s = ready.pop(0)
        out.append(s)
        for t in succs[s]:
            indeg[t] -= 1
            if indeg[t] == 0:
                ready.append(t)
        ready.sort()
    if len(out) != n:
        cyc = sorted(s for s in range(n) if indeg[s] > 0)
        raise KwikenInputError("edges", f"the stage graph has a cycle through stages {cyc[:5]}")
    return tuple(out)


def start_and_finish(dag: StageDag, latencies: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per request and stage, the start time (finish of the slowest predecessor) and finish time.

    `latencies` is (requests × stages); both outputs have its shape.
    """
    lat = np.asarray(latencies, dtype=float)
    if lat.ndim != 2 or lat.shape[1] != dag.n:
        raise KwikenInputError("latencies", f"expected (requests, {dag.n}), got {lat.shape}")
    start = np.zeros_like(lat)
    finish = np.zeros_like(lat)
    for s in dag.order:
        ps = dag.preds[s]
        if ps:
            start[:, s] = finish[:, list(ps)].max(axis=1) if len(ps) > 1 else finish[:, ps[0]]
        finish[:, s] = start[:, s] + lat[:, s]
    return start, finish


def end_to_end(dag: StageDag, latencies: np.ndarray) -> np.ndarray:
    """Per request, the longest source-to-sink path sum of its stage latencies (eq. 5.1)."""
    _, finish = start_and_finish(dag, latencies)
    return finish[:, dag.sinks()].max(axis=1)
