"""Hash functions Pulsar uses for keys, consumers and partitions, and the sticky key of a message.

Pulsar part: ``Murmur3_32Hash`` (apache/pulsar pulsar-common
``src/main/java/org/apache/pulsar/common/util/Murmur3_32Hash.java``; C++ ``lib/Murmur3_32Hash.cc``),
``JavaStringHash`` (apache/pulsar pulsar-client ``.../client/impl/JavaStringHash.java``; C++
``lib/JavaStringHash.cc``), the sticky key the broker reads from a message's metadata
(apache/pulsar pulsar-common ``.../common/protocol/Commands.java#peekStickyKey`` /
``resolveStickyKey``; the C++ producer copies the first message's keys into a batch's metadata in
``lib/Commands.cc#initBatchMessageMetadata``).
Rule ids: PLS-HASH-001 (murmur3 seed 0, sign bit cleared), PLS-HASH-002 (Java ``String.hashCode``
over UTF-16 units vs the C++ client's ``JavaStringHash`` over UTF-8 bytes), PLS-KEYSHARED-001
(sticky key of a message), PLS-FAILOVER-003 (the consumer hash ring ``consumer_ring_index``, which
``routing.failover_active_consumer`` uses). This module imports
no other model module: ``routing`` builds on it, never the other way round.

The steps, as the sources do them:

1. ``murmur3_32(data)`` is MurmurHash3_x86_32 with seed 0, an *unsigned* 32-bit value. Both the
   Java (``Murmur3_32Hash.makeHash``) and the C++ client (``Murmur3_32Hash::makeHash(string)``)
   then clear the sign bit: ``pulsar_murmur3(data) = murmur3_32(data) & 0x7fffffff``. Strings are
   hashed as UTF-8 bytes. The docs' example ``murmur32("Order-3459134") = 3112179635`` is the
   unsigned value; the value Pulsar works with is 964695987.
2. ``java_string_hash_code(s)`` is Java's ``String.hashCode``: ``h = 31*h + c`` over the UTF-16
   code units, as a signed 32-bit int. The Java client's ``JavaStringHash.makeHash`` is that value
   ``& 0x7fffffff``.
3. ``cpp_java_string_hash(s)`` is the C++ client's ``JavaStringHash``: the same recurrence over the
   UTF-8 *bytes* read as ``char`` (signed on x86-64, so bytes >= 0x80 are negative), in unsigned
   32-bit arithmetic, then ``& 0x7fffffff``. It equals the Java value for ASCII keys only:
   ``"é"`` is 233 in Java and 2147481670 in C++.
4. The sticky key of an entry: its ordering key if set, else its partition key (base64-decoded
   when ``partition_key_b64_encoded``), else -- broker 4.x only -- ``producerName + "-" +
   sequenceId``, else the literal bytes ``NONE_KEY`` (the docs say ``NON_KEY``). Brokers 3.0.7 and
   3.3.6 go straight to ``NONE_KEY`` (checked in the released ``pulsar-common`` jars). A batch is
   one entry: the C++ producer puts the *first* message's keys into the batch metadata, so the
   whole batch follows the first message's key.

Not modelled: ``BoostHash`` (the C++ default scheme, and the only one a Python producer can use
for keyed messages: ``create_producer`` has no ``hashing_scheme``); its value depends on the Boost
version the wheel was built with. The JVM default charset for ``String.getBytes()`` (consumer
names on the broker) is taken to be UTF-8.
Choices: pure Python; fast enough for the handful of names a trace uses.
"""

from __future__ import annotations

import base64
import binascii

INT_MAX = 0x7FFFFFFF
NONE_KEY = b"NONE_KEY"
FAILOVER_RING_POINTS = 100  # CONSUMER_CONSISTENT_HASH_REPLICAS: ring points per consumer name

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_MASK = 0xFFFFFFFF


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _mix_k1(k: int) -> int:
    k = (k * _C1) & _MASK
    k = _rotl(k, 15)
    return (k * _C2) & _MASK


def to_bytes(key: bytes | str) -> bytes:
    """A key as the bytes Pulsar hashes: ``str`` -> UTF-8 (``getBytes(UTF_8)`` / ``std::string``)."""
    if isinstance(key, str):
        return key.encode("utf-8")
    if isinstance(key, (bytes, bytearray, memoryview)):
        return bytes(key)
    raise ValueError(f"key must be str or bytes, got {type(key).__name__}")


def murmur3_32(data: bytes | str, seed: int = 0) -> int:
    """MurmurHash3_x86_32 of ``data`` (a ``str`` is hashed as UTF-8): the unsigned 32-bit value."""
    data = to_bytes(data)
    h = seed & _MASK
    n = len(data)
    blocks = n // 4
    for i in range(blocks):
        # little-endian 4-byte blocks (Java: ByteBuffer LITTLE_ENDIAN; C++: native on x86)
        h ^= _mix_k1(int.from_bytes(data[4 * i: 4 * i + 4], "little"))
        h = _rotl(h, 13)
        h = (h * 5 + 0xE6546B64) & _MASK
    tail = data[4 * blocks:]
    k = 0
    for i, b in enumerate(tail):
        k ^= b << (8 * i)
    # Java mixes the (possibly zero) tail unconditionally; mixK1(0) == 0, so it is the same.
    h ^= _mix_k1(k)
    h ^= n
    # fmix32
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    h ^= h >> 16
    return h


def pulsar_murmur3(key: bytes | str) -> int:
    """PLS-HASH-001: Pulsar's ``Murmur3_32Hash.makeHash``: ``murmur3_32(key) & 0x7fffffff``."""
    return murmur3_32(key) & INT_MAX


