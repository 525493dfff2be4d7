"""The profiling plan, driven by the classification matrices (docs/classification.md; Quasar §3.2,
Paragon §2.4). Pure: the same workload, seed and state give the same plan.

With ``entries`` = 2 (the papers' default density) a new workload gets:

* **scale-up** — `entries` configurations drawn from the workload's random stream among the
  scale-up columns of its kind's matrix that fit the high-end platform (Quasar: "2 randomly
  selected scale-up allocations on the highest-end platform"); without a matrix, among
  ``c1, c2, c4, …, c<cores>``. The pick with the fewest cores is the **reference run** (the first
  run) — except for a service, whose reference is the column of its requested cores and comes
  first, the other picks drawn at random (`service_reference`);
* **heterogeneity** — the reference run gives the high-end platform's entry; `entries` − 1 more
  runs with the reference configuration on other platforms (drawn from the stream among those
  with at least the reference's cores);
* **scale-out** (``analytics`` and ``service`` kinds only: single-node jobs have no scale-out,
  Quasar Table 2) — the reference run gives ``n1``; `entries` − 1 runs at the *largest* node counts
  online profiling uses (1–4 nodes): 4 nodes for 2 entries, then 3 and 4, then 2, 3 and 4; with the
  reference configuration per node. [IMPL CHOICE] the farthest lever arm from ``n1``: a row's
  scale-out entries up to 100 nodes are extrapolated from these, and the ratio n4/n1 carries
  twice the log-distance of n2/n1 (measurement noise weighs half as much, the curvature shows
  more). Measured (`bench/classification.py`, 100 new workloads per kind, 2 entries, avg / p90 /
  max %): twin analytics scale-out 12.6 / 24.1 / 38.3 with n2 -> 9.5 / 18.0 / 28.1 with n4 (another
  twin seed: 11.7 / 22.6 / 34.7 -> 9.0 / 16.9 / 23.6); synthetic world analytics
  28.3 / 53.7 / 117 -> 20.6 / 40.1 / 63.0, service 23.3 / 46.7 / 86.0 -> 16.3 / 36.3 / 79.7; the
  twin's services' scale-out (QPS ∝ nodes) stays 0.9 %. The price is a 4-node profiling run
  instead of a 2-node one (the twin does not charge profiling runs to the cluster);
* **interference** — `entries` sources drawn from the stream, each ramped against the reference
  configuration on the high-end platform ("the first scale-up copy"); each ramp yields a tolerated
  and a caused score.

How the reference run's sample is reused across matrices is `classification.observations`.
The high-end platform is the one with the most cores (ties: larger memory, then the platform id).
Scale-up column ids follow ``c<cores>[-<more knobs>]``; the cores are parsed from the prefix.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

from sextant_contracts.events import ProfileRun
from sextant_contracts.ids import derive_id
from sextant_contracts.model import INTERFERENCE_SOURCES, Classification, WorkloadKind

from ..classification.observations import group_of, node_column
from ..state.model import ClusterState, WorkloadState

if TYPE_CHECKING:
    from ..context import DecisionContext

_CORES = re.compile(r"^c(\d+)(?:-|$)")
MULTI_NODE = frozenset({WorkloadKind.ANALYTICS, WorkloadKind.SERVICE})
MAX_PROFILE_NODES = 4


@functools.lru_cache(maxsize=4096)
def column_cores(column: str) -> int | None:
    """Cores of a scale-up column id (``c4``, ``c4-m8`` → 4), None if it does not say (a pure
    function of the string, remembered: every performance model reads every column)."""
    m = _CORES.match(column)
    return int(m.group(1)) if m else None


def _default_columns(cores: int) -> list[str]:
    sizes, c = [], 1
    while c < cores:
        sizes.append(c)
        c *= 2
    sizes.append(cores)
    return [f"c{n}" for n in sizes]


def service_reference(candidates: list[str], w: WorkloadState, platform_cores: list[int]) -> str | None:
    """[IMPL CHOICE] A latency-critical service's reference run uses a configuration near its
    request — `min(requested cores, the cores at least half of the platforms have)`, as the
    smallest candidate column with at least that many (else the largest) — instead of a random
    one: on a configuration far below its request a service serves nothing within its latency
    bound, and a reference run that measures 0 makes every heterogeneity and scale-out entry of
    the plan 0 too (they reuse its configuration), leaving the classification nothing to scale
    from (measured on quasar-memcached-diurnal seeds 2 and 3: a c1 reference left memcached on
    one node serving nothing for 24 h). The cap keeps heterogeneity runs possible on half of the
    platforms (a service's request is its total over all nodes). None without a request."""
    return reference_column(candidates, w.requested_cores, platform_cores)


def reference_column(candidates: list[str], requested_cores: int | None, platform_cores: list[int]) -> str | None:
    """`service_reference` for a request of `requested_cores` (the twin's offline campaign sizes
    its service seeds' reference runs with it too, so seed rows and new rows are comparable)."""
    want = requested_cores
    if not want or not candidates:
        return None
    if platform_cores:
        hosts = sorted(platform_cores, reverse=True)
        want = min(want, hosts[(len(hosts) - 1) // 2])
    sized = sorted((column_cores(c) or 1, c) for c in candidates)
    return next((c for n, c in sized if n >= want), sized[-1][1])


class DefaultProfilingPlan:
    def __init__(self, entries: int = 2, duration_s: float = 30.0, *, scale_up_entries: int | None = None,
                 interference_entries: int | None = None) -> None:
        if entries < 1:
            raise ValueError("entries must be >= 1")
        self.entries = entries
        self.scale_up_entries = scale_up_entries or entries
        self.interference_entries = interference_entries or entries
        self.duration_s = duration_s

    def scale_up_columns(self, state: ClusterState, kind: WorkloadKind, cores: int) -> list[str]:
        cols: list[str] = []
        m = state.knowledge.matrix(Classification.SCALE_UP, group_of(Classification.SCALE_UP, kind.value))
        if m is not None:
            cols = [c for c in m.columns if (column_cores(c) or 0) and (column_cores(c) or 0) <= cores]
        return sorted(cols) if cols else _default_columns(cores)

    def plan(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> tuple[ProfileRun, ...]:
        servers = [s for s in state.sorted_servers() if s.schedulable]
        if not servers:
            return ()
        platforms: dict[str, tuple[int, float, str]] = {}
        for s in servers:
            platforms.setdefault(s.platform, (s.capacity.cores, s.capacity.memory_gb, s.server_id))
        ranked = sorted(platforms, key=lambda p: (-platforms[p][0], -platforms[p][1], p))
        high = ranked[0]
        high_cores = platforms[high][0]
        rng = ctx.rng()
        runs: list[ProfileRun] = []

        def run(cls: Classification, column: str, platform: str, cores: int, nodes: int = 1) -> None:
            runs.append(ProfileRun(run_id=derive_id(w.workload_id, "run", len(runs), ctx.seed),
                                   classification=cls, column=column, platform=platform,
                                   server_id=platforms[platform][2], cores=cores, nodes=nodes,
                                   duration_s=self.duration_s))

        candidates = self.scale_up_columns(state, w.kind, high_cores)
        n_up = min(self.scale_up_entries, len(candidates))
        anchor = service_reference(candidates, w, [platforms[p][0] for p in ranked]) \
            if w.kind == WorkloadKind.SERVICE else None
        # a service: the requested size first, then the smallest other sizes (see service_reference).
        # [IMPL CHOICE] the smallest, not random: a service's entry is the highest QPS within its
        # latency bound, which falls to ~0 near the knee at few cores — where a multiplicative model
        # extrapolating from larger runs is off by 10–100× (docs/classification.md). Measured on the
        # twin (bench/classification.py, 100 new services, 2 entries, seeds 0 / 1 / 2), scale-up
        # avg / p90 / max: 71.1 / 28.4 / 5149 → 20.8 / 31.7 / 162; 22.3 / 41.4 / 344 → 22.1 / 41.4 /
        # 256; 28.5 / 62.2 / 509 → 33.0 / 51.1 / 347 %; other classifications unchanged.
        if anchor is not None:
            rest = sorted((c for c in candidates if c != anchor), key=lambda c: (column_cores(c) or 1, c))
            k = min(n_up - 1, len(rest))
            if k:
                rng.choice(len(rest), size=k, replace=False)  # keep the stream of the runs after these
            picked = [anchor] + rest[:k] if k else [anchor]
        else:
            picked = [candidates[int(i)] for i in rng.choice(len(candidates), size=n_up, replace=False)]
            picked.sort(key=lambda c: (column_cores(c) or 1, c))
        ref_col = picked[0]
        ref_cores = column_cores(ref_col) or 1
        for col in picked:
            run(Classification.SCALE_UP, col, high, column_cores(col) or 1)

        others = [p for p in ranked[1:] if platforms[p][0] >= ref_cores]
        n_het = min(self.entries - 1, len(others))
        for i in sorted(int(x) for x in rng.choice(len(others), size=n_het, replace=False)) if n_het else ():
            run(Classification.HETEROGENEITY, others[i], others[i], ref_cores)

        if w.kind in MULTI_NODE:
            n_out = min(self.entries, MAX_PROFILE_NODES) - 1  # the farthest node counts first (docstring)
            for nodes in range(MAX_PROFILE_NODES - n_out + 1, MAX_PROFILE_NODES + 1):
                run(Classification.SCALE_OUT, node_column(nodes), high, ref_cores, nodes=nodes)

        n_src = min(self.interference_entries, len(INTERFERENCE_SOURCES))
        for i in sorted(int(x) for x in rng.choice(len(INTERFERENCE_SOURCES), size=n_src, replace=False)):
            run(Classification.INTERFERENCE, INTERFERENCE_SOURCES[i].value, high, ref_cores)
        return tuple(runs)
