"""PLS-BATCH-009 in the checker: where the batch timer leaves the split open, a history that shows any split the
client may have made PASSes, and one that shows a split no client makes FAILs (issue 46: "Nondeterminism
modelled, not refused"). Hand-written histories with the times a live run records; the bands are the model's
(zero) unless a test says otherwise.

Rule ids: PLS-BATCH-001, PLS-BATCH-009, PLS-EXCL-002 (a batch that surely left is owed).
"""

from __future__ import annotations

from conformance.checker import check
from model_history_helpers import H

JAVA = {"client": "java"}


def _fails(history):
    return {(v.rule_id, v.anomaly) for v in check(history).failures()}


def _sends(h: H, labels, *, producer_args=None, t0: float = 1.0, step: float = 1.0) -> H:
    h = h.ok("create_producer", {"producer": "p", "topic": "t", "batching": True, **(producer_args or {})},
             {"producer_name": "p", "last_sequence_id": -1}, t=(0, 0.5))
    for i, label in enumerate(labels):
        start = t0 + i * step
        h = h.ok("send", {"producer": "p", "payload": label, "async": True}, {}, t=(start, start + 0.2))
    return h


def _flush(h: H, ids: dict, t: float) -> H:
    return h.ok("flush", {"producer": "p"}, {"message_ids": ids}, t=(t, t + 1))


def test_java_default_timer_any_split_into_runs_passes():
    """Java 1 ms (the client's default): three async sends 1 ms apart may leave as one batch, or three, or 1 + 2."""
    for ids in ({"m1": [7, 0, -1, 0], "m2": [7, 0, -1, 1], "m3": [7, 0, -1, 2]},
                {"m1": [7, 0, -1, -1], "m2": [7, 1, -1, 0], "m3": [7, 1, -1, 1]},
                {"m1": [7, 0, -1, -1], "m2": [7, 1, -1, -1], "m3": [7, 2, -1, -1]}):
        history = _flush(_sends(H(**JAVA), ["m1", "m2", "m3"]), ids, 4).history()
        assert check(history).ok, check(history).summary()
        assert "PLS-BATCH-009" in check(history).rule_verdicts()


def test_a_batch_with_a_gap_fails():
    """m1 and m3 in one entry, m2 in another: no batch skips a pending message."""
    ids = {"m1": [7, 0, -1, 0], "m3": [7, 0, -1, 1], "m2": [7, 1, -1, -1]}
    found = _fails(_flush(_sends(H(**JAVA), ["m1", "m2", "m3"]), ids, 4).history())
    assert ("PLS-BATCH-009", "wrong-value") in found and ("PLS-BATCH-001", "wrong-value") in found, found


def test_batch_members_out_of_send_order_fail():
    ids = {"m1": [7, 0, -1, 1], "m2": [7, 0, -1, 0], "m3": [7, 1, -1, -1]}
    assert ("PLS-BATCH-001", "wrong-value") in _fails(_flush(_sends(H(**JAVA), ["m1", "m2", "m3"]), ids, 4).history())


def test_a_batch_bigger_than_the_container_fails():
    ids = {"m1": [7, 0, -1, 0], "m2": [7, 0, -1, 1], "m3": [7, 0, -1, 2]}
    h = _sends(H(**JAVA), ["m1", "m2", "m3"], producer_args={"batching_max_messages": 2})
    assert ("PLS-BATCH-009", "wrong-value") in _fails(_flush(h, ids, 4).history())


def test_a_cpp_batch_cut_before_its_timer_fails():
    """C++ (Python client), 10 ms: m1, m2, m3 sent within 3 ms and flushed at 4 ms cannot be two batches: the
    timer fires 10 ms after m1 was added, and the container is not full."""
    ids = {"m1": [7, 0, -1, 0], "m2": [7, 1, -1, 0], "m3": [7, 1, -1, 1]}
    found = _fails(_flush(_sends(H(), ["m1", "m2", "m3"], producer_args={"batching_max_delay_ms": 10}), ids, 4).history())
    assert ("PLS-BATCH-009", "wrong-value") in found, found
    # sent 12 ms apart, the same split is the timer's
    ok = _flush(_sends(H(), ["m1", "m2", "m3"], producer_args={"batching_max_delay_ms": 10}, step=12), ids, 40).history()
    assert check(ok).ok, check(ok).summary()


def test_a_receive_while_the_batch_may_or_may_not_have_left():
    """Java 1 ms, Exclusive: a receive 0.5 ms after m1's send may get nothing or m1; the flush then settles the ids."""
    def base() -> H:
        return H(**JAVA).ok("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Exclusive"}, t=(0, 0.5))

    got = _sends(base(), ["m1"]).ok("receive", {"consumer": "c", "timeout_ms": 1}, {"message": {
        "payload": "m1", "message_id": [7, 0, -1, -1], "topic": "t", "key": None, "ordering_key": None, "properties": {},
        "event_time": 0, "publish_time": 1, "redelivery_count": 0, "producer_name": "p"}}, t=(1.3, 1.8))
    assert check(_flush(got, {"m1": [7, 0, -1, -1]}, 3).history()).ok
    nothing = _sends(base(), ["m1"]).ok("receive", {"consumer": "c", "timeout_ms": 1}, {"message": None}, t=(1.2, 1.3))
    assert check(_flush(nothing, {"m1": [7, 0, -1, -1]}, 3).history()).ok
    # the same receive waiting 100 ms: the batch surely left (two periods after m1's add), so m1 was owed
    late = _sends(base(), ["m1"]).ok("receive", {"consumer": "c", "timeout_ms": 100}, {"message": None}, t=(1.3, 101.3))
    assert ("PLS-EXCL-002", "lost-message") in _fails(_flush(late, {"m1": [7, 0, -1, -1]}, 102).history())
    # a receipt that contradicts the flush's ids: m1 received as a batch of its own, then flushed in one with m2
    two = _sends(base(), ["m1", "m2"]).ok("receive", {"consumer": "c", "timeout_ms": 1}, {"message": {
        "payload": "m1", "message_id": [7, 0, -1, 1], "topic": "t", "key": None, "ordering_key": None, "properties": {},
        "event_time": 0, "publish_time": 1, "redelivery_count": 0, "producer_name": "p"}}, t=(2.5, 3))
    assert ("PLS-BATCH-009", "wrong-value") in _fails(two.history())  # index 1: nothing was sent before m1
