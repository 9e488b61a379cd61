"""When a message comes back: negative acks, ack timeouts, and the Java backoff.

Pulsar part: client-side redelivery trackers. C++ ``lib/NegativeAcksTracker.cc`` and
``lib/UnAckedMessageTrackerEnabled.cc`` (what the Python client runs); Java
``MultiplierRedeliveryBackoff`` for reference.
Rule ids: PLS-NACK-001, PLS-NACK-002, PLS-NACK-004, PLS-ACKTIMEOUT-001, PLS-ACKTIMEOUT-002.

Negative ack (C++, PLS-NACK-001/002): the client remembers the nacked id with deadline
``now + d``, where ``d = max(configured, 100 ms)``; a timer that fires every ``d/3`` sends all
ids whose deadline passed in one redeliver request. So the redelivery is requested inside
``[d, d + d/3]`` after the nack. There is no backoff: every nack waits the same ``d``.

Ack timeout (C++, PLS-ACKTIMEOUT-001/002): the timeout ``T`` must be 0/None (off) or at least
10 000 ms. The tracker keeps a ring of ``ceil(T/t) + 1`` time slots with tick ``t = min(1000,
T)``; a message handed to the application enters the newest slot, and each tick redelivers the
oldest slot. A message not acked is therefore redelivered in ``(ceil(T/t)*t, (ceil(T/t)+1)*t]``
after the application received it.

Java backoff (PLS-NACK-004): ``MultiplierRedeliveryBackoff.next(c)`` for redelivery count ``c``.

Not modelled: the C++ nack timer being re-armed by every nack (a stream of nacks closer than
d/3 postpones redeliveries; unconfirmed live); Java ack-timeout backoff.
Choices: the model's own choice of instant is the earliest one for nacks (``d``) and the latest
one for ack timeouts (``(ceil(T/t)+1)*t``); both lie inside the windows above.
"""

from __future__ import annotations

import math

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


def backoff_nack_window(nack: Span, redelivery_count: int, backoff: tuple[int, int, float], profile: Profile) -> Window:
    """PLS-NACK-004 (Java): delay ``next(count)``; the timer ticks every ``max(next(0), floor) / 3``."""
    lo, hi, mult = backoff
    delay = multiplier_backoff_ms(redelivery_count, lo, hi, mult)
    tick = max(multiplier_backoff_ms(0, lo, hi, mult), profile.nack_min_delay_ms) // profile.nack_timer_divisor
    return Window(low=nack.start + delay - profile.nack_early_ms, canonical=nack.start + delay, high=nack.end + delay + tick)


def consumer_nack_window(nack: Span, nack_delay_ms: int, backoff: tuple[int, int, float] | None,
                         redelivery_count: int, profile: Profile) -> Window:
    """The nack window of a consumer: fixed delay (PLS-NACK-001) or Java backoff (PLS-NACK-004)."""
    if backoff is not None:
        return backoff_nack_window(nack, redelivery_count, backoff, profile)
    return nack_window(nack, nack_delay_ms, profile)


def check_ack_timeout(ack_timeout_ms: int | None, minimum_ms: int) -> str | None:
    """PLS-ACKTIMEOUT-001: why an ack timeout is refused at subscribe, or None if accepted."""
    if not ack_timeout_ms:
        return None  # 0 / None: ack timeout off
    if ack_timeout_ms < minimum_ms:
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


def ack_timeout_window(received: Span, ack_timeout_ms: int, profile: Profile) -> Window:
    low, high = ack_timeout_offsets(ack_timeout_ms, profile.ack_timeout_tick_ms)
    return Window(low=received.start + low, canonical=received.end + high, high=received.end + high)


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
