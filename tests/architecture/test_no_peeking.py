"""No policy peeks at the twin's ground truth (docs/twin.md; DESIGN §2: a policy sees only the log).

The twin's *ground-truth modules* are the world and everything that holds or derives truths:
`cluster` (the world), `groundtruth` (its parameters), `workloads` (the truths), `interference`,
`platforms` (hidden platform speeds), `setup`/`arrivals` (truths of a run), `profiler`, `agent`,
`engine`, `ledger`, `metrics`, `runner`, `seeding`, `stragglers`.

Rules, checked on the import statements and attribute names of every source file (AST):
1. No module of `libs/core`, `libs/contracts`, `libs/kit` or `services/*` imports `sextant_sim`,
   or names the ground-truth file (`groundtruth`, `v1.yaml`, `v2.yaml`) in a string.
2. A *decision-side* module of `libs/sim` — one defining a function that takes a `ClusterState`
   (a planner, classifier, admission, reprovisioner, sizer) or returns a `PolicySet` — imports no
   ground-truth module and reads no `.truths`/`.truth`/`.world`/`.gt` attribute, unless it is
   marked `SANCTIONED_TRUTH_READ` (the oracle and the estimate port: yardsticks, not policies).
   Importing a sanctioned module (to build it) is allowed.

The checker is tested on synthetic offenders, so the test can fail.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SIM = ROOT / "libs/sim/src/sextant_sim"
TRUTH = {"cluster", "groundtruth", "workloads", "interference", "platforms", "setup", "arrivals", "profiler",
         "agent", "engine", "ledger", "metrics", "runner", "seeding", "stragglers"}
TRUTH_ATTRS = {"truths", "truth", "world", "gt"}
TRUTH_FILES = ("groundtruth", "v1.yaml", "v2.yaml")
MARK = "SANCTIONED_TRUTH_READ"


def _sim_module(node: ast.ImportFrom | ast.Import, package: str) -> list[str]:
    """First-level sextant_sim submodules an import statement reaches ('' = the package)."""
    out: list[str] = []
    if isinstance(node, ast.Import):
        for a in node.names:
            parts = a.name.split(".")
            if parts[0] == "sextant_sim":
                out.append(parts[1] if len(parts) > 1 else "")
        return out
    if node.level == 0:
        parts = (node.module or "").split(".")
        if parts[0] != "sextant_sim":
            return out
        base = parts[1:]
    else:
        pkg = package.split(".")
        pkg = pkg[: len(pkg) - (node.level - 1)]
        base = pkg[1:] + ((node.module or "").split(".") if node.module else [])
    if base:
        return [base[0]]
    return [a.name for a in node.names]  # from sextant_sim import cluster / from . import x


def _decision_side(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            if any(a.annotation is not None and "ClusterState" in ast.unparse(a.annotation) for a in args):
                return True
            if node.returns is not None and ast.unparse(node.returns).strip("'\"") == "PolicySet":
                return True
    return False


def _sanctioned(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == MARK for t in targets):
            return True
    return False


def sim_violations(source: str, module: str) -> list[str]:
    """Violations of rule 2 in one libs/sim module (`module` = dotted name, e.g. sextant_sim.x)."""
    tree = ast.parse(source)
    if not _decision_side(tree) or _sanctioned(tree):
        return []
    package = module if module.endswith("__init__") else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    sanctioned = _sanctioned_modules()
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            for m in _sim_module(node, package):
                if m in TRUTH and m not in sanctioned:
                    out.append(f"{module}:{node.lineno} imports ground-truth module sextant_sim.{m}")
        elif isinstance(node, ast.Attribute) and node.attr in TRUTH_ATTRS:
            out.append(f"{module}:{node.lineno} reads .{node.attr}")
    return out


def outside_violations(source: str, where: str) -> list[str]:
    """Violations of rule 1 in a module outside libs/sim."""
    tree = ast.parse(source)
    out: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom) and _sim_module(node, "x"):
            if isinstance(node, ast.Import) or node.level == 0:
                out.append(f"{where}:{node.lineno} imports sextant_sim")
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and any(f in node.value for f in TRUTH_FILES):
            out.append(f"{where}:{node.lineno} names the ground-truth file")
    return out


def _sanctioned_modules() -> set[str]:
    return {p.stem for p in SIM.glob("*.py") if _sanctioned(ast.parse(p.read_text()))}


def _sim_files() -> list[tuple[str, Path]]:
    out = []
    for p in sorted(SIM.rglob("*.py")):
        rel = p.relative_to(SIM.parent).with_suffix("")
        out.append((".".join(rel.parts), p))
    return out


def _outside_files() -> list[Path]:
    dirs = [ROOT / "libs/core/src", ROOT / "libs/contracts/src", ROOT / "libs/kit/src"]
    dirs += sorted((ROOT / "services").glob("*/src"))
    return [p for d in dirs for p in sorted(d.rglob("*.py"))]


# --- the real code -------------------------------------------------------------------------------

def test_the_sanctioned_truth_readers_are_the_oracle_the_estimate_port_and_straggler_scoring() -> None:
    # refestimator: the classification benchmark's reference estimator (the twin's prior and noise
    # model, a yardstick for bench/classification.py), never a policy: see the next test
    assert {"oracle", "estimates", "stragglers", "refestimator"} <= _sanctioned_modules()
    assert {"baselines", "reservations", "runner", "engine"}.isdisjoint(_sanctioned_modules())


def _imports_refestimator(source: str, module: str) -> bool:
    package = module.removesuffix(".__init__") if module.endswith("__init__") else module.rsplit(".", 1)[0]
    return any(m == "refestimator" for node in ast.walk(ast.parse(source))
               if isinstance(node, ast.Import | ast.ImportFrom) for m in _sim_module(node, package))


def test_only_benchmarks_use_the_reference_estimator() -> None:
    assert _imports_refestimator("from .refestimator import posterior\n", "sextant_sim.peek")  # the check can fail
    assert _imports_refestimator("from ..refestimator import posterior\n", "sextant_sim.adaptation.peek")
    users = [m for m, p in _sim_files() if m != "sextant_sim.refestimator" and _imports_refestimator(p.read_text(), m)]
    # refrows: the reference rows, the information yardstick (docs/quality/information.md) — itself a
    # sanctioned truth reader, built only by the baselines' wiring of its yardstick profiles
    assert users == ["sextant_sim.refrows"]
    assert "refrows" in _sanctioned_modules()


def test_decision_side_twin_modules_do_not_read_the_ground_truth() -> None:
    checked, problems = [], []
    for module, path in _sim_files():
        tree = ast.parse(path.read_text())
        if _decision_side(tree):
            checked.append(module)
        problems += sim_violations(path.read_text(), module)
    assert problems == []
    # the checker really looked at the policies of the twin
    assert {"sextant_sim.baselines", "sextant_sim.reservations", "sextant_sim.oracle"} <= set(checked)


def test_core_contracts_kit_and_services_never_touch_the_twin() -> None:
    files = _outside_files()
    assert len(files) > 50
    problems = [v for p in files for v in outside_violations(p.read_text(), str(p.relative_to(ROOT)))]
    assert problems == []


# --- the checker catches offenders -------------------------------------------------------------

POLICY = '''
from sextant_core.state.model import ClusterState
{imports}

class Peeking:
    def place(self, state: ClusterState, w, ctx):
        {body}
'''


@pytest.mark.parametrize(("imports", "body", "expected"), [
    ("from .cluster import World", "return None", "imports ground-truth module sextant_sim.cluster"),
    ("from sextant_sim import groundtruth", "return None", "imports ground-truth module sextant_sim.groundtruth"),
    ("import sextant_sim.workloads.base", "return None", "imports ground-truth module sextant_sim.workloads"),
    ("from ..setup import Setup", "return None", "imports ground-truth module sextant_sim.setup"),
    ("", "return self.view.truths[w.workload_id]", "reads .truths"),
    ("", "return self.engine.world.active", "reads .world"),
], ids=["relative-cluster", "from-package", "dotted-import", "parent-relative", "truths-attr", "world-attr"])
def test_checker_flags_a_policy_that_peeks(imports: str, body: str, expected: str) -> None:
    module = "sextant_sim.adaptation.peek" if imports.startswith("from ..") else "sextant_sim.peek"
    src = POLICY.format(imports=imports, body=body)
    found = sim_violations(src, module)
    assert any(expected in v for v in found), found


def test_checker_allows_a_sanctioned_reader_and_non_policy_world_code() -> None:
    sanctioned = POLICY.format(imports="from .cluster import World", body="return None") + \
        "\nSANCTIONED_TRUTH_READ = 'yardstick'\n"
    assert sim_violations(sanctioned, "sextant_sim.peek") == []
    world_side = "from .cluster import World\n\ndef step(world: World) -> None:\n    world.truths\n"
    assert sim_violations(world_side, "sextant_sim.helper") == []


def test_checker_flags_a_sizer_and_a_policy_set_builder() -> None:
    sizer = "from .workloads.base import WorkloadTruth\n\ndef size(state: 'ClusterState', w) -> tuple[int, float]:\n" \
            "    return 1, 1.0\n"
    assert sim_violations(sizer, "sextant_sim.peek")
    builder = "from .setup import prepare\n\ndef build() -> PolicySet:\n    ...\n"
    assert sim_violations(builder, "sextant_sim.peek")


@pytest.mark.parametrize(("src", "expected"), [
    ("from sextant_sim.cluster import World\n", "imports sextant_sim"),
    ("import sextant_sim\n", "imports sextant_sim"),
    ("PATH = 'libs/sim/src/sextant_sim/groundtruth/v2.yaml'\n", "names the ground-truth file"),
], ids=["from-import", "import", "yaml-path"])
def test_checker_flags_core_or_services_touching_the_twin(src: str, expected: str) -> None:
    found = outside_violations(src, "services/x.py")
    assert any(expected in v for v in found), found
