"""PLS-BATCH-009 in the checker: where the batch timer leaves the split open, a history that shows any split the
client may have made PASSes, and one that shows a split no client makes FAILs (issue 46: "Nondeterminism
modelled, not refused"). Hand-written histories with the times a live run records; the bands are the model's
(zero) unless a test says otherwise.

Rule ids: PLS-BATCH-001, PLS-BATCH-009, PLS-EXCL-002 (a batch that surely left is owed).
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.checker import check
from conformance.trace import load, parse
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


# --- Key_Shared reads a batch whose split the timer left open (PLS-KEYSHARED-001 with PLS-BATCH-009) ---------------

KEYSHARED_BATCH = Path(__file__).parent / "live_histories" / "live-4.0.8-java-keyshared-batch-key.jsonl"


# The Java timer sends nothing within the delay of its producer's creation (batching.BatchTimer.for_client): in the live
# run (1000 ms) it could not cut between m1 and m2, sent 105-147 ms after the creation. Told with a 50 ms delay, it could.
SHORT_DELAY_MS = 50


def _keyshared_lines(*, split: bool, m2_to: str, delay_ms: int | None = None) -> str:
    """The live history of case keyshared-batch-key (Java 4.0.8, 1000 ms delay: m1 key-24 and m2 key-81 sent
    async 40 ms apart, flushed, then m3 key-81; ks-b (c2) owns key-24, ks-a (c1) key-81), optionally told as
    if the Java timer (periodic, its phase unknown) had cut between m1 and m2, with m2 received by ``m2_to``,
    and with the producer's batching delay ``delay_ms``."""
    rows = [json.loads(line) for line in KEYSHARED_BATCH.read_text().splitlines() if line.strip()]
    ops = {row["step"]: row for row in rows if row["kind"] == "op"}
    if delay_ms is not None:
        ops[3]["args"]["batching_max_delay_ms"] = delay_ms
    if split:
        ops[6]["outcome"]["value"] = {"message_ids": {"m1": [3, 0, -1, -1], "m2": [3, 1, -1, -1]}}
        ops[8]["outcome"]["value"] = {"message_ids": {"m3": [3, 2, -1, -1]}}
        ops[9]["outcome"]["value"]["message"]["message_id"] = [3, 0, -1, -1]
        ops[10]["outcome"]["value"]["message"]["message_id"] = [3, 1, -1, -1]
        ops[12]["outcome"]["value"]["message"]["message_id"] = [3, 2, -1, -1]
    if m2_to == "c1":
        # c2: m1, then nothing; c1: m2, m3, then nothing (the receives keep their steps and times)
        m2, m3, nothing = ops[10]["outcome"], ops[12]["outcome"], ops[11]["outcome"]
        ops[10]["args"]["consumer"], ops[11]["args"]["consumer"] = "c2", "c1"
        ops[10]["outcome"], ops[11]["outcome"], ops[12]["outcome"] = nothing, m2, m3
        ops[12]["args"]["consumer"] = "c1"
    return "\n".join(json.dumps(row) for row in rows) + "\n"


def test_keyshared_reads_a_settled_batch_by_its_first_key():
    """Live 4.0.8 (CI of 2 Dec 2026): the Java timer could have cut between m1 and m2, but the flush's ids show one
    entry, so both go to m1's owner ks-b. Followed and judged, not refused."""
    report = check(load(KEYSHARED_BATCH))
    assert report.ok, report.summary()
    judged = report.rule_verdicts()
    assert judged.get("PLS-KEYSHARED-001") == "PASS" and judged.get("PLS-BATCH-009") == "PASS", judged
    assert not report.notes, report.notes


def test_keyshared_follows_a_timer_cut_the_ids_show():
    """The same run told with the timer's cut between m1 and m2: m2 heads its own entry, hashed by key-81 to ks-a.
    It PASSes when c1 gets m2, and FAILs (the key's owner, PLS-KEYSHARED-001/003) when ks-b gets it."""
    own_key = check(parse(_keyshared_lines(split=True, m2_to="c1", delay_ms=SHORT_DELAY_MS), source="split-c1"))
    assert own_key.ok, own_key.summary()
    assert own_key.rule_verdicts().get("PLS-KEYSHARED-001") == "PASS"
    first_key = check(parse(_keyshared_lines(split=True, m2_to="c2", delay_ms=SHORT_DELAY_MS), source="split-c2"))
    assert {"PLS-KEYSHARED-001", "PLS-KEYSHARED-003"} & {v.rule_id for v in first_key.failures()}, first_key.summary()
    # and one entry sent to ks-a breaks the rule the other way round
    unsplit_wrong = check(parse(_keyshared_lines(split=False, m2_to="c1"), source="whole-c1"))
    assert {"PLS-KEYSHARED-001", "PLS-KEYSHARED-003"} & {v.rule_id for v in unsplit_wrong.failures()}, unsplit_wrong.summary()


