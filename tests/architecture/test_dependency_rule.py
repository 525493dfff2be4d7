"""DESIGN §2's dependency rule, enforced on the import statements of every source file.

contracts ← core ← sim; contracts ← kit ← services; services use core. The CLI and the cluster
agent are edge applications in `apps/` (they may use kit, core and sim, and nothing imports them).
The core is pure: no I/O libraries, no clock, no random module, no uuid, no environment.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ("admission", "profiling", "classification", "planning", "reprovisioning", "telemetry")
IO_LIBS = {"sqlalchemy", "asyncpg", "alembic", "aiokafka", "fastapi", "starlette", "uvicorn", "httpx",
           "opentelemetry", "pydantic_settings", "requests"}
OURS = {"sextant_contracts", "sextant_core", "sextant_kit", "sextant_sim", "sextant_cli", "sextant_agent",
        "sextant_infra", *(f"sextant_{s}" for s in SERVICES)}


def package_dirs() -> dict[str, Path]:
    dirs = {f"sextant_{n}": ROOT / "libs" / n / "src" / f"sextant_{n}" for n in ("contracts", "core", "kit", "sim")}
    dirs |= {f"sextant_{s}": ROOT / "services" / s / "src" / f"sextant_{s}" for s in SERVICES}
    dirs |= {"sextant_cli": ROOT / "apps/cli/src/sextant_cli", "sextant_agent": ROOT / "apps/agent/src/sextant_agent",
             "sextant_infra": ROOT / "infra/sextant_infra"}
    return dirs


def imports_of(path: Path) -> set[str]:
    """Top-level module names imported by a file (relative imports excluded)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def top(name: str) -> str:
    return name.split(".")[0]


# package -> (allowed first-party packages, forbidden third-party/stdlib top-level modules)
RULES: dict[str, tuple[set[str], set[str]]] = {
    "sextant_contracts": (set(), IO_LIBS | {"numpy"}),
    "sextant_core": ({"sextant_contracts"}, IO_LIBS | {"time", "random", "uuid", "os", "datetime",
                                                      "socket", "subprocess", "threading", "asyncio"}),
    "sextant_sim": ({"sextant_contracts", "sextant_core"}, IO_LIBS | {"random", "uuid"}),
    "sextant_kit": ({"sextant_contracts"}, {"numpy", "scipy", "sklearn"}),
    "sextant_infra": ({"sextant_contracts"}, set()),
    "sextant_agent": ({"sextant_contracts", "sextant_core", "sextant_kit", "sextant_sim"}, set()),
    "sextant_cli": ({"sextant_contracts", "sextant_core", "sextant_kit", "sextant_sim", "sextant_infra"}, set()),
}
for _s in SERVICES:
    RULES[f"sextant_{_s}"] = ({"sextant_contracts", "sextant_core", "sextant_kit"}, set())

# Test plumbing: kit's pytest plugin (sextant_kit/testing/) starts the project's real servers.
TESTING_MAY_IMPORT: dict[str, set[str]] = {"sextant_kit": {"sextant_infra"}}

# sim may read the wall clock only where it reports wall time to the user, never in the engine.
SIM_WALL_CLOCK_OK = {"cli.py", "report.py", "__main__.py", "runner.py", "run.py"}  # wall_seconds of a run (run.py: adaptation runs)


def source_files(pkg: str) -> list[Path]:
    return sorted(package_dirs()[pkg].rglob("*.py"))


def offences_of(pkg: str, files: list[Path], base: Path) -> list[str]:
    """What `files` of package `pkg` (rooted at `base`) do against the rule, one line each."""
    allowed, forbidden = RULES[pkg]
    offences = []
    for f in files:
        for name in imports_of(f):
            t = top(name)
            testing_ok = t in TESTING_MAY_IMPORT.get(pkg, set()) and "testing" in f.relative_to(base).parts
            if t in OURS and t != pkg and t not in allowed and not testing_ok:
                offences.append(f"{f} imports {name}")
            if t in forbidden:
                offences.append(f"{f} imports forbidden {name}")
            if pkg == "sextant_sim" and t == "time" and f.name not in SIM_WALL_CLOCK_OK:
                offences.append(f"{f} reads the wall clock")
    return offences


