"""The demo's yardstick: the twin's least-loaded baseline on the very workloads the platform ran.

`sextant demo` submits a twin scenario's workloads to the platform (with the profile it was given,
`sextant-adaptive` by default); `twin_baseline` runs the same scenario, seed and workloads (the
first `limit` submissions) in the embedded twin under `least-loaded` — the placement of the
foundation — so the report can set the platform's QoS beside it, kind by kind. Both sides count the
same way (`KindQos`): a workload's QoS is its *last* verdict; the twin runs in virtual time with
its own clock, so the comparison is of decisions, not of timing.
"""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

BASELINE = "least-loaded"


@dataclass(frozen=True)
class KindQos:
    """One kind's outcome: workloads, how many completed / failed, how many were judged (had a
    verdict), how many of those met QoS at their last verdict, and the mean of their last ratios."""

    workloads: int = 0
    completed: int = 0
    failed: int = 0
    judged: int = 0
    met: int = 0
    mean_ratio: float | None = None

    @property
    def met_share(self) -> float | None:
        return self.met / self.judged if self.judged else None


Outcome = tuple[str, str, tuple[bool, float] | None]  # (kind, state, last verdict (met, ratio))


def by_kind(outcomes: Iterable[Outcome]) -> dict[str, KindQos]:
    """Per kind and for `all`, the `KindQos` of `outcomes`."""
    rows = list(outcomes)
    out: dict[str, KindQos] = {}
    for kind in [*sorted({k for k, _, _ in rows}), "all"]:
        sel = [r for r in rows if kind in ("all", r[0])]
        last = [v for _, _, v in sel if v is not None]
        out[kind] = KindQos(workloads=len(sel), completed=sum(s == "completed" for _, s, _ in sel),
                            failed=sum(s == "failed" for _, s, _ in sel), judged=len(last),
                            met=sum(m for m, _ in last),
                            mean_ratio=sum(r for _, r in last) / len(last) if last else None)
    return out


def from_views(views: Iterable[Mapping[str, Any]]) -> dict[str, KindQos]:
    """`by_kind` of the platform's workload views (`GET /v1/workloads` items)."""
    return by_kind((v["kind"], v["state"], (bool(v["qos"]["met"]), float(v["qos"]["ratio_to_target"]))
                    if v.get("qos") and v["qos"].get("ratio_to_target") is not None else None) for v in views)


def from_log(lines: Iterable[str]) -> dict[str, KindQos]:
    """`by_kind` of a twin run's JSON-lines event log."""
    kind: dict[str, str] = {}
    state: dict[str, str] = {}
    last: dict[str, tuple[bool, float]] = {}
    ends = {"WorkloadCompleted": "completed", "WorkloadFailed": "failed", "WorkloadRevoked": "revoked"}
    for line in lines:
        r = json.loads(line)
        e = r["event"]
        if r["type"] == "WorkloadSubmitted":
            kind[e["workload_id"]] = e["kind"]
            state[e["workload_id"]] = "submitted"
        elif r["type"] in ends:
            state[e["workload_id"]] = ends[r["type"]]
        elif r["type"] == "QosVerdict":
            last[e["workload_id"]] = (bool(e["met"]), float(e["ratio_to_target"]))
    return by_kind((kind[w], state[w], last.get(w)) for w in sorted(kind))


def twin_baseline(scenario: str, seed: int, limit: int = 0, profile: str = BASELINE) -> dict[str, KindQos]:
    """`profile` in the embedded twin on the first `limit` (0: all) submissions of `scenario`."""
    from sextant_sim.runner import run_profile, setup_of

    setup = setup_of(scenario, seed)
    if limit:
        subs = setup.subs[:limit]
        setup = dataclasses.replace(setup, subs=subs, truths={s.workload_id: s.truth for s in subs})
    buf = io.StringIO()
    run_profile(setup, profile, seed, log_out=buf)
    return from_log(buf.getvalue().splitlines())


def comparison_rows(platform: Mapping[str, KindQos], twin: Mapping[str, KindQos]) -> list[tuple[str, ...]]:
    """(kind, workloads, platform QoS met, twin QoS met, platform mean ratio, twin mean ratio)."""
    def pct(q: KindQos | None) -> str:
        return "-" if q is None or q.met_share is None else f"{q.met_share:.0%}"

    def ratio(q: KindQos | None) -> str:
        return "-" if q is None or q.mean_ratio is None else f"{q.mean_ratio:.2f}"

    kinds = [k for k in platform if k != "all"] + ["all"]
    return [(k, str(platform[k].workloads), pct(platform[k]), pct(twin.get(k)), ratio(platform[k]), ratio(twin.get(k)))
            for k in kinds]
