"""Chapter delayed.py: delayed delivery, which subscriptions honour it and when (PLS-DELAY-001..006)."""

from __future__ import annotations

import pytest

from reference_model import delayed, spec
from reference_model.timing import Span


# ---------------------------------------------------------------- PLS-DELAY-*


@pytest.mark.parametrize("sub,honours", [("Shared", True), ("Key_Shared", True), ("KeyShared", True), ("Exclusive", False), ("Failover", False)])
def test_which_subscription_types_honour_the_delay(sub, honours):
    assert delayed.honours_delay(sub) is honours
    assert delayed.honours_delay(sub, persistent=False) is False


def test_cutoff_strict_and_non_strict():
    assert delayed.is_ready(1000, 1000, tick_ms=100, strict=True)
    assert not delayed.is_ready(1001, 1000, tick_ms=100, strict=True)
    assert delayed.is_ready(1100, 1000, tick_ms=100, strict=False)
    assert not delayed.is_ready(1101, 1000, tick_ms=100, strict=False)


def test_delivery_spans():
    def span(deliver_at, stored, **kw):
        got = delayed.delivery_span((deliver_at, deliver_at), Span(stored, stored), **kw)
        return got.start, got.end
    assert span(1500, 1000, subscription_type="Shared", tick_ms=100, strict=True, dispatch_slack_ms=50) == (1500, 1750)
    # non-strict: ready once deliver_at is within the next tick, so at once here
    assert span(1500, 1000, subscription_type="Shared", tick_ms=1000, strict=False, dispatch_slack_ms=0)[0] == 1000
    assert span(5000, 1000, subscription_type="Shared", tick_ms=1000, strict=False, dispatch_slack_ms=0) == (4000, 7000)
    assert span(5000, 1000, subscription_type="Exclusive", tick_ms=100, strict=True, dispatch_slack_ms=10) == (1000, 1000)
    assert span(5000, 1000, subscription_type="Shared", persistent=False, tick_ms=100, strict=True) == (1000, 1000)
    # deliver_after read the client clock somewhere inside the send
    assert delayed.deliver_at_range(Span(100, 130), deliver_after_ms=200) == (300, 330)
    assert delayed.deliver_at_range(Span(100, 130), deliver_at_ms=5000) == (5000, 5000)
    assert delayed.deliver_at_range(Span(100, 130)) is None


def test_delivery_order_late_then_now():
    msgs = [("late", 600.0), ("now", None)]
    assert spec.delayed_delivery_order(msgs, subscription_type="Shared", tick_ms=100, strict=True) == ["now", "late"]
    assert spec.delayed_delivery_order(msgs, subscription_type="Key_Shared", tick_ms=100, strict=True) == ["now", "late"]
    assert spec.delayed_delivery_order(msgs, subscription_type="Exclusive", tick_ms=100, strict=True) == ["late", "now"]
    assert spec.delayed_delivery_order(msgs, subscription_type="Failover", tick_ms=100, strict=True) == ["late", "now"]


def test_deliver_after_wins_and_falsy_values_are_skipped():
    assert delayed.effective_deliver_at(client_now_ms=100, deliver_at_ms=5000, deliver_after_ms=200) == 300
    assert delayed.effective_deliver_at(client_now_ms=100, deliver_at_ms=5000) == 5000
    assert delayed.effective_deliver_at(client_now_ms=100, deliver_at_ms=0, deliver_after_ms=0) is None
    assert not delayed.batchable(300) and delayed.batchable(None)


# ---------------------------------------------------------------- PLS-DELAY-007 the broker's limit


@pytest.mark.parametrize("deliver_at,publish,limit,expected", [
    ((5000, 5000), (0, 0), 2000, True),      # 5 s past a 2 s limit: refused
    ((1000, 1000), (0, 0), 2000, False),     # within
    ((2000, 2000), (0, 0), 2000, False),     # equal is allowed: the broker refuses only "> limit"
    ((2001, 2003), (0, 2), 2000, None),      # the clock spread straddles the limit: either
    ((9999, 9999), (0, 0), 0, False),        # 0: no limit
    (None, (0, 0), 2000, False),             # not delayed
])
def test_the_broker_refuses_only_a_delay_above_its_limit(deliver_at, publish, limit, expected):
    """PersistentTopic#isExceedMaximumDeliveryDelay: deliverAtTime - publishTime > delayedDeliveryMaxDelayInMillis."""
    assert delayed.exceeds_max_delay(deliver_at, publish, limit) is expected
