"""Lies the checker let through on live histories it was never tuned on (the random-lie campaign of 7 Dec 2026 over
600 fresh live histories of broker 4.0.8: python, java, go and mixed generated traces, ``benchmarks/random_lies.py``).
Each recorded history below PASSes as recorded, and one lie told in it must FAIL the rule whose text speaks of the
changed value. The expected verdicts come from the rule texts and the client and broker code cited, not from the
checker's output.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import History, Op, Trace, TraceHeader, load, parse
from model_history_helpers import H, msg

LIVE = Path(__file__).resolve().parent / "live_histories"


def _edited(name: str, step: int, edit) -> History:
    lines = [json.loads(line) for line in (LIVE / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    for d in lines:
        if d.get("step") == step:
            edit(d["outcome"]["value"])
    return parse("\n".join(json.dumps(d) for d in lines))


def _statuses(h: History, rule: str, step: int) -> set[str]:
    return {v.status for v in check(h).verdicts if v.rule_id == rule and v.step == step}


def _fails(h: History) -> set[str]:
    return {v.rule_id for v in check(h).verdicts if v.status == "FAIL"}


def test_an_indeterminate_receive_does_not_excuse_a_changed_message_elsewhere():
    """Python: c1's receive on s1 at step 6 ended indeterminate; c2 on sx1 then got m1 (step 13) and c1 got m1 (step 22).
    A receive that may or may not have taken a message changes which messages its subscription owes, never what the
    topic stores (PLS-MSG-001): a key that was never sent is a FAIL on either subscription."""
    name = "live-4.0.8-python-indeterminate-receive-then-expiry.jsonl"
    assert _fails(load(LIVE / name)) == {"PLS-UNACKED-002"}  # KD-103, below
    for step in (13, 22):
        lie = _edited(name, step, lambda v: v["message"].__setitem__("key", "k-x"))
        assert _statuses(lie, "PLS-MSG-001", step) == {"FAIL"}, check(lie).summary()


def test_a_payload_no_send_produced_is_not_excused_by_an_indeterminate_receive():
    name = "live-4.0.8-python-indeterminate-receive-then-expiry.jsonl"
    lie = _edited(name, 22, lambda v: v["message"].__setitem__("payload", "m4"))  # m4 is sent only at step 23
    assert "FAIL" in _statuses(lie, "PLS-MSG-001", 22), check(lie).summary()


def test_messages_an_expiry_removed_and_still_counted_once_it_settled_are_the_known_4_0_8_bug():
    """The same history: three messages prefetched by c2, an expiry pass, then stats with backlog 0 (the pass's cursor
    move done) and unackedMessages 3 for c2, the only consumer of sx1, under the name its client chose. A settled pass
    takes them off the consumer's count (apache/pulsar PR #25581, released in 4.2.2); on 4.0.8 it does not: known
    deviation KD-103 (PLS-UNACKED-002). While the backlog still counts what a pass removes, the unacked count may too
    (regression pls-backlog-001-wrong-backlog-cc0a0e50d818, live 5.0.0-M1)."""
    name = "live-4.0.8-python-indeterminate-receive-then-expiry.jsonl"
    assert _statuses(load(LIVE / name), "PLS-UNACKED-002", 16) == {"FAIL"}
    not_settled = _edited(name, 16, lambda v: v.__setitem__("backlog", 2))  # the backlog still counts the pass's
    assert _statuses(not_settled, "PLS-UNACKED-002", 16) == {"PASS"}, check(not_settled).summary()


def test_the_only_consumer_of_a_subscription_is_judged_under_its_clients_name():
    """Java: a consumer of a topic list holds s1 alone; its name is its client's (random), so the stats' one entry is
    its own: unackedMessages 1 with nothing dispatched is a FAIL (PLS-UNACKED-002)."""
    name = "live-4.0.8-java-multi-topic-consumer-unacked-stats.jsonl"
    assert _statuses(load(LIVE / name), "PLS-UNACKED-002", 4) == {"PASS"}
    lie = _edited(name, 4, lambda v: v["consumer_unacked"][0].__setitem__("unacked_messages", 1))
    assert _statuses(lie, "PLS-UNACKED-002", 4) == {"FAIL"}, check(lie).summary()


def test_a_flushed_id_must_sort_after_its_producers_earlier_send():
    """Go: sync m1, async m2 reported by the flush at step 9, then sync m3. One producer's messages are stored in the
    order it sent them, so m2's id sorts after m1's (PLS-MSGID-002): an m1 that took m2's id breaks it at the flush."""
    name = "live-4.0.8-go-async-send-flushed-between-sync-sends.jsonl"
    assert "FAIL" not in _statuses(load(LIVE / name), "PLS-MSGID-002", 9)
    lie = _edited(name, 4, lambda v: v.__setitem__("message_id", [v["message_id"][0], 1, -1, -1]))
    assert _statuses(lie, "PLS-MSGID-002", 9) == {"FAIL"}, check(lie).summary()


