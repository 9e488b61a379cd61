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
