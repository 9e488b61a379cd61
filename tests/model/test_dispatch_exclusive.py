"""Chapter dispatch/exclusive.py: Exclusive dispatch; a nack rewinds every unacked message (PLS-NACK-003)."""

from __future__ import annotations

from broker_trace_helpers import P, received, recv, run, send, sub
from case_history_helpers import failures, java_history
from conformance.checker import check
from conformance.trace import Event, History, Outcome


def set_message(history: History, step: int, **changes) -> History:
    events = list(history.events)
    ev = events[step - 1]
    message = dict(ev.outcome.value["message"], **changes)
    events[step - 1] = Event(ev.op, Outcome.ok({"message": message}), ev.t_start_ms, ev.t_end_ms)
    return History(history.header, tuple(events))


# ---------------------------------------------------------------- PLS-NACK-003


def test_exclusive_nack_rewinds_everything_unacked_in_order():
    # PLS-NACK-003 with the model's canonical choice (no prefetch): m2 first, then the rewind.
    h = run(sub("c1", nack_delay_ms=200), P, send("m0"), send("m1"), send("m2"), recv("c1"), recv("c1"),
            ("nack", {"consumer": "c1", "message": "m0"}), recv("c1"), recv("c1"), recv("c1"), recv("c1"), recv("c1"))
    assert received(h) == [("m0", 0, 0), ("m1", 0, 0), ("m2", 0, 0), ("m0", 0, 200), ("m1", 0, 200), ("m2", 0, 200), None]


# ---------------------------------------------------------------- PLS-NACK-003 (Java)


def test_java_exclusive_nack_rewinds():
    report = check(java_history("nack-exclusive-rewind-java"))
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-NACK-003"] == "PASS"


def test_java_exclusive_rewind_with_a_count_fails():
    broken = set_message(java_history("nack-exclusive-rewind-java"), 11, redelivery_count=1)
    assert ("PLS-ACK-005", "wrong-redelivery-count") in failures(broken)


# ---------------------------------------------------------------- PLS-COMPACT-001 / PLS-SUB-005 (read_compacted consumer)


def test_read_compacted_consumer_reads_the_view_then_resumes_after_its_acks():
    # a1 is superseded by a2: the view is b1, a2; once a2 is acked cumulatively, a consumer coming
    # back with Earliest gets nothing (apache/pulsar PR #21187; 3.0.2 sent b1, a2 again: KD-303).
    compacted = {"read_compacted": True, "initial_position": "Earliest", "consumer_name": "c"}
    h = run(sub("c0", **compacted), ("close", {"handle": "c0"}), P, send("a1", key="a"), send("b1", key="b"),
            send("a2", key="a"), ("compact", {"topic": "t"}), sub("c1", **compacted), recv("c1"), recv("c1"),
            ("ack_cumulative", {"consumer": "c1", "message": "a2"}), ("advance_time", {"ms": 2000}),
            ("close", {"handle": "c1"}), sub("c2", **compacted), recv("c2"))
    assert [r and r[0] for r in received(h)] == ["b1", "a2", None]