def test_a_sync_send_after_a_flush_sorts_after_the_flushed_ids():
    """The same history: m3, a sync send after the flush, was stored after m2, so an m3 with m2's id breaks
    PLS-MSGID-002 at step 10."""
    name = "live-4.0.8-go-async-send-flushed-between-sync-sends.jsonl"
    flushed = json.loads((LIVE / name).read_text(encoding="utf-8").splitlines()[9])["outcome"]["value"]["message_ids"]["m2"]
    lie = _edited(name, 10, lambda v: v.__setitem__("message_id", list(flushed)))
    assert _statuses(lie, "PLS-MSGID-002", 10) == {"FAIL"}, check(lie).summary()


def test_a_non_persistent_flush_reports_ids_that_name_no_entry():
    """Java: a flush on a non-persistent topic reports (0, 0, -1, -1) for each message (PLS-NP-003)."""
    name = "live-4.0.8-java-non-persistent-flush-ids.jsonl"
    assert _statuses(load(LIVE / name), "PLS-NP-003", 20) == {"PASS"}
    lie = _edited(name, 20, lambda v: v["message_ids"].__setitem__("m5", [2, 0, -1, -1]))
    assert "FAIL" in _statuses(lie, "PLS-NP-003", 20), check(lie).summary()


def test_a_non_persistent_flush_of_a_producer_that_does_not_batch_reports_no_batch_index():
    """Python (mixed campaign, 7 Dec 2026): p2, a producer of non-persistent://n that does not batch, sent m1 async; the
    flush at step 12 reported (0, 0, -1, -1). A message sent alone has batch index -1 (PLS-NP-003: (0, 0, partition, -1),
    an index only inside a batch), so a flush reporting index 0 breaks the rule."""
    name = "live-4.0.8-python-non-persistent-unbatched-flush-id.jsonl"
    assert _statuses(load(LIVE / name), "PLS-NP-003", 12) == {"PASS"}
    lie = _edited(name, 12, lambda v: v["message_ids"].__setitem__("m1", [0, 0, -1, 0]))
    assert _statuses(lie, "PLS-NP-003", 12) == {"FAIL"}, check(lie).summary()


def test_a_message_whose_send_reported_no_id_still_names_no_partition():
    """Java: async m1, received before any flush reported its id: on a topic that is not partitioned its id has
    partition -1 all the same (PLS-MSGID-001)."""
    name = "live-4.0.8-java-async-send-received-unreported.jsonl"
    assert not _fails(load(LIVE / name))
    lie = _edited(name, 6, lambda v: v["message"]["message_id"].__setitem__(2, 0))
    assert _statuses(lie, "PLS-MSGID-001", 6) == {"FAIL"}, check(lie).summary()


