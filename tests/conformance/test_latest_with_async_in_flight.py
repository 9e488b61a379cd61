"""PLS-SUB-002 with async sends in flight: a subscription created at Latest while a producer's async sends are on
their way holds those the broker stored after it made the cursor. Which ones is the broker's choice, out of the
history's sight, so the checker follows what the subscription's consumers received (``later_receipts``;
``FeatureOps.latest_start_in_flight``): a send they received is after the cursor, and with it every later send of
its producer and every send whose id is above it. Where the ids show another store order than the model's (another
producer's later message stored ahead of the in-flight one: live 4.0.8, python campaign of 5 Dec 2026, p1's 5 MB m1
in flight at c2's Latest subscribe, c2 got p2's m2..m4 and then m1) the subscribe is not followed.

The live histories that taught it are judged here without a FAIL, and each lie about it FAILs.
"""

from __future__ import annotations

from dataclasses import replace
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


def test_on_the_model_an_in_flight_send_is_before_the_cursor():
    h = model_history(ASYNC_M1, SUBSCRIBE, RECEIVE)
    assert all(e.outcome.status == "ok" for e in h.events)
    assert h.events[-1].outcome.value == {"message": None}, "the model stored m1 at once: before the cursor"
    report = check(h)
    assert not report.failures() and not report.not_followed


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
    assert not any("created at Latest" in nf.reason for nf in report.not_followed), "followed now"


# --------------------------------------------------------------- hand-made histories: the broker's ids written by hand

P2 = ("create_producer", {"producer": "p2", "topic": "t"})


def _msg(label: str, entry: int, producer_name: str) -> dict:
    return {"payload": label, "message_id": [7, entry, 0, -1], "topic": "t-partition-0", "key": None,
            "ordering_key": None, "properties": {}, "event_time": 0, "publish_time": 0, "redelivery_count": 0,
            "producer_name": producer_name}


def broker_history(ops, receipts, send_ids, backlog=None):
    """The model's history of ``ops`` with what a broker reported instead: ``receipts`` (label, entry) for the
    receives in order (None: nothing came), ``send_ids`` label -> entry for sync sends and flushes, ``backlog`` for
    a stats op."""
    h = model_history(*ops)
    names = {e.op.args["producer"]: e.outcome.value["producer_name"] for e in h.events if e.op.op == "create_producer"}
    owner = {e.op.args["payload"]: names[e.op.args["producer"]] for e in h.events if e.op.op == "send"}
    got = iter(receipts)
    events = []
    for e in h.events:
        if e.op.op == "receive":
            r = next(got)
            e = Event(e.op, Outcome.ok({"message": None if r is None else _msg(r[0], r[1], owner[r[0]])}),
                      e.t_start_ms, e.t_end_ms)
        elif e.op.op == "send" and not e.op.args.get("async"):
            mid = [7, send_ids[e.op.args["payload"]], 0, -1]
            e = Event(e.op, Outcome.ok({**e.outcome.value, "message_id": mid}), e.t_start_ms, e.t_end_ms)
        elif e.op.op == "flush":
            ids = {label: [7, entry, 0, -1] for label, entry in send_ids.items()
                   if owner.get(label) == names[e.op.args["producer"]]}
            e = Event(e.op, Outcome.ok({"message_ids": ids}), e.t_start_ms, e.t_end_ms)
        elif e.op.op == "stats" and backlog is not None:
            e = Event(e.op, Outcome.ok({**(e.outcome.value or {}), "backlog": backlog}), e.t_start_ms, e.t_end_ms)
        events.append(e)
    return History(replace(h.header, target="embedded"), tuple(events))  # a broker's answers


def test_an_in_flight_send_the_subscription_received_is_after_its_cursor():
    # m1 in flight at the subscribe; the broker stored it after the cursor, then p2's m2
    h = broker_history([P2, ASYNC_M1, SUBSCRIBE, ("send", {"producer": "p2", "payload": "m2"}), RECEIVE, RECEIVE],
                       [("m1", 0), ("m2", 1)], {"m2": 1})
    report = check(h)
    assert not report.failures(), report.summary()
    assert not report.not_followed


