"""A seek on a consumer of a partitioned topic (PLS-SEEK-002/003, issue 46: "seek and readers on partitioned
topics"): by publish time, or to earliest or latest, every partition's cursor moves (Java and C++
``MultiTopicsConsumerImpl::seekAsync`` -> ``seekAllAsync``; Go ``consumer.SeekByTime`` loops its partitions); the Go
client refuses ``Seek`` by id on a consumer of more than one partition (pulsar-client-go v0.19.0
``consumer_impl.go``: "for partition topic, seek command should perform on the individual partitions").

The expected deliveries are worked out from those rules, not read from the model: a murmur3 router (Java's) puts
k1 on partition 2, k2 and k4 on partition 1, k3 on partition 0 of 3 (as conformance/cases/partitions/
failover-partitioned.yaml states). Each lie is made on the model's own history and must FAIL the rule it breaks.
"""

from __future__ import annotations

from dataclasses import replace

from broker_trace_helpers import labels, recv, run
from conformance.checker import check
from conformance.trace import History, Outcome

ROUTER = {"hashing": "murmur3_32", "client": "java"}


def _ops(client: str, partitions: int, seek: dict, *, gap_ms: float = 10) -> list:
    """m1 (k2), m2 (k1), m3 (k3) sent ``gap_ms`` apart, received and acked by an Exclusive consumer; then ``seek``
    and receives until nothing comes."""
    ops = [("create_topic", {"topic": "t", "partitions": partitions}),
           ("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Exclusive", "client": client}),
           ("create_producer", {"producer": "p", "topic": "t", "router": ROUTER, "client": client})]
    for label, key in (("m1", "k2"), ("m2", "k1"), ("m3", "k3")):
        ops += [("send", {"producer": "p", "payload": label, "key": key}), ("advance_time", {"ms": gap_ms})]
    ops += [recv("c"), recv("c"), recv("c")]
    ops += [("ack", {"consumer": "c", "message": m}) for m in ("m1", "m2", "m3")]
    return ops + [("seek", {"consumer": "c", **seek}), recv("c"), recv("c"), recv("c"), recv("c", 300)]


def _after_seek(history: History) -> list:
    seek = next(i for i, e in enumerate(history.events) if e.op.op == "seek")
    return [None if e.outcome.value["message"] is None else e.outcome.value["message"]["payload"]
            for e in history.events[seek + 1:] if e.op.op == "receive"]


def _verdicts(history: History, rule: str) -> set[str]:
    return {v.status for v in check(history).verdicts if v.rule_id == rule}


def _without_delivery(history: History, label: str) -> History:
    """The lie: after the seek, ``label`` never comes again (its receive reports nothing instead)."""
    seek = next(i for i, e in enumerate(history.events) if e.op.op == "seek")
    events = list(history.events)
    for i in range(seek + 1, len(events)):
        msg = (events[i].outcome.value or {}).get("message") if events[i].op.op == "receive" else None
        if msg is not None and msg["payload"] == label:
            events[i] = replace(events[i], outcome=Outcome.ok({"message": None}))
    return History(history.header, tuple(events))


def test_seek_to_earliest_moves_every_partition():
    for client in ("java", "python"):
        h = run(*_ops(client, 3, {"position": "earliest"}))
        after = _after_seek(h)
        assert sorted(x for x in after if x) == ["m1", "m2", "m3"] and after[-1] is None, (client, after)


def test_a_partition_left_behind_by_the_seek_fails():
    """m2's partition not moved back: m2 is owed to the Exclusive consumer again (PLS-EXCL-002 judges what a seek
    makes owed, as after a seek on one topic)."""
    h = run(*_ops("java", 3, {"position": "earliest"}))
    assert "FAIL" in _verdicts(_without_delivery(h, "m2"), "PLS-EXCL-002")


