"""Topic compaction: what a ``read_compacted`` reader sees.

Pulsar part: the broker's two-phase compactor (``apache/pulsar pulsar-broker/src/main/java/org/
apache/pulsar/compaction/AbstractTwoPhaseCompactor.java`` and ``PublishingOrderCompactor.java``:
phase one records the latest id per key, phase two copies those messages to a compacted ledger);
the compaction horizon read path (``.../compaction/CompactedTopicImpl.java``); the client-side
check of ``is_read_compacted`` (``apache/pulsar-client-cpp lib/ClientImpl.cc#subscribeAsync``).
Rule ids: PLS-COMPACT-001, PLS-COMPACT-003 .. PLS-COMPACT-006 (PLS-COMPACT-002 is withdrawn).

A compaction over messages ``m_0 .. m_h`` (``h`` = the compaction horizon, the last message when
it started) produces the compacted view:
1. Messages without a key are dropped (unless the broker sets ``topicCompactionRetainNullKey``)
   (PLS-COMPACT-003).
2. For each key, only its latest message is kept, in topic order (PLS-COMPACT-001).
3. A tombstone (empty payload, or ``send(None)``'s null value) as a key's latest message
   deletes the key: the view keeps no message of it (PLS-COMPACT-006; phase one of
   ``PublishingOrderCompactor#compactMessage`` removes the key when the payload size is 0).
   Brokers 4.0.0-4.0.10 and 4.1.0-4.2.1 keep a non-batched tombstone of a producer that does not
   set ``uncompressed_size`` (the C++/Python client) as the key's latest message: a bug
   (apache/pulsar PR #23285 measures metadata plus payload; fixed by PR #25817), known deviation
   KD-003. ``tombstones_kept=True`` computes what those brokers show, for tests and evidence.
A ``read_compacted`` reader from the start sees the compacted view, then every message after the
horizon as published (PLS-COMPACT-004). ``is_read_compacted`` is refused by the C++ client with
InvalidConfiguration on Shared / Key_Shared subscriptions and on non-persistent topics
(PLS-COMPACT-005); readers, Exclusive and Failover may use it.

Not modelled: automatic compaction (``brokerServiceCompactionThreshold``), batched messages
(compaction re-batches the kept messages), event-time ordering (``EventTimeOrderCompactor``),
retention cutting into the compacted ledger, the compacted-ledger-missing recovery.
Choices: a message is ``(key, payload, null_value)`` plus a name; "empty" is a zero-length payload.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference_model.rejections import Rejected

_READ_COMPACTED_TYPES = ("Exclusive", "Failover")


@dataclass(frozen=True)
class KeyedMessage:
    name: str
    key: str | None
    payload: bytes
    null_value: bool = False

    @property
    def is_tombstone(self) -> bool:
        return self.null_value or len(self.payload) == 0


def compacted_view(messages: tuple[KeyedMessage, ...], *, tombstones_kept: bool = False,
                   retain_null_key: bool = False) -> tuple[KeyedMessage, ...]:
    """Steps 1-3 over the messages up to the horizon, in topic order."""
    latest: dict[str, int] = {}
    for i, m in enumerate(messages):
        if m.key is None:
            continue
        if m.is_tombstone and not tombstones_kept:
            latest.pop(m.key, None)
        else:
            latest[m.key] = i
    keep = set(latest.values())
    return tuple(m for i, m in enumerate(messages) if i in keep or (m.key is None and retain_null_key))


def read_compacted(messages: tuple[KeyedMessage, ...], horizon: int, *, tombstones_kept: bool = False,
                   retain_null_key: bool = False) -> tuple[KeyedMessage, ...]:
    """PLS-COMPACT-004: a compacted reader from earliest: the view of ``messages[:horizon+1]``, then the rest raw."""
    if not -1 <= horizon < len(messages):
        raise ValueError(f"horizon {horizon} outside the {len(messages)} messages")
    head = compacted_view(messages[: horizon + 1], tombstones_kept=tombstones_kept, retain_null_key=retain_null_key)
    return head + messages[horizon + 1:]


def check_read_compacted(subscription_type: str, *, persistent: bool, checked_by_client: bool = True) -> Rejected | None:
    """PLS-COMPACT-005: the rejection a ``subscribe(..., is_read_compacted=True)`` gets, or None.

    ``checked_by_client`` False (the Go client, PLS-COMPACT-007): no client check; the broker refuses it
    (apache/pulsar NonPersistentTopic#subscribe, PersistentTopic#internalSubscribe: NotAllowedException)."""
    if not checked_by_client:
        if not persistent:
            return Rejected("NotAllowedError", "PLS-COMPACT-007", "readCompacted only valid on persistent topics")
        if subscription_type not in _READ_COMPACTED_TYPES:
            return Rejected("NotAllowedError", "PLS-COMPACT-007", "readCompacted only allowed on failover or exclusive subscriptions")
        return None
    if not persistent or subscription_type not in _READ_COMPACTED_TYPES:
        return Rejected("InvalidConfiguration", "PLS-COMPACT-005",
                        f"read compacted needs a persistent topic and an Exclusive or Failover subscription, got {subscription_type} "
                        f"on a {'persistent' if persistent else 'non-persistent'} topic")
    return None
