"""Java client redelivery: the nack tracker (PLS-NACK-004/005), ack timeout (PLS-ACKTIMEOUT-003..005).

Each rule: the model's window, a Java case's model history that passes, and the same history
mutated so that it breaks the rule, which the checker must FAIL (anomaly named).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.case_files import discover_cases
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome, make_trace, received_message
from reference_model.profiles import profile_for
from reference_model.redelivery import JavaNackTracker, ack_timeout_window, consumer_nack_window
from reference_model.timing import Span

CASES = {c.id: c for c in discover_cases()}
JAVA = profile_for("4.0.8", "java")
CPP = profile_for("4.0.8", "python")


def java_history(case_id: str) -> History:
    return ModelTarget(client="java").run(CASES[case_id].trace)


def retime(history: History, step: int, t_end: float) -> History:
    """The history with the receive at ``step`` completing at ``t_end`` (and later events shifted)."""
    events = list(history.events)
    ev = events[step - 1]
    shift = t_end - ev.t_end_ms
    for i in range(step - 1, len(events)):
        e = events[i]
        start = e.t_start_ms if i == step - 1 else e.t_start_ms + shift
        events[i] = Event(e.op, e.outcome, min(start, e.t_end_ms + shift), e.t_end_ms + shift)
    return History(history.header, tuple(events))


def set_message(history: History, step: int, **changes) -> History:
    events = list(history.events)
    ev = events[step - 1]
    message = dict(ev.outcome.value["message"], **changes)
    events[step - 1] = Event(ev.op, Outcome.ok({"message": message}), ev.t_start_ms, ev.t_end_ms)
    return History(history.header, tuple(events))


def failures(history: History) -> set[tuple[str, str | None]]:
    return {(v.rule_id, v.anomaly) for v in check(history).failures()}


# ---------------------------------------------------------------------- PLS-NACK-005 / -004 windows


def test_java_fixed_nack_window_is_d_minus_255_to_d_without_the_cpp_third():
    # PLS-NACK-005: one-shot timer, deadline trimmed to 8 low bits of a ms clock.
    w = consumer_nack_window(Span(1000, 1000), 1000, None, 0, JAVA, JavaNackTracker())
    assert (w.low, w.canonical, w.high) == (1745, 2000, 2000)
    # PLS-NACK-001 (C++) for contrast: [d, d + d/3]
    c = consumer_nack_window(Span(1000, 1000), 1000, None, 0, CPP)
    assert (c.low, c.high) == (2000, 2333)


def test_java_fixed_nack_delay_has_the_100_ms_floor_and_backoff_has_none():
    w = consumer_nack_window(Span(0, 0), 10, None, 0, JAVA, JavaNackTracker())
    assert (w.low, w.high) == (0, 100)  # max(10, 100) = 100, up to 255 early (never before the nack)
    b = consumer_nack_window(Span(0, 0), 60_000, (40, 1000, 2.0), 0, JAVA, JavaNackTracker())
    assert (b.low, b.high) == (0, 40)  # next(0) = 40: no MIN_NACK_DELAY_MS on the backoff path


def test_java_backoff_uses_the_count_of_the_nacked_delivery():
    # PLS-NACK-004: next(c) for c = the delivery's redelivery count
    assert [consumer_nack_window(Span(0, 0), 0, (500, 2000, 2.0), c, JAVA, JavaNackTracker()).high for c in range(4)] \
        == [500, 1000, 2000, 2000]


def test_a_nack_waits_for_a_timer_an_earlier_longer_nack_armed():
    # PLS-NACK-004/005 step 3: the timer armed for the 2000 ms nack is still pending when a 100 ms nack
    # comes: the later nack may wait for it.
    tracker = JavaNackTracker()
    first = tracker.window(Span(0, 0), 2000, 255)
    second = tracker.window(Span(10, 10), 100, 255)
    assert first.high == 2000 and second.low == 10 and second.high == 2000
    third = tracker.window(Span(5000, 5000), 100, 255)  # both earlier ones surely gone by then
    assert third.high == 5100


def test_cpp_consumer_refuses_a_backoff_window():
    with pytest.raises(ValueError, match="PLS-NACK-004"):
        consumer_nack_window(Span(0, 0), 0, (500, 2000, 2.0), 0, CPP)


# ---------------------------------------------------------------------- PLS-NACK-004 case


def test_nack_backoff_case_passes_and_its_windows_are_exact():
    history = java_history("nack-backoff-java")
    report = check(history)
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-NACK-004"] == "PASS"
    # step 6 redelivers next(0) = 250 ms after the nack at step 5
    assert history.events[5].t_end_ms - history.events[4].t_start_ms == 250


@pytest.mark.parametrize(("delay", "anomaly"), [(200, "early-redelivery"), (520, "late-redelivery")])
def test_nack_backoff_outside_its_window_fails(delay, anomaly):
    history = java_history("nack-backoff-java")
    nack_at = history.events[6].t_start_ms  # the second nack
    broken = retime(history, 8, nack_at + delay)  # next(1) = 500: allowed [245, 500]
    assert ("PLS-NACK-004", anomaly) in failures(broken)


def test_nack_backoff_up_to_255_ms_early_passes():
    history = java_history("nack-backoff-java")
    nack_at = history.events[8].t_start_ms  # the third nack, next(2) = 1000
    report = check(retime(history, 10, nack_at + 750))
    assert report.ok, report.summary()


# ---------------------------------------------------------------------- PLS-NACK-005 case


def test_nack_fixed_delay_java_case_passes():
    report = check(java_history("nack-fixed-delay-java"))
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-NACK-005"] == "PASS"


def test_java_fixed_nack_arriving_in_the_cpp_slack_fails_late():
    # d = 1000: the C++ window would allow 1200 ms; the Java one-shot timer does not.
    history = java_history("nack-fixed-delay-java")
    nack_at = history.events[8].t_start_ms
    broken = retime(history, 12, nack_at + 1200)
    assert ("PLS-NACK-005", "late-redelivery") in failures(broken)


def test_java_fixed_nack_more_than_255_ms_early_fails():
    history = java_history("nack-fixed-delay-java")
    nack_at = history.events[8].t_start_ms
    broken = retime(history, 12, nack_at + 700)  # allowed from 745
    assert ("PLS-NACK-005", "early-redelivery") in failures(broken)


def test_the_same_history_judged_as_cpp_fails_early():
    # A Java arrival 200 ms before d is fine for Java and early for C++: the profile decides.
    history = java_history("nack-fixed-delay-java")
    nack_at = history.events[8].t_start_ms
    java_ok = retime(history, 12, nack_at + 800)
    assert check(java_ok).ok
    as_cpp = History(replace(java_ok.header, client="python"), java_ok.events)
    assert ("PLS-NACK-001", "early-redelivery") in failures(as_cpp)


# ---------------------------------------------------------------------- PLS-NACK-003 (Java)


def test_java_exclusive_nack_rewinds():
    report = check(java_history("nack-exclusive-rewind-java"))
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-NACK-003"] == "PASS"


def test_java_exclusive_rewind_with_a_count_fails():
    broken = set_message(java_history("nack-exclusive-rewind-java"), 11, redelivery_count=1)
    assert ("PLS-ACK-005", "wrong-redelivery-count") in failures(broken)


# ---------------------------------------------------------------------- PLS-ACKTIMEOUT-003


def test_java_ack_timeout_minimum_case_passes():
    report = check(java_history("ack-timeout-minimum-java"))
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-ACKTIMEOUT-003"] == "PASS"


@pytest.mark.parametrize("step", [1, 2, 3])
def test_java_accepting_a_too_small_ack_timeout_or_tick_fails(step):
    history = java_history("ack-timeout-minimum-java")
    events = list(history.events)
    events[step - 1] = Event(events[step - 1].op, Outcome.ok({}), events[step - 1].t_start_ms, events[step - 1].t_end_ms)
    broken = History(history.header, tuple(events))
    assert ("PLS-ACKTIMEOUT-003", "missing-rejection") in failures(broken)


def test_java_ack_timeout_of_one_second_is_refused_by_cpp_only():
    ops = [("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "c1",
                          "ack_timeout_ms": 1000, "client": "java"}),
           ("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Shared", "consumer_name": "c2",
                          "ack_timeout_ms": 1000, "client": "python"})]
    history = ModelTarget(client="mixed").run(make_trace("mixed-ack-timeout", ops))
    assert [e.outcome.status for e in history.events] == ["ok", "rejected"]
    assert history.events[1].outcome.error == "InvalidArgument"
    report = check(history)
    assert report.ok and report.rule_verdicts() == {"PLS-ACKTIMEOUT-003": "PASS", "PLS-ACKTIMEOUT-001": "PASS",
                                             "PLS-TOPIC-001": "PASS"}


# ---------------------------------------------------------------------- PLS-ACKTIMEOUT-004 / -005


def test_java_ack_timeout_window_with_a_tick():
    # PLS-ACKTIMEOUT-004: T = 1000, t = 100: (1000, 1100]; the C++ fixed tick of 1000 would give (1000, 2000]
    w = ack_timeout_window(Span(0, 0), 1000, JAVA, tick_ms=100)
    assert (w.low, w.high) == (1000, 1100)
    assert ack_timeout_window(Span(0, 0), 1000, JAVA).high == 2000


def test_java_ack_timeout_backoff_window():
    # PLS-ACKTIMEOUT-005: + next(c) at the low end, + ceil(next(c)/t)*t at the high end
    w0 = ack_timeout_window(Span(0, 0), 1000, JAVA, tick_ms=100, backoff=(500, 2000, 2.0), redelivery_count=0)
    w1 = ack_timeout_window(Span(0, 0), 1000, JAVA, tick_ms=100, backoff=(500, 2000, 2.0), redelivery_count=1)
    assert (w0.low, w0.high, w1.low, w1.high) == (1500, 1600, 2000, 2100)
    odd = ack_timeout_window(Span(0, 0), 1000, JAVA, tick_ms=300, backoff=(250, 2000, 2.0))
    assert (odd.low, odd.high) == (1200 + 250, 1500 + 300)


def test_ack_timeout_tick_case_passes_and_an_early_redelivery_fails():
    history = java_history("ack-timeout-tick-java")
    report = check(history)
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-ACKTIMEOUT-004"] == "PASS"
    received = history.events[3].t_end_ms
    assert ("PLS-ACKTIMEOUT-004", "early-redelivery") in failures(retime(history, 5, received + 900))
    assert ("PLS-ACKTIMEOUT-004", "late-redelivery") in failures(retime(history, 5, received + 1500))


def test_ack_timeout_backoff_case_passes_and_ignoring_the_backoff_fails():
    history = java_history("ack-timeout-backoff-java")
    report = check(history)
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-ACKTIMEOUT-005"] == "PASS"
    received = history.events[3].t_end_ms
    # at 1100 ms: when the plain ack timeout would fire, before next(0) = 500 ms more
    assert ("PLS-ACKTIMEOUT-005", "early-redelivery") in failures(retime(history, 5, received + 1100))


def test_case_histories_carry_the_messages_the_cases_pin():
    history = java_history("ack-timeout-backoff-java")
    counts = [received_message(e.outcome).redelivery_count for e in history.events if received_message(e.outcome)]
    assert counts == [0, 1, 2]
