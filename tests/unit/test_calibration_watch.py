"""The timing probe stops at its first step that cannot succeed, naming it (conformance.timing.ProbeWatch).

A producer that never connected once left 253 receives of 5 s each: 21 silent minutes in
calibration. The watch runs on the probe's real events (here: the probe run on the model, then one
event changed as a broker would have answered)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.timing import PROBE_DEADLINE_S, CalibrationError, ProbeWatch, probe_trace
from conformance.trace import Outcome
from pulsar_conformance.targets import model_target


@pytest.fixture(scope="module")
def probe_events():
    return list(model_target("python").run(probe_trace(10, nack_samples=3, overshoot_samples=3, redeliver_samples=2)).events)


def test_a_probe_that_goes_well_is_not_stopped(probe_events):
    watch = ProbeWatch(where="pulsar://127.0.0.1:1")
    for ev in probe_events:
        watch(ev)


def test_a_producer_that_never_connected_stops_the_probe_at_once(probe_events):
    first = probe_events[0]
    assert first.op.op == "create_producer"
    failed = replace(first, outcome=Outcome.indeterminate("timed out after 15 s waiting for the producer to connect"))
    with pytest.raises(CalibrationError) as err:
        ProbeWatch(where="pulsar://127.0.0.1:57259")(failed)
    text = str(err.value)
    assert f"probe step {first.step} (create_producer producer=p, topic=calibration on pulsar://127.0.0.1:57259)" in text
    assert "ended indeterminate: timed out after 15 s waiting for the producer to connect" in text
    assert "--timing-tolerance-ms" in text


def test_a_message_that_does_not_come_stops_the_probe_and_says_what_was_awaited(probe_events):
    watch = ProbeWatch()
    receive = next(ev for ev in probe_events if ev.op.op == "receive")
    for ev in probe_events[:probe_events.index(receive)]:
        watch(ev)
    with pytest.raises(CalibrationError, match=r"waited 5000 ms for a message the probe sent to consumer c and none came"):
        watch(replace(receive, outcome=Outcome.ok({"message": None})))


def test_an_empty_short_receive_is_the_probe_measuring_timer_overshoot(probe_events):
    short = [ev for ev in probe_events if ev.op.op == "receive" and ev.op.args["timeout_ms"] < 1000]
    assert short
    for ev in short:
        ProbeWatch()(replace(ev, outcome=Outcome.ok({"message": None})))


def test_a_probe_past_its_deadline_is_stopped_naming_the_step(probe_events):
    now = [0.0]
    watch = ProbeWatch(deadline_s=PROBE_DEADLINE_S, clock=lambda: now[0])
    watch(probe_events[0])
    now[0] = PROBE_DEADLINE_S + 1
    with pytest.raises(CalibrationError, match=rf"probe step {probe_events[1].step} .*past its deadline of 180 s"):
        watch(probe_events[1])
