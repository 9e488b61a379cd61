"""Chapter dispatch/failover.py: the active consumer, its successor, priority levels (PLS-FAILOVER-001/002/005)."""

from __future__ import annotations

from broker_trace_helpers import P, labels, recv, run, send, sub
from case_history_helpers import failures, java_history, received, replace_outcome
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Outcome, make_trace, received_message


# ---------------------------------------------------------------- PLS-FAILOVER-001/002


def test_failover_first_connected_is_active_then_next():
    # PLS-FAILOVER-001 / PLS-FAILOVER-002
    h = run(sub("c1", "Failover"), sub("c2", "Failover"), P, send("m0"), send("m1"), recv("c2", 100), recv("c1"),
            ("close", {"handle": "c1"}), recv("c2"), recv("c2"))
    assert labels(h) == [None, "m0", "m0", "m1"]


# ---------------------------------------------------------------- PLS-FAILOVER-005


def test_failover_priority_case_passes():
    report = check(java_history("failover-priority-java"))
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-FAILOVER-005"] == "PASS"


def test_a_worse_priority_failover_consumer_getting_a_later_message_fails():
    history = java_history("failover-priority-java")
    broken = received(history, 7, "m1")
    assert ("PLS-FAILOVER-005", "wrong-consumer") in failures(broken)


def test_a_worse_priority_consumer_may_drain_what_was_in_flight_before_the_switch():
    trace = make_trace("fo-drain", [
        ("subscribe", {"consumer": "low", "topic": "t", "subscription": "s", "type": "Failover", "consumer_name": "low",
                       "priority_level": 1}),
        ("create_producer", {"producer": "p", "topic": "t"}),
        ("subscribe", {"consumer": "high", "topic": "t", "subscription": "s", "type": "Failover", "consumer_name": "high",
                       "priority_level": 0}),
        ("send", {"producer": "p", "payload": "m1"}),  # within activeConsumerFailoverDelayTimeMillis of the join
        ("receive", {"consumer": "low", "timeout_ms": 300})])
    history = ModelTarget(client="java").run(trace)
    assert received_message(history.events[-1].outcome) is None  # the model's own choice: nothing
    mutated = replace_outcome(history, 5, Outcome.ok({"message": {
        "payload": "m1", "message_id": history.events[3].outcome.value["message_id"], "topic": "t", "key": None,
        "ordering_key": None, "properties": {}, "event_time": 0, "publish_time": 0, "redelivery_count": 0,
        "producer_name": "model-0"}}))
    assert check(mutated).ok, check(mutated).summary()


def test_failover_priority_also_orders_partitions():
    trace = make_trace("fo-part", [
        ("create_topic", {"topic": "t", "partitions": 2}),
        ("subscribe", {"consumer": "a", "topic": "t", "subscription": "s", "type": "Failover", "consumer_name": "a",
                       "priority_level": 1}),
        ("subscribe", {"consumer": "b", "topic": "t", "subscription": "s", "type": "Failover", "consumer_name": "b",
                       "priority_level": 0}),
        ("advance_time", {"ms": 1500}),
        ("create_producer", {"producer": "p", "topic": "t", "router": {"hashing": "murmur3_32", "client": "java"}}),
        ("send", {"producer": "p", "payload": "m0", "key": "key-1"}),
        ("receive", {"consumer": "a", "timeout_ms": 300}),
        ("receive", {"consumer": "b", "timeout_ms": 300})])
    history = ModelTarget(client="java").run(trace)
    assert received_message(history.events[-2].outcome) is None
    assert received_message(history.events[-1].outcome).payload == "m0"
    assert check(history).ok


# ---------------------------------------------------------------- a seek restarts the activation delay


# the seek comes well after the subscribe's own activation delay ran out
SEEK_THEN_WAIT = (sub("c1", "Failover", consumer_name="c1"), P, send("m1"), ("advance_time", {"ms": 1500}),
                  ("seek", {"consumer": "c1", "position": "earliest"}), recv("c1", 100), recv("c1", 1500))


def _nothing_for(h, step: int, ms: float):
    """The receive at ``step`` waited ``ms`` and got nothing; later events move ``ms`` later."""
    from dataclasses import replace as dc_replace

    from conformance.trace import History

    events = list(h.events)
    e = events[step - 1]
    events[step - 1] = dc_replace(e, outcome=Outcome.ok({"message": None}), t_end_ms=e.t_start_ms + ms)
    for k in range(step, len(events)):
        events[k] = dc_replace(events[k], t_start_ms=events[k].t_start_ms + ms, t_end_ms=events[k].t_end_ms + ms)
    return History(h.header, tuple(events))


def test_after_a_seek_the_failover_consumer_waits_the_activation_delay():
    """The broker disconnects and re-adds the consumer on a seek, and waits activeConsumerFailoverDelayTimeMillis
    (1 s) before reading for it: measured 1 036 ms on 4.0.8 (the 3.3.6 finding pls-failover-003-lost-message-e9b400235bac).
    The model delivers at once (allowed); a broker that waits the delay passes too."""
    h = run(*SEEK_THEN_WAIT)
    assert labels(h) == ["m1", None]
    assert check(h).ok, check(h).summary()
    late = _nothing_for(received(h, 7, "m1"), 6, 100)  # nothing for 100 ms after the seek, then m1
    assert check(late).ok, check(late).summary()


def test_after_a_seek_a_message_still_missing_past_the_delay_is_lost():
    h = run(*SEEK_THEN_WAIT)
    lost = _nothing_for(_nothing_for(h, 6, 100), 7, 1500)
    assert ("PLS-FAILOVER-003", "lost-message") in failures(lost), check(lost).summary()
