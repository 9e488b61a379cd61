"""When a full batch leaves, and what a cumulative ack inside a batch acks (6 Dec 2026, issue 45's upstream tests).

- PLS-BATCH-009: a batch leaves with the add that fills it (or finds no room in it), whatever the timer does
  (``batching.leave_window``); the Java timer sends nothing within the delay of its producer's creation
  (``BatchTimer.for_client``: apache/pulsar ``ProducerImpl#batchFlushTask``, ``lastBatchSendNanoTime``), so a Java
  batch filled in that time surely left full. Pinned by ConsumerRedeliveryTest#testAckNotSent (four cases
  up-java-a-redelivery-ack-not-sent-*), which the model answered with nothing before.
- PLS-BATCH-004: without batch index ack, a cumulative ack of a message inside a batch that is not whole acks only up
  to the entry before it (``FeatureOps._feature_ack_cumulative``: Java ``MessageIdAdvUtils#prevMessageId``, Go
  ``internalAckIDCumulative`` ``prev()``, C++ ``BatchMessageAcker``). Pinned by pulsar-client-cpp BatchMessageTest
  testCumulativeAck / testMixedAck (cases up-cpp-batch-*).
- PLS-BATCH-009: a Java sync send on a partitioned producer sends every partition's open batch (not Python, not Go)
  (``FeatureOps.sync_send_flushed_partitions``), found live once the quiet period made the model strict there.

Each rule is shown followed on the model and broken by a history that must FAIL.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from case_history_helpers import failures
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import History, Outcome, load, make_trace, received_message
from reference_model import batching
from reference_model.timing import Span


def _spans(*starts: float) -> list[Span]:
    return [Span(t, t + 1) for t in starts]


# ------------------------------------------------------------------ leave windows (PLS-BATCH-009)

def test_a_batch_leaves_by_the_add_that_fills_it():
    """Five messages, batchingMaxMessages 5, a one-hour delay. The batch holding the first starts with it, so it leaves
    by the fifth's add at the latest. The others may be in a batch a timer cut started later, which the fifth does not
    fill, unless no cut was possible: C++ (its timer runs an hour from the batch's first message) and a Java producer
    created at 0 (its timer sends nothing within the hour)."""
    items = [batching.Pending(5) for _ in range(5)]
    sent = _spans(10, 20, 30, 40, 50)
    config = batching.BatchConfig(max_messages=5)
    hour = 3_600_000.0

    def ends(timer: batching.BatchTimer, cfg: batching.BatchConfig = config) -> list[float]:
        return [batching.leave_window(items, sent, j, cfg, timer).end for j in range(5)]

    assert ends(batching.BatchTimer.for_client("cpp", hour)) == [51.0] * 5
    assert ends(batching.BatchTimer.for_client("java", hour, created_at=0.0)) == [51.0] * 5
    assert batching.leave_window(items, sent, 4, config, batching.BatchTimer.for_client("java", hour, created_at=0.0)) \
        == Span(50.0, 51.0)
    unknown_phase = ends(batching.BatchTimer.for_client("java", hour))  # its creation unknown: a cut may come any time
    assert unknown_phase[0] == 51.0 and unknown_phase[4] == 51.0 + 2 * hour, unknown_phase
    go = batching.BatchConfig(max_messages=5, full_batch_waits=True)  # Go: a full batch waits for the next message
    assert ends(batching.BatchTimer.for_client("go", hour), go)[0] == 11.0 + hour


def test_the_java_timer_may_cut_once_its_quiet_period_is_over():
    """The same sends 2 h after the producer's creation: the Java timer may have cut anywhere, so the last message's
    window reaches two periods past its add, and a split with a cut matches (PLS-BATCH-009)."""
    hour = 3_600_000.0
    items = [batching.Pending(5) for _ in range(5)]
    sent = _spans(*(2 * hour + 10 * k for k in range(1, 6)))
    config = batching.BatchConfig(max_messages=5)
    quiet_over = batching.BatchTimer.for_client("java", hour, created_at=0.0)
    assert batching.leave_window(items, sent, 4, config, quiet_over).end == sent[4].end + 2 * hour
    assert batching.match_split(items, sent, [(0, 1), (2, 3, 4)], config, quiet_over).allowed
    in_quiet = batching.BatchTimer.for_client("java", hour, created_at=2 * hour)
    verdict = batching.match_split(items, sent, [(0, 1), (2, 3, 4)], config, in_quiet)
    assert not verdict.allowed and verdict.violations[0][0] == "PLS-BATCH-009", verdict


# ------------------------------------------------------------------ the model follows a full Java batch

FULL_BATCH = (
    ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Exclusive", "client": "java"}),
    ("create_producer", {"producer": "p", "topic": "t", "batching": True, "batching_max_messages": 5,
                         "batching_max_delay_ms": 3_600_000, "client": "java"}),
    *(("send", {"producer": "p", "payload": f"m{i}", "async": True}) for i in range(5)),
    ("receive", {"consumer": "c1", "timeout_ms": 500}),
)


def _live(h: History) -> History:
    """``h`` told as a broker's history (the checker judges the model's own histories as its own choices)."""
    return History(replace(h.header, target="embedded"), h.events)


def test_a_full_java_batch_is_received_before_any_flush():
    h = ModelTarget(client="java").run(make_trace("t", FULL_BATCH))
    got = received_message(h.events[-1].outcome)
    assert got is not None and got.payload == "m0", h.events[-1].outcome
    assert not failures(_live(h))


def test_nothing_received_after_a_full_java_batch_fails():
    """The broker had the full batch from the fifth add on: a 500 ms receive that brings nothing breaks the delivery
    rule (the message was published and not delivered)."""
    h = ModelTarget(client="java").run(make_trace("t", FULL_BATCH))
    events = list(h.events)
    events[-1] = replace(events[-1], outcome=Outcome.ok({"message": None}), t_end_ms=events[-1].t_start_ms + 500)
    broken = failures(_live(History(h.header, tuple(events))))
    assert any(anomaly == "lost-message" or rule == "PLS-EXCL-002" for rule, anomaly in broken), broken


# ------------------------------------------------------------------ cumulative ack inside a batch (PLS-BATCH-004)

def _cumulative_inside(client: str, batch_index_ack: bool = False):
    return (
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Exclusive", "client": client,
                       "batch_index_ack": batch_index_ack}),
        ("create_producer", {"producer": "p", "topic": "t", "batching": True, "batching_max_messages": 3,
                             "client": client}),
        *(("send", {"producer": "p", "payload": f"m{i}", "async": True}) for i in range(6)),
        ("flush", {"producer": "p"}),
        *(("receive", {"consumer": "c1", "timeout_ms": 500}) for _ in range(6)),
        ("ack_cumulative", {"consumer": "c1", "message": "m4"}),  # index 1 of the second entry (m3, m4, m5)
        ("close", {"handle": "c1"}),
        ("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Exclusive", "client": client,
                       "batch_index_ack": batch_index_ack}),
        *(("receive", {"consumer": "c2", "timeout_ms": 500}) for _ in range(4)),
    )


def _payloads(h: History, consumer: str) -> list[str | None]:
    out = []
    for e in h.events:
        if e.op.op == "receive" and e.op.args["consumer"] == consumer:
            m = received_message(e.outcome)
            out.append(None if m is None else m.payload)
    return out


def test_a_cumulative_ack_inside_a_batch_acks_the_entry_before_it():
    for client in ("python", "java", "go"):
        h = ModelTarget(client=client).run(make_trace("t", _cumulative_inside(client)))
        assert _payloads(h, "c2") == ["m3", "m4", "m5", None], (client, _payloads(h, "c2"))
        assert not failures(_live(h)), client


def test_with_batch_index_ack_it_acks_up_to_the_message():
    h = ModelTarget(client="java").run(make_trace("t", _cumulative_inside("java", batch_index_ack=True)))
    assert _payloads(h, "c2") == ["m5", None, None, None], _payloads(h, "c2")


def test_a_consumer_that_skips_the_kept_batch_fails():
    """The re-subscribed consumer getting m5 first (as if the cumulative ack had reached m4) breaks the rules: m3 and
    m4 were never acked at the broker."""
    h = ModelTarget(client="python").run(make_trace("t", _cumulative_inside("python")))
    m5 = next(received_message(e.outcome) for e in h.events
              if received_message(e.outcome) is not None and received_message(e.outcome).payload == "m5")
    events = list(h.events)
    firsts = [i for i, e in enumerate(events) if e.op.op == "receive" and e.op.args["consumer"] == "c2"]
    events[firsts[0]] = replace(events[firsts[0]], outcome=Outcome.ok({"message": m5.to_json()}))
    for i in firsts[1:]:
        events[i] = replace(events[i], outcome=Outcome.ok({"message": None}))
    assert failures(_live(History(h.header, tuple(events))))


# ------------------------------------------------------------------ a sync send flushes every partition (Java)

SYNC_FLUSH = Path(__file__).resolve().parents[1] / "conformance" / "live_histories" / \
    "live-4.0.8-java-sync-send-flushes-partitions.jsonl"


def test_a_java_sync_send_flushes_every_partitions_batch():
    """Live 4.0.8, Java (campaign of 6 Dec 2026, regression pls-batch-009-wrong-value-acfcc203fb2b): a partitioned
    producer (delay 100 ms, 5 ms old) sends m1 async to partition 0, then m2 sync to partition 1; m1 arrives 8 ms
    later, before its partition's timer could fire. ``ProducerBase#send`` calls ``PartitionedProducerImpl
    #triggerFlush``, which sends every partition's open batch: followed, no FAIL."""
    report = check(load(SYNC_FLUSH))
    assert not report.failures(), report.summary()


def test_without_the_sync_send_the_early_batch_fails():
    """The same history with m2 sent async (no flush anywhere): m1 arriving before the Java timer's quiet period ends
    breaks PLS-BATCH-009."""
    h = load(SYNC_FLUSH)
    events = list(h.events)
    i = next(k for k, e in enumerate(events) if e.op.op == "send" and e.op.args["payload"] == "m2")
    events[i] = replace(events[i], op=replace(events[i].op, args={**events[i].op.args, "async": True}),
                        outcome=Outcome.ok({}))
    report = check(History(h.header, tuple(events)))
    assert "PLS-BATCH-009" in {v.rule_id for v in report.failures()}, report.summary()


def test_a_python_sync_send_leaves_the_other_partitions_batches():
    """Live 4.0.8, Python (campaign of 1 Dec 2026, history fz-8c05faf471ac): async m2 (100 ms delay) on one partition,
    then a sync m3 on the other; a Latest subscription made after the sync send got m2, which its timer sent. The
    Python binding's sync send does not flush the other partitions (``Profile.sync_send_flushes_all_partitions``)."""
    path = SYNC_FLUSH.with_name("live-4.0.8-python-sync-send-own-partition.jsonl")
    report = check(load(path))
    assert not report.failures(), report.summary()
