"""Timing bands (conformance/timing.py): the derivation, the override, the JSON forms, and the
probe's arithmetic on hand-made events. Expected figures are worked out by hand from the formula
in the module docstring (steps 1-6), not taken from the code's output."""

from __future__ import annotations

import pytest

from conformance.timing import (
    REQUIRED,
    Calibration,
    CalibrationError,
    Distribution,
    TimingBands,
    bands_from_header,
    nack_samples_of,
    percentile,
    probe_distributions,
)
from conformance.trace import Event, Op, Outcome, TraceFormatError, dumps, make_trace, parse, replace_header


def _dist(p999: float, n: int = 1000) -> Distribution:
    # n = 1000: tail_factor 1, so the figures below are the plain formula of steps 1-6
    # only p99.9 enters the derivation; the rest is filler that must not matter
    return Distribution(n=n, min=p999 - 10, p50=p999 - 5, p90=p999 - 2, p99=p999 - 1, p999=p999, max=p999 + 50)


def _cal(overshoot: float, overhead: float, late: float, early: float, redeliver: float = 0.5) -> Calibration:
    return Calibration(target="pulsar://127.0.0.1:6650", client="python", when="2026-11-24T08:00:00Z",
                       distributions={"timer_overshoot_ms": _dist(overshoot), "call_overhead_ms": _dist(overhead),
                                      "nack_lateness_ms": _dist(late), "nack_earliness_ms": _dist(early),
                                      "redeliver_lateness_ms": _dist(redeliver)})


# ------------------------------------------------------------------ percentiles


def test_nearest_rank_percentiles():
    xs = list(range(1, 1001))  # 1..1000
    d = Distribution.of(reversed(xs))
    # nearest rank: ceil(q/100 * 1000)-th smallest
    assert (d.n, d.min, d.p50, d.p90, d.p99, d.p999, d.max) == (1000, 1, 500, 900, 990, 999, 1000)
    assert percentile([5, 1, 3], 50) == 3  # ceil(1.5) = 2nd smallest
    assert percentile([5, 1, 3], 99.9) == 5  # ceil(2.997) = 3rd
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        Distribution.of([])


# ------------------------------------------------------------------ derivation


def test_observed_lateness_dominates():
    # harness = 0.6 + 1.2 = 1.8; observed = 2.7; ceil(2 * 2.7) = ceil(5.4) = 6
    bands = TimingBands.from_calibration(_cal(overshoot=0.6, overhead=1.2, late=2.7, early=-34.0), broker_tick_ms=100)
    assert bands.dispatch_latency_ms == 6
    assert bands.delayed_late_ms == 2 * 100 + 6
    assert bands.early_ms == 1  # earliness <= 0: the 1 ms floor
    assert bands.ack_grouping_ms == 100
    assert bands.source == "calibrated"
    assert bands.late_ms("PLS-NACK-001") == 6
    assert bands.late_ms("PLS-DELAY-004") == 206


def test_harness_dominates_when_nothing_was_late():
    # harness = 3.25 + 4.0 = 7.25; observed = max(0, -1) = 0; ceil(2 * 7.25) = 15
    bands = TimingBands.from_calibration(_cal(overshoot=3.25, overhead=4.0, late=-1.0, early=0.4), broker_tick_ms=1000)
    assert bands.dispatch_latency_ms == 15
    assert bands.delayed_late_ms == 2000 + 15
    assert bands.early_ms == 1  # ceil(2 * 0.4) = 1
    # safety factor 3: ceil(3 * 7.25) = ceil(21.75) = 22; early ceil(3 * 0.4) = 2
    three = TimingBands.from_calibration(_cal(3.25, 4.0, -1.0, 0.4), broker_tick_ms=1000, safety_factor=3)
    assert (three.dispatch_latency_ms, three.early_ms) == (22, 2)


def test_redeliver_lateness_dominates():
    # harness = 0.5 + 0.5 = 1; nack lateness 2; redeliver lateness 9.6 -> ceil(2 * 9.6) = ceil(19.2) = 20
    bands = TimingBands.from_calibration(_cal(0.5, 0.5, 2.0, -30.0, redeliver=9.6), broker_tick_ms=100)
    assert (bands.dispatch_latency_ms, bands.delayed_late_ms) == (20, 220)


