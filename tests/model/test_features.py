"""Unit tests for the feature models: chunking, dedup, delayed delivery, batching, DLQ, TTL and
retention, compaction, access modes, non-persistent topics, and their rules.

Expected values are the ones the live broker produced (see the "Live:" notes in
reference_model/rules.py, the features section), so each test pins the model to an observation.
"""

from __future__ import annotations

import pytest

from reference_model import access_modes as am
from reference_model import batching, chunking, compaction, dead_letter, dedup, delayed, non_persistent, retention, spec
from reference_model.ids import MessageId
from reference_model.timing import Span
from reference_model.rejections import NotModelledError, Rejected
from reference_model.rules import RULES, build_registry

FEATURE_AREAS = {"CHUNK", "DEDUP", "DELAY", "BATCH", "TTL", "RETENTION", "COMPACT", "ACCESS", "NP"}
FEATURE_RULES = tuple(r for r in RULES if r.area in FEATURE_AREAS or (r.area == "DLQ" and r.id != "PLS-DLQ-001"))

MAX = chunking.DEFAULT_MAX_MESSAGE_SIZE
NOW = 1_790_000_000_000  # a 2026 epoch-ms publish time: a 6-byte varint


# ---------------------------------------------------------------- rules


def test_feature_rules_are_in_the_registry_without_clashes():
    merged = build_registry(RULES)
    assert len(merged) == len(RULES)
    assert len(FEATURE_RULES) == 52  # PLS-BATCH-008 (Java batch of one) joined the 51 of the feature issue


def test_every_feature_rule_is_cited_by_a_model_module():
    import pathlib

    text = "".join(p.read_text() for p in pathlib.Path(chunking.__file__).parent.glob("*.py") if p.name != "rules.py")
    missing = [r.id for r in FEATURE_RULES if r.id not in text]
    assert missing == [], f"rules no model module mentions: {missing}"


# ---------------------------------------------------------------- PLS-CHUNK-*


def test_metadata_size_of_a_plain_message():
    # name 'pchunk' (1+1+6) + sequence id 0..127 (1+1) + publish time (1+6) = 17, as measured live
    assert chunking.metadata_size("pchunk", 0, NOW) == 17
    assert chunking.metadata_size("pchunk", 200, NOW) == 18  # two-byte varint
    assert chunking.metadata_size("p", 0, NOW, properties={"a": "b"}) == 3 + 2 + 7 + (1 + 1 + 6)
    assert chunking.metadata_size("p", 0, NOW, partition_key="pk") == 12 + 4
    assert chunking.metadata_size("p", 0, NOW, ordering_key="ok") == 12 + 2 + 1 + 2  # field 18: two-byte tag


@pytest.mark.parametrize("size,chunks", [
    (100, 1), (MAX - 40, 1), (MAX - 17, 1), (MAX - 16, 2), (MAX, 2), (2 * MAX, 3), (2 * MAX + 10, 3),
    (2 * (MAX - 17), 2), (2 * (MAX - 17) + 1, 3),
])
def test_chunk_count_matches_the_live_broker(size, chunks):
    assert chunking.chunk_count(size, metadata_size=17) == chunks


def test_chunk_count_refuses_metadata_that_fills_the_message():
    with pytest.raises(ValueError, match="MessageTooBig"):
        chunking.chunk_count(10, max_message_size=100, metadata_size=100)
    got = chunking.send_plan(10, metadata_size=100, chunking_enabled=True, max_message_size=100)
    assert isinstance(got, Rejected) and got.error == "MessageTooBig" and got.rule == "PLS-CHUNK-002"


def test_send_plan_slices_the_payload_into_equal_chunks_and_a_remainder():
    plan = chunking.send_plan(25, metadata_size=2, chunking_enabled=True, max_message_size=12)
    assert plan == chunking.SendPlan(3, ((0, 10), (10, 20), (20, 25)))
    assert plan.chunks > 1


