"""Live checks of the Key_Shared, hashing and Failover model against a real broker.

Each test predicts, with ``reference_model.key_shared`` / ``routing``, which consumer receives
each message and which hash ranges the broker reports (consumer stats ``keyHashRangeArrays`` on
4.x, ``keyHashRanges`` strings on 3.x), then compares. Consumers always have fixed names and
producers ``batching_enabled=False``, so every message is its own entry with its own sticky key.

The AUTO_SPLIT hash-range selector needs ``subscriptionKeySharedUseConsistentHashing=false``: that
test starts a second embedded broker with the override (skipped when the target is not embedded).
"""

from __future__ import annotations

import re
import time
from collections import Counter

import pytest

from reference_model import hashing, key_shared as ks, routing

pulsar = pytest.importorskip("pulsar")

pytestmark = pytest.mark.live


# ---------------------------------------------------------------- helpers


def _profile(admin) -> ks.KeySharedProfile:
    return ks.profile_for_broker(admin.broker_version())


def _key_shared(client, topic, name, *, sub="s", policy=None, queue=500):
    kwargs = {"consumer_type": pulsar.ConsumerType.KeyShared, "consumer_name": name, "receiver_queue_size": queue}
    if policy is not None:
        kwargs["key_shared_policy"] = policy
    return client.subscribe(topic, sub, **kwargs)


def _drain(named_consumers, timeout_ms: int = 1500) -> dict[str, str]:
    """payload -> name of the consumer that received it (each message acked)."""
    got: dict[str, str] = {}
    for name, consumer in named_consumers:
        while True:
            try:
                msg = consumer.receive(timeout_millis=timeout_ms)
            except pulsar.Timeout:
                break
            payload = msg.data().decode()
            assert payload not in got, f"{payload} was delivered to {got[payload]} and to {name}"
            got[payload] = name
            consumer.acknowledge(msg)
    return got


_RANGE_TEXT = re.compile(r"\[\s*(\d+)\s*,\s*(\d+)\s*\]")


def _reported(stats: dict, sub: str = "s") -> list[tuple[str, list[tuple[int, int]]]]:
    """(consumer name, ranges) per connected consumer, as the broker reports them."""
    out = []
    for c in stats["subscriptions"][sub]["consumers"]:
        if c.get("keyHashRangeArrays") is not None:
            ranges = [tuple(r) for r in c["keyHashRangeArrays"]]
        else:
            ranges = [tuple(map(int, _RANGE_TEXT.match(r).groups())) for r in c.get("keyHashRanges") or []]
        out.append((c["consumerName"], ranges))
    return out


def _model_ranges(by_consumer) -> list[tuple[str, list[tuple[int, int]]]]:
    return [(str(c), [tuple(r) for r in rs]) for c, rs in by_consumer.items()]


def _same_ranges(reported, modelled) -> bool:
    """Equal as multisets of (name, ranges): the broker lists consumers in no guaranteed order."""
    key = lambda pairs: Counter((n, tuple(rs)) for n, rs in pairs)  # noqa: E731
    return key(reported) == key(modelled)


# ---------------------------------------------------------------- consistent hashing (default)


