"""Every rule id the model and checker cite is a registered, non-withdrawn rule (test262-style anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

rules = pytest.importorskip("reference_model.rules")

ROOT = Path(__file__).resolve().parents[2]
MINE = [
    "reference_model/broker.py", "reference_model/cursor.py", "reference_model/ids.py", "reference_model/names.py",
    "reference_model/profiles.py", "reference_model/redelivery.py", "reference_model/spec.py",
    "reference_model/dispatch/base.py", "reference_model/dispatch/exclusive.py", "reference_model/dispatch/failover.py",
    "reference_model/dispatch/shared.py", "conformance/checker.py", "conformance/targets/model.py",
]
# Cited on purpose although withdrawn: docstrings explain why the rule no longer holds.
MENTIONED_AS_WITHDRAWN = {"PLS-FAILOVER-001"}


def cited_ids() -> set[str]:
    found: set[str] = set()
    for rel in MINE:
        found |= set(re.findall(r"PLS-[A-Z]+-\d{3}", (ROOT / rel).read_text(encoding="utf-8")))
    return found


def test_cited_rule_ids_are_registered():
    registered = {r.id: r for r in rules.RULES}
    missing = sorted(cited_ids() - set(registered))
    assert not missing, f"cite only registered rules; unknown: {missing}"
    withdrawn = sorted(i for i in cited_ids() - MENTIONED_AS_WITHDRAWN if registered[i].status == "withdrawn")
    assert not withdrawn, f"withdrawn rules cited as live rules: {withdrawn}"