def test_without_chunking_metadata_plus_payload_above_max_is_too_big():
    assert chunking.send_plan(MAX - 17, metadata_size=17, chunking_enabled=False) == chunking.SendPlan(1, ((0, MAX - 17),))
    got = chunking.send_plan(MAX - 16, metadata_size=17, chunking_enabled=False)
    assert isinstance(got, Rejected) and (got.error, got.rule) == ("MessageTooBig", "PLS-CHUNK-003")


def test_chunking_is_off_on_non_persistent_topics():
    got = chunking.send_plan(6_000_000, metadata_size=17, chunking_enabled=True, persistent=False)
    assert isinstance(got, Rejected) and got.error == "MessageTooBig"
    assert not chunking.chunking_effective(chunking_enabled=True, batching_enabled=False, persistent=False)
    with pytest.raises(NotModelledError):
        chunking.send_plan(10, metadata_size=1, chunking_enabled=True, batching_enabled=True)


def test_python_refuses_chunking_with_batching():
    assert chunking.check_producer_config(chunking_enabled=True, batching_enabled=True) == \
        "Batching and chunking of messages can't be enabled together."
    assert chunking.check_producer_config(chunking_enabled=True, batching_enabled=False) is None


def test_chunk_message_id_text():
    ids = chunking.chunk_entry_ids(MessageId(1634, 3), 2)
    assert ids == (MessageId(1634, 3), MessageId(1634, 4))
    assert chunking.chunk_message_id_str(ids[0], ids[-1]) == "(1634,3,-1,-1);(1634,4,-1,-1)"


# ---------------------------------------------------------------- PLS-DEDUP-*


def test_dedup_classification_dup_unknown_notdup():
    s = dedup.DedupState()
    s, st = dedup.publish(s, "p", 5)
    assert st == dedup.NOT_DUP and s.highest_pushed("p") == 5
    assert dedup.classify(s, "p", 5) == dedup.UNKNOWN  # pushed, not yet persisted (PLS-DEDUP-004)
    s = dedup.persist(s, "p", 5)
    assert dedup.classify(s, "p", 3) == dedup.DUP
    assert dedup.classify(s, "p", 6) == dedup.NOT_DUP
    assert dedup.classify(s, "other", 0) == dedup.NOT_DUP  # per producer name
    assert dedup.duplicate_reply_id() == MessageId(-1, -1, -1, -1)
    assert str(dedup.duplicate_reply_id()) == "(-1,-1,-1,-1)"


def test_dedup_live_sequence_is_reproduced_exactly():
    """The live probe of PLS-DEDUP-001/002/005/006, step by step."""
    state = dedup.DedupState(enabled=True)
    seq = dedup.producer_connected(dedup.ProducerSequence.create(None), dedup.broker_last_sequence_id(state, "pd"))
    assert seq.last == -1
    stored, lasts = [], []
    for explicit in (None, None, None, 1, 2, 10, None, 5, 0):
        state, seq, out = spec.dedup_send(state, seq, "pd", explicit)
        stored.append(out.stored)
        lasts.append(seq.last)
    assert stored == [True, True, True, False, False, True, False, False, False]
    assert lasts == [0, 1, 2, 1, 2, 10, 3, 5, 4]
    # restart with the same name: continues after 10
    seq = dedup.producer_connected(dedup.ProducerSequence.create(None), dedup.broker_last_sequence_id(state, "pd"))
    assert seq.last == 10
    state, seq, out = spec.dedup_send(state, seq, "pd")
    assert (out.sequence_id, out.stored, seq.last) == (11, True, 11)
    # restart with initial_sequence_id=3: the configured id wins, next send is a duplicate
    seq = dedup.producer_connected(dedup.ProducerSequence.create(3), dedup.broker_last_sequence_id(state, "pd"))
    assert seq.last == 3
    state, seq, out = spec.dedup_send(state, seq, "pd")
    assert (out.sequence_id, out.status, seq.last) == (4, dedup.DUP, 4)


