"""Faults: what must survive a cut connection, added latency, a stall, or a broker restart.

Pulsar part: the client's reconnection (``ConsumerImpl::connectionOpened`` /
``ProducerImpl::connectionOpened`` in apache/pulsar-client-cpp ``lib/``; ``ConsumerImpl#
connectionOpened`` in apache/pulsar ``pulsar-client``: a consumer clears its receiver queue and
subscribes again, a producer re-sends what is pending); the broker side of a consumer that goes
away (``PersistentDispatcherSingleActiveConsumer`` rewinds the cursor to the mark-delete position,
``PersistentDispatcherMultipleConsumers#removeConsumer`` puts the consumer's pending acks back for
replay); a broker restart (every topic is loaded again: ``ManagedCursorImpl`` recovers the
persisted mark-delete position and individually deleted ranges; ``MessageDeduplication#
recoverSequenceIdsMap`` replays the ledger from its snapshot; the delayed-delivery index is
rebuilt from the cursor on; ``InMemoryRedeliveryTracker`` starts empty).
Rule ids: PLS-FAULT-001 .. PLS-FAULT-006.

Docs: "Pulsar ... guarantees at-least-once delivery" (concepts-messaging, Acknowledgment);
"Messages are only deleted after all subscriptions have acknowledged them"; an unacknowledged
message "will be redelivered" when its consumer disconnects (concepts-messaging, "Negative
acknowledgment" / "Acknowledgment timeout" and the subscription-types chapter, "If a consumer
disconnects, all the messages that were sent to it and not acknowledged will be rescheduled").

What survives each fault (``EFFECTS``):
- ``cut`` (every client connection dropped; the clients reconnect): the broker keeps all its
  state. Each consumer's unacked messages go back to its subscription and come again
  (PLS-FAULT-003); nothing stored is lost (PLS-FAULT-002); an ack the broker had is kept
  (PLS-FAULT-001); a producer's sequence ids go on (PLS-FAULT-006); dedup state stays
  (PLS-FAULT-004); delayed messages stay delayed (PLS-FAULT-005).
- ``restart`` (SIGTERM: the broker closes its topics and cursors, then starts again on the same
  data): as a cut, and every topic's ledger is closed (a retention question: PLS-RETENTION-001),
  and redelivery counts start again from 0.
- ``crash`` (SIGKILL, then start): as a restart, except that acks may be lost: the cursor's
  position is persisted at most ``managedLedgerDefaultMarkDeleteRateLimit`` (1) times a second
  and flushed every ``managedLedgerCursorPositionFlushSeconds`` (60), so after a crash an acked
  message may come back. At-least-once allows it; PLS-FAULT-001 is not in force across a crash.
- ``latency`` / ``stall``: no state changes; only when things happen (every round trip takes
  longer), so timing bands widen by the latency both ways.
- ``unload`` (an admin unload of a topic with consumers connected, ``Broker._op_unload_topic``): a restart of
  that topic only: its consumers reconnect, its ledger is closed, its redelivery counts start again.

Uncertainty (Jepsen's ``info``): an ack is grouped by the client (``ack_grouping_ms``, 100 ms in
the C++ client) and travels with the latency in force; an ack made less than ``ack_settle_ms``
before a cut or restart may not have reached the broker, so its message may come back
(``ack_uncertain``). The checker judges such a redelivery INDETERMINATE, never FAIL.

Not modelled (the model stops following the affected handles: ``unfollowable``): Key_Shared
subscriptions (hash ranges are handed out again as consumers come back, in an order the trace
does not show), Failover subscriptions with several consumers (which consumer is active while
the others are still reconnecting), non-durable subscriptions and non-persistent topics (their
messages in the receiver queue are dropped on reconnect), consumers with an ack timeout (the
client clears its tracker), consumers of several topics, async sends pending at the fault (the
producer re-sends them: stored once or twice), nacks whose redelivery is still due (the
client's nack timer fires after the reconnect), consumers under a ``max_unacked_messages_per_consumer``
limit (a copy that comes again may or may not count against the limit).
Choices: a fault acts at the end of its op (the target returns once every handle is connected
again and every consumer of one topic has subscribed again: until then the client may still hand
out messages it prefetched before the fault); the model's own choice is that every grouped ack older than the settle time reached the
broker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

CUT, RESTART, CRASH, LATENCY, STALL = "cut", "restart", "crash", "latency", "stall"
UNLOAD = "unload"  # an admin unload of topics some consumer is connected to: a restart of those topics only
RECONNECTING = (CUT, RESTART, CRASH)


@dataclass(frozen=True)
class Effects:
    """What a kind of fault does to the state the rules speak about."""

    reconnects: bool  # every client connection is dropped and made again
    closes_ledgers: bool  # every topic is loaded again (its current ledger is closed)
    resets_redelivery_counts: bool  # the broker's InMemoryRedeliveryTracker starts empty
    acks_kept: bool  # an ack the broker had is kept (PLS-FAULT-001 in force)


EFFECTS: Mapping[str, Effects] = {
    CUT: Effects(reconnects=True, closes_ledgers=False, resets_redelivery_counts=False, acks_kept=True),
    RESTART: Effects(reconnects=True, closes_ledgers=True, resets_redelivery_counts=True, acks_kept=True),
    CRASH: Effects(reconnects=True, closes_ledgers=True, resets_redelivery_counts=True, acks_kept=False),
    LATENCY: Effects(reconnects=False, closes_ledgers=False, resets_redelivery_counts=False, acks_kept=True),
    STALL: Effects(reconnects=False, closes_ledgers=False, resets_redelivery_counts=False, acks_kept=True),
    # the broker closes the topic (its cursors persist their positions) and loads it again on the clients' next
    # lookup: as a restart, for the consumers of the unloaded topics (Broker's _op_unload_topic); the checker's
    # allowances (ack_uncertain, resume_deadline) are not scoped to them, which only widens them
    UNLOAD: Effects(reconnects=True, closes_ledgers=True, resets_redelivery_counts=True, acks_kept=True),
}


@dataclass(frozen=True)
class Fault:
    """One fault of a history: its kind and the op's span (ms since the trace began)."""

    kind: str
    start: float
    end: float
    stored_before: int = 0  # how many messages the broker had stored when it came (store order, not time)

    def after_store(self, seq: int) -> bool:
        """The fault came after the message stored ``seq``-th (``StoredMessage.seq``)."""
        return seq < self.stored_before

    @property
    def effects(self) -> Effects:
        return EFFECTS[self.kind]


