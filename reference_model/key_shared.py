"""Key_Shared: which consumer serves which key, per broker version and selector.

Pulsar part: the broker's sticky-key consumer selectors, apache/pulsar
``pulsar-broker/src/main/java/org/apache/pulsar/broker/service/``:
``StickyKeyConsumerSelector.java`` (``DEFAULT_RANGE_SIZE = 2 << 15 = 65536``,
``STICKY_KEY_HASH_NOT_SET = 0``), ``StickyKeyConsumerSelectorUtils.java`` (4.x slot),
``ConsistentHashingStickyKeyConsumerSelector.java``, ``ConsumerNameIndexTracker.java``,
``HashRangeAutoSplitStickyKeyConsumerSelector.java``, ``HashRangeExclusiveStickyKeyConsumerSelector.java``,
``ConsumerHashAssignmentsSnapshot.java`` (reported ranges), ``DrainingHashesTracker.java``,
``PendingAcksMap.java`` and ``persistent/PersistentStickyKeyDispatcherMultipleConsumers.java`` (4.x
draining hashes); the
client side of STICKY ranges is apache/pulsar-client-cpp ``lib/KeySharedPolicy.cc``.
Rule ids: PLS-KEYSHARED-001 (sticky key, in
``hashing``), PLS-KEYSHARED-002 (slot per broker and selector), PLS-KEYSHARED-003 (consistent
hashing ring), PLS-KEYSHARED-004 (AUTO_SPLIT hash ranges), PLS-KEYSHARED-005 (STICKY ranges and
their validation), PLS-KEYSHARED-006 (4.x draining hashes).

Which code each profile follows (read in the released ``pulsar-broker`` jars from Maven Central
with ``javap``: 2.10.5, 2.11.0, 3.0.7, 3.1.0, 3.2.0, 3.2.2, 3.2.3, 3.3.2, 3.3.6, 4.0.0, 4.0.1, 4.0.7,
4.0.8, 4.2.4; releases in one row carry the same selector code; and in the source versions held
by the code index), with the upstream change that moved each row:

==============================  ===============================  ===================  ======================
releases                        ring point key                   ring collisions      key position on ring
==============================  ===============================  ===================  ======================
2.10.5, 2.11.0, 3.0.0-3.0.2,    ``name + i``                     list sorted by name, full ``h`` (31 bits)
3.1.0, 3.2.0                                                     ``list[h % len]``
3.2.1-3.2.3 (#22053)            ``name + "\\0" + i``             same as above        full ``h``
3.0.7, 3.3.2-3.3.6 (#23327)     ``name\\0nameIndex\\0i``         last one put wins    full ``h``
4.0.0 on (#23441, #23447)       ``name\\0nameIndex\\0i``         first one wins, the  ``h % 65535 + 1``
                                                                 others queue (FIFO)  (slots 1..65535)
4.x classic dispatcher          as 4.x                           as 4.x               ``h % (2^31-2) + 1``
==============================  ===============================  ===================  ======================

STICKY (``HashRangeExclusiveStickyKeyConsumerSelector``) keeps a map of range endpoints and the
3.x checks up to 4.0.6 (and 3.0.13, 3.3.8); apache/pulsar#24730 (4.0.7) keeps a map start -> range
and checks a consumer's own ranges. AUTO_SPLIT has the same code from 2.10.5 to 3.3.6 and from
4.0.0 to 4.2.4 (4.x remaps slot 0). PRs: #22053 https://github.com/apache/pulsar/pull/22053,
#23327 https://github.com/apache/pulsar/pull/23327, #23441 / #23447 (PIP-379),
#24730 https://github.com/apache/pulsar/pull/24730.

where ``h = murmur3_32(key) & 0x7fffffff`` (``hashing.pulsar_murmur3``) and the ring point of a
consumer is ``h`` of its point key made into a slot the same way as keys. The hash-range
selectors (AUTO_SPLIT with ``subscriptionKeySharedUseConsistentHashing=false``, and STICKY) use
``h % 65536``; 4.x then maps slot 0 to 1 (0 means "not set"), 3.x does not.

Consistent hashing (AUTO_SPLIT mode with the broker default ``subscriptionKeySharedUseConsistentHashing=true``,
the default of every release the suite runs: ``ServiceConfiguration`` in the 2.10.5 and 2.11.0 jars
sets it true, and the shipped standalone.conf of 2.10.1, 3.3.6 and 4.0.8 says ``=true``):

1. On join, a consumer gets ``nameIndex`` = the lowest index not used by a connected consumer
   with the same name (``ConsumerNameIndexTracker``; 3.x from 3.0.7, and 4.x), and ``points``
   (``subscriptionKeySharedConsistentHashingReplicaPoints``, default 100) ring points.
2. A point already taken: 4.x keeps the first owner and queues the newcomer; when the owner
   leaves, the first queued consumer takes over. 3.0.7/3.3.6 let the newcomer replace the owner
   (who gets the point back only by rejoining). 3.0.0/3.2.3 keep all of them in a list sorted
   by name and pick ``list[h % len]`` per key.
3. A key with slot s goes to the owner of the first point >= s, else of the lowest point.

AUTO_SPLIT hash ranges (``HashRangeAutoSplitStickyKeyConsumerSelector``, both 3.x and 4.x):

1. The state is a sorted map ``end -> consumer``; a consumer serves ``(previous end, end]``,
   the first one from 0. The first consumer gets ``{65536: c}``.
2. Join: take the biggest range, measured ``end - previous end`` (0 for the first, so the first
   range counts one slot short), ties to the lowest end; if it measures <= 1 the join fails with
   ``ConsumerAssignException("No more range can assigned to new consumer, assigned consumers N")``
   (-> ``ConsumerAssignError``); else the newcomer takes the lower half, ending at
   ``end - ((end - lower) >> 1)``.
3. Leave: the leaver's range merges into the next higher range, except when the leaver owns the
   top end (65536) and others remain: then the consumer of the next lower end takes the top end
   (its range grows upward).
4. A key with slot s goes to the owner of the first end >= s.

STICKY (``HashRangeExclusiveStickyKeyConsumerSelector``): every consumer brings its own ranges
(inclusive, within [0, 65535]); the C++ client checks them first (``validate_sticky_ranges``), the
broker refuses a consumer whose ranges are reversed or overlap another connected consumer's
(``ConsumerAssignError``). A slot no range covers goes to nobody: those messages stay in the
backlog. Brokers before apache/pulsar#24730 also give a consumer the gaps between its own ranges
(``endpoint_map_select``): a bug, the known deviation KD-201, not the rule.

Draining hashes (4.x, AUTO_SPLIT mode without ``allowOutOfOrderDelivery``; the dispatcher sets
``drainingHashesRequired`` only then, so STICKY consumers never drain), by sticky-key hash = slot:

1. After a join or leave of X, for every other consumer C and every entry C has pending (sent to C,
   not acked, not given back: ``PendingAcksMap``, receiver queues included) whose slot C served
   before and not after, the slot drains for C: its count grows by one per such entry
   (``registerDrainingHashes``, ``DrainingHashesTracker.addEntry``).
2. A message of a draining slot goes to no consumer but C (``shouldBlockStickyKeyHash``,
   ``handleAddingPendingAck``); one that goes to C itself (the slot came back) ends the draining.
   Measured on 4.0.8 (tests/live/test_key_shared_live.py): a slot that comes back to C stops
   draining at the change already, before any new message of it is sent.
3. Every removal of one of C's pending entries of that slot counts down: an ack, a redelivery
   request (nack, ack timeout, ``redeliverUnacknowledgedMessages``), C's close (``PendingAcksMap``
   calls ``reduceRefCount``); at zero the slot stops draining.

Not modelled: dispatch itself (permits, read batches, look-ahead limits, replay queue), the 3.x
"recently joined consumers" rule, priority levels of Key_Shared consumers, the Java client's own
``KeySharedPolicy`` checks, releases outside ``RELEASE_SPANS`` (3.0.3-3.0.6, 3.0.14+, 3.1.1+,
3.2.4+, 3.3.0/3.3.1, 3.3.9+, 4.1.x, 5.x).
Choices: connected consumers are ``KsConsumer(name, serial)`` values (serial = connection number)
so that equal names stay distinct, as in the broker; state is immutable, every change returns a
new state; refusals are ``Rejected`` values.
"""

