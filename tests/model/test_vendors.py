"""The vendor profiles chapter (reference_model/vendors.py): TDMQ for Pulsar's tag rules as written in its
developer guide (docs/research/tdmq-profile.md, rules T2-T8), the profile the ``tdmq`` vendor gives the
model, and the model following them on a subscription created with tags."""

from __future__ import annotations

import pytest

from conformance.trace import Op, Trace, TraceHeader
from conformance.targets.model import ModelTarget
from reference_model import vendors
from reference_model.profiles import profile_for
from reference_model.rules import applies, rule


def test_tags_are_the_properties_valued_TAGS_and_mix_with_ordinary_properties():
    # T6, T8: "tag1=TAGS, tag2=TAGS, xxx=yyy" carries the tags tag1 and tag2
    assert vendors.message_tags({"tag1": "TAGS", "tag2": "TAGS", "xxx": "yyy"}) == {"tag1", "tag2"}
    assert vendors.message_tags({"xxx": "yyy"}) == frozenset()
    assert vendors.message_tags(None) == frozenset()
    # T7: a subscription's tags are its subscription properties' keys ("1" is a reserved version)
    assert vendors.subscription_tags({"tag1": "1", "tag2": "1"}) == {"tag1", "tag2"}


@pytest.mark.parametrize(("message", "subscription", "delivered"), [
    ({"a"}, {"a", "b"}, True),  # T3: one shared tag is enough (OR)
    ({"b", "c"}, {"a", "b"}, True),
    ({"c"}, {"a", "b"}, False),  # carries tags, none of the subscription's
    (set(), {"a", "b"}, True),  # T5: untagged messages go to every subscription
    ({"c"}, set(), True),  # T2: a subscription without tags gets every message
])
def test_tag_filtering(message, subscription, delivered):
    assert vendors.tag_accepts(frozenset(message), frozenset(subscription)) is delivered


def test_the_tdmq_profile_turns_on_tags_and_the_ten_day_delay_limit():
    tdmq = profile_for("4.0.8", "java", {"vendor": "tdmq"})
    assert (tdmq.vendor, tdmq.tag_filtering, tdmq.delayed_max_delay_ms) == ("tdmq", True, 864_000_000)
    apache = profile_for("4.0.8", "java")
    assert (apache.vendor, apache.tag_filtering, apache.delayed_max_delay_ms) == ("apache", False, 0)
    with pytest.raises(ValueError, match="unknown profile 'aws'"):
        profile_for("4.0.8", "java", {"vendor": "aws"})


def test_the_tag_rule_speaks_only_under_the_tdmq_profile():
    tag = rule("PLS-TAG-001")
    assert applies(tag, broker_version="4.0.8", client="python", vendor="tdmq")
    assert not applies(tag, broker_version="4.0.8", client="python", vendor="apache")
    assert applies(rule("PLS-ACK-001"), broker_version="4.0.8", client="python", vendor="tdmq")


def _received(vendor: str) -> list[str]:
    ops = [
        ("create_producer", {"producer": "p1", "topic": "t"}),
        ("create_subscription", {"topic": "t", "subscription": "s", "properties": {"a": "1"}, "initial_position": "Earliest"}),
        ("send", {"producer": "p1", "payload": "m-a", "properties": {"a": "TAGS"}}),
        ("send", {"producer": "p1", "payload": "m-c", "properties": {"c": "TAGS"}}),
        ("send", {"producer": "p1", "payload": "m-plain"}),
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Exclusive"}),
        ("receive", {"consumer": "c1", "timeout_ms": 500}),
        ("receive", {"consumer": "c1", "timeout_ms": 500}),
        ("receive", {"consumer": "c1", "timeout_ms": 500}),
    ]
    trace = Trace(TraceHeader(trace_id="tags", title="tags", profile={"vendor": vendor}),
                  tuple(Op(i, op, args) for i, (op, args) in enumerate(ops, start=1)))
    history = ModelTarget().run(trace)
    return [(e.outcome.value or {}).get("message", {}) and e.outcome.value["message"]["payload"]
            for e in history.events if e.op.op == "receive"]


def test_the_model_keeps_a_filtered_message_from_its_subscription():
    assert _received("tdmq") == ["m-a", "m-plain", None]
    assert _received("apache") == ["m-a", "m-c", "m-plain"]


def test_a_vendor_documented_setting_is_not_overridden_by_the_brokers_config():
    # TDMQ documents a 10-day delay limit: a broker whose runtime config says 0 (no limit) breaks that rule,
    # so the model keeps the vendor's value; under apache the broker's value is followed.
    from reference_model.profiles import profile_for, with_broker_config

    tdmq = with_broker_config(profile_for("4.0.8", "java", {"vendor": "tdmq"}), {"delayedDeliveryMaxDelayInMillis": "0"})
    assert tdmq.delayed_max_delay_ms == 864_000_000
    apache = with_broker_config(profile_for("4.0.8", "java"), {"delayedDeliveryMaxDelayInMillis": "2000"})
    assert apache.delayed_max_delay_ms == 2000
    # the keys no vendor documents follow the broker under tdmq too
    assert with_broker_config(profile_for("4.0.8", "java", {"vendor": "tdmq"}),
                              {"brokerDeduplicationEnabled": "true"}).broker_deduplication is True


