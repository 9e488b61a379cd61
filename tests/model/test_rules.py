"""Vocabulary rules.py: cited rule ids are registered and live; every feature rule is cited by a model module."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reference_model import chunking
from reference_model.rules import RULES, build_registry

rules = pytest.importorskip("reference_model.rules")
ROOT = Path(__file__).resolve().parents[2]
MINE = [
    "reference_model/broker.py", "reference_model/cursor.py", "reference_model/ids.py", "reference_model/names.py",
    "reference_model/profiles.py", "reference_model/redelivery.py", "reference_model/spec.py",
    "reference_model/dispatch/base.py", "reference_model/dispatch/exclusive.py", "reference_model/dispatch/failover.py",
    "reference_model/dispatch/shared.py", "conformance/checker.py", "conformance/targets/model.py",
]
# Cited on purpose although withdrawn: docstrings explain why the rule no longer holds. PLS-COMPACT-002 was
# replaced by PLS-COMPACT-006 (tombstones delete their key on every broker; 4.0.x keeping them is KD-003).
MENTIONED_AS_WITHDRAWN = {"PLS-FAILOVER-001", "PLS-COMPACT-002"}


FEATURE_AREAS = {"CHUNK", "DEDUP", "DELAY", "BATCH", "TTL", "RETENTION", "COMPACT", "ACCESS", "NP"}
FEATURE_RULES = tuple(r for r in RULES if r.area in FEATURE_AREAS or (r.area == "DLQ" and r.id != "PLS-DLQ-001"))


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


# ---------------------------------------------------------------- feature rules


def test_feature_rules_are_in_the_registry_without_clashes():
    merged = build_registry(RULES)
    assert len(merged) == len(RULES)
    # PLS-BATCH-008 (Java batch of one) joined the 51 of the feature issue; PLS-COMPACT-006 replaced the withdrawn -002;
    # PLS-DELAY-007 (delayedDeliveryMaxDelayInMillis, issue 18) joined later, and PLS-DLQ-008 (Go's MaxDeliveries, issue 19),
    # PLS-CHUNK-007/008 (Go's chunk boundary and size limit, issue 19), PLS-COMPACT-007 (Go leaves read_compacted to the broker),
    # PLS-BATCH-009 (when a batch leaves: timer, full container, flush; issue 46), PLS-BATCH-010 (an ack by the producer's id)
    assert len(FEATURE_RULES) == 60


def test_every_feature_rule_is_cited_by_a_model_module():
    import pathlib

    text = "".join(p.read_text() for p in pathlib.Path(chunking.__file__).parent.glob("*.py") if p.name != "rules.py")
    missing = [r.id for r in FEATURE_RULES if r.id not in text]
    assert missing == [], f"rules no model module mentions: {missing}"
