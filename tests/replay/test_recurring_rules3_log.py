"""A recurring log recorded under rules 3 before Corral's rack plans existed
(`tests/fixtures/recurring-rules3-log.jsonl.gz`: an hourly template reserved, a QoS placement
deferred by the ledger, a DRA extension, daily re-inference, an override and a rejection, recorded
in-process by the code of the commit before the Corral platform) re-derives every decision with 0
differences: the rack plans change no decision of a log without analytics profiles. Never
regenerated: a difference here is a behaviour change of an existing log."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from sextant_cli.demo import read_recorded
from sextant_core.profiles import policy_set
from sextant_core.replay import replay
from sextant_core.state import fold

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "recurring-rules3-log.jsonl.gz"


def test_a_rules_3_recurring_log_replays_with_0_differences() -> None:
    log = read_recorded(FIXTURE)
    kinds = Counter(e.type for e in log)
    assert kinds["ReservationPlanned"] == 3 and kinds["PlacementDeferred"] == 1 and kinds["ReservationExtended"] == 1
    assert {e.payload["decision"]["model_version"] for e in log if e.type.startswith("Reservation")} == {
        "recurring-rules/3"}
    report = replay(log, policy_set)
    assert report.ok, report.differences[:3]
    assert report.decisions == 14 and report.state == fold(log)
    assert fold(log).recurring.corral is None
