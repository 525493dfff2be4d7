"""The docs explain the code as it is: no issue numbers, generated results, short how-it-works pages.

- Code comments and docs name modules and documents, never issue numbers (the rule of STYLE's
  "Not to copy": a reader of the tree cannot follow an issue number; the tracker is not the
  product). Scanned: `libs services apps infra docs README.md`, as
  `grep -rniE 'issue[s]? ?#?[0-9]+'` would.
- Every page of `docs/results/` is what `bench/results_docs.py` renders from `bench/results/`
  today, byte for byte, one page per JSON document (and the baselines page for `sim-compare/`).
- The how-it-works pages (`docs/*.md`) stay under 60 000 bytes together; the API reference
  (`docs/api/`: the guide beside its OpenAPI and AsyncAPI documents) is reference, not counted.
- Every `docs/….md` that the code, the README or the docs name exists.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("libs", "services", "apps", "infra", "docs", "README.md")
ISSUE = re.compile(r"issues? ?#?[0-9]+", re.IGNORECASE)
SKIP_DIRS = {".venv", "__pycache__", ".git", ".mypy_cache", ".ruff_cache", "node_modules"}
HOW_IT_WORKS_BUDGET = 60_000


def text_files(paths: tuple[str, ...] = SCANNED) -> list[Path]:
    out: list[Path] = []
    for name in paths:
        p = ROOT / name
        candidates = [p] if p.is_file() else sorted(q for q in p.rglob("*") if q.is_file())
        for q in candidates:
            rel = q.relative_to(ROOT)
            if SKIP_DIRS & set(rel.parts) or any(part.endswith(".egg-info") for part in rel.parts):
                continue
            out.append(q)
    return out


def issue_numbers(text: str) -> list[str]:
    """Every issue reference in `text` (case-insensitive: "issue 8", "Issues #12", "issue8")."""
    return [m.group(0) for m in ISSUE.finditer(text)]


@pytest.mark.parametrize(("text", "found"), [
    ("the diurnal study of issue 8", ["issue 8"]),
    ("# --- Issue 5: planning", ["Issue 5"]),
    ("see issues #12 and #13", ["issues #12"]),
    ("issue8's benchmark", ["issue8"]),
    ("an issue with 5 servers; the adaptation study (docs/adaptation.md)", []),
], ids=["plain", "capitalised", "plural-hash", "glued", "none"])
def test_the_rule_finds_issue_numbers(text: str, found: list[str]) -> None:
    assert issue_numbers(text) == found


def test_no_issue_numbers_in_code_comments_or_docs() -> None:
    hits = []
    for f in text_files():
        try:
            text = f.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue  # binary
        for i, line in enumerate(text.splitlines(), 1):
            if issue_numbers(line):
                hits.append(f"{f.relative_to(ROOT)}:{i}: {line.strip()[:100]}")
    assert not hits, "name the module or document instead:\n" + "\n".join(hits)


def results_docs():  # bench/ holds scripts, not a package
    spec = importlib.util.spec_from_file_location("results_docs", ROOT / "bench" / "results_docs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_results_page_is_generated_from_its_json() -> None:
    rd = results_docs()
    pages = rd.render()
    results = ROOT / "bench" / "results"
    assert set(pages) >= {f"{p.stem}.md" for p in results.glob("*.json")}  # one page per JSON
    on_disk = {p.name for p in (ROOT / "docs" / "results").glob("*.md")}
    assert on_disk == set(pages), "pages without a JSON, or JSON without a page: run bench/results_docs.py"
    stale = [n for n, text in pages.items() if (ROOT / "docs" / "results" / n).read_text() != text]
    assert not stale, f"out of date with their JSON (run bench/results_docs.py): {stale}"


def test_a_results_page_shows_the_json_it_comes_from(tmp_path: Path) -> None:
    rd = results_docs()
    (tmp_path / "toy.json").write_text(
        '{"machine": {"cpus": 2}, "code_version": "abc123", "seed": 6,'
        ' "profiles": {"oracle": {"qos_met_fraction": 0.9096}, "random": {"qos_met_fraction": 0.186}}}')
    page = rd.render(tmp_path)["toy.md"]
    assert "- machine: cpus 2" in page
    assert "- code version: code_version `abc123`" in page
    assert "| oracle | 0.9096 |" in page and "| random | 0.186 |" in page


def test_how_it_works_pages_are_short() -> None:
    pages = sorted((ROOT / "docs").glob("*.md"))
    sizes = {p.name: p.stat().st_size for p in pages}
    assert pages and sum(sizes.values()) < HOW_IT_WORKS_BUDGET, sizes


DOC_REF = re.compile(r"docs/[\w./-]+?\.md")


def test_every_named_doc_exists() -> None:
    missing = set()
    for f in text_files((*SCANNED, "bench", "tests")):  # not CHANGELOG.md: history names old pages
        if f.suffix not in {".py", ".md", ".yaml", ".yml", ".toml"}:
            continue
        for ref in DOC_REF.findall(f.read_text(encoding="utf-8")):
            if "*" not in ref and "<" not in ref and not (ROOT / ref).exists():
                missing.add(f"{f.relative_to(ROOT)}: {ref}")
    assert not missing, sorted(missing)


SECTION_REF = re.compile(r'(docs/[\w./-]+?\.md),? "([^"]+)"')


def test_every_named_section_exists() -> None:
    """A reference `docs/<page>.md, "<heading>"` names a heading of that page."""
    missing = set()
    for f in text_files((*SCANNED, "bench", "tests")):
        if f.suffix not in {".py", ".md", ".yaml", ".yml", ".toml"}:
            continue
        for page, heading in SECTION_REF.findall(f.read_text(encoding="utf-8")):
            target = ROOT / page
            heads = [ln for ln in target.read_text().splitlines() if ln.startswith("#")] if target.exists() else []
            if not any(heading in h for h in heads):
                missing.add(f"{f.relative_to(ROOT)}: {page}, \"{heading}\"")
    assert not missing, sorted(missing)
