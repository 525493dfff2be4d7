"""The default profiling plan (DESIGN §3 step 2; Paragon §2, Quasar §3.2).

Two scale-up runs on the high-end platform (1 core and half its cores), one scale-out run on
2 nodes, one run on another platform chosen from the workload's random stream, and two
interference ramps on two sources drawn from the stream. The high-end platform is the one with
the most cores (ties: the larger memory, then the platform id). Pure: the same workload id and
the same registered servers give the same plan.

The classification engine (issue 4) refines the column choice; this is the seam it fills.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sextant_contracts.events import ProfileRun
from sextant_contracts.ids import derive_id
from sextant_contracts.model import INTERFERENCE_SOURCES, Classification

from ..state.model import ClusterState, WorkloadState

if TYPE_CHECKING:
    from ..decide import DecisionContext


class DefaultProfilingPlan:
    def __init__(self, scale_up_entries: int = 2, interference_entries: int = 2,
                 duration_s: float = 30.0) -> None:
        self.scale_up_entries = scale_up_entries
        self.interference_entries = interference_entries
        self.duration_s = duration_s

    def plan(self, state: ClusterState, w: WorkloadState, ctx: DecisionContext) -> tuple[ProfileRun, ...]:
        servers = [s for s in state.sorted_servers() if s.schedulable]
        if not servers:
            return ()
        platforms: dict[str, tuple[int, float, str]] = {}
        for s in servers:
            platforms.setdefault(s.platform, (s.capacity.cores, s.capacity.memory_gb, s.server_id))
        ranked = sorted(platforms, key=lambda p: (-platforms[p][0], -platforms[p][1], p))
        high = ranked[0]
        high_cores, _, high_server = platforms[high]
        rng = ctx.rng()
        runs: list[ProfileRun] = []

        def run(cls: Classification, column: str, platform: str, server: str, cores: int = 1,
                nodes: int = 1) -> None:
            runs.append(ProfileRun(run_id=derive_id(w.workload_id, "run", len(runs), ctx.seed),
                                   classification=cls, column=column, platform=platform,
                                   server_id=server, cores=cores, nodes=nodes,
                                   duration_s=self.duration_s))

        for c in sorted({1, max(1, high_cores // 2)})[: self.scale_up_entries]:
            run(Classification.SCALE_UP, f"c{c}", high, high_server, cores=c)
        run(Classification.SCALE_OUT, "n2", high, high_server, cores=1, nodes=2)
        run(Classification.HETEROGENEITY, high, high, high_server)
        if len(ranked) > 1:
            other = ranked[1 + int(rng.integers(len(ranked) - 1))]
            run(Classification.HETEROGENEITY, other, other, platforms[other][2])
        picks = rng.choice(len(INTERFERENCE_SOURCES), size=self.interference_entries, replace=False)
        for i in sorted(int(x) for x in picks):
            run(Classification.INTERFERENCE, INTERFERENCE_SOURCES[i].value, high, high_server)
        return tuple(runs)
