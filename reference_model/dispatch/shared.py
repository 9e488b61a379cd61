"""Shared subscriptions: many consumers, each message to one of them at a time.

Pulsar part: ``PersistentDispatcherMultipleConsumers`` (broker: round-robin in chunks to
consumers with permits, a replay set for redeliveries, ``InMemoryRedeliveryTracker``) with the
C++ client's receiver queue, nack tracker and ack-timeout tracker.
Rule ids: PLS-SHARED-001 (each message to one consumer at a time; together they get every
message), PLS-SHARED-002 (a closed consumer's unacked messages go to the others), PLS-SHARED-003
(priority levels), PLS-ACK-005 (redelivery count +1 per broker redelivery), PLS-NACK-001
(C++: a nacked message returns after [d, d + d/3]), PLS-NACK-004/005 (Java nack tracker),
PLS-ACKTIMEOUT-002/004/005, PLS-REDELIVER-001, PLS-SUBTYPE-001.

Client-side behaviour (nack and ack-timeout windows, whether redeliver_unacked keeps the receiver
queue) follows each consumer's own client profile (``ConsumerConfig.client``): one subscription
may have Python and Java consumers.

Priority levels (PLS-SHARED-003, Java ``priorityLevel``; ``getNextConsumer``): the broker hands a
message to the highest-priority (lowest number) consumers that have permits, round robin among
them, and to a lower level only when none of them has a permit. Permits are hidden state, so the
oracle forbids a lower-priority consumer a message only when a higher-priority consumer surely
had permits from the moment the message became available: it was connected by then, and too few
messages could sit in receiver queues for its queue to be full (a client asks for more permits
once half its queue is consumed, so a consumer with queue q runs dry only with at least
``q - (q//2 - 1)`` messages queued, ``zero_permit_queue``): the subscription holds fewer, or
fewer were outside the applications' hands when the message was dispatched (``_maybe_queued``).

State per message position (``_Slot``):
- ``holder``: the consumer whose *application* received it and has not acked it. While held,
  nobody else may receive it (PLS-SHARED-001);
- ``release``: when the holder's client gives it back (nack window, ack-timeout window, close,
  redeliver_unacked); from ``release.low`` any consumer may receive it;
- ``lo..hi``: the redelivery counts the next delivery may carry (PLS-ACK-005). Prefetched
  messages are invisible, so events that *might* have bumped the count (a consumer closing or
  redelivering while the message could have sat in its queue) raise only ``hi``.

Prefetch is hidden state. A message pushed to A's queue and never received by A could have
gone to B instead, so the allowed set for any consumer is every unacked message nobody holds.
What a C++ receiver queue holds is never purged, and that allows a few duplicates (all measured
on 4.0.8 with random traces, see tests/conformance/live_histories):
- ``stale``: after ``redeliver_unacked`` (or a seek by *another* consumer) messages the queue
  had may surface there once more while the broker also gives them to others. The Java client
  clears its queue at the call (``ConsumerImpl#redeliverUnacknowledgedMessages``), but only an
  Exclusive or Failover consumer bumps its epoch (PIP-84) so that the broker's copies already on
  the wire are dropped; a Shared or Key_Shared one takes them into the cleared queue (measured on
  4.0.8: five async sends, then the call, gave each message twice, count 0 then 1:
  ``tests/conformance/live_histories/live-4.0.8-java-redeliver-in-flight.jsonl``). Which copies were
  on the wire is as hidden as what the queue held, so both clients get the same reading;
  a nack of such a stale copy cannot pull back the broker's own copy: a release already
  under way stands, and a later copy is allowed from the nack window but never owed. A message
  the application held at the call is not in the queue: only the broker's redelivery brings it
  back. Under an unacked limit a copy read as stale may have been the broker's (counted), so the
  consumer may be at its limit (PLS-UNACKED-001, ``_limit_after_stale``);
- ``ghosts``: an ack removes a message at the broker, but a copy already pushed to a queue
  still surfaces (the checker reports such a delivery INDETERMINATE, never PASS: the history
  cannot show whether the copy was queued before the ack);
- ``queued_nacks``: a nack of a message the application has not received yet still makes the
  broker redeliver it if it sat in that consumer's queue.

Not modelled: permits, round-robin chunk sizes (they only decide *which* consumer, which is
nondeterministic here) and priority levels beyond the sure case above; DLQ routing. Key_Shared narrows these allowed sets
(``key_shared.py``).
Choices: the model's own choice gives the receiving consumer the first deliverable message
(lowest position) whose canonical time has come.
"""

from __future__ import annotations

import copy

from bisect import bisect_left
from dataclasses import dataclass, replace
from typing import Callable, Iterable

from reference_model import names
from reference_model.dispatch.base import (
    Candidate,
    ConsumerConfig,
    ReceiveOptions,
    Refusal,
    owed,
    SubscriptionView,
)
from reference_model import unacked
from reference_model.profiles import Profile
from reference_model.rejections import NotModelledError, Rejected
from reference_model.timing import Span, Window

_FIRST_RULES = ("PLS-SHARED-001",)


@dataclass
class _Slot:
    holder: str | None = None
    release: Window | None = None
    release_rule: str = ""
    release_cause: str = ""
    bump_lo: int = 0
    bump_hi: int = 0
    lo: int = 0
    hi: int = 0
    base: int = 0  # hidden events already counted in ``hi``