def test_dedup_off_stores_everything_and_restarts_at_minus_one():
    state = dedup.DedupState(enabled=False)
    seq = dedup.ProducerSequence.create(None)
    state, seq, a = spec.dedup_send(state, seq, "pd")
    state, seq, b = spec.dedup_send(state, seq, "pd", seq.last)
    assert a.stored and b.stored
    assert dedup.broker_last_sequence_id(state, "pd") == -1


def test_python_zero_means_not_given():
    assert dedup.python_sequence_argument(0) is None
    assert dedup.ProducerSequence.create(0) == dedup.ProducerSequence.create(None)


# ---------------------------------------------------------------- PLS-DELAY-*


@pytest.mark.parametrize("sub,honours", [("Shared", True), ("Key_Shared", True), ("KeyShared", True), ("Exclusive", False), ("Failover", False)])
def test_which_subscription_types_honour_the_delay(sub, honours):
    assert delayed.honours_delay(sub) is honours
    assert delayed.honours_delay(sub, persistent=False) is False


def test_cutoff_strict_and_non_strict():
    assert delayed.is_ready(1000, 1000, tick_ms=100, strict=True)
    assert not delayed.is_ready(1001, 1000, tick_ms=100, strict=True)
    assert delayed.is_ready(1100, 1000, tick_ms=100, strict=False)
    assert not delayed.is_ready(1101, 1000, tick_ms=100, strict=False)


def test_delivery_spans():
    def span(deliver_at, stored, **kw):
        got = delayed.delivery_span((deliver_at, deliver_at), Span(stored, stored), **kw)
        return got.start, got.end
    assert span(1500, 1000, subscription_type="Shared", tick_ms=100, strict=True, dispatch_slack_ms=50) == (1500, 1750)
    # non-strict: ready once deliver_at is within the next tick, so at once here
    assert span(1500, 1000, subscription_type="Shared", tick_ms=1000, strict=False, dispatch_slack_ms=0)[0] == 1000
    assert span(5000, 1000, subscription_type="Shared", tick_ms=1000, strict=False, dispatch_slack_ms=0) == (4000, 7000)
    assert span(5000, 1000, subscription_type="Exclusive", tick_ms=100, strict=True, dispatch_slack_ms=10) == (1000, 1000)
    assert span(5000, 1000, subscription_type="Shared", persistent=False, tick_ms=100, strict=True) == (1000, 1000)
    # deliver_after read the client clock somewhere inside the send
    assert delayed.deliver_at_range(Span(100, 130), deliver_after_ms=200) == (300, 330)
    assert delayed.deliver_at_range(Span(100, 130), deliver_at_ms=5000) == (5000, 5000)
    assert delayed.deliver_at_range(Span(100, 130)) is None


def test_delivery_order_late_then_now():
    msgs = [("late", 600.0), ("now", None)]
    assert spec.delayed_delivery_order(msgs, subscription_type="Shared", tick_ms=100, strict=True) == ["now", "late"]
    assert spec.delayed_delivery_order(msgs, subscription_type="Key_Shared", tick_ms=100, strict=True) == ["now", "late"]
    assert spec.delayed_delivery_order(msgs, subscription_type="Exclusive", tick_ms=100, strict=True) == ["late", "now"]
    assert spec.delayed_delivery_order(msgs, subscription_type="Failover", tick_ms=100, strict=True) == ["late", "now"]


def test_deliver_after_wins_and_falsy_values_are_skipped():
    assert delayed.effective_deliver_at(client_now_ms=100, deliver_at_ms=5000, deliver_after_ms=200) == 300
    assert delayed.effective_deliver_at(client_now_ms=100, deliver_at_ms=5000) == 5000
    assert delayed.effective_deliver_at(client_now_ms=100, deliver_at_ms=0, deliver_after_ms=0) is None
    assert not delayed.batchable(300) and delayed.batchable(None)


