"""Determinism of the twin (DESIGN §5, STYLE example 12): the same scenario, profile and seed give a
byte-identical JSONL event log, pinned by a golden SHA-256 per (scenario, profile, seed).

Changing the world or a decision on purpose changes the hashes: regenerate them in the same
commit, with the reason in the message:

    SEXTANT_UPDATE_GOLDEN=1 .venv/bin/pytest libs/sim/tests/test_twin_determinism.py

(the test then rewrites `golden/smoke.json` and passes; run it again without the variable).
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from sextant_sim.groundtruth import TWIN_VERSION
from sextant_sim.runner import compare, run_profile

GOLDEN = Path(__file__).parent / "golden" / "smoke.json"
CASES = [("smoke", "least-loaded", 1), ("smoke", "oracle", 1), ("smoke", "reservation-least-loaded", 2),
         ("smoke", "sextant", 1), ("smoke", "sextant-adaptive", 1)]  # the flagship profiles too


def _key(scenario: str, profile: str, seed: int) -> str:
    return f"{scenario}/{profile}/{seed}"


def _log(scenario: str, profile: str, seed: int) -> str:
    buf = io.StringIO()
    run_profile(scenario, profile, seed, log_out=buf)
    return buf.getvalue()


@pytest.fixture(scope="module")
def logs() -> dict[str, str]:
    return {_key(*c): _log(*c) for c in CASES}


def test_same_scenario_profile_seed_give_byte_identical_logs(logs: dict[str, str]) -> None:
    again = _log("smoke", "least-loaded", 1)
    assert again == logs[_key("smoke", "least-loaded", 1)]
    assert again.count("\n") > 100  # a real run, not an empty log


def test_a_different_seed_gives_a_different_log(logs: dict[str, str]) -> None:
    assert _log("smoke", "least-loaded", 2) != logs[_key("smoke", "least-loaded", 1)]


def test_logs_match_the_golden_hashes(logs: dict[str, str]) -> None:
    import hashlib

    got = {k: hashlib.sha256(v.encode("utf-8")).hexdigest() for k, v in sorted(logs.items())}
    if os.environ.get("SEXTANT_UPDATE_GOLDEN"):
        GOLDEN.write_text(json.dumps({"twin_version": TWIN_VERSION, "sha256": got}, indent=2, sort_keys=True) + "\n")
    golden = json.loads(GOLDEN.read_text())
    assert golden["twin_version"] == TWIN_VERSION, "the world changed: regenerate the golden file (see docstring)"
    assert got == golden["sha256"]


def test_log_sha256_reported_by_run_profile_is_the_hash_of_the_log() -> None:
    import hashlib

    buf = io.StringIO()
    res = run_profile("smoke", "random", 3, log_out=buf)
    assert res.log_sha256 == hashlib.sha256(buf.getvalue().encode("utf-8")).hexdigest()


def test_a_profile_inside_compare_equals_its_run_profile() -> None:
    profiles = ["least-loaded", "oracle", "reservation-least-loaded"]
    both = compare("smoke", profiles, seed=4)
    for p in profiles:
        alone = run_profile("smoke", p, 4).summary
        inside = both["profiles"][p]
        for k, v in inside.items():
            if k in ("wall_seconds", "events_per_second"):
                continue
            assert alone[k] == v, (p, k)
