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

from dataclasses import dataclass
from typing import Any, Iterable, Protocol

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


@dataclass(frozen=True)
class ReceiveOptions:
    """Everything a consumer may receive now; ``must_by``: when it must have got one of them."""

    candidates: tuple[Candidate, ...]
    must_by: float | None = None
    must_rule: str | None = None
    must_reason: str = ""


@dataclass(frozen=True)
class Refusal:
    """Why a delivery is not allowed: an anomaly name, a rule id and a sentence."""

    anomaly: str
    rule: str
    explanation: str


class SubscriptionView(Protocol):
    """What a dispatcher may read from its subscription."""

    cursor: Cursor

    def n_entries(self) -> int: ...

    def stored_span(self, pos: int) -> Span: ...

    def label(self, pos: int) -> str: ...


class Dispatcher(Protocol):
    type_name: str

    def admit(self, consumer: ConsumerConfig) -> Rejected | None:
        """Whether the broker lets ``consumer`` join (ConsumerBusy rules)."""

    def add_consumer(self, consumer: ConsumerConfig, at: Span, start_rule: str) -> None: ...

    def remove_consumer(self, handle: str, at: Span) -> None: ...

    def connected(self) -> list[str]: ...

    def options(self, handle: str, at: Span, focus: int | None = None) -> ReceiveOptions:
        """Allowed messages now, in canonical order. A dispatcher may list only the first of a run
        of interchangeable messages; ``focus`` asks it to include that position if allowed."""

    def deliver(self, handle: str, pos: int, at: Span, count: int, candidate: Candidate | None) -> None: ...

    def note_empty_receive(self, handle: str, at: Span) -> None: ...

    def acked(self, positions: Iterable[int], at: Span) -> None: ...

    def nack(self, handle: str, pos: int, at: Span) -> None: ...

    def redeliver_unacked(self, handle: str, at: Span) -> None: ...

    def reset(self, pos: int, at: Span, rule: str, filter_for: tuple[str, int] | None = None,
              seeker: str | None = None) -> None: ...

    def explain(self, handle: str, pos: int, at: Span) -> Refusal: ...
