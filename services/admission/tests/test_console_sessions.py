"""Console sessions (`sextant_admission.console.sessions`): ids and CSRF tokens are random and
distinct, a session ends at its age or when closed, and a CSRF token must match exactly."""

from __future__ import annotations

from sextant_admission.console import _explained
from sextant_admission.console.sessions import Sessions


def test_a_session_keeps_its_token_server_side_and_expires() -> None:
    now = [0.0]
    s = Sessions(max_age_s=10.0, clock=lambda: now[0])
    a, b = s.open("sxt_a"), s.open(None)
    assert a != b and "sxt_a" not in a and len(a) >= 40
    sa = s.get(a)
    assert sa is not None and sa.token == "sxt_a" and s.get(b) is not None
    now[0] = 10.0
    assert s.get(a) is None and s.get(b) is None and s.get(None) is None and s.get("forged") is None


def test_a_closed_session_is_gone() -> None:
    s = Sessions()
    sid = s.open("sxt_x")
    s.close(sid)
    assert s.get(sid) is None


def test_csrf_must_match_exactly() -> None:
    s = Sessions()
    session = s.get(s.open("sxt_x"))
    assert session is not None
    assert Sessions.csrf_ok(session, session.csrf)
    assert not Sessions.csrf_ok(session, None) and not Sessions.csrf_ok(session, "")
    assert not Sessions.csrf_ok(session, session.csrf[:-1])
    other = s.get(s.open("sxt_x"))
    assert other is not None and not Sessions.csrf_ok(session, other.csrf)


def test_the_decision_page_splits_explains_lines_without_changing_them() -> None:
    lines = ["PlacementDecided for workload w at position 9", "  filter capacity: 3 too-small, 1 down",
             "  filter schedulable: ", "  candidate s0001: score 0.93", "  candidate s0002: score 0.50",
             "  allocation: s0001×4c/8G"]
    out = _explained(lines)
    assert out["filters"] == [("capacity", "3 too-small, 1 down"), ("schedulable", "")]
    assert out["candidates"] == [("s0001", "0.93"), ("s0002", "0.50")]
    assert out["lines"] == ["PlacementDecided for workload w at position 9", "allocation: s0001×4c/8G"]
