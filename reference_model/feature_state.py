"""The feature models, as the broker composition (``reference_model.broker``) uses them.

Pulsar part: what a producer and a topic carry besides the core: namespace policies
(deduplication, message TTL, retention) and a topic's own policies over them (PLS-POLICY-001), a producer's batch container, chunking and access mode,
a message's deliver-at time, the compaction horizon.
Rule ids: PLS-DEDUP-001..006, PLS-BATCH-001..007, PLS-CHUNK-001..006, PLS-DELAY-001..006,
PLS-ACCESS-001..006, PLS-TTL-001..003, PLS-RETENTION-001/002, PLS-COMPACT-001..005, PLS-NP-001..004.

The semantics live in the pure modules (``dedup``, ``batching``, ``chunking``, ``delayed``,
``access_modes``, ``retention``, ``compaction``, ``non_persistent``); this module holds the
per-producer and per-namespace state the broker keeps for them, and small functions that turn a
trace op's arguments into the inputs those modules take. Nothing here reads a clock.

Not modelled: see each pure module; in addition, topic-level policies other than
``TOPIC_POLICIES`` (a trace cannot set them), global (replicated) topic policies, and a policy
change reaching an already loaded topic late (a target returns from ``set_policy`` once the broker
applies it: docs/trace-format.md#ops).
Choices: the metadata size of a send is computed with a nominal publish time of
``NOMINAL_PUBLISH_TIME_MS`` (any epoch-millisecond value of this era has the same 6-byte varint),
so chunk counts do not depend on virtual time.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from reference_model import batching as batching_model, chunking
from reference_model.dedup import ProducerSequence
from reference_model.ids import MessageId
from reference_model.rejections import Rejected
from reference_model.timing import Span

NOMINAL_PUBLISH_TIME_MS = 1_750_000_000_000  # 6-byte varint, like every publish time until 2109
PY_DEFAULT_BATCHING_MAX_DELAY_MS = batching_model.DEFAULT_MAX_PUBLISH_DELAY_MS


SCHEMA_POLICIES = ("schema_compatibility_strategy", "schema_auto_update", "schema_validation_enforced")
# PLS-POLICY-001: the policies a trace may set on one topic (``set_policy`` with ``topic``; the topic policies
# admin API, apache/pulsar PersistentTopics ``deduplicationEnabled``, ``messageTTL``, ``retention``)
TOPIC_POLICIES = ("deduplication", "message_ttl_s", "retention_minutes", "retention_size_mb")
# broker.conf backlogQuotaDefaultLimitGB (10 in the release's broker.conf and standalone.conf): the backlog quota a
# topic without its own has, which its own retention must exceed
BACKLOG_QUOTA_DEFAULT_LIMIT_BYTES = 10 * 1024 ** 3


def topic_retention_refusal(args: Mapping[str, Any], quota_bytes: int = BACKLOG_QUOTA_DEFAULT_LIMIT_BYTES) -> str | None:
    """Why the broker refuses a topic's own retention policy (HTTP 412), or None: a retention that keeps something
    (a size or a time above 0) must hold more than the backlog quota (PersistentTopicsBase's retention check:
    "Retention Quota must exceed configured backlog quota for topic"); -1 is infinite. Live 4.0.8, 4 Dec 2026
    (regression pls-policy-001-unexpected-rejection-8c8a1d5acb1e): 10 minutes / 10 MB refused, -1 / -1 set."""
    if "retention_size_mb" not in args:
        return None
    size, minutes = int(args["retention_size_mb"]), int(args["retention_minutes"])
    if size <= 0 and minutes <= 0 or size < 0:
        return None
    if quota_bytes >= size * 1024 * 1024:
        return (f"Retention Quota must exceed configured backlog quota for topic: retention {size} MB is within the "
                f"backlog quota of {quota_bytes // 1024 ** 3} GB")
    return None


@dataclass
class NamespacePolicies:
    """The trace namespace's policies (``set_policy``): PLS-DEDUP-001/003, PLS-TTL-001, PLS-RETENTION-001/002."""

    deduplication: bool = False
    message_ttl_s: int = 0
    retention_minutes: int = 0
    retention_size_mb: int = 0
    max_unacked_messages_per_consumer: int = 0  # PLS-UNACKED-001 (reference_model/unacked.py); 0: no limit
    # PLS-SCHEMA-004..007 / -015 / -016 (reference_model/schema_ops.py): the broker's default strategy is FULL
    schema_compatibility_strategy: str = "FULL"
    schema_auto_update: bool = True
    schema_validation_enforced: bool = False

    @property
    def retention(self) -> bool:
        """Acked messages must stay readable (a retention policy with a time or size)."""
        return self.retention_minutes != 0 and self.retention_size_mb != 0

    def apply(self, args: Mapping[str, Any]) -> None:
        for name in ("deduplication", "message_ttl_s", "retention_minutes", "retention_size_mb",
                     "max_unacked_messages_per_consumer", *SCHEMA_POLICIES):
            if name in args:
                setattr(self, name, args[name])

    def under(self, own: Mapping[str, Any]) -> "NamespacePolicies":
        """The policies a topic follows whose own (topic-level) policies are ``own``: each one it set, the
        namespace's for the rest (PLS-POLICY-001: apache/pulsar PolicyHierarchyValue, "topic > namespace >
        broker"; the broker's default is already this object's starting value)."""
        if not own:
            return self
        effective = replace(self)
        effective.apply(own)
        return effective


