"""What the broker stores once, every delivery shows the same (PLS-MSG-001), and a reader's count
stays 0 (PLS-ACK-005): three kinds of random lies the checker let through on 2 Dec 2026
(docs/mutation-score.md, "The silent misses": 97 publish times, 21 producer names, 63 reader counts).

Each lie is made on a history the model produced or a live broker recorded, and each expected
verdict comes from the rule's text: the broker writes a message's metadata (publish time, producer
name) when it stores the entry and never rewrites it; a producer keeps the name it was given; a
reader's subscription is Exclusive, where no redelivery count is kept.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "model"))

from broker_trace_helpers import P, recv, run, send, sub  # noqa: E402
from conformance.checker import check  # noqa: E402
from conformance.trace import History, Outcome, load, received_message  # noqa: E402

LIVE = Path(__file__).resolve().parent / "live_histories"


def _with_message(h: History, step: int, **changes) -> History:
    events = list(h.events)
    i = next(i for i, e in enumerate(events) if e.step == step)
    msg = received_message(events[i].outcome)
    events[i] = replace(events[i], outcome=Outcome.ok({**events[i].outcome.value, "message": replace(msg, **changes).to_json()}))
    return History(h.header, tuple(events))


def _verdicts(h: History, rule: str, step: int) -> list[str]:
    return [v.status for v in check(h).verdicts if v.rule_id == rule and v.step == step]


def _nacked_twice() -> History:
    """m1 delivered at step 4, nacked, delivered again at step 7 (Shared, C++ nack delay 100 ms), as a live
    client reports it: the send returns no publish time and the producer's creation no name (the model's own
    history has both, and with them these lies were caught before)."""
    h = run(sub("c1", "Shared", nack_delay_ms=100), P, send("m1"), recv("c1"),
            ("nack", {"consumer": "c1", "message": "m1"}), ("advance_time", {"ms": 200}), recv("c1"))
    unreported = {"send": "publish_time", "create_producer": "producer_name"}
    events = [replace(e, outcome=Outcome.ok({k: v for k, v in e.outcome.value.items() if k != unreported[e.op.op]}))
              if e.op.op in unreported else e for e in h.events]
    return History(h.header, tuple(events))


def test_a_redelivery_with_another_publish_time_fails_pls_msg_001():
    h = _nacked_twice()
    first = received_message(h.events[3].outcome)
    assert _verdicts(h, "PLS-MSG-001", 7) == ["PASS"]
    assert _verdicts(_with_message(h, 7, publish_time=first.publish_time + 1000), "PLS-MSG-001", 7) == ["FAIL"]


def test_a_redelivery_from_another_producer_name_fails_pls_msg_001():
    h = _nacked_twice()
    first = received_message(h.events[3].outcome)
    assert _verdicts(_with_message(h, 7, producer_name=first.producer_name + "-x"), "PLS-MSG-001", 7) == ["FAIL"]


def test_an_unnamed_partitioned_producer_keeps_each_partitions_name():
    """Two partitions, round robin: m1 and m3 share a partition, so they share its producer's name."""
    ops = [("create_topic", {"topic": "t", "partitions": 2}), sub("c1"),
           ("create_producer", {"producer": "p", "topic": "t", "routing_mode": "RoundRobin", "batching": False}),
           send("m1"), send("m2"), send("m3"), recv("c1"), recv("c1"), recv("c1")]
    h = run(*ops)
    got = {received_message(e.outcome).payload: (e.step, received_message(e.outcome)) for e in h.events[-3:]}
    m1, m3 = got["m1"][1], got["m3"][1]
    assert m1.message_id[2] == m3.message_id[2]
    step = got["m3"][0]
    assert _verdicts(h, "PLS-MSG-001", step) == ["PASS"]
    assert _verdicts(_with_message(h, step, producer_name=m1.producer_name + "-x"), "PLS-MSG-001", step) == ["FAIL"]


def test_a_readers_message_with_a_redelivery_count_fails_pls_ack_005():
    h = run(P, send("m1"), ("create_reader", {"reader": "r1", "topic": "t", "start": "earliest"}),
            ("read_next", {"reader": "r1", "timeout_ms": 1000}))
    assert _verdicts(h, "PLS-ACK-005", 4) == ["PASS"]
    assert _verdicts(_with_message(h, 4, redelivery_count=1), "PLS-ACK-005", 4) == ["FAIL"]