from __future__ import annotations

import functools

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from typing import Hashable, Iterable, Mapping

from reference_model import releases
from reference_model.hashing import pulsar_murmur3, utf16_units
from reference_model.rejections import ModelError, Rejected

RANGE_SIZE = 2 << 15  # DEFAULT_RANGE_SIZE = 65536
STICKY_KEY_HASH_NOT_SET = 0
JAVA_INT_MAX = 0x7FFFFFFF
DEFAULT_REPLICA_POINTS = 100  # subscriptionKeySharedConsistentHashingReplicaPoints
SELECTORS = ("consistent_hashing", "auto_split", "sticky")

RULE_SLOT = "PLS-KEYSHARED-002"
RULE_RING = "PLS-KEYSHARED-003"
RULE_AUTO_SPLIT = "PLS-KEYSHARED-004"
RULE_STICKY = "PLS-KEYSHARED-005"
RULE_DRAINING = "PLS-KEYSHARED-006"


# =========================================================================== profiles


@dataclass(frozen=True)
class KeySharedProfile:
    """What differs between broker releases, as values. Code reads fields, never versions."""

    label: str
    # ring point key: "name+i" | "name\0i" | "name\0index\0i"
    ring_point_key: str
    # collisions: "sorted_list_mod" (3.0.0, 3.2.3) | "last_wins" (3.0.7, 3.3.6) | "first_wins" (4.x)
    ring_collision: str
    # slot range of the consistent-hash ring, or None: the full 31-bit hash is the position
    ring_range: tuple[int, int] | None
    # reported ranges (consumer stats keyHashRanges): "list" | "per_point" | "merged"
    ring_report: str
    # hash-range selectors: 4.x maps slot 0 to 1
    range_slot_remap_zero: bool
    # STICKY broker checks: "endpoint_map" (before apache/pulsar#24730: a map of range endpoints, 3.x
    # checks) | "range_map" (#24730, 4.0.7+: own ranges sorted and checked, a map start -> range)
    sticky_broker: str
    # keyless messages: 4.x uses producerName-sequenceId before NONE_KEY (Commands.resolveStickyKey)
    keyless_producer_sequence: bool
    # PIP-379 draining hashes (4.x default dispatcher)
    draining_hashes: bool


