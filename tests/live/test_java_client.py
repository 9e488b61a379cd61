"""The Java client driver against the embedded broker: runs, failures, and the client comparison.

The driver is built with Maven on first use (cached); these tests use the session's broker.
"""

from __future__ import annotations

from pathlib import Path

import threading

import pytest

from conformance.case_files import discover_cases
from conformance.client_diff import EXPLAINED, SAME, diff_clients
from conformance.runner import ERROR, PASS, run_case
from conformance.targets.java_driver import JavaDriverError
from conformance.targets.model import ModelTarget
from conformance.trace import load, Op, Trace, TraceHeader

pytestmark = pytest.mark.live

CASES = {c.id: c for c in discover_cases()}


def test_a_java_run_reports_the_java_client_and_its_version(live_target_for):
    target = live_target_for("java")
    result = run_case(CASES["ack-individual"], target, client="java")
    assert result.status == PASS, result.failure_text()
    assert result.history.header.client == "java"
    assert result.history.header.client_version.startswith("java 4.0")
    assert target.describe()["client"] == "java"


def test_a_java_run_records_the_host_stalls_on_the_harness_clock(live_target_for):
    """The driver's watchdog reports on System.nanoTime; the harness takes it only if that is its own
    monotonic clock (conformance/host_stalls.py), and every live history says what was seen."""
    import time

    from conformance.targets.stall_sources import driver_stalls

    target = live_target_for("java")
    result = run_case(CASES["ack-individual"], target, client="java")
    stalls = result.history.header.stalls
    assert stalls is not None
    # watchdog stalls and GC pauses are 15 ms or more; a CPU-pressure period holds its waiting (1 ms or more, never
    # longer than its period stretched by a late read: conformance/targets/stall_sources.py CpuPressureWatch)
    assert all(s.seen_by in ("harness", "java driver", "broker GC") and s.ms >= 15
               or s.seen_by == "cpu pressure" and s.ms >= 1 for s in stalls), stalls
    driver = target.java_driver()
    asked = time.monotonic()
    answer = driver.request("stalls", {})
    value = answer["value"]
    assert abs(value["now_ns"] / 1e9 - asked) < 1.0, "System.nanoTime is not CLOCK_MONOTONIC here"
    assert driver_stalls(value, asked, time.monotonic()) is not None


def test_an_op_the_driver_does_not_know_is_a_driver_error(live_target_for):
    driver = live_target_for("java").java_driver()
    with pytest.raises(JavaDriverError, match="frobnicate"):
        driver.request("frobnicate", {"x": 1})
    assert driver.alive(), "a bad request must not bring the driver down"


def test_a_driver_killed_mid_trace_is_a_harness_error_not_a_fail(pulsar_broker):
    from conformance.case_files import Case
    from conformance.targets.pulsar import BrokerTarget

    target = BrokerTarget(pulsar_broker, client="java")
    try:
        driver = target.java_driver()
        ops = (
            Op(1, "subscribe", {"consumer": "c1", "topic": "t", "subscription": "s"}),
            Op(2, "advance_time", {"ms": 1500}),
            Op(3, "receive", {"consumer": "c1", "timeout_ms": 500}),
        )
        trace = Trace(TraceHeader(trace_id="killed-driver", title="driver dies", rules=("PLS-ACK-001",)), ops)
        case = Case(id="killed-driver", title="driver dies", rules=("PLS-ACK-001",), trace=trace, expectations=(), clients=("java",))
        threading.Timer(0.7, lambda: driver._proc and driver._proc.kill()).start()
        result = run_case(case, target, client="java")
        assert result.status == ERROR, result.failure_text()
        assert "Java client driver" in result.message and "exited" in result.message
        assert not result.rule_verdicts, "a harness error must not produce rule verdicts"
    finally:
        target.close()


def test_the_python_client_refuses_java_only_arguments(live_target_for):
    ops = (
        Op(1, "subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "priority_level": 1}),
        Op(2, "subscribe", {"consumer": "c2", "topic": "t", "subscription": "s2", "subscription_mode": "NonDurable"}),
        Op(3, "create_producer", {"producer": "p1", "topic": "t", "hashing_scheme": "murmur3_32"}),
    )
    history = live_target_for("python").run(Trace(TraceHeader(trace_id="java-only", title="", rules=()), ops))
    assert [(e.outcome.status, e.outcome.error) for e in history.events] == [("rejected", "InvalidArgument")] * 3


# a cumulative ack on Shared: both clients refuse it, each with its own error (PLS-ACK-003 / PLS-ACK-006)
CUMULATIVE = load(Path(__file__).resolve().parents[1] / "data" / "cumulative-ack-shared.trace.jsonl")


def test_diff_clients_explains_the_cumulative_ack_difference_by_its_rule(live_target_for):
    diff = diff_clients(CUMULATIVE, run_on=lambda c: live_target_for(c).run(CUMULATIVE),
                        model_on=lambda c: ModelTarget(client=None if c == "python" else c).run(CUMULATIVE))
    steps = {s.step: s for s in diff.steps}
    assert all(steps[i].verdict == SAME for i in range(1, 9)), diff.text()
    assert steps[9].verdict == EXPLAINED and {"PLS-ACK-003", "PLS-ACK-006"} & set(steps[9].rules), diff.text()
