"""Model/checker disagreements the generated traces of issue 16 found once they drew every feature.

Each test is the shrunk trace a model campaign (``fuzz --target model``, seeds 0-8, 2026-11-26)
reported: the model's own history FAILed in the checker. Each FAILs without the fix it names and
must PASS (or, where the model now says it does not follow the op, be not modelled) with it.
"""

from __future__ import annotations

from pathlib import Path

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome, load, make_trace

MAX = 5_242_880  # the broker's default maxMessageSize


def _judged(ops, trace_id="generated-finding"):
    history = ModelTarget().run(make_trace(trace_id, ops))
    return history, check(history)


def test_an_oversize_send_on_a_partitioned_topic_is_refused_before_it_is_routed():
    """Found as PLS-PROD-001 unexpected-rejection: the model checked the size of a send on a
    partitioned topic only after the decision point, so the checker's replay expected the send to
    succeed while the model's own history said MessageTooBig. Every partition's producer makes the
    same check (PLS-CHUNK-003), so the refusal is decided before routing."""
    history, report = _judged([
        ("create_topic", {"topic": "u", "partitions": 2}),
        ("create_producer", {"producer": "p1", "topic": "u"}),
        ("send", {"producer": "p1", "payload": "m1", "payload_size": MAX + 1}),
        ("send", {"producer": "p1", "payload": "m2"}),
    ])
    assert [(e.outcome.status, e.outcome.error) for e in history.events][2:] == [("rejected", "MessageTooBig"), ("ok", None)]
    assert not report.failures(), report.failures()


def test_a_flush_on_a_non_persistent_topic_claims_no_entry_layout():
    """Found as PLS-BATCH-001 / PLS-BATCH-007 / PLS-DELAY-006 wrong-value: every non-persistent
    message has the same id (PLS-NP-003), so the flush's planned entry offsets read as one batch.
    The model no longer plans an entry layout for a non-persistent topic's flush."""
    for producer in ({"batching": True, "batching_max_delay_ms": 100}, {}, {"chunking": True}):
        _, report = _judged([
            ("create_producer", {"producer": "p1", "topic": "non-persistent://n", **producer}),
            ("send", {"producer": "p1", "payload": "m1", "async": True, "deliver_at_ms": 1763}),
            ("send", {"producer": "p1", "payload": "m2", "async": True}),
            ("flush", {"producer": "p1"}),
        ])
        assert not report.failures(), (producer, report.failures())


