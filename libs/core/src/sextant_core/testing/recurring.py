"""Builders for recurring-job tests: the finished runs of a job that recurs at a fixed period.

`runs(tenant, name, n)` gives `n` runs of an hourly job submitted one minute past each hour,
running `len(skyline)` one-minute steps, its output read `read_after_s` into the period (so
its SLO is actionable: fixed reads, slack); `skyline` is its containers per minute.
"""

from __future__ import annotations

from sextant_contracts import recurring as rc

from ..recurring.decisions import template_id

HOUR_S = 3600.0


def runs(tenant: str, name: str, n: int, *, first: int = 0, period_s: float = HOUR_S,
         skyline: tuple[float, ...] = (2, 2, 4, 4, 4, 4, 2, 2, 1, 1), read_after_s: float = 1800.0,
         input_after_s: float = 30.0, cores: float = 1.0, memory_gb: float = 4.0) -> list[rc.RecurringRunObserved]:
    out = []
    tid = template_id(tenant, f"{name}-{first}")  # the same template for every k
    for k in range(first, first + n):
        t0 = k * period_s
        start = t0 + 60.0
        end = start + 60.0 * len(skyline)
        out.append(rc.RecurringRunObserved(
            at=end, template_id=tid, tenant=tenant, name=f"{name}-{k}", instance=f"{tid[:8]}-{k}",
            submit_s=t0 + 60.0, start_s=start, end_s=end, input_available_s=t0 + input_after_s,
            first_read_s=t0 + read_after_s, skyline=skyline, container_cores=cores, container_memory_gb=memory_gb))
    return out
