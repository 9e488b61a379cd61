"""Live probes for chunking, dedup, delayed delivery, batching, DLQ, TTL/retention, compaction,
producer access modes and non-persistent topics.

Each test is the probe that establishes its rule (reference_model/rules.py, features section) and
asserts what the pure model predicts: the expected values come from calling the model, not
from constants copied here. Timeouts are a few hundred ms; the whole file runs in well under a
minute on the embedded broker (tick 100 ms strict delayed delivery, batch index ack on).
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest

from reference_model import access_modes as am
from reference_model import batching, chunking, compaction, dead_letter, dedup, delayed, non_persistent, retention, spec
from reference_model.ids import MessageId
from reference_model.timing import Span

pulsar = pytest.importorskip("pulsar")

pytestmark = pytest.mark.live

MAX = chunking.DEFAULT_MAX_MESSAGE_SIZE


# ---------------------------------------------------------------- helpers




def _read_all(reader, timeout_ms: int = 300) -> list:
    got = []
    while True:
        try:
            got.append(reader.read_next(timeout_millis=timeout_ms))
        except pulsar.Timeout:
            return got


def _mid(obj) -> MessageId:
    i = obj.message_id() if hasattr(obj, "message_id") else obj
    return MessageId(i.ledger_id(), i.entry_id(), i.partition(), i.batch_index())


def _path(topic: str) -> str:
    domain, rest = topic.split("://", 1)
    return f"/admin/v2/{domain}/{rest}"


def _entries_added(admin, topic: str) -> int:
    return int(admin.internal_stats(topic)["entriesAddedCounter"])


def _send_batch(producer, payloads: list[bytes], **kwargs) -> list:
    ids: list = [None] * len(payloads)
    done = threading.Event()
    left = [len(payloads)]

    def callback(index):
        def cb(result, msg_id):
            ids[index] = msg_id
            left[0] -= 1
            if left[0] == 0:
                done.set()
        return cb

    for i, p in enumerate(payloads):
        producer.send_async(p, callback(i), **kwargs)
    producer.flush()
    assert done.wait(5), "batched sends were not acknowledged"
    return ids


def _metadata_size_now(producer_name: str, sequence_id: int) -> int:
    return chunking.metadata_size(producer_name, sequence_id, int(time.time() * 1000))


# ---------------------------------------------------------------- chunking


@pytest.mark.rule("PLS-CHUNK-001", "PLS-CHUNK-002", "PLS-CHUNK-005")
def test_chunk_count_and_chunk_message_id(pulsar_client, topic, pulsar_admin):
    consumer = pulsar_client.subscribe(topic, "s")
    producer = pulsar_client.create_producer(topic, chunking_enabled=True, producer_name="pchunk")
    for seq, size in enumerate([MAX - 17, MAX - 16, 2 * MAX]):
        m = _metadata_size_now("pchunk", seq)
        expected = chunking.chunk_count(size, metadata_size=m)
        before = _entries_added(pulsar_admin, topic)
        sent_id = producer.send(b"x" * size)
        assert _entries_added(pulsar_admin, topic) - before == expected, f"{size} bytes with {m} bytes of metadata"
        msg = consumer.receive(timeout_millis=5000)
        assert len(msg.data()) == size
        assert msg.message_id() == sent_id
        if expected == 1:
            assert ";" not in str(sent_id)
        else:
            first = MessageId(_mid(sent_id).ledger, _mid(sent_id).entry - expected + 1)
            assert str(sent_id) == chunking.chunk_message_id_str(first, _mid(sent_id))
        consumer.acknowledge(msg)


@pytest.mark.rule("PLS-CHUNK-003")
def test_without_chunking_metadata_plus_payload_above_max_is_too_big(pulsar_client, topic):
    producer = pulsar_client.create_producer(topic, producer_name="pnochk")
    m = _metadata_size_now("pnochk", 0)
    assert chunking.send_plan(MAX - m, metadata_size=m, chunking_enabled=False).chunks == 1
    producer.send(b"y" * (MAX - m))  # exactly max on the wire: accepted
    m = _metadata_size_now("pnochk", 1)
    assert chunking.send_plan(MAX - m + 1, metadata_size=m, chunking_enabled=False).error == "MessageTooBig"
    with pytest.raises(pulsar.MessageTooBig):
        producer.send(b"y" * (MAX - m + 1))


@pytest.mark.rule("PLS-CHUNK-004")
def test_chunking_with_batching_is_a_value_error(pulsar_client, topic):
    expected = chunking.check_producer_config(chunking_enabled=True, batching_enabled=True)
    with pytest.raises(ValueError) as err:
        pulsar_client.create_producer(topic, chunking_enabled=True, batching_enabled=True)
    assert str(err.value) == expected


@pytest.mark.rule("PLS-CHUNK-006")
def test_no_chunking_on_non_persistent_topics(pulsar_client, pulsar_namespace):
    topic = f"non-persistent://{pulsar_namespace}/np-chunk"
    plan = chunking.send_plan(MAX + 1, metadata_size=_metadata_size_now("npc", 0), chunking_enabled=True, persistent=False)
    assert plan.error == "MessageTooBig"
    producer = pulsar_client.create_producer(topic, chunking_enabled=True, producer_name="npc")
    with pytest.raises(pulsar.MessageTooBig):
        producer.send(b"x" * (MAX + 1))


# ---------------------------------------------------------------- deduplication


@pytest.mark.rule("PLS-DEDUP-001", "PLS-DEDUP-002", "PLS-DEDUP-005", "PLS-DEDUP-006")
def test_dedup_on_drops_resent_sequence_ids_and_restarts_continue(pulsar_client, topic, pulsar_admin, pulsar_namespace, drain):
    pulsar_admin.set_deduplication(pulsar_namespace, True)
    state = dedup.DedupState(enabled=True)
    reader_sub = pulsar_client.subscribe(topic, "all", initial_position=pulsar.InitialPosition.Earliest)

    def run(producer, seq, explicit_ids):
        nonlocal state
        for explicit in explicit_ids:
            state, seq, out = spec.dedup_send(state, seq, "pd", explicit)
            kwargs = {"sequence_id": explicit} if explicit is not None else {}
            got = producer.send(f"s{out.sequence_id}".encode(), **kwargs)
            if out.stored:
                assert got.ledger_id() >= 0 and got.entry_id() >= 0
            else:
                assert _mid(got) == dedup.duplicate_reply_id(), f"sequence id {out.sequence_id} should be a duplicate"
            assert producer.last_sequence_id() == seq.last
        return seq

    producer = pulsar_client.create_producer(topic, producer_name="pd")
    seq = dedup.producer_connected(dedup.ProducerSequence.create(None), dedup.broker_last_sequence_id(state, "pd"))
    assert producer.last_sequence_id() == seq.last
    seq = run(producer, seq, [None, None, None, 1, 2, 10, None, 5, 0])
    producer.close()

    producer = pulsar_client.create_producer(topic, producer_name="pd")
    seq = dedup.producer_connected(dedup.ProducerSequence.create(None), dedup.broker_last_sequence_id(state, "pd"))
    assert producer.last_sequence_id() == seq.last == 10
    seq = run(producer, seq, [None])
    producer.close()

    producer = pulsar_client.create_producer(topic, producer_name="pd", initial_sequence_id=3)
    seq = dedup.producer_connected(dedup.ProducerSequence.create(3), dedup.broker_last_sequence_id(state, "pd"))
    assert producer.last_sequence_id() == seq.last == 3
    run(producer, seq, [None])

    assert [m.data() for m in drain(reader_sub, timeout_ms=300)] == [b"s0", b"s1", b"s2", b"s10", b"s11"]


@pytest.mark.rule("PLS-DEDUP-003")
def test_dedup_off_stores_resent_sequence_ids(pulsar_client, topic, drain):
    state, seq = dedup.DedupState(enabled=False), dedup.ProducerSequence.create(None)
    consumer = pulsar_client.subscribe(topic, "s")
    producer = pulsar_client.create_producer(topic, producer_name="pd")
    outcomes = []
    for payload in (b"a", b"b"):  # the same explicit sequence id twice
        state, seq, out = spec.dedup_send(state, seq, "pd", 5)
        outcomes.append(out.stored)
        got = producer.send(payload, sequence_id=5)
        assert (got.ledger_id() >= 0) is out.stored
    assert outcomes == [True, True]
    assert [m.data() for m in drain(consumer, timeout_ms=300)] == [b"a", b"b"]
    producer.close()
    producer = pulsar_client.create_producer(topic, producer_name="pd")
    assert producer.last_sequence_id() == dedup.broker_last_sequence_id(state, "pd") == -1


# ---------------------------------------------------------------- delayed delivery


@pytest.mark.rule("PLS-DELAY-001", "PLS-DELAY-002", "PLS-DELAY-003")
@pytest.mark.parametrize("sub_type", ["Shared", "KeyShared", "Exclusive", "Failover"])
def test_which_subscription_types_hold_delayed_messages(pulsar_client, topic, sub_type, drain):
    consumer = pulsar_client.subscribe(topic, "s", consumer_type=getattr(pulsar.ConsumerType, sub_type))
    producer = pulsar_client.create_producer(topic)
    producer.send(b"late", deliver_after=timedelta(milliseconds=400))
    producer.send(b"now")
    # Failover pauses ~1 s before its first dispatch; the order, not the time, is the observation.
    got = [m.data().decode() for m in drain(consumer, timeout_ms=1500 if sub_type == "Failover" else 600)]
    assert got == spec.delayed_delivery_order([("late", 400.0), ("now", None)], subscription_type=sub_type, tick_ms=100, strict=True)


@pytest.mark.rule("PLS-DELAY-004")
def test_strict_mode_never_delivers_early(pulsar_client, topic):
    consumer = pulsar_client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)
    producer = pulsar_client.create_producer(topic)
    for ahead in (150, 230, 310):
        deliver_at = int(time.time() * 1000) + ahead
        producer.send(b"d", deliver_at=deliver_at)
        msg = consumer.receive(timeout_millis=2000)
        received = time.time() * 1000
        window = delayed.delivery_span((deliver_at, deliver_at), Span(deliver_at - ahead, deliver_at - ahead),
                                       subscription_type="Shared", tick_ms=100, strict=True, dispatch_slack_ms=100)
        assert window.start <= received <= window.end, (
            f"received {received - deliver_at:.0f} ms after deliver_at, allowed {window.start - deliver_at:.0f}.."
            f"{window.end - deliver_at:.0f} ms")
        consumer.acknowledge(msg)


@pytest.mark.rule("PLS-DELAY-006")
def test_delayed_message_bypasses_the_open_batch(pulsar_client, topic):
    producer = pulsar_client.create_producer(topic, batching_enabled=True, batching_max_publish_delay_ms=200)
    ids: dict[str, object] = {}
    producer.send_async(b"b0", lambda r, i: ids.__setitem__("b0", i))
    producer.send_async(b"dl", lambda r, i: ids.__setitem__("dl", i), deliver_after=timedelta(milliseconds=100))
    producer.send_async(b"b1", lambda r, i: ids.__setitem__("b1", i))
    producer.flush()
    deadline = time.time() + 3
    while len(ids) < 3 and time.time() < deadline:
        time.sleep(0.01)
    items = [batching.Pending(2), batching.Pending(2, delayed=True), batching.Pending(2)]
    entries = batching.plan_entries(items, batching.BatchConfig())
    first = _mid(ids["dl"])
    expected = batching.assign_ids(entries, ledger=first.ledger, first_entry=first.entry, single_messages=frozenset({1}))
    assert [_mid(ids[k]) for k in ("b0", "dl", "b1")] == [expected[0], expected[1], expected[2]]


# ---------------------------------------------------------------- batching


@pytest.mark.rule("PLS-BATCH-001", "PLS-BATCH-004", "PLS-BATCH-005", "PLS-BATCH-006", "PLS-BACKLOG-001")
@pytest.mark.parametrize("batch_index_ack", [False, True])
def test_partly_acked_batch_redelivery(pulsar_client, topic, pulsar_admin, batch_index_ack, drain):
    def subscribe():
        return pulsar_client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared,
                                       batch_index_ack_enabled=batch_index_ack, negative_ack_redelivery_delay_ms=100)

    consumer = subscribe()
    producer = pulsar_client.create_producer(topic, batching_enabled=True, batching_max_publish_delay_ms=1000, batching_max_messages=4)
    names = [f"m{i}".encode() for i in range(4)]
    ids = _send_batch(producer, names)
    expected = batching.assign_ids(((0, 1, 2, 3),), ledger=_mid(ids[0]).ledger, first_entry=_mid(ids[0]).entry)
    assert [_mid(i) for i in ids] == [expected[k] for k in range(4)]

    msgs = [consumer.receive(timeout_millis=2000) for _ in range(4)]
    assert [_mid(m) for m in msgs] == [expected[k] for k in range(4)]
    consumer.acknowledge(msgs[0])
    consumer.acknowledge(msgs[2])
    time.sleep(0.3)  # grouped acks, stats refresh
    assert pulsar_admin.subscription_backlog(topic, "s") == batching.backlog_entries([4], [{0, 2}])
    consumer.negative_acknowledge(msgs[1])
    again = drain(consumer, timeout_ms=400)
    predicted = batching.nack_redelivers(4, 1, {0, 2}, batch_index_ack=batch_index_ack)
    assert [m.data() for m in again] == [names[i] for i in predicted]
    assert {m.redelivery_count() for m in again} == {1}
    for m in again + msgs:
        consumer.acknowledge(m)
    time.sleep(0.3)
    assert pulsar_admin.subscription_backlog(topic, "s") == 0

    # a second batch, m0 and m3 acked, consumer closed: what does the next consumer get?
    _send_batch(producer, names)
    msgs = [consumer.receive(timeout_millis=2000) for _ in range(4)]
    consumer.acknowledge(msgs[0])
    consumer.acknowledge(msgs[3])
    time.sleep(0.2)
    consumer.close()
    consumer = subscribe()
    predicted = batching.redelivered_indexes(4, {0, 3}, batch_index_ack=batch_index_ack)
    assert [m.data() for m in drain(consumer, timeout_ms=400)] == [names[i] for i in predicted]


@pytest.mark.rule("PLS-BATCH-002", "PLS-BACKLOG-001")
def test_batch_container_flush_rules(pulsar_client, topic, pulsar_admin):
    pulsar_client.subscribe(topic, "s")
    producer = pulsar_client.create_producer(topic, batching_enabled=True, batching_max_publish_delay_ms=1000,
                                             batching_max_allowed_size_in_bytes=100)
    ids = _send_batch(producer, [b"z" * 40] * 5)
    entries = batching.plan_entries([batching.Pending(40)] * 5, batching.BatchConfig(max_bytes=100))
    first = _mid(ids[0])
    expected = batching.assign_ids(entries, ledger=first.ledger, first_entry=first.entry)
    assert [_mid(i) for i in ids] == [expected[k] for k in range(5)]

    producer = pulsar_client.create_producer(topic, batching_enabled=True, batching_max_publish_delay_ms=1000, batching_max_messages=5)
    _send_batch(producer, [b"c"] * 10)
    time.sleep(1.2)  # statsUpdateFrequencyInSecs=1
    total_entries = len(entries) + len(batching.plan_entries([batching.Pending(1)] * 10, batching.BatchConfig(max_messages=5)))
    assert pulsar_admin.subscription_backlog(topic, "s") == total_entries


@pytest.mark.rule("PLS-BATCH-003")
def test_key_based_batching(pulsar_client, topic, drain):
    consumer = pulsar_client.subscribe(topic, "s")
    producer = pulsar_client.create_producer(topic, batching_enabled=True, batching_max_publish_delay_ms=1000,
                                             batching_type=pulsar.BatchingType.KeyBased)
    keys = ["a", "b", "a", "", "b", "a"]
    ids: list = [None] * len(keys)
    for i, k in enumerate(keys):
        kwargs = {"partition_key": k} if k else {}
        producer.send_async(f"k{i}".encode(), (lambda j: (lambda r, m: ids.__setitem__(j, m)))(i), **kwargs)
    producer.flush()
    entries = batching.plan_entries([batching.Pending(2, partition_key=k or None) for k in keys], batching.BatchConfig(key_based=True))
    first = min((_mid(i) for i in ids), key=MessageId.sort_key)
    expected = batching.assign_ids(entries, ledger=first.ledger, first_entry=first.entry)
    assert [_mid(i) for i in ids] == [expected[k] for k in range(len(keys))]
    got = [m.data().decode() for m in drain(consumer, timeout_ms=300)]
    assert got == [f"k{i}" for entry in entries for i in entry]


@pytest.mark.rule("PLS-BATCH-007")
def test_python_producer_does_not_batch_by_default(pulsar_client, topic):
    producer = pulsar_client.create_producer(topic)
    ids = _send_batch(producer, [b"a", b"b"])
    assert not batching.PY_DEFAULT_BATCHING_ENABLED
    assert [_mid(i).batch_index for i in ids] == [-1, -1]
    assert _mid(ids[1]).entry == _mid(ids[0]).entry + 1


# ---------------------------------------------------------------- dead-letter topics


@pytest.mark.rule("PLS-DLQ-001", "PLS-DLQ-002", "PLS-DLQ-003", "PLS-DLQ-004")
@pytest.mark.parametrize("sub_type", ["Shared", "KeyShared"])
def test_dead_letter_after_max_plus_one_deliveries(pulsar_client, topic, pulsar_admin, sub_type):
    n = 2
    consumer = pulsar_client.subscribe(
        topic, "s", consumer_type=getattr(pulsar.ConsumerType, sub_type), negative_ack_redelivery_delay_ms=100,
        dead_letter_policy=pulsar.ConsumerDeadLetterPolicy(max_redeliver_count=n, initial_subscription_name="dlqsub"))
    producer = pulsar_client.create_producer(topic)
    sent = producer.send(b"poison", properties={"k": "v"}, partition_key="pk")
    counts = []
    while True:
        try:
            m = consumer.receive(timeout_millis=700)
        except pulsar.Timeout:
            break
        counts.append(m.redelivery_count())
        consumer.negative_acknowledge(m)
    assert tuple(counts) == spec.deliveries_before_dead_letter(n)

    dlq = dead_letter.default_dlq_topic(topic, "s")
    assert pulsar_admin.subscriptions(dlq) == ["dlqsub"]
    dlq_consumer = pulsar_client.subscribe(dlq, "dlqsub")
    moved = dlq_consumer.receive(timeout_millis=2000)
    expected = dead_letter.dead_letter(b"poison", {"k": "v"}, _mid(sent), topic, partition_key="pk")
    assert moved.data() == expected.payload
    assert moved.properties() == expected.properties_dict()
    assert moved.partition_key() == expected.partition_key
    time.sleep(0.3)
    assert pulsar_admin.subscription_backlog(topic, "s") == 0, "the moved message must be acked on the source"


@pytest.mark.rule("PLS-DLQ-005")
def test_no_dead_letter_on_exclusive(pulsar_client, topic, pulsar_admin, pulsar_namespace):
    assert not dead_letter.dlq_applies("Exclusive")
    consumer = pulsar_client.subscribe(
        topic, "s", consumer_type=pulsar.ConsumerType.Exclusive, negative_ack_redelivery_delay_ms=100,
        dead_letter_policy=pulsar.ConsumerDeadLetterPolicy(max_redeliver_count=1))
    pulsar_client.create_producer(topic).send(b"poison")
    counts = []
    deadline = time.time() + 1.2
    while time.time() < deadline:
        try:
            m = consumer.receive(timeout_millis=400)
        except pulsar.Timeout:
            break
        counts.append(m.redelivery_count())
        consumer.negative_acknowledge(m)
    assert len(counts) > len(spec.deliveries_before_dead_letter(1)) and set(counts) == {0}
    local = dead_letter.default_dlq_topic(topic, "s").split("/")[-1]
    assert local not in [t.split("/")[-1] for t in pulsar_admin.request("GET", f"/admin/v2/namespaces/{pulsar_namespace}/topics")]


@pytest.mark.rule("PLS-DLQ-006")
def test_dead_letter_takes_the_whole_batch(pulsar_client, topic, drain):
    consumer = pulsar_client.subscribe(
        topic, "s", consumer_type=pulsar.ConsumerType.Shared, negative_ack_redelivery_delay_ms=100,
        dead_letter_policy=pulsar.ConsumerDeadLetterPolicy(max_redeliver_count=1))
    dlq_reader = pulsar_client.subscribe(dead_letter.default_dlq_topic(topic, "s"), "x")
    producer = pulsar_client.create_producer(topic, batching_enabled=True, batching_max_publish_delay_ms=500)
    ids = _send_batch(producer, [b"b0", b"b1", b"b2"])
    while True:
        try:
            m = consumer.receive(timeout_millis=700)
        except pulsar.Timeout:
            break
        (consumer.negative_acknowledge if m.data() == b"b1" else consumer.acknowledge)(m)
    first = _mid(ids[0])
    # PLS-DLQ-006: every message of the entry is copied, acked or not, each with its own batch index
    expected = [dead_letter.dead_letter(payload, {}, MessageId(first.ledger, first.entry, -1, index), topic)
                for index, payload in enumerate((b"b0", b"b1", b"b2"))]
    got = [(m.data(), m.properties()) for m in drain(dlq_reader, timeout_ms=700)]
    assert got == [(d.payload, d.properties_dict()) for d in expected]


@pytest.mark.rule("PLS-DLQ-007")
@pytest.mark.parametrize("value", [0, -1])
def test_max_redeliver_count_below_one_is_refused(value):
    with pytest.raises(ValueError) as err:
        pulsar.ConsumerDeadLetterPolicy(max_redeliver_count=value)
    assert str(err.value) == dead_letter.check_max_redeliver_count(value)


# ---------------------------------------------------------------- TTL, retention


@pytest.mark.rule("PLS-TTL-001", "PLS-TTL-002", "PLS-TTL-003")
def test_ttl_expires_old_unacked_messages_only_at_a_pass(pulsar_client, topic, pulsar_admin, pulsar_namespace, drain):
    pulsar_admin.set_message_ttl(pulsar_namespace, 1)
    consumer = pulsar_client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared, receiver_queue_size=1)
    producer = pulsar_client.create_producer(topic)
    backlog = []
    for i in range(3):
        producer.send(f"m{i}".encode())
        backlog.append(retention.Stored(f"m{i}", int(time.time() * 1000)))
    held = consumer.receive(timeout_millis=2000)  # delivered, never acked
    assert held.data() == b"m0"
    time.sleep(1.3)
    producer.send(b"fresh")
    backlog.append(retention.Stored("fresh", int(time.time() * 1000)))
    # no pass yet (the periodic check runs every 5 minutes): nothing expired
    assert pulsar_admin.subscription_backlog(topic, "s") == len(backlog)
    pulsar_admin.request("POST", _path(topic) + "/subscription/s/expireMessages/1")
    remaining = retention.expire(tuple(backlog), time.time() * 1000, 1)
    time.sleep(0.3)
    assert pulsar_admin.subscription_backlog(topic, "s") == len(remaining)
    consumer.close()
    consumer = pulsar_client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)
    assert [m.data().decode() for m in drain(consumer, timeout_ms=300)] == [m.name for m in remaining]


@pytest.mark.rule("PLS-RETENTION-001")
def test_acked_messages_without_retention_may_still_be_read(pulsar_client, topic, drain):
    producer = pulsar_client.create_producer(topic)
    first = pulsar_client.subscribe(topic, "a", initial_position=pulsar.InitialPosition.Earliest)
    for i in range(3):
        producer.send(f"r{i}".encode())
    for m in drain(first, timeout_ms=300):
        first.acknowledge(m)
    first.close()
    later = pulsar_client.subscribe(topic, "b", initial_position=pulsar.InitialPosition.Earliest)
    still_readable = len(drain(later, timeout_ms=300)) == 3
    assert still_readable in retention.acked_may_be_read(retention_covers=False)
    reader = pulsar_client.create_reader(topic, pulsar.MessageId.earliest)
    assert len(_read_all(reader)) in (0, 3)


@pytest.mark.rule("PLS-RETENTION-002")
def test_retention_keeps_acked_messages_readable(pulsar_client, topic, pulsar_admin, pulsar_namespace, drain):
    pulsar_admin.set_retention(pulsar_namespace, minutes=10, size_mb=10)
    producer = pulsar_client.create_producer(topic)
    first = pulsar_client.subscribe(topic, "a", initial_position=pulsar.InitialPosition.Earliest)
    for i in range(3):
        producer.send(f"r{i}".encode())
    for m in drain(first, timeout_ms=300):
        first.acknowledge(m)
    first.close()
    later = pulsar_client.subscribe(topic, "b", initial_position=pulsar.InitialPosition.Earliest)
    assert (len(drain(later, timeout_ms=300)) == 3) in retention.acked_may_be_read(retention_covers=True)


# ---------------------------------------------------------------- compaction


def _compact(admin, topic: str) -> None:
    admin.request("PUT", _path(topic) + "/compaction")
    deadline = time.time() + 10
    while time.time() < deadline:
        status = admin.request("GET", _path(topic) + "/compaction")
        if status.get("status") != "RUNNING":
            assert status.get("status") == "SUCCESS", status
            return
        time.sleep(0.05)
    raise AssertionError("compaction did not finish in 10 s")


@pytest.mark.rule("PLS-COMPACT-001", "PLS-COMPACT-002", "PLS-COMPACT-003", "PLS-COMPACT-004")
def test_compacted_view(pulsar_client, topic, pulsar_admin):
    pulsar_client.subscribe(topic, "keep")  # keeps the data
    producer = pulsar_client.create_producer(topic)
    K = compaction.KeyedMessage
    # tombstones are case compact-tombstone-deletes-key (4.0.x keeps a non-batched one: KD-003)
    published = [K("a1", "a", b"a1"), K("b1", "b", b"b1"), K("a2", "a", b"a2"), K("nokey", None, b"nokey"),
                 K("c1", "c", b"c1"), K("d1", "d", b"d1")]
    for m in published:
        kwargs = {"partition_key": m.key} if m.key else {}
        producer.send(None if m.null_value else m.payload, **kwargs)
    _compact(pulsar_admin, topic)
    producer.send(b"a3", partition_key="a")
    published.append(K("a3", "a", b"a3"))

    expected = compaction.read_compacted(tuple(published), horizon=5)
    reader = pulsar_client.create_reader(topic, pulsar.MessageId.earliest, is_read_compacted=True)
    got = [(m.partition_key() or None, m.data(), m.has_null_value()) for m in _read_all(reader)]
    assert got == [(m.key, m.payload, m.null_value) for m in expected]


@pytest.mark.rule("PLS-COMPACT-005")
@pytest.mark.parametrize("sub_type", ["Shared", "KeyShared", "Exclusive", "Failover"])
def test_read_compacted_subscription_types(pulsar_client, topic, sub_type):
    model_type = "Key_Shared" if sub_type == "KeyShared" else sub_type
    rejection = compaction.check_read_compacted(model_type, persistent=True)
    subscribe = lambda: pulsar_client.subscribe(topic, "rc", consumer_type=getattr(pulsar.ConsumerType, sub_type), is_read_compacted=True)  # noqa: E731
    if rejection is None:
        subscribe().close()
    else:
        with pytest.raises(pulsar.InvalidConfiguration):
            subscribe()


@pytest.mark.rule("PLS-COMPACT-005")
def test_read_compacted_refused_on_non_persistent(pulsar_client, pulsar_namespace):
    assert compaction.check_read_compacted("Exclusive", persistent=False).error == "InvalidConfiguration"
    with pytest.raises(pulsar.InvalidConfiguration):
        pulsar_client.subscribe(f"non-persistent://{pulsar_namespace}/np-rc", "x", is_read_compacted=True)


# ---------------------------------------------------------------- producer access modes

_PY_ERRORS = {"ProducerBusy": "ProducerBusy", "ProducerFenced": "ProducerFenced", "Timeout": "Timeout"}


def _create(client, topic, mode, name):
    try:
        return client.create_producer(topic, access_mode=getattr(pulsar.ProducerAccessMode, mode), producer_name=name,
                                      send_timeout_millis=1000), "ok"
    except pulsar.PulsarException as err:
        return None, type(err).__name__


@pytest.mark.rule("PLS-ACCESS-001", "PLS-ACCESS-002", "PLS-ACCESS-003", "PLS-ACCESS-004")
@pytest.mark.parametrize("first", ["Shared", "Exclusive", "ExclusiveWithFencing", "WaitForExclusive"])
@pytest.mark.parametrize("second", ["Shared", "Exclusive", "ExclusiveWithFencing"])
def test_access_mode_table(pulsar_client, topic, first, second):
    p1, r1 = _create(pulsar_client, topic, first, "p1")
    assert r1 == "ok"
    predicted = am.create_producer((am.PresentProducer("p1", first),), second, "p2")
    p2, r2 = _create(pulsar_client, topic, second, "p2")
    assert r2 == _PY_ERRORS.get(predicted.result, predicted.result)
    if "p1" in predicted.fences:
        p2.send(b"new")
        with pytest.raises(getattr(pulsar, am.fenced_send_error(first))):
            p1.send(b"old")
    else:
        p1.send(b"still here")


@pytest.mark.rule("PLS-ACCESS-005")
def test_wait_for_exclusive_completes_when_the_holder_leaves(pulsar_client, topic):
    holder, _ = _create(pulsar_client, topic, "Exclusive", "e1")
    assert am.create_producer((am.PresentProducer("e1", "Exclusive"),), "WaitForExclusive").result == "waiting"
    out: dict = {}
    waiter = threading.Thread(target=lambda: out.update(r=_create(pulsar_client, topic, "WaitForExclusive", "w1")))
    waiter.start()
    time.sleep(0.5)
    assert "r" not in out, "WaitForExclusive returned while an Exclusive producer held the topic"
    holder.close()
    waiter.join(5)
    assert out["r"][1] == am.create_producer((), "WaitForExclusive").result == "ok"
    out["r"][0].send(b"leader")


@pytest.mark.rule("PLS-ACCESS-006")
def test_same_producer_name_is_busy(pulsar_client, topic):
    _create(pulsar_client, topic, "Shared", "same")
    predicted = am.create_producer((am.PresentProducer("same", "Shared"),), "Shared", "same")
    assert _create(pulsar_client, topic, "Shared", "same")[1] == predicted.result == "ProducerBusy"


# ---------------------------------------------------------------- non-persistent topics


@pytest.mark.rule("PLS-NP-001", "PLS-NP-003")
def test_non_persistent_delivers_only_to_connected_consumers(pulsar_client, pulsar_namespace, drain):
    topic = f"non-persistent://{pulsar_namespace}/np"
    producer = pulsar_client.create_producer(topic)
    events: list = []
    sent_ids = []

    def publish(name):
        events.append(("publish", name))
        sent_ids.append(_mid(producer.send(name.encode())))

    publish("before")
    c1 = pulsar_client.subscribe(topic, "s", initial_position=pulsar.InitialPosition.Earliest)
    events.append(("connect", "s"))
    publish("m1")
    received = drain(c1, timeout_ms=300)
    c1.close()
    events.append(("disconnect", "s"))
    publish("while-closed")
    c1 = pulsar_client.subscribe(topic, "s")
    events.append(("connect", "s"))
    publish("m2")
    c2 = pulsar_client.subscribe(topic, "s2")
    events.append(("connect", "s2"))
    reader = pulsar_client.create_reader(topic, pulsar.MessageId.earliest)
    publish("m3")
    received_s = received + drain(c1, timeout_ms=300)
    received_s2 = drain(c2, timeout_ms=300)
    expected = spec.non_persistent_deliveries(events)
    assert [m.data().decode() for m in received_s] == expected["s"]
    assert [m.data().decode() for m in received_s2] == expected["s2"]
    assert [m.data() for m in _read_all(reader)] == [b"m3"]
    assert set(sent_ids) == {non_persistent.message_id()}
    assert {_mid(m) for m in received_s + received_s2} == {non_persistent.message_id()}


@pytest.mark.rule("PLS-NP-002", "PLS-NP-004")
def test_non_persistent_no_redelivery_and_no_delay(pulsar_client, pulsar_namespace, drain):
    topic = f"non-persistent://{pulsar_namespace}/np2"
    consumer = pulsar_client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared, negative_ack_redelivery_delay_ms=100)
    producer = pulsar_client.create_producer(topic)
    assert not delayed.honours_delay("Shared", persistent=False)
    started = time.monotonic()
    producer.send(b"x", deliver_after=timedelta(milliseconds=700))
    msg = consumer.receive(timeout_millis=2000)
    assert (time.monotonic() - started) * 1000 < 700, "a non-persistent topic held a delayed message"
    consumer.negative_acknowledge(msg)
    assert [m.data() for m in drain(consumer, timeout_ms=600)] == []  # PLS-NP-002: nothing comes back