def test_a_compacted_reader_is_followed_while_a_key_shared_split_is_open():
    """Mixed: a Go batching producer's split is open on t, which a Key_Shared subscription reads (that receive is not
    followed: the split decides the consumer); a compacted reader of t reads m10, m11, m12 in order whatever the split.
    Its reads are judged: m12 is a tombstone that 4.0.8 keeps (KD-003, PLS-COMPACT-006), and a property it was never
    sent with is a FAIL of PLS-MSG-001."""
    name = "live-4.0.8-mixed-compacted-reader-beside-key-shared-split.jsonl"
    report = check(load(LIVE / name))
    assert [nf.step for nf in report.not_followed] == [13]
    assert {v.rule_id for v in report.verdicts if v.status == "FAIL"} == {"PLS-COMPACT-006"}
    lie = _edited(name, 22, lambda v: v["message"].__setitem__("properties", {"perturbed": "v"}))
    assert _statuses(lie, "PLS-MSG-001", 22) == {"FAIL"}, check(lie).summary()


def test_a_redelivery_count_after_an_indeterminate_receive_on_its_subscription_is_not_a_fail():
    """A receive that ended indeterminate (a lost connection) may have left the consumer disconnected at the broker,
    which counts a redelivery of what it had been given (PLS-ACK-005): the next message's count is the subscription's,
    not judged strictly after it (the review of 7 Dec 2026 found the narrowed field taint had made this a FAIL)."""
    h = (H(target="embedded", broker_version="5.0.0-M1").sub("c1", "Shared").producer().send("m1", 0).send("m2", 1)
         .recv("c1", "m1", 0).indeterminate("receive", {"consumer": "c1", "timeout_ms": 1000})
         .ok("receive", {"consumer": "c1", "timeout_ms": 1000}, {"message": msg("m2", 1, count=1)}).history())
    assert "FAIL" not in {v.status for v in check(h).verdicts if v.rule_id == "PLS-ACK-005"}, check(h).summary()


def test_a_producer_handle_reused_on_another_topic_starts_its_id_order_afresh():
    """p sends on u, closes, and is created again on t, whose ledger is older than u's: its flushed id on t is not
    ordered after its ids on u (PLS-MSGID-002 speaks of one producer's messages on one topic)."""
    ops = [("create_producer", {"producer": "q", "topic": "t"}), ("send", {"producer": "q", "payload": "m0"}),
           ("create_producer", {"producer": "p", "topic": "u"}), ("send", {"producer": "p", "payload": "m1"}),
           ("send", {"producer": "p", "payload": "m2"}), ("close", {"handle": "p"}),
           ("create_producer", {"producer": "p", "topic": "t"}), ("send", {"producer": "p", "payload": "m3", "async": True}),
           ("flush", {"producer": "p"})]
    h = ModelTarget().run(Trace(TraceHeader(trace_id="reuse"), tuple(Op(i + 1, o, a) for i, (o, a) in enumerate(ops))))
    assert not _fails(h), check(h).summary()


def test_an_id_flushed_after_another_producers_send_returned_sorts_after_its_id():
    """Mixed: a Java producer's sync send of m1 returned (197,0) at step 4; a Python producer then sent m2, m3, m4
    async and its flush reported (197,1,-1,0..2) at step 19. m1 was stored before m2 was sent, so m2's id sorts
    after m1's (PLS-MSGID-002: ids on a topic increase in publish order, whichever producer published)."""
    name = "live-4.0.8-mixed-sync-send-then-other-producers-batch.jsonl"
    assert "FAIL" not in _statuses(load(LIVE / name), "PLS-MSGID-002", 19)
    lie = _edited(name, 4, lambda v: v.__setitem__("message_id", [199, 0, -1, -1]))
    assert "FAIL" in _statuses(lie, "PLS-MSGID-002", 19), check(lie).summary()


def test_two_messages_never_share_an_id():
    """Mixed: p3's sync send of m5 returned (151,3) at step 19; p5's flush at step 21 reported (151,2) for m3, sent
    async at step 16. Told that m5 got (151,2) as well, two messages of one topic share an id, which ids that
    increase in publish order never do (PLS-MSGID-002), whichever of the two was stored first."""
    name = "live-4.0.8-mixed-async-send-flushed-after-other-producers-send.jsonl"
    assert _fails(load(LIVE / name)) == set()
    lie = _edited(name, 19, lambda v: v.__setitem__("message_id", [151, 2, -1, -1]))
    assert "FAIL" in _statuses(lie, "PLS-MSGID-002", 21), check(lie).summary()


