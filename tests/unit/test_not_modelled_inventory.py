"""docs/not-modelled.md lists every place the model refuses to follow a step, and nothing else.

A raise site is a ``raise NotModelledError(...)`` (a ``Raise`` whose exception is a call of the name
``NotModelledError``, whatever its argument: a string, an f-string, a constant such as
``self._KEYLESS_ON_PARTITIONS``, a local) in ``reference_model/**/*.py`` or ``conformance/**/*.py``. Its key is
``path::Class.method`` (the enclosing classes and functions, joined by dots; ``<module>`` at module level).
The doc writes each site as the first cell of a table row, in backticks; several raises in one function are
several rows with the same key. The test compares multisets: the count of each key in the code equals its
count in the doc, so adding, removing or moving a raise without updating the doc fails here.

Read from the source with ``ast``, without importing anything.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("reference_model", "conformance")
DOC = ROOT / "docs" / "not-modelled.md"

# the first cell of a table row: | `path::Qual.name` | ...
_ROW = re.compile(r"^\|\s*`([^`\s]+\.py::[^`\s]+)`\s*\|")


def _is_not_modelled_raise(node: ast.AST) -> bool:
    return (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call)
            and isinstance(node.exc.func, ast.Name) and node.exc.func.id == "NotModelledError")


def raise_sites(root: Path = ROOT) -> Counter[str]:
    """``path::Class.method`` -> how many ``raise NotModelledError(...)`` it holds, over the packages' sources."""
    sites: Counter[str] = Counter()

    def walk(node: ast.AST, path: str, stack: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                walk(child, path, [*stack, child.name])
                continue
            if _is_not_modelled_raise(child):
                sites[f"{path}::{'.'.join(stack) or '<module>'}"] += 1
            walk(child, path, stack)

    for pkg in PACKAGES:
        for f in sorted((root / pkg).rglob("*.py")):
            walk(ast.parse(f.read_text(encoding="utf-8"), filename=str(f)), f.relative_to(root).as_posix(), [])
    return sites


def doc_sites(doc: Path = DOC) -> Counter[str]:
    """``path::Class.method`` -> how many table rows of the doc name it."""
    return Counter(m.group(1) for line in doc.read_text(encoding="utf-8").splitlines() if (m := _ROW.match(line)))


def _listing(diff: Counter[str]) -> str:
    return "\n".join(f"  {key}" + (f" (x{n})" if n > 1 else "") for key, n in sorted(diff.items()))


def test_the_scan_finds_raise_sites():
    sites = raise_sites()
    assert sites, "no raise NotModelledError(...) found under reference_model/ or conformance/: is the scan broken?"
    assert all(".py::" in key for key in sites), sorted(sites)


def test_every_raise_site_is_in_the_doc_and_no_other():
    code, doc = raise_sites(), doc_sites()
    missing, extra = code - doc, doc - code
    problems = []
    if missing:
        problems.append("raise NotModelledError(...) sites with fewer rows in docs/not-modelled.md than raises "
                        "in the code (add a row per raise):\n" + _listing(missing))
    if extra:
        problems.append("rows in docs/not-modelled.md with no matching raise NotModelledError(...) left in the code "
                        "(remove or rename them):\n" + _listing(extra))
    assert not problems, "\n".join(problems)


def test_the_counts_section_adds_up_the_rows():
    """The Counts section (the total, by class, by file) says what the rows say: a row's class is its last cell."""
    text = DOC.read_text(encoding="utf-8")
    by_class: Counter[str] = Counter()
    by_file: dict[str, Counter[str]] = {}
    for line in text.splitlines():
        if _ROW.match(line):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            by_class[cells[-1]] += 1
            by_file.setdefault(cells[0].strip("`").split("::")[0], Counter())[cells[-1]] += 1
    assert set(by_class) <= {"client timing", "unspecified", "model gap"}, by_class
    counts = text[text.index("## Counts"):]
    total = sum(by_class.values())
    assert f"\n{total} raise sites." in counts, f"the Counts section should say {total} raise sites"
    for cls in ("client timing", "unspecified", "model gap"):
        assert f"| {cls} | {by_class[cls]} |" in counts, f"{cls}: {by_class[cls]} rows"
    for path, c in by_file.items():
        row = f"| {path} | {sum(c.values())} | {c['client timing']} | {c['unspecified']} | {c['model gap']} |"
        assert row in counts, f"the Counts section should have the row {row}"
    listed = re.findall(r"^\| (\S+\.py) \|", counts, flags=re.M)
    assert sorted(listed) == sorted(by_file), "the Counts section names a file no row has, or misses one"
