"""First live tests: they prove the harness reaches a real broker and sees real semantics.

Each is tagged with the rule it shows; the model-driven cases (conformance/cases) cover the
same rules again through the checker.
"""

from __future__ import annotations

import pytest

pulsar = pytest.importorskip("pulsar")

pytestmark = pytest.mark.live




@pytest.mark.rule("PLS-MSG-001", "PLS-ACK-001")
def test_send_receive_ack_round_trip(pulsar_client, topic, pulsar_admin, drain):
    consumer = pulsar_client.subscribe(topic, "s", consumer_name="c1")
    producer = pulsar_client.create_producer(topic)
    sent_id = producer.send(b"hello", properties={"a": "1"}, partition_key="k1", event_timestamp=42)
    msg = consumer.receive(timeout_millis=5000)
    assert msg.data() == b"hello"
    assert msg.properties() == {"a": "1"}
    assert msg.partition_key() == "k1"
    assert msg.event_timestamp() == 42
    assert msg.message_id() == sent_id
    assert msg.redelivery_count() == 0
    consumer.acknowledge(msg)
    consumer.close()  # close flushes the grouped ack
    consumer = pulsar_client.subscribe(topic, "s", consumer_name="c1")
    assert drain(consumer) == [], "an acked message came back after reconnect"
    assert pulsar_admin.subscription_backlog(topic, "s") == 0


@pytest.mark.rule("PLS-EXCL-001")
def test_second_exclusive_consumer_is_busy(pulsar_client, topic):
    pulsar_client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Exclusive)
    with pytest.raises(pulsar.ConsumerBusy):
        pulsar_client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Exclusive)


@pytest.mark.rule("PLS-SHARED-001")
def test_shared_consumers_get_disjoint_messages_covering_all(pulsar_client, topic, drain):
    c1 = pulsar_client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared, consumer_name="a", receiver_queue_size=10)
    c2 = pulsar_client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared, consumer_name="b", receiver_queue_size=10)
    producer = pulsar_client.create_producer(topic)
    sent = {f"m{i}".encode() for i in range(60)}
    for payload in sorted(sent):
        producer.send(payload)
    got1 = [m.data() for m in drain(c1)]
    got2 = [m.data() for m in drain(c2)]
    assert len(got1) == len(set(got1)) and len(got2) == len(set(got2)), "a consumer got a message twice"
    assert not set(got1) & set(got2), "a message went to both Shared consumers"
    assert set(got1) | set(got2) == sent, "some messages reached neither consumer"
    assert got1 and got2, "with 10-message receiver queues both consumers must get some of 60 messages"


@pytest.mark.rule("PLS-SHARED-002")
def test_unacked_messages_of_closed_shared_consumer_go_to_the_other(pulsar_client, topic, drain):
    c1 = pulsar_client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared, consumer_name="a")
    producer = pulsar_client.create_producer(topic)
    for i in range(5):
        producer.send(f"m{i}".encode())
    first = [c1.receive(timeout_millis=5000) for _ in range(5)]
    c1.acknowledge(first[0])
    c2 = pulsar_client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared, consumer_name="b")
    c1.close()
    redelivered = drain(c2, timeout_ms=2000)
    assert sorted(m.data() for m in redelivered) == [b"m1", b"m2", b"m3", b"m4"]


@pytest.mark.rule("PLS-ACK-003")
def test_cumulative_ack_on_shared_is_refused(pulsar_client, topic):
    consumer = pulsar_client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)
    producer = pulsar_client.create_producer(topic)
    producer.send(b"m1")
    msg = consumer.receive(timeout_millis=5000)
    with pytest.raises(pulsar.CumulativeAcknowledgementNotAllowedError):
        consumer.acknowledge_cumulative(msg)


def test_admin_error_carries_status_and_reason(pulsar_admin, pulsar_namespace):
    from fixtures.errors import AdminError

    topic = f"persistent://{pulsar_namespace}/pt"
    pulsar_admin.create_partitioned_topic(topic, 3)
    assert pulsar_admin.partitioned_metadata(topic) == 3
    with pytest.raises(AdminError) as err:
        pulsar_admin.create_partitioned_topic(topic, 3)
    assert err.value.status == 409
    assert "already exists" in err.value.reason


def test_namespace_policies_round_trip(pulsar_admin, pulsar_namespace):
    pulsar_admin.set_deduplication(pulsar_namespace, True)
    pulsar_admin.set_message_ttl(pulsar_namespace, 120)
    pulsar_admin.set_retention(pulsar_namespace, minutes=10, size_mb=5)
    policies = pulsar_admin.namespace_policies(pulsar_namespace)
    assert policies["deduplicationEnabled"] is True
    assert policies["message_ttl_in_seconds"] == 120
    assert policies["retention_policies"] == {"retentionTimeInMinutes": 10, "retentionSizeInMB": 5}


def test_topic_stats_count_unacked_per_consumer(pulsar_client, topic, pulsar_admin):
    consumer = pulsar_client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared, consumer_name="counted")
    producer = pulsar_client.create_producer(topic)
    for i in range(3):
        producer.send(f"m{i}".encode())
    msgs = [consumer.receive(timeout_millis=5000) for _ in range(3)]
    consumer.acknowledge(msgs[0])
    import time

    deadline = time.monotonic() + 5
    while True:  # acks are grouped by the client for up to 100 ms
        sub = pulsar_admin.topic_stats(topic)["subscriptions"]["s"]
        if sub["msgBacklog"] == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert sub["msgBacklog"] == 2
    assert sub["unackedMessages"] == 2
    assert [c["consumerName"] for c in sub["consumers"]] == ["counted"]
    assert sub["consumers"][0]["unackedMessages"] == 2
    assert "cursors" in pulsar_admin.internal_stats(topic)


