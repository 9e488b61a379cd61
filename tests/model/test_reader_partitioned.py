"""A reader of a partitioned topic (issue 46: "seek and readers on partitioned topics"): a consumer of every
partition on one non-durable Exclusive subscription (Java ``MultiTopicsReaderImpl``, C++ ``ReaderImpl`` over
``MultiTopicsConsumerImpl``, Go ``newReader``'s internal consumer), from each partition's earliest message
(PLS-READER-001) or after its last one (PLS-READER-002); the Java client refuses a start from a message id
("The partitioned topic startMessageId is illegal", PLS-READER-003).

The expected reads are worked out from those rules, not read from the model: a murmur3 router (Java's) puts k1 on
partition 2, k2 and k4 on partition 1, k3 on partition 0 of 3 (as conformance/cases/partitions/
failover-partitioned.yaml states). Each lie is made on the model's own history and must FAIL the rule it breaks.
"""

from __future__ import annotations

from dataclasses import replace

from broker_trace_helpers import run
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import History, Outcome, make_trace

ROUTER = {"hashing": "murmur3_32", "client": "java"}
KEYS = {"m1": "k1", "m2": "k2", "m3": "k3", "m4": "k4", "m5": "k1", "m6": "k2"}
PARTITION = {"k1": 2, "k2": 1, "k4": 1, "k3": 0}


def _ops(client: str, start, *, after: tuple[str, ...] = ("m5", "m6"), reads: int = 6) -> list:
    ops = [("create_topic", {"topic": "t", "partitions": 3}),
           ("create_producer", {"producer": "p", "topic": "t", "router": ROUTER, "batching": False, "client": client})]
    ops += [("send", {"producer": "p", "payload": m, "key": KEYS[m]}) for m in ("m1", "m2", "m3", "m4")]
    ops.append(("create_reader", {"reader": "r", "topic": "t", "start": start, "client": client}))
    ops += [("send", {"producer": "p", "payload": m, "key": KEYS[m]}) for m in after]
    return ops + [("read_next", {"reader": "r", "timeout_ms": 1000}) for _ in range(reads)] + \
        [("read_next", {"reader": "r", "timeout_ms": 300}), ("close", {"handle": "r"})]


def _reads(history: History) -> list[str | None]:
    return [None if e.outcome.value["message"] is None else e.outcome.value["message"]["payload"]
            for e in history.events if e.op.op == "read_next"]


def _statuses(history: History, rule: str) -> set[str]:
    return {v.status for v in check(history).verdicts if v.rule_id == rule}


def _read_swapped(history: History, index: int, payload: str | None, like: int | None = None) -> History:
    """The lie: the ``index``-th read_next got ``payload`` (the receipt of read ``like``), or nothing (None)."""
    events = list(history.events)
    reads = [i for i, e in enumerate(events) if e.op.op == "read_next"]
    outcome = Outcome.ok({"message": None}) if payload is None else events[reads[like]].outcome
    events[reads[index]] = replace(events[reads[index]], outcome=outcome)
    return History(history.header, tuple(events))


def test_a_reader_from_earliest_reads_every_partition_once_each_in_order_within_a_partition():
    for client in ("java", "python", "go"):
        got = _reads(run(*_ops(client, "earliest")))
        assert got[-1] is None and sorted(got[:-1]) == ["m1", "m2", "m3", "m4", "m5", "m6"], (client, got)
        for key in ("k1", "k2"):  # m1 before m5 (partition 2), m2 before m6 (partition 1)
            first, second = [m for m in ("m1", "m2", "m5", "m6") if KEYS[m] == key]
            assert got.index(first) < got.index(second), (client, got)


def test_a_reader_from_latest_reads_only_what_came_after_it():
    for client in ("java", "python", "go"):
        got = _reads(run(*_ops(client, "latest", reads=2)))
        assert sorted(got[:2]) == ["m5", "m6"] and got[2] is None, (client, got)


def test_a_message_read_twice_or_never_or_from_before_a_latest_start_fails():
    h = run(*_ops("java", "earliest"))
    reads = _reads(h)
    # read 2 repeats read 1: the reader acked it (PLS-ACK-001), and what read 2 held never comes (PLS-READER-001)
    twice = _read_swapped(h, 1, reads[0], like=0)
    assert "FAIL" in _statuses(twice, "PLS-READER-001") and "FAIL" in _statuses(twice, "PLS-ACK-001")
    assert "FAIL" in _statuses(_read_swapped(h, 5, None), "PLS-READER-001")  # the sixth message never comes
    latest = run(*_ops("java", "latest", reads=2))
    early = run(*_ops("java", "earliest", reads=2))
    events = list(latest.events)
    first_read = next(i for i, e in enumerate(events) if e.op.op == "read_next")
    m1 = next(e.outcome for e in early.events if e.op.op == "read_next" and e.outcome.value["message"]["payload"] in ("m1", "m2", "m3", "m4"))
    events[first_read] = replace(events[first_read], outcome=m1)  # a message from before the reader, read from latest
    assert "FAIL" in _statuses(History(latest.header, tuple(events)), "PLS-READER-002")


