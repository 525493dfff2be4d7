"""Replay's policy set with a recorded decision's recurring rules (`replay._with_rules`) is the
`dataclasses.replace` it was before, made once per policy set and rules."""

from __future__ import annotations

from dataclasses import fields, replace

from sextant_core.profiles import policy_set
from sextant_core.replay import _with_rules


def test_with_rules_equals_replace_and_is_made_once() -> None:
    for profile in ("sextant-adaptive", "sextant", "paragon"):
        params = policy_set(profile)
        for rules in ("1", "2", "3"):
            got, want = _with_rules(params, rules), replace(params, recurring_rules=rules)
            assert got.recurring_rules == rules
            assert all(getattr(got, f.name) is getattr(want, f.name) or getattr(got, f.name) == getattr(want, f.name)
                       for f in fields(want))
            assert _with_rules(params, rules) is got
    # another policy set object (equal or not) gets its own copy, never another's
    a, b = policy_set("sextant-adaptive"), replace(policy_set("sextant-adaptive"), recurring_rules="1")
    assert _with_rules(b, "3") is not _with_rules(a, "3") and _with_rules(b, "3").version == b.version