@pytest.mark.rule("PLS-KEYSHARED-001", "PLS-KEYSHARED-002", "PLS-KEYSHARED-003")
def test_consistent_hashing_dispatch_and_ranges_match_model(pulsar_client, pulsar_admin, topic):
    profile = _profile(pulsar_admin)
    names = ["c1", "c2", "c3"]
    consumers = [(n, _key_shared(pulsar_client, topic, n)) for n in names]
    ring = ks.new_ring(profile)
    members = []
    for n in names:
        ring, member = ks.ring_join(ring, n)
        members.append(member)
    assert _same_ranges(_reported(pulsar_admin.topic_stats(topic)), _model_ranges(ks.ring_reported_ranges(ring)))

    producer = pulsar_client.create_producer(topic, batching_enabled=False, producer_name="kp")
    expected: dict[str, str] = {}
    for seq in range(90):
        payload = f"m{seq}"
        if seq % 3 == 0:  # keyless: 4.x hashes "kp-<sequence id>", 3.x NONE_KEY
            producer.send(payload.encode())
            key = hashing.sticky_key(producer_name="kp", sequence_id=seq,
                                     producer_sequence_fallback=profile.keyless_producer_sequence)
        elif seq % 3 == 1:
            producer.send(payload.encode(), partition_key=f"key-{seq % 23}")
            key = hashing.sticky_key(partition_key=f"key-{seq % 23}")
        else:  # the ordering key wins over the partition key
            producer.send(payload.encode(), partition_key="ignored", ordering_key=f"ord-{seq % 11}")
            key = hashing.sticky_key(ordering_key=f"ord-{seq % 11}", partition_key="ignored")
        expected[payload] = ks.owner_of("consistent_hashing", ring, ring.profile, key).name
    got = _drain(consumers)
    assert got == expected, {p: (got.get(p), e) for p, e in expected.items() if got.get(p) != e}
    assert len(set(got.values())) == 3, "90 messages over 3 consumers: each should get some"

    # c1 leaves: its points go; where c1 and c3 collide (4.x: slot 34919) the queued c3 takes over
    consumers[0][1].close()
    ring = ks.ring_leave(ring, members[0])
    time.sleep(0.5)
    assert _same_ranges(_reported(pulsar_admin.topic_stats(topic)), _model_ranges(ks.ring_reported_ranges(ring)))


@pytest.mark.rule("PLS-KEYSHARED-003")
def test_same_name_consumers_leave_and_rejoin_follow_the_ring(pulsar_client, pulsar_admin, topic):
    profile = _profile(pulsar_admin)
    ring = ks.new_ring(profile)
    live = []
    for n in ["dup", "dup", "x"]:  # equal names get name indexes 0 and 1
        ring, member = ks.ring_join(ring, n)
        live.append((member, _key_shared(pulsar_client, topic, n)))
    assert _same_ranges(_reported(pulsar_admin.topic_stats(topic)), _model_ranges(ks.ring_reported_ranges(ring)))

    first_dup, consumer = live.pop(0)
    consumer.close()  # index 0 of "dup" is freed
    ring = ks.ring_leave(ring, first_dup)
    time.sleep(0.5)
    assert _same_ranges(_reported(pulsar_admin.topic_stats(topic)), _model_ranges(ks.ring_reported_ranges(ring)))

    ring, member = ks.ring_join(ring, "dup")  # takes index 0 again
    live.append((member, _key_shared(pulsar_client, topic, "dup")))
    assert _same_ranges(_reported(pulsar_admin.topic_stats(topic)), _model_ranges(ks.ring_reported_ranges(ring)))

    producer = pulsar_client.create_producer(topic, batching_enabled=False)
    expected = {}
    for i in range(60):
        producer.send(f"m{i}".encode(), partition_key=f"k{i}")
        expected[f"m{i}"] = ks.owner_of("consistent_hashing", ring, ring.profile, f"k{i}")
    got: dict[str, object] = {}
    for member, consumer in live:  # names repeat: tell consumers apart by the model's handle
        for payload in _drain([(str(member.serial), consumer)]):
            got[payload] = member
    assert got == expected


# ---------------------------------------------------------------- draining hashes (4.x)


def _draining(stats: dict, name: str, sub: str = "s") -> dict[int, int]:
    """hash -> unacked messages, as consumer ``name``'s stats report its draining hashes (4.x)."""
    for c in stats["subscriptions"][sub]["consumers"]:
        if c["consumerName"] == name:
            return {int(d["hash"]): int(d["unackMsgs"]) for d in c.get("drainingHashes") or ()}
    return {}


