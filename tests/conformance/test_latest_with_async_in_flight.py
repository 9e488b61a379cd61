"""PLS-SUB-002 with async sends in flight (``reference_model.maybe_absent``): a subscription created at Latest while one
producer's async sends are on their way gets a suffix of them, those the broker stored after it made the cursor.

Found live: python campaign on partitioned batched traffic (issue 46, 5 Dec 2026, 4.0.8, 2 runs in 3): an async 5 MB
send to a one-partition topic, a Latest subscribe, and the message delivered (regression
pls-sub-002-wrong-value-9081259b6869; the model had taken it as before the cursor and FAILed a correct broker).

Each history is the model's own with its receipts altered: what the rule allows passes, what it forbids fails.
"""

from __future__ import annotations

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome, make_trace

TOPIC = ("create_topic", {"topic": "t", "partitions": 1})
PRODUCER = ("create_producer", {"producer": "p", "topic": "t"})
SUBSCRIBE = ("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Exclusive"})


def _async(label: str):
    return ("send", {"producer": "p", "payload": label, "async": True})


def _receive(timeout_ms: int = 500):
    return ("receive", {"consumer": "c", "timeout_ms": timeout_ms})


def model_history(*ops) -> History:
    history = ModelTarget().run(make_trace("latest-in-flight", [TOPIC, PRODUCER, *ops]))
    assert all(e.outcome.status == "ok" for e in history.events), [(e.op.op, e.outcome.status) for e in history.events]
    return history


def _sent_message(history: History, label: str) -> dict:
    """``label`` as a consumer would receive it: a receipt of the model's history if it has one, else built from
    one (same fields) with the send's id."""
    for e in history.events:
        m = (e.outcome.value or {}).get("message") if e.op.op == "receive" else None
        if m and m["payload"] == label:
            return dict(m)
    some = next(((e.outcome.value or {})["message"] for e in history.events
                 if e.op.op == "receive" and (e.outcome.value or {}).get("message")),
                {"topic": "t-partition-0", "key": None, "ordering_key": None, "properties": {}, "event_time": 0,
                 "publish_time": 0, "redelivery_count": 0, "producer_name": "model-0"})
    flush_ids = {k: v for e in history.events if e.op.op == "flush" for k, v in e.outcome.value["message_ids"].items()}
    sent = next(e for e in history.events if e.op.op == "send" and e.op.args["payload"] == label)
    mid = flush_ids.get(label) or sent.outcome.value["message_id"]
    return {**some, "payload": label, "message_id": list(mid)}


def receipts(history: History, got: list[str | None]) -> History:
    """``history`` whose receives (in order) got the labels of ``got`` (None: nothing, after the whole timeout);
    each op after starts when the one before ended."""
    receives = [e.step for e in history.events if e.op.op == "receive"]
    assert len(receives) == len(got)
    by_step = dict(zip(receives, got))
    messages = {label: _sent_message(history, label) for label in got if label is not None}
    events, clock = [], 0.0
    for e in history.events:
        start = max(e.t_start_ms, clock)
        end = start + (e.t_end_ms - e.t_start_ms)
        outcome = e.outcome
        if e.step in by_step:
            label = by_step[e.step]
            outcome = Outcome.ok({"message": messages[label] if label is not None else None})
            end = start + (1.0 if label is not None else e.op.args["timeout_ms"])
        events.append(Event(e.op, outcome, start, end))
        clock = end
    return History(history.header, tuple(events))


def failures(history: History) -> set[str]:
    return {v.rule_id for v in check(history).failures()}


def test_the_message_in_flight_may_be_in_the_subscription_or_not():
    h = model_history(_async("m1"), SUBSCRIBE, _receive(), _receive())
    assert not failures(h)
    assert not failures(receipts(h, ["m1", None]))  # stored after the cursor was made
    assert not failures(receipts(h, [None, None]))  # stored before it: never in the subscription


def test_absent_once_a_receive_waited_past_it_so_it_cannot_come_later():
    h = model_history(_async("m1"), SUBSCRIBE, _receive(), _receive())
    assert failures(receipts(h, [None, "m1"]))


def test_a_suffix_of_the_producers_run_is_in_the_subscription():
    h = model_history(_async("m1"), _async("m2"), SUBSCRIBE, _receive(), _receive(), _receive())
    assert not failures(receipts(h, ["m2", None, None]))  # m1 stored before the cursor, m2 after
    assert not failures(receipts(h, ["m1", "m2", None]))
    # m2 came first, so m1 was before the cursor (one producer, stored in order): it cannot come after
    assert failures(receipts(h, ["m2", "m1", None]))
    # m1 came, so m2 (stored after it) is in the subscription too: it is owed
    assert "PLS-EXCL-002" in failures(receipts(h, ["m1", None, None]))


def test_a_later_send_of_the_same_producer_shows_the_earlier_ones_absent():
    h = model_history(_async("m1"), SUBSCRIBE, ("send", {"producer": "p", "payload": "m3"}), _receive(), _receive())
    assert not failures(receipts(h, ["m3", None]))
    assert not failures(receipts(h, ["m1", "m3"]))
    assert failures(receipts(h, ["m3", "m1"]))


def test_after_a_flush_the_message_is_surely_before_the_cursor():
    h = model_history(_async("m1"), ("flush", {"producer": "p"}), SUBSCRIBE, _receive())
    assert not failures(h)
    assert "PLS-SUB-002" in failures(receipts(h, ["m1"]))


def test_the_backlog_may_count_it_or_not():
    stats = ("stats", {"topic": "t", "subscription": "s"})
    h = model_history(_async("m1"), SUBSCRIBE, stats)
    step = next(e.step for e in h.events if e.op.op == "stats")
    for backlog, allowed in ((0, True), (1, True), (2, False)):
        events = tuple(Event(e.op, Outcome.ok({"backlog": backlog}), e.t_start_ms, e.t_end_ms) if e.step == step else e
                       for e in h.events)
        assert (not failures(History(h.header, events))) is allowed, backlog


def test_a_later_message_of_another_producer_stored_after_it_shows_it_absent():
    # live 4.0.8, Go campaign (regression pls-excl-002-order-violation-e67c63281433): p's async m1 in flight at the
    # Latest subscribe, then q's m3 stored after it (entry 1) came first; an Exclusive consumer gets its messages in
    # store order, so m1 (entry 0) was before the cursor
    q = ("create_producer", {"producer": "q", "topic": "t"})
    h = model_history(_async("m1"), SUBSCRIBE, q, ("send", {"producer": "q", "payload": "m3"}), _receive(), _receive())
    assert not failures(receipts(h, ["m3", None]))
    assert not failures(receipts(h, ["m1", "m3"]))
    assert failures(receipts(h, ["m3", "m1"]))