def reconnects_after_store(faults: Iterable[Fault], seq: int) -> list[Fault]:
    """The cuts, restarts, crashes and unloads with consumers that came after the message stored ``seq``-th,
    in order."""
    return [f for f in faults if f.effects.reconnects and f.after_store(seq)]


def injected(faults: Iterable[Fault]) -> list[Fault]:
    """The faults a fault op injected (an unload is an admin op: the dedup and sequence rules after it stay
    PLS-DEDUP-*, as after an unload with no consumer)."""
    return [f for f in faults if f.kind != UNLOAD]


def fault_kind(op: str, args: Mapping[str, object]) -> str:
    """The kind of fault a fault op injects."""
    if op == "restart_broker":
        return RESTART if args.get("graceful", True) else CRASH
    return {"cut_connections": CUT, "set_latency": LATENCY, "stall_connections": STALL}[op]


# How long after a reconnecting fault the suite waits before it calls a message that does not come
# lost: Pulsar states no delivery deadline, and after a restart the broker loads each topic again and
# recovers its ledger before it dispatches (measured on 4.0.8: up to ~0.5 s after the clients were
# connected again). Within this grace an owed message that has not come is not charged.
RESUME_GRACE_MS: Mapping[str, float] = {CUT: 1000.0, RESTART: 3000.0, CRASH: 3000.0, LATENCY: 0.0, STALL: 0.0,
                                         UNLOAD: 3000.0}


# How long after the broker dropped a consumer's connection (a fault, an unload, an admin reset) its client may still
# be reconnecting (Java ``ConnectionHandler`` backs off from 100 ms, then looks the topic up and subscribes again): an
# op that needs the connection may be refused meanwhile (``Broker._op_unsubscribe``). The unload's resume grace.
RECONNECT_WINDOW_MS = 3000.0


def resume_deadline(must_by: float, faults: Iterable[Fault]) -> float:
    """The instant by which an owed message must have come, given the faults so far: the rule's own
    deadline, or, when the message was already owed before a reconnecting fault ended, that fault's
    end plus its grace, whichever is later. A message owed only after the fault (sent after it: its
    send shows the topic loaded) gets no grace."""
    after = [f.end + RESUME_GRACE_MS[f.kind] for f in faults if f.effects.reconnects and must_by <= f.end]
    return max([must_by, *after])


def ack_settle_ms(ack_grouping_ms: float, latency_ms: float, slack_ms: float) -> float:
    """How long before a fault an ack must have been made for the broker to surely have it: the
    client's grouping period, the added latency (one way), and the dispatch slack."""
    return ack_grouping_ms + latency_ms + slack_ms


def ack_uncertain(ack_ms: float, faults: Iterable[Fault], settle_ms: float) -> Fault | None:
    """The fault that makes an ack at ``ack_ms`` uncertain, if any: a crash after it (the cursor
    may not have persisted it), or a cut/restart less than ``settle_ms`` after it."""
    for fault in faults:
        if fault.start < ack_ms:
            continue
        if not fault.effects.acks_kept and fault.effects.reconnects:
            return fault
        if fault.effects.reconnects and fault.start - ack_ms < settle_ms:
            return fault
    return None


def settled_before(ack_ms: float, faults: Iterable[Fault], settle_ms: float) -> Fault | None:
    """PLS-FAULT-001: the first reconnecting fault an ack at ``ack_ms`` surely reached the broker
    before (and that keeps acks), when no crash since makes it uncertain."""
    faults = list(faults)
    if ack_uncertain(ack_ms, faults, settle_ms) is not None:
        return None
    return next((f for f in faults if f.effects.reconnects and f.effects.acks_kept and f.start - ack_ms >= settle_ms), None)


def unfollowable(*, subscription_type: str, consumers_on_subscription: int, durable: bool, persistent: bool,
                 ack_timeout_ms: int, attachments: int, nack_due: bool, max_unacked: int = 0) -> str | None:
    """Why the model cannot follow a consumer across a reconnect (see the module's "Not modelled"),
    or None when it can."""
    if subscription_type == "Key_Shared":
        return "a Key_Shared subscription across a reconnect (hash ranges handed out again as consumers come back)"
    if subscription_type == "Failover" and consumers_on_subscription > 1:
        return "a Failover subscription with several consumers across a reconnect (who is active meanwhile)"
    if not durable:
        return "a non-durable subscription across a reconnect"
    if not persistent:
        return "a non-persistent topic across a reconnect (its receiver queue is dropped)"
    if ack_timeout_ms:
        return "a consumer with an ack timeout across a reconnect (the client clears its tracker)"
    if attachments > 1:
        return "a consumer of several topics or partitions across a reconnect"
    if nack_due:
        return "a nack whose redelivery is still due at a reconnect (the client's timer fires after it)"
    if max_unacked:
        return ("a consumer under an unacked-messages limit across a reconnect (whether a copy it gets again is "
                "the redelivery, which counts against the limit, or a queued copy, which does not, is not shown)")
    return None
