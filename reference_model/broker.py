"""The broker as the application sees it: topics, producers, subscriptions, consumers, readers.

Pulsar part: composition of the pieces: ``BrokerService``/``PersistentTopic`` (topics, producers,
sequence ids), ``PersistentSubscription`` (durable cursors, initial position, seek, unsubscribe),
the dispatchers in ``dispatch/`` and the client-side consumer behaviour they include, readers
(non-durable exclusive cursors).
Rule ids: PLS-TOPIC-001/003, PLS-MSGID-001/002, PLS-MSG-001, PLS-PROD-001/002, PLS-SUB-001..008,
PLS-SEEK-001..003, PLS-READER-001..004, PLS-EXCL-001, PLS-SUBTYPE-001, PLS-ACK-001..006,
PLS-ACKTIMEOUT-001/003, PLS-BACKLOG-001, PLS-REDELIVER-001, PLS-DLQ-001..007, PLS-RETRY-001..003,
PLS-ROUTE-004.

Clients per handle (``profiles.handle_profile``): a handle-creating op may say ``"client":
"python"|"java"``; that handle's client-side behaviour (what it refuses at creation, its nack and
ack-timeout trackers, DLQ copies, retry letters, seek filter, cumulative-ack refusal, routing
hash, key-based batch order) follows its own client's profile, the broker side the run's. A
Java-only setting on a Python handle is refused with InvalidArgument; the Python target refuses it
with the same function (``profiles.client_refusal``).

One object, two uses:
- a *target* calls ``apply`` for each op at a virtual instant and ``receive``/``read_next`` for
  the canonical choice (``reference_model.dispatch.base`` explains canonical order);
- the *checker* calls ``predict`` to learn what the spec allows (a ``Rejected`` or None), ``step``
  to follow an op a real target applied (its outcome and the facts the detectors need), and
  ``receive_options``/``take`` to judge and record what a real client received. Ops that the
  spec says fail return a ``Rejected`` value and change nothing.

The composition is a table (``Broker.STEPS``): op -> step. A step is a generator that decides
first and acts after: it returns a ``Rejected`` (or its value, when there is nothing to do)
before its one ``yield``, the decision point, and changes state only after it. ``predict`` runs
a step to its decision; ``step`` runs it to the end (``decide_then``).

Handles and labels come from the trace: producers, consumers and readers by handle; messages by
their payload label (unique per trace).

Dead-letter topics (PLS-DLQ-001..003, both clients, Shared/Key_Shared only): with
``max_redeliver_count`` N the application sees a message N + 1 times (counts 0..N); when it nacks
the delivery with count N, the client publishes a copy to the DLQ topic (default
``<topic>-<subscription>-DLQ``, properties plus ``ORIGIN_MESSAGE_ID`` and ``REAL_TOPIC``, in the
consumer's client's format) and acks the original, both when the nack timer fires. The copy keeps
the payload label; labels are unique per topic, except that a retry letter topic may hold a
newer copy of a label (``_store_copy``). ``copies`` records which client made which copy.

Partitioned topics (PLS-TOPIC-002): a topic created with k partitions is k topics
``<topic>-partition-i``, each with its own ledger, subscriptions and cursors; a producer routes
each message to one partition (``_route``: with a ``router`` exactly ``hash(key) mod k``,
PLS-ROUTE-001; with the client's default router the same partition as that key before, keyless
messages round robin or SinglePartition, PLS-ROUTE-002/003; the checker follows the partition
the real broker reported and judges it against ``routes``); a consumer of the partitioned topic
(or of a topic list or pattern) is attached to every partition, receives the union of what each
partition allows (order only within a partition), and its acks go to the partition of the
message. Failover on a partition p picks ``sorted[p mod k]`` (PLS-FAILOVER-004).

Key_Shared (``dispatch/key_shared.py``): the selector of the broker's release and config
(``KeySharedSettings``: consistent-hash ring, AUTO_SPLIT ranges, STICKY ranges), 4.x draining
hashes, per-key order. Retry letter topics (PLS-RETRY-001..003, Java only): ``enable_retry`` and
``reconsume_later`` (``dead_letter.py`` has the steps). Non-durable subscriptions (PLS-SUB-007/008,
Java only): a subscription created by a ``NonDurable`` subscribe disappears with its last
consumer; its cursor is never kept. Priority levels (PLS-SHARED-003, PLS-FAILOVER-005) are in
the dispatchers.

Features (dedup, batching, chunking, delayed delivery, access modes, TTL, retention,
compaction, non-persistent topics): the ``FeatureOps`` mixin, reference_model/feature_ops.py. Admin ops on
topics and cursors (delete_topic, reset_cursor, skip, clear_backlog; PLS-TOPIC-004/005, PLS-SEEK-004,
PLS-SKIP-001/002): the ``AdminOps`` mixin, reference_model/admin_ops.py.

Not modelled: a seek by id on a partitioned topic's consumer or one of several topics (a seek by publish time or to
a position moves every partition or topic: ``_seek_partitioned``), a C++ or Go reader of a partitioned topic from a
message id (readers from earliest or latest are partitioned consumers: ``_create_partitioned_reader``), the C++
default routing hash (BoostHash),
a durable subscribe to a name a non-durable subscription holds, a second subscription on a retry
topic reading more than one retry copy of one message,
pattern auto-discovery of topics created after the subscribe, DLQ via ack timeout or via a delivery whose count already exceeds N, the
periodic TTL check (only forced expiry passes), a consumer reading compacted beside other consumers
of its subscription or subscribed before the compaction (it reads the topic as published).
Partitioned producers: an async send is stored on the partition a later flush or receipt shows, judged against
the router's (``later_partitions``); a batching one keeps a producer per partition, each with its open batch,
batch timer and sequence ids (``partition_producer``), as the clients do.
Choices: ledger ids are per topic in creation order; entry ids count from 0; the model's publish
time is the virtual instant of the send (ms, integer) unless the checker passes the observed one.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Callable, Generator, Iterable, Mapping, NamedTuple

from reference_model import access_modes, names
from reference_model.cursor import Cursor, position_by_publish_time
from reference_model.dispatch.base import Candidate, ConsumerConfig, Dispatcher, ReceiveOptions, Refusal, owed
from reference_model import unacked
from reference_model.dispatch.exclusive import ExclusiveDispatcher
from reference_model.dispatch.failover import FailoverDispatcher
from reference_model.dispatch.key_shared import KeySharedDispatcher, KeySharedSettings, KeySharedPolicy, check_policy
from reference_model.dispatch.shared import SharedDispatcher, zero_permit_queue
from reference_model import key_shared as ks, routing
from reference_model.admin_ops import AdminOps
from reference_model.feature_ops import AsyncRefusal, FeatureOps, LatestStart
from reference_model.schema_ops import SchemaOps
from reference_model.ids import FIRST_LEDGER, MessageId
from reference_model import dead_letter as dl
from reference_model import delayed, faults, feature_state, maybe_absent, non_persistent, vendors
from reference_model.profiles import Profile, client_refusal, handle_profile, profile_for
from reference_model.redelivery import JavaNackTracker, check_ack_timeout, check_ack_timeout_tick, multiplier_backoff_ms
from reference_model.rejections import ModelError, NotModelledError, Rejected
from reference_model.timing import Span, Window
from reference_model import transactions as txns

DISPATCHERS = {"Exclusive": ExclusiveDispatcher, "Failover": FailoverDispatcher, "Shared": SharedDispatcher,
               "Key_Shared": KeySharedDispatcher}
CUMULATIVE_ACK_TYPES = ("Exclusive", "Failover")  # PLS-ACK-003
DEFAULT_NACK_DELAY_MS = 60_000
DEFAULT_RECEIVER_QUEUE_SIZE = 1000
# The checker's look ahead for a subscribe or create_subscription, passed in its ``observed``: what the subscription's
# consumers received (``conformance.checker.later_receipts``), so a subscription created at Latest while async sends
# are in flight holds the ones the history shows it got (``FeatureOps.latest_start_in_flight``).
LATER_RECEIPTS = "later_receipts"
DLQ_PRODUCER = "<dlq-producer>"  # the broker names the C++ DLQ producer; the model cannot know how
RETRY_PRODUCER = "<retry-producer>"  # likewise the Java client's retry letter producer (PLS-RETRY-001)

# Settings only the Java client has: on a Python (C++) handle the op is refused with
# InvalidArgument, naming the rule of the setting (the Python target refuses them the same way).



class StepResult(NamedTuple):
    """What one step did: its outcome (the op's ok value, or the ``Rejected`` the spec predicts)
    and the facts the detectors need (a send's sequence and dedup rules, a flush's ids, ...)."""

    outcome: dict[str, Any] | Rejected
    facts: Mapping[str, Any]


def decide_then(run: Generator[None, None, Any], *, commit: bool) -> Any:
    """Drive one step (a generator, see ``Broker.STEPS``) to its decision, and on to the end when
    ``commit``: a step that returns before its ``yield`` refused the op (or had nothing to do),
    and that return is the outcome; a step that reaches it is allowed (outcome ``{}`` when not
    committed) and, committed, returns its ok value."""
    try:
        next(run)
    except StopIteration as done:
        return done.value
    if not commit:
        run.close()
        return {}
    try:
        next(run)
    except StopIteration as done:
        return done.value
    raise ModelError("a step yields once, at its decision point")


class DeadLetterPolicy(NamedTuple):
    """What a consumer's dead-letter policy says: N, the DLQ topic (None: derive it from the
    consumer's topic), the initial subscription, and whose copy format (``Profile.dlq_properties``)."""

    max_redeliver: int
    topic: str | None
    initial_subscription: str | None
    properties: str = "cpp"


class _DueCopy(NamedTuple):
    """A dead-letter copy a client timer will write (PLS-DLQ-001/002): the message at ``pos`` of ``sub``,
    within ``window``."""

    sub: Any
    pos: int
    dead: DeadLetterPolicy
    window: Span


class RetryPolicy(NamedTuple):
    """A Java consumer's retry letter settings (PLS-RETRY-001..003)."""

    retry_topic: str
    max_redeliver: int
    dead_letter_topic: str
    initial_subscription: str | None


def split_profile(overrides: Mapping[str, Any] | None) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split a header ``profile`` into ``Profile`` overrides and its ``broker_config`` object.

    ``broker_config`` holds broker.conf keys that change what the model predicts (so far the
    Key_Shared ones, ``dispatch.key_shared.BROKER_CONFIG_KEYS``); a live target fills it in from
    the broker's runtime configuration, a trace may pin it for the model.
    """
    rest = dict(overrides or {})
    config = rest.pop("broker_config", None) or {}
    if not isinstance(config, Mapping):
        raise ValueError(f"profile broker_config must be an object of broker.conf keys, got {config!r}")
    return rest, dict(config)


def seek_rule(args: Mapping[str, Any]) -> str:
    """The rule a seek speaks to, by its kind: by id PLS-SEEK-001, by publish time PLS-SEEK-002, to a position
    PLS-SEEK-003."""
    return "PLS-SEEK-001" if "message" in args else "PLS-SEEK-002" if "publish_time_of" in args else "PLS-SEEK-003"


def _one_partitioned_topic(subs: "list[Subscription]") -> bool:
    """Whether a consumer attached to ``subs`` reads the partitions of one partitioned topic (and nothing else)."""
    return (len({names.partitioned_parent(sub.topic.full) for sub in subs}) == 1
            and all(names.partition_of(sub.topic.full) is not None for sub in subs))


@dataclass(frozen=True)
class StoredMessage:
    """A message as the topic stores it (PLS-MSG-001: what the consumer must see unchanged)."""

    pos: int
    label: str
    message_id: MessageId
    topic: str  # short form
    key: str | None
    ordering_key: str | None
    properties: tuple[tuple[str, str], ...]
    event_time: int
    publish_time: int
    producer_name: str
    sequence_id: int
    stored: Span
    seq: int = 0  # global store order in this model (publish order across topics)
    schema_version: int | None = None  # PLS-SCHEMA-023: its producer's schema version (None: no schema)
    key_b64: bool = False  # PLS-MSG-002: ``key`` is the Base64 text of a key given as bytes (partition_key_b64_encoded)

    def key_bytes_hex(self) -> str | None:
        """PLS-MSG-002: the bytes of a key given as bytes, in hex (None: a text key or none)."""
        return base64.b64decode(self.key).hex() if self.key_b64 and self.key is not None else None

    def observe(self, redelivery_count: int, *, key_bytes_reported: bool = False) -> dict[str, Any]:
        """The trace format's ``<message>`` for a delivery of this message (``key_bytes_reported``: the receiving
        client tells a key given as bytes apart, PLS-MSG-002)."""
        return {
            **({"key_bytes": self.key_bytes_hex()} if key_bytes_reported and self.key_b64 else {}),
            "payload": self.label,
            "message_id": self.message_id.to_list(),
            "topic": self.topic,
            "key": self.key,
            "ordering_key": self.ordering_key,
            "properties": dict(self.properties),
            "event_time": self.event_time,
            "publish_time": self.publish_time,
            "redelivery_count": redelivery_count,
            "producer_name": self.producer_name,
            **({"schema_version": self.schema_version} if self.schema_version is not None else {}),
        }


class Topic:
    def __init__(self, full: str, ledger: int, partitions: int = 0, partition_index: int = -1):
        self.full = full
        self.partition_index = partition_index  # i for the topic <parent>-partition-i, else -1
        self.short = names.short_name(full)
        self.ledger = ledger
        self.partitions = partitions
        self.entries: list[StoredMessage] = []
        self.subscriptions: dict[str, Subscription] = {}
        self.by_label: dict[str, int] = {}  # payload label -> position (unique per topic)
        # PLS-TXN-001..005 (reference_model/transactions.py): position -> the transaction it was
        # produced in; how far a dispatcher may read (None: everything); when a position held back
        # by a transaction became readable; positions of aborted transactions (never delivered)
        self.txn_of: dict[int, str] = {}
        self.max_read: int | None = None
        self.readable_since: dict[int, Span] = {}
        self.aborted: set[int] = set()
        # positions of async sends of a partitioned producer whose partition the history never shows: stored here,
        # the router's first allowed partition, but maybe on another (``Broker._place_unshown``)
        self.unplaced: set[int] = set()
        self.timeout_released: dict[int, Span] = {}  # readable since a timed-out transaction's abort (PLS-TXN-005)

    def unplaced_from(self, start: int) -> set[int]:
        """The unplaced positions (``Broker._place_unshown``) at or after ``start``: maybe absent from a subscription
        that starts there."""
        return {p for p in self.unplaced if p >= start}

    def readable_count(self) -> int:
        """How many positions a dispatcher may read: all, or up to an open transaction's first (PLS-TXN-003)."""
        return len(self.entries) if self.max_read is None else self.max_read


class Subscription:
    """A subscription: its cursor, its dispatcher while consumers are connected. Durable unless a
    Java ``NonDurable`` subscribe created it (PLS-SUB-007)."""

    def __init__(self, topic: Topic, name: str, cursor: Cursor, created: Span, start_rule: str):
        self.topic = topic
        self.name = name
        self.durable = True
        self.cursor = cursor
        self.created = created
        self.start_rule = start_rule  # rule that explains where the first delivery starts
        self.dispatcher: Dispatcher | None = None
        # (time, newly acked entries, consumer) for the ack-grouping lag; a close flushes that consumer's
        self.ack_log: list[tuple[float, int, str]] = []
        self.flushed_at: dict[str, float] = {}
        self.ack_times: dict[int, float] = {}  # position -> when the application acked it
        # acks a fault may have lost (made within the settle time of a cut or restart; any ack before
        # a crash): the backlog may still count them (PLS-BACKLOG-001, reference_model/faults.py)
        self.fault_uncertain_acks = 0
        self.start_pos = cursor.mark_delete + 1  # first position in the subscription at creation
        # PLS-SUB-002 with async sends in flight at a Latest start (``Broker._latest_subscription``): positions from
        # start_pos on that were stored before its cursor was made, and the in-flight ones none of its consumers
        # received, taken as before it; both acked in it (a backlog may still count the second: ``backlog``)
        self.before_cursor: set[int] = set()
        self.unsure_in_flight: set[int] = set()
        # (sub, pos) -> when pos may first be delivered here (delayed delivery); set by the broker
        self.delivery_span: Any = None
        # (sub, pos) -> the feature rules a delivery of pos speaks to; set by the broker
        self.feature_rules: Any = None
        # (sub, pos) -> whether pos is a delayed message this subscription's tracker holds; set by the broker
        self.delay_tracked: Any = None
        # (sub, pos) -> the positions stored in pos's entry (a batch), in batch-index order; set by the broker
        self.entry_members: Any = None
        # PLS-RETENTION-001: positions the broker may have deleted before this subscription could read them
        self.trimmable: set[int] = set()
        # PLS-TTL-001/003: positions an expiry pass moved the cursor past (for explanations)
        self.expired: set[int] = set()
        # PLS-TTL-002: (settled by, how many) of admin expiry passes whose cursor move may still be under way
        self.expiry_settling: list[tuple[float, int]] = []
        # PLS-RETENTION-001: entries the model took as deleted (nothing came where they were owed); the broker's
        # backlog may still count them (FeatureOps.trim)
        self.trimmed_uncertain = 0
        # PLS-TXN-007..010: positions acked in a transaction not yet ended (position -> transaction; the
        # cursor counts them acked, so nothing redelivers them), the pending cumulative ack (transaction,
        # the positions it covered), and positions whose ack a commit made final
        self.txn_pending: dict[int, str] = {}
        self.txn_cumulative: tuple[str, tuple[int, ...]] | None = None
        self.txn_committed: dict[int, str] = {}
        # PLS-TAG-001 (tdmq profile): the subscription's tags, and the positions the tag filter kept
        # from it (position -> why); the cursor counts them acked
        self.tags: frozenset[str] = frozenset()
        self.tag_rejected: dict[int, str] = {}
        # PLS-TAG-003 (tdmq profile): the other tags consumers that joined later gave (handle -> tags); the
        # subscription keeps the tags it was created with
        self.other_tags: dict[str, frozenset[str]] = {}
        # PLS-SKIP-001/002: positions an admin skip or clear_backlog acked -> (rule, why), for the detectors
        self.admin_acked: dict[int, tuple[str, str]] = {}
        # PLS-SEEK-004: an admin reset made while no consumer was connected: the next one to join starts there
        self.reset_rule: str | None = None
        # positions the subscription may or may not have (reference_model.maybe_absent: a non-persistent message
        # published before its consumers' first permits, PLS-NP-001, or unreceived at a seek there; an async
        # partitioned send whose partition the history never shows); a receipt decides (Broker.observe_presence)
        self.maybe_absent: set[int] = set()
        # those of them the broker may have dropped, one by one (a non-persistent message, ``non_persistent`` rule 5):
        # a receipt of another message does not show them present
        self.maybe_dropped: set[int] = set()
        # position -> by when its consumer's client's ack of it, sent once its dead-letter or retry copy was written
        # (``Broker._dead_letter``, ``_op_reconsume_later``), surely reached the broker (``reset_subscription``)
        self.acked_after_copy: dict[int, float] = {}

    # SubscriptionView
    def n_entries(self) -> int:
        """The positions a dispatcher may read (PLS-TXN-003: not past an open transaction's first)."""
        return self.topic.readable_count()

    def unacked_positions(self) -> list[int]:
        """The readable positions this subscription's cursor has not acknowledged, in order."""
        return [p for p in range(self.n_entries()) if not self.cursor.is_acked(p)]

    def expiring_at(self, ms: float) -> int:
        """PLS-TTL-002: entries admin expiry passes removed whose cursor move may still be under way at ``ms``
        (``retention.expiry_settled_by``): the backlog may still count them."""
        return sum(n for settled_by, n in self.expiry_settling if ms < settled_by)

    def stored_span(self, pos: int) -> Span:
        """When ``pos`` became deliverable here: when it was stored, or its deliver-at window (PLS-DELAY-*),
        or when the transaction that held it back ended (PLS-TXN-001/003)."""
        span = self.delivery_span(self, pos) if self.delivery_span is not None else self.topic.entries[pos].stored
        since = self.topic.readable_since.get(pos)
        return span if since is None else Span(max(span.start, since.start), max(span.end, since.end))

    def delivery_rules(self, pos: int) -> tuple[str, ...]:
        """Feature rules a delivery of ``pos`` speaks to (delayed delivery), for verdicts."""
        return self.feature_rules(self, pos) if self.feature_rules is not None else ()

    def tracked_by_delay(self, pos: int) -> bool:
        """Whether ``pos`` is a delayed message this subscription's delayed-delivery tracker holds (PLS-DELAY-001/003)."""
        return self.delay_tracked is not None and self.delay_tracked(self, pos)

    def label(self, pos: int) -> str:
        return self.topic.entries[pos].label

    def batch_of(self, pos: int) -> list[int]:
        """The positions stored in the same entry as ``pos`` (a batch), ``[pos]`` when it is its own entry."""
        return self.entry_members(self, pos) if self.entry_members is not None else [pos]


@dataclass
class Producer:
    handle: str
    topic: Topic
    name: str
    last_sequence_id: int
    sent: int = 0
    router: Mapping[str, Any] | None = None  # PLS-ROUTE-001: the trace's custom router
    keyless_sent: int = 0
    batching: bool = False
    routing_mode: str = "RoundRobin"  # PLS-ROUTE-002 / PLS-ROUTE-003 (keyless messages)
    hashing: str | None = None  # PLS-ROUTE-004: the client's own hashing scheme (None: not modelled)
    schema_version: int | None = None  # PLS-SCHEMA-023: the version its messages carry (None: no schema)


def partition_handle(handle: str, index: int) -> str:
    """The name of the producer a partitioned producer ``handle`` keeps for partition ``index``."""
    return f"{handle}[partition {index}]"


@dataclass
class Reader:
    handle: str
    topic: Topic
    next_pos: int
    rule: str
    created: Span
    delivered: list[int] = field(default_factory=list)
    skip: set[int] = field(default_factory=set)  # positions a compacted reader does not see
    trimmable: set[int] = field(default_factory=set)  # PLS-RETENTION-001, as on Subscription


