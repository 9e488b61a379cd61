"""Per-consumer unacked accounting on Shared and Key_Shared subscriptions.

Pulsar part: ``apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/service/Consumer.java``
(``unackedMessages``, ``blockedConsumerOnUnackedMsgs``, ``maxUnackedMessages``; the consumer's
``pendingAcks``), the namespace policy ``maxUnackedMessagesPerConsumer`` (admin
``namespaces set-max-unacked-messages-per-consumer``) and the consumer stats
(``ConsumerStatsImpl.unackedMessages``).
Rule ids: PLS-UNACKED-001 (a consumer at its limit gets nothing more until its acks bring it down
to half the limit), PLS-UNACKED-002 (a consumer's ``unackedMessages`` counts the messages dispatched
to it and not yet acknowledged, expired or redelivered), PLS-UNACKED-003 (on a non-persistent topic
nothing waits for an ack: ``unackedMessages`` stays 0).

1. The broker counts, per Shared / Key_Shared consumer, the messages it dispatched to it that are
   still pending: an ack, a redelivery (nack, close, redeliver_unacked) or a mark-delete that moves
   past them (an expiry pass, skip, clear-backlog) takes them out (PLS-UNACKED-002).
2. With ``maxUnackedMessagesPerConsumer = L > 0`` the consumer is blocked once that count reaches
   L, and unblocked when acks bring it to ``L // 2`` or lower (PLS-UNACKED-001); a redelivery request by ids (a
   nack's, a retry's) also clears the flag, whatever the ids name, and a Shared consumer so unblocked gets one more
   entry even at its limit (``dispatch/shared.py``: ``request_unblock``). ``L = 0`` is no limit, and so is
   a non-durable subscription (``Consumer#getMaxUnackedMessages`` answers 0 unless ``isDurable``); its count
   still grows (``addAndGetUnAckedMsgs`` asks only for a persistent topic and an individual-ack type).
3. Non-persistent topics store nothing and their clients send no acks: a message leaves the count
   when it is written to the consumer's connection (PLS-UNACKED-003).

Not modelled: batched entries under a limit (the broker counts messages but dispatches whole entries,
so a batch can overshoot L); the subscription-wide limit (``maxUnackedMessagesPerSubscription``);
Exclusive and Failover consumers (their ``unackedMessages`` is not maintained).
Choices: the stats a consumer reports are judged as a range, because what sits in its receiver
queue (dispatched, not received) is hidden: every unacked message nobody's application holds may be
there. After ``redeliver_unacked`` a C++ consumer may receive a copy its receiver queue kept (not
counted: ``Consumer.redeliverUnacknowledgedMessages`` cleared its count and pending acks) or the
broker's own new dispatch of that message (counted by ``Consumer.sendMessages``); where the history
cannot tell which, the consumer may be at its limit and nothing more is owed to it until an ack, a
nack or a redelivery settles it (``dispatch/shared.py``: ``limit_unsure``, ``maybe_blocked``).

Upstream bugs this chapter names (the rules state the fixed behaviour):
- apache/pulsar PR #23796 (issue #22657): with L = 1 the unblock test ran before the ack's
  decrement, so an acked consumer stayed blocked (regression from PR #20990, 3.0.2 .. 4.0.2).
- apache/pulsar PR #21592 (issue #21568): non-persistent Shared consumers' count grew with every
  message (before 3.0.3 / 3.1.3).
- apache/pulsar PR #25581: an expiry that moved the mark-delete past a consumer's pending messages
  dropped them without decrementing the count (fixed in 4.2.2).
"""

from __future__ import annotations

from typing import NamedTuple

RULE_LIMIT = "PLS-UNACKED-001"
RULE_COUNT = "PLS-UNACKED-002"
RULE_NON_PERSISTENT = "PLS-UNACKED-003"

COUNTED_TYPES = ("Shared", "Key_Shared")
# The name a count is kept under for the only consumer of a subscription when its name is its client's to choose (a
# multi-topic consumer's, a random one): the stats list that consumer alone, so its one entry is that consumer's.
# (No consumer name a trace gives can be this.)
SOLE_UNNAMED = "\x00the only consumer"


def blocks(unacked: int, limit: int) -> bool:
    """PLS-UNACKED-001: whether ``unacked`` pending messages block a consumer with limit ``limit`` (0: none)."""
    return limit > 0 and unacked >= limit


def unblocks(unacked: int, limit: int) -> bool:
    """PLS-UNACKED-001: whether a blocked consumer with ``unacked`` pending messages is unblocked."""
    return unacked <= limit // 2


class CountRange(NamedTuple):
    """The ``unackedMessages`` a consumer may report: ``low..high`` and why."""

    low: int
    high: int
    rule: str
    why: str


def persistent_count(held: int, maybe_queued: int, acks_in_flight: int, expiring: int = 0) -> CountRange:
    """PLS-UNACKED-002 on a persistent topic.

    ``held``: messages the consumer's application received and has not acked or given back;
    ``maybe_queued``: unacked messages nobody holds, which may sit in its receiver queue (dispatched,
    not yet received); ``acks_in_flight``: acks it made that the broker may not have seen yet;
    ``expiring``: messages an expiry pass still under way removes (PLS-TTL-002's settle time), which the count may
    still hold until the pass reaches the consumer's pending acks."""
    return CountRange(held, held + maybe_queued + acks_in_flight + expiring, RULE_COUNT,
                      f"{held} received and not acked" + (f", up to {maybe_queued} more in its receiver queue" if maybe_queued else "")
                      + (f", up to {acks_in_flight} acks still on their way" if acks_in_flight else "")
                      + (f", up to {expiring} an expiry pass still under way removes" if expiring else ""))


def non_persistent_count(in_flight: int) -> CountRange:
    """PLS-UNACKED-003: a non-persistent consumer's count: only messages still being written to it."""
    return CountRange(0, in_flight, RULE_NON_PERSISTENT,
                      "a non-persistent topic keeps nothing for an ack" + (f" ({in_flight} message(s) may still be in flight)" if in_flight else ""))
