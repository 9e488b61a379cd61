"""Chapter redelivery.py: nacks, ack timeouts, backoff, C++ and Java (PLS-NACK-001/002/004/005, PLS-ACKTIMEOUT-001..005).

The Java rules: the model's window, a Java case's model history that passes, and the same history
mutated so that it breaks the rule, which the checker must FAIL (anomaly named).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from broker_trace_helpers import P, received, recv, run, send, sub
from case_history_helpers import failures, java_history
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome, make_trace, received_message
from reference_model import spec
from reference_model.profiles import Profile, profile_for
from reference_model.redelivery import (
    JAVA_BACKOFF_DEFAULT_MAX_DELAY_MS,
    JAVA_BACKOFF_DEFAULT_MIN_DELAY_MS,
    JavaNackTracker,
    ack_timeout_window,
    check_ack_timeout,
    consumer_nack_window,
    effective_nack_delay_ms,
    nack_window,
    nack_window_offsets,
)
from reference_model.timing import Span

JAVA = profile_for("4.0.8", "java")
CPP = profile_for("4.0.8", "python")


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


# ---------------------------------------------------------------- PLS-NACK-001/002 (C++)


def test_cpp_nack_window_and_floor():
    p = Profile()
    assert nack_window_offsets(300, p) == (300, 400)
    assert nack_window_offsets(200, p) == (200, 266)
    assert effective_nack_delay_ms(10, p) == 100  # PLS-NACK-002
    assert nack_window_offsets(10, p) == (100, 133)
    w = nack_window(Span(412, 415), 300, p)
    assert (w.low, w.canonical, w.high) == (712, 712, 815)


def test_nack_floor_and_shared_count():
    # PLS-NACK-002: 10 ms becomes 100 ms. PLS-ACK-005: count 1 after the nack.
    h = run(sub("c1", "Shared", nack_delay_ms=10), P, send("m0"), recv("c1"), ("nack", {"consumer": "c1", "message": "m0"}),
            recv("c1"), ("nack", {"consumer": "c1", "message": "m0"}), recv("c1"))
    assert received(h) == [("m0", 0, 0), ("m0", 1, 100), ("m0", 2, 200)]


# ---------------------------------------------------------------- PLS-NACK-004 backoff


def test_java_backoff_vectors_match_docs_table_shifted_by_one():
    # Docs: "redelivery count 1 -> 1 s, 2 -> 2 s, ..., 7 -> 60 s" with min 1 s, max 60 s.
    got = [spec.nack_backoff_delay_ms(c, min_delay_ms=1000, max_delay_ms=60000) for c in range(8)]
    assert got == [1000, 2000, 4000, 8000, 16000, 32000, 60000, 60000]
    assert spec.nack_backoff_delay_ms(100, min_delay_ms=1000, max_delay_ms=60000) == 60000
    assert spec.nack_backoff_delay_ms(3, min_delay_ms=0, max_delay_ms=60000) == 0
    assert spec.nack_backoff_delay_ms(2, min_delay_ms=100, max_delay_ms=10_000, multiplier=3.0) == 900


def test_java_backoff_builder_defaults():
    assert (JAVA_BACKOFF_DEFAULT_MIN_DELAY_MS, JAVA_BACKOFF_DEFAULT_MAX_DELAY_MS) == (10_000, 600_000)
    assert spec.JAVA_BACKOFF_DEFAULT_MULTIPLIER == 2.0
    got = [spec.nack_backoff_delay_ms(c, min_delay_ms=spec.JAVA_BACKOFF_DEFAULT_MIN_DELAY_MS,
                                      max_delay_ms=spec.JAVA_BACKOFF_DEFAULT_MAX_DELAY_MS) for c in range(8)]
    assert got == [10_000, 20_000, 40_000, 80_000, 160_000, 320_000, 600_000, 600_000]


@pytest.mark.parametrize("kwargs,match", [
    ({"min_delay_ms": 1000, "max_delay_ms": 60000, "multiplier": 1.0}, "multiplier"),
    ({"min_delay_ms": -1, "max_delay_ms": 60000}, "min_delay_ms"),
    ({"min_delay_ms": 1000, "max_delay_ms": 999}, "max_delay_ms"),
])
def test_java_backoff_argument_checks(kwargs, match):
    with pytest.raises(ValueError, match=match):
        spec.nack_backoff_delay_ms(1, **kwargs)


# ---------------------------------------------------------------- PLS-NACK-005 / -004 windows (Java)


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


# ---------------------------------------------------------------- PLS-NACK-004 case


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


# ---------------------------------------------------------------- PLS-NACK-005 case


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


# ---------------------------------------------------------------- PLS-ACKTIMEOUT-001/002


def test_ack_timeout_window():
    assert spec.ack_timeout_redelivery_window_ms(10_000, 1000) == (10_000, 11_000)
    assert spec.ack_timeout_redelivery_window_ms(10_500, 1000) == (11_000, 12_000)
    assert spec.ack_timeout_redelivery_window_ms(2000, 1000, client="java") == (2000, 3000)
    assert spec.ack_timeout_redelivery_window_ms(1500, 5000, client="java") == (1500, 3000)  # t = min(tick, T)


def test_ack_timeout_minimums():
    with pytest.raises(ValueError, match="greater than 10 seconds"):
        spec.ack_timeout_redelivery_window_ms(5000, 1000)
    with pytest.raises(ValueError, match="greater than 1 seconds"):
        spec.ack_timeout_redelivery_window_ms(500, 1000, client="java")
    with pytest.raises(ValueError):
        spec.ack_timeout_redelivery_window_ms(0, 1000)
    assert check_ack_timeout(0, 10_000) is None and check_ack_timeout(None, 10_000) is None
    assert check_ack_timeout(5000, 10_000) == "Unacknowledged message timeout should be greater than 10 seconds."


def test_ack_timeout_redelivers_at_end_of_window():
    # PLS-ACKTIMEOUT-002: T=10 s, t=1 s: the model redelivers at 11 s (inside (10 s, 11 s]).
    h = run(sub("c1", "Shared", ack_timeout_ms=10_000), P, send("m0"), recv("c1"), recv("c1", 20_000))
    assert received(h) == [("m0", 0, 0), ("m0", 1, 11_000)]


def test_ack_timeout_below_minimum_is_rejected():
    # PLS-ACKTIMEOUT-001
    h = run(sub("c1", ack_timeout_ms=5000))
    assert h.events[0].outcome.error == "InvalidArgument"


# ---------------------------------------------------------------- PLS-ACKTIMEOUT-003


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
                                             "PLS-TOPIC-001": "PASS", "PLS-OP-001": "PASS"}


# ---------------------------------------------------------------- PLS-ACKTIMEOUT-004 / -005


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
