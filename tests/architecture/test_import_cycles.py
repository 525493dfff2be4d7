"""No import cycles between the modules of any package (libs, services, apps, infra).

The graph is built from the source text with `ast`, not by importing: one node per module, one
edge per import statement that runs when the module is loaded or that a type checker follows —
module level, inside module-level `if`/`try` blocks (`if TYPE_CHECKING:` included: a cycle that
only the type checker sees is still two modules that each need the other to be understood), and
in class bodies. Imports inside functions are left out: they run when called, after every module
is loaded, and are the usual way to defer a heavy or optional dependency.

`from pkg import name` is an edge to `pkg.name` when that is a module, else to `pkg` (its
`__init__`). A cycle is reported as one path through a strongly connected component.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def package_roots() -> list[Path]:
    """The top-level package directories of every installable package of the repository."""
    roots = [*ROOT.glob("libs/*/src/*"), *ROOT.glob("services/*/src/*"), *ROOT.glob("apps/*/src/*"),
             ROOT / "infra" / "sextant_infra"]
    return sorted(r for r in roots if (r / "__init__.py").is_file())


def modules_of(root: Path) -> dict[str, Path]:
    """Module name -> file, for every `.py` file under the package directory `root`."""
    out: dict[str, Path] = {}
    for f in sorted(root.rglob("*.py")):
        parts = (root.name, *f.relative_to(root).with_suffix("").parts)
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = f
    return out


def _load_time_nodes(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements under `node` that run at import time (not inside a function)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _load_time_nodes(child)


def imports_of(name: str, path: Path, known: Mapping[str, Path]) -> set[str]:
    """The known modules that module `name` (file `path`) imports at load time."""
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for node in _load_time_nodes(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name in known}
            continue
        if node.level:
            base_parts = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*base_parts, *([node.module] if node.module else [])])
        else:
            base = node.module or ""
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            if sub in known:
                out.add(sub)
            elif base in known:
                out.add(base)
    out.discard(name)
    return out


def import_graph(roots: list[Path]) -> dict[str, set[str]]:
    known: dict[str, Path] = {}
    for r in roots:
        known |= modules_of(r)
    return {name: imports_of(name, path, known) for name, path in sorted(known.items())}


def components(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module, each sorted (Tarjan,
    iterative; deterministic order): every module of one imports every other, transitively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp: list[str] = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                if len(comp) > 1:
                    components.append(sorted(comp))
    return sorted(components)


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One cycle (a closed path, first module repeated last) per component of `components`."""
    return [_path_through(c, graph) for c in components(graph)]


def _path_through(component: list[str], graph: Mapping[str, set[str]]) -> list[str]:
    """A shortest closed path from the component's first module back to itself (BFS inside it)."""
    members = set(component)
    start = component[0]
    parents: dict[str, str] = {}
    frontier = [start]
    while frontier:
        nxt: list[str] = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parents[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if child not in parents:
                    parents[child] = node
                    nxt.append(child)
        frontier = nxt
    raise AssertionError(f"{component} is not strongly connected")


# --- the checks --------------------------------------------------------------------------------


def test_every_package_is_walked() -> None:
    names = {r.name for r in package_roots()}
    assert {"sextant_contracts", "sextant_core", "sextant_kit", "sextant_sim", "sextant_cli",
            "sextant_agent", "sextant_infra", "sextant_planning", "sextant_telemetry"} <= names


def test_no_import_cycles() -> None:
    graph = import_graph(package_roots())
    found = components(graph)
    assert not found, "modules that import each other:\n" + "\n".join(
        f"{', '.join(c)}\n  e.g. {' -> '.join(_path_through(c, graph))}" for c in found)


def test_the_walk_finds_a_cycle_through_type_checking_and_relative_imports(tmp_path: Path) -> None:
    """The checker can fail: a two-module cycle closed by an `if TYPE_CHECKING:` import (the shape
    `decide.py` and `policies.py` used to have) and a three-module one through `from . import`
    and the package's `__init__` are both reported; an import inside a function is not an edge."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .c import C\n")
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nfrom .b import B\n"
                              "if TYPE_CHECKING:\n    from .b import X\n")
    (pkg / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.a import A\n")
    (pkg / "c.py").write_text("from .sub import d\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "d.py").write_text("from .. import C\n")
    (pkg / "e.py").write_text("def late():\n    from . import f\n")
    (pkg / "f.py").write_text("from . import e\n")
    found = cycles(import_graph([pkg]))
    assert found == [["pkg", "pkg.c", "pkg.sub.d", "pkg"], ["pkg.a", "pkg.b", "pkg.a"]]
