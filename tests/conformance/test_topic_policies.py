"""Topic-level policies (PLS-POLICY-001): a topic's own policy decides for it over its namespace's.

The expected outcomes are worked out from the rule and from apache/pulsar, not read from the model: the order
"topic > namespace > broker" (PolicyHierarchyValue); a partition follows its partitioned topic's policies
(SystemTopicBasedTopicPoliciesService keys them by TopicName#getPartitionedTopicName); turning deduplication on
for a loaded topic replays a new dedup cursor from the end of the ledger, so what was stored before does not count
(MessageDeduplication#checkStatus); a topic's delete deletes its policies (AbstractTopic#deleteTopicPolicies).
Each lie is made on the model's own history and must FAIL the rule it breaks.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "model"))

from broker_trace_helpers import recv, run  # noqa: E402
from conformance.checker import check  # noqa: E402
from conformance.targets.model import ModelTarget  # noqa: E402
from conformance.trace import History, Outcome, TraceFormatError, make_trace  # noqa: E402
from reference_model.broker import Broker  # noqa: E402
from reference_model.profiles import profile_for  # noqa: E402

DUPLICATE_ID = [-1, -1, -1, -1]


def producer(handle: str, topic: str) -> tuple[str, dict]:
    return ("create_producer", {"producer": handle, "topic": topic, "name": handle})


def send(handle: str, label: str, seq: int) -> tuple[str, dict]:
    return ("send", {"producer": handle, "payload": label, "sequence_id": seq})


def policy(**kw) -> tuple[str, dict]:
    return ("set_policy", kw)


def sub(consumer: str, topic: str) -> tuple[str, dict]:
    return ("subscribe", {"consumer": consumer, "topic": topic, "subscription": "s", "type": "Exclusive",
                          "initial_position": "Earliest"})


def _send_ids(h: History) -> dict[str, list[int]]:
    return {e.op.args["payload"]: e.outcome.value["message_id"] for e in h.events if e.op.op == "send"}


def _payloads(h: History, consumer: str) -> list[str | None]:
    out = []
    for e in h.events:
        if e.op.op == "receive" and e.op.args["consumer"] == consumer:
            m = e.outcome.value["message"]
            out.append(None if m is None else m["payload"])
    return out


def _statuses(h: History, rule: str) -> list[str]:
    return [v.status for v in check(h).verdicts if v.rule_id == rule]


def _lie_at(h: History, label: str, message_id: list[int]) -> History:
    """``h`` with the send of ``label`` answering ``message_id``."""
    events = list(h.events)
    i = next(i for i, e in enumerate(events) if e.op.op == "send" and e.op.args["payload"] == label)
    value = {**events[i].outcome.value, "message_id": message_id,
             "id_text": "(" + ",".join(map(str, message_id)) + ")"}
    events[i] = replace(events[i], outcome=Outcome.ok(value))
    return History(h.header, tuple(events))


def _over_namespace() -> History:
    """a: own deduplication on under a namespace with it off; b: own off under a namespace with it on."""
    return run(policy(deduplication=False), producer("pa", "a"), producer("pb", "b"),
               policy(topic="a", deduplication=True), policy(topic="b", deduplication=False),
               send("pa", "a1", 1), send("pa", "a1-again", 1),
               policy(deduplication=True),
               send("pb", "b1", 1), send("pb", "b1-again", 1),
               sub("ca", "a"), recv("ca"), recv("ca", 200), sub("cb", "b"), recv("cb"), recv("cb"), recv("cb", 200))


def test_the_topics_own_policy_decides_either_way():
    h = _over_namespace()
    ids = _send_ids(h)
    assert ids["a1-again"] == DUPLICATE_ID and ids["a1"] != DUPLICATE_ID  # a: on, though the namespace's is off
    assert ids["b1-again"] != DUPLICATE_ID  # b: off, though the namespace's is on
    assert _payloads(h, "ca") == ["a1", None]
    assert _payloads(h, "cb") == ["b1", "b1-again", None]
    # judged where the two levels differ: each send with a sequence id on a and on b, the re-sends among them
    judged = {v.step: v.status for v in check(h).verdicts if v.rule_id == "PLS-POLICY-001"}
    resends = {e.step for e in h.events if e.op.op == "send" and e.op.args["payload"].endswith("-again")}
    assert resends <= set(judged) and set(judged.values()) == {"PASS"}


def test_a_duplicate_stored_where_the_topics_policy_is_on_fails():
    lie = _lie_at(_over_namespace(), "a1-again", [5, 9, -1, -1])
    assert "FAIL" in _statuses(lie, "PLS-POLICY-001")


def test_a_resend_dropped_where_the_topics_policy_is_off_fails():
    lie = _lie_at(_over_namespace(), "b1-again", DUPLICATE_ID)
    assert "FAIL" in _statuses(lie, "PLS-POLICY-001")


def test_turning_deduplication_on_for_a_loaded_topic_forgets_what_it_stored():
    """c1 is stored with deduplication off; once the topic turns it on, c1's sequence id is unknown to the new
    dedup cursor, so its re-send is stored; the next re-send is dropped."""
    h = run(producer("pc", "c"), send("pc", "c1", 1), policy(topic="c", deduplication=True),
            send("pc", "c1-again", 1), send("pc", "c1-third", 1), sub("cc", "c"), recv("cc"), recv("cc"), recv("cc", 200))
    ids = _send_ids(h)
    assert ids["c1-again"] != DUPLICATE_ID and ids["c1-third"] == DUPLICATE_ID
    assert _payloads(h, "cc") == ["c1", "c1-again", None]
    lie = _lie_at(h, "c1-again", DUPLICATE_ID)
    assert "FAIL" in _statuses(lie, "PLS-POLICY-001")


def test_turning_deduplication_off_and_on_again_starts_empty():
    """Disabling deletes the dedup cursor and clears the maps: after off and on again, a re-send of a sequence id
    the broker had persisted while it was on is stored."""
    h = run(policy(deduplication=True), producer("p", "t"), send("p", "m1", 1), send("p", "m1-again", 1),
            policy(topic="t", deduplication=False), policy(topic="t", deduplication=True), send("p", "m1-third", 1))
    ids = _send_ids(h)
    assert ids["m1-again"] == DUPLICATE_ID and ids["m1-third"] != DUPLICATE_ID


def _follow(*ops) -> Broker:
    """The model's broker after ``ops`` (each one must be allowed)."""
    broker = Broker(profile_for())
    events = ModelTarget()._run_ops(broker, make_trace("t", list(ops)))
    assert [e.outcome.status for e in events] == ["ok"] * len(ops), [e.outcome for e in events]
    return broker


