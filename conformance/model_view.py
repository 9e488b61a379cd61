"""What the checker and its detectors may ask of the model: one typed, declared interface.

The checker judges an observation by asking the model (``reference_model.broker.Broker``) three
kinds of question, and nothing else:

1. *What is allowed now?* ``predict`` an op (the ``Rejected`` the spec predicts, or None);
   ``receive_options`` for a receive (every message allowed, and by when one must come);
   ``explain_refusal`` for a delivery it does not allow; ``backlog``, ``key_hash_ranges``
   (each Key_Shared consumer's reported hash ranges) and ``consumer_unacked`` (each Shared /
   Key_Shared consumer's unackedMessages range) for stats.
2. *Follow this observation.* ``step`` an op a target applied (its outcome and the facts the
   detectors need); ``take`` a delivery; ``note_empty_receive``; ``trim`` what retention
   deleted.
3. *Look up what the model holds* to word a verdict or to judge a rule across steps: messages
   by label, a handle's subscriptions and profile, the topics, readers, consumers, producers,
   dead-letter policies and copies, feature state.

``ModelView`` lists them; ``Broker`` provides them. ``tests/unit/test_model_view.py`` fails when
the checker or a detector reaches for a member not declared here, or a private one, so the model
can change inside without the checker noticing.

Not here: the values those questions return (``Topic``, ``Subscription``, ``StoredMessage``,
``ReceiveOptions``, ...) are the model's own frozen or plain values, read as they are.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol

from reference_model.dispatch.base import Candidate, ConsumerConfig, ReceiveOptions, Refusal
from reference_model.profiles import Profile
from reference_model.rejections import Rejected
from reference_model.timing import Span


class ModelView(Protocol):
    """The model as the checker sees it (implemented by ``reference_model.broker.Broker``)."""

    # ---- state read to judge rules across steps and to word verdicts
    profile: Profile
    topics: Mapping[str, Any]  # full name -> Topic
    readers: Mapping[str, Any]  # handle -> Reader
    consumers: Mapping[str, Any]  # handle -> (ConsumerConfig, Subscription)
    producers: Mapping[str, Any]  # handle -> Producer
    dead_letter: Mapping[str, Any]  # consumer handle -> DeadLetterPolicy
    retry: Mapping[str, Any]  # consumer handle -> RetryPolicy (the topics its reconsume_later writes to)
    copies: Mapping[tuple[str, int], tuple[str, str]]  # (topic, position) -> (kind, client) of a client's copy
    # (topic short name, label) -> (ledger, entry) the history shows later: the model follows it where Pulsar leaves an
    # order open (Broker._next_dead_letter); the checker sets it from the whole history before the first step
    later_ids: dict[tuple[str, str], tuple[int, int]]
    # label -> the partition a later flush or receipt shows it was stored on (an async send on a partitioned topic)
    later_partitions: dict[str, int] | None
    unplaced_labels: set[str]  # async sends of a partitioned producer whose partition the history never shows
    # of those, label -> (consumer, subscription type, stored span, partitioned topic, subscription): owed to that
    # consumer whichever partition took it
    owed_anywhere: Mapping[str, tuple[str, str, Any, str, str]]
    routes: Mapping[str, Any]  # label -> (allowed partitions, rules, reason) of a partitioned send
    tfx: Mapping[str, Any]  # topic full name -> TopicFeatures
    index_ack: Mapping[str, bool]  # consumer handle -> batch index ack in effect
    received_labels: Mapping[str, set[str]]  # consumer handle -> labels its application received (PLS-BATCH-010)
    policies: Any  # NamespacePolicies
    fault_log: list[Any]  # the faults so far (reference_model.faults.Fault), in order (PLS-FAULT-*)
    latency_ms: int  # the latency a set_latency op put in force (PLS-FAULT-*)
    txns: Mapping[str, Any]  # txn handle -> reference_model.transactions.Txn (PLS-TXN-*)
    deleted_labels: Mapping[str, tuple[Any, int, float, str]]  # label -> (deleted topic, position, when, name deleted) (PLS-TOPIC-005)
    receipt_settled: tuple[str, ...]  # PLS-BATCH-009: the run the last receipt's ids settled (observe_batch_member)

    @property
    def stored_count(self) -> int: ...

    # ---- 1. what is allowed now
    def predict(self, op: str, args: Mapping[str, Any], at: Span) -> Rejected | None: ...

    def commit_refusal(self, op: str, args: Mapping[str, Any], refused: Rejected, at: Span | None = None) -> None: ...
    def flush_refused_for_async(self, op: str, args: Mapping[str, Any], refused: Any) -> bool: ...  # an async send's refusal

    def receive_options(self, handle: str, at: Span, focus: str | None = None) -> ReceiveOptions | Rejected: ...

    def observe_batch_member(self, label: str, message_id: Any, at: Span, topic: str | None = None) -> list[tuple[str, str]]: ...  # PLS-BATCH-009
    def observe_presence(self, handle: str, label: str | None, at: Span, topic: str | None = None) -> None: ...  # reference_model.maybe_absent
    def reported_partition_name(self, handle: str, index: int) -> str | None: ...  # PLS-MSG-001: a partition's producer name
    def producer_batches(self, handle: str) -> bool | None: ...  # PLS-MSGID-001: whether a batch of one can be written
    def settle_maybe_absent(self) -> None: ...  # reference_model.maybe_absent, at the end of a history

    def drop_pending(self, handle: str) -> list[str]: ...  # PLS-BATCH-009: a producer the checker stops following
    def schema_unfollowed(self, op: str, args: Mapping[str, Any]) -> None: ...  # an op with a schema not followed

    def explain_refusal(self, handle: str, label: str, at: Span) -> Refusal: ...

    def backlog(self, topic: str, subscription: str, at: Span, *, ack_lag_ms: float = 0.0) -> tuple[int, int] | Rejected: ...

    def key_hash_ranges(self, topic: str, subscription: str, at: Span) -> Any: ...  # ReportedRanges | None
    def consumer_unacked(self, topic: str, subscription: str, at: Span, *, ack_lag_ms: float = 0.0,
                         expiry_settled: bool = False) -> Any: ...  # PLS-UNACKED-002/003

    def trimmable(self, handle: str) -> set[int]: ...

    def connection_mates(self, handle: str) -> list[str]: ...  # the open handles sharing handle's client connection

    def ledger_closed_by(self, handle: str, positions: set[int], at: Span) -> tuple[list[str], str | None]: ...

    # ---- 2. follow an observation
    def step(self, op: str, args: Mapping[str, Any], at: Span, *, observed: Mapping[str, Any] | None = None) -> Any: ...

    def apply(self, op: str, args: Mapping[str, Any], at: Span, *,
              observed: Mapping[str, Any] | None = None) -> dict[str, Any] | Rejected: ...

    def take(self, handle: str, label: str, at: Span, *, redelivery_count: int | None = None,
             candidate: Candidate | None = None) -> Any: ...

    def note_empty_receive(self, handle: str, at: Span) -> None: ...

    def trim(self, handle: str, at: Span) -> list[str]: ...

    # ---- 3. look-ups
    def message(self, label: str, topic: Any = None) -> Any: ...

    def message_for(self, handle: str, label: str) -> Any: ...

    def topic_named(self, name: str) -> Any: ...

    def topic_names_of(self, handle: str) -> set[str]: ...

    def attachments(self, handle: str) -> list[tuple[ConsumerConfig, Any]]: ...

    def subscription_of(self, handle: str) -> Any: ...

    def consumer_config(self, handle: str) -> ConsumerConfig | None: ...

    def profile_of(self, handle: str) -> Profile: ...

    def args_profile(self, args: Mapping[str, Any]) -> Profile: ...

    def is_acked(self, handle: str, label: str) -> bool: ...

    def producer_access_mode(self, handle: str) -> str: ...  # PLS-ACCESS-005: the mode a producer was created with

    def ack_time(self, handle: str, label: str) -> float | None: ...

    def candidate_label(self, handle: str, candidate: Candidate) -> str: ...

    def copy_info(self, stored: Any) -> tuple[str, str] | None: ...

    def schema_admission_rule(self, op: str, args: Mapping[str, Any]) -> str | None: ...  # PLS-SCHEMA-*

    def connected_to(self, topics: Any) -> list[str]: ...  # the handles connected to these topics (PLS-TOPIC-004)

    def deleted_subscription_rejection(self, topic: str, subscription: str) -> Rejected | None: ...  # PLS-TOPIC-005
