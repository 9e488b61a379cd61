"""Focused tests for the fuzzer's findings in ``conformance/regressions/`` (one per finding, each
named by its regression id), plus guards that the fixes did not loosen the rules they touch."""

from __future__ import annotations

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import make_trace
from model_history_helpers import H


def failures(report):
    return [(v.rule_id, v.anomaly) for v in report.failures()]


def _ack_cumulative_outcome(*ops):
    history = ModelTarget().run(make_trace("t", ops))
    last = history.events[-1]
    assert last.op.op == "ack_cumulative"
    return last.outcome


# ------------------------------------------------------ pls-keyshared-007-key-order-violation


def test_stale_copy_counts_as_dispatched_for_key_order():
    # PLS-KEYSHARED-007 / PLS-REDELIVER-001: after redeliver_unacked the checker takes m1 as a
    # stale queued copy; the broker dispatched m1 either way, so m2 of the same key is in order.
    h = H().sub("c1", "Key_Shared", nack_delay_ms=246, t=0).producer(t=0)
    h.ok("send", {"producer": "p", "payload": "m1", "ordering_key": "o1"},
         {"message_id": [1, 0, -1, -1], "publish_time": 0}, t=0)
    h.ok("redeliver_unacked", {"consumer": "c1"}, t=0)
    h.recv("c1", "m1", 0, t=0)
    h.ok("send", {"producer": "p", "payload": "m2", "ordering_key": "o1"},
         {"message_id": [1, 1, -1, -1], "publish_time": 0}, t=0)
    h.recv("c1", "m2", 1, t=0)
    for e in h.events:  # the observed messages carry their ordering key
        msg = (e.outcome.value or {}).get("message")
        if msg:
            msg["ordering_key"] = "o1"
    report = check(h.history())
    assert report.ok, report.summary()


def test_key_order_violation_still_fails_without_a_dispatch():
    # PLS-KEYSHARED-007 guard: m2 first while m1 of the same key was never dispatched.
    h = H().sub("c1", "Key_Shared", t=0).producer(t=0)
    for i, label in enumerate(("m1", "m2")):
        h.ok("send", {"producer": "p", "payload": label, "ordering_key": "o1"},
             {"message_id": [1, i, -1, -1], "publish_time": 0}, t=0)
    h.recv("c1", "m2", 1, t=0)
    for e in h.events:
        msg = (e.outcome.value or {}).get("message")
        if msg:
            msg["ordering_key"] = "o1"
    assert ("PLS-KEYSHARED-007", "key-order-violation") in failures(check(h.history()))


# ------------------------------------------------------ pls-nack-001-late-redelivery


def test_nack_of_a_stale_copy_does_not_owe_another_copy():
    # PLS-NACK-001 / PLS-REDELIVER-001: the first m1 after redeliver_unacked may be a stale queued
    # copy; its nack may or may not find the broker's copy pending, so a third copy is not owed.
    h = H().producer(t=0).send("m1", 0, t=0)
    h.sub("c3", "Key_Shared", initial_position="Earliest", nack_delay_ms=125, t=0)
    h.ok("redeliver_unacked", {"consumer": "c3"}, t=0)
    h.recv("c3", "m1", 0, t=0)
    h.ok("nack", {"consumer": "c3", "message": "m1"}, t=0)
    h.recv("c3", "m1", 0, count=1, t=(0, 125))
    h.recv("c3", None, t=(125, 398))
    report = check(h.history())
    assert report.ok, report.summary()


# ------------------------------------------------------ pls-nack-001-early-redelivery


def _early_redelivery_history(redeliver: bool) -> H:
    h = H().sub("c1", "Shared", nack_delay_ms=101, t=0).producer(t=0).send("m1", 0, t=0).send("m2", 1, t=0)
    h.recv("c1", "m1", 0, t=80).recv("c1", "m2", 1, t=92)
    h.ok("nack", {"consumer": "c1", "message": "m2"}, t=92).ok("nack", {"consumer": "c1", "message": "m1"}, t=92)
    h.recv("c1", "m1", 0, count=1, t=(92, 200))
    if redeliver:
        h.ok("redeliver_unacked", {"consumer": "c1"}, t=200)
    h.recv("c1", "m2", 1, count=1, t=200)
    h.ok("nack", {"consumer": "c1", "message": "m2"}, t=200)
    if redeliver:
        h.recv("c1", "m1", 0, count=2, t=201)
    h.recv("c1", "m2", 1, count=2, t=238)
    return h


