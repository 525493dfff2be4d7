"""Builders for Corral platform tests: racked servers and analytics profiles.

`racked(racks, per_rack)` registers `per_rack` servers in each of `racks` racks (`r<i>m<k>` in
`rack-<i>`, 10 Gb/s NICs, 5:1 core); `profile(tid, input_gb)` declares a template's profile with a
4:1 shuffle and a 4:1 output selectivity, one map task per GB (at least 8), one reducer per 8 maps.
"""

from __future__ import annotations

from sextant_contracts import events as ev
from sextant_contracts import recurring as rc

from .builders import server

GB = 1e9


def racked(racks: int, per_rack: int, *, cores: int = 16, memory_gb: float = 64.0) -> list[ev.Event]:
    out: list[ev.Event] = []
    for r in range(racks):
        for m in range(per_rack):
            sid = f"r{r}m{m}"
            out += [server(sid, cores=cores, memory_gb=memory_gb),
                    ev.ServerRackAssigned(at=0.0, server_id=sid, rack=f"rack-{r}")]
    return out


def profile(template_id: str, input_gb: float, *, at: float = 8000.0, **fields: object) -> rc.AnalyticsProfileDeclared:
    maps = max(8, int(input_gb))
    base: dict[str, object] = dict(input_bytes=input_gb * GB, shuffle_bytes=input_gb * GB / 4,
                                   output_bytes=input_gb * GB / 16, map_tasks=maps, reduce_tasks=max(1, maps // 8))
    base.update(fields)
    return rc.AnalyticsProfileDeclared(at=at, template_id=template_id, **base)  # type: ignore[arg-type]