PROFILE_3_0_0 = KeySharedProfile(
    label="name+i ring (2.10.5, 2.11.0, 3.0.0-3.0.2, 3.1.0, 3.2.0)", ring_point_key="name+i",
    ring_collision="sorted_list_mod", ring_range=None, ring_report="list", range_slot_remap_zero=False,
    sticky_broker="endpoint_map", keyless_producer_sequence=False, draining_hashes=False)
PROFILE_3_2_3 = replace(PROFILE_3_0_0, label="name\\0i ring (3.2.1-3.2.3)", ring_point_key="name\0i")
PROFILE_3_NAME_INDEX = replace(PROFILE_3_0_0, label="name\\0index\\0i ring (3.0.7, 3.3.2-3.3.6)",
                               ring_point_key="name\0index\0i", ring_collision="last_wins", ring_report="per_point")
PROFILE_4 = KeySharedProfile(
    label="4.x (4.0.7, 4.0.8, 4.2.4)", ring_point_key="name\0index\0i", ring_collision="first_wins",
    ring_range=(1, RANGE_SIZE - 1), ring_report="merged", range_slot_remap_zero=True, sticky_broker="range_map",
    keyless_producer_sequence=True, draining_hashes=True)
# 4.0.0-4.0.6: the 4.x ring, slots and draining hashes, but STICKY still on the endpoint map
# (HashRangeExclusiveStickyKeyConsumerSelector before apache/pulsar#24730, released in 4.0.7)
PROFILE_4_0_0 = replace(PROFILE_4, label="4.0.0-4.0.6 (STICKY before #24730)", sticky_broker="endpoint_map")
# subscriptionKeySharedUseClassicPersistentImplementation=true: ring over [1, Integer.MAX_VALUE - 1]
PROFILE_4_CLASSIC = replace(PROFILE_4, label="4.x classic dispatcher", ring_range=(1, JAVA_INT_MAX - 1),
                            draining_hashes=False)
PROFILE_4_0_0_CLASSIC = replace(PROFILE_4_CLASSIC, label="4.0.0-4.0.6 classic dispatcher", sticky_broker="endpoint_map")

# Which profile each release follows: (major, minor, lowest patch, highest patch or None) -> profile.
# Every span was read in the released pulsar-broker jars (javap of the selector classes; the
# releases a span names were compared and found to carry the same selector code) and in the PRs
# that changed it (see the module docstring). A release in no span raises ValueError.
RELEASE_SPANS: tuple[tuple[int, int, int, int | None, KeySharedProfile], ...] = (
    (2, 10, 5, 5, PROFILE_3_0_0),
    (2, 11, 0, 0, PROFILE_3_0_0),
    (3, 0, 0, 2, PROFILE_3_0_0),
    (3, 0, 7, 13, PROFILE_3_NAME_INDEX),  # #23327 (release/3.0.7); #24730 reached 3.0.14
    (3, 1, 0, 0, PROFILE_3_0_0),
    (3, 2, 0, 0, PROFILE_3_0_0),
    (3, 2, 1, 3, PROFILE_3_2_3),  # #22053 (release/3.2.1)
    (3, 3, 2, 8, PROFILE_3_NAME_INDEX),  # #23327 (release/3.3.2); #24730 reached 3.3.9
    (4, 0, 0, 6, PROFILE_4_0_0),
    (4, 0, 7, None, PROFILE_4),
    (4, 2, 0, None, PROFILE_4),
)
LINE_RELEASE = releases.LINE_RELEASE


def profile_for_broker(broker: str, *, classic_dispatcher: bool = False) -> KeySharedProfile:
    """The profile for a broker release ("4.0.8") or line ("3.0", "3.3", "4.0", "4.1"), read by
    ``releases.parse``; a line stands for the release the suite runs for it (``LINE_RELEASE``:
    "3.0" -> 3.0.7, "4.1" and "4.x" -> 4.2.4), a major for its newest line.

    Releases outside ``RELEASE_SPANS`` (where the selector code changed and was not checked, e.g.
    3.0.3-3.0.6, 3.0.14+, 3.3.0/3.3.1, 4.1.x) raise ``ValueError`` rather than guess.
    """
    release = releases.parse(broker)
    if not release.is_release:
        line = release.number
        if line not in LINE_RELEASE:
            raise ValueError(f"broker {broker!r}: no Key_Shared profile for the line {line!r}; lines: "
                             f"{', '.join(LINE_RELEASE)}")
        release = releases.parse(LINE_RELEASE[line])
    major, minor, patch = release.major, release.minor, release.patch
    if classic_dispatcher and major < 4:
        raise ValueError("classic_dispatcher applies to brokers >= 4.0 only (3.x has only the classic dispatcher)")
    for span_major, span_minor, lowest, highest, profile in RELEASE_SPANS:
        if (major, minor) == (span_major, span_minor) and patch >= lowest and (highest is None or patch <= highest):
            if classic_dispatcher:
                return PROFILE_4_0_0_CLASSIC if profile is PROFILE_4_0_0 else PROFILE_4_CLASSIC
            return profile
    raise ValueError(
        f"broker {broker!r}: the Key_Shared selectors were checked for 2.10.5, 2.11.0, 3.0.0-3.0.2, 3.0.7, 3.1.0, "
        "3.2.0, 3.2.2, 3.2.3, 3.3.2, 3.3.6, 4.0.0, 4.0.1, 4.0.7, 4.0.8 and 4.2.4 (and the lines '2.10', '3.0', "
        "'3.3', '4.0', '4.x', ...); pass one of those")


