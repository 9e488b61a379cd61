"""The transaction rules (PLS-TXN-001..006), each proved able to FAIL on a hand-built history that
breaks it, and to PASS on the same history as the live broker played it.

The kept histories follow what broker 4.0.8 with the Java client 4.0.8 did (see the cases in
conformance/cases/transactions/): messages of an open transaction invisible, an aborted
transaction's never delivered, later messages held back behind an open transaction's first, a
commit or abort marker taking an entry id, an ended transaction refused with InvalidTxnStatus.
Each broken history changes one observation of the kept one, so a FAIL comes from that change.
"""

from __future__ import annotations

from conformance.checker import check
from conformance.trace import History

from model_history_helpers import H, msg

JAVA = {"client": "java"}


def _failed(history: History) -> set[str]:
    return {v.rule_id for v in check(history).failures()}


def _passed(history: History) -> set[str]:
    return {rule for rule, status in check(history).rule_verdicts().items() if status == "PASS"}


def _txn_send(h: H, label: str, entry: int, txn: str, t: float) -> H:
    return h.ok("send", {"producer": "p", "payload": label, "txn": txn}, {"message_id": [1, entry, -1, -1], "publish_time": 0}, t=t)


def commit_history(*, early: str | None = None, after_commit: tuple[str, ...] = ("a1", "n1", "a2")) -> History:
    """a1 (t1), n1, a2 (t1); a receive before the commit gets ``early``; then ``after_commit`` in order."""
    h = H(**JAVA).sub("c", t=0).producer(t=1).ok("new_txn", {"txn": "t1"}, t=2)
    _txn_send(h, "a1", 0, "t1", 3)
    h.send("n1", 1, t=4)
    _txn_send(h, "a2", 2, "t1", 5)
    entries = {"a1": 0, "n1": 1, "a2": 2}
    h.recv("c", early, entries.get(early or "", 0), t=(6, 1006))
    h.ok("commit_txn", {"txn": "t1"}, t=(1007, 1010))
    now = 1011.0
    for label in after_commit:
        h.recv("c", label, entries[label], t=(now, now + 5))
        now += 6
    h.recv("c", None, t=(now, now + 500), timeout=500)
    return h.history()


def test_the_commit_history_as_the_broker_played_it_passes():
    history = commit_history()
    assert _failed(history) == set()
    assert {"PLS-TXN-001", "PLS-TXN-003"} <= _passed(history)


def test_a_message_of_an_open_transaction_delivered_fails_txn_001():
    assert "PLS-TXN-001" in _failed(commit_history(early="a1", after_commit=("n1", "a2")))


def test_a_message_held_back_by_an_open_transaction_delivered_fails_txn_003():
    broken = commit_history(early="n1", after_commit=("a1", "a2"))
    assert "PLS-TXN-003" in _failed(broken)
    assert "PLS-TXN-001" not in _failed(broken)  # n1 was sent without a transaction


def abort_history(*, after_abort: tuple[str, ...] = ("n1",), reader_sees: tuple[str, ...] = ("n0", "n1")) -> History:
    """n0; b1 in t1; n1; abort; the consumer then gets ``after_abort``, a reader from earliest ``reader_sees``."""
    entries = {"n0": 0, "b1": 1, "n1": 2}
    h = H(**JAVA).sub("c", "Shared", t=0).producer(t=1)
    h.send("n0", 0, t=2)
    h.ok("new_txn", {"txn": "t1"}, t=3)
    _txn_send(h, "b1", 1, "t1", 4)
    h.send("n1", 2, t=5)
    h.recv("c", "n0", 0, t=(6, 8))
    h.ok("abort_txn", {"txn": "t1"}, t=(9, 12))
    now = 13.0
    for label in after_abort:
        h.recv("c", label, entries[label], t=(now, now + 5))
        now += 6
    h.recv("c", None, t=(now, now + 500), timeout=500)
    now += 501
    h.ok("create_reader", {"reader": "r", "topic": "t", "start": "earliest"}, t=(now, now + 2))
    now += 3
    for label in reader_sees:
        h.ok("read_next", {"reader": "r", "timeout_ms": 1000}, {"message": msg(label, entries[label])}, t=(now, now + 3))
        now += 4
    h.ok("read_next", {"reader": "r", "timeout_ms": 500}, {"message": None}, t=(now, now + 500))
    return h.history()


def test_the_abort_history_as_the_broker_played_it_passes():
    history = abort_history()
    assert _failed(history) == set()
    assert "PLS-TXN-002" in _passed(history)


def test_an_aborted_message_delivered_to_a_consumer_fails_txn_002():
    assert "PLS-TXN-002" in _failed(abort_history(after_abort=("b1", "n1")))