def test_a_java_timer_cut_within_its_quiet_period_fails():
    """The run as recorded (1000 ms delay), told with the cut between m1 and m2 that the timer could not make then: m1
    and m2 were sent 105-147 ms after the producer's creation, and the Java timer sends nothing within the delay of
    it (``ProducerImpl#batchFlushTask``, ``lastBatchSendNanoTime``), so two entries break PLS-BATCH-009."""
    report = check(parse(_keyshared_lines(split=True, m2_to="c1"), source="split-in-quiet"))
    assert "PLS-BATCH-009" in {v.rule_id for v in report.failures()}, report.summary()


def test_keyshared_receive_before_the_split_settles_is_not_followed():
    """A receive on the Key_Shared subscription between the async sends and their flush: which entry m2 is in, and
    so who gets it, is the timer's (a 50 ms delay, so its quiet period is over); the model says it does not follow
    the receive instead of guessing."""
    rows = [json.loads(line) for line in _keyshared_lines(split=False, m2_to="c2", delay_ms=SHORT_DELAY_MS).splitlines()
            if line.strip()]
    early = {"kind": "op", "step": 0, "op": "receive", "args": {"consumer": "c1", "timeout_ms": 1},
             "outcome": {"status": "ok", "value": {"message": None}}, "t_start_ms": 14964.042, "t_end_ms": 14964.046}
    rows.insert(6, early)  # after step 5 (m2's send), before the flush
    for step, row in enumerate(r for r in rows if r["kind"] == "op"):
        row["step"] = step + 1
    rows[0]["op_count"] = len(rows) - 1
    report = check(parse("\n".join(json.dumps(r) for r in rows) + "\n", source="early-receive"))
    assert any("Key_Shared" in note and "split" in note for note in report.notes), report.notes
    assert not report.failures(), report.summary()


def _go_async_then_sync(b2_id: list[int], b2_sequence: int) -> "object":
    """Go, 10 ms ticker (the client's default): b1 async at 1 ms, b2 sync at 6 ms (Go's Send flushes the
    container), b2's receipt with ``b2_id`` and last_sequence_id ``b2_sequence``."""
    h = H(client="go").ok("create_producer", {"producer": "p", "topic": "t", "batching": True},
                          {"producer_name": "p", "last_sequence_id": -1}, t=(0, 0.5))
    h = h.ok("send", {"producer": "p", "payload": "b1", "async": True}, {}, t=(1, 1.2))
    h = h.ok("send", {"producer": "p", "payload": "b2"}, {"message_id": b2_id, "sequence_id": b2_sequence,
                                                          "publish_time": 6}, t=(6, 7))
    return h.history()


def test_go_last_sequence_id_follows_the_batch_the_ticker_made():
    """PLS-DEDUP-006, Go: last_sequence_id after a batch's receipt is the batch's first message's. When the ticker
    sent b1 alone before b2 joined, b2's batch starts with b2: 1. The Go driver reads a batch of one as index -1
    (live 4.0.8, CI of 2 Dec 2026: ``[10, 1, -1, -1]``, last_sequence_id 1), index 0 if another message followed
    b2 into its batch. When b2 joined b1's batch (index 1), 0. Either other answer FAILs."""
    for b2_id, allowed, wrong in (([3, 1, -1, -1], 1, 0), ([3, 1, -1, 0], 1, 0), ([3, 0, -1, 1], 0, 1)):
        assert check(_go_async_then_sync(b2_id, allowed)).ok, (b2_id, check(_go_async_then_sync(b2_id, allowed)).summary())
        found = _fails(_go_async_then_sync(b2_id, wrong))
        assert ("PLS-DEDUP-006", "wrong-value") in found, (b2_id, found)


GO_BATCH_OF_ONE = Path(__file__).parent / "live_histories" / "live-4.0.8-go-dedup-batch-of-one.jsonl"


