"""No import cycles between the project's modules (issue 13, "one source of truth").

A cycle means two modules each own part of the other's job; the fix is to move the shared piece
to the module that owns it (as ``hashing.consumer_ring_index`` and ``reports/marks.py`` were).

The graph is built from the source with ``ast``, without importing anything: every ``import`` and
``from ... import`` anywhere in a module counts (module level, inside functions, under
``TYPE_CHECKING``), relative imports are resolved, and ``from pkg import name`` points at the
submodule ``pkg.name`` when there is one, else at ``pkg`` itself. Importing ``a.b.c`` is an edge
to ``a.b.c`` only: the implicit import of the parent packages is not counted, since a package's
``__init__`` re-exporting its submodules is not a cycle of responsibilities.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("reference_model", "conformance", "reports", "spark_reports", "fixtures", "pulsar_conformance")

# Cycles that need an edit in a file someone else owns right now, as frozensets of module names,
# each with the owner file and the edit that breaks it. Empty: there are none. Keep it that way.
ALLOWED_CYCLES: dict[frozenset[str], str] = {}


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Module name -> source file, for every ``.py`` file under the project's packages."""
    mods = {}
    for pkg in PACKAGES:
        for f in sorted((root / pkg).rglob("*.py")):
            parts = list(f.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            mods[".".join(parts)] = f
    return mods


def _owner(name: str, mods: dict[str, Path]) -> str | None:
    """The project module ``name`` lives in (``a.b.func`` -> ``a.b``), or None outside the project."""
    while name and name not in mods:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> the project modules it imports (anywhere in its body)."""
    graph = {}
    for mod, path in mods.items():
        package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        targets = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets.update(_owner(a.name, mods) for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # from . import x / from ..a import x
                    base = package[:len(package) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                for a in node.names:
                    sub = f"{source}.{a.name}"
                    targets.add(sub if sub in mods else _owner(source, mods))
        targets.discard(None)
        targets.discard(mod)
        graph[mod] = targets
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one module, as a closed path
    ``[a, b, ..., a]`` (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        components.append(comp)
    return [_path_in(comp, graph) for comp in components]


def _path_in(comp: set[str], graph: dict[str, set[str]]) -> list[str]:
    """A shortest cycle through the first module of ``comp`` (breadth-first within ``comp``)."""
    start = min(comp)
    parent = {start: None}
    queue = [start]
    for v in queue:
        for w in sorted(graph[v] & comp):
            if w == start:
                path = [v]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return [*reversed(path), start]
            if w not in parent:
                parent[w] = v
                queue.append(w)
    raise AssertionError(f"{sorted(comp)} is no cycle")  # cannot happen: comp is strongly connected


def test_the_graph_sees_every_kind_of_import():
    graph = import_graph(module_files())
    # module level, absolute
    assert "reference_model.hashing" in graph["reference_model.routing"]
    # inside a function
    assert "reference_model.rules" in graph["reports.client_matrix"]
    # from a package's __init__ importing its submodules
    assert "conformance.fuzz.driver" in graph["conformance.fuzz"]
    assert len(graph) > 50


def test_relative_imports_are_resolved(tmp_path):
    pkg = tmp_path / "reports"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .sub import leaf\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "leaf.py").write_text("def f():\n    from .. import other\n    from ..other import g\n")
    (pkg / "other.py").write_text("from reports.sub.leaf import f\n")
    graph = import_graph(module_files(tmp_path))
    assert graph["reports"] == {"reports.sub.leaf"}
    assert graph["reports.sub.leaf"] == {"reports.other"}
    assert cycles(graph) == [["reports.other", "reports.sub.leaf", "reports.other"]]


def test_no_import_cycles():
    found = cycles(import_graph(module_files()))
    unexpected = [c for c in found if frozenset(c) not in ALLOWED_CYCLES]
    assert not unexpected, "import cycles (move the shared piece into the module that owns it):\n" + "\n".join(
        "  " + " -> ".join(c) for c in unexpected)
    stale = [sorted(c) for c in ALLOWED_CYCLES if c not in {frozenset(f) for f in found}]
    assert not stale, f"allowed cycles that no longer exist, drop them from ALLOWED_CYCLES: {stale}"
