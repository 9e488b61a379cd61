"""Which partition a producer sends a message to, and which Failover consumer is active.

Pulsar part: producer message routing (C++ ``lib/RoundRobinMessageRouter.cc``,
``lib/SinglePartitionMessageRouter.cc``, ``lib/MessageRouterBase.cc``,
``lib/ProducerConfigurationImpl.h``; Java apache/pulsar pulsar-client
``.../client/impl/RoundRobinPartitionMessageRouterImpl.java``, ``.../client/util/MathUtils.java``
``signSafeMod``), partition topic names, and the Failover active-consumer pick (apache/pulsar
pulsar-broker ``.../broker/service/AbstractDispatcherSingleActiveConsumer.java``
``pickAndScheduleActiveConsumer``, ``makeHashRing``, ``peekConsumerIndexFromHashRing``).
Rule ids: PLS-TOPIC-002 (partition names), PLS-ROUTE-001 (a keyed
message goes to ``hash(partition key) mod N``; only the partition key counts, not the ordering
key), PLS-ROUTE-002 (keyless RoundRobin: per message without batching; C++ with batching per
batch), PLS-ROUTE-003 (keyless SinglePartition: one partition for the producer's life),
PLS-FAILOVER-004 (partitioned topic: ``sorted[p mod k]``), PLS-FAILOVER-003 (non-partitioned
topic: hash ring keyed by the topic name).

Routing, step by step:

1. A message *with a partition key* goes to ``hash(key) mod N`` in every routing mode but
   custom. Java computes ``signSafeMod(makeHash(key), N)``; C++ ``makeHash(key) % N``; both hashes
   are already masked to 31 bits, so the two agree whenever the hash values agree (they differ
   for ``java_string_hash`` on non-ASCII keys, see ``hashing``). C++ RoundRobin with N == 1 is
   partition 0 without hashing.
2. A keyless message, RoundRobin (the C++/Python default mode): the router starts at a random
   cursor (C++ ``mt19937(time(nullptr))`` draw in ``[0, INT_MAX]``; Java a random start index),
   here the parameter ``start``. Without batching (Python's default): message i goes to
   ``(start + i) mod N`` (C++ cursor is ``uint32_t``, Java ``int`` with ``signSafeMod``). With
   batching the C++ router stays on a partition and advances the cursor when the message count
   reached ``batching_max_messages``, or the message does not fit the remaining batch bytes, or
   ``batching_max_publish_delay_ms`` elapsed since the last switch; the Java router uses wall
   time: ``(now_ms // partitionSwitchMs + start) mod N``. Clock readings are parameters.
3. A keyless message, SinglePartition: the partition drawn once when the producer was created
   (parameter ``selected``).
4. Partition i of topic T is ``T-partition-i``.

Failover active consumer (every checked release: 3.0.0, 3.0.7, 3.2.3, 3.3.6, 4.0.8):

1. Sort the connected consumers by ``priorityLevel`` ascending, then ``consumerName`` by Java
   ``String.compareTo`` (UTF-16 code units); the sort is stable, so equal names keep connection
   order. Let k be the number of consumers sharing the best priority level.
2. Partition p >= 0 (and broker ``activeConsumerFailoverConsistentHashing=false``, the default):
   active = ``sorted[p mod k]``.
3. Non-partitioned topic (p = -1), or the flag set: a ring with, for each of the first k sorted
   consumers (index i) and j in 0..99, the point ``murmur3(name + str(j)) & 0x7fffffff`` -> i
   (``TreeMap.put``: a later i overwrites a colliding point); the active consumer owns the first
   point >= ``murmur3(topic name as UTF-8) & 0x7fffffff``, wrapping to the lowest point. The topic
   name is the dispatcher's topic: the full name, the partition's own name for a partition.
   This is *not* "first in connection order" (docs, research notes section 5.2): see PLS-FAILOVER-001
   (withdrawn) and the 3.0.0 jar, which already has ``makeHashRing``.

Not modelled: ``BoostHash`` (C++ default hashing scheme; a Python producer cannot choose another,
so Python keyed routing is not predictable here); custom routers; the Java
``partitionSwitchMs`` derivation from the batching delay; Java ``int`` overflow in the priority
comparator (``p1 - p2``) for extreme priority levels; ``activeConsumerFailoverDelayTimeMillis``
(when a switch takes effect).
Choices: random draws (start cursor, single partition) are parameters; time is a parameter.
"""

from __future__ import annotations

from reference_model import hashing

HASHINGS = ("murmur3_32", "java_string_hash")
CLIENTS = ("java", "cpp", "go")
FAILOVER_RING_POINTS = hashing.FAILOVER_RING_POINTS  # CONSUMER_CONSISTENT_HASH_REPLICAS
U32 = 0xFFFFFFFF

# C++ ProducerConfigurationImpl.h defaults (also the Python create_producer defaults, except
# batching_enabled, which Python 3.13 turns off).
CPP_BATCHING_MAX_MESSAGES = 1000
CPP_BATCHING_MAX_BYTES = 128 * 1024
CPP_BATCHING_MAX_DELAY_MS = 10


# --------------------------------------------------------------------------- arguments


def _check_choice(name: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(repr(a) for a in allowed)}; got {value!r}")
    return value


def check_partitions(num_partitions: int) -> int:
    if not isinstance(num_partitions, int) or isinstance(num_partitions, bool) or num_partitions < 1:
        raise ValueError(f"num_partitions must be an int >= 1 (a partitioned topic); got {num_partitions!r}")
    return num_partitions