def test_a_message_stored_before_the_cursor_is_still_refused_beside_an_in_flight_one():
    # m0 was sent and stored (its send returned) before the subscribe; m1 was in flight. The broker gave c both: m0
    # cannot be after a cursor made once its send had returned (PLS-SUB-002)
    m0 = ("send", {"producer": "p2", "payload": "m0"})
    h = broker_history([P2, ASYNC_M1, m0, SUBSCRIBE, RECEIVE, RECEIVE], [("m1", 0), ("m0", 1)], {"m0": 1})
    assert "PLS-SUB-002" in {v.rule_id for v in check(h).failures()}


def test_the_later_in_flight_sends_of_its_producer_are_owed_too():
    # m1 and m2 of p in flight; c got m1, so the cursor is before m1, and m2 (stored after m1) is the subscription's:
    # a broker that never gives it lost it
    m2 = ("send", {"producer": "p", "payload": "m2", "async": True})
    late = ("receive", {"consumer": "c", "timeout_ms": 2000})
    h = broker_history([ASYNC_M1, m2, SUBSCRIBE, RECEIVE, ("advance_time", {"ms": 3000}), late],
                       [("m1", 0), None], {})
    assert check(h).failures(), "m2 is owed to c"
    ok = broker_history([ASYNC_M1, m2, SUBSCRIBE, RECEIVE, late], [("m1", 0), ("m2", 1)], {})
    assert not check(ok).failures()


def test_ids_in_another_order_than_the_sends_are_not_followed():
    # fz-d53f54edbda3's shape: p's m1 in flight at the subscribe, p2's later m2..m4 stored ahead of it (their ids
    # are below m1's), c got m2..m4 and then m1: correct, and not the model's store order, so not followed
    sends = [("send", {"producer": "p2", "payload": f"m{i}"}) for i in (2, 3, 4)]
    h = broker_history([P2, ASYNC_M1, SUBSCRIBE, *sends, RECEIVE, RECEIVE, RECEIVE, RECEIVE],
                       [("m2", 0), ("m3", 1), ("m4", 2), ("m1", 3)], {"m2": 0, "m3": 1, "m4": 2})
    report = check(h)
    assert not report.failures(), report.summary()
    assert any("stored ahead of one of them" in nf.reason for nf in report.not_followed), report.not_followed


def test_a_later_send_whose_id_is_above_a_received_one_is_owed():
    # m1 (p) and n1 (q) in flight; an Earliest subscription shows n1 stored after m1 (its id is above), and c got m1:
    # the cursor is before m1, so n1 is c's too, and a broker that never gives it lost it
    q = ("create_producer", {"producer": "q", "topic": "t"})
    early = ("subscribe", {"consumer": "e", "topic": "t", "subscription": "all", "type": "Exclusive",
                           "initial_position": "Earliest"})
    n1 = ("send", {"producer": "q", "payload": "n1", "async": True})
    late = ("receive", {"consumer": "c", "timeout_ms": 2000})
    ops = [q, early, ASYNC_M1, n1, SUBSCRIBE, ("receive", {"consumer": "e", "timeout_ms": 500}),
           ("receive", {"consumer": "e", "timeout_ms": 500}), RECEIVE, ("advance_time", {"ms": 3000}), late]
    lost = broker_history(ops, [("m1", 0), ("n1", 1), ("m1", 0), None], {})
    assert check(lost).failures(), "n1 is owed to c"
    given = broker_history(ops, [("m1", 0), ("n1", 1), ("m1", 0), ("n1", 1)], {})
    assert not check(given).failures() and not check(given).not_followed


def test_the_backlog_counts_a_send_a_flush_shows_after_a_received_one():
    # m1 and n1 in flight, both after the cursor: c got m1, and n1's flush id is above m1's (review of 6 Dec 2026)
    q = ("create_producer", {"producer": "q", "topic": "t"})
    ops = [q, ASYNC_M1, ("send", {"producer": "q", "payload": "n1", "async": True}), SUBSCRIBE,
           ("flush", {"producer": "p"}), ("flush", {"producer": "q"}), RECEIVE,
           ("stats", {"topic": "t", "subscription": "s"})]
    h = broker_history(ops, [("m1", 0)], {"m1": 0, "n1": 1}, backlog=2)
    report = check(h)
    assert not report.failures(), report.summary()