def test_go_batch_of_one_after_the_ticker_cut_live_history():
    """The live history of regression pls-dedup-006-wrong-value-aad6ac2e75af (Go 0.19.0 on 4.0.8, 3 of 40 runs on
    a loaded machine, 2 Dec 2026): the ticker sent m1 in entry 0, m2's sync send made entry 1 alone (its id
    ``[148, 1, -1, -1]``), and last_sequence_id read 1, m2's own. It PASSes; told with 0 (m1's, as if m2 had
    joined m1's batch) it FAILs PLS-DEDUP-006."""
    assert check(load(GO_BATCH_OF_ONE)).ok, check(load(GO_BATCH_OF_ONE)).summary()
    rows = [json.loads(line) for line in GO_BATCH_OF_ONE.read_text().splitlines() if line.strip()]
    rows[3]["outcome"]["value"]["sequence_id"] = 0
    report = check(parse("\n".join(json.dumps(r) for r in rows) + "\n", source="told-with-0"))
    assert ("PLS-DEDUP-006", "wrong-value") in {(v.rule_id, v.anomaly) for v in report.failures()}, report.summary()


# --- a sync send and the C++ one-shot timer of the open batch (PLS-DEDUP-006 with PLS-BATCH-009) --------------------

def _sync_after_async(m3_at: tuple[float, float], m3_id: list[int], m3_last_sequence_id: int, *,
                      target: str = "model") -> H:
    """C++ (Python client), 10 ms, at most 2 messages: async m1 (sequence id 0) at 1 ms opens a batch; a sync delayed
    m2 (id 1) goes alone and at once, ahead of the open batch (PLS-DELAY-006); then a sync m3 (id 2) during
    ``m3_at``. m1's timer is due at 11 ms. ``target`` "embedded": judged with the documented live timing bands. Joining m1's batch, m3 fills it, and the C++ receipt of the batch of ids
    0 and 2 sets last_sequence_id to 0 + 2 - 1 = 1 (ProducerImpl::ackReceived, first id + count - 1); alone in a
    batch of its own it is 2 + 1 - 1 = 2 (the shape of regression pls-dedup-006-wrong-value-9745a1bf7f4b)."""
    h = H(target).ok("create_producer", {"producer": "p", "topic": "t", "batching": True, "batching_max_messages": 2,
                                   "batching_max_delay_ms": 10}, {"producer_name": "p", "last_sequence_id": -1}, t=(0, 0.5))
    h = h.ok("send", {"producer": "p", "payload": "m1", "async": True}, {}, t=(1, 1.2))
    h = h.ok("send", {"producer": "p", "payload": "m2", "deliver_after_ms": 1000},
             {"message_id": [7, 0, -1, -1], "sequence_id": 1, "id_text": "(7,0,-1,-1)"}, t=(2, 3))
    return h.ok("send", {"producer": "p", "payload": "m3"},
                {"message_id": m3_id, "sequence_id": m3_last_sequence_id, "id_text": str(tuple(m3_id))}, t=m3_at)


def _dedup_006(h: H) -> list[str]:
    return [v.status for v in check(h.history()).verdicts if v.rule_id == "PLS-DEDUP-006" and v.step == 4]


def test_a_sync_send_joining_the_open_batch_reads_the_batch_receipts_last_sequence_id():
    assert _dedup_006(_sync_after_async((5, 6), [7, 1, -1, 1], 1)) == ["PASS"]
    assert _dedup_006(_sync_after_async((5, 6), [7, 1, -1, 1], 2)) == ["FAIL"]


def test_the_timer_may_fire_before_a_sync_send_joins():
    """Live 4.0.8 under two busy loops (4 Dec 2026): m3's call began before m1's timer was due and ended after it,
    and the timer had sent m1 alone first: m3 is alone in its batch (index 0) and last_sequence_id is 2. Either
    outcome is the client's choice within m3's span, and its id says which."""
    assert _dedup_006(_sync_after_async((5, 16), [7, 2, -1, 0], 2)) == ["PASS"]
    assert _dedup_006(_sync_after_async((5, 16), [7, 1, -1, 1], 1)) == ["PASS"]
    # alone, its own batch's receipt is 2: reading 1 is no receipt's
    assert _dedup_006(_sync_after_async((5, 16), [7, 2, -1, 0], 1)) == ["FAIL"]


def test_a_sync_send_alone_before_the_timer_was_due_fails():
    """m3's call ended at 6 ms, before m1's timer was due (11 ms), and the batch holds two: m3 must have joined m1's
    batch, so the last_sequence_id 2 of a batch of its own is wrong."""
    assert _dedup_006(_sync_after_async((5, 6), [7, 2, -1, 0], 2)) == ["FAIL"]


