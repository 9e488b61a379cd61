"""Model/checker disagreements the generated traces of issue 16 found once they drew every feature.

Each test is the shrunk trace a model campaign (``fuzz --target model``, seeds 0-8, 2026-11-26)
reported: the model's own history FAILed in the checker. Each FAILs without the fix it names and
must PASS (or, where the model now says it does not follow the op, be not modelled) with it.
"""

from __future__ import annotations

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import make_trace

MAX = 5_242_880  # the broker's default maxMessageSize


def _judged(ops, trace_id="generated-finding"):
    history = ModelTarget().run(make_trace(trace_id, ops))
    return history, check(history)


def test_an_oversize_send_on_a_partitioned_topic_is_refused_before_it_is_routed():
    """Found as PLS-PROD-001 unexpected-rejection: the model checked the size of a send on a
    partitioned topic only after the decision point, so the checker's replay expected the send to
    succeed while the model's own history said MessageTooBig. Every partition's producer makes the
    same check (PLS-CHUNK-003), so the refusal is decided before routing."""
    history, report = _judged([
        ("create_topic", {"topic": "u", "partitions": 2}),
        ("create_producer", {"producer": "p1", "topic": "u"}),
        ("send", {"producer": "p1", "payload": "m1", "payload_size": MAX + 1}),
        ("send", {"producer": "p1", "payload": "m2"}),
    ])
    assert [(e.outcome.status, e.outcome.error) for e in history.events][2:] == [("rejected", "MessageTooBig"), ("ok", None)]
    assert not report.failures(), report.failures()


def test_a_flush_on_a_non_persistent_topic_claims_no_entry_layout():
    """Found as PLS-BATCH-001 / PLS-BATCH-007 / PLS-DELAY-006 wrong-value: every non-persistent
    message has the same id (PLS-NP-003), so the flush's planned entry offsets read as one batch.
    The model no longer plans an entry layout for a non-persistent topic's flush."""
    for producer in ({"batching": True, "batching_max_delay_ms": 100}, {}, {"chunking": True}):
        _, report = _judged([
            ("create_producer", {"producer": "p1", "topic": "non-persistent://n", **producer}),
            ("send", {"producer": "p1", "payload": "m1", "async": True, "deliver_at_ms": 1763}),
            ("send", {"producer": "p1", "payload": "m2", "async": True}),
            ("flush", {"producer": "p1"}),
        ])
        assert not report.failures(), (producer, report.failures())


def _redeliver_twice(dead_letter):
    return [
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Key_Shared", "dead_letter": dead_letter}),
        ("create_producer", {"producer": "p1", "topic": "t"}),
        ("send", {"producer": "p1", "payload": "m3"}),
        ("receive", {"consumer": "c1", "timeout_ms": 200}),
        ("redeliver_unacked", {"consumer": "c1"}),
        ("receive", {"consumer": "c1", "timeout_ms": 200}),
        ("redeliver_unacked", {"consumer": "c1"}),
        ("receive", {"consumer": "c1", "timeout_ms": 200}),
    ]


def test_a_redeliver_all_past_the_dead_letter_limit_is_not_followed():
    """Found as PLS-DLQ-002 wrong-redelivery-count: with max_redeliver_count 1, the model handed
    m3 to the application a third time (count 2) after two redeliver_unacked. Both clients send a
    delivery whose count is above the limit to the dead-letter topic as it arrives (C++
    ``ConsumerImpl::messageReceived``); the model does not follow that yet, and says so."""
    history, report = _judged(_redeliver_twice({"max_redeliver_count": 1}))
    assert any("redeliver_unacked not modelled (redeliver_unacked that takes a message past max_redeliver_count"
               in n for n in report.notes), report.notes
    assert not report.failures(), report.failures()
    # within the limit (count 2 with max_redeliver_count 2) the model follows it and delivers m3 again
    history, report = _judged(_redeliver_twice({"max_redeliver_count": 2}))
    assert history.events[-1].outcome.value["message"]["redelivery_count"] == 2
    assert not report.failures(), report.failures()


def test_consumers_with_different_dead_letter_limits_on_one_subscription_are_not_followed():
    """Found as PLS-DLQ-002 wrong-redelivery-count: m5, nacked twice by a consumer without a
    policy, went to a consumer with max_redeliver_count 1 with count 2; that client would have
    dead-lettered it. The model keeps one limit per Shared / Key_Shared subscription."""
    history, report = _judged([
        ("create_producer", {"producer": "p1", "topic": "u"}),
        ("subscribe", {"consumer": "c2", "topic": "u", "subscription": "s1", "type": "Shared", "nack_delay_ms": 150}),
        ("send", {"producer": "p1", "payload": "m5"}),
        ("receive", {"consumer": "c2", "timeout_ms": 200}),
        ("nack", {"consumer": "c2", "message": "m5"}),
        ("receive", {"consumer": "c2", "timeout_ms": 300}),
        ("nack", {"consumer": "c2", "message": "m5"}),
        ("subscribe", {"consumer": "c4", "topic": "u", "subscription": "s1", "type": "Shared", "nack_delay_ms": 125,
                       "dead_letter": {"max_redeliver_count": 1}}),
        ("receive", {"consumer": "c4", "timeout_ms": 400}),
    ])
    assert any("consumers with different dead-letter limits" in n for n in report.notes), report.notes
    assert not report.failures(), report.failures()
    # the same limit on every consumer is followed
    _, report = _judged([
        ("subscribe", {"consumer": "c1", "topic": "u", "subscription": "s1", "type": "Shared", "dead_letter": {"max_redeliver_count": 1}}),
        ("subscribe", {"consumer": "c2", "topic": "u", "subscription": "s1", "type": "Shared", "dead_letter": {"max_redeliver_count": 1}}),
    ])
    assert not any("dead-letter limits" in n for n in report.notes), report.notes
