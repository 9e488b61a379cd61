"""Exclusive and Failover: what a rewind that may have happened leaves in the active consumer's queue, decided at the
ack and the delivery that follow it, never at whichever instant someone last asked the model for options.

The model target asks for options at its own instants and the checker at the observed ones, so state that lapsed
only when options were asked parted the two runs of one history (model fuzz seed 20261222, regression
pls-excl-002-lost-message-e71d1a3376e5; the review of its fix found the Failover case below). And a rewind whose
window closed may still have put a copy back: live 4.0.8, Java, a Failover nack's rewind, clear_backlog 3 s later,
and m1 still came from the queue (the live history kept here). Expected outcomes come from those runs and from the
client's queue being FIFO with a fixed number of permits, not from the checker.
"""

from __future__ import annotations

from pathlib import Path

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Op, Outcome, TraceHeader, make_trace, parse
from reference_model.broker import Broker
from reference_model.profiles import profile_for
from reference_model.timing import Span

LIVE = Path(__file__).resolve().parent / "live_histories" / "live-4.0.8-java-failover-nack-rewind-then-clear-backlog.jsonl"


def test_a_copy_a_lapsed_rewind_put_back_may_come_after_the_ack():
    """Live: c1 received m1 while its nack of m0 (already acked) asked for a rewind; clear_backlog acked m1 3 s later,
    and m1 came again from c1's queue. Allowed (INDETERMINATE), never a FAIL."""
    history = parse(LIVE.read_text(encoding="utf-8"))
    report = check(history)
    assert not report.failures(), report.summary()
    last = history.events[-1].op.step
    assert "INDETERMINATE" in {v.status for v in report.verdicts if v.step == last and v.rule_id == "PLS-ACK-001"}


def test_the_model_s_own_run_of_an_unseen_rewind_passes_its_checker():
    """c1 (Failover, named b) nacks m0 after c2 (named a) joined, so the rewind would restart at m1, where the stream
    is: the checker's empty receive made it optional, the model's run had not; the ack settles it in both."""
    ops = [("create_topic", {"topic": "t", "partitions": 1}),
           ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Failover", "consumer_name": "b",
                          "nack_delay_ms": 100}),
           ("create_producer", {"producer": "p", "topic": "t"}),
           ("send", {"producer": "p", "payload": "m0"}),
           ("receive", {"consumer": "c1", "timeout_ms": 500}),
           ("ack", {"consumer": "c1", "message": "m0"}),
           ("send", {"producer": "p", "payload": "m1"}),
           ("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Failover", "consumer_name": "a",
                          "nack_delay_ms": 100}),
           ("nack", {"consumer": "c1", "message": "m0"}),
           ("receive", {"consumer": "c1", "timeout_ms": 500}),
           ("close", {"handle": "c2"}),
           ("advance_time", {"ms": 3000}),
           ("clear_backlog", {"topic": "t", "subscription": "s"}),
           ("receive", {"consumer": "c1", "timeout_ms": 500})]
    report = check(ModelTarget().run(make_trace("unseen-rewind", ops)))
    assert not report.failures(), report.summary()


def _m(label: str, entry: int) -> dict:
    return {"payload": label, "message_id": [10, entry, -1, -1], "topic": "t", "key": None, "ordering_key": None,
            "properties": {}, "event_time": 0, "publish_time": 0, "redelivery_count": 0, "producer_name": "p-0"}


def _queue_of(size: int) -> History:
    """A Java Exclusive consumer with a receiver queue of ``size`` gets m1, nacks it, asks for a redelivery and gets m1
    again; m2 is sent; clear_backlog acks both 2 s later; m1 comes once more from the queue, then nothing."""
    steps = [("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Exclusive",
                            "nack_delay_ms": 100, "receiver_queue_size": size}, {}, 0, 5),
             ("create_producer", {"producer": "p", "topic": "t"}, {"producer_name": "p-0", "last_sequence_id": -1}, 6, 10),
             ("send", {"producer": "p", "payload": "m1"}, {"message_id": [10, 0, -1, -1], "publish_time": 0,
                                                           "sequence_id": 0}, 11, 15),
             ("receive", {"consumer": "c", "timeout_ms": 500}, {"message": _m("m1", 0)}, 16, 18),
             ("nack", {"consumer": "c", "message": "m1"}, {}, 19, 20),
             ("redeliver_unacked", {"consumer": "c"}, {}, 118, 119),
             ("receive", {"consumer": "c", "timeout_ms": 1000}, {"message": _m("m1", 0)}, 120, 122),
             ("send", {"producer": "p", "payload": "m2"}, {"message_id": [10, 1, -1, -1], "publish_time": 0,
                                                           "sequence_id": 1}, 1200, 1205),
             ("clear_backlog", {"topic": "t", "subscription": "s"}, {}, 3200, 3210),
             ("receive", {"consumer": "c", "timeout_ms": 1000}, {"message": _m("m1", 0)}, 3211, 3212),
             ("receive", {"consumer": "c", "timeout_ms": 1000}, {"message": None}, 3213, 4213)]
    events = tuple(Event(Op(i + 1, op, args), Outcome.ok(value), float(t0), float(t1))
                   for i, (op, args, value, t0, t1) in enumerate(steps))
    return History(TraceHeader(trace_id="lapsed", target="pulsar", client="java", broker_version="4.0.8"), events)


def test_a_copy_a_lapsed_rewind_may_have_put_back_takes_a_permit():
    # a queue of one: the nack's rewind may have come after the second receipt of m1 and put it back, taking the one
    # permit, so m2 was maybe never pushed: its absence is no loss
    assert not check(_queue_of(1)).failures()
    # a queue of 1000 has room for m2 beside that copy: m2 surely sat in it when cleared, so it is owed
    assert "PLS-EXCL-002" in {v.rule_id for v in check(_queue_of(1000)).failures()}


def test_unshown_sends_of_one_key_are_guessed_onto_one_partition():
    """A key keeps its partition (PLS-ROUTE-001): two async sends of key k3 that no flush or receipt places are held on
    the same guessed partition (model fuzz seed 20261223, fz-55a257610851: they were guessed apart, and a later
    send's deduplication hung on the difference)."""
    broker = Broker(profile_for(None, "python"))
    broker.later_partitions = {}  # a judged history that shows no partition
    broker.step("create_topic", {"topic": "t", "partitions": 2}, Span(0, 0))
    broker.step("create_producer", {"producer": "p", "topic": "t"}, Span(1, 1),
                observed={"producer_name": "model-0", "last_sequence_id": -1})
    broker.step("send", {"producer": "p", "payload": "m0"}, Span(2, 2),
                observed={"message_id": [3, 0, 0, -1], "publish_time": 0, "sequence_id": 0})
    for i, label in enumerate(("m1", "m2")):
        broker.step("send", {"producer": "p", "payload": label, "async": True, "key": "k3"}, Span(3 + i, 3 + i),
                    observed={})
    assert {"m1", "m2"} <= broker.unplaced_labels
    assert broker.labels["m1"][0] is broker.labels["m2"][0]