def test_on_a_live_history_the_same_lies_fail_and_the_truth_passes():
    """Live 4.0.8 (pinned): a compacted reader reads each key's latest message."""
    path = next(LIVE.glob("live-*-compact-latest-per-key.jsonl"))
    h = load(path)
    reads = [e for e in h.events if e.op.op == "read_next" and e.outcome.status == "ok" and received_message(e.outcome)]
    assert reads, path
    step = reads[0].step
    assert "FAIL" not in _verdicts(h, "PLS-ACK-005", step)
    assert _verdicts(_with_message(h, step, redelivery_count=1), "PLS-ACK-005", step) == ["FAIL"]


# --- two more silent lies of the random-lie run of 6 Dec 2026 (benchmarks/random_lies.py, seed 1, 1,029 live histories) --

def _relabelled(h: History, step: int, payload: str) -> History:
    return _with_message(h, step, payload=payload)


def test_a_copy_after_an_ack_with_another_messages_id_fails_pls_msgid_001():
    """Live 4.0.8, Python (case ack-individual): m1 acked at step 7, m2 received at step 9 after its nack. Told as m1
    arriving at step 9 with m2's id, the copy of an acked message within ack grouping stays INDETERMINATE for
    PLS-ACK-001 (the ack may not have reached the broker yet), but no copy of m1 has m2's id: PLS-MSGID-001 FAILs."""
    h = load(LIVE / "live-4.0.8-ack-individual-python.jsonl")
    assert check(h).ok, check(h).summary()
    lie = check(_relabelled(h, 9, "m1"))
    at_9 = {(v.rule_id, v.status) for v in lie.verdicts if v.step == 9}
    assert ("PLS-MSGID-001", "FAIL") in at_9, at_9
    assert ("PLS-ACK-001", "INDETERMINATE") in at_9, at_9


def test_each_partitions_first_message_shows_the_name_its_creation_reported():
    """Live 4.0.8, Python, an unnamed producer on 3 partitions: its creation reported each partition producer's name
    (partition_producer_names). The first message read from a partition shows that name; another name FAILs
    PLS-MSG-001 even on that first message (before, the first message set what the later ones were held to)."""
    h = load(LIVE / "live-4.0.8-keyless-partitioned-unnamed-python.jsonl")
    assert check(h).ok, check(h).summary()
    firsts: dict[int, int] = {}
    for e in h.events:
        msg = received_message(e.outcome) if e.op.op in ("receive", "read_next") else None
        if msg is not None and msg.message_id[2] >= 0:
            firsts.setdefault(msg.message_id[2], e.step)
    assert firsts, "the history reads partitioned messages"
    for step in firsts.values():
        name = received_message(next(e for e in h.events if e.step == step).outcome).producer_name
        assert _verdicts(_with_message(h, step, producer_name=name + "-x"), "PLS-MSG-001", step) == ["FAIL"], step


# --- a batch's metadata, and a delivery the model did not allow (random lies of 6 Dec 2026, second run) ----------------

BATCH_AFTER_ACK = LIVE / "live-4.0.8-batch-redelivered-after-ack-python.jsonl"


def test_the_members_of_one_batch_show_its_one_publish_time():
    """Live 4.0.8, Python: m3, m4, m5 sent as one batch (entry 4, indexes 0-2) and received at steps 16-18. A batch is
    one entry with one metadata (SingleMessageMetadata carries no publish time), so m4, the first delivery of m4,
    showing another publish time than m3 of the same entry breaks PLS-MSG-001."""
    h = load(BATCH_AFTER_ACK)
    assert check(h).ok, check(h).summary()
    m3 = received_message(next(e for e in h.events if e.step == 16).outcome)
    assert _verdicts(_with_message(h, 17, publish_time=m3.publish_time + 1), "PLS-MSG-001", 17) == ["FAIL"]


def test_a_copy_the_model_did_not_allow_still_arrives_as_sent():
    """The same history: m4 acked at step 19, then redeliver_unacked; m4 came back at step 22 (PLS-ACK-001 leaves such
    a copy INDETERMINATE: it may have been queued before the ack). Whether or not it may come, it is m4 as sent and
    stored: another key, another property or another publish time breaks PLS-MSG-001."""
    h = load(BATCH_AFTER_ACK)
    m4 = received_message(next(e for e in h.events if e.step == 22).outcome)
    for change in ({"key": "k-x"}, {"properties": {**m4.properties, "k": "v"}}, {"publish_time": m4.publish_time + 1000}):
        assert "FAIL" in _verdicts(_with_message(h, 22, **change), "PLS-MSG-001", 22), change


def test_non_persistent_ids_name_no_entry():
    """Live 5.0.0-M1, Python, a batching producer on a non-persistent topic: every message's id is (0, 0, -1, 0)
    (PLS-NP-003), so two messages with that id are not one batch and may show different publish times."""
    h = load(LIVE / "live-5.0.0-M1-non-persistent-batch-ids-python.jsonl")
    assert check(h).ok, check(h).summary()