@pytest.mark.parametrize("between", [
    [("skip", {"topic": "t", "subscription": "s", "count": 1})],  # moves the cursor on: the look ahead goes on
    [("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Shared"}),
     ("unsubscribe", {"consumer": "c2"})],  # refused (another consumer is connected): changes nothing
])
def test_what_does_not_move_the_cursor_back_keeps_the_look_ahead(between):
    # review of 6 Dec 2026: both once ended the look ahead early, and m2 then counted as stored before the cursor
    shared = ("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Shared"})
    m2 = ("send", {"producer": "p", "payload": "m2", "async": True})
    h = broker_history([ASYNC_M1, m2, shared, ("flush", {"producer": "p"}), *between, RECEIVE],
                       [("m2", 1)], {"m1": 0, "m2": 1})
    report = check(h)
    assert not report.failures(), report.summary()


def test_a_consumer_of_a_topic_list_that_joins_the_subscription_is_followed():
    # c1 makes (t, s) at Latest while m1 is in flight and leaves; c2 joins with a topic list and gets m1
    shared = ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared"})
    joins = ("subscribe", {"consumer": "c", "topics": ["t"], "subscription": "s", "type": "Shared"})
    h = broker_history([ASYNC_M1, shared, ("close", {"handle": "c1"}), joins, RECEIVE], [("m1", 0)], {})
    report = check(h)
    assert not report.failures(), report.summary()
    assert not report.not_followed


def test_a_reader_at_latest_with_a_send_in_flight_is_not_followed():
    # a partitioned reader's subscription gets no look ahead: which sends it holds is not judged
    reader = ("create_reader", {"reader": "r", "topic": "t", "start": "latest"})
    h = broker_history([ASYNC_M1, reader, ("flush", {"producer": "p"}), ("read_next", {"reader": "r", "timeout_ms": 500})],
                       [], {"m1": 0})
    events = tuple(Event(e.op, Outcome.ok({"message": _msg("m1", 0, h.events[1].outcome.value["producer_name"])}),
                         e.t_start_ms, e.t_end_ms) if e.op.op == "read_next" else e for e in h.events)
    report = check(History(h.header, events))
    assert not report.failures(), report.summary()
    assert any("look ahead does not follow" in nf.reason for nf in report.not_followed)


# --------------------------------------------------------------- the second review's histories (6 Dec 2026)

def judged(ops, receipts, ids, status=None, backlog=None):
    """``check`` of the model's history of ``ops`` (topic t, not partitioned) with a broker's answers written in:
    ``receipts`` (label, entry, topic) or None per receive, ``ids`` label -> entry for sync sends and flushes,
    ``status`` op index -> Outcome, ``backlog`` for a stats op."""
    h = ModelTarget().run(make_trace("review", ops))
    names = {e.op.args["producer"]: e.outcome.value["producer_name"] for e in h.events
             if e.op.op == "create_producer" and e.outcome.status == "ok"}
    owner = {e.op.args["payload"]: names.get(e.op.args["producer"]) for e in h.events if e.op.op == "send"}
    got, events = iter(receipts), []
    for i, e in enumerate(h.events):
        out = e.outcome
        if i in (status or {}):
            out = status[i]
        elif e.op.op == "receive":
            r = next(got)
            out = Outcome.ok({"message": None if r is None else {**_msg(r[0], r[1], owner[r[0]]), "topic": r[2],
                                                               "message_id": [7, r[1], -1, -1]}})
        elif e.op.op == "send" and not e.op.args.get("async") and out.status == "ok":
            out = Outcome.ok({**out.value, "message_id": [7, ids[e.op.args["payload"]], -1, -1]})
        elif e.op.op == "flush":
            mine = {k: [7, v, -1, -1] for k, v in ids.items() if owner.get(k) == names[e.op.args["producer"]]}
            out = Outcome.ok({"message_ids": mine})
        elif e.op.op == "stats" and backlog is not None:
            out = Outcome.ok({**(out.value or {}), "backlog": backlog})
        events.append(Event(e.op, out, e.t_start_ms, e.t_end_ms))
    return check(History(replace(h.header, target="embedded"), tuple(events)))  # a broker's answers