def test_an_aborted_message_read_by_a_reader_fails_txn_002():
    assert "PLS-TXN-002" in _failed(abort_history(reader_sees=("n0", "b1", "n1")))


def ended_history(*, late_send: str = "rejected", second_commit: str = "rejected") -> History:
    """t1 commits; then a send with it and a second commit."""
    h = H(**JAVA).sub("c", t=0).producer(t=1).ok("new_txn", {"txn": "t1"}, t=2)
    _txn_send(h, "m1", 0, "t1", 3)
    h.ok("commit_txn", {"txn": "t1"}, t=4)
    if late_send == "rejected":
        h.rejected("send", {"producer": "p", "payload": "m2", "txn": "t1"}, "InvalidTxnStatus", t=5)
    elif late_send == "wrong-error":
        h.rejected("send", {"producer": "p", "payload": "m2", "txn": "t1"}, "OtherError", t=5)
    else:
        _txn_send(h, "m2", 2, "t1", 5)  # entry 1 is the commit marker
    if second_commit == "rejected":
        h.rejected("commit_txn", {"txn": "t1"}, "InvalidTxnStatus", t=6)
    else:
        h.ok("commit_txn", {"txn": "t1"}, t=6)
    h.recv("c", "m1", 0, t=(7, 9))
    return h.history()


def test_refusals_of_an_ended_transaction_pass_txn_004():
    history = ended_history()
    assert _failed(history) == set()
    assert "PLS-TXN-004" in _passed(history)


def test_a_send_with_a_committed_transaction_accepted_fails_txn_004():
    assert "PLS-TXN-004" in _failed(ended_history(late_send="ok"))


def test_a_second_commit_accepted_fails_txn_004():
    assert "PLS-TXN-004" in _failed(ended_history(second_commit="ok"))


def test_a_send_with_a_committed_transaction_refused_with_another_error_fails_txn_004():
    assert "PLS-TXN-004" in _failed(ended_history(late_send="wrong-error"))


def timeout_history(*, n1_at: float | None = 2100.0) -> History:
    """t1 (timeout 2 000 ms) holds x1 and, behind it, n1; a receive waits from 600 to 6 600 ms."""
    h = H(**JAVA).sub("c", t=0).producer(t=1).ok("new_txn", {"txn": "t1", "timeout_ms": 2000}, t=(2, 3))
    _txn_send(h, "x1", 0, "t1", 4)
    h.send("n1", 1, t=5)
    h.recv("c", None, t=(6, 506), timeout=500)
    if n1_at is None:
        h.recv("c", None, t=(600, 6600), timeout=6000)
    else:
        h.recv("c", "n1", 1, t=(600, n1_at), timeout=6000)
    h.rejected("commit_txn", {"txn": "t1"}, "InvalidTxnStatus", t=(6700, 6701))
    return h.history()


def test_the_timeout_history_as_the_broker_played_it_passes():
    history = timeout_history()
    assert _failed(history) == set()
    assert {"PLS-TXN-005", "PLS-TXN-004", "PLS-TXN-002"} <= _passed(history)


def test_a_timed_out_transaction_that_never_lets_go_fails_txn_005():
    assert "PLS-TXN-005" in _failed(timeout_history(n1_at=None))


def test_a_held_back_message_before_the_timeout_fails_txn_003():
    assert "PLS-TXN-003" in _failed(timeout_history(n1_at=1500.0))


def test_the_python_client_refusing_a_transaction_passes_txn_006_and_accepting_one_fails_it():
    refused = H().rejected("new_txn", {"txn": "t1"}, "InvalidArgument").history()
    assert _failed(refused) == set() and "PLS-TXN-006" in _passed(refused)
    accepted = H().ok("new_txn", {"txn": "t1"}).history()
    assert "PLS-TXN-006" in _failed(accepted)


# ---------------------------------------------------------------------------- acks in a transaction


def shared_ack_history(*, while_open: str | None = None, after_commit: str | None = None,
                       abort: bool = False, after_abort: str | None = "m0") -> History:
    """a (Shared) holds m0, m1; acks m0 in A; redeliver_unacked; A commits (or aborts); then a receive."""
    h = H(**JAVA).sub("a", "Shared", consumer_name="a", t=0).producer(t=1)
    h.send("m0", 0, t=2).send("m1", 1, t=3)
    h.recv("a", "m0", 0, t=(4, 5)).recv("a", "m1", 1, t=(6, 7))
    h.ok("new_txn", {"txn": "A"}, t=8)
    h.ok("ack", {"consumer": "a", "message": "m0", "txn": "A"}, t=(9, 10))
    h.ok("redeliver_unacked", {"consumer": "a"}, t=11)
    h.recv("a", "m1", 1, count=1, t=(12, 12))
    if while_open is None:
        h.recv("a", None, t=(15, 515), timeout=500)
    else:
        h.recv("a", while_open, 0, count=1, t=(15, 20))
    h.ok("ack", {"consumer": "a", "message": "m1"}, t=600)
    if abort:
        h.ok("abort_txn", {"txn": "A"}, t=(601, 603))
        if after_abort is None:
            h.recv("a", None, t=(604, 1604))
        else:
            h.recv("a", after_abort, 0, count=1, t=(604, 610))
        return h.history()
    h.ok("commit_txn", {"txn": "A"}, t=(601, 603))
    h.ok("redeliver_unacked", {"consumer": "a"}, t=604)
    if after_commit is None:
        h.recv("a", None, t=(605, 1105), timeout=500)
    else:
        h.recv("a", after_commit, 0, count=1, t=(605, 610))
    return h.history()


