"""The transactions chapter (reference_model/transactions.py) on its own, and composed in the Broker.

Expected values come from the broker and Java client sources the chapter cites and from what broker
4.0.8 with the Java client 4.0.8 did (conformance/cases/transactions/, which
tests/conformance/test_cases.py runs live): the read position stops before the first message of the oldest open transaction;
an ended transaction refuses further ops with InvalidTxnStatus; a commit or abort marker takes an
entry id.
"""

from __future__ import annotations

import pytest

from reference_model import transactions as tx
from reference_model.broker import Broker
from reference_model.profiles import profile_for
from reference_model.rejections import Rejected
from reference_model.timing import Span


def test_the_read_position_stops_before_the_oldest_open_transactions_first_message():
    a = tx.begin("a", Span.at(0), None)
    b = tx.begin("b", Span.at(0), None)
    txns = {"a": a, "b": b}
    # log: 0 plain, 1 in a, 2 plain, 3 in b, 4 plain
    txn_of = {1: "a", 3: "b"}
    assert tx.readable_end(txn_of, txns, 5) == 1
    txns["a"] = tx.end(a, tx.COMMITTED, Span.at(10))
    assert tx.readable_end(txn_of, txns, 5) == 3  # b still holds 3 and 4
    txns["b"] = tx.end(b, tx.ABORTED, Span.at(20))
    assert tx.readable_end(txn_of, txns, 5) == 5
    assert tx.aborted_positions(txn_of, txns) == {3}
    assert list(tx.newly_readable(1, 3)) == [1, 2]


def test_an_ended_transaction_refuses_with_invalid_txn_status():
    t = tx.end(tx.begin("t", Span.at(0), None), tx.COMMITTED, Span.at(5))
    refused = tx.refusal(t, "send", Span.at(6))
    assert isinstance(refused, Rejected) and refused.error == "InvalidTxnStatus" and refused.rule == "PLS-TXN-004"
    assert refused.certain


def test_the_client_timer_makes_a_refusal_uncertain_inside_its_window_and_certain_after():
    t = tx.begin("t", Span(0, 10), 2000)
    assert tx.refusal(t, "commit_txn", Span(1000, 1990)) is None
    inside = tx.refusal(t, "commit_txn", Span(2005, 2006))
    assert isinstance(inside, Rejected) and not inside.certain
    after = tx.refusal(t, "commit_txn", Span(3000, 3001))
    assert isinstance(after, Rejected) and after.certain


def test_the_default_timeout_is_the_java_clients_sixty_seconds():
    assert tx.begin("t", Span.at(0), None).timeout_ms == 60_000


def test_ending_twice_or_ending_open_is_a_programming_error():
    with pytest.raises(ValueError):
        tx.end(tx.begin("t", Span.at(0), None), tx.OPEN, Span.at(1))


def _java_broker() -> Broker:
    b = Broker(profile_for("4.0.8", "java"))
    b.apply("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Exclusive"}, Span.at(0))
    b.apply("create_producer", {"producer": "p", "topic": "t"}, Span.at(1))
    return b


def _receive_all(b: Broker, now: float) -> list[str]:
    got = []
    while True:
        out = b.receive("c", now, 100)
        message, now = out
        if message is None:
            return got
        got.append(message["payload"])


def test_the_broker_holds_everything_after_an_open_transactions_first_message_until_the_commit():
    b = _java_broker()
    b.apply("new_txn", {"txn": "t1"}, Span.at(2))
    sent = [b.apply("send", {"producer": "p", "payload": lab, **({"txn": "t1"} if lab.startswith("a") else {})}, Span.at(3 + i))
            for i, lab in enumerate(("a1", "n1", "a2"))]
    assert [s["message_id"][1] for s in sent] == [0, 1, 2]
    assert _receive_all(b, 10) == []
    assert b.apply("commit_txn", {"txn": "t1"}, Span.at(200)) == {}
    assert _receive_all(b, 201) == ["a1", "n1", "a2"]
    # the commit marker took entry 3
    assert b.apply("send", {"producer": "p", "payload": "n2"}, Span.at(400))["message_id"][1] == 4


