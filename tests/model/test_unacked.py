"""Chapter unacked.py: the per-consumer unacked limit and count (PLS-UNACKED-001/002/003)."""

from __future__ import annotations

from reference_model import unacked
from tests.model.broker_trace_helpers import labels, run


# ---------------------------------------------------------------- PLS-UNACKED-001


def test_limit_blocks_at_the_limit_and_unblocks_at_half():
    assert not unacked.blocks(5, 0)  # 0: no limit
    assert unacked.blocks(1, 1) and not unacked.blocks(0, 1)
    assert unacked.unblocks(0, 1) and not unacked.unblocks(1, 1)
    assert unacked.unblocks(2, 5) and not unacked.unblocks(3, 5)


def test_a_consumer_at_its_limit_gets_the_next_message_only_after_its_ack():
    h = run(
        ("set_policy", {"max_unacked_messages_per_consumer": 1}),
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "c1"}),
        ("create_producer", {"producer": "p1", "topic": "t"}),
        ("send", {"producer": "p1", "payload": "m0"}),
        ("send", {"producer": "p1", "payload": "m1"}),
        ("receive", {"consumer": "c1", "timeout_ms": 100}),
        ("receive", {"consumer": "c1", "timeout_ms": 100}),  # blocked: nothing
        ("ack", {"consumer": "c1", "message": "m0"}),
        ("receive", {"consumer": "c1", "timeout_ms": 1000}),
    )
    assert labels(h) == ["m0", None, "m1"]


def test_a_non_durable_subscription_has_no_limit():
    # Consumer#getMaxUnackedMessages answers 0 unless the consumer is durable (live 4.0.8 and 4.2.4, Java, 6 Dec
    # 2026: regression pls-unacked-001-wrong-value-d010a708ddb1); the Java client's NonDurable subscription
    def with_mode(mode):
        return run(
            ("set_policy", {"max_unacked_messages_per_consumer": 1}),
            ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared", "client": "java",
                           "subscription_mode": mode}),
            ("create_producer", {"producer": "p1", "topic": "t"}),
            ("send", {"producer": "p1", "payload": "m0"}),
            ("send", {"producer": "p1", "payload": "m1"}),
            ("receive", {"consumer": "c1", "timeout_ms": 100}),
            ("receive", {"consumer": "c1", "timeout_ms": 100}),
        )
    assert labels(with_mode("NonDurable")) == ["m0", "m1"]
    assert labels(with_mode("Durable")) == ["m0", None]


# ---------------------------------------------------------------- PLS-UNACKED-002/003


def test_count_ranges():
    r = unacked.persistent_count(held=2, maybe_queued=3, acks_in_flight=1)
    assert (r.low, r.high, r.rule) == (2, 6, unacked.RULE_COUNT)
    n = unacked.non_persistent_count(0)
    assert (n.low, n.high, n.rule) == (0, 0, unacked.RULE_NON_PERSISTENT)


def test_expired_messages_leave_the_model_count():
    h = run(
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "c1"}),
        ("create_producer", {"producer": "p1", "topic": "t"}),
        ("send", {"producer": "p1", "payload": "m0"}),
        ("receive", {"consumer": "c1", "timeout_ms": 100}),
        ("stats", {"topic": "t", "subscription": "s"}),
        ("advance_time", {"ms": 1500}),
        ("expire_messages", {"topic": "t", "subscription": "s", "seconds": 1}),
        ("stats", {"topic": "t", "subscription": "s"}),
    )
    counts = [e.outcome.value["consumer_unacked"][0]["unacked_messages"] for e in h.events if e.op.op == "stats"]
    assert counts == [1, 0]
