"""Per-handle clients and the Java-only rules of producers and subscriptions.

profiles.handle_profile / "mixed" runs; Java-only settings refused on Python handles; PLS-ROUTE-004,
PLS-BATCH-003 (Java order), PLS-ACK-006, PLS-SEEK-001 (Java: either), PLS-SUB-007/008,
PLS-SHARED-003, PLS-FAILOVER-005. Each rule: a passing model history and a mutated one that FAILS.
"""

from __future__ import annotations

import pytest

from conformance.case_files import discover_cases
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome, make_trace, received_message
from reference_model.profiles import handle_profile, overrides_of, profile_for

CASES = {c.id: c for c in discover_cases()}


def java_history(case_id: str) -> History:
    return ModelTarget(client="java").run(CASES[case_id].trace)


def replace_outcome(history: History, step: int, outcome: Outcome, t_end: float | None = None) -> History:
    events = list(history.events)
    ev = events[step - 1]
    events[step - 1] = Event(ev.op, outcome, ev.t_start_ms, ev.t_end_ms if t_end is None else t_end)
    return History(history.header, tuple(events))


def received(history: History, step: int, label: str, **changes) -> History:
    """The receive at ``step`` shows message ``label`` (as the model observed it elsewhere) instead."""
    found = next(received_message(e.outcome) for e in history.events if received_message(e.outcome)
                 and received_message(e.outcome).payload == label)
    return replace_outcome(history, step, Outcome.ok({"message": dict(found.to_json(), **changes)}))


def failures(history: History) -> set[tuple[str, str | None]]:
    return {(v.rule_id, v.anomaly) for v in check(history).failures()}


# ---------------------------------------------------------------------- profiles per handle


def test_mixed_profile_is_the_cpp_one_and_handles_pick_their_client():
    mixed = profile_for("4.0.8", "mixed")
    assert mixed.client == "mixed" and mixed.nack_timer == "periodic"
    assert handle_profile(mixed, "java") == profile_for("4.0.8", "java")
    assert handle_profile(mixed, "python") == profile_for("4.0.8", "python")
    assert handle_profile(mixed, None) is mixed


def test_a_handle_keeps_the_runs_overrides():
    run = profile_for("4.1", "java", {"nack_min_delay_ms": 50, "delayed_delivery_strict": False})
    assert overrides_of(run) == {"nack_min_delay_ms": 50, "delayed_delivery_strict": False}
    python = handle_profile(run, "python")
    assert (python.client, python.nack_min_delay_ms, python.delayed_delivery_strict, python.broker) == ("cpp", 50, False, "4.1")


JAVA_ONLY = [
    ("subscribe", {"nack_backoff": {"min_delay_ms": 100, "max_delay_ms": 200}}, "PLS-NACK-004"),
    ("subscribe", {"ack_timeout_backoff": {"min_delay_ms": 100, "max_delay_ms": 200}, "ack_timeout_ms": 10000}, "PLS-ACKTIMEOUT-005"),
    ("subscribe", {"ack_timeout_tick_ms": 500}, "PLS-ACKTIMEOUT-004"),
    ("subscribe", {"priority_level": 1}, "PLS-SHARED-003"),
    ("subscribe", {"enable_retry": True}, "PLS-RETRY-001"),
    ("subscribe", {"subscription_mode": "NonDurable"}, "PLS-SUB-007"),
    ("subscribe", {"dead_letter": {"max_redeliver_count": 2, "retry_topic": "r"}}, "PLS-RETRY-001"),
    ("create_producer", {"hashing_scheme": "murmur3_32"}, "PLS-ROUTE-004"),
]


@pytest.mark.parametrize(("op", "extra", "rule"), JAVA_ONLY, ids=[r + "-" + next(iter(e)) for _, e, r in JAVA_ONLY])
def test_a_java_only_setting_on_a_python_handle_is_refused(op, extra, rule):
    base = ({"consumer": "c", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "c"}
            if op == "subscribe" else {"producer": "p", "topic": "t"})
    py = ModelTarget(client="mixed").run(make_trace("py", [(op, {**base, **extra, "client": "python"})]))
    assert (py.events[0].outcome.status, py.events[0].outcome.error) == ("rejected", "InvalidArgument")
    report = check(py)
    assert report.ok and report.rule_verdicts() == {rule: "PASS"}
    # a Python handle that accepted it breaks the rule
    assert (rule, "missing-rejection") in failures(replace_outcome(py, 1, Outcome.ok({})))
    java = ModelTarget(client="mixed").run(make_trace("java", [(op, {**base, **extra, "client": "java"})]))
    assert java.events[0].outcome.status == "ok"
    assert check(java).ok