@pytest.mark.rule("PLS-KEYSHARED-006")
def test_draining_hashes_match_the_brokers_stats(pulsar_client, pulsar_admin, topic):
    """The chapter's draining functions predict, hash by hash, what consumer stats report as
    ``drainingHashes`` (``DrainingHashesTracker.updateConsumerStats``): after a join, after acks,
    after the old owner closes."""
    profile = _profile(pulsar_admin)
    if not profile.draining_hashes:
        pytest.skip("draining hashes are a 4.x (PIP-379) feature")
    ring, a = ks.ring_join(ks.new_ring(profile), "ks-a")
    ca = _key_shared(pulsar_client, topic, "ks-a")
    producer = pulsar_client.create_producer(topic, batching_enabled=False)
    keys = [f"key-{i % 10}" for i in range(30)]
    for i, key in enumerate(keys):
        producer.send(f"m{i}".encode(), partition_key=key)
    held = [ca.receive(timeout_millis=5000) for _ in keys]  # ks-a's application holds all 30
    slots = {key: ks.slot_for(profile, "consistent_hashing", key) for key in keys}
    pending: dict = {}
    for key in keys:
        pending[slots[key]] = pending.get(slots[key], 0) + 1

    before = ring
    ring, b = ks.ring_join(ring, "ks-b")
    cb = _key_shared(pulsar_client, topic, "ks-b")
    draining = ks.register_draining_hashes({}, owner_before=lambda h: ks.ring_select(before, h),
                                           owner_after=lambda h: ks.ring_select(ring, h), changed=b, pending={a: pending})
    assert draining, "some of the ten keys should move to ks-b"
    time.sleep(0.5)
    assert _draining(pulsar_admin.topic_stats(topic), "ks-a") == {h: e.unacked for h, e in draining.items()}

    # ks-a acks every message of one moved key and one message of another: counts go down
    moved = [key for key in dict.fromkeys(keys) if slots[key] in draining]
    acks = [m for m in held if m.partition_key() == moved[0]]
    if len(moved) > 1:
        acks.append(next(m for m in held if m.partition_key() == moved[1]))
    for m in acks:
        ca.acknowledge(m)
        draining = ks.acked(draining, slots[m.partition_key()], a)
    time.sleep(0.5)  # the client groups acks (100 ms)
    assert _draining(pulsar_admin.topic_stats(topic), "ks-a") == {h: e.unacked for h, e in draining.items()}

    ca.close()
    draining = ks.consumer_closed(draining, a)
    time.sleep(0.5)
    assert draining == {} and _draining(pulsar_admin.topic_stats(topic), "ks-b") == {}
    cb.close()


@pytest.mark.rule("PLS-KEYSHARED-006")
def test_a_draining_hash_back_with_its_consumer_stops_draining(pulsar_client, pulsar_admin, topic):
    """A hash that drains for ks-a and returns to ks-a (ks-b leaves) no longer drains, though no
    message of it was sent since: when ks-b joins again the count starts afresh from ks-a's pending
    messages, not on top of the old one (the dispatcher's choice in ``_register_draining``)."""
    profile = _profile(pulsar_admin)
    if not profile.draining_hashes:
        pytest.skip("draining hashes are a 4.x (PIP-379) feature")
    alone, a = ks.ring_join(ks.new_ring(profile), "ks-a")
    both, b = ks.ring_join(alone, "ks-b")
    key = next(k for k in (f"key-{i}" for i in range(100))
               if ks.owner_of("consistent_hashing", alone, profile, k) == a and ks.owner_of("consistent_hashing", both, profile, k) == b)
    h = ks.slot_for(profile, "consistent_hashing", key)
    ca = _key_shared(pulsar_client, topic, "ks-a")
    producer = pulsar_client.create_producer(topic, batching_enabled=False)
    producer.send(b"m1", partition_key=key)
    m1 = ca.receive(timeout_millis=5000)
    cb = _key_shared(pulsar_client, topic, "ks-b")
    time.sleep(0.5)
    assert _draining(pulsar_admin.topic_stats(topic), "ks-a") == {h: 1}
    cb.close()
    time.sleep(0.5)
    assert _draining(pulsar_admin.topic_stats(topic), "ks-a") == {}
    cb = _key_shared(pulsar_client, topic, "ks-b")
    time.sleep(0.5)
    assert _draining(pulsar_admin.topic_stats(topic), "ks-a") == {h: 1}  # 1, not 2
    ca.acknowledge(m1)
    time.sleep(0.5)
    assert _draining(pulsar_admin.topic_stats(topic), "ks-a") == {}
    producer.send(b"m2", partition_key=key)
    assert cb.receive(timeout_millis=3000).data() == b"m2"


# ---------------------------------------------------------------- STICKY