# =========================================================================== slots (PLS-KEYSHARED-002)


def make_sticky_key_hash(h: int, start: int, end: int) -> int:
    """4.x ``StickyKeyConsumerSelectorUtils.makeStickyKeyHash``: ``h % size + start``, 0 -> 1."""
    value = h % (end - start + 1) + start
    return STICKY_KEY_HASH_NOT_SET + 1 if value == STICKY_KEY_HASH_NOT_SET else value


def ring_position(profile: KeySharedProfile, key: bytes | str) -> int:
    """Where ``key`` (a sticky key or a ring point key) lands on the consistent-hash ring."""
    h = pulsar_murmur3(key)
    if profile.ring_range is None:
        return h  # 3.x: select(int hash) gets the full masked hash
    return make_sticky_key_hash(h, *profile.ring_range)


def range_slot(profile: KeySharedProfile, key: bytes | str) -> int:
    """The slot a hash-range selector (AUTO_SPLIT ranges, STICKY) looks up for ``key``."""
    h = pulsar_murmur3(key)
    if profile.range_slot_remap_zero:
        return make_sticky_key_hash(h, 0, RANGE_SIZE - 1)
    return h % RANGE_SIZE  # 3.x: slot = hash % rangeSize inside select()


def slot_for(profile: KeySharedProfile, selector: str, key: bytes | str) -> int:
    """PLS-KEYSHARED-002: the sticky-key slot of ``key`` for ``selector``."""
    if selector == "consistent_hashing":
        return ring_position(profile, key)
    if selector in ("auto_split", "sticky"):
        return range_slot(profile, key)
    raise ValueError(f"selector must be one of {', '.join(repr(s) for s in SELECTORS)}; got {selector!r}")


# =========================================================================== consistent hashing


@dataclass(frozen=True, order=True)
class KsConsumer:
    """A connected consumer: its name and connection serial (equal names are distinct consumers)."""

    name: str
    serial: int

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Ring:
    """The consistent-hash ring (PLS-KEYSHARED-003).

    ``points``: sorted ``(position, consumers)``; ``consumers[0]`` serves the point (4.x: then the
    queued colliders in FIFO order; 3.0.7+: exactly one; 3.0.0/3.2.3: the sorted list).
    ``name_index``: ``(consumer, index, refcount)`` as ``ConsumerNameIndexTracker`` keeps them.
    """

    profile: KeySharedProfile
    replica_points: int = DEFAULT_REPLICA_POINTS
    points: tuple[tuple[int, tuple[KsConsumer, ...]], ...] = ()
    name_index: tuple[tuple[KsConsumer, int, int], ...] = ()
    connected: tuple[KsConsumer, ...] = ()
    next_serial: int = 1


def new_ring(profile: KeySharedProfile, replica_points: int = DEFAULT_REPLICA_POINTS) -> Ring:
    if not isinstance(replica_points, int) or replica_points < 1:
        raise ValueError(f"replica_points must be an int >= 1; got {replica_points!r}")
    return Ring(profile=profile, replica_points=replica_points)


def ring_point_key(profile: KeySharedProfile, name: str, name_index: int, i: int) -> str:
    """The string whose hash places point ``i`` of a consumer (Java string concatenation)."""
    if profile.ring_point_key == "name+i":
        return f"{name}{i}"
    if profile.ring_point_key == "name\0i":
        return f"{name}\0{i}"
    return f"{name}\0{name_index}\0{i}"


@functools.lru_cache(maxsize=65536)
def _point_position(profile: KeySharedProfile, name: str, name_index: int, i: int) -> int:
    """Ring position of point ``i`` of a consumer: a pure function, cached because every join and
    leave recomputes a consumer's ``replica_points`` positions (a checker hot spot)."""
    return ring_position(profile, ring_point_key(profile, name, name_index, i))


class _Tracker:
    """``ConsumerNameIndexTracker`` on plain dicts, used inside one ring operation only."""

    def __init__(self, entries: Iterable[tuple[KsConsumer, int, int]]):
        self.entries = {c: [idx, ref] for c, idx, ref in entries}

    def incref(self, c: KsConsumer) -> int:
        if c not in self.entries:
            used = {idx for other, (idx, _) in self.entries.items() if other.name == c.name}
            idx = 0
            while idx in used:  # lowest absent index (RoaringBitmap.nextAbsentValue(0))
                idx += 1
            self.entries[c] = [idx, 0]
        self.entries[c][1] += 1
        return self.entries[c][0]

    def decref(self, c: KsConsumer) -> None:
        entry = self.entries[c]
        entry[1] -= 1
        if entry[1] == 0:
            del self.entries[c]  # index slot freed

    def index(self, c: KsConsumer) -> int:
        return self.entries[c][0] if c in self.entries else -1

    def frozen(self) -> tuple[tuple[KsConsumer, int, int], ...]:
        return tuple(sorted((c, idx, ref) for c, (idx, ref) in self.entries.items()))


def _name_sorted(consumers: list[KsConsumer]) -> list[KsConsumer]:
    return sorted(consumers, key=lambda c: utf16_units(c.name))  # stable, Java String.compareTo


