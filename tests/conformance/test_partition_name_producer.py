"""A producer opened on one partition's own name (issue 46, case producer-on-partition-name).

As broker 4.0.8 played it with the python, java and go clients (6 Dec 2026): the producer's client holds a producer of
a non-partitioned topic, so its send ids say partition -1 (Java ``ProducerImpl`` keeps the index a partitioned
producer passes it, -1 otherwise), while a consumer of the partitioned topic, and one opened on the partition's
name, get the message from ``t-partition-1`` with id partition 1. Each broken history changes one observation.
"""

from __future__ import annotations

from conformance.checker import check
from conformance.trace import History

from model_history_helpers import H, msg


def history(*, sent_partition: int = -1, received_partition: int = 1, direct_received_partition: int = 1) -> History:
    h = H(client="java")
    h.ok("create_topic", {"topic": "t", "partitions": 2})
    h.ok("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s1"})
    h.ok("subscribe", {"consumer": "c2", "topic": "t-partition-1", "subscription": "s2"})
    h.ok("create_producer", {"producer": "b0", "topic": "t-partition-1"}, {"producer_name": "b0", "last_sequence_id": -1})
    h.ok("send", {"producer": "b0", "payload": "x1"}, {"message_id": [3, 0, sent_partition, -1], "publish_time": 0})
    for consumer, partition in (("c1", received_partition), ("c2", direct_received_partition)):
        m = dict(msg("x1", 0, topic="t-partition-1", ledger=3, producer="b0"))
        m["message_id"] = [3, 0, partition, -1]
        h.ok("receive", {"consumer": consumer, "timeout_ms": 1000}, {"message": m}, t=(10, 12))
    return h.history()


def _failed(h: History) -> set[str]:
    return {v.rule_id for v in check(h).failures()}


def test_as_the_broker_played_it_passes():
    report = check(history())
    assert _failed(history()) == set()
    assert {"PLS-MSGID-001", "PLS-TOPIC-002"} <= {r for r, s in report.rule_verdicts().items() if s == "PASS"}


def test_a_send_id_with_the_partition_fails_msgid_001():
    assert "PLS-MSGID-001" in _failed(history(sent_partition=1))


def test_a_delivery_without_the_partition_index_fails():
    assert {"PLS-TOPIC-002", "PLS-MSGID-001"} & _failed(history(received_partition=-1))


def test_a_direct_consumers_delivery_with_another_index_fails():
    # the Go client's own id says 0 there; the go driver reads the index off the topic name
    assert {"PLS-TOPIC-002", "PLS-MSGID-001"} & _failed(history(direct_received_partition=0))