@pytest.mark.parametrize("pkg", sorted(RULES), ids=str)
def test_package_respects_dependency_rule(pkg: str) -> None:
    files = source_files(pkg)
    assert files, f"{pkg} has no source files"
    offences = offences_of(pkg, files, package_dirs()[pkg])
    assert not offences, "\n".join(offences)


def test_the_rule_catches_a_violation(tmp_path: Path) -> None:
    """The checker itself can fail: the same function the rule test runs reports a core file that
    reads the clock or imports kit, a sim engine file that reads the wall clock, and a core file
    that imports the clock under a `testing` folder (only kit's testing may import infra); it
    passes a clean file."""
    bad = tmp_path / "bad.py"
    bad.write_text("import time\nfrom sextant_kit import settings\n")
    found = offences_of("sextant_core", [bad], tmp_path)
    assert f"{bad} imports forbidden time" in found and f"{bad} imports sextant_kit" in found
    assert sorted(offences_of("sextant_sim", [bad], tmp_path)) == [f"{bad} imports sextant_kit",
                                                                   f"{bad} reads the wall clock"]
    (tmp_path / "testing").mkdir()
    infra = tmp_path / "testing" / "fixtures.py"
    infra.write_text("import sextant_infra.stack\n")
    assert offences_of("sextant_kit", [infra], tmp_path) == []
    assert offences_of("sextant_contracts", [infra], tmp_path) == [f"{infra} imports sextant_infra.stack"]
    clean = tmp_path / "clean.py"
    clean.write_text("import math\nfrom sextant_contracts import events\n")
    assert offences_of("sextant_core", [clean], tmp_path) == []


def test_every_service_has_the_five_files() -> None:
    for s in SERVICES:
        d = package_dirs()[f"sextant_{s}"]
        missing = [f for f in ("main.py", "settings.py", "handlers.py", "api.py", "views.py") if not (d / f).exists()]
        assert not missing, f"{s} lacks {missing}"


def test_core_never_reads_the_environment() -> None:
    for f in source_files("sextant_core"):
        text = f.read_text()
        for needle in ("os.environ", "getenv", "uuid4", "time.time", "datetime.now"):
            assert needle not in text, f"{f} mentions {needle}"


def absolute_imports(path: Path, base: Path, pkg: str) -> set[str]:
    """Every module a file imports, relative imports resolved against its package `pkg` (rooted at `base`)."""
    here = [pkg, *path.relative_to(base).with_suffix("").parts]
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            root = here[:len(here) - node.level] if node.level else []
            mod = ".".join([*root, *([node.module] if node.module else [])])
            names.add(mod)
            names |= {f"{mod}.{a.name}" for a in node.names}
    return names


TEST_SUPPORT = ("sextant_core.testing", "sextant_kit.testing")


def support_imports(pkg: str, files: list[Path], base: Path) -> list[str]:
    """Product files (outside any `testing` module or package) that import test support."""
    out = []
    for f in files:
        if "testing" in f.relative_to(base).with_suffix("").parts:
            continue
        out += [f"{f} imports {n}" for n in sorted(absolute_imports(f, base, pkg))
                if any(n == s or n.startswith(f"{s}.") for s in TEST_SUPPORT)]
    return out


def test_the_product_never_imports_test_support() -> None:
    """Builders, the in-process platform, the synthetic classification world and the server
    fixtures serve tests and benchmarks only."""
    offences = [o for pkg in sorted(RULES) for o in support_imports(pkg, source_files(pkg), package_dirs()[pkg])]
    assert not offences, "\n".join(offences)


def test_the_support_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "planning").mkdir()
    bad = tmp_path / "planning" / "x.py"
    bad.write_text("from ..testing.synthetic import SyntheticWorld\n")
    assert support_imports("sextant_core", [bad], tmp_path) == [
        f"{bad} imports sextant_core.testing.synthetic", f"{bad} imports sextant_core.testing.synthetic.SyntheticWorld"]
    (tmp_path / "testing").mkdir()
    ok = tmp_path / "testing" / "loop.py"
    ok.write_text("from .builders import record\n")
    assert support_imports("sextant_core", [ok], tmp_path) == []
