"""Dead-letter topics as the C++/Python consumer implements them.

Pulsar part: ``apache/pulsar-client-cpp lib/ConsumerImpl.cc`` (constructor: the default DLQ
name; ``messageReceived`` / ``receiveIndividualMessagesFromBatch``: which deliveries are
remembered as "possibly to the DLQ"; ``redeliverUnacknowledgedMessages(set)`` and
``processPossibleToDLQ``: publish to the DLQ, then ack on the source), ``lib/ConsumerImpl.h``
(property names), ``lib/MessageId.cc#operator<<`` (the id text); Python
``pulsar/__init__.py#ConsumerDeadLetterPolicy``.
Rule ids: PLS-DLQ-001 .. PLS-DLQ-007.

With ``max_redeliver_count = N`` on a Shared or Key_Shared subscription (PLS-DLQ-002, -005):
1. A delivery whose broker redelivery count ``c`` is ``< N`` is an ordinary delivery.
2. ``c == N``: delivered to the application *and* remembered. If the application then nacks it
   (or its ack timeout fires), the client publishes it to the DLQ and acks it on the source
   instead of asking for a redelivery.
3. ``c > N`` (e.g. after a reconnect): not delivered; sent straight to the DLQ.
So the application sees the message ``N + 1`` times (counts 0..N) before it moves.
On Exclusive/Failover the C++ redelivery is a rewind that leaves the count at 0, so nothing is
ever moved (PLS-DLQ-005).

The DLQ message (PLS-DLQ-003): same payload, partition key and ordering key; the original
properties plus ``ORIGIN_MESSAGE_ID = str(original id)`` (``"(ledger,entry,partition,batch)"``)
and ``REAL_TOPIC`` = the topic the consumer read it from (the partition's name on a partitioned
topic). It is published by a non-batching producer with a broker-chosen name; when
``initial_subscription_name`` is given, that subscription is created on the DLQ topic with the
producer (PLS-DLQ-004). For a batch, every message of the entry is published, each with its own
batch index, the ones the application acked included (PLS-DLQ-006). The default DLQ topic is
``<consumer topic>-<subscription>-DLQ`` (PLS-DLQ-001). ``max_redeliver_count`` must be >= 1
(PLS-DLQ-007).

The Java client (4.0.8, apache/pulsar pulsar-client ``.../impl/ConsumerImpl.java``
``messageReceived``, ``processPossibleToDLQ``, ``getPropertiesMap``, ``doReconsumeLater``;
``.../util/RetryMessageUtil.java``) counts the same way (steps 1-3: N + 1 deliveries, PLS-DLQ-002)
and names the default DLQ the same way, from the consumer's own (partition) topic; with retry on,
``ConsumerBuilderImpl`` names both the retry and the dead-letter topic after the first topic
(the partitioned topic, not a partition). Its copy differs (PLS-DLQ-003, Java part): the properties are
taken with ``putIfAbsent``, ``ORIGIN_MESSAGE_ID`` is ``MessageId.toString()`` (``"l:e:p"``, or
``"l:e:p:b"`` for a batched message), and it adds ``REAL_SUBSCRIPTION`` and the legacy
``ORIGIN_MESSAGE_IDY_TIME`` (same value as ``ORIGIN_MESSAGE_ID``).

The order of the copies on the DLQ topic (PLS-DLQ-001, ``Broker._next_dead_letter``): the C++ client
dead-letters the ids of one timer run from an ordered ``std::set``, and the Go client a message as the
broker redelivers it, so theirs follow the message order. The Java client dead-letters one timer run's
messages from a hash set (``redeliverUnacknowledgedMessages(Set)`` -> ``processPossibleToDLQ``): their
order is open (live 4.0.8: hello-0..2 were written hello-2, hello-1, hello-0). Choice: the model writes a
Java copy at any time in its window, in the order the history shows on the DLQ topic when it shows one.

Retry letter topic (Java only, PLS-RETRY-001..003): ``reconsumeLater(m, delay)`` publishes a copy
to the retry topic with the properties above plus ``RECONSUMETIMES`` (1, then +1 per retry) and
``DELAY_TIME`` (ms, negative -> 0), delivered after the delay, then acks ``m``; ``REAL_TOPIC`` is
the topic without its partition suffix (the multi-topics consumer's ``TopicMessageId``). When
``RECONSUMETIMES`` would exceed ``maxRedeliverCount`` (16, ``MAX_RECONSUMETIMES``, when retry is on
without a dead-letter policy) the copy goes to the dead-letter topic instead.

Not modelled: DLQ producer failures (the message is then redelivered instead), chunked messages
in the DLQ, schemas, custom properties of ``reconsumeLater``.
Choices: the ack timeout counts as a nack here (both go through the same redelivery path).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from reference_model.ids import MessageId

ORIGIN_MESSAGE_ID = "ORIGIN_MESSAGE_ID"
REAL_TOPIC = "REAL_TOPIC"
# Java RetryMessageUtil names (PLS-DLQ-003, PLS-RETRY-002)
REAL_SUBSCRIPTION = "REAL_SUBSCRIPTION"
ORIGIN_MESSAGE_ID_LEGACY = "ORIGIN_MESSAGE_IDY_TIME"  # SYSTEM_PROPERTY_ORIGIN_MESSAGE_ID, a historical typo
RECONSUMETIMES = "RECONSUMETIMES"
DELAY_TIME = "DELAY_TIME"
MAX_RECONSUMETIMES = 16
DLQ_SUFFIX = "-DLQ"
RETRY_SUFFIX = "-RETRY"
INVALID_MAX_REDELIVER_COUNT_ERROR = "max_redeliver_count must be greater than 0"  # Python ConsumerDeadLetterPolicy
JAVA_INVALID_MAX_REDELIVER_COUNT_ERROR = "MaxRedeliverCount must be > 0."  # Java ConsumerBuilderImpl#deadLetterPolicy

DELIVER, DELIVER_AND_REMEMBER, TO_DLQ = "deliver", "deliver_and_remember", "to_dlq"
_DLQ_TYPES = ("Shared", "Key_Shared", "KeyShared")
# How long after the redelivery that dead-letters a message its copy may first be stored in the
# DLQ. Both clients create the dead-letter producer lazily, on the first message that goes there
# (Java ConsumerImpl#initDeadLetterProducerIfNeeded; C++ ConsumerImpl::processPossibleToDLQ), and a
# producer creation is a lookup plus a broker round trip that no doc bounds. Measured on 4.0.8
# with the Java client (case dlq-key-shared, 2026-11-24): the copy reached a waiting DLQ consumer
# 180 ms after the nack timer fired. 1000 ms leaves room for a loaded machine; a copy that never
# comes still FAILs PLS-DLQ-002.
DEAD_LETTER_PUBLISH_MS = 1000.0


def check_max_redeliver_count(value: object, client: str = "cpp") -> str | None:
    """PLS-DLQ-007: the error text the ``client`` ("cpp" for C++/Python, "java") raises when the
    consumer is built with ``value``, or None when the value is accepted (an int >= 1)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        return JAVA_INVALID_MAX_REDELIVER_COUNT_ERROR if client == "java" else INVALID_MAX_REDELIVER_COUNT_ERROR
    return None


