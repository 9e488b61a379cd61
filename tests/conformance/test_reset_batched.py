"""An admin reset to a batched message's id (PLS-SEEK-004, reference_model/admin_ops.py ``batched_reset_point``).

Recorded live on 4.0.8 (6 Dec 2026, the Python and the Java client), cases seek-admin-reset-batched (the suite's
broker, acknowledgmentAtBatchIndexLevelEnabled on) and seek-admin-reset-batched-index-ack-off (that setting off): four
messages in one batch, resets to m2, excluded m3, excluded m4 (the batch's last) and excluded m1. With the setting on
the reset starts at the message the id names; off, it reads the whole batch again, except past its last index.
Each history passes as the broker played it; each lie below shows what the other setting would have done, and FAILs.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conformance.checker import check
from conformance.trace import History, Outcome, load

HERE = Path(__file__).parent / "live_histories"
ON, OFF = "seek-admin-reset-batched", "seek-admin-reset-batched-index-ack-off"


def _history(case: str, client: str) -> History:
    return load(HERE / f"live-4.0.8-{case}-{client}.jsonl")


def _payload(event) -> str | None:
    return ((event.outcome.value or {}).get("message") or {}).get("payload")


def _receives(history: History, step: int, label: str | None) -> History:
    """The receive at ``step`` shows ``label`` (copied from a receive of it in the history), or nothing."""
    source = next(e for e in history.events if e.op.op == "receive" and _payload(e) == label) if label else None
    outcome = source.outcome if source is not None else Outcome.ok({"message": None})
    return History(history.header, tuple(replace(e, outcome=outcome) if e.step == step else e for e in history.events))


def _failed(history: History) -> set[str]:
    return {v.rule_id for v in check(history).failures()}


@pytest.mark.parametrize("case", [ON, OFF])
@pytest.mark.parametrize("client", ["python", "java"])
def test_as_the_broker_played_it_passes(case, client):
    report = check(_history(case, client))
    assert report.failures() == [], report.summary()
    assert any(v.rule_id == "PLS-SEEK-004" for v in report.verdicts), "the resets are judged, not left unfollowed"


@pytest.mark.parametrize("client", ["python", "java"])
@pytest.mark.parametrize("step, label", [(27, "m1"), (36, "m1")])
def test_index_ack_on_a_batch_message_before_the_reset_point_fails(client, step, label):
    """With the setting on, a reset into the batch acks the indexes before its point: m1 must not come back."""
    assert "PLS-SEEK-004" in _failed(_receives(_history(ON, client), step, label))


def test_index_ack_on_the_whole_batch_again_after_the_first_reset_fails():
    """The first reset comes 300 ms after c1's acks, within the ack-grouping band these runs calibrated, so m1's
    return is not charged as a resurrection there (INDETERMINATE); the order it leaves (m3 with m2 owed) FAILs."""
    assert {"PLS-EXCL-002", "PLS-PROD-002"} <= _failed(_receives(_history(ON, "python"), 20, "m1"))


@pytest.mark.parametrize("client", ["python", "java"])
@pytest.mark.parametrize("step, label", [(20, "m2"), (27, "m4"), (36, "m2")])
def test_index_ack_off_the_batch_from_a_later_message_fails(client, step, label):
    """With the setting off, the whole batch comes again from m1: a first delivery past m1 is a lie."""
    assert "PLS-SEEK-004" in _failed(_receives(_history(OFF, client), step, label))


@pytest.mark.parametrize("case", [ON, OFF])
def test_past_the_batchs_last_index_nothing_comes(case):
    assert "PLS-SEEK-004" in _failed(_receives(_history(case, "python"), 32, "m4"))