def test_unnamed_handles_of_a_mixed_run_are_python():
    trace = make_trace("m", [("create_producer", {"producer": "p", "topic": "t", "hashing_scheme": "murmur3_32"})])
    assert ModelTarget(client="mixed").run(trace).events[0].outcome.error == "InvalidArgument"
    assert ModelTarget(client="java").run(trace).events[0].outcome.status == "ok"


# ---------------------------------------------------------------------- PLS-ROUTE-004


def test_java_producer_routes_by_its_own_hash():
    history = java_history("route-hashing-scheme-java")
    report = check(history)
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-ROUTE-004"] == "PASS"
    parts = {e.op.args["payload"]: e.outcome.value["message_id"][2] for e in history.events if e.op.op == "send"}
    assert parts == {"d1": 2, "d2": 1, "d3": 0, "m1": 1, "m2": 3, "m3": 2, "j1": 1}


def test_java_default_hash_on_the_wrong_partition_fails():
    history = java_history("route-hashing-scheme-java")
    step = next(e.step for e in history.events if e.op.op == "send" and e.op.args["payload"] == "d2")
    value = dict(history.events[step - 1].outcome.value)
    value["message_id"] = [value["message_id"][0], value["message_id"][1], 2, -1]  # the C++ JavaStringHash partition
    assert ("PLS-ROUTE-004", "wrong-partition") in failures(replace_outcome(history, step, Outcome.ok(value)))


# ---------------------------------------------------------------------- PLS-BATCH-003 (Java order)


def test_java_key_based_batches_go_out_by_their_last_message():
    history = java_history("batch-key-based-java")
    report = check(history)
    assert report.ok, report.summary()
    flush = next(e for e in history.events if e.op.op == "flush")
    ids = flush.outcome.value["message_ids"]
    assert [ids[k][1] for k in ("k3", "k1", "k4", "k0", "k2", "k5")] == [0, 1, 1, 2, 2, 2]


def test_cpp_batch_order_from_a_java_producer_fails():
    history = java_history("batch-key-based-java")
    flush = next(e for e in history.events if e.op.op == "flush")
    cpp_order = {"k0": [1, 0, -1, 0], "k2": [1, 0, -1, 1], "k5": [1, 0, -1, 2], "k1": [1, 1, -1, 0], "k4": [1, 1, -1, 1],
                 "k3": [1, 2, -1, 0]}
    broken = replace_outcome(history, flush.step, Outcome.ok({"message_ids": cpp_order, "id_texts": {}}))
    assert ("PLS-BATCH-003", "wrong-value") in failures(broken)


# ---------------------------------------------------------------------- PLS-ACK-006


def test_java_cumulative_ack_on_shared():
    history = java_history("ack-cumulative-shared-java")
    assert check(history).ok
    assert ("PLS-ACK-006", "wrong-error") in failures(
        replace_outcome(history, 7, Outcome.rejected("CumulativeAcknowledgementNotAllowedError")))
    assert ("PLS-ACK-006", "missing-rejection") in failures(replace_outcome(history, 8, Outcome.ok({})))


# ---------------------------------------------------------------------- PLS-SEEK-001 (Java: exclusive, as C++)


@pytest.mark.parametrize(("label", "ok"), [("m2", False), ("m3", True), ("m1", False)])
def test_java_seek_by_id_skips_the_seek_message(label, ok):
    history = java_history("seek-by-id-java")
    mutated = received(history, 15, label)
    assert check(mutated).ok is ok, check(mutated).summary()


def test_java_seek_inclusive_consumer_must_get_the_seek_message():
    history = java_history("seek-by-id-java")
    assert failures(received(history, 16, "m3"))


# ---------------------------------------------------------------------- PLS-SUB-007 / -008


def test_non_durable_case_passes():
    report = check(java_history("non-durable-java"))
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-SUB-007"] == "PASS"


def test_stats_of_a_gone_non_durable_subscription_must_fail():
    history = java_history("non-durable-java")
    assert ("PLS-SUB-007", "missing-rejection") in failures(replace_outcome(history, 10, Outcome.ok({"backlog": 1})))


def test_a_non_durable_resubscribe_must_not_see_messages_sent_meanwhile():
    history = java_history("non-durable-java")
    m2 = history.events[10].outcome.value["message_id"]
    m3 = received_message(history.events[14].outcome)
    broken = replace_outcome(history, 13, Outcome.ok({"message": dict(m3.to_json(), payload="m2", message_id=m2)}))
    assert ("PLS-SUB-007", "wrong-value") in failures(broken)


def test_non_durable_on_a_durable_name():
    history = java_history("non-durable-name-taken-java")
    assert check(history).ok
    assert ("PLS-SUB-008", "missing-rejection") in failures(replace_outcome(history, 3, Outcome.ok({})))


# ---------------------------------------------------------------------- PLS-SHARED-003