def test_first_delivery_lateness_dominates_and_an_old_calibration_goes_without_it():
    from dataclasses import replace

    # harness 1; nack 2; redeliver 0.5; a new message's first delivery 86.6 -> ceil(2 * 86.6) = ceil(173.2) = 174:
    # the band a 173 ms receive after the send then needs (regression pls-nack-001-late-redelivery-e043c266c59b)
    old = _cal(0.5, 0.5, 2.0, -30.0)
    new = replace(old, distributions={**old.distributions, "delivery_lateness_ms": _dist(86.6)})
    bands = TimingBands.from_calibration(new, broker_tick_ms=100)
    assert (bands.dispatch_latency_ms, bands.delayed_late_ms) == (174, 2 * 100 + 174)
    assert "first delivery 86.600" in bands.derivation
    assert TimingBands.from_json(bands.to_json()).calibration.distributions["delivery_lateness_ms"].p999 == 86.6
    # recorded before 3 Dec 2026: no first-delivery figure, the band as it was derived then (ceil(2 * 2) = 4)
    before = TimingBands.from_calibration(old, broker_tick_ms=100)
    assert before.dispatch_latency_ms == 4 and "first delivery" not in before.derivation


def test_tick_read_by_the_probe_is_used_unless_given():
    from dataclasses import replace

    cal = replace(_cal(0.6, 1.2, 2.7, -34.0), broker_tick_ms=1000)  # band 6 ms as above
    assert TimingBands.from_calibration(cal).delayed_late_ms == 2 * 1000 + 6
    assert TimingBands.from_calibration(cal, broker_tick_ms=50).delayed_late_ms == 2 * 50 + 6
    assert TimingBands.from_calibration(_cal(0.6, 1.2, 2.7, -34.0)).delayed_late_ms == 2 * 100 + 6  # default tick


def test_small_probes_stretch_the_tail():
    import math

    from conformance.timing import tail_factor

    assert tail_factor(1000) == 1 and tail_factor(5000) == 1
    assert tail_factor(50) == pytest.approx(6.907755 / 3.912023, rel=1e-6)  # ln 1000 / ln 50 = 1.7658
    cal = _cal(0.1, 0.1, 2.0, -30.0, redeliver=0.5)
    small = Calibration(cal.target, cal.client, cal.when, {**cal.distributions, "nack_lateness_ms": _dist(3.7, n=50)})
    # ceil(2 x 3.7 x ln 1000 / ln 50) = ceil(2 x 6.5335) = ceil(13.067) = 14
    assert TimingBands.from_calibration(small).dispatch_latency_ms == 14
    assert 2 * 3.7 * math.log(1000) / math.log(50) == pytest.approx(13.067, abs=1e-3)
    # a negative p99.9 is not stretched: lateness -1 at n = 50 still counts as 0
    neg = Calibration(cal.target, cal.client, cal.when, {**cal.distributions, "nack_lateness_ms": _dist(-1.0, n=50)})
    assert TimingBands.from_calibration(neg).dispatch_latency_ms == 1  # ceil(2 x max(0.2, 0, 0.5)) = 1


def test_early_band_from_measured_earliness():
    # ceil(2 * 2.3) = ceil(4.6) = 5
    assert TimingBands.from_calibration(_cal(0.1, 0.1, 0.0, 2.3)).early_ms == 5


def test_floor_of_one_millisecond():
    # everything small: ceil(2 * max(0.02, 0, 0.2)) = ceil(0.4) = 1, and never below MIN_LATE_MS = 1
    bands = TimingBands.from_calibration(_cal(0.01, 0.01, -5.0, -5.0, redeliver=0.2), broker_tick_ms=0)
    assert (bands.dispatch_latency_ms, bands.delayed_late_ms, bands.early_ms) == (1, 1, 1)


def test_derivation_refuses_incomplete_or_bad_input():
    cal = _cal(1, 1, 1, 1)
    partial = Calibration(cal.target, cal.client, cal.when, {k: v for k, v in cal.distributions.items() if k != "nack_lateness_ms"})
    with pytest.raises(ValueError, match="nack_lateness_ms"):
        TimingBands.from_calibration(partial)
    with pytest.raises(ValueError, match="safety_factor"):
        TimingBands.from_calibration(cal, safety_factor=0.5)


