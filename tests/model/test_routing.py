"""Chapter routing.py: partitions and the Failover active consumer (PLS-ROUTE-001..004, TOPIC-002, FAILOVER-003/004)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from case_history_helpers import failures, java_history, replace_outcome
from conformance.checker import check
from conformance.trace import History, Outcome
from key_shared_trace_helpers import received, recv, run, send
from reference_model import names, routing, spec_keyshared
from reference_model.spec_keyshared import failover_active_consumer, partition_for_key


# ---------------------------------------------------------------- routing (PLS-ROUTE-001..003, PLS-TOPIC-002)


@pytest.mark.rule("PLS-ROUTE-001")
def test_partition_for_key_per_hashing_and_client():
    assert partition_for_key("Order-3459134", 7, hashing="murmur3_32") == 964695987 % 7
    assert partition_for_key("Order-3459134", 7, hashing="murmur3_32", client="cpp") == 964695987 % 7
    assert partition_for_key("é", 7, hashing="java_string_hash", client="java") == 233 % 7 == 2
    assert partition_for_key("é", 7, hashing="java_string_hash", client="cpp") == 2147481670 % 7 == 5
    assert partition_for_key("hello", 1, hashing="java_string_hash") == 0


@pytest.mark.rule("PLS-ROUTE-002")
def test_round_robin_without_batching_is_per_message_from_the_random_start():
    assert routing.round_robin_partitions(4, 3, start=5) == [2, 0, 1, 2]
    assert routing.round_robin_partitions(3, 1, start=5) == [0, 0, 0]
    # C++ cursor is uint32_t: 2^32-1 then 0
    assert routing.round_robin_partitions(2, 3, start=2**32 - 1, client="cpp") == [(2**32 - 1) % 3, 0]
    # Java int wraps to -2^31 and signSafeMod keeps it in range
    assert routing.round_robin_partitions(2, 3, start=2**31 - 1, client="java") == [1, 1]


@pytest.mark.rule("PLS-ROUTE-002")
def test_cpp_round_robin_with_batching_switches_per_batch():
    small = [(10, 0)] * 7
    assert spec_keyshared.cpp_round_robin_batched(small, 4, start=1, created_at_ms=0, batching_max_messages=3) == [1, 1, 1, 2, 2, 2, 3]
    # the delay since the last switch has passed: the first message already switches
    assert spec_keyshared.cpp_round_robin_batched([(10, 50), (10, 51)], 4, start=1, created_at_ms=0) == [2, 2]
    # a message that does not fit the remaining bytes switches
    sized = [(60, 0), (60, 0), (60, 0)]
    assert spec_keyshared.cpp_round_robin_batched(sized, 4, start=0, created_at_ms=0, batching_max_allowed_size_in_bytes=100) == [0, 1, 2]


def test_java_round_robin_with_batching_follows_the_clock():
    assert spec_keyshared.java_round_robin_batched([0, 5, 10, 25], 4, start=1, partition_switch_ms=10) == [1, 1, 2, 3]
    assert spec_keyshared.java_round_robin_batched([3, 4], 4, start=0, partition_switch_ms=0) == [3, 0]


@pytest.mark.rule("PLS-ROUTE-003", "PLS-TOPIC-002")
def test_single_partition_and_partition_names():
    assert routing.single_partition(None, 5, selected=3, hashing_scheme="murmur3_32") == 3
    assert routing.single_partition("Order-3459134", 5, selected=3, hashing_scheme="murmur3_32") == 964695987 % 5
    with pytest.raises(ValueError, match="selected"):
        routing.single_partition(None, 5, selected=5, hashing_scheme="murmur3_32")
    assert names.partition_name("persistent://public/default/t", 2) == "persistent://public/default/t-partition-2"


def test_routing_with_a_scheme_router_is_exact():
    ops = [("create_topic", {"topic": "t", "partitions": 4}),
           ("create_producer", {"producer": "p1", "topic": "t", "router": {"hashing": "murmur3_32"}}),
           send("m1", "alpha"), send("m2", "gamma")]
    h = run(*ops)
    assert [e.outcome.value["message_id"][2] for e in h.events[2:]] == [1, 2]
    assert check(h).ok
    events = list(h.events)
    events[3] = replace(events[3], outcome=Outcome.ok(dict(events[3].outcome.value, message_id=[5, 0, 3, -1])))
    report = check(History(h.header, tuple(events)))
    assert ("PLS-ROUTE-001", "wrong-partition") in failures(report), report.summary()


def test_round_robin_keyless_is_judged():
    ops = [("create_topic", {"topic": "t", "partitions": 3}), ("create_producer", {"producer": "p1", "topic": "t"}),
           send("m1"), send("m2"), send("m3")]
    h = run(*ops)
    assert check(h).ok
    events = list(h.events)
    events[3] = replace(events[3], outcome=Outcome.ok(dict(events[3].outcome.value, message_id=[2, 1, 0, -1])))
    report = check(History(h.header, tuple(events)))
    assert ("PLS-ROUTE-002", "wrong-partition") in failures(report), report.summary()


# ---------------------------------------------------------------- PLS-ROUTE-004 (Java)


def test_java_producer_routes_by_its_own_hash():
    history = java_history("route-hashing-scheme-java")
    report = check(history)
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-ROUTE-004"] == "PASS"
    parts = {e.op.args["payload"]: e.outcome.value["message_id"][2] for e in history.events if e.op.op == "send"}
    assert parts == {"d1": 2, "d2": 1, "d3": 0, "m1": 1, "m2": 3, "m3": 2, "j1": 1}


def test_java_default_hash_on_the_wrong_partition_fails():
    history = java_history("route-hashing-scheme-java")
    step = next(e.step for e in history.events if e.op.op == "send" and e.op.args["payload"] == "d2")
    value = dict(history.events[step - 1].outcome.value)
    value["message_id"] = [value["message_id"][0], value["message_id"][1], 2, -1]  # the C++ JavaStringHash partition
    assert ("PLS-ROUTE-004", "wrong-partition") in failures(replace_outcome(history, step, Outcome.ok(value)))


# ---------------------------------------------------------------- Failover active consumer (PLS-FAILOVER-003/004)


def test_failover_ring_matches_live_broker_observations():
    # Measured on 4.0.8 today: consumers c1, c2 on fresh topics; which one received.
    from reference_model.routing import failover_active_consumer as pick

    def failover_active(topic, consumers):
        return pick(-1, consumers, topic=topic)

    observed = {
        "persistent://public/default/fo-6f77bb5e": "c1",
        "persistent://public/default/fo-97d26c7f": "c1",
        "persistent://public/default/fo-66109253": "c2",
        "persistent://public/default/fo-762fe6cc": "c2",
        "persistent://public/default/fo-fada61a1": "c2",
    }
    for topic, active in observed.items():
        assert failover_active(topic, ["c1", "c2"]) == active
        assert failover_active(topic, ["c2", "c1"]) == active
    with pytest.raises(ValueError, match="at least one"):
        failover_active("t", [])


@pytest.mark.rule("PLS-FAILOVER-004")
def test_failover_partitioned_sorted_by_priority_then_name():
    # connection order does not matter on a partitioned topic
    assert [failover_active_consumer(p, ["b", "c", "a"]) for p in range(5)] == ["a", "b", "c", "a", "b"]
    # k = consumers sharing the best (lowest) priority level
    prio = {"a": 1, "b": 0, "c": 0}
    assert [failover_active_consumer(p, ["a", "b", "c"], priorities=prio) for p in range(4)] == ["b", "c", "b", "c"]
    # UTF-16 order: the emoji name sorts first in Java
    assert failover_active_consumer(0, ["\uFB01", "\U0001F600"]) == "\U0001F600"


@pytest.mark.rule("PLS-FAILOVER-003")
def test_failover_non_partitioned_uses_the_ring_not_connection_order():
    # live on 4.0.8 (see test_failover_ring_matches_live_broker_observations): c2 was active although c1 connected first
    topic = "persistent://public/default/fo-66109253"
    assert failover_active_consumer(-1, ["c1", "c2"], topic=topic) == "c2"
    assert failover_active_consumer(-1, ["c2", "c1"], topic=topic) == "c2"
    # the ring only holds the best-priority consumers
    assert failover_active_consumer(-1, ["c1", "c2"], topic=topic, priorities={"c2": 5}) == "c1"
    # the broker flag activeConsumerFailoverConsistentHashing puts partitions on the ring too
    ring_pick = routing.failover_active_consumer(0, ["c1", "c2"], topic=topic, consistent_hashing=True)
    assert ring_pick == "c2"


def test_failover_refuses_bad_arguments():
    with pytest.raises(ValueError, match="consumers"):
        failover_active_consumer(0, [])
    with pytest.raises(ValueError, match="topic is required"):
        failover_active_consumer(-1, ["a"])
    with pytest.raises(ValueError, match="partition"):
        failover_active_consumer(-2, ["a"])
    with pytest.raises(ValueError, match="not connected"):
        failover_active_consumer(0, ["a"], priorities={"b": 1})


def test_failover_partitioned_active_is_sorted_p_mod_k():
    ops = [("create_topic", {"topic": "t", "partitions": 2}),
           ("subscribe", {"consumer": "cb", "topic": "t", "subscription": "s", "type": "Failover", "consumer_name": "fo-b"}),
           ("subscribe", {"consumer": "ca", "topic": "t", "subscription": "s", "type": "Failover", "consumer_name": "fo-a"}),
           ("create_producer", {"producer": "p1", "topic": "t"}), send("m1"), send("m2"),
           recv("ca"), recv("ca"), recv("cb"), recv("cb")]
    h = run(*ops)
    got = received(h)
    topics = {e.outcome.value["message"]["payload"]: e.outcome.value["message"]["topic"]
              for e in h.events if e.op.op == "receive" and e.outcome.value.get("message")}
    assert {(handle, topics[label]) for handle, label in got} == {("ca", "t-partition-0"), ("cb", "t-partition-1")}
    assert check(h).ok
