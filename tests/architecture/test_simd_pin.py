"""numpy's SIMD pin (`sextant_contracts/simd.py`) runs before numpy loads at every entry point.

Static: every package that may compute with numpy imports `sextant_contracts` in its `__init__.py`
(a package's `__init__` runs before any of its modules), and every bench script that imports
numpy, scipy or scikit-learn itself imports `sextant_contracts` before them. Dynamic: fresh
interpreters without the variable, importing an entry point the way it is launched, report that
the pin ran before numpy (`pinned_before_numpy`) and that the variable is set.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sextant_contracts.simd import DISABLED, ENV

ROOT = Path(__file__).resolve().parents[2]
NUMERIC = {"numpy", "scipy", "sklearn"}
PINNING = "sextant_contracts"


def package_inits() -> list[Path]:
    dirs = [ROOT / "libs" / n / "src" / f"sextant_{n}" for n in ("core", "kit", "sim")]
    dirs += sorted(d for d in (ROOT / "services").glob("*/src/sextant_*") if (d / "__init__.py").exists())
    dirs += [ROOT / "apps/cli/src/sextant_cli", ROOT / "apps/agent/src/sextant_agent"]
    return [d / "__init__.py" for d in dirs]


def top_level_imports(path: Path) -> list[str]:
    """The top-level module of each module-level import statement, in file order."""
    out: list[str] = []
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            out += [a.name.split(".")[0] for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module != "__future__":
            out.append(node.module.split(".")[0])
    return out


def pins_first(path: Path) -> bool:
    """`sextant_contracts` is imported at module level before any numeric library (if any)."""
    names = top_level_imports(path)
    numeric = [i for i, n in enumerate(names) if n in NUMERIC]
    return not numeric or (PINNING in names and names.index(PINNING) < numeric[0])


@pytest.mark.parametrize("init", package_inits(), ids=lambda p: p.parent.name)
def test_every_numeric_package_imports_the_pin_first(init: Path) -> None:
    assert PINNING in top_level_imports(init), f"{init.relative_to(ROOT)} does not import {PINNING}"


@pytest.mark.parametrize("script", sorted((ROOT / "bench").glob("*.py")), ids=lambda p: p.name)
def test_every_bench_script_pins_before_numpy(script: Path) -> None:
    assert pins_first(script), f"{script.relative_to(ROOT)} imports numpy before {PINNING}"


def test_the_checks_can_fail(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from __future__ import annotations\nimport numpy as np\nimport sextant_contracts\n")
    good = tmp_path / "good.py"
    good.write_text("from __future__ import annotations\nimport sextant_contracts\nimport numpy as np\n")
    assert not pins_first(bad) and pins_first(good)


def _probe(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "bench"), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip().splitlines()[-1]


REPORT = ("import os, sys; from sextant_contracts.simd import pinned_before_numpy; "
          f"print('numpy' in sys.modules, pinned_before_numpy(), os.environ.get('{ENV}'))")

# how each kind of process starts: the twin through `sextant sim`, a service's main, the cluster
# agent, replay, a bench script run as a file
ENTRY_POINTS = {
    "twin": "import sextant_sim.cli",
    "service": "import sextant_planning.main",
    "agent": "import sextant_agent.main",
    "replay": "import sextant_cli.replay",
    "core-first": "import sextant_core.planning.sextant",
    "bench": f"import runpy; runpy.run_path({str(ROOT / 'bench' / 'placement.py')!r}, run_name='probe')",
}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_an_entry_point_is_pinned_before_numpy_loads(entry: str) -> None:
    _loaded, pinned, value = _probe(f"{ENTRY_POINTS[entry]}; {REPORT}").split(" ", 2)
    assert (pinned, value) == ("True", DISABLED)


def test_the_probe_sees_numpy_first() -> None:
    """The dynamic check can fail: numpy imported before any Sextant package is reported."""
    assert _probe(f"import numpy; import sextant_core; {REPORT}").split(" ", 2)[:2] == ["True", "False"]
