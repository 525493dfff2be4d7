"""Verdicts as values (STYLE 8): the compact `DecisionTrace` a decision event carries, and the full
per-server, per-plugin detail `explain` shows.

Compact trace: `filtered` = for every filter of the profile (in order), the rows it removed among
those still in the running, by constant reason; `top` = the best `top_k` feasible servers with
their total scores (ties by server id); `examined` = candidates examined (budget units);
`budget_exhausted`; `notes` = constant tags of how the decision was reached.

Full detail (`verdicts`): server id → {"feasible", "filters": plugin → "pass" | reason,
"scores": plugin → score, "total"}. It costs O(rows × plugins) Python work, so planners build it
only when asked (`explain=True`); `explain` re-runs the decision from the log to get it.
Scores are rounded to 6 decimals in both (canonical JSON, DESIGN §4).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sextant_contracts.model import DecisionTrace

from .framework import Budget, Evaluation, ranked_rows

PASS = "pass"


def top_candidates(ev: Evaluation, k: int) -> tuple[tuple[str, float], ...]:
    rows = ranked_rows(ev.total, ev.feasible, k)
    return tuple((ev.table.server_ids[r], round(float(ev.total[r]), 6)) for r in rows)


def filtered_counts(ev: Evaluation) -> dict[str, dict[str, int]]:
    return {f.name: dict(f.removed) for f in ev.filters}


def compact_trace(ev: Evaluation, *, top_k: int, examined: int, budget: Budget,
                  notes: tuple[str, ...] = (), top: tuple[tuple[str, float], ...] | None = None) -> DecisionTrace:
    return DecisionTrace(filtered=filtered_counts(ev), top=top_candidates(ev, top_k) if top is None else top,
                         examined=examined, budget_exhausted=budget.used > budget.limit, notes=notes)


def deferral_reasons(ev: Evaluation) -> tuple[str, ...]:
    """Constant `plugin/reason` strings of every filter that removed something, in profile order."""
    out = [f"{f.name}/{reason}" for f in ev.filters for reason in f.removed]
    return tuple(out) or ("no_candidates",)


def summary(ev: Evaluation) -> dict[str, Any]:
    """The compact, always-present detail of one evaluation pass."""
    r = ev.request
    return {"profile": ev.profile.name, "profile_version": ev.profile.version,
            "request": {"workload_id": r.workload_id, "cores": r.cores, "memory_gb": r.memory_gb,
                        "best_effort": r.best_effort},
            "rows": len(ev.table), "feasible": int(np.count_nonzero(ev.feasible)),
            "filtered": filtered_counts(ev),
            "weights": {s.name: s.weight for s in ev.scores}}


def verdicts(ev: Evaluation) -> dict[str, dict[str, Any]]:
    """Every server's verdict from every plugin (explain)."""
    masks = [(f.name, f.verdict.mask.tolist(), f.verdict.codes.tolist(), f.reasons) for f in ev.filters]
    scores = [(s.name, s.scores.tolist()) for s in ev.scores]
    total = ev.total.tolist()
    feasible = ev.feasible.tolist()
    out: dict[str, dict[str, Any]] = {}
    for i, sid in enumerate(ev.table.server_ids):
        out[sid] = {
            "feasible": feasible[i],
            "filters": {name: PASS if m[i] else reasons[c[i]] for name, m, c, reasons in masks},
            "scores": {name: round(v[i], 6) for name, v in scores},
            "total": round(total[i], 6),
        }
    return out
