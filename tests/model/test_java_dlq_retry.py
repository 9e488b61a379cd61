"""Java dead-letter copies (PLS-DLQ-001/002/003/007) and the retry letter topic (PLS-RETRY-001..003).

Each rule: a Java case's model history passes, and mutated so that it breaks the rule it FAILS.
"""

from __future__ import annotations

from conformance.case_files import discover_cases
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome, make_trace, received_message
from reference_model import dead_letter as dl

CASES = {c.id: c for c in discover_cases()}


def java_history(case_id: str) -> History:
    return ModelTarget(client="java").run(CASES[case_id].trace)


def replace_outcome(history: History, step: int, outcome: Outcome) -> History:
    events = list(history.events)
    ev = events[step - 1]
    events[step - 1] = Event(ev.op, outcome, ev.t_start_ms, ev.t_end_ms)
    return History(history.header, tuple(events))


def with_properties(history: History, step: int, **props: str | None) -> History:
    message = dict(history.events[step - 1].outcome.value["message"])
    merged = {**message["properties"], **props}
    message["properties"] = {k: v for k, v in merged.items() if v is not None}
    return replace_outcome(history, step, Outcome.ok({"message": message}))


def failures(history: History) -> set[tuple[str, str | None]]:
    return {(v.rule_id, v.anomaly) for v in check(history).failures()}


# ---------------------------------------------------------------------- values


def test_java_id_text_and_properties():
    assert dl.java_message_id_text(7, 3, -1, -1) == "7:3:-1"
    assert dl.java_message_id_text(7, 3, 2, 0) == "7:3:2:0"
    props = dl.java_dead_letter_properties({"REAL_TOPIC": "mine", "k": "v"}, "7:3:-1", "persistent://p/n/t", "s")
    assert props == {"REAL_TOPIC": "mine", "k": "v", "ORIGIN_MESSAGE_IDY_TIME": "7:3:-1", "ORIGIN_MESSAGE_ID": "7:3:-1",
                     "REAL_SUBSCRIPTION": "s"}  # putIfAbsent: an existing REAL_TOPIC stays


def test_retry_properties_count_on_and_keep_the_origin():
    first = dl.retry_properties({"k": "v"}, "1:0:-1", "persistent://p/n/t", "s", 300)
    second = dl.retry_properties(first, "9:9:-1", "persistent://p/n/t-s-RETRY", "s", -5)
    assert (first["RECONSUMETIMES"], first["DELAY_TIME"]) == ("1", "300")
    assert (second["RECONSUMETIMES"], second["DELAY_TIME"], second["ORIGIN_MESSAGE_ID"]) == ("2", "0", "1:0:-1")
    assert second["REAL_TOPIC"] == "persistent://p/n/t"
    assert not dl.reconsume_goes_to_dead_letter(second, 16) and dl.reconsume_goes_to_dead_letter(second, 1)
    assert dl.strip_partition_suffix("persistent://p/n/t-partition-3") == "persistent://p/n/t"


# ---------------------------------------------------------------------- DLQ (Java)


def test_dlq_java_case_passes_with_the_java_copy():
    history = java_history("dlq-java")
    report = check(history)
    assert report.ok, report.summary()
    for rule in ("PLS-DLQ-001", "PLS-DLQ-003"):  # (PLS-DLQ-002 is the case's pinned counts)
        assert report.rule_verdicts()[rule] == "PASS", rule
    copy = received_message(history.events[10].outcome)
    sent = history.events[3].outcome.value["message_id"]
    assert copy.properties["ORIGIN_MESSAGE_ID"] == dl.java_message_id_text(*sent)
    assert copy.properties["REAL_SUBSCRIPTION"] == "s"


def test_a_cpp_style_origin_id_in_a_java_dlq_copy_fails():
    history = java_history("dlq-java")
    sent = history.events[3].outcome.value["message_id"]
    broken = with_properties(history, 11, ORIGIN_MESSAGE_ID="(" + ",".join(map(str, sent)) + ")")
    assert ("PLS-DLQ-003", "wrong-value") in failures(broken)


def test_a_java_dlq_copy_without_real_subscription_fails():
    broken = with_properties(java_history("dlq-java"), 11, REAL_SUBSCRIPTION=None)
    assert ("PLS-DLQ-003", "wrong-value") in failures(broken)


def test_a_java_consumer_seeing_a_fourth_delivery_breaks_n_plus_one():
    # max_redeliver_count 2: counts 0, 1, 2, then the DLQ. A fourth delivery (count 3) on c1 is wrong.
    history = java_history("dlq-java")
    message = dict(history.events[8].outcome.value["message"], redelivery_count=3)
    broken = replace_outcome(history, 12, Outcome.ok({"message": message}))
    assert failures(broken)  # the copy was dead-lettered and acked: it may not come back


