"""The stable executable-spec API: small functions that answer "what does Pulsar do?".

Pulsar part: client-side rules a user can compute without a broker.
Rule ids: PLS-NACK-001/002/004/005 (nack windows), PLS-ACKTIMEOUT-001..004 (C++/Java ack timeout), PLS-DLQ-001,
PLS-RETRY-001, PLS-TOPIC-001 (names are expanded first); re-exported from ``spec_keyshared``:
PLS-HASH-001/002, PLS-ROUTE-001, PLS-KEYSHARED-002..005, PLS-FAILOVER-003/004; from ``chunking``:
PLS-CHUNK-002 (``chunk_count``).

These signatures are a contract: tests, docs and other tools call them. Each raises
``ValueError`` with a message saying what to change when its arguments are out of range, as the
Pulsar client it describes does.

Not modelled: C++ per-partition DLQ names need the partition's own name as ``topic``
(``dead_letter_topic("t-partition-2", "sub")``); Java's fallback to the pre-#9327 names.
Choices: a short topic name is expanded to ``persistent://public/default/...`` first.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference_model import dead_letter, dedup, delayed, names, non_persistent
from reference_model import schema as schema_registry
from reference_model.chunking import chunk_count  # noqa: F401 - re-exported (PLS-CHUNK-002)
from reference_model.profiles import profile_for
from reference_model.redelivery import (
    JAVA_BACKOFF_DEFAULT_MAX_DELAY_MS,
    JAVA_BACKOFF_DEFAULT_MIN_DELAY_MS,
    JAVA_BACKOFF_DEFAULT_MULTIPLIER,
    JavaNackTracker,
    ack_timeout_offsets,
    consumer_nack_window,
    multiplier_backoff_ms,
)
from reference_model.timing import Span
from reference_model.rejections import Rejected
# Key_Shared, hashing, routing and Failover (PLS-HASH-*, PLS-ROUTE-*, PLS-KEYSHARED-*, PLS-FAILOVER-003/004)
from reference_model.spec_keyshared import (  # noqa: F401 - re-exported
    auto_split_ranges,
    failover_active_consumer,
    java_string_hash,
    key_shared_consumer_for_keys,
    murmur3_32,
    partition_for_key,
    sticky_key_slot,
)

__all__ = [
    "murmur3_32",
    "java_string_hash",
    "sticky_key_slot",
    "partition_for_key",
    "key_shared_consumer_for_keys",
    "auto_split_ranges",
    "failover_active_consumer",
    "nack_backoff_delay_ms",
    "nack_redelivery_window_ms",
    "ack_timeout_redelivery_window_ms",
    "dead_letter_topic",
    "retry_letter_topic",
    "deliveries_before_dead_letter",
    "delayed_delivery_order",
    "dedup_send",
    "DedupSendOutcome",
    "non_persistent_deliveries",
    "chunk_count",
    "schema_versions_after",
    "JAVA_BACKOFF_DEFAULT_MIN_DELAY_MS",
    "JAVA_BACKOFF_DEFAULT_MAX_DELAY_MS",
    "JAVA_BACKOFF_DEFAULT_MULTIPLIER",
]


def nack_backoff_delay_ms(redelivery_count: int, *, min_delay_ms: int, max_delay_ms: int,
                          multiplier: float = 2.0) -> int:
    """Java ``MultiplierRedeliveryBackoff``: the nack delay for a message with ``redelivery_count``.

    PLS-NACK-004. ``redelivery_count`` is 0 on the first delivery, so the docs' table row
    "redelivery count N" is ``nack_backoff_delay_ms(N - 1, ...)``. The delay is
    ``min(min_delay_ms * multiplier ** count, max_delay_ms)``, and ``max_delay_ms`` once the
    count passes ``int(log(max/min) / log(multiplier)) + 1``. The Java builder's defaults are
    ``JAVA_BACKOFF_DEFAULT_MIN_DELAY_MS`` (10 s), ``..._MAX_DELAY_MS`` (10 min), multiplier 2.
    The C++/Python client has no backoff (PLS-NACK-001).

    Raises ValueError unless ``multiplier > 1``, ``min_delay_ms >= 0`` and
    ``max_delay_ms >= min_delay_ms``.
    """
    return multiplier_backoff_ms(redelivery_count, min_delay_ms, max_delay_ms, multiplier)


def nack_redelivery_window_ms(nack_delay_ms: int = 60_000, *, client: str = "cpp", redelivery_count: int = 0,
                              backoff: tuple[int, int, float] | None = None) -> tuple[int, int]:
    """When a negatively acknowledged message is redelivered: ``(low, high)`` ms after the nack.

    PLS-NACK-001/002 (C++/Python): ``d = max(nack_delay_ms, 100)``, ``[d, d + d // 3]`` (a timer every
    d/3). PLS-NACK-005 (``client="java"``): the same floor, ``[max(d - 255, 0), d]`` (a one-shot timer,
    deadline trimmed to 8 low bits of a millisecond clock). PLS-NACK-004 (Java, ``backoff =
    (min_delay_ms, max_delay_ms, multiplier)``): ``d = next(redelivery_count)``, no floor. A Java nack
    may also wait for a timer an earlier nack with a longer delay armed (not included here).

    >>> nack_redelivery_window_ms(1000), nack_redelivery_window_ms(1000, client="java")
    ((1000, 1333), (745, 1000))
    """
    profile = profile_for(None, client)
    if backoff is not None and not profile.nack_backoff_supported:
        raise ValueError(f"the {profile.client} client has no negative-ack redelivery backoff (PLS-NACK-004)")
    w = consumer_nack_window(Span(0, 0), nack_delay_ms, backoff, redelivery_count, profile, JavaNackTracker())
    return int(w.low), int(w.high)


def ack_timeout_redelivery_window_ms(ack_timeout_ms: int, tick_ms: int, *, client: str = "cpp") -> tuple[int, int]:
    """When an unacked message comes back after an ack timeout: ``(low, high)`` ms after receive.

    PLS-ACKTIMEOUT-002: ``low`` is exclusive, ``high`` inclusive: with ``t = min(tick_ms,
    ack_timeout_ms)``, ``(ceil(T/t)*t, (ceil(T/t)+1)*t]``; T=10000, t=1000 gives (10000, 11000].
    PLS-ACKTIMEOUT-001/003: the C++/Python client refuses timeouts below 10 000 ms, the Java client
    below 1 000 ms and ticks below 100 ms (ValueError here, as Python raises); only Java can set the
    tick (PLS-ACKTIMEOUT-004), the C++ one is 1000 ms.
    """
    profile = profile_for(None, client)
    if ack_timeout_ms is None or ack_timeout_ms <= 0:
        raise ValueError("ack timeout is off (0/None): there is no redelivery window; pass a positive ack_timeout_ms")
    if ack_timeout_ms < profile.ack_timeout_min_ms:
        raise ValueError(
            f"Unacknowledged message timeout should be greater than {profile.ack_timeout_min_ms // 1000} seconds "
            f"({profile.client} client); got {ack_timeout_ms} ms")
    if tick_ms <= 0:
        raise ValueError(f"tick_ms must be positive, got {tick_ms}")
    if profile.ack_timeout_tick_settable and tick_ms < profile.ack_timeout_min_tick_ms:
        raise ValueError(f"Ack timeout tick time should be greater than {profile.ack_timeout_min_tick_ms} ms; got {tick_ms}")
    return ack_timeout_offsets(ack_timeout_ms, tick_ms)


def _expanded(topic: str) -> str:
    full = names.expand(topic)
    if isinstance(full, Rejected):
        raise ValueError(full.detail)
    return full


def dead_letter_topic(topic: str, subscription: str) -> str:
    """The default dead-letter topic: ``<topic>-<subscription>-DLQ`` with ``topic`` fully qualified.

    PLS-DLQ-001. ``dead_letter_topic("my-topic", "sub")`` is
    ``"persistent://public/default/my-topic-sub-DLQ"``. The C++ client derives it per partition,
    from the partition's own name.
    """
    if not subscription:
        raise ValueError("subscription must be a non-empty name")
    return dead_letter.default_dlq_topic(_expanded(topic), subscription)


def retry_letter_topic(topic: str, subscription: str) -> str:
    """The default retry-letter topic: ``<topic>-<subscription>-RETRY`` (Java client only, PLS-RETRY-001)."""
    if not subscription:
        raise ValueError("subscription must be a non-empty name")
    return dead_letter.default_retry_topic(_expanded(topic), subscription)


def deliveries_before_dead_letter(max_redeliver_count: int) -> tuple[int, ...]:
    """PLS-DLQ-002: the redelivery counts the application sees when it nacks every delivery
    (Shared/Key_Shared, either client): ``0 .. max_redeliver_count``, N + 1 deliveries; the next
    nack moves the message to the DLQ (``dead_letter.on_delivery``).

    >>> deliveries_before_dead_letter(2)
    (0, 1, 2)
    """
    refused = dead_letter.check_max_redeliver_count(max_redeliver_count)
    if refused is not None:
        raise ValueError(refused)
    return tuple(c for c in range(max_redeliver_count + 2)
                 if dead_letter.on_delivery(c, max_redeliver_count) != dead_letter.TO_DLQ)


def delayed_delivery_order(messages: list[tuple[str, float | None]], *, subscription_type: str, persistent: bool = True,
                           now_ms: float = 0.0, tick_ms: int = delayed.DEFAULT_TICK_MS,
                           strict: bool = delayed.DEFAULT_STRICT) -> list[str]:
    """The order one consumer receives ``(name, deliver_at or None)`` messages published in list
    order at ``now_ms`` (PLS-DELAY-001/002/003): those not held back first, in publish order; the
    held ones after, by ``deliver_at`` (ties in publish order). Exclusive and Failover hold none.

    >>> delayed_delivery_order([("late", 600.0), ("now", None)], subscription_type="Shared", tick_ms=100, strict=True)
    ['now', 'late']
    """
    immediate, held = [], []
    for index, (name, at) in enumerate(messages):
        if (at is None or not delayed.honours_delay(subscription_type, persistent=persistent)
                or delayed.is_ready(at, now_ms, tick_ms=tick_ms, strict=strict)):
            immediate.append(name)
        else:
            held.append((at, index, name))
    return immediate + [name for _, _, name in sorted(held)]


@dataclass(frozen=True)
class DedupSendOutcome:
    sequence_id: int
    status: str  # dedup.NOT_DUP or dedup.DUP
    stored: bool


def dedup_send(state: dedup.DedupState, seq: dedup.ProducerSequence, producer: str,
               explicit_sequence_id: int | None = None) -> tuple[dedup.DedupState, dedup.ProducerSequence, DedupSendOutcome]:
    """One synchronous send from a C++/Python producer against the broker's dedup state
    (PLS-DEDUP-001/005/006): the sequence id it carries, whether the broker stored it, and the
    producer's sequence afterwards. The model's broker runs the same steps
    (``dedup.next_sequence_id``, ``publish_and_persist``, ``send_acknowledged``) per send."""
    seq, s = dedup.next_sequence_id(seq, explicit_sequence_id)
    state, status = dedup.publish_and_persist(state, producer, s)
    if status == dedup.UNKNOWN:  # cannot happen with nothing in flight
        raise AssertionError(f"sequence id {s} classified Unknown with no message in flight")
    return state, dedup.send_acknowledged(seq, s), DedupSendOutcome(s, status, status == dedup.NOT_DUP)


def non_persistent_deliveries(events: list[tuple[str, object]]) -> dict[str, list[str]]:
    """PLS-NP-001 replayed: ``("connect", sub) | ("disconnect", sub) | ("publish", name)`` events
    in order; what each subscription got (only those with a connected consumer at the publish)."""
    connected: set[str] = set()
    got: dict[str, list[str]] = {}
    for kind, arg in events:
        if kind == "connect":
            connected.add(str(arg))
            got.setdefault(str(arg), [])
        elif kind == "disconnect":
            connected.discard(str(arg))
        elif kind == "publish":
            for sub in non_persistent.receivers(connected):
                got.setdefault(sub, []).append(str(arg))
        else:
            raise ValueError(f"unknown event {kind!r}; use connect, disconnect or publish")
    return got


def schema_versions_after(schemas: list, *, strategy: str = "FULL", auto_update: bool = True) -> list:
    """What a topic's schema registry answers a sequence of producers: for each schema (an Avro definition as a
    dict, list or JSON text; ``("JSON", definition)`` or ``("STRING", "")`` for another type), the version it is
    given, or the refusal's rule id and message.

    PLS-SCHEMA-001..009, -015: versions count from 0; a schema already stored gets its version; a new one is checked
    by ``strategy`` against the latest version (the transitive strategies: every version) by Avro schema resolution;
    with ``auto_update`` off only stored schemas connect. ``schema_versions_after([V1, V1, V2])`` with V2 adding an
    optional field is ``[0, 0, 1]``.
    """
    if strategy not in schema_registry.STRATEGIES:
        raise ValueError(f"strategy must be one of {', '.join(schema_registry.STRATEGIES)}, got {strategy!r}")
    history = schema_registry.SchemaHistory()
    out: list = []
    for item in schemas:
        kind, definition = item if isinstance(item, tuple) else ("AVRO", item)
        schema = schema_registry.Schema.avro(definition, kind) if kind in ("AVRO", "JSON") else schema_registry.Schema(kind, definition)
        history, outcome = schema_registry.producer_connects(history, schema, strategy, auto_update)
        out.append(outcome.version if isinstance(outcome, schema_registry.Accepted) else (outcome.rule, outcome.message))
    return out