def test_a_copy_queued_before_an_expiry_pass_keeps_the_count_it_was_dispatched_with():
    """Python: c2, alone on Shared sx1, had m1..m3 prefetched when an expiry pass (step 15) acked them at the broker;
    m2 still surfaced from its receiver queue at step 17 (a ghost copy: PLS-ACK-001 cannot say whether it was queued
    before the pass, so INDETERMINATE). Nothing ever redelivered m2, so the copy was its first dispatch: its count is 0
    (PLS-ACK-005), and a count of 1 is a lie whichever way the copy came."""
    name = "live-4.0.8-python-indeterminate-receive-then-expiry.jsonl"
    assert "FAIL" not in _statuses(load(LIVE / name), "PLS-ACK-005", 17)
    lie = _edited(name, 17, lambda v: v["message"].__setitem__("redelivery_count", 1))
    assert _statuses(lie, "PLS-ACK-005", 17) == {"FAIL"}, check(lie).summary()


def test_a_copy_queued_before_a_cumulative_ack_on_failover_keeps_count_zero():
    """Java: c2, the active Failover consumer, received m1 (step 12), acked cumulatively up to m3 (step 13), and m2,
    prefetched before the ack, still surfaced (step 14: a ghost, PLS-ACK-001 INDETERMINATE). An Exclusive or Failover
    subscription's copies come from its stream or a rewind, neither of which bumps the count (PLS-ACK-005; the
    broker rewinds the cursor instead of redelivering positions), so m2 carries 0 and a count of 1 is a lie."""
    name = "live-4.0.8-java-failover-cumulative-ack-past-queued.jsonl"
    assert _fails(load(LIVE / name)) == set()
    lie = _edited(name, 14, lambda v: v["message"].__setitem__("redelivery_count", 1))
    assert _statuses(lie, "PLS-ACK-005", 14) == {"FAIL"}, check(lie).summary()


def test_a_ghost_copy_after_a_close_inside_the_ack_grouping_band_may_carry_a_higher_count():
    """The review of 84c5b02: c1 acks m1 at 100 ms, which the broker applies only after the client's ack grouping; c2,
    whose queue held m1, closes at 110 ms, so the broker gives m1 back with count 1 and c3 gets it at 150 ms before the
    ack lands. Acked in the model, that copy is a ghost (PLS-ACK-001 cannot judge it); its count is not bounded by what
    the message had at the ack, since a close came after it."""
    h = H().sub("c1", "Shared", t=0).sub("c2", "Shared", t=1).sub("c3", "Shared", t=2).producer(t=3).send("m1", 0, t=4)
    h.ok("ack", {"consumer": "c1", "message": "m1"}, t=(100, 101))
    h.ok("close", {"handle": "c2"}, t=(110, 111))
    h.recv("c3", "m1", 0, count=1, t=(120, 150))
    history = h.history()
    last = history.events[-1].step
    statuses = {v.rule_id: v.status for v in check(history).verdicts if v.step == last}
    assert statuses.get("PLS-ACK-001") == "INDETERMINATE" and statuses.get("PLS-ACK-005") != "FAIL", statuses


def test_a_delayed_message_that_came_due_while_a_later_one_was_queued_is_not_read_absent():
    """Regression pls-backlog-001-wrong-backlog-5b7d56bf267b (a model self-FAIL of seed 20261213), and the review's
    variant: m5, delayed to 100 ms, is held maybe absent on the partition the model guessed for it (no flush or receipt
    shows its partition); m6, stored after it at 10 ms, reaches the only consumer at 500 ms. m6 may have waited in the
    queue since 10 ms, before m5 came due, so its receipt says nothing of m5: stats counting both (backlog 2) PASS."""
    path = Path(__file__).resolve().parents[2] / "conformance" / "regressions" / "pls-backlog-001-wrong-backlog-5b7d56bf267b.history.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    for d in lines:
        if d.get("step") == 4:
            d["args"]["deliver_at_ms"] = 100
        if d.get("step") == 7:
            d["t_start_ms"], d["t_end_ms"] = 10.0, 10.0
        if d.get("step") == 8:
            d["t_start_ms"], d["t_end_ms"] = 240.0, 500.0
        if d.get("step") == 9:
            d["t_start_ms"], d["t_end_ms"] = 500.0, 500.0
    for variant in (load(path), parse("\n".join(json.dumps(d) for d in lines))):
        assert "FAIL" not in _statuses(variant, "PLS-BACKLOG-001", 9), check(variant).summary()