def ring_join(ring: Ring, name: str) -> tuple[Ring, KsConsumer]:
    """A consumer named ``name`` joins: its points go on the ring (step 1-2 of the module doc)."""
    profile = ring.profile
    consumer = KsConsumer(name, ring.next_serial)
    points = {pos: list(cs) for pos, cs in ring.points}
    tracker = _Tracker(ring.name_index)
    by_index = profile.ring_point_key == "name\0index\0i"
    # One incref per point; the consumer stays tracked throughout (its count never drops to 0
    # before the last point), so its index is the one the first incref gives.
    idx = tracker.incref(consumer) if by_index else 0
    if by_index:
        tracker.entries[consumer][1] += ring.replica_points - 1
    for i in range(ring.replica_points):
        pos = _point_position(profile, name, idx, i)
        existing = points.get(pos)
        if profile.ring_collision == "first_wins":
            if existing is None:
                points[pos] = [consumer]
            else:
                existing.append(consumer)  # colliding: takes over when the owner leaves
        elif profile.ring_collision == "last_wins":
            points[pos] = [consumer]  # TreeMap.put replaces
            if existing is not None:
                tracker.decref(existing[0])
        else:  # sorted_list_mod
            if existing is None:
                points[pos] = [consumer]
            elif consumer not in existing:
                points[pos] = _name_sorted(existing + [consumer])
    return (replace(ring, points=tuple(sorted((p, tuple(cs)) for p, cs in points.items())),
                    name_index=tracker.frozen(), connected=ring.connected + (consumer,),
                    next_serial=ring.next_serial + 1), consumer)


def ring_leave(ring: Ring, consumer: KsConsumer) -> Ring:
    """``consumer`` leaves: its points go (4.x: the first queued collider takes each one over)."""
    if consumer not in ring.connected:
        raise ValueError(f"consumer {consumer!r} is not connected; connected: {list(ring.connected)}")
    profile = ring.profile
    points = {pos: list(cs) for pos, cs in ring.points}
    tracker = _Tracker(ring.name_index)
    if profile.ring_collision == "sorted_list_mod":
        for i in range(ring.replica_points):
            pos = _point_position(profile, consumer.name, 0, i)
            if pos in points:
                points[pos] = [c for c in points[pos] if c != consumer]
                if not points[pos]:
                    del points[pos]
    else:
        idx = tracker.index(consumer)
        if idx > -1:
            for i in range(ring.replica_points):
                pos = _point_position(profile, consumer.name, idx, i)
                entry = points.get(pos)
                if profile.ring_collision == "first_wins":
                    if entry is None:
                        raise ModelError(f"hash ring entry wasn't found for hash {pos}")
                    if entry[0] == consumer:
                        entry = entry[1:]  # first colliding consumer is selected
                    else:
                        entry = [entry[0]] + [c for c in entry[1:] if c != consumer]
                    if entry:
                        points[pos] = entry
                    else:
                        del points[pos]
                    tracker.decref(consumer)
                elif entry == [consumer]:  # last_wins: TreeMap.remove(hash, wrapper)
                    del points[pos]
                    tracker.decref(consumer)
    return replace(ring, points=tuple(sorted((p, tuple(cs)) for p, cs in points.items())),
                   name_index=tracker.frozen(), connected=tuple(c for c in ring.connected if c != consumer))


def _position_of_point(point: tuple[int, tuple[KsConsumer, ...]]) -> int:
    return point[0]


def ring_select(ring: Ring, slot: int) -> KsConsumer | None:
    """Step 3: the consumer serving ``slot`` (None on an empty ring)."""
    if not ring.points:
        return None
    at = bisect_left(ring.points, slot, key=_position_of_point)  # no list of positions per call: a hot path
    _, consumers = ring.points[at] if at < len(ring.points) else ring.points[0]  # wrap around
    if ring.profile.ring_collision == "sorted_list_mod":
        return consumers[slot % len(consumers)]
    return consumers[0]


def ring_reported_ranges(ring: Ring) -> dict[KsConsumer, list[tuple[int, int]]]:
    """The ranges consumer stats report as ``keyHashRanges``, per consumer, inclusive.

    4.x (``ConsumerHashAssignmentsSnapshot``): the ring is cut at its points starting at 1,
    adjacent cuts of one consumer are joined, the wrap-around ``[last+1, 65535]`` goes to the
    owner of the lowest point, and each consumer's ranges are sorted and merged when adjacent.
    3.0.7/3.3.6: one range ``[previous+1, point]`` per point from 0, unmerged, and the wrap-around
    ``[last+1, 2147483646]`` appended to the lowest point's owner. 3.0.0/3.2.3: every consumer
    listed at a point gets that point's range, no wrap-around.
    """
    result: dict[KsConsumer, list[tuple[int, int]]] = {}
    if not ring.points:
        return result
    style = ring.profile.ring_report
    if style == "merged":
        for start, end, c in ring_assignments(ring):
            result.setdefault(c, []).append((start, end))
        return {c: merge_ranges(rs) for c, rs in result.items()}
    start = 0
    for pos, consumers in ring.points:
        for c in (consumers if style == "list" else consumers[:1]):
            result.setdefault(c, []).append((start, pos))
        start = pos + 1
    last = ring.points[-1][0]
    if style == "per_point" and last != JAVA_INT_MAX - 1:
        result[ring.points[0][1][0]].append((last + 1, JAVA_INT_MAX - 1))
    return result