def test_model_bands_are_zero():
    m = TimingBands.for_model()
    assert (m.dispatch_latency_ms, m.ack_grouping_ms, m.early_ms, m.delayed_late_ms) == (0, 0, 0, 0)
    assert m.source == "model"


# ------------------------------------------------------------------ override


def test_override_widens_and_narrows_and_keeps_the_measurements():
    measured = TimingBands.from_calibration(_cal(0.6, 1.2, 2.7, -34.0), broker_tick_ms=100)  # 6 ms
    wide = measured.with_override(250)
    assert (wide.dispatch_latency_ms, wide.delayed_late_ms, wide.source) == (250, 450, "override")
    assert wide.early_ms == measured.early_ms and wide.ack_grouping_ms == measured.ack_grouping_ms
    assert wide.calibration is measured.calibration
    assert "6 ms" in wide.derivation  # what was measured stays in the report
    narrow = measured.with_override(0)
    assert (narrow.dispatch_latency_ms, narrow.delayed_late_ms) == (0, 200)
    for bad in (-1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="timing-tolerance-ms"):
            measured.with_override(bad)


def test_widest_takes_each_figure_from_the_widest_band():
    py = TimingBands.from_calibration(_cal(0.6, 1.2, 2.7, -34.0), broker_tick_ms=100)  # 6 ms
    java = TimingBands.from_calibration(_cal(1.0, 3.0, 31.0, 0.7), broker_tick_ms=100)  # ceil(2 * 31) = 62; early ceil(1.4) = 2
    both = TimingBands.widest([py, java])
    assert (both.dispatch_latency_ms, both.delayed_late_ms, both.early_ms) == (62, 262, 2)
    assert both.calibration is java.calibration and both.source == "calibrated"
    with pytest.raises(ValueError):
        TimingBands.widest([])


def test_no_narrower_than_default_widens_each_figure_once():
    floor = TimingBands.default_live()
    py = TimingBands.from_calibration(_cal(0.6, 1.2, 2.7, -34.0), broker_tick_ms=100)  # 6 ms: narrower than 100
    floored = py.no_narrower_than_default()
    assert floored.dispatch_latency_ms == floor.dispatch_latency_ms == 100
    assert floored.delayed_late_ms == floor.delayed_late_ms
    assert floored.no_narrower_than_default() is floored  # twice is once: the derivation is not written again
    wide = TimingBands.from_calibration(_cal(1.0, 3.0, 300.0, 0.7), broker_tick_ms=100)  # ceil(2 * 300) = 600 ms
    assert wide.no_narrower_than_default().dispatch_latency_ms == 600


# ------------------------------------------------------------------ JSON and the history header


def test_json_round_trip():
    bands = TimingBands.from_calibration(_cal(0.6, 1.2, 2.7, -34.0)).with_override(40)
    back = TimingBands.from_json(bands.to_json())
    assert back == bands
    assert back.calibration.to_json() == bands.calibration.to_json()
    assert set(back.calibration.distributions) == set(REQUIRED)
    assert bands.tolerances_json() == {"dispatch_latency_ms": 40, "ack_grouping_ms": 100, "early_ms": 1}
    with pytest.raises(ValueError, match="version"):
        TimingBands.from_json({**bands.to_json(), "version": 2})
    with pytest.raises(ValueError, match="dispatch_latency_ms"):
        TimingBands.from_json({**bands.to_json(), "dispatch_latency_ms": -3})


def _history(header_timing):
    trace = make_trace("t", [("create_producer", {"producer": "p", "topic": "x"})])
    from conformance.trace import History

    header = replace_header(trace.header, target="pulsar://127.0.0.1:6650", client="python", timing=header_timing)
    return History(header, (Event(trace.ops[0], Outcome.ok({}), 0.0, 1.0),))


def test_history_header_carries_the_bands():
    bands = TimingBands.from_calibration(_cal(0.6, 1.2, 2.7, -34.0))
    loaded = parse(dumps(_history(bands.to_json())))
    assert bands_from_header(loaded.header) == bands
    assert loaded.trace().header.timing is None  # a run fact: not part of the trace