def default_dlq_topic(consumer_topic: str, subscription: str) -> str:
    """PLS-DLQ-001: ``<topic>-<subscription>-DLQ`` from the full topic name the consumer uses."""
    return f"{consumer_topic}-{subscription}{DLQ_SUFFIX}"


def default_retry_topic(consumer_topic: str, subscription: str, *, by_topic: bool = True) -> str:
    """PLS-RETRY-001: ``<topic>-<subscription>-RETRY``, named (like the DLQ then) after the first topic; a Java client
    before the fix of apache/pulsar issue #9327 (``by_topic`` False: 2.7.4 measured) names it
    ``<namespace>/<subscription>-RETRY``, the name TDMQ documents for its 2.7.2 clusters."""
    if not by_topic:
        return f"{consumer_topic.rsplit('/', 1)[0]}/{subscription}{RETRY_SUFFIX}"
    return f"{consumer_topic}-{subscription}{RETRY_SUFFIX}"


def default_retry_dlq_topic(consumer_topic: str, subscription: str, *, by_topic: bool = True) -> str:
    """PLS-RETRY-003: the dead-letter topic a retry-enabled Java consumer names: ``default_dlq_topic``, or
    ``<namespace>/<subscription>-DLQ`` before the fix of issue #9327 (``by_topic`` False)."""
    if not by_topic:
        return f"{consumer_topic.rsplit('/', 1)[0]}/{subscription}{DLQ_SUFFIX}"
    return default_dlq_topic(consumer_topic, subscription)


