"""reference_model/admin_ops.py: the admin topic and cursor ops, as pure rules and as broker steps.

Rules: PLS-TOPIC-004/005, PLS-SEEK-004, PLS-SKIP-001/002.
"""

from __future__ import annotations

import pytest

from reference_model.admin_ops import cleared_entries, delete_refusal, reset_start, skipped_entries
from reference_model.broker import Broker
from reference_model.cursor import position_by_publish_time
from reference_model.rejections import NotModelledError, Rejected
from reference_model.timing import Span


# ---------------------------------------------------------------------- the pure rules


def test_a_delete_is_refused_only_while_a_client_is_connected_and_not_forced():
    assert delete_refusal([], force=False) is None  # PLS-TOPIC-004
    assert delete_refusal([], force=True) is None
    assert "c1, p1" in delete_refusal(["p1", "c1"], force=False)
    assert delete_refusal(["p1"], force=True) is None  # forced: the clients are disconnected first


@pytest.mark.parametrize("kwargs, start", [
    ({"message_pos": 1}, 1),  # the message itself: no client filters it (unlike a seek by id)
    ({"message_pos": 1, "excluded": True}, 2),
    ({"publish_time": 20}, 1),  # the first published at or after it
    ({"publish_time": 21}, 2),
    ({"publish_time": 99}, 3),  # after the last: nothing until a new message
    ({"position": "earliest"}, 0),
    ({"position": "latest"}, 3),
])
def test_a_reset_starts_at_the_first_message_at_or_after_its_point(kwargs, start):
    assert reset_start([10, 20, 30], **kwargs) == start  # PLS-SEEK-004


def test_a_reset_needs_a_point():
    with pytest.raises(ValueError):
        reset_start([10])


def test_a_reset_by_time_is_the_seek_by_time():
    """PLS-SEEK-002's finder, once: the newest entry published before the time, then the next."""
    assert position_by_publish_time([10, 20, 20, 30], 20) == 1
    assert position_by_publish_time([], 5) == 0


def test_skip_takes_the_oldest_unacked_entries_a_batch_counting_once():
    unacked = [[0], [2, 3], [5]]  # 1 and 4 acked; 2 and 3 share an entry (a batch)
    assert skipped_entries(unacked, 1) == [0]  # PLS-SKIP-001
    assert skipped_entries(unacked, 2) == [0, 2, 3]
    assert skipped_entries(unacked, 9) == [0, 2, 3, 5]  # fewer than n: all of them
    assert cleared_entries(unacked) == [0, 2, 3, 5]  # PLS-SKIP-002


# ---------------------------------------------------------------------- as broker steps


def _broker(*ops):
    b = Broker()
    for i, (op, args) in enumerate(ops):
        out = b.apply(op, args, Span.at(float(i)))
        assert not isinstance(out, Rejected), (op, args, out)
    return b


def test_a_skip_does_not_count_what_was_acked_individually():
    b = _broker(("subscribe", {"consumer": "c", "topic": "t", "subscription": "s"}),
                ("create_producer", {"producer": "p", "topic": "t"}),
                *[("send", {"producer": "p", "payload": f"m{i}"}) for i in range(1, 5)])
    for label in ("m1", "m2"):
        b.receive("c", 10.0, 100.0)
    b.apply("ack", {"consumer": "c", "message": "m2"}, Span.at(20.0))
    b.apply("close", {"handle": "c"}, Span.at(21.0))
    assert b.apply("skip", {"topic": "t", "subscription": "s", "count": 2}, Span.at(22.0)) == {}
    assert b.backlog("t", "s", Span.at(23.0)) == (1, 1)  # m1 and m3 skipped, m4 left
    sub = b.topics["persistent://public/default/t"].subscriptions["s"]
    assert sorted(sub.admin_acked) == [0, 2]


