"""The reference tag filter (fixtures/entry_filters/TagFilter.java, loaded as a NAR by the
embedded broker) against TDMQ for Pulsar's documented tag rules (docs/research/tdmq-profile.md,
section 1.1; tencentcloud.com/document/product/1110/46518): a producer tags a message with
properties whose value is ``TAGS``; a subscription's tags are its subscription properties (value
``1``); several tags are OR-ed; untagged messages and subscriptions without tags get everything;
a batch is one entry whose outer metadata has no properties, so batched messages are not filtered.

Subscriptions get their properties through the admin API (the Python client cannot send them on
subscribe); the consumers are Python's."""

from __future__ import annotations

import pytest

pulsar = pytest.importorskip("pulsar")

pytestmark = pytest.mark.live


@pytest.fixture(scope="module", params=["4.0.8", pytest.param("3.0.7", marks=pytest.mark.releases)])  # releases tier: docs/ci.md
def tag_broker(request):
    """The filter API is the same in 3.0.x and 4.0.x: the NAR is built against each release's lib/."""
    from fixtures.embedded import EmbeddedBroker

    broker = EmbeddedBroker(version=request.param, entry_filters=("tdmq-tags",))
    endpoint = broker.start()
    yield endpoint
    broker.stop()


def _received(client, topic, subscription, n_max=20):
    consumer = client.subscribe(topic, subscription, consumer_type=pulsar.ConsumerType.Shared)
    got = []
    try:
        while len(got) < n_max:
            msg = consumer.receive(timeout_millis=1500)
            got.append(msg.data().decode())
            consumer.acknowledge(msg)
    except pulsar.Timeout:
        pass
    consumer.close()
    return sorted(got)


def test_tags_are_ored_untagged_goes_everywhere_and_batches_are_not_filtered(tag_broker):
    from fixtures.admin import AdminClient

    admin = AdminClient(tag_broker.admin_url)
    client = pulsar.Client(tag_broker.service_url)
    try:
        namespace = admin.fresh_namespace()
        topic = f"persistent://{namespace}/tags"
        admin.create_subscription(topic, "only-a", properties={"a": "1"})
        admin.create_subscription(topic, "a-or-b", properties={"a": "1", "b": "1"})
        admin.create_subscription(topic, "untagged-sub", properties={})
        single = client.create_producer(topic, batching_enabled=False)
        single.send(b"tag-a", properties={"a": "TAGS"})
        single.send(b"tag-b", properties={"b": "TAGS"})
        single.send(b"tag-c", properties={"c": "TAGS"})
        single.send(b"tag-ac", properties={"a": "TAGS", "c": "TAGS"})
        single.send(b"plain", properties={"a": "not-a-tag"})  # a property, but not a tag: untagged
        batched = client.create_producer(topic, batching_enabled=True, batching_max_messages=2,
                                         batching_max_publish_delay_ms=1000)
        for payload in (b"batched-c1", b"batched-c2"):
            batched.send_async(payload, None, properties={"c": "TAGS"})
        batched.flush()
        everything = ["batched-c1", "batched-c2", "plain", "tag-a", "tag-ac", "tag-b", "tag-c"]
        assert _received(client, topic, "untagged-sub") == everything
        assert _received(client, topic, "only-a") == ["batched-c1", "batched-c2", "plain", "tag-a", "tag-ac"]
        assert _received(client, topic, "a-or-b") == ["batched-c1", "batched-c2", "plain", "tag-a", "tag-ac", "tag-b"]
        stats = admin.topic_stats(topic)["subscriptions"]["only-a"]
        assert stats.get("filterRejectedMsgCount") == 2, f"tag-b and tag-c are rejected for only-a: {stats}"
    finally:
        client.close()
        admin.close()
