"""Behaviour that differs between releases on purpose (a rule's ``applies_to`` or a release
default), judged on recordings from each side: the model plays the release the history names.

PLS-COMPACT-003, keyless messages and compaction: dropped from the compacted view from 3.2.0
(PIP-318, apache/pulsar PR #21578, topicCompactionRetainNullKey=false), kept before (the key's
cherry-picks default to true; 2.10/2.11/3.1.0 have no key and always pass them through, PR #1514).
Recorded: 2.10.5 (kept) and 3.3.6 (dropped), the same case and client.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.checker import check
from conformance.trace import History, load, replace_header
from reference_model.profiles import profile_for, with_broker_config

HERE = Path(__file__).parent / "live_histories"


def _history(name: str) -> History:
    return load(HERE / name)


@pytest.mark.parametrize("release, kept", [("2.10.5", True), ("2.11.0", True), ("3.0.7", True), ("3.1.0", True),
                                           ("3.2.3", False), ("3.3.6", False), ("4.0.8", False), ("2.x", True), ("3.x", False)])
def test_keyless_retention_default_by_release(release, kept):
    assert profile_for(release, "python").compaction_retains_keyless is kept


def test_the_brokers_runtime_value_wins_over_the_release_default():
    base = profile_for("3.0.7", "python")
    assert with_broker_config(base, {"topicCompactionRetainNullKey": "false"}).compaction_retains_keyless is False
    assert with_broker_config(profile_for("4.0.8"), {"topicCompactionRetainNullKey": "true"}).compaction_retains_keyless
    assert with_broker_config(base, {}) is base


@pytest.mark.parametrize("name", ["live-2.10.5-compact-latest-per-key.jsonl", "live-3.3.6-compact-latest-per-key.jsonl"])
def test_each_release_passes_its_own_compaction(name):
    report = check(_history(name))
    assert report.rule_verdicts().get("PLS-COMPACT-003") == "PASS", report.summary()
    assert report.ok, report.summary()


@pytest.mark.parametrize("name, as_release", [("live-2.10.5-compact-latest-per-key.jsonl", "3.3.6"),
                                              ("live-3.3.6-compact-latest-per-key.jsonl", "2.10.5")])
def test_judged_as_the_other_release_each_fails_on_keyless(name, as_release):
    history = _history(name)
    wrong = History(replace_header(history.header, broker_version=as_release), history.events)
    failed = {v.rule_id for v in check(wrong).failures()}
    assert "PLS-COMPACT-003" in failed, check(wrong).summary()
