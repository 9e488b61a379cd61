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
2. Nothing is redelivered: a nacked or unacked message is gone (PLS-NP-002). So is every message the broker
   pushed to a consumer's receiver queue when that consumer closes: when the last consumer of a subscription
   closes, nothing its application had not received comes to the next one (``lost_on_close``; live 3.3.6, 27 Nov
   2026, 3/3: m1 sent to a Failover consumer, the consumer closed, a consumer of the same subscription got
   nothing; regression pls-sub-005-lost-message-11aa0492b21b). With other consumers still connected, which
   messages sat in the closing one's queue is not in the history: not modelled. A Java consumer's
   redeliver_unacked clears its receiver queue too (the C++ client keeps it), and the broker sends nothing
   again: a message its application had not received is lost if it had reached the queue, and still comes if it
   was on its way; which, the history does not show, so that is not modelled either (live 4.0.8, Java
   campaign, 28 Nov 2026, 3/3: regression pls-sub-002-lost-message-382b134173a5).
3. Send and receive ids are ``(0, 0, partition, -1)`` for every message (PLS-NP-003).
4. ``deliver_at`` / ``deliver_after`` are ignored: delivery is immediate (PLS-NP-004).

5. The broker drops a message for a subscription whose consumer has no permits or whose connection
   is not writable (``NonPersistentDispatcherSingleActiveConsumer#sendMessages``, and the Multiple
   consumers dispatcher when no consumer has permits: ``msgDropRate``). Neither is visible in a
   history, so a message that may meet either (``drop_possible``: after a message of
   ``WRITABILITY_BYTES`` or more went to any topic, Netty's default high water mark being 64 KiB and half
   of it taken to be safe; or while a subscription's consumers may have used up their permits) is *maybe
   dropped* there (``reference_model.maybe_absent``, place 4): neither owed nor refused, and the broker checks
   message by message, so its receipt says nothing of the others. Found live on 4.0.8 (Python campaign,
   2026-11-27, fz-a344a518a55e): an async 5 MB message, then m2; the Exclusive consumer got the 5 MB one and
   never m2. Not followed until 7 Dec 2026 (the send was refused as not modelled).

6. A consumer has no permits until its client sends its first flow command, and the Java and Go clients send it
   after their subscribe call has returned (``Profile.first_permits_after_subscribe``: Java
   ``ConsumerImpl#connectionOpened`` completes the subscribe future, then sends the flow; Go's dispatcher goroutine
   sends it once ``grabConn`` signals it, pulsar-client-go ``consumer_partition.go``; the C++ client sends it before
   its subscribe completes). So a message published right after such a subscribe may be dropped by rule 5's
   dispatcher check. Found live on 4.0.8 with the Go client 0.19.0 (CI of 5 Dec 2026, case np-connected-only, 1 run
   in about 20): m2, sent 8 us after c2's subscribe returned, never came. The model keeps both outcomes: a message
   published before every connected consumer's first permits surely reached the broker (its subscribe's end plus
   the dispatch slack, ``before_first_permits``) is *maybe absent* from the subscription, and the receipts decide
   (``reference_model.maybe_absent``).
7. A consumer's seek (to a position, a message or a publish time) answers ok and brings nothing back: nothing is
   stored (PLS-NP-002). The seeking client clears its receiver queue (C++ ``ConsumerImpl::seekAsyncInternal``,
   Java ``ConsumerImpl#seekAsync``), so what its application had not received is gone, unless it was still on its
   way: each such message is maybe absent (``after_seek``, ``reference_model.maybe_absent``). Later messages come as
   before. Live 4.0.8, 5 Dec 2026, Python and Java: m1 received, m2 queued, a seek to the earliest, nothing, a seek
   by m1's publish time, nothing, then m3 sent and received. The Go client 0.19.0 gets nothing after such a seek: it
   holds back everything until the reconnect a persistent topic's seek causes (``partitionConsumer.isSeeking``, reset
   only in ``reconnectToBroker``), and a non-persistent subscription keeps its consumers connected (known deviation
   KD-507, case seek-non-persistent-go).

Not modelled: replication, non-persistent partitioned topics, a seek with
other consumers of the subscription connected (which messages the seeker's queue held).
Choices: subscriptions are named by strings; "connected" is a set passed in by the caller.
"""

from __future__ import annotations

from reference_model.ids import MessageId

# Bytes of one message after which the broker's channel to a client may stop being writable for a
# while (rule 5): Netty's WriteBufferWaterMark default is 32 KiB low / 64 KiB high; the low one is used.
WRITABILITY_BYTES = 32 * 1024


def receivers(subscriptions_with_connected_consumer: frozenset[str] | set[str]) -> frozenset[str]:
    """PLS-NP-001: the subscriptions a message published now is dispatched to."""
    return frozenset(subscriptions_with_connected_consumer)


def message_id(partition: int = -1, batch_index: int = -1) -> MessageId:
    """PLS-NP-003: the id of a non-persistent message: ledger and entry 0; a message of a batch
    keeps its batch index (the client numbers a batch's messages from the one receipt)."""
    return MessageId(0, 0, partition, batch_index)


def lost_on_close(unreceived: frozenset[int] | set[int], others_connected: bool) -> frozenset[int] | None:
    """Rule 2: the positions a subscription loses when one of its consumers closes with ``unreceived`` messages not
    yet received by an application: all of them when it was the last consumer (each went to its queue, or was
    dropped: rule 5), None (not modelled) when others stay connected and some are unreceived."""
    if not unreceived:
        return frozenset()
    return None if others_connected else frozenset(unreceived)


def drop_possible(*, large_message_sent: bool, waiting: int, permit_thresholds: list[int | None]) -> str | None:
    """Rule 5: why a message published now may be dropped for a subscription, or None when it surely
    is not. ``large_message_sent``: a message of ``WRITABILITY_BYTES`` or more was sent earlier (to any
    topic: one connection may carry it); ``waiting``: messages dispatched on this subscription and not
    yet received by an application; ``permit_thresholds``: per connected consumer, how many messages
    must sit unprocessed before it may be out of permits (``dispatch.shared.zero_permit_queue``; None
    for a zero queue, which has permits only while a receive waits)."""
    if large_message_sent:
        return (f"a message of {WRITABILITY_BYTES // 1024} KiB or more was sent before: the broker's connection to the "
                "consumer may not be writable, and then it drops the message")
    if permit_thresholds and all(t is None or waiting >= t for t in permit_thresholds):
        return (f"{waiting} message(s) wait unreceived: the consumers may be out of permits, and then the broker "
                "drops the message")
    return None


def before_first_permits(sent_at: float, first_permits_by: list[float | None]) -> bool:
    """Rule 6: whether a message published at ``sent_at`` may find no connected consumer with permits yet.
    ``first_permits_by``: per connected consumer, by when its first flow permits surely reached the broker (None:
    they were sent before its subscribe returned). Only when none surely has them may the broker drop the message;
    a consumer that has them takes it (the Shared dispatcher picks one with permits, a single-active one has one)."""
    return bool(first_permits_by) and all(by is not None and sent_at <= by for by in first_permits_by)


def after_seek(unreceived: set[int] | frozenset[int]) -> frozenset[int]:
    """Rule 7: of the messages a consumer, alone on its subscription, had not received when it sought, those that may
    still come (on their way when its client cleared its queue): all of them, each maybe absent."""
    return frozenset(unreceived)