# ---------------------------------------------------------------- PLS-BATCH-*


def test_size_flush_makes_entries_of_two_two_one():
    items = [batching.Pending(40) for _ in range(5)]
    assert batching.plan_entries(items, batching.BatchConfig(max_bytes=100)) == ((0, 1), (2, 3), (4,))


def test_count_flush_and_exact_fit():
    items = [batching.Pending(1) for _ in range(10)]
    assert batching.plan_entries(items, batching.BatchConfig(max_messages=5)) == ((0, 1, 2, 3, 4), (5, 6, 7, 8, 9))
    # bytes == max: added (<= max), then full, sent alone
    assert batching.plan_entries([batching.Pending(100), batching.Pending(1)], batching.BatchConfig(max_bytes=100)) == ((0,), (1,))


def test_explicit_flush_and_delayed_message_bypass():
    items = [batching.Pending(1), batching.Pending(1, delayed=True), batching.Pending(1), batching.Flush(), batching.Pending(1)]
    entries = batching.plan_entries(items, batching.BatchConfig())
    assert entries == ((1,), (0, 2), (4,))
    ids = batching.assign_ids(entries, ledger=2108, single_messages=frozenset({1}))
    assert [str(ids[i]) for i in (1, 0, 2)] == ["(2108,0,-1,-1)", "(2108,1,-1,0)", "(2108,1,-1,1)"]


def test_key_based_batching_groups_by_key_in_first_sequence_order():
    keys = ["a", "b", "a", "", "b", "a"]
    items = [batching.Pending(2, partition_key=k or None) for k in keys]
    entries = batching.plan_entries(items, batching.BatchConfig(key_based=True))
    assert entries == ((0, 2, 5), (1, 4), (3,))
    ids = batching.assign_ids(entries, ledger=2054)
    assert [str(ids[i]) for i in range(6)] == [
        "(2054,0,-1,0)", "(2054,1,-1,0)", "(2054,0,-1,1)", "(2054,2,-1,0)", "(2054,1,-1,1)", "(2054,0,-1,2)"]
    assert batching.Pending(1, partition_key="p", ordering_key="o").batch_key == "o"


def test_redelivered_indexes_with_and_without_batch_index_ack():
    assert batching.nack_redelivers(4, 1, {0, 2}, batch_index_ack=False) == (0, 1, 2, 3)
    assert batching.nack_redelivers(4, 1, {0, 2}, batch_index_ack=True) == (1, 3)
    assert batching.redelivered_indexes(4, {0, 3}, batch_index_ack=True) == (1, 2)
    assert batching.redelivered_indexes(4, {0, 1, 2, 3}, batch_index_ack=False) == ()
    with pytest.raises(ValueError):
        batching.nack_redelivers(4, 4, set(), batch_index_ack=False)


def test_backlog_counts_entries():
    assert batching.backlog_entries([5, 5], [set(), set()]) == 2
    assert batching.backlog_entries([4], [{0, 2}]) == 1
    assert batching.backlog_entries([4, 1], [{0, 1, 2, 3}, set()]) == 1
    assert batching.backlog_entries([1, 1, 1], [{0}, set(), {0}]) == 1  # unbatched: one entry per message


# ---------------------------------------------------------------- PLS-DLQ-*


def test_dlq_deliveries_are_max_plus_one():
    assert spec.deliveries_before_dead_letter(2) == (0, 1, 2)
    assert spec.deliveries_before_dead_letter(1) == (0, 1)
    assert [dead_letter.on_delivery(c, 2) for c in (0, 1, 2, 3)] == ["deliver", "deliver", "deliver_and_remember", "to_dlq"]