def test_nack_of_a_stale_copy_keeps_the_broker_copy_already_sent():
    # PLS-NACK-001 / PLS-REDELIVER-001 (C++ keeps its receiver queue): the count-1 m2 taken after
    # redeliver_unacked is the stale queued copy; the broker's count-2 copy, sent at the
    # redeliver_unacked, may surface right after the nack of the stale one.
    report = check(_early_redelivery_history(redeliver=True).history())
    assert report.ok, report.summary()


def test_nack_without_redeliver_unacked_is_still_judged_early():
    # PLS-NACK-001 guard: without redeliver_unacked the only copy of m2 is the nacked one, so
    # m2 38 ms after its nack (d = 101 ms) is an early redelivery.
    report = check(_early_redelivery_history(redeliver=False).history())
    assert ("PLS-NACK-001", "early-redelivery") in failures(report)


def test_nack_of_the_broker_copy_after_a_stale_one_is_still_judged_early():
    # PLS-NACK-001 guard: the stale copy and then the broker's copy both reached c1; a nack now
    # names the broker's copy, so m0 may come back only from nack + d.
    h = H().sub("c1", "Shared", nack_delay_ms=100, t=0).producer(t=0).send("m0", 0, t=0)
    h.recv("c1", "m0", 0, t=0).ok("redeliver_unacked", {"consumer": "c1"}, t=10)
    h.recv("c1", "m0", 0, count=1, t=20).recv("c1", "m0", 0, count=1, t=30)
    h.ok("nack", {"consumer": "c1", "message": "m0"}, t=40)
    h.recv("c1", "m0", 0, count=2, t=50)
    assert ("PLS-NACK-001", "early-redelivery") in failures(check(h.history()))


# ------------------------------------------------------ pls-ack-003-wrong-error


def test_partitioned_cumulative_ack_of_an_unreceived_id_fails_routing_first():
    # PLS-ACK-001 before PLS-ACK-003 (C++ MultiTopicsConsumerImpl routes the id by its topic before
    # the partition's ConsumerImpl checks the subscription type): OperationNotSupported -> OtherError.
    out = _ack_cumulative_outcome(
        ("create_topic", {"topic": "u", "partitions": 1}),
        ("subscribe", {"consumer": "c1", "topic": "u", "subscription": "s1", "type": "Shared", "nack_delay_ms": 136}),
        ("create_producer", {"producer": "p1", "topic": "u"}),
        ("send", {"producer": "p1", "payload": "m2"}),
        ("ack_cumulative", {"consumer": "c1", "message": "m2"}))
    assert (out.status, out.error) == ("rejected", "OtherError")


def test_partitioned_cumulative_ack_of_a_received_id_is_refused_by_type():
    # PLS-ACK-003: once received, the id names its partition topic, so the type check decides.
    out = _ack_cumulative_outcome(
        ("create_topic", {"topic": "u", "partitions": 1}),
        ("subscribe", {"consumer": "c1", "topic": "u", "subscription": "s1", "type": "Shared"}),
        ("create_producer", {"producer": "p1", "topic": "u"}),
        ("send", {"producer": "p1", "payload": "m2"}),
        ("receive", {"consumer": "c1", "timeout_ms": 100}),
        ("ack_cumulative", {"consumer": "c1", "message": "m2"}))
    assert (out.status, out.error) == ("rejected", "CumulativeAcknowledgementNotAllowedError")


def test_non_partitioned_cumulative_ack_is_refused_by_type():
    # PLS-ACK-003: a plain ConsumerImpl checks the type first, received or not.
    out = _ack_cumulative_outcome(
        ("subscribe", {"consumer": "c1", "topic": "u", "subscription": "s1", "type": "Shared"}),
        ("create_producer", {"producer": "p1", "topic": "u"}),
        ("send", {"producer": "p1", "payload": "m2"}),
        ("ack_cumulative", {"consumer": "c1", "message": "m2"}))
    assert (out.status, out.error) == ("rejected", "CumulativeAcknowledgementNotAllowedError")


