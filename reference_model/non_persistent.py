"""Non-persistent topics: messages go to the consumers connected at publish time, and nowhere else.

Pulsar part: ``apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/service/
nonpersistent/NonPersistentTopic.java`` (``publishMessage``: each subscription's dispatcher gets
the message now; the producer is acked with ledger/entry 0/0), ``NonPersistentDispatcher*``
(no storage: nothing to redeliver, no delayed tracker); client checks in ``apache/pulsar-client-cpp
lib/ProducerImpl.cc`` (chunking only on persistent topics) and ``lib/ClientImpl.cc`` (no
read-compacted).
Rule ids: PLS-NP-001 .. PLS-NP-004 (and PLS-CHUNK-006, PLS-COMPACT-005 for the client checks).

1. A message reaches exactly the subscriptions that have a connected consumer when it is
   published; a subscription without one, or created later (even at Earliest), never gets it;
   readers see only messages published after they connect (PLS-NP-001).
2. Nothing is redelivered: a nacked or unacked message is gone (PLS-NP-002).
3. Send and receive ids are ``(0, 0, partition, -1)`` for every message (PLS-NP-003).
4. ``deliver_at`` / ``deliver_after`` are ignored: delivery is immediate (PLS-NP-004).

Not modelled: the broker dropping messages when a consumer has no permits
(``msgDropRate``), replication, non-persistent partitioned topics.
Choices: subscriptions are named by strings; "connected" is a set passed in by the caller.
"""

from __future__ import annotations

from reference_model.ids import MessageId


def receivers(subscriptions_with_connected_consumer: frozenset[str] | set[str]) -> frozenset[str]:
    """PLS-NP-001: the subscriptions a message published now is dispatched to."""
    return frozenset(subscriptions_with_connected_consumer)


def message_id(partition: int = -1, batch_index: int = -1) -> MessageId:
    """PLS-NP-003: the id of a non-persistent message: ledger and entry 0; a message of a batch
    keeps its batch index (the client numbers a batch's messages from the one receipt)."""
    return MessageId(0, 0, partition, batch_index)
