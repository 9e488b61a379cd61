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