def test_an_op_on_a_handle_whose_subscribe_was_refused_is_a_harness_error(live_target, tmp_path):
    """The second Exclusive subscribe is refused (ConsumerBusy, PLS-EXCL-001), so c2 never exists:
    the receive on c2 is the harness's UnknownHandle, never sent to the client, never charged to a
    broker rule; the case is ERROR and ``check`` exits 4."""
    import subprocess
    import sys
    from pathlib import Path

    from conformance.case_files import load_case
    from conformance.checker import check
    from conformance.runner import ERROR, run_case
    from conformance.trace import save

    path = tmp_path / "refused-then-used.yaml"
    path.write_text("""
id: refused-then-used
title: an op on a handle that was never created
rules: [PLS-EXCL-001]
ops:
  - subscribe: {consumer: c1, topic: t, subscription: s, consumer_name: c1}
  - subscribe: {consumer: c2, topic: t, subscription: s, consumer_name: c2}
  - receive: {consumer: c2, timeout_ms: 200}
""", encoding="utf-8")
    result = run_case(load_case(path), live_target, client="python")
    events = result.history.events
    assert events[1].outcome.error == "ConsumerBusy"
    assert events[2].outcome.status == "rejected" and events[2].outcome.error == "UnknownHandle"
    report = check(result.history)
    assert report.harness_errors and not report.failures()
    assert result.status == ERROR and "UnknownHandle" not in result.rule_verdicts
    saved = save(result.history, tmp_path / "h.history.jsonl")
    root = Path(__file__).resolve().parents[2]
    code = subprocess.run([sys.executable, "-m", "pulsar_conformance", "check", str(saved)], capture_output=True, text=True,
                          timeout=120, cwd=root).returncode
    assert code == 4


def test_a_run_retires_its_namespace_and_it_is_deleted_once_settled(live_target, pulsar_broker, pulsar_admin, tmp_path):
    """A run's namespace outlives the run (a 3.x broker hangs for 30 s on a namespace deleted while
    a topic's transaction buffer recovers; fixtures/namespaces.py) and is gone once it has
    settled: the broker itself is asked, before and after."""
    from conformance.case_files import load_case
    from conformance.runner import run_case
    from fixtures.namespaces import reaper_for

    path = tmp_path / "short.yaml"
    path.write_text("""
id: short
title: a run that loads a topic and ends at once
rules: [PLS-EXCL-001]
ops:
  - subscribe: {consumer: c1, topic: t, subscription: s}
""", encoding="utf-8")
    result = run_case(load_case(path), live_target, client="python")
    namespace = result.history.header.namespace
    reaper = reaper_for(pulsar_broker.admin_url, pulsar_broker.token)
    assert namespace in [ns for ns, _ in reaper.pending]
    assert namespace in pulsar_admin.namespaces("public"), "the namespace was deleted the moment its run ended"
    deleted = reaper.reap(pulsar_admin, everything=True)
    assert namespace in deleted
    assert namespace not in pulsar_admin.namespaces("public")


def test_a_seek_that_never_returns_is_indeterminate_and_the_run_goes_on(pulsar_broker, tmp_path):
    """Under ALWAYS_INCOMPATIBLE with a schema registered, the broker refuses even the same schema
    to a consumer on a topic that has one (SchemaRegistryServiceImpl#checkConsumerCompatibility),
    so after a seek (the broker disconnects the subscription's consumers) the consumer's
    re-subscribe is refused for good, and the C++ client's seek, which waits for that reconnect,
    never returns (seen hanging a live campaign, 2026-11-27). The target waits for the seek
    asynchronously (conformance/targets/pulsar_features.seek): it is indeterminate after its
    deadline, and the next op runs."""
    import time

    from conformance.case_files import load_case
    from conformance.runner import run_case
    from conformance.targets.pulsar import BrokerTarget

    path = tmp_path / "seek-never-returns.yaml"
    path.write_text("""
id: seek-never-returns
title: a seek whose reconnect the broker refuses
rules: [PLS-SEEK-001]
ops:
  - set_policy: {schema_compatibility_strategy: ALWAYS_INCOMPATIBLE}
  - subscribe: {consumer: c1, topic: t, subscription: s, schema: {type: AVRO, definition: {type: record, name: User, fields: [{name: name, type: string}]}}}
  - seek: {consumer: c1, position: earliest}
  - create_producer: {producer: p1, topic: u}
""", encoding="utf-8")
    target = BrokerTarget(pulsar_broker, operation_timeout_s=3)
    t0 = time.monotonic()
    result = run_case(load_case(path), target, client="python")
    elapsed = time.monotonic() - t0
    events = result.history.events
    assert events[1].outcome.status == "ok"
    assert events[2].outcome.status == "indeterminate" and "no answer" in events[2].outcome.detail
    assert events[3].outcome.status == "ok", "the run went on after the unanswered seek"
    assert elapsed < 60, f"the run took {elapsed:.0f} s"