T, P = ("create_topic", {"topic": "t"}), ("create_producer", {"producer": "p", "topic": "t"})
M1 = ("send", {"producer": "p", "payload": "m1", "async": True})
FLUSH = ("flush", {"producer": "p"})
GET = ("receive", {"consumer": "c", "timeout_ms": 500})


def test_a_pattern_consumer_of_the_subscription_makes_the_look_ahead_unknown():
    ops = [T, ("create_topic", {"topic": "u"}), P,
           ("subscribe", {"consumer": "pc", "topics_pattern": "u", "subscription": "s", "type": "Shared"}), M1,
           ("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Shared"}),
           ("close", {"handle": "pc"}), FLUSH, GET]
    report = judged(ops, [("m1", 0, "t")], {"m1": 0})
    assert not report.failures(), report.summary()


def test_a_non_durable_look_ahead_ends_only_when_its_last_consumer_leaves():
    nd = {"client": "java", "subscription_mode": "NonDurable", "type": "Shared", "topic": "t", "subscription": "s"}
    ops = [T, P, ("subscribe", {"consumer": "c1", **nd}), ("unsubscribe", {"consumer": "c1"}), M1,
           ("subscribe", {"consumer": "c2", **nd}), ("advance_time", {"ms": 3000}),
           ("receive", {"consumer": "c2", "timeout_ms": 2000}), ("close", {"handle": "c2"}),
           ("subscribe", {"consumer": "c3", **nd}), ("receive", {"consumer": "c3", "timeout_ms": 2000}), FLUSH]
    report = judged(ops, [None, ("m1", 0, "t")], {"m1": 0})
    assert not report.failures(), report.summary()


def test_a_subscribe_of_unknown_outcome_leaves_the_subscription_unjudged():
    shared = {"topic": "t", "subscription": "s", "type": "Shared"}
    ops = [T, P, M1, ("subscribe", {"consumer": "c1", **shared}), ("send", {"producer": "p", "payload": "m2"}), FLUSH,
           ("subscribe", {"consumer": "c", **shared}), GET]
    report = judged(ops, [("m2", 1, "t")], {"m1": 0, "m2": 1}, status={3: Outcome.indeterminate("timed out")})
    assert not report.failures(), report.summary()


def test_a_retry_enabled_subscribe_with_a_send_in_flight_on_its_retry_topic_is_not_followed():
    ops = [T, ("create_topic", {"topic": "t-s-RETRY"}), ("create_producer", {"producer": "q", "topic": "t-s-RETRY"}),
           ("send", {"producer": "q", "payload": "r1", "async": True}),
           ("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Shared", "enable_retry": True,
                          "client": "java"}), ("flush", {"producer": "q"}), GET]
    report = judged(ops, [("r1", 0, "t-s-RETRY")], {"r1": 0})
    assert not report.failures(), report.summary()


def test_a_skip_past_an_unsure_send_is_not_followed_and_a_clear_backlog_ends_the_doubt():
    ops = [T, P, ("create_producer", {"producer": "p2", "topic": "t"}), M1,
           ("create_subscription", {"topic": "t", "subscription": "s"}), ("send", {"producer": "p2", "payload": "m2"}),
           FLUSH, ("skip", {"topic": "t", "subscription": "s", "count": 1}),
           ("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Exclusive"}), GET]
    report = judged(ops, [("m2", 1, "t")], {"m1": 0, "m2": 1})
    assert not report.failures(), report.summary()
    assert any("a skip of a subscription made at Latest" in nf.reason for nf in report.not_followed)
    cleared = [T, P, M1, ("send", {"producer": "p", "payload": "m2", "async": True}),
               ("create_subscription", {"topic": "t", "subscription": "s"}), FLUSH,
               ("clear_backlog", {"topic": "t", "subscription": "s"}), ("stats", {"topic": "t", "subscription": "s"})]
    assert not judged(cleared, [], {"m1": 0, "m2": 1}, backlog=0).failures()
    assert judged(cleared, [], {"m1": 0, "m2": 1}, backlog=1).failures(), "nothing is left after a clear_backlog"
