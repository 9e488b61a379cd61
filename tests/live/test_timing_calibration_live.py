"""The timing calibration probe (conformance/timing.py) on the session's broker: it runs, counts
what it should, and its figures are physically sane. The ceilings are generous on purpose: this
checks that the probe measures something real, not how fast this machine is (benchmarks/
timing_distributions.py publishes the figures)."""

from __future__ import annotations

import pytest

pytest.importorskip("pulsar")

from conformance.timing import REQUIRED, TimingBands, calibrate  # noqa: E402

pytestmark = pytest.mark.live


@pytest.mark.rule("PLS-NACK-001", "PLS-NACK-002")
def test_python_probe_measures_sane_figures(pulsar_broker):
    cal = calibrate(pulsar_broker.service_url, pulsar_broker.admin_url, client="python", samples=60,
                    nack_samples=15, overshoot_samples=10, redeliver_samples=12, token=pulsar_broker.token)
    d = cal.distributions
    assert set(REQUIRED) <= set(d)
    assert d["call_overhead_ms"].n == 60 + 15  # every queued message, the ones nacked later too
    assert d["nack_earliness_ms"].n == 15  # every nacked message came back
    assert 1 <= d["nack_lateness_ms"].n <= 15
    assert d["timer_overshoot_ms"].n == 10
    assert d["redeliver_lateness_ms"].n == 12
    assert 0 <= d["redeliver_lateness_ms"].min and d["redeliver_lateness_ms"].max < 1000  # PLS-REDELIVER-001: "at once"
    assert d["delivery_lateness_ms"].n == 2 * 12  # each of steps 5 and 6's sends was received
    assert d["delivery_lateness_ms"].min >= 0 and d["delivery_lateness_ms"].max < 1000  # a receive ends after the send
    assert d["call_overhead_ms"].min >= 0
    assert d["call_overhead_ms"].p50 < 50  # a queued message is handed over in far less
    # a receive with a timeout never returns before it (monotonic clock; -1 ms for rounding)
    assert d["timer_overshoot_ms"].min >= -1
    assert d["timer_overshoot_ms"].p50 < 100
    # PLS-NACK-001/002: a 100 ms nack is never back before 100 ms (earliness <= 0) ...
    assert d["nack_earliness_ms"].max <= 1
    # ... and comes within a second of its window's end (the old blanket band)
    assert d["nack_lateness_ms"].max < 1000
    bands = TimingBands.from_calibration(cal)
    assert 1 <= bands.dispatch_latency_ms < 1000
    assert cal.client == "python" and cal.broker_version and cal.when.endswith("Z")


def test_probe_reuses_a_running_java_target(live_target_for, pulsar_broker):
    target = live_target_for("java")
    cal = calibrate(pulsar_broker.service_url, pulsar_broker.admin_url, client="java", samples=20,
                    nack_samples=5, overshoot_samples=5, redeliver_samples=5, target=target)
    assert cal.client == "java" and cal.client_version.startswith("java ")
    assert cal.distributions["nack_earliness_ms"].n == 5
    assert cal.distributions["call_overhead_ms"].min >= 0
    assert target.java_driver().alive()  # the run's driver stays up for the cases after it
