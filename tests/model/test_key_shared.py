"""Chapter key_shared.py: Key_Shared selectors per release, exact vectors (PLS-KEYSHARED-002..006).

External vectors: the Pulsar docs (AUTO_SPLIT diagram, ``Order-3459134``), the upstream unit test
``HashRangeAutoSplitStickyKeyConsumerSelectorTest`` (range 64), the ring point hash of ``c1``
computed by Pulsar 4.0.8's ``Murmur3_32Hash`` on a JVM, and consumer stats / deliveries observed
on a live 4.0.8 broker (subscription with consumers c1, c2, c3 joined in that order).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from reference_model import hashing, key_shared as ks
from reference_model.rejections import Rejected
from reference_model.spec_keyshared import auto_split_ranges, key_shared_consumer_for_keys, sticky_key_slot


def _ring(profile, names, points=100):
    ring = ks.new_ring(profile, points)
    members = []
    for n in names:
        ring, m = ks.ring_join(ring, n)
        members.append(m)
    return ring, members


# ---------------------------------------------------------------- slots (PLS-KEYSHARED-002)


@pytest.mark.rule("PLS-KEYSHARED-002")
def test_slot_of_the_docs_example_per_broker_and_selector():
    key = "Order-3459134"  # murmur3 3112179635 unsigned, 964695987 masked
    assert sticky_key_slot(key, broker="4.0", selector="consistent_hashing") == 964695987 % 65535 + 1 == 20788
    assert sticky_key_slot(key, broker="4.0.8", selector="auto_split") == 6067
    assert sticky_key_slot(key, broker="4.0", selector="sticky") == 6067
    assert sticky_key_slot(key, broker="3.0", selector="auto_split") == 3112179635 % 65536 == 6067
    assert sticky_key_slot(key, broker="3.3", selector="consistent_hashing") == 964695987
    assert sticky_key_slot(b"Order-3459134", broker="3.0.0", selector="consistent_hashing") == 964695987


def test_slot_zero_is_remapped_on_4x_only():
    assert ks.make_sticky_key_hash(5 * 65536, 0, 65535) == 1
    assert ks.make_sticky_key_hash(65535 * 3 - 1, 1, 65535) == 65535
    assert ks.make_sticky_key_hash(65535 * 3, 1, 65535) == 1
    p3 = ks.profile_for_broker("3.3")
    assert not p3.range_slot_remap_zero and ks.PROFILE_4.range_slot_remap_zero


def test_profiles_by_broker_version():
    assert ks.profile_for_broker("4.0.8") is ks.PROFILE_4
    assert ks.profile_for_broker("4.0.7") is ks.PROFILE_4
    assert ks.profile_for_broker("4.2.4") is ks.PROFILE_4
    assert ks.profile_for_broker("4.1") is ks.PROFILE_4
    assert ks.profile_for_broker("4.0", classic_dispatcher=True).ring_range == (1, 2**31 - 2)
    assert ks.profile_for_broker("3.0") is ks.PROFILE_3_NAME_INDEX
    for name_index in ("3.0.7", "3.3.2", "3.3.6"):
        assert ks.profile_for_broker(name_index) is ks.PROFILE_3_NAME_INDEX
    for name_plus_i in ("2.10.5", "2.11.0", "3.0.0", "3.0.2", "3.1.0", "3.2.0", "2.10", "2.x"):
        assert ks.profile_for_broker(name_plus_i) is ks.PROFILE_3_0_0
    assert ks.profile_for_broker("3.2.2") is ks.profile_for_broker("3.2.3") is ks.PROFILE_3_2_3
    # 4.0.0-4.0.6: the 4.x ring with the STICKY endpoint map of before apache/pulsar#24730
    for v in ("4.0.0", "4.0.1"):
        p = ks.profile_for_broker(v)
        assert p is ks.PROFILE_4_0_0 and p.sticky_broker == "endpoint_map" and p.ring_collision == "first_wins"
    assert ks.profile_for_broker("4.0.1", classic_dispatcher=True).sticky_broker == "endpoint_map"
    for unchecked in ("3.0.5", "3.0.14", "3.1.2", "3.3.0", "3.3.9", "4.1.0", "5.0.0", "x.y"):
        with pytest.raises(ValueError, match="broker"):
            ks.profile_for_broker(unchecked)


# ---------------------------------------------------------------- consistent hashing (PLS-KEYSHARED-003)


# Live 4.0.8: consumer stats keyHashRangeArrays (first four and last two ranges, and counts).
LIVE_RANGES = {
    "c1": ([(1, 1031), (1479, 1870), (2083, 2137), (2185, 2409)], [(64477, 64838), (65132, 65535)], 72),
    "c2": ([(1032, 1424), (1998, 2082), (2410, 2959), (3727, 3987)], [(61609, 62388), (63541, 64399)], 59),
    "c3": ([(1425, 1478), (1871, 1997), (2138, 2184), (3434, 3619)], [(64400, 64476), (64839, 65131)], 66),
}
# Live 4.0.8: key -> consumer that received it (partition_key, batching off).
LIVE_KEYS = {"k0": "c1", "k3": "c1", "k7": "c1", "k14": "c1", "k2": "c2", "k9": "c2", "k16": "c2",
             "k1": "c3", "k4": "c3", "k5": "c3", "k59": "c3"}


@pytest.mark.rule("PLS-KEYSHARED-003")
def test_4x_ring_matches_live_broker_ranges_and_deliveries():
    ring, (c1, _, c3) = _ring(ks.PROFILE_4, ["c1", "c2", "c3"])
    assert dict(ring.points)[34919] == (c1, c3)  # a collision: the broker's ranges show c1 (first) serving it
    reported = {str(c): rs for c, rs in ks.ring_reported_ranges(ring).items()}
    for name, (head, tail, count) in LIVE_RANGES.items():
        assert reported[name][:4] == head and reported[name][-2:] == tail and len(reported[name]) == count
    assert key_shared_consumer_for_keys(["c1", "c2", "c3"], list(LIVE_KEYS), broker="4.0.8") == LIVE_KEYS


def test_4x_ring_point_formula():
    ring, (c1,) = _ring(ks.PROFILE_4, ["c1"])
    # murmur3("c1\0" "0" "\0" "0") & 0x7fffffff = 1186414766 (JVM) -> slot 1186414766 % 65535 + 1
    assert ks.ring_point_key(ks.PROFILE_4, "c1", 0, 0) == "c1\x000\x000"
    assert (34662, (c1,)) in ring.points and 1186414766 % 65535 + 1 == 34662
    assert len(ring.points) == 100


def test_ring_assignments_cover_the_slot_range_once():
    ring, _ = _ring(ks.PROFILE_4, ["a", "b", "c", "d"])
    cuts = ks.ring_assignments(ring)
    assert cuts[0][0] == 1 and cuts[-1][1] == 65535
    assert all(cuts[i][1] + 1 == cuts[i + 1][0] for i in range(len(cuts) - 1))
    assert all(cuts[i][2] != cuts[i + 1][2] for i in range(len(cuts) - 1))  # adjacent cuts joined
    for s, e, c in cuts[:20]:
        assert ks.ring_select(ring, s) == c and ks.ring_select(ring, e) == c


def test_select_wraps_to_the_lowest_point():
    ring, _ = _ring(ks.PROFILE_4, ["a", "b"])
    last_pos, lowest = ring.points[-1][0], ring.points[0][1][0]
    if last_pos < 65535:
        assert ks.ring_select(ring, last_pos + 1) == lowest
    assert ks.ring_select(ks.new_ring(ks.PROFILE_4), 5) is None


def test_equal_names_get_the_lowest_free_name_index():
    ring, (d1, d2, x) = _ring(ks.PROFILE_4, ["dup", "dup", "x"])
    index = {c: i for c, i, _ in ring.name_index}
    assert (index[d1], index[d2], index[x]) == (0, 1, 0)
    assert dict((c, ref) for c, _, ref in ring.name_index)[d1] == 100  # one reference per point
    ring = ks.ring_leave(ring, d1)
    ring, d3 = ks.ring_join(ring, "dup")
    assert {c: i for c, i, _ in ring.name_index}[d3] == 0  # index 0 reused
    fresh, (e1, _, _) = _ring(ks.PROFILE_4, ["dup", "dup", "x"])
    owners = lambda r: [(p, tuple(c.name for c in cs)) for p, cs in r.points]  # noqa: E731
    assert owners(ring) == owners(fresh)  # rejoin restores the same ring


def _colliding_names(profile, points=100):
    """Two names whose ring points collide (cheap on a 65535-slot ring)."""
    first = {ks.ring_position(profile, ks.ring_point_key(profile, "a", 0, i)) for i in range(points)}
    for n in range(10_000):
        name = f"n{n}"
        for i in range(points):
            pos = ks.ring_position(profile, ks.ring_point_key(profile, name, 0, i))
            if pos in first:
                return name, pos
    raise AssertionError("no collision found")


@pytest.mark.rule("PLS-KEYSHARED-003")
def test_4x_collision_first_owner_keeps_the_point_then_fifo():
    name, pos = _colliding_names(ks.PROFILE_4)
    ring, (a, b) = _ring(ks.PROFILE_4, ["a", name])
    assert dict(ring.points)[pos] == (a, b)
    assert ks.ring_select(ring, pos) == a
    ring = ks.ring_leave(ring, a)
    assert dict(ring.points)[pos] == (b,)  # the queued consumer takes over
    ring = ks.ring_leave(ring, b)
    assert ring.points == () and ring.name_index == ()


def test_3x_collision_last_put_wins_and_is_not_given_back():
    synthetic = replace(ks.PROFILE_3_NAME_INDEX, ring_range=(1, 65535))  # small ring to find a collision
    name, pos = _colliding_names(synthetic)
    ring, (a, b) = _ring(synthetic, ["a", name])
    assert dict(ring.points)[pos] == (b,)
    assert dict((c, ref) for c, _, ref in ring.name_index)[a] == 99  # a lost one point
    ring = ks.ring_leave(ring, b)
    assert pos not in dict(ring.points)  # a does not get it back


def test_3_0_0_ring_uses_name_plus_i_and_a_sorted_list():
    assert ks.ring_point_key(ks.PROFILE_3_0_0, "consumer1", 0, 11) == ks.ring_point_key(ks.PROFILE_3_0_0, "consumer11", 0, 1)
    # issue #22050: those two consumers share points; the list is sorted by name and picked by h % len
    ring, (c11, c1) = _ring(ks.PROFILE_3_0_0, ["consumer11", "consumer1"])
    shared = [cs for _, cs in ring.points if len(cs) == 2]
    assert shared and all(cs == (c1, c11) for cs in shared)  # sorted by name, not by join order
    pos = next(p for p, cs in ring.points if len(cs) == 2)
    assert ks.ring_select(ring, pos) == (c1, c11)[pos % 2]
    assert ks.ring_point_key(ks.PROFILE_3_2_3, "consumer1", 0, 11) == "consumer1\x0011"


def test_3x_reported_ranges_are_per_point_with_the_wrap_on_the_first_owner():
    ring, (a, b) = _ring(ks.PROFILE_3_NAME_INDEX, ["a", "b"], points=3)
    reported = ks.ring_reported_ranges(ring)
    assert sum(len(v) for v in reported.values()) == 7  # 6 points + the wrap-around range
    first_owner = ring.points[0][1][0]
    assert reported[first_owner][-1] == (ring.points[-1][0] + 1, 2**31 - 2)
    assert reported[first_owner][0] == (0, ring.points[0][0])


# ---------------------------------------------------------------- AUTO_SPLIT (PLS-KEYSHARED-004)


@pytest.mark.rule("PLS-KEYSHARED-004")
def test_auto_split_docs_diagram():
    joins = [("join", f"C{i}") for i in range(1, 5)]
    assert auto_split_ranges(joins[:1]) == {"C1": [(0, 65536)]}
    assert auto_split_ranges(joins[:2]) == {"C2": [(0, 32768)], "C1": [(32769, 65536)]}
    assert auto_split_ranges(joins[:3]) == {"C3": [(0, 16384)], "C2": [(16385, 32768)], "C1": [(32769, 65536)]}
    assert auto_split_ranges(joins) == {"C3": [(0, 16384)], "C2": [(16385, 32768)],
                                        "C4": [(32769, 49152)], "C1": [(49153, 65536)]}


def test_auto_split_upstream_unit_test_range_64():
    joins = [("join", f"consumer{i}") for i in range(1, 5)]
    assert auto_split_ranges(joins, range_size=64) == {"consumer3": [(0, 16)], "consumer2": [(17, 32)],
                                                        "consumer4": [(33, 48)], "consumer1": [(49, 64)]}


def test_auto_split_leave_merges_up_except_the_top_range():
    joins = [("join", f"C{i}") for i in range(1, 5)]
    # C1 owns the top end: its lower neighbour C4 takes it (range grows upward)
    assert auto_split_ranges(joins + [("leave", "C1")]) == {"C3": [(0, 16384)], "C2": [(16385, 32768)], "C4": [(32769, 65536)]}
    # a middle range merges into the next higher one
    assert auto_split_ranges(joins + [("leave", "C2")]) == {"C3": [(0, 16384)], "C4": [(16385, 49152)], "C1": [(49153, 65536)]}
    # the next join splits the biggest range again (ties: lowest end)
    assert auto_split_ranges(joins + [("leave", "C2"), ("join", "C5")])["C5"] == [(16385, 32768)]


def test_auto_split_runs_out_of_ranges():
    state = ks.AutoSplit(range_size=4)
    for name in "ABCD":
        state = ks.auto_split_join(state, name)
    assert [(s, e, c) for s, e, c in ks.auto_split_assignments(state)] == [(0, 1, "C"), (2, 2, "B"), (3, 3, "D"), (4, 4, "A")]
    refused = ks.auto_split_join(state, "E")
    assert refused == Rejected("ConsumerAssignError", "PLS-KEYSHARED-004",
                               "No more range can assigned to new consumer, assigned consumers 4")
    assert auto_split_ranges([("join", n) for n in "ABCDE"], range_size=4).get("E") is None


def test_auto_split_bad_events():
    with pytest.raises(ValueError, match="events\\[0\\]"):
        auto_split_ranges([("add", "C1")])
    with pytest.raises(ValueError, match="not connected"):
        auto_split_ranges([("leave", "C1")])
    with pytest.raises(ValueError, match="already connected"):
        auto_split_ranges([("join", "C1"), ("join", "C1")])
    with pytest.raises(ValueError, match="power of two"):
        auto_split_ranges([], range_size=100)


def test_auto_split_dispatch_by_slot():
    keys = ["Order-3459134", "a", "b", "c"]
    got = key_shared_consumer_for_keys(["C1", "C2", "C3", "C4"], keys, broker="4.0", selector="auto_split")
    assert got["Order-3459134"] == "C3"  # slot 6067 is in [0, 16384]


# ---------------------------------------------------------------- STICKY (PLS-KEYSHARED-005)


@pytest.mark.rule("PLS-KEYSHARED-005")
@pytest.mark.parametrize("ranges, message", [
    ([], "Ranges for KeyShared policy must not be empty."),
    ([(0, 65536)], "KeySharedPolicy Exception: Ranges must be [0, 65535]."),
    ([(-1, 5)], "KeySharedPolicy Exception: Ranges must be [0, 65535]."),
    ([(0, 10), (5, 20)], "Ranges for KeyShared policy with overlap."),
    ([(10, 5)], None),             # reversed: the client lets it through, the broker refuses
    ([(0, 10), (0, 10)], None),    # identical duplicates: the client's overlap check skips them
    ([(5, -1)], None),
])
def test_sticky_client_validation(ranges, message):
    if message is None:
        ks.validate_sticky_ranges(ranges)
    else:
        with pytest.raises(ValueError) as err:
            ks.validate_sticky_ranges(ranges)
        assert str(err.value) == message


def test_sticky_broker_refusals_4x():
    state = ks.sticky_join(ks.Sticky(ks.PROFILE_4), "low", [(0, 20000)])
    assert isinstance(state, ks.Sticky)
    assert ks.sticky_join(state, "b", [(100, 200)]).detail == "Range conflict with consumer low"
    assert ks.sticky_join(state, "b", [(30000, 30010), (10, 5)]).detail == "Fixed hash range start > end for range: [10,5]"
    dup = ks.sticky_join(ks.Sticky(ks.PROFILE_4), "d", [(0, 100), (0, 100)])
    assert dup.detail == "Consumer's own ranges conflict: [0,100] overlaps with [0,100]"
    assert ks.sticky_join(ks.Sticky(ks.PROFILE_4), "e", []).detail == "Ranges for KeyShared policy must not be empty."


def test_sticky_broker_3x_accepts_own_duplicates_and_no_release_serves_own_gaps():
    p3 = ks.profile_for_broker("3.3")
    assert isinstance(ks.sticky_join(ks.Sticky(p3), "d", [(0, 100), (0, 100)]), ks.Sticky)
    assert ks.sticky_join(ks.Sticky(p3), "r", [(10, 5)]).detail == "Fixed hash range start > end"
    gappy3 = ks.sticky_join(ks.Sticky(p3), "a", [(0, 10), (20, 30)])
    gappy4 = ks.sticky_join(ks.Sticky(ks.PROFILE_4), "a", [(0, 10), (20, 30)])
    # The rule (apache/pulsar#24730): no range contains 15, so nobody gets it, on every release.
    assert ks.sticky_select(gappy3, 15) is None and ks.sticky_select(gappy4, 15) is None
    # Before #24730 the endpoint map served a's own gap to a (KD-201): endpoints 10 and 20 are a's.
    assert ks.endpoint_map_select(gappy3, 15) == "a"
    assert ks.sticky_join(gappy3, "b", [(3, 4)]).detail == "Range conflict with consumer a"  # inside a's range
    in_gap = ks.sticky_join(gappy3, "b", [(12, 14)])  # inside a's gap: accepted
    assert isinstance(in_gap, ks.Sticky) and ks.sticky_select(in_gap, 13) == "b" and ks.sticky_select(in_gap, 15) is None
    assert ks.endpoint_map_select(in_gap, 15) is None  # b's endpoints split the gap


def test_sticky_uncovered_slots_and_slot_zero():
    state = ks.sticky_join(ks.Sticky(ks.PROFILE_4), "z", [(0, 0)])
    assert ks.sticky_select(state, 1) is None  # 4.x never produces slot 0: [0, 0] gets nothing
    got = key_shared_consumer_for_keys(["low", "high"], ["Order-3459134"], broker="4.0", selector="sticky",
                                       sticky_ranges={"low": [(0, 100)], "high": [(40000, 65535)]})
    assert got == {"Order-3459134": None}  # slot 6067 is nobody's


# ---------------------------------------------------------------- draining hashes (PLS-KEYSHARED-006)


@pytest.mark.rule("PLS-KEYSHARED-006")
def test_draining_hashes_after_a_join():
    before, (c1, c2) = _ring(ks.PROFILE_4, ["c1", "c2"])
    after, c3 = ks.ring_join(before, "c3")
    moved = next(s for s, e, c in ks.ring_assignments(after) if c == c3)  # a slot c3 took
    old_owner = ks.ring_select(before, moved)
    kept = next(s for s, e, c in ks.ring_assignments(after) if c == old_owner)
    pending = {old_owner: {moved: 2, kept: 1}}
    draining = ks.register_draining_hashes({}, owner_before=lambda h: ks.ring_select(before, h),
                                           owner_after=lambda h: ks.ring_select(after, h), changed=c3, pending=pending)
    assert draining == {moved: ks.DrainingHash(old_owner, 2)}  # the kept slot does not drain
    ok, draining = ks.may_dispatch(draining, moved, c3)
    assert not ok
    draining = ks.acked(draining, moved, old_owner)
    assert not ks.may_dispatch(draining, moved, c3)[0]
    draining = ks.acked(draining, moved, old_owner)
    assert draining == {} and ks.may_dispatch(draining, moved, c3)[0]


def test_draining_hash_unblocks_when_the_owner_closes_or_gets_it_back():
    d = {7: ks.DrainingHash("x", 3)}
    assert ks.consumer_closed(d, "x") == {}
    ok, d2 = ks.may_dispatch(d, 7, "x")
    assert ok and d2 == {}
    # the leaving consumer itself is skipped: its messages are redelivered, not drained
    assert ks.register_draining_hashes({}, owner_before=lambda h: "x", owner_after=lambda h: "y", changed="x",
                                       pending={"x": {7: 1}}) == {}


def test_keyless_messages_differ_between_3x_and_4x():
    ring, _ = _ring(ks.PROFILE_4, ["c1", "c2", "c3"])
    owners = {ks.owner_of("consistent_hashing", ring, ring.profile, hashing.sticky_key(producer_name="p", sequence_id=s, producer_sequence_fallback=True)).name
              for s in range(30)}
    assert len(owners) > 1  # 4.x spreads keyless messages ("p-<seq>")
    ring3, _ = _ring(ks.PROFILE_3_NAME_INDEX, ["c1", "c2", "c3"])
    owners3 = {ks.owner_of("consistent_hashing", ring3, ring3.profile, hashing.sticky_key(producer_name="p", sequence_id=s)).name for s in range(30)}
    assert len(owners3) == 1  # 3.x: all NONE_KEY
