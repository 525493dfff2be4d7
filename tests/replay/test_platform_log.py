"""A platform log recorded under the flagship profile (`tests/fixtures/platform-log.jsonl.gz`: 36
workloads of `platform-demo` seed 1 through the real services, Kafka and PostgreSQL, written by
`sextant demo --limit 36 --record`) re-derives every decision with 0 differences:

- with warm policy caches (one policy set per profile for the whole log, as `sextant replay`), with
  cold ones (a fresh policy set for every decision block), and from a decider restarted at block
  boundaries (a cold policy set on the pickled fold of the log before it): the caches only speed
  things up;
- through the upcasters: the fixture is never regenerated when an event's schema changes — an old
  shape must reach the fold and the deciders through `sextant_contracts.upcasters`, so this test
  keeps failing until it does.
"""

from __future__ import annotations

import functools
import pickle
from collections import Counter
from pathlib import Path

import pytest
from sextant_cli.demo import read_recorded
from sextant_contracts.envelope import Envelope
from sextant_contracts.events import EVENT_TYPES
from sextant_core.classification.engine import clear_memo
from sextant_core.profiles import policy_set
from sextant_core.replay import ReplayReport, replay
from sextant_core.state import fold

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "platform-log.jsonl.gz"


@pytest.fixture(scope="module")
def log() -> list[Envelope]:
    return read_recorded(FIXTURE)


def test_the_fixture_is_a_flagship_platform_log(log: list[Envelope]) -> None:
    assert [e.position for e in log] == list(range(1, len(log) + 1))
    assert {e.type for e in log} <= set(EVENT_TYPES)
    assert all(e.schema_version <= EVENT_TYPES[e.type].SCHEMA_VERSION for e in log)
    decisions = [e.event() for e in log if EVENT_TYPES[e.type].DECISION]
    assert {d.decision.profile for d in decisions} == {"sextant-adaptive"}  # type: ignore[attr-defined]
    sources = Counter(e.source for e in log)
    assert {"admission", "profiling", "classification", "planning", "agent", "telemetry"} <= set(sources)
    assert sum(e.type == "WorkloadSubmitted" for e in log) == 36


@pytest.fixture(scope="module")
def warm(log: list[Envelope]) -> ReplayReport:
    return replay(log, functools.cache(policy_set))


def test_it_replays_with_0_differences_with_warm_policy_caches(warm: ReplayReport) -> None:
    assert warm.ok, warm.differences[:5]
    assert warm.decisions >= 100
    # recorded before OpenBLAS's kernel was pinned, by another one: its model hashes and last
    # float bits are forgiven (`replay._same`), nothing else
    assert warm.legacy_numerics > 0


def test_it_replays_identically_with_cold_policy_caches(log: list[Envelope], warm: ReplayReport) -> None:
    built: list[str] = []

    def cold(name: str):  # type: ignore[no-untyped-def]
        built.append(name)
        clear_memo()  # and no classification model kept from an earlier block
        return policy_set(name)  # a new policy set, empty caches, for every block

    report = replay(log, cold)
    assert report.ok, report.differences[:5]
    # the log was recorded under an earlier version of the profile: each block asks for the current
    # one, then for the version it recorded (`NAME@VERSION`)
    assert report.decisions == warm.decisions and len(built) == 2 * report.blocks > 2
    assert {b for b in built if "@" in b} == {"sextant-adaptive@5.1+8.2"}


def test_the_recorded_policy_version_is_the_one_replayed(log: list[Envelope]) -> None:
    """The fixture's decisions name `sextant-adaptive` 5.1+8.2, an earlier planner than the
    current profile's: replay re-derives them with that version; a replayer that keeps only the
    current version reports every decision block as a version difference."""
    assert policy_set("sextant-adaptive").version != "5.1+8.2"

    def current_only(name: str):  # type: ignore[no-untyped-def]
        if "@" in name:
            raise KeyError(name)
        return policy_set(name)

    report = replay(log, current_only)
    assert not report.ok
    assert {d.what for d in report.differences} >= {f"policy version 5.1+8.2 != {policy_set('sextant-adaptive').version}"}


def test_a_decider_restarted_at_any_block_rederives_the_same(log: list[Envelope]) -> None:
    """A cold policy set started at a block boundary (where a killed service can have stopped) from
    the pickled fold before it — what a restarted service restores from its snapshot — re-derives
    the rest of the log (tests/replay/test_decider_restarts.py does the same on a contended log)."""
    starts = [i for i in range(1, len(log))
              if (log[i].source, log[i].causation_id) != (log[i - 1].source, log[i - 1].causation_id)]
    decisions = 0
    for k in (0.4, 0.6, 0.8):
        cut = starts[int(k * len(starts))]
        snapshot = pickle.loads(pickle.dumps(fold(log[:cut]), protocol=5))
        by_id = {e.id: e.event() for e in log[:cut]}
        report = replay(log[cut:], functools.cache(policy_set), state=snapshot, lookup=by_id.get)
        assert report.ok, (cut, report.differences[:5])
        decisions += report.decisions
    assert decisions >= 100


def test_a_changed_sample_is_a_reported_difference(log: list[Envelope]) -> None:
    """Replay is not a tautology on this log either: one measurement changed, a decision differs."""
    i = next(i for i, e in enumerate(log) if e.type == "ProfileSampleRecorded")
    changed = [*log[:i], log[i].model_copy(update={"payload": {**log[i].payload, "value": log[i].payload["value"] * 3 + 1}}),
               *log[i + 1:]]
    report = replay(changed, functools.cache(policy_set))
    assert not report.ok


def test_the_folds_per_tenant_counts_equal_a_recount_all_along_the_log(log: list[Envelope]) -> None:
    """`ClusterState.load` and `schedulable_servers` (kept per event by the fold) equal a full
    recount of the workloads and servers at every 200th event and at the end."""
    from sextant_core.fairness.load import recount
    from sextant_core.state import ClusterState, evolve

    state, checked, held = ClusterState(), 0, 0
    for k, e in enumerate(log, start=1):
        state = evolve(state, e.event(), e.position)
        if k % 200 == 0 or k == len(log):
            assert state.load == recount(state.workloads.values()), e.position
            assert state.schedulable_servers == sum(s.schedulable for s in state.servers.values())
            checked += 1
            held = max(held, *(h for _, h in state.load.values()), 0)
    assert checked > 5 and state.schedulable_servers > 0 and held > 0
