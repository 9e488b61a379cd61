"""Compaction of a partitioned topic (issue 46: "compaction of partitioned topics"): the admin call on a partitioned
name compacts every partition on its own (apache/pulsar PersistentTopicsBase#internalTriggerCompaction), each with
its horizon at its own last message (PLS-COMPACT-004), and a read_compacted consumer of the topic reads each
partition's compacted view (PLS-COMPACT-001), then what came after.

The expected deliveries are worked out from those rules, not read from the model: a murmur3 router (Java's) puts
k1 on partition 2, k2 and k4 on partition 1, k3 on partition 0 of 3 (as conformance/cases/partitions/
failover-partitioned.yaml states). m1 (k1), m2 (k2), m3 (k1), m4 (k3), m5 (k2), m6 (k4), compaction, m7 (k1):
partition 2's view is m3 (m1 superseded) then m7, partition 1's is m5, m6 (m2 superseded), partition 0's is m4.
Each lie is made on the model's own history and must FAIL the rule it breaks.
"""

from __future__ import annotations

from dataclasses import replace

from broker_trace_helpers import labels, recv, run
from conformance.checker import check
from conformance.trace import History, Outcome

ROUTER = {"hashing": "murmur3_32", "client": "java"}
SENT = (("m1", "k1"), ("m2", "k2"), ("m3", "k1"), ("m4", "k3"), ("m5", "k2"), ("m6", "k4"))


def _ops(client: str = "java", *, subscribe_first: bool = False) -> list:
    ops = [("create_topic", {"topic": "t", "partitions": 3}),
           ("subscribe", {"consumer": "keep", "topic": "t", "subscription": "keep", "type": "Exclusive", "client": client}),
           ("create_producer", {"producer": "p", "topic": "t", "router": ROUTER, "batching": False, "client": client})]
    compacted = ("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Exclusive",
                               "initial_position": "Earliest", "read_compacted": True, "client": client})
    if subscribe_first:
        ops.append(compacted)
    ops += [("send", {"producer": "p", "payload": label, "key": key}) for label, key in SENT]
    ops += [("compact", {"topic": "t"}), ("send", {"producer": "p", "payload": "m7", "key": "k1"})]
    if not subscribe_first:
        ops.append(compacted)
    return ops + [recv("c") for _ in range(5)] + [recv("c", 300)]


def _receipts(history: History) -> list[str | None]:
    return [None if e.outcome.value["message"] is None else e.outcome.value["message"]["payload"]
            for e in history.events if e.op.op == "receive" and e.op.args["consumer"] == "c"]


def _statuses(history: History, rule: str) -> set[str]:
    return {v.status for v in check(history).verdicts if v.rule_id == rule}


def _sent_id(history: History, label: str) -> list:
    return next(e.outcome.value["message_id"] for e in history.events if e.op.op == "send" and e.op.args["payload"] == label)


def _receipt_swapped(history: History, got: str, instead: str) -> History:
    """The lie: where ``c`` received ``got``, it received ``instead`` (its payload and its id as sent)."""
    events = list(history.events)
    for i, e in enumerate(events):
        msg = (e.outcome.value or {}).get("message") if e.op.op == "receive" else None
        if msg is not None and msg["payload"] == got:
            events[i] = replace(e, outcome=Outcome.ok({"message": dict(msg, payload=instead, message_id=_sent_id(history, instead))}))
    return History(history.header, tuple(events))


def _never_comes(history: History, label: str) -> History:
    events = list(history.events)
    for i, e in enumerate(events):
        msg = (e.outcome.value or {}).get("message") if e.op.op == "receive" else None
        if msg is not None and msg["payload"] == label:
            events[i] = replace(e, outcome=Outcome.ok({"message": None}))
    return History(history.header, tuple(events))


def test_each_partition_reads_its_own_compacted_view_then_what_came_after():
    for client in ("java", "python", "go"):
        router = dict(ROUTER, client=client) if client == "java" else ROUTER
        h = run(*[(op, dict(a, router=router) if op == "create_producer" else a) for op, a in _ops(client)])
        got = _receipts(h)
        assert got[-1] is None and sorted(got[:-1]) == ["m3", "m4", "m5", "m6", "m7"], (client, got)
        # per partition, the view in publish order, then m7 after its partition's view
        assert got.index("m3") < got.index("m7") and got.index("m5") < got.index("m6"), (client, got)
        assert {"PLS-COMPACT-001", "PLS-COMPACT-004"} <= {v.rule_id for v in check(h).verdicts if v.status == "PASS"}


def test_a_superseded_message_read_from_a_partitions_view_fails_the_compaction_rule():
    h = run(*_ops())
    assert "FAIL" in _statuses(_receipt_swapped(h, "m5", "m2"), "PLS-COMPACT-001")  # m2 is k2's older value
    assert "FAIL" in _statuses(_receipt_swapped(h, "m3", "m1"), "PLS-COMPACT-001")  # m1 is k1's older value


def test_a_message_past_its_partitions_horizon_that_never_comes_fails():
    h = run(*_ops())
    assert "FAIL" in _statuses(_never_comes(h, "m7"), "PLS-COMPACT-004")
    assert "FAIL" in _statuses(_never_comes(h, "m4"), "PLS-COMPACT-001")  # the only message of partition 0's view


def test_a_consumer_reading_compacted_before_the_compaction_is_not_followed_past_it():
    # connected before the compaction, it may read the compacted view or the topic as published (the broker's read
    # timing): the model stops following it rather than guessing (reference_model/feature_ops.py _op_compact)
    h = run(*_ops(subscribe_first=True))
    assert labels(h)  # ran to the end; what c got is not judged by the compaction rules
    assert "FAIL" not in _statuses(h, "PLS-COMPACT-001")