def check_policy_args(args: Mapping[str, Any]) -> str | None:
    """Why a ``set_policy`` op is malformed, or None."""
    known = ("deduplication", "message_ttl_s", "retention_minutes", "retention_size_mb", "max_unacked_messages_per_consumer",
             *SCHEMA_POLICIES)
    if not any(k in args for k in known):
        return f"set_policy needs at least one of {', '.join(known)}"
    if ("retention_minutes" in args) != ("retention_size_mb" in args):
        return "set_policy: give retention_minutes and retention_size_mb together (one retention policy)"
    if "topic" in args:
        namespace_only = [k for k in known if k in args and k not in TOPIC_POLICIES]
        if namespace_only:
            return (f"set_policy: {', '.join(namespace_only)} cannot be set on one topic (a topic policy is one of "
                    f"{', '.join(TOPIC_POLICIES)}); leave out 'topic' to set it on the namespace")
    return None


@dataclass
class PendingSend:
    """A message handed to ``send_async`` and not yet written (its id comes with ``flush``)."""

    label: str
    args: Mapping[str, Any]
    at: Span
    sequence_id: int
    deliver_at: tuple[float, float] | None
    repeats: bool = False  # its sequence id is at most the highest its producer was handed before it (batching step 1b)


@dataclass
class ProducerFeatures:
    """What a producer adds to the core ``Producer``: batching, chunking, sequence ids, access mode."""

    batching: bool = False
    batch_config: batching_model.BatchConfig = field(default_factory=batching_model.BatchConfig)
    batch_delay_ms: int = PY_DEFAULT_BATCHING_MAX_DELAY_MS  # batching_max_delay_ms: the batch timer
    chunking: bool = False
    sequence: ProducerSequence = field(default_factory=ProducerSequence)
    access_mode: str = "Shared"
    fenced: bool = False  # PLS-ACCESS-004: fenced by an ExclusiveWithFencing producer
    fence_known: bool = False  # PLS-ACCESS-004: a send was refused ProducerFenced, so its client closed it
    waiting: bool = False  # PLS-ACCESS-005: WaitForExclusive still queued
    pending: list[PendingSend] = field(default_factory=list)
    # PLS-DEDUP-006: labels of generated-id sends refused with MessageTooBig since the last send that
    # committed (``Profile.too_big_uses_sequence_id``): each used up one generated id. A set, so a
    # refusal seen twice (the checker's prediction, then the op) counts once.
    used_up: set[str] = field(default_factory=set)
    faults_at_creation: int = 0  # how many faults had happened when it was created (PLS-FAULT-006)
    # PLS-BATCH-009: the batched sends since the last flush op, in send order (async ones and sync ones), whose
    # split into entries the timer leaves open until a flush reports their ids; ``region_cuts``: region index ->
    # when a sync send surely emptied the container before that index; ``region_ids``: ids observed so far
    timer_client: str = "cpp"  # whose batch timer (batching.BatchTimer.for_client)
    # Java, Go: when the producer's creation began, which starts its batch timer's quiet period (BatchTimer.for_client
    # created_at); None for C++, a Java client before 2.10.1, or once the producer may have reconnected
    timer_quiet_from: float | None = None
    region: list[PendingSend] = field(default_factory=list)
    region_cuts: dict[int, float] = field(default_factory=dict)
    timer_stored: set[str] = field(default_factory=set)  # region messages the model's own batch timer stored
    # region messages the client sent in a send call, a container full with that call's message alone (_batch_joined)
    container_sent: set[str] = field(default_factory=set)
    region_ids: dict[str, list[int]] = field(default_factory=dict)
    handed: int | None = None  # the highest sequence id handed to the client (None: none yet; sequence.last stands)

    def clear_region(self) -> None:
        """PLS-BATCH-009: no batched send is waiting for its split to be settled (a flush settled them, the producer
        closed, or a partition's producer starts): new containers, so a copy made with ``replace`` shares none."""
        self.region, self.region_cuts, self.region_ids, self.timer_stored, self.container_sent = [], {}, {}, set(), set()

    def current_sequence(self) -> ProducerSequence:
        """The sequence with the generated ids refused sends used up (``used_up``)."""
        if not self.used_up:
            return self.sequence
        s = self.sequence
        return ProducerSequence(s.configured_initial, s.last, s.next_generated + len(self.used_up))

    @staticmethod
    def from_args(args: Mapping[str, Any], *, key_order: str = "first",
                  default_delay_ms: int = PY_DEFAULT_BATCHING_MAX_DELAY_MS,
                  delayed_sends_open_batch: bool = False, repeats_send_open_batch: bool = False,
                  full_batch_waits: bool = False, client: str = "cpp") -> "ProducerFeatures":
        """``key_order``: the client's KeyBased batch order (PLS-BATCH-003 C++ "first", PLS-BATCH-003 Java "last");
        ``delayed_sends_open_batch``: whether a delayed message sends the open batch first (Java; ``batching``)."""
        config = batching_model.BatchConfig(
            max_messages=int(args.get("batching_max_messages", batching_model.DEFAULT_MAX_MESSAGES)),
            max_bytes=int(args.get("batching_max_bytes", batching_model.DEFAULT_MAX_BYTES)),
            key_based=args.get("batching_type", "Default") == "KeyBased", key_order=key_order,
            delayed_sends_open_batch=delayed_sends_open_batch, repeats_send_open_batch=repeats_send_open_batch,
            full_batch_waits=full_batch_waits)
        return ProducerFeatures(
            batching=bool(args.get("batching", batching_model.PY_DEFAULT_BATCHING_ENABLED)),  # PLS-BATCH-007
            batch_config=config, chunking=bool(args.get("chunking", False)),
            batch_delay_ms=int(args.get("batching_max_delay_ms", default_delay_ms)),
            access_mode=args.get("access_mode", "Shared"), timer_client=client)


