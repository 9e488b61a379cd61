"""Hashing, routing and Failover: exact vectors.

Where the vectors come from (each was computed outside this model):
- ``JAVA``: Pulsar 4.0.8's own ``org.apache.pulsar.common.util.Murmur3_32Hash.makeHash`` and
  ``String.hashCode`` run on a JVM (pulsar-common-4.0.8.jar from the suite's broker distribution).
- ``CPP``: apache/pulsar-client-cpp ``lib/JavaStringHash.cc`` (HEAD 1d08b2b3) compiled with g++
  on x86-64 and run.
- Canonical MurmurHash3_x86_32 seed-0 vectors ("hello", the quick brown fox), the Pulsar docs'
  example ``murmur32("Order-3459134") = 3112179635``.
"""

from __future__ import annotations

import pytest

from reference_model import hashing, names, routing, spec_keyshared
from reference_model.spec_keyshared import failover_active_consumer, java_string_hash, murmur3_32, partition_for_key

# key -> (Pulsar makeHash = murmur3 & 0x7fffffff, Java hashCode)          source: JAVA
JAVA = {
    "": (0, 0),
    "hello": (613153351, 99162322),
    "Order-3459134": (964695987, -1064845362),
    "The quick brown fox jumps over the lazy dog": (776992547, -609428141),
    "é": (269551495, 233),
    "key-1": (414258592, 101943363),
    "abc": (870159354, 96354),
    "a\0b": (1871496870, 93315),
    "日本語": (631534231, 25921943),
    "\U0001F600": (1051995898, 1772899),
    "c1\x000\x000": (1186414766, -1415382642),
    "consumer1\x000\x0099": (970150870, -1721072939),
}
# key -> C++ JavaStringHash::makeHash                                     source: CPP
CPP = {"": 0, "hello": 99162322, "Order-3459134": 1082638286, "é": 2147481670, "日本語": 1439989690,
       "\U0001F600": 2146910423, "key-1": 101943363}


@pytest.mark.rule("PLS-HASH-001")
def test_murmur3_unsigned_canonical_vectors():
    assert murmur3_32(b"") == 0
    assert murmur3_32("hello") == 613153351 == 0x248BFA47
    assert murmur3_32("The quick brown fox jumps over the lazy dog") == 0x2E4FF723
    assert murmur3_32("Order-3459134") == 3112179635  # the docs' number: unsigned
    assert murmur3_32("Order-3459134") & 0x7FFFFFFF == 964695987  # what Pulsar uses
    assert hashing.murmur3_32(b"hello", seed=1) != hashing.murmur3_32(b"hello")


@pytest.mark.rule("PLS-HASH-001", "PLS-HASH-002")
@pytest.mark.parametrize("key", sorted(JAVA))
def test_pulsar_murmur3_and_java_hashcode_match_the_jvm(key):
    masked, java_hash_code = JAVA[key]
    assert hashing.pulsar_murmur3(key) == masked
    assert hashing.pulsar_murmur3(key.encode("utf-8")) == masked
    assert java_string_hash(key) == java_hash_code
    assert hashing.java_string_hash(key) == java_hash_code & 0x7FFFFFFF


@pytest.mark.rule("PLS-HASH-002")
@pytest.mark.parametrize("key", sorted(CPP))
def test_cpp_java_string_hash_matches_the_compiled_client(key):
    assert hashing.cpp_java_string_hash(key) == CPP[key]


def test_cpp_and_java_string_hash_agree_on_ascii_only():
    assert hashing.cpp_java_string_hash("Order-3459134") == hashing.java_string_hash("Order-3459134")
    assert java_string_hash("é") == 233 and hashing.cpp_java_string_hash("é") == 2147481670
    # unsigned char (ARM builds): the bytes are 0xC3 0xA9 -> 31*195 + 169
    assert hashing.cpp_java_string_hash("é", char_is_signed=False) == 31 * 195 + 169


def test_utf16_units_and_java_compare():
    assert hashing.utf16_units("\U0001F600") == [0xD83D, 0xDE00]
    # Java orders by UTF-16 units: a surrogate pair (0xD83D..) sorts before U+FB01; Python does the opposite
    assert hashing.utf16_units("\U0001F600") < hashing.utf16_units("\uFB01")
    assert "\U0001F600" > "\uFB01"


@pytest.mark.rule("PLS-KEYSHARED-001")
def test_sticky_key_precedence_and_keyless_marker():
    assert hashing.sticky_key(ordering_key=b"o", partition_key="p") == b"o"
    assert hashing.sticky_key(partition_key="p") == b"p"
    assert hashing.sticky_key(partition_key="aGk=", partition_key_b64_encoded=True) == b"hi"
    assert hashing.sticky_key(producer_name="p", sequence_id=7) == b"NONE_KEY"  # 3.x
    assert hashing.sticky_key(producer_name="p", sequence_id=7, producer_sequence_fallback=True) == b"p-7"  # 4.x
    assert hashing.sticky_key(partition_key="", producer_name="p", sequence_id=7, producer_sequence_fallback=True) == b""
    batch = [{"partition_key": "first"}, {"partition_key": "second"}]
    assert hashing.batch_sticky_key(batch) == b"first"
    with pytest.raises(ValueError, match="partition_key"):
        hashing.sticky_key(partition_key="***", partition_key_b64_encoded=True)


# ---------------------------------------------------------------- routing


@pytest.mark.rule("PLS-ROUTE-001")
def test_partition_for_key_per_hashing_and_client():
    assert partition_for_key("Order-3459134", 7, hashing="murmur3_32") == 964695987 % 7
    assert partition_for_key("Order-3459134", 7, hashing="murmur3_32", client="cpp") == 964695987 % 7
    assert partition_for_key("é", 7, hashing="java_string_hash", client="java") == 233 % 7 == 2
    assert partition_for_key("é", 7, hashing="java_string_hash", client="cpp") == 2147481670 % 7 == 5
    assert partition_for_key("hello", 1, hashing="java_string_hash") == 0


def test_partition_for_key_refuses_bad_arguments():
    with pytest.raises(ValueError, match="hashing must be one of 'murmur3_32', 'java_string_hash'"):
        partition_for_key("k", 3, hashing="boost")
    with pytest.raises(ValueError, match="client must be one of 'java', 'cpp'"):
        partition_for_key("k", 3, hashing="murmur3_32", client="go")
    with pytest.raises(ValueError, match="num_partitions"):
        partition_for_key("k", 0, hashing="murmur3_32")


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


# ---------------------------------------------------------------- Failover


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
    # live on 4.0.8 (see tests/model/test_spec_and_values.py): c2 was active although c1 connected first
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
