"""Exclusive subscriptions: one consumer, messages in order, redelivery by rewinding.

Pulsar part: ``AbstractDispatcherSingleActiveConsumer`` / ``PersistentDispatcherSingleActiveConsumer``
(broker) with the C++ client's ``ConsumerImpl`` receiver queue and redelivery trackers.
Rule ids: PLS-EXCL-001 (a second consumer is refused with ConsumerBusy), PLS-SUBTYPE-001 (a
consumer of another type is refused), PLS-EXCL-002 / PLS-PROD-002 (delivery in publish order),
PLS-NACK-003 (a nack rewinds: every unacked message comes again, in order; C++ and Java alike:
Java ``ConsumerImpl#redeliverUnacknowledgedMessages(Set)`` turns it into "redeliver all" on these
types), PLS-ACKTIMEOUT-002/004/005, PLS-REDELIVER-001, PLS-SUB-005 (a new consumer resumes at the
first unacked message). The nack and ack-timeout windows follow the consumer's client
(``ConsumerConfig.client``); the Java client also clears its receiver queue on "redeliver all",
which the oracle's stream-or-rewind choice already allows.

How it works. The broker reads the topic from a read position and pushes entries, in order, to
the one active consumer; the client queues them and the application takes them one by one. We
call that sequence the *stream*. A redelivery request on a single-active subscription cannot
target single messages ("to preserve ordering"): the C++ client turns every nack, ack timeout
or ``redeliver_unacked`` into "redeliver all", and the broker *rewinds* the read position to the
first unacked message. Measured on 4.0.8 (C++ 4.2.0): received m0, m1 (m2 prefetched), nack m0,
delay 200 ms -> m2 at once from the local queue, then m0, m1, m2 again at ~273 ms, all with
redelivery_count 0.

So a consumer may receive, at any moment:
- the next message of the current stream (messages already prefetched keep coming first, the
  client queue is FIFO), or
- once a requested rewind is eligible, the first unacked message (the start of the new stream);
  once one rewound message arrived, the old stream is gone.
A pending rewind that was requested but whose effect is indistinguishable from continuing the
stream (nothing received-and-unacked) stays *optional*: it may still cause duplicates until its
window closes.

Queued copies (C++ never purges its receiver queue, measured on 4.0.8): a message acked while
it may sit in the queue (not yet received from the stream, or re-queued by an eligible rewind)
may still surface once (a *ghost*; the checker reports it INDETERMINATE); a seek by a consumer
that is not (surely) the active one leaves the active consumer's queue as it was; a nack, even
of an acked message, still rewinds.

Not modelled: batch messages; the rewind's start position if acks race with it (acks within
the ack-grouping period of a rewind); chunking; priority levels.
Choices: the model's own choice is to rewind at the earliest instant (nack: d) and to have
prefetched nothing, so its stream and its rewinds never overlap.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from reference_model.dispatch.base import (
    Candidate,
    ConsumerConfig,
    ReceiveOptions,
    Refusal,
    owed,
    SubscriptionView,
)
from reference_model import faults
from reference_model.dispatch.shared import ghost_candidate, queued_candidate
from reference_model.profiles import Profile
from reference_model.rejections import Rejected
from reference_model.timing import Span, Window


@dataclass
class _PendingRewind:
    """A requested rewind: eligible within ``window``; ``pos`` set for ack-timeout ones."""

    window: Window
    rule: str
    cause: str
    mandatory: bool = True
    pos: int | None = None
    timing_rule: str | None = None  # the rule whose window ``window`` is (a nack's: PLS-NACK-001/004/005)


class ExclusiveDispatcher:
    type_name = "Exclusive"
    order_rule = "PLS-EXCL-002"
    order_rules = ("PLS-EXCL-002", "PLS-PROD-002")

    def __init__(self, sub: SubscriptionView, profile: Profile, slack_ms: float = 0.0):
        self.sub = sub
        self.profile = profile
        self.slack_ms = slack_ms
        self.consumers: list[ConsumerConfig] = []
        self.stream_next = 0  # the position the current stream looks at next
        self.stream_since = 0.0  # when the current stream started (a message is due from then)
        self.stream_rules: tuple[str, ...] = ()
        self.pending: list[_PendingRewind] = []
        # the latest instant by which an optional rewind that lapsed (``_expire``) may have happened: it may have put
        # a message stored by then back in the active consumer's queue, and that copy stays there after the lapse
        self.lapsed_rewind_by: float | None = None
        self.skip_before: dict[str, int] = {}  # client-side start filter after a seek by id
        # PLS-COMPACT-001: a read_compacted consumer that subscribed after a compaction reads the
        # compacted view from the cursor: the positions up to the horizon that view drops never come.
        self.compacted_skip: frozenset[int] = frozenset()
        self.compacted_horizon: int | None = None  # that compaction's horizon (PLS-COMPACT-004: past it, every message)
        self.compacted_tombstones: frozenset[int] = frozenset()  # the tombstones among them (PLS-COMPACT-006)
        # Acked messages the active consumer's queue may still hold: position -> ack instant.
        self.ghosts: dict[int, tuple[float, int]] = {}  # pos -> (ack time, highest count a queued copy may carry)
        # Of those, the ones surely in the active consumer's queue when acked (``_surely_queued``): owed to it.
        self.sure_ghosts: dict[int, str] = {}  # pos -> the consumer whose queue held it
        # Of those, the ones the stream would have pushed in order to the active consumer if at all (acked while not
        # yet received, no rewind under way, no switch possible): a queue is FIFO, so one of them surfacing means every
        # earlier one the same op removed was queued ahead of it (``queued_ahead``)
        self.stream_ghosts: set[int] = set()
        # off for ``faults.RECONNECT_WINDOW_MS`` after a reset, while the consumers subscribe again
        self.sure_from = 0.0
        # off for good once a fault, a latency or a stall made the clients' timing the client's (their reconnect
        # backoff, wider bands): the Broker's to say, from its fault log (``Broker._new_dispatcher``)
        self.queue_known: Callable[[], bool] = lambda: True
        self.read_floor: float | None = None  # the read that brought the latest stream delivery started after this
        self.empty_at: float | None = None  # when the active consumer's last receive of this stream ended empty
        # Failover only: the active consumer may change at the next dispatch (membership changed);
        # an Exclusive subscription's one consumer is always the active one.
        self.switch_possible = False

    # ------------------------------------------------------------------ membership

    def admit(self, consumer: ConsumerConfig) -> Rejected | None:
        # PLS-EXCL-001: "Exclusive consumer is already connected".
        if self.consumers:
            return Rejected("ConsumerBusy", "PLS-EXCL-001", "Exclusive consumer is already connected")
        return None

    def connected(self) -> list[str]:
        return [c.handle for c in self.consumers]

    def active(self) -> ConsumerConfig | None:
        return self.consumers[0] if self.consumers else None

    def add_consumer(self, consumer: ConsumerConfig, at: Span, start_rule: str) -> None:
        self.consumers.append(consumer)
        if len(self.consumers) == 1:
            self._start_stream(at, (start_rule,))

    def _start_stream(self, at: Span, rules: tuple[str, ...]) -> None:
        self.ghosts = {}  # a new consumer (or a new active one) starts with an empty queue
        self._queue_unknown()
        # PLS-SUB-005: a stream starts at the first unacked message (holes skipped).
        self.stream_next = self.sub.cursor.first_unacked()
        self.stream_since = at.end
        self.stream_rules = rules
        self.pending = []
        self.lapsed_rewind_by = None

    def remove_consumer(self, handle: str, at: Span) -> None:
        was_active = self.active()
        self.consumers = [c for c in self.consumers if c.handle != handle]
        self.skip_before.pop(handle, None)
        if was_active is not None and was_active.handle == handle and self.consumers:
            self._start_stream(at, self._takeover_rules())

    def _takeover_rules(self) -> tuple[str, ...]:
        return ("PLS-SUB-005",)

    # ------------------------------------------------------------------ what may arrive

    def _head(self, handle: str, start: int) -> int:
        head = self.sub.cursor.first_unacked(max(start, self.skip_before.get(handle, 0)))
        while head in self.compacted_skip:
            head = self.sub.cursor.first_unacked(head + 1)
        return head

    def _rewind_count_high(self) -> int:
        """PLS-ACK-005: the highest redelivery count a rewound copy carries (none is bumped where the profile says so)."""
        return (1 << 30) if self.profile.rewind_increments_redelivery_count else 0

    def must_receive_by(self, handle: str, at: Span) -> tuple[float, str | None, str] | None:
        return owed(self.options(handle, at))

    def options(self, handle: str, at: Span, focus: int | None = None) -> ReceiveOptions:
        active = self.active()
        if active is None or active.handle != handle:
            return ReceiveOptions(())
        n = self.sub.n_entries()
        now = at.end
        self._expire(now)
        head = self._head(handle, self.stream_next)
        rewind_start = self._head(handle, 0)
        candidates: list[Candidate] = []
        must_by: float | None = None
        must_rule: str | None = None
        must_reason = ""
        if self.pending and rewind_start < n:
            visible = not self._rewind_unseen(handle)
            if not visible:
                # A rewind now would restart exactly where the stream is: nothing to tell apart.
                self._may_have_happened_by(now)
            first = min(self.pending, key=lambda p: p.window.low)
            mandatory = [p for p in self.pending if p.mandatory]
            due = min((p.window.high for p in mandatory if p.window.high is not None), default=None) if visible else None
            window = Window(first.window.low, min(p.window.canonical for p in self.pending), due)
            # PLS-ACK-005: C++ rewinds carry no positions, so the count stays as it was (0).
            count_high = self._rewind_count_high()
            candidates.append(Candidate(
                rewind_start, window, (first.rule,) + ((first.timing_rule,) if first.timing_rule else ()), first.cause,
                count_low=0, count_high=count_high, kind="rewind"))
            if due is not None:
                must_by, must_rule, must_reason = due, first.timing_rule or first.rule, f"the rewind requested by {first.cause}"
        sure = sorted(p for p, holder in self.sure_ghosts.items()
                      if holder == handle and p in self.ghosts) if self.queue_known() else []
        sure = sure[:1]  # the queue is FIFO: the first of them comes first (``queued_ahead`` refuses the others)
        if focus is not None and focus in self.ghosts and focus not in sure and self.queued_ahead(focus) is None:
            candidates.append(ghost_candidate(focus, handle, *self.ghosts[focus]))
        queued_after: list[Candidate] = []  # the queue is FIFO: a queued copy comes in stream order
        for p in sure:
            acked_at, count_high = self.ghosts[p]
            if p > head:
                queued_after.append(queued_candidate(p, handle, acked_at, count_high, self.order_rule))
            elif p < head:  # before the stream's next message
                candidates.append(queued_candidate(p, handle, acked_at, count_high, self.order_rule))
                if must_by is None or acked_at < must_by:
                    must_by, must_rule = acked_at, self.order_rule
                    must_reason = (f"{self.sub.label(p)} sat in {handle}'s receiver queue when it was acked at {acked_at:g} ms, "
                                   "and an ack does not take a queued copy back out")
        if head < n:
            stored = self.sub.stored_span(head)
            due = max(stored.end, self.stream_since)
            candidates.append(Candidate(
                head, Window(stored.start, stored.start, due), self.order_rules + self.stream_rules + self._compacted_rules(head),
                "next message in publish order", kind="stream"))
            if must_by is None or due < must_by:
                must_by, must_rule, must_reason = due, self.order_rule, f"{self.sub.label(head)} was published and not yet delivered"
        return ReceiveOptions(tuple(candidates + queued_after), must_by, must_rule, must_reason)

    def _queue_unknown(self) -> None:
        """What the active consumer's queue holds is open again (a rewind asked for, a reset): nothing is surely in it."""
        self.sure_ghosts, self.read_floor, self.empty_at = {}, None, None
        self.stream_ghosts = set()

    def queued_ahead(self, pos: int) -> int | None:
        """An acked message that would have reached the active consumer before a queued copy of ``pos`` and did not:
        both pushed by the stream (``stream_ghosts``), it earlier in the stream and removed by the same op (one
        cumulative ack, one expiry pass: an ack of one and a broker-side removal of the other could reach the broker in
        either order), so it was there when ``pos`` went out and went out before it (the broker reads and sends in
        order); the queue is FIFO, so a copy of ``pos`` cannot come while it never came. None when there is none, or
        while a rewind is under way, a switch of the active consumer is possible, or a fault made the queue the
        client's. Held-out lies of 7 Dec 2026 (Java, Failover): m1, m2 and m3 cumulatively acked before m1 was
        received, m2 then came from the queue, and a lie that dropped m1's receipt went unjudged."""
        if pos not in self.stream_ghosts or pos not in self.ghosts or self.pending or self.switch_possible \
                or not self.queue_known():
            return None
        acked_at = self.ghosts[pos][0]
        entry = set(self.sub.batch_of(pos))  # one entry's messages travel together, and a client drops each one it
        # already acked as the entry arrives (Java ``isDuplicate``, by batch index: live 4.0.8, a cumulative ack by the
        # producer's batch id before the entry came, then m3 alone of m1..m3; tests/conformance/test_producer_batch_id_ack.py)
        return next((p for p in sorted(self.stream_ghosts) if p < pos and p in self.ghosts and p not in entry
                     and self.ghosts[p][0] == acked_at), None)

    def _dispatch_from(self) -> float:
        """From when the broker reads for the active consumer (a Failover subscription waits after a change)."""
        return self.stream_since

    def _surely_queued(self, pos: int, at: Span, just_acked: Iterable[int] = ()) -> bool:
        """Whether the message at ``pos``, not yet received from the stream, was surely pushed to the active consumer's
        receiver queue before an ack at ``at``: a consumer with permits gets the stream's messages without asking
        (prefetch; Java ``ConsumerImpl`` and C++ ``ConsumerImpl`` grant their whole receiver queue at subscribe, half of
        it again as the application takes them), in order. Surely, if

        - the read that brought the stream's latest delivery started after the message was stored (the consumer's
          receive before that delivery ended empty more than the band before it: the read came after), so the same
          read took it (fewer than 100 entries ahead of it, the broker's ``dispatcherMaxReadBatchSize``); or
        - the ack came more than the band after the message was due to the active consumer.

        Either way, with fewer messages ahead of it than half the receiver queue, no rewind under way and no switch of
        the active consumer possible. Live 4.0.8, Java (held-out campaigns of 7 Dec 2026): a Failover consumer got m1,
        cumulatively acked m3, and got m2 from its queue; an Exclusive consumer's m7, expired 1.1 s after it was sent,
        came from its queue too. A lie that dropped either went unjudged while every queued copy was only allowed."""
        if not self._streamed(pos) or not self.queue_known():
            return False
        active = self.active()
        room = max(1, active.receiver_queue_size // 2)
        ahead = pos - self.stream_next
        if active.receiver_queue_size > 0 and ahead < room:
            ahead += self._maybe_requeued_ahead(just_acked, room - ahead)
        if active.receiver_queue_size <= 0 or ahead >= room:
            return False
        stored = self.sub.stored_span(pos)
        if self.read_floor is not None and self.read_floor > max(stored.end, self.sure_from) and ahead < 100:
            return True
        return at.start > max(stored.end, self._dispatch_from(), self.sure_from) + self.slack_ms

    def _maybe_requeued_ahead(self, just_acked: Iterable[int], limit: int) -> int:
        """How many copies a lapsed rewind (``lapsed_rewind_by``) may have put back in the active consumer's queue ahead
        of the stream, taking its permits (counted up to ``limit``): the messages the stream already gave, stored by
        then, and not acked before it (still unacked, acked by ``just_acked``, or acked since while maybe queued:
        ``ghosts``). The review of 7 Dec 2026: a Java consumer with a queue of one, m1 received again after its nack's
        rewind, m2 sent, then clear_backlog; the rewind may have come after that receipt, put m1 back and taken the
        one permit, so m2 was never pushed, and the checker owed it."""
        if self.lapsed_rewind_by is None:
            return 0
        gone = set(just_acked)
        count = 0
        for q in range(self.sub.start_pos, min(self.stream_next, self.sub.n_entries())):
            if self.sub.stored_span(q).start > self.lapsed_rewind_by:
                break  # stored in order: the rest came after the rewind
            if not self.sub.cursor.is_acked(q) or q in gone or q in self.ghosts:
                count += 1
                if count >= limit:
                    break
        return count

    def _streamed(self, pos: int) -> bool:
        """Whether the stream pushes the message at ``pos`` to the active consumer in its turn if it pushes it at all:
        an established active consumer, no switch possible, and nothing that keeps the message out of the stream (a
        compacted view, a transaction's message, held back until its commit or never readable, a message maybe absent,
        maybe on another partition or never stored, the consumer's own skip)."""
        active = self.active()
        if active is None or self.pending or self.switch_possible or pos >= self.sub.n_entries():
            return False
        return not (pos in self.compacted_skip or pos < self.skip_before.get(active.handle, 0)
                    or pos in self.sub.topic.txn_of or pos in self.sub.topic.unplaced or pos in self.sub.maybe_absent)

    def _compacted_rules(self, head: int) -> tuple[str, ...]:
        """The compaction rule that says ``head`` comes next to a read_compacted consumer: PLS-COMPACT-001 up to the
        horizon (the compacted view), PLS-COMPACT-004 past it (every message, as published)."""
        if self.compacted_horizon is None:
            return ()
        return ("PLS-COMPACT-001",) if head <= self.compacted_horizon else ("PLS-COMPACT-004",)

    def _rewind_unseen(self, handle: str, just_acked: Iterable[int] = ()) -> bool:
        """Whether a rewind would restart exactly where ``handle``'s stream is (there is something to rewind to), so
        nothing would tell it apart from the stream going on: as ``options`` sees it, before the acks of ``just_acked``
        (the cursor has them already; the state before them held since the last event)."""
        def head(start: int) -> int:
            floor = max(start, self.skip_before.get(handle, 0))
            return min([self._head(handle, start)] + [p for p in just_acked if p >= floor and p not in self.compacted_skip])
        rewind_start = head(0)
        return rewind_start < self.sub.n_entries() and rewind_start >= head(self.stream_next)

    def _may_have_happened_by(self, now: float) -> None:
        """Every rewind requested by ``now`` may have happened (unseen, or with the one just delivered): optional from
        here on, never owed."""
        for p in self.pending:
            if p.window.low <= now:
                p.mandatory = False

    def _expire(self, now: float) -> None:
        # Optional rewinds (possibly merged into one already seen) lapse when their window closes; what one may have
        # put back in the queue by then is remembered (``lapsed_rewind_by``).
        kept = []
        for p in self.pending:
            if not self._lapsed(p, now):
                kept.append(p)
            else:
                by = p.window.high + self.slack_ms
                self.lapsed_rewind_by = by if self.lapsed_rewind_by is None else max(self.lapsed_rewind_by, by)
        self.pending = kept

    def _lapsed(self, rewind: "_PendingRewind", now: float) -> bool:
        """Whether the requested ``rewind`` lapsed by ``now``: optional, and its window closed (the band past it) before."""
        return not rewind.mandatory and rewind.window.high is not None and rewind.window.high + self.slack_ms < now

    def _lapsed_before_delivery(self, at: Span, rewound: bool) -> None:
        """A delivery at ``at`` came after every optional rewind whose window closed before it: what such a rewind put
        back in the queue was ahead of this message (the client cleared its queue for the rewind, and the rewind
        restarts at the first unacked message), so it is gone, and nothing of it is left to surface after an ack.
        Forgotten here whether ``_expire`` had already moved the rewind to ``lapsed_rewind_by`` or it was still pending
        (the model target and the checker ask for options at different instants). Not for a rewind's own delivery,
        which takes the first of the pending rewinds (``deliver``)."""
        if self.lapsed_rewind_by is not None and self.lapsed_rewind_by < at.start:
            self.lapsed_rewind_by = None
        if not rewound:
            self.pending = [p for p in self.pending if not self._lapsed(p, at.start)]

    def _rewind_may_requeue(self, pos: int, at: Span) -> bool:
        """Whether a rewind may have put a copy of the message at ``pos`` back in the active consumer's queue by
        ``at``: one under way that was eligible (its window opened), or one that lapsed after the message was stored
        (a rewind restarts from what is stored when it happens) and before any later delivery
        (``_lapsed_before_delivery``). The same answer whether a lapsed optional rewind was dropped by an earlier
        ``options`` call or by the ack's own ``_expire`` (the model target and the checker ask for options at different
        instants): live 4.0.8, Java, the review of the fix for
        pls-excl-002-lost-message-e71d1a3376e5: a Failover nack's optional rewind lapsed, clear_backlog acked m1 3 s
        later, and m1 still came from c1's queue."""
        if any(p.window.low <= at.start for p in self.pending):
            return True
        return self.lapsed_rewind_by is not None and self.sub.stored_span(pos).start <= self.lapsed_rewind_by

    # ------------------------------------------------------------------ what happened

    def deliver(self, handle: str, pos: int, at: Span, count: int, candidate: Candidate | None) -> None:
        now = at.end
        if candidate is not None and candidate.kind in ("ghost", "queued"):
            self.ghosts.pop(pos, None)
            self.sure_ghosts.pop(pos, None)
            self.stream_ghosts.discard(pos)
            return
        self._lapsed_before_delivery(at, rewound=candidate is not None and candidate.kind == "rewind")
        if candidate is None or candidate.kind == "stream":
            # the read that brought it started after it was stored, and after the last empty receive (less the band)
            floor = self.sub.stored_span(pos).start
            if self.empty_at is not None:
                floor = max(floor, self.empty_at - self.slack_ms)
            self.read_floor = floor if self.read_floor is None else max(self.read_floor, floor)
        if candidate is not None and candidate.kind == "rewind":
            # The rewind happened: the old stream is gone (FIFO), the new one continues after pos.
            self.pending.sort(key=lambda p: p.window.low)
            consumed = self.pending.pop(0)
            self._may_have_happened_by(now)  # may have been sent in the same redeliver request
            # C++ clears its unacked-message (ack-timeout) tracker on "redeliver all".
            self.pending = [p for p in self.pending if p.pos is None]
            self.stream_rules = (consumed.rule,)
        elif self.pending and self._head(handle, 0) == pos:
            # A rewind would have started at this very message: it may have been absorbed, so
            # it may still show (optional) but need not.
            self._may_have_happened_by(now)
        self.stream_next = pos + 1
        consumer = self.active()
        if consumer is not None and consumer.ack_timeout_ms:
            # PLS-ACKTIMEOUT-002/004/005: tracked from the moment the application received it.
            self.pending = [p for p in self.pending if p.pos != pos]
            self._queue_unknown()  # a rewind is asked for: the Java client clears its queue for it
            self.pending.append(_PendingRewind(
                consumer.ack_timeout_window(at, count, self.profile), consumer.ack_timeout_rule(self.profile),
                f"the ack timeout of {self.sub.label(pos)} (received at {at.end:g} ms)", pos=pos))

    def note_empty_receive(self, handle: str, at: Span) -> None:
        active = self.active()
        if active is not None and active.handle == handle:
            self.empty_at = at.end  # its queue held nothing of this stream then

    def acked(self, positions: Iterable[int], at: Span) -> None:
        gone = set(positions)
        # What a rewind under way may have done by the ack is settled at the ack, not when someone next asks for
        # options: the model target asks at its own instants and the checker at the observed ones, and a rewind left
        # in one run only kept a sure queued copy out of that run. A rewind that would restart where the stream is may
        # have happened unseen (as ``options`` says), and an optional one whose window closed lapses (model seed
        # 20261222, regression pls-excl-002-lost-message-e71d1a3376e5: the checker owed m2 from c1's queue, the model's
        # run did not; the review of that fix: a Failover nack's rewind made optional by the checker's empty receive
        # only, then an ack, and the checker owed m1)
        active = self.active()
        if active is not None and self._rewind_unseen(active.handle, gone):
            self._may_have_happened_by(at.start)
        self._expire(at.start)
        # Not yet received from the stream, or possibly re-queued by an eligible rewind: a copy
        # may sit in the active consumer's queue and surface after the ack (C++).
        for pos in gone:
            rewind_eligible = self._rewind_may_requeue(pos, at)
            if pos >= self.stream_next or rewind_eligible:
                # PLS-ACK-005: a queued copy carries the count it was pushed with: 0 from the stream, and from a rewind
                # only what a rewind gives (the rewind candidate's range)
                self.ghosts[pos] = (at.start, self._rewind_count_high() if rewind_eligible else 0)
                if not rewind_eligible and pos >= self.stream_next and self._surely_queued(pos, at, gone):
                    self.sure_ghosts[pos] = self.active().handle
                if not rewind_eligible and pos >= self.stream_next and self._streamed(pos):
                    self.stream_ghosts.add(pos)
        if gone:
            self.pending = [p for p in self.pending if p.pos is None or p.pos not in gone]
        active = self.active()
        if active is not None and self._head(active.handle, 0) >= self.sub.n_entries():
            # Everything is acked (or held by a transaction's pending ack): a rewind already eligible has nothing left
            # to bring, and owes nothing later; a message an abort gives back comes with the abort's own rewind
            # (PLS-TXN-009; model seed 20261207 trace 54235: redeliver_unacked, then an ack of m4 in a transaction that
            # timed out, and the checker owed m4 from the redeliver)
            self._may_have_happened_by(at.start)

    def nack(self, handle: str, pos: int, at: Span) -> None:
        consumer = self._consumer(handle)
        if consumer is None:
            return
        # PLS-NACK-003: on a single-active subscription a nack becomes "redeliver all" = rewind.
        self.pending = [p for p in self.pending if p.pos != pos]
        # the count of a rewound delivery stays 0, so a Java backoff always waits next(0) (PLS-NACK-004)
        window = consumer.nack_window(at, 0, self.profile)
        self._queue_unknown()  # a rewind is asked for: the Java client clears its queue for it
        self.pending.append(_PendingRewind(window, "PLS-NACK-003", f"the nack of {self.sub.label(pos)} at {at.start:g} ms",
                                           timing_rule=consumer.nack_rule(self.profile)))

    def redeliver_unacked(self, handle: str, at: Span) -> None:
        if self._consumer(handle) is None:
            return
        # PLS-REDELIVER-001: a position-less redeliver rewinds at once. With nothing unacked to rewind to then (every
        # message acked, or held by a transaction's pending ack, which the dispatcher filters out), it owes nothing
        # later: a message the transaction's abort gives back comes with the abort's own rewind (PLS-TXN-009; model
        # seed 1272, regression pls-redeliver-001-late-redelivery-bd4feab04e12: the checker owed m3 from the
        # redeliver at 600 ms, while broker and model gave it at the transaction's timeout)
        self._queue_unknown()  # a rewind is asked for: the Java client clears its queue for it
        self.pending.append(_PendingRewind(Window(at.start, at.end, at.end), "PLS-REDELIVER-001",
                                           f"redeliver_unacked at {at.start:g} ms",
                                           mandatory=self._head(handle, 0) < self.sub.n_entries()))

    def transaction_aborted(self, holders, at: Span) -> None:
        # PLS-TXN-009: an abort on a single-active subscription redelivers as a redeliver does: a rewind
        if holders and self.active() is not None:
            self._queue_unknown()  # a rewind is asked for: the Java client clears its queue for it
            self.pending.append(_PendingRewind(Window(at.start, at.end, at.end), "PLS-TXN-009",
                                               f"the abort at {at.start:g} ms of a transaction that acked "
                                               + ", ".join(self.sub.label(p) for p in sorted(holders))))

    def reset(self, pos: int, at: Span, rule: str, filter_for: tuple[str, int] | None = None,
              seeker: str | None = None) -> None:
        # PLS-SEEK-*: the broker resets the cursor; the seeking C++ client clears its receiver
        # queue, but another (active) consumer keeps what it had prefetched (measured, 4.0.8).
        active = self.active()
        keep = {}
        uncertain = active is None or self.switch_possible
        if uncertain or active.handle != seeker:
            start = self.sub.cursor.first_unacked() if uncertain else self.stream_next
            keep = dict(self.ghosts)
            keep.update({p: (at.start, self._rewind_count_high()) for p in range(start, self.sub.n_entries())})
        self.skip_before = {}
        if filter_for is not None:
            self.skip_before[filter_for[0]] = filter_for[1]
        self.stream_next = pos
        self.stream_since = at.end
        self.stream_rules = (rule,)
        self.pending = []
        self.ghosts = keep
        self._queue_unknown()
        self.sure_from = max(self.sure_from, at.end + faults.RECONNECT_WINDOW_MS)  # the consumers subscribe again

    def count_held_by(self, handle: str, pos: int) -> int | None:
        return None  # a rewind redelivers with count 0: nothing is ever dead-lettered (PLS-DLQ-005)

    def hold_for_dead_letter(self, pos: int) -> None:
        raise AssertionError("Exclusive/Failover never dead-letter (PLS-DLQ-005): count_held_by is None")

    def stale_count_in_hand(self, handle: str, pos: int) -> int | None:
        return None  # no stale copies here, and nothing is dead-lettered (PLS-DLQ-005)

    def drop_stale_in_hand(self, handle: str, pos: int) -> None:
        raise AssertionError("Exclusive/Failover never dead-letter (PLS-DLQ-005): stale_count_in_hand is None")

    def _consumer(self, handle: str) -> ConsumerConfig | None:
        return next((c for c in self.consumers if c.handle == handle), None)

    # ------------------------------------------------------------------ why not

    def explain(self, handle: str, pos: int, at: Span) -> Refusal:
        label = self.sub.label(pos)
        active = self.active()
        if active is None or active.handle != handle:
            who = active.handle if active else "nobody"
            return Refusal("wrong-consumer", "PLS-FAILOVER-003",
                           f"{handle} is not the active consumer ({who} is), so it may receive nothing; it received {label}.")
        n = self.sub.n_entries()
        head = self._head(handle, self.stream_next)
        if pos in self.compacted_tombstones:
            return Refusal("wrong-value", "PLS-COMPACT-006",
                           f"Let {handle} read compacted after a compaction whose horizon is at or past {label}, a "
                           f"tombstone (an empty or null value). Then the tombstone deleted its key from the compacted "
                           f"view and is not in it; it came.")
        if pos in self.compacted_skip:
            return Refusal("wrong-value", "PLS-COMPACT-001",
                           f"Let {handle} read compacted after a compaction whose horizon is at or past {label}. Then "
                           f"{label} is not in the compacted view (a later message of its key, or a tombstone, "
                           f"supersedes it, or it has no key), so it never comes; it came.")
        if pos < head:
            return Refusal("duplicate-delivery", self.order_rule,
                           f"{label} was already delivered to {handle} and no rewind (nack, ack timeout, "
                           f"redeliver_unacked) was eligible at {at.end:g} ms; the next message in order was "
                           f"{self.sub.label(head) if head < n else 'none'}.")
        return Refusal("order-violation", self.order_rule,
                       f"Let the stream of {handle} be at {self.sub.label(head) if head < n else 'the end'}. "
                       f"Then messages arrive in publish order, but {label} came first.")