@pytest.mark.parametrize("client,lone_arrives", [("python", True), ("java", False)])
def test_a_batched_tagged_message_is_not_filtered(client, lone_arrives):
    """Let subscription s have the tag a and a batching producer send m-c1 (tag c) and m-a1 (tag a) in one batch,
    then m-c2 (tag c) alone. Then both batched messages reach s (the filter reads a batch entry as untagged,
    PLS-TAG-002); m-c2 reaches it from Python, whose lone message is a batch of one, and is filtered from Java,
    which sends a lone message unbatched (PLS-BATCH-008)."""
    ops = [
        ("create_producer", {"producer": "p1", "topic": "t", "batching": True, "batching_max_messages": 2,
                             "batching_max_delay_ms": 3000}),
        ("create_subscription", {"topic": "t", "subscription": "s", "properties": {"a": "1"}, "initial_position": "Earliest"}),
        ("send", {"producer": "p1", "payload": "m-c1", "properties": {"c": "TAGS"}, "async": True}),
        ("send", {"producer": "p1", "payload": "m-a1", "properties": {"a": "TAGS"}, "async": True}),
        ("flush", {"producer": "p1"}),
        ("send", {"producer": "p1", "payload": "m-c2", "properties": {"c": "TAGS"}, "async": True}),
        ("flush", {"producer": "p1"}),
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared"}),
        ("receive", {"consumer": "c1", "timeout_ms": 500}),
        ("receive", {"consumer": "c1", "timeout_ms": 500}),
        ("receive", {"consumer": "c1", "timeout_ms": 500}),
    ]
    trace = Trace(TraceHeader(trace_id="tags-batched", title="tags", profile={"vendor": "tdmq"}),
                  tuple(Op(i, op, args) for i, (op, args) in enumerate(ops, start=1)))
    history = ModelTarget(client=client).run(trace)
    got = [(e.outcome.value or {}).get("message") and e.outcome.value["message"]["payload"]
           for e in history.events if e.op.op == "receive"]
    assert got == ["m-c1", "m-a1", "m-c2" if lone_arrives else None]


def test_the_filter_reads_no_tags_on_a_batch():
    from reference_model import vendors
    assert vendors.filtered_tags({"a": "TAGS", "k": "v"}, batched=False) == frozenset({"a"})
    assert vendors.filtered_tags({"a": "TAGS"}, batched=True) == frozenset()


def _joined(client: str, java_client: str | None = None) -> list:
    """c1 creates s giving the tag a and leaves; c2 joins s giving the tag b (TDMQ T4, T9)."""
    ops = [
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared",
                       "subscription_properties": {"a": "1"}}),
        ("close", {"handle": "c1"}),
        ("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Shared",
                       "subscription_properties": {"b": "1"}}),
        ("create_producer", {"producer": "p1", "topic": "t"}),
        ("send", {"producer": "p1", "payload": "m-a", "properties": {"a": "TAGS"}}),
        ("send", {"producer": "p1", "payload": "m-b", "properties": {"b": "TAGS"}}),
        ("receive", {"consumer": "c2", "timeout_ms": 500}),
        ("receive", {"consumer": "c2", "timeout_ms": 500}),
    ]
    trace = Trace(TraceHeader(trace_id="tags-joined", title="tags", profile={"vendor": "tdmq"}),
                  tuple(Op(i, op, args) for i, (op, args) in enumerate(ops, start=1)))
    profile = profile_for("4.0.8", client, {"vendor": "tdmq"}, java_client=java_client)
    return list(ModelTarget(profile).run(trace).events)


def test_a_subscription_keeps_the_tags_it_was_created_with():
    """PLS-TAG-003: the joiner's tag b changes nothing: c2 gets m-a (the creator's tag) and never m-b."""
    events = _joined("java")
    got = [(e.outcome.value or {}).get("message") and e.outcome.value["message"]["payload"]
           for e in events if e.op.op == "receive"]
    assert got == ["m-a", None]


@pytest.mark.parametrize("client,java_client", [("python", None), ("java", "2.7.4")])
def test_subscription_properties_need_a_java_client_from_2_10(client, java_client):
    """The Python client has no subscription properties, nor had the Java client before PIP-105 (2.10.0)."""
    assert profile_for("4.0.8", client, java_client=java_client).subscription_properties_supported is False
    assert profile_for("4.0.8", "java", java_client="2.10.5").subscription_properties_supported is True
    refused = _joined(client, java_client)[0].outcome
    assert (refused.status, refused.error) == ("rejected", "InvalidArgument"), refused
    assert "subscription properties" in refused.detail