def sign_safe_mod(dividend: int, divisor: int) -> int:
    """Java ``MathUtils.signSafeMod``: ``dividend % divisor`` shifted into ``[0, divisor)``.

    Java's ``%`` truncates toward zero; Python's already floors, which gives the same result for a
    positive divisor.
    """
    if divisor <= 0:
        raise ValueError(f"divisor must be positive, got {divisor}")
    return dividend % divisor


# --------------------------------------------------------------------------- keyed messages


def key_hash(key: str, *, hashing_scheme: str, client: str = "java") -> int:
    """The (31-bit) hash a producer routes ``key`` with (PLS-ROUTE-001)."""
    _check_choice("hashing", hashing_scheme, HASHINGS)
    _check_choice("client", client, CLIENTS)
    if not isinstance(key, str):
        raise ValueError(f"key must be a str (a partition key), got {type(key).__name__}")
    if hashing_scheme == "murmur3_32":
        return hashing.pulsar_murmur3(key)  # every client hashes the UTF-8 bytes (Go masks it too)
    if client == "java":
        return hashing.java_string_hash(key)  # UTF-16 units
    if client == "go":
        return hashing.go_java_string_hash(key)  # UTF-8 bytes as unsigned, 32 bits (PLS-ROUTE-005)
    return hashing.cpp_java_string_hash(key)  # UTF-8 bytes as signed char


def partition_for_key(key: str, num_partitions: int, *, hashing_scheme: str, client: str = "java") -> int:
    """PLS-ROUTE-001: the partition of a message with partition key ``key``."""
    n = check_partitions(num_partitions)
    h = key_hash(key, hashing_scheme=hashing_scheme, client=client)
    if client == "java":
        return sign_safe_mod(h, n)
    return h % n  # C++: hash already masked to 31 bits; Go: uint32 % N


# --------------------------------------------------------------------------- keyless messages


def round_robin_partitions(num_messages: int, num_partitions: int, *, start: int, client: str = "cpp") -> list[int]:
    """PLS-ROUTE-002 without batching: the partitions of ``num_messages`` keyless messages.

    ``start`` is the router's random initial cursor. C++: ``uint32_t`` cursor, ``cursor++ % N``
    (and always 0 when N == 1); Java: ``int`` counter, ``signSafeMod(counter++, N)``.
    """
    n = check_partitions(num_partitions)
    _check_choice("client", client, CLIENTS)
    if num_messages < 0:
        raise ValueError(f"num_messages must be >= 0, got {num_messages}")
    out = []
    for i in range(num_messages):
        if client in ("cpp", "go"):  # Go: uint32 cursor, cursor % N (pulsar/default_router.go, batching off)
            out.append(0 if n == 1 else ((start + i) & U32) % n)
        else:
            out.append(sign_safe_mod(hashing.to_int32(start + i), n))
    return out


def single_partition(key: str | None, num_partitions: int, *, selected: int, hashing_scheme: str,
                     client: str = "cpp") -> int:
    """PLS-ROUTE-003: SinglePartition mode: keyed -> ``partition_for_key``; keyless -> ``selected``."""
    n = check_partitions(num_partitions)
    if not 0 <= selected < n:
        raise ValueError(f"selected must be a partition index in [0, {n}); got {selected}")
    if key is not None:
        return partition_for_key(key, n, hashing_scheme=hashing_scheme, client=client)
    return selected


# --------------------------------------------------------------------------- Failover


def failover_sorted(consumers: list[str], priorities: dict[str, int] | None = None) -> list[tuple[str, int]]:
    """Step 1: consumers (connection order) sorted by (priority level, UTF-16 name), stably."""
    prio = priorities or {}
    return sorted(((c, int(prio.get(c, 0))) for c in consumers),
                  key=lambda cp: (cp[1], hashing.utf16_units(cp[0])))


def failover_ring_index(names: list[str], topic: str) -> int:
    """Step 3: index into ``names`` (the sorted best-priority consumers) that the topic's hash picks
    (the ring itself is ``hashing.consumer_ring_index``)."""
    return hashing.consumer_ring_index(names, topic)


def failover_active_consumer(partition: int, consumers: list[str], *, priorities: dict[str, int] | None = None,
                             topic: str | None = None, consistent_hashing: bool = False) -> str:
    """PLS-FAILOVER-004 / PLS-FAILOVER-003: the active consumer of a Failover subscription.

    ``partition`` is the partition index (-1: non-partitioned topic); ``consumers`` are consumer
    names in connection order. The ring (non-partitioned topic, or ``consistent_hashing`` = the
    broker's ``activeConsumerFailoverConsistentHashing``) needs ``topic``, the name the broker's
    dispatcher carries: the full topic name (``persistent://tenant/ns/t``), or the partition's name.
    """
    if not consumers:
        raise ValueError("consumers must name at least one connected consumer")
    if not isinstance(partition, int) or partition < -1:
        raise ValueError(f"partition must be -1 (non-partitioned) or a partition index >= 0; got {partition!r}")
    if priorities is not None:
        unknown = sorted(set(priorities) - set(consumers))
        if unknown:
            raise ValueError(f"priorities names consumers that are not connected: {unknown}; consumers: {consumers}")
    ordered = failover_sorted(consumers, priorities)
    best = ordered[0][1]
    k = sum(1 for _, p in ordered if p == best)
    if partition >= 0 and not consistent_hashing:
        return ordered[partition % k][0]
    if not topic:
        raise ValueError("topic is required when the ring decides (partition -1 or consistent_hashing=True): "
                         "pass the full topic name, e.g. 'persistent://public/default/t' (or 't-partition-0')")
    names = [c for c, _ in ordered[:k]]
    return names[failover_ring_index(names, topic)]
