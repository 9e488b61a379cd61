"""Which detector judges each rule: one per active rule of ``reference_model.rules.RULES``.

Part of Pulsar: all of it (this module is data about the checker). Rule ids: every active rule;
withdrawn rules (today PLS-FAILOVER-001) have no detector and get no verdict.

Each ``Detector`` names one rule, says in one sentence what observation breaks it ("Violated if
..."), which function emits its verdicts (``judged_by``, a dotted path into ``conformance``) and at
which steps of a history (the trace op kinds, plus ``"end"`` for the end of the history). The
checker walks a history and emits verdicts from several functions; this table is the declaration
that each rule has exactly one of them as its judge, so a reader can go from a rule id to the
code that decides it, and a test can check that the table and the code agree
(``tests/unit/test_detector_registry.py``).

``DETECTORS`` is built and validated at import: a rule id that is not registered, a withdrawn
rule, a missing active rule, a duplicate, or a sentence that does not start "Violated if " raises
``DetectorRegistryError`` naming it.

Not modelled: which *other* functions still emit a verdict for a rule. Several rules are still
charged from more than one place (for example the checker's generic paths charge an op's own rule
when the op is unexpectedly rejected or its outcome is indeterminate); ``judged_by`` names the
function that judges the rule's substance, and issue 12 tracks routing the others through it. The
Key_Shared selector rules (PLS-KEYSHARED-003/004/005) are judged at ``receive`` by the checker and,
at ``stats``, on the hash ranges each consumer reports, by one detector each in
``conformance.detectors.RANGE_DETECTORS`` (their rows list both step kinds).

Choices: ``judged_by`` is a dotted name, not the function object, so this module imports nothing
from the checker and stays importable while the checker changes; the test resolves every name.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference_model.rules import RULES

VIOLATED_IF = "Violated if "

# The functions that emit verdicts today (conformance/checker.py, conformance/feature_checks.py)
# and the context-rule detectors (conformance/detectors.py).
_C = "conformance.checker._Checker."
RECEIVE = _C + "_receive"  # a receive / read_next against the model's allowed set
GENERIC = _C + "_generic"  # every op but receive, read_next, stats, advance_time
REJECTION = _C + "_judge_predicted_rejection"  # an op the model says must be refused
STATS = _C + "_stats"
FINISH = _C + "finish"
CHECK_SEND = _C + "_check_send"
CHECK_ROUTE = _C + "_check_route"
CHECK_FIELDS = _C + "_check_fields"
CHECK_DLQ_COPY = _C + "_check_dead_letter_copy"
CHECK_RETRY_COPY = _C + "_check_retry_copy"
CHECK_PRODUCER = _C + "_check_producer"
RETENTION = _C + "_retention"
FEATURE_PRODUCER = "conformance.feature_checks.check_producer"
FEATURE_SEND = "conformance.feature_checks.check_send"
FEATURE_FLUSH = "conformance.feature_checks.check_flush"
DETECTORS_MODULE = "conformance.detectors"


def _det(name: str) -> str:
    return f"{DETECTORS_MODULE}.{name}"


class DetectorRegistryError(ValueError):
    """The detector table disagrees with the rule registry; the message names the rule and what to do."""


@dataclass(frozen=True)
class Detector:
    """The one detector of one rule.

    - ``rule_id``: an active rule of ``reference_model.rules``.
    - ``violated_if``: one sentence, "Violated if ...", naming the observation that breaks the rule.
    - ``judged_by``: dotted name of the function (or method, ``module.Class.method``) that emits
      the rule's verdicts: PASS / FAIL / INDETERMINATE with a "Let ... Then ..." explanation.
    - ``steps``: the op kinds at which it judges (``"end"``: at the end of the history).
    """

    rule_id: str
    violated_if: str
    judged_by: str
    steps: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.violated_if.startswith(VIOLATED_IF):
            raise DetectorRegistryError(f"{self.rule_id}: violated_if must start {VIOLATED_IF!r}, got {self.violated_if[:40]!r}")
        if not self.violated_if.rstrip().endswith("."):
            raise DetectorRegistryError(f"{self.rule_id}: violated_if is one sentence ending in '.'")
        if "." not in self.judged_by or not self.judged_by.startswith("conformance."):
            raise DetectorRegistryError(f"{self.rule_id}: judged_by must be a dotted name in conformance, got {self.judged_by!r}")
        if not self.steps or not isinstance(self.steps, tuple):
            raise DetectorRegistryError(f"{self.rule_id}: steps must be a non-empty tuple of op kinds")

    @property
    def module(self) -> str:
        """The module ``judged_by`` lives in (``conformance.checker`` for ``conformance.checker._Checker._receive``)."""
        return _split(self.judged_by)[0]

    @property
    def attribute_path(self) -> tuple[str, ...]:
        """The attribute path of ``judged_by`` inside its module (``("_Checker", "_receive")``)."""
        return _split(self.judged_by)[1]


def _split(dotted: str) -> tuple[str, tuple[str, ...]]:
    # Module names here are lower case; class names start upper case or with "_" + upper case.
    parts = dotted.split(".")
    for i, part in enumerate(parts[1:], start=1):
        bare = part.lstrip("_")
        if i == len(parts) - 1 or (bare[:1].isupper()):
            return ".".join(parts[:i]), tuple(parts[i:])
    return dotted, ()


R = "receive"
RN = "read_next"
# PLS-OP-001: every op kind a client or the admin API performs (the trace vocabulary's, without the harness's own
# clock and fault ops), any of which the checker may see refused without a reason a rule names
_REFUSABLE_OPS = ("create_topic", "create_producer", "send", "send_many", "flush", "subscribe", "create_subscription",
                  "create_reader", "receive", "read_next", "consume", "ack", "ack_cumulative", "nack",
                  "redeliver_unacked", "reconsume_later", "seek", "close", "unsubscribe", "stats", "set_policy",
                  "compact", "expire_messages", "unload_topic", "delete_topic", "reset_cursor", "skip", "clear_backlog",
                  "get_schemas", "delete_schema", "new_txn", "commit_txn", "abort_txn")

# (rule id, judged_by, steps, violated_if) in registry order.
_TABLE: tuple[tuple[str, str, tuple[str, ...], str], ...] = (
    # ------------------------------------------------------------------ topics, ids, messages
    ("PLS-TOPIC-001", _det("short_topic_name"), ("create_producer", "subscribe", "create_reader", "create_topic"),
     "Violated if an op naming a short topic x (or tenant/ns/x) is refused where the model accepts it as "
     "persistent://public/default/x (persistent://tenant/ns/x), or reaches a topic other than that one."),
    ("PLS-TOPIC-002", CHECK_FIELDS, (R, RN),
     "Violated if a message the model stored on partition i of a partitioned topic is received with a topic name "
     "that does not end in -partition-i or with a message id whose partition is not i."),
    ("PLS-TOPIC-003", REJECTION, ("create_producer", "subscribe", "create_reader", "create_topic"),
     "Violated if an op on an invalid topic name (bad domain, two-part a/b, bad characters in tenant or namespace) "
     "succeeds, or fails with an error other than InvalidTopicName."),
    ("PLS-MSG-002", CHECK_FIELDS, (R, RN, "send"),
     "Violated if a message whose partition key was given as bytes arrives without that key's Base64 text as its key, "
     "or at a Java consumer without those bytes (getKeyBytes), or a Python or Go producer is let send a key as bytes."),
    ("PLS-TOPIC-004", _det("delete_needs_no_clients"), ("delete_topic",),
     "Violated if a delete of a topic that is not forced succeeds while a producer, consumer or reader is connected "
     "to it, or a delete with none connected is refused."),
    ("PLS-TOPIC-005", _det("deleted_topic_gone"), (R, RN, "stats"),
     "Violated if after a topic is deleted, a message sent to it before the delete is delivered, or stats report a "
     "subscription the delete removed before a subscribe made it again."),
    ("PLS-MSGID-001", CHECK_SEND, ("send",),
     "Violated if a send returns an id that breaks the -1 conventions (partition -1 on a non-partitioned topic, "
     "batch index -1 for a message sent without batching), or a consumer receives a message with an id other than "
     "the one its send returned."),
    ("PLS-MSGID-002", CHECK_SEND, ("send",),
     "Violated if a send on a topic or partition returns an id that does not sort after the id of the message sent "
     "before it there, ordered by (ledger, entry, batch index)."),
    ("PLS-MSG-001", CHECK_FIELDS, (R, RN),
     "Violated if a received message differs from what was sent in topic, partition key, ordering key, properties, "
     "event time (0 when unset), publish time or producer name, or was never sent in the history."),
    ("PLS-PROD-001", CHECK_PRODUCER, ("create_producer",),
     "Violated if a new producer reports a last_sequence_id other than initial_sequence_id (-1 when unset) before "
     "its first send."),
    ("PLS-PROD-002", RECEIVE, (R,),
     "Violated if an Exclusive consumer receives one producer's messages in an order other than the order they were "
     "published in."),
    # ------------------------------------------------------------------ subscriptions
    ("PLS-SUB-001", GENERIC, ("subscribe", "close"),
     "Violated if a subscribe or close the model accepts is refused, or a durable subscription loses its backlog while no "
     "consumer is connected (judged through later deliveries)."),
    ("PLS-SUB-002", RECEIVE, (R,),
     "Violated if a subscription created at initial position Latest (the default) delivers a message published "
     "before it was created."),
    ("PLS-SUB-003", RECEIVE, (R,),
     "Violated if a subscription created at initial position Earliest does not start at the first retained message "
     "(a retained message is skipped or comes out of order)."),
    ("PLS-SUB-004", _det("initial_position_ignored"), ("subscribe",),
     "Violated if a subscribe to a subscription that already exists moves its position to the initial position the "
     "subscribe asks for, or is refused where the same subscribe without one succeeds."),
    ("PLS-SUB-005", RECEIVE, (R,),
     "Violated if a consumer reconnecting to an existing subscription does not resume at its first unacknowledged "
     "message, or is given again a message acknowledged individually after that point."),
    ("PLS-SUB-006", _det("unsubscribe_deletes"), ("unsubscribe",),
     "Violated if an unsubscribe the model accepts fails, or the subscription and its backlog survive it."),
    ("PLS-SUB-007", RECEIVE, (R,),
     "Violated if after its last consumer leaves, a NonDurable subscription keeps its position: a new subscribe "
     "does not start at its initial position (Latest: messages sent meanwhile are never seen) or stats on it do not "
     "fail with SubscriptionNotFound."),
    ("PLS-SUB-008", REJECTION, ("subscribe",),
     "Violated if a NonDurable subscribe to a name that a durable subscription already has, or a durable subscribe to "
     "a name a connected NonDurable subscription has, succeeds, or fails with an error other than NotAllowedError."),
    ("PLS-SUB-009", GENERIC, ("create_subscription",),
     "Violated if the admin API's create-subscription succeeds on a non-persistent topic or for a name the topic "
     "already has, fails with another error than the rule's, or fails on a persistent topic that does not exist."),
    ("PLS-SEEK-001", RECEIVE, (R,),
     "Violated if after a seek to a message id, the next delivery is not the message after that id (the message "
     "itself with start_message_id_inclusive)."),
    ("PLS-SEEK-002", RECEIVE, (R,),
     "Violated if after a seek to a publish time, delivery does not resume at the first message whose publish time "
     "is at or after that time."),
    ("PLS-SEEK-003", RECEIVE, (R,),
     "Violated if after a seek to earliest, delivery does not start at the first retained message, or after a seek "
     "to latest a message published before the seek is delivered."),
    ("PLS-SEEK-004", _det("admin_reset_start"), (R,),
     "Violated if after an admin reset of a subscription's cursor, a message before the reset point is delivered "
     "there (other than a copy a consumer's queue held from before it), or the first delivery on an Exclusive or "
     "Failover subscription is not the first message at or after the reset point."),
    ("PLS-READER-001", RECEIVE, (RN,),
     "Violated if a reader created from earliest does not read every retained message of the topic, in order."),
    ("PLS-READER-002", RECEIVE, (RN,),
     "Violated if a reader created from latest reads a message published before it was created."),
    ("PLS-READER-003", RECEIVE, (RN,),
     "Violated if a reader created from a message id, not inclusive, reads anything but the messages after that id, "
     "in order."),
    ("PLS-READER-004", RECEIVE, (RN,),
     "Violated if a reader created from a message id, inclusive, does not read that message first and then the "
     "messages after it, in order."),
    # ------------------------------------------------------------------ subscription types
    ("PLS-EXCL-001", REJECTION, ("subscribe",),
     "Violated if a second consumer on an Exclusive subscription with a connected consumer is accepted, or refused "
     "with an error other than ConsumerBusy."),
    ("PLS-EXCL-002", RECEIVE, (R,),
     "Violated if an Exclusive consumer receives a message out of publish order, a duplicate of one it already had "
     "(outside a rewind), or nothing while a message was due by the timing band."),
    ("PLS-SUBTYPE-001", REJECTION, ("subscribe",),
     "Violated if a consumer whose subscription type differs from the type of the subscription's connected "
     "consumers is accepted, or refused with an error other than ConsumerBusy."),
    ("PLS-FAILOVER-002", RECEIVE, (R,),
     "Violated if after the active Failover consumer disconnects, its unacknowledged messages do not reach the "
     "consumer that becomes active (within the timing band), or reach another one."),
    ("PLS-FAILOVER-003", RECEIVE, (R,),
     "Violated if on a non-partitioned topic, a Failover message reaches a consumer other than the one the "
     "consistent-hash ring of consumer names keyed by the topic name picks, or arrives out of publish order."),
    ("PLS-SHARED-001", RECEIVE, (R,),
     "Violated if a Shared subscription delivers a message to two consumers at once, delivers one not deliverable "
     "to that consumer, or (at the end) keeps a deliverable message while every consumer's last receive got nothing."),
    ("PLS-SHARED-002", RECEIVE, (R,),
     "Violated if the unacknowledged messages of a closed Shared consumer are not redelivered to the remaining "
     "consumers within the timing band."),
    ("PLS-SHARED-003", RECEIVE, (R,),
     "Violated if on a Shared subscription with priority levels (Java), a consumer receives a message while a "
     "consumer of a higher priority (lower number), connected before the message became available, could still "
     "take it."),
    # ------------------------------------------------------------------ acks and redelivery
    ("PLS-ACK-001", _det("ack_individual"), (R,),
     "Violated if a message acknowledged individually on a subscription (and not brought back by a seek) is "
     "delivered on that subscription again after the ack-grouping tolerance."),
    ("PLS-ACK-002", _det("ack_cumulative"), (R,),
     "Violated if after a cumulative ack of message m on an Exclusive or Failover subscription, m or any message "
     "before it is delivered on that subscription again."),
    ("PLS-ACK-003", REJECTION, ("ack_cumulative",),
     "Violated if a C++/Python cumulative ack on a Shared or Key_Shared subscription succeeds, or fails with an "
     "error other than CumulativeAcknowledgementNotAllowedError."),
    ("PLS-ACK-004", GENERIC, ("ack",),
     "Violated if acknowledging an already acknowledged message fails or changes anything (a later delivery or "
     "backlog shows a change)."),
    ("PLS-ACK-005", CHECK_FIELDS, (R,),
     "Violated if a delivery's redelivery count is outside the range the model gives for it: 0 on first delivery, "
     "+1 per redelivery on request (nack, ack timeout, redeliver_unacked) on Shared/Key_Shared, unchanged by a "
     "rewind on Exclusive/Failover."),
    ("PLS-ACK-006", REJECTION, ("ack_cumulative",),
     "Violated if a Java cumulative ack on a Shared or Key_Shared subscription succeeds (or acks anything), or fails "
     "with an error other than InvalidConfiguration."),
    ("PLS-ACK-007", REJECTION, ("ack_cumulative",),
     "Violated if a Go cumulative ack on a Shared or Key_Shared subscription succeeds (or acks anything), or fails "
     "with an error other than InvalidAck (ErrInvalidAck)."),
    ("PLS-NACK-001", RECEIVE, (R,),
     "Violated if a message nacked on a C++/Python consumer with delay d comes back before d after the nack, or "
     "after d + d/3 plus the timing band."),
    ("PLS-NACK-002", _det("nack_delay_floor"), (R,),
     "Violated if on a C++/Python consumer configured with a nack delay under 100 ms, a nacked message comes back "
     "sooner than 100 ms after the nack."),
    ("PLS-NACK-003", RECEIVE, (R,),
     "Violated if after a nack on an Exclusive or Failover subscription, the unacknowledged messages are not all "
     "delivered again, in publish order, within the timing band."),
    ("PLS-NACK-004", RECEIVE, (R,),
     "Violated if a Java delivery with redelivery count c nacked at t under a backoff comes back outside "
     "[t + next(c) - 255, t + next(c)] ms, next(c) = min(min_delay * multiplier^c, max_delay), plus the timing band."),
    ("PLS-NACK-005", RECEIVE, (R,),
     "Violated if a Java message nacked at t with fixed delay d = max(configured, 100 ms) comes back outside "
     "[t + d - 255, t + d] ms plus the timing band (later if an earlier, longer nack armed the timer)."),
    ("PLS-NACK-006", RECEIVE, (R,),
     "Violated if a message nacked on a Go consumer at t with delay d comes back outside [t + d - 255, t + d + d/3] ms "
     "plus the timing band."),
    ("PLS-NACK-007", RECEIVE, (R,),
     "Violated if a Go delivery with redelivery count c nacked at t under a backoff comes back outside "
     "[t + next(c) - 255, t + next(c) + next(1)/3] ms, next(c) = min(min_delay * multiplier^c, max_delay), plus the "
     "timing band."),
    ("PLS-ACKTIMEOUT-001", GENERIC, ("subscribe",),
     "Violated if a C++/Python subscribe with an ack timeout below 10000 ms (not 0/None) is accepted, or one of at "
     "least 10000 ms (or 0/None) is refused."),
    ("PLS-ACKTIMEOUT-002", RECEIVE, (R,),
     "Violated if with C++/Python ack timeout T and tick t = min(1000, T), an unacked message is redelivered "
     "outside (ceil(T/t)*t, (ceil(T/t)+1)*t] after its receive, plus the timing band."),
    ("PLS-ACKTIMEOUT-003", GENERIC, ("subscribe",),
     "Violated if a Java consumer with an ack timeout 0 < T < 1000 ms or an ack-timeout tick below 100 ms is built, "
     "or one with valid settings is refused (InvalidArgument is the refusal)."),
    ("PLS-ACKTIMEOUT-004", RECEIVE, (R,),
     "Violated if with Java ack timeout T and tick t = min(t0, T), an unacked message is redelivered outside "
     "(ceil(T/t)*t, (ceil(T/t)+1)*t] after its receive, plus the timing band."),
    ("PLS-ACKTIMEOUT-005", RECEIVE, (R,),
     "Violated if with a Java ack-timeout backoff, an unacked delivery with count c is redelivered outside "
     "(ceil(T/t)*t + next(c), (ceil(T/t)+1)*t + ceil(next(c)/t)*t] after its receive, plus the timing band."),
    ("PLS-REDELIVER-001", RECEIVE, (R,),
     "Violated if after redeliver_unacknowledged_messages, an unacknowledged message of that consumer is not "
     "delivered again within the timing band (Shared: with count +1; Exclusive/Failover: by a rewind in order)."),
    ("PLS-SKIP-001", _det("skip_acks_oldest"), (R,),
     "Violated if a message an admin skip of n acked (one of the n oldest unacked entries of the subscription) is "
     "delivered on that subscription afterwards, other than a copy its consumer's queue held from before the skip."),
    ("PLS-SKIP-002", _det("clear_backlog_acks_all"), (R,),
     "Violated if a message stored before an admin clear-backlog of a subscription is delivered on that subscription "
     "afterwards, other than a copy its consumer's queue held from before the clear."),
    ("PLS-BACKLOG-001", STATS, ("stats",),
     "Violated if the stats msgBacklog of a subscription is outside the model's range: the published entries not "
     "yet acknowledged on it, minus those whose ack may still be in flight (ack grouping and dispatch tolerance)."),
    # ------------------------------------------------------------------ dead letters, retry letters
    ("PLS-DLQ-001", CHECK_DLQ_COPY, (R, RN),
     "Violated if a dead-lettered message is not found on <topic>-<subscription>-DLQ (C++: per partition, the "
     "partition's name) as a copy of the original, or that copy differs from the original."),
    ("PLS-RETRY-001", CHECK_RETRY_COPY, (R,),
     "Violated if a Java reconsume_later copy does not arrive on <topic>-<subscription>-RETRY, or differs from the "
     "original message there."),
    ("PLS-RETRY-002", CHECK_RETRY_COPY, (R,),
     "Violated if a retry copy does not keep the original's payload, keys, event time and properties, or lacks "
     "REAL_TOPIC, ORIGIN_MESSAGE_ID, RECONSUMETIMES, DELAY_TIME, REAL_SUBSCRIPTION or ORIGIN_MESSAGE_IDY_TIME with "
     "the values the model gives."),
    ("PLS-RETRY-003", CHECK_RETRY_COPY, (R, RN),
     "Violated if a reconsume_later whose RECONSUMETIMES would exceed maxRedeliverCount (16 without a dead-letter "
     "policy) does not put the copy on the dead-letter topic, or the copy there differs from the original."),
    ("PLS-RETRY-004", RECEIVE, (R,),
     "Violated if the original of a reconsume_later the broker refused is not delivered again on its Shared "
     "subscription within the timing band, with its count one higher."),
    # ------------------------------------------------------------------ chunking
    ("PLS-CHUNK-001", _det("chunked_whole"), (R,),
     "Violated if a message sent in chunks reaches the consumer as anything but one message with the whole payload "
     "(a chunk alone, seen as a delivery carrying a chunk's id other than the last, or a changed payload)."),
    ("PLS-CHUNK-002", FEATURE_SEND, ("send",),
     "Violated if a C++/Python chunked send spans a number of entries other than ceil(s/c) for payload size s >= c, "
     "c = maxMessageSize - metadata size (one unchunked entry if s < c)."),
    ("PLS-CHUNK-003", REJECTION, ("send",),
     "Violated if a C++/Python send without chunking whose metadata plus payload exceeds maxMessageSize succeeds, or "
     "fails with an error other than MessageTooBig."),
    ("PLS-CHUNK-004", REJECTION, ("create_producer",),
     "Violated if a Python or Go producer with both chunking and batching enabled is created (it must be refused "
     "with InvalidArgument: Python's ValueError, Go's NewProducer error)."),
    ("PLS-CHUNK-005", FEATURE_SEND, ("send",),
     "Violated if a chunked message's id text is not '(first chunk id);(last chunk id)' or its message id does not "
     "carry the last chunk's ledger, entry, partition and batch index, or the consumer reports another id."),
    ("PLS-CHUNK-007", FEATURE_SEND, ("send",),
     "Violated if a Go chunked send spans a number of entries other than ceil(s/c) for payload size s > c, "
     "c = maxMessageSize - metadata size with uncompressed_size counted (one unchunked entry if s <= c)."),
    ("PLS-CHUNK-008", REJECTION, ("send",),
     "Violated if a Go send without chunking whose metadata (uncompressed_size counted) plus payload exceeds "
     "maxMessageSize succeeds, or fails with an error other than MessageTooBig."),
    ("PLS-CHUNK-006", REJECTION, ("send",),
     "Violated if an oversize send to a non-persistent topic by a chunking producer succeeds, or fails with an "
     "error other than MessageTooBig."),
    # ------------------------------------------------------------------ deduplication
    ("PLS-DEDUP-001", FEATURE_SEND, ("send",),
     "Violated if with deduplication on, a send whose sequence id is at most the producer's highest persisted one "
     "is stored (returns an id other than (-1,-1,-1,-1)), or a send above it is not stored."),
    ("PLS-OP-001", GENERIC, _REFUSABLE_OPS,
     "Violated if an op that the model accepts and that no rule gives a reason to refuse is refused (fails with an "
     "error) on a live handle."),
    ("PLS-POLICY-001", FEATURE_SEND, ("send",),
     "Violated if a send on a topic whose own deduplication policy is not its namespace's is treated by the "
     "namespace's: a re-sent sequence id stored where the topic's policy is on, or dropped where it is off."),
    ("PLS-DEDUP-002", FEATURE_PRODUCER, ("create_producer",),
     "Violated if with deduplication on, a producer re-created with the same name reports a last_sequence_id other "
     "than the highest persisted sequence id (or its explicit initial_sequence_id)."),
    ("PLS-DEDUP-003", FEATURE_PRODUCER, ("create_producer",),
     "Violated if with deduplication off, a re-created producer does not start at last_sequence_id -1, or a "
     "re-sent sequence id is not stored again."),
    ("PLS-DEDUP-004", FEATURE_SEND, ("send",),
     "Violated if a duplicate of a message still in flight (sequence id above the persisted one but not above the "
     "pushed one) does not fail with MessageDupUnknown, or after the first is persisted is not treated as a "
     "duplicate."),
    ("PLS-DEDUP-005", FEATURE_SEND, ("send",),
     "Violated if a Python send with sequence_id=0 (or a producer with initial_sequence_id=0) uses 0 instead of "
     "treating it as not given."),
    ("PLS-DEDUP-006", FEATURE_SEND, ("send",),
     "Violated if last_sequence_id after a send is not the sequence id of the last acknowledged send (duplicates "
     "and explicit ids included), or explicit ids move the generator."),
    # ------------------------------------------------------------------ faults (reference_model/faults.py)
    ("PLS-FAULT-001", _det("fault_acked_stays_acked"), (R,),
     "Violated if a message is delivered again after a cut connection or a graceful broker restart, its ack made "
     "before the fault by more than the ack-grouping period, the latency and the timing band."),
    ("PLS-FAULT-002", _det("fault_nothing_lost"), (R,),
     "Violated if a message stored before a cut or restart, and not delivered to a subscription before it, is owed "
     "after it and does not come within the timing band."),
    ("PLS-FAULT-003", RECEIVE, (R,),
     "Violated if a consumer's first deliveries after a reconnect do not resume at its subscription's first "
     "unacknowledged message (in order on Exclusive and Failover), or an unacked message it held is not delivered again."),
    ("PLS-FAULT-004", FEATURE_SEND, ("send",),
     "Violated if a deduplicated send after a cut or restart is stored again although its sequence id was persisted "
     "before the fault, or one above it is not stored."),
    ("PLS-FAULT-005", _det("fault_delayed_kept"), (R,),
     "Violated if a delayed message stored before a cut or restart is delivered after it before its deliver-at time."),
    ("PLS-FAULT-006", FEATURE_SEND, ("send", "create_producer"),
     "Violated if a producer's send after a fault gets a sequence id other than the next one, or a producer "
     "re-created after a restart with deduplication on does not report the highest persisted sequence id."),
    # ------------------------------------------------------------------ delayed delivery
    ("PLS-DELAY-001", RECEIVE, (R,),
     "Violated if a Shared subscription delivers a delayed message before its deliver-at time (less the tick in "
     "non-strict mode), or holds it past its window plus the timing band."),
    ("PLS-DELAY-002", _det("delayed_immediate_on_exclusive"), (R,),
     "Violated if an Exclusive or Failover subscription holds back a delayed message instead of delivering it at "
     "once in publish order."),
    ("PLS-DELAY-003", RECEIVE, (R,),
     "Violated if a Key_Shared subscription delivers a delayed message before its deliver-at time (less the tick "
     "in non-strict mode), or holds it past its window plus the timing band."),
    ("PLS-DELAY-004", RECEIVE, (R,),
     "Violated if in strict mode, a delayed message on Shared or Key_Shared arrives before its deliver-at time or "
     "more than about two ticks after it plus the timing band."),
    ("PLS-DELAY-005", RECEIVE, (R,),
     "Violated if in non-strict mode, a delayed message on Shared or Key_Shared arrives more than one tick before "
     "its deliver-at time, or after its window plus the timing band."),
    ("PLS-DELAY-006", FEATURE_FLUSH, ("flush",),
     "Violated if a delayed message is written in a batch with other messages, or after a batch that was still "
     "being filled when it was sent (relative ids of the flush differ from the model's)."),
    ("PLS-DELAY-007", REJECTION, ("send", "reconsume_later"),
     "Violated if a send (or a reconsume_later's retry copy) whose delay exceeds the broker's "
     "delayedDeliveryMaxDelayInMillis is stored instead of refused with NotAllowedError, or one within the limit is "
     "refused."),
    # ------------------------------------------------------------------ batching
    ("PLS-BATCH-001", FEATURE_FLUSH, ("flush",),
     "Violated if the messages of one batch do not share one entry with batch indexes 0..n-1 in send order "
     "(relative ids of the flush differ from the model's)."),
    ("PLS-BATCH-002", FEATURE_FLUSH, ("flush",),
     "Violated if the C++ batch container does not send the open batch before a message that would exceed max "
     "messages or bytes, as soon as it is full, or when the publish-delay timer fires (entries differ from the "
     "model's)."),
    ("PLS-BATCH-003", FEATURE_FLUSH, ("flush",),
     "Violated if KeyBased batching does not make one batch per key (ordering key, else partition key; keyless "
     "together) sent in order of each batch's first message (C++) or last message (Java)."),
    ("PLS-BATCH-004", _det("batch_redelivered_whole"), (R,),
     "Violated if without batch index ack, a partly acked batch that is redelivered does not come back whole "
     "(a message of it acked before the redelivery is missing)."),
    ("PLS-BATCH-005", _det("batch_redelivered_unacked_only"), (R,),
     "Violated if with batch index ack on broker and consumer, a redelivered batch brings back a message of it "
     "that was acked."),
    ("PLS-BATCH-006", _det("batch_nack_whole_entry"), (R,),
     "Violated if a nack of one message of a batch does not bring back the other unacked messages of its entry "
     "(acked indexes excepted with batch index ack)."),
    ("PLS-BATCH-007", FEATURE_FLUSH, ("flush",),
     "Violated if a Python producer without batching_enabled=True writes a message in a batch (batch index other "
     "than -1, or several messages in one entry)."),
    ("PLS-BATCH-008", _det("batch_of_one"), ("flush",),
     "Violated if a Java producer's batch that holds a single message is written as a batch (batch index 0) "
     "instead of a plain message (batch index -1)."),
    ("PLS-BATCH-009", FEATURE_FLUSH, ("flush", R, RN),
     "Violated if a flush's ids, or a received message's batch index, show a split no client could have made of "
     "the producer's pending messages: an entry that is not a run of them in send order, one bigger than the "
     "container takes, a cut where the publish-delay timer could not fire, or a member received before its batch "
     "could have left."),
    ("PLS-BATCH-010", _det("batch_acked_by_producer_id"), (R,),
     "Violated if a batched message that its client acked with its whole entry, for an ack naming a sibling by the "
     "id its producer returned, is delivered on that subscription again (other than a copy queued before the ack)."),
    ("PLS-DLQ-002", _det("dlq_n_plus_one"), (R, RN),
     "Violated if with max_redeliver_count N, the application sees a message more than N+1 times (a delivery with "
     "redelivery count above N, or any after it was dead-lettered), or a copy reaches the dead-letter topic before "
     "the original's N+1-th delivery was nacked or timed out."),
    ("PLS-DLQ-003", CHECK_DLQ_COPY, (R, RN),
     "Violated if a dead-letter copy differs from the original in payload, keys or properties, or lacks "
     "ORIGIN_MESSAGE_ID ('(l,e,p,b)' from C++, 'l:e:p[:b]' from Java) and REAL_TOPIC (Java: also REAL_SUBSCRIPTION "
     "and ORIGIN_MESSAGE_IDY_TIME)."),
    ("PLS-DLQ-008", _det("dlq_max_deliveries"), (R, RN),
     "Violated if with a Go consumer's MaxDeliveries N the application sees a message more than N times (a delivery "
     "with redelivery count N or more, or any after it was dead-lettered), a copy reaches the dead-letter topic early, "
     "the copy lacks REAL_TOPIC or the origin ids 'l:e:p' under ORIGIN_MESSAGE_ID and ORIGIN_MESSAGE_IDY_TIME, or a "
     "policy without a topic or with N = 0 is accepted."),
    ("PLS-DLQ-004", _det("dlq_initial_subscription"), ("stats", "subscribe"),
     "Violated if the dead-letter topic has no subscription named initial_subscription_name holding the copies once "
     "the client created its dead-letter producer."),
    ("PLS-DLQ-005", _det("dlq_shared_only"), (R, RN),
     "Violated if on an Exclusive or Failover subscription whose consumer has a dead-letter policy, a nacked "
     "message is delivered with a redelivery count other than 0 or is dead-lettered."),
    ("PLS-DLQ-006", CHECK_DLQ_COPY, (R, RN),
     "Violated if when a C++/Python batched message is dead-lettered, a message of its batch is missing from the "
     "dead-letter topic or its copy lacks its own ORIGIN_MESSAGE_ID with its batch index."),
    ("PLS-DLQ-007", REJECTION, ("subscribe",),
     "Violated if a consumer with max_redeliver_count below 1 is built, or refused with an error other than "
     "InvalidArgument (Python ValueError, Java IllegalArgumentException)."),
    # ------------------------------------------------------------------ per-consumer unacked accounting
    ("PLS-UNACKED-001", RECEIVE, (R,),
     "Violated if a Shared consumer at its maxUnackedMessagesPerConsumer limit receives a further dispatched message, "
     "or, once its acks brought its count to half the limit, gets nothing while a message is deliverable to it."),
    ("PLS-UNACKED-002", _det("unacked_counts"), ("stats",),
     "Violated if a Shared / Key_Shared consumer's reported unackedMessages is below what its application holds "
     "unacked or above that plus what its receiver queue and in-flight acks can explain (messages an expiry "
     "moved past count no more)."),
    ("PLS-UNACKED-003", _det("unacked_non_persistent"), ("stats",),
     "Violated if a Shared consumer of a non-persistent topic reports unackedMessages above the messages still in flight to it."),
    # ------------------------------------------------------------------ TTL, retention, compaction
    ("PLS-TTL-001", _det("ttl_expired_gone"), (R,),
     "Violated if a message that an expiry pass removed (older than the TTL, not delivered before the pass) is "
     "delivered on that subscription afterwards."),
    ("PLS-TTL-002", _det("ttl_only_at_pass"), ("expire_messages", "stats"),
     "Violated if messages older than the TTL are gone from a subscription before any expiry pass, or an expiry "
     "pass does not remove them."),
    ("PLS-TTL-003", _det("ttl_delivered_not_redelivered"), (R,),
     "Violated if a message delivered but not acked before an expiry pass removed it is delivered again on that "
     "subscription."),
    ("PLS-RETENTION-001", RETENTION, (R, RN),
     "Violated if without retention, a message acked on every subscription is gone before its ledger could be "
     "trimmed (deletion may happen, a ledger at a time, but is never immediate)."),
    ("PLS-RETENTION-002", _det("retention_keeps_acked"), (R, RN),
     "Violated if under a retention policy, a message acked on every other subscription is not readable by a "
     "reader or a new Earliest subscription within the retention time and size."),
    ("PLS-COMPACT-001", _det("compacted_latest_per_key"), (RN,),
     "Violated if a compacted reader reads, before the compaction horizon, a message whose key has a later message "
     "before the horizon, or reads the compacted view out of topic order."),
    ("PLS-COMPACT-003", _det("compacted_keyless_dropped"), (RN,),
     "Violated if a compacted reader reads a key-less message published before the compaction horizon."),
    ("PLS-COMPACT-004", _det("compacted_after_horizon"), (RN,),
     "Violated if a compacted reader does not read the messages after the compaction horizon as published, in "
     "order."),
    ("PLS-COMPACT-005", REJECTION, ("subscribe", "create_reader"),
     "Violated if is_read_compacted on a Shared or Key_Shared subscription or on a non-persistent topic is "
     "accepted, or refused with an error other than InvalidConfiguration."),
    ("PLS-COMPACT-007", REJECTION, ("subscribe",),
     "Violated if a Go consumer with read_compacted on a Shared or Key_Shared subscription or a non-persistent topic is "
     "subscribed, or refused with an error other than the broker's NotAllowedError."),
    ("PLS-COMPACT-006", _det("compacted_tombstone"), (RN,),
     "Violated if a compacted reader reads a tombstone (an empty payload or a null value) published before the "
     "compaction horizon: the tombstone deleted its key, so the view has no message of it."),
    # ------------------------------------------------------------------ producer access modes
    ("PLS-ACCESS-001", _det("shared_producers_together"), ("create_producer",),
     "Violated if a Shared-mode producer is refused for its access mode (ProducerBusy or ProducerFenced) while only Shared "
     "producers are connected to the topic."),
    ("PLS-ACCESS-002", REJECTION, ("create_producer",),
     "Violated if an Exclusive producer is accepted while any producer is connected to the topic, or refused with "
     "an error other than ProducerFenced."),
    ("PLS-ACCESS-003", REJECTION, ("create_producer",),
     "Violated if a Shared producer is accepted while an exclusive producer holds the topic, or refused with an "
     "error other than ProducerBusy."),
    ("PLS-ACCESS-004", REJECTION, ("create_producer", "send"),
     "Violated if an ExclusiveWithFencing producer's creation is refused, or after one took the topic, a fenced "
     "exclusive producer's next send "
     "succeeds or fails with an error other than ProducerFenced (a fenced Shared or WaitForExclusive one's does not "
     "complete)."),
    ("PLS-ACCESS-005", FEATURE_PRODUCER, ("create_producer", "send"),
     "Violated if a WaitForExclusive producer's creation completes at once while another producer holds the topic, "
     "or stays pending when no producer does (also once the last other producer, Shared or exclusive, has closed: "
     "a send on it is then refused because its creation never completed)."),
    ("PLS-ACCESS-006", REJECTION, ("create_producer",),
     "Violated if a second producer with the name of a connected producer on the topic is accepted, or refused "
     "with an error other than ProducerBusy."),
    # ------------------------------------------------------------------ transactions
    ("PLS-TXN-001", _det("txn_uncommitted_invisible"), (R, "read_next"),
     "Violated if a consumer or reader receives a message produced in a transaction that had not committed when the "
     "receive returned."),
    ("PLS-TXN-002", _det("txn_aborted_never"), (R, "read_next"),
     "Violated if a consumer or reader receives a message produced in a transaction that aborted or timed out."),
    ("PLS-TXN-003", _det("txn_read_position"), (R, "read_next"),
     "Violated if a consumer or reader receives a message sent without a transaction that was appended after the "
     "first message of a transaction still open when the receive returned."),
    ("PLS-TXN-004", REJECTION, ("send", "ack", "ack_cumulative", "commit_txn", "abort_txn"),
     "Violated if a send, ack, commit or abort with a transaction that has committed, aborted or timed out succeeds, "
     "or fails with an error other than InvalidTxnStatus."),
    ("PLS-TXN-005", _det("txn_timeout_releases"), (R, "read_next"),
     "Violated if an Exclusive or Failover consumer, or a reader, waits across the end of a timed-out transaction's "
     "abort window and receives nothing while a message that transaction held back is still owed to it."),
    ("PLS-TXN-007", _det("txn_pending_ack_held"), (R,),
     "Violated if a message acked individually in a transaction still open is delivered on that subscription again, "
     "whatever asked for a redelivery (redeliver_unacked, a close, a nack, an ack timeout)."),
    ("PLS-TXN-008", _det("txn_committed_ack_final"), (R,),
     "Violated if a message whose ack in a transaction was committed is delivered on that subscription again (no seek "
     "brought it back)."),
    ("PLS-TXN-009", RECEIVE, (R,),
     "Violated if a message a transaction acked individually is not redelivered on that subscription by the dispatch "
     "band after the transaction aborts (Shared / Key_Shared: count one higher; Exclusive / Failover: a rewind)."),
    ("PLS-TXN-010", REJECTION, ("ack", "ack_cumulative"),
     "Violated if an ack in a transaction of a message pending in another open transaction, or already acked, succeeds "
     "or fails with an error other than TransactionConflict."),
    ("PLS-TXN-011", REJECTION, ("commit_txn",),
     "Violated if a transaction one of whose ops failed commits, or its commit fails with an error other than "
     "TransactionHasOperationFailed."),
    ("PLS-TXN-006", REJECTION, ("new_txn", "send", "ack", "ack_cumulative"),
     "Violated if the Python client begins a transaction, or sends or acks in one, or refuses it with an error other "
     "than InvalidArgument."),
    # ------------------------------------------------------------------ schema registry
    ("PLS-SCHEMA-001", _det("schema_versions"), ("get_schemas",),
     "Violated if the admin lists a topic's live schema versions with other numbers or types than the schemas the "
     "trace stored, numbered from 0."),
    ("PLS-SCHEMA-002", _det("schema_same_reused"), ("create_producer", "subscribe"),
     "Violated if a producer or consumer bringing a schema the topic already has is refused."),
    ("PLS-SCHEMA-003", _det("schema_first_stored"), ("create_producer", "subscribe"),
     "Violated if the first schema brought to a topic is refused."),
    ("PLS-SCHEMA-004", _det("schema_transitive_checked"), ("create_producer", "subscribe"),
     "Violated if under a transitive strategy a schema compatible with every live version is refused, or one an "
     "older version refuses is let in."),
    ("PLS-SCHEMA-005", _det("schema_strategy_checked"), ("create_producer", "subscribe"),
     "Violated if under BACKWARD, FORWARD or FULL a schema that Avro resolution finds compatible with the latest "
     "version is refused, or an incompatible one is let in."),
    ("PLS-SCHEMA-006", _det("schema_always_compatible"), ("create_producer", "subscribe"),
     "Violated if under ALWAYS_COMPATIBLE any new schema is refused."),
    ("PLS-SCHEMA-007", REJECTION, ("create_producer", "subscribe"),
     "Violated if under ALWAYS_INCOMPATIBLE a schema the topic does not have is let in once it has one, or is "
     "refused with an error other than IncompatibleSchema."),
    ("PLS-SCHEMA-008", REJECTION, ("create_producer", "subscribe"),
     "Violated if a schema of another type than the version it is checked against is let in under a strategy other "
     "than ALWAYS_COMPATIBLE."),
    ("PLS-SCHEMA-009", _det("schema_no_checker"), ("create_producer", "subscribe"),
     "Violated if a new schema of a type without a checker of its own is refused under a strategy other than "
     "ALWAYS_INCOMPATIBLE."),
    ("PLS-SCHEMA-010", _det("schema_key_value_checked"), ("create_producer", "subscribe"),
     "Violated if a KEY_VALUE schema whose halves keep their types and pass the strategy is refused, or one whose "
     "halves change type is let in."),
    ("PLS-SCHEMA-015", REJECTION, ("create_producer", "subscribe"),
     "Violated if with auto-update off a producer bringing an unregistered schema is let in, or refused with an "
     "error other than IncompatibleSchema."),
    ("PLS-SCHEMA-016", _det("schema_producer_unenforced"), ("create_producer",),
     "Violated if a producer without a schema is refused on a topic with a schema while schemaValidationEnforced is "
     "off, or let in while it is on."),
    ("PLS-SCHEMA-017", _det("schema_consumer_unchecked"), ("subscribe",),
     "Violated if a consumer without a schema or with AUTO_CONSUME is refused for its schema."),
    ("PLS-SCHEMA-018", _det("schema_consumer_idle"), ("subscribe",),
     "Violated if a consumer bringing a schema to an idle topic is refused where a producer with it would be let in."),
    ("PLS-SCHEMA-019", _det("schema_consumer_checked"), ("subscribe",),
     "Violated if a consumer whose schema reads the topic's latest version (or passes the transitive strategy) is "
     "refused, or one that cannot is let in."),
    ("PLS-SCHEMA-020", REJECTION, ("subscribe",),
     "Violated if a consumer bringing a schema to a topic in use without a schema is let in."),
    ("PLS-SCHEMA-021", _det("schema_deleted"), ("get_schemas",),
     "Violated if after a delete the admin still lists a version, or later versions are not numbered after the "
     "delete marker's."),
    ("PLS-SCHEMA-022", REJECTION, ("create_producer", "subscribe"),
     "Violated if an AVRO schema whose definition is not a valid Avro schema is let in."),
    ("PLS-SCHEMA-025", REJECTION, ("create_producer", "subscribe"),
     "Violated if a Go producer or consumer whose AVRO or JSON definition is not a valid Avro schema is created "
     "(or refused with an error other than InvalidArgument, the client's own refusal)."),
    ("PLS-SCHEMA-024", REJECTION, ("create_producer", "subscribe"),
     "Violated if the Python client builds a KEY_VALUE or AUTO_CONSUME schema, or refuses it with an error other than "
     "InvalidArgument."),
    ("PLS-GO-001", REJECTION, ("subscribe", "create_producer", "send", "redeliver_unacked"),
     "Violated if the Go client accepts an ack timeout, a priority level, redeliver_unacked, an initial sequence id, "
     "a routing mode, ExclusiveWithFencing or a null value, or refuses one with an error other than InvalidArgument."),
    ("PLS-SCHEMA-023", CHECK_FIELDS, (R, RN),
     "Violated if a received message carries another schema version than the one its producer was given."),
    # ------------------------------------------------------------------ vendor profiles
    ("PLS-TAG-001", _det("tag_filtered"), (R,),
     "Violated if a consumer of a subscription with tags receives a message that carries tags (properties valued "
     "TAGS) none of which is one of the subscription's tags."),
    ("PLS-TAG-002", _det("tag_batch_unfiltered"), (R,),
     "Violated if a batched message whose tags share none of a subscription's tags is not delivered on that "
     "subscription when it is owed there."),
    ("PLS-TAG-003", _det("tags_fixed_at_creation"), (R,),
     "Violated if a consumer of a subscription that another consumer joined giving other tags receives a message "
     "the subscription's own tags reject but the joiner's accept, or never receives, when it is owed, one its own "
     "tags accept but the joiner's reject."),
    # ------------------------------------------------------------------ non-persistent topics
    ("PLS-NP-001", _det("np_connected_only"), (R,),
     "Violated if a subscription of a non-persistent topic receives a message published while it had no consumer "
     "connected, or a message published while it had one never reaches it."),
    ("PLS-NP-002", _det("np_no_redelivery"), (R,),
     "Violated if a message of a non-persistent topic is delivered twice on one subscription (after a nack, a "
     "close, a redeliver request, or anything else)."),
    ("PLS-NP-003", FEATURE_SEND, ("send", "flush"),
     "Violated if a send to a non-persistent topic returns an id other than (0, 0, partition, -1), or (0, 0, "
     "partition, index) for a message of a batch (the ids a flush reports of async sends included)."),
    ("PLS-NP-004", RECEIVE, (R,),
     "Violated if a delayed message on a non-persistent topic is held back on any subscription type instead of "
     "being delivered at once."),
    # ------------------------------------------------------------------ hashing and routing
    ("PLS-HASH-001", CHECK_ROUTE, ("send",),
     "Violated if a keyed message on a partitioned topic routed by Murmur3_32Hash goes to a partition other than "
     "MurmurHash3_x86_32(seed 0, UTF-8 key) & 0x7fffffff mod N."),
    ("PLS-HASH-002", CHECK_ROUTE, ("send",),
     "Violated if a keyed message routed by JavaStringHash goes to a partition other than the client's hash of the "
     "key (Java: UTF-16 code units, String.hashCode; C++: UTF-8 bytes as signed chars) mod N."),
    ("PLS-ROUTE-001", CHECK_ROUTE, ("send",),
     "Violated if a message with a partition key goes to a partition other than hash(partition key) mod N, or its "
     "ordering key changes the partition."),
    ("PLS-ROUTE-002", CHECK_ROUTE, ("send",),
     "Violated if RoundRobin without a key sends a message to a partition other than the next one after the "
     "previous message's (per batch for a batching C++ producer), from any first partition."),
    ("PLS-ROUTE-003", CHECK_ROUTE, ("send",),
     "Violated if a SinglePartition producer sends a keyless message to a partition other than the one its first "
     "keyless message went to."),
    ("PLS-FAILOVER-004", _det("failover_partition_owner"), (R,),
     "Violated if a message of partition p reaches a Failover consumer other than that partition's active consumer "
     "sorted[p mod k] (consumers sorted by priority level then name, k sharing the best level)."),
    ("PLS-FAILOVER-005", RECEIVE, (R,),
     "Violated if on a Failover subscription with priority levels (Java), a consumer of a worse level than the "
     "best connected one receives a message other than what was in flight to it before the switch."),
    ("PLS-ROUTE-004", CHECK_ROUTE, ("send",),
     "Violated if a keyed message of a Java producer goes to a partition other than signSafeMod(hash, N) with its "
     "hashing scheme (JavaStringHash by default, Murmur3_32Hash with murmur3_32)."),
    ("PLS-ROUTE-005", CHECK_ROUTE, ("send",),
     "Violated if a Go producer's message with an ordering key or a key goes to a partition other than the Go "
     "JavaStringHash (unsigned, over the UTF-8 bytes) of the ordering key, else the key, mod N."),
    # ------------------------------------------------------------------ Key_Shared
    ("PLS-KEYSHARED-001", _det("sticky_key_routing"), (R,),
     "Violated if a Key_Shared delivery is routed by a sticky key other than the message's ordering key, else its "
     "partition key, else the broker version's keyless fallback."),
    ("PLS-KEYSHARED-002", _det("slot_routing"), (R,),
     "Violated if a Key_Shared delivery is routed by a slot other than the broker version's and selector's slot of "
     "its sticky key (4.x ring h % 65535 + 1; hash ranges h % 65536 with 0 as 1 on 4.x; 3.x ring the 31-bit h)."),
    ("PLS-KEYSHARED-003", RECEIVE, (R, "stats"),
     "Violated if under consistent hashing, a key's message reaches a consumer other than the owner of the first "
     "replica point at or after its slot on the ring (wrapping), or a consumer's stats report hash ranges other "
     "than its cut of that ring."),
    ("PLS-KEYSHARED-004", RECEIVE, (R, "stats"),
     "Violated if under AUTO_SPLIT hash ranges, a key's message reaches a consumer other than the owner of its "
     "slot's range (a joiner takes the lower half of the largest range; a leaver's range merges into the next), "
     "or a consumer's stats report a range other than that one."),
    ("PLS-KEYSHARED-005", RECEIVE, (R, "stats"),
     "Violated if under STICKY ranges, a key's message reaches a consumer whose declared ranges do not cover its "
     "slot, a message of an uncovered slot is dispatched, a conflicting range is not refused with "
     "ConsumerAssignError, or a consumer's stats report ranges other than the ones it declared."),
    ("PLS-KEYSHARED-006", RECEIVE, (R,),
     "Violated if on broker 4.x, a message of a hash that moved to a new consumer reaches it while the previous "
     "consumer still holds unacknowledged messages of that hash."),
    ("PLS-KEYSHARED-007", RECEIVE, (R,),
     "Violated if two consumers hold unacknowledged messages of one key at once, or a key's messages are first "
     "delivered out of publish order (redeliveries excepted)."),
    ("PLS-KEYSHARED-008", REJECTION, ("subscribe",),
     "Violated if a Key_Shared consumer whose KeySharedPolicy mode or allowOutOfOrderDelivery differs from the "
     "connected consumers' is accepted, or refused with an error other than ConsumerBusy."),
)


def build(table=_TABLE, rules=RULES) -> dict[str, Detector]:
    """Validate ``table`` against ``rules`` and index it by rule id. Raises ``DetectorRegistryError`` naming the rule."""
    registered = {r.id: r for r in rules}
    out: dict[str, Detector] = {}
    for rule_id, judged_by, steps, violated_if in table:
        r = registered.get(rule_id)
        if r is None:
            raise DetectorRegistryError(f"detector for {rule_id}, which is not in reference_model/rules.py RULES; "
                                        "register the rule first or remove the detector")
        if r.status == "withdrawn":
            raise DetectorRegistryError(f"detector for {rule_id}, which is withdrawn; a withdrawn rule gets no detector "
                                        "and no verdict: remove it (and judge the rule that replaced it)")
        if rule_id in out:
            raise DetectorRegistryError(f"two detectors for {rule_id} ({out[rule_id].judged_by} and {judged_by}); "
                                        "each rule has exactly one")
        out[rule_id] = Detector(rule_id, violated_if, judged_by, tuple(steps))
    missing = [r.id for r in rules if r.status != "withdrawn" and r.id not in out]
    if missing:
        raise DetectorRegistryError(f"active rules without a detector: {', '.join(missing)}; add one row each to "
                                    "conformance/detector_registry.py (_TABLE)")
    return out


DETECTORS: dict[str, Detector] = build()


def detector_for(rule_id: str) -> Detector:
    """The detector of ``rule_id``; ``KeyError`` saying whether the id is withdrawn or unknown."""
    try:
        return DETECTORS[rule_id]
    except KeyError:
        pass
    r = next((x for x in RULES if x.id == rule_id), None)
    if r is not None and r.status == "withdrawn":
        raise KeyError(f"{rule_id} is withdrawn: it has no detector and gets no verdict ({r.note[:120]})") from None
    area = rule_id.split("-")[1] if rule_id.count("-") == 2 else ""
    near = sorted(i for i in DETECTORS if area and i.startswith(f"PLS-{area}-"))
    hint = f"; rules with detectors in that area: {', '.join(near)}" if near else "; see reference_model/rules.py for the ids"
    raise KeyError(f"no detector for {rule_id!r}: not a registered rule{hint}") from None