def payload_size(args: Mapping[str, Any]) -> int:
    """Bytes of the payload a target sends for ``args`` (the label, padded to ``payload_size``)."""
    if args.get("tombstone"):
        return 0
    size = len(str(args["payload"]).encode())
    return max(size, int(args.get("payload_size", 0)))


def metadata_size(producer_name: str, sequence_id: int, args: Mapping[str, Any],
                  sizing: chunking.ClientSizing = chunking.CPP_SIZING) -> int:
    """PLS-CHUNK-002 step 2 (PLS-CHUNK-007 for Go): the metadata size of this send as the client measures it."""
    deliver_at = NOMINAL_PUBLISH_TIME_MS if (args.get("deliver_after_ms") or args.get("deliver_at_ms")) else None
    return chunking.metadata_size(
        producer_name, sequence_id, NOMINAL_PUBLISH_TIME_MS, properties=args.get("properties") or {},
        partition_key=args.get("key"), ordering_key=args.get("ordering_key"),
        event_time_ms=args.get("event_time") or None, deliver_at_ms=deliver_at,
        uncompressed_size=payload_size(args) if sizing.metadata_counts_uncompressed_size else None)


def _metadata_size_bound(producer_name: str, args: Mapping[str, Any]) -> int:
    """A cheap upper bound of ``metadata_size``: at most 4 UTF-8 bytes per character, and at most
    16 bytes of tags and varints per field (11 for a tag plus a 64-bit varint)."""
    bound = 4 * len(producer_name) + 112  # producer_name, sequence_id, publish_time, event_time, deliver_at, uncompressed_size
    for key, value in (args.get("properties") or {}).items():
        bound += 4 * (len(key) + len(value)) + 48
    for field in ("key", "ordering_key"):
        if args.get(field):
            bound += 4 * len(args[field]) + 16
    return bound


