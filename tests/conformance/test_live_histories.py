"""Histories recorded on the live broker (4.0.8 unless the name says 3.3.6; pulsar-client 3.13.0 / C++ 4.2.0), judged offline.

Each one taught the model something; the test pins what the checker must say about it, so a
change to the model that would turn a measured behaviour into a false FAIL (or hide a real one)
fails here. No broker is needed: the histories are data.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.checker import check
from conformance.trace import load

HERE = Path(__file__).parent / "live_histories"

# history -> (rules that must FAIL, anomalies that must be reported INDETERMINATE, why)
CASES = {
    "live-random-2": (set(), set(),
                      "a partitioned (multi-topics) consumer refuses to ack an id from the producer "
                      "(OperationNotSupported) and ignores a nack of it"),
    "live-random-4": (set(), {"ack-resurrection"},
                      "copies already in a receiver queue surface after the ack (C++ keeps its queue)"),
    "live-random-5": (set(), {"ack-resurrection"},
                      "a seek by another consumer does not clear the active consumer's queue"),
    "live-random-7": ({"PLS-BACKLOG-001"}, set(),
                      "after a seek, msgBacklog still subtracts acked holes below the new position: "
                      "stats said 2 with 4 entries unacknowledged (reproduced by hand: a broker finding)"),
    "live-random-8": (set(), {"ack-resurrection"},
                      "a nack of a message still in the consumer's queue is redelivered by the broker"),
    "live-random-22": (set(), set(), "two redeliver_unacked in a row: two queued copies, counts 1 and 2"),
    "live-random-28": (set(), set(), "on Exclusive, a nack of an acked message still rewinds"),
    "live-random-30": (set(), {"ack-resurrection"}, "an ack by id does not purge the active consumer's queue"),
    "live-random-51": (set(), set(), "redeliver_unacked: the consumer's queued copy and the broker's redelivery both arrive"),
    "live-random-58": (set(), set(), "the same on a partitioned topic: the redeliverer keeps its copy, another consumer gets count 1"),
    "live-random-68": (set(), set(), "the same with six Shared consumers"),
    "live-random-72": (set(), set(), "Exclusive: a message prefetched before redeliver_unacked arrives twice"),
    "live-random-87": (set(), set(), "seven Shared consumers, seeks, redeliveries: one nondeterministic run"),
    "live-3.3.6-key-held-not-moved": (set(), set(),
                                      "broker 3.3.6 (the case keyshared-key-held-not-moved): k2 moved to b when b "
                                      "joined, and m2 waited until a acked m1 (the 3.x recently-joined rule, "
                                      "PLS-KEYSHARED-007, judged with the 3.3.6 selector)"),
    "live-3.3.6-compact-tombstone-deletes-key": (set(), set(),
                                                 "broker 3.3.6: b'' and a null value of c deleted their keys; the compacted "
                                                 "reader read d1 only, as the docs say (PLS-COMPACT-006; 4.0.8 keeps "
                                                 "them: KD-003)"),
    "live-3.3.6-compact-latest-per-key": (set(), set(),
                                          "broker 3.3.6: the compacted view b1, a2, c1, d1 without the keyless message, "
                                          "then a3 as published, as on 4.0.8"),
    "live-3.3.6-ack-cumulative-failover": (set(), set(),
                                           "broker 3.3.6: the cumulative ack of m2 on Failover held; c2 got nothing after "
                                           "c1 closed (PLS-ACK-002, PLS-FAILOVER-003 PASS on 3.x too)"),
    "live-3.3.6-ack-cumulative-key-shared-refused": (set(), set(),
                                                     "broker 3.3.6: the client refused the cumulative ack on Key_Shared "
                                                     "(PLS-ACK-003); the broker is never asked (it would ignore it: "
                                                     "Consumer#messageAcked, isIndividualAckMode)"),
    "live-3.3.6-batch-full-at-once-backlog": (set(), set(),
                                               "broker 3.3.6, C++ client: one 100-byte async send on a producer with "
                                               "batching_max_bytes 64 fills the container, so the batch leaves at once: "
                                               "stats said backlog 1 before any flush (the recorded 1 of the 3.3.6 "
                                               "campaign's FLAKY pls-backlog-001-wrong-backlog-6130e6b9a9fe)"),
    "live-slow-first-delivery": (set(), set(),
                                 "the main job's nack-delay-floor case (2026-11-25): the first message on a fresh topic "
                                 "reached the only, waiting consumer 233 ms after its send while the calibrated band "
                                 "was 34 ms; a first delivery has no deadline, so slow is not lost"),
    "live-java-dlq-copies-in-set-order": (set(), set(),
                                          "broker 4.0.8, Java client (upstream case up-java-dlq-event-time, 3 Dec 2026): "
                                          "hello-0..2 dead-lettered after one ack timeout were written to the DLQ as "
                                          "hello-2, hello-1, hello-0 (the client's hash set order) and d1 read them so; "
                                          "the model follows that order (Broker._next_dead_letter)"),
    "live-java-partitioned-flush-after-failed-send": (set(), set(),
        "Java campaign of issue 46, 5 Dec 2026: a partitioned batching producer's m4 refused MessageTooBig, async m6 "
        "and m7 sent to partitions the history never shows, then the flush failed MessageTooBig (another partition's "
        "last send was the failed one): the flush is not followed, m6 and m7 are judged nowhere and say so"),
    "live-java-partitioned-seek-not-followed-then-stats": (set(), set(),
        "Java campaign of issue 46, 5 Dec 2026: a partitioned consumer's seek by m3's publish time, m2 on the other "
        "partition sent in the same milliseconds, is not followed; the backlog after it is then not judged against "
        "the cursor the model left unmoved (it said 2 where the broker said 1)"),
    "live-keyshared-unshown-batched-send": (set(), set(),
        "python campaign of issue 46, 5 Dec 2026: m2, async in an open batch of a partitioned producer, its partition "
        "never shown, then m6 of the same ordering key received on partition 0: m2 was elsewhere (m6 has that "
        "partition producer's sequence id 1), so the Key_Shared consumer is not held to it"),
    "live-go-refused-ordering-key-takes-no-round-robin-step": (set(), set(),
        "Go campaign of issue 46, 5 Dec 2026: m2 to partition 1, m8 with an ordering key refused MessageTooBig, m10 to "
        "partition 0: the Go router hashes the ordering key, so the refused send took no round-robin step"),
    "live-go-partitioned-batch-in-flight-uncounted": (set(), set(),
        "Go campaign of issue 46, 5 Dec 2026: an async 5 MB batched send on a one-partition topic, stats at once said 0: "
        "a partition producer's batch in flight may not be counted yet"),
    "live-nack-request-survives-seek": (set(), set(),
                                        "Python, Shared, dead-letter limit 1: nack m1, nack it again, seek to its publish "
                                        "time, receive m1 (count 0), nack it: m1 came back count 1 about 213 ms after that "
                                        "nack (delay 263 ms), from the second nack's tracker request, which the seek did not "
                                        "cancel (3/3 on 7 Dec 2026; PLS-NACK-001 FAILed before)"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_live_history_verdicts(name):
    must_fail, must_be_indeterminate, why = CASES[name]
    report = check(load(HERE / f"{name}.jsonl"))
    failed = {v.rule_id for v in report.failures()}
    assert failed == must_fail, f"{why}\n{report.summary()}"
    indeterminate = {v.anomaly for v in report.verdicts if v.status == "INDETERMINATE"}
    assert must_be_indeterminate <= indeterminate, f"{why}\n{report.summary()}"


RETENTION_EVIDENCE = (Path(__file__).resolve().parents[2] / "conformance" / "evidence" / "retention"
                      / "retention-none-acked-deleted-after-unload-4.0.8.history.jsonl")


def test_acked_data_deleted_after_unload_is_followed_not_failed():
    """Live, 4.0.8: r0..r2 were acked on the only subscription, their ledger closed by an unload, and
    a new Earliest subscription got nothing. PLS-RETENTION-001 allows that (no retention: acked data
    may be deleted a ledger at a time); the checker follows the broker and says so at that receive."""
    history = load(RETENTION_EVIDENCE)
    assert history.events[-1].outcome.value == {"message": None}, "the recording shows the deletion"
    report = check(history)
    assert not report.failures(), report.summary()
    retention = [v for v in report.verdicts if v.rule_id == "PLS-RETENTION-001"]
    assert [v.status for v in retention] == ["PASS"], report.summary()
    assert "r0, r1, r2 were acked" in retention[0].explanation and "it did" in retention[0].explanation