def ring_assignments(ring: Ring) -> list[tuple[int, int, KsConsumer]]:
    """Who serves which slots: sorted ``(start, end, consumer)``, covering the whole slot range.

    For 4.x this is ``internalGetConsumerHashAssignmentsSnapshot``; for 3.0.7/3.3.6 the same cut
    of the full 31-bit range; 3.0.0/3.2.3 (list per point) have no single owner per slot and
    raise ``ValueError``.
    """
    if ring.profile.ring_collision == "sorted_list_mod":
        raise ValueError("3.0.0/3.2.3 rings pick list[h % len] per key: there is no owner per slot; use ring_select")
    if not ring.points:
        return []
    lo, hi = ring.profile.ring_range or (0, JAVA_INT_MAX - 1)
    out: list[list] = []
    start = lo
    for pos, consumers in ring.points:
        c = consumers[0]
        if out and out[-1][2] == c:
            out[-1][1] = pos  # join ranges
        else:
            out.append([start, pos, c])
        start = pos + 1
    last = ring.points[-1][0]
    first_consumer = ring.points[0][1][0]
    if last != hi:
        if out[-1][2] == first_consumer:
            out[-1][1] = hi
        else:
            out.append([last + 1, hi, first_consumer])
    return [tuple(r) for r in out]  # type: ignore[misc]


