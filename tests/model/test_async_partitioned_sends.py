"""Issue 46: async sends on a partitioned topic (no batching: the Python client's default).

The router picks a message's partition in the send call (Java PartitionedProducerImpl#internalSendAsync, C++
PartitionedProducerImpl::sendAsync, Go partitionedProducer.SendAsync), but an async send reports no id, so the
history shows the partition only later: in the flush's ids, or in the topic and id a consumer receives it with.
The model stores the message where that later op shows (``conformance.checker.later_partitions``) and judges that
partition against the router's allowed ones at the send (PLS-ROUTE-002: round robin from a random start, one
partition further per keyless message). A judged history that never shows the partition is not followed from that
send (``NotModelledError``, counted), never guessed.

The histories judged here are the model's own, with their partitions moved: a round robin that starts elsewhere
(allowed), and one that does not move on (a FAIL the router's rule must catch).
"""

from __future__ import annotations

from dataclasses import replace

from case_history_helpers import failures
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import History, Outcome, make_trace

TOPIC = ("create_topic", {"topic": "t", "partitions": 3})
CONSUMER = ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared"})
PRODUCER = ("create_producer", {"producer": "p", "topic": "t"})


def _async(label: str, **kw):
    return ("send", {"producer": "p", "payload": label, "async": True, **kw})


def _receive():
    return ("receive", {"consumer": "c1", "timeout_ms": 1000})


def _model_history(*ops) -> History:
    return ModelTarget().run(make_trace("async-partitioned", ops))


def _moved(history: History, where: dict[str, int]) -> History:
    """``history`` with each label in ``where`` on that partition instead: in the flush's ids and in what the
    consumer received (its topic, its id, and the name of that partition's producer, which the creation reported).
    The entry numbers stay the model's."""
    names = next((e.outcome.value.get("partition_producer_names") for e in history.events
                  if e.op.op == "create_producer" and e.outcome.status == "ok"), None)
    events = []
    for e in history.events:
        value = e.outcome.value
        if e.op.op == "flush" and e.outcome.status == "ok":
            ids = {k: [v[0], v[1], where.get(k, v[2]), v[3]] for k, v in value["message_ids"].items()}
            texts = {k: f"({v[0]},{v[1]},{v[2]},{v[3]})" for k, v in ids.items()}
            e = replace(e, outcome=Outcome.ok({**value, "message_ids": ids, "id_texts": texts}))
        elif e.op.op == "receive" and e.outcome.status == "ok" and value.get("message"):
            msg = dict(value["message"])
            if msg["payload"] in where:
                p = where[msg["payload"]]
                msg["topic"] = f"t-partition-{p}"
                msg["message_id"] = [msg["message_id"][0], msg["message_id"][1], p, msg["message_id"][3]]
                if names:
                    msg["producer_name"] = names[p]
            e = replace(e, outcome=Outcome.ok({**value, "message": msg}))
        events.append(e)
    return History(history.header, tuple(events))


def _partitions(history: History) -> dict[str, int]:
    flush = next(e for e in history.events if e.op.op == "flush")
    return {k: v[2] for k, v in flush.outcome.value["message_ids"].items()}


def test_the_model_follows_async_sends_and_its_flush_reports_them_round_robin():
    h = _model_history(TOPIC, CONSUMER, PRODUCER, _async("m1"), _async("m2"), _async("m3"),
                       ("flush", {"producer": "p"}), _receive(), _receive(), _receive())
    report = check(h)
    assert report.ok and not report.not_followed, report.summary()
    got = _partitions(h)
    assert sorted(got) == ["m1", "m2", "m3"]
    # PLS-ROUTE-002: one partition further per keyless message
    assert [(got[b] - got[a]) % 3 for a, b in (("m1", "m2"), ("m2", "m3"))] == [1, 1]
    assert {e.outcome.value["message"]["payload"] for e in h.events if e.op.op == "receive"} == {"m1", "m2", "m3"}
    routed = [v for v in report.verdicts if v.rule_id == "PLS-ROUTE-002"]
    assert [v.step for v in routed if v.status == "PASS"][:3] == [4, 5, 6]


def test_a_round_robin_from_another_start_passes_and_one_that_stays_put_fails():
    h = _model_history(TOPIC, CONSUMER, PRODUCER, _async("m1"), _async("m2"), _async("m3"),
                       ("flush", {"producer": "p"}), _receive(), _receive(), _receive())
    start_elsewhere = _moved(h, {"m1": 2, "m2": 0, "m3": 1})
    assert not failures(start_elsewhere), check(start_elsewhere).summary()
    stays = _moved(h, {"m1": 1, "m2": 1, "m3": 2})
    report = check(stays)
    assert ("PLS-ROUTE-002", "wrong-partition") in failures(report), report.summary()
    assert [v.step for v in report.failures() if v.rule_id == "PLS-ROUTE-002"] == [5]  # m2's send


