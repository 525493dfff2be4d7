"""`sextant sim run|compare` on the smoke scenario."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from sextant_sim import cli
from sextant_sim.groundtruth import TWIN_VERSION
from sextant_sim.runner import run_profile


def test_run_writes_the_log_summary_and_plots(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert cli.main(["sim", "run", "smoke", "--profile", "oracle", "--seed", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "qos_met_fraction" in printed and "smoke · oracle · seed 1" in printed
    summary = json.loads((out / "summary.json").read_text())
    log = (out / "events.jsonl").read_bytes()
    assert summary["log_sha256"] == hashlib.sha256(log).hexdigest()
    assert summary["twin_version"] == TWIN_VERSION
    assert summary["summary"]["qos_met_fraction"] == run_profile("smoke", "oracle", 1).summary["qos_met_fraction"]
    for png in ("performance.png", "utilisation.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_prints_one_table_and_writes_the_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cmp.json"
    rc = cli.main(["sim", "compare", "smoke", "--profiles", "least-loaded,oracle", "--seed", "2", "--json", str(path)])
    assert rc == 0
    printed = capsys.readouterr().out
    assert printed.count("least-loaded") == 1 and printed.count("oracle") == 1
    doc = json.loads(path.read_text())
    assert set(doc) == {"scenario", "seed", "twin_version", "classifier", "profiles"}
    assert doc["classifier"] == "cf"  # the default: every profile classifies with the engine
    assert (doc["scenario"], doc["seed"], doc["twin_version"]) == ("smoke", 2, TWIN_VERSION)
    assert list(doc["profiles"]) == ["least-loaded", "oracle"]
    need = {"qos_met_fraction", "mean_normalized_performance", "mean_performance_vs_target", "cpu_utilization",
            "overprovisioning", "workloads", "failed", "wall_seconds"}
    for p in doc["profiles"].values():
        assert need <= set(p)
        assert "normalized_performance" not in p
        assert p["workloads"] == 16


@pytest.mark.parametrize(("argv", "listed"), [
    (["sim", "run", "no-such", "--profile", "oracle"], "quasar-ec2-200"),
    (["sim", "run", "smoke", "--profile", "no-such"], "reservation-least-loaded"),
    (["sim", "compare", "smoke", "--profiles", "oracle,no-such"], "least-loaded"),
], ids=["scenario", "profile", "compare-profile"])
def test_unknown_names_exit_2_listing_the_valid_ones(argv: list[str], listed: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "no-such" in err and listed in err


def test_an_invalid_scenario_file_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\ndescription: x\ncatalogue: smoke\ngroups: []\nnoise_scale: -1\n")
    assert cli.main(["sim", "run", str(bad), "--profile", "oracle"]) == 2
    assert "noise_scale" in capsys.readouterr().err


def test_the_sextant_command_line_has_the_sim_command() -> None:
    main = pytest.importorskip("sextant_cli.main")
    parser = main.build_parser()
    args = parser.parse_args(["sim", "compare", "smoke", "--profiles", "oracle"])
    assert args.func is not None and args.profiles == "oracle"