# ------------------------------------------------------ pls-sub-002-lost-message, pls-shared-002-late-redelivery
# PLS-UNACKED-001 with PLS-REDELIVER-001: a copy received after redeliver_unacked may be one the C++
# receiver queue kept (not counted by the broker) or the broker's own dispatch (counted against
# maxUnackedMessagesPerConsumer). The checker follows the stale reading; the consumer may then be at
# its limit, so what it may receive is not owed (reference_model/dispatch/shared.py _limit_after_stale).


def _limited(limit: int) -> H:
    return H().ok("set_policy", {"max_unacked_messages_per_consumer": limit}, t=0)


def _nacked_then_redelivered() -> H:
    # limit 2: c1 nacks m1 (given back, maybe already queued again) and holds m2; redeliver_unacked;
    # then m1 comes (count 1: a copy its queue kept, or the broker's) and m2 (count 1: the broker's,
    # since c1's application held it at the call).
    h = _limited(2).sub("c1", "Shared", nack_delay_ms=233, t=0).producer(t=0)
    h.send("m1", 0, t=0).send("m2", 1, t=0).send("m3", 2, t=0)
    h.recv("c1", "m1", 0, t=0).ok("nack", {"consumer": "c1", "message": "m1"}, t=0).recv("c1", "m2", 1, t=0)
    h.ok("redeliver_unacked", {"consumer": "c1"}, t=0)
    return h.recv("c1", "m1", 0, count=1, t=0).recv("c1", "m2", 1, count=1, t=0)


def test_stale_reading_under_the_limit_owes_nothing_more():
    # pls-sub-002-lost-message: read as the broker's, m1 and m2 block c1 (limit 2): m3 is not owed.
    h = _nacked_then_redelivered().recv("c1", None, t=(0, 300), timeout=300)
    report = check(h.history())
    assert report.ok, report.summary()


def test_stale_reading_under_the_limit_owes_nothing_after_a_close():
    # pls-shared-002-late-redelivery: limit 1; c1 holds m1 (blocked, m2 withheld); c4 joins, calls
    # redeliver_unacked, c1 closes; c4 gets m2 (stale, or the broker's dispatch that blocks c4), then
    # nothing: m1, given back by the close, is not owed to a consumer that may be at its limit.
    h = _limited(1).sub("c1", "Shared", nack_delay_ms=254, t=0).producer(t=0)
    h.send("m1", 0, t=0).recv("c1", "m1", 0, t=0).send("m2", 1, t=0).recv("c1", None, t=(0, 942), timeout=942)
    h.sub("c4", "Shared", nack_delay_ms=148, t=942)
    h.ok("redeliver_unacked", {"consumer": "c4"}, t=942)
    h.ok("close", {"handle": "c1"}, t=942)
    h.recv("c4", "m2", 1, t=942)
    h.recv("c4", None, t=(942, 1054), timeout=112)
    report = check(h.history())
    assert report.ok, report.summary()


def test_held_copy_is_not_read_as_stale_after_redeliver_unacked():
    # PLS-REDELIVER-001 / PLS-ACK-005 guard: m1 was in c1's application when it called
    # redeliver_unacked, so no copy of it sat in the receiver queue: only the broker's redelivery
    # (count 1) brings it back, and a count-0 copy is refused.
    h = H().sub("c1", "Shared", t=0).producer(t=0).send("m1", 0, t=0).recv("c1", "m1", 0, t=0)
    h.ok("redeliver_unacked", {"consumer": "c1"}, t=0)
    h.recv("c1", "m1", 0, count=0, t=0)
    assert ("PLS-ACK-005", "wrong-redelivery-count") in failures(check(h.history()))


def test_limit_still_owes_once_the_stale_reading_is_acked():
    # PLS-UNACKED-001 guard: once m1 (read as stale) is acked, both readings agree again: c1 holds m2
    # alone, below its limit of 2, so m3 is owed to it.
    h = _nacked_then_redelivered().ok("ack", {"consumer": "c1", "message": "m1"}, t=0)
    h.recv("c1", None, t=(0, 300), timeout=300)
    assert ("PLS-SHARED-001", "lost-message") in failures(check(h.history()))