def _redeliver_twice(dead_letter):
    subscribe = {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Key_Shared"}
    return [
        ("subscribe", {**subscribe, "dead_letter": dead_letter} if dead_letter else subscribe),
        ("create_producer", {"producer": "p1", "topic": "t"}),
        ("send", {"producer": "p1", "payload": "m3"}),
        ("receive", {"consumer": "c1", "timeout_ms": 200}),
        ("redeliver_unacked", {"consumer": "c1"}),
        ("receive", {"consumer": "c1", "timeout_ms": 200}),
        ("redeliver_unacked", {"consumer": "c1"}),
        ("receive", {"consumer": "c1", "timeout_ms": 200}),
    ]


def test_a_redeliver_all_by_a_consumer_with_a_dead_letter_policy_is_not_followed():
    """Found as PLS-DLQ-002 wrong-redelivery-count: with max_redeliver_count 1, the model handed
    m3 to the application a third time (count 2) after two redeliver_unacked. Both clients send a
    delivery whose count is above the limit to the dead-letter topic as it arrives (C++
    ``ConsumerImpl::messageReceived``); the model follows that only for the sole consumer of a Shared
    subscription (tests/conformance/test_dlq_redeliver_all.py), not on Key_Shared as here, and says so."""
    history, report = _judged(_redeliver_twice({"max_redeliver_count": 1}))
    assert any("redeliver_unacked not modelled (redeliver_unacked by a consumer with a dead-letter policy"
               in n for n in report.notes), report.notes
    assert not report.failures(), report.failures()
    # without a policy the model follows it: m3 comes a third time, with count 2
    history, report = _judged(_redeliver_twice(None))
    assert history.events[-1].outcome.value["message"]["redelivery_count"] == 2
    assert not report.failures(), report.failures()


def test_consumers_with_different_dead_letter_limits_on_one_subscription_are_not_followed():
    """Found as PLS-DLQ-002 wrong-redelivery-count: m5, nacked twice by a consumer without a
    policy, went to a consumer with max_redeliver_count 1 with count 2; that client would have
    dead-lettered it. The model keeps one limit per Shared / Key_Shared subscription."""
    history, report = _judged([
        ("create_producer", {"producer": "p1", "topic": "u"}),
        ("subscribe", {"consumer": "c2", "topic": "u", "subscription": "s1", "type": "Shared", "nack_delay_ms": 150}),
        ("send", {"producer": "p1", "payload": "m5"}),
        ("receive", {"consumer": "c2", "timeout_ms": 200}),
        ("nack", {"consumer": "c2", "message": "m5"}),
        ("receive", {"consumer": "c2", "timeout_ms": 300}),
        ("nack", {"consumer": "c2", "message": "m5"}),
        ("subscribe", {"consumer": "c4", "topic": "u", "subscription": "s1", "type": "Shared", "nack_delay_ms": 125,
                       "dead_letter": {"max_redeliver_count": 1}}),
        ("receive", {"consumer": "c4", "timeout_ms": 400}),
    ])
    assert any("consumers with different dead-letter limits" in n for n in report.notes), report.notes
    assert not report.failures(), report.failures()
    # the same limit on every consumer is followed
    _, report = _judged([
        ("subscribe", {"consumer": "c1", "topic": "u", "subscription": "s1", "type": "Shared", "dead_letter": {"max_redeliver_count": 1}}),
        ("subscribe", {"consumer": "c2", "topic": "u", "subscription": "s1", "type": "Shared", "dead_letter": {"max_redeliver_count": 1}}),
    ])
    assert not any("dead-letter limits" in n for n in report.notes), report.notes


# ---------------------------------------------------------------------------- found live (4.0.8, C++ 4.2.0)
# A live campaign of every feature (150 traces, 2026-11-26) gave these; each is the shrunk program.


def test_a_send_refused_for_its_size_uses_up_a_sequence_id_on_cpp_not_on_java():
    """PLS-DEDUP-006 wrong-value: after a MessageTooBig the next send had sequence id 1 on the broker,
    the model said 0. C++ takes the generated id before its size checks; Java checks first."""
    ops = lambda client: [
        ("create_producer", {"producer": "p1", "topic": "t", "client": client}),
        ("send", {"producer": "p1", "payload": "m1", "payload_size": MAX + 1}),
        ("send", {"producer": "p1", "payload": "m2"}),
    ]
    cpp, report = _judged(ops("python"))
    assert (cpp.events[1].outcome.error, cpp.events[2].outcome.value["sequence_id"]) == ("MessageTooBig", 1)
    assert not report.failures()
    java, _ = _judged(ops("java"))
    assert java.events[2].outcome.value["sequence_id"] == 0
    # the broker's answer of the old model (0 after a refused send) FAILs on the Python client
    wrong = History(cpp.header, cpp.events[:2] + (Event(cpp.events[2].op, Outcome.ok({**cpp.events[2].outcome.value, "sequence_id": 0}),
                                                         cpp.events[2].t_start_ms, cpp.events[2].t_end_ms),))
    assert ("PLS-DEDUP-006", "wrong-value") in {(v.rule_id, v.anomaly) for v in check(wrong).failures()}


def test_a_non_batching_async_send_is_delivered_before_any_flush():
    """PLS-MSG-001 wrong-value ("which no send in this history produced"): the client sends a
    non-batching producer's async message at once; the model had held it until a flush."""
    history, report = _judged([
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Exclusive"}),
        ("create_producer", {"producer": "p1", "topic": "t"}),
        ("send", {"producer": "p1", "payload": "m1", "async": True}),
        ("receive", {"consumer": "c1", "timeout_ms": 200}),
        ("flush", {"producer": "p1"}),
    ])
    assert history.events[3].outcome.value["message"]["payload"] == "m1"
    assert list(history.events[4].outcome.value["message_ids"]) == ["m1"]
    assert not report.failures(), report.failures()


def test_oversize_messages_of_a_batching_producer():
    """PLS-PROD-001 unexpected-rejection: a batching producer's message too big for any batch is
    refused with MessageTooBig (the model had not checked batched sends); one that would join
    messages already in the batch is not followed. An async send too big (its error comes with a later
    flush: PLS-BATCH-001 unexpected-rejection) was not followed either; since 7 Dec 2026 it is on a producer that
    neither batches nor is partitioned (tests/model/test_async_send_too_big.py)."""
    history, report = _judged([
        ("create_producer", {"producer": "p1", "topic": "t", "batching": True, "batching_max_delay_ms": 1}),
        ("send", {"producer": "p1", "payload": "m3", "payload_size": MAX + 1}),
    ])
    assert history.events[-1].outcome.error == "MessageTooBig" and not report.failures()
    _, report = _judged([
        ("create_producer", {"producer": "p1", "topic": "t", "batching": True, "batching_max_delay_ms": 1000}),
        ("send", {"producer": "p1", "payload": "m1", "async": True}),
        ("send", {"producer": "p1", "payload": "m2", "payload_size": MAX + 1}),
        ("create_producer", {"producer": "p2", "topic": "u"}),
        ("send", {"producer": "p2", "payload": "m3", "payload_size": MAX + 1, "async": True}),
    ])
    assert [n.split(" not modelled")[0] for n in report.notes] == ["step 3: send"], report.notes
    assert not report.failures()


def test_a_batched_message_on_a_non_persistent_topic_keeps_its_batch_index():
    """PLS-NP-003 wrong-value: a batching C++ producer's sync send on a non-persistent topic
    returned (0,0,-1,0), not (0,0,-1,-1)."""
    history, report = _judged([
        ("subscribe", {"consumer": "c1", "topic": "non-persistent://n", "subscription": "s", "type": "Exclusive"}),
        ("create_producer", {"producer": "p2", "topic": "non-persistent://n", "batching": True, "batching_max_delay_ms": 10}),
        ("send", {"producer": "p2", "payload": "m4", "payload_size": 4096}),
        ("receive", {"consumer": "c1", "timeout_ms": 200}),
    ])
    assert history.events[2].outcome.value["message_id"] == [0, 0, -1, 0]
    assert history.events[3].outcome.value["message"]["message_id"] == [0, 0, -1, 0]
    assert not report.failures(), report.failures()
    unbatched = History(history.header, history.events[:2] + (
        Event(history.events[2].op, Outcome.ok({**history.events[2].outcome.value, "message_id": [0, 0, -1, -1]}),
              history.events[2].t_start_ms, history.events[2].t_end_ms),) + history.events[3:])
    assert "PLS-NP-003" in {v.rule_id for v in check(unbatched).failures()}


def test_a_receive_while_a_batch_may_be_in_flight_is_followed():
    """PLS-BATCH-009 (issue 46; before it the model refused such a receive): the batch timer
    (batching_max_delay_ms after the batch's first message, C++) sends a batching producer's async
    messages before any flush. A receive before the timer gets nothing; one after it gets m1, and a
    history that shows either is followed; one that got nothing although the batch surely left is a
    lost message, and one that got m1 before its batch could leave breaks PLS-BATCH-009."""
    base = [
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Exclusive"}),
        ("create_producer", {"producer": "p1", "topic": "t", "batching": True, "batching_max_delay_ms": 50}),
        ("send", {"producer": "p1", "payload": "m1", "async": True}),
    ]
    history, report = _judged(base + [("receive", {"consumer": "c1", "timeout_ms": 20})])
    assert history.events[-1].outcome.value == {"message": None} and not report.failures()
    history, report = _judged(base + [("receive", {"consumer": "c1", "timeout_ms": 200})])
    assert history.events[-1].outcome.value["message"]["payload"] == "m1" and history.events[-1].t_end_ms == 50
    assert not report.failures(), report.failures()

    def got(message, end: float) -> History:
        return History(history.header, history.events[:-1] + (Event(history.events[-1].op, Outcome.ok({"message": message}),
                                                                     0.0, end),))
    m1 = {"payload": "m1", "message_id": [1, 0, -1, 0], "topic": "t", "key": None, "ordering_key": None, "properties": {},
          "event_time": 0, "publish_time": 0, "redelivery_count": 0, "producer_name": "model-0"}
    assert not check(got(m1, 100.0)).failures()  # a live history that got m1 at 100 ms
    lost = {(v.rule_id, v.anomaly) for v in check(got(None, 200.0)).failures()}
    assert ("PLS-EXCL-002", "lost-message") in lost, lost
    early = {(v.rule_id, v.anomaly) for v in check(got(m1, 10.0)).failures()}
    assert ("PLS-BATCH-009", "wrong-value") in early, early
    gap = {(v.rule_id, v.anomaly) for v in check(got({**m1, "message_id": [1, 0, -1, 1]}, 100.0)).failures()}
    assert ("PLS-BATCH-009", "wrong-value") in gap, gap  # index 1, but nothing was sent before m1


def test_a_consumer_the_model_stopped_following_still_leaves_its_subscription():
    """PLS-SUBTYPE-001 missing-rejection: the checker had kept an unsubscribed consumer it no
    longer followed connected, and expected the next consumer's other type to be refused."""
    history, report = _judged([
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s1", "type": "Shared"}),
        ("create_producer", {"producer": "p1", "topic": "t", "batching": True, "batching_max_delay_ms": 10}),
        ("send", {"producer": "p1", "payload": "m1", "async": True}),
        ("receive", {"consumer": "c1", "timeout_ms": 500}),  # m1, once the batch timer sent it (PLS-BATCH-009)
        ("unsubscribe", {"consumer": "c1"}),
        ("subscribe", {"consumer": "c5", "topic": "t", "subscription": "s1", "type": "Failover", "consumer_name": "c5"}),
    ])
    assert history.events[-1].outcome.status == "ok"
    assert not report.failures(), report.failures()


def test_a_retry_copy_is_judged_on_the_topic_it_came_from():
    """PLS-FAILOVER-005 wrong-consumer on the model's own history (a model campaign with the
    unacked limit drawn, 2026-11-26): a Java Failover consumer with enable_retry reconsumed m4; a
    seek by another consumer made m4 unacked again on the main subscription, so when the retry
    copy arrived (topic u-s1-RETRY, a Shared subscription) the checker looked m4 up on the main
    topic and judged it by Failover's priority rule. The receipt's topic now settles which copy
    it is (``Broker.message_for(..., topic)``)."""
    from pathlib import Path

    from conformance.trace import load

    trace = load(Path(__file__).parent / "generated_findings" / "retry-copy-after-seek.trace.jsonl")
    history = ModelTarget().run(trace)
    got = history.events[-1].outcome.value["message"]
    assert (got["payload"], got["topic"]) == ("m4", "u-s1-RETRY")
    assert not check(history).failures(), check(history).failures()


def test_an_async_send_resent_after_an_unknown_duplicate_may_be_reported_as_a_duplicate():
    """PLS-BATCH-007 wrong-value ("labels ['m1'] missing"), live 4.0.8: under deduplication an
    async m1 (sequence id 20) was still in flight when a sync m2 (sequence id 0) arrived; the broker
    answered m2 Unknown, the client reconnected and resent both, and both were acked as duplicates:
    the flush reported m1 as (-1, -1, -1, -1) though m1 is stored. The recorded history now PASSes;
    a flush that reports an async send as a duplicate with no duplicate after it still FAILs."""
    from pathlib import Path

    from conformance.trace import load

    live = load(Path(__file__).parent / "generated_findings" / "async-resent-as-duplicate-4.0.8.history.jsonl")
    assert not check(live).failures(), check(live).failures()
    history, _ = _judged([
        ("set_policy", {"deduplication": True}),
        ("create_producer", {"producer": "p1", "topic": "t", "name": "n3"}),
        ("send", {"producer": "p1", "payload": "m1", "async": True, "sequence_id": 20}),
        ("send", {"producer": "p1", "payload": "m2", "sequence_id": 30}),
        ("flush", {"producer": "p1"}),
    ])
    flush = history.events[-1]
    dup = History(history.header, history.events[:-1] + (Event(flush.op, Outcome.ok(
        {"message_ids": {"m1": [-1, -1, -1, -1]}, "id_texts": {"m1": "(-1,-1,-1,-1)"}}), flush.t_start_ms, flush.t_end_ms),))
    assert "PLS-BATCH-007" in {v.rule_id for v in check(dup).failures()}


def test_more_live_findings_of_the_all_features_campaign_pass_on_their_recorded_histories():
    """Live 4.0.8 (C++ 4.2.0) histories, each FAILed before its fix:
    - PLS-ACK-001 ack-resurrection: async m1, then seek to latest, then m1 delivered: the broker had
      not stored m1 when the position was taken; such a seek is not followed now
      (``check_no_async_in_flight``);
    - PLS-PROD-001 unexpected-rejection: batching_max_messages 1 is refused by the C++ client
      (``setBatchingMaxMessages``: InvalidArgument, PLS-BATCH-002);
    - PLS-READER-001 unexpected-rejection: a read_compacted reader on a non-persistent topic is
      refused by the broker with NotAllowedError (PLS-COMPACT-005), the topic existing or not;
    - PLS-ROUTE-002 wrong-partition: a keyless send refused with MessageTooBig on a partitioned
      producer still moved the round-robin router (it picks the partition before the partition's
      producer checks the size);
    - Java (driver, pulsar-client 4.0.8): PLS-BATCH-001/002, a periodic 1 ms batch timer split two
      async sends the model batched (a Java batch under 1 s is not followed now); PLS-CHUNK-002, the
      id text 'l:e:p' was not read; PLS-PROD-001, initial_sequence_id 0 is taken as given (last 0)."""
    from pathlib import Path

    from conformance.trace import load

    folder = Path(__file__).parent / "generated_findings"
    for name in ("async-in-flight-then-seek-latest", "batching-max-messages-1", "read-compacted-reader-non-persistent",
                 "refused-send-advances-round-robin", "java-periodic-batch-timer", "java-id-text", "java-initial-sequence-id-0"):
        live = load(folder / f"{name}-4.0.8.history.jsonl")
        report = check(live)
        assert not report.failures(), (name, report.failures())
        assert [v for v in report.verdicts if v.status == "PASS"], name
    # and the model itself says so
    history, _ = _judged([("create_producer", {"producer": "p1", "topic": "t", "batching": True, "batching_max_messages": 1})])
    assert history.events[0].outcome.error == "InvalidArgument"
    assert "greater than 1" in history.events[0].outcome.detail
    history, _ = _judged([("create_reader", {"reader": "r1", "topic": "non-persistent://n", "start": "earliest", "read_compacted": True})])
    assert history.events[0].outcome.error == "NotAllowedError"


def test_a_chunked_message_counts_once_per_chunk_in_the_backlog_and_a_java_batch_uses_up_ids():
    """From a Java live campaign (4.0.8, FLAKY 0/2 on re-runs, two verdicts kept): PLS-BACKLOG-001
    wrong-backlog, a chunked message of 2 chunks unacked showed backlog 2 (each chunk is an entry);
    PLS-DEDUP-006 wrong-value, a Java batching producer's message too big for a batch used up its
    sequence id (Java checks a batched message's size when the batch is complete, after the id is
    taken). The recorded history PASSes now."""
    from pathlib import Path

    from conformance.trace import load

    live = load(Path(__file__).parent / "generated_findings" / "java-chunk-backlog-and-batched-too-big-4.0.8.history.jsonl")
    assert not check(live).failures(), check(live).failures()
    history, report = _judged([
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Exclusive"}),
        ("create_producer", {"producer": "p1", "topic": "t", "chunking": True}),
        ("send", {"producer": "p1", "payload": "m1", "payload_size": 2 * MAX}),
        ("stats", {"topic": "t", "subscription": "s"}),
        ("receive", {"consumer": "c1", "timeout_ms": 200}),
        ("ack", {"consumer": "c1", "message": "m1"}),
        ("advance_time", {"ms": 500}),
        ("stats", {"topic": "t", "subscription": "s"}),
    ])
    assert [e.outcome.value["backlog"] for e in history.events if e.op.op == "stats"] == [3, 0]
    assert not report.failures()
    java, _ = _judged([
        ("create_producer", {"producer": "p1", "topic": "t", "client": "java", "batching": True, "batching_max_delay_ms": 1}),
        ("send", {"producer": "p1", "payload": "m1", "payload_size": MAX + 1}),
        ("send", {"producer": "p1", "payload": "m2"}),
    ])
    assert java.events[1].outcome.error == "MessageTooBig" and java.events[2].outcome.value["sequence_id"] == 1


# ---- the Java live campaign of every feature with transactions (fuzz --client java --features all, 40 traces,
# broker 4.0.8, 2026-11-26): three FAILs, each a model difference, kept in conformance/regressions/ as well.

_REGRESSIONS = Path(__file__).resolve().parents[2] / "conformance" / "regressions"


def test_the_java_client_reports_the_highest_acknowledged_sequence_id():
    """Found as PLS-DEDUP-006 wrong-value: after an explicit sequence id 29 and a generated 0, the Java
    client's last_sequence_id is 29 (ProducerImpl#ackReceived keeps the maximum); the C++ client's is 0."""
    live = load(_REGRESSIONS / "pls-dedup-006-wrong-value-3a8fbbfaa61f.history.jsonl")
    assert not check(live).failures(), check(live).failures()
    ops = [("create_producer", {"producer": "p1", "topic": "t", "client": "java"}),
           ("send", {"producer": "p1", "payload": "m1", "sequence_id": 29}),
           ("send", {"producer": "p1", "payload": "m2"})]
    java, _ = _judged(ops)
    python, _ = _judged([(op, {k: v for k, v in a.items() if k != "client"}) for op, a in ops])
    assert java.events[-1].outcome.value["sequence_id"] == 29
    assert python.events[-1].outcome.value["sequence_id"] == 0


def test_the_java_client_refuses_a_cumulative_ack_on_shared_before_it_routes_the_id():
    """Found as PLS-ACK-001 wrong-error: a Java pattern consumer on Shared answered InvalidConfiguration
    where the model, following the C++ order, expected the routing refusal (OperationNotSupported)."""
    live = load(_REGRESSIONS / "pls-ack-001-wrong-error-385626413e1a.history.jsonl")
    report = check(live)
    assert not report.failures(), report.failures()
    assert report.rule_verdicts().get("PLS-ACK-006") == "PASS"


def test_expiring_messages_on_a_non_persistent_topic_is_refused():
    """Found as PLS-TTL-002 unexpected-rejection: the broker answers HTTP 405 ("Expire messages on a
    non-persistent topic is not allowed"); the model said the pass runs."""
    live = load(_REGRESSIONS / "pls-ttl-002-unexpected-rejection-9af966e51625.history.jsonl")
    report = check(live)
    assert not report.failures(), report.failures()
    history, _ = _judged([
        ("subscribe", {"consumer": "c1", "topic": "non-persistent://n", "subscription": "s", "type": "Exclusive"}),
        ("expire_messages", {"topic": "non-persistent://n", "subscription": "s", "seconds": 0}),
    ])
    assert (history.events[-1].outcome.status, history.events[-1].outcome.error) == ("rejected", "OtherError")


# ---- the live campaign with schemas (fuzz --client mixed --features all, broker 4.0.8, 2026-11-26)


def test_a_multi_topic_consumer_puts_each_of_its_topics_in_use():
    """Found as PLS-SCHEMA-018 unexpected-rejection: a multi-topic consumer without a schema on t and u made u "in
    use" (PersistentTopic#addSchemaIfIdleOrCheckCompatible counts every connected consumer), so a consumer bringing a
    schema to u was refused (PLS-SCHEMA-020); the model had counted only single-topic consumers."""
    live = load(_REGRESSIONS / "pls-schema-018-unexpected-rejection-b17026d385ae.history.jsonl")
    report = check(live)
    assert not report.failures(), report.failures()
    assert report.rule_verdicts().get("PLS-SCHEMA-020") == "PASS"