def test_seek_to_latest_skips_every_partition():
    h = run(*_ops("java", 2, {"position": "latest"}), ("send", {"producer": "p", "payload": "m4", "key": "k1"}), recv("c"))
    assert labels(h)[-5:] == [None, None, None, None, "m4"]


def test_seek_by_publish_time_takes_each_partitions_first_message_at_or_after_it():
    """m2 (partition 2) is the reference: m3 (partition 0), sent after it, comes again; m1 (partition 1), sent before,
    does not."""
    for client in ("java", "python", "go"):
        h = run(*_ops(client, 3, {"publish_time_of": "m2"}))
        after = _after_seek(h)
        assert sorted(x for x in after if x) == ["m2", "m3"] and after[-2:] == [None, None], (client, after)
    h = run(*_ops("java", 3, {"publish_time_of": "m2"}))
    assert "FAIL" in _verdicts(_without_delivery(h, "m3"), "PLS-EXCL-002")


def test_a_message_published_before_the_time_coming_again_fails():
    h = run(*_ops("java", 3, {"publish_time_of": "m2"}))
    events = list(h.events)
    seek = next(i for i, e in enumerate(events) if e.op.op == "seek")
    last = len(events) - 1  # the last receive reported nothing: m1 (published before m2) comes instead
    m1 = next(e.outcome.value["message"] for e in events[:seek] if e.op.op == "receive"
              and e.outcome.value["message"]["payload"] == "m1")
    events[last] = replace(events[last], outcome=Outcome.ok({"message": {**m1, "redelivery_count": 0}}))
    assert check(History(h.header, tuple(events))).failures(), "m1 delivered after a seek past its publish time"


def test_sends_in_overlapping_milliseconds_leave_the_seek_by_time_unfollowed():
    """m1's send (partition 1) still ran when m2's (partition 2) began: each client stamps the publish time within
    its send call, so which side of m2's publish time m1 falls on is the client's clock. The seek is not followed,
    and nothing it decides is judged (the live spans are moved by hand; the model's own ops take no time)."""
    h = run(*_ops("java", 3, {"publish_time_of": "m2"}))
    sends = {e.op.args["payload"]: e for e in h.events if e.op.op == "send"}
    m2 = sends["m2"]
    events = [replace(e, t_start_ms=m2.t_start_ms - 3, t_end_ms=m2.t_start_ms + 0.5) if e is sends["m1"]
              else replace(e, t_end_ms=e.t_start_ms + 1) if e is m2 else e for e in h.events]
    report = check(History(h.header, tuple(events)))
    seek = next(e.step for e in events if e.op.op == "seek")
    assert any(n.step == seek for n in report.not_followed), report.not_followed
    assert not report.failures(), report.summary()


def test_the_go_client_refuses_a_seek_to_a_position_on_more_than_one_partition():
    h = run(*_ops("go", 3, {"position": "earliest"}))
    seek = next(e for e in h.events if e.op.op == "seek")
    assert (seek.outcome.status, seek.outcome.error) == ("rejected", "OtherError")
    assert _after_seek(h) == [None, None, None, None]
    # a Go seek that went through breaks PLS-SEEK-003's client rule
    events = [replace(e, outcome=Outcome.ok({})) if e.op.op == "seek" else e for e in h.events]
    assert "FAIL" in _verdicts(History(h.header, tuple(events)), "PLS-SEEK-003")
    # one partition: the driver's position id names partition 0, the only one
    one = run(*_ops("go", 1, {"position": "earliest"}))
    assert sorted(x for x in _after_seek(one) if x) == ["m1", "m2", "m3"]