def mixed_dlq_history() -> History:
    """One message, two Shared subscriptions with max_redeliver_count 1: sp read by Python, sj by Java."""
    def sub(c, s, client):
        return ("subscribe", {"consumer": c, "topic": "t", "subscription": s, "type": "Shared", "consumer_name": c,
                              "nack_delay_ms": 100, "dead_letter": {"max_redeliver_count": 1}, "client": client})
    ops = [("subscribe", {"consumer": "wp", "topic": "t-sp-DLQ", "subscription": "w", "type": "Exclusive", "client": "python"}),
           ("subscribe", {"consumer": "wj", "topic": "t-sj-DLQ", "subscription": "w", "type": "Exclusive", "client": "python"}),
           sub("cp", "sp", "python"), sub("cj", "sj", "java"),
           ("create_producer", {"producer": "p", "topic": "t", "client": "java"}),
           ("send", {"producer": "p", "payload": "m1"})]
    for _ in range(2):
        ops += [("receive", {"consumer": "cp", "timeout_ms": 1000}), ("receive", {"consumer": "cj", "timeout_ms": 1000}),
                ("nack", {"consumer": "cp", "message": "m1"}), ("nack", {"consumer": "cj", "message": "m1"})]
    ops += [("receive", {"consumer": "wp", "timeout_ms": 1000}), ("receive", {"consumer": "wj", "timeout_ms": 1000})]
    return ModelTarget(client="mixed").run(make_trace("mixed-dlq", ops))


def test_each_handle_dead_letters_in_its_own_clients_format():
    history = mixed_dlq_history()
    assert history.header.client == "mixed"
    report = check(history)
    assert report.ok, report.summary()
    cpp, java = (received_message(e.outcome) for e in history.events[-2:])
    sent = history.events[5].outcome.value["message_id"]
    assert cpp.properties["ORIGIN_MESSAGE_ID"] == "(" + ",".join(map(str, sent)) + ")" and "REAL_SUBSCRIPTION" not in cpp.properties
    assert java.properties["ORIGIN_MESSAGE_ID"] == dl.java_message_id_text(*sent)


def test_swapping_the_clients_dlq_formats_fails_both():
    history = mixed_dlq_history()
    n = len(history.events)
    cpp, java = (received_message(e.outcome) for e in history.events[-2:])
    broken = with_properties(history, n - 1, ORIGIN_MESSAGE_ID=java.properties["ORIGIN_MESSAGE_ID"])
    broken = with_properties(broken, n, ORIGIN_MESSAGE_ID=cpp.properties["ORIGIN_MESSAGE_ID"])
    report = check(broken)
    bad = [v for v in report.failures() if v.rule_id == "PLS-DLQ-003"]
    assert {v.step for v in bad} == {n - 1, n}, report.summary()


def test_java_dead_letter_policy_below_one_is_refused():
    history = java_history("dlq-max-redeliver-java")
    assert check(history).ok
    broken = replace_outcome(history, 1, Outcome.ok({}))
    assert ("PLS-DLQ-007", "missing-rejection") in failures(broken)


def test_partitioned_java_dlq_is_named_per_partition_and_real_topic_is_the_partition():
    ops = [("create_topic", {"topic": "t", "partitions": 2}),
           ("subscribe", {"consumer": "d", "topic": "t-partition-0-s-DLQ", "subscription": "d", "type": "Exclusive"}),
           ("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "c",
                          "nack_delay_ms": 100, "dead_letter": {"max_redeliver_count": 1}}),
           ("create_producer", {"producer": "p", "topic": "t", "router": {"hashing": "murmur3_32", "client": "java"}}),
           ("send", {"producer": "p", "payload": "m1", "key": "key-1"}),  # murmur3 -> partition 0 of 2
           ("receive", {"consumer": "c", "timeout_ms": 1000}),
           ("nack", {"consumer": "c", "message": "m1"}),
           ("receive", {"consumer": "c", "timeout_ms": 1000}),
           ("nack", {"consumer": "c", "message": "m1"}),
           ("receive", {"consumer": "d", "timeout_ms": 1000})]
    history = ModelTarget(client="java").run(make_trace("java-dlq-partition", ops))
    copy = received_message(history.events[-1].outcome)
    assert copy is not None and copy.properties["REAL_TOPIC"].endswith("/t-partition-0")
    assert check(history).ok


# ---------------------------------------------------------------------- retry letter topic


def test_retry_default_name_case_passes():
    report = check(java_history("retry-default-name-java"))
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-RETRY-001"] == "PASS"


def test_retry_copy_arriving_before_its_delay_fails():
    # The consumer reads the retry topic as Shared: the copy (deliverAfter 500 ms) may not come at once.
    history = java_history("retry-default-name-java")
    events = list(history.events)
    ev = events[7]
    events[7] = Event(ev.op, ev.outcome, ev.t_start_ms, ev.t_start_ms + 100)
    assert ("PLS-DELAY-001", "early-delivery") in failures(History(history.header, tuple(events)))


def test_retry_properties_case_passes():
    report = check(java_history("retry-properties-java"))
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-RETRY-002"] == "PASS"


def test_retry_copy_with_a_wrong_reconsume_count_fails():
    broken = with_properties(java_history("retry-properties-java"), 8, RECONSUMETIMES="1")
    assert ("PLS-RETRY-002", "wrong-value") in failures(broken)


