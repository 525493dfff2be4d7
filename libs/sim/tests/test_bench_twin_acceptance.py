"""`bench/twin_acceptance.py`: which side of each bar `worst` keeps, `within`, and `--merge` (no
simulation: synthetic per-seed documents)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType

import pytest
from sextant_kit.testing import load_script

BENCH_DIR = Path(__file__).resolve().parents[3] / "bench"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return load_script(BENCH_DIR / "twin_acceptance.py", "bench_twin_acceptance")  # imports its sibling quality.py


def _run(q: float, cpu: float) -> dict[str, float]:
    return {"qos_met": q, "cpu_seconds": cpu, "wall_seconds": cpu, "load_avg_1min": 1.0}


def test_worst_keeps_the_side_each_bar_bounds(bench: ModuleType) -> None:
    per_seed = {"6": {"least-loaded": _run(0.2, 30.0), "oracle": _run(0.95, 20.0)},
                "7": {"least-loaded": _run(0.3, 50.0), "oracle": _run(0.91, 25.0)}}
    w = bench.worst(per_seed, ["least-loaded", "oracle"])
    assert w == {"least-loaded": {"qos_met": 0.3, "cpu_seconds": 50.0},
                 "oracle": {"qos_met": 0.91, "cpu_seconds": 25.0}}
    assert bench.within(w)
    assert not bench.within({**w, "oracle": {"qos_met": 0.89, "cpu_seconds": 25.0}})
    assert not bench.within({**w, "least-loaded": {"qos_met": 0.36, "cpu_seconds": 50.0}})
    assert not bench.within({**w, "least-loaded": {"qos_met": 0.3, "cpu_seconds": 61.0}})


def test_merge_joins_seeds_and_profiles(bench: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def part(name: str, per_seed: dict[str, object]) -> str:
        doc = {"scenario": "paragon-ec2-2500", "code_version": "c", "twin_version": "t", "per_seed": per_seed,
               "load_avg": {"start": [1.0, 2.0, 3.0], "end": [1.0, 2.0, 3.0]}}
        path = tmp_path / name
        path.write_text(json.dumps(doc))
        return str(path)

    a = part("a.json", {"6": {"prepare_cpu_seconds": 1.0, "oracle": _run(0.93, 20.0)}})
    b = part("b.json", {"7": {"prepare_cpu_seconds": 1.0, "oracle": _run(0.92, 21.0)}})
    c = part("c.json", {"6": {"random": _run(0.1, 15.0)}, "7": {"random": _run(0.12, 16.0)}})
    out = tmp_path / "joined.json"
    monkeypatch.setattr(sys, "argv", ["twin_acceptance.py", "--merge", a, b, c, "--json", str(out)])
    assert bench.main() == 0
    doc = json.loads(out.read_text())
    assert doc["seeds"] == [6, 7] and set(doc["per_seed"]["6"]) == {"prepare_cpu_seconds", "oracle", "random"}
    assert doc["worst"] == {"random": {"qos_met": 0.12, "cpu_seconds": 16.0},
                            "oracle": {"qos_met": 0.92, "cpu_seconds": 21.0}}
    assert doc["within"] is True
