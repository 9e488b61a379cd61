"""Chapter cursor.py: acks, backlog, seek (PLS-ACK-001/002/004, PLS-BACKLOG-001, PLS-SEEK-001..003)."""

from __future__ import annotations

import pytest

from broker_trace_helpers import P, labels, recv, run, send, sub
from case_history_helpers import failures, java_history, received
from conformance.checker import check
from reference_model.cursor import Cursor


# ---------------------------------------------------------------- PLS-ACK-001/002/004, PLS-BACKLOG-001


def test_cursor_individual_and_cumulative_acks():
    c = Cursor()
    assert c.ack(1) and not c.ack(1)  # PLS-ACK-004: second ack is a no-op
    assert c.mark_delete == -1 and c.first_unacked() == 0
    assert c.ack(0) and c.mark_delete == 1  # holes close: mark-delete moves
    c.ack(3)
    assert c.first_unacked() == 2 and c.first_unacked(3) == 4
    assert sum(not c.is_acked(p) for p in range(6)) == 3
    assert c.ack_cumulative(4) == 2 and c.mark_delete == 4  # PLS-ACK-002: 2 and 4 newly acked
    assert c.ack_cumulative(2) == 0
    c.reset(1)
    assert c.mark_delete == 0 and sum(not c.is_acked(p) for p in range(6)) == 5 and not c.is_acked(3)


def test_cumulative_ack_on_exclusive():
    # PLS-ACK-002 / PLS-BACKLOG-001
    h = run(sub("c1"), P, send("m0"), send("m1"), send("m2"), recv("c1"), recv("c1"),
            ("ack_cumulative", {"consumer": "c1", "message": "m1"}), ("stats", {"topic": "t", "subscription": "s"}),
            ("redeliver_unacked", {"consumer": "c1"}), recv("c1"), recv("c1"))
    assert h.events[8].outcome.value == {"backlog": 1}
    assert labels(h) == ["m0", "m1", "m2", None]


# ---------------------------------------------------------------- PLS-SEEK-001..003


def test_seek_by_id_time_earliest_latest():
    # PLS-SEEK-001 (skips the message unless inclusive), PLS-SEEK-002, PLS-SEEK-003
    base = [sub("c1"), P, send("m0"), send("m1"), send("m2"), recv("c1"), recv("c1"), recv("c1"),
            ("ack_cumulative", {"consumer": "c1", "message": "m2"})]
    h = run(*base, ("seek", {"consumer": "c1", "message": "m0"}), recv("c1"), recv("c1"), recv("c1"))
    assert labels(h)[3:] == ["m1", "m2", None]
    h = run(*base, ("seek", {"consumer": "c1", "position": "earliest"}), recv("c1"))
    assert labels(h)[3:] == ["m0"]
    h = run(*base, ("seek", {"consumer": "c1", "position": "latest"}), recv("c1", 10))
    assert labels(h)[3:] == [None]
    # all three sends share publish time 0 in virtual time, so the first with time >= is m0
    h = run(*base, ("seek", {"consumer": "c1", "publish_time_of": "m2"}), recv("c1"))
    assert labels(h)[3:] == ["m0"]
    h = run(*base[:-1], ("advance_time", {"ms": 5}), send("m3"), recv("c1"),
            ("seek", {"consumer": "c1", "publish_time_of": "m3"}), recv("c1"))
    assert labels(h)[-1] == "m3"


def test_seek_inclusive():
    h = run(sub("c1", start_message_id_inclusive=True), P, send("m0"), send("m1"), recv("c1"),
            ("seek", {"consumer": "c1", "message": "m0"}), recv("c1"))
    assert labels(h) == ["m0", "m0"]


# ---------------------------------------------------------------- PLS-SEEK-001 (Java: exclusive, as C++)


@pytest.mark.parametrize(("label", "ok"), [("m2", False), ("m3", True), ("m1", False)])
def test_java_seek_by_id_skips_the_seek_message(label, ok):
    history = java_history("seek-by-id-java")
    mutated = received(history, 15, label)
    assert check(mutated).ok is ok, check(mutated).summary()


def test_java_seek_inclusive_consumer_must_get_the_seek_message():
    history = java_history("seek-by-id-java")
    assert failures(received(history, 16, "m3"))