def send_plan(producer: ProducerFeatures, producer_name: str, sequence_id: int, args: Mapping[str, Any], *,
              persistent: bool, max_message_size: int,
              sizing: chunking.ClientSizing = chunking.CPP_SIZING) -> chunking.SendPlan | Rejected:
    """PLS-CHUNK-002/003/006 (Go: 007/008): how many entries a (non-batched) send writes, or MessageTooBig."""
    size = payload_size(args)
    if not producer.chunking and size + _metadata_size_bound(producer_name, args) <= max_message_size:
        # Without chunking a send is one entry unless metadata + payload exceed the limit
        # (PLS-CHUNK-003); far from the limit the exact metadata size cannot matter.
        return chunking.SendPlan(1, ((0, size),))
    return chunking.send_plan(
        payload_size(args), metadata_size=metadata_size(producer_name, sequence_id, args, sizing),
        chunking_enabled=producer.chunking, batching_enabled=False, persistent=persistent,
        max_message_size=max_message_size, sizing=sizing)


def _batch_items(pending: list[PendingSend]) -> list[batching_model.Pending]:
    return [batching_model.Pending(payload_size(p.args), partition_key=p.args.get("key"),
                                   ordering_key=p.args.get("ordering_key"), delayed=p.deliver_at is not None,
                                   repeats=p.repeats)
            for p in pending]


batch_items = _batch_items  # PLS-BATCH-009: what batching.match_split / leave_window take


def plan_batches(pending: list[PendingSend], config: batching_model.BatchConfig) -> tuple[tuple[int, ...], ...]:
    """PLS-BATCH-002/003, PLS-DELAY-006: the entries a flush writes, as indexes into ``pending``."""
    return batching_model.plan_entries(_batch_items(pending), config)


def open_batch(pending: list[PendingSend], config: batching_model.BatchConfig) -> tuple[int, ...]:
    """PLS-BATCH-002, PLS-DELAY-006: the indexes of ``pending`` the client still holds in its open batch."""
    return batching_model.open_batch(_batch_items(pending), config)


def relative_ids(ids: Mapping[str, Any]) -> dict[str, tuple[int, int]]:
    """Ids as (entry offset from the first entry, batch index): what a flush's ids say that does
    not depend on the broker's ledger numbering.

    Offsets count entries in (ledger, entry) order. Within a ledger they are the entry distance; the first
    entry of a later ledger is one past the last of the ledger before it: the topic rolled over to a new
    ledger between them (an unload or a fault closes the ledger; found live by issue 16's 5.0.0-M1
    campaign, 27 Nov 2026: m1 at (7117,0), an unload, m2 at (7121,0), one flush; regression
    pls-batch-007-wrong-value-67a5eaeda74a). Each partition (the id's partition index; -1 for a topic that
    is not partitioned) is its own topic with its own ledgers, so offsets count from each partition's first
    entry: a partitioned producer's flush reports ids on several."""
    parsed = {label: MessageId.from_list(v) for label, v in ids.items()}
    offsets: dict[tuple[int, int, int], int] = {}
    for partition in {m.partition for m in parsed.values()}:
        previous: tuple[int, int] | None = None
        for ledger, entry in sorted({(m.ledger, m.entry) for m in parsed.values() if m.partition == partition}):
            if previous is None:
                offsets[(partition, ledger, entry)] = 0
            elif ledger == previous[0]:
                offsets[(partition, ledger, entry)] = offsets[(partition, *previous)] + entry - previous[1]
            else:
                offsets[(partition, ledger, entry)] = offsets[(partition, *previous)] + 1
            previous = (ledger, entry)
    return {label: (offsets[(m.partition, m.ledger, m.entry)], m.batch_index) for label, m in parsed.items()}


@dataclass
class TopicFeatures:
    """Per topic: how positions map to entries (batches, chunks), deliver-at times, tombstones, compaction."""

    next_entry: int = 0
    entry_of: dict[int, tuple[int, int]] = field(default_factory=dict)  # position -> (entry, batch index)
    members: dict[int, list[int]] = field(default_factory=dict)  # entry -> positions (a batch)
    deliver_at: dict[int, tuple[float, float]] = field(default_factory=dict)  # position -> deliver-at range
    tombstone: dict[int, str] = field(default_factory=dict)  # position -> "empty" | "null"
    chunks: dict[int, int] = field(default_factory=dict)  # position -> its entries, for a chunked message (PLS-BACKLOG-001)
    horizon: int | None = None  # PLS-COMPACT-004: last position of the last compaction

    def batch_of(self, pos: int) -> list[int]:
        """Every position stored in the same entry as ``pos`` (``[pos]`` when not batched)."""
        entry = self.entry_of.get(pos)
        if entry is None:
            return [pos]
        return self.members.get(entry[0], [pos])

    def entry_key(self, pos: int) -> tuple[str, int]:
        entry = self.entry_of.get(pos)
        return ("e", entry[0]) if entry is not None else ("p", pos)