def test_a_delete_with_a_reader_open_is_refused():
    b = _broker(("create_producer", {"producer": "p", "topic": "t"}), ("send", {"producer": "p", "payload": "m1"}),
                ("close", {"handle": "p"}), ("create_reader", {"reader": "r", "topic": "t", "start": "earliest"}))
    refused = b.apply("delete_topic", {"topic": "t"}, Span.at(9.0))
    assert isinstance(refused, Rejected) and (refused.error, refused.rule) == ("NotAllowedError", "PLS-TOPIC-004")


def test_a_forced_delete_with_clients_is_not_followed():
    b = _broker(("create_producer", {"producer": "p", "topic": "t"}))
    with pytest.raises(NotModelledError, match="forced delete"):
        b.apply("delete_topic", {"topic": "t", "force": True}, Span.at(1.0))


def test_a_reset_with_nobody_connected_is_what_the_next_consumer_starts_from():
    b = _broker(("subscribe", {"consumer": "c", "topic": "t", "subscription": "s"}),
                ("create_producer", {"producer": "p", "topic": "t"}),
                *[("send", {"producer": "p", "payload": f"m{i}"}) for i in range(1, 4)],
                ("close", {"handle": "c"}),
                ("reset_cursor", {"topic": "t", "subscription": "s", "message": "m2"}),
                ("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s"}))
    got, _ = b.receive("c2", 10.0, 100.0)
    assert got["payload"] == "m2"
    opts = b.receive_options("c2", Span.at(11.0))
    assert "PLS-SEEK-004" in opts.candidates[0].rules  # the reset, not a plain resume, explains the stream


def test_cursor_ops_on_missing_subscriptions_and_partitioned_topics():
    b = _broker(("create_topic", {"topic": "u", "partitions": 2}), ("create_producer", {"producer": "p", "topic": "t"}))
    gone = b.apply("skip", {"topic": "t", "subscription": "nope", "count": 1}, Span.at(5.0))
    assert isinstance(gone, Rejected) and gone.error == "SubscriptionNotFound"
    # a partitioned topic: a partition without the subscription answers 404 (PersistentTopicsBase#internalSkipAllMessages),
    # and a skip is refused before the subscription is looked at (HTTP 405, #internalSkipMessages)
    missing = b.apply("clear_backlog", {"topic": "u", "subscription": "s"}, Span.at(6.0))
    assert isinstance(missing, Rejected) and missing.error == "SubscriptionNotFound"
    refused = b.apply("skip", {"topic": "u", "subscription": "s", "count": 1}, Span.at(7.0))
    assert isinstance(refused, Rejected) and refused.error == "NotAllowedError" and refused.rule == "PLS-SKIP-001"


# ---------------------------------------------------------------------- deletes and schemas; non-persistent cursors
# (review of aa8ed68: each of these failed or crashed before its fix)

V1 = {"type": "AVRO", "definition": {"type": "record", "name": "U", "fields": [{"name": "name", "type": "string"}]}}


def _on(release: str, *ops):
    from reference_model.profiles import profile_for

    b = Broker(profile_for(release))
    for i, (op, args) in enumerate(ops):
        out = b.apply(op, args, Span.at(float(i)))
        assert not isinstance(out, Rejected), (op, args, out)
    return b


def test_a_partition_delete_on_an_unrecorded_release_leaves_a_schemaless_ledger_settled():
    """3.0.7 (PR #21574's cherry-pick not recorded): a ledger with no schema is the same either way, so a later
    producer is followed, not refused as uncertain."""
    b = _on("3.0.7", ("create_topic", {"topic": "v", "partitions": 2}),
            ("create_producer", {"producer": "p", "topic": "v"}), ("close", {"handle": "p"}),
            ("delete_topic", {"topic": "v-partition-0"}))
    assert not b.ledger_candidates
    assert not isinstance(b.apply("create_producer", {"producer": "p2", "topic": "v"}, Span.at(9.0)), Rejected)