def test_dlq_validation_and_types():
    assert dead_letter.check_max_redeliver_count(0) == "max_redeliver_count must be greater than 0"
    assert dead_letter.check_max_redeliver_count(-1) == "max_redeliver_count must be greater than 0"
    assert dead_letter.check_max_redeliver_count(1) is None
    assert dead_letter.check_max_redeliver_count(True) is not None  # a bool is not a count
    assert dead_letter.check_max_redeliver_count(0, "java") == "MaxRedeliverCount must be > 0."
    with pytest.raises(ValueError):
        spec.deliveries_before_dead_letter(0)
    assert dead_letter.dlq_applies("Shared") and dead_letter.dlq_applies("Key_Shared")
    assert not dead_letter.dlq_applies("Exclusive") and not dead_letter.dlq_applies("Failover")


def test_dlq_name_and_properties():
    t = "persistent://public/ns/dl-Shared"
    assert dead_letter.default_dlq_topic(t, "s") == "persistent://public/ns/dl-Shared-s-DLQ"
    assert dead_letter.default_dlq_topic(t + "-partition-3", "s") == t + "-partition-3-s-DLQ"
    dl = dead_letter.dead_letter(b"poison", {"k": "v"}, MessageId(2276, 0), t, partition_key="pk")
    assert dl.properties_dict() == {"k": "v", "ORIGIN_MESSAGE_ID": "(2276,0,-1,-1)", "REAL_TOPIC": t}
    assert dl.partition_key == "pk"


def test_dlq_copy_of_a_batched_message_names_its_index_in_either_client_text():
    """PLS-DLQ-003/006: each message of a dead-lettered batch is its own copy, its id with its batch index."""
    t = "persistent://public/ns/dl-batch"
    cpp = dead_letter.dead_letter(b"b1", {}, MessageId(2303, 0, -1, 1), t)
    java = dead_letter.dead_letter(b"b1", {}, MessageId(2303, 0, -1, 1), t, client="java", subscription="s")
    assert cpp.properties_dict()["ORIGIN_MESSAGE_ID"] == "(2303,0,-1,1)"
    assert java.properties_dict() == {"ORIGIN_MESSAGE_ID": "2303:0:-1:1", "ORIGIN_MESSAGE_IDY_TIME": "2303:0:-1:1",
                                      "REAL_TOPIC": t, "REAL_SUBSCRIPTION": "s"}


# ---------------------------------------------------------------- PLS-TTL-*, PLS-RETENTION-*


def test_ttl_expires_a_prefix_and_keeps_younger_messages():
    backlog = (retention.Stored("m0", 0), retention.Stored("m1", 10), retention.Stored("m2", 20), retention.Stored("fresh", 1300))
    assert retention.expire(backlog, 1350, 1) == (retention.Stored("fresh", 1300),)
    assert retention.expire(backlog, 1000, 1) == backlog  # nothing older than 1 s yet (now > publish + ttl)
    assert retention.expire(backlog, 1001, 1) == backlog[1:]
    assert retention.expire(backlog, 10_000, 0) == backlog  # TTL 0: off


def test_retention_answers():
    assert retention.acked_may_be_read(retention_covers=True) == frozenset({True})
    assert retention.acked_may_be_read(retention_covers=False) == frozenset({True, False})
    with pytest.raises(ValueError):
        batching.backlog_entries([1, 2], [set()])


# ---------------------------------------------------------------- PLS-COMPACT-*


def _probe_messages():
    K = compaction.KeyedMessage
    return (K("a1", "a", b"a1"), K("b1", "b", b"b1"), K("a2", "a", b"a2"), K("nokey", None, b"nokey"),
            K("c1", "c", b"c1"), K("b-empty", "b", b""), K("c-null", "c", b"", null_value=True), K("d1", "d", b"d1"))


def test_compacted_view_as_broker_408_shows_it():
    view = compaction.compacted_view(_probe_messages())
    assert [m.name for m in view] == ["a2", "b-empty", "c-null", "d1"]


