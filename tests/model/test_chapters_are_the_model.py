"""One source of truth: the composed model runs the chapter functions a reader learns from.

Every case is run on the model (with each client it names) and judged, and every recorded history
(``conformance/evidence``, ``conformance/regressions`` and the live histories the model tests pin,
``tests/conformance/live_histories``) is judged, while a profiler notes which functions of
``reference_model`` ran. Every public function and method of a chapter module must be among them:
a chapter function that only tests call is a second copy of a rule the model states elsewhere
(issue 13, "One source of truth").

Exempt, by kind rather than by name: the public facade (``spec``, ``spec_keyshared``: functions
users call without a broker, built on the chapters); the rule registry (``rules``, which runs
at import); ``typing.Protocol`` classes (their bodies are signatures); failure explanations
(``explain*``, ``describe``) and serialisation (``to_json``); a method whose body only raises (the
model stating that a call cannot happen, a crash rather than a rule: the Dispatcher protocol asks
every dispatcher for ``hold_for_dead_letter``, and Exclusive/Failover never count a redelivery). ``STILL_UNCALLED`` lists, with the
reason, the functions not yet reached; the test fails when a function outside it is unreached,
and when one inside it becomes reached (so the list only shrinks).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from conformance.case_files import discover_cases
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import History, load

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "reference_model"
# the facade, and the two vocabularies every layer reads (the rule registry, broker releases):
# they are not chapters, and reports, fixtures and the CLI call what the model does not
FACADE_AND_REGISTRY = {"spec.py", "spec_keyshared.py", "rules.py", "releases.py"}
EXEMPT_NAMES = {"to_json", "describe"}

_STORAGE = ("no trace observes BookKeeper placement yet (no persistence-policy or ledger op in the vocabulary; issue 18): tests/model/test_bookkeeper.py runs it on the research vectors and tests/live/test_bookkeeper_live.py against the broker")
# name -> why it is not reached yet. Keep each reason specific; remove the entry once reached.
STILL_UNCALLED: dict[str, str] = {
    "schema.Fixed.name": "no case or generated trace brings an Avro fixed schema yet (the chapter's tests do)",
    "schema.can_read": "a yes/no over why_unreadable for readers of the spec; the composed model asks why_unreadable",
    "schema.auto_produce_schema": "AUTO_PRODUCE is not in the trace vocabulary yet (only AUTO_CONSUME is)",
    "bookkeeper.acknowledge": _STORAGE,
    "bookkeeper.bookies_of": _STORAGE,
    "bookkeeper.covered": _STORAGE,
    "bookkeeper.ensemble_at": _STORAGE,
    "bookkeeper.ensemble_change": _STORAGE,
    "bookkeeper.entries_on_position": _STORAGE,
    "bookkeeper.persistence_refusal": _STORAGE,
    "bookkeeper.read_refusal": _STORAGE,
    "bookkeeper.write_set": _STORAGE,
}


def _only_raises(function: ast.FunctionDef) -> bool:
    """The body is a docstring at most and one ``raise``: a call the model says cannot happen."""
    body = [s for s in function.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    return len(body) == 1 and isinstance(body[0], ast.Raise)


def _public_functions() -> dict[str, tuple[Path, set[int]]]:
    """``module.Class.name`` -> (file, the lines a call's code object may start at)."""
    out: dict[str, tuple[Path, set[int]]] = {}
    for path in sorted(MODEL.rglob("*.py")):
        if path.name in FACADE_AND_REGISTRY:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module = ".".join(path.relative_to(MODEL).with_suffix("").parts)

        def walk(node: ast.AST, prefix: str) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.ClassDef):
                    if any(getattr(b, "id", getattr(b, "attr", None)) == "Protocol" for b in child.bases):
                        continue
                    if not child.name.startswith("_"):
                        walk(child, f"{prefix}{child.name}.")
                elif isinstance(child, ast.FunctionDef):
                    name = child.name
                    if name.startswith("_") or name in EXEMPT_NAMES or name.startswith("explain") or _only_raises(child):
                        continue
                    lines = {child.lineno} | {d.lineno for d in child.decorator_list}
                    out[f"{module}.{prefix}{name}"] = (path.resolve(), lines)

        walk(tree, "")
    return out


