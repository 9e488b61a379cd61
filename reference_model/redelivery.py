"""When a message comes back: negative acks, ack timeouts, and the Java backoffs.

Pulsar part: client-side redelivery trackers. C++ ``lib/NegativeAcksTracker.cc`` and
``lib/UnAckedMessageTrackerEnabled.cc`` (what the Python client runs); Java 4.0.8
(apache/pulsar pulsar-client ``src/main/java/org/apache/pulsar/client/impl/``)
``NegativeAcksTracker``, ``UnAckedMessageTracker``, ``UnAckedMessageRedeliveryTracker``,
``MultiplierRedeliveryBackoff``, ``ConsumerBuilderImpl``.
Rule ids: PLS-NACK-001/002/004/005, PLS-ACKTIMEOUT-001..005.

Negative ack, C++ (PLS-NACK-001/002): the client remembers the nacked id with deadline
``now + d``, where ``d = max(configured, 100 ms)``; a timer that fires every ``d/3`` sends all
ids whose deadline passed in one redeliver request. So the redelivery is requested inside
``[d, d + d/3]`` after the nack. There is no backoff: every nack waits the same ``d``.

Negative ack, Java (PLS-NACK-004/005), one tracker per ``ConsumerImpl`` (per partition):
1. The delay ``d`` is ``max(configured, 100 ms)`` (``MIN_NACK_DELAY_MS``), or with a
   ``MultiplierRedeliveryBackoff`` ``next(c)`` for the redelivery count ``c`` of the nacked
   message (``add(Message)``; no 100 ms floor on that path).
2. The deadline ``now + d`` is trimmed to 8 low bits of a millisecond clock
   (``negativeAckPrecisionBitCnt = 8``): it may lie up to 255 ms before ``now + d``.
3. If no timer is armed, one is armed for ``d`` after the nack. When it fires, every id whose
   (trimmed) deadline has passed is redelivered, and the timer is re-armed for the earliest
   remaining deadline (or disarmed). There is no ``d/3`` period.
So a nack is redelivered in ``[now + d - 255, now + d]``, unless a timer armed by an earlier
nack with a longer delay was still pending: the nack then waits for it (``JavaNackTracker``).

Ack timeout (C++ PLS-ACKTIMEOUT-001/002, Java PLS-ACKTIMEOUT-003/004): the timeout ``T`` must be
0/None (off) or at least 10 000 ms (C++) / 1 000 ms (Java); the tracker keeps a ring of
``ceil(T/t) + 1`` time slots with tick ``t = min(tick, T)`` (C++ tick fixed at 1000 ms; Java
``ackTimeoutTickTime``, at least 100 ms); a message handed to the application enters the newest
slot, and each tick redelivers the oldest slot. A message not acked is therefore redelivered in
``(ceil(T/t)*t, (ceil(T/t)+1)*t]`` after the application received it.

Ack-timeout backoff, Java (PLS-ACKTIMEOUT-005, ``UnAckedMessageRedeliveryTracker``): the same
ring, but a slot's messages are not redelivered when it is popped: each gets the deadline
``pop + next(c)`` (``c`` its redelivery count when received) and is redelivered by the first tick
at or after it, so ``(ceil(T/t)*t + next(c), (ceil(T/t)+1)*t + ceil(next(c)/t)*t]`` after receive.

Java backoff (PLS-NACK-004): ``MultiplierRedeliveryBackoff.next(c)``.

Not modelled: the C++ nack timer being re-armed by every nack (a stream of nacks closer than
d/3 postpones redeliveries; unconfirmed live); the Java nack tracker's timer latency (the
HashedWheelTimer ticks every millisecond: within the checker's dispatch tolerance).
Choices: the model's own choice of instant is the earliest one for nacks (``d``) and the latest
one for ack timeouts (``(ceil(T/t)+1)*t``); both lie inside the windows above. The Java nack
window's upper end takes an earlier pending timer into account with the bound ``JavaNackTracker``
keeps (sound, not tight: it may allow a later redelivery than the client can produce).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from reference_model.profiles import Profile
from reference_model.timing import Span, Window

# Java MultiplierRedeliveryBackoff builder defaults (PLS-NACK-004).
JAVA_BACKOFF_DEFAULT_MIN_DELAY_MS = 10_000
JAVA_BACKOFF_DEFAULT_MAX_DELAY_MS = 600_000
JAVA_BACKOFF_DEFAULT_MULTIPLIER = 2.0


def effective_nack_delay_ms(configured_ms: int, profile: Profile) -> int:
    """PLS-NACK-002: the delay the client really uses (C++ floors it at 100 ms)."""
    return max(int(configured_ms), profile.nack_min_delay_ms)


def nack_window_offsets(delay_ms: int, profile: Profile) -> tuple[int, int]:
    """PLS-NACK-001: redelivery is requested ``[d, d + d // 3]`` ms after the nack."""
    d = effective_nack_delay_ms(delay_ms, profile)
    return d - profile.nack_early_ms, d + d // profile.nack_timer_divisor


def nack_window(nack: Span, delay_ms: int, profile: Profile) -> Window:
    low, high = nack_window_offsets(delay_ms, profile)
    return Window(low=nack.start + low, canonical=nack.start + effective_nack_delay_ms(delay_ms, profile), high=nack.end + high)


@dataclass
class JavaNackTracker:
    """What a Java ``NegativeAcksTracker`` needs remembered to bound its redelivery windows.

    ``pending``: for each nack, ``(own, leave)``: ``own`` bounds its deadline (the nack's end +
    d), ``leave`` bounds when the tracker has certainly let it go (its window's ``high``). The
    armed timer is always due by the deadline of a nack still in the tracker (step 3), so a new
    nack waits at most until the latest ``own`` of the nacks that may still be there.
    """

    pending: list[tuple[float, float]] = field(default_factory=list)

    def window(self, nack: Span, delay_ms: int, early_ms: int) -> Window:
        """PLS-NACK-004/005: when a nack made during ``nack`` with delay ``delay_ms`` is redelivered."""
        own = nack.end + delay_ms
        self.pending = [(o, leave) for o, leave in self.pending if leave >= nack.start]
        high = max([own] + [o for o, _ in self.pending])  # step 3: a timer already armed
        self.pending.append((own, high))
        low = nack.start + max(0, delay_ms - early_ms)  # step 2: the trimmed deadline
        return Window(low=low, canonical=nack.start + delay_ms, high=high)


def java_nack_delay_ms(nack_delay_ms: int, backoff: tuple[int, int, float] | None, redelivery_count: int,
                       profile: Profile) -> int:
    """PLS-NACK-004/005 step 1: ``next(c)`` with a backoff, else ``max(configured, 100 ms)``."""
    if backoff is not None:
        return multiplier_backoff_ms(redelivery_count, *backoff)
    return effective_nack_delay_ms(nack_delay_ms, profile)


def consumer_nack_window(nack: Span, nack_delay_ms: int, backoff: tuple[int, int, float] | None,
                         redelivery_count: int, profile: Profile, tracker: JavaNackTracker | None = None) -> Window:
    """The nack window of a consumer: C++ fixed delay (PLS-NACK-001/002), or the Java tracker
    (PLS-NACK-005, with a backoff PLS-NACK-004). ``tracker``: the Java consumer's tracker state."""
    if profile.nack_timer == "deadline":
        delay = java_nack_delay_ms(nack_delay_ms, backoff, redelivery_count, profile)
        return (tracker if tracker is not None else JavaNackTracker()).window(nack, delay, profile.nack_early_ms)
    if backoff is not None and profile.nack_backoff_supported:
        return periodic_backoff_window(nack, backoff, redelivery_count, profile)
    if backoff is not None:
        raise ValueError(f"the {profile.client} client has no negative-ack redelivery backoff (PLS-NACK-004)")
    return nack_window(nack, nack_delay_ms, profile)


def periodic_backoff_window(nack: Span, backoff: tuple[int, int, float], redelivery_count: int, profile: Profile) -> Window:
    """PLS-NACK-007 (Go): due at the nack + next(c), trimmed by up to ``nack_early_ms``, asked back on a
    tick every next(1) / ``nack_timer_divisor`` (the tracker's period is set from the policy's delay for
    count 1, whatever the message's own count)."""
    delay = multiplier_backoff_ms(redelivery_count, *backoff)
    tick = multiplier_backoff_ms(1, *backoff) // profile.nack_timer_divisor
    return Window(low=nack.start + max(0, delay - profile.nack_early_ms), canonical=nack.start + delay,
                  high=nack.end + delay + tick)


def check_ack_timeout(ack_timeout_ms: int | None, minimum_ms: int) -> str | None:
    """PLS-ACKTIMEOUT-001/003: why an ack timeout is refused at subscribe, or None if accepted."""
    if not ack_timeout_ms:
        return None  # 0 / None: ack timeout off
    if ack_timeout_ms < minimum_ms:
        if minimum_ms < 10_000:  # Java ConsumerBuilderImpl#ackTimeout
            return f"Ack timeout should be greater than {minimum_ms} ms"
        seconds = minimum_ms // 1000
        return f"Unacknowledged message timeout should be greater than {seconds} seconds."
    return None


def ack_timeout_offsets(ack_timeout_ms: int, tick_ms: int) -> tuple[int, int]:
    """PLS-ACKTIMEOUT-002: ``(low, high)`` after receive; low exclusive, high inclusive."""
    if ack_timeout_ms <= 0 or tick_ms <= 0:
        raise ValueError(f"ack timeout and tick must be positive, got T={ack_timeout_ms}, t={tick_ms}")
    t = min(tick_ms, ack_timeout_ms)
    slots = math.ceil(ack_timeout_ms / t)
    return slots * t, (slots + 1) * t


def ack_timeout_window(received: Span, ack_timeout_ms: int, profile: Profile, *, tick_ms: int | None = None,
                       backoff: tuple[int, int, float] | None = None, redelivery_count: int = 0) -> Window:
    """PLS-ACKTIMEOUT-002/004 (and with a Java ``backoff`` PLS-ACKTIMEOUT-005): when a message received
    during ``received`` and not acked is redelivered; ``tick_ms`` None: the profile's tick."""
    tick = tick_ms or profile.ack_timeout_tick_ms
    low, high = ack_timeout_offsets(ack_timeout_ms, tick)
    if backoff is not None:
        delay = multiplier_backoff_ms(redelivery_count, *backoff)
        t = min(tick, ack_timeout_ms)
        low, high = low + delay, high + math.ceil(delay / t) * t
    return Window(low=received.start + low, canonical=received.end + high, high=received.end + high)


def check_ack_timeout_tick(tick_ms: int | None, minimum_ms: int) -> str | None:
    """PLS-ACKTIMEOUT-003: Java ``ackTimeoutTickTime`` below 100 ms is refused (IllegalArgumentException)."""
    if tick_ms is None:
        return None
    if tick_ms < minimum_ms:
        return f"Ack timeout tick time should be greater than {minimum_ms} ms"
    return None


def multiplier_backoff_ms(redelivery_count: int, min_delay_ms: int, max_delay_ms: int, multiplier: float) -> int:
    """Java ``MultiplierRedeliveryBackoff.next`` (PLS-NACK-004); arguments checked as its builder does."""
    if not multiplier > 1:
        raise ValueError(f"multiplier must be > 1, got {multiplier}")
    if min_delay_ms < 0:
        raise ValueError(f"min_delay_ms must be >= 0, got {min_delay_ms}")
    if max_delay_ms < min_delay_ms:
        raise ValueError(f"max_delay_ms ({max_delay_ms}) must be >= min_delay_ms ({min_delay_ms})")
    if redelivery_count <= 0 or min_delay_ms <= 0:
        return int(min_delay_ms)
    max_multiplier_pow = int(math.log(max_delay_ms / min_delay_ms) / math.log(multiplier)) + 1
    if redelivery_count > max_multiplier_pow:
        return int(max_delay_ms)
    return int(min(min_delay_ms * multiplier**redelivery_count, max_delay_ms))
