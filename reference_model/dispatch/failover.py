"""Failover subscriptions on a non-partitioned topic: one active consumer, the others wait.

Pulsar part: ``AbstractDispatcherSingleActiveConsumer#pickAndScheduleActiveConsumer`` (broker).
Rule ids: PLS-FAILOVER-003 (exactly one consumer is active and gets every message; the broker
picks it with a consistent-hash ring of consumer names keyed by the topic name),
PLS-FAILOVER-002 (when the active consumer leaves, another becomes active and receives the
unacked messages), PLS-FAILOVER-001 (withdrawn: "first in connection order" is what the docs
say, not what 4.x does), PLS-SUBTYPE-001, and Exclusive's delivery rules.

Delivery to the active consumer is exactly Exclusive's (stream plus rewinds, ``exclusive.py``);
what differs is admission (any number of Failover consumers) and who is active:
- The broker re-picks the active consumer whenever a consumer joins or leaves: each consumer
  name owns 100 points ``murmur3(name + j)`` of a ring, the topic's full name hashes to a point,
  and the owner of the next point is active (``routing.failover_active_consumer``). A switch after a join
  is applied after ``activeConsumerFailoverDelayTimeMillis`` (1000 ms); the new active consumer's
  stream starts at the first unacked message (the cursor is rewound for it).
- The topic's full name includes the namespace, which a live target picks per run; so the
  checker cannot know the ring's answer. As an oracle the dispatcher therefore accepts any
  connected consumer as the active one until a delivery shows which it is, and again after each
  join or leave. The model's own choice is the ring's pick for its own topic name.
- Messages already in flight to a consumer that lost the active role may still surface there
  (a *former* stream), once per message, as the C++ queue drains.

On a partition p of a partitioned topic (``partition_index`` set by the broker) the pick is
PLS-FAILOVER-004 instead: consumers sorted by name (Java ``String.compareTo``), active =
``sorted[p mod k]``. That depends on names only, so when every consumer has a ``consumer_name``
the checker allows a takeover by the predicted consumer alone.

Priority levels (Java ``priorityLevel``, PLS-FAILOVER-005): the broker sorts consumers by
priority level first, and only the consumers sharing the best (lowest) level take part: the ring
(non-partitioned topic) and ``sorted[p mod k]`` (partition p) are over them alone. So once a
consumer of a better level has joined, a consumer of a worse level may only drain what was
already in flight to it: messages published before the switch could take effect (the join plus
``activeConsumerFailoverDelayTimeMillis``).

Not modelled: priority levels on the partitioned pick beyond the sort (PLS-FAILOVER-004 covers it).
Choices: consumers without ``consumer_name`` are named by their trace handle in the ring.
"""

from __future__ import annotations

from dataclasses import replace

from reference_model.dispatch.base import Candidate, ConsumerConfig, ReceiveOptions, Refusal
from reference_model.dispatch.exclusive import ExclusiveDispatcher
from reference_model.dispatch.shared import ghost_candidate
from reference_model import routing
from reference_model.rejections import Rejected
from reference_model.timing import Span, Window


_RING_CACHE: dict[tuple[int, str, tuple[str, ...]], str] = {}  # pure function: safe to memoise


