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