def test_old_history_without_timing_loads_with_no_bands():
    text = dumps(_history(None))
    assert '"timing"' not in text
    assert bands_from_header(parse(text).header) is None


def test_unknown_timing_version_is_refused_with_advice():
    with pytest.raises(TraceFormatError, match="timing version 9"):
        parse(dumps(_history({"version": 9})))
    with pytest.raises(TraceFormatError, match="timing must be an object"):
        parse(dumps(_history(None)).replace('"profile": {}', '"profile": {}, "timing": 5', 1))


# ------------------------------------------------------------------ the probe's arithmetic


def _ev(step, op, args, t0, t1, outcome=None):
    return Event(Op(step, op, args), outcome or Outcome.ok({}), t0, t1)


def _got(label):
    return Outcome.ok({"message": {"payload": label, "message_id": [1, 2, -1, -1], "topic": "calibration"}})


def test_nack_lateness_and_earliness_cpp_and_java():
    events = [
        _ev(1, "nack", {"consumer": "c", "message": "m1"}, 0.0, 0.2),
        _ev(2, "receive", {"consumer": "c", "timeout_ms": 5000}, 0.3, 135.0, _got("m1")),
    ]
    # C++ d = 100: window [0 + 100, 0.2 + 100 + 33] = [100, 133.2]
    late, early, back = nack_samples_of(events, client="python", delay_ms=100)
    assert back == 1 and late == [pytest.approx(1.8)] and early == [pytest.approx(-35.0)]
    # Java d = 100: trimmed low 0 + max(0, 100 - 255) = 0, high 0.2 + 100 = 100.2
    late, early, _ = nack_samples_of(events, client="java", delay_ms=100)
    assert late == [pytest.approx(34.8)] and early == [pytest.approx(-135.0)]


def test_a_receive_begun_after_the_window_closed_is_not_a_lateness_sample():
    events = [
        _ev(1, "nack", {"consumer": "c", "message": "m1"}, 0.0, 0.2),
        _ev(2, "receive", {"consumer": "c", "timeout_ms": 5000}, 150.0, 150.1, _got("m1")),
    ]
    late, early, back = nack_samples_of(events, client="python", delay_ms=100)
    assert (late, back) == ([], 1) and early == [pytest.approx(100 - 150.1)]


def test_probe_distributions_split_the_phases():
    events = [
        _ev(1, "receive", {"consumer": "c", "timeout_ms": 5000}, 10.0, 10.5, _got("q1")),  # overhead 0.5
        _ev(2, "receive", {"consumer": "c", "timeout_ms": 5000}, 10.5, 10.7, _got("m1")),  # overhead 0.2
        _ev(3, "nack", {"consumer": "c", "message": "m1"}, 20.0, 20.1),
        _ev(4, "receive", {"consumer": "c", "timeout_ms": 5000}, 20.2, 155.0, _got("m1")),
        _ev(5, "receive", {"consumer": "c", "timeout_ms": 20}, 160.0, 180.4, Outcome.ok({"message": None})),
        _ev(6, "receive", {"consumer": "c", "timeout_ms": 20}, 180.4, 201.0, Outcome.ok({"message": None})),
        _ev(7, "send", {"producer": "p2", "payload": "r0"}, 202.0, 203.5),
        _ev(8, "receive", {"consumer": "d", "timeout_ms": 5000}, 203.6, 206.0, _got("r0")),
        _ev(9, "redeliver_unacked", {"consumer": "d"}, 206.0, 206.3),
        _ev(10, "receive", {"consumer": "d", "timeout_ms": 5000}, 206.4, 208.8, _got("r0")),
    ]
    d = probe_distributions(events, client="python", delay_ms=100, receive_timeout_ms=20, nack_samples=1, warmup=0)
    assert (d["call_overhead_ms"].n, d["call_overhead_ms"].max) == (2, pytest.approx(0.5))
    assert sorted([d["timer_overshoot_ms"].min, d["timer_overshoot_ms"].max]) == [pytest.approx(0.4), pytest.approx(0.6)]
    # window high 20.1 + 133 = 153.1 -> lateness 155 - 153.1 = 1.9; earliness 120 - 155 = -35
    assert d["nack_lateness_ms"].max == pytest.approx(1.9)
    assert d["nack_earliness_ms"].max == pytest.approx(-35.0)
    # 208.8 - 206.3 = 2.5; the receives on d are neither overhead nor overshoot samples
    assert (d["redeliver_lateness_ms"].n, d["redeliver_lateness_ms"].max) == (1, pytest.approx(2.5))
    # the first delivery: the receive after step 5's send ended 206.0 - 203.5 = 2.5 ms after the send returned;
    # the redelivery's receive (step 10) is not a first delivery
    assert (d["delivery_lateness_ms"].n, d["delivery_lateness_ms"].max) == (1, pytest.approx(2.5))
    with pytest.raises(CalibrationError, match="steps 5 and 6 was received"):
        probe_distributions(events[:7] + events[8:], client="python", delay_ms=100, receive_timeout_ms=20, nack_samples=1,
                            warmup=0)
    with pytest.raises(CalibrationError, match="did not come back"):
        probe_distributions(events[:3] + events[4:], client="python", delay_ms=100, receive_timeout_ms=20, nack_samples=1,
                            warmup=0)
    with pytest.raises(CalibrationError, match="redeliver_unacked"):
        probe_distributions(events[:7], client="python", delay_ms=100, receive_timeout_ms=20, nack_samples=1, warmup=0)