def test_a_partitioned_topics_policy_holds_for_each_partition_and_goes_with_the_topic():
    made = [("create_topic", {"topic": "pt", "partitions": 2}), policy(topic="pt", deduplication=True)]
    broker = _follow(*made)
    assert all(broker.policy_for(broker.topic_named(f"pt-partition-{i}")).deduplication for i in range(2))
    assert not broker.policy_for(broker.topic_named("pt-partition-0")).retention
    broker = _follow(*made, ("delete_topic", {"topic": "pt"}), ("create_topic", {"topic": "pt", "partitions": 2}))
    assert not any(broker.policy_for(broker.topic_named(f"pt-partition-{i}")).deduplication for i in range(2))


def test_a_topic_policy_on_a_missing_topic_is_topic_not_found():
    h = ModelTarget().run(make_trace("t", [policy(topic="nowhere", deduplication=True)]))
    assert h.events[0].outcome.status == "rejected" and h.events[0].outcome.error == "TopicNotFound"


@pytest.mark.parametrize("name, value", [("max_unacked_messages_per_consumer", 1), ("schema_auto_update", False)])
def test_a_namespace_only_policy_on_a_topic_is_a_trace_format_error(name, value):
    with pytest.raises(TraceFormatError, match="cannot be set on one topic"):
        make_trace("t", [("set_policy", {"topic": "t", name: value})])


@pytest.mark.parametrize("minutes, size_mb, refused", [
    (10, 10, True),          # 10 MB is within the default 10 GB backlog quota (live 4.0.8: HTTP 412)
    (-1, -1, False),         # infinite
    (0, 0, False),           # no retention: nothing to hold
    (10, 10 * 1024, True),   # exactly the quota: it must exceed it
    (10, 10 * 1024 + 1, False),
])
def test_a_topics_own_retention_must_exceed_the_backlog_quota(minutes, size_mb, refused):
    h = ModelTarget().run(make_trace("t", [producer("p", "t"),
                                           policy(topic="t", retention_minutes=minutes, retention_size_mb=size_mb)]))
    outcome = h.events[1].outcome
    assert (outcome.status == "rejected") == refused, outcome
    if refused:
        assert "backlog quota" in outcome.detail
        lie = History(h.header, (h.events[0], replace(h.events[1], outcome=Outcome.ok({}))))
        assert "FAIL" in _statuses(lie, "PLS-POLICY-001")
