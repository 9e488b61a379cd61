"""The protocol every subscription type's dispatcher follows, and the values it answers with.

Pulsar part: the broker's dispatchers (``PersistentDispatcherSingleActiveConsumer``,
``PersistentDispatcherMultipleConsumers``) together with the client-side receiver queue and
redelivery trackers of each consumer, seen from the application.
Rule ids: see each dispatcher module.

A dispatcher answers one question in two ways:
- for the checker (oracle): ``options(consumer, span)`` is the *set* of messages the consumer may
  receive now, each a ``Candidate`` with the window in which it becomes eligible and, if it must
  arrive, by when;
- for the model target: the same list in *canonical order*; the target takes the first candidate
  whose ``window.canonical`` has come. The target's choice is thus one element of the allowed set.
After either, ``deliver`` applies what was received, so one nondeterministic choice never
cascades into later false failures.

Not modelled: permits and receiver-queue sizes beyond what decides allowed sets (the checker
treats prefetch as hidden state: anything a hidden queue could explain is allowed).
Choices: positions are entry indexes within the topic; time is virtual ms (``timing``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Protocol

from reference_model.anomalies import anomaly
from reference_model.cursor import Cursor
from reference_model.rejections import Rejected
from reference_model.timing import Span, Window


@dataclass(frozen=True)
class ConsumerConfig:
    """What a consumer asked for at subscribe (trace ``subscribe`` args, defaults applied)."""

    handle: str
    subscription: str
    type: str
    nack_delay_ms: int = 60_000
    ack_timeout_ms: int = 0
    receiver_queue_size: int = 1000
    start_message_id_inclusive: bool = False
    consumer_name: str | None = None
    nack_backoff: tuple[int, int, float] | None = None  # Java MultiplierRedeliveryBackoff (PLS-NACK-004)
    key_shared: Any = None  # the subscribe arg ``key_shared`` (Key_Shared policy), as given
    # The handle's own client profile (``profiles.handle_profile``); None: the subscription's.
    profile: Any = field(default=None, compare=False)
    priority_level: int = 0  # Java priorityLevel (PLS-SHARED-003, PLS-FAILOVER-005); 0 is the highest
    ack_timeout_tick_ms: int | None = None  # Java ackTimeoutTickTime (PLS-ACKTIMEOUT-004)
    ack_timeout_backoff: tuple[int, int, float] | None = None  # Java ackTimeoutRedeliveryBackoff (PLS-ACKTIMEOUT-005)
    joined_at: float = 0.0  # when the subscribe completed (latest instant), for priority checks
    max_unacked: int = 0  # the namespace's maxUnackedMessagesPerConsumer at subscribe (PLS-UNACKED-001); 0: none
    # Java NegativeAcksTracker state of this consumer (one per partition), mutable
    nack_tracker: Any = field(default=None, compare=False, repr=False)

    def client(self, fallback: Any) -> Any:
        """The profile whose client-side rules this consumer follows."""
        return self.profile if self.profile is not None else fallback

    def nack_window(self, at: Span, redelivery_count: int, fallback: Any) -> Window:
        """PLS-NACK-001/004/005/006/007: when a nack of a delivery with ``redelivery_count`` is redelivered."""
        from reference_model.redelivery import consumer_nack_window

        return consumer_nack_window(at, self.nack_delay_ms, self.nack_backoff, redelivery_count,
                                    self.client(fallback), self.nack_tracker)

    def nack_rule(self, fallback: Any) -> str:
        client = self.client(fallback)
        if self.nack_backoff is not None:
            return client.nack_backoff_rule
        if client.client == "go":
            return "PLS-NACK-006"
        return "PLS-NACK-005" if client.nack_timer == "deadline" else "PLS-NACK-001"

    def ack_timeout_window(self, at: Span, redelivery_count: int, fallback: Any) -> Window:
        """PLS-ACKTIMEOUT-002/004/005: when an unacked delivery with ``redelivery_count`` is redelivered."""
        from reference_model.redelivery import ack_timeout_window

        return ack_timeout_window(at, self.ack_timeout_ms, self.client(fallback), tick_ms=self.ack_timeout_tick_ms,
                                  backoff=self.ack_timeout_backoff, redelivery_count=redelivery_count)

    def ack_timeout_rule(self, fallback: Any) -> str:
        if self.ack_timeout_backoff is not None:
            return "PLS-ACKTIMEOUT-005"
        return "PLS-ACKTIMEOUT-004" if self.client(fallback).ack_timeout_tick_settable else "PLS-ACKTIMEOUT-002"


@dataclass(frozen=True)
class Candidate:
    """A message a consumer may receive: ``pos``, when (``window``), why (``cause``, ``rules``)."""

    pos: int
    window: Window
    rules: tuple[str, ...]
    cause: str
    count_low: int = 0
    count_high: int = 0
    kind: str = "first"  # first | stream | rewind | pool | release | stale | takeover | former
    topic: str = ""  # the (partition) topic, short form; set by the broker for partitioned consumers
    count_model: int | None = None  # the count the model itself gives when it is not ``count_low`` (a race's far side)


@dataclass(frozen=True)
class ReceiveOptions:
    """Everything a consumer may receive now; ``must_by``: when it must have got one of them."""

    candidates: tuple[Candidate, ...]
    must_by: float | None = None
    must_rule: str | None = None
    must_reason: str = ""


def owed(options: ReceiveOptions) -> tuple[float, str | None, str] | None:
    """What ``options`` owes: (must_by, must_rule, must_reason), or None."""
    return None if options.must_by is None else (options.must_by, options.must_rule, options.must_reason)


@dataclass(frozen=True)
class Refusal:
    """Why a delivery is not allowed: an anomaly name, a rule id and a sentence."""

    anomaly: str  # a name from reference_model.anomalies
    rule: str
    explanation: str

    def __post_init__(self) -> None:
        anomaly(self.anomaly)


class SubscriptionView(Protocol):
    """What a dispatcher may read from its subscription."""

    cursor: Cursor
    start_pos: int  # the first position in the subscription when it was created

    def n_entries(self) -> int: ...

    def stored_span(self, pos: int) -> Span: ...

    def delivery_rules(self, pos: int) -> tuple[str, ...]:
        """Feature rules a delivery of ``pos`` also speaks to (delayed delivery), for verdicts."""

    def tracked_by_delay(self, pos: int) -> bool:
        """Whether ``pos`` is a delayed message the delayed-delivery tracker holds rather than the read order."""

    def label(self, pos: int) -> str: ...

    def batch_of(self, pos: int) -> list[int]:
        """The positions stored in the same entry as ``pos`` (a batch), ``[pos]`` when it is its own entry."""


class Dispatcher(Protocol):
    """What the composed broker asks of a subscription type's dispatcher (``exclusive``,
    ``failover``, ``shared``, ``key_shared``); ``Broker`` holds one per subscription with
    connected consumers and calls nothing else on it."""

    type_name: str
    ghosts: dict[int, Any]  # copies an ack removed at the broker that a client queue may still hold

    def admit(self, consumer: ConsumerConfig) -> Rejected | None:
        """Whether the broker lets ``consumer`` join (ConsumerBusy rules)."""

    def add_consumer(self, consumer: ConsumerConfig, at: Span, start_rule: str) -> None: ...

    def remove_consumer(self, handle: str, at: Span) -> None: ...

    def connected(self) -> list[str]: ...

    def options(self, handle: str, at: Span, focus: int | None = None) -> ReceiveOptions:
        """Allowed messages now, in canonical order. A dispatcher may list only the first of a run
        of interchangeable messages; ``focus`` asks it to include that position if allowed."""

    def must_receive_by(self, handle: str, at: Span) -> tuple[float, str | None, str] | None:
        """``options(handle, at)``'s ``must_by``, ``must_rule`` and ``must_reason`` (None: nothing owed), for a
        caller that needs only by when ``handle`` must get something here, not what (a partitioned consumer's
        other partitions while one received message is judged). May skip listing when nothing can be owed."""

    def deliver(self, handle: str, pos: int, at: Span, count: int, candidate: Candidate | None) -> None: ...

    def note_empty_receive(self, handle: str, at: Span) -> None: ...

    def acked(self, positions: Iterable[int], at: Span) -> None: ...

    def nack(self, handle: str, pos: int, at: Span) -> None: ...

    def redeliver_unacked(self, handle: str, at: Span) -> None: ...

    def transaction_aborted(self, holders: Mapping[int, tuple[str, int]], at: Span) -> None:
        """PLS-TXN-009: the positions ``holders`` names (position -> (the consumer that acked it in
        the transaction, the redelivery count it held)) are unacked again: the broker redelivers them."""

    def count_held_by(self, handle: str, pos: int) -> int | None:
        """The redelivery count of ``pos`` as delivered to ``handle``, if ``handle`` holds it and
        this type counts redeliveries (PLS-DLQ-005: Shared and Key_Shared only); else None."""

    def hold_for_dead_letter(self, pos: int) -> None:
        """The client will dead-letter this delivery instead of redelivering it (PLS-DLQ-001)."""

    def stale_count_in_hand(self, handle: str, pos: int) -> int | None:
        """The redelivery count of a stale copy of ``pos`` (one the broker's own copy is not) that
        ``handle``'s application holds; None when it holds none (Exclusive and Failover never do)."""

    def drop_stale_in_hand(self, handle: str, pos: int) -> None:
        """``handle``'s application let go of its stale copy of ``pos`` without asking the broker for
        it again (the client dead-letters it, PLS-DLQ-002)."""

    def reset(self, pos: int, at: Span, rule: str, filter_for: tuple[str, int] | None = None,
              seeker: str | None = None) -> None: ...

    def explain(self, handle: str, pos: int, at: Span) -> Refusal: ...
