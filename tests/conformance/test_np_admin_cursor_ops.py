"""Admin cursor ops on a non-persistent topic (reference_model/admin_ops.py step 6, ``non_persistent_cursor_refusal``).

Recorded live on 4.0.8 (6 Dec 2026, probe traces of the Python and the Java client; the conclusive part is the case
np-admin-cursor-ops): skip, clear_backlog and a reset to an id, earliest or latest answer HTTP 500 (recorded
indeterminate), a reset to a publish time succeeds and moves nothing, a missing subscription's reset to a time is
404; on a partitioned topic a skip and a reset to a position are 405, and a topic-wide clear_backlog after the last
consumer left is ok. The model says none of them changed anything, so the receives after them are judged: as played
they pass, and a message the ops would have brought back FAILs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conformance.checker import check
from conformance.trace import History, load
from reference_model.admin_ops import non_persistent_cursor_refusal

HERE = Path(__file__).parent / "live_histories"
FLAT = {c: HERE / f"live-4.0.8-np-admin-cursor-server-errors-{c}.jsonl" for c in ("python", "java")}
PARTITIONED = HERE / "live-4.0.8-np-admin-cursor-server-errors-partitioned-python.jsonl"
AFTER_THE_RESETS, AFTER_M3 = 16, 18  # the receives after the resets (nothing) and after m3's send (m3)


def _payload(event) -> str | None:
    return ((event.outcome.value or {}).get("message") or {}).get("payload")


def _failed(history: History) -> set[str]:
    return {v.rule_id for v in check(history).failures()}


@pytest.mark.parametrize("path", [FLAT["python"], FLAT["java"], PARTITIONED], ids=["python", "java", "partitioned"])
def test_as_the_broker_played_it_no_rule_fails(path):
    report = check(load(path))
    assert report.failures() == [], report.summary()
    assert not report.not_followed, "every step is followed: the 500s change nothing the model does not know"


@pytest.mark.parametrize("client", ["python", "java"])
def test_the_steps_after_the_server_errors_are_judged(client):
    report = check(load(FLAT[client]))
    judged = {v.step for v in report.verdicts if v.status == "PASS"}
    assert {AFTER_THE_RESETS, AFTER_M3} <= judged


@pytest.mark.parametrize("client", ["python", "java"])
def test_a_message_the_reset_to_earliest_would_have_brought_back_fails(client):
    """If the 500 had reset the cursor, m2 (received, never acked) would come again: a non-persistent topic never
    redelivers (PLS-NP-002)."""
    history = load(FLAT[client])
    m2 = next(e for e in history.events if e.op.op == "receive" and _payload(e) == "m2")
    lied = History(history.header, tuple(replace(e, outcome=m2.outcome) if e.step == AFTER_THE_RESETS else e
                                         for e in history.events))
    failed = _failed(lied)
    assert "PLS-NP-002" in failed
    assert "PLS-SEEK-004" not in failed, "the reset to a time moved nothing: no reset point to charge it to"


@pytest.mark.parametrize("op, args, refused", [
    ("skip", {"topic": "n", "subscription": "s", "count": 1}, "OtherError"),
    ("clear_backlog", {"topic": "n", "subscription": "s"}, "OtherError"),
    ("reset_cursor", {"topic": "n", "subscription": "s", "position": "earliest"}, "OtherError"),
    ("reset_cursor", {"topic": "n", "subscription": "s", "message": "m1"}, "OtherError"),
    ("reset_cursor", {"topic": "n", "subscription": "s", "publish_time_of": "m1"}, None),
])
def test_the_rule_by_op(op, args, refused):
    got = non_persistent_cursor_refusal(op, args, subscription_exists=True, rule="PLS-SKIP-001")
    assert (got.error if got else None) == refused
    if got is not None:
        assert not got.certain, "an HTTP 500 is an unexpected server error, not a refusal the broker means"
    missing = non_persistent_cursor_refusal(op, args, subscription_exists=False, rule="PLS-SKIP-001")
    assert missing is not None and missing.error == (refused or "SubscriptionNotFound")