def zero_permit_queue(receiver_queue_size: int) -> int | None:
    """PLS-SHARED-003: how many messages must sit unprocessed in a consumer's queue before the broker
    can see it without permits (the client returns permits once half its queue is processed:
    Java ``ConsumerImpl#increaseAvailablePermits``, C++ ``ConsumerImpl::increaseAvailablePermits``).
    None: a zero queue (permits only while a receive waits), never surely available."""
    q = int(receiver_queue_size)
    if q <= 0:
        return None
    return q - max(q // 2 - 1, 0)


def ghost_candidate(pos: int, handle: str, acked_at: float, count_high: int = 1 << 30) -> Candidate:
    """An acked message that may still sit in ``handle``'s receiver queue (see ``acked``). ``count_high``: the highest
    redelivery count a copy dispatched before the ack could carry (PLS-ACK-005; unbounded where not tracked)."""
    return Candidate(
        pos, Window(float("-inf"), float("inf"), None), ("PLS-ACK-001",),
        f"a copy may have been in {handle}'s receiver queue before the ack at {acked_at:g} ms "
        f"(a client does not purge its receiver queue on ack: C++ never does, Java and Go keep what was queued "
        f"before it)", 0, count_high, kind="ghost")


def queued_candidate(pos: int, handle: str, acked_at: float, count_high: int, order_rule: str) -> Candidate:
    """A message acked while surely in ``handle``'s receiver queue (the dispatchers' ``_surely_queued``): it comes from
    there, owed from the ack on, under the rule that orders the subscription's deliveries (``order_rule``)."""
    return Candidate(pos, Window(acked_at, acked_at, acked_at), (order_rule, "PLS-ACK-001"),
                     f"it sat in {handle}'s receiver queue when it was acked at {acked_at:g} ms (a client does not "
                     f"purge its receiver queue on ack)", 0, count_high, kind="queued")


class SharedDispatcher:
    """Shared dispatch. Positions ``>= next_fresh`` were never delivered on this dispatcher and
    have no slot; below it, every unacked position has one. ``open`` holds the slots a consumer
    may take (not held, or released), so a receive costs O(open), not O(backlog)."""

    type_name = "Shared"

    def __init__(self, sub: SubscriptionView, profile: Profile, slack_ms: float = 0.0):
        self.sub = sub
        self.profile = profile
        self.slack_ms = slack_ms
        self.consumers: dict[str, ConsumerConfig] = {}
        self.slots: dict[int, _Slot] = {}
        self.open: set[int] = set()
        self.held_by: dict[str, set[int]] = {}
        self.next_fresh = sub.cursor.first_unacked()
        # Events that may have bumped the count of messages sitting unseen in a receiver queue.
        self.hidden_times: list[float] = []
        # events that may raise some message's redelivery count (a close, a nack, a redelivery request, an abort, a
        # release): a ghost's count bound holds only while none came after its ack (``_ghost_count_high``)
        self.count_events = 0
        self.count_hint: dict[int, int] = {}  # highest count known before a seek, or seen on a stale copy
        # PLS-ACK-005: positions whose entry's redelivery count the broker may still drop (a batch-index ack of
        # another message of the entry on its way), and the latest instant that ack may reach the broker.
        self.count_reset_until: dict[int, float] = {}
        # redeliver_unacked (C++ keeps its queue): (fresh from, fresh to, returned positions)
        self.stale: dict[str, list[tuple[int, int, frozenset[int]]]] = {}
        # Stale copies taken per position: each redeliver_unacked covering a position may have put one
        # more copy of it in the queue (the broker re-dispatches it once per call), so a position may
        # come as stale as many times as calls covered it (measured: two calls, copies counted 0, 1, 2).
        self.stale_used: dict[str, dict[int, int]] = {}
        # Positions unacked at a reconnect that may reach a consumer once more (``reconnected``).
        self.fault_stale: dict[str, frozenset[int]] = {}
        # Positions whose latest copy in a consumer's application was such a stale copy: the
        # broker's own copy is elsewhere (in flight, queued, or pending), so a nack of it cannot
        # pull that copy back (see ``nack``).
        self.stale_in_hand: dict[str, set[int]] = {}
        # The redelivery count each such stale copy carried (read only for positions in ``stale_in_hand``): the
        # client decides a dead letter by the count of the copy its application nacks (PLS-DLQ-002).
        self.stale_counts: dict[str, dict[int, int]] = {}
        self.skip_before: dict[str, int] = {}
        self.sole_since = 0.0  # when the current consumers became all the consumers
        self.start_rules: dict[str, tuple[str, ...]] = {}
        # Acked messages a receiver queue may still hold: position -> (consumers, ack instant).
        # pos -> (who may hold a copy, ack time, its highest count then, the count-event clock then)
        self.ghosts: dict[int, tuple[set[str], float, int, int]] = {}
        # Of those, the ones surely in the one consumer's queue when acked (``_surely_queued``): owed to it while its
        # queue stays as it was. pos -> (that consumer, the count-event clock then)
        self.sure_ghosts: dict[int, tuple[str, int]] = {}
        # off for good once a fault, a latency or a stall made the clients' timing the client's: the Broker's to say,
        # from its fault log (``Broker._new_dispatcher``)
        self.queue_known: Callable[[], bool] = lambda: True
        # A nack of a message the consumer's application has not received yet: it may sit in that
        # consumer's queue, and the broker redelivers it if so. position -> (consumer, rule, window).
        self.queued_nacks: dict[int, tuple[str, Window, str]] = {}
        # Positions a stale copy of which was received: a second copy may or may not exist, so
        # they stay allowed for everyone but nobody *must* receive them.
        self.no_deadline: set[int] = set()
        # PLS-UNACKED-001 (consumers with maxUnackedMessagesPerConsumer): who is blocked, and when
        # an ack unblocked whom (None: unblocked by a nack or redelivery, whose timing is not owed).
        self.blocked: set[str] = set()
        self.unblocked_at: dict[str, float | None] = {}
        # Positions a consumer under its limit took as stale copies (``limit_unsure``), and the
        # consumers that those copies may hold at their limit although ``blocked`` does not say so.
        self.limit_unsure: dict[str, set[int]] = {}
        self.maybe_blocked: set[str] = set()
        self.put_back_at = float("-inf")  # the last close of a consumer, whose unseen queue the broker took back
        # Redelivery requests by ids (a nack's, a retry's), each of which unblocks its consumer whatever the ids name if
        # it reaches the broker while the consumer is blocked (``request_unblock``): (earliest, latest arrival, why).
        self.unblock_requests: dict[str, list[tuple[float, float | None, str]]] = {}
        # PLS-SHARED-003 (``_maybe_queued``): when each position's current holder's application received it (kept
        # after an ack of a held message: from then on it sits in no receiver queue), and when each consumer last
        # attached (a subscribe, a fault's reconnect, a seek's re-attach) with the permits of a fresh flow.
        self.held_since: dict[int, float] = {}
        self.attached_at: dict[str, float] = {}

    # ------------------------------------------------------------------ bookkeeping

    def _fresh_hi(self, pos: int) -> int:
        """Upper bound on the count of a never-delivered message: hidden events since it was stored."""
        stored = self.sub.stored_span(pos).start
        later = len(self.hidden_times) - bisect_left(self.hidden_times, stored)
        return self.count_hint.get(pos, 0) + later

    def _touch(self, pos: int, slot: _Slot) -> None:
        if slot.holder is None or slot.release is not None:
            self.open.add(pos)
        else:
            self.open.discard(pos)

    def _slot(self, pos: int) -> _Slot:
        slot = self.slots.get(pos)
        if slot is not None:
            return slot
        cursor = self.sub.cursor
        # Positions skipped on the way stay deliverable: give them slots (each position once).
        for q in range(self.next_fresh, pos):
            if not cursor.is_acked(q) and q not in self.slots:
                self.slots[q] = _Slot(hi=self._fresh_hi(q), base=len(self.hidden_times))
                self.open.add(q)
        slot = self.slots[pos] = _Slot(hi=self._fresh_hi(pos), base=len(self.hidden_times))
        self.next_fresh = max(self.next_fresh, pos + 1)
        return slot

    def _hi(self, slot: _Slot) -> int:
        return slot.hi + len(self.hidden_times) - slot.base

    def highest_next_count(self, pos: int) -> int:
        """PLS-ACK-005: the highest redelivery count the next copy of unacked ``pos`` may carry (a release under way
        adds its bump; a never-delivered message counts the hidden events since it was stored)."""
        slot = self.slots.get(pos)
        return self._hi(slot) + (slot.bump_hi if slot.release is not None else 0) if slot is not None else self._fresh_hi(pos)

    def held_counts(self, handle: str) -> dict[int, tuple[int, int]]:
        """Position -> the (lowest, highest) redelivery count of each copy ``handle``'s application holds and has not
        given back (no release under way)."""
        return {pos: (self.slots[pos].lo, self._hi(self.slots[pos])) for pos in sorted(self.held_by.get(handle, ()))
                if self.slots[pos].release is None}

    def not_held_unacked(self, handle: str) -> list[int]:
        """The unacked positions that ``handle``'s application does not hold (``held_counts``): released or unheld
        slots, and the never-delivered messages from ``next_fresh`` on."""
        held = set(self.held_counts(handle))
        cursor = self.sub.cursor
        listed = {p for p, slot in self.slots.items() if p not in held and not cursor.is_acked(p)}
        fresh = {p for p in range(self.next_fresh, self.sub.n_entries()) if not cursor.is_acked(p)}
        return sorted(listed | fresh)

    # ------------------------------------------------------------------ membership

    def admit(self, consumer: ConsumerConfig) -> Rejected | None:
        return None

    def connected(self) -> list[str]:
        return list(self.consumers)

    def add_consumer(self, consumer: ConsumerConfig, at: Span, start_rule: str) -> None:
        self.consumers[consumer.handle] = consumer
        self.held_by.setdefault(consumer.handle, set())
        self.start_rules[consumer.handle] = (start_rule,)
        self.attached_at[consumer.handle] = at.end  # PLS-SHARED-003: a reconnect re-adds with the first join's config

    def remove_consumer(self, handle: str, at: Span) -> None:
        self.count_events += 1
        # PLS-SHARED-002: the broker re-queues what the closed consumer held.
        inc = self.profile.shared_close_increments_redelivery_count
        lo_bump = 1 if inc else 0
        hi_bump = 0 if inc is False else 1
        for pos in sorted(self.held_by.pop(handle, set())):
            slot = self.slots[pos]
            self._release(slot, Window(at.start, at.start, at.end), "PLS-SHARED-002",
                          f"the close of {handle} at {at.start:g} ms", lo_bump, hi_bump)
            self._touch(pos, slot)
        if hi_bump:
            self.hidden_times.append(at.start)  # its unseen queue may be redelivered, count+1
        self.put_back_at = at.start  # PLS-SHARED-003: its unseen queue goes back to the broker (``_maybe_queued``)
        self.consumers.pop(handle, None)
        self.blocked.discard(handle)
        self.maybe_blocked.discard(handle)
        self.unblocked_at.pop(handle, None)
        self.unblock_requests.pop(handle, None)
        self.limit_unsure.pop(handle, None)
        for holders, *_ in self.ghosts.values():
            holders.discard(handle)  # closing drops its queue
        self.stale.pop(handle, None)
        self.fault_stale.pop(handle, None)
        self.stale_used.pop(handle, None)
        self.stale_in_hand.pop(handle, None)
        self.stale_counts.pop(handle, None)
        self.skip_before.pop(handle, None)
        self.start_rules.pop(handle, None)
        self.sole_since = at.end

    def _release(self, slot: _Slot, window: Window, rule: str, cause: str, lo_bump: int = 1, hi_bump: int = 1) -> None:
        self.count_events += 1
        slot.release = window
        slot.release_rule = rule
        slot.release_cause = cause
        slot.bump_lo = lo_bump
        slot.bump_hi = hi_bump

    def count_held_by(self, handle: str, pos: int) -> int | None:
        slot = self.slots.get(pos)
        return slot.lo if slot is not None and slot.holder == handle else None

    def count_range_held_by(self, handle: str, pos: int) -> tuple[int, int] | None:
        """PLS-ACK-005: the (lowest, highest) count the broker keeps for ``pos`` held by ``handle``: a release under way
        (a redeliver_unacked, a nack's request) may have been counted already, its copy still on the wire (model fuzz
        seed 20261221: a Java consumer's redeliver_unacked, its count-1 copy read as a stale one, then an ack of m6 in
        a transaction that timed out; the abort's copy came with count 2, which the checker had bounded by 1)."""
        slot = self.slots.get(pos)
        if slot is None or slot.holder != handle:
            return None
        return slot.lo, (self.highest_next_count(pos) if slot.release is not None else self._hi(slot))

    def defer_release(self, pos: int) -> None:
        """The release under way for ``pos`` stays allowed and owed by nobody, and is never the model's own choice
        (``Broker.take``: a copy past the dead-letter limit that no client hands to its application)."""
        slot = self.slots.get(pos)
        if slot is not None and slot.release is not None:
            slot.release = Window(slot.release.low, float("inf"), None)

    def hold_for_dead_letter(self, pos: int) -> None:
        """The client will dead-letter this delivery instead of redelivering it (PLS-DLQ-001)."""
        slot = self.slots.get(pos)
        if slot is not None:
            slot.release = None
            self._touch(pos, slot)

    def stale_count_in_hand(self, handle: str, pos: int) -> int | None:
        if pos not in self.stale_in_hand.get(handle, ()):
            return None
        return self.stale_counts.get(handle, {}).get(pos, 0)

    def drop_stale_in_hand(self, handle: str, pos: int) -> None:
        self.stale_in_hand.get(handle, set()).discard(pos)
        unsure = self.limit_unsure.get(handle)
        if unsure and pos in unsure:
            unsure.discard(pos)  # given back in either reading of that copy
            self._limit_after_release(None)

    # ------------------------------------------------------------------ what may arrive

    def _may_take(self, handle: str, pos: int) -> bool:
        """Whether ``handle`` may ever be given the waiting message at ``pos`` (Shared: any consumer may); a type that
        rules some out (Key_Shared's owners) says so here, before the message is listed."""
        return True

    def must_receive_by(self, handle: str, at: Span) -> tuple[float, str | None, str] | None:
        """Only the sole consumer is owed anything (PLS-SHARED-001); with several, nothing is listed."""
        return owed(self.options(handle, at)) if len(self.consumers) == 1 else None

    def options(self, handle: str, at: Span, focus: int | None = None) -> ReceiveOptions:
        """Allowed messages for ``handle``. Never-delivered messages are all allowed; only the first
        of them is listed (and ``focus``, if given, so the checker can match any position)."""
        if handle not in self.consumers:
            return ReceiveOptions(())
        cursor = self.sub.cursor
        n = self.sub.n_entries()
        skip = self.skip_before.get(handle, 0)
        candidates: list[Candidate] = []
        for pos in sorted(self.open):
            if pos < skip or cursor.is_acked(pos) or not self._may_take(handle, pos):
                continue
            slot = self.slots[pos]
            if slot.release is not None:
                w = slot.release
                # PLS-ACK-005: a sibling's ack reaching the broker between this redelivery's count and its dispatch
                # drops the count to 0 (live 2.11.0, 464dc4f52f60: m2 acked, redeliver_unacked, m1 came with count 0)
                usual = slot.lo + slot.bump_lo
                raced = self.count_reset_until.get(pos, float("-inf")) >= w.low
                candidates.append(Candidate(
                    pos, Window(w.low, w.canonical, None if w.high is None or pos in self.no_deadline
                                else max(w.high, self.sole_since)),
                    (slot.release_rule, "PLS-ACK-005"), slot.release_cause,
                    0 if raced else usual, self.highest_next_count(pos), kind="release",
                    count_model=usual if raced else None))
            else:
                stored = self.sub.stored_span(pos)
                delay_rules = self.sub.delivery_rules(pos)
                candidates.append(Candidate(
                    pos, Window(stored.start, stored.start,
                                None if pos in self.no_deadline else max(stored.end, self.sole_since)),
                    delay_rules + _FIRST_RULES, "not held by any consumer", slot.lo, self.highest_next_count(pos), kind="pool"))
        fresh = cursor.first_unacked(max(self.next_fresh, skip))
        wanted = [fresh] if fresh < n else []
        # PLS-DELAY-001/003: a delayed message held back does not hold back the ones after it, so
        # list fresh messages up to the first one that is eligible now.
        probe = fresh
        while probe < n and self.sub.stored_span(probe).start > at.end and len(wanted) < 64:
            probe = cursor.first_unacked(probe + 1)
            if probe < n:
                wanted.append(probe)
        if wanted and self.type_name == "Shared" and self._priorities_differ():
            # PLS-SHARED-003: the first fresh messages may be a higher-priority consumer's (filtered below); list on to
            # the first one this consumer may take, so that the model's own choice is the first deliverable message.
            probe = wanted[-1]
            while probe < n and len(wanted) < 64 and \
                    self.outranked_by(handle, self.sub.stored_span(probe).start, probe) is not None:
                probe = cursor.first_unacked(probe + 1)
                if probe < n and probe not in wanted:
                    wanted.append(probe)
        if focus is not None and focus > fresh and focus >= self.next_fresh and focus < n and not cursor.is_acked(focus) \
                and focus not in wanted:
            wanted.append(focus)
        for pos in wanted:
            stored = self.sub.stored_span(pos)
            extra = self.sub.delivery_rules(pos)
            candidates.append(Candidate(
                pos, Window(stored.start, stored.start,
                            None if pos in self.no_deadline else max(stored.end, self.sole_since)),
                (extra + self.start_rules.get(handle, ()) + _FIRST_RULES) if extra else self.start_rules.get(handle, ()) + _FIRST_RULES,
                "its deliver-at time has come" if extra else "not yet delivered to any consumer",
                0, self._fresh_hi(pos), kind="pool"))
        sure = self._sure_ghosts_of(handle)
        for pos in sure:
            _, acked_at, count_high, _ = self.ghosts[pos]
            candidates.append(queued_candidate(pos, handle, acked_at, count_high, "PLS-SHARED-001"))
        if focus is not None and focus not in sure and handle in self.ghosts.get(focus, ((),))[0]:
            _, acked_at, count_high, clock = self.ghosts[focus]
            if clock != self.count_events + len(self.hidden_times):
                count_high = 1 << 30
            candidates.append(ghost_candidate(focus, handle, acked_at, count_high))
        if focus is not None and self._is_stale(handle, focus):
            candidates.append(Candidate(
                focus, Window(float("-inf"), float("inf"), None), ("PLS-REDELIVER-001",),
                self._stale_reason(handle), 0, 1 << 30, kind="stale"))
        elif focus is not None and focus in self.fault_stale.get(handle, ()) and not self.stale_used.get(handle, {}).get(focus):
            candidates.append(Candidate(
                focus, Window(float("-inf"), float("inf"), None), ("PLS-FAULT-003",),
                "dispatched before the reconnect: at-least-once may bring it once more", 0, 1 << 30, kind="stale"))
        candidates.sort(key=lambda c: c.pos)
        candidates = self.limit_filter(handle, candidates)
        if self.type_name == "Shared" and self._priorities_differ():
            # PLS-SHARED-003: a higher-priority consumer with permits gets it first.
            candidates = [replace(c, rules=c.rules + ("PLS-SHARED-003",)) for c in candidates
                          if c.kind not in ("pool", "release") or self.outranked_by(handle, c.window.low, c.pos) is None]
        must_by = must_rule = None
        reason = ""
        if len(self.consumers) == 1:
            # The only consumer: every deliverable message must reach it (PLS-SHARED-001).
            dues = [(c.window.high, c) for c in candidates if c.window.high is not None and c.kind != "stale"]
            if dues:
                due, c = min(dues, key=lambda d: d[0])
                must_by, must_rule = due, c.rules[0]
                reason = f"{self.sub.label(c.pos)} was deliverable ({c.cause}) and {handle} is the only consumer"
        return ReceiveOptions(tuple(candidates), must_by, must_rule, reason)

    # ------------------------------------------------------------------ unacked limit (PLS-UNACKED-001)

    def pending_count(self, handle: str) -> int:
        """Messages ``handle``'s application received and has not acked or given back."""
        return sum(1 for p in self.held_by.get(handle, ()) if self.slots[p].release is None)

    def upper_count(self, handle: str) -> int:
        """The most the broker may count against ``handle``'s limit: ``pending_count`` plus the stale
        copies in its application that may have been the broker's own dispatch (``limit_unsure``)."""
        return self.pending_count(handle) + len(self.limit_unsure.get(handle, ()))

    def limit_filter(self, handle: str, candidates: list[Candidate]) -> list[Candidate]:
        """PLS-UNACKED-001: a blocked consumer gets no dispatched message (copies already in its queue
        aside); once an ack unblocked it, what it may receive is owed from the broker seeing that ack.
        A consumer that may be at its limit (``maybe_blocked``) may receive anything, owed nothing."""
        consumer = self.consumers.get(handle)
        if consumer is None or not consumer.max_unacked:
            return candidates
        if handle in self.blocked:
            requests = self.unblock_requests.get(handle)
            if not requests:
                return [c for c in candidates if c.kind in ("stale", "ghost")]
            since, _, why = min(requests)
            # allowed from the request on, never owed: whether and when it reached the broker the history cannot show
            return [c if c.kind in ("stale", "ghost") else
                    replace(c, window=Window(max(c.window.low, since), max(c.window.canonical, since), None),
                            rules=(unacked.RULE_LIMIT,) + tuple(r for r in c.rules if r != "PLS-SHARED-001"),
                            cause=c.cause + f"; {handle}, blocked at its unacked limit {consumer.max_unacked}, was "
                                            f"unblocked for one more entry by {why}")
                    for c in candidates if c.kind in ("stale", "ghost", "pool", "release")]
        maybe = handle in self.maybe_blocked
        if not maybe and handle not in self.unblocked_at:
            return candidates
        since = None if maybe else self.unblocked_at[handle]
        why = (f"; {handle} may be at its unacked limit {consumer.max_unacked} (a stale copy it took may have been "
               f"the broker's own dispatch, counted)" if maybe else
               f"; {handle} was unblocked below its unacked limit {consumer.max_unacked}")
        out = []
        for c in candidates:
            if c.kind in ("pool", "release"):
                high = None if since is None or c.window.high is None else \
                    max(c.window.high, since + consumer.client(self.profile).ack_grouping_ms)
                c = replace(c, window=Window(c.window.low, c.window.canonical, high),
                            # the limit's rule owes it (before PLS-SHARED-001's "together they get every message")
                            rules=(unacked.RULE_LIMIT,) + tuple(r for r in c.rules if r != "PLS-SHARED-001"),
                            cause=c.cause + why)
            out.append(c)
        return out

    def request_unblock(self, handle: str, window: Window, why: str) -> None:
        """PLS-UNACKED-001: ``handle`` asks the broker to redeliver ids (a nack's request, a retry's), which may reach it
        from ``since`` on. The broker then clears the consumer's blocked flag whatever the ids name, even none pending
        on it (``Consumer#redeliverUnacknowledgedMessages(List<MessageIdData>)`` sets ``blockedConsumerOnUnackedMsgs``
        false unconditionally), and the dispatcher gives an unblocked consumer at least one entry, at its limit too
        (``PersistentDispatcherMultipleConsumers#trySendMessagesToConsumers``: ``Math.max(messagesForC /
        avgBatchSizePerMsg, 1)``); that entry's ``sendMessages`` blocks it again. Live 4.2.4, Go client, limit 1:
        a nack of m2 before receiving it brought m2 at once, 10 runs in 10 (regression
        pls-unacked-001-wrong-value-e82a48cad144); the same trace with no nack: nothing.

        ``window``: when the request may reach the broker. It is kept whatever the consumer's state now: it unblocks
        the consumer if it arrives while the consumer is blocked, and is spent by the entry it lets through or by the
        consumer's next block once it surely arrived before it (``_limit_after_delivery``)."""
        self.count_events += 1  # a redelivery request (a nack of an id the broker may not know acked yet, a retry)
        consumer = self.consumers.get(handle)
        if self.type_name != "Shared" or consumer is None or not consumer.max_unacked:
            return  # (Key_Shared's dispatcher caps a consumer's permits by what its limit leaves: none at the limit)
        self.unblock_requests.setdefault(handle, []).append((window.low, window.high, why))

    def request_window(self, consumer: ConsumerConfig, at: Span, count: int) -> Window | None:
        """When ``consumer``'s nack at ``at`` sends its redelivery request, if a limit makes that matter (PLS-UNACKED-001):
        the nack's own window, computed on a copy of the Java tracker so that asking changes nothing."""
        if self.type_name != "Shared" or not consumer.max_unacked:
            return None
        return replace(consumer, nack_tracker=copy.deepcopy(consumer.nack_tracker)).nack_window(at, count, self.profile)

    def _limit_after_delivery(self, handle: str, pos: int, at: Span) -> None:
        consumer = self.consumers.get(handle)
        if consumer is None or not consumer.max_unacked:
            return
        requests = self.unblock_requests.get(handle)
        if requests and handle in self.blocked:
            requests.remove(min(requests))  # the one entry the earliest request let through is this one
        if unacked.blocks(self.pending_count(handle), consumer.max_unacked):
            self.blocked.add(handle)
            self.maybe_blocked.discard(handle)
            if requests:
                # a request that surely reached the broker before this block unblocked nothing still to come
                requests[:] = [r for r in requests if r[1] is None or r[1] >= at.start]
        elif unacked.blocks(self.upper_count(handle), consumer.max_unacked):
            self.maybe_blocked.add(handle)

    def check_modelled(self, handle: str, pos: int, candidate: Candidate | None) -> None:
        """Not modelled: a batched message counted under maxUnackedMessagesPerConsumer (the broker counts
        messages but dispatches whole entries, so a batch can overshoot the limit). ``deliver`` asks
        first, so a delivery the model cannot follow changes nothing (a generator drops the op and
        goes on with the same state)."""
        consumer = self.consumers.get(handle)
        if consumer is not None and consumer.max_unacked and (candidate is None or candidate.kind not in ("stale", "ghost")) \
                and len(self.sub.batch_of(pos)) > 1:
            raise NotModelledError("a batched message under maxUnackedMessagesPerConsumer (the broker dispatches whole entries)")

    def _limit_after_stale(self, handle: str, pos: int) -> None:
        """PLS-UNACKED-001 with PLS-REDELIVER-001: ``handle``'s application took a copy of ``pos`` read as
        one its C++ receiver queue kept across ``redeliver_unacked`` (not counted: the broker cleared the
        consumer's pending acks). Each such reading also fits the broker's own (re)dispatch of ``pos``
        to ``handle``, which is counted. Pulsar:
        - apache/pulsar ``pulsar-broker/src/main/java/org/apache/pulsar/broker/service/Consumer.java``:
          ``sendMessages`` -> ``incrementUnackedMessages`` counts every dispatched copy and sets
          ``blockedConsumerOnUnackedMsgs`` at the limit; ``redeliverUnacknowledgedMessages`` clears the
          count, the flag and the pending acks; ``removePendingAcks`` unblocks at half the limit;
        - ``.../broker/service/persistent/PersistentDispatcherMultipleConsumers.java``: a blocked
          consumer is skipped (``isBlocked``);
        - apache/pulsar-client-cpp ``lib/ConsumerImpl.cc``: ``redeliverUnacknowledgedMessages`` sends
          the command and leaves ``incomingMessages_`` as it is.
        The history cannot tell the two readings apart, so until they agree again (an ack, a nack, a
        redelivery, the broker's copy arriving) the consumer may be at its limit: what it may receive
        is not owed to it (``limit_filter``)."""
        consumer = self.consumers.get(handle)
        slot = self.slots.get(pos)
        if consumer is None or not consumer.max_unacked or (slot is not None and slot.holder == handle and slot.release is None):
            return  # unlimited, or its application already holds the broker's copy of ``pos``
        self.limit_unsure.setdefault(handle, set()).add(pos)
        if handle not in self.blocked and unacked.blocks(self.upper_count(handle), consumer.max_unacked):
            self.maybe_blocked.add(handle)

    def _limit_forget(self, pos: int, at: Span | None) -> None:
        """The stale readings of ``pos`` and the broker-copy ones agree again (acked, given back, or the
        broker's copy delivered): ``pos`` no longer counts towards anyone's ``upper_count``."""
        found = False
        for unsure in self.limit_unsure.values():
            if pos in unsure:
                unsure.discard(pos)
                found = True
        if found:
            self._limit_after_release(at)

    def _limit_after_release(self, at: Span | None) -> None:
        """Unblock consumers whose count fell to half their limit: by an ack (``at``: owed from then
        on) or by a nack / redelivery (``None``: allowed, not owed). A consumer whose own count fell
        that far while its ``upper_count`` did not stays ``maybe_blocked``."""
        for handle in list(self.blocked | self.maybe_blocked):
            consumer = self.consumers.get(handle)
            if consumer is None:
                self.blocked.discard(handle)
                self.maybe_blocked.discard(handle)
                continue
            if handle in self.blocked and unacked.unblocks(self.pending_count(handle), consumer.max_unacked):
                self.blocked.discard(handle)
                self.maybe_blocked.add(handle)
            if handle in self.maybe_blocked and unacked.unblocks(self.upper_count(handle), consumer.max_unacked):
                self.maybe_blocked.discard(handle)
                self.unblocked_at[handle] = at.start if at is not None else None

    def _priorities_differ(self) -> bool:
        return len({c.priority_level for c in self.consumers.values()}) > 1

    def outranked_by(self, handle: str, available_at: float, pos: int | None = None) -> str | None:
        """PLS-SHARED-003: a connected consumer of a higher priority than ``handle`` that surely had
        permits since ``available_at`` (so the broker gives it the message); None if there is none. A consumer under
        maxUnackedMessagesPerConsumer may have been blocked (PLS-UNACKED-001) and is never sure: live 4.0.8, Java
        campaign of 27 Nov 2026 (regression pls-shared-003-wrong-consumer-8ed7877c8e6b, 3/3), with a limit of 1 the
        level-0 consumer took m3 and the level-1 one m4."""
        found = self._outranking(handle, available_at, pos)
        return None if found is None else found[0]

    def _outranking(self, handle: str, available_at: float, pos: int | None) -> tuple[str, int | None] | None:
        """``outranked_by`` with its reason: (the consumer, None) when the whole subscription holds too few messages
        to fill its queue, (the consumer, k) when at most ``k`` messages could sit in receiver queues when the
        message at ``pos`` was dispatched (``_maybe_queued``)."""
        me = self.consumers.get(handle)
        if me is None:
            return None
        stored = self.sub.n_entries() - self.sub.start_pos
        queued: int | None = None
        for other, c in self.consumers.items():
            need = zero_permit_queue(c.receiver_queue_size)
            if not (c.priority_level < me.priority_level and c.joined_at <= available_at and need is not None
                    and not c.max_unacked):
                continue
            if stored - 1 < need:
                return other, None
            # Sharper, when ``pos`` is known: what the other consumers' applications already held cannot be in a
            # queue (up-java-a-spc-priority-consumer: c1 and c2 had received all 15 messages, renewing their permits;
            # the five later ones still went to c4). Not for a consumer whose queue may hold stale copies
            # (redeliver_unacked, a seek by another, a reconnect) or that (re)attached after ``available_at``.
            if pos is None or self.stale.get(other) or self.fault_stale.get(other) \
                    or self.attached_at.get(other, c.joined_at) > available_at:
                continue
            if queued is None:
                queued = self._maybe_queued(pos, available_at, need)
            if queued < need:
                return other, queued
        return None

    def _maybe_queued(self, pos: int, available_at: float, need: int) -> int:
        """PLS-SHARED-003: how many messages (counted up to ``need``) may sit in, or be on their way to, some receiver
        queue when the broker dispatches ``pos``, which became available at ``available_at``.

        The broker hands an entry to the highest priority level with an available consumer
        (``isConsumerAvailable``: not blocked, permits > 0), round robin within the level, and to a lower level only
        when none above is available (apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/service/
        AbstractDispatcherMultipleConsumers.java ``getNextConsumer``, ``getConsumerFromHigherPriority``,
        ``getNextConsumerFromSameOrLowerLevel``; 4.x master: ``ConsumerPrioritySelector#select``). A consumer's
        permits are its receiver queue size plus the flows it sent minus what was dispatched to it; its client sends
        a flow once half the queue's worth was processed (Java ``ConsumerImpl#increaseAvailablePermits``:
        ``available >= getCurrentReceiverQueueSize() / 2``; C++ ``ConsumerImpl::increaseAvailablePermits``), so a
        consumer with queue q is out of permits only with ``zero_permit_queue(q)`` messages dispatched to it and not
        yet received by its application. Upstream relies on it: SimpleProducerConsumerTest#testPriorityConsumer
        ("consumer1 and consumer2 now has more permits (as received and sent more permits) ... should not dispatch
        to consumer4"), and live 4.0.8 agreed, twice in two runs (tests/conformance/live_histories/
        live-4.0.8-java-shared-priority-permits-renewed.jsonl, live-4.0.8-java-shared-priority-all-received.jsonl).

        A message sits in no queue from the moment an application received it (``held_since``, at least the
        dispatch latency ``slack_ms`` before ``available_at``, so the flow it freed has reached the broker) until
        it is acked (for good) or released. Every other message that may have been dispatched by then counts: for a
        first delivery in read order (``PersistentDispatcherMultipleConsumers#readMoreEntries`` reads entries in
        order and ``trySendMessagesToConsumers`` sends them in order), the earlier entries; for a redelivery or a
        delayed message, every message stored before its dispatch may have been (or an unbounded release: all).
        Messages of the same entry travel with it and are not counted."""
        slot = self.slots.get(pos)
        released = slot is not None and slot.release is not None
        members = set(self.sub.batch_of(pos))
        # A queue put back since ``pos`` was stored (a close, a redeliver_unacked, a reconnect: ``hidden_times``) may have
        # held it unseen, so it may come after later entries: not in read order (review of 6 Dec 2026)
        put_back = max(self.hidden_times[-1] if self.hidden_times else float("-inf"), self.put_back_at) \
            >= self.sub.stored_span(pos).start
        in_order = not released and not self.sub.tracked_by_delay(pos) and not put_back
        if in_order:
            until = self.sub.stored_span(pos).end + self.slack_ms
            limit = min(members)
        else:
            high = slot.release.high if released else None  # type: ignore[union-attr]
            until = float("inf") if high is None else high + self.slack_ms
            limit = self.sub.n_entries()
        since = available_at - self.slack_ms
        count = 0
        for p in range(self.sub.start_pos, limit):
            if p in members or (not in_order and self.sub.stored_span(p).start > until):
                continue
            held_at = self.held_since.get(p)
            q = self.slots.get(p)
            out = (held_at is not None and held_at <= since and p not in self.ghosts
                   and (self.sub.cursor.is_acked(p) if q is None else
                        q.holder is not None and (q.release is None or q.release.low > until)))
            if not out:
                count += 1
                if count >= need:
                    break
        return count

    def _stale_reason(self, handle: str) -> str:
        consumer = self.consumers.get(handle)
        if consumer is not None and not consumer.client(self.profile).redeliver_keeps_receiver_queue:
            return ("on the wire at redeliver_unacked: the Java client cleared its queue, but a Shared or "
                    "Key_Shared consumer has no epoch to drop copies that land after (PIP-84)")
        return "prefetched before redeliver_unacked (C++ keeps its receiver queue)"

    def _is_stale(self, handle: str, pos: int) -> bool:
        covering = sum(1 for lo, hi, returned in self.stale.get(handle, ()) if lo <= pos < hi or pos in returned)
        return covering > self.stale_used.get(handle, {}).get(pos, 0)

    # ------------------------------------------------------------------ what happened

    def deliver(self, handle: str, pos: int, at: Span, count: int, candidate: Candidate | None) -> None:
        self.check_modelled(handle, pos, candidate)
        if candidate is not None and candidate.kind == "stale":
            used = self.stale_used.setdefault(handle, {})
            used[pos] = used.get(pos, 0) + 1
            self.stale_in_hand.setdefault(handle, set()).add(pos)
            self.stale_counts.setdefault(handle, {})[pos] = count
            slot = self.slots.get(pos)
            if slot is None or slot.holder is None or slot.release is not None:
                self.no_deadline.add(pos)
            # that copy may have been counted by the broker too (it may have been the fresh
            # delivery after all, then nacked): a later copy may carry one more
            if slot is not None:
                slot.hi = max(slot.hi, count + 1)
            else:
                self.count_hint[pos] = max(self.count_hint.get(pos, 0), count + 1)
            self._limit_after_stale(handle, pos)
            return
        self.no_deadline.discard(pos)
        in_hand = self.stale_in_hand.get(handle)
        if in_hand:
            in_hand.discard(pos)
        if candidate is not None and candidate.kind in ("ghost", "queued"):
            self.ghosts.pop(pos, None)  # there was one queued copy; it is gone
            self.sure_ghosts.pop(pos, None)
            return
        mine = self.limit_unsure.get(handle)
        if mine:
            mine.discard(pos)  # now held as the broker's copy: its upper_count is unchanged
        slot = self._slot(pos)
        if slot.holder is not None:
            self.held_by.get(slot.holder, set()).discard(pos)
        slot.holder = handle
        slot.release = None
        slot.lo = slot.hi = count
        if self.count_reset_until.get(pos, float("-inf")) >= at.start:
            slot.lo = 0  # PLS-ACK-005: a sibling's ack may reach the broker after this delivery, dropping the count
        else:
            self.count_reset_until.pop(pos, None)
        slot.base = len(self.hidden_times)
        self.held_by.setdefault(handle, set()).add(pos)
        self.held_since[pos] = at.end  # PLS-SHARED-003: out of every receiver queue from here (``_maybe_queued``)
        self._limit_after_delivery(handle, pos, at)
        self._limit_forget(pos, None)  # another consumer's stale reading of it was right
        queued = self.queued_nacks.pop(pos, None)
        consumer = self.consumers.get(handle)
        if queued is not None and queued[0] == handle:
            # It was in this consumer's queue when nacked: the broker redelivers it anyway, if it is pending on this
            # consumer when the nack tracker's request comes: Consumer#redeliverUnacknowledgedMessages(List<MessageIdData>)
            # redelivers only the positions in its pendingAcks (apache/pulsar
            # pulsar-broker/src/main/java/org/apache/pulsar/broker/service/Consumer.java). The copy was dispatched by
            # the time it had to reach the consumer (the candidate's deadline), and at the latest when the application
            # got it. Dispatched for sure before the request: owed. Else it may have been dispatched after the request
            # found nothing pending: allowed, never owed (seed 11 trace 60909: a nack of m2 before the copy a broker
            # restart gave back, which came, with no deadline, at 218 ms, the request's due time; regression
            # pls-nack-001-late-redelivery-e043c266c59b).
            window = self.queued_nack_window(queued[1], at, candidate)
            self._release(slot, window, consumer.nack_rule(self.profile) if consumer else "PLS-NACK-001", queued[2])
            self._touch(pos, slot)
            # PLS-UNACKED-001: that request also takes the copy off the consumer's count and clears its blocked flag
            # (Consumer#redeliverUnacknowledgedMessages(List)). When it reaches the broker the history cannot show, so
            # the consumer is unblocked from now, allowed and never owed (``None``): looser than the broker, which
            # blocks until the request arrives, never a false alarm (regression pls-shared-001-duplicate-delivery-e2a893d38a24)
            self._limit_after_release(None)
            return
        if consumer is not None and consumer.ack_timeout_ms:
            # PLS-ACKTIMEOUT-002/004/005: the client gives it back unless acked in time.
            self._release(slot, consumer.ack_timeout_window(at, count, self.profile), consumer.ack_timeout_rule(self.profile),
                          f"the ack timeout of {self.sub.label(pos)} (received at {at.end:g} ms)")
        self._touch(pos, slot)

    def note_empty_receive(self, handle: str, at: Span) -> None:
        return None

    @staticmethod
    def queued_nack_window(window: Window, at: Span, candidate: Candidate | None) -> Window:
        """When the request of a nack made before the application received the copy (``queued_nacks``, its ``window``)
        redelivers the copy received during ``at`` (``deliver``): owed if the copy was surely dispatched before the
        request (by the candidate's deadline, or the receipt), else allowed and never owed (no end)."""
        dispatched_by = at.end if candidate is None or candidate.window.high is None else min(at.end, candidate.window.high)
        return Window(window.low, window.canonical, None) if dispatched_by >= window.low else window

    def _sure_ghosts_of(self, handle: str) -> list[int]:
        """The acked messages surely still in ``handle``'s receiver queue (``_surely_queued``): while nothing has
        touched the queues since the ack (a close, a nack, a redelivery request, a seek, a reconnect: the count-event
        clock), and ``handle`` is still the only consumer."""
        if self.type_name != "Shared" or list(self.consumers) != [handle] or not self.queue_known() \
                or self._nack_may_purge(handle):
            return []
        clock = self.count_events + len(self.hidden_times)
        return sorted(p for p, (holder, then) in self.sure_ghosts.items()
                      if holder == handle and then == clock and p in self.ghosts)

    def _surely_queued(self, pos: int, at: Span) -> str | None:
        """The consumer whose receiver queue surely held the message at ``pos`` when an ack (or an expiry) at ``at``
        took it, or None. A consumer with permits gets the subscription's messages without asking (prefetch: Java
        ``ConsumerImpl`` and C++ ``ConsumerImpl`` grant their whole receiver queue at subscribe, half of it again as
        the application takes them), so the one consumer of a Shared subscription holds a message stored while it
        was the only one, never given to its application, with fewer messages ahead of it than half its queue, once
        the dispatch band after its storing has passed. Not for a delayed message, a transaction's, one maybe absent,
        one a tag filter may drop, one under an unacked limit, or after anything that may have put a queue back
        (a close, a redelivery request, a seek: ``hidden_times``, ``put_back_at``) or reconnected it. Live 4.0.8,
        Python (the held-out corpus of 7 Dec 2026, fz-9d079ba066e6): m2 and m3, prefetched by the only consumer of sx1,
        expired by expire_messages, and m2 still came from its queue; a lie that dropped it went unjudged while a
        queued copy was only allowed."""
        if self.type_name != "Shared" or len(self.consumers) != 1 or not self.queue_known():
            return None
        (handle, consumer), = self.consumers.items()
        if pos < self.next_fresh or pos in self.slots or pos >= self.sub.n_entries():
            return None
        if consumer.max_unacked or consumer.ack_timeout_ms or consumer.receiver_queue_size <= 0 or self.stale.get(handle) \
                or self.fault_stale.get(handle) or pos < self.skip_before.get(handle, 0) or self._nack_may_purge(handle):
            return None
        if self.sub.tracked_by_delay(pos) or self.sub.delivery_rules(pos) or pos in self.sub.topic.txn_of \
                or pos in self.sub.topic.unplaced or pos in self.sub.maybe_absent \
                or pos in getattr(self.sub, "tag_rejected", {}) or not names.is_persistent(self.sub.topic.full):
            return None
        stored = self.sub.stored_span(pos)
        touched = max(self.hidden_times[-1] if self.hidden_times else float("-inf"), self.put_back_at, self.sole_since,
                      self.attached_at.get(handle, float("inf")))
        if touched > stored.start:
            return None
        if at.start <= stored.end + self.slack_ms:
            return None
        room = max(1, consumer.receiver_queue_size // 2)
        return handle if self._maybe_in_queue_before(handle, pos, room) < room else None

    def _nack_may_purge(self, handle: str) -> bool:
        """Whether a nack tracker request of ``handle`` for a message its application has not received is still to
        come: the Java client then takes the head of its queue out if the request names it, and the next message with
        it (``ConsumerImpl#redeliverUnacknowledgedMessages(Set)`` -> ``removeExpiredMessagesFromQueue``), so what its
        queue holds is not sure (the review of 7 Dec 2026)."""
        return any(who == handle for who, _, _ in self.queued_nacks.values())

    def _maybe_in_queue_before(self, handle: str, pos: int, limit: int) -> int:
        """How many copies may sit in ``handle``'s receiver queue ahead of the message at ``pos``, taking its permits:
        every unacked message before it that its application does not hold (never delivered, or given back by a nack,
        a close, a redelivery), and every acked one whose copy may still be queued there (``ghosts``). A consumer with a
        queue of one, holding a redelivered m1 in it, has no room for m2 (the review of 7 Dec 2026). Counted up to
        ``limit`` only (a clear_backlog acks every message at once, and counting each one's whole prefix is quadratic)."""
        cursor = self.sub.cursor
        count = 0
        for q in range(self.sub.start_pos, pos):
            if cursor.is_acked(q):
                count += handle in self.ghosts.get(q, ((),))[0]
            else:
                slot = self.slots.get(q)
                count += slot is None or slot.holder != handle or slot.release is not None
            if count >= limit:
                break
        return count

    def acked(self, positions: Iterable[int], at: Span) -> None:
        positions = list(positions)
        self._entry_counts_reset(positions, at)
        for pos in positions:
            self.count_reset_until.pop(pos, None)
            self.no_deadline.discard(pos)
            for in_hand in self.stale_in_hand.values():
                in_hand.discard(pos)
            for unsure in self.limit_unsure.values():
                unsure.discard(pos)
            slot = self.slots.get(pos)
            # A copy already pushed to a receiver queue is not purged by the ack (C++): if the
            # message was not in an application's hands (never delivered, returned, released),
            # any connected consumer may hold a copy; a stale queue may hold one too.
            if slot is None or slot.holder is None or slot.release is not None:
                holders = set(self.consumers)
            else:
                holders = {h for h in self.consumers if self._is_stale(h, pos)}
            if holders:
                # a queued copy was dispatched before the ack, so its count is at most what the next copy could carry,
                # unless something that raises counts came after the ack (a client's ack reaches the broker only
                # after its grouping; the review of 84c5b02: a close in between gives another consumer count + 1)
                self.ghosts[pos] = (holders, at.start, self.highest_next_count(pos), self.count_events + len(self.hidden_times))
                sure = self._surely_queued(pos, at)
                if sure is not None:
                    self.sure_ghosts[pos] = (sure, self.count_events + len(self.hidden_times))
            if slot is None or slot.holder is None or (slot.release is not None and slot.release.low <= at.end):
                self.held_since.pop(pos, None)  # PLS-SHARED-003: not surely in an application's hands when acked
            slot = self.slots.pop(pos, None)
            if slot is not None:
                self.open.discard(pos)
                if slot.holder is not None:
                    self.held_by.get(slot.holder, set()).discard(pos)
        self._limit_after_release(at)

    def _entry_counts_reset(self, positions: list[int], at: Span) -> None:
        """PLS-ACK-005: the broker keeps one redelivery count per entry and drops it on any individual ack of that
        entry, a batch-index ack of one message included (PersistentSubscription#acknowledgeMessage ->
        ``getRedeliveryTracker().removeBatch``, apache/pulsar 4.0.8 source). So the other messages of a batch whose
        member was acked here count from 0 again, from whenever that ack reaches the broker: up to the client's ack
        grouping time later, so a redelivery in between may still carry the old count, or 0 when the ack lands
        between the redelivery's count and its dispatch. Live 4.0.8, Java, batch index ack (regression
        pls-ack-005-wrong-redelivery-count-a31e9da696b3): m1 acked, redeliver_unacked gave m2 count 1, a second one
        gave m2 count 1 again; live 2.11.0, Python (campaign finding 464dc4f52f60, 1 run in 4): m2 acked,
        redeliver_unacked gave m1 count 0."""
        acked_now = set(positions)
        cursor = self.sub.cursor
        until = at.end + self.profile.ack_grouping_ms + self.slack_ms
        for pos in positions:
            for sibling in self.sub.batch_of(pos):
                if sibling in acked_now or cursor.is_acked(sibling):
                    continue
                self.count_reset_until[sibling] = max(self.count_reset_until.get(sibling, float("-inf")), until)
                slot = self.slots.get(sibling)
                if slot is not None:
                    slot.lo = 0

    def nack(self, handle: str, pos: int, at: Span) -> None:
        self.count_events += 1
        slot = self.slots.get(pos)
        consumer = self.consumers.get(handle)
        if consumer is None:
            return
        request = self.request_window(consumer, at, slot.lo if slot is not None and slot.holder == handle else 0)
        if request is not None:
            self.request_unblock(handle, request, f"the redelivery request of the nack of {self.sub.label(pos)} at {at.start:g} ms")
        if pos in self.stale_in_hand.get(handle, ()):
            # PLS-REDELIVER-001 (C++ keeps its queue): the application nacked a stale queued copy.
            # The client's nack tracker asks the broker to redeliver the id after the delay, and the
            # broker does so only if a copy is then pending on this consumer.
            self.stale_in_hand[handle].discard(pos)
            unsure = self.limit_unsure.get(handle)
            if unsure and pos in unsure:
                unsure.discard(pos)  # given back in either reading of that copy
                self._limit_after_release(None)
            released = slot is not None and slot.release is not None and slot.release.low <= at.start
            if slot is None or slot.holder != handle or released:
                # The broker's copy is not in this application's hands: a release already under way
                # (redeliver_unacked, close, an earlier nack) stands, and whether the nack finds a
                # copy pending here the history cannot show: a later copy is allowed, never owed.
                self._queue_optional_nack(consumer, handle, pos, slot.lo if slot is not None else 0, at,
                                          f"the nack of a stale copy of {self.sub.label(pos)} at {at.start:g} ms")
                return
            # Otherwise the application also holds the broker's copy: an ordinary nack of it.
        if slot is None or slot.holder is None:
            # Not received by the application, but maybe pushed to this consumer's queue: the
            # broker redelivers it if it is pending there (measured, 4.0.8).
            window = consumer.nack_window(at, 0, self.profile)
            self.queued_nacks[pos] = (handle, window, f"the nack of {self.sub.label(pos)} at {at.start:g} ms")
            return
        # The broker only redelivers positions pending on this consumer.
        if slot.holder != handle:
            return
        if slot.release is not None and slot.release.low <= at.start:
            # A release already under way (a redeliver_unacked before the nack) stands: the broker sends the
            # message again at once, and the nack tracker's request after the delay may bring one more copy
            # (allowed, never owed). Live 4.0.8 and 4.2.4, 2026-11-27: receive m2, redeliver_unacked, nack m2:
            # m2 came back 1 ms later, count 1 (regression pls-nack-001-early-redelivery-1f6aa457679b); the model
            # had moved the redelivery to the nack's delay.
            self._queue_optional_nack(consumer, handle, pos, slot.lo, at, f"the nack of {self.sub.label(pos)} at {at.start:g} ms")
            return
        window = consumer.nack_window(at, slot.lo, self.profile)
        if slot.release is not None and slot.release.low < window.low:
            # An earlier request asks for it already (the nack of a copy its queue held, ``deliver``'s queued-nack
            # path): the broker redelivers on whichever request comes first, so the copy may come from that one's
            # time, and is owed by this nack's (live 4.0.8, regression pls-shared-001-duplicate-delivery-e2a893d38a24:
            # two count-0 copies after an admin reset, each nacked; the count-1 copy came 271 ms after the first nack,
            # 183 ms after the second, whose delay was 261 ms)
            window = Window(slot.release.low, window.canonical, window.high)
        rule = consumer.nack_rule(self.profile)
        self._release(slot, window, rule, f"the nack of {self.sub.label(pos)} at {at.start:g} ms")
        self._touch(pos, slot)
        self._limit_after_release(None)

    def _queue_optional_nack(self, consumer, handle: str, pos: int, count: int, at: Span, why: str) -> None:
        """A nack whose redelivery is allowed, never owed: the nack tracker asks the broker after the
        delay, and whether a copy is then pending on this consumer the history cannot show, so the
        window has no upper bound."""
        window = consumer.nack_window(at, count, self.profile)
        self.queued_nacks[pos] = (handle, Window(window.low, window.canonical, None), why)

    def redeliver_unacked(self, handle: str, at: Span) -> None:
        self.count_events += 1
        # What its receiver queue may hold (C++ keeps it, below): unheld or already released
        # messages, taken before this call releases those its application holds: they are in the
        # application, not in the queue, so only the broker's redelivery (count+1) brings them back.
        queued = frozenset(self.open)
        # PLS-REDELIVER-001: what this consumer held goes back at once, count+1.
        for pos in sorted(self.held_by.get(handle, set())):
            slot = self.slots[pos]
            self._release(slot, Window(at.start, at.start, at.end), "PLS-REDELIVER-001",
                          f"redeliver_unacked by {handle} at {at.start:g} ms")
            self._touch(pos, slot)
        # Unheld messages may have sat in its queue: redelivered too (count+1), and they may still
        # surface there once more: C++ keeps its queue; Java clears it, but copies on the wire
        # land in it after (no epoch on Shared and Key_Shared, see the module docstring).
        self.hidden_times.append(at.start)
        self.limit_unsure.pop(handle, None)  # the broker clears this consumer's count (Consumer.java)
        self._limit_after_release(None)
        if handle in self.consumers:
            self.stale.setdefault(handle, []).append((self.next_fresh, self.sub.n_entries(), queued))

    def redeliver_positions(self, handle: str, positions, at: Span, rule: str, why: str) -> None:
        """The client asks for these positions of ``handle``'s again (``ConsumerImpl#redeliverUnacknowledgedMessages``
        with ids, Shared only): each one the consumer holds goes back at once, count+1 (PLS-RETRY-004)."""
        self.count_events += 1
        self.request_unblock(handle, Window(at.start, at.start, at.end), f"{why} by {handle} at {at.start:g} ms")
        for pos in sorted(positions):
            slot = self.slots.get(pos)
            if slot is None or slot.holder != handle or pos not in self.held_by.get(handle, set()):
                continue
            self._release(slot, Window(at.start, at.start, at.end), rule, f"{why} by {handle} at {at.start:g} ms")
            self._touch(pos, slot)
        self._limit_after_release(None)

    def transaction_aborted(self, holders, at: Span) -> None:
        self.count_events += 1
        # PLS-TXN-009 (PersistentSubscription#endTxn -> redeliverUnacknowledgedMessages(consumer, positions)):
        # each position comes back at once to any consumer, its count one higher than the one acked.
        for pos, (handle, (low, high)) in sorted(holders.items()):
            self.ghosts.pop(pos, None)
            slot = self.slots[pos] = _Slot(holder=handle, lo=low, hi=high, base=len(self.hidden_times))
            if handle in self.consumers:
                self.held_by.setdefault(handle, set()).add(pos)
            self._release(slot, Window(at.start, at.start, at.end), "PLS-TXN-009",
                          f"the abort of the transaction {handle} acked {self.sub.label(pos)} in, at {at.start:g} ms")
            self._touch(pos, slot)
        self._limit_after_release(None)

    def reconnected(self, handle: str, unacked: frozenset[int]) -> None:
        """PLS-FAULT-003 (reference_model/faults.py): after a reconnect the broker re-dispatches what
        was unacked while copies of it dispatched on the old connection may still reach the
        application, so each message unacked at the fault may come to ``handle`` once more as a
        stale copy (at-least-once), its redelivery count unchanged."""
        self.count_events += 1
        if unacked:
            self.fault_stale[handle] = self.fault_stale.get(handle, frozenset()) | unacked

    def reset(self, pos: int, at: Span, rule: str, filter_for: tuple[str, int] | None = None,
              seeker: str | None = None) -> None:
        # Seek: all consumers are detached and re-attached; nothing is held any more. The seeking
        # C++ client clears its queue; the others keep theirs (measured, 4.0.8): what may sit
        # there can surface once more, acked or not.
        queued = (self.next_fresh, self.sub.n_entries(), frozenset(self.open))
        keep = {h: [queued] for h in self.consumers if h != seeker}
        requests = self._nack_requests_after(at)
        for p, slot in self.slots.items():
            self.count_hint[p] = max(self.count_hint.get(p, 0), self._hi(slot) + 1)
        self.slots.clear()
        self.open.clear()
        for held in self.held_by.values():
            held.clear()
        self.limit_unsure.clear()
        self._limit_after_release(None)
        self.held_since.clear()  # PLS-SHARED-003: everything is dispatched anew
        self.attached_at = {h: at.end for h in self.attached_at}  # a seek detaches and re-attaches every consumer
        self.stale = keep
        self.stale_used.clear()
        self.stale_in_hand.clear()
        self.stale_counts.clear()
        self.ghosts.clear()
        self.sure_ghosts.clear()
        self.queued_nacks = requests
        self.next_fresh = pos
        self.hidden_times.append(at.start)
        self.skip_before = {} if filter_for is None else {filter_for[0]: filter_for[1]}
        self.sole_since = at.end
        for h in self.start_rules:
            self.start_rules[h] = (rule,)

    def _nack_requests_after(self, at: Span) -> dict[int, tuple[str, Window, str]]:
        """The nack tracker's redelivery requests a seek at ``at`` does not cancel: those that may be made after it.

        A seek clears the client's receiver queue and its ack grouping, not its nack tracker (C++
        ``ConsumerImpl::seekAsyncInternal`` and ``connectionOpened`` leave ``NegativeAcksTracker`` alone;
        apache/pulsar-client-cpp lib/ConsumerImpl.cc). So a request due after the seek is still made, and the
        broker redelivers the id if a copy is pending on that consumer then (the copy the seek dispatched anew):
        allowed, never owed, as a queued nack is. Live 4.0.8, Python: nack m1, nack it again, seek to its publish
        time, receive m1 (count 0), nack it: m1 came back count 1 at 820 ms, 180 ms after that nack, whose delay
        was 263 ms, from the second nack's request (regression harness-error-model-receive-stopiteration-3f5da4a99ec1).
        With several requests for one message the earliest stands (each brings the redelivery no later)."""
        requests: dict[int, tuple[str, Window, str]] = {}

        def keep(pos: int, handle: str, window: Window, why: str) -> None:
            if window.high is not None and window.high <= at.start:
                return  # made before the seek, and answered then
            if pos in requests and requests[pos][1].low <= window.low:
                return
            requests[pos] = (handle, Window(window.low, window.canonical, None), f"{why}, made after the seek at {at.start:g} ms")

        for p, slot in self.slots.items():
            if slot.holder is not None and slot.release is not None and slot.release_rule.startswith("PLS-NACK-"):
                keep(p, slot.holder, slot.release, slot.release_cause)
        for p, (handle, window, why) in self.queued_nacks.items():
            keep(p, handle, window, why)
        return requests

    # ------------------------------------------------------------------ why not

    def explain(self, handle: str, pos: int, at: Span) -> Refusal:
        label = self.sub.label(pos)
        slot = self.slots.get(pos)
        if handle not in self.consumers:
            return Refusal("wrong-consumer", "PLS-SHARED-001", f"{handle} is not connected, yet it received {label}.")
        if handle in self.blocked and (slot is None or slot.holder != handle):
            limit = self.consumers[handle].max_unacked
            return Refusal("wrong-value", unacked.RULE_LIMIT,
                           f"Let {handle} hold {self.pending_count(handle)} unacked message(s), its maxUnackedMessagesPerConsumer "
                           f"limit being {limit}. Then the broker sends it nothing more until its acks bring that to "
                           f"{limit // 2}; it received {label} at {at.end:g} ms.")
        if slot is not None and slot.holder is not None:
            who = "it" if slot.holder == handle else slot.holder
            return Refusal(
                "duplicate-delivery", "PLS-SHARED-001",
                f"Let {label} be held by {slot.holder} (received, not acked, not nacked, not released). "
                f"Then no consumer may receive it again until {slot.holder} nacks it, times out, "
                f"calls redeliver_unacked or closes; {handle} received it at {at.end:g} ms while {who} still held it.")
        if self.type_name == "Shared" and (slot is None or slot.holder is None or slot.release is not None):
            available = slot.release.low if slot is not None and slot.release is not None else self.sub.stored_span(pos).start
            found = self._outranking(handle, available, pos)
            if found is not None:
                better, queued = found
                mine, theirs = self.consumers[handle].priority_level, self.consumers[better].priority_level
                size = self.consumers[better].receiver_queue_size
                why = (f"cannot be full with {self.sub.n_entries() - self.sub.start_pos} messages on the subscription"
                       if queued is None else
                       f"cannot be full: at most {queued} message(s) not yet received by any application could sit in "
                       f"receiver queues then, fewer than the {zero_permit_queue(size)} that leave it without permits")
                return Refusal(
                    "wrong-consumer", "PLS-SHARED-003",
                    f"Let {better} (priority level {theirs}) be connected since before {label} became available at "
                    f"{available:g} ms, with permits to spare (its receiver queue of {size} {why}). "
                    f"Then the broker dispatches {label} to it, not to {handle} (priority level {mine}); {handle} received it "
                    f"at {at.end:g} ms.")
        if pos < self.skip_before.get(handle, 0):
            return Refusal("duplicate-delivery", "PLS-SEEK-001",
                           f"{handle} sought to the id of {self.sub.label(self.skip_before[handle] - 1)}, so its client "
                           f"skips {label} (start_message_id_inclusive is false).")
        return Refusal("wrong-value", "PLS-SHARED-001", f"{label} was not deliverable to {handle} at {at.end:g} ms.")