def test_without_a_flush_the_receipts_show_the_partitions():
    h = _model_history(TOPIC, CONSUMER, PRODUCER, _async("m1"), _async("m2"), _receive(), _receive())
    assert not failures(h)
    moved = _moved(h, {"m1": 1, "m2": 2})
    assert not failures(moved), check(moved).summary()
    backwards = _moved(h, {"m1": 1, "m2": 0})  # round robin goes 1 -> 2, not back to 0
    assert ("PLS-ROUTE-002", "wrong-partition") in failures(backwards), check(backwards).summary()


def test_a_flush_whose_ids_break_the_order_or_share_an_entry_on_one_partition_fails():
    """The flush's ids are judged per partition (feature_state.relative_ids): two plain sends to one partition are
    two entries there, in send order (PLS-BATCH-007; how far apart is other writers' business), whatever the other
    partitions' ledgers are numbered."""
    h = _model_history(TOPIC, CONSUMER, PRODUCER, _async("m1"), _async("m2"), _async("m3"), _async("m4"),
                       ("flush", {"producer": "p"}))
    assert not failures(h)
    ids = next(e for e in h.events if e.op.op == "flush").outcome.value["message_ids"]
    assert ids["m1"][2] == ids["m4"][2] and ids["m4"][1] == ids["m1"][1] + 1  # round robin over 3: m4 joins m1
    flush_at = next(i for i, e in enumerate(h.events) if e.op.op == "flush")

    def reported(entry_of_m4: int) -> History:
        events = list(h.events)
        changed = {k: list(v) for k, v in ids.items()}
        changed["m4"][1] = entry_of_m4
        value = events[flush_at].outcome.value
        events[flush_at] = replace(events[flush_at], outcome=Outcome.ok({**value, "message_ids": changed}))
        return History(h.header, tuple(events))

    assert not failures(reported(ids["m1"][1] + 5))  # five entries of other writers between them: allowed
    assert ("PLS-BATCH-007", "wrong-value") in failures(reported(ids["m1"][1] - 1))  # before m1: out of send order
    assert ("PLS-BATCH-007", "wrong-value") in failures(reported(ids["m1"][1]))  # m1's entry: written as a batch


def _unshown(*ops) -> History:
    """The model's history of ``ops`` without its flushes, so that nothing shows where the async sends went."""
    h = _model_history(*ops)
    return History(h.header, tuple(e for e in h.events if e.op.op != "flush"))


def test_a_history_that_never_shows_the_partition_is_judged_and_says_what_it_did_not_judge():
    report = check(_unshown(TOPIC, CONSUMER, PRODUCER, _async("m1"), _async("m2"), ("flush", {"producer": "p"})))
    assert not report.failures() and not report.not_followed, report.not_followed
    assert [n for n in report.notes if "partition no flush or receipt shows" in n] == [
        "m1: an async send whose partition no flush or receipt shows; whether a consumer should have received it is "
        "not judged", "m2: an async send whose partition no flush or receipt shows; whether a consumer should have "
        "received it is not judged"]


def _without_m1(h: History) -> History:
    """``h`` where m1 never arrived and nothing shows its partition (no flush; its receipt becomes nothing)."""
    events, dropped = [], False
    for e in h.events:
        if e.op.op == "flush":
            continue
        if e.op.op == "receive" and (e.outcome.value.get("message") or {}).get("payload") == "m1":
            dropped = True
            e = replace(e, outcome=Outcome.ok({"message": None}))
        events.append(e)
    assert dropped
    return History(h.header, tuple(events))


def test_an_unshown_message_does_not_hold_back_the_partition_it_was_put_on():
    # m1's partition is never shown; m2..m4, sent alone, are received in order on every partition: wherever the model
    # put m1, the in-order consumer does not wait for it
    exclusive = ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Exclusive"})
    sends = [("send", {"producer": "p", "payload": f"m{i}"}) for i in (2, 3, 4)]
    receives = [("receive", {"consumer": "c1", "timeout_ms": 200}) for _ in range(4)]
    h = _model_history(TOPIC, exclusive, PRODUCER, _async("m1"), *sends, ("flush", {"producer": "p"}), *receives)
    got = [e.outcome.value["message"]["payload"] for e in h.events if e.op.op == "receive" and e.outcome.value["message"]]
    assert "m1" in got
    # m2..m4 are judged in order wherever m1 was put: only m1's own absence is charged (below), never their order
    report = check(_without_m1(h))
    assert not report.not_followed
    assert {v.anomaly for v in report.failures()} <= {"lost-message"}, report.summary()


def test_an_unshown_message_sent_alone_is_owed_to_the_one_consumer_of_every_partition():
    """The same consumer reads every partition, alone there, with nothing else pending: whichever partition the router
    gave m1 (sent alone, so written at its send), it is dispatched to c1 at once, so a history in which it never
    arrives loses it (``Broker._owed_on_every_partition``). Until 7 Dec 2026 such a message was owed nowhere."""
    h = _model_history(TOPIC, CONSUMER, PRODUCER, _async("m1"), _receive(), _receive())
    assert [(e.outcome.value.get("message") or {}).get("payload") for e in h.events if e.op.op == "receive"] == ["m1", None]
    assert "lost-message" in {v.anomaly for v in check(_without_m1(h)).failures()}


