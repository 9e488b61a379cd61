"""The admin API's create-subscription on a partitioned topic (issue 46): the broker creates the subscription on
every partition (apache/pulsar PersistentTopicsBase#internalCreateSubscription fans a partitioned name out), each
partition's cursor at its own earliest message (PLS-SUB-003) or past its own last one (PLS-SUB-002), and the first
consumer starts there whatever initial position it asks for (PLS-SUB-004).

Expected reads are worked out from those rules: m1 and m2 are sent before the subscriptions are made, m3 after; a
subscription made at Earliest owes all three, one made at Latest only m3. Each lie must FAIL the rule it breaks.
"""

from __future__ import annotations

from dataclasses import replace

from broker_trace_helpers import run
from conformance.checker import check
from conformance.trace import History, Outcome


def _ops(client: str) -> list:
    ops = [("create_topic", {"topic": "t", "partitions": 2}),
           ("create_producer", {"producer": "p", "topic": "t", "batching": False, "client": client}),
           ("send", {"producer": "p", "payload": "m1", "key": "k1"}), ("send", {"producer": "p", "payload": "m2", "key": "k2"}),
           ("create_subscription", {"topic": "t", "subscription": "early", "initial_position": "Earliest"}),
           ("create_subscription", {"topic": "t", "subscription": "late", "initial_position": "Latest"}),
           ("send", {"producer": "p", "payload": "m3", "key": "k1"})]
    for c, sub in (("c1", "early"), ("c2", "late")):
        # the consumer asks for the other initial position: the subscription exists, so it is ignored (PLS-SUB-004)
        ops.append(("subscribe", {"consumer": c, "topic": "t", "subscription": sub, "type": "Exclusive", "client": client,
                                  "initial_position": "Latest" if sub == "early" else "Earliest"}))
    ops += [("receive", {"consumer": "c1", "timeout_ms": 1000}) for _ in range(3)] + [("receive", {"consumer": "c1", "timeout_ms": 300})]
    return ops + [("receive", {"consumer": "c2", "timeout_ms": 1000}), ("receive", {"consumer": "c2", "timeout_ms": 300})]


def _got(history: History, consumer: str) -> list[str | None]:
    return [None if e.outcome.value["message"] is None else e.outcome.value["message"]["payload"]
            for e in history.events if e.op.op == "receive" and e.op.args["consumer"] == consumer]


def _statuses(history: History, rule: str) -> set[str]:
    return {v.status for v in check(history).verdicts if v.rule_id == rule}


def _with_receipt(history: History, consumer: str, index: int, outcome: Outcome) -> History:
    events = list(history.events)
    at = [i for i, e in enumerate(events) if e.op.op == "receive" and e.op.args["consumer"] == consumer][index]
    events[at] = replace(events[at], outcome=outcome)
    return History(history.header, tuple(events))


def test_each_partition_gets_the_subscription_at_its_own_earliest_or_latest_message():
    for client in ("python", "java", "go"):
        h = run(*_ops(client))
        early, late = _got(h, "c1"), _got(h, "c2")
        assert sorted(early[:3]) == ["m1", "m2", "m3"] and early[3] is None, (client, early)
        assert late == ["m3", None], (client, late)
        passed = {v.rule_id for v in check(h).verdicts if v.status == "PASS"}
        assert {"PLS-SUB-002", "PLS-SUB-003"} <= passed, (client, passed)


def test_a_message_from_before_a_latest_subscription_or_an_earliest_one_that_gets_nothing_fails():
    h = run(*_ops("java"))
    m1 = next(e.outcome for e in h.events if e.op.op == "receive" and e.outcome.value["message"]
              and e.outcome.value["message"]["payload"] == "m1")
    assert "FAIL" in _statuses(_with_receipt(h, "c2", 0, m1), "PLS-SUB-002")  # late got m1, sent before it was made
    # early's consumer waits out every receive and gets nothing: the messages its start owes never come
    events = list(h.events)
    for i, e in enumerate(events):
        if e.op.op == "receive" and e.op.args["consumer"] == "c1":
            events[i] = replace(e, outcome=Outcome.ok({"message": None}), t_end_ms=e.t_start_ms + e.op.args["timeout_ms"])
    assert "FAIL" in _statuses(History(h.header, tuple(events)), "PLS-SUB-003")