def dlq_applies(subscription_type: str) -> bool:
    """PLS-DLQ-005: only subscription types where the broker counts redeliveries can ever move a message."""
    return subscription_type in _DLQ_TYPES


def on_delivery(redelivery_count: int, max_redeliver_count: int) -> str:
    """Steps 1-3: what the client does with a delivery carrying ``redelivery_count``."""
    if redelivery_count < max_redeliver_count:
        return DELIVER
    if redelivery_count == max_redeliver_count:
        return DELIVER_AND_REMEMBER
    return TO_DLQ


@dataclass(frozen=True)
class DeadLetter:
    """One message as published to the DLQ."""

    payload: bytes
    properties: tuple[tuple[str, str], ...]
    partition_key: str | None = None
    ordering_key: str | None = None

    def properties_dict(self) -> dict[str, str]:
        return dict(self.properties)


def dead_letter_properties(original: Mapping[str, str], origin_id: MessageId, real_topic: str) -> dict[str, str]:
    """PLS-DLQ-003: the original properties plus ORIGIN_MESSAGE_ID (C++ id text) and REAL_TOPIC."""
    props = dict(original)
    props[ORIGIN_MESSAGE_ID] = str(origin_id)
    props[REAL_TOPIC] = real_topic
    return props


def dead_letter(payload: bytes, original_properties: Mapping[str, str], origin_id: MessageId, real_topic: str,
                *, partition_key: str | None = None, ordering_key: str | None = None, client: str = "cpp",
                subscription: str = "", real_subscription: bool = True, origin_message_id: bool = True) -> DeadLetter:
    """PLS-DLQ-003: the copy ``client`` publishes for the message ``origin_id`` read from ``real_topic``.

    The C++/Python client writes ``dead_letter_properties``; the Java client
    ``java_dead_letter_properties`` (its id text, ``REAL_SUBSCRIPTION``, the legacy id property).
    A batched message's copy carries its own batch index in ``origin_id`` (PLS-DLQ-006: each
    message of the entry is a copy of its own)."""
    if client == "java":
        text = java_message_id_text(origin_id.ledger, origin_id.entry, origin_id.partition, origin_id.batch_index)
        props = java_dead_letter_properties(original_properties, text, real_topic, subscription,
                                            real_subscription=real_subscription, origin_message_id=origin_message_id)
    elif client == "go":
        # PLS-DLQ-008: pulsar-client-go's MessageID.String() "l:e:p", partition 0 on a topic that is not
        # partitioned, no batch index; REAL_TOPIC and both origin keys (live 4.0.8 with the Go client 0.19.0)
        text = go_message_id_text(origin_id.ledger, origin_id.entry, origin_id.partition)
        props = dict(original_properties)
        props.setdefault(REAL_TOPIC, real_topic)
        props.setdefault(ORIGIN_MESSAGE_ID, text)
        props.setdefault(ORIGIN_MESSAGE_ID_LEGACY, text)
    else:
        props = dead_letter_properties(original_properties, origin_id, real_topic)
    return DeadLetter(payload, tuple(sorted(props.items())), partition_key or None, ordering_key or None)