def test_the_shared_ack_histories_as_the_broker_played_them_pass():
    committed = shared_ack_history()
    assert _failed(committed) == set()
    assert {"PLS-TXN-007", "PLS-TXN-008"} <= _passed(committed)
    aborted = shared_ack_history(abort=True)
    assert _failed(aborted) == set()
    assert "PLS-TXN-009" in _passed(aborted)


def test_a_message_pending_in_an_open_transaction_redelivered_fails_txn_007():
    assert "PLS-TXN-007" in _failed(shared_ack_history(while_open="m0"))


def test_a_message_whose_transactional_ack_committed_redelivered_fails_txn_008():
    assert "PLS-TXN-008" in _failed(shared_ack_history(after_commit="m0"))


def test_a_message_whose_transactional_ack_aborted_never_coming_back_fails_txn_009():
    assert "PLS-TXN-009" in _failed(shared_ack_history(abort=True, after_abort=None))


def conflict_history(*, second_ack: str = "rejected", commit: str = "rejected") -> History:
    """m0 acked in A, then in B; B's commit."""
    h = H(**JAVA).sub("a", "Shared", consumer_name="a", t=0).producer(t=1).send("m0", 0, t=2)
    h.recv("a", "m0", 0, t=(3, 4))
    h.ok("new_txn", {"txn": "A"}, t=5).ok("new_txn", {"txn": "B"}, t=6)
    h.ok("ack", {"consumer": "a", "message": "m0", "txn": "A"}, t=7)
    if second_ack == "rejected":
        h.rejected("ack", {"consumer": "a", "message": "m0", "txn": "B"}, "TransactionConflict", t=8)
    else:
        h.ok("ack", {"consumer": "a", "message": "m0", "txn": "B"}, t=8)
    if commit == "rejected":
        h.rejected("commit_txn", {"txn": "B"}, "TransactionHasOperationFailed", t=9)
    else:
        h.ok("commit_txn", {"txn": "B"}, t=9)
    return h.history()


def test_the_conflict_history_as_the_broker_played_it_passes():
    history = conflict_history()
    assert _failed(history) == set()
    assert {"PLS-TXN-010", "PLS-TXN-011"} <= _passed(history)


def test_a_second_transactions_ack_of_a_pending_message_accepted_fails_txn_010():
    assert "PLS-TXN-010" in _failed(conflict_history(second_ack="ok", commit="ok"))


def test_a_transaction_with_a_failed_ack_that_commits_fails_txn_011():
    assert "PLS-TXN-011" in _failed(conflict_history(commit="ok"))


def failover_timeout_history(waiting: str) -> History:
    """c and d on one Failover subscription, d the one that received m0 (so the active one); t1 (timeout 2 000 ms)
    holds x1 and, behind it, n1; then ``waiting`` waits from 2 500 to 7 500 ms and gets nothing."""
    h = H(**JAVA).sub("c", "Failover", consumer_name="c", t=0).sub("d", "Failover", consumer_name="d", t=1).producer(t=2)
    h.send("m0", 0, t=3).recv("d", "m0", 0, t=(4, 1100))
    h.ok("new_txn", {"txn": "t1", "timeout_ms": 2000}, t=(1101, 1102))
    _txn_send(h, "x1", 1, "t1", 1103)
    h.send("n1", 2, t=1104)
    h.recv(waiting, None, t=(2500, 7500), timeout=5000)
    return h.history()


def test_only_the_active_failover_consumer_is_owed_what_a_timed_out_transaction_let_go():
    """PLS-TXN-005 on a Failover subscription: n1 is owed to the active consumer, d, whose empty wait after the abort
    window FAILs; c, which is not active, loses nothing (model fuzz seed 20261220: the inactive consumer was charged,
    regression pls-txn-005-lost-message-c63a5d33d687)."""
    assert "PLS-TXN-005" in _failed(failover_timeout_history("d"))
    assert "PLS-TXN-005" not in _failed(failover_timeout_history("c"))