def test_a_cpp_timer_running_late_may_leave_the_sync_send_in_the_batch():
    """The model's timer stores m1 at 11 ms; under the live timing bands the client's may fire later by as much as
    a dispatch may (the slack), so a sync m3 at 20 ms may still join m1's batch (index 1, last_sequence_id 1) or go
    alone (index 0, 2). Long after the timer (3 s), m1 surely left, and joining it is no choice the client has."""
    assert _dedup_006(_sync_after_async((20, 21), [7, 1, -1, 1], 1, target="embedded")) == ["PASS"]
    assert _dedup_006(_sync_after_async((20, 31), [7, 2, -1, 0], 2, target="embedded")) == ["PASS"]
    assert _dedup_006(_sync_after_async((3000, 3011), [7, 1, -1, 1], 1, target="embedded")) == ["FAIL"]
    # with the model's bands (no slack) the timer fired at 11 ms: m3 at 20 ms is alone
    assert _dedup_006(_sync_after_async((20, 21), [7, 1, -1, 1], 1)) == ["FAIL"]


# --- the receipts settle the split before any flush (PLS-BATCH-009 with PLS-BATCH-004 / PLS-EXCL-002) --------------

def _message(label: str, mid: list[int], *, count: int = 0) -> dict:
    return {"payload": label, "message_id": mid, "topic": "t", "key": None, "ordering_key": None, "properties": {},
            "event_time": 0, "publish_time": 1, "redelivery_count": count, "producer_name": "p"}


def _timer_cut_then_reconnect(*, ack_a: bool) -> "object":
    """Java, batching 3 messages or 50 ms, no batch-index acks: a, b, c sent async 1 ms apart, 1 s after the
    producer's creation (its quiet period over). The client's timer sent a alone ((7,0,-1,-1)) and b, c as one
    entry. c1 receives all three, acks a individually (or not, ``ack_a``), closes; c2 on the same Exclusive
    subscription then gets what is owed; a flush last reports the ids. Before the flush only the receipts show the
    split: the model's tentative entry (a, b, c) must not hold a's ack hostage."""
    sub = {"topic": "t", "subscription": "s", "type": "Exclusive", "batch_index_ack": False}
    h = H(**JAVA).ok("subscribe", {"consumer": "c1", **sub}, t=(0, 0.5))
    h = h.ok("create_producer", {"producer": "p", "topic": "t", "batching": True, "batching_max_messages": 3,
                                 "batching_max_delay_ms": 50}, {"producer_name": "p", "last_sequence_id": -1}, t=(1, 1.5))
    ids = {"a": [7, 0, -1, -1], "b": [7, 1, -1, 0], "c": [7, 1, -1, 1]}
    for i, label in enumerate("abc"):
        h = h.ok("send", {"producer": "p", "payload": label, "async": True}, {}, t=(1001 + i, 1001.2 + i))
    t = 1100.0
    for label in "abc":
        h = h.ok("receive", {"consumer": "c1", "timeout_ms": 200}, {"message": _message(label, ids[label])}, t=(t, t + 1))
        t += 2
    if ack_a:
        h = h.ok("ack", {"consumer": "c1", "message": "a"}, t=(t, t + 1))
        t += 2
    h = h.ok("close", {"handle": "c1"}, t=(t, t + 1))
    h = h.ok("subscribe", {"consumer": "c2", **sub}, t=(t + 2, t + 3))
    t += 10
    for label in "bc":
        h = h.ok("receive", {"consumer": "c2", "timeout_ms": 200}, {"message": _message(label, ids[label], count=0)},
                 t=(t, t + 1))
        t += 2
    h = h.ok("receive", {"consumer": "c2", "timeout_ms": 200}, {"message": None}, t=(t, t + 200))
    return _flush(h, ids, t + 202).history()


def test_receipts_settle_a_timer_cut_before_the_flush():
    """An individual ack of a message its batch timer sent alone acks its entry: c2 is owed b and c only (PASS).
    Without the ack, a is owed to c2 first, and b first breaks the Exclusive order (PLS-EXCL-002)."""
    acked = check(_timer_cut_then_reconnect(ack_a=True))
    assert acked.ok, acked.summary()
    assert acked.rule_verdicts().get("PLS-BATCH-009") == "PASS", acked.rule_verdicts()
    found = _fails(_timer_cut_then_reconnect(ack_a=False))
    assert ("PLS-EXCL-002", "order-violation") in found or ("PLS-EXCL-002", "lost-message") in found, found