# --------------------------------------------------------------------------- Java client


def go_message_id_text(ledger: int, entry: int, partition: int) -> str:
    """pulsar-client-go ``MessageID.String()``: ``"l:e:p"``, partition 0 on a topic that is not partitioned, no batch
    index (PLS-DLQ-008)."""
    return f"{ledger}:{entry}:{max(partition, 0)}"


def java_message_id_text(ledger: int, entry: int, partition: int, batch_index: int) -> str:
    """Java ``MessageIdImpl.toString()`` ``"l:e:p"``; ``BatchMessageIdImpl`` ``"l:e:p:b"`` (PLS-DLQ-003)."""
    base = f"{ledger}:{entry}:{partition}"
    return base if batch_index < 0 else f"{base}:{batch_index}"


def java_dead_letter_properties(original: Mapping[str, str], origin_text: str, real_topic: str,
                                subscription: str, *, real_subscription: bool = True,
                                origin_message_id: bool = True) -> dict[str, str]:
    """PLS-DLQ-003 (``ConsumerImpl#getPropertiesMap``): each system property only if absent; REAL_SUBSCRIPTION
    only from the clients that write it (``real_subscription``: pulsar-client 3.2 on; not 3.0.7 and before), and
    ORIGIN_MESSAGE_ID beside the legacy key only from apache/pulsar PR #12451 on (``origin_message_id``). Before
    that PR a client writes REAL_TOPIC and the legacy ORIGIN_MESSAGE_IDY_TIME anew on every copy, so a retried
    copy names the retry topic and its own id (live 4.0.8 with the Java client 2.7.4, 27 Nov 2026)."""
    props = dict(original)
    if origin_message_id:
        props.setdefault(REAL_TOPIC, real_topic)
        props.setdefault(ORIGIN_MESSAGE_ID_LEGACY, origin_text)
        props.setdefault(ORIGIN_MESSAGE_ID, origin_text)
    else:
        props[REAL_TOPIC] = real_topic
        props[ORIGIN_MESSAGE_ID_LEGACY] = origin_text
    if real_subscription:
        props.setdefault(REAL_SUBSCRIPTION, subscription)
    return props


def java_copy_event_time(event_time: int, *, copied: bool) -> int:
    """PLS-RETRY-002 / PLS-DLQ-003: the event time of a Java client's retry or dead-letter copy: the original's
    from apache/pulsar PR #24059 on (``copied``: pulsar-client 3.0.11, 3.3.6, 4.0.4, 4.1), none (0) before."""
    return event_time if copied else 0


def retry_properties(original: Mapping[str, str], origin_text: str, real_topic: str, subscription: str,
                     delay_ms: int, *, real_subscription: bool = True, origin_message_id: bool = True) -> dict[str, str]:
    """PLS-RETRY-002: the properties of a ``reconsumeLater`` copy (retry or dead-letter topic)."""
    props = java_dead_letter_properties(original, origin_text, real_topic, subscription,
                                        real_subscription=real_subscription, origin_message_id=origin_message_id)
    times = int(props[RECONSUMETIMES]) + 1 if RECONSUMETIMES in props else 1
    props[RECONSUMETIMES] = str(times)
    props[DELAY_TIME] = str(max(0, int(delay_ms)))
    return props


def reconsume_goes_to_dead_letter(properties: Mapping[str, str], max_redeliver_count: int) -> bool:
    """PLS-RETRY-003: the copy goes to the DLQ once its RECONSUMETIMES exceeds ``maxRedeliverCount``."""
    return int(properties[RECONSUMETIMES]) > max_redeliver_count


def strip_partition_suffix(topic: str) -> str:
    """``REAL_TOPIC`` of a retry copy: the topic without ``-partition-<i>`` (``TopicName.PARTITIONED_TOPIC_SUFFIX``)."""
    index = topic.rfind("-partition-")
    return topic if index < 0 else topic[:index]