def test_a_delivery_the_model_cannot_follow_changes_nothing():
    # A batched message under the limit is not modelled; the generator drops such a receive and goes
    # on with the same model, so the refused delivery must leave the dispatcher as it was (it used to
    # mark m1 held by c1 first, and the next receive got nothing while the checker owed m1).
    import pytest

    from reference_model.broker import Broker
    from reference_model.rejections import NotModelledError

    broker, now = Broker(), 0.0
    for op, args in (("set_policy", {"max_unacked_messages_per_consumer": 2}),
                     ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared"}),
                     ("create_producer", {"producer": "p", "topic": "t", "batching": True}),
                     ("send", {"producer": "p", "payload": "m1", "async": True}),
                     ("send", {"producer": "p", "payload": "m2", "async": True}),
                     ("flush", {"producer": "p"})):
        outcome, now = ModelTarget._run_op(broker, op, args, now)
        assert outcome.status == "ok", (op, outcome)
    for _ in range(2):  # the same refusal both times: nothing was taken the first time
        with pytest.raises(NotModelledError, match="batched message under maxUnackedMessagesPerConsumer"):
            ModelTarget._run_op(broker, "receive", {"consumer": "c1", "timeout_ms": 100}, now)
    dispatcher = broker.consumers["c1"][1].dispatcher
    assert not dispatcher.held_by["c1"] and not dispatcher.slots and not broker.received_labels.get("c1")


# ------------------------------------------------------ pls-excl-002-lost-message-303196cc5c1e

def _np_fenced_history(keep_fenced_send: bool, java_consumer: bool = False):
    import json
    from pathlib import Path

    from conformance.trace import parse
    path = (Path(__file__).resolve().parents[2] / "conformance" / "regressions"
            / "pls-excl-002-lost-message-303196cc5c1e.history.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    kept = []
    for d in records:
        d.pop("op_count", None)  # the header's count is the pinned file's; this history is another
        if d.get("step") == 8 and not keep_fenced_send:
            continue
        if d.get("step") == 9 and not keep_fenced_send:
            d["step"] = 8
        if java_consumer and d.get("step") == 4:
            d["args"] = dict(d["args"], client="java")
        if java_consumer and (d.get("step") or 0) >= 5:
            # m5 left 65 us after c2's subscribe returned: a Java consumer's first permits may still have been on
            # their way, and the broker may drop it (non_persistent rule 6); 500 ms later they surely arrived
            d["t_start_ms"], d["t_end_ms"] = d["t_start_ms"] + 500, d["t_end_ms"] + 500
        kept.append(json.dumps(d))
    return parse("\n".join(kept) + "\n")


def test_a_fenced_send_may_close_the_connection_and_its_consumers_are_not_judged_after_it():
    # Live 4.0.8 and 3.3.6: m5 waited in c2's receiver queue; p1, fenced, sent m7 (ProducerFenced), and c2 then got
    # nothing: the send reached the broker on the closed producer, the connection closed, and the C++ consumer
    # cleared its queue on reconnect (a non-persistent message is not sent again).
    report = check(_np_fenced_history(True))
    assert report.ok, report.summary()
    assert any("may have closed its client's connection" in note for note in report.notes)


def test_without_the_fenced_send_the_lost_message_still_fails():
    assert ("PLS-EXCL-002", "lost-message") in failures(check(_np_fenced_history(False)))


def test_a_consumer_on_another_client_is_still_judged():
    # the Java driver's consumer has a connection of its own: the C++ producer's SendError does not close it
    assert ("PLS-EXCL-002", "lost-message") in failures(check(_np_fenced_history(True, java_consumer=True)))


# ------------------------------------------------------ pls-route-001-wrong-partition-c5ff99106f97

def _route_history(custom_router: bool):
    import json
    from pathlib import Path

    from conformance.trace import parse
    path = (Path(__file__).resolve().parents[2] / "conformance" / "regressions"
            / "pls-route-001-wrong-partition-c5ff99106f97.history.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    for d in records:
        if d.get("step") == 2 and not custom_router:
            d["args"] = {k: v for k, v in d["args"].items() if k != "router"}
    return parse("\n".join(json.dumps(d) for d in records) + "\n")


def test_a_key_keeps_its_partition_only_across_producers_with_the_default_hash():
    # Live 3.2.3 and 4.0.8: k2 from a producer with a Java-style murmur3 router went to partition 0, k2 from a
    # producer with the client's default hash to partition 1. Two schemes, two partitions: allowed.
    assert check(_route_history(True)).ok


def test_two_default_producers_still_send_a_key_to_one_partition():
    assert ("PLS-ROUTE-001", "wrong-partition") in failures(check(_route_history(False)))
