"""`sextant recurring analyse`: a small trace end to end, and bad input refused with nothing written."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest
from sextant_cli.main import main
from sextant_cli.recurring import HEADER, TraceError, load_jobs

DAY = 86400.0


def write_trace(path: Path, rows: list[list[str]], header: tuple[str, ...] = HEADER) -> Path:
    text = "\n".join([",".join(header)] + [",".join(r) for r in rows]) + "\n"
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def small_trace(days: int = 8) -> list[list[str]]:
    """Template 0 hourly, template 1 daily, template 2 at random; every job FINISHes after 30–90 s."""
    rng = np.random.default_rng(0)
    rows, jid = [], 0
    for key, times in ((0, np.arange(1, days * 24) * 3600.0 + 120), (1, np.arange(days) * DAY + 5 * 3600),
                       (2, np.sort(rng.uniform(1, days * DAY, days * 200)))):
        for t in times:
            rt = rng.uniform(30, 90)
            rows.append([str(jid), f"{t:.0f}", f"{t + 2:.0f}", f"{t + 2 + rt:.0f}", "4", "0", "1", str(key)])
            jid += 1
    return rows


def test_analyse_prints_the_table_and_writes_json(tmp_path, capsys):
    trace = write_trace(tmp_path / "jobs.csv.gz", small_trace())
    out = tmp_path / "out" / "analysis.json"
    assert main(["recurring", "analyse", str(trace), "--train-days", "6", "--json", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "slot_hit_rate" in printed and "p95_coverage" in printed
    doc = json.loads(out.read_text())
    assert [t["template"] for t in doc["templates"]] == [0, 1]
    assert [t["natural_period_s"] for t in doc["templates"]] == [3600.0, DAY]
    assert doc["metrics"]["slot_hit_rate"] == 1.0
    assert 0.0 < doc["metrics"]["periodic_job_share"] < 1.0


@pytest.mark.parametrize("rows,header,message", [
    ([["1", "5", "", "", "", "0", "0", "1"]], ("job", "submit"), ":1: header must be"),
    ([["1", "5", "", "", "", "0", "0"]], HEADER, ":2: 7 cells"),
    ([["1", "5", "", "", "", "0", "0", "1"], ["2", "x", "", "", "", "0", "0", "1"]], HEADER, ":3: submit_s 'x'"),
    ([["1", "", "", "", "", "0", "0", "1"]], HEADER, ":2: submit_s and lname are required"),
    ([["1", "-4", "", "", "", "0", "0", "1"]], HEADER, "must be >= 0"),
    ([], HEADER, "no jobs"),
], ids=["header", "ragged", "not-a-number", "missing-submit", "negative-submit", "empty"])
def test_bad_input_is_an_error_naming_the_line_and_nothing_is_written(tmp_path, capsys, rows, header, message):
    trace = write_trace(tmp_path / "bad.csv", rows, header)
    out = tmp_path / "analysis.json"
    with pytest.raises(TraceError, match=message):
        load_jobs(trace)
    assert main(["recurring", "analyse", str(trace), "--json", str(out), "--quiet"]) == 2
    assert "error" in capsys.readouterr().err
    assert not out.exists() and not list(tmp_path.glob(".*.tmp"))


def test_a_trace_without_training_jobs_or_file_is_refused(tmp_path, capsys):
    trace = write_trace(tmp_path / "late.csv", [["1", f"{30 * DAY:.0f}", "", "", "", "0", "0", "1"]])
    assert main(["recurring", "analyse", str(trace), "--quiet"]) == 2
    assert "no job submitted before" in capsys.readouterr().err
    assert main(["recurring", "analyse", str(tmp_path / "missing.csv"), "--quiet"]) == 2