def test_compacted_view_as_the_docs_describe_it():
    view = compaction.compacted_view(_probe_messages(), tombstones_kept=False)
    assert [m.name for m in view] == ["a2", "d1"]
    view = compaction.compacted_view(_probe_messages(), tombstones_kept=False, retain_null_key=True)
    assert [m.name for m in view] == ["a2", "nokey", "d1"]


def test_read_compacted_then_tail():
    msgs = _probe_messages() + (compaction.KeyedMessage("a3", "a", b"a3"),)
    assert [m.name for m in compaction.read_compacted(msgs, horizon=7)] == ["a2", "b-empty", "c-null", "d1", "a3"]
    with pytest.raises(ValueError):
        compaction.read_compacted(msgs, horizon=9)


@pytest.mark.parametrize("sub,persistent,ok", [
    ("Exclusive", True, True), ("Failover", True, True), ("Shared", True, False), ("Key_Shared", True, False),
    ("Exclusive", False, False)])
def test_read_compacted_allowed_only_on_exclusive_failover_persistent(sub, persistent, ok):
    got = compaction.check_read_compacted(sub, persistent=persistent)
    assert (got is None) is ok
    if not ok:
        assert got.error == "InvalidConfiguration" and got.rule == "PLS-COMPACT-005"


# ---------------------------------------------------------------- PLS-ACCESS-*

_OBSERVED_TABLE = {
    # (first, second) -> second's create result, as observed live
    ("Shared", "Shared"): "ok",
    ("Shared", "Exclusive"): "ProducerFenced",
    ("Shared", "ExclusiveWithFencing"): "ok",
    ("Exclusive", "Shared"): "ProducerBusy",
    ("Exclusive", "Exclusive"): "ProducerFenced",
    ("Exclusive", "ExclusiveWithFencing"): "ok",
    ("ExclusiveWithFencing", "Shared"): "ProducerBusy",
    ("ExclusiveWithFencing", "Exclusive"): "ProducerFenced",
    ("ExclusiveWithFencing", "ExclusiveWithFencing"): "ok",
    ("WaitForExclusive", "Shared"): "ProducerBusy",
    ("WaitForExclusive", "Exclusive"): "ProducerFenced",
    ("WaitForExclusive", "ExclusiveWithFencing"): "ok",
    ("Exclusive", "WaitForExclusive"): "waiting",
}


@pytest.mark.parametrize("first,second", sorted(_OBSERVED_TABLE))
def test_access_mode_table(first, second):
    got = am.create_producer((am.PresentProducer("p1", first),), second, "p2")
    assert got.result == _OBSERVED_TABLE[(first, second)]
    assert got.fences == (("p1",) if second == "ExclusiveWithFencing" else ())


def test_fenced_producer_send_errors_and_same_name():
    assert [am.fenced_send_error(m) for m in am.MODES] == ["Timeout", "ProducerFenced", "ProducerFenced", "Timeout"]
    got = am.create_producer((am.PresentProducer("same", "Shared"),), "Shared", "same")
    assert (got.result, got.rule) == ("ProducerBusy", "PLS-ACCESS-006")
    assert am.create_producer((), "Exclusive").result == "ok"
    with pytest.raises(ValueError):
        am.create_producer((), "Bogus")


# ---------------------------------------------------------------- PLS-NP-*


def test_non_persistent_delivers_only_to_connected_subscriptions():
    got = spec.non_persistent_deliveries([
        ("publish", "before"), ("connect", "s"), ("publish", "m1"), ("disconnect", "s"),
        ("publish", "while-closed"), ("connect", "s"), ("publish", "m2"), ("connect", "s2"), ("publish", "m3"),
    ])
    assert got == {"s": ["m1", "m2", "m3"], "s2": ["m3"]}
    assert str(non_persistent.message_id()) == "(0,0,-1,-1)"
    with pytest.raises(ValueError):
        spec.non_persistent_deliveries([("nack", "x")])