def to_int32(x: int) -> int:
    """Java ``int`` overflow: the signed 32-bit value of ``x``."""
    x &= _MASK
    return x - (1 << 32) if x & 0x80000000 else x


def utf16_units(s: str) -> list[int]:
    """The UTF-16 code units of ``s`` (what Java's ``String`` stores; astral chars are two units)."""
    raw = s.encode("utf-16-be", "surrogatepass")
    return [int.from_bytes(raw[i: i + 2], "big") for i in range(0, len(raw), 2)]


def java_string_hash_code(s: str) -> int:
    """PLS-HASH-002: Java ``String.hashCode()``: ``31*h + c`` over UTF-16 units, signed 32-bit."""
    h = 0
    for unit in utf16_units(s):
        h = (31 * h + unit) & _MASK
    return to_int32(h)


def java_string_hash(s: str) -> int:
    """The Java client's ``JavaStringHash.makeHash``: ``s.hashCode() & 0x7fffffff``."""
    return java_string_hash_code(s) & INT_MAX


def go_java_string_hash(key: bytes | str) -> int:
    """PLS-ROUTE-005: the Go client's ``internal.JavaStringHash`` (pulsar-client-go ``pulsar/internal/hash.go``):
    ``h = 31*h + b`` over the UTF-8 bytes read as unsigned, a ``uint32``, the sign bit **kept** (the Java and
    C++ versions clear it), so the partition ``h % N`` differs from theirs when the top bit is set and ``N``
    is not a power of two."""
    data = key.encode("utf-8") if isinstance(key, str) else key
    h = 0
    for b in data:
        h = (31 * h + b) & _MASK
    return h


def cpp_java_string_hash(key: bytes | str, *, char_is_signed: bool = True) -> int:
    """PLS-HASH-002: the C++ client's ``JavaStringHash::makeHash`` (``lib/JavaStringHash.cc``).

    ``hash = 31*hash + val[i]`` with ``uint32_t hash`` and ``const char* val`` over the UTF-8 bytes,
    then ``& INT32_MAX``. ``char`` is signed on x86-64 (the Python wheels), unsigned on ARM Linux:
    pass ``char_is_signed=False`` for an aarch64 build.
    """
    h = 0
    for b in to_bytes(key):
        c = b - 256 if (char_is_signed and b >= 0x80) else b
        h = (31 * h + c) & _MASK
    return h & INT_MAX


def sticky_key(*, ordering_key: bytes | str | None = None, partition_key: str | None = None,
               partition_key_b64_encoded: bool = False, producer_name: str | None = None,
               sequence_id: int | None = None, producer_sequence_fallback: bool = False) -> bytes:
    """PLS-KEYSHARED-001: the bytes the broker hashes to place an entry on a Key_Shared subscription.

    Ordering key, else partition key (base64-decoded if flagged), else -- when
    ``producer_sequence_fallback`` (broker 4.x, ``Commands.resolveStickyKey``) and both are known --
    ``f"{producer_name}-{sequence_id}"``, else ``NONE_KEY``. An empty key counts as set (the
    protobuf ``has_`` bit), as in Pulsar.
    """
    # step 1: the ordering key wins
    if ordering_key is not None:
        return to_bytes(ordering_key)
    # step 2: the partition key
    if partition_key is not None:
        if partition_key_b64_encoded:
            try:
                return base64.b64decode(partition_key, validate=True)
            except (ValueError, binascii.Error) as e:
                raise ValueError(f"partition_key {partition_key!r} is flagged base64 but does not decode: {e}") from None
        return to_bytes(partition_key)
    # step 3 (4.x): producer name and sequence id spread keyless messages
    if producer_sequence_fallback and producer_name is not None and sequence_id is not None:
        return f"{producer_name}-{sequence_id}".encode("utf-8")
    # step 4: the marker
    return NONE_KEY


def batch_sticky_key(messages: list[dict], *, producer_sequence_fallback: bool = False) -> bytes:
    """The sticky key of a batch entry: the first message's keys (``initBatchMessageMetadata``).

    ``messages`` are dicts with the keyword arguments of ``sticky_key``; the batch metadata also
    carries the first message's producer name and sequence id.
    """
    if not messages:
        raise ValueError("messages must hold at least one message: a batch is never empty")
    return sticky_key(**messages[0], producer_sequence_fallback=producer_sequence_fallback)


def consumer_ring_index(names: list[str], key: str) -> int:
    """PLS-FAILOVER-003: the broker's consistent-hash ring of consumer names (``makeHashRing``,
    ``peekConsumerIndexFromHashRing``): the index into ``names`` that ``key`` (a topic name) picks.

    Each name (index i) owns the points ``pulsar_murmur3(name + str(j)) -> i`` for j in 0..99
    (``TreeMap.put``: a later i overwrites a colliding point); ``key`` hashes to a point and picks
    the owner of the first point at or after it, wrapping to the lowest point.
    """
    if not names:
        raise ValueError("names must hold at least one consumer name: an empty ring picks no one")
    ring: dict[int, int] = {}
    for i, name in enumerate(names):
        for j in range(FAILOVER_RING_POINTS):
            ring[pulsar_murmur3(f"{name}{j}")] = i  # TreeMap.put: later i overwrites
    target = pulsar_murmur3(key)
    at_or_after = [p for p in ring if p >= target]
    return ring[min(at_or_after)] if at_or_after else ring[min(ring)]
