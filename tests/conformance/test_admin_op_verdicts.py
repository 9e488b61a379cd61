"""The admin topic and cursor ops (delete_topic, reset_cursor, skip, clear_backlog), judged: each rule's detector
FAILs a case's model history altered to break exactly that rule, and the unaltered histories pass.

Rules: PLS-TOPIC-004/005 (case topic-delete-needs-no-clients), PLS-SEEK-004 (seek-admin-reset-cursor),
PLS-SKIP-001/002 (skip-and-clear-backlog). The model's side: reference_model/admin_ops.py.
"""

from __future__ import annotations

import pytest

from conformance.case_files import discover_cases
from conformance.checker import check
from conformance.runner import run_case
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome, TraceFormatError, validate_op

CASES = {c.id: c for c in discover_cases()}
DELETE, RESET, SKIP = "topic-delete-needs-no-clients", "seek-admin-reset-cursor", "skip-and-clear-backlog"


def model_history(case_id: str, client: str = "python") -> History:
    result = run_case(CASES[case_id], ModelTarget(client=client), client=client)
    assert result.status == "PASS", result.failure_text()
    return result.history


def _message(history: History, label: str) -> dict:
    """``label`` as a receive of ``history`` showed it, or (a message the model never delivered there) as sent."""
    for e in history.events:
        m = (e.outcome.value or {}).get("message") if e.op.op == "receive" else None
        if m and m["payload"] == label:
            return dict(m)
    sent = next(e for e in history.events if e.op.op == "send" and e.op.args["payload"] == label)
    received = next((e.outcome.value or {})["message"] for e in history.events
                    if e.op.op == "receive" and (e.outcome.value or {}).get("message"))
    return {**received, "payload": label, "message_id": sent.outcome.value["message_id"]}


def alter(history: History, step: int, outcome: Outcome, *, waited_ms: float = 0.0) -> History:
    """``history`` with the op at ``step`` answering ``outcome``, having taken ``waited_ms`` longer."""
    events = [Event(e.op, outcome, e.t_start_ms, e.t_end_ms + waited_ms) if e.step == step else e for e in history.events]
    return History(history.header, tuple(events))


def receives(history: History, step: int, label: str | None) -> History:
    """The receive at ``step`` got ``label`` (None: nothing, after waiting its whole timeout)."""
    if label is None:
        timeout = next(e.op.args["timeout_ms"] for e in history.events if e.step == step)
        return alter(history, step, Outcome.ok({"message": None}), waited_ms=timeout)
    return alter(history, step, Outcome.ok({"message": _message(history, label)}))


def failed(history: History) -> set[tuple[str, str | None]]:
    return {(v.rule_id, v.anomaly) for v in check(history).failures()}


@pytest.mark.parametrize("case_id", [DELETE, RESET, SKIP])
@pytest.mark.parametrize("client", ["python", "java"])
def test_the_unaltered_histories_pass(case_id, client):
    assert not failed(model_history(case_id, client))


# ---------------------------------------------------------------------- PLS-TOPIC-004 / -005


def test_a_delete_with_clients_connected_that_succeeds_fails_topic_004():
    history = alter(model_history(DELETE), 5, Outcome.ok({}))  # p1 and c1 connected
    assert ("PLS-TOPIC-004", "missing-rejection") in failed(history)


def test_a_delete_with_nobody_connected_that_is_refused_fails_topic_004():
    history = alter(model_history(DELETE), 10, Outcome.rejected("NotAllowedError", "Topic has active producers/subscriptions"))
    assert ("PLS-TOPIC-004", "unexpected-rejection") in failed(history)


def test_a_message_of_the_deleted_topic_delivered_after_it_fails_topic_005():
    history = receives(model_history(DELETE), 13, "m1")  # c2 on the topic made again, at Earliest
    assert ("PLS-TOPIC-005", "wrong-value") in failed(history)
    assert not {r for r, _ in failed(history)} & {"PLS-MSG-001", "PLS-SUB-003"}, "charged to the delete's rule only"


