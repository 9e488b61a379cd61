"""Unit tests for the pure value modules: names, ids, profiles, redelivery, cursor, spec."""

from __future__ import annotations

import pytest

from reference_model import names, spec
from reference_model.cursor import Cursor
from reference_model.ids import EARLIEST, LATEST, MessageId, id_conventions_violation
from reference_model.profiles import Profile, profile_for
from reference_model.redelivery import (
    JAVA_BACKOFF_DEFAULT_MAX_DELAY_MS,
    JAVA_BACKOFF_DEFAULT_MIN_DELAY_MS,
    check_ack_timeout,
    effective_nack_delay_ms,
    nack_window,
    nack_window_offsets,
)
from reference_model.rejections import Rejected
from reference_model.timing import Span

# ---------------------------------------------------------------- PLS-TOPIC-001/002/003


@pytest.mark.parametrize("name,full", [
    ("my-topic", "persistent://public/default/my-topic"),
    ("acme/orders/t", "persistent://acme/orders/t"),
    ("non-persistent://a/b/c", "non-persistent://a/b/c"),
    ("persistent://a/b/c/d", "persistent://a/c/d"),  # legacy V1 form, local name "d"
])
def test_topic_expansion(name, full):
    got = names.expand(name)
    if name.endswith("c/d"):
        assert names.parse_topic(name).cluster == "b"
        assert got == "persistent://a/b/c/d"
    else:
        assert got == full


@pytest.mark.parametrize("bad", ["", "a/b", "http://a/b/c", "persistent://a/b", "persistent://te nant/ns/x", "a/b/c/d"])
def test_invalid_topic_names_are_rejected_with_topic_003(bad):
    got = names.expand(bad)
    assert isinstance(got, Rejected) and got.error == "InvalidTopicName" and got.rule == "PLS-TOPIC-003"


def test_partition_names():
    assert names.partition_name("persistent://public/default/t", 2) == "persistent://public/default/t-partition-2"
    assert names.parse_topic("t-partition-3").partition_index == 3
    assert names.parse_topic("t").partition_index == -1
    with pytest.raises(ValueError):
        names.partition_name("t", -1)


# ---------------------------------------------------------------- PLS-MSGID-001/002


def test_message_id_ordering_ignores_partition():
    a, b = MessageId(3, 0, 1, -1), MessageId(3, 0, 2, -1)
    assert not a.precedes(b) and not b.precedes(a) and a != b
    assert MessageId(3, 0).precedes(MessageId(3, 1))
    assert MessageId(3, 5).precedes(MessageId(4, 0))
    assert MessageId(3, 0, -1, -1).precedes(MessageId(3, 0, -1, 0))  # non-batched before index 0
    assert EARLIEST.to_list() == [-1, -1, -1, -1] and LATEST.partition == -1
    assert str(MessageId(3, 0)) == "(3,0,-1,-1)"
    assert MessageId.from_list([3, 0, -1, -1]) == MessageId(3, 0)


def test_id_conventions():
    assert id_conventions_violation([3, 0, -1, -1], partitioned=False, batched=False) is None
    assert "partition" in id_conventions_violation([3, 0, 0, -1], partitioned=False, batched=False)
    assert "batch_index" in id_conventions_violation([3, 0, -1, 0], partitioned=False, batched=False)
    assert id_conventions_violation([3, 0, -1, 0], partitioned=False, batched=True) is None


# ---------------------------------------------------------------- profiles


def test_profiles_differ_by_client_not_by_scattered_ifs():
    cpp = profile_for("4.0.8", "python")
    java = profile_for("4.0", "java")
    assert cpp.client == "cpp" and cpp.broker == "4.0"
    assert (cpp.ack_timeout_min_ms, java.ack_timeout_min_ms) == (10_000, 1000)
    assert cpp.nack_min_delay_ms == 100 and not cpp.nack_backoff_supported and java.nack_backoff_supported
    assert profile_for("3.3.2", "cpp").broker == "3.x"
    assert profile_for("4.1.0", "cpp").broker_batch_index_ack_default is True
    assert profile_for(None, None) == Profile()
    assert profile_for("4.0", "cpp", {"ack_grouping_ms": 0}).ack_grouping_ms == 0
    with pytest.raises(ValueError, match="unknown profile field"):
        profile_for("4.0", "cpp", {"nope": 1})
    with pytest.raises(ValueError, match="unknown client"):
        profile_for("4.0", "go")


# ---------------------------------------------------------------- PLS-NACK-001/002/004


def test_cpp_nack_window_and_floor():
    p = Profile()
    assert nack_window_offsets(300, p) == (300, 400)
    assert nack_window_offsets(200, p) == (200, 266)
    assert effective_nack_delay_ms(10, p) == 100  # PLS-NACK-002
    assert nack_window_offsets(10, p) == (100, 133)
    w = nack_window(Span(412, 415), 300, p)
    assert (w.low, w.canonical, w.high) == (712, 712, 815)


def test_java_backoff_vectors_match_docs_table_shifted_by_one():
    # Docs: "redelivery count 1 -> 1 s, 2 -> 2 s, ..., 7 -> 60 s" with min 1 s, max 60 s.
    got = [spec.nack_backoff_delay_ms(c, min_delay_ms=1000, max_delay_ms=60000) for c in range(8)]
    assert got == [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]
    assert spec.nack_backoff_delay_ms(100, min_delay_ms=1000, max_delay_ms=60000) == 60000
    assert spec.nack_backoff_delay_ms(3, min_delay_ms=0, max_delay_ms=60000) == 0
    assert spec.nack_backoff_delay_ms(2, min_delay_ms=100, max_delay_ms=10_000, multiplier=3.0) == 900