def test_a_message_acked_while_surely_queued_still_comes_and_its_loss_fails():
    """Java, Failover (held-out campaign aimed at seeks and transactions, 7 Dec 2026): c2 got m1 at step 12 after the
    activation delay, cumulatively acked m3 at step 13 without having received m2 or m3, and got m2 from its receiver
    queue at step 14. The read that brought m1 started after m2 and m3 were stored (c2's receive before it ended empty),
    so the same read pushed them to the queue, and an ack does not take a queued copy back out (PLS-ACK-001's note; the
    clients keep their queue on ack): a history where m2 never comes loses it (PLS-FAILOVER-003)."""
    name = "live-4.0.8-java-failover-queued-after-cumulative-ack.jsonl"
    assert not _fails(load(LIVE / name))
    assert _statuses(load(LIVE / name), "PLS-FAILOVER-003", 14) == {"PASS"}
    # the lie: the receive at step 14 waits its 300 ms timeout and gets nothing; later events move with it
    lines = [json.loads(line) for line in (LIVE / name).read_text(encoding="utf-8").splitlines() if line.strip()]
    shift = 0.0
    for d in lines:
        if d.get("step") == 14:
            d["outcome"]["value"]["message"] = None
            shift = d["t_start_ms"] + 300 - d["t_end_ms"]
            d["t_end_ms"] += shift
        elif d.get("step", 0) > 14:
            d["t_start_ms"] += shift
            d["t_end_ms"] += shift
    lie = parse("\n".join(json.dumps(d) for d in lines))
    assert _statuses(lie, "PLS-FAILOVER-003", 14) == {"FAIL"}, check(lie).summary()


def test_a_consumer_the_model_does_not_follow_still_receives_what_was_sent():
    """Mixed (the 600 held-out histories): c2's subscribe at step 5 is not followed (a subscription at Latest while
    async sends were in flight), so which message it may get next is not judged; but m1 was sent with key k1 and
    ordering key o1, and a receipt of m1 carrying neither breaks PLS-MSG-001 whoever the consumer is."""
    name = "live-4.0.8-mixed-unfollowed-subscribe-receipts.jsonl"
    assert not _fails(load(LIVE / name))
    lie = _edited(name, 11, lambda v: v["message"].__setitem__("payload", "m1"))
    assert _statuses(lie, "PLS-MSG-001", 11) == {"FAIL"}, check(lie).summary()


def test_closing_a_consumer_the_model_does_not_follow_is_not_refused():
    """Java: c2, a pattern consumer the model does not follow (its subscribe at step 11), closed at step 12. The client
    API names no refusal for a consumer's close (PLS-OP-001), so one refused with TransactionNotFound FAILs; a timeout
    says nothing."""
    name = "live-4.0.8-java-unfollowed-pattern-consumer-close.jsonl"
    assert not _fails(load(LIVE / name))

    def refused(error: str) -> History:
        lines = [json.loads(line) for line in (LIVE / name).read_text(encoding="utf-8").splitlines() if line.strip()]
        for d in lines:
            if d.get("step") == 12:
                d["outcome"] = {"status": "rejected", "error": error}
        return parse("\n".join(json.dumps(d) for d in lines))

    assert _statuses(refused("TransactionNotFound"), "PLS-OP-001", 12) == {"FAIL"}
    assert _statuses(refused("Timeout"), "PLS-OP-001", 12) == {"INDETERMINATE"}