def test_sticky_client_validation_matches_model():
    """The C++ client's checks (no broker needed): same refusals, same texts."""
    cases = [[], [(0, 65536)], [(-1, 5)], [(0, 10), (5, 20)], [(10, 5)], [(0, 10), (0, 10)], [(7, 7)]]
    for ranges in cases:
        try:
            pulsar.ConsumerKeySharedPolicy(pulsar.KeySharedMode.Sticky, sticky_ranges=ranges)
            real = None
        except ValueError as err:
            real = str(err)
        try:
            ks.validate_sticky_ranges(ranges)
            modelled = None
        except ValueError as err:
            modelled = str(err)
        assert real == modelled, (ranges, real, modelled)


@pytest.mark.rule("PLS-KEYSHARED-005")
def test_sticky_ranges_dispatch_refusals_and_uncovered_slots(pulsar_client, pulsar_admin, topic):
    profile = _profile(pulsar_admin)
    sticky = lambda ranges: pulsar.ConsumerKeySharedPolicy(pulsar.KeySharedMode.Sticky, sticky_ranges=ranges)  # noqa: E731
    own = {"low": [(0, 20000)], "high": [(40000, 65535)]}  # 20001..39999 is nobody's
    state = ks.Sticky(profile)
    consumers = []
    for name, ranges in own.items():
        state = ks.sticky_join(state, name, ranges)
        assert isinstance(state, ks.Sticky)
        consumers.append((name, _key_shared(pulsar_client, topic, name, policy=sticky(ranges))))
    reported = _reported(pulsar_admin.topic_stats(topic))
    assert _same_ranges(reported, [(n, rs) for n, rs in own.items()])

    # broker-side refusals: overlap with a connected consumer; a reversed range (the client lets it through)
    for ranges in ([(100, 200)], [(30000, 30010), (10, 5)] if profile.sticky_broker == "range_map" else [(10, 5)]):
        predicted = ks.sticky_join(state, "bad", ranges)
        assert isinstance(predicted, ks.Rejected) and predicted.error == "ConsumerAssignError"
        with pytest.raises(pulsar.ConsumerAssignError):
            _key_shared(pulsar_client, topic, "bad", policy=sticky(ranges))

    producer = pulsar_client.create_producer(topic, batching_enabled=False)
    expected, stranded = {}, []
    for i in range(80):
        producer.send(f"m{i}".encode(), partition_key=f"k{i}")
        owner = ks.sticky_select(state, ks.range_slot(profile, f"k{i}"))
        if owner is None:
            stranded.append(f"m{i}")
        else:
            expected[f"m{i}"] = owner
    assert stranded, "80 keys: some slots should fall in the uncovered gap"
    assert _drain(consumers) == expected
    assert pulsar_admin.subscription_backlog(topic, "s") == len(stranded)


@pytest.mark.rule("PLS-KEYSHARED-005")
def test_sticky_duplicate_own_ranges(pulsar_client, pulsar_admin, topic):
    """The client lets identical duplicate ranges through; 4.x refuses them, 3.x accepts them."""
    profile = _profile(pulsar_admin)
    ranges = [(0, 100), (0, 100)]
    ks.validate_sticky_ranges(ranges)  # no ValueError, as the client
    predicted = ks.sticky_join(ks.Sticky(profile), "dup", ranges)
    policy = pulsar.ConsumerKeySharedPolicy(pulsar.KeySharedMode.Sticky, sticky_ranges=ranges)
    if isinstance(predicted, ks.Rejected):
        with pytest.raises(pulsar.ConsumerAssignError):
            _key_shared(pulsar_client, topic, "dup", policy=policy)
    else:
        _key_shared(pulsar_client, topic, "dup", policy=policy)


# ---------------------------------------------------------------- AUTO_SPLIT hash ranges