def test_the_java_client_refuses_a_start_from_a_message_id_and_the_others_are_not_followed():
    h = ModelTarget().run(make_trace("t", _ops("java", {"message": "m2"}, after=(), reads=0)))
    created = next(e for e in h.events if e.op.op == "create_reader")
    assert (created.outcome.status, created.outcome.error) == ("rejected", "OtherError")
    assert "PASS" in _statuses(h, "PLS-READER-003")
    # the lie: the Java client made that reader
    lie = [replace(e, outcome=Outcome.ok({})) if e.op.op == "create_reader" else e for e in h.events]
    assert "FAIL" in _statuses(History(h.header, tuple(lie)), "PLS-READER-003")
    for client in ("python", "go"):
        report = check(ModelTarget().run(make_trace("t", _ops(client, {"message": "m2"}, after=(), reads=0))))
        assert [f.op for f in report.not_followed] == ["create_reader"], client


def _java_string_hash(key: str) -> int:
    """Java's String.hashCode, the Go producer's default hashing scheme (JavaStringHash)."""
    h = 0
    for ch in key:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def test_a_go_reader_from_latest_inclusive_starts_at_each_partitions_last_message():
    """pulsar-client-go v0.19.0 consumer_partition.go newPartitionConsumer seeks to the last message id when made;
    C++ and Java do it only inside hasMessageAvailable (Profile.latest_inclusive_starts_at_last)."""
    keys = {"m1": "k1", "m2": "k2", "m3": "k3", "m4": "k4"}
    partition = {m: abs(_java_string_hash(k)) % 3 for m, k in keys.items()}
    last = {p: m for m, p in partition.items()}  # the last message sent to each partition (dict keeps the last)
    ops = [("create_topic", {"topic": "t", "partitions": 3}),
           ("create_producer", {"producer": "p", "topic": "t", "batching": False, "client": "go"})]
    ops += [("send", {"producer": "p", "payload": m, "key": k}) for m, k in keys.items()]
    ops += [("create_reader", {"reader": "r", "topic": "t", "start": "latest", "inclusive": True, "client": "go"}),
            ("send", {"producer": "p", "payload": "m5", "key": "k1"})]
    ops += [("read_next", {"reader": "r", "timeout_ms": 1000}) for _ in range(len(last) + 1)] + [("read_next", {"reader": "r", "timeout_ms": 300})]
    h = run(*ops)
    got = _reads(h)
    assert sorted(got[:-1]) == sorted([*last.values(), "m5"]) and got[-1] is None, got
    # the lie: the C++/Java answer (only m5) from a Go reader: each partition's last message never comes
    events = list(h.events)
    reads = [i for i, e in enumerate(events) if e.op.op == "read_next"]
    m5 = next(events[i].outcome for i in reads if events[i].outcome.value["message"] and events[i].outcome.value["message"]["payload"] == "m5")
    events[reads[0]] = replace(events[reads[0]], outcome=m5)
    for i in reads[1:]:
        events[i] = replace(events[i], outcome=Outcome.ok({"message": None}))
    assert "FAIL" in _statuses(History(h.header, tuple(events)), "PLS-READER-004")
    # the same on a one-topic Go reader: the topic's last message, then what came after
    one = run(("create_producer", {"producer": "p", "topic": "u", "client": "go"}),
              ("send", {"producer": "p", "payload": "a1"}), ("send", {"producer": "p", "payload": "a2"}),
              ("create_reader", {"reader": "r", "topic": "u", "start": "latest", "inclusive": True, "client": "go"}),
              ("read_next", {"reader": "r", "timeout_ms": 1000}), ("read_next", {"reader": "r", "timeout_ms": 300}))
    assert _reads(one) == ["a2", None]


def test_a_reader_of_a_partitioned_non_persistent_topic_reads_only_what_comes_after_it():
    """Nothing is stored on a non-persistent partition (PLS-NP-001): from earliest, latest or a message id (C++, Go),
    the reader reads only what is published after it; a message from before it coming is a FAIL."""
    def ops(client, start):
        return [("create_topic", {"topic": "non-persistent://n", "partitions": 2}),
                ("create_producer", {"producer": "p", "topic": "non-persistent://n", "batching": False, "client": client}),
                ("send", {"producer": "p", "payload": "m1", "key": "k1"}),
                ("create_reader", {"reader": "r", "topic": "non-persistent://n", "start": start, "client": client}),
                ("send", {"producer": "p", "payload": "m2", "key": "k2"}), ("send", {"producer": "p", "payload": "m3", "key": "k1"}),
                ("read_next", {"reader": "r", "timeout_ms": 1000}), ("read_next", {"reader": "r", "timeout_ms": 1000}),
                ("read_next", {"reader": "r", "timeout_ms": 300})]
    for client, start in (("python", "earliest"), ("go", {"message": "m1"}), ("java", "latest"), ("java", "earliest")):
        got = _reads(run(*ops(client, start)))
        assert sorted(got[:2]) == ["m2", "m3"] and got[2] is None, (client, start, got)
    h = run(*ops("java", "earliest"))
    events = list(h.events)
    first = next(i for i, e in enumerate(events) if e.op.op == "read_next")
    m1_id = next(e.outcome.value["message_id"] for e in events if e.op.op == "send" and e.op.args["payload"] == "m1")
    m1 = dict(events[first].outcome.value["message"], payload="m1", message_id=m1_id, key="k1")
    events[first] = replace(events[first], outcome=Outcome.ok({"message": m1}))
    assert "FAIL" in _statuses(History(h.header, tuple(events)), "PLS-NP-001")