def test_receipts_that_no_split_allows_fail_at_the_receive():
    """a received alone in entry 0, then b at batch index 1 of entry 1: b's entry holds nothing before it, so the
    receipts' split is none a client makes (PLS-BATCH-001: indexes 0..n-1), judged before any flush."""
    h = H(**JAVA).ok("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Exclusive"}, t=(0, 0.5))
    h = h.ok("create_producer", {"producer": "p", "topic": "t", "batching": True, "batching_max_messages": 3,
                                 "batching_max_delay_ms": 50}, {"producer_name": "p", "last_sequence_id": -1}, t=(1, 1.5))
    for i, label in enumerate("ab"):
        h = h.ok("send", {"producer": "p", "payload": label, "async": True}, {}, t=(1001 + i, 1001.2 + i))
    h = h.ok("receive", {"consumer": "c1", "timeout_ms": 200}, {"message": _message("a", [7, 0, -1, -1])}, t=(1100, 1101))
    h = h.ok("receive", {"consumer": "c1", "timeout_ms": 200}, {"message": _message("b", [7, 1, -1, 1])}, t=(1102, 1103))
    report = check(h.history())
    assert "PLS-BATCH-001" in {v.rule_id for v in report.failures()}, report.summary()


def test_a_sync_sends_id_settles_the_keyshared_split_before_it():
    """Live 4.0.8, Go (generated trace fz-2d2b33e5cedf, 6 Dec 2026): m1 (ordering key o1) and m2 sent async, then m3
    sync with id (2084,0,-1,2): batch index 2, so m1 and m2 are in its entry, and no timer cut between them is
    left open. The Key_Shared receive of m1 before the flush is followed (it was 'not modelled' before) and judged:
    a changed producer name on it FAILs PLS-MSG-001."""
    path = Path(__file__).parent / "live_histories" / "live-4.0.8-go-keyshared-sync-send-joins-batch.jsonl"
    report = check(load(path))
    assert report.ok and not report.notes, (report.summary(), report.notes)
    assert report.rule_verdicts().get("PLS-KEYSHARED-001") == "PASS"
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    receive = next(r for r in rows if r.get("kind") == "op" and r["step"] == 9)
    receive["outcome"]["value"]["message"]["producer_name"] += "-x"
    lie = check(parse("\n".join(json.dumps(r) for r in rows) + "\n", source="renamed"))
    assert ("PLS-MSG-001", "wrong-value") in {(v.rule_id, v.anomaly) for v in lie.failures()}, lie.summary()


def _batch_of_one_received(consumer_client: str | None, received: list[int], flushed: list[int]) -> set:
    """A Python (C++) producer's batch of one, flushed with ``flushed``, received with ``received`` by a consumer of
    ``consumer_client`` (None: the history's python)."""
    sub = {"topic": "t", "subscription": "s", "type": "Exclusive", **({"client": consumer_client} if consumer_client else {})}
    h = H().ok("subscribe", {"consumer": "c1", **sub}, t=(0, 0.5))
    h = h.ok("create_producer", {"producer": "p", "topic": "t", "batching": True, "batching_max_messages": 3,
                                 "batching_max_delay_ms": 10}, {"producer_name": "p", "last_sequence_id": -1}, t=(1, 1.5))
    h = h.ok("send", {"producer": "p", "payload": "a", "async": True}, {}, t=(1001, 1001.2))
    h = _flush(h, {"a": flushed}, 1002)
    h = h.ok("receive", {"consumer": "c1", "timeout_ms": 200}, {"message": _message("a", received)}, t=(1100, 1101))
    return _fails(h.history())


def test_a_batch_of_one_is_index_0_to_python_and_minus_1_to_the_go_driver():
    """PLS-MSGID-001: the C++ client writes a batch of one as a batch (index 0); the Go driver reports -1 for any batch
    of one (drivers/go idJSON). A Go consumer's -1 for it is the same id; a Python consumer's -1, or any other index,
    is not."""
    assert not _batch_of_one_received("go", [7, 0, -1, -1], [7, 0, -1, 0])
    assert not _batch_of_one_received(None, [7, 0, -1, 0], [7, 0, -1, 0])
    assert ("PLS-MSGID-001", "wrong-value") in _batch_of_one_received(None, [7, 0, -1, -1], [7, 0, -1, 0])
    assert ("PLS-MSGID-001", "wrong-value") in _batch_of_one_received("go", [7, 0, -1, 1], [7, 0, -1, 0])