class FailoverDispatcher(ExclusiveDispatcher):
    type_name = "Failover"
    order_rule = "PLS-FAILOVER-003"
    order_rules = ("PLS-FAILOVER-003",)

    partition_index = -1  # >= 0: this dispatcher serves partition p (PLS-FAILOVER-004)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.active_handle: str | None = None  # known active consumer, if established
        self.switch_possible = False  # membership changed since it was established
        self.former: dict[str, int] = {}  # consumer -> next position of a stream it lost
        self.changed_at = 0.0
        self.takeover_rule = "PLS-FAILOVER-003"
        self.outranked_at: dict[str, float] = {}  # consumer -> when a better-priority consumer joined

    def admit(self, consumer: ConsumerConfig) -> Rejected | None:
        return None  # any number of Failover consumers may connect

    # ------------------------------------------------------------------ who is active

    def _name(self, c: ConsumerConfig) -> str:
        return c.consumer_name or c.handle

    def _levels_rank(self) -> bool:
        """Whether priority levels decide who may be active here: on a partition, and on a non-partitioned topic
        from 3.0 on (``Profile.failover_priority_non_partitioned``)."""
        return self.partition_index >= 0 or self.profile.failover_priority_non_partitioned

    def best(self) -> list[ConsumerConfig]:
        """PLS-FAILOVER-005: the consumers sharing the best (lowest) priority level, in connection order (every
        consumer where levels do not rank)."""
        if not self.consumers:
            return []
        if not self._levels_rank():
            return list(self.consumers)
        level = min(c.priority_level for c in self.consumers)
        return [c for c in self.consumers if c.priority_level == level]

    def ring_pick(self) -> str | None:
        """The handle the broker's ring picks for the model's own topic name (canonical)."""
        # PLS-FAILOVER-004 (partition p: sorted by priority, then name; sorted[p mod k]) or
        # PLS-FAILOVER-003 (the ring keyed by the topic name), over the best priority level only.
        best = self.best()
        if not best:
            return None
        names = [self._name(c) for c in best]
        topic = self.sub.topic.full
        key = (self.partition_index, topic, tuple(names))
        if key not in _RING_CACHE:
            _RING_CACHE[key] = routing.failover_active_consumer(self.partition_index, names, topic=topic)
        # two consumers sharing a name: the first connected of them
        return next(c.handle for c in best if self._name(c) == _RING_CACHE[key])

    def active(self) -> ConsumerConfig | None:
        if self.active_handle is None:
            return None
        return self._consumer(self.active_handle)

    def add_consumer(self, consumer: ConsumerConfig, at: Span, start_rule: str) -> None:
        for c in self.consumers:
            if c.priority_level > consumer.priority_level and self._levels_rank():
                self.outranked_at.setdefault(c.handle, at.end)  # PLS-FAILOVER-005
        if any(c.priority_level < consumer.priority_level for c in self.consumers) and self._levels_rank():
            self.outranked_at[consumer.handle] = float("-inf")  # never eligible while the better one stays
        self.consumers.append(consumer)
        self.changed_at = at.end
        if len(self.consumers) == 1:
            self.active_handle = consumer.handle
            self.switch_possible = False
            self._start_stream(at, (start_rule,))
        else:
            self.switch_possible = True  # PLS-FAILOVER-003: the ring may now pick the newcomer

    def reset(self, pos: int, at: Span, rule: str, filter_for: tuple[str, int] | None = None,
              seeker: str | None = None) -> None:
        """A seek (PLS-SEEK-*): as on Exclusive, and the activation delay starts again. The broker disconnects
        the subscription's consumers before it resets the cursor, they subscribe again, and the
        single-active-consumer dispatcher waits ``activeConsumerFailoverDelayTimeMillis`` (1 s) before it reads
        for the active one (PLS-FAILOVER-003). Measured 27 Nov 2026 (Python client, one consumer): after
        ``seek(earliest)`` the message came 1 036 ms after the seek returned on 4.0.8, and not within 100 ms on
        3.3.6 (the 3.3.6 campaign's finding, conformance/regressions/pls-failover-003-lost-message-e9b400235bac)."""
        super().reset(pos, at, rule, filter_for, seeker)
        self.changed_at = at.end

    def remove_consumer(self, handle: str, at: Span) -> None:
        self.consumers = [c for c in self.consumers if c.handle != handle]
        self.skip_before.pop(handle, None)
        self.former.pop(handle, None)
        self.outranked_at.pop(handle, None)
        best = {c.handle for c in self.best()}
        for h in [h for h in self.outranked_at if h in best]:
            del self.outranked_at[h]  # nobody better is left: it may be picked again
        self.changed_at = at.end
        if handle == self.active_handle:
            # PLS-FAILOVER-002: another consumer takes over from the first unacked message.
            self.active_handle = None
            self.pending = []
            self.takeover_rule = "PLS-FAILOVER-002"
            self.stream_since = at.end
            if len(self.consumers) == 1:
                self.active_handle = self.consumers[0].handle
                self.switch_possible = False
                self._start_stream(at, ("PLS-FAILOVER-002",))
        elif self.consumers:
            self.switch_possible = len(self.consumers) > 1

    def _dispatch_from(self) -> float:
        """PLS-FAILOVER-003: the broker reads for the active consumer once the activation delay after a change ran out."""
        return max(self.stream_since, self.changed_at + self.activation_delay_ms())

    def activation_delay_ms(self) -> int:
        """PLS-FAILOVER-003: how long after a join or leave the broker waits before it reads for the active consumer
        (``activeConsumerFailoverDelayTimeMillis``); 0 on a non-persistent topic: its dispatcher
        (``NonPersistentDispatcherSingleActiveConsumer#scheduleReadOnActiveConsumer``) has nothing to read and sends
        each message to the active consumer of the moment."""
        return 0 if self.sub.topic.full.startswith("non-persistent://") else self.profile.failover_activation_delay_ms

    # ------------------------------------------------------------------ what may arrive

    def options(self, handle: str, at: Span, focus: int | None = None) -> ReceiveOptions:
        if self._consumer(handle) is None:
            return ReceiveOptions(())
        if handle in self.outranked_at:
            return self._outranked_options(handle, at, focus)
        if handle == self.active_handle:
            opts = super().options(handle, at, focus)
            if opts.must_by is not None:
                # PLS-FAILOVER-003: nothing is owed before the activation delay after a change ran out
                opts = replace(opts, must_by=max(opts.must_by, self.changed_at + self.activation_delay_ms()))
            if self.switch_possible:
                cands = opts.candidates
                if self.partition_index >= 0 and all(c.consumer_name for c in self.consumers) and self.ring_pick() != handle:
                    # PLS-FAILOVER-004: it is losing the role; what it had queued may still come,
                    # but the model's own choice is the predicted consumer.
                    cands = tuple(replace(c, window=Window(c.window.low, float("inf"), None)) for c in cands)
                return ReceiveOptions(cands)  # a switch may be under way: no deadline
            return opts
        candidates: list[Candidate] = []
        n = self.sub.n_entries()
        if focus is not None and focus in self.ghosts:
            # Any consumer may have been the active one with this message queued (ring unknown).
            candidates.append(ghost_candidate(focus, handle, *self.ghosts[focus]))
        if handle in self.former:
            head = self._head(handle, self.former[handle])
            if head < n:
                stored = self.sub.stored_span(head)
                candidates.append(Candidate(head, Window(stored.start, float("inf"), None), ("PLS-FAILOVER-003",),
                                            "already in flight before it lost the active role", kind="former"))
        names_known = self.partition_index >= 0 and all(c.consumer_name for c in self.consumers)
        if (self.active_handle is None or self.switch_possible) and (not names_known or self.ring_pick() == handle):
            start = self._head(handle, 0)
            if start < n:
                stored = self.sub.stored_span(start)
                canonical = stored.start if self.ring_pick() == handle else float("inf")
                levels = len({c.priority_level for c in self.consumers}) > 1
                candidates.append(Candidate(
                    start, Window(stored.start, max(canonical, self.changed_at) if canonical != float("inf") else canonical, None),
                    (self.takeover_rule,) + (("PLS-FAILOVER-004",) if names_known else ())
                    + (("PLS-FAILOVER-005",) if levels else ()),
                    f"{handle} may have become the active consumer", kind="takeover"))
        return ReceiveOptions(tuple(candidates))

    def _outranked_options(self, handle: str, at: Span, focus: int | None) -> ReceiveOptions:
        """PLS-FAILOVER-005: a consumer below the best priority level may only drain what was in flight
        to it before the switch took effect; nothing is owed to it and the model's choice is to give it nothing."""
        cutoff = self.outranked_at[handle] + self.activation_delay_ms()
        if handle == self.active_handle:
            cands = super().options(handle, at, focus).candidates
        else:
            cands = ()
            if handle in self.former:
                head = self._head(handle, self.former[handle])
                if head < self.sub.n_entries():
                    stored = self.sub.stored_span(head)
                    cands = (Candidate(head, Window(stored.start, float("inf"), None), ("PLS-FAILOVER-005",),
                                       "already in flight before a consumer of a better priority level took over",
                                       kind="former"),)
        kept = tuple(replace(c, window=Window(c.window.low, float("inf"), None))
                     for c in cands if c.kind == "ghost" or self.sub.stored_span(c.pos).start <= cutoff)
        return ReceiveOptions(kept)

    # ------------------------------------------------------------------ what happened

    def deliver(self, handle: str, pos: int, at: Span, count: int, candidate: Candidate | None) -> None:
        kind = candidate.kind if candidate is not None else None
        if kind in ("ghost", "queued"):
            self.ghosts.pop(pos, None)
            self.sure_ghosts.pop(pos, None)
            return
        if kind == "former":
            self.former[handle] = pos + 1
            return
        if handle != self.active_handle:
            # It became active (a takeover candidate, or forced after a reported failure).
            if self.active_handle is not None:
                self.former[self.active_handle] = self.stream_next
            self.former.pop(handle, None)
            self.active_handle = handle
            self.switch_possible = False
            self.pending = []
            self.stream_rules = (self.takeover_rule,)
            super().deliver(handle, pos, at, count, None)
            return
        super().deliver(handle, pos, at, count, candidate)

    def explain(self, handle: str, pos: int, at: Span) -> Refusal:
        if handle in self.outranked_at and self._consumer(handle) is not None:
            better = self.best()[0]
            since = self.outranked_at[handle]
            when = "before it subscribed" if since == float("-inf") else f"since {since:g} ms"
            return Refusal("wrong-consumer", "PLS-FAILOVER-005",
                           f"Let {better.handle} (priority level {better.priority_level}) be connected {when}. Then only "
                           f"consumers of that level can be active, and {handle} (priority level "
                           f"{self._consumer(handle).priority_level}) may only drain messages in flight to it before the "
                           f"switch ({self.activation_delay_ms()} ms after that join); it received "
                           f"{self.sub.label(pos)}, published at {self.sub.stored_span(pos).start:g} ms.")
        if handle != self.active_handle and not self.switch_possible and self.active_handle is not None:
            return Refusal("wrong-consumer", "PLS-FAILOVER-003",
                           f"Let {self.active_handle} be the active consumer (it received messages and no consumer "
                           f"joined or left since). Then {handle} may receive nothing; it received {self.sub.label(pos)}.")
        return super().explain(handle, pos, at)
