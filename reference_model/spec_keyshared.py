"""The stable executable-spec API for Key_Shared, hashing, routing and Failover.

Pulsar part: where a key goes -- to which partition a producer sends it, to which Key_Shared
consumer the broker dispatches it, and which Failover consumer is active. The lead re-exports
these from ``reference_model/spec.py``.
Rule ids: PLS-HASH-001/002, PLS-ROUTE-001, PLS-KEYSHARED-002..005,
PLS-FAILOVER-003/004 (see ``hashing``, ``routing`` and ``key_shared`` for the rules step by step).

These signatures are a contract. Bad arguments raise ``ValueError`` naming the argument and the
allowed values. Broker versions are a release ("4.0.8") or a line ("3.0", "3.3", "4.0"); see
``key_shared.profile_for_broker`` for which releases were checked.

Not modelled: BoostHash (the C++/Python default routing hash), keyless messages here (use
``hashing.sticky_key``), priority levels of Key_Shared consumers, dispatch order and permits.
Choices: keys are ``str`` (a partition key, hashed as UTF-8) or ``bytes`` where noted; consumers
are names in connection order.
"""

from __future__ import annotations

from reference_model import hashing, key_shared, routing

__all__ = [
    "murmur3_32",
    "java_string_hash",
    "sticky_key_slot",
    "partition_for_key",
    "key_shared_consumer_for_keys",
    "auto_split_ranges",
    "failover_active_consumer",
    "cpp_round_robin_batched",
    "java_round_robin_batched",
]


def _selector(selector: str) -> str:
    if selector not in key_shared.SELECTORS:
        raise ValueError(f"selector must be one of {', '.join(repr(s) for s in key_shared.SELECTORS)}; got {selector!r}")
    return selector


def murmur3_32(data: bytes | str) -> int:
    """MurmurHash3_x86_32, seed 0, unsigned (a ``str`` is hashed as UTF-8).

    ``murmur3_32("hello") == 613153351``; Pulsar clears the sign bit afterwards
    (``murmur3_32("Order-3459134") == 3112179635``, Pulsar's value 964695987).
    """
    if not isinstance(data, (bytes, bytearray, str)):
        raise ValueError(f"data must be bytes or str, got {type(data).__name__}")
    return hashing.murmur3_32(data)


def java_string_hash(s: str) -> int:
    """Java ``String.hashCode()`` (UTF-16 code units, signed 32-bit): ``java_string_hash("é") == 233``.

    The Java client's ``JavaStringHash`` routes with this value ``& 0x7fffffff``; the C++ client's
    ``JavaStringHash`` hashes UTF-8 bytes instead (``hashing.cpp_java_string_hash("é") == 2147481670``).
    """
    if not isinstance(s, str):
        raise ValueError(f"s must be a str, got {type(s).__name__}")
    return hashing.java_string_hash_code(s)


def sticky_key_slot(key: str | bytes, *, broker: str, selector: str) -> int:
    """PLS-KEYSHARED-002: the slot the broker looks up for sticky key ``key``.

    ``selector``: "consistent_hashing" (AUTO_SPLIT mode, broker default), "auto_split" (AUTO_SPLIT
    with ``subscriptionKeySharedUseConsistentHashing=false``) or "sticky". Broker 4.x:
    ``h % 65535 + 1`` on the ring, ``h % 65536`` (0 -> 1) for ranges; 3.x: ``h`` on the ring,
    ``h % 65536`` for ranges; ``h = murmur3_32(key) & 0x7fffffff``.
    """
    _selector(selector)
    profile = key_shared.profile_for_broker(broker)
    return key_shared.slot_for(profile, selector, key)