def _with_second_copy(client: str) -> History:
    """Regression pls-shared-001-duplicate-delivery-fccc5a15db19's live history (Python, 4.0.8: a delayed chunked m1
    on a one-partition Key_Shared subscription, a seek by its publish time, m1 once, then nothing), with the second
    copy of m1 that the original run received at 339.668 ms put back into the last receive; ``client``: the
    header's client."""
    from pathlib import Path

    from conformance.trace import load

    h = load(Path(__file__).resolve().parents[2] / "conformance" / "regressions"
             / "pls-shared-001-duplicate-delivery-fccc5a15db19.history.jsonl")
    receives = [i for i, e in enumerate(h.events) if e.op.op == "receive"]
    m1 = h.events[receives[1]].outcome.value["message"]
    events = list(h.events)
    events[receives[2]] = replace(events[receives[2]], t_end_ms=339.668, outcome=Outcome.ok({"message": dict(m1)}))
    return History(replace(h.header, client=client), tuple(events))


def test_a_cpp_partitioned_consumer_may_hand_out_a_message_from_before_the_seek_once_more():
    """C++ MultiTopicsConsumerImpl: what a partition consumer received before the seek cleared the queues may
    surface once after it (live, FLAKY); the Java client drops what arrives during the seek (apache/pulsar PR
    #21945), so the second copy breaks PLS-SHARED-001 there (Key_Shared is judged by Shared's hold rule)."""
    assert not check(_with_second_copy("cpp")).failures(), check(_with_second_copy("cpp")).summary()
    assert "FAIL" in _verdicts(_with_second_copy("java"), "PLS-SHARED-001")


def test_a_seek_to_latest_while_the_partitioned_producers_async_send_may_be_in_flight_is_not_followed():
    """Regression pls-ack-001-ack-resurrection-d8db1f961fe7 (live 4.0.8, Python, 3/3): an async m1 on a partitioned
    producer, no flush, then seek(latest): the broker stored m1 after the seek took the end, and m1 came. Whether it
    is before or after the seek is the broker's timing, so the seek is not followed (the model had looked for the
    partitioned producer among the partitions' producers and judged m1's delivery an ack resurrection)."""
    from pathlib import Path

    from conformance.trace import load

    h = load(Path(__file__).resolve().parents[2] / "conformance" / "regressions"
             / "pls-ack-001-ack-resurrection-d8db1f961fe7.history.jsonl")
    report = check(h)
    seek = next(e.step for e in h.events if e.op.op == "seek")
    assert not report.failures(), report.summary()
    assert any(n.step == seek for n in report.not_followed), report.not_followed


def test_a_go_pattern_or_multi_topic_consumer_refuses_every_seek():
    """Regressions pls-seek-002-unexpected-rejection-79e82d75587a and pls-seek-003-unexpected-rejection-f1ec1572dc9b
    (live 4.0.8, Go, 3/3): a consumer made with topics_pattern is the Go client's regexConsumer, whose Seek and
    SeekByTime always fail (pulsar-client-go v0.19.0 consumer_regex.go: SeekFailed), even when the pattern matches one
    partitioned topic; the Python client's pattern consumer (C++ PatternMultiTopicsConsumerImpl) seeks every
    partition."""
    def ops(client: str, seek: dict) -> list:
        return [("create_topic", {"topic": "t", "partitions": 2}),
                ("create_producer", {"producer": "p", "topic": "t", "router": ROUTER, "client": client}),
                ("send", {"producer": "p", "payload": "m1", "key": "k2"}),
                ("subscribe", {"consumer": "c", "subscription": "s", "type": "Shared", "topics_pattern": "[tu]",
                               "initial_position": "Earliest", "client": client}),
                recv("c"), ("ack", {"consumer": "c", "message": "m1"}), ("seek", {"consumer": "c", **seek}), recv("c")]

    for seek in ({"position": "earliest"}, {"publish_time_of": "m1"}):
        go = run(*ops("go", seek))
        step = next(e for e in go.events if e.op.op == "seek")
        assert (step.outcome.status, step.outcome.error) == ("rejected", "OtherError"), (seek, step.outcome)
        assert labels(go)[-1] is None
        assert labels(run(*ops("python", seek)))[-1] == "m1", seek
