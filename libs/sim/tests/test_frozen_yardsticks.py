"""The frozen yardsticks: every profile is measured against them, so none may move silently.

Pinned here, each by a SHA-256 of its *outputs* on fixed inputs (not of its source, so a comment
or a refactor that keeps the behaviour does not move it), in `golden/yardsticks.json`:

- `twin_version`: the default world's `TWIN_VERSION` (`sextant_sim.groundtruth`);
- `oracle.choice`: the oracle's ranking of feasible servers and its choice on fixed synthetic
  batches (`OraclePlanner._order` / `._single`);
- `oracle.smoke`: the `oracle` profile's placement decisions (workload, time, allocation,
  predicted performance, notes) on `smoke`, seeds 1–3;
- `estimate_noise.function`: `estimates.noisy_scores` on a fixed grid of scores, sds and draws,
  and `profiler.score_noise_sd` of the default world on fixed scores (the port's documented noise);
- `estimate_noise.port.smoke`: the estimate port's full estimates for every `smoke` workload, seed
  1, streams 0–2;
- `service_floor.function`: `adaptation.scoring.server_hours_floor` on fixed instances;
- `service_floor.twin`: `adaptation.scoring.service_floor` on `smoke` seed 1's service.

How and when one may change: a yardstick changes only in its own change (commit), on purpose,
with before/after figures in the commit message (e.g. the oracle's QoS-met fraction on the
scenarios it is quoted for) — a profile that beats the oracle is a bug report against the oracle,
fixed that way. A new twin version (a deliberate change of the world) moves `twin_version` and the
fingerprints computed on twin scenarios (`oracle.smoke`, `estimate_noise.port.smoke`,
`service_floor.twin`) but not `oracle.choice` and the `.function` ones. Regenerate in one command, then say why in the
commit message:

    SEXTANT_UPDATE_YARDSTICKS=1 .venv/bin/pytest -p no:cacheprovider libs/sim/tests/test_frozen_yardsticks.py

(run it again without the variable: it must pass). The failure message lists which yardsticks moved.
Run with the Makefile's numeric environment (`OPENBLAS_NUM_THREADS=1`, `NPY_DISABLE_CPU_FEATURES`).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from sextant_sim.adaptation.scoring import server_hours_floor, service_floor
from sextant_sim.estimates import EstimateSource, noisy_scores
from sextant_sim.groundtruth import SOURCES, TWIN_VERSION, load
from sextant_sim.oracle import OraclePlanner, _Batch
from sextant_sim.profiler import score_noise_sd
from sextant_sim.runner import run_profile
from sextant_sim.scenarios import load_scenario
from sextant_sim.setup import prepare

GOLDEN = Path(__file__).parent / "golden" / "yardsticks.json"
TWIN_DEPENDENT = ("twin_version", "oracle.smoke", "estimate_noise.port.smoke", "service_floor.twin")


def _sha(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, allow_nan=True).encode()).hexdigest()


def _oracle_decisions() -> list[Any]:
    out = []
    for seed in (1, 2, 3):
        buf = io.StringIO()
        run_profile("smoke", "oracle", seed, log_out=buf)
        for line in buf.getvalue().splitlines():
            e = json.loads(line)
            if e["type"] == "PlacementDecided":
                ev = e["event"]
                out.append([seed, ev["workload_id"], ev["at"], ev["allocation"], ev["predicted_performance"],
                            ev["trace"]["notes"]])
    return out


def _oracle_choice() -> list[Any]:
    """The oracle's ranking and choice (`OraclePlanner._order`, `._single`) on fixed synthetic
    batches: ties in every key, infeasible and broken servers included."""
    rng = np.random.default_rng(20261126)
    out = []
    for n in (1, 3, 8, 25, 60):
        for _ in range(8):
            servers = [SimpleNamespace(used_cores=int(u)) for u in rng.integers(0, 8, size=n)]
            factor = np.round(rng.uniform(0.9, 1.0, size=n), 3)
            het = np.round(rng.uniform(0.5, 1.0, size=n), 2)
            ratio = np.round(rng.uniform(0.8, 1.3, size=n), 3)
            broken = rng.integers(0, 2, size=n) * (rng.uniform(size=n) < 0.3)
            b = _Batch(servers, factor, ratio, broken, het, np.arange(n))  # type: ignore[arg-type]
            rows, ok = OraclePlanner._single(OraclePlanner.__new__(OraclePlanner), b)
            out.append([OraclePlanner._order(b).tolist(), rows, ok])
    return out


def _noise_function() -> dict[str, Any]:
    values = np.array([0.0, 0.01, 0.3, 0.9, 2.0, 5.5, 12.0, 29.9, 30.0, 45.0, 59.9, 60.0, 75.0, 91.0, 99.5, 100.0])
    z = np.linspace(-4.0, 4.0, 17)
    grid = [[repr(float(x)) for x in noisy_scores(values, np.full(len(values), sd), np.full(len(values), zz))]
            for sd in (0.0, 1.0, 4.2, 9.1, 20.0) for zz in z]
    gt = load()
    sds = [[repr(float(x)) for x in score_noise_sd(gt, np.full(len(SOURCES), v), k)]
           for v in (0.0, 29.0, 31.0, 59.0, 61.0, 100.0) for k in (0.5, 1.0, 2.0)]
    return {"noisy_scores": grid, "score_noise_sd": sds}


def _port_estimates() -> list[Any]:
    st = prepare(load_scenario("smoke"), 1)
    src = EstimateSource(st.truths, st.profiler, st.cat, st.gt, st.seed, st.scenario.noise_scale)
    out = []
    for s in st.subs:
        for stream in (0, 1, 2):
            c = src.estimate(s.workload_id, stream)
            out.append([s.workload_id, stream, c.heterogeneity, c.tolerated, c.caused, c.scale_up, c.scale_out,
                        c.model_versions])
    return out


def _floor_function() -> list[Any]:
    out = []
    for mus, base, bound, segments, share in (
            ([100.0, 80.0, 80.0, 40.0], 0.05, 0.25, [(3600.0, 150.0), (1800.0, 60.0)], 0.99),
            ([250.0, 250.0, 120.0], 0.1, 0.5, [(600.0, 400.0), (600.0, 100.0), (1200.0, 250.0)], 0.95),
            ([50.0], 0.02, 0.1, [(100.0, 10.0)], 0.9)):
        b = server_hours_floor(mus, base, bound, segments, share)
        out.append([repr(b.lower_bound), repr(b.plan), repr(b.plan_share), repr(b.share)])
    return out


def _floor_twin() -> list[Any]:
    st = prepare(load_scenario("smoke"), 1)
    if not any(s.truth.service is not None for s in st.subs):
        return ["no service in smoke seed 1"]
    b = service_floor(st, 0.99)
    return [repr(b.lower_bound), repr(b.plan), repr(b.plan_share), repr(b.share)]


def fingerprints() -> dict[str, str]:
    return {
        "twin_version": TWIN_VERSION,
        "oracle.choice": _sha(_oracle_choice()),
        "oracle.smoke": _sha(_oracle_decisions()),
        "estimate_noise.function": _sha(_noise_function()),
        "estimate_noise.port.smoke": _sha(_port_estimates()),
        "service_floor.function": _sha(_floor_function()),
        "service_floor.twin": _sha(_floor_twin()),
    }


@pytest.fixture(scope="module")
def got() -> dict[str, str]:
    return fingerprints()


def test_the_yardsticks_are_frozen(got: dict[str, str]) -> None:
    if os.environ.get("SEXTANT_UPDATE_YARDSTICKS"):
        GOLDEN.write_text(json.dumps({"yardsticks": got}, indent=2, sort_keys=True) + "\n")
    golden = json.loads(GOLDEN.read_text())["yardsticks"]
    moved = sorted(k for k in set(got) | set(golden) if got.get(k) != golden.get(k))
    assert not moved, (f"frozen yardsticks moved: {', '.join(moved)} — change them only on purpose, in their own "
                       "commit with before/after figures; regenerate with SEXTANT_UPDATE_YARDSTICKS=1 "
                       "(this module's docstring)")


def test_the_fingerprints_are_reproducible_and_sensitive(got: dict[str, str]) -> None:
    """Same inputs, same fingerprint; a changed output, a changed fingerprint (so the pin can fail)."""
    assert _sha(_noise_function()) == got["estimate_noise.function"]
    assert _sha(_floor_function()) == got["service_floor.function"]
    changed = _noise_function()
    changed["noisy_scores"][0][0] = repr(0.5)
    assert _sha(changed) != got["estimate_noise.function"]
    assert set(TWIN_DEPENDENT) < set(got)
