"""An async send of a partitioned producer whose partition no flush or receipt shows is placed on a guess
(``Broker._place_unshown``); the router's later choices must not be taken from that guess where they would bind a
later send (review of 6 Dec 2026, after the fix of regression pls-dedup-004-wrong-value-349427ef976b).

SinglePartition routing (PLS-ROUTE-003) sends every keyless message of a producer to one partition, picked at random:
the first keyless message's partition is that one. When the first one is never shown, the second one's partition is
the first place the history shows it, whichever it is; when the first one is shown, the second must follow it.
"""

from __future__ import annotations

import json

from conformance.checker import check
from conformance.trace import parse


def _history(ops: list) -> object:
    """A model history of ``ops`` ((op, args, ok value) each), one op per millisecond."""
    lines = [{"kind": "header", "format": "pulsar-conformance-trace", "version": 1, "trace_id": "x", "title": "x",
              "rules": [], "profile": {}, "target": "model", "broker_version": "4.0", "client": "python",
              "client_version": "reference-model", "op_count": len(ops)}]
    for i, (op, args, value) in enumerate(ops):
        lines.append({"kind": "op", "step": i + 1, "op": op, "args": args, "outcome": {"status": "ok", "value": value},
                      "t_start_ms": float(i), "t_end_ms": float(i) + 0.5})
    return parse("\n".join(json.dumps(line) for line in lines))


def _single_partition(second_id: list[int], *, flush_first_on: int | None = None):
    ops = [
        ("create_topic", {"topic": "t", "partitions": 2}, {}),
        ("create_producer", {"producer": "p", "topic": "t", "batching": True, "routing_mode": "SinglePartition"},
         {"producer_name": "model-0", "last_sequence_id": -1, "partition_producer_names": ["model-0", "model-0-p1"]}),
        ("send", {"producer": "p", "payload": "m1", "async": True}, {}),
    ]
    if flush_first_on is not None:
        ops.append(("flush", {"producer": "p"}, {"message_ids": {"m1": [3, 0, flush_first_on, -1]},
                                                  "id_texts": {"m1": f"(3,0,{flush_first_on},-1)"}}))
    ops.append(("send", {"producer": "p", "payload": "m2"},
                {"message_id": second_id, "sequence_id": 1, "id_text": "x", "publish_time": 0}))
    return _history(ops)


def _route_003(h) -> set[str]:
    return {v.status for v in check(h).verdicts if v.rule_id == "PLS-ROUTE-003" and v.step is not None}


def test_an_unshown_first_message_does_not_pick_the_single_partition():
    for second in ([3, 0, 1, -1], [3, 0, 1, 0], [3, 0, 0, 0]):
        h = _single_partition(second)
        assert check(h).ok, (second, check(h).summary())


def test_a_shown_first_message_picks_it():
    assert "FAIL" in _route_003(_single_partition([3, 1, 1, -1], flush_first_on=0))
    assert "FAIL" not in _route_003(_single_partition([3, 1, 0, -1], flush_first_on=0))


# ---------------------------------------------------------------------------- keyed async sends, deduplication after them


def _keyed_then_sync(fourth_id: list[int], *, show_second_on: int | None = None):
    """A producer of a two-partition topic under deduplication sends m2 and m3 async with key k3 and sequence ids 12
    and 26 (nothing shows where k3 went unless a flush shows m3's partition), then m4 with 19, whose reply is
    ``fourth_id`` (partition 1; a duplicate's id is (-1, -1, 1, -1)). The shape of model fuzz seed 20261223,
    fz-55a257610851, and of its live replays on 4.0.8 (Python): m4 was a duplicate in one run and stored in the other."""
    ops = [
        ("create_topic", {"topic": "t", "partitions": 2}, {}),
        ("create_producer", {"producer": "p", "topic": "t"},
         {"producer_name": "model-0", "last_sequence_id": -1, "partition_producer_names": ["model-0", "model-0-p1"]}),
        ("set_policy", {"topic": "t", "deduplication": True}, {}),
        ("send", {"producer": "p", "payload": "m2", "async": True, "sequence_id": 12, "key": "k3"}, {}),
        ("send", {"producer": "p", "payload": "m3", "async": True, "sequence_id": 26, "key": "k3"}, {}),
    ]
    if show_second_on is not None:
        ops.append(("flush", {"producer": "p"}, {"message_ids": {"m2": [3, 0, show_second_on, -1],
                                                                  "m3": [3, 1, show_second_on, -1]},
                                                  "id_texts": {"m2": "x", "m3": "y"}}))
    ops.append(("send", {"producer": "p", "payload": "m4", "sequence_id": 19},
                {"message_id": fourth_id, "sequence_id": 26, "id_text": "z", "publish_time": 0}))
    return _history(ops)


def _fails(h) -> set[str]:
    return {v.rule_id for v in check(h).failures()}


def test_a_sync_send_after_unshown_keyed_sends_follows_the_broker_on_deduplication():
    # k3's partition is not shown: m4 (sequence id 19, under m3's 26) may or may not meet m3 on partition 1
    assert not _fails(_keyed_then_sync([-1, -1, 1, -1]))
    assert not _fails(_keyed_then_sync([3, 0, 1, -1]))


def test_a_sync_send_after_shown_keyed_sends_is_judged():
    # the flush shows k3 on partition 1: m4 with 19 there is a duplicate of m3's 26, so storing it breaks the rule
    assert not _fails(_keyed_then_sync([-1, -1, 1, -1], show_second_on=1))
    assert _fails(_keyed_then_sync([3, 2, 1, -1], show_second_on=1)) & {"PLS-DEDUP-001", "PLS-POLICY-001"}
    # on partition 0 they do not meet: m4 is stored there
    assert _fails(_keyed_then_sync([-1, -1, 1, -1], show_second_on=0)) & {"PLS-DEDUP-001", "PLS-POLICY-001", "PLS-MSGID-001"}