def test_shared_priority_case_passes():
    report = check(java_history("shared-priority-java"))
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-SHARED-003"] == "PASS"


def test_a_lower_priority_consumer_taking_a_message_fails():
    history = java_history("shared-priority-java")
    broken = received(history, 7, "m1")
    assert ("PLS-SHARED-003", "wrong-consumer") in failures(broken)


def test_a_lower_priority_consumer_may_take_what_a_full_queue_could_refuse():
    # high has receiver_queue_size 1: with three messages its queue may be full, so low may get one.
    trace = make_trace("prio-full", [
        ("subscribe", {"consumer": "high", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "high",
                       "priority_level": 0, "receiver_queue_size": 1}),
        ("subscribe", {"consumer": "low", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "low",
                       "priority_level": 1}),
        ("create_producer", {"producer": "p", "topic": "t"}),
        ("send", {"producer": "p", "payload": "m1"}), ("send", {"producer": "p", "payload": "m2"}),
        ("send", {"producer": "p", "payload": "m3"}),
        ("receive", {"consumer": "low", "timeout_ms": 500}),
        ("receive", {"consumer": "high", "timeout_ms": 500})])
    history = ModelTarget(client="java").run(trace)
    assert received_message(history.events[6].outcome).payload == "m1"  # the model lets low have it
    assert check(history).ok


def test_a_lower_priority_consumer_may_take_what_was_sent_before_the_better_one_joined():
    trace = make_trace("prio-late", [
        ("subscribe", {"consumer": "low", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "low",
                       "priority_level": 1}),
        ("create_producer", {"producer": "p", "topic": "t"}),
        ("send", {"producer": "p", "payload": "m1"}),
        ("advance_time", {"ms": 10}),
        ("subscribe", {"consumer": "high", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "high",
                       "priority_level": 0}),
        ("receive", {"consumer": "low", "timeout_ms": 500})])
    history = ModelTarget(client="java").run(trace)
    assert received_message(history.events[-1].outcome).payload == "m1"
    assert check(history).ok


# ---------------------------------------------------------------------- PLS-FAILOVER-005


def test_failover_priority_case_passes():
    report = check(java_history("failover-priority-java"))
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-FAILOVER-005"] == "PASS"


def test_a_worse_priority_failover_consumer_getting_a_later_message_fails():
    history = java_history("failover-priority-java")
    broken = received(history, 7, "m1")
    assert ("PLS-FAILOVER-005", "wrong-consumer") in failures(broken)


def test_a_worse_priority_consumer_may_drain_what_was_in_flight_before_the_switch():
    trace = make_trace("fo-drain", [
        ("subscribe", {"consumer": "low", "topic": "t", "subscription": "s", "type": "Failover", "consumer_name": "low",
                       "priority_level": 1}),
        ("create_producer", {"producer": "p", "topic": "t"}),
        ("subscribe", {"consumer": "high", "topic": "t", "subscription": "s", "type": "Failover", "consumer_name": "high",
                       "priority_level": 0}),
        ("send", {"producer": "p", "payload": "m1"}),  # within activeConsumerFailoverDelayTimeMillis of the join
        ("receive", {"consumer": "low", "timeout_ms": 300})])
    history = ModelTarget(client="java").run(trace)
    assert received_message(history.events[-1].outcome) is None  # the model's own choice: nothing
    mutated = replace_outcome(history, 5, Outcome.ok({"message": {
        "payload": "m1", "message_id": history.events[3].outcome.value["message_id"], "topic": "t", "key": None,
        "ordering_key": None, "properties": {}, "event_time": 0, "publish_time": 0, "redelivery_count": 0,
        "producer_name": "model-0"}}))
    assert check(mutated).ok, check(mutated).summary()


def test_failover_priority_also_orders_partitions():
    trace = make_trace("fo-part", [
        ("create_topic", {"topic": "t", "partitions": 2}),
        ("subscribe", {"consumer": "a", "topic": "t", "subscription": "s", "type": "Failover", "consumer_name": "a",
                       "priority_level": 1}),
        ("subscribe", {"consumer": "b", "topic": "t", "subscription": "s", "type": "Failover", "consumer_name": "b",
                       "priority_level": 0}),
        ("advance_time", {"ms": 1500}),
        ("create_producer", {"producer": "p", "topic": "t", "router": {"hashing": "murmur3_32", "client": "java"}}),
        ("send", {"producer": "p", "payload": "m0", "key": "key-1"}),
        ("receive", {"consumer": "a", "timeout_ms": 300}),
        ("receive", {"consumer": "b", "timeout_ms": 300})])
    history = ModelTarget(client="java").run(trace)
    assert received_message(history.events[-2].outcome) is None
    assert received_message(history.events[-1].outcome).payload == "m0"
    assert check(history).ok