@pytest.fixture(scope="module")
def hash_range_broker(pulsar_target_spec, pytestconfig):
    if pulsar_target_spec.kind != "embedded":
        pytest.skip("needs a second embedded broker with subscriptionKeySharedUseConsistentHashing=false")
    from fixtures.admin import AdminClient
    from fixtures.embedded import EmbeddedBroker

    broker = EmbeddedBroker(version=pytestconfig.getoption("--broker-version"),
                            overrides={"subscriptionKeySharedUseConsistentHashing": "false"})
    endpoint = broker.start()
    admin = AdminClient(endpoint.admin_url)
    client = pulsar.Client(endpoint.service_url, operation_timeout_seconds=15)
    try:
        yield client, admin
    finally:
        client.close()
        admin.close()
        broker.stop()


@pytest.mark.rule("PLS-KEYSHARED-002", "PLS-KEYSHARED-004")
def test_auto_split_ranges_joins_leaves_and_dispatch(hash_range_broker):
    client, admin = hash_range_broker
    profile = _profile(admin)
    topic = f"persistent://public/default/ks-autosplit-{int(time.time() * 1000)}"
    state = ks.AutoSplit()
    live = {}
    for name in ["C1", "C2", "C3", "C4"]:
        state = ks.auto_split_join(state, name)
        live[name] = _key_shared(client, topic, name)
    modelled = [(c, [(s, e)]) for s, e, c in ks.auto_split_assignments(state)]
    assert modelled == [("C3", [(0, 16384)]), ("C2", [(16385, 32768)]), ("C4", [(32769, 49152)]),
                        ("C1", [(49153, 65536)])]  # the docs' diagram
    assert _same_ranges(_reported(admin.topic_stats(topic)), modelled)

    def check_dispatch(tag: str) -> None:
        producer = client.create_producer(topic, batching_enabled=False)
        expected = {}
        for i in range(60):
            producer.send(f"{tag}{i}".encode(), partition_key=f"k{i}")
            expected[f"{tag}{i}"] = ks.auto_split_select(state, ks.range_slot(profile, f"k{i}"))
        producer.close()
        assert _drain(list(live.items())) == expected

    check_dispatch("a")
    for leaver in ["C1", "C2"]:  # the top-range owner (its lower neighbour takes the top end), then a middle one
        live.pop(leaver).close()
        state = ks.auto_split_leave(state, leaver)
        time.sleep(0.5)
        modelled = [(c, [(s, e)]) for s, e, c in ks.auto_split_assignments(state)]
        assert _same_ranges(_reported(admin.topic_stats(topic)), modelled), leaver
        check_dispatch(f"after-{leaver}-")


# ---------------------------------------------------------------- Failover


@pytest.mark.rule("PLS-FAILOVER-004")
def test_failover_partitioned_active_is_sorted_p_mod_k(pulsar_client, pulsar_admin, topic):
    partitions = 5
    pulsar_admin.create_partitioned_topic(topic, partitions)
    connection_order = ["b", "c", "a"]
    consumers = [(n, pulsar_client.subscribe(topic, "fo", consumer_type=pulsar.ConsumerType.Failover, consumer_name=n))
                 for n in connection_order]
    time.sleep(2.0)  # activeConsumerFailoverDelayTimeMillis = 1000 after each join
    producer = pulsar_client.create_producer(topic, batching_enabled=False,
                                             message_router=lambda msg, n: int(msg.partition_key()))
    for p in range(partitions):
        producer.send(f"p{p}".encode(), partition_key=str(p))
    got = _drain(consumers)
    expected = {f"p{p}": routing.failover_active_consumer(p, connection_order) for p in range(partitions)}
    assert expected == {"p0": "a", "p1": "b", "p2": "c", "p3": "a", "p4": "b"}
    assert got == expected


@pytest.mark.rule("PLS-FAILOVER-003")
def test_failover_non_partitioned_active_is_the_ring_pick(pulsar_client, topic):
    connection_order = ["c2", "c1", "c3"]
    consumers = [(n, pulsar_client.subscribe(topic, "fo", consumer_type=pulsar.ConsumerType.Failover, consumer_name=n))
                 for n in connection_order]
    time.sleep(2.0)
    producer = pulsar_client.create_producer(topic, batching_enabled=False)
    for i in range(5):
        producer.send(f"m{i}".encode())
    got = _drain(consumers)
    active = routing.failover_active_consumer(-1, connection_order, topic=topic)
    assert got == {f"m{i}": active for i in range(5)}