def partition_for_key(key: str, num_partitions: int, *, hashing: str, client: str = "java") -> int:
    """PLS-ROUTE-001: the partition a producer sends a message with partition key ``key`` to.

    ``hashing``: "murmur3_32" or "java_string_hash"; ``client``: "java" or "cpp" (the C++ client,
    which the Python client wraps -- though Python cannot choose the hashing scheme: it always
    uses BoostHash, which is not modelled).
    """
    if hashing not in routing.HASHINGS:
        raise ValueError(f"hashing must be one of {', '.join(repr(h) for h in routing.HASHINGS)}; got {hashing!r}")
    if client not in routing.CLIENTS:
        raise ValueError(f"client must be one of {', '.join(repr(c) for c in routing.CLIENTS)}; got {client!r}")
    return routing.partition_for_key(key, num_partitions, hashing_scheme=hashing, client=client)


def key_shared_consumer_for_keys(consumers: list[str], keys: list[str], *, broker: str,
                                 selector: str = "consistent_hashing", replica_points: int = 100,
                                 sticky_ranges: dict[str, list[tuple[int, int]]] | None = None) -> dict[str, str | None]:
    """PLS-KEYSHARED-003/004/005: the consumer (name) each key is dispatched to.

    ``consumers`` joined in this order and are all connected. A consumer the broker refuses
    (AUTO_SPLIT out of ranges, a STICKY conflict) is not connected and gets nothing; STICKY ranges
    the client itself refuses raise ``ValueError`` with the client's text, as Python does. For
    "sticky" pass ``sticky_ranges`` (name -> inclusive ranges); a key whose slot no range covers
    maps to ``None`` (it stays in the backlog).
    """
    _selector(selector)
    if not isinstance(consumers, list) or not all(isinstance(c, str) for c in consumers):
        raise ValueError("consumers must be a list of consumer names (str), in connection order")
    if not isinstance(keys, list) or not all(isinstance(k, (str, bytes)) for k in keys):
        raise ValueError("keys must be a list of sticky keys (str or bytes)")
    profile = key_shared.profile_for_broker(broker)
    out: dict[str, str | None] = {}
    if selector == "consistent_hashing":
        ring = key_shared.new_ring(profile, replica_points)
        for name in consumers:
            ring, _ = key_shared.ring_join(ring, name)
        for k in keys:
            chosen = key_shared.ring_select(ring, key_shared.ring_position(profile, k))
            out[k] = None if chosen is None else chosen.name
        return out
    if selector == "auto_split":
        if len(set(consumers)) != len(consumers):
            raise ValueError("consumers must have distinct names for selector 'auto_split' (leave is by name)")
        state = key_shared.AutoSplit()
        for name in consumers:
            joined = key_shared.auto_split_join(state, name)
            if isinstance(joined, key_shared.AutoSplit):
                state = joined
        for k in keys:
            out[k] = key_shared.auto_split_select(state, key_shared.range_slot(profile, k))  # type: ignore[assignment]
        return out
    if sticky_ranges is None:
        raise ValueError("selector 'sticky' needs sticky_ranges: {consumer name: [(start, end), ...]}")
    missing = [c for c in consumers if c not in sticky_ranges]
    if missing:
        raise ValueError(f"sticky_ranges has no ranges for consumers {missing}")
    sticky = key_shared.Sticky(profile)
    for name in consumers:
        key_shared.validate_sticky_ranges(sticky_ranges[name])  # the client refuses first (ValueError)
        joined = key_shared.sticky_join(sticky, name, sticky_ranges[name])
        if isinstance(joined, key_shared.Sticky):
            sticky = joined
    for k in keys:
        out[k] = key_shared.sticky_select(sticky, key_shared.range_slot(profile, k))  # type: ignore[assignment]
    return out