def test_the_broker_drops_an_aborted_transactions_messages_and_refuses_the_transaction_afterwards():
    b = _java_broker()
    b.apply("new_txn", {"txn": "t1"}, Span.at(2))
    b.apply("send", {"producer": "p", "payload": "b1", "txn": "t1"}, Span.at(3))
    b.apply("send", {"producer": "p", "payload": "n1"}, Span.at(4))
    b.apply("abort_txn", {"txn": "t1"}, Span.at(5))
    assert _receive_all(b, 6) == ["n1"]
    refused = b.apply("send", {"producer": "p", "payload": "b2", "txn": "t1"}, Span.at(300))
    assert isinstance(refused, Rejected) and refused.error == "InvalidTxnStatus"


def test_the_broker_times_out_a_transaction_and_lets_go_of_what_it_held():
    b = _java_broker()
    b.apply("new_txn", {"txn": "t1", "timeout_ms": 2000}, Span.at(2))
    b.apply("send", {"producer": "p", "payload": "x1", "txn": "t1"}, Span.at(3))
    b.apply("send", {"producer": "p", "payload": "n1"}, Span.at(4))
    assert _receive_all(b, 5) == []
    assert _receive_all(b, 2500) == ["n1"]
    assert b.txns["t1"].state == tx.TIMED_OUT


def test_the_python_client_cannot_begin_a_transaction():
    b = Broker(profile_for("4.0.8", "python"))
    refused = b.apply("new_txn", {"txn": "t1"}, Span.at(0))
    assert isinstance(refused, Rejected) and refused.error == "InvalidArgument" and refused.rule == "PLS-TXN-006"


def test_an_ack_outside_the_transaction_deletes_a_pending_message_so_the_abort_brings_nothing_back():
    """PLS-TXN-007/009 (case txn-plain-ack-of-pending): the plain ack deletes m0, which transaction A held pending."""
    b = _shared_pair()
    assert b.apply("ack", {"consumer": "a", "message": "m0"}, Span.at(12)) == {}
    b.apply("abort_txn", {"txn": "A"}, Span.at(200))
    assert b.receive("a", 201, 100)[0] is None
    b.apply("redeliver_unacked", {"consumer": "a"}, Span.at(400))
    assert b.receive("a", 401, 100)[0] is None


def test_without_the_plain_ack_the_same_abort_brings_the_message_back():
    """The counterpart of the test above, so it can fail: the abort alone redelivers m0 (PLS-TXN-009)."""
    b = _shared_pair()
    b.apply("abort_txn", {"txn": "A"}, Span.at(200))
    assert b.receive("a", 201, 100)[0]["payload"] == "m0"


def test_a_cumulative_ack_in_a_transaction_at_or_below_the_mark_delete_position_conflicts():
    """PLS-TXN-010 (case txn-cumulative-rules): PendingAckHandleImpl#cumulativeAcknowledgeMessage checks the cursor's
    mark-delete position first; a transaction's own later cumulative ack moves its pending one on."""
    b = _java_broker()
    for label, at in (("m1", 2), ("m2", 3), ("m3", 4)):
        b.apply("send", {"producer": "p", "payload": label}, Span.at(at))
    assert _receive_all(b, 5) == ["m1", "m2", "m3"]
    assert b.apply("ack_cumulative", {"consumer": "c", "message": "m1"}, Span.at(10)) == {}
    b.apply("new_txn", {"txn": "t1"}, Span.at(11))
    refused = b.apply("ack_cumulative", {"consumer": "c", "message": "m1", "txn": "t1"}, Span.at(12))
    assert isinstance(refused, Rejected) and refused.error == "TransactionConflict" and refused.rule == "PLS-TXN-010"
    b.apply("new_txn", {"txn": "t2"}, Span.at(13))
    assert b.apply("ack_cumulative", {"consumer": "c", "message": "m2", "txn": "t2"}, Span.at(14)) == {}
    again = b.apply("ack_cumulative", {"consumer": "c", "message": "m2", "txn": "t2"}, Span.at(15))
    assert isinstance(again, Rejected) and again.error == "TransactionConflict"
    failed = b.apply("commit_txn", {"txn": "t2"}, Span.at(16))  # its conflict failed it (PLS-TXN-011)
    assert isinstance(failed, Rejected) and failed.error == "TransactionHasOperationFailed"
    b.apply("new_txn", {"txn": "t3"}, Span.at(17))
    assert b.apply("ack_cumulative", {"consumer": "c", "message": "m2", "txn": "t3"}, Span.at(18)) == {}
    assert b.apply("ack_cumulative", {"consumer": "c", "message": "m3", "txn": "t3"}, Span.at(19)) == {}
    assert b.apply("commit_txn", {"txn": "t3"}, Span.at(20)) == {}
    b.apply("redeliver_unacked", {"consumer": "c"}, Span.at(30))
    assert _receive_all(b, 31) == []  # the commit acked up to m3, the transaction's last cumulative ack


