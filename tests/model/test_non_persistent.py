"""Chapter non_persistent.py: only connected subscriptions get a message (PLS-NP-001..004)."""

from __future__ import annotations

import pytest

from reference_model import non_persistent, spec


# ---------------------------------------------------------------- PLS-NP-*


def test_non_persistent_delivers_only_to_connected_subscriptions():
    got = spec.non_persistent_deliveries([
        ("publish", "before"), ("connect", "s"), ("publish", "m1"), ("disconnect", "s"),
        ("publish", "while-closed"), ("connect", "s"), ("publish", "m2"), ("connect", "s2"), ("publish", "m3"),
    ])
    assert got == {"s": ["m1", "m2", "m3"], "s2": ["m3"]}
    assert str(non_persistent.message_id()) == "(0,0,-1,-1)"
    with pytest.raises(ValueError):
        spec.non_persistent_deliveries([("nack", "x")])


def test_drop_possible_after_a_large_message_or_without_permits():
    # non_persistent rule 5 (NonPersistentDispatcher*#sendMessages drops without permits or writability)
    assert non_persistent.drop_possible(large_message_sent=False, waiting=0, permit_thresholds=[501]) is None
    assert "writable" in non_persistent.drop_possible(large_message_sent=True, waiting=0, permit_thresholds=[501])
    assert non_persistent.drop_possible(large_message_sent=False, waiting=500, permit_thresholds=[501]) is None
    assert "permits" in non_persistent.drop_possible(large_message_sent=False, waiting=501, permit_thresholds=[501])
    # Shared: the broker picks a consumer with permits, so one with room is enough
    assert non_persistent.drop_possible(large_message_sent=False, waiting=1, permit_thresholds=[1, 501]) is None
    assert non_persistent.drop_possible(large_message_sent=False, waiting=0, permit_thresholds=[None]) is not None


def _np_statuses(*ops):
    from conformance.targets.model import ModelTarget
    from conformance.trace import make_trace
    return [e.outcome.status for e in ModelTarget().run(make_trace("t", list(ops))).events]


NP = "non-persistent://public/default/np"


def test_a_send_the_broker_may_drop_is_not_modelled():
    sub = ("subscribe", {"consumer": "c1", "topic": NP, "subscription": "s", "type": "Exclusive"})
    producer = ("create_producer", {"producer": "p1", "topic": NP})
    # live 4.0.8 (fz-a344a518a55e): an async 5 MB message, then m2, which the consumer never got
    assert _np_statuses(sub, producer, ("send", {"producer": "p1", "payload": "m1", "payload_size": 5_242_580}),
                        ("send", {"producer": "p1", "payload": "m2"})) == ["ok", "ok", "ok", "indeterminate"]
    small = ("subscribe", {"consumer": "c1", "topic": NP, "subscription": "s", "type": "Exclusive", "receiver_queue_size": 1})
    assert _np_statuses(small, producer, ("send", {"producer": "p1", "payload": "m1"}),
                        ("send", {"producer": "p1", "payload": "m2"})) == ["ok", "ok", "ok", "indeterminate"]
    # received in between: the permit is back, m2 is owed
    assert _np_statuses(small, producer, ("send", {"producer": "p1", "payload": "m1"}),
                        ("receive", {"consumer": "c1", "timeout_ms": 100}),
                        ("send", {"producer": "p1", "payload": "m2"}),
                        ("receive", {"consumer": "c1", "timeout_ms": 100})) == ["ok"] * 6


def test_lost_on_close_takes_everything_from_the_last_consumer_only():
    assert non_persistent.lost_on_close({0, 2}, others_connected=False) == frozenset({0, 2})
    assert non_persistent.lost_on_close(set(), others_connected=True) == frozenset()
    assert non_persistent.lost_on_close({1}, others_connected=True) is None


def _closed_before_receipt(type_: str, extra_consumer: bool = False) -> list:
    ops = [("subscribe", {"consumer": "c1", "topic": NP, "subscription": "s", "type": type_})]
    if extra_consumer:
        ops.append(("subscribe", {"consumer": "c3", "topic": NP, "subscription": "s", "type": type_}))
    return ops + [("create_producer", {"producer": "p1", "topic": NP}), ("send", {"producer": "p1", "payload": "m1"}),
                  ("close", {"handle": "c1"}),
                  ("subscribe", {"consumer": "c2", "topic": NP, "subscription": "s", "type": type_}),
                  ("receive", {"consumer": "c2", "timeout_ms": 300})]


@pytest.mark.parametrize("type_", ["Exclusive", "Failover", "Shared", "Key_Shared"])
def test_what_the_last_consumer_did_not_receive_goes_with_it(type_):
    """Live 3.3.6 and 4.0.8 (regression pls-sub-005-lost-message-11aa0492b21b): m1 sent to a subscription's only
    consumer, which closed before receiving it; the next consumer of that subscription got nothing. m1 arriving
    there FAILs: a non-persistent message is dispatched once."""
    from dataclasses import replace

    from conformance.checker import check
    from conformance.targets.model import ModelTarget
    from conformance.trace import Outcome, make_trace
    h = ModelTarget().run(make_trace("t", _closed_before_receipt(type_)))
    assert [e.outcome.status for e in h.events] == ["ok"] * 6 and h.events[-1].outcome.value["message"] is None
    assert check(h).ok
    sent = ModelTarget().run(make_trace("t", _closed_before_receipt(type_)[:3] + [("receive", {"consumer": "c1", "timeout_ms": 300})]))
    m1 = sent.events[-1].outcome.value["message"]
    events = list(h.events)
    events[-1] = replace(events[-1], outcome=Outcome.ok({"message": m1}))
    report = check(type(h)(h.header, tuple(events)))
    assert not report.ok and any(v.step == 6 for v in report.failures()), report.summary()


def test_a_close_with_other_consumers_and_undelivered_messages_is_not_modelled():
    from conformance.targets.model import ModelTarget
    from conformance.trace import make_trace
    h = ModelTarget().run(make_trace("t", _closed_before_receipt("Shared", extra_consumer=True)))
    close = h.events[4]
    assert close.op.op == "close" and close.outcome.status == "indeterminate", close.outcome
