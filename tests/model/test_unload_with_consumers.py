"""An admin unload of a topic with consumers connected (issue 46: "unload with consumers"): the broker closes the
topic, its consumers subscribe again to the reloaded topic, and what they had received unacked comes again, as after
a broker restart of that topic alone (reference_model/faults.py, UNLOAD; PersistentTopic#close, then the clients'
reconnect: ConsumerImpl#connectionOpened). What was acked long enough before stays acked (PLS-FAULT-001); nothing
stored is lost (PLS-FAULT-002). Each lie is made on the model's own history and must FAIL.
"""

from __future__ import annotations

from dataclasses import replace

from broker_trace_helpers import labels, recv, run
from conformance.checker import check
from conformance.trace import History, Outcome


def _ops(sub_type: str = "Exclusive", *, unload: str = "t") -> list:
    return [("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": sub_type}),
            ("create_producer", {"producer": "p", "topic": "t"}),
            ("send", {"producer": "p", "payload": "m1"}), ("send", {"producer": "p", "payload": "m2"}),
            recv("c"), recv("c"), ("ack", {"consumer": "c", "message": "m1"}),
            ("advance_time", {"ms": 1000}),  # the ack surely reached the broker (the settle time is far shorter)
            ("unload_topic", {"topic": unload}), recv("c", 2000), recv("c", 300),
            ("send", {"producer": "p", "payload": "m3"}), recv("c")]


def _fails(history: History) -> set[str]:
    return {v.rule_id for v in check(history).failures()}


def _receive_steps(history: History) -> list[int]:
    return [i for i, e in enumerate(history.events) if e.op.op == "receive"]


def _with_message(history: History, index: int, message: dict | None) -> History:
    events = list(history.events)
    events[index] = replace(events[index], outcome=Outcome.ok({"message": message}))
    return History(history.header, tuple(events))


def test_what_was_received_unacked_comes_again_after_the_unload():
    for sub_type in ("Exclusive", "Shared", "Failover"):
        h = run(*_ops(sub_type))
        assert labels(h) == ["m1", "m2", "m2", None, "m3"], (sub_type, labels(h))


def test_the_unacked_message_not_coming_again_fails():
    h = run(*_ops())
    after = _receive_steps(h)[2]
    assert "PLS-FAULT-003" in _fails(_with_message(h, after, None)), "m2, received unacked before the unload, must come again"


def test_a_message_acked_before_the_unload_coming_again_fails():
    h = run(*_ops())
    receives = _receive_steps(h)
    m1 = h.events[receives[0]].outcome.value["message"]
    lie = _with_message(h, receives[3], {**m1, "redelivery_count": 0})  # where nothing came, m1 again
    assert {"PLS-FAULT-001", "PLS-ACK-001"} <= _fails(lie), check(lie).summary()


def test_an_unload_of_another_topic_leaves_the_consumer_alone():
    h = run(("create_topic", {"topic": "u"}), *_ops(unload="u"))
    assert labels(h) == ["m1", "m2", None, None, "m3"], labels(h)


def test_a_key_shared_consumer_across_the_unload_is_not_followed():
    """Hash ranges are handed out again as consumers come back, in an order the history does not show
    (faults.unfollowable): the unload is not followed and nothing after it on that consumer is judged."""
    h = run(*_ops("Key_Shared"))
    unload = next(e for e in h.events if e.op.op == "unload_topic")
    assert unload.outcome.status == "indeterminate", unload.outcome
