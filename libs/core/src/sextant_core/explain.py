"""`sextant explain`: why a decision was taken, re-derived from the log alone (a pure function of
the log: the CLI and the web console print the same lines)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any


def explain_decision(log: list[Any], decision_id: str) -> list[str]:
    """Find the decision, fold the log up to the position it recorded, re-run the same command with
    full verdicts switched on; returns the lines `sextant explain` prints."""
    from sextant_contracts import events as ev
    from sextant_contracts import recurring as rc
    from sextant_contracts import vc

    from .decide import decide, seed_for
    from .policies import ExplainablePlanner
    from .process import react
    from .profiles import policy_set
    from .state import fold

    found = next((e for e in log if e.payload.get("decision", {}).get("decision_id", "").startswith(decision_id)),
                 None)
    if found is None:
        return [f"no decision {decision_id} in the log"]
    event = found.event()
    rec = ev.decision_of(event)
    assert rec is not None
    subject = _subject(event)
    state = fold([e for e in log if e.position <= rec.state_position])
    cause = next((e for e in log if e.id in rec.causation), None)
    params = policy_set(rec.profile)
    if isinstance(params.planner, ExplainablePlanner):  # every plugin's verdict on every server
        params = replace(params, planner=params.planner.explaining())
    noun = "template" if isinstance(event, rc.TemplateEvent) else "workload"
    head = (f"{event.TYPE} between virtual clusters ({event.policy}, {event.reason})"
            if isinstance(event, vc.VcAllocationDecided) else f"{event.TYPE} for {noun} {subject}")
    out = [f"{head} at position {found.position}",
           f"  decided on the state at position {rec.state_position}, profile {rec.profile} "
           f"v{rec.policy_version}, model {rec.model_version or '-'}, seed {rec.seed}"]
    if cause is not None:
        out.append(f"  caused by {cause.type} (position {cause.position}, source {cause.source})")
    w = state.workloads.get(subject) if isinstance(event, ev.DecisionEvent) else None
    t = state.recurring.templates.get(subject) if isinstance(event, rc.TemplateEvent) else None
    if t is not None:
        out.append(f"  template: tenant {t.tenant}, {len(t.runs)} runs, contract "
                   f"{'v' + str(t.contract.version) if t.contract else '-'}, sign-off "
                   f"{t.signoff.verdict + ' v' + str(t.signoff.version) if t.signoff else '-'} before the decision")
    if w is not None:
        out.append(f"  workload: {w.kind.value}, phase {w.phase.value} before the decision, "
                   f"requested {w.requested_cores} cores / {w.requested_memory_gb} GiB")
    if isinstance(event, ev.WorkloadQueued):
        out.append(f"  waits in ARQ class {event.arq_class} at position {event.position}, "
                   f"expected wait {event.expected_wait_s:.1f}s: {event.reason}")
    rerun = None
    if cause is not None:
        for c in react(state, cause.event()):
            if _subject(c) == subject and found.source == c.HANDLER:
                rerun = decide(state, c, params=params, seed=seed_for(c, state), at=cause.event().at,
                               causation=rec.causation)
                break
    if rerun is not None:
        same = any(_same_outcome(e, event) for e in rerun.events)
        out.append(f"  re-derived: {'identical' if same else 'DIFFERENT'}")
        trace = rerun.trace or getattr(event, "trace", None)
        if trace is not None:
            for plugin, reasons in trace.filtered.items():
                out.append(f"  filter {plugin}: " + ", ".join(f"{n} {r}" for r, n in reasons.items()))
            out.extend(f"  candidate {sid}: score {score:.2f}" for sid, score in trace.top)
            out.append(f"  examined {trace.examined}, backtracks {trace.backtracks}, "
                       f"budget exhausted: {trace.budget_exhausted}")
        if rerun.detail:
            out.append("  verdicts: " + json.dumps(rerun.detail, default=str)[:4000])
    if isinstance(event, rc.CorralPlanDecided):  # each job's racks and the provisioning loop's why
        from .corral.platform import why

        out.extend(why(state, event))
    if isinstance(event, ev.PlacementDecided):
        out.append("  allocation: " + ", ".join(f"{a.server_id}×{a.cores}c/{a.memory_gb:g}G"
                                                for a in event.allocation.assignments))
    return out


def _subject(x: Any) -> str:
    """The workload or recurring template an event or command is about."""
    return str(getattr(x, "template_id", None) or getattr(x, "workload_id", ""))


def _same_outcome(a: Any, b: Any) -> bool:
    """Equal but for the trace, which explain mode makes richer."""
    strip = {"trace"}
    return type(a) is type(b) and a.model_dump(exclude=strip) == b.model_dump(exclude=strip)