def merge_ranges(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """``ConsumerHashAssignmentsSnapshot.mergeOverlappingRanges``: sort, join overlapping/adjacent."""
    out: list[tuple[int, int]] = []
    for s, e in sorted(set(ranges)):
        if out and out[-1][1] >= s - 1:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


# =========================================================================== AUTO_SPLIT hash ranges


def _no_more_range(assigned: int) -> Rejected:
    return Rejected("ConsumerAssignError", RULE_AUTO_SPLIT,
                    f"No more range can assigned to new consumer, assigned consumers {assigned}")


@dataclass(frozen=True)
class AutoSplit:
    """``HashRangeAutoSplitStickyKeyConsumerSelector``: sorted ``(end, consumer)`` (PLS-KEYSHARED-004)."""

    range_size: int = RANGE_SIZE
    ends: tuple[tuple[int, Hashable], ...] = ()

    def __post_init__(self) -> None:
        n = self.range_size
        if n < 2 or n & (n - 1):
            raise ValueError(f"range_size must be a power of two >= 2 (the broker's check); got {n}")


def auto_split_join(state: AutoSplit, consumer: Hashable) -> AutoSplit | Rejected:
    """Step 2: split the biggest range; the newcomer takes its lower half."""
    if any(c == consumer for _, c in state.ends):
        raise ValueError(f"consumer {consumer!r} is already connected")
    if not state.ends:
        return replace(state, ends=((state.range_size, consumer),))
    biggest, slots, lower = state.range_size, 0, 0
    previous = 0
    for end, _ in state.ends:
        if end - previous > slots:  # strict: ties keep the lowest end
            slots, biggest, lower = end - previous, end, previous
        previous = end
    if biggest - lower <= 1:
        return _no_more_range(len(state.ends))
    split = biggest - ((biggest - lower) >> 1)
    return replace(state, ends=tuple(sorted(state.ends + ((split, consumer),), key=lambda ec: ec[0])))


def auto_split_leave(state: AutoSplit, consumer: Hashable) -> AutoSplit:
    """Step 3: merge into the next higher range; the top range passes to the next lower end."""
    ends = list(state.ends)
    mine = [i for i, (_, c) in enumerate(ends) if c == consumer]
    if not mine:
        return state  # consumerRange.remove(...) == null: nothing happens
    i = mine[0]
    if ends[i][0] == state.range_size and len(ends) > 1:
        _, lower_consumer = ends[i - 1]
        ends[i] = (state.range_size, lower_consumer)
        del ends[i - 1]
    else:
        del ends[i]
    return replace(state, ends=tuple(ends))


def auto_split_select(state: AutoSplit, slot: int) -> Hashable | None:
    """Step 4: the owner of the first end >= ``slot``."""
    if not state.ends:
        return None
    at = bisect_left([e for e, _ in state.ends], slot)
    if at == len(state.ends):
        raise ModelError(f"slot {slot} is above the top end {state.range_size}")
    return state.ends[at][1]


def auto_split_assignments(state: AutoSplit) -> list[tuple[int, int, Hashable]]:
    """``(start, end, consumer)`` inclusive, as reported: the top range ends at ``range_size``."""
    out, start = [], 0
    for end, c in state.ends:
        out.append((start, end, c))
        start = end + 1
    return out


# =========================================================================== STICKY ranges


CLIENT_RANGE_MAX = RANGE_SIZE - 1


def validate_sticky_ranges(ranges: list[tuple[int, int]]) -> None:
    """PLS-KEYSHARED-005, client side: ``KeySharedPolicy::setStickyRanges`` (C++), raising the
    ``ValueError`` the Python client raises, with the same text.

    Checks, in order, for each range: bounds (``first < 0 or second >= 65536``), then overlap with
    any *different* range of the list (identical duplicates and reversed ranges pass here; the
    broker refuses those).
    """
    if not ranges:
        raise ValueError("Ranges for KeyShared policy must not be empty.")
    for r in ranges:
        if r[0] < 0 or r[1] >= RANGE_SIZE:
            raise ValueError("KeySharedPolicy Exception: Ranges must be [0, 65535].")
        for r2 in ranges:
            if tuple(r) != tuple(r2) and min(r[1], r2[1]) >= max(r[0], r2[0]):
                raise ValueError("Ranges for KeyShared policy with overlap.")


@dataclass(frozen=True)
class Sticky:
    """Connected STICKY consumers and their ranges: sorted ``(start, end, consumer)``."""

    profile: KeySharedProfile
    ranges: tuple[tuple[int, int, Hashable], ...] = ()


def _sticky_reject(detail: str) -> Rejected:
    return Rejected("ConsumerAssignError", RULE_STICKY, detail)


def sticky_join(state: Sticky, consumer: Hashable, ranges: list[tuple[int, int]]) -> Sticky | Rejected:
    """PLS-KEYSHARED-005, broker side: add ``consumer`` with ``ranges`` or refuse it.

    ``range_map`` (apache/pulsar#24730, 4.0.7+; ``validateKeySharedMeta`` then ``internalAddConsumer``):
    empty; sorted by start, a reversed range ("Fixed hash range start > end for range: [s,e]") or
    overlap with the next own range ("Consumer's own ranges conflict: [a,b] overlaps with [c,d]");
    then overlap with a connected consumer ("Range conflict with consumer <consumer>").
    ``endpoint_map`` (2.10-3.3, 4.0.0-4.0.6): empty; per range in the given order: reversed ("Fixed
    hash range start > end"), or an endpoint of another consumer inside it, or it lies inside another
    consumer's range ("Range conflict with consumer <consumer>"); the consumer's own ranges are not
    compared. ``<consumer>`` is the broker's ``Consumer.toString()``; the detail here names the consumer.
    """
    if not ranges:
        return _sticky_reject("Ranges for KeyShared policy must not be empty.")
    existing = list(state.ranges)
    if state.profile.sticky_broker == "range_map":
        ordered = sorted(ranges, key=lambda r: r[0])  # stable, like List.sort
        for i, (s, e) in enumerate(ordered):
            if s > e:
                return _sticky_reject(f"Fixed hash range start > end for range: [{s},{e}]")
            if i + 1 < len(ordered):
                ns, ne = ordered[i + 1]
                if max(s, ns) <= min(e, ne):
                    return _sticky_reject(f"Consumer's own ranges conflict: [{s},{e}] overlaps with [{ns},{ne}]")
        for s, e in ranges:
            for es, ee, c in existing:
                if max(s, es) <= min(e, ee):
                    return _sticky_reject(f"Range conflict with consumer {c}")
    else:
        endpoints = _endpoints(existing)
        keys = [k for k, _ in endpoints]
        for s, e in ranges:
            if s > e:
                return _sticky_reject("Fixed hash range start > end")
            ceil_i = bisect_left(keys, s)
            floor_i = bisect_right(keys, e) - 1
            ceiling = endpoints[ceil_i] if ceil_i < len(keys) else None
            floor = endpoints[floor_i] if floor_i >= 0 else None
            if floor is not None and floor[0] >= s:
                return _sticky_reject(f"Range conflict with consumer {floor[1]}")
            if ceiling is not None and ceiling[0] <= e:
                return _sticky_reject(f"Range conflict with consumer {ceiling[1]}")
            if ceiling is not None and floor is not None and ceiling[1] == floor[1]:
                for es, ee, c in existing:
                    if c == ceiling[1] and max(s, es) <= min(e, ee):
                        return _sticky_reject(f"Range conflict with consumer {c}")
    added = existing + [(s, e, consumer) for s, e in ranges]
    return replace(state, ranges=tuple(sorted(added, key=lambda r: (r[0], r[1]))))


def _endpoints(ranges: list[tuple[int, int, Hashable]]) -> list[tuple[int, Hashable]]:
    """3.x keeps a map endpoint -> consumer (start and end of every range, later puts win)."""
    m: dict[int, Hashable] = {}
    for s, e, c in ranges:
        m[s] = c
        m[e] = c
    return sorted(m.items(), key=lambda kv: kv[0])


def sticky_leave(state: Sticky, consumer: Hashable) -> Sticky:
    return replace(state, ranges=tuple(r for r in state.ranges if r[2] != consumer))


def sticky_select(state: Sticky, slot: int) -> Hashable | None:
    """The consumer serving ``slot``: the one whose declared range contains it, or None (the
    message waits in the backlog).

    This is the documented rule and the broker's since apache/pulsar#24730 (4.0.7; 3.0.14, 3.3.9):
    ``rangeMap`` maps each range's start to (range, consumer) and ``select`` checks the range
    contains the slot. Before it (``sticky_broker == "endpoint_map"``) the broker kept only the
    endpoints and served a slot when the endpoints just below and above it belonged to one consumer,
    so the gap between two ranges of one consumer was served by it: that is the bug #24730 fixed,
    not a rule, and ``endpoint_map_select`` states it for explanations (known deviation KD-201).
    """
    for s, e, c in state.ranges:
        if s <= slot <= e:
            return c
    return None


def endpoint_map_select(state: Sticky, slot: int) -> Hashable | None:
    """What a broker before apache/pulsar#24730 serves ``slot`` to: the owner of the endpoints just
    below and above it when they belong to one consumer (its own gaps included), else None."""
    endpoints = _endpoints(list(state.ranges))
    keys = [k for k, _ in endpoints]
    ceil_i, floor_i = bisect_left(keys, slot), bisect_right(keys, slot) - 1
    if ceil_i >= len(keys) or floor_i < 0:
        return None
    return endpoints[ceil_i][1] if endpoints[ceil_i][1] == endpoints[floor_i][1] else None


# =========================================================================== the selector in effect


def owner_of(selector: str, state: Ring | AutoSplit | Sticky, profile: KeySharedProfile,
             key: bytes | str) -> Hashable | None:
    """PLS-KEYSHARED-002..005: the consumer that ``selector`` (in state ``state``) gives the sticky
    key ``key``: its slot (``slot_for``), then the ring's, AUTO_SPLIT's or STICKY's select (a
    ``KsConsumer`` on the ring, the consumer's identity otherwise); None when nobody serves it."""
    return owner_of_slot(selector, state, slot_for(profile, selector, key))


def owner_of_slot(selector: str, state: Ring | AutoSplit | Sticky, slot: int) -> Hashable | None:
    """The consumer that ``selector`` (in state ``state``) gives ``slot``: the ring's, AUTO_SPLIT's or
    STICKY's select. The 4.x draining hashes compare owners slot by slot (``ImpactedConsumersResult``)."""
    if selector == "consistent_hashing":
        return ring_select(state, slot)  # type: ignore[arg-type]
    if selector == "auto_split":
        return auto_split_select(state, slot)  # type: ignore[arg-type]
    if selector == "sticky":
        return sticky_select(state, slot)  # type: ignore[arg-type]
    raise ValueError(f"selector must be one of {', '.join(repr(s) for s in SELECTORS)}; got {selector!r}")


# =========================================================================== draining hashes (4.x)


@dataclass(frozen=True)
class DrainingHash:
    consumer: Hashable
    unacked: int


def register_draining_hashes(draining: Mapping[int, DrainingHash], *, owner_before, owner_after,
                             changed: Hashable, pending: Mapping[Hashable, Mapping[int, int]]) -> dict[int, DrainingHash]:
    """PLS-KEYSHARED-006 step 1: the draining hashes after a join or leave of ``changed``.

    ``owner_before(h)`` / ``owner_after(h)`` give the consumer serving slot ``h`` before and after;
    ``pending[c][h]`` is how many messages of slot ``h`` consumer ``c`` holds unacked. For every
    consumer ``c`` other than ``changed`` and every pending slot ``h`` that ``c`` served before and
    does not serve after, ``h`` drains for ``c`` (its count grows by ``c``'s unacked messages).
    The broker's ``registerDrainingHashes`` skips ``changed``: a joining consumer has nothing
    pending, a leaving one's messages are redelivered. A slot already draining for ``c`` counts on
    (``addEntry`` increments an existing entry of the same consumer).
    """
    out = dict(draining)
    for c, by_hash in pending.items():
        if c == changed:
            continue
        for h, count in by_hash.items():
            if count <= 0 or h == STICKY_KEY_HASH_NOT_SET:
                continue
            if owner_before(h) == c and owner_after(h) != c:
                entry = out.get(h)
                if entry is not None and entry.consumer != c:
                    raise ModelError(f"Consumer {entry.consumer} is already draining hash {h}; same hash used for {c}")
                out[h] = DrainingHash(c, (entry.unacked if entry else 0) + count)
    return out


def may_dispatch(draining: Mapping[int, DrainingHash], slot: int, consumer: Hashable) -> tuple[bool, dict[int, DrainingHash]]:
    """Step 2, ``shouldBlockStickyKeyHash``: may a message of ``slot`` go to ``consumer`` now?

    Blocked while another consumer drains the slot; if the slot is draining for ``consumer``
    itself (it came back), the entry is dropped and the message may go. Returns the answer and
    the new draining map.
    """
    entry = draining.get(slot)
    if entry is None:
        return True, dict(draining)
    if entry.consumer == consumer:
        out = dict(draining)
        del out[slot]
        return True, out
    return False, dict(draining)


def acked(draining: Mapping[int, DrainingHash], slot: int, consumer: Hashable, count: int = 1) -> dict[int, DrainingHash]:
    """Step 3, ``reduceRefCount``: ``count`` of ``consumer``'s pending entries of ``slot`` were removed
    (acked, given back for redelivery, or dropped by its close)."""
    out = dict(draining)
    entry = out.get(slot)
    if entry is None:
        return out
    if entry.consumer != consumer:
        raise ModelError(f"Consumer {entry.consumer} is already draining hash {slot}; ack came from {consumer}")
    left = entry.unacked - count
    if left <= 0:
        del out[slot]
    else:
        out[slot] = DrainingHash(consumer, left)
    return out


def consumer_closed(draining: Mapping[int, DrainingHash], consumer: Hashable) -> dict[int, DrainingHash]:
    """Step 3 for all of ``consumer``'s pending entries at once (it closes): every slot it drained
    is unblocked. The broker counts each entry down (``reduceRefCount`` with ``closing``), which
    ends every draining whose count was its pending entries of the slot."""
    return {h: e for h, e in draining.items() if e.consumer != consumer}
