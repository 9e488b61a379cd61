"""Admin cursor ops on a partitioned topic (issue 46; reference_model/admin_ops.py): the broker refuses a skip and a
reset to a position with HTTP 405 (apache/pulsar PersistentTopicsBase#internalSkipMessages: "Skip messages on a
partitioned topic is not allowed"; #internalResetCursorOnPosition: "Reset-cursor at position is not allowed for
partitioned-topic") and applies a clear_backlog and a reset to a publish time to every partition
(#internalSkipAllMessages, #internalResetCursor fan the partitioned name out).

Expected outcomes come from those sources: m1 (k1), m2 (k2), m3 (k1), m4 (k2) sent 50 ms apart on 2 partitions; a
clear empties the backlog of all four; after m5 (k1), a reset to m3's publish time owes m3, m4 and m5 and nothing
before m3. Each lie, made on the model's own history, must FAIL the rule it breaks.
"""

from __future__ import annotations

from dataclasses import replace

from broker_trace_helpers import run
from conformance.checker import check
from conformance.trace import History, Outcome


def _ops(client: str) -> list:
    ops = [("create_topic", {"topic": "t", "partitions": 2}),
           ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Exclusive", "client": client}),
           ("close", {"handle": "c1"}),
           ("create_producer", {"producer": "p", "topic": "t", "batching": False, "client": client})]
    for label, key in (("m1", "k1"), ("m2", "k2"), ("m3", "k1"), ("m4", "k2")):
        ops += [("send", {"producer": "p", "payload": label, "key": key}), ("advance_time", {"ms": 50})]
    ops += [("skip", {"topic": "t", "subscription": "s", "count": 1}),
            ("reset_cursor", {"topic": "t", "subscription": "s", "message": "m1"}),
            ("reset_cursor", {"topic": "t", "subscription": "s", "position": "latest"}),
            ("clear_backlog", {"topic": "t", "subscription": "s"}),
            ("stats", {"topic": "t", "subscription": "s"}),
            ("send", {"producer": "p", "payload": "m5", "key": "k1"}),
            ("reset_cursor", {"topic": "t", "subscription": "s", "publish_time_of": "m3"}),
            ("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Exclusive", "client": client})]
    return ops + [("receive", {"consumer": "c2", "timeout_ms": 1000}) for _ in range(3)] + \
        [("receive", {"consumer": "c2", "timeout_ms": 300})]


def _event(history: History, op: str, nth: int = 0) -> int:
    return [i for i, e in enumerate(history.events) if e.op.op == op][nth]


def _replaced(history: History, index: int, **changes) -> History:
    events = list(history.events)
    events[index] = replace(events[index], **changes)
    return History(history.header, tuple(events))


def _statuses(history: History, rule: str) -> set[str]:
    return {v.status for v in check(history).verdicts if v.rule_id == rule}


def test_skip_and_position_resets_are_refused_while_clear_and_time_reset_act_on_every_partition():
    for client in ("python", "java", "go"):
        h = run(*_ops(client))
        refused = [(e.op.op, e.outcome.status, e.outcome.error) for e in h.events if e.op.op in ("skip", "reset_cursor")][:3]
        assert refused == [("skip", "rejected", "NotAllowedError"), ("reset_cursor", "rejected", "NotAllowedError"),
                           ("reset_cursor", "rejected", "NotAllowedError")], (client, refused)
        assert h.events[_event(h, "stats")].outcome.value["backlog"] == 0, client
        got = [e.outcome.value["message"] and e.outcome.value["message"]["payload"] for e in h.events if e.op.op == "receive"]
        assert sorted(got[:3]) == ["m3", "m4", "m5"] and got.index("m3") < got.index("m5") and got[3] is None, (client, got)


def test_a_partitioned_skip_that_succeeds_a_clear_that_leaves_a_backlog_or_a_message_before_the_reset_point_fails():
    h = run(*_ops("java"))
    assert "FAIL" in _statuses(_replaced(h, _event(h, "skip"), outcome=Outcome.ok({})), "PLS-SKIP-001")
    stats = _event(h, "stats")
    left = _replaced(h, stats, outcome=Outcome.ok(dict(h.events[stats].outcome.value, backlog=1)))
    assert "FAIL" in _statuses(left, "PLS-SKIP-002") | _statuses(left, "PLS-BACKLOG-001")
    first = _event(h, "receive")
    m1 = dict(h.events[first].outcome.value["message"], payload="m1",
              message_id=next(e.outcome.value["message_id"] for e in h.events if e.op.op == "send" and e.op.args["payload"] == "m1"))
    # m1 was published before m3, so the reset leaves it acked, by the clear: its coming back is an ack resurrection
    before = _replaced(h, first, outcome=Outcome.ok({"message": m1}))
    assert ("PLS-SKIP-002", "FAIL", "ack-resurrection") in {(v.rule_id, v.status, v.anomaly) for v in check(before).verdicts}
