"""`sextant explain` on a Corral plan: the CLI prints each job's racks, predicted time and why (the
provisioning loop's one rack more / fewer, the data-balance penalty), from the log alone."""

from __future__ import annotations

import pytest
from sextant_cli import ops
from sextant_cli.main import main
from sextant_core.profiles import policy_set
from sextant_core.recurring.decisions import template_id
from sextant_core.testing.corral import profile, racked
from sextant_core.testing.loop import InProcessPlatform, steady_agent
from sextant_core.testing.recurring import runs


def test_explain_prints_a_plan_s_racks_and_why(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    p = InProcessPlatform(policy_set("foundation"), steady_agent)
    p.submit(racked(3, 2))
    big, small = template_id("acme", "etl-daily-0"), template_id("acme", "rep-daily-0")
    p.submit(runs("acme", "etl-daily", 2) + runs("acme", "rep-daily", 2))
    p.submit([profile(big, 200.0), profile(small, 10.0)])
    plan = [e for e in p.log if e.type == "CorralPlanDecided"][-1]
    monkeypatch.setattr(ops, "_log", lambda args: p.log)
    assert main(["explain", plan.payload["decision"]["decision_id"][:12]]) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"CorralPlanDecided for template {small}")
    text = " ".join(printed.split())  # the console wraps long lines at its width
    assert "re-derived: identical" in text
    assert "racks: 3 (rack-0, rack-1, rack-2), 2 machines each" in text
    assert f"job {big}: racks rack-0, rack-1, rack-2 (3 of 3), priority 0, starts at +0.0 s, predicted " in text
    assert f"job {small}: racks " in text
    assert text.count("(Model B ") >= 3 and "+ data balance" in text  # each job and its alternatives
    assert "one rack fewer: " in text and "LP-Batch bound" in text