def test_java_backoff_builder_defaults():
    assert (JAVA_BACKOFF_DEFAULT_MIN_DELAY_MS, JAVA_BACKOFF_DEFAULT_MAX_DELAY_MS) == (10_000, 600_000)
    assert spec.JAVA_BACKOFF_DEFAULT_MULTIPLIER == 2.0
    got = [spec.nack_backoff_delay_ms(c, min_delay_ms=spec.JAVA_BACKOFF_DEFAULT_MIN_DELAY_MS,
                                      max_delay_ms=spec.JAVA_BACKOFF_DEFAULT_MAX_DELAY_MS) for c in range(8)]
    assert got == [10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 600_000, 600_000]


@pytest.mark.parametrize("kwargs,match", [
    ({"min_delay_ms": 1000, "max_delay_ms": 60000, "multiplier": 1.0}, "multiplier"),
    ({"min_delay_ms": -1, "max_delay_ms": 60000}, "min_delay_ms"),
    ({"min_delay_ms": 1000, "max_delay_ms": 999}, "max_delay_ms"),
])
def test_java_backoff_argument_checks(kwargs, match):
    with pytest.raises(ValueError, match=match):
        spec.nack_backoff_delay_ms(1, **kwargs)


# ---------------------------------------------------------------- PLS-ACKTIMEOUT-001/002


def test_ack_timeout_window():
    assert spec.ack_timeout_redelivery_window_ms(10_000, 1000) == (10_000, 11_000)
    assert spec.ack_timeout_redelivery_window_ms(10_500, 1000) == (11_000, 12_000)
    assert spec.ack_timeout_redelivery_window_ms(2000, 1000, client="java") == (2000, 3000)
    assert spec.ack_timeout_redelivery_window_ms(1500, 5000, client="java") == (1500, 3000)  # t = min(tick, T)


def test_ack_timeout_minimums():
    with pytest.raises(ValueError, match="greater than 10 seconds"):
        spec.ack_timeout_redelivery_window_ms(5000, 1000)
    with pytest.raises(ValueError, match="greater than 1 seconds"):
        spec.ack_timeout_redelivery_window_ms(500, 1000, client="java")
    with pytest.raises(ValueError):
        spec.ack_timeout_redelivery_window_ms(0, 1000)
    assert check_ack_timeout(0, 10_000) is None and check_ack_timeout(None, 10_000) is None
    assert check_ack_timeout(5000, 10_000) == "Unacknowledged message timeout should be greater than 10 seconds."


# ---------------------------------------------------------------- PLS-DLQ-001 / PLS-RETRY-001


def test_dead_letter_and_retry_names():
    assert spec.dead_letter_topic("my-topic", "sub") == "persistent://public/default/my-topic-sub-DLQ"
    assert spec.retry_letter_topic("my-topic", "sub") == "persistent://public/default/my-topic-sub-RETRY"
    assert spec.dead_letter_topic("persistent://a/b/t-partition-2", "s") == "persistent://a/b/t-partition-2-s-DLQ"
    with pytest.raises(ValueError, match="invalid topic name"):
        spec.dead_letter_topic("a/b", "s")


# ---------------------------------------------------------------- cursor: PLS-ACK-001/002/004, PLS-BACKLOG-001


def test_cursor_individual_and_cumulative_acks():
    c = Cursor()
    assert c.ack(1) and not c.ack(1)  # PLS-ACK-004: second ack is a no-op
    assert c.mark_delete == -1 and c.first_unacked() == 0
    assert c.ack(0) and c.mark_delete == 1  # holes close: mark-delete moves
    c.ack(3)
    assert c.first_unacked() == 2 and c.first_unacked(3) == 4
    assert sum(not c.is_acked(p) for p in range(6)) == 3
    assert c.ack_cumulative(4) == 2 and c.mark_delete == 4  # PLS-ACK-002: 2 and 4 newly acked
    assert c.ack_cumulative(2) == 0
    c.reset(1)
    assert c.mark_delete == 0 and sum(not c.is_acked(p) for p in range(6)) == 5 and not c.is_acked(3)


# ---------------------------------------------------------------- hashing: PLS-FAILOVER-003


def test_murmur3_vectors():
    from reference_model.hashing import murmur3_32, pulsar_murmur3

    assert murmur3_32(b"") == 0
    assert murmur3_32(b"hello") == 0x248BFA47
    assert murmur3_32(b"The quick brown fox jumps over the lazy dog") == 0x2E4FF723
    assert pulsar_murmur3("hello") == 0x248BFA47 & 0x7FFFFFFF


def test_failover_ring_matches_live_broker_observations():
    # Measured on 4.0.8 today: consumers c1, c2 on fresh topics; which one received.
    from reference_model.routing import failover_active_consumer as pick

    def failover_active(topic, consumers):
        return pick(-1, consumers, topic=topic)

    observed = {
        "persistent://public/default/fo-6f77bb5e": "c1",
        "persistent://public/default/fo-97d26c7f": "c1",
        "persistent://public/default/fo-66109253": "c2",
        "persistent://public/default/fo-762fe6cc": "c2",
        "persistent://public/default/fo-fada61a1": "c2",
    }
    for topic, active in observed.items():
        assert failover_active(topic, ["c1", "c2"]) == active
        assert failover_active(topic, ["c2", "c1"]) == active
    with pytest.raises(ValueError, match="at least one"):
        failover_active("t", [])