def test_retry_copy_with_a_new_origin_fails():
    # ORIGIN_MESSAGE_ID is set once, from the original message: the second copy keeps it.
    broken = with_properties(java_history("retry-properties-java"), 8, ORIGIN_MESSAGE_ID="99:0:-1")
    assert ("PLS-RETRY-002", "wrong-value") in failures(broken)


def test_retry_copy_with_a_partition_suffix_in_real_topic_is_judged_by_its_last_part():
    broken = with_properties(java_history("retry-properties-java"), 6, REAL_TOPIC="persistent://public/x/t-partition-0")
    assert ("PLS-RETRY-002", "wrong-value") in failures(broken)


def test_retry_to_dlq_after_sixteen_reconsumes():
    history = java_history("retry-to-dlq-java")
    report = check(history)
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-RETRY-003"] == "PASS"
    copy = received_message(history.events[-2].outcome)
    assert copy.topic == "t-s-DLQ" and copy.properties["RECONSUMETIMES"] == "17"


def test_a_seventeenth_retry_copy_on_the_retry_topic_instead_of_the_dlq_fails():
    # If the client had published the 17th copy to the retry topic, the DLQ watcher would get nothing
    # (the model owes it the copy) and c1 would receive it again.
    history = java_history("retry-to-dlq-java")
    n = len(history.events)
    events = list(history.events)
    ev = events[n - 2]  # d's receive, timeout 2000 ms
    events[n - 2] = Event(ev.op, Outcome.ok({"message": None}), ev.t_start_ms, ev.t_start_ms + 2000)
    broken = History(history.header, tuple(events))
    assert any(rule in ("PLS-EXCL-002", "PLS-RETRY-003") for rule, _ in failures(broken)), failures(broken)


def test_retry_to_dlq_with_a_policy():
    history = java_history("retry-to-dlq-policy-java")
    assert check(history).ok
    broken = with_properties(history, 9, RECONSUMETIMES="1")
    assert ("PLS-RETRY-003", "wrong-value") in failures(broken)


def test_reconsume_later_without_enable_retry_is_refused_and_python_cannot():
    ops = [("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "c"}),
           ("create_producer", {"producer": "p", "topic": "t"}),
           ("send", {"producer": "p", "payload": "m1"}),
           ("receive", {"consumer": "c", "timeout_ms": 1000}),
           ("reconsume_later", {"consumer": "c", "message": "m1", "delay_ms": 10}),
           ("subscribe", {"consumer": "r", "topic": "t", "subscription": "s2", "type": "Shared", "consumer_name": "r",
                          "enable_retry": True, "client": "python"})]
    history = ModelTarget(client="mixed").run(make_trace("no-retry", ops))
    assert (history.events[4].outcome.error, history.events[5].outcome.error) == ("InvalidArgument", "InvalidArgument")
    java = ModelTarget(client="java").run(make_trace("no-retry-java", ops[:5]))
    assert java.events[4].outcome.error == "OtherError"
    assert check(java).ok and check(history).ok


def _retry_copy(broker_version: str, *, client_version: str | None = None) -> tuple[History, dict]:
    """The retry-properties-java case on the model for ``broker_version``; the first copy's message."""
    from dataclasses import replace
    trace = CASES["retry-properties-java"].trace
    trace = replace(trace, header=replace(trace.header, broker_version=broker_version, client_version=client_version))
    history = ModelTarget(client="java", broker_version=broker_version).run(trace)
    return history, history.events[5].outcome.value["message"]


def test_an_older_java_client_writes_no_real_subscription_and_no_event_time_on_its_retry_copy():
    """Let m1 (event time 1700000000000) be reconsumed later. Then pulsar-client 4.0.8's copy carries REAL_SUBSCRIPTION
    and the original event time; 2.10.5's carries neither (bytecode of both; live 27 Nov 2026 with the Java client
    2.10.5); 3.2.3's has REAL_SUBSCRIPTION but no event time (apache/pulsar PR #24059 reached 3.3.6 and 4.0.4)."""
    _, new = _retry_copy("4.0.8")
    _, old = _retry_copy("2.10.5")
    _, middle = _retry_copy("3.2.3")
    assert (new["properties"].get("REAL_SUBSCRIPTION"), new["event_time"]) == ("s", 1700000000000)
    assert ("REAL_SUBSCRIPTION" in old["properties"], old["event_time"]) == (False, 0)
    assert (middle["properties"].get("REAL_SUBSCRIPTION"), middle["event_time"]) == ("s", 0)


def test_the_checker_judges_the_copy_by_the_java_client_the_history_names():
    """A 4.0.8 broker's history run with the Java client 2.10.5: a copy without REAL_SUBSCRIPTION and event time
    passes when the header names that client, and FAILs PLS-RETRY-002 when it names the broker's own."""
    history, _ = _retry_copy("2.10.5")
    from dataclasses import replace
    named_old = History(replace(history.header, broker_version="4.0.8", client_version="java 2.10.5"), history.events)
    named_new = History(replace(history.header, broker_version="4.0.8", client_version="java 4.0.8"), history.events)
    assert not failures(named_old)
    assert ("PLS-RETRY-002", "wrong-value") in failures(named_new)
