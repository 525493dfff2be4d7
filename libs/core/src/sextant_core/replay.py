"""Replay: rebuild state from the log and re-derive every recorded decision (DESIGN §4).

Decision events are a workload's (`DecisionEvent`) or a recurring template's (`TemplateDecision`):
both carry a `DecisionRecord` (`events.decision_of`) and are re-derived alike.

A service's reaction to one input is appended as one contiguous block right after the position of
the state it saw (head-conditional append), each output enveloped with `source` = the service and
`causation_id` = the input event's id. Replay folds the log in position order; at the first
envelope of a block it re-runs `workflow.step` on the state folded so far with the policy set the
decision names, and compares the re-derived events with the recorded ones, byte for byte
(canonical JSON), to the end of the block: a recorded block shorter or longer than its
re-derivation is a difference, and no envelope inside a block starts another (a block's last
decision re-run on the state that includes the others would be another reaction, not a check).
It also checks that every decision's `state_position` is exactly the position before it — the
state a decision saw is the fold of the log up to what it recorded — or, for a decision that
recorded several decision events (one `ProbeRequested` per slow task of a job), the position
before the first of them in the block.

A decision recorded under an earlier policy version than the profile's current one is re-derived
with the profile at that version, `policies("NAME@VERSION")` (`profiles.policy_set`), when the
profile keeps it; otherwise the version mismatch is a difference. Recurring decisions and the
placement gate follow a rule set of their own (`recurring.decisions.RULES`), named in the
decision's `model_version` (none recorded: rules 2): replay re-derives under the one recorded.

Reactors (the agent, the telemetry edge, the API) are never re-run: their events are facts and
are only folded. Numerics are pinned (`sextant_core.numerics`: one BLAS kernel on every x86-64 CPU). An event written
before (`fingerprint` = `f8-bytes`, set by its upcaster) may have been computed by another kernel,
whose floats differ in the last bits: it is compared up to a relative 1e-9 on numbers and without
its model hashes (`_close`), and such matches are counted (`legacy_numerics`). A re-derivation that cannot rebuild a classification model the log recorded
(`ModelMismatch`: a changed sample, changed numerics) is reported as a difference of that
decision, and the replay goes on.

The fold of a block is not done twice: `step` folds the events it re-derives, at the positions the
block holds when it decided on the state right before it; when every recorded event of the block
equals its re-derivation byte for byte (canonical JSON: the same event), the step's final state
*is* the fold of the recorded block and is taken as is. Any other block (a difference, one
forgiven as legacy numerics, a block cut short or past the log's end) is folded as recorded, from
the state before it. `ReplayReport.state` is the fold of the log either way.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from sextant_contracts import codec
from sextant_contracts import events as ev
from sextant_contracts.collector import held_frozen
from sextant_contracts.envelope import Envelope

from .classification.engine import ModelMismatch
from .policies import PolicySet
from .profiles import at_version
from .recurring import decisions as recurring_rules
from .state.evolve import evolve
from .state.model import ClusterState
from .workflow import SERVICES, step


@dataclass(frozen=True, slots=True)
class Difference:
    position: int
    decision_id: str
    what: str


@dataclass(slots=True)
class ReplayReport:
    events: int = 0
    decisions: int = 0
    blocks: int = 0
    differences: list[Difference] = field(default_factory=list)
    state: ClusterState = field(default_factory=ClusterState)
    # events written before the numerics were pinned, equal to their re-derivation up to what
    # another BLAS kernel changes (`_same`)
    legacy_numerics: int = 0

    @property
    def ok(self) -> bool:
        return not self.differences

    def summary(self) -> str:
        legacy = f" ({self.legacy_numerics} equal up to unpinned numerics)" if self.legacy_numerics else ""
        return f"replay: {self.decisions} decisions re-derived, {len(self.differences)} differences{legacy}"


def _is_decision_block_start(env: Envelope, event: ev.Event) -> bool:
    return env.source in SERVICES and env.causation_id is not None and ev.decision_of(event) is not None


def replay(log: Iterable[Envelope], policies: Callable[[str], PolicySet], *,
           state: ClusterState | None = None,
           lookup: Callable[[str], ev.Event | None] | None = None) -> ReplayReport:
    """Fold `log` (position order) from `state` (a snapshot, or empty) and re-derive decisions.

    `policies(profile)` returns the PolicySet a recorded profile name denotes. When replaying from
    a snapshot, a decision's cause may precede the snapshot: `lookup(event_id)` fetches it.

    The objects alive when it starts (the decoded log, typically) are kept out of the cyclic
    collector's reach while it runs (`collector.held_frozen`): its collections traverse only what
    the re-derivation allocates (docs/platform/replay.md, "Sixth round").
    """
    with held_frozen():
        return _replay(log, policies, state=state, lookup=lookup)


def _replay(log: Iterable[Envelope], policies: Callable[[str], PolicySet], *,
            state: ClusterState | None,
            lookup: Callable[[str], ev.Event | None] | None) -> ReplayReport:
    report = ReplayReport(state=state if state is not None else ClusterState())
    st = report.state
    by_id: dict[str, ev.Event] = {}
    pending: list[tuple[int, bytes]] = []  # expected (position, canonical payload) of the current block
    block: tuple[str, str | None] | None = None  # (source, causation) of the block being compared
    previous: tuple[str, str | None] | None = None  # (source, causation) of the envelope before
    decided_on: set[int] = set()  # the state positions of this block's decisions, checked
    # the block being compared: the state before it, its recorded (event, position)s so far, and
    # the state its re-derivation ended on (`StepResult.state`): while every event matches, that
    # state is the fold of the block, which is not folded again
    base: ClusterState | None = None
    folded: list[tuple[ev.Event, int]] = []
    derived_state: ClusterState | None = None
    for env in log:
        assert env.position is not None, "replay needs stored envelopes"
        event = env.event()
        report.events += 1
        key = (env.source, env.causation_id)
        if base is not None and not (pending and pending[0][0] == env.position):
            st, base = _fold_block(base, folded), None  # the block ended early: fold what was recorded
        if pending and pending[0][0] == env.position:
            _, expected = pending.pop(0)
            if expected != codec.dumpb(event):  # not byte-equal (`_same` may still forgive it)
                if base is not None:
                    st, base = _fold_block(base, folded), None
                if not _same(expected, event, report):
                    report.differences.append(Difference(env.position, _decision_id(event),
                                                         f"{env.type} differs from its re-derivation"))
        elif pending:
            report.differences.append(Difference(pending[0][0], "", "block shorter than re-derived"))
            pending = []
            block = None
        elif key == block:  # the recorded block goes on past its re-derivation
            report.differences.append(Difference(env.position, _decision_id(event), "block longer than re-derived"))
        elif _is_decision_block_start(env, event):
            found = len(report.differences)
            pending, derived_state = _rederive(st, env, event, by_id, lookup, policies, report)
            # a block that could not be re-derived is not compared further (its later decisions
            # are re-derived as they come, as before it)
            block = key if pending or len(report.differences) == found else None
            if derived_state is not None:
                base, folded = st, []  # its first event matched byte for byte: fold the block only if needed
        else:
            block = None
        if key != previous:
            decided_on = set()
        previous = key
        if (rec := ev.decision_of(event)) is not None:
            report.decisions += 1
            at = rec.state_position
            if at == env.position - 1:
                decided_on.add(at)
            elif at not in decided_on:  # not a later event of one decision of this block either
                report.differences.append(Difference(
                    env.position, rec.decision_id, f"decided on position {at}, recorded at {env.position}"))
        if base is None:
            st = evolve(st, event, env.position)
        else:
            folded.append((event, env.position))
            if not pending:  # the whole block matched: its fold is the re-derivation's
                assert derived_state is not None
                st, base = derived_state, None
        by_id[env.id] = event
    if base is not None:  # the log ends inside the block
        st = _fold_block(base, folded)
    if pending:
        report.differences.append(Difference(pending[0][0], "", "log ends inside a re-derived block"))
    report.state = st
    return report


def _fold_block(state: ClusterState, folded: list[tuple[ev.Event, int]]) -> ClusterState:
    """The recorded events of a block folded on the state before it."""
    for event, position in folded:
        state = evolve(state, event, position)
    return state


def _rederive(st: ClusterState, env: Envelope, event: ev.Event, by_id: dict[str, ev.Event],
              lookup: Callable[[str], ev.Event | None] | None, policies: Callable[[str], PolicySet],
              report: ReplayReport) -> tuple[list[tuple[int, bytes]], ClusterState | None]:
    """Re-run the step that produced the block starting at `env`; the first event is compared here.

    Returns the expected (position, canonical bytes) of the block's later events, and the state
    the re-derivation ended on when it may stand for the block's fold: the step decided on the
    state right before `env` (so its events took the recorded positions) — the caller uses it
    only if every recorded event of the block equals its re-derivation byte for byte."""
    assert env.position is not None
    rec = ev.decision_of(event)
    assert rec is not None
    cause = by_id.get(env.causation_id or "")
    if cause is None and lookup is not None:
        cause = lookup(env.causation_id or "")
    if cause is None:
        report.differences.append(Difference(env.position, rec.decision_id, "cause not in the log before it"))
        return [], None
    try:
        params = policies(rec.profile)
    except KeyError:
        report.differences.append(Difference(env.position, rec.decision_id, f"unknown profile {rec.profile}"))
        return [], None
    if params.version != rec.policy_version:  # the profile at the version the log recorded, if it is kept
        try:
            past = policies(at_version(rec.profile, rec.policy_version))
        except KeyError:
            past = params
        if past.version == rec.policy_version:
            params = past
        else:
            report.differences.append(Difference(env.position, rec.decision_id,
                                                 f"policy version {rec.policy_version} != {params.version}"))
    if not rec.model_version or rec.model_version.startswith(recurring_rules.MODEL_PREFIX):
        # the rule set of recurring decisions and of the placement gate the decision recorded
        rules = recurring_rules.rules_of(rec.model_version)
        if rules not in recurring_rules.RULES:
            report.differences.append(Difference(env.position, rec.decision_id, f"recurring rules {rules} not kept"))
            return [], None
        params = _with_rules(params, rules)
    report.blocks += 1
    try:
        result = step(st, cause, service=env.source, params=params, causation=(env.causation_id or "",))
    except ModelMismatch as exc:  # the log's models cannot be rebuilt from it: a difference, reported
        report.differences.append(Difference(env.position, rec.decision_id, f"re-derivation failed: {exc}"))
        return [], None
    derived = [codec.dumpb(e) for e in result.events]
    if not derived:
        report.differences.append(Difference(env.position, rec.decision_id, "re-derivation produced nothing"))
        return [], None
    exact = derived[0] == codec.dumpb(event)
    if not exact and not _same(derived[0], event, report):
        report.differences.append(Difference(env.position, rec.decision_id, f"{env.type} differs from its re-derivation"))
    return ([(env.position + i, b) for i, b in enumerate(derived[1:], start=1)],
            result.state if exact and st.position == env.position - 1 else None)


# (id(policy set), rules) -> (that policy set, it with those recurring rules): the same field values
# as `replace` gives each time (a policy set is frozen; the entry keeps it, so its id is not reused)
_WITH_RULES: dict[tuple[int, str], tuple[PolicySet, PolicySet]] = {}


def _with_rules(params: PolicySet, rules: str) -> PolicySet:
    """`replace(params, recurring_rules=rules)`, made once per policy set and rules."""
    key = (id(params), rules)
    hit = _WITH_RULES.get(key)
    if hit is None or hit[0] is not params:
        if len(_WITH_RULES) >= 64:
            _WITH_RULES.clear()
        hit = _WITH_RULES[key] = (params, replace(params, recurring_rules=rules))
    return hit[1]


def _same(derived: bytes, recorded: ev.Event, report: ReplayReport) -> bool:
    """Byte equality; for an event written before the numerics were pinned (`fingerprint` =
    `f8-bytes`), equality up to what another BLAS kernel changes (counted in `legacy_numerics`):
    numbers within a relative 1e-9 and model hashes (`_close`)."""
    if derived == codec.dumpb(recorded):
        return True
    if getattr(recorded, "fingerprint", None) != ev.LEGACY_FINGERPRINT:
        return False
    if not _close(json.loads(derived), json.loads(codec.dumpb(recorded)), top=True):
        return False
    report.legacy_numerics += 1
    return True


_MODEL_HASH = re.compile(r"(r\d+-k\d+)-[0-9a-f]{12}")
_HASH_FIELDS = frozenset({"content_hash", "fingerprint"})


def _close(a: Any, b: Any, *, top: bool = False) -> bool:
    """`a` and `b` alike but for last-bit float differences and model hashes (`r<rows>-k<rank>-<hash>`
    in any string, `content_hash` and `fingerprint` at the top)."""
    if isinstance(a, dict) and isinstance(b, dict):
        keys = set(a) | set(b)
        if top:
            keys -= _HASH_FIELDS
        return all(k in a and k in b and _close(a[k], b[k]) for k in keys)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, str) and isinstance(b, str):
        return _MODEL_HASH.sub(r"\1", a) == _MODEL_HASH.sub(r"\1", b)
    return bool(a == b) and type(a) is type(b)


def _decision_id(event: ev.Event) -> str:
    rec = ev.decision_of(event)
    return "" if rec is None else rec.decision_id
