"""PLS-DELAY-007 on brokers started with delayedDeliveryMaxDelayInMillis=2000 (3.3.0+, PIP-315):
the case delay-max-delay-java, which the default embedded broker (no limit) cannot show, run with
the Java client and judged by the checker."""

from __future__ import annotations

import dataclasses

import pytest

pytestmark = pytest.mark.live


@pytest.fixture(scope="module", params=["4.0.8", pytest.param("3.3.6", marks=pytest.mark.releases)])  # releases tier: docs/ci.md
def limited_broker(request):
    from fixtures.embedded import EmbeddedBroker

    broker = EmbeddedBroker(version=request.param, overrides={"delayedDeliveryMaxDelayInMillis": "2000"})
    endpoint = broker.start()
    yield request.param, endpoint
    broker.stop()


@pytest.mark.rule("PLS-DELAY-007")
def test_a_message_delayed_past_the_limit_is_refused(limited_broker):
    from conformance.case_files import discover_cases
    from conformance.plugin import bands_measured_on
    from conformance.runner import PASS, run_case
    from conformance.targets.pulsar import BrokerTarget

    version, endpoint = limited_broker
    (case,) = [c for c in discover_cases() if c.id == "delay-max-delay-java"]
    target = BrokerTarget(endpoint, client="java")
    try:
        target.timing = bands_measured_on(endpoint, target, "java")  # this broker's own, under CI's load
        result = run_case(dataclasses.replace(case, not_live=""), target, client="java")
    finally:
        target.close()
    assert result.history.header.profile["broker_config"]["delayedDeliveryMaxDelayInMillis"] in ("2000", 2000)
    assert result.status == PASS, f"on {version}:\n{result.failure_text()}"
    assert result.rule_verdicts["PLS-DELAY-007"] == PASS
