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