def test_the_probe_without_redeliver_still_measures_first_deliveries():
    """The Go client's probe has no redeliver step (no redeliver_unacked, PLS-GO-001); its first-delivery samples
    come from step 6 (the CI of 3 Dec 2026 failed every Go case when step 6 shared step 5's count, 0 for Go)."""
    from conformance.timing import probe_trace

    go = probe_trace(20, nack_samples=5, overshoot_samples=3, redeliver_samples=0, delivery_samples=4)
    ops = [op for op in go.ops if op.op == "send" and op.args["producer"] in ("p2", "p3")]
    assert [op.args["producer"] for op in ops] == ["p3"] * 4
    assert not [op for op in go.ops if op.op == "redeliver_unacked"]
    both = probe_trace(20, nack_samples=5, overshoot_samples=3, redeliver_samples=2)
    assert sorted(op.args["producer"] for op in both.ops if op.op == "send" and op.args["producer"] != "p") == ["p2"] * 2 + ["p3"] * 2


def test_warmup_samples_are_dropped():
    events = [
        _ev(1, "receive", {"consumer": "c", "timeout_ms": 5000}, 0.0, 30.0, _got("m0")),  # cold: 30 ms, dropped
        _ev(2, "receive", {"consumer": "c", "timeout_ms": 5000}, 30.0, 30.4, _got("m1")),  # 0.4
        _ev(3, "nack", {"consumer": "c", "message": "m0"}, 40.0, 40.0),
        _ev(4, "receive", {"consumer": "c", "timeout_ms": 5000}, 40.1, 203.0, _got("m0")),  # 30 ms late, dropped
        _ev(5, "nack", {"consumer": "c", "message": "m1"}, 210.0, 210.0),
        _ev(6, "receive", {"consumer": "c", "timeout_ms": 5000}, 210.1, 345.0, _got("m1")),  # 345 - 343 = 2
        _ev(7, "receive", {"consumer": "c", "timeout_ms": 20}, 350.0, 370.5, Outcome.ok({"message": None})),
        _ev(8, "send", {"producer": "p2", "payload": "r0"}, 372.0, 373.0),
        _ev(9, "receive", {"consumer": "d", "timeout_ms": 5000}, 373.0, 374.0, _got("r0")),
        _ev(10, "redeliver_unacked", {"consumer": "d"}, 380.0, 380.0),
        _ev(11, "receive", {"consumer": "d", "timeout_ms": 5000}, 380.1, 381.0, _got("r0")),
    ]
    d = probe_distributions(events, client="python", delay_ms=100, receive_timeout_ms=20, nack_samples=1, warmup=1)
    assert (d["call_overhead_ms"].n, d["call_overhead_ms"].max) == (1, pytest.approx(0.4))
    assert (d["nack_lateness_ms"].n, d["nack_lateness_ms"].max) == (1, pytest.approx(2.0))
    assert d["nack_earliness_ms"].n == 1