def auto_split_ranges(events: list[tuple[str, str]], *, range_size: int = 65536) -> dict[str, list[tuple[int, int]]]:
    """PLS-KEYSHARED-004: inclusive ranges per consumer after ``events`` ("join"/"leave", name).

    The top range ends at ``range_size`` (as the broker reports it). A join the broker refuses
    ("No more range can assigned to new consumer") leaves the state unchanged. Same on 3.x and 4.x.
    """
    state = key_shared.AutoSplit(range_size=range_size)
    connected: set[str] = set()
    for i, ev in enumerate(events):
        if not (isinstance(ev, tuple) and len(ev) == 2 and ev[0] in ("join", "leave") and isinstance(ev[1], str)):
            raise ValueError(f"events[{i}] must be ('join', name) or ('leave', name); got {ev!r}")
        action, name = ev
        if action == "join":
            if name in connected:
                raise ValueError(f"events[{i}]: {name!r} joins while already connected")
            joined = key_shared.auto_split_join(state, name)
            if isinstance(joined, key_shared.AutoSplit):
                state = joined
                connected.add(name)
        else:
            if name not in connected:
                raise ValueError(f"events[{i}]: {name!r} leaves but is not connected")
            state = key_shared.auto_split_leave(state, name)
            connected.discard(name)
    out: dict[str, list[tuple[int, int]]] = {}
    for s, e, c in key_shared.auto_split_assignments(state):
        out.setdefault(c, []).append((s, e))  # type: ignore[arg-type]
    return out


def failover_active_consumer(partition: int, consumers: list[str], *, priorities: dict[str, int] | None = None,
                             topic: str | None = None, consistent_hashing: bool = False) -> str:
    """PLS-FAILOVER-004 / PLS-FAILOVER-003: the active consumer of a Failover subscription.

    Partition p >= 0: consumers sorted by (priority level, name in UTF-16 order), k = number with
    the best priority, active = ``sorted[p mod k]``. Non-partitioned topic (``partition=-1``), or
    ``consistent_hashing`` (broker ``activeConsumerFailoverConsistentHashing``): a hash ring of the
    k best consumers keyed by ``topic`` (required then: the full topic name, or the partition's
    name) -- not connection order.
    """
    return routing.failover_active_consumer(partition, consumers, priorities=priorities, topic=topic,
                                            consistent_hashing=consistent_hashing)


def cpp_round_robin_batched(messages: list[tuple[int, int]], num_partitions: int, *, start: int, created_at_ms: int,
                            batching_max_messages: int = routing.CPP_BATCHING_MAX_MESSAGES,
                            batching_max_allowed_size_in_bytes: int = routing.CPP_BATCHING_MAX_BYTES,
                            batching_max_publish_delay_ms: int = routing.CPP_BATCHING_MAX_DELAY_MS) -> list[int]:
    """PLS-ROUTE-002, C++ with batching: partitions for keyless ``messages`` = ``[(size_bytes, now_ms), ...]``.

    ``RoundRobinMessageRouter::getPartition``: the router starts with counters at 0 and its
    last switch at ``created_at_ms``; a message switches (``++cursor``, counters reset to this
    message) when ``count >= max_messages`` or ``size >= max_bytes - batched_bytes`` or
    ``now - last_switch >= max_delay``; otherwise it joins the current partition.
    """
    n = routing.check_partitions(num_partitions)
    if n == 1:
        return [0] * len(messages)
    cursor, count, batched, last_switch = start & routing.U32, 0, 0, created_at_ms
    out = []
    for size, now in messages:
        if (count >= batching_max_messages or size >= ((batching_max_allowed_size_in_bytes - batched) & routing.U32)
                or now - last_switch >= batching_max_publish_delay_ms):
            cursor = (cursor + 1) & routing.U32
            last_switch, batched, count = now, size, 1
        else:
            count += 1
            batched += size
        out.append(cursor % n)
    return out


def java_round_robin_batched(now_ms: list[int], num_partitions: int, *, start: int, partition_switch_ms: int) -> list[int]:
    """PLS-ROUTE-002, Java with batching: ``signSafeMod(now_ms // max(1, switch_ms) + start, N)`` per message."""
    n = routing.check_partitions(num_partitions)
    step = max(1, partition_switch_ms)
    return [routing.sign_safe_mod(t // step + start, n) for t in now_ms]
