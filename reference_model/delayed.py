"""Delayed delivery: when a message sent with ``deliver_at`` / ``deliver_after`` reaches a consumer.

Pulsar part: the broker's delayed-delivery trackers (``apache/pulsar pulsar-broker/src/main/java/
org/apache/pulsar/broker/delayed/AbstractDelayedDeliveryTracker.java#getCutoffTime``,
``InMemoryDelayedDeliveryTracker#addMessage``), used only by the multiple-consumer dispatchers
(``.../service/persistent/PersistentDispatcherMultipleConsumers.java#trackDelayedDelivery``, which
the Key_Shared dispatcher extends); the producer's ``canAddToBatch`` in ``apache/pulsar-client-cpp
lib/ProducerImpl.cc``; ``MessageBuilder::deliverAfter`` (``lib/MessageBuilder.cc``: now + delay).
Rule ids: PLS-DELAY-001 .. PLS-DELAY-007, PLS-NP-004.

1. Who honours it: Shared and Key_Shared subscriptions on persistent topics (PLS-DELAY-001,
   PLS-DELAY-003). Exclusive and Failover dispatch a delayed message at once, in publish order
   (PLS-DELAY-002); non-persistent topics ignore the delay (PLS-NP-004).
2. When: a tracked message is ready once ``deliver_at <= cutoff(now)``, where the cutoff is
   ``now`` in strict mode and ``now + tick`` otherwise. A message already ready when it is read
   is not tracked at all. Strict (PLS-DELAY-004): never early, late by at most about
   ``2 * tick`` plus dispatch latency (the docs' "deliverAt time plus the tickTimeMillis for the
   topic plus the delayedDeliveryTickTimeMillis"). Non-strict (PLS-DELAY-005): up to ``tick``
   early.
3. Producer: ``deliver_after`` becomes ``deliver_at = client now + delay``; Python sets
   ``deliver_at`` and then ``deliver_after``, so ``deliver_after`` wins when both are given, and
   each is skipped when falsy. A delayed message is never batched: it is sent at once as its
   own entry, ahead of a batch still being filled (PLS-DELAY-006).

4. The broker's limit (PLS-DELAY-007, 3.3.0+, PIP-315): with ``delayedDeliveryMaxDelayInMillis`` > 0,
   a persistent topic refuses at publish a message whose ``deliver_at - publish_time`` exceeds it
   (``PersistentTopic#isExceedMaximumDeliveryDelay``; NotAllowedError "Exceeds max allowed delivery
   delay of N milliseconds"). The Java client fails that send; the C++ client closes its connection
   on the error and sends the message again, for ever (measured on 4.0.8: 2 800 reconnects in 5
   minutes, the send never answered).

Not modelled: the bucket tracker, namespace/topic policies that switch the feature off or set
their own limit, clock skew (``deliver_at`` is
client time and the broker compares it with its own clock), the Failover first-dispatch pause.
Choices: a message already due when stored may come at most ``2 * tick + dispatch_slack_ms``
after its ``deliver_at`` or at once, whichever is later; ``dispatch_slack_ms`` (default 50) covers
the broker's timer granularity and the trip to the client. The order a consumer sees follows from
the spans (``spec.delayed_delivery_order`` states it for one consumer).
"""

from __future__ import annotations

from reference_model.timing import Span

DELAY_HONOURING_TYPES = ("Shared", "Key_Shared")
_TYPE_ALIASES = {"KeyShared": "Key_Shared", "Key_Shared": "Key_Shared", "Shared": "Shared",
                 "Exclusive": "Exclusive", "Failover": "Failover"}

# Broker defaults (ServiceConfiguration); the suite's embedded broker sets tick 100 ms, strict true.
DEFAULT_TICK_MS = 1000
DEFAULT_STRICT = False
DEFAULT_DISPATCH_SLACK_MS = 50


def honours_delay(subscription_type: str, *, persistent: bool = True, delayed_delivery_enabled: bool = True) -> bool:
    """Step 1: does this subscription hold a delayed message back?"""
    kind = _TYPE_ALIASES.get(subscription_type)
    if kind is None:
        raise ValueError(f"unknown subscription type {subscription_type!r}; use one of {sorted(_TYPE_ALIASES)}")
    return persistent and delayed_delivery_enabled and kind in DELAY_HONOURING_TYPES


