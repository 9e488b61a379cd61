"""A deduplication policy change the model does not follow (it came while a producer's async sends may still be in
flight, ``FeatureOps._check_dedup_flip_settled``) is applied by the broker all the same: from then on a send's
duplicate reply or stored id on that topic is the broker's answer to follow, not a model state to judge it by.

Model fuzz seed 20261224, fz-8bb7efd13a35 (shrunk: regression pls-msgid-001-wrong-value-61f31d9ff94d), and its live
replays on 4.0.8 (Python, 2 runs): after the topic's deduplication was switched on behind async m7 (sequence id 21),
m8 came back as a duplicate, and the checker judged the reply (-1, -1) as a stored message's id.
"""

from __future__ import annotations

from dataclasses import replace

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Outcome, make_trace


def _ops(*, async_before_the_change: bool) -> list:
    """The shrunk regression's ops: a read_compacted consumer that has received the async m4 (so the model's own run
    takes the change as settled, while the checker cannot tell the send's reply has come), or no async send at all."""
    ops = [("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s2", "type": "Exclusive", "nack_delay_ms": 264,
                          "read_compacted": True}),
           ("create_producer", {"producer": "p2", "topic": "t"}),
           ("send", {"producer": "p2", "payload": "m1"}),
           ("compact", {"topic": "t"}),
           ("send", {"producer": "p2", "payload": "m4", "async": async_before_the_change}),
           ("receive", {"consumer": "c1", "timeout_ms": 169}),
           ("receive", {"consumer": "c1", "timeout_ms": 109})]
    return ops + [("set_policy", {"topic": "t", "deduplication": True}),
                  ("send", {"producer": "p2", "payload": "m7", "async": True, "sequence_id": 21}),
                  ("send", {"producer": "p2", "payload": "m8"})]


def test_a_send_after_an_unfollowed_deduplication_change_follows_the_broker():
    history = ModelTarget().run(make_trace("dedup-unfollowed", _ops(async_before_the_change=True)))
    report = check(history)
    assert "set_policy" in [f.op for f in report.not_followed]
    assert not report.failures(), report.summary()


def test_a_followed_deduplication_change_still_judges_the_reply():
    # the same sends, the change followed: m8's reply is the model's to judge; a stored id told as a duplicate's FAILs
    history = ModelTarget().run(make_trace("dedup-followed", _ops(async_before_the_change=False)))
    assert "set_policy" not in [f.op for f in check(history).not_followed]
    last = history.events[-1]
    value = dict(last.outcome.value)
    lied = [-1, -1, -1, -1] if list(value["message_id"])[:2] != [-1, -1] else [1, 9, -1, -1]
    events = history.events[:-1] + (replace(last, outcome=Outcome.ok({**value, "message_id": lied})),)
    assert check(replace(history, events=events)).failures()