def test_a_partition_delete_on_an_unrecorded_release_leaves_a_schema_uncertain_until_listed():
    b = _on("3.0.7", ("create_topic", {"topic": "v", "partitions": 2}),
            ("create_producer", {"producer": "p", "topic": "v", "schema": V1}), ("close", {"handle": "p"}),
            ("delete_topic", {"topic": "v-partition-0"}))
    assert len(b.ledger_candidates["persistent://public/default/v"]) == 2
    with pytest.raises(NotModelledError, match="delete may have taken"):
        b.apply("create_producer", {"producer": "p2", "topic": "v", "schema": {"type": "STRING"}}, Span.at(9.0))
    # a whole-topic delete settles it: gone either way
    b.apply("delete_topic", {"topic": "v"}, Span.at(10.0))
    assert not b.ledger_candidates and "persistent://public/default/v" not in b.schemas


def test_a_topic_made_under_a_partitions_name_is_a_partition_for_its_schema():
    """TopicName#isPartitioned reads the name: on a fixed release its delete keeps the schema ledger y."""
    b = _on("4.0.8", ("create_producer", {"producer": "p", "topic": "y-partition-0", "schema": V1}),
            ("close", {"handle": "p"}), ("delete_topic", {"topic": "y-partition-0"}))
    assert b.schemas["persistent://public/default/y"].entries


def test_a_partition_delete_is_refused_while_the_partitioned_producer_is_connected():
    b = _on("4.0.8", ("create_topic", {"topic": "v", "partitions": 2}), ("create_producer", {"producer": "p", "topic": "v"}))
    refused = b.apply("delete_topic", {"topic": "v-partition-1"}, Span.at(9.0))
    assert isinstance(refused, Rejected) and refused.rule == "PLS-TOPIC-004"


def test_a_deleted_partition_is_made_again_empty_for_the_next_client():
    b = _on("4.0.8", ("create_topic", {"topic": "v", "partitions": 2}),
            ("create_producer", {"producer": "p", "topic": "v"}), ("send", {"producer": "p", "payload": "m1"}),
            ("close", {"handle": "p"}), ("delete_topic", {"topic": "v-partition-0"}),
            ("delete_topic", {"topic": "v-partition-1"}))
    assert not isinstance(b.apply("create_producer", {"producer": "p2", "topic": "v"}, Span.at(9.0)), Rejected)
    assert all(not t.entries for t in b.message_topics(b.topics["persistent://public/default/v"]))


def test_non_persistent_cursor_ops_by_subscription_state():
    np_topic = "non-persistent://n"
    b = _on("4.0.8", ("subscribe", {"consumer": "c", "topic": np_topic, "subscription": "s"}))
    wide = b.apply("clear_backlog", {"topic": np_topic}, Span.at(5.0))
    assert isinstance(wide, Rejected) and wide.error == "OtherError" and not wide.certain  # HTTP 500 at s
    never = b.apply("reset_cursor", {"topic": np_topic, "subscription": "x", "position": "earliest"}, Span.at(7.0))
    assert isinstance(never, Rejected) and never.error == "OtherError"  # the 500 comes before the subscription
    b.apply("close", {"handle": "c"}, Span.at(8.0))
    assert b.apply("clear_backlog", {"topic": np_topic}, Span.at(9.0)) == {}  # lists none once c has gone


def test_a_non_persistent_subscription_gone_with_its_consumers_is_404_but_not_certainly():
    np_topic = "non-persistent://n"
    b = _on("4.0.8", ("subscribe", {"consumer": "c", "topic": np_topic, "subscription": "s"}),
            ("create_producer", {"producer": "p", "topic": np_topic}), ("send", {"producer": "p", "payload": "m1"}))
    assert b.apply("reset_cursor", {"topic": np_topic, "subscription": "s", "publish_time_of": "m1"}, Span.at(5.0)) == {}
    never = b.apply("reset_cursor", {"topic": np_topic, "subscription": "x", "publish_time_of": "m1"}, Span.at(6.0))
    assert isinstance(never, Rejected) and never.error == "SubscriptionNotFound" and never.certain
    b.apply("close", {"handle": "c"}, Span.at(7.0))
    gone = b.apply("reset_cursor", {"topic": np_topic, "subscription": "s", "publish_time_of": "m1"}, Span.at(8.0))
    assert isinstance(gone, Rejected) and gone.error == "SubscriptionNotFound" and not gone.certain
