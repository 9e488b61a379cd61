"""PLS-SUB-002 with async sends in flight: a subscription created at Latest while a producer's async sends are on
their way is not followed (``FeatureOps.check_no_async_in_flight``), on a partition as on a topic.

Which of those sends the broker stored before it made the cursor is out of the history's sight. For one producer
they are a prefix of its sends, but another producer's later messages may be stored before them, and nothing shows
that order: live 4.0.8, python campaign of 5 Dec 2026, p1's async m1 in flight at c2's Latest subscribe, p2's batch
stored before m1, and c2 got m2..m4 and then m1. A first model of the prefix (this day) FAILed that correct broker,
so the subscribe is refused again; the histories that taught it are judged here without a FAIL.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome, load, make_trace

ROOT = Path(__file__).resolve().parents[2]
TOPIC = ("create_topic", {"topic": "t", "partitions": 1})
PRODUCER = ("create_producer", {"producer": "p", "topic": "t"})
SUBSCRIBE = ("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Exclusive"})
ASYNC_M1 = ("send", {"producer": "p", "payload": "m1", "async": True})
RECEIVE = ("receive", {"consumer": "c", "timeout_ms": 500})


def model_history(*ops) -> History:
    return ModelTarget().run(make_trace("latest-in-flight", [TOPIC, PRODUCER, *ops]))


def test_the_model_does_not_follow_a_latest_subscribe_while_a_send_is_in_flight():
    h = model_history(ASYNC_M1, SUBSCRIBE, RECEIVE)
    assert [e.outcome.status for e in h.events if e.op.op == "subscribe"] == ["indeterminate"]
    report = check(h)
    assert not report.failures()


def test_after_a_flush_the_message_is_surely_before_the_cursor():
    h = model_history(ASYNC_M1, ("flush", {"producer": "p"}), SUBSCRIBE, RECEIVE)
    assert all(e.outcome.status == "ok" for e in h.events)
    m1 = {"payload": "m1", "message_id": [*h.events[3].outcome.value["message_ids"]["m1"]], "topic": "t-partition-0",
          "key": None, "ordering_key": None, "properties": {}, "event_time": 0, "publish_time": 0, "redelivery_count": 0,
          "producer_name": "model-0"}
    events = tuple(Event(e.op, Outcome.ok({"message": m1}), e.t_start_ms, e.t_end_ms) if e.op.op == "receive" else e
                   for e in h.events)
    assert "PLS-SUB-002" in {v.rule_id for v in check(History(h.header, events)).failures()}


@pytest.mark.parametrize("path", [
    "conformance/regressions/pls-sub-002-wrong-value-9081259b6869.history.jsonl",  # python: m1 came after all
    "conformance/regressions/pls-excl-002-order-violation-e67c63281433.history.jsonl",  # go: another's m3 first
    "tests/conformance/live_histories/live-latest-subscribe-with-async-in-flight-failover.jsonl",  # m10 after 1 s
])
def test_the_live_histories_are_not_failed(path):
    report = check(load(ROOT / path))
    assert not report.failures(), report.summary()
    assert any("created at Latest" in nf.reason for nf in report.not_followed)
