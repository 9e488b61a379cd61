"""Vocabulary profiles.py: what differs between broker lines and clients, per handle (Java-only settings)."""

from __future__ import annotations

import pytest

from case_history_helpers import failures, replace_outcome
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Outcome, make_trace
from reference_model.profiles import Profile, handle_profile, overrides_of, profile_for


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
        profile_for("4.0", "rust")


# ---------------------------------------------------------------- profiles per handle


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


def test_go_refuses_an_unparsable_definition_itself_and_a_cumulative_ack_in_a_transaction():
    """PLS-SCHEMA-025: a Go handle's AVRO/JSON definition is parsed by the client; the Python one goes to the broker
    (PLS-SCHEMA-022 there). A Go transaction is followed; a cumulative ack in one is not in the Go API (PLS-GO-001)."""
    from reference_model.profiles import client_refusal

    go, py = profile_for("4.0.8", "go"), profile_for("4.0.8", "python")
    bad = {"type": "AVRO", "definition": "{not json"}
    wrong_type = {"type": "JSON", "definition": {"type": "record", "name": "U", "fields": [{"name": "a", "type": "integer"}]}}
    good = {"type": "AVRO", "definition": {"type": "record", "name": "U", "fields": [{"name": "a", "type": "int"}]}}
    for schema in (bad, wrong_type):
        rule, why = client_refusal("create_producer", {"producer": "p", "topic": "t", "schema": schema}, go)
        assert rule == "PLS-SCHEMA-025" and "cannot build" in why
        assert client_refusal("create_producer", {"producer": "p", "topic": "t", "schema": schema}, py) is None
    assert client_refusal("subscribe", {"consumer": "c", "schema": good}, go) is None
    assert client_refusal("new_txn", {"txn": "x"}, go) is None  # followed since the Go transaction cases ran live
    assert client_refusal("ack_cumulative", {"consumer": "c", "message": "m", "txn": "x"}, go)[0] == "PLS-GO-001"
    assert client_refusal("ack", {"consumer": "c", "message": "m", "txn": "x"}, go) is None
    assert client_refusal("new_txn", {"txn": "x"}, py)[0] == "PLS-TXN-006"