def cutoff_time(now_ms: float, *, tick_ms: int, strict: bool) -> float:
    """``getCutoffTime``: messages with ``deliver_at <= cutoff`` may be dispatched."""
    return now_ms if strict else now_ms + tick_ms


def is_ready(deliver_at_ms: float, now_ms: float, *, tick_ms: int, strict: bool) -> bool:
    """Step 2: may the dispatcher hand this message to a consumer at ``now``?"""
    return deliver_at_ms <= cutoff_time(now_ms, tick_ms=tick_ms, strict=strict)


def effective_deliver_at(*, client_now_ms: float, deliver_at_ms: int | None = None,
                         deliver_after_ms: int | None = None) -> float | None:
    """Step 3: the ``deliver_at_time`` the message carries (None: not delayed)."""
    result: float | None = None
    if deliver_at_ms:  # Python: `if deliver_at:`
        result = int(deliver_at_ms)
    if deliver_after_ms:  # Python: `if deliver_after:`; C++ deliverAfter = now + delay
        result = client_now_ms + int(deliver_after_ms)
    return result


def deliver_at_range(send: Span, *, deliver_at_ms: int | None = None,
                     deliver_after_ms: int | None = None) -> tuple[float, float] | None:
    """Step 3 over a send that took ``send``: the earliest and latest ``deliver_at`` the client
    could have computed (``deliver_after`` reads the client clock somewhere inside the send)."""
    low = effective_deliver_at(client_now_ms=send.start, deliver_at_ms=deliver_at_ms, deliver_after_ms=deliver_after_ms)
    high = effective_deliver_at(client_now_ms=send.end, deliver_at_ms=deliver_at_ms, deliver_after_ms=deliver_after_ms)
    return None if low is None or high is None else (low, high)


def delivery_span(
    deliver_at: tuple[float, float],
    stored: Span,
    *,
    subscription_type: str,
    persistent: bool = True,
    tick_ms: int = DEFAULT_TICK_MS,
    strict: bool = DEFAULT_STRICT,
    dispatch_slack_ms: float = DEFAULT_DISPATCH_SLACK_MS,
) -> Span:
    """When a consumer may first get a message stored during ``stored`` with ``deliver_at`` in
    the given range (steps 1-2).

    A subscription that does not honour the delay, or a message already ready when stored, goes
    from ``stored``. Otherwise from the first instant the cutoff reaches ``deliver_at``
    (``deliver_at`` strict, ``deliver_at - tick`` non-strict), and at most two ticks plus
    ``dispatch_slack_ms`` after ``deliver_at``.

    Violated if a Shared consumer on a strict broker receives it before ``deliver_at``.

    >>> delivery_span((1500, 1500), Span(1000, 1000), subscription_type="Shared", tick_ms=100, strict=True)
    Span(start=1500, end=1750)
    """
    if not honours_delay(subscription_type, persistent=persistent):
        return stored
    early, late = deliver_at
    if is_ready(early, stored.start, tick_ms=tick_ms, strict=strict):
        low = stored.start
    else:  # the first instant whose cutoff reaches deliver_at
        low = early - (cutoff_time(0.0, tick_ms=tick_ms, strict=strict))
    return Span(low, max(stored.end, late + 2 * tick_ms + dispatch_slack_ms))


def exceeds_max_delay(deliver_at: tuple[float, float] | None, publish: tuple[float, float], max_delay_ms: int) -> bool | None:
    """PLS-DELAY-007: is the message refused for its delay? ``deliver_at`` and ``publish`` are the
    ranges the client could have stamped (both read its clock during the send). True: refused;
    False: accepted; None: the ranges straddle the limit (either)."""
    if max_delay_ms <= 0 or deliver_at is None:
        return False
    least, most = deliver_at[0] - publish[1], deliver_at[1] - publish[0]
    if least > max_delay_ms:
        return True
    return False if most <= max_delay_ms else None


def batchable(deliver_at: object | None) -> bool:
    """PLS-DELAY-006: ``canAddToBatch``: a message with a deliver-at time is always sent alone."""
    return deliver_at is None
