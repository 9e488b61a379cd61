"""Chapter dispatch/shared.py: Shared dispatch, a closed consumer's messages, priority levels (PLS-SHARED-002/003)."""

from __future__ import annotations

from broker_trace_helpers import P, labels, recv, run, send, sub
from case_history_helpers import failures, java_history, received
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import make_trace, received_message


# ---------------------------------------------------------------- PLS-SHARED-002


def test_shared_close_gives_unacked_to_others():
    # PLS-SHARED-002
    h = run(sub("c1", "Shared"), sub("c2", "Shared"), P, send("m0"), send("m1"), recv("c1"), recv("c1"),
            ("ack", {"consumer": "c1", "message": "m0"}), ("close", {"handle": "c1"}), recv("c2"), recv("c2"))
    assert labels(h) == ["m0", "m1", "m1", None]


# ---------------------------------------------------------------- PLS-SHARED-003


def test_shared_priority_case_passes():
    report = check(java_history("shared-priority-java"))
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-SHARED-003"] == "PASS"


def test_a_lower_priority_consumer_taking_a_message_fails():
    history = java_history("shared-priority-java")
    broken = received(history, 7, "m1")
    assert ("PLS-SHARED-003", "wrong-consumer") in failures(broken)


def test_a_lower_priority_consumer_may_take_what_a_full_queue_could_refuse():
    # high has receiver_queue_size 1: with three messages its queue may be full, so low may get one.
    trace = make_trace("prio-full", [
        ("subscribe", {"consumer": "high", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "high",
                       "priority_level": 0, "receiver_queue_size": 1}),
        ("subscribe", {"consumer": "low", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "low",
                       "priority_level": 1}),
        ("create_producer", {"producer": "p", "topic": "t"}),
        ("send", {"producer": "p", "payload": "m1"}), ("send", {"producer": "p", "payload": "m2"}),
        ("send", {"producer": "p", "payload": "m3"}),
        ("receive", {"consumer": "low", "timeout_ms": 500}),
        ("receive", {"consumer": "high", "timeout_ms": 500})])
    history = ModelTarget(client="java").run(trace)
    # the model lets low have one; not m1, which reached high while its one permit was surely there (nothing had
    # been received yet: PLS-SHARED-003, SharedDispatcher._maybe_queued), but m2, which a full queue could refuse
    assert received_message(history.events[6].outcome).payload == "m2"
    assert check(history).ok


def test_a_lower_priority_consumer_may_take_what_was_sent_before_the_better_one_joined():
    trace = make_trace("prio-late", [
        ("subscribe", {"consumer": "low", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "low",
                       "priority_level": 1}),
        ("create_producer", {"producer": "p", "topic": "t"}),
        ("send", {"producer": "p", "payload": "m1"}),
        ("advance_time", {"ms": 10}),
        ("subscribe", {"consumer": "high", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "high",
                       "priority_level": 0}),
        ("receive", {"consumer": "low", "timeout_ms": 500})])
    history = ModelTarget(client="java").run(trace)
    assert received_message(history.events[-1].outcome).payload == "m1"
    assert check(history).ok