class Broker(FeatureOps, SchemaOps, AdminOps):
    """The reference model of one Pulsar cluster seen through one client.

    The feature rules (dedup, batching, chunking, delayed delivery, access modes, TTL,
    compaction, non-persistent topics) are the ``FeatureOps`` mixin (reference_model/feature_ops.py).
    """

    def __init__(self, profile: Profile | None = None, *, slack_ms: float = 0.0,
                 key_shared: KeySharedSettings | None = None, follows_history: bool = False):
        self.profile = profile or profile_for()
        # True when the model follows a recorded history (the checker): what only a broker chooses (the names of an
        # unnamed partitioned producer's partition producers) comes from the history, never made up here
        self.follows_history = follows_history
        # Key_Shared selector code (broker release) and broker config (consistent hashing on/off)
        self.key_shared = key_shared or KeySharedSettings.for_broker(self.profile.broker)
        # label -> how the producer's partition was chosen: (allowed partitions, rules, reason)
        self.routes: dict[str, tuple[tuple[int, ...], tuple[str, ...], str]] = {}
        self._key_partition: dict[tuple[str, str], int] = {}  # (topic, key) -> partition seen
        # (topic, key) -> the partition guessed for an unplaced async send of that key (``_place_unshown``): the next
        # unshown send of the key is guessed onto it too, since a key keeps its partition
        self._key_partition_guess: dict[tuple[str, str], int] = {}
        self.partition_parent: dict[str, str] = {}  # a partition producer's handle -> its partitioned producer's
        # producers whose creation the broker had not answered when the history's wait ended (a WaitForExclusive
        # creation reported pending where nothing holds the topic, PLS-ACCESS-005): maybe not on the topic yet,
        # until their next op (which waits for the creation)
        self.creation_unsure: set[str] = set()
        self.dedup_unknown: set[str] = set()  # topics whose deduplication policy changed where the model did not follow
        # partitioned producer handle -> (label, partition it was guessed onto, sequence id) of its unplaced sends
        self.unplaced_sequences: dict[str, list[tuple[str, str, int]]] = {}
        self._last_keyless: dict[str, int] = {}  # producer handle -> partition of its last keyless send
        # PLS-ROUTE-002: keyless sends refused after the router picked their partition (MessageTooBig
        # is the partition producer's check), since the last keyless send that was stored; a set of
        # labels, so the checker's prediction and the op count one refusal once
        self._refused_keyless: dict[str, set[str]] = {}
        self.slack_ms = slack_ms
        self.topics: dict[str, Topic] = {}
        self.producers: dict[str, Producer] = {}
        self.consumers: dict[str, tuple[ConsumerConfig, Subscription]] = {}
        # a consumer of a partitioned topic: one (config, subscription) per partition
        self.partition_consumers: dict[str, list[tuple[ConsumerConfig, Subscription]]] = {}
        self.pattern_consumers: dict[str, Any] = {}  # handle -> its compiled topics_pattern (auto-discovery: _check_not_discovered)
        self.multi_topic_consumers: set[str] = set()  # handles of a topics_pattern or of topics naming several (_seek_partitioned)
        self.received_labels: dict[str, set[str]] = {}  # consumer -> labels its application received
        self.ever_received: set[str] = set()  # labels some consumer's application received, closed or not
        self.sender_client: dict[str, str] = {}  # label -> the client ("cpp", "java") whose producer sent it
        self.failed_last_send: set[str] = set()  # producers whose last send failed (a Java flush reports it)
        self.readers: dict[str, Reader] = {}
        self.partitioned_readers: set[str] = set()  # readers of a partitioned topic: partitioned consumers that ack what they read
        # a batching partitioned producer's producer per partition (partition_producer): handle -> it
        self.partition_producers: dict[str, Producer] = {}
        self.named_producers: set[str] = set()  # producer handles the trace gave a name (create_producer's name)
        # the placeholder names of partition producers whose broker-given name no history shows (partition_producer):
        # a keyless message they write has a sticky key no one knows (PLS-KEYSHARED-001, _check_keyless_known)
        self.unreported_producer_names: set[str] = set()
        # partitioned producer handle -> the name each partition's producer writes (create_producer's reported
        # partition_producer_names: the live target reads them off the broker's publishers)
        self.partition_names: dict[str, list[str]] = {}
        self.closed: set[str] = set()
        self.labels: dict[str, tuple[Topic, int]] = {}  # label -> where it was sent
        self._producer_counter = 0
        # consumer -> (N, explicit DLQ topic or None for the default name, initial subscription)
        self.dead_letter: dict[str, DeadLetterPolicy] = {}
        self.retry: dict[str, RetryPolicy] = {}  # consumer -> its retry letter settings (Java enableRetry)
        self.handle_profiles: dict[str, Profile] = {}  # handle -> its own client's profile
        # PLS-NP-001 (non_persistent rule 6): consumer -> by when its first flow permits surely reached the broker, for a
        # client that sends them after its subscribe call returned
        self.first_permits_by: dict[str, float] = {}
        # consumer -> when the broker last dropped its connection (an admin reset, an unload, a fault): its client
        # reconnects on its own, and an op that needs the connection meanwhile may be refused (``_op_unsubscribe``)
        self.disconnected_at: dict[str, float] = {}
        self._committing = True
        # labels of async sends on a partitioned topic whose partition the judged history never shows (_place_unshown)
        self.unplaced_labels: set[str] = set()
        self.unplaced_alone: set[str] = set()  # of those, the ones sent alone (not batched): written at the send
        # of those, each one owed to one consumer whichever partition took it: label -> (consumer, subscription type,
        # when it was stored, the partitioned topic, the subscription) (``_owed_on_every_partition``)
        self.owed_anywhere: dict[str, tuple[str, str, Span, str, str]] = {}
        # (topic full name, position) -> (kind, client) of a copy the client wrote: "dlq" (nack or
        # ack timeout), "retry" (reconsumeLater), "retry-dlq" (reconsumeLater past the maximum)
        self.copies: dict[tuple[str, int], tuple[str, str]] = {}
        self.removed_non_durable: set[tuple[str, str]] = set()  # (topic, subscription) gone with its consumers
        # Client timers whose effect reaches beyond one subscription (DLQ publish + ack):
        # (due instant, sequence, action). Run when time reaches the window's low end.
        self._timers: list[tuple[float, int, Any]] = []
        self._timer_seq = 0
        # PLS-DLQ-001: the dead-letter copies scheduled and not yet written, per DLQ topic (full name), and the ids a
        # history shows later for (topic short name, label) (``later_ids``: set by whoever judges a whole history,
        # the checker). Where the order of the copies is the client's choice (``_next_dead_letter``), the model
        # writes them in the order those ids show, never in one it does not allow.
        self._dead_letters_due: dict[str, list[_DueCopy]] = {}
        self.later_ids = {}
        # (topic short name, label) -> (ledger, entry) a receipt or a flush of the judged history shows
        # (``conformance.checker.shown_ids``): where a Latest start follows in-flight sends (latest_start_in_flight)
        self.shown_ids: dict[tuple[str, str], tuple[int, int]] = {}
        # label -> the partition a later flush or receipt shows (conformance.checker.later_partitions): where an async
        # send on a partitioned topic went, which its send does not report (_op_send)
        # (None: no history to read, as on the model target, whose own first choice its history then shows)
        self.later_partitions: dict[str, int] | None = None
        self._stored_count = 0
        self.now = 0.0
        # PLS-FAULT-*: the faults of the history so far (reference_model/faults.py), the latency in
        # force, and the consumers that nacked (a nack's timer may fire after a reconnect)
        self.fault_log: list[faults.Fault] = []
        self.latency_ms = 0
        self.nacked_by: set[str] = set()
        self.txns: dict[str, txns.Txn] = {}  # trace txn handle -> the transaction (PLS-TXN-*)
        self._init_features()
        self._init_admin()  # delete_topic, reset_cursor, skip, clear_backlog (reference_model/admin_ops.py)
        self._init_schemas()  # PLS-SCHEMA-* (reference_model/schema_ops.py)

    # ================================================================== lookups

    def args_profile(self, args: Mapping[str, Any]) -> Profile:
        """The profile of the handle a creating op makes (its ``client`` arg, else the run's)."""
        return handle_profile(self.profile, args.get("client"))

    def producer_of(self, handle: str) -> "Producer | None":
        """The producer ``handle`` names: an application's, or a partition's producer of a batching partitioned
        producer (``partition_producer``)."""
        found = self.producers.get(handle)
        return found if found is not None else self.partition_producers.get(handle)

    def partition_producer(self, producer: "Producer", index: int) -> "Producer":
        """The producer a batching partitioned ``producer`` keeps for partition ``index``, made at its first send
        there with the partitioned producer's settings: its own open batch, batch timer and sequence ids (Java
        PartitionedProducerImpl makes a ProducerImpl per partition, each with its BatchMessageContainer and
        batchFlushTask; C++ PartitionedProducerImpl a ProducerImpl per partition, each with its batch timer; Go
        partitionedProducer a producer per partition, each with its batchFlushTicker). A flush of ``producer``
        flushes each of them; a close closes each."""
        handle = partition_handle(producer.handle, index)
        sub = self.partition_producers.get(handle)
        if sub is None:
            topic = self.topics[names.partition_name(producer.topic.full, index)]
            known = self.partition_names.get(producer.handle)
            if known is not None and index < len(known):
                name = known[index]
            elif self.partition_name_reported(producer, index):
                name = producer.name
            else:
                name = f"{producer.name} (partition {index})"
                self.unreported_producer_names.add(name)
            sub = replace(producer, handle=handle, topic=topic, sent=0, keyless_sent=0, name=name)
            self.partition_producers[handle] = sub
            self.partition_parent[handle] = producer.handle
            self.handle_profiles[handle] = self.profile_of(producer.handle)
            settings = self.pfx.setdefault(producer.handle, feature_state.ProducerFeatures())
            self.pfx[handle] = replace(settings, pending=[], used_up=set())
            self.pfx[handle].clear_region()
        return sub

    def partition_name_reported(self, producer: "Producer", index: int) -> bool:
        """Whether the producer name partition ``index``'s producer of the partitioned ``producer`` writes in its
        messages is one the history shows: the name the partitioned producer reports is partition 0's; a name the
        application gave is every partition's; the Java client passes partition 0's name on to the others
        (``PartitionedProducerImpl``, ``overrideProducerName``), while each C++ and Go partition producer takes the
        name the broker gives it (live 4.0.8, 6 Dec 2026: python partitions 0 and 1 wrote standalone-0-5 and
        standalone-0-4, go standalone-0-18 and standalone-0-17, java standalone-0-11 on both)."""
        known = self.partition_names.get(producer.handle)
        return (index == 0 or producer.handle in self.named_producers or (known is not None and index < len(known))
                or self.profile_of(producer.handle).client == "java")

    def producer_batches(self, handle: str) -> bool | None:
        """Whether the open producer ``handle`` batches (PLS-BATCH-007); None for a handle not open (never made, or
        closed: its settings are dropped then)."""
        features = self.pfx.get(handle)
        return None if features is None else features.batching

    def reported_partition_name(self, handle: str, index: int) -> str | None:
        """The producer name partition ``index``'s producer of ``handle`` writes, when the history shows it
        (``partition_name_reported``), else None."""
        producer = self.producers.get(handle)
        if producer is None or not self.partition_name_reported(producer, index):
            return None
        known = self.partition_names.get(handle)
        return known[index] if known is not None and index < len(known) else producer.name

    def as_sender_reports(self, producer: "Producer", value: dict) -> dict:
        """A send's or a flush's ``value`` as ``producer``'s client reports it. A producer opened on one partition's
        name is a producer of that topic, not of the partitioned one: its client gives its ids partition -1 (Java
        ``ProducerImpl`` keeps the partition index its partitioned producer passes, -1 otherwise; live 4.0.8 with
        the python, java and go clients, 6 Dec 2026), while a consumer reads the index off the topic name (Java
        ``ConsumerImpl``: ``TopicName#getPartitionIndex``), so the same message arrives with the partition's index
        (PLS-MSGID-001)."""
        if producer.topic.partition_index < 0 or producer.handle in self.partition_producers:
            return value

        def unpartitioned(mid: list[int]) -> list[int]:
            return [mid[0], mid[1], -1, mid[3]] if list(mid)[:2] != [-1, -1] else list(mid)

        value = dict(value)
        if "message_id" in value:
            plain = value.get("id_text") == str(MessageId.from_list(value["message_id"]))  # (a chunked id's text is not)
            value["message_id"] = unpartitioned(value["message_id"])
            if plain:
                value["id_text"] = str(MessageId.from_list(value["message_id"]))
        if "message_ids" in value:
            value["message_ids"] = {k: unpartitioned(v) for k, v in value["message_ids"].items()}
            value["id_texts"] = {k: str(MessageId.from_list(v)) for k, v in value["message_ids"].items()}
        return value

    def partition_producers_of(self, handle: str) -> list[str]:
        """The handles of the partition producers the open producer ``handle`` made (``partition_producer``), by
        partition."""
        producer = self.producers.get(handle)
        partitions = producer.topic.partitions if producer is not None else 0
        return [h for i in range(partitions) if (h := partition_handle(handle, i)) in self.partition_producers]

    def profile_of(self, handle: str) -> Profile:
        """The client profile of a live (or closed) handle."""
        return self.handle_profiles.get(handle, self.profile)

    def connection_mates(self, handle: str) -> list[str]:
        """The open handles on ``handle``'s client other than itself: one client keeps one connection to the broker,
        so they reconnect with it when it closes."""
        client = self.profile_of(handle).client
        return sorted(h for h in {*self.consumers, *self.readers, *self.producers}
                      if h != handle and self.profile_of(h).client == client)

    def copy_info(self, stored: "StoredMessage") -> tuple[str, str] | None:
        """``(kind, client)`` if ``stored`` is a copy a client wrote (DLQ or retry letter), else None."""
        full = names.expand_trace(stored.topic)
        return None if isinstance(full, Rejected) else self.copies.get((full, stored.pos))

    def _java_only_refusal(self, op: str, args: Mapping[str, Any], prof: Profile) -> Rejected | None:
        if "_start_rule" in args:
            return None  # a partitioned reader's own subscription (_create_partitioned_reader): every client makes it
        refused = client_refusal(op, args, prof)
        return None if refused is None else Rejected("InvalidArgument", *refused)

    def message(self, label: str, topic: "Topic | None" = None) -> StoredMessage | None:
        """Message ``label`` as sent, or its copy on ``topic`` (e.g. a dead-letter topic)."""
        if topic is not None:
            pos = topic.by_label.get(label)
            return None if pos is None else topic.entries[pos]
        found = self.labels.get(label)
        return None if found is None else found[0].entries[found[1]]

    @property
    def stored_count(self) -> int:
        """How many messages the broker has stored so far, on every topic."""
        return self._stored_count

    def attachments(self, handle: str) -> list[tuple[ConsumerConfig, Subscription]]:
        """Every (config, subscription) ``handle`` is attached to (one per partition)."""
        if handle in self.partition_consumers:
            return self.partition_consumers[handle]
        found = self.consumers.get(handle)
        return [] if found is None else [found]

    def message_for(self, handle: str, label: str, topic: str | None = None) -> StoredMessage | None:
        """Message ``label`` on a topic ``handle`` reads (a partition, a DLQ copy), else as sent.
        ``topic``: the (short) topic a receipt named, which settles where a label that is on two of
        the handle's topics (an original and its retry copy) came from."""
        reader = self.readers.get(handle)
        if reader is not None:
            pos = reader.topic.by_label.get(label)
            return None if pos is None else reader.topic.entries[pos]
        for _, sub in self.attachments(handle):
            pos = sub.topic.by_label.get(label) if topic is not None and sub.topic.short == topic else None
            if pos is not None:
                return sub.topic.entries[pos]
        first = None
        for _, sub in self.attachments(handle):
            pos = sub.topic.by_label.get(label)
            if pos is not None:
                if not sub.cursor.is_acked(pos):
                    return sub.topic.entries[pos]  # a retry copy is the live one, not the acked original
                first = first or sub.topic.entries[pos]
        return first

    def topic_names_of(self, handle: str) -> set[str]:
        reader = self.readers.get(handle)
        if reader is not None:
            return {reader.topic.short}
        return {sub.topic.short for _, sub in self.attachments(handle)}

    def is_acked(self, handle: str, label: str) -> bool:
        for _, sub in self.attachments(handle):
            pos = sub.topic.by_label.get(label)
            if pos is not None:
                return sub.cursor.is_acked(pos)
        return False

    def ack_time(self, handle: str, label: str) -> float | None:
        """When ``handle``'s application acked ``label`` (None: not acked by an op, or unknown)."""
        for _, sub in self.attachments(handle):
            pos = sub.topic.by_label.get(label)
            if pos is not None:
                return sub.ack_times.get(pos)
        return None

    def candidate_label(self, handle: str, candidate: Candidate) -> str:
        if candidate.topic:
            for _, sub in self.attachments(handle):
                if sub.topic.short == candidate.topic:
                    return sub.label(candidate.pos)
        return self._label_of(handle, candidate.pos)

    # ================================================================== time

    def advance(self, t: float) -> None:
        """Run client timers due by ``t`` (virtual time only moves forward)."""
        if t > self.now:
            self.now = t
        while self._timers and self._timers[0][0] <= t:
            self._timers.sort(key=lambda x: (x[0], x[1]))
            if self._timers[0][0] > t:
                break
            _, _, action = self._timers.pop(0)
            action()

    def next_timer(self) -> float | None:
        return min((x[0] for x in self._timers), default=None)

    def _schedule(self, when: float, action: Any) -> None:
        self._timer_seq += 1
        self._timers.append((when, self._timer_seq, action))
        self._timers.sort(key=lambda x: (x[0], x[1]))

    def subscription_of(self, handle: str) -> Subscription | None:
        found = self.consumers.get(handle)
        return None if found is None else found[1]

    def consumer_config(self, handle: str) -> ConsumerConfig | None:
        found = self.consumers.get(handle)
        return None if found is None else found[0]

    def _topic(self, name: str, *, create: bool, at: Span) -> Topic | Rejected:
        full = names.expand_trace(name)
        if isinstance(full, Rejected):
            return full
        topic = self.topics.get(full)
        if topic is None and create:
            # Auto-creation (allowAutoTopicCreation=true, non-partitioned).
            topic = self.topics[full] = Topic(full, self._next_ledger())
        if topic is None:
            return Rejected("TopicNotFound", "PLS-TOPIC-001", f"topic {full} does not exist", certain=False)
        return topic

    def _next_ledger(self) -> int:
        """The ledger id of a topic made now: one per topic in creation order, never one a deleted topic had."""
        return FIRST_LEDGER + len(self.topics) + self.ledgers_deleted

    def _handle_missing(self, handle: str, kind: str) -> Rejected:
        if handle in self.closed:
            return Rejected("AlreadyClosed", "PLS-SUB-001", f"{kind} {handle!r} is already closed")
        return Rejected("UnknownHandle", "PLS-SUB-001", f"no live {kind} named {handle!r}: a bug in the trace")

    # ================================================================== ops

    def step(self, op: str, args: Mapping[str, Any], at: Span, *,
             observed: Mapping[str, Any] | None = None) -> StepResult:
        """Apply one op (not ``receive``/``read_next``/``stats``) at ``at``: its outcome (the ok
        value or a ``Rejected``) and the facts the detectors need. ``observed`` lets the checker
        pass what a real target reported (``send``: ``publish_time`` and the partition)."""
        outcome = self._run(op, args, at, observed or {}, commit=True)
        return StepResult(outcome, dict(self.facts))

    def apply(self, op: str, args: Mapping[str, Any], at: Span, *,
              observed: Mapping[str, Any] | None = None) -> dict[str, Any] | Rejected:
        """``step(...).outcome``: the ok value or the ``Rejected``."""
        return self.step(op, args, at, observed=observed).outcome

    def predict(self, op: str, args: Mapping[str, Any], at: Span) -> Rejected | None:
        """What the spec allows for this op now: the ``Rejected`` it predicts, or None when the op
        succeeds. Only the clock moves (to ``at.start``); the op is not applied."""
        outcome = self._run(op, args, at, {}, commit=False)
        return outcome if isinstance(outcome, Rejected) else None

    def _run(self, op: str, args: Mapping[str, Any], at: Span, observed: Mapping[str, Any], *, commit: bool):
        step = self.STEPS.get(op)
        if step is None:
            raise ModelError(f"op {op!r} is not applied with Broker.apply; it applies {', '.join(self.STEPS)}")
        self.advance(at.start)
        if commit:
            self.facts = {}  # the step's facts, returned with its outcome by ``step``
            if op != "create_producer":
                self.creation_unsure.discard(args.get("producer") or args.get("handle"))
        self._committing = commit  # ``predict`` (False) asks what a refusal would mean; ``step`` applies the op
        try:
            outcome = decide_then(step(self, args, at, observed), commit=commit)
        finally:
            self._committing = True  # between steps the model is applying, not asking
        if commit and isinstance(outcome, Rejected):
            self.commit_refusal(op, args, outcome, at)
        return outcome

    def commit_refusal(self, op: str, args: Mapping[str, Any], refused: Rejected, at: Span | None = None) -> None:
        """What a refused op still leaves behind (``predict`` changes nothing; a caller that judged
        a refusal it predicted commits it with this). A send refused for its size used up a
        generated sequence id (``Profile.too_big_uses_sequence_id``, or a batched message) and, on
        a partitioned producer, moved the round-robin router (PLS-DEDUP-006, PLS-ROUTE-002); one the
        broker refused for its delay (PLS-DELAY-007) went to the broker with its id."""
        txn = self.txns.get(args.get("txn", ""))
        if txn is not None and refused.error == "TransactionConflict" and txn.state == txns.OPEN:
            self.txns[txn.name] = txns.failed(txn)  # PLS-TXN-011: it can no longer commit
        if txn is not None and refused.error == "TransactionHasOperationFailed" and txn.state == txns.OPEN:
            self._end_txn(txn, txns.ABORTED, at or Span.at(self.now))  # the Java client aborts it
        if op == "reconsume_later" and refused.rule == "PLS-DELAY-007":
            # PLS-RETRY-004: the client asks for the original again at once (redeliverUnacknowledgedMessages({id}))
            resolved = self._resolve(args["consumer"], args["message"])
            if not isinstance(resolved, Rejected):
                _, sub, pos = resolved
                sub.dispatcher.redeliver_positions(args["consumer"], [pos], at or Span.at(self.now), "PLS-RETRY-004",
                                                   f"the failed reconsume_later of {args['message']}")
        if op == "subscribe" and refused.error == "IncompatibleSchema":
            self.multi_topic_refused(args)  # another topic of the subscribe may have registered the schema
        if op == "send" and refused.rule == "PLS-ACCESS-004" and args.get("producer") in self.producers:
            self.pfx.setdefault(args["producer"], feature_state.ProducerFeatures()).fence_known = True
        if self.flush_refused_for_async(op, args, refused):
            self.commit_async_refusal_of_flush(self.producers[args["producer"]], at or Span.at(self.now))
        if op != "send" or (refused.error != "MessageTooBig" and refused.rule != "PLS-DELAY-007"):
            return
        producer = self.producers.get(args["producer"])
        if producer is None:
            return
        self.failed_last_send.add(producer.handle)
        if refused.rule == "PLS-DELAY-007":
            self._use_up_generated_id(producer, args)
        else:
            self._feature_refused_for_size(producer, args)
        # (a send the Go router hashed by its ordering key took no round-robin step either: live 4.0.8, Go campaign of
        # 5 Dec 2026, regression pls-route-002-wrong-partition-523e7f6ceada)
        if (producer.topic.partitions and args.get("key") is None and not self._routed_by_ordering_key(producer, args)
                and producer.routing_mode != "SinglePartition"):
            self._refused_keyless.setdefault(producer.handle, set()).add(args["payload"])

    def _op_advance_time(self, args, at, observed):
        yield  # decided: time moves (apply already advanced the clock)
        return {}

    def _op_create_topic(self, args, at, observed):
        full = names.expand_trace(args["topic"])
        if isinstance(full, Rejected):
            return full
        partitions = int(args.get("partitions", 0))
        if full in self.topics:
            return Rejected("OtherError", "PLS-TOPIC-001", f"topic {full} already exists", certain=False)
        self._check_not_discovered(args["topic"])
        yield  # decided: the topic is created
        self.topics[full] = Topic(full, self._next_ledger(), partitions)
        for i in range(partitions):
            # PLS-TOPIC-002: partition i is the topic <topic>-partition-i, and its index is read back
            # from that name as the broker's TopicName.getPartitionIndex does.
            part = names.partition_name(full, i)
            parsed = names.parse_topic(part)
            if isinstance(parsed, Rejected) or parsed.partition_index != i:
                raise ModelError(f"partition {i} of {full} is named {part}, which does not parse back to index {i}")
            self.topics[part] = Topic(part, self._next_ledger(), partition_index=parsed.partition_index)
        return {}

    def _op_create_producer(self, args, at, observed):
        prof = self.args_profile(args)
        refused = self._java_only_refusal("create_producer", args, prof)
        if refused is not None:
            return refused  # PLS-ROUTE-004: the Python client cannot choose a hashing scheme
        topic = self._peek_topic(args["topic"])
        if isinstance(topic, Rejected):
            return topic
        if topic is None:
            self._check_not_discovered(args["topic"])
        name = args.get("name")
        features = self._feature_create_producer(args, topic, name)
        if isinstance(features, Rejected) and features.error == "InvalidArgument":
            return features  # the client refuses its own configuration before it asks the broker (found live, issue 16)
        if isinstance(features, Rejected):
            # the access mode's epoch step, then the name check (PLS-ACCESS-006): access_modes.create_producer
            return features
        yield  # decided: the producer is created
        if observed.get("pending") and features.facts.get("pending") is False:
            self.creation_unsure.add(args["producer"])  # slow, not held back (feature_checks.UNHINDERED_CREATION_MS)
        topic = self._topic(args["topic"], create=True, at=at)
        pf, extra = self._feature_producer_created(topic, features)
        pf.faults_at_creation = len(self.fault_log)
        if (prof.client == "java" and prof.java_batch_timer_quiet) or prof.client == "go":
            pf.timer_quiet_from = at.start  # its batch timer sends nothing before at.start + the delay (BatchTimer)
        if name is None:
            name = observed.get("producer_name") or f"model-{self._producer_counter}"
            self._producer_counter += 1
            self.named_producers.discard(args["producer"])
        else:
            self.named_producers.add(args["producer"])
        # PLS-PROD-001: the first message gets initial_sequence_id + 1 (0 by default); PLS-DEDUP-002:
        # a named producer on a deduplicated topic continues after the broker's last sequence id.
        last = pf.sequence.last
        router = args.get("router")
        if router is not None:
            if router.get("hashing", "murmur3_32") not in routing.HASHINGS or router.get("client", "java") not in routing.CLIENTS:
                return Rejected("InvalidArgument", "PLS-ROUTE-001",
                                f"router hashing must be one of {routing.HASHINGS} and client one of {routing.CLIENTS}; got {dict(router)}")
        self.producers[args["producer"]] = Producer(args["producer"], topic, name, last, router=router,
                                                    batching=bool(args.get("batching")),
                                                    routing_mode=args.get("routing_mode", "RoundRobin"),
                                                    hashing=args.get("hashing_scheme") or prof.default_hashing_scheme)
        self.handle_profiles[args["producer"]] = prof
        self.pfx[args["producer"]] = pf
        self.partition_names.pop(args["producer"], None)
        if topic.partitions and args["producer"] not in self.named_producers and prof.client != "java":
            # PLS-KEYSHARED-001: each unnamed C++ or Go partition producer writes the name the broker gave it; the
            # live target reports them (read off the broker's publishers), the model names them after partition 0
            names_seen = observed.get("partition_producer_names")
            if names_seen is None and not self.follows_history:
                names_seen = [name] + [f"{name}-p{i}" for i in range(1, topic.partitions)]
            if isinstance(names_seen, list) and len(names_seen) == topic.partitions:
                self.partition_names[args["producer"]] = [str(n) for n in names_seen]
                extra = dict(extra, partition_producer_names=list(names_seen))
        return {"producer_name": name, "last_sequence_id": last, **extra}

    def _route(self, producer: "Producer", args) -> tuple[tuple[int, ...], tuple[str, ...], str]:
        """PLS-ROUTE-001/002: the partitions a send may go to, in canonical order.

        With a ``router`` (the trace's custom router reproducing a hashing scheme): a keyed message
        goes to exactly ``hash(key) mod N``; a keyless one round robin from partition 0 (the
        router's own choice, not a Pulsar rule). With the client's default router: a key goes where
        that key went before (the C++ default hash, BoostHash, is not modelled), a keyless message
        to the partition after the producer's previous keyless one (its start is random).
        Reads the producer's state only (a step calls it before its decision too).
        """
        n = producer.topic.partitions
        key = args.get("key")
        router = producer.router
        every = tuple(range(n))
        if router is not None:
            if key is not None:
                scheme = router.get("hashing", "murmur3_32")
                p = routing.partition_for_key(key, n, hashing_scheme=scheme, client=router.get("client", "java"))
                hash_rule = "PLS-HASH-001" if scheme == "murmur3_32" else "PLS-HASH-002"
                return (p,), ("PLS-ROUTE-001", hash_rule), f"{scheme}({key!r}) mod {n} = {p} ({router.get('client', 'java')} client)"
            # the trace's router starts its round robin at partition 0
            p = routing.round_robin_partitions(1, n, start=producer.keyless_sent, client="java")[0]
            return (p,) + tuple(q for q in every if q != p), (), "the custom router sends keyless messages round robin"
        go = self.profile_of(producer.handle).client == "go"
        if go and args.get("ordering_key"):
            key = args["ordering_key"]  # PLS-ROUTE-005: the Go router takes the ordering key before the key
        if key is not None and producer.hashing is not None:
            # PLS-ROUTE-004: the Java client hashes the partition key with its own scheme
            # (JavaStringHash unless hashing_scheme says murmur3_32): signSafeMod(hash, N).
            # PLS-ROUTE-005: the Go client's JavaStringHash keeps the sign bit, and takes hash % N.
            scheme = producer.hashing
            p = routing.partition_for_key(key, n, hashing_scheme=scheme, client="go" if go else "java")
            hash_rule = "PLS-HASH-001" if scheme == "murmur3_32" else "PLS-HASH-002"
            return (p,), ("PLS-ROUTE-001", "PLS-ROUTE-005" if go else "PLS-ROUTE-004", hash_rule), \
                f"the {'Go' if go else 'Java'} client's {scheme}({key!r}) mod {n} = {p}"
        if key is not None:
            seen = self._key_partition.get((producer.topic.full, key))
            if seen is not None:
                return (seen,), ("PLS-ROUTE-001",), f"key {key!r} went to partition {seen} before: same key, same partition"
            guess = self._key_partition_guess.get((producer.topic.full, key))
            if guess is not None:
                # an earlier message of the key went where nothing shows: this one goes with it, wherever that was
                # (model fuzz seed 20261223, fz-55a257610851: async m2 and m3 with key k3, neither shown, were guessed
                # onto different partitions, and a later send's deduplication there parted from the model's own run)
                return (guess,) + tuple(q for q in every if q != guess), ("PLS-ROUTE-001",), \
                    f"key {key!r} went with an earlier message of it, whose partition nothing shows"
            start = producer.sent % n
            return (start,) + tuple(q for q in every if q != start), ("PLS-ROUTE-001",), \
                f"the first message with key {key!r} on this topic (the default hash is not modelled)"
        last = self._last_keyless.get(producer.handle)
        if producer.routing_mode == "SinglePartition":
            if last is None:
                start = producer.sent % n
                return (start,) + tuple(q for q in every if q != start), ("PLS-ROUTE-003",), \
                    "the producer's first keyless message: SinglePartition picks a random partition"
            p = routing.single_partition(None, n, selected=last, hashing_scheme=producer.hashing or "murmur3_32")
            return (p,), ("PLS-ROUTE-003",), f"SinglePartition: every keyless message goes to partition {p}"
        if last is None:
            start = producer.sent % n
            return (start,) + tuple(q for q in every if q != start), ("PLS-ROUTE-002",), \
                "the producer's first keyless message: round robin starts at a random partition"
        if producer.batching:
            return every, (), "batching: the C++ router switches partition per batch"
        # the router's cursor is one past the previous keyless message's partition, and one more for
        # each keyless send refused since (the router had picked its partition: live 4.0.8, 2026-11-26)
        client = self.profile_of(producer.handle).client
        client = client if client in routing.CLIENTS else "cpp"  # a mixed run's own profile has the C++ values
        skipped = len(self._refused_keyless.get(producer.handle, ()))
        nxt = routing.round_robin_partitions(2 + skipped, n, start=last, client=client)[1 + skipped]
        return (nxt,), ("PLS-ROUTE-002",), (f"round robin: the previous keyless message went to partition {last}"
                                            + (f" and {skipped} refused send(s) took the next" if skipped else "")
                                            + f", so this one goes to {nxt}")

    def _peek_topic(self, name: str) -> Topic | Rejected | None:
        full = names.expand_trace(name)
        return full if isinstance(full, Rejected) else self.topics.get(full)

    def _admin_topic(self, name: str, rule: str) -> Topic | Rejected:
        """The topic an admin op names, or what the broker answers when it cannot (an invalid name; HTTP 404
        for a topic the model never created, uncertain: the broker may know it from elsewhere), charged to ``rule``."""
        topic = self._peek_topic(name)
        if topic is None:
            return Rejected("TopicNotFound", rule, f"topic {name} does not exist", certain=False)
        return topic

    def message_topics(self, topic: Topic) -> list[Topic]:
        """The topics that store ``topic``'s messages: each partition of a partitioned topic (made with it:
        ``_op_create_topic``), in partition order, else ``topic`` itself. An admin op on a partitioned name that the
        broker fans out (compaction, create-subscription, clear-backlog, a reset to a time) acts on these."""
        if not topic.partitions:
            return [topic]
        return [self.topics[names.partition_name(topic.full, i)] for i in range(topic.partitions)]

    def topic_named(self, name: str) -> Topic | None:
        """The topic a trace's ``name`` refers to, if the model has it (None for an invalid name)."""
        topic = self._peek_topic(name)
        return topic if isinstance(topic, Topic) else None

    def _op_send(self, args, at, observed):
        producer = self.producers.get(args["producer"])
        if producer is None:
            return self._handle_missing(args["producer"], "producer")
        if args.get("tombstone") == "null" and (refused := self._java_only_refusal("send", args, self.profile_of(producer.handle))):
            return refused  # PLS-GO-001: no null value in the Go client
        if "key_bytes" in args and (refused := self._java_only_refusal("send", args, self.profile_of(producer.handle))):
            return refused  # PLS-MSG-002 (Python), PLS-GO-001 (Go): no partition key as bytes
        if "key_bytes" in args and (producer.topic.partitions or self.pfx.get(producer.handle, None) is not None
                                    and self.pfx[producer.handle].batching):
            # which text the Java router hashes, and what a KeyBased batch groups by, for a key given as bytes
            raise NotModelledError("a key given as bytes on a partitioned or batching producer")
        if "key_bytes" in args and any(h in self.dead_letter or h in self.retry for s in producer.topic.subscriptions.values()
                                       if s.dispatcher is not None for h in s.dispatcher.connected()):
            raise NotModelledError("a dead-letter or retry copy of a message whose key was given as bytes (PLS-MSG-002)")
        label = args["payload"]
        if label in self.labels or label in self.deleted_labels or any(p.label == label for pf in self.pfx.values() for p in pf.pending):
            raise ModelError(f"payload label {label!r} sent twice; every send needs a distinct payload")
        refused = self._feature_send_check(producer, args)
        if refused is not None:
            return refused
        topic = producer.topic
        txn = self._send_txn(producer, args, at)
        if isinstance(txn, Rejected):
            return txn
        if not (topic.partitions and producer.batching):  # a partitioned one: per partition, once routed (below)
            self.check_batch_timer(producer.handle, at, args)
        # PLS-CHUNK-002/003: the size check comes before the send; on a partitioned topic every
        # partition's producer makes the same check (the metadata does not name the partition).
        plan = self._send_plan(producer, topic, args)
        if isinstance(plan, Rejected):
            return plan  # its effects on the producer: commit_refusal
        refused_async = isinstance(plan, AsyncRefusal)  # ok now, refused in its callback: the broker never sees it
        refused = None if refused_async else self._delay_limit_refusal(producer, topic, args, at)
        if refused is not None:
            return refused
        if topic.partitions and self._keyless_key_unknown(args.get("key"), args.get("ordering_key")):
            reported = observed.get("message_id")  # (a sync send's id names the partition the router took)
            shown = [int(reported[2])] if reported and 0 <= int(reported[2]) < topic.partitions else []
            if any(not self.partition_name_reported(producer, i) and any(
                    isinstance(sub.dispatcher, KeySharedDispatcher)
                    for sub in self.topics[names.partition_name(topic.full, i)].subscriptions.values())
                   for i in shown or self._route(producer, args)[0]):
                raise NotModelledError(self._KEYLESS_ON_PARTITIONS)
        if topic.partitions:
            self._check_partition_batches(producer, topic, args, at, observed)
        yield  # decided: the message is sent (a partitioned topic routes it first)
        self.sender_client[label] = self.profile_of(producer.handle).client
        if not topic.partitions:
            # a partitioned producer's flush waits for every partition's last send (Java PartitionedProducerImpl
            # #flushAsync), and a success on one partition leaves another's failure to report: the mark stays (live
            # 4.0.8, Java campaign of 5 Dec 2026: m4 refused MessageTooBig, async m6 and m7 sent, the flush failed
            # MessageTooBig; history fz-70d04543b2f6)
            self.failed_last_send.discard(producer.handle)
        # A synchronous send on a batching producer waits for its batch, so its partition and its id come with its
        # receipt like an unbatched one's (the routes of keyless batched sends are open: ``_route``). An async
        # batched one joins the open batch of its partition's producer (Java PartitionedProducerImpl keeps a
        # ProducerImpl, and so a BatchMessageContainer and a batch timer, per partition; C++ PartitionedProducerImpl
        # and Go partitionedProducer likewise: ``partition_producer``); the flush or a receipt shows its partition.
        sender = producer
        if topic.partitions:
            allowed, rules, reason = self._route(producer, args)
            if producer.router is not None and args.get("key") is None:
                producer.keyless_sent += 1  # the trace's router's round robin moves on (``_route`` only reads it)
            # Follow the partition the broker reported (the checker judges it against ``routes``). An async send
            # reports no id: the router picked its partition in the send call (Java PartitionedProducerImpl
            # #internalSendAsync, C++ PartitionedProducerImpl::sendAsync, Go partitionedProducer.SendAsync), and a
            # later flush or receipt shows which (``later_partitions``).
            index = self._partition_taken(topic, args, observed, allowed)
            if index == allowed[0] and args.get("async") and len(allowed) > 1 and self.later_partitions is not None \
                    and self._partition_shown(topic, args, observed) is None:
                # a judged history that never shows this message's id: no consumer or reader ever received it, and
                # the router had a choice; it is stored on the first allowed partition and held maybe absent there
                # (``_place_unshown``), so nothing owes it or waits for it, and the others' counts may hold it
                self.unplaced_labels.add(label)
                features = self.pfx.get(producer.handle)
                if not (producer.batching or (features is not None and features.chunking) or "txn" in args
                        or any(k in args for k in ("deliver_after_ms", "deliver_at_ms", "deliver_at"))):
                    self.unplaced_alone.add(label)  # written at its send, readable at once
            self.routes[label] = (allowed, rules, reason)
            if label in self.unplaced_labels:
                if args.get("key") is not None and producer.router is None and producer.hashing is None:
                    self._key_partition_guess.setdefault((topic.full, args["key"]), index)
                # its partition is a guess: the router's next choices are not taken from it. Except that a batching
                # producer's keyless sends after one are routed to any partition (``_route``: the router switches
                # per batch), as they are after a placed one; taking them for the first keyless send instead moved
                # the model's guesses apart from its own run (seed 20261206 trace 45217: a Go producer's later async
                # send was guessed onto the partition a sync send then took, and its explicit sequence id made the
                # sync send a duplicate there; regression pls-dedup-004-wrong-value-349427ef976b)
                if producer.batching and producer.routing_mode != "SinglePartition" and args.get("key") is None \
                        and not self._routed_by_ordering_key(producer, args):
                    self._last_keyless.setdefault(producer.handle, index)
            elif args.get("key") is not None:
                if producer.router is None and producer.hashing is None:
                    # the client's default hash (not modelled): a key keeps its partition across such producers only
                    # (a custom router or another scheme may send it elsewhere: the 3.2.3 campaign's
                    # pls-route-001-wrong-partition-c5ff99106f97, a Java-style murmur3 router then a default producer)
                    self._key_partition.setdefault((topic.full, args["key"]), index)
            elif not self._routed_by_ordering_key(producer, args):
                self._last_keyless[producer.handle] = index
                self._refused_keyless.pop(producer.handle, None)
            topic = self.topics[names.partition_name(topic.full, index)]
            # The partition's own producer sends it (partition_producer), with its own sequence ids (live 4.0.8, 6 Dec
            # 2026, python, java and go: keyless sends round-robin over two partitions got sequence ids 0, 0, 1, 1),
            # and, batching, one open batch per partition with its batch timer (what may have left before this send
            # was judged there before the decision: _check_partition_batches)
            sender = self.partition_producer(producer, index)
        producer.sent += 1
        # PLS-PROD-001 / PLS-DEDUP-*: sequence ids, dedup, batching, chunking, delay (feature_ops).
        # PLS-MSGID-001: non-partitioned -> partition -1; not batched -> batch_index -1.
        value = self._feature_send(sender, topic, args, at, observed)
        if int(args.get("payload_size", 0)) >= non_persistent.WRITABILITY_BYTES and not refused_async:
            self.large_message_sent = True  # after its own write: it may make the connection unwritable for the next
        if sender is not producer:
            producer.last_sequence_id = sender.last_sequence_id
            if not args.get("async") and not isinstance(value, Rejected):
                facts = self.facts  # (what the send decided; the other partitions' writes are not this step's facts)
                self.sync_send_flushed_partitions(producer, sender.handle, at)  # PLS-BATCH-009: triggerFlush
                self.facts = facts
        elif isinstance(value, dict) and "message_id" in value:
            value = self.as_sender_reports(producer, value)
        if txn is not None and not isinstance(value, Rejected) and label in self.labels:
            stored_topic, pos = self.labels[label]
            stored_topic.txn_of[pos] = txn.name
            self.txns[txn.name] = txns.produced(txn, stored_topic.full, pos)
            self._update_read_position(stored_topic, at)
        return value

    def _routed_by_ordering_key(self, producer: Producer, args: Mapping[str, Any]) -> bool:
        """PLS-ROUTE-005: the Go router hashes the ordering key as it does a key, and its round robin takes keyless
        messages only (live 4.0.8, Go campaign of issue 46: pls-route-002-wrong-partition-8b31dbd5a8be)."""
        return bool(args.get("ordering_key")) and self.profile_of(producer.handle).client == "go"

    def _partition_shown(self, topic: Topic, args, observed) -> int | None:
        """The partition the history shows a send took: a sync send's id, else (async) a later flush or receipt."""
        reported = observed.get("message_id")
        if reported and 0 <= int(reported[2]) < topic.partitions:
            return int(reported[2])
        shown = self.later_partitions.get(args["payload"]) if args.get("async") and self.later_partitions is not None else None
        return shown if shown is not None and 0 <= shown < topic.partitions else None

    def _partition_taken(self, topic: Topic, args, observed, allowed: list[int]) -> int:
        """The partition the model stores a send of a partitioned producer on: the one the history shows, else the
        router's first allowed one (``_place_unshown`` says when that is a guess)."""
        shown = self._partition_shown(topic, args, observed)
        return shown if shown is not None else allowed[0]

    def _check_partition_batches(self, producer: Producer, topic: Topic, args, at: Span, observed) -> None:
        """PLS-BATCH-009 on the partition a send of a partitioned producer takes, before the step's decision (a step
        refused after it would have moved the router already): a batching producer's own open batch there may leave
        on its timer (``check_batch_timer``, on its partition's producer), and another batching producer's messages
        there may or may not have left before this one (live 4.0.8, Java campaign of 6 Dec 2026, regression
        pls-excl-002-order-violation-f69bf30d4a9f)."""
        allowed = self._route(producer, args)[0]
        index = self._partition_taken(topic, args, observed, allowed)
        part = self.topics[names.partition_name(topic.full, index)]
        if producer.batching:
            if partition_handle(producer.handle, index) in self.partition_producers:
                self.check_batch_timer(partition_handle(producer.handle, index), at, args)
            else:
                # its first send there: only the other producers' batches can float (check_batch_timer's first test)
                self._refuse_floating(part.full, self.first_send_window(producer.handle, args, at),
                                      f"a message of {partition_handle(producer.handle, index)} on {part.short} (which is "
                                      "first is timing)", besides=partition_handle(producer.handle, index))
            return
        for i in allowed if self._partition_shown(topic, args, observed) is None else [index]:
            other = self.topics[names.partition_name(topic.full, i)]
            self._refuse_floating(other.full, at, f"a message of {producer.handle} on {other.short} (which is first "
                                                  "is timing)")

    def _place_unshown(self, topic: Topic, pos: int) -> None:
        """An async send of a partitioned producer whose partition no flush or receipt of the history shows, stored at
        ``pos`` of ``topic`` (the router's first allowed partition; Java RoundRobinPartitionMessageRouterImpl and C++
        RoundRobinMessageRouter start at a random partition and, batching, switch by wall clock, so which one took it
        is open): every subscription holds it maybe absent (``reference_model.maybe_absent``) and readers pass it by,
        unless whichever partition took it the same consumer is owed it at once (``_owed_on_every_partition``).
        Otherwise nothing owes it anywhere: a loss of it is not judged (the check's notes say so)."""
        topic.unplaced.add(pos)
        for sub in topic.subscriptions.values():
            if pos >= sub.start_pos and not sub.cursor.is_acked(pos):
                sub.maybe_absent.add(pos)
                owner = self._owed_on_every_partition(topic, sub, pos)
                if owner is not None:
                    parent = names.partitioned_parent(topic.short)
                    self.owed_anywhere[topic.entries[pos].label] = (owner, sub.dispatcher.type_name, topic.entries[pos].stored,
                                                                    parent, sub.name)

    def _owed_on_every_partition(self, topic: Topic, sub: "Subscription", pos: int) -> str | None:
        """The consumer the message at ``pos`` of partition ``topic``, whose partition is a guess (``_place_unshown``), is
        owed to whichever allowed partition took it, if there is one: sent alone (not batched, chunked, delayed or
        transactional, so written and readable at its send wherever it went), and on each allowed partition ``sub``'s
        name has a subscription whose only connected consumer is that handle (a consumer of the partitioned topic), with
        nothing else unacknowledged or maybe absent there, so it was dispatched to it at once wherever it was stored.
        Its place among the partition's other messages stays open (it stays maybe absent: the order rules do not wait
        for it), but its receipt would have shown its partition (``later_partitions``), so if that consumer later asks
        and gets nothing it was lost (``owed_anywhere``, judged at the end of the history by the checker). The held-out
        lie campaign of 7 Dec 2026: a Key_Shared consumer of both partitions of u, an async m1 by a producer of u, its
        receipt dropped, and nothing was said. On Key_Shared the consumer is owed it only when the selector gives it the
        message's key (model fuzz seed 20261220: a STICKY consumer whose ranges missed the key was charged a loss;
        regression pls-keyshared-007-lost-message-253425aab49a)."""
        label = topic.entries[pos].label
        if label not in self.unplaced_alone:
            return None  # a batched one is written with its partition's batch, whose timer and flushes are that partition's
        allowed = self.routes.get(label, ((),))[0]
        parent = names.partitioned_parent(topic.full)
        handles = None
        for index in allowed:
            part = self.topics.get(names.partition_name(parent, index))
            there = part.subscriptions.get(sub.name) if part is not None else None
            if there is None or there.dispatcher is None or not names.is_persistent(there.topic.full):
                return None
            connected = list(there.dispatcher.connected())
            if len(connected) != 1 or (handles is not None and connected != handles):
                return None
            if (isinstance(there.dispatcher, KeySharedDispatcher)
                    and there.dispatcher.current_owner_of_key(sub.dispatcher.sticky_key(pos)) != connected[0]):
                return None  # its key's hash is outside that consumer's ranges (STICKY) or its owner unknown: it waits
            handles = connected
            if any(p != pos or part is not topic for p in there.unacked_positions()) or there.maybe_absent - {pos}:
                return None
        return handles[0] if handles else None

    def _store(self, topic: Topic, label: str, *, key, ordering_key, properties, event_time, publish_time,
               producer_name, sequence_id, at: Span, message_id: MessageId | None = None,
               key_b64: bool = False) -> StoredMessage:
        if label in topic.by_label:
            raise ModelError(f"payload label {label!r} stored twice on {topic.full}")
        pos = len(topic.entries)
        # PLS-MSGID-001: partition -1 unless the topic is a partition; batch_index -1 (not batched).
        mid = message_id
        if mid is None:
            fx = self.topic_features(topic)
            mid = MessageId(topic.ledger, fx.next_entry, topic.partition_index, -1)
            fx.next_entry += 1
        stored = StoredMessage(
            pos=pos, label=label, message_id=mid, topic=topic.short, key=key, ordering_key=ordering_key,
            properties=tuple(sorted(properties.items())), event_time=event_time, publish_time=publish_time,
            producer_name=producer_name, sequence_id=sequence_id, stored=at, seq=self._stored_count,
            schema_version=self._label_schema_version.get(label), key_b64=key_b64)
        self._stored_count += 1
        topic.entries.append(stored)
        topic.by_label[label] = pos
        for sub in topic.subscriptions.values():
            self._tag_filter(sub, pos)
        if label in self.unplaced_labels:
            # a batched one is stored when its batch is written, after its send (live 4.0.8, python campaign of 5 Dec
            # 2026: m2 in an open batch whose partition nothing showed, written by a later flush; regression
            # pls-keyshared-007-key-order-violation-0e2cd0bc1c5f)
            self._place_unshown(topic, pos)
        return stored

    def _tag_filter(self, sub: "Subscription", pos: int) -> None:
        """PLS-TAG-001 (tdmq profile, ``reference_model.vendors`` rule 3): the filter acknowledges for
        ``sub`` a message whose tags share none of its tags; a batched message is not filtered (rule 4,
        PLS-TAG-002)."""
        if not self.profile.tag_filtering or not sub.tags:
            return
        stored = sub.topic.entries[pos]
        tags = vendors.filtered_tags(dict(stored.properties), batched=stored.message_id.batch_index >= 0)
        if not vendors.tag_accepts(tags, sub.tags):
            sub.tag_rejected[pos] = vendors.rejection_reason(tags, sub.tags)
            sub.cursor.ack(pos)

    def _op_create_subscription(self, args, at, observed):
        """The admin API's create-subscription (``PUT .../subscription/{name}``): a durable subscription
        without consumers at the earliest or the latest message (PLS-SUB-002/003), with subscription
        properties: under the tdmq profile their keys are its tags (PLS-TAG-001). On a partitioned topic the
        broker creates it on every partition, each at its own earliest or latest message (apache/pulsar
        PersistentTopicsBase#internalCreateSubscription: a partitioned name fans out to each partition's
        internalCreateSubscriptionForNonPartitionedTopic). PLS-SUB-009: a non-persistent name is refused before
        anything else, a name that exists answers 409, and a topic that does not exist is made (non-partitioned,
        as a client's first use makes it) with the subscription."""
        full = names.expand_trace(args["topic"])
        if isinstance(full, Rejected):
            return full
        if not names.is_persistent(full):
            # v2 PersistentTopics#createSubscription, before the topic is looked up: HTTP 400 (a trace's OtherError)
            return Rejected("OtherError", "PLS-SUB-009",
                            "Create subscription on non-persistent topic can only be done through client")
        topic = self.topics.get(full)
        parts = [] if topic is None else self.message_topics(topic)
        if any(args["subscription"] in t.subscriptions for t in parts):
            return Rejected("Conflict", "PLS-SUB-009", "Subscription already exists for topic")
        earliest = args.get("initial_position", "Latest") == "Earliest"
        if topic is None:
            self._check_not_discovered(args["topic"])
        yield  # decided: the broker creates it (and, PLS-SUB-009, the topic it names if there is none)
        in_flight = {t.full: self._latest_in_flight(t, observed, "a subscription created at Latest")
                     for t in parts if not earliest}
        if topic is None:
            made = self._topic(args["topic"], create=True, at=at)
            assert isinstance(made, Topic)
            parts = [made]
            self.facts = {"made_topic": True}
        for t in parts:
            self._create_subscription_on(t, args, at, earliest, in_flight.get(t.full, LatestStart()))
        return {}

    def _create_subscription_on(self, topic: Topic, args, at: Span, earliest: bool,
                                in_flight: LatestStart = LatestStart()) -> None:
        sub = (Subscription(topic, args["subscription"], Cursor(-1), at, "PLS-SUB-003") if earliest else
               self._latest_subscription(topic, args["subscription"], at, in_flight))
        sub.maybe_absent = topic.unplaced_from(sub.start_pos) - sub.before_cursor - sub.unsure_in_flight
        if earliest:
            sub.trimmable = self._trimmable_at_creation(topic)  # PLS-RETENTION-001
        sub.tags = vendors.subscription_tags(args.get("properties"))
        sub.reset_rule = sub.start_rule  # its first consumer starts where the admin put it (PLS-SUB-002/003), not a resume
        self.removed_non_durable.discard((topic.full, args["subscription"]))
        self.deleted_subscriptions.pop((topic.full, args["subscription"]), None)  # PLS-TOPIC-005: made again
        topic.subscriptions[args["subscription"]] = sub
        for pos in range(sub.cursor.mark_delete + 1, len(topic.entries)):
            self._tag_filter(sub, pos)

    def _latest_in_flight(self, topic: Topic, observed: Mapping[str, Any], what: str) -> LatestStart:
        """PLS-SUB-002: what a subscription made now at Latest on ``topic`` holds of the async sends in flight there,
        as the history shows (``FeatureOps.latest_start_in_flight``). On a non-persistent topic, whose ids show no
        entries (PLS-NP-003), not followed while any is in flight (``check_no_async_in_flight``)."""
        if not names.is_persistent(topic.full):
            self.check_no_async_in_flight(topic.full, what)
            return LatestStart()
        return self.latest_start_in_flight(topic.full, observed.get(LATER_RECEIPTS), what)

    @staticmethod
    def _latest_subscription(topic: Topic, name: str, at: Span, in_flight: LatestStart) -> "Subscription":
        """PLS-SUB-002: a subscription made at Latest: its cursor after the last message stored, or, where async sends
        were in flight then that the history shows after it (``_latest_in_flight``), before the first of those; what
        the broker stored between them is acked in it (``Subscription.before_cursor``: those sends had returned), and
        so are the in-flight ones none of its consumers received (``Subscription.unsure_in_flight``)."""
        held = {topic.by_label[label] for label in in_flight.after}
        first = min(held, default=len(topic.entries))
        sub = Subscription(topic, name, Cursor(first - 1), at, "PLS-SUB-002")
        sub.unsure_in_flight = {topic.by_label[label] for label in in_flight.unsure}
        for pos in range(first, len(topic.entries)):
            if pos not in held:
                (sub.unsure_in_flight if pos in sub.unsure_in_flight else sub.before_cursor).add(pos)
                sub.cursor.ack(pos)
        return sub

    def _op_subscribe(self, args, at, observed):
        prof = self.args_profile(args)
        refused = self._java_only_refusal("subscribe", args, prof)
        if refused is not None:
            return refused
        if (args.get("enable_retry") or args.get("dead_letter")) and "topic" in args \
                and (t := self.topic_named(args["topic"])) is not None and any(m.key_b64 for m in t.entries):
            raise NotModelledError("a dead-letter or retry copy of a message whose key was given as bytes (PLS-MSG-002)")
        if args.get("enable_retry"):
            return (yield from self._subscribe_with_retry(args, at, observed))
        if "topics" in args or "topics_pattern" in args:
            return (yield from self._subscribe_multi(args, at, observed))
        sub_type = args.get("type", "Exclusive")
        if sub_type not in DISPATCHERS:  # not a Pulsar behaviour: a trace names one of Pulsar's four types
            raise ModelError(f"unknown subscription type {sub_type!r}; use one of {', '.join(DISPATCHERS)}")
        # PLS-ACKTIMEOUT-001 (C++) / -003 (Java): checked by the client before anything is sent.
        ack_timeout = args.get("ack_timeout_ms") or 0
        why = check_ack_timeout(ack_timeout, prof.ack_timeout_min_ms)
        if why:
            return Rejected(prof.ack_timeout_error, prof.ack_timeout_rule, why)
        why = check_ack_timeout_tick(args.get("ack_timeout_tick_ms"), prof.ack_timeout_min_tick_ms)
        if why:
            return Rejected("InvalidArgument", "PLS-ACKTIMEOUT-003", why)  # ConsumerBuilderImpl#ackTimeoutTickTime
        backoffs = {}
        for arg, rule in (("nack_backoff", prof.nack_backoff_rule), ("ack_timeout_backoff", "PLS-ACKTIMEOUT-005")):
            given = args.get(arg)
            if given is None:
                continue
            # PLS-NACK-004 / PLS-ACKTIMEOUT-005: MultiplierRedeliveryBackoff.builder() checks its arguments.
            backoffs[arg] = (int(given["min_delay_ms"]), int(given["max_delay_ms"]), float(given.get("multiplier", 2.0)))
            try:
                multiplier_backoff_ms(0, *backoffs[arg])
            except ValueError as err:
                return Rejected("InvalidArgument", rule, str(err))
        backoff = backoffs.get("nack_backoff")
        durable = args.get("subscription_mode", "Durable") == "Durable"
        ks_arg = args.get("key_shared")
        if ks_arg is not None and sub_type == "Key_Shared":
            # PLS-KEYSHARED-005: the client checks the policy (mode, STICKY ranges) first.
            refused = check_policy(KeySharedPolicy.from_arg(ks_arg))
            if refused is not None:
                return refused
        topic = self._peek_topic(args["topic"])
        if isinstance(topic, Rejected):
            return topic
        if topic is None:
            self._check_not_discovered(args["topic"])
        if topic is not None and topic.partitions:
            return (yield from self._subscribe_partitioned(topic, args, at, observed))
        if topic is not None and sub_type == "Key_Shared":
            self._check_keyless_known([topic])  # (one partition, by its own name, or a member of a topic list)
        config = ConsumerConfig(
            handle=args["consumer"], subscription=args["subscription"], type=sub_type,
            nack_delay_ms=int(args.get("nack_delay_ms", DEFAULT_NACK_DELAY_MS)),
            ack_timeout_ms=int(ack_timeout),
            receiver_queue_size=int(args.get("receiver_queue_size", DEFAULT_RECEIVER_QUEUE_SIZE)),
            start_message_id_inclusive=bool(args.get("start_message_id_inclusive", False)),
            consumer_name=args.get("consumer_name"), nack_backoff=backoff,
            key_shared=dict(ks_arg) if (ks_arg is not None and sub_type == "Key_Shared") else None,
            profile=prof, priority_level=int(args.get("priority_level", 0)),
            ack_timeout_tick_ms=args.get("ack_timeout_tick_ms"), ack_timeout_backoff=backoffs.get("ack_timeout_backoff"),
            joined_at=at.end, nack_tracker=JavaNackTracker() if prof.nack_timer == "deadline" else None,
            # PLS-UNACKED-001: the limit is not checked on a non-durable subscription (Consumer#getMaxUnackedMessages
            # answers 0 unless isDurable; live 4.0.8 and 4.2.4, Java campaign of 6 Dec 2026: a NonDurable Shared
            # consumer under a limit of 1 got m3 while m2 was unacked; regression
            # pls-unacked-001-wrong-value-d010a708ddb1)
            max_unacked=self.policies.max_unacked_messages_per_consumer if durable else 0)
        dead = args.get("dead_letter")
        refused_count = dl.check_max_redeliver_count(dead.get("max_redeliver_count")) if dead is not None else None
        if refused_count is not None and prof.dlq_counts_deliveries:
            # PLS-DLQ-008: pulsar-client-go dlq_router.go newDlqRouter
            return Rejected("InvalidConfiguration", "PLS-DLQ-008", "DLQPolicy.MaxDeliveries needs to be > 0")
        if dead is not None and prof.dlq_counts_deliveries and not dead.get("topic") and not args.get("enable_retry"):
            # PLS-DLQ-008: the Go client has no default dead-letter topic (only a retry-enabled consumer gets one)
            return Rejected("InvalidConfiguration", "PLS-DLQ-008", "DLQPolicy.Topic needs to be set to a valid topic name")
        if refused_count is not None:
            # PLS-DLQ-007: Python's ConsumerDeadLetterPolicy raises ValueError (its text here for both
            # clients: a Java trace reaches this check only through Python-shaped args).
            return Rejected("InvalidArgument", "PLS-DLQ-007", refused_count)
        full = names.expand_trace(args["topic"])
        refused = self._feature_subscribe_check(args, sub_type, full if isinstance(full, str) else None)
        if refused is not None:
            return refused
        sub = topic.subscriptions.get(config.subscription) if topic is not None else None
        # A non-persistent topic has no durable subscriptions: NonPersistentTopic#subscribe ignores the mode
        # (live 4.0.8, Java campaign 2026-11-27, pls-sub-008-wrong-error-bbd35633b035: a NonDurable Shared
        # consumer next to a Durable Failover one got the type check's ConsumerBusy, not NotAllowedError).
        persistent = names.is_persistent(sub.topic.full) if sub is not None else True
        if sub is not None and persistent and not durable and sub.durable:
            # PLS-SUB-008: PersistentTopic#getNonDurableSubscription refuses a name a durable subscription has.
            return Rejected("NotAllowedError", "PLS-SUB-008", "Durable subscription with the same name already exists.")
        if sub is not None and persistent and durable and not sub.durable:
            # PLS-SUB-008, the converse: PersistentTopic#getDurableSubscription refuses a name a NonDurable cursor has.
            return Rejected("NotAllowedError", "PLS-SUB-008", "NonDurable subscription with the same name already exists.")
        if sub is not None and sub.dispatcher is not None and sub.dispatcher.connected():
            current = sub.dispatcher.type_name
            if current != sub_type:
                # PLS-SUBTYPE-001: "Subscription is of different type".
                return Rejected("ConsumerBusy", "PLS-SUBTYPE-001",
                                f"Subscription is of different type. Active subscription type of '{current}' "
                                f"is different than the connecting consumer's type '{sub_type}'.")
            refused = sub.dispatcher.admit(config)
            if refused is not None:
                return refused
            self._check_one_dead_letter_limit(sub, dead, sub_type)
        elif sub_type == "Key_Shared":
            # the first consumer: the broker still checks its own STICKY ranges (PLS-KEYSHARED-005)
            policy = KeySharedPolicy.from_arg(config.key_shared)
            if policy.mode == "Sticky":
                joined = ks.sticky_join(ks.Sticky(self.key_shared.profile), config.handle, list(policy.ranges))
                if isinstance(joined, Rejected):
                    return joined
        if (self.profile.tag_filtering and args.get("subscription_properties")
                and not names.is_persistent(full if isinstance(full, str) else "")):
            raise NotModelledError("tags on a non-persistent topic's subscription (the tag filter there is not measured)")
        yield  # decided: the consumer joins the subscription
        # (where it starts is decided once the subscribe is: a refused one makes no cursor to place)
        in_flight = self._latest_in_flight(topic, observed, "a subscription created at Latest") \
            if sub is None and topic is not None and args.get("initial_position", "Latest") == "Latest" else LatestStart()
        topic = self._topic(args["topic"], create=True, at=at)
        if sub is None:
            # PLS-SUB-001: created by the first subscribe. PLS-SUB-002/003: initial position.
            n = len(topic.entries)
            # PLS-NP-001: a non-persistent topic keeps nothing to start from: always after the last message.
            if args.get("initial_position", "Latest") == "Earliest" and names.is_persistent(topic.full):
                sub = Subscription(topic, config.subscription, Cursor(-1), at, "PLS-SUB-003")
                sub.trimmable = self._trimmable_at_creation(topic)  # PLS-RETENTION-001
            elif args.get("_start_at_last") and n and names.is_persistent(topic.full):
                # a Go partitioned reader from latest, inclusive: at each partition's last message (PLS-READER-004)
                sub = Subscription(topic, config.subscription, Cursor(n - 2), at, "PLS-READER-004")
            else:
                sub = self._latest_subscription(topic, config.subscription, at, in_flight)
            sub.maybe_absent = topic.unplaced_from(sub.start_pos) - sub.before_cursor - sub.unsure_in_flight
            sub.durable = durable  # PLS-SUB-007: a non-durable one goes with its last consumer
            if not durable:
                sub.start_rule = args.get("_start_rule", "PLS-SUB-007")  # a partitioned reader's: PLS-READER-001/002/004
            self.removed_non_durable.discard((topic.full, config.subscription))
            self.deleted_subscriptions.pop((topic.full, config.subscription), None)  # PLS-TOPIC-005: made again
            topic.subscriptions[config.subscription] = sub
            start_rule = sub.start_rule
            # PLS-TAG-001: the first consumer's subscription properties are the new subscription's (its tags)
            sub.tags = vendors.subscription_tags(args.get("subscription_properties"))
            for pos in range(sub.cursor.mark_delete + 1, len(topic.entries)):
                self._tag_filter(sub, pos)
        else:
            # PLS-SUB-004: initial position ignored; resume (PLS-SUB-005), where an admin reset put it (PLS-SEEK-004)
            start_rule, sub.reset_rule = sub.reset_rule or "PLS-SUB-005", None
            # PLS-TAG-003: a subscription that exists keeps its properties, whatever a joining consumer gives
            given = vendors.subscription_tags(args.get("subscription_properties"))
            if "subscription_properties" in args and given != sub.tags:
                sub.other_tags[config.handle] = given
        if sub.dispatcher is None or not sub.dispatcher.connected():
            # The type is fixed by the first connected consumer; a new dispatcher each time.
            sub.dispatcher = self._new_dispatcher(sub_type, sub)
        sub.delivery_span = self.delivery_span
        sub.feature_rules = self.delivery_rules
        sub.delay_tracked = self.delay_tracked
        sub.entry_members = self.entry_members
        sub.dispatcher.add_consumer(config, at, start_rule)
        self.consumers[config.handle] = (config, sub)
        self.handle_profiles[config.handle] = prof
        self.disconnected_at.pop(config.handle, None)  # a new consumer under this handle: a connection of its own
        if prof.first_permits_after_subscribe:  # PLS-NP-001 (non_persistent rule 6)
            self.first_permits_by[config.handle] = at.end + self.slack_ms
        self._feature_subscribed(config, sub, args)
        if args.get("read_compacted") and self.topic_features(topic).horizon is not None:
            # PLS-COMPACT-001, PLS-SUB-005: a single-active consumer reads the compacted view from its
            # subscription's first unacked message, whatever initial position it asked for (PLS-SUB-004).
            if len(sub.dispatcher.connected()) > 1 or not hasattr(sub.dispatcher, "compacted_skip"):
                raise NotModelledError("a consumer reading compacted beside other consumers of its subscription")
            sub.dispatcher.compacted_skip = frozenset(self._compacted_skip(topic))
            sub.dispatcher.compacted_horizon = self.topic_features(topic).horizon
            sub.dispatcher.compacted_tombstones = frozenset(sub.dispatcher.compacted_skip & set(self.topic_features(topic).tombstone))
        dead = args.get("dead_letter")
        # PLS-DLQ-005: only Shared/Key_Shared count redeliveries; elsewhere the policy never acts.
        if dead and dead.get("max_redeliver_count") and dl.dlq_applies(sub_type):
            dlq = names.expand_trace(dead["topic"]) if dead.get("topic") else None  # None: the default name
            if isinstance(dlq, Rejected):
                raise NotModelledError("an invalid dead-letter topic name")
            # PLS-DLQ-008: the Go client's MaxDeliveries N delivers N times, what the others do with N - 1
            redeliveries = int(dead["max_redeliver_count"]) - (1 if prof.dlq_counts_deliveries else 0)
            self.dead_letter[config.handle] = DeadLetterPolicy(redeliveries, dlq,
                                                               dead.get("initial_subscription"), prof.dlq_properties)
        return {}

    def _new_dispatcher(self, sub_type: str, sub: "Subscription") -> Dispatcher:
        if sub_type == "Key_Shared":
            return KeySharedDispatcher(sub, self.profile, self.slack_ms, self.key_shared)
        dispatcher = DISPATCHERS[sub_type](sub, self.profile, self.slack_ms)
        if sub_type == "Failover" and sub.topic.partition_index >= 0:
            dispatcher.partition_index = sub.topic.partition_index  # PLS-FAILOVER-004
        if isinstance(dispatcher, (ExclusiveDispatcher, SharedDispatcher)):
            # after a fault, a latency or a stall the band of a queued copy is the client's: none is sure
            dispatcher.queue_known = lambda: not self.fault_log
        return dispatcher

    def _subscribe_with_retry(self, args, at, observed):
        """PLS-RETRY-001 (Java ``enableRetry(true)``, ``ConsumerBuilderImpl#subscribeAsync``): the
        consumer also subscribes, with the same subscription, to the retry letter topic
        (``dead_letter.retry_topic``, else ``<topic>-<subscription>-RETRY``), always as Shared
        (``ConsumerBase#getSubType``: the retry copies are delayed messages). Without a dead-letter
        policy the builder sets ``maxRedeliverCount`` 16 and the dead-letter topic
        ``<topic>-<subscription>-DLQ``, both named after the first topic (not per partition), and
        that policy also dead-letters nacked messages (PLS-DLQ-002)."""
        if "topic" not in args:
            raise NotModelledError("enable_retry with a topic list or pattern")
        first = names.expand_trace(args["topic"])
        if isinstance(first, Rejected):
            return first
        dead = dict(args.get("dead_letter") or {})
        refused_count = (dl.check_max_redeliver_count(dead.get("max_redeliver_count"), "java")
                         if args.get("dead_letter") is not None else None)
        if refused_count is not None:
            return Rejected("InvalidArgument", "PLS-DLQ-007", refused_count)
        if args.get("read_compacted"):
            # Live 4.0.8 (regression pls-sub-001-unexpected-rejection-2cac07dedac6): the broker refuses the retry
            # topic's Shared subscription with NotAllowedError ("readCompacted only allowed on failover or exclusive
            # subscriptions"), after the first topic's subscription may have been created
            raise NotModelledError("enable_retry with read_compacted (the retry topic's Shared subscription is refused)")
        by_topic = self.profile.java_retry_names_by_topic
        retry = (names.expand_trace(dead["retry_topic"]) if dead.get("retry_topic")
                 else dl.default_retry_topic(first, args["subscription"], by_topic=by_topic))
        dlq = (names.expand_trace(dead["topic"]) if dead.get("topic")
               else dl.default_retry_dlq_topic(first, args["subscription"], by_topic=by_topic))
        if isinstance(retry, Rejected) or isinstance(dlq, Rejected):
            raise NotModelledError("an invalid retry or dead-letter topic name")
        policy = RetryPolicy(retry, int(dead.get("max_redeliver_count", dl.MAX_RECONSUMETIMES)), dlq,
                             dead.get("initial_subscription"))
        member_dead = {"max_redeliver_count": policy.max_redeliver, "topic": dlq}
        if policy.initial_subscription:
            member_dead["initial_subscription"] = policy.initial_subscription
        rest = {k: v for k, v in args.items() if k not in ("enable_retry", "topic", "dead_letter")}
        rest["dead_letter"] = member_dead
        parent = self.topics.get(first)
        if parent is not None and parent.partitions:
            members = [dict(rest, topic=names.partition_name(first, i)) for i in range(parent.partitions)]
        else:
            members = [dict(rest, topic=first)]
        retry_args = {k: v for k, v in rest.items() if k not in ("key_shared", "read_compacted")}
        members.append(dict(retry_args, topic=retry, type="Shared"))
        refused = self._admit_all(members, at, observed)
        if refused is not None:
            return refused
        yield  # decided: the consumer joins the topic's and the retry topic's subscriptions
        self._check_latest_starts(members, observed)  # before the retry topic is made
        self._topic(retry, create=True, at=at)
        self._attach_all(members, args, at, observed)
        self.retry[args["consumer"]] = policy
        return {}

    def _op_reconsume_later(self, args, at, observed):
        """PLS-RETRY-001..003, Java ``ConsumerImpl#doReconsumeLater(message, delay)``: the copy gets the
        original's properties plus REAL_TOPIC, ORIGIN_MESSAGE_ID, ORIGIN_MESSAGE_IDY_TIME and
        REAL_SUBSCRIPTION (each only if absent), RECONSUMETIMES (1, then +1) and DELAY_TIME; it goes
        to the retry letter topic, delivered after the delay, or once RECONSUMETIMES exceeds
        ``maxRedeliverCount`` to the dead-letter topic; then the original is acked."""
        handle = args["consumer"]
        prof = self.profile_of(handle)
        if prof.retry_letter_supported is None:
            raise NotModelledError(f"reconsume_later on the {prof.client} client (its retry is not the Java client's)")
        if not prof.retry_letter_supported:
            return Rejected("InvalidArgument", "PLS-RETRY-001", f"the {prof.client} client has no reconsumeLater (Java only)")
        found = self._consumer_or_reject(handle)
        if isinstance(found, Rejected):
            return found
        policy = self.retry.get(handle)
        if policy is None:
            # ConsumerBase#reconsumeLater: RECONSUME_LATER_ERROR_MSG (a plain PulsarClientException)
            return Rejected("OtherError", "PLS-RETRY-001", "reconsumeLater method not supported because retryEnabled is set to false")
        if args["message"] not in self.received_labels.get(handle, ()):
            # the Java API takes a received Message (Consumer#reconsumeLater(Message, ...)), not an id: the driver
            # refuses an op naming a message its consumer never received (Java 4.0.8 campaign, 27 Nov 2026,
            # regression pls-sub-001-unexpected-rejection-ef7e5c11dc03)
            # certain only for a message the model knows: one it does not (sent by an op it did not follow, e.g. on a
            # producer whose connection a fenced send may have closed) may have reached this consumer unseen by it
            # (model campaign, 28 Nov 2026: regression pls-retry-001-missing-rejection-2f0a6cda9abe)
            return Rejected("OtherError", "PLS-RETRY-001", f"{handle} has not received {args['message']}: the Java "
                            "client's reconsumeLater takes a received Message, not an id",
                            certain=args["message"] in self.labels)
        resolved = self._resolve(handle, args["message"])
        if isinstance(resolved, Rejected):
            return resolved
        config, sub, pos = resolved
        original = sub.topic.entries[pos]
        mid = original.message_id
        origin = dl.java_message_id_text(mid.ledger, mid.entry, mid.partition, mid.batch_index)
        delay = int(args["delay_ms"])
        props = dl.retry_properties(dict(original.properties), origin, dl.strip_partition_suffix(sub.topic.full), sub.name, delay,
                                    real_subscription=self.profile.java_real_subscription,
                                    origin_message_id=self.profile.java_origin_message_id)
        to_dead_letter = dl.reconsume_goes_to_dead_letter(props, policy.max_redeliver)
        if not to_dead_letter and delay > 0 and names.is_persistent(policy.retry_topic):
            # PLS-DELAY-007: the retry copy is a delayed message (deliverAfter(delay)); a broker with
            # delayedDeliveryMaxDelayInMillis refuses one delayed past it, and ConsumerImpl#doReconsumeLater fails
            # with that error without acking the original (TDMQ: a reconsumeLater delay is 1..864 000 s, R8)
            too_far = delayed.exceeds_max_delay((at.start + delay, at.end + delay), (at.start, at.end),
                                                self.profile.delayed_max_delay_ms)
            if too_far is not False:
                if sub.dispatcher is None or sub.dispatcher.type_name != "Shared":
                    # PLS-RETRY-004: elsewhere the failed reconsumeLater makes the client redeliver everything unacked
                    raise NotModelledError("a reconsume_later the broker refuses on a non-Shared subscription (the "
                                           "client then redelivers every unacked message)")
                if too_far is None:
                    raise NotModelledError("a reconsume_later delayed by about delayedDeliveryMaxDelayInMillis "
                                           "(refused or not, the original's redelivery differs)")
                return Rejected("NotAllowedError", "PLS-DELAY-007", "Exceeds max allowed delivery delay of "
                                f"{self.profile.delayed_max_delay_ms} milliseconds")
        yield  # decided: the copy goes to the retry (or dead-letter) topic
        if to_dead_letter:
            # PLS-RETRY-003: past maxRedeliverCount the copy goes to the dead-letter topic, at once
            target = self._dead_letter_topic(policy.dead_letter_topic, policy.initial_subscription, at)
            kind, deliver_at = "retry-dlq", None
        else:
            target = self.topics[policy.retry_topic]
            kind = "retry"
            deliver_at = (at.start + delay, at.end + delay) if delay > 0 else None  # deliverAfter(delay)
        # the client publishes the copy, then acks the original (the model acks first: the same state)
        if sub.cursor.ack(pos):
            sub.ack_log.append((at.end, self._entries_of(sub, [pos]), handle))
            sub.ack_times[pos] = at.start
            sub.dispatcher.acked([pos], at)
        # the client acks it once the copy is written, through its ack grouping (``reset_subscription``)
        sub.acked_after_copy[pos] = at.end + self.profile.ack_grouping_ms
        stored = self._store_copy(target, original, props, at, RETRY_PRODUCER if kind == "retry" else DLQ_PRODUCER,
                                  event_time=dl.java_copy_event_time(original.event_time,
                                                                     copied=self.profile.java_copy_event_time))
        if deliver_at is not None:
            self.topic_features(target).deliver_at[stored.pos] = deliver_at
        self.copies[(target.full, stored.pos)] = (kind, prof.client)
        return {}

    def _store_copy(self, target: Topic, original: "StoredMessage", props: Mapping[str, str], at: Span,
                    producer_name: str, *, event_time: int) -> "StoredMessage":
        """Publish a client-made copy of ``original`` (same label and keys, ``event_time``) on ``target``. A
        label already there (an earlier retry copy) is stored again, and the label then names the new
        copy; the model cannot tell the copies apart for a subscription still holding the old one."""
        old = target.by_label.get(original.label)
        if old is not None:
            if any(not s.cursor.is_acked(old) for s in target.subscriptions.values()):
                raise NotModelledError(f"a second copy of {original.label} on {target.short} while a subscription "
                                       "there has not acked the first one")
            del target.by_label[original.label]
        return self._store(target, original.label, key=original.key, ordering_key=original.ordering_key,
                           properties=dict(props), event_time=event_time, publish_time=int(at.start),
                           producer_name=producer_name, sequence_id=len(target.entries), at=at)

    def copy_producer_present(self, full: str) -> str | None:
        """PLS-ACCESS-005: the producer a consumer's client made to write dead-letter or retry copies on ``topic``
        (a Shared producer the client keeps open while the consumer lives), or None when there is none. Live
        5.0.0-M1, 27 Nov 2026: after a message went to the DLQ, a WaitForExclusive producer on the DLQ topic waited
        (regression pls-access-005-wrong-value-f2c305cf51be). Not modelled (NotModelledError): a copy still on
        its way; a connected consumer whose policy writes there but has sent no copy yet (its client makes the
        producer with the first one, which the history does not show); copies whose consumers have all closed."""
        topic = self.topics.get(full)
        short = topic.short if topic is not None else full
        copies = [m for m in topic.entries if m.producer_name in (DLQ_PRODUCER, RETRY_PRODUCER)] if topic is not None else []
        writers = [h for h in self.consumers if full in self._copy_targets(h)]
        if any(m.stored.end > self.now for m in copies):
            raise NotModelledError(f"a producer on {short} while a dead-letter or retry copy may still be on its way there")
        if copies and writers:
            return copies[-1].producer_name
        if copies:
            raise NotModelledError(f"a producer on {short}, whose dead-letter or retry copies came from consumers "
                                   "now closed (their client's copy producer may be closed or not)")
        if writers:
            raise NotModelledError(f"a producer on {short}, where the dead-letter or retry policy of {writers[0]} "
                                   "writes: its client makes that producer with the first copy")
        return None

    def _copy_targets(self, handle: str) -> set[str]:
        """The topics consumer ``handle``'s client writes dead-letter or retry copies to (PLS-DLQ-001, PLS-RETRY-001)."""
        targets: set[str] = set()
        dead = self.dead_letter.get(handle)
        found = self.consumers.get(handle)
        if dead is not None and found is not None:
            targets.add(dead.topic or dl.default_dlq_topic(found[1].topic.full, found[1].name))
        retry = self.retry.get(handle)
        if retry is not None:
            targets |= {retry.retry_topic, retry.dead_letter_topic}
        return targets

    def _dead_letter_topic(self, full: str, initial_subscription: str | None, at: Span) -> Topic:
        """The DLQ topic, created with the DLQ producer; ``initialSubscriptionName`` is created with it (PLS-DLQ-004)."""
        dlq = self.topics.get(full)
        if dlq is None:
            dlq = self.topics[full] = Topic(full, self._next_ledger())
        if initial_subscription and initial_subscription not in dlq.subscriptions:
            dlq.subscriptions[initial_subscription] = Subscription(dlq, initial_subscription, Cursor(len(dlq.entries) - 1),
                                                                   at, "PLS-DLQ-004")
        return dlq

    @staticmethod
    def non_persistent_held(sub: Any) -> bool:
        """Whether a non-persistent topic's subscription ``sub`` is still there: the broker drops it with its last
        consumer (live 4.0.8, 2026-11-27, 3/3: regression pls-backlog-001-unexpected-rejection-143de56b27d7)."""
        return sub is not None and sub.dispatcher is not None and bool(sub.dispatcher.connected())

    def multi_topic_names(self, args: Mapping[str, Any]) -> list[str] | Rejected:
        """The full names a subscribe to a list of topics or to a pattern names, in the order it subscribes them: a
        list as given (an invalid name refuses the whole subscribe); a pattern matches the short names of the topics
        there are now (partitioned ones by their own name, never a partition's), in name order. One home for the
        choice ``_subscribe_multi`` and the schema checks make (``SchemaOps._subscribed_topics``, for ``_topics_subscribe``
        and ``schema_unfollowed``)."""
        if "topics_pattern" in args:
            try:
                pattern = re.compile(args["topics_pattern"])
            except re.error as err:
                return Rejected("InvalidArgument", "PLS-TOPIC-001", f"topics_pattern is not a regex: {err}")
            return sorted(t.full for t in self.topics.values() if t.partition_index < 0 and pattern.fullmatch(t.short))
        chosen = []
        for name in args["topics"]:
            full = names.expand_trace(name)
            if isinstance(full, Rejected):
                return full
            chosen.append(full)
        return chosen

    def _subscribe_multi(self, args, at, observed):
        """A consumer of a list of topics, or of every topic whose short name matches a regex
        (at subscribe time; partitioned topics count by their own name, and bring all partitions)."""
        rest = {k: v for k, v in args.items() if k not in ("topics", "topics_pattern")}
        chosen = self.multi_topic_names(args)
        if isinstance(chosen, Rejected):
            return chosen
        if not chosen:
            raise NotModelledError("a pattern subscription that matches no topic yet (auto-discovery)")
        member_args = []
        for full in chosen:
            t = self.topics.get(full)
            if t is not None and t.partitions:
                member_args += [dict(rest, topic=names.partition_name(full, i)) for i in range(t.partitions)]
            else:
                member_args.append(dict(rest, topic=full))
        refused = self._admit_all(member_args, at, observed)
        if refused is not None:
            return refused
        yield  # decided: the consumer joins every member topic's subscription
        self._check_latest_starts(member_args, observed)
        self._attach_all(member_args, args, at, observed)
        if "topics_pattern" in args:
            self.pattern_consumers[args["consumer"]] = re.compile(args["topics_pattern"])
        if "topics_pattern" in args or len(set(chosen)) > 1:
            # (Go: a list of one topic is that topic's consumer, consumer_impl.go newConsumer)
            self.multi_topic_consumers.add(args["consumer"])
        return {}

    def _check_not_discovered(self, name: str) -> None:
        """Pattern auto-discovery is not modelled: a topic created while a connected pattern consumer's
        regex matches it may be found and subscribed at once (the Java client's topic list watcher,
        PIP-145; live 4.0.8, Java campaign 2026-11-27, pls-sub-001-wrong-value-440f7b582907: a consumer of
        [tu] subscribed when only u existed received m1 from t, created after)."""
        full = names.expand_trace(name)
        if isinstance(full, Rejected):
            return
        short = names.short_name(full)
        for handle, pattern in self.pattern_consumers.items():
            if handle in self.consumers and pattern.fullmatch(short):
                raise NotModelledError(f"creating {short} while the pattern consumer {handle} ({pattern.pattern}) is "
                                       f"connected: it may discover the topic and subscribe (auto-discovery)")

    # PLS-KEYSHARED-001: a 4.x broker hashes a keyless message by "<producer name>-<sequence id>" from its
    # metadata. On a partitioned topic both are the partition producer's: each partition counts its own
    # sequence ids, and the C++ client's partition producers each get a name of their own (live 4.0.8,
    # mixed campaign 2026-11-27: m4 came from standalone-0-2440 with sequence id 1 where the producer
    # reported standalone-0-2439 and the model had sent 3 before it; the Java client passes the first
    # partition's name to the others, ``PartitionedProducerImpl``/``overrideProducerName``). The history
    # reports neither, so such a message on a Key_Shared subscription is not judged.
    _KEYLESS_ON_PARTITIONS = ("a keyless message on a partition other than 0 of an unnamed C++ or Go partitioned producer, "
                              "with a Key_Shared subscription (its sticky key is that partition producer's name, which the "
                              "broker gave it and no history shows)")

    def np_drop_possible(self, sub: Subscription, pos: int) -> str | None:
        """PLS-NP-001 (``non_persistent`` rule 5): why the broker may drop the message at ``pos``, just published, for
        ``sub`` (whose consumers are connected), or None. Which one it drops is not in the history, so such a message is
        maybe dropped (``reference_model.maybe_absent``, place 4) and the receipts decide."""
        handles = sub.dispatcher.connected() if sub.dispatcher is not None else []
        waiting = sum(1 for p in sub.unacked_positions() if p != pos)
        thresholds = [zero_permit_queue(self.consumers[h][0].receiver_queue_size) for h in handles if h in self.consumers]
        return non_persistent.drop_possible(large_message_sent=self.large_message_sent, waiting=waiting,
                                            permit_thresholds=thresholds)

    def _keyless_key_unknown(self, key: str | None, ordering_key: str | None) -> bool:
        """A message with neither key is hashed by the producer-sequence fallback (4.x)."""
        return key is None and ordering_key is None and self.key_shared.profile.keyless_producer_sequence

    def _check_keyless_known(self, topics: "Iterable[Topic]") -> None:
        """A Key_Shared subscription of ``topics``: each keyless message there is hashed by its producer's name and
        sequence id (4.x); one written by a partition producer whose broker-given name no history shows
        (``partition_name_reported``) has a sticky key no one knows."""
        for t in topics:
            if any(e.producer_name in self.unreported_producer_names and self._keyless_key_unknown(e.key, e.ordering_key)
                   for e in t.entries):
                raise NotModelledError(self._KEYLESS_ON_PARTITIONS)

    def _subscribe_partitioned(self, parent: Topic, args, at, observed):
        if args.get("type") == "Key_Shared":
            self._check_keyless_known(self.message_topics(parent))
        pairs = [dict(args, topic=names.partition_name(parent.full, i)) for i in range(parent.partitions)]
        refused = self._admit_all(pairs, at, observed)
        if refused is not None:
            return refused
        yield  # decided: the consumer joins every partition's subscription
        self._check_latest_starts(pairs, observed)
        self._attach_all(pairs, args, at, observed)
        return {}

    def _check_latest_starts(self, member_args: list[dict], observed: Mapping[str, Any]) -> None:
        """Before a consumer joins several topics or partitions: a Latest start the model does not follow on one of
        them (``_latest_in_flight``) is refused before any is joined, so no member is left half attached."""
        for part_args in member_args:
            t = self.topics.get(part_args["topic"])
            if t is not None and part_args["subscription"] not in t.subscriptions \
                    and part_args.get("initial_position", "Latest") == "Latest":
                self._latest_in_flight(t, observed, "a subscription created at Latest")

    def _admit_all(self, pairs, at, observed) -> Rejected | None:
        """Admission on every member topic first: the first refusal refuses the whole subscribe."""
        for part_args in pairs:
            topic = self.topic_named(part_args["topic"])
            if topic is not None and part_args["subscription"] not in topic.subscriptions \
                    and part_args.get("initial_position", "Latest") == "Earliest" and names.is_persistent(topic.full) \
                    and self._trimmable_at_creation(topic):
                # PLS-RETENTION-001 (acked data the broker may have deleted) is followed for one-topic consumers only
                # (``FeatureOps.trimmable``); live 5.0.0-M1, 4.0.8 and 3.3.6, 27 Nov 2026: a multi-topic consumer at
                # Earliest never got m1, acked on every other subscription before an unload (regression
                # pls-sub-003-lost-message-4a4c056431d5)
                raise NotModelledError(f"a multi-topic or partitioned consumer's new subscription at Earliest on {topic.short}, "
                                       "whose acked messages the broker may have deleted")
            refused = decide_then(self._op_subscribe(part_args, at, observed), commit=False)
            if isinstance(refused, Rejected):
                return refused
        return None

    def _attach_all(self, pairs, args, at, observed) -> None:
        attached = []
        for part_args in pairs:
            decide_then(self._op_subscribe(part_args, at, observed), commit=True)
            attached.append(self.consumers.pop(args["consumer"]))
        self.partition_consumers[args["consumer"]] = attached
        self.consumers[args["consumer"]] = attached[0]

    def _resolve(self, handle: str, label: str):
        """(config, subscription, position) of message ``label`` for consumer ``handle``."""
        found = self._consumer_or_reject(handle)
        if isinstance(found, Rejected):
            return found
        if label not in self.received_labels.get(handle, ()) and self.id_unreported(label):
            # The client learns an async send's id only from its callback, which the targets
            # report with a flush: an ack or nack naming it before then names an id nobody holds
            # (regression pls-nack-001-unexpected-rejection-58a580582f57).
            raise NotModelledError(f"{handle} names {label}, an async send whose id no flush has reported yet")
        unroutable = self._partition_route_refusal(handle, label)
        if unroutable is not None:
            return unroutable
        found_any = None
        for config, sub in self.attachments(handle):
            pos = sub.topic.by_label.get(label)
            if pos is not None:
                if not sub.cursor.is_acked(pos):
                    return config, sub, pos
                found_any = found_any or (config, sub, pos)
        if found_any is not None:
            return found_any
        return Rejected("InvalidArgument", "PLS-ACK-001", f"no message {label!r} on the topic of {handle}", certain=False)

    def _partition_route_refusal(self, handle: str, label: str) -> Rejected | None:
        """Measured (4.0.8, C++ 4.2.0): a partitioned (multi-topics) consumer routes an ack by the
        topic its id carries, and the id the producer returned carries none. The
        ``MultiTopicsConsumerImpl`` fails such an ack (plain or cumulative) with
        OperationNotSupported before any per-partition ``ConsumerImpl`` check runs; a nack of such
        an id does nothing. The Java producer's id names its partition topic (``PartitionedProducerImpl``
        returns a ``TopicMessageIdImpl``), and a Java consumer acks it as it acks a received one (live
        4.0.8, 2026-11-27: regression pls-ack-001-missing-rejection-6cc5322daf6d); a Java consumer
        given another client's id is not modelled. A Go consumer of one partitioned topic routes an ack by the id's
        partition index, which every id carries (pulsar-client-go v0.19.0 consumer_impl.go ``AckID``,
        ``AckIDCumulative``, ``checkMsgIDPartition``; live 4.0.8, issue 46's Go campaign, 4 Dec 2026: regression
        pls-ack-001-missing-rejection-47684ea672a3); its multi-topic consumer is not modelled here."""
        if handle in self.partition_consumers and label not in self.received_labels.get(handle, ()):
            client = self.profile_of(handle).client
            if client in ("java", "go"):
                one_partitioned = _one_partitioned_topic([sub for _, sub in self.partition_consumers[handle]])
                if self.sender_client.get(label) == client and (client == "java" or one_partitioned):
                    return None
                raise NotModelledError(f"a {client} consumer of a partitioned or multi-topic consumer acking {label}, "
                                       "sent by another client or on several topics")
            return Rejected("OtherError", "PLS-ACK-001",
                            f"OperationNotSupported: {handle} reads a partitioned topic and never received "
                            f"{label}; the producer's id names no partition topic")
        return None

    def _consumer_or_reject(self, handle: str):
        found = self.consumers.get(handle)
        if found is None:
            return self._handle_missing(handle, "consumer")
        return found

    def _label_pos(self, sub: Subscription, label: str) -> int | Rejected:
        pos = sub.topic.by_label.get(label)
        if pos is None:
            return Rejected("InvalidArgument", "PLS-ACK-001", f"no message {label!r} on topic {sub.topic.short}",
                            certain=False)
        return pos

    def _log_ack(self, sub: Subscription, newly: list[int], at: Span, handle: str = "") -> None:
        for pos in newly:
            sub.ack_times[pos] = at.start
        if newly:
            sub.ack_log.append((at.start, self._entries_of(sub, newly), handle))
            sub.dispatcher.acked(newly, at)

    def _entries_of(self, sub: Subscription, positions) -> int:
        """At most how many entries the backlog counts for ``positions``: a chunked message is one entry per
        chunk (live 4.0.8, mixed campaign, 28 Nov 2026: a 2-chunk message acked, then stats at once, said 2;
        regression pls-backlog-001-wrong-backlog-209579cbbe52); a batch's messages count once each, an upper bound."""
        chunks = self.topic_features(sub.topic).chunks
        return sum(chunks.get(pos, 1) for pos in positions)

    def _op_ack(self, args, at, observed):
        if "txn" in args:
            return (yield from self._ack_in_txn(args, at))
        found = self._resolve(args["consumer"], args["message"])
        if isinstance(found, Rejected):
            return found
        yield  # decided: the message is acked
        config, sub, pos = found
        by_id = self._producer_id_ack(config, sub, pos, args["message"], cumulative=False)
        if isinstance(by_id, list):
            # PLS-BATCH-010: an id without a batch tracker acks the whole entry, or (a C++ producer's own id without
            # batch index ack) nothing at all, and the client's later acks of the siblings never complete it.
            self._supersede_pending(sub, by_id)
            newly = [p for p in by_id if sub.cursor.ack(p)]
            self._log_ack(sub, newly, at, config.handle)
            return {}
        self._supersede_pending(sub, [pos])
        batch = self._feature_ack(config, sub, pos, at)
        if batch is not None:
            # PLS-BATCH-004: without batch index ack the entry is acked once every index is.
            newly = [p for p in batch if sub.cursor.ack(p)]
            self._log_ack(sub, newly, at, config.handle)
            return {}
        # PLS-ACK-001; PLS-ACK-004: acking an acked message changes nothing.
        newly = [pos] if sub.cursor.ack(pos) else []
        self._log_ack(sub, newly, at, config.handle)
        return {}

    def _op_ack_cumulative(self, args, at, observed):
        refused = self._txn_client_check(args, "ack_cumulative")
        if refused is not None:
            return refused
        found = self._consumer_or_reject(args["consumer"])
        if isinstance(found, Rejected):
            return found
        config, sub = found
        prof = self.profile_of(config.handle)
        # The C++ multi-topics consumer routes the id first (OperationNotSupported), and only the
        # partition's consumer checks the subscription type: routing refusal before PLS-ACK-003.
        # The Java client checks the type first (Profile.cumulative_type_check_first).
        unroutable = None if prof.cumulative_type_check_first else self._partition_route_refusal(args["consumer"], args["message"])
        if unroutable is not None:
            return unroutable
        if config.type not in CUMULATIVE_ACK_TYPES:
            # PLS-ACK-003 (C++) / PLS-ACK-006 (Java): refused by the client, nothing is sent.
            return Rejected(prof.cumulative_ack_shared_error, prof.cumulative_ack_shared_rule,
                            f"cumulative ack is not allowed on a {config.type} subscription")
        unroutable = self._partition_route_refusal(args["consumer"], args["message"]) if prof.cumulative_type_check_first else None
        if unroutable is not None:
            return unroutable
        found = self._resolve(args["consumer"], args["message"])
        if isinstance(found, Rejected):
            return found
        if "txn" in args:
            return (yield from self._ack_cumulative_in_txn(args, found, at))
        self.check_cumulative_in_batch(*found, args["message"])  # PLS-BATCH-004: its entry must be the model's
        yield  # decided: everything up to the message is acked
        config, sub, pos = found  # on a partitioned topic: that partition only
        by_id = self._producer_id_ack(config, sub, pos, args["message"], cumulative=True)
        if by_id is not None:
            # PLS-BATCH-010: by the producer's id up to the whole entry's end, or only to what was stored before it
            pos = by_id
        else:
            # PLS-BATCH-004: without batch index ack, up to the entry's end once every index is acked, else the entry before
            within = self._feature_ack_cumulative(config, sub, pos)
            pos = pos if within is None else within
        self._supersede_pending(sub, [p for p in sub.txn_pending if p <= pos])
        # PLS-ACK-002: everything up to and including pos.
        before = [p for p in range(sub.cursor.mark_delete + 1, pos + 1) if not sub.cursor.is_acked(p)]
        sub.cursor.ack_cumulative(pos)  # (at or before the mark-delete position: nothing moves)
        self._log_ack(sub, before, at, config.handle)
        return {}

    def _op_nack(self, args, at, observed):
        found = self._resolve(args["consumer"], args["message"])
        if isinstance(found, Rejected) and found.error == "OtherError":
            return {}  # a partitioned consumer ignores a nack of an id without a topic
        if isinstance(found, Rejected):
            return found
        yield  # decided: the client tracks the nack
        config, sub, pos = found
        self.nacked_by.add(config.handle)
        if sub.cursor.is_acked(pos):
            if config.type in CUMULATIVE_ACK_TYPES:
                # PLS-NACK-003: the C++ nack tracker does not look at acks; on a single-active
                # subscription any nack becomes "redeliver all" (measured, live-random-28).
                sub.dispatcher.nack(config.handle, pos, at)
            elif hasattr(sub.dispatcher, "request_unblock") and \
                    (window := sub.dispatcher.request_window(config, at, 0)) is not None:
                # PLS-UNACKED-001: the nack tracker still asks for the id, and that request unblocks the consumer
                sub.dispatcher.request_unblock(config.handle, window,
                                               f"the redelivery request of the nack of {sub.label(pos)} at {at.start:g} ms")
            return {}
        if not names.is_persistent(sub.topic.full):
            # PLS-NP-002: nothing is stored, so nothing comes back.
            newly = [pos] if sub.cursor.ack(pos) else []
            if newly:
                sub.dispatcher.acked(newly, at)
                sub.dispatcher.ghosts.pop(pos, None)
            return {}
        batch = self._feature_nack_positions(config, sub, pos)  # PLS-BATCH-006: the whole entry
        dead = self.dead_letter.get(config.handle)
        count = sub.dispatcher.count_held_by(config.handle, pos)
        fx = self.tfx.get(sub.topic.full)
        if count is None and fx is not None and fx.chunks.get(pos, 1) > 1:
            # Live 4.0.0 and 4.0.8, 27 Nov 2026 (regression pls-nack-001-late-redelivery-240cc086bd91, 3/3): a Shared
            # consumer nacked a two-chunk message by its send id before receiving it, then received it once, with
            # redelivery count 0, and never again. How the client's nack tracker treats a chunk id it has not
            # assembled yet is not modelled (the C++ client expands a chunk id into its chunks only from
            # apache/pulsar-client-cpp PR #604, 2026-07; the Java client's is KD-406).
            raise NotModelledError(f"a nack of chunked message {sub.label(pos)} that {config.handle} has not received")
        # The client decides the dead letter by the count of the copy its application nacks (C++
        # ConsumerImpl::messageReceived remembers it, processPossibleToDLQ acts on the nack): a stale copy (one
        # queued before a reconnect or a redeliver_unacked) goes to the DLQ as the broker's own copy would (seed 11
        # trace 73123: a Go consumer, max_redeliver_count 1, nacked the count-0 copy it got after a cut connection;
        # the checker, reading it as the stale copy, expected no DLQ copy: regression pls-sub-001-wrong-value-a17dfbf06afb).
        stale_count = sub.dispatcher.stale_count_in_hand(config.handle, pos) if count is None else None
        in_hand = count if count is not None else stale_count
        if dead is not None and in_hand is not None and dl.on_delivery(in_hand, dead.max_redeliver) != dl.DELIVER:
            # PLS-DLQ-001/002: the delivery with count N is nacked -> when the nack timer fires,
            # publish a copy to the DLQ and ack the original instead of redelivering it.
            window = config.nack_window(at, in_hand, self.profile)
            dead = self._writable_dead_letter(sub, dead)  # first: a NotModelledError changes nothing
            for p in batch:
                if count is not None:
                    sub.dispatcher.hold_for_dead_letter(p)
                else:
                    sub.dispatcher.drop_stale_in_hand(config.handle, p)
            # PLS-DLQ-006: a batched message takes its whole entry to the DLQ, acked messages included.
            for p in batch:
                self._schedule_dead_letter(_DueCopy(sub, p, dead, Span(window.low, window.high)))
            return {}
        for p in batch:
            sub.dispatcher.nack(config.handle, p, at)
        return {}

    def _queued_nack_past_dead_letter(self, handle: str, sub: "Subscription", pos: int, count: int,
                                      candidate: Candidate | None) -> DeadLetterPolicy | None:
        """PLS-DLQ-002 with a nack made before the application received the copy (``SharedDispatcher.deliver``'s
        queued-nack path): the nack tracker's request for it, due after the delivery with ``count``, finds that copy in
        the client's hands, and when ``count`` is at the dead-letter limit the client writes it to the dead-letter
        topic instead of asking the broker for it again (Java ``ConsumerImpl#redeliverUnacknowledgedMessages`` ->
        ``processPossibleToDLQ``; a copy the broker sent before the client saw the limit arrives past it and is
        dead-lettered as it arrives, ``_redelivered_past_dead_letter``): no copy with a count past the limit reaches
        the application (model fuzz seed 20261220: a Java consumer, limit 1, nacked m2 before and after receiving it;
        the model handed it back with count 2; regression pls-dlq-002-wrong-redelivery-count-02fbed2c9de2). Returns
        the dead-letter policy when the request stands for the copy received now at the limit (``take`` turns its
        release into the dead-letter copy, or, when the request may have found nothing pending, leaves it allowed and
        never chosen), else None. Asked before the delivery changes anything."""
        queued = getattr(sub.dispatcher, "queued_nacks", {}).get(pos)
        if queued is None or queued[0] != handle or (candidate is not None and candidate.kind in ("stale", "ghost", "queued")):
            return None  # no request of this consumer's stands for the copy received (deliver leaves it as it is)
        dead = self.dead_letter.get(handle)
        config = next((c for c, s in self.attachments(handle) if s is sub), None)
        if (dead is None or config is None or not dl.dlq_applies(config.type) or not names.is_persistent(sub.topic.full)
                or dl.on_delivery(count, dead.max_redeliver) == dl.DELIVER):
            return None
        return self._writable_dead_letter(sub, dead)

    def _dead_letter_on_ack_timeout(self, handle: str, sub: "Subscription", pos: int, at: Span, count: int,
                                    candidate: Candidate | None) -> None:
        """PLS-DLQ-002 (C++): a delivery with count >= N whose ack timeout fires goes to the DLQ, like a nack."""
        dead = self.dead_letter.get(handle)
        config = next((c for c, s in self.attachments(handle) if s is sub), None)
        if dead is None or config is None or not config.ack_timeout_ms or dl.on_delivery(count, dead.max_redeliver) == dl.DELIVER:
            return
        if candidate is not None and candidate.kind in ("ghost", "queued"):
            return
        window = config.ack_timeout_window(at, count, self.profile)
        dead = self._writable_dead_letter(sub, dead)
        for p in self._feature_nack_positions(config, sub, pos):
            if sub.dispatcher.count_held_by(handle, p) is not None:
                sub.dispatcher.hold_for_dead_letter(p)  # no ack-timeout redelivery: it goes to the DLQ
            self._schedule_dead_letter(_DueCopy(sub, p, dead, Span(window.low, window.high)))

    def _writable_dead_letter(self, sub: "Subscription", dead: DeadLetterPolicy) -> DeadLetterPolicy:
        """``dead`` with its topic named (``_dead_letter_policy_for``), when its client can write the copy there: not
        while a producer of another access mode than Shared holds that topic, which refuses the client's Shared
        dead-letter producer (PLS-ACCESS-001..004); what a client does with a copy it cannot write is its own (live
        4.0.8, Python, 3 runs of 3: a WaitForExclusive producer on dlq, m1 nacked past the limit of 1, and no copy came
        in 1.3 s; the checker owed it; regression pls-dlq-002-lost-message-12c83b6bf71e)."""
        dead = self._dead_letter_policy_for(sub, dead)
        holder = next((h for h, p in self.producers.items() if p.topic.full == dead.topic
                       and (pf := self.pfx.get(h)) is not None and pf.access_mode != access_modes.SHARED
                       and not pf.fenced), None)
        if holder is not None:
            raise NotModelledError(f"a dead-letter copy to {self.topics[dead.topic].short}, which {holder} holds as a "
                                   f"{self.pfx[holder].access_mode} producer: the client's dead-letter producer is refused")
        return dead

    @staticmethod
    def _dead_letter_policy_for(sub: "Subscription", dead: DeadLetterPolicy) -> DeadLetterPolicy:
        """``dead`` with its topic named: PLS-DLQ-001, both clients name the default DLQ after the topic (partition) the
        consumer reads."""
        return dead if dead.topic is not None else dead._replace(topic=dl.default_dlq_topic(sub.topic.full, sub.name))

    @property
    def later_ids(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(topic short name, label) -> (ledger, entry) the history shows later (``conformance.checker.later_ids``)."""
        return self._later_ids

    @later_ids.setter
    def later_ids(self, ids: dict[tuple[str, str], tuple[int, int]]) -> None:
        self._later_ids = dict(ids)
        self._later_on: dict[str, list[tuple[tuple[int, int], str]]] = {}  # topic short name -> (id, label), in id order
        for (topic, label), seen in self._later_ids.items():
            self._later_on.setdefault(topic, []).append((seen, label))
        for shown in self._later_on.values():
            shown.sort()

    def _schedule_dead_letter(self, due: _DueCopy) -> None:
        """A copy for the DLQ, written when the client's timer fires (``_next_dead_letter``)."""
        self._dead_letters_due.setdefault(due.dead.topic, []).append(due)
        self._schedule(due.window.start, lambda: self._next_dead_letter(due))

    def _next_dead_letter(self, due: _DueCopy, *, last_moment: bool = False) -> None:
        """PLS-DLQ-001: ``due``'s timer fired, and its copy goes to the DLQ topic, at once or, with the Java client,
        at any time in its window. The Java client dead-letters the messages of one timer run (UnAckedMessageTracker's
        expired partition, NegativeAcksTracker's due ones) from a hash set, through
        ConsumerImpl#redeliverUnacknowledgedMessages -> processPossibleToDLQ, each an async send of its dead-letter
        producer: their order on the DLQ topic is the set's (live 4.0.8, 2 Dec 2026: hello-0..2 dead-lettered after an
        ack timeout were written as hello-2, hello-1, hello-0; cases up-java-dlq-event-time, up-java-dlq-message-key).
        The C++ client's tracker keeps the ids in an ordered std::set, and the Go client dead-letters a message as the
        broker redelivers it (pulsar/consumer_partition.go, dlq.shouldSendToDlq), both in the message order: theirs
        go at once. A Java copy the history shows (``later_ids``) after a copy not yet written waits for it, until the
        end of its window at the latest (``last_moment``): the order follows what was observed, within what is allowed."""
        waiting = self._dead_letters_due.get(due.dead.topic, [])
        if due not in waiting:
            return  # written already
        if not last_moment and due.dead.properties == "java" and self._dead_letter_shown_after_another(due):
            self._schedule(due.window.end, lambda: self._next_dead_letter(due, last_moment=True))
            return
        self._write_dead_letter(due)
        written = True
        while written:  # the Java copies that waited for this one
            written = False
            for other in list(waiting):
                if other.dead.properties == "java" and other.window.start <= self.now \
                        and not self._dead_letter_shown_after_another(other):
                    self._write_dead_letter(other)
                    written = True

    def _dead_letter_shown_after_another(self, due: _DueCopy) -> bool:
        """Whether the history shows ``due``'s copy on its DLQ topic after one that is not there yet."""
        short = names.short_name(due.dead.topic)
        mine = self.later_ids.get((short, due.sub.topic.entries[due.pos].label))
        if mine is None:
            return False
        dlq = self.topics.get(due.dead.topic)
        for seen, label in self._later_on.get(short, ()):
            if seen >= mine:
                return False
            if dlq is None or label not in dlq.by_label:
                return True
        return False

    def _write_dead_letter(self, due: _DueCopy) -> None:
        self._dead_letters_due[due.dead.topic].remove(due)
        self._dead_letter(due.sub, due.pos, due.dead, due.window)

    def _dead_letter(self, sub: "Subscription", pos: int, dead: DeadLetterPolicy, at: Span) -> None:
        if sub.cursor.is_acked(pos):
            return
        original = sub.topic.entries[pos]
        # initialSubscriptionName: created with the DLQ producer, before the first copy (PLS-DLQ-004).
        dlq = self._dead_letter_topic(dead.topic, dead.initial_subscription, at)
        # PLS-DLQ-003: the copy each client writes (C++ '(l,e,p,b)' + REAL_TOPIC; Java getPropertiesMap)
        copy = dl.dead_letter(original.label.encode(), dict(original.properties), original.message_id, sub.topic.full,
                              partition_key=original.key, ordering_key=original.ordering_key,
                              client=dead.properties, subscription=sub.name,
                              real_subscription=self.profile.java_real_subscription,
                              origin_message_id=self.profile.java_origin_message_id)
        java = dead.properties == "java"
        if original.label not in dlq.by_label:
            stored = self._store(dlq, original.label, key=copy.partition_key, ordering_key=copy.ordering_key,
                                 properties=copy.properties_dict(),
                                 event_time=dl.java_copy_event_time(original.event_time, copied=self.profile.java_copy_event_time)
                                 if java else original.event_time, publish_time=int(at.start), producer_name=DLQ_PRODUCER,
                                 sequence_id=len(dlq.entries), at=Span(at.start, at.end + dl.DEAD_LETTER_PUBLISH_MS))
            self.copies[(dlq.full, stored.pos)] = ("dlq", "java" if java else "go" if dead.properties == "go" else "cpp")
        if sub.cursor.ack(pos):
            sub.ack_log.append((at.end, self._entries_of(sub, [pos]), ""))
            sub.dispatcher.acked([pos], at)
        # the client acks the original once its copy is written, through its ack grouping (``reset_subscription``)
        sub.acked_after_copy[pos] = at.end + dl.DEAD_LETTER_PUBLISH_MS + self.profile.ack_grouping_ms

    def _op_redeliver_unacked(self, args, at, observed):
        found = self._consumer_or_reject(args["consumer"])
        if isinstance(found, Rejected):
            return found
        refused = self._java_only_refusal("redeliver_unacked", args, self.profile_of(args["consumer"]))  # PLS-GO-001
        if refused is not None:
            return refused
        past_limit = self._redelivered_past_dead_letter(args["consumer"])
        if not self.profile_of(args["consumer"]).redeliver_keeps_receiver_queue:
            for _, sub in self.attachments(args["consumer"]):
                mine = self.received_labels.get(args["consumer"], set())
                if not names.is_persistent(sub.topic.full) and any(
                        sub.label(p) not in mine for p in sub.unacked_positions()):
                    # non_persistent rule 2: the Java client clears its receiver queue and the broker sends nothing
                    # again, so a message its application had not received is lost if it had reached the queue and
                    # comes if it was still on its way (live 4.0.8, Java campaign, 28 Nov 2026, 3/3: two sends, a
                    # redeliver_unacked, nothing came; regression pls-sub-002-lost-message-382b134173a5)
                    raise NotModelledError(f"a Java redeliver_unacked on non-persistent {sub.topic.short} with messages "
                                           "its application has not received (cleared from its queue, never resent)")
        yield  # decided: the consumer asks for its unacked messages again
        self.forget_batch_marks(args["consumer"])  # PLS-BATCH-004: what comes again comes with fresh ackers
        for config, sub in self.attachments(args["consumer"]):
            sub.dispatcher.redeliver_unacked(config.handle, at)
        for sub, pos, dead in past_limit:
            # PLS-DLQ-002 step 3: the broker's copy arrives with count max + 1 and the client writes it to the
            # dead-letter topic on arrival instead of giving it to the application
            sub.dispatcher.hold_for_dead_letter(pos)
            self._schedule_dead_letter(_DueCopy(sub, pos, dead, Span(at.start, at.end)))
        return {}

    def _check_one_dead_letter_limit(self, sub: "Subscription", dead: Mapping[str, Any] | None, sub_type: str) -> None:
        """The consumers of one Shared / Key_Shared subscription are modelled with one dead-letter
        limit (or none): each client applies its own ``max_redeliver_count`` to what arrives
        (PLS-DLQ-002 step 3), so a message redelivered from one consumer may reach another whose
        limit it is already past, and the model does not follow that hand-over (found by the
        generated traces of issue 16)."""
        if not dl.dlq_applies(sub_type):
            return
        wanted = (dead or {}).get("max_redeliver_count") or None
        for other in sub.dispatcher.connected():
            policy = self.dead_letter.get(other)
            if (policy.max_redeliver if policy is not None else None) != wanted:
                raise NotModelledError("consumers with different dead-letter limits on one Shared/Key_Shared subscription")

    def _redelivered_past_dead_letter(self, handle: str) -> list[tuple["Subscription", int, DeadLetterPolicy]]:
        """PLS-DLQ-002 step 3 with PLS-REDELIVER-001: a redeliver-all gives back everything ``handle``'s application
        holds, each with its count one higher (PLS-ACK-005), and a copy that arrives with a count above
        ``max_redeliver_count`` never reaches the application: the client writes it to the dead-letter topic as it
        arrives (Java ``ConsumerImpl#messageReceived``: ``redeliveryCount > maxRedeliverCount`` ->
        ``redeliverUnacknowledgedMessages({id})`` -> ``processPossibleToDLQ``; C++ ``ConsumerImpl::messageReceived``
        likewise). Returns the (subscription, position, policy) of the held messages that go to the DLQ so.

        Followed only where the outcome is the client's, not the broker's choice (``_redeliver_past_limit_unfollowed``
        says why not); elsewhere a redeliver-all by a consumer with a dead-letter policy stays not modelled (found
        by the generated traces of issue 16: the model handed a message over with count N + 1), and so does one by a
        retry-enabled consumer. Exclusive and Failover subscriptions count no redeliveries (PLS-DLQ-005): nothing to
        follow. Like the nack path (``_dead_letter``), the original counts as acked when its copy is due, not when
        the client's dead-letter send completes (up to ``DEAD_LETTER_PUBLISH_MS`` later)."""
        dead = self.dead_letter.get(handle)
        if dead is None:
            return []
        if handle in self.retry:
            # its retry topic's copies are delayed messages of a Shared subscription that the redeliver-all also
            # gives back (model fuzz of 7 Dec 2026, seed 20261208: a Java consumer's reconsume_later, then a
            # redeliver_unacked, and the model's run and its checker parted on the retry copy; regression
            # pls-delay-001-late-delivery-d668240be3bc)
            raise NotModelledError("redeliver_unacked by a consumer with a dead-letter policy and retry enabled")
        past: list[tuple["Subscription", int, DeadLetterPolicy]] = []
        for config, sub in self.attachments(handle):
            if not dl.dlq_applies(config.type) or not names.is_persistent(sub.topic.full):
                continue
            why = self._redeliver_past_limit_unfollowed(handle, config.type, sub, dead.max_redeliver)
            if why is not None:
                raise NotModelledError(f"redeliver_unacked by a consumer with a dead-letter policy {why}")
            due = {d.pos for copies in self._dead_letters_due.values() for d in copies if d.sub is sub}
            if due & set(sub.dispatcher.held_counts(handle)):
                # a nack past the limit already has the client's dead-letter copy of a message it holds under way, and
                # the redeliver-all brings the broker's copy with count + 1 first: which of the client's two paths
                # writes it, once or twice, is not followed (model fuzz of 7 Dec 2026, seed 20261218: the model's run
                # handed the count-2 copy to the application under a limit of 1)
                raise NotModelledError("redeliver_unacked by a consumer with a dead-letter policy while the dead-letter "
                                       "copy of a message it holds, nacked past the limit, is due")
            to_dead_letter = [pos for pos, (count, _) in sub.dispatcher.held_counts(handle).items()
                              if pos not in due and dl.on_delivery(count + 1, dead.max_redeliver) == dl.TO_DLQ]
            if to_dead_letter:  # asked once per subscription, and only when a copy is to be written
                writable = self._writable_dead_letter(sub, dead)
                past += [(sub, pos, writable) for pos in to_dead_letter]
        return past

    @staticmethod
    def _redeliver_past_limit_unfollowed(handle: str, sub_type: str, sub: "Subscription", max_redeliver: int) -> str | None:
        """Why a redeliver-all by ``handle`` on ``sub`` (a subscription that counts redeliveries) would make the broker,
        not the client, decide what is dead-lettered, or None: ``handle`` must be the only consumer of its Shared
        subscription (with others, which consumer a copy past the limit reaches, and so when it is written, is the
        broker's choice); each message it holds must have one known count, and one past the limit must be a message of
        its own (a batch's other members may sit in a queue); and no message of the subscription outside its
        application may come back counted past the limit by this call (a queued copy the broker counts up, which the
        C++ client also keeps in its queue, PLS-REDELIVER-001)."""
        dispatcher = sub.dispatcher
        if sub_type != "Shared":
            return f"on {sub_type} (a key's order meets the dead letters)"
        if dispatcher.connected() != [handle]:
            return "with other consumers on its subscription (which one a message past max_redeliver_count reaches)"
        for pos, (low, high) in dispatcher.held_counts(handle).items():
            if low != high:
                return f"while the count of {sub.label(pos)} is known only as a range"
            if dl.on_delivery(low + 1, max_redeliver) == dl.TO_DLQ and len(sub.batch_of(pos)) > 1:
                return f"past max_redeliver_count for {sub.label(pos)}, a member of a batch"
        if any(dispatcher.highest_next_count(pos) + 1 > max_redeliver for pos in dispatcher.not_held_unacked(handle)):
            return "while a message its application does not hold may be counted past max_redeliver_count"
        return None

    def _op_seek(self, args, at, observed):
        found = self._consumer_or_reject(args["consumer"])
        if isinstance(found, Rejected):
            return found
        config, sub = found
        if config.handle in self.partition_consumers:
            return (yield from self._seek_partitioned(config, args, at))
        if not names.is_persistent(sub.topic.full):
            # non_persistent rule 7: nothing is stored to go back to; the seeker's client clears its queue
            if sub.dispatcher.connected() != [config.handle]:
                raise NotModelledError("a seek on a non-persistent topic with other consumers of its subscription "
                                       "(which messages the seeker's queue held is not in the history)")
            yield  # decided: the seek answers ok
            sub.maybe_absent |= non_persistent.after_seek(set(sub.unacked_positions()))
            return {}
        entries = sub.topic.entries
        filter_for = None
        if "message" in args:
            pos = self._label_pos(sub, args["message"])
            if isinstance(pos, Rejected):
                return pos
            # PLS-SEEK-001: the broker resets to the id; C++ then skips that message unless inclusive.
            rule = "PLS-SEEK-001"
            start = pos
            exclusive = self.profile_of(config.handle).seek_by_id_exclusive
            if exclusive and not config.start_message_id_inclusive:
                filter_for = (config.handle, pos + 1)
                if self.profile_of(config.handle).seek_skip_acks and sub.dispatcher.connected() != [config.handle]:
                    # PLS-SEEK-001: the Go client acks the sought message when it drops it, if it is the one that
                    # gets it; with other consumers connected who gets it is the broker's choice
                    raise NotModelledError("a Go seek by id with other consumers on the subscription (whether the "
                                           "seeker gets, drops and acks the sought message)")
        elif "publish_time_of" in args:
            ref = self.message(args["publish_time_of"])
            if ref is None:
                return Rejected("InvalidArgument", "PLS-SEEK-002", f"no message {args['publish_time_of']!r}", certain=False)
            # PLS-SEEK-002: the first message whose publish time is >= the time.
            rule = "PLS-SEEK-002"
            start = position_by_publish_time([m.publish_time for m in entries], ref.publish_time)
        else:
            # PLS-SEEK-003: earliest = first retained message; latest = after the last one.
            rule = "PLS-SEEK-003"
            start = 0 if args["position"] == "earliest" else len(entries)
        if "message" not in args and not self._to_earliest(args):
            self.check_no_async_in_flight(sub.topic.full, "a seek to a position or a publish time")
        # the broker disconnects the subscription's consumers before the reset; they subscribe again
        self.check_reconnects_admitted([h for h, (_, s) in self.consumers.items() if s is sub], "a seek")
        yield  # decided: the cursor is reset
        self.reset_subscription(sub, start, at, rule, filter_for, seeker=config.handle)
        if filter_for is not None and self.profile_of(config.handle).seek_skip_acks and sub.cursor.ack(start):
            # PLS-SEEK-001: the Go client acks the message it drops (on its arrival, right after the seek)
            self._log_ack(sub, [start], at, config.handle)
        return {}

    @staticmethod
    def _to_earliest(args: Mapping[str, Any]) -> bool:
        """A seek or admin reset to the earliest position: every message stored before it and after it is after the
        cursor, so an async send still in flight, or a batch that may or may not have left, is after it wherever the
        broker stores it, and nothing about the reset waits on when (``check_no_async_in_flight`` is for positions
        taken from the end or by publish time)."""
        return "message" not in args and "publish_time_of" not in args and args.get("position") == "earliest"

    def _seek_partitioned(self, config: ConsumerConfig, args, at: Span):
        """PLS-SEEK-002/003 on a consumer of a partitioned topic: a seek by publish time, or to earliest or latest,
        moves every partition's cursor, each as a seek of that partition alone would (Java
        ``MultiTopicsConsumerImpl#seekAsync``: a timestamp, or an id that names no partition topic such as
        ``MessageId.earliest``, goes to ``seekAllAsync``; C++ ``MultiTopicsConsumerImpl::seekAsync``: a timestamp,
        earliest and latest go to ``seekAllAsync``; Go v0.19.0 ``consumer.SeekByTime`` seeks every partition). The Go
        client refuses ``Seek`` by id on a consumer of more than one partition ("for partition topic, seek command
        should perform on the individual partitions", SeekFailed; the driver's earliest and latest are ids,
        ``seekPosition``), so its seek to a position is refused there (PLS-SEEK-003).

        A seek by publish time takes each partition's first message published at or after the reference's. The
        client stamps a message's publish time during its send call, so a message whose send overlaps the
        reference's (in whole milliseconds) may fall on either side of it: not followed. Neither is one in a batch
        (a batch carries its first message's publish time), a seek by message id (which partition it moves depends
        on the id object the application holds: Java's id of a received message names its partition topic, C++
        needs the id's topic name, set on received ids only, and Go refuses). A Java or C++ consumer of several topics
        (a list or a pattern) is the same class as a partitioned topic's (Java ``MultiTopicsConsumerImpl``, which
        ``PatternMultiTopicsConsumerImpl`` extends; C++ ``MultiTopicsConsumerImpl``), and its seek by publish time or
        to a position moves every topic's cursor alike (followed since 7 Dec 2026: live 4.0.8, Python and Java, case
        seek-multi-topic). A Go consumer made with topics_pattern, or with a list of several topics, refuses every seek
        (pulsar-client-go v0.19.0 consumer_regex.go, consumer_multitopic.go: SeekFailed; live 4.0.8, regressions
        pls-seek-002-unexpected-rejection-79e82d75587a, pls-seek-003-unexpected-rejection-f1ec1572dc9b)."""
        subs = [sub for _, sub in self.partition_consumers[config.handle]]
        client = self.profile_of(config.handle).client
        ref = self.message(args["publish_time_of"]) if "publish_time_of" in args else None
        if "publish_time_of" in args and ref is None:
            return Rejected("InvalidArgument", "PLS-SEEK-002", f"no message {args['publish_time_of']!r}", certain=False)
        if client == "go" and config.handle in self.multi_topic_consumers:
            kind = "regex" if config.handle in self.pattern_consumers else "multi topic"
            return Rejected("OtherError", seek_rule(args),
                            f"the Go client's {kind} consumer {config.handle} refuses every seek (SeekFailed: seek "
                            f"command not allowed for {kind} consumer; consumer_regex.go, consumer_multitopic.go)")
        refused = self._partitioned_seek_refusal(subs, args, retry=config.handle in self.retry)
        if refused is None and "position" in args and client == "go" and len(subs) > 1:
            return Rejected("OtherError", "PLS-SEEK-003",
                            f"the Go client refuses Seek by id on {config.handle}, a consumer of {len(subs)} partitions "
                            "(SeekFailed: seek the individual partitions)")
        starts: list[int | str] = []
        if refused is None and ref is not None:
            starts = [self._first_published_after(sub, ref) for sub in subs]
            refused = next((why for why in starts if isinstance(why, str)), None)
        if refused is not None:
            raise NotModelledError(refused)
        if ref is not None:
            rule = "PLS-SEEK-002"
        else:
            rule = "PLS-SEEK-003"
            starts = [0 if args["position"] == "earliest" else len(sub.topic.entries) for sub in subs]
            # a partitioned producer's async sends are its own (its topic is the parent), its batches its partitions'
            parents = dict.fromkeys(names.partitioned_parent(sub.topic.full) for sub in subs)
            for full in [*parents, *(sub.topic.full for sub in subs if sub.topic.full not in parents)] \
                    if not self._to_earliest(args) else []:
                self.check_no_async_in_flight(full, "a seek to a position")
        self.check_reconnects_admitted([h for h, (_, s) in self.consumers.items() if any(s is x for x in subs)], "a seek")
        yield  # decided: every partition's cursor is reset
        # A C++ multi-topics consumer may hand out once more a message its partition consumer received before the
        # seek cleared the queues (live 4.0.8, Python client, 4 Dec 2026: a delayed chunked m1, dispatched as the
        # seek by its publish time began, came twice after it; the reruns did not repeat it; regression
        # pls-shared-001-duplicate-delivery-fccc5a15db19): what the consumer may hold surfaces at most once, as after
        # an admin reset. The Java one drops what arrives during the seek (MultiTopicsConsumerImpl beforeSeek /
        # afterSeek, apache/pulsar PR #21945, 3.0.3).
        seeker = None if client == "cpp" else config.handle
        for sub, start in zip(subs, starts):
            self.reset_subscription(sub, int(start), at, rule, None, seeker=seeker)
        return {}

    @staticmethod
    def _partitioned_seek_refusal(subs: list[Subscription], args, *, retry: bool = False) -> str | None:
        """Why a seek on a consumer attached to ``subs`` is not followed (``_seek_partitioned``), or None. ``retry``: the
        consumer has a retry topic (Java enableRetry), which it reads too: its copies are delayed messages, and a seek
        moves that cursor as well (not measured)."""
        if retry:
            return "a seek on a consumer with a retry topic (it moves the retry topic's cursor too)"
        if "message" in args:
            return ("a seek by message id on a consumer of a partitioned topic or of several topics (which topic it moves "
                    "depends on the id object the application holds)")
        if not all(names.is_persistent(sub.topic.full) for sub in subs):
            return "seek on a non-persistent topic" + ("" if _one_partitioned_topic(subs) else " among a consumer's topics")
        return None

    @staticmethod
    def _first_published_after(sub: Subscription, ref: StoredMessage) -> int | str:
        """PLS-SEEK-002 on one partition of a partitioned consumer's seek: the position of its first message
        published at or after ``ref`` (``_seek_partitioned``). Each send's client stamps its publish time within the
        send's span, in whole milliseconds; a message whose span overlaps ``ref``'s, or one in a batch, is on no
        sure side of it: the reason it is not followed, instead of a position."""
        ref_from, ref_to = int(ref.stored.start), int(ref.stored.end)
        for m in sub.topic.entries:
            if m.label == ref.label:
                return m.pos
            if m.message_id.batch_index >= 0:
                return (f"a seek by publish time on a partitioned topic holding {m.label} in a batch (a batch carries its "
                        "first message's publish time)")
            if int(m.stored.start) >= ref_to:
                return m.pos
            if int(m.stored.end) >= ref_from:
                return (f"a seek by the publish time of {ref.label} while {m.label}, on another partition, was sent in the "
                        "same milliseconds (which side of the time it falls on is the client's clock)")
        return len(sub.topic.entries)

    def reset_subscription(self, sub: Subscription, start: int, at: Span, rule: str,
                           filter_for: tuple[str, int] | None = None, *, seeker: str | None) -> None:
        """PLS-SEEK-001..004: the subscription's cursor moves to ``start``: acks at or after it are forgotten, the
        positions before it count as acked, and its dispatcher starts again there (``seeker``: the consumer whose
        client asked, which clears its queue; None for an admin reset, which no client knows of)."""
        # PLS-RETENTION-001: a seek back brings back positions this subscription had acked (or never had); where every
        # other subscription had acked them too, their ledger may be deleted already (live 4.0.8, Go campaign of
        # 28 Nov 2026, 3 runs in 4: m1 acked on sx1, an unload, sx2 made at latest, a seek to earliest on sx2 got
        # nothing; regression pls-excl-002-lost-message-f2e52b928cf4)
        gone_maybe = {p for p in self._trimmable_at_creation(sub.topic, exclude=sub) if p >= start
                      and (sub.cursor.is_acked(p) or p in sub.trimmable)} if sub.durable else set()
        if sub.dispatcher is not None:
            for handle in sub.dispatcher.connected():
                self.disconnected_at[handle] = at.end  # the broker drops the consumers' connections as it resets
            sub.dispatcher.reset(start, at, rule, filter_for, seeker=seeker)  # reads the old cursor
        sub.cursor.reset(start)
        # after it everything is in the subscription, before it nothing; but a message maybe on another partition
        sub.maybe_absent = sub.topic.unplaced_from(start)
        sub.maybe_dropped = set()
        # A message this subscription's consumer sent to its dead-letter topic comes back like any other: the reset
        # disconnects every consumer, and the dispatcher clears its redelivery counts with the last one
        # (PersistentDispatcherMultipleConsumers#removeConsumer: redeliveryTracker.clear()), so it comes with count 0
        # and the client does not dead-letter it again (live 4.0.8, Java and Python, 7 Dec 2026, 2 runs each of a seek
        # to the earliest: m1 back with count 0, no second copy). But the client acks the original only once its copy
        # is written, through its ack grouping, and an ack that reaches the broker after the reset acks it there
        # again: a reset that may come before that ack leaves it maybe absent, one message at a time. (The regression
        # pls-seek-002-lost-message-813005f35b70, a seek by m1's publish time 0.1 s after its copy was received, where
        # m1 never came, was the live targets' doing: they sought by the copy's publish time.)
        # The same for a message its consumer's reconsume_later copied to the retry topic. An entry is kept until its
        # ack surely landed, for a second reset as much as the first (the review of 7 Dec 2026: two seeks in a row).
        for pos, ack_by in list(sub.acked_after_copy.items()):
            if at.start > ack_by + self.slack_ms:
                del sub.acked_after_copy[pos]
            elif pos >= start:
                sub.maybe_absent.add(pos)
                sub.maybe_dropped.add(pos)
        sub.before_cursor.clear()
        sub.unsure_in_flight.clear()
        sub.ack_log.clear()
        sub.trimmable = gone_maybe
        sub.admin_acked = {p: why for p, why in sub.admin_acked.items() if p < start}

    def _op_close(self, args, at, observed):
        handle = args["handle"]
        if handle in self.producers:
            if self.pfx.get(handle) is not None and self.pfx[handle].waiting:
                # Live 4.0.8 (Python campaign, 2026-11-27, pls-sub-001-unexpected-rejection-ff3f29e2f8d4, 3 runs in 3):
                # the application holds no producer to close; the Python harness waited for the creation, which the
                # client ended with Timeout after its operation timeout. What a client does then is its own.
                raise NotModelledError(f"closing {handle}, a WaitForExclusive producer still waiting for the topic "
                                       f"(its creation has not completed)")
            holders = (handle, *self.partition_producers_of(handle))  # its open batches: its own, its partitions'
            for each in holders:
                self.check_close_drops_open_batch(each, at)
            yield  # decided: the producer closes
            producer = self.producers.pop(handle)
            for each in holders:
                self.pfx.pop(each, None)  # its open batch goes with it: the close fails those sends
                self.partition_producers.pop(each, None)
            self.closed.add(handle)
            self._feature_producer_closed(producer)
            return {}
        if handle in self.readers:
            yield  # decided: the reader closes
            self.readers.pop(handle)
            self.closed.add(handle)
            return {}
        found = self._consumer_or_reject(handle)
        if isinstance(found, Rejected):
            return found
        lost = {}
        for config, sub in self.attachments(handle):
            if not names.is_persistent(sub.topic.full):
                unreceived = set(sub.unacked_positions())
                gone = non_persistent.lost_on_close(unreceived, any(h != handle for h in sub.dispatcher.connected()))
                if gone is None:
                    raise NotModelledError(f"closing {handle} on non-persistent {sub.topic.short} with other consumers "
                                           f"of {sub.name} connected: which undelivered messages its queue held is unknown")
                lost[(sub.topic.full, sub.name)] = gone
        yield  # decided: the consumer closes
        self.forget_batch_marks(handle)  # PLS-BATCH-004: its client's batch ackers go with it
        # Close flushes pending grouped acks, then the broker re-queues what it held (a persistent topic's).
        for config, sub in self.attachments(handle):
            sub.flushed_at[handle] = at.end
            sub.dispatcher.remove_consumer(handle, at)
            gone = sorted(p for p in lost.get((sub.topic.full, sub.name), ()) if sub.cursor.ack(p))
            if gone:  # PLS-NP-002: what went to its queue goes with it (non_persistent rule 2)
                sub.dispatcher.acked(gone, at)
            if not sub.durable and not sub.dispatcher.connected():
                # PLS-SUB-007: PersistentSubscription#removeConsumer closes a non-durable subscription
                # with its last consumer; the topic forgets it (and its position).
                sub.topic.subscriptions.pop(sub.name, None)
                self.removed_non_durable.add((sub.topic.full, sub.name))
        del self.consumers[handle]
        self.partition_consumers.pop(handle, None)
        self.multi_topic_consumers.discard(handle)
        self.partitioned_readers.discard(handle)
        self.received_labels.pop(handle, None)
        self.closed.add(handle)
        return {}

    def _op_unsubscribe(self, args, at, observed):
        found = self._consumer_or_reject(args["consumer"])
        if isinstance(found, Rejected):
            return found
        config, sub = found
        others = sorted({h for _, s in self.attachments(config.handle) for h in s.dispatcher.connected() if h != config.handle})
        if others:
            # Source: "Unconnected or shared consumer attempting to unsubscribe"; measured on 4.0.8
            # the Python client raised BrokerMetadataError. Either way the op fails.
            return Rejected("ConsumerBusy", "PLS-SUB-006",
                            f"Unconnected or shared consumer attempting to unsubscribe ({', '.join(others)} still connected)",
                            certain=False)
        dropped = self.disconnected_at.get(config.handle)
        if not self._committing and dropped is not None and at.start < dropped + faults.RECONNECT_WINDOW_MS:
            # PLS-SUB-006: a client unsubscribes over its connection, and it has none while it reconnects: Java
            # ConsumerImpl#unsubscribeAsync fails "Not connected to broker" (live 4.0.8, Java fuzz campaign of 7 Dec
            # 2026, 3/3: an admin reset_cursor, then the unsubscribe, refused; regression
            # pls-sub-006-unexpected-rejection-dd776047c2b1), C++ ConsumerImpl::unsubscribeAsync gives ResultNotConnected.
            # Asked what a refused one means (``predict``): the refusal was the reconnect's, not followed; an unsubscribe
            # that succeeded (the client was back) is followed (the review of 3b9822f)
            raise NotModelledError(f"an unsubscribe {at.start - dropped:.0f} ms after the broker dropped the consumer's "
                                   "connection, refused: while its client reconnects, or for a reason of the rules")
        yield  # decided: the subscription is deleted
        self.forget_batch_marks(config.handle)  # PLS-BATCH-004: its client's batch ackers go with it
        # PLS-SUB-006: the subscription and its backlog are deleted.
        for _, s in self.attachments(config.handle):
            s.dispatcher.remove_consumer(config.handle, at)
            del s.topic.subscriptions[s.name]
        del self.consumers[config.handle]
        self.partition_consumers.pop(config.handle, None)
        self.multi_topic_consumers.discard(config.handle)
        self.partitioned_readers.discard(config.handle)
        self.received_labels.pop(config.handle, None)  # a handle subscribed again under the name starts afresh
        self.closed.add(config.handle)
        return {}

    def _op_create_reader(self, args, at, observed):
        topic = self._peek_topic(args["topic"])
        if isinstance(topic, Rejected):
            return topic
        if topic is None:
            self._check_not_discovered(args["topic"])
        if topic is not None and topic.partitions:
            return (yield from self._create_partitioned_reader(topic, args, at, observed))
        start = args["start"]
        n = len(topic.entries) if topic is not None else 0
        full = names.expand_trace(args["topic"])
        if args.get("read_compacted") and isinstance(full, str) and not names.is_persistent(full):
            # PLS-COMPACT-005: a reader's subscribe is refused by the broker (live 4.0.8, C++ 4.2.0,
            # 2026-11-26: NotAllowedError, whether the topic exists yet or not)
            return Rejected("NotAllowedError", "PLS-COMPACT-005", "read compacted on a non-persistent topic")
        if start == "latest" and args.get("inclusive") and isinstance(full, str) and not names.is_persistent(full) \
                and self.args_profile(args).client == "go":
            # the Go reader asks for the last message id, which the broker answers on a non-persistent topic with
            # "Failed to recover Transaction Buffer" where transactions are on, and the client asks again for ever
            # (live 4.2.4 and 5.0.0-M1, Go 0.19.0, 6 Dec 2026: create_reader never returned; regression
            # harness-error-target:GoDriverError-1afba96a461e)
            raise NotModelledError("a Go reader of a non-persistent topic from latest, inclusive (its last-message-id "
                                   "request fails there with transactions on, and the client retries for ever)")
        if start != "latest" and topic is not None and not names.is_persistent(topic.full):
            # nothing stored: a reader from the earliest or from a message id sees only what comes after it
            # (live 4.0.8, 2026-11-27, from a message id: regression pls-reader-003-lost-message-3b8b02561ae3)
            pos, rule = n, "PLS-NP-001"
        elif start == "earliest":
            pos, rule = 0, "PLS-READER-001"
        elif start == "latest" and args.get("inclusive") and n and self.args_profile(args).latest_inclusive_starts_at_last:
            pos, rule = n - 1, "PLS-READER-004"  # the client seeks to the last message (Profile.latest_inclusive_starts_at_last)
            self.check_no_async_in_flight(topic.full, "a reader started at latest")
        elif start == "latest":
            pos, rule = n, "PLS-READER-002"
            if topic is not None:
                self.check_no_async_in_flight(topic.full, "a reader started at latest")
        else:
            label = start["message"]
            found = topic.by_label.get(label) if topic is not None else None
            if found is None:
                return Rejected("InvalidArgument", "PLS-READER-003", f"no message {label!r} on {args['topic']}", certain=False)
            inclusive = bool(args.get("inclusive", False))
            # PLS-READER-003/004: C++ drops messages "prior" to the start id on the client.
            pos, rule = (found, "PLS-READER-004") if inclusive else (found + 1, "PLS-READER-003")
        yield  # decided: the reader is created
        topic = self._topic(args["topic"], create=True, at=at)
        reader = Reader(args["reader"], topic, pos, rule, at)
        if start == "earliest":
            reader.trimmable = self._trimmable_at_creation(topic)  # PLS-RETENTION-001
        if args.get("read_compacted"):
            # PLS-COMPACT-001..004: up to the horizon, only each key's latest message.
            reader.skip = self._compacted_skip(topic)
            reader.rule = "PLS-COMPACT-001" if reader.skip or self.topic_features(topic).horizon is not None else rule
        self.readers[args["reader"]] = reader
        self._reader_skip(reader)
        return {}

    def _create_partitioned_reader(self, topic: Topic, args, at, observed):
        """A reader of a partitioned topic is a consumer of every partition on one non-durable Exclusive subscription
        of a generated name (Java ``PulsarClientImpl#createSingleTopicReaderAsync`` -> ``MultiTopicsReaderImpl``; C++
        ``ReaderImpl::start`` with partitions -> ``MultiTopicsConsumerImpl``; Go ``newReader`` -> ``newInternalConsumer``,
        which opens one consumer per partition). From the earliest message each partition keeps (PLS-READER-001) or
        after its last one (PLS-READER-002); the partitions interleave as the client's queues fill, each in order, as
        for any partitioned consumer. What it reads it acknowledges (C++ ``ReaderImpl::acknowledgeIfNecessary``, Go
        ``reader.Next``), so after a reconnect it resumes past what it read. From latest with ``inclusive``, as from
        latest: each partition's consumer seeks to its last message only inside ``hasMessageAvailable`` (as a one-topic
        reader's does: case up-java-b-reader-latest-inclusive), which traces do not call; except Go's, which seeks
        each partition's consumer to its last message when it is made (``Profile.latest_inclusive_starts_at_last``).

        From a message id: the Java client refuses any start but earliest and latest on a partitioned topic
        (``MultiTopicsConsumerImpl.isIllegalMultiTopicsMessageId``: "The partitioned topic startMessageId is
        illegal"). C++ and Go hand that one id to every partition's consumer; the broker places each partition's
        non-durable cursor by the id's ledger, which belongs to one partition (``ManagedLedgerImpl``
        ``getNextValidPosition``): where the others start depends on the ledger ids the broker gave them, which
        Pulsar leaves unspecified, so the model does not follow it. On a non-persistent partitioned topic every start
        reads only what comes after the reader (PLS-NP-001: nothing is stored), as a one-topic reader does."""
        start = args["start"]
        if self.args_profile(args).client == "java" and start not in ("earliest", "latest"):
            return Rejected("OtherError", "PLS-READER-003", "The partitioned topic startMessageId is illegal")
        persistent = names.is_persistent(topic.full)
        if start not in ("earliest", "latest") and persistent:
            raise NotModelledError("a C++ or Go reader of a partitioned topic from a message id (every partition's cursor "
                                   "is placed by that id's ledger, which is one partition's)")
        at_last = (start == "latest" and bool(args.get("inclusive")) and persistent
                   and self.args_profile(args).latest_inclusive_starts_at_last)
        # a non-persistent partition keeps nothing to start from: whatever the start, only what comes after (PLS-NP-001,
        # as for a one-topic reader)
        rule = ("PLS-NP-001" if not persistent else "PLS-READER-001" if start == "earliest" else
                "PLS-READER-004" if at_last else "PLS-READER-002")
        sub_args = {"consumer": args["reader"], "topic": args["topic"], "subscription": f"reader-{args['reader']}",
                    "type": "Exclusive", "subscription_mode": "NonDurable",
                    "initial_position": "Earliest" if start == "earliest" and persistent else "Latest",
                    "_start_rule": rule,
                    "_start_at_last": at_last,
                    **{k: args[k] for k in ("read_compacted", "client", "receiver_queue_size") if k in args}}
        refused = yield from self._subscribe_partitioned(topic, sub_args, at, observed)
        if not isinstance(refused, Rejected):
            self.partitioned_readers.add(args["reader"])
        return refused

    def _reader_skip(self, reader: "Reader") -> None:
        while reader.next_pos in reader.skip:
            reader.next_pos += 1

    # ================================================================== receiving

    def receive_options(self, handle: str, at: Span, focus: str | None = None) -> ReceiveOptions | Rejected:
        """What ``handle`` (a consumer or a reader) may receive during ``at``.

        ``focus``: a message label the caller wants judged; it is listed if it is allowed.
        """
        self.advance(at.end)
        reader = self.readers.get(handle)
        if reader is not None:
            self.check_no_batch_in_flight({reader.topic.full}, at)
            if reader.topic.aborted - reader.skip:  # PLS-TXN-002: a reader skips aborted messages too
                reader.skip |= reader.topic.aborted
                self._reader_skip(reader)
            if reader.topic.unplaced - reader.skip:  # never read, and maybe on another partition: _place_unshown
                reader.skip |= reader.topic.unplaced
                self._reader_skip(reader)
            n = reader.topic.readable_count()  # PLS-TXN-003
            if reader.next_pos >= n:
                return ReceiveOptions(())
            stored = reader.topic.entries[reader.next_pos].stored
            since = reader.topic.readable_since.get(reader.next_pos)
            if since is not None:
                stored = Span(max(stored.start, since.start), max(stored.end, since.end))
            due = max(stored.end, reader.created.end)
            cand = Candidate(reader.next_pos, Window(stored.start, stored.start, due), (reader.rule,),
                             "next message for the reader", kind="stream")
            return ReceiveOptions((cand,), due, reader.rule, f"{reader.topic.entries[reader.next_pos].label} is next for {handle}")
        found = self.consumers.get(handle)
        if found is None:
            return self._handle_missing(handle, "consumer or reader")
        self.check_no_batch_in_flight({s.topic.full for _, s in self.attachments(handle)}, at, self._key_shared_topics(handle))
        for _, sub in self.attachments(handle):
            self._drop_aborted(sub, at)
        if handle not in self.partition_consumers:
            sub = found[1]
            pos = sub.topic.by_label.get(focus) if focus is not None else None
            return sub.dispatcher.options(handle, at, pos)
        # A partitioned (or multi-topic) consumer: any topic's allowed message; order only within one. So to judge
        # one received message (``focus``) only its own partition's messages are listed; the others say only by
        # when something of theirs is owed (a receive that waited past it is late either way).
        candidates: list[Candidate] = []
        must = []
        parts = self.partition_consumers[handle]
        holders = [sub for _, sub in parts if focus in sub.topic.by_label] if focus is not None else []
        home = holders[0] if len(holders) == 1 else None  # (a label on two: an original and its retry copy)
        for _, sub in parts:
            if home is not None and sub is not home:
                owes = sub.dispatcher.must_receive_by(handle, at)
                if owes is not None:
                    must.append(owes)
                continue
            opts = sub.dispatcher.options(handle, at, sub.topic.by_label.get(focus) if focus is not None else None)
            candidates += [replace(c, topic=sub.topic.short) for c in opts.candidates]
            owes = owed(opts)
            if owes is not None:
                must.append(owes)
        # Canonical order: by time, then in publish order across partitions (stable within one).
        by_topic = {sub.topic.short: sub.topic for _, sub in parts}
        candidates.sort(key=lambda c: (c.window.canonical, by_topic[c.topic].entries[c.pos].seq))
        if handle in self.partitioned_readers:
            # a reader's order and completeness are its start rule's (PLS-READER-001/002), as for a one-topic reader
            ruled = self._reader_rule(handle)
            candidates = [replace(c, rules=tuple(ruled(r) for r in c.rules)) for c in candidates]
            must = [(due, ruled(rule), reason) for due, rule, reason in must]
        if must:
            due, rule, reason = min(must, key=lambda m: m[0])
            return ReceiveOptions(tuple(candidates), due, rule, reason)
        return ReceiveOptions(tuple(candidates))

    def _reader_rule(self, handle: str) -> Callable[[str | None], str | None]:
        """For a partitioned reader: its Exclusive subscription's order rule read as its start rule."""
        start = self.partition_consumers[handle][0][1].start_rule
        return lambda rule: start if rule == ExclusiveDispatcher.order_rule else rule

    def take(self, handle: str, label: str, at: Span, *, redelivery_count: int | None = None,
             candidate: Candidate | None = None, topic: str | None = None) -> dict[str, Any]:
        """Record that ``handle`` received message ``label`` during ``at``; returns the observation.

        ``candidate`` is the allowed option it matched (None: it was not allowed and the caller
        already reported that; the model follows the observation anyway).
        """
        stored = self.message_for(handle, label, topic or (candidate.topic if candidate is not None and candidate.topic else None))
        if stored is None:
            raise ModelError(f"no message labelled {label!r} on the topic of {handle!r}")
        reader = self.readers.get(handle)
        if reader is not None:
            reader.next_pos = stored.pos + 1
            self._reader_skip(reader)
            return stored.observe(0, key_bytes_reported=self.profile_of(handle).binary_key_supported)
        sub = next(s for _, s in self.attachments(handle) if s.topic.short == stored.topic)
        self.observe_presence(handle, label, at, topic=stored.topic)
        count = redelivery_count if redelivery_count is not None else (
            0 if candidate is None else candidate.count_low if candidate.count_model is None else candidate.count_model)
        past_limit = self._queued_nack_past_dead_letter(handle, sub, stored.pos, count, candidate)
        sub.dispatcher.deliver(handle, stored.pos, at, count, candidate)  # first: a NotModelledError changes nothing
        release = sub.dispatcher.slots[stored.pos].release if past_limit is not None and stored.pos in sub.dispatcher.slots \
            else None
        if release is not None and release.high is not None:
            sub.dispatcher.hold_for_dead_letter(stored.pos)
            self._schedule_dead_letter(_DueCopy(sub, stored.pos, past_limit, Span(release.low, release.high)))
        elif release is not None:
            # the request may have found nothing pending: the copy past the limit it would bring is allowed, never
            # owed, and never the model's own choice (no client hands it to the application: it is dead-lettered as it
            # arrives); a dead-letter copy from it is not followed, as before (the application's next nack of the
            # copy it holds writes one, ``_op_nack``)
            sub.dispatcher.defer_release(stored.pos)
        self.received_labels.setdefault(handle, set()).add(label)
        self.ever_received.add(label)
        if sub.trimmable and sub.durable:
            # PLS-RETENTION-001: the broker deletes whole ledgers, oldest first, and a durable
            # subscription's cursor keeps what it has not acked. A delivery of this position proves
            # it was not deleted before the subscription existed, so neither was anything after it.
            sub.trimmable = {p for p in sub.trimmable if p < stored.pos}
        self._dead_letter_on_ack_timeout(handle, sub, stored.pos, at, count, candidate)
        if not names.is_persistent(sub.topic.full) and sub.cursor.ack(stored.pos):
            # PLS-NP-001/002: nothing is stored; once dispatched, a message is gone from the subscription.
            sub.dispatcher.acked([stored.pos], at)
            sub.dispatcher.ghosts.pop(stored.pos, None)
        elif handle in self.partitioned_readers and sub.cursor.ack(stored.pos):
            sub.dispatcher.acked([stored.pos], at)  # a reader acks what it reads (_create_partitioned_reader)
        return stored.observe(count, key_bytes_reported=self.profile_of(handle).binary_key_supported)

    def note_empty_receive(self, handle: str, at: Span) -> None:
        self.observe_presence(handle, None, at)
        for _, sub in self.attachments(handle):
            sub.dispatcher.note_empty_receive(handle, at)

    def observe_presence(self, handle: str, label: str | None, at: Span, topic: str | None = None) -> None:
        """What a receipt by ``handle`` (``label``, or None for nothing) during ``at`` tells of its subscription's
        maybe-absent messages (``reference_model.maybe_absent``); those it shows absent leave the subscription as
        if acked, with no copy in a client's queue. Called before the receipt is judged, so they are not owed.
        ``topic``: the received message's topic, short or full (a dead-letter or retry copy carries its original's
        label, and its receipt says nothing of the original's subscription: the review of 7 Dec 2026)."""
        while self._observe_presence_once(handle, label, at, topic):
            pass

    def _observe_presence_once(self, handle: str, label: str | None, at: Span, topic: str | None = None) -> bool:
        """One pass of ``observe_presence``; True when an empty receive showed a maybe-absent message of an ordered
        subscription absent and others are left, which the next pass judges against the new head."""
        again = False
        if handle not in self.consumers:
            return False
        for _, sub in self.attachments(handle):  # a partitioned consumer's: each partition's on its own
            if not sub.maybe_absent or sub.dispatcher is None:
                continue
            received = sub.topic.by_label.get(label) if label is not None else None
            if label is not None and (received is None or topic not in (None, sub.topic.short, sub.topic.full)):
                continue  # a message of another topic: it says nothing of these
            d = sub.dispatcher
            ordered = d.type_name in ("Exclusive", "Failover") or len(d.connected()) == 1
            # Key_Shared keeps each sticky key's order across its consumers (PLS-KEYSHARED-007)
            same_key = ((lambda q, p: d.sticky_key(q) == d.sticky_key(p)) if isinstance(d, KeySharedDispatcher)
                        else (lambda q, p: False))
            due = {p: float("inf") for p in sub.maybe_absent}
            if received is None and handle in d.connected():
                # due when the dispatcher would have owed it to this consumer (a Failover consumer's activation delay,
                # a delayed message's time), not when it was stored: the live python campaign of 5 Dec 2026 had an
                # in-flight m10 arrive at a new Failover consumer after 1 s of empty receives
                for c in d.options(handle, at).candidates:
                    if c.pos in due and c.window.high is not None:
                        due[c.pos] = min(due[c.pos], c.window.high + self.slack_ms)
            # a message held back past its storing (a delayed one, one a transaction held) and not surely deliverable
            # when the received one could first be dispatched may have come after it: the receipt tells nothing of it (model
            # fuzz seed 20261213: an unplaced delayed m5 read absent when m6, stored after it, was received, so the
            # backlog missed it; the review of 84c5b02: its time may come while m6 waits in the queue)
            waiting = set()
            if received is not None:
                first_out = sub.stored_span(received)
                waiting = {q for q in sub.maybe_absent
                           if (span := sub.stored_span(q)) != sub.topic.entries[q].stored and span.end > first_out.start}
            absent, settled = maybe_absent.resolve(
                sub.maybe_absent - waiting, received, ordered=ordered, ordered_pair=same_key, asked_until=at.end, due=due,
                dropped=sub.maybe_dropped)
            sub.maybe_absent -= settled
            sub.maybe_dropped &= sub.maybe_absent
            self._leave_absent(sub, absent, at)
            # the next one is the head now, and was due as long: the caller asks again (live 4.0.8, Java, the upstream
            # case up-java-c-np-queue-max-out-exclusive: my-message-10 and -11 both maybe dropped, nothing came, and
            # with only the first shown absent the second was owed)
            again = again or bool(absent and received is None and ordered and sub.maybe_absent)
        return again

    @staticmethod
    def _leave_absent(sub: Subscription, positions: Iterable[int], at: Span) -> None:
        gone = sorted(p for p in positions if sub.cursor.ack(p))
        if gone and sub.dispatcher is not None:
            sub.dispatcher.acked(gone, at)
            for p in gone:
                sub.dispatcher.ghosts.pop(p, None)  # never sent to a client: no copy waits in a queue

    def settle_maybe_absent(self) -> None:
        """At the end of a history: a maybe-absent message no receipt showed present may have been absent
        (``reference_model.maybe_absent``), so nothing owes it."""
        for topic in self.topics.values():
            for sub in topic.subscriptions.values():
                undecided, sub.maybe_absent = sub.maybe_absent, set()
                sub.maybe_dropped = set()
                self._leave_absent(sub, undecided, Span.at(self.now))

    def explain_refusal(self, handle: str, label: str, at: Span) -> Refusal:
        """Why delivering ``label`` to ``handle`` during ``at`` is not allowed."""
        stored = self.message_for(handle, label) or self.message(label)
        if stored is None:
            return Refusal("wrong-value", "PLS-MSG-001", f"{handle} received {label!r}, which was never sent.")
        reader = self.readers.get(handle)
        if reader is not None:
            if reader.topic.short != stored.topic:
                return Refusal("wrong-value", reader.rule, f"{label} is on topic {stored.topic}, not on the reader's topic.")
            expected = reader.topic.entries[reader.next_pos].label if reader.next_pos < len(reader.topic.entries) else "nothing"
            anomaly = "duplicate-delivery" if stored.pos < reader.next_pos else "order-violation"
            return Refusal(anomaly, reader.rule, f"The reader {handle} reads in order; it should have read {expected}, it read {label}.")
        found = self.consumers.get(handle)
        if found is None:
            return Refusal("wrong-consumer", "PLS-SUB-001", f"{handle} is not connected, yet it received {label}.")
        config, sub = next(((c, s) for c, s in self.attachments(handle) if s.topic.short == stored.topic), found)
        if stored.topic != sub.topic.short:
            return Refusal("wrong-value", "PLS-SUB-001", f"{label} is on topic {stored.topic}, not on {sub.topic.short}.")
        ahead = sub.dispatcher.queued_ahead(stored.pos) if isinstance(sub.dispatcher, ExclusiveDispatcher) else None
        if ahead is not None:
            # whether or not its ack had reached the broker, the copy came from a stream that carried an earlier
            # message first (ExclusiveDispatcher.queued_ahead): an order violation, not only a late copy
            first = sub.label(ahead)
            return Refusal("order-violation", sub.dispatcher.order_rule,
                           f"Let {first} and {label} be pushed by {handle}'s stream, {first} first, and neither received "
                           f"before both were acknowledged. Then {first} comes from the receiver queue before {label}; "
                           f"{label} came, and {first} never did.")
        if sub.cursor.is_acked(stored.pos):
            if stored.pos in sub.expired:
                return Refusal("ack-resurrection", "PLS-TTL-003",
                               f"Let {label} be expired on subscription {sub.name} by an expiry pass (older than the TTL). "
                               f"Then it is gone from the subscription, delivered before or not; {handle} received it at {at.end:g} ms.")
            if stored.pos < sub.start_pos or stored.pos in sub.before_cursor or stored.pos in sub.unsure_in_flight:
                return Refusal("wrong-value", sub.start_rule,
                               f"{label} was published before subscription {sub.name} was created at its initial position "
                               f"(Latest), so it is not in the subscription.")
            return Refusal("ack-resurrection", "PLS-ACK-001",
                           f"Let {label} be acknowledged on subscription {sub.name}. Then it is never delivered again; "
                           f"{handle} received it at {at.end:g} ms.")
        refusal = sub.dispatcher.explain(handle, stored.pos, at)
        if handle in self.partitioned_readers:
            return replace(refusal, rule=self._reader_rule(handle)(refusal.rule))
        return refusal

    def _key_shared_topics(self, handle: str) -> frozenset[str]:
        """The topics (full names) ``handle`` reads through a Key_Shared subscription (none for a reader)."""
        return frozenset(s.topic.full for _, s in self.attachments(handle)
                         if s.dispatcher is not None and s.dispatcher.type_name == "Key_Shared")

    def receive(self, handle: str, now: float, timeout_ms: float) -> tuple[dict[str, Any] | None, float] | Rejected:
        """The model target's receive: the canonical choice and the instant it completes.

        With nothing deliverable the virtual clock runs until a message becomes due (a nack or
        ack-timeout redelivery) or the timeout passes.
        """
        deadline = now + timeout_ms
        # a batch the client may send while this receive waits is not followed (check_no_batch_in_flight)
        reader = self.readers.get(handle)
        topics = {reader.topic.full} if reader is not None else {s.topic.full for _, s in self.attachments(handle)}
        self.check_no_batch_in_flight(topics, Span(now, deadline), self._key_shared_topics(handle))
        while True:
            opts = self.receive_options(handle, Span.at(now))
            if isinstance(opts, Rejected):
                return opts
            times = [max(c.window.canonical, now) for c in opts.candidates]
            timer = self.next_timer()
            # A client timer (e.g. a DLQ publish) due before any candidate may create one.
            if timer is not None and timer <= deadline and (not times or timer < min(times)):
                now = max(now, timer)
                continue
            if not times or min(times) > deadline:
                self.advance(deadline)
                self.note_empty_receive(handle, Span(now, deadline))
                return None, deadline
            t = min(times)
            if t > now:
                opts = self.receive_options(handle, Span.at(t))
                if isinstance(opts, Rejected):
                    return opts
            chosen = next((c for c in opts.candidates if c.window.canonical <= t), None)
            if chosen is not None:
                break
            # A timer due at t itself changed what is deliverable (a nack redelivery that a
            # dead-letter limit turns into a DLQ publish): look again from t, which only moves on.
            now = t
        label = self.candidate_label(handle, chosen)
        return self.take(handle, label, Span.at(t), candidate=chosen), t

    def _label_of(self, handle: str, pos: int) -> str:
        reader = self.readers.get(handle)
        topic = reader.topic if reader is not None else self.consumers[handle][1].topic
        return topic.entries[pos].label

    # ================================================================== stats

    def backlog(self, topic: str, subscription: str, at: Span, *, ack_lag_ms: float = 0.0,
                in_sum: bool = False) -> tuple[int, int] | Rejected:
        """PLS-BACKLOG-001: the allowed backlog range ``(low, high)``.

        ``low`` is the model's count of entries not acked; acks made less than ``ack_lag_ms``
        before the stats call (and not flushed by a close) may not have reached the broker yet.
        """
        self.advance(at.start)
        t = self._peek_topic(topic)
        if isinstance(t, Rejected):
            return t
        self._no_transaction_stats(t)
        if t is not None and t.partitions:
            # Partitioned stats add up the partitions.
            total_low = total_high = 0
            for i in range(t.partitions):
                got = self.backlog(names.partition_name(t.full, i), subscription, at, ack_lag_ms=ack_lag_ms,
                                   in_sum=True)  # an unplaced message counts once, on the partition it was put on
                if isinstance(got, Rejected):
                    return got
                total_low, total_high = total_low + got[0], total_high + got[1]
            return total_low, total_high
        sub = t.subscriptions.get(subscription) if t is not None else None
        if sub is None and t is not None and (t.full, subscription) in self.removed_non_durable:
            return Rejected("SubscriptionNotFound", "PLS-SUB-007",
                            f"the non-durable subscription {subscription!r} on {topic} went with its last consumer")
        if sub is None:
            return Rejected("SubscriptionNotFound", "PLS-BACKLOG-001", f"no subscription {subscription!r} on {topic}", certain=False)
        if not names.is_persistent(t.full) and not self.non_persistent_held(sub):
            # NonPersistentTopic drops a subscription with its last consumer (live 4.0.8, 2026-11-27, 3/3:
            # regression pls-backlog-001-unexpected-rejection-143de56b27d7); not confirmed in the source
            return Rejected("SubscriptionNotFound", "PLS-BACKLOG-001",
                            f"a non-persistent subscription {subscription!r} without consumers", certain=False)
        if not names.is_persistent(t.full):
            # a non-persistent subscription has no cursor and no backlog: NonPersistentSubscription#getStats never sets
            # msgBacklog (javap, 4.0.8); live 4.0.8 reported 0 with a message unacked (3/3, 2026-11-27, issue 16's campaign)
            return 0, 0
        high = self._feature_backlog(t, sub)  # entries: a batch counts once
        lagging = sum(n for (when, n, who) in sub.ack_log
                      if when > max(at.start - ack_lag_ms, sub.flushed_at.get(who, float("-inf"))))
        # async sends no flush has reported yet may still be on their way to the broker: the backlog may
        # not count their entries yet (live 4.0.8, 2026-11-27: a delayed async send, then stats at once, gave
        # 0 once in four runs; regression pls-backlog-001-wrong-backlog-082a19e96a09)
        fx = self.topic_features(t)
        # (a partitioned producer's sends are on its partitions: each label is looked up on ``t`` itself)
        # (and a batching partitioned producer's per-partition producers' batches: live 4.0.8, Go campaign of 5 Dec
        # 2026, an async 5 MB batched send to a one-partition topic, stats at once said 0; regression
        # pls-backlog-001-wrong-backlog-4b93f0365f5a)
        unreported = {pos for handle in self.flushed if handle in self.producers or handle in self.partition_producers
                      for label in self.maybe_in_flight(handle)
                      if (pos := t.by_label.get(label)) is not None and not sub.cursor.is_acked(pos)}
        in_flight = {fx.entry_key(pos) for pos in unreported}
        # a chunked message in flight may have none of its chunks stored yet: each chunk is an entry the
        # backlog counts (live 4.2.4 and 4.0.8, 2026-11-27: a 5 MB + 1 async chunked send, then stats at once,
        # gave 0, 3/3; regression pls-backlog-001-wrong-backlog-92d8049cf0a8)
        chunks_in_flight = sum(fx.chunks.get(pos, 1) - 1 for pos in unreported)
        # a batching producer's open batch may already have left on its timer (the Java client's is periodic;
        # live 4.0.8, Java, 2026-11-27: an async send on a batching producer, then stats at once, counted it:
        # regression pls-backlog-001-wrong-backlog-883a6c7922fa)
        leaving = self._entries_maybe_leaving(t, at)
        # an expiry pass still searching for its last expired entry has not moved the cursor yet (retention.py)
        expiring = sub.expiring_at(at.start)
        # an entry the broker may have deleted (PLS-RETENTION-001: acked on every other subscription, its ledger
        # closed) may be counted or not until a receive shows it gone (FeatureOps.trim moves it to trimmed_uncertain).
        # Live 4.0.8, 3 Dec 2026, CI under load (regression pls-backlog-001-wrong-backlog-d2decbdd1648): the 500 ms
        # receive at Earliest got nothing but was shorter than the 520 ms band, so it did not show m1 gone, and
        # stats said 0 where the model allowed only 1.
        maybe_deleted = {fx.entry_key(pos) for pos in sub.trimmable if not sub.cursor.is_acked(pos)} if sub.durable else set()
        # a message the subscription may or may not have (reference_model.maybe_absent) is counted or not
        maybe_not_in = {fx.entry_key(pos) for pos in sub.maybe_absent if not sub.cursor.is_acked(pos)}
        # PLS-TAG-001 (tdmq profile; PIP-105 entry filters): the dispatcher acks an entry the tag filter rejects when it
        # reads it, so until then the backlog counts it; when it reads is the dispatcher's (the model's cursor acked
        # them at once): each may still count
        unread_rejected = len({fx.entry_key(pos) for pos in sub.tag_rejected})
        # an async send in flight at a Latest start that no consumer of it received (_latest_subscription), taken as
        # before the cursor: the broker may have stored it after, and its consumers not asked for it yet
        unsure_gone = len({fx.entry_key(pos) for pos in sub.unsure_in_flight if sub.cursor.is_acked(pos)})
        return max(0, high - len(in_flight | maybe_deleted | maybe_not_in) - chunks_in_flight), \
            high + leaving + lagging + sub.fault_uncertain_acks + expiring + sub.trimmed_uncertain + unread_rejected + \
            unsure_gone + (0 if in_sum else self._maybe_here(t))

    def _maybe_here(self, t: Topic) -> int:
        """How many messages the model stored on another partition of ``t``'s partitioned topic that may be on ``t``
        instead (``_place_unshown``): a backlog of ``t`` may count them."""
        if t.partition_index < 0 or not self.unplaced_labels:
            return 0
        parent = names.partitioned_parent(t.full)
        return sum(1 for label in self.unplaced_labels if label in self.labels and self.labels[label][0] is not t
                   and names.partitioned_parent(self.labels[label][0].full) == parent
                   and t.partition_index in self.routes.get(label, ((),))[0])

    def _entries_maybe_leaving(self, t: Topic, at: Span) -> int:
        """Entries the open batches of ``t``'s batching producers may already have written by ``at`` (their timer
        or a full container, ``batch_may_have_left``): the model stores them at the next flush."""
        return self.batch_entries_unsure(t, at)  # PLS-BATCH-009: their split is open too

    def _stats_subscription(self, topic: str, subscription: str, at: Span) -> "tuple[Topic, Any, Any] | None":
        """(topic, subscription or None, its dispatcher or None) for a per-consumer stats reading at
        ``at``; None for a topic that is refused, unknown or partitioned (each partition is its own
        subscription; those readings judge non-partitioned topics only)."""
        self.advance(at.start)
        t = self._peek_topic(topic)
        if isinstance(t, Rejected) or t is None or t.partitions:
            return None
        sub = t.subscriptions.get(subscription)
        return t, sub, (sub.dispatcher if sub is not None else None)

    def consumer_unacked(self, topic: str, subscription: str, at: Span, *, ack_lag_ms: float = 0.0,
                         expiry_settled: bool = False) -> "dict[str, unacked.CountRange] | None":
        """PLS-UNACKED-002/003: the ``unackedMessages`` each connected consumer of a Shared / Key_Shared
        subscription may report, by consumer name (``reference_model/unacked.py``; the only consumer, if its client
        chose its name, under ``unacked.SOLE_UNNAMED``). None when nothing is stated: another type, a partitioned
        topic, or batched entries (counted per message, not modelled). ``expiry_settled``: the caller saw an expiry pass's
        cursor move done (the backlog no longer counts what it removed), so the pass is no longer under way for the counts
        either (live 5.0.0-M1, regression pls-backlog-001-wrong-backlog-cc0a0e50d818: stats 7 us after the pass counted
        both; live 4.0.8, KD-104: the backlog settled and the count did not)."""
        self._no_transaction_stats(self.topic_named(topic))
        found = self._stats_subscription(topic, subscription, at)
        if found is None:
            return None
        t, sub, d = found
        if d is None or d.type_name not in unacked.COUNTED_TYPES or any(len(sub.batch_of(p)) > 1 for p in range(sub.n_entries())):
            return None
        if self._entries_maybe_leaving(t, at):
            # an open batch that may have left is a batched entry the consumer may hold (live 4.2.4, 27 Nov 2026:
            # an async batched send just before a subscribe, then the stats counted it, 1 run in 3; regressions
            # pls-unacked-002-wrong-value-20a4ece197a8 and -8aa1a00992ef)
            return None
        names_seen = [d.consumers[h].consumer_name for h in d.connected()]
        out: dict[str, unacked.CountRange] = {}
        for h in d.connected():
            name = d.consumers[h].consumer_name
            if name is None and len(names_seen) == 1:
                name = unacked.SOLE_UNNAMED  # the only consumer, named by its client: the stats' one entry
            if name is None or names_seen.count(name) > 1:
                continue
            if not names.is_persistent(t.full):
                # written to a consumer once received; only what no consumer received yet may still be in flight
                out[name] = unacked.non_persistent_count(sum(1 for p in sub.unacked_positions()
                                                             if t.entries[p].stored.end > at.start - ack_lag_ms))
                continue
            free = sum(1 for p in sub.unacked_positions()
                       if not ((slot := d.slots.get(p)) is not None and slot.holder is not None and slot.release is None))
            lagging = sum(k for (when, k, who) in sub.ack_log
                          if who == h and when > max(at.start - ack_lag_ms, sub.flushed_at.get(who, float("-inf"))))
            out[name] = unacked.persistent_count(d.pending_count(h), free, lagging,
                                                 0 if expiry_settled else sub.expiring_at(at.start))
        return out

    def key_hash_ranges(self, topic: str, subscription: str, at: Span) -> "ReportedRanges | None":
        """PLS-KEYSHARED-003/004/005: the hash ranges each connected consumer of a Key_Shared
        subscription reports in its stats (``keyHashRanges``; 4.x also ``keyHashRangeArrays``).

        Pulsar: ``Consumer.getStats`` fills ``ConsumerStatsImpl.keyHashRanges`` from the selector
        (apache/pulsar ``pulsar-broker/.../service/Consumer.java``, ``ConsumerStatsImpl.java``); on 4.x
        through ``ConsumerHashAssignmentsSnapshot.getRangesByConsumer`` (sorted, adjacent ranges merged).
        Each selector's chapter function states them: ``key_shared.ring_reported_ranges`` for the ring,
        ``key_shared.auto_split_assignments`` for AUTO_SPLIT, the consumer's own ranges for STICKY
        (merged by ``key_shared.merge_ranges`` where the release's snapshot merges them).

        None when nothing is stated: not a Key_Shared subscription with a dispatcher, or a partitioned
        topic (each partition is its own subscription; the stats op judges non-partitioned topics only).
        """
        found = self._stats_subscription(topic, subscription, at)
        if found is None:
            return None
        t, sub, d = found
        if not isinstance(d, KeySharedDispatcher):
            return None
        if not names.is_persistent(t.full):
            # a non-persistent Key_Shared consumer's stats carry no ranges (live 4.0.8, 3/3, 2026-11-27: [] where the
            # persistent dispatcher reports the ring's share; found by the campaign of issue 16): not stated
            return None
        profile = d.settings.profile
        selector = d.selector or ("consistent_hashing" if d.settings.consistent_hashing else "auto_split")
        handles = list(d.consumers)
        per_handle: dict[str, list[tuple[int, int]]] = {h: [] for h in handles}
        unknown = ""
        if d.state is not None and selector == "consistent_hashing":
            # PLS-KEYSHARED-003: the ring's cut, in the release's report style
            reported = ks.ring_reported_ranges(d.state)
            for h in handles:
                per_handle[h] = list(reported.get(d.ident.get(h), ()))
            unnamed = [h for h in handles if not d.consumers[h].consumer_name]
            if unnamed:
                unknown = (f"the ring places consumers by name and {', '.join(unnamed)} subscribed without a "
                           "consumer_name (the client drew one): nobody's ranges can be predicted")
        elif d.state is not None and selector == "auto_split":
            # PLS-KEYSHARED-004: one range per consumer, the top one ending at 65536
            for start, end, h in ks.auto_split_assignments(d.state):
                per_handle.setdefault(h, []).append((start, end))
        elif d.state is not None:
            # PLS-KEYSHARED-005: the ranges each consumer declared
            for start, end, h in d.state.ranges:
                per_handle.setdefault(h, []).append((start, end))
            if profile.ring_report == "merged":  # 4.x: ConsumerHashAssignmentsSnapshot merges per consumer
                per_handle = {h: ks.merge_ranges(rs) for h, rs in per_handle.items()}
        rule = {"consistent_hashing": ks.RULE_RING, "auto_split": ks.RULE_AUTO_SPLIT}.get(selector, ks.RULE_STICKY)
        return ReportedRanges(rule, selector,
                              MappingProxyType({h: tuple(sorted(rs)) for h, rs in per_handle.items()}),
                              MappingProxyType({h: d.consumers[h].consumer_name for h in handles}), unknown)

    # ================================================================== faults

    def reconnects_after(self, count: int) -> list[faults.Fault]:
        """The reconnecting faults (cut, restart, crash) among those after the first ``count``."""
        return [f for f in faults.injected(self.fault_log[count:]) if f.effects.reconnects]

    def _fault_refusal(self, consumers: "list[str] | None" = None, *, producers: "list[str] | None" = None) -> str | None:
        """Why a reconnect of ``consumers`` and ``producers`` (None: every one) cannot be followed
        (``faults.unfollowable``), for the first consumer or producer that makes it so; None when every handle
        can be followed."""
        for handle, (config, sub) in self.consumers.items():
            if consumers is not None and handle not in consumers:
                continue
            pairs = self.attachments(handle)
            why = faults.unfollowable(
                subscription_type=config.type, durable=sub.durable, persistent=names.is_persistent(sub.topic.full),
                consumers_on_subscription=len(sub.dispatcher.connected()) if sub.dispatcher is not None else 1,
                ack_timeout_ms=config.ack_timeout_ms, attachments=len(pairs), nack_due=handle in self.nacked_by,
                max_unacked=config.max_unacked)
            if why is not None:
                return f"{handle}: {why}"
        for handle, pf in self.pfx.items():
            if producers is not None and handle not in producers:
                continue
            if handle in self.producers and pf.pending:
                return f"{handle}: async sends pending at a reconnect (the producer re-sends them: stored once or twice)"
            if handle in self.producers and pf.region and self._floating(self.producers[handle].topic.full, Span.at(self.now)):
                return f"{handle}: batched sends that may or may not have left at a reconnect (PLS-BATCH-009)"
        return None

    def _op_fault(self, args, at, observed, *, op: str):
        """PLS-FAULT-001..006: a fault op (``reference_model.faults``). A cut, restart or crash drops
        every connection: each consumer leaves its subscription (its unacked messages go back, as
        when it closes: PLS-FAULT-003) and joins again, in the order they first joined; a restart
        also closes every topic's ledger and starts redelivery counts again (a new dispatcher);
        latency and stalls change no state (the checker widens its timing bands)."""
        kind = faults.fault_kind(op, args)
        effects = faults.EFFECTS[kind]
        if effects.reconnects:
            why = self._fault_refusal()
            if why is not None:
                raise NotModelledError(why)
            self.check_reconnects_admitted(list(self.consumers), op)
        yield  # decided: the fault happens, and the clients reconnect
        self.fault_log.append(faults.Fault(kind, at.start, at.end, stored_before=self._stored_count))
        if kind == faults.LATENCY:
            self.latency_ms = int(args["ms"])
        if not effects.reconnects:
            return {}
        self.reconnect_consumers(list(self.consumers.items()), effects, at)
        if effects.closes_ledgers:
            for topic in self.topics.values():
                self.unloads.setdefault(topic.full, []).append(at.end)  # PLS-RETENTION-001: its ledger is closed
        self.reconnected_producers |= set(self.producers)
        self._end_timer_quiet(set(self.producers))
        return {}

    def reconnect_consumers(self, joined: "list[tuple[str, tuple[ConsumerConfig, Subscription]]]", effects: faults.Effects,
                            at: Span) -> None:
        """PLS-FAULT-003: the consumers ``joined`` (handle, (config, subscription)) were disconnected by the last
        fault of ``fault_log`` and subscribe again, in the order they first joined: each leaves its subscription
        (its unacked messages go back, as when it closes) and joins again; an ack made less than the settle time
        before it may not have reached the broker; with ``effects.resets_redelivery_counts`` a subscription all
        of whose consumers left gets a new dispatcher (its redelivery counts start again)."""
        settle = faults.ack_settle_ms(self.profile.ack_grouping_ms, float(self.latency_ms), self.slack_ms)
        fault = self.fault_log[-1]
        for sub in {id(sub): sub for _, (_, sub) in joined}.values():
            sub.fault_uncertain_acks += sum(1 for t in sub.ack_times.values() if faults.ack_uncertain(t, [fault], settle))
        # what may have been dispatched on the old connections: unacked, and due (a delayed message not
        # yet due was never dispatched, PLS-FAULT-005)
        unacked = {id(sub): frozenset(p for p in sub.unacked_positions()
                                      if (sub.delivery_span is None or sub.delivery_span(sub, p).start <= at.start))
                   for _, (_, sub) in joined}
        for handle, (config, sub) in joined:
            sub.dispatcher.remove_consumer(handle, at)
            self.disconnected_at[handle] = at.end
        for handle, (config, sub) in joined:
            if effects.resets_redelivery_counts and not sub.dispatcher.connected():
                sub.dispatcher = self._new_dispatcher(config.type, sub)
            sub.dispatcher.add_consumer(config, at, "PLS-FAULT-003")
            if isinstance(sub.dispatcher, SharedDispatcher):
                sub.dispatcher.reconnected(handle, unacked[id(sub)])

    def _op_restart_broker(self, args, at, observed):
        return (yield from self._op_fault(args, at, observed, op="restart_broker"))

    def _op_cut_connections(self, args, at, observed):
        return (yield from self._op_fault(args, at, observed, op="cut_connections"))

    def _op_set_latency(self, args, at, observed):
        return (yield from self._op_fault(args, at, observed, op="set_latency"))

    def _op_stall_connections(self, args, at, observed):
        return (yield from self._op_fault(args, at, observed, op="stall_connections"))

    # ================================================================== the composition

    # ================================================================== transactions

    def _op_new_txn(self, args, at, observed):
        prof = self.args_profile(args)
        refused = self._java_only_refusal("new_txn", args, prof)  # PLS-TXN-006
        if refused is not None:
            return refused
        name = args["txn"]
        if name in self.txns:
            raise ModelError(f"transaction {name!r} begun twice; every new_txn needs a distinct txn name")
        yield  # decided: the transaction begins
        txn = self.txns[name] = txns.begin(name, at, args.get("timeout_ms"))
        self.handle_profiles[name] = prof
        window = txns.broker_timeout(txn, self.slack_ms)
        self._schedule(window.start, lambda: self._time_out(name, window))  # PLS-TXN-005
        return {}

    def _time_out(self, name: str, window: Span) -> None:
        """PLS-TXN-005: the broker aborts a transaction still open at its timeout."""
        if self.txns[name].state == txns.OPEN:
            self._end_txn(self.txns[name], txns.TIMED_OUT, window)

    def _txn_or_reject(self, name: str, op: str, at: Span) -> "txns.Txn | Rejected":
        txn = self.txns.get(name)
        if txn is None:  # an ended transaction stays in self.txns: a missing one never began
            return Rejected("UnknownHandle", "PLS-TXN-004", f"no transaction named {name!r}: a bug in the trace")
        prof = self.handle_profiles.get(name, self.profile)
        if txn.failed and txn.state == txns.OPEN and not prof.txn_failed_op_aborts:
            # PLS-TXN-011: the client holds it in its error state (Go TxnError) and refuses every op with it
            return Rejected(prof.txn_ended_send_error if op == "send" else "InvalidTxnStatus", "PLS-TXN-011",
                            f"an op in transaction {name!r} failed (a conflicting ack), so the {prof.client} client holds "
                            f"it in its error state and refuses {op} with it; the broker aborts it at its timeout")
        refused = txns.refusal(txn, op, at, self.slack_ms)  # PLS-TXN-004
        if refused is not None and op == "send":
            refused = replace(refused, error=prof.txn_ended_send_error)  # the client's own check, Go's a plain error
        return refused or txn

    def _end_step(self, args, at, op: str, state: str):
        found = self._txn_or_reject(args["txn"], op, at)
        if isinstance(found, Rejected):
            return found
        refused = txns.commit_refusal(found) if state == txns.COMMITTED else None
        if refused is not None:
            return refused  # PLS-TXN-011: commit_refusal aborts it
        yield  # decided: the transaction ends
        self._end_txn(found, state, at)
        return {}

    def _op_commit_txn(self, args, at, observed):
        return (yield from self._end_step(args, at, "commit_txn", txns.COMMITTED))

    def _op_abort_txn(self, args, at, observed):
        return (yield from self._end_step(args, at, "abort_txn", txns.ABORTED))

    def _end_txn(self, txn: "txns.Txn", state: str, at: Span) -> None:
        """Commit, abort or time out: a marker entry on each topic it produced to; its messages
        become readable (committed) or are dropped (PLS-TXN-001..003, 005)."""
        ended = self.txns[txn.name] = txns.end(txn, state, at)
        self._end_txn_acks(ended, state, at)
        for full in txns.topics_written(ended):
            topic = self.topics[full]
            self.topic_features(topic).next_entry += 1  # the commit or abort marker takes an entry id
            topic.aborted = txns.aborted_positions(topic.txn_of, self.txns)
            released = self._update_read_position(topic, at)
            if state == txns.TIMED_OUT:
                topic.timeout_released.update({pos: at for pos in released})

    def _end_txn_acks(self, txn: "txns.Txn", state: str, at: Span) -> None:
        """PLS-TXN-008/009: a commit makes the transaction's acks final; an abort or a timeout unacks
        them, and the broker redelivers the individually acked ones (a cumulative ack is only undone)."""
        aborted: dict[int, dict[int, tuple[str, tuple[int, int]]]] = {}  # id(sub) -> position -> (consumer, counts)
        subs: dict[int, Subscription] = {}
        superseded: dict[int, dict[int, tuple[str, tuple[int, int]]]] = {}  # id(sub) -> positions a plain ack deleted meanwhile
        for topic, name, pos, handle, count in txn.acked:
            sub = self.topics[topic].subscriptions.get(name)
            if sub is not None and state != txns.COMMITTED and pos not in sub.txn_pending:
                # acked plainly while pending (_supersede_pending): not unacked, but a single-active subscription still
                # rewinds (live 4.0.8, 5 Dec 2026: x1 so, x3 came again after the abort; case txn-plain-ack-of-pending)
                superseded.setdefault(id(sub), {})[pos] = (handle, count)
                subs[id(sub)] = sub
            if sub is None or sub.txn_pending.get(pos) != txn.name:
                continue
            del sub.txn_pending[pos]
            if state == txns.COMMITTED:
                sub.txn_committed[pos] = txn.name
            elif sub.cursor.unack(pos):
                aborted.setdefault(id(sub), {})[pos] = (handle, count)
                subs[id(sub)] = sub
        for topic, name, _ in txn.cumulative:
            sub = self.topics[topic].subscriptions.get(name)
            if sub is None or sub.txn_cumulative is None or sub.txn_cumulative[0] != txn.name:
                continue
            (upto,) = sub.txn_cumulative[1]  # the transaction's last cumulative ack there: a later one moved it on
            sub.txn_cumulative = None
            if state == txns.COMMITTED:  # the mark-delete position moves now; an abort moves nothing
                # (past another transaction's pending individual acks too: the broker's cursor cannot move back, so
                # their abort brings nothing back, as after a plain ack: _supersede_pending)
                self._supersede_pending(sub, [p for p in sub.txn_pending if p <= upto])
                newly = [p for p in range(sub.cursor.mark_delete + 1, upto + 1) if not sub.cursor.is_acked(p)]
                sub.cursor.ack_cumulative(upto)
                if sub.dispatcher is not None:
                    sub.dispatcher.acked(newly, at)
                sub.txn_committed.update({p: txn.name for p in newly})
        for key, holders in superseded.items():
            dispatcher = subs[key].dispatcher
            if key not in aborted and dispatcher is not None and dispatcher.type_name in ("Exclusive", "Failover"):
                aborted[key] = holders  # the rewind names them; nothing was unacked
        for key, holders in aborted.items():
            if subs[key].dispatcher is not None:
                subs[key].dispatcher.transaction_aborted(holders, at)

    def _update_read_position(self, topic: Topic, at: Span) -> range:
        """PLS-TXN-003: how far dispatchers may read now; records when the positions the change made
        readable became so, and returns them."""
        before = topic.readable_count()
        end = txns.readable_end(topic.txn_of, self.txns, len(topic.entries))
        topic.max_read = None if end >= len(topic.entries) else end
        released = txns.newly_readable(before, topic.readable_count())
        for pos in released:
            topic.readable_since[pos] = at
        return released

    def _send_txn(self, producer: Producer, args, at: Span) -> "txns.Txn | Rejected | None":
        """The open transaction a send is made in (None: not in one), or the send's refusal."""
        if "txn" not in args:
            return None
        refused = self._java_only_refusal("send", args, self.profile_of(producer.handle))  # PLS-TXN-006
        if refused is not None:
            return refused
        txn = self._txn_or_reject(args["txn"], "send", at)
        if isinstance(txn, Rejected):
            return txn
        features = self.pfx.get(producer.handle)
        # (a partitioned producer's send is routed first and stored on its partition, whose transaction buffer holds it:
        # PLS-TXN-003 per partition, the commit or abort marker on each partition written, TransactionImpl
        # #registerProducedTopic per partition; case txn-partitioned)
        # A delayed one is both: readable once the transaction commits and delivered once its time comes (live 4.0.8,
        # 5 Dec 2026: a1 sent in t1 with a 1,500 ms delay, committed at 0.7 s, delivered at 1.7 s; case txn-delayed).
        if args.get("async") or (features is not None and (features.batching or features.chunking)) \
                or not names.is_persistent(producer.topic.full):
            raise NotModelledError("a transactional send that is batched, chunked, async or non-persistent")
        return txn

    def _txn_client_check(self, args, op: str = "ack") -> Rejected | None:
        """PLS-TXN-006: a Python consumer cannot ack in a transaction; PLS-GO-001: a Go one cannot ack cumulatively in one."""
        if "txn" not in args:
            return None
        return self._java_only_refusal(op, args, self.profile_of(args["consumer"]))

    def _ack_in_txn(self, args, at: Span):
        """PLS-TXN-007/010: an individual ack in a transaction is pending until the transaction ends."""
        refused = self._txn_client_check(args)
        if refused is not None:
            return refused
        txn = self._txn_or_reject(args["txn"], "ack", at)  # PLS-TXN-004
        if isinstance(txn, Rejected):
            return txn
        found = self._resolve(args["consumer"], args["message"])
        if isinstance(found, Rejected):
            return found
        config, sub, pos = found
        self._modelled_txn_ack(config, sub, [pos])
        pending = sub.txn_pending.get(pos)
        if pending == txn.name or (sub.txn_cumulative is not None and pos in sub.txn_cumulative[1]):
            raise NotModelledError("an ack in a transaction of a message that transaction (or a pending cumulative ack) already acked")
        refused = txns.ack_refusal(txn, args["message"], pending_in=pending, already_acked=sub.cursor.is_acked(pos))
        acked_at = sub.ack_times.get(pos)
        if refused is not None and pending is None and acked_at is not None \
                and at.start - acked_at <= self.profile_of(config.handle).ack_grouping_ms + self.slack_ms:
            # the plain ack may still wait in the client's ack-grouping buffer: the broker may not know it yet
            refused = replace(refused, certain=False)
        if refused is not None:
            return refused  # PLS-TXN-010; the transaction is marked failed by commit_refusal
        counts = sub.dispatcher.count_range_held_by(config.handle, pos) \
            if isinstance(sub.dispatcher, SharedDispatcher) else (0, 0)
        if counts is None:
            raise NotModelledError("an ack in a transaction of a message the consumer does not hold")
        yield  # decided: the ack is pending in the transaction
        sub.cursor.ack(pos)
        sub.dispatcher.acked([pos], at)
        sub.txn_pending[pos] = txn.name
        self.txns[txn.name] = txns.acked(self.txns[txn.name], sub.topic.full, sub.name, pos, config.handle, counts)
        return {}

    def _ack_cumulative_in_txn(self, args, found, at: Span):
        """PLS-TXN-007/010: a cumulative ack in a transaction (Exclusive / Failover) is pending until it ends."""
        txn = self._txn_or_reject(args["txn"], "ack_cumulative", at)  # PLS-TXN-004
        if isinstance(txn, Rejected):
            return txn
        config, sub, pos = found
        self._modelled_txn_ack(config, sub, range(sub.cursor.mark_delete + 1, pos + 1))
        # PendingAckHandleImpl#cumulativeAcknowledgeMessage, in its order: at or below the mark-delete position, then
        # another transaction's pending cumulative ack, or this one's at or past the position; another transaction's
        # pending individual acks below it are no conflict (live 4.0.8, 5 Dec 2026: case txn-cumulative-rules)
        if pos <= self._durable_mark_delete(sub):
            return Rejected("TransactionConflict", "PLS-TXN-010",
                            f"{args['message']} is at or below {sub.name}'s mark-delete position, so a cumulative ack of it "
                            f"in {txn.name!r} conflicts")
        if sub.txn_cumulative is not None and sub.txn_cumulative[0] != txn.name:
            return Rejected("TransactionConflict", "PLS-TXN-010",
                            f"transaction {sub.txn_cumulative[0]!r} holds a pending cumulative ack on {sub.name}, "
                            f"so a cumulative ack in {txn.name!r} conflicts")
        if sub.txn_cumulative is not None and pos <= sub.txn_cumulative[1][0]:
            return Rejected("TransactionConflict", "PLS-TXN-010",
                            f"transaction {txn.name!r} already holds a pending cumulative ack on {sub.name} at or past "
                            f"{args['message']}, so this one conflicts")
        yield  # decided: the cumulative ack waits for the commit; until then nothing moves (PLS-TXN-007)
        sub.txn_cumulative = (txn.name, (pos,))  # (a later one of the same transaction moves it on)
        self.txns[txn.name] = txns.acked_cumulatively(self.txns[txn.name], sub.topic.full, sub.name, (pos,))
        return {}

    def _modelled_txn_ack(self, config: ConsumerConfig, sub: Subscription, positions) -> None:
        # (a partitioned topic's consumer acks through the partition the message came from, and the transaction
        # registers that partition's subscription, TransactionImpl#registerAckedTopic: case txn-ack-partitioned)
        if sub.dispatcher is None or any(len(sub.batch_of(p)) > 1 for p in positions):
            raise NotModelledError("an ack in a transaction of a batched message, or with no dispatcher")

    @staticmethod
    def _durable_mark_delete(sub: Subscription) -> int:
        """The cursor's mark-delete position as the broker keeps it: the model's cursor counts a transaction's pending
        individual acks as acks (nothing redelivers them), the broker's cursor does not (the pending-ack handle holds
        them), so it stops before the first of them."""
        pending = [p for p in sub.txn_pending if p <= sub.cursor.mark_delete]
        return min(pending) - 1 if pending else sub.cursor.mark_delete

    @staticmethod
    def _supersede_pending(sub: Subscription, positions) -> None:
        """PLS-TXN-007: an ack outside a transaction deletes a position another transaction's ack holds pending
        (PersistentSubscription#acknowledgeMessage does not ask the pending-ack handle), so that transaction's abort
        brings nothing back (live 4.0.8, 5 Dec 2026: m1 acked in t1, then plainly, t1 aborted, m1 never came again;
        case txn-plain-ack-of-pending). A pending cumulative ack moves nothing until its commit, so it needs no change."""
        for p in positions:
            sub.txn_pending.pop(p, None)

    def _drop_aborted(self, sub: Subscription, at: Span) -> None:
        """PLS-TXN-002: the dispatcher acks an aborted transaction's messages instead of sending them."""
        dropped = [pos for pos in sorted(sub.topic.aborted) if sub.cursor.ack(pos)]
        if dropped and sub.dispatcher is not None:
            sub.dispatcher.acked(dropped, at)

    @staticmethod
    def _no_transaction_stats(topic: "Topic | None") -> None:
        if topic is not None and (topic.txn_of or any(s.txn_pending or s.txn_cumulative or s.txn_committed
                                                      for s in topic.subscriptions.values())):
            raise NotModelledError("backlog and unacked counts of a topic with transactional messages (marker entries count until dispatched)")

    # Each op a trace applies, and the step that applies it: the chapter functions it calls are
    # named in each step. ``receive``/``read_next`` are followed through ``receive_options`` and
    # ``take``, ``stats`` through ``backlog``. A variant of the model (a broken one in the tests,
    # a vendor's) replaces steps here: ``STEPS = {**Broker.STEPS, "ack": my_ack}``.
    STEPS: Mapping[str, Any] = MappingProxyType({
        "advance_time": _op_advance_time,
        "create_topic": _op_create_topic,
        "create_producer": SchemaOps._op_create_producer_schema,  # the schema check, then _op_create_producer
        "send": SchemaOps._op_send_schema,  # notes the producer's schema version, then _op_send
        "flush": FeatureOps._op_flush,
        "subscribe": SchemaOps._op_subscribe_schema,  # the schema check, then _op_subscribe
        "ack": _op_ack,
        "ack_cumulative": _op_ack_cumulative,
        "nack": _op_nack,
        "reconsume_later": _op_reconsume_later,
        "redeliver_unacked": _op_redeliver_unacked,
        "seek": _op_seek,
        "close": _op_close,
        "unsubscribe": _op_unsubscribe,
        "create_reader": _op_create_reader,
        "set_policy": FeatureOps._op_set_policy,
        "compact": FeatureOps._op_compact,
        "unload_topic": FeatureOps._op_unload_topic,
        "create_subscription": _op_create_subscription,
        "expire_messages": FeatureOps._op_expire_messages,
        "restart_broker": _op_restart_broker,
        "cut_connections": _op_cut_connections,
        "set_latency": _op_set_latency,
        "stall_connections": _op_stall_connections,
        "new_txn": _op_new_txn,
        "commit_txn": _op_commit_txn,
        "abort_txn": _op_abort_txn,
        "get_schemas": SchemaOps._op_get_schemas,
        "delete_schema": SchemaOps._op_delete_schema,
        "delete_topic": AdminOps._op_delete_topic,
        "reset_cursor": AdminOps._op_reset_cursor,
        "skip": AdminOps._op_skip,
        "clear_backlog": AdminOps._op_clear_backlog,
    })


# ====================================================================== stats values


class ReportedRanges(NamedTuple):
    """The hash ranges the consumers of one Key_Shared subscription report in their stats
    (``Broker.key_hash_ranges``; PLS-KEYSHARED-003/004/005)."""

    rule: str  # the rule that states them: the selector in effect
    selector: str  # consistent_hashing | auto_split | sticky
    ranges: Mapping[str, tuple[tuple[int, int], ...]]  # connected handle -> its ranges, inclusive, sorted
    names: Mapping[str, str | None]  # handle -> the consumer_name it subscribed with (None: the client drew one)
    unknown: str  # why the ranges cannot be predicted; "" when they can
