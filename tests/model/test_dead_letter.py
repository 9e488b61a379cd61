"""Chapter dead_letter.py: DLQ and retry letter topics (PLS-DLQ-001..007, PLS-RETRY-001); Java: test_java_dlq_retry.py."""

from __future__ import annotations

import pytest

from conformance.checker import check
from key_shared_trace_helpers import recv, run, send
from reference_model import dead_letter, spec
from reference_model.ids import MessageId
from reference_model.profiles import profile_for


# ---------------------------------------------------------------- PLS-DLQ-001 / PLS-RETRY-001 names


def test_dead_letter_and_retry_names():
    assert spec.dead_letter_topic("my-topic", "sub") == "persistent://public/default/my-topic-sub-DLQ"
    assert spec.retry_letter_topic("my-topic", "sub") == "persistent://public/default/my-topic-sub-RETRY"
    assert spec.dead_letter_topic("persistent://a/b/t-partition-2", "s") == "persistent://a/b/t-partition-2-s-DLQ"
    with pytest.raises(ValueError, match="invalid topic name"):
        spec.dead_letter_topic("a/b", "s")


# ---------------------------------------------------------------- PLS-DLQ-*


def test_dlq_deliveries_are_max_plus_one():
    assert spec.deliveries_before_dead_letter(2) == (0, 1, 2)
    assert spec.deliveries_before_dead_letter(1) == (0, 1)
    assert [dead_letter.on_delivery(c, 2) for c in (0, 1, 2, 3)] == ["deliver", "deliver", "deliver_and_remember", "to_dlq"]


def test_dlq_validation_and_types():
    assert dead_letter.check_max_redeliver_count(0) == "max_redeliver_count must be greater than 0"
    assert dead_letter.check_max_redeliver_count(-1) == "max_redeliver_count must be greater than 0"
    assert dead_letter.check_max_redeliver_count(1) is None
    assert dead_letter.check_max_redeliver_count(True) is not None  # a bool is not a count
    assert dead_letter.check_max_redeliver_count(0, "java") == "MaxRedeliverCount must be > 0."
    with pytest.raises(ValueError):
        spec.deliveries_before_dead_letter(0)
    assert dead_letter.dlq_applies("Shared") and dead_letter.dlq_applies("Key_Shared")
    assert not dead_letter.dlq_applies("Exclusive") and not dead_letter.dlq_applies("Failover")


def test_dlq_name_and_properties():
    t = "persistent://public/ns/dl-Shared"
    assert dead_letter.default_dlq_topic(t, "s") == "persistent://public/ns/dl-Shared-s-DLQ"
    assert dead_letter.default_dlq_topic(t + "-partition-3", "s") == t + "-partition-3-s-DLQ"
    dl = dead_letter.dead_letter(b"poison", {"k": "v"}, MessageId(2276, 0), t, partition_key="pk")
    assert dl.properties_dict() == {"k": "v", "ORIGIN_MESSAGE_ID": "(2276,0,-1,-1)", "REAL_TOPIC": t}
    assert dl.partition_key == "pk"


def test_dlq_copy_of_a_batched_message_names_its_index_in_either_client_text():
    """PLS-DLQ-003/006: each message of a dead-lettered batch is its own copy, its id with its batch index."""
    t = "persistent://public/ns/dl-batch"
    cpp = dead_letter.dead_letter(b"b1", {}, MessageId(2303, 0, -1, 1), t)
    java = dead_letter.dead_letter(b"b1", {}, MessageId(2303, 0, -1, 1), t, client="java", subscription="s")
    assert cpp.properties_dict()["ORIGIN_MESSAGE_ID"] == "(2303,0,-1,1)"
    assert java.properties_dict() == {"ORIGIN_MESSAGE_ID": "2303:0:-1:1", "ORIGIN_MESSAGE_IDY_TIME": "2303:0:-1:1",
                                      "REAL_TOPIC": t, "REAL_SUBSCRIPTION": "s"}


# ---------------------------------------------------------------- PLS-RETRY-001 (Java only)


def test_reconsume_later_is_java_only():
    ops = [("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "c1",
                          "enable_retry": True}),
           ("create_producer", {"producer": "p1", "topic": "t"}), send("m1"), recv("c1"),
           ("reconsume_later", {"consumer": "c1", "message": "m1", "delay_ms": 300}), recv("c1", 1000)]
    java = run(*ops, profile=profile_for(None, "java"))
    msg = java.events[-1].outcome.value["message"]
    assert msg["topic"] == "t-s-RETRY" and java.events[-1].t_end_ms == 300
    assert {k: msg["properties"][k] for k in ("RECONSUMETIMES", "DELAY_TIME")} == {"RECONSUMETIMES": "1", "DELAY_TIME": "300"}
    assert check(java).ok
    cpp = run(*ops)
    assert cpp.events[0].outcome.error == "InvalidArgument"