def test_an_unshown_message_is_owed_nowhere_when_its_partition_decides_who_reads_it():
    """Two consumers, one per partition of a two-partition topic (each subscribed to its partition): which of them
    m1 was owed to depends on the partition the router gave it, which nothing shows, so neither is charged."""
    two = ("create_topic", {"topic": "t", "partitions": 2})
    per_partition = [("subscribe", {"consumer": f"c{i + 1}", "topic": f"t-partition-{i}", "subscription": "s",
                                    "type": "Exclusive"}) for i in range(2)]
    receives = [("receive", {"consumer": c, "timeout_ms": 300}) for c in ("c1", "c2")]
    h = _model_history(two, *per_partition, PRODUCER, _async("m1"), *receives)
    assert "m1" in [(e.outcome.value.get("message") or {}).get("payload") for e in h.events if e.op.op == "receive"]
    report = check(_without_m1(h))
    assert not report.failures(), report.summary()


def test_a_partition_s_backlog_may_count_an_unshown_message_or_not():
    h = _unshown(TOPIC, CONSUMER, PRODUCER, _async("m1"), ("flush", {"producer": "p"}),
                 *[("stats", {"topic": f"t-partition-{i}", "subscription": "s"}) for i in range(3)],
                 ("stats", {"topic": "t", "subscription": "s"}))
    stats = [e.step for e in h.events if e.op.op == "stats"]

    def with_backlogs(values):
        events = tuple(replace(e, outcome=Outcome.ok({"backlog": values[stats.index(e.step)]})) if e.step in stats else e
                       for e in h.events)
        return check(History(h.header, events))

    for where in range(3):  # m1 on any partition: that one counts it, the others do not, the topic counts one
        values = [1 if i == where else 0 for i in range(3)] + [1]
        assert not with_backlogs(values).failures(), where
    assert with_backlogs([1, 1, 0, 2]).failures()  # counted twice
    assert with_backlogs([0, 0, 0, 2]).failures()  # the topic counts more than it holds


def test_an_unshown_message_is_owed_nowhere_once_another_consumer_may_have_taken_it():
    """As above, but a second consumer joins the Shared subscription after the send: the broker may have given m1 to it
    (it never receives in the history), so c1's empty receive loses nothing; a subscribe the broker refused changes
    nothing, and a consumer of another topic neither."""
    join = ("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Shared"})
    elsewhere = ("subscribe", {"consumer": "c3", "topic": "other", "subscription": "s", "type": "Shared"})
    h = _model_history(TOPIC, CONSUMER, PRODUCER, _async("m1"), join, _receive(), _receive())
    assert not check(_without_m1(h)).failures()
    h = _model_history(TOPIC, CONSUMER, PRODUCER, _async("m1"), elsewhere, _receive(), _receive())
    assert "lost-message" in {v.anomaly for v in check(_without_m1(h)).failures()}
    clash = ("subscribe", {"consumer": "c4", "topic": "t", "subscription": "s", "type": "Exclusive"})
    h = _model_history(TOPIC, CONSUMER, PRODUCER, _async("m1"), clash, _receive(), _receive())
    assert [e.outcome.status for e in h.events if e.op.op == "subscribe"][-1] == "rejected"
    assert "lost-message" in {v.anomaly for v in check(_without_m1(h)).failures()}


def test_an_unshown_message_is_owed_to_a_sticky_key_shared_consumer_only_when_its_ranges_take_the_key():
    """On Key_Shared the one consumer of every partition is owed the message only when the selector gives it the key:
    a STICKY consumer whose ranges cover every hash is charged the loss; one whose ranges miss the key's hash is not
    (the broker keeps the message back), model fuzz seed 20261220, regression
    pls-keyshared-007-lost-message-253425aab49a, where the model had owed it all the same."""
    def sticky(ranges):
        return ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Key_Shared",
                              "key_shared": {"mode": "Sticky", "ranges": ranges}})

    h = _model_history(TOPIC, sticky([[0, 65535]]), PRODUCER, _async("m1", key="k"), _receive(), _receive())
    assert [(e.outcome.value.get("message") or {}).get("payload") for e in h.events if e.op.op == "receive"] == ["m1", None]
    assert "lost-message" in {v.anomaly for v in check(_without_m1(h)).failures()}
    # two ranges that leave a gap: for each key one consumer set of ranges takes it and the other does not; the one
    # that does not gets nothing and is charged nothing, whichever the key's hash is
    outcomes = {}
    for ranges in ([[0, 32767]], [[32768, 65535]]):
        h = _model_history(TOPIC, sticky(ranges), PRODUCER, _async("m1", key="k"), _receive(), _receive())
        got = [(e.outcome.value.get("message") or {}).get("payload") for e in h.events if e.op.op == "receive"]
        report = check(h if got == [None, None] else _without_m1(h))
        outcomes[tuple(map(tuple, ranges))] = (got, {v.anomaly for v in report.failures()})
    assert {tuple(o[0]) for o in outcomes.values()} == {(None, None), ("m1", None)}, outcomes
    assert all(("lost-message" in fails) == (got == ["m1", None]) for got, fails in outcomes.values()), outcomes
