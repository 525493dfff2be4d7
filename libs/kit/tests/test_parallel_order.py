"""`sextant_kit.testing.parallel`: under `pytest -n N --dist loadfile` the files of
`tests/architecture/` are handed out first, then those of `tests/e2e/` (all of them to one worker),
then `tests/integration/`, then the rest."""

from __future__ import annotations

import pytest
from sextant_kit.testing.parallel import rank

RECORDS = """
import os

def test_{name}():
    with open(os.environ["ORDER_FILE"], "a") as f:
        f.write("{name}\\n")
"""


def test_rank_puts_architecture_then_e2e_then_integration_then_the_rest() -> None:
    assert rank("tests/architecture/test_docs.py::t") == 0
    assert rank("tests/e2e/test_chaos.py::test_x") == 1
    assert rank("tests/integration/test_api_up.py::test_x") == 2
    assert rank("libs/kit/tests/test_consumer_kafka.py::test_x") == rank("tests/replay/test_platform_log.py::t") == 3


@pytest.mark.parametrize(("dist", "expected"), [("loadfile", ["architecture", "e2e", "integration", "alpha", "zulu"]),
                                                ("load", ["alpha", "architecture", "e2e", "integration", "zulu"])])
def test_one_worker_runs_the_files_in_the_plugins_order_only_under_loadfile(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, dist: str, expected: list[str]) -> None:
    for path in ("a/test_alpha.py", "tests/architecture/test_architecture.py", "tests/e2e/test_e2e.py",
                 "tests/integration/test_integration.py", "z/test_zulu.py"):
        target = pytester.path / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(RECORDS.format(name=target.stem.removeprefix("test_")))
    order = pytester.path / "order.txt"
    monkeypatch.setenv("ORDER_FILE", str(order))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only the plugins named here: a quick start
    result = pytester.runpytest_subprocess("-p", "xdist.plugin", "-p", "sextant_kit.testing.parallel",
                                           "-p", "no:cacheprovider", "-n", "1", "--dist", dist, "a", "tests", "z")
    result.assert_outcomes(passed=5)
    assert order.read_text().split() == expected


def test_the_e2e_files_are_one_unit_on_one_worker(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("chaos", "platform"):
        target = pytester.path / "tests" / "e2e" / f"test_{name}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(WORKER.format(name=name))
    for name in ("one", "two"):
        (pytester.path / f"test_{name}.py").write_text(WORKER.format(name=name))
    order = pytester.path / "order.txt"
    monkeypatch.setenv("ORDER_FILE", str(order))
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    result = pytester.runpytest_subprocess("-p", "xdist.plugin", "-p", "sextant_kit.testing.parallel",
                                           "-p", "no:cacheprovider", "-n", "2", "--dist", "loadfile", ".")
    result.assert_outcomes(passed=4)
    ran = dict(line.split() for line in order.read_text().splitlines())
    assert ran["chaos"] == ran["platform"], ran


WORKER = """
import os

def test_{name}():
    with open(os.environ["ORDER_FILE"], "a") as f:
        f.write("{name} " + os.environ["PYTEST_XDIST_WORKER"] + "\\n")
"""