def _forget_memos() -> None:
    """Empty every cache of the model's pure functions (``functools.lru_cache`` and the Failover
    ring's dict), so that whatever ran earlier in the session cannot hide a call."""
    import importlib
    import pkgutil

    import reference_model
    from reference_model.dispatch import failover

    for info in pkgutil.walk_packages(reference_model.__path__, "reference_model."):
        module = importlib.import_module(info.name)
        for value in list(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()
    failover._RING_CACHE.clear()


def _reached_by(cases, histories) -> set[tuple[Path, int]]:
    """(file, first line) of every model function that runs while ``cases`` run on the model (with
    each client they name) and are judged, and ``histories`` are judged."""
    called: set[tuple[str, int]] = set()
    model_dir = str(MODEL)

    # The hook runs on every call and return of the whole run: it only notes (file, line), and the
    # files are filtered and resolved once afterwards (resolving a path per call made this test 111 s).
    def profile(frame, event, arg):  # noqa: ARG001 - sys.setprofile's signature
        if event == "call":
            code = frame.f_code
            called.add((code.co_filename, code.co_firstlineno))

    _forget_memos()  # a memoised function answered from its cache never runs
    sys.setprofile(profile)
    try:
        for case in cases:
            for client in case.clients or ("python",):
                history = ModelTarget(client="python" if client == "cpp" else client).run(case.trace)
                check(history)
        for history in histories:
            check(history)
    finally:
        sys.setprofile(None)
    return {(Path(file).resolve(), line) for file, line in called if file.startswith(model_dir)}


@pytest.fixture(scope="module")
def reached() -> set[tuple[Path, int]]:
    recorded = (sorted((ROOT / "conformance" / "evidence").rglob("*.jsonl"))
                + sorted((ROOT / "conformance" / "regressions").glob("*.history.jsonl"))
                + sorted((ROOT / "tests" / "conformance" / "live_histories").glob("*.jsonl")))
    histories = [h for p in recorded if isinstance(h := load(p), History)]
    assert histories, "no recorded live history under conformance/evidence"
    return _reached_by(discover_cases(), histories)


def test_every_chapter_function_runs_in_the_model(reached):
    functions = _public_functions()
    unknown = sorted(set(STILL_UNCALLED) - set(functions))
    assert not unknown, f"STILL_UNCALLED names functions that do not exist (renamed or removed?): {unknown}"
    unreached = sorted(name for name, (path, lines) in functions.items()
                       if not any((path, line) in reached for line in lines))
    new = [name for name in unreached if name not in STILL_UNCALLED]
    assert not new, ("chapter functions no case, model run or judged history reaches: make the model call "
                     f"them (or move a user-facing one to the spec facade): {new}")
    now_reached = sorted(set(STILL_UNCALLED) - set(unreached))
    assert not now_reached, f"reached now: remove them from STILL_UNCALLED: {now_reached}"


def test_the_scan_sees_a_function_nothing_calls(reached):
    """The scan itself can fail: run one case that has no dead-letter policy, and the dead-letter
    chapter's ``on_delivery`` is reported unreached; the whole corpus reaches it."""
    functions = _public_functions()
    assert "dead_letter.on_delivery" in functions and "dispatch.base.Dispatcher.deliver" not in functions
    path, lines = functions["dead_letter.on_delivery"]
    assert any((path, line) in reached for line in lines)
    one = [c for c in discover_cases() if c.id == "ack-individual"]
    assert one and "dead_letter" not in str(one[0].trace)
    assert not any((path, line) in _reached_by(one, []) for line in lines)
