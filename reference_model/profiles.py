"""What differs between Pulsar broker versions and client kinds, as parameters.

Pulsar part: the C++ client (which the Python client wraps) vs the Java client; broker 3.x,
4.0, 4.1.
Rule ids: PLS-NACK-001/002/004, PLS-ACKTIMEOUT-001/002, PLS-ACK-003, PLS-ACK-005, PLS-SEEK-001,
PLS-DLQ-001, PLS-RETRY-001, PLS-BATCH-005, PLS-DELAY-004/005, PLS-CHUNK-002/003,
PLS-COMPACT-002.

Every behaviour that differs is a field of the frozen ``Profile``; the rest of the model reads
fields and never asks "which broker is this?". ``profile_for`` picks the defaults for a broker
version and client and applies overrides (a trace header's ``profile`` object).

Not modelled: client versions within one kind (the C++ 4.2.0 core of pulsar-client 3.13 is the
reference). Broker 3.x vs 4.x differences in Key_Shared are not here but in
``key_shared.KeySharedProfile``, selected per release.
Choices: where the source was read but the behaviour not confirmed live, the field says
"unknown" (``None``) and the checker accepts either behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Mapping

BROKER_VERSIONS = ("3.x", "4.0", "4.1")
CLIENTS = ("cpp", "java")


@dataclass(frozen=True)
class Profile:
    broker: str = "4.0"
    client: str = "cpp"
    # PLS-NACK-002: C++ floors the nack delay at 100 ms (MIN_NACK_DELAY_MILLIS).
    nack_min_delay_ms: int = 100
    # PLS-FAILOVER-003: the broker reads for a newly picked active consumer only after
    # activeConsumerFailoverDelayTimeMillis (AbstractDispatcherSingleActiveConsumer; default 1000 ms),
    # also for the first one; live 4.0.8 paused about 1 s before the first Failover dispatch.
    failover_activation_delay_ms: int = 1000
    # PLS-NACK-001: C++ fires its nack timer every delay/3, so redelivery is in [d, d + d//3].
    nack_timer_divisor: int = 3
    # Java trims the nack deadline to 8 low bits of a millisecond clock: up to 255 ms early.
    nack_early_ms: int = 0
    # PLS-NACK-004: Java's MultiplierRedeliveryBackoff exists only in the Java client.
    nack_backoff_supported: bool = False
    # PLS-ACKTIMEOUT-001: C++ refuses 0 < T < 10 s; Java refuses 0 < T < 1 s.
    ack_timeout_min_ms: int = 10_000
    ack_timeout_error: str = "InvalidArgument"
    # PLS-ACKTIMEOUT-002: tick t = min(tick, T); not settable from Python.
    ack_timeout_tick_ms: int = 1000
    # PLS-ACK-003: how cumulative ack on Shared is refused (client side).
    cumulative_ack_shared_error: str = "CumulativeAcknowledgementNotAllowedError"
    # PLS-ACK-005: an Exclusive/Failover rewind does not bump redelivery_count (measured 4.0.8/C++).
    rewind_increments_redelivery_count: bool = False
    # PLS-ACK-005: whether closing a Shared consumer bumps the count of its unacked messages.
    # Measured on 4.0.8 (C++ 4.2.0): no (the other consumer got it with count 0). Version
    # dependent per the source notes, so other versions say None = either.
    shared_close_increments_redelivery_count: bool | None = False
    # PLS-REDELIVER-001: C++ keeps its receiver queue on redeliver_unacked (Java clears it).
    redeliver_keeps_receiver_queue: bool = True
    # PLS-SEEK-001: C++ skips the message at the seek id unless start_message_id_inclusive.
    seek_by_id_exclusive: bool = True
    # PLS-DLQ-001: C++ derives the DLQ name per partition; PLS-RETRY-001: Java only.
    dlq_per_partition: bool = True
    retry_letter_supported: bool = False
    # broker >= 4.1 (PIP-391) enables batch index ack by default (batching is not modelled).
    broker_batch_index_ack_default: bool = False
    # The C++ client groups acks and flushes every 100 ms (AckGroupingTrackerEnabled).
    ack_grouping_ms: int = 100
    # PLS-BATCH-005: acknowledgmentAtBatchIndexLevelEnabled on the broker. Stock 4.0 brokers have it
    # off (4.1+ on, see broker_batch_index_ack_default); the suite's embedded broker turns it on
    # (fixtures/embedded.py CONFORMANCE_CONFIG), and every live run here uses that broker, so true.
    broker_batch_index_ack: bool = True
    # PLS-DELAY-004/005: isDelayedDeliveryDeliverAtTimeStrict and delayedDeliveryTickTimeMillis.
    # Broker defaults are non-strict and 1000 ms; the suite's embedded broker runs strict, 100 ms.
    delayed_delivery_strict: bool = True
    delayed_delivery_tick_ms: int = 100
    # PLS-CHUNK-002/003: the broker's maxMessageSize (sent to the client in CommandConnected).
    max_message_size: int = 5_242_880
    # PLS-COMPACT-002: broker 4.0.8 keeps a tombstone as its key's latest message in the compacted view.
    compaction_keeps_tombstones: bool = True

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _broker_series(version: str | None) -> str:
    if not version:
        return "4.0"
    v = str(version).strip().lower()
    if v in BROKER_VERSIONS:
        return v
    if v.startswith("3."):
        return "3.x"
    if v.startswith("4.0"):
        return "4.0"
    if v.startswith("4."):
        return "4.1"  # 4.1 and later keep 4.1's defaults until told otherwise
    raise ValueError(f"unknown broker version {version!r}; use one of {', '.join(BROKER_VERSIONS)} or a release like 4.0.8")


def _client_kind(client: str | None) -> str:
    c = (client or "cpp").strip().lower()
    if c in ("cpp", "c++", "python", "pulsar-client") or c.startswith("python") or c.startswith("pulsar-client"):
        return "cpp"
    if c.startswith("java"):
        return "java"
    raise ValueError(f"unknown client {client!r}; use 'cpp' (also for the Python client) or 'java'")


def profile_for(broker_version: str | None = None, client: str | None = None,
                overrides: Mapping[str, Any] | None = None) -> Profile:
    """The model parameters for ``broker_version`` ("3.x", "4.0", "4.1" or a release such as
    "4.0.8") and ``client`` ("cpp"/"python" or "java"), with ``overrides`` applied by field name."""
    broker = _broker_series(broker_version)
    kind = _client_kind(client)
    profile = Profile(broker=broker, client=kind)
    if kind == "java":
        profile = replace(
            profile,
            nack_early_ms=255,
            nack_backoff_supported=True,
            ack_timeout_min_ms=1000,
            cumulative_ack_shared_error="InvalidConfiguration",
            redeliver_keeps_receiver_queue=False,
            seek_by_id_exclusive=False,
            retry_letter_supported=True,
        )
    if broker == "4.1":
        profile = replace(profile, broker_batch_index_ack_default=True, shared_close_increments_redelivery_count=None)
    if broker == "3.x":
        profile = replace(profile, shared_close_increments_redelivery_count=None)
    if overrides:
        known = {f.name for f in fields(Profile)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"unknown profile field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        profile = replace(profile, **dict(overrides))
    return profile