def test_a_cursor_unacks_one_position_and_keeps_the_others():
    from reference_model.cursor import Cursor

    c = Cursor()
    for p in (0, 1, 2, 4):
        c.ack(p)
    assert c.mark_delete == 2
    assert c.unack(1) and not c.is_acked(1) and c.is_acked(0) and c.is_acked(2) and c.is_acked(4)
    assert c.first_unacked() == 1
    assert c.unack(4) and not c.is_acked(4)
    assert not c.unack(3)


def test_ack_conflicts_follow_the_pending_ack_state():
    a = tx.begin("A", Span.at(0), None)
    assert tx.ack_refusal(a, "m0", pending_in=None, already_acked=False) is None
    assert tx.ack_refusal(a, "m0", pending_in="B", already_acked=True).error == "TransactionConflict"
    assert tx.ack_refusal(a, "m0", pending_in=None, already_acked=True).rule == "PLS-TXN-010"
    assert tx.commit_refusal(a) is None
    assert tx.commit_refusal(tx.failed(a)).error == "TransactionHasOperationFailed"


def _shared_pair() -> Broker:
    b = Broker(profile_for("4.0.8", "java"))
    b.apply("subscribe", {"consumer": "a", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "a"}, Span.at(0))
    b.apply("create_producer", {"producer": "p", "topic": "t"}, Span.at(1))
    b.apply("send", {"producer": "p", "payload": "m0"}, Span.at(2))
    message, _ = b.receive("a", 3, 100)
    assert message["payload"] == "m0"
    b.apply("new_txn", {"txn": "A"}, Span.at(10))
    assert b.apply("ack", {"consumer": "a", "message": "m0", "txn": "A"}, Span.at(11)) == {}
    return b


def test_a_pending_ack_survives_a_redeliver_and_an_abort_brings_the_message_back_with_a_higher_count():
    b = _shared_pair()
    b.apply("redeliver_unacked", {"consumer": "a"}, Span.at(12))
    assert b.receive("a", 13, 100)[0] is None
    b.apply("abort_txn", {"txn": "A"}, Span.at(200))
    message, _ = b.receive("a", 201, 100)
    assert message["payload"] == "m0" and message["redelivery_count"] == 1


def test_a_commit_makes_the_transactional_ack_final():
    b = _shared_pair()
    b.apply("commit_txn", {"txn": "A"}, Span.at(200))
    b.apply("redeliver_unacked", {"consumer": "a"}, Span.at(201))
    assert b.receive("a", 202, 100)[0] is None
    refused = b.apply("ack", {"consumer": "a", "message": "m0", "txn": "A"}, Span.at(300))
    assert refused.error == "InvalidTxnStatus"


def test_a_conflicting_ack_fails_the_transaction_and_its_commit_aborts_it():
    b = _shared_pair()
    b.apply("new_txn", {"txn": "B"}, Span.at(20))
    conflict = b.apply("ack", {"consumer": "a", "message": "m0", "txn": "B"}, Span.at(21))
    assert conflict.error == "TransactionConflict" and conflict.rule == "PLS-TXN-010"
    refused = b.apply("commit_txn", {"txn": "B"}, Span.at(22))
    assert refused.error == "TransactionHasOperationFailed"
    assert b.txns["B"].state == tx.ABORTED
