"""How the live target names a received tombstone (an empty or null payload carries no label):
``conformance.targets.pulsar._Run.label_by_id_tuple``. No broker: the run's bookkeeping only."""

from __future__ import annotations

from conformance.targets import pulsar_features as fx
from conformance.targets.pulsar import _Run

NP = "non-persistent://public/ns/n"


def _run_with(*tombstones: tuple[str, dict]) -> _Run:
    run = _Run(namespace="public/ns", client=None, admin=None, epoch_ms_at_start=0.0)
    for label, args in tombstones:
        run.tombstones[label] = NP
        run.tombstone_marks[label] = fx.tombstone_mark(args.get("key"), args.get("properties"), args.get("event_time"))
    return run


def test_a_non_persistent_tombstone_is_named_by_what_it_carries_not_only_by_send_order():
    """5.0.0-M1 campaign (regression pls-reader-002-duplicate-delivery-606a31605211): m1 (no key) was sent before
    the reader existed, m7 (key k1) after; the reader got the one with key k1, which is m7, not the first unseen."""
    run = _run_with(("m1", {"properties": {"p": "0"}}), ("m7", {"key": "k1", "properties": {"p": "0"}, "event_time": 77947}))
    got = fx.tombstone_mark("k1", {"p": "0"}, 77947)
    assert run.label_by_id_tuple((0, 0, -1, -1), (), NP, got) == "m7"
    assert run.label_by_id_tuple((0, 0, -1, -1), (), NP, fx.tombstone_mark("", {"p": "0"}, 0)) == "m1"


def test_alike_tombstones_are_still_named_in_send_order_skipping_those_received():
    run = _run_with(("m1", {}), ("m2", {}))
    plain = fx.tombstone_mark(None, None, None)
    assert run.label_by_id_tuple((0, 0, -1, -1), (), NP, plain) == "m1"
    assert run.label_by_id_tuple((0, 0, -1, -1), ("m1",), NP, plain) == "m2"
    assert run.label_by_id_tuple((0, 0, -1, -1), ("m1", "m2"), NP, plain) is None


def test_a_mark_no_tombstone_has_falls_back_to_send_order():
    run = _run_with(("m1", {"key": "a"}))
    assert run.label_by_id_tuple((0, 0, -1, -1), (), NP, fx.tombstone_mark("zz", None, None)) == "m1"


def test_a_driver_consumer_acks_a_named_async_tombstone_by_its_id():
    """5.0.0-M1 Java campaign of 6 Dec 2026 (regression pls-nack-005-unexpected-rejection-3897204081cb, 3/3): an
    async tombstone m3 that no flush had reported was received by a Java consumer and named m3 by the harness; the
    nack of m3 went to the driver by its label alone, which the driver did not know (its id comes with a flush), and
    the driver refused it. The harness now passes the id of the message it named."""
    from conformance.targets.java_client import JavaSession
    from conformance.trace import Outcome

    run = _Run(namespace="public/ns", client=None, admin=None, epoch_ms_at_start=0.0)
    full = "persistent://public/ns/t"
    run.tombstones["m3"] = full
    run.tombstone_marks["m3"] = fx.tombstone_mark(None, None, None)
    session = JavaSession.__new__(JavaSession)
    session.run = run
    assert session._args_nack({"consumer": "c2", "message": "m3"}) == {"consumer": "c2", "message": "m3"}
    got = {"message": {"payload": "", "message_id": [12712, 0, -1, -1], "topic": full, "key": None,
                       "properties": {}, "event_time": 0, "publish_time": 1}}
    named = session._after_receive({"consumer": "c2"}, Outcome.ok(got))
    assert named.value["message"]["payload"] == "m3"
    assert session._args_nack({"consumer": "c2", "message": "m3"}) == {"consumer": "c2", "message": "m3",
                                                                        "message_id": [12712, 0, -1, -1]}
