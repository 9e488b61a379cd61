"""The checker talks to the model through ``conformance.model_view.ModelView`` only."""

from __future__ import annotations

import ast
from pathlib import Path

from conformance.model_view import ModelView
from reference_model.broker import Broker

ROOT = Path(__file__).resolve().parents[2]
# the modules that judge histories against the model
JUDGES = ["conformance/checker.py", "conformance/detectors.py", "conformance/feature_checks.py",
          "conformance/client_diff.py", "conformance/mutation.py"]


def _declared() -> set[str]:
    tree = ast.parse((ROOT / "conformance" / "model_view.py").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "ModelView")
    names = set()
    for node in cls.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
    return names


def _model_members_used(path: Path) -> dict[str, int]:
    """Attributes read on ``model``, ``self.model`` or ``w.model`` (name -> first line)."""
    used: dict[str, int] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute):
            continue
        v = node.value
        if (isinstance(v, ast.Name) and v.id == "model") or (
                isinstance(v, ast.Attribute) and v.attr == "model" and isinstance(v.value, ast.Name)
                and v.value.id in ("self", "w", "watch")):
            used.setdefault(node.attr, node.lineno)
    return used


def test_the_judges_use_only_what_model_view_declares():
    declared = _declared()
    undeclared = [f"{f}:{line}: model.{name}" for f in JUDGES
                  for name, line in sorted(_model_members_used(ROOT / f).items()) if name not in declared]
    assert undeclared == [], "declare these in conformance/model_view.py or stop using them"
    assert not [n for n in declared if n.startswith("_")], "ModelView declares no private member"


def test_broker_provides_every_declared_member():
    broker = Broker()
    missing = sorted(n for n in _declared() if not hasattr(broker, n))
    assert missing == []
    assert _model_members_used(ROOT / "conformance" / "checker.py"), "the scan sees the checker's questions"
    assert ModelView.__doc__