def test_a_subscription_that_survives_the_delete_fails_topic_005():
    history = alter(model_history(DELETE), 11, Outcome.ok({"backlog": 2}))
    assert ("PLS-TOPIC-005", "missing-rejection") in failed(history)


# ---------------------------------------------------------------------- PLS-SEEK-004


def test_a_reset_to_an_id_that_skips_the_message_fails_seek_004():
    history = receives(model_history(RESET), 21, "m3")  # reset to m2, inclusive: m2 first
    assert ("PLS-SEEK-004", "order-violation") in failed(history)


def test_a_message_before_an_excluded_reset_point_delivered_fails_seek_004():
    history = receives(model_history(RESET), 29, "m2")  # reset to m2, excluded: m3 first, m2 never
    assert ("PLS-SEEK-004", "ack-resurrection") in failed(history)


def test_nothing_after_a_reset_to_earliest_fails_seek_004():
    history = receives(model_history(RESET), 42, None)
    assert ("PLS-SEEK-004", "lost-message") in failed(history)


# ---------------------------------------------------------------------- PLS-SKIP-001 / -002


def test_a_skipped_message_delivered_fails_skip_001():
    history = receives(model_history(SKIP), 18, "m3")  # skip 2 took m1 and m3 (m2 was acked)
    assert ("PLS-SKIP-001", "ack-resurrection") in failed(history)


def test_a_message_the_skip_left_that_never_comes_fails():
    history = receives(model_history(SKIP), 18, None)  # m4 is owed
    assert any(anomaly == "lost-message" for _, anomaly in failed(history))


def test_a_cleared_message_delivered_fails_skip_002():
    history = receives(model_history(SKIP), 28, "m6")  # clear_backlog acked m4..m7
    assert ("PLS-SKIP-002", "ack-resurrection") in failed(history)


def test_a_backlog_the_clear_did_not_empty_fails_the_backlog_rule():
    history = alter(model_history(SKIP), 25, Outcome.ok({"backlog": 4}))
    assert ("PLS-BACKLOG-001", "wrong-backlog") in failed(history)


# ---------------------------------------------------------------------- the vocabulary


@pytest.mark.parametrize("op, args, says", [
    ("reset_cursor", {"topic": "t", "subscription": "s"}, "exactly one of"),
    ("reset_cursor", {"topic": "t", "subscription": "s", "message": "m1", "position": "earliest"}, "exactly one of"),
    ("reset_cursor", {"topic": "t", "subscription": "s", "position": "latest", "excluded": True}, "'excluded' goes with"),
    ("reset_cursor", {"topic": "t", "subscription": "s", "position": "first"}, "allowed: earliest, latest"),
    ("skip", {"topic": "t", "subscription": "s", "count": 0}, "at least 1"),
    ("skip", {"topic": "t", "subscription": "s"}, "missing required argument 'count'"),
    ("delete_topic", {"topic": "t", "force": "yes"}, "must be boolean"),
    ("clear_backlog", {"subscription": "s"}, "missing required argument 'topic'"),
])
def test_malformed_admin_ops_are_refused_with_what_to_change(op, args, says):
    with pytest.raises(TraceFormatError, match=says):
        validate_op(op, args)


def test_a_label_sent_to_a_deleted_topic_stays_taken():
    """Labels name messages across the whole trace: the deleted topic's m1 keeps its name."""
    from reference_model.broker import Broker
    from reference_model.rejections import ModelError
    from reference_model.timing import Span

    b = Broker()
    for op, args in [("create_producer", {"producer": "p", "topic": "t"}), ("send", {"producer": "p", "payload": "m1"}),
                     ("close", {"handle": "p"}), ("delete_topic", {"topic": "t"}),
                     ("create_producer", {"producer": "q", "topic": "t"})]:
        assert not hasattr(b.apply(op, args, Span.at(0)), "error")
    with pytest.raises(ModelError, match="sent twice"):
        b.apply("send", {"producer": "q", "payload": "m1"}, Span.at(1))
    assert b.topics["persistent://public/default/t"].ledger != b.deleted_labels["m1"][0].ledger

