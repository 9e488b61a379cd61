"""What differs between Pulsar broker versions and client kinds, as parameters.

Pulsar part: the C++ client (which the Python client wraps) vs the Java client; broker 3.x,
4.0, 4.1.
Rule ids: PLS-NACK-001/002/004/005, PLS-ACKTIMEOUT-001..005, PLS-ACK-003/005/006, PLS-SEEK-001,
PLS-DLQ-001/003, PLS-RETRY-001, PLS-ROUTE-004, PLS-BATCH-003/005, PLS-SUB-007,
PLS-SHARED-003, PLS-DELAY-004/005, PLS-CHUNK-002/003, PLS-COMPACT-002.

Every behaviour that differs is a field of the frozen ``Profile``; the rest of the model reads
fields and never asks "which broker is this?". ``profile_for`` picks the defaults for a broker
version and client and applies overrides (a trace header's ``profile`` object).

Clients per handle. A trace may run some handles on the Python client and others on the Java
client (docs/java-driver.md): a handle-creating op then says ``"client": "python"|"java"`` and
that handle follows ``profile_for(<broker>, <its client>, <the trace's overrides>)``
(``handle_profile``); the others follow the trace's profile. A run whose handles used both
clients is reported with client ``"mixed"``: its profile is the C++ one (an unnamed handle runs
on the Python client), with ``client == "mixed"``.

The Java values are read in the Java client 4.0.8 sources (apache/pulsar pulsar-client
``src/main/java/org/apache/pulsar/client/impl/``: ``NegativeAcksTracker``,
``UnAckedMessageTracker``, ``UnAckedMessageRedeliveryTracker``, ``ConsumerBuilderImpl``,
``ConsumerImpl``, ``ConsumerBase``, ``BatchMessageKeyBasedContainer``,
``RoundRobinPartitionMessageRouterImpl``, ``conf/ProducerConfigurationData``); the rules that cite
them are tentative until a live run confirms them.

Not modelled: client versions within one kind (the C++ 4.2.0 core of pulsar-client 3.13 and the
Java client 4.0.8 are the references). Broker 3.x vs 4.x differences in Key_Shared are not here
but in ``key_shared.KeySharedProfile``, selected per release.
Choices: where the source was read but the behaviour not confirmed live, the field says
"unknown" (``None``) and the checker accepts either behaviour.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any, Mapping

from reference_model import releases, vendors
from reference_model.rejections import NotModelledError

BROKER_VERSIONS = releases.MODEL_LINES
CLIENTS = ("cpp", "java", "go")
MIXED = "mixed"  # a run whose handles name their own client (docs/java-driver.md)


@dataclass(frozen=True)
class Profile:
    broker: str = "4.0"
    client: str = "cpp"
    # PLS-NACK-002: C++ floors the nack delay at 100 ms (MIN_NACK_DELAY_MILLIS).
    nack_min_delay_ms: int = 100
    # PLS-FAILOVER-003: the broker reads for a newly picked active consumer only after
    # activeConsumerFailoverDelayTimeMillis (AbstractDispatcherSingleActiveConsumer; default 1000 ms),
    # also for the first one; live 4.0.8 paused about 1 s before the first Failover dispatch.
    failover_activation_delay_ms: int = 1000
    # PLS-NACK-001: C++ fires its nack timer every delay/3, so redelivery is in [d, d + d//3].
    nack_timer_divisor: int = 3
    # PLS-NACK-005: "periodic" (C++: a timer every d/3 sends every due nack) or "deadline" (Java
    # NegativeAcksTracker: a one-shot timer armed for the first pending nack's delay, re-armed for
    # the earliest remaining deadline: no d/3 slack, but a later nack waits for a timer already armed).
    nack_timer: str = "periodic"
    # PLS-NACK-004/005: Java trims the nack deadline to negativeAckPrecisionBitCnt = 8 low bits of
    # a millisecond clock (NegativeAcksTracker#trimLowerBit): up to 255 ms early.
    nack_early_ms: int = 0
    # PLS-NACK-004: Java's MultiplierRedeliveryBackoff exists only in the Java client (no 100 ms floor there);
    # the Go client takes a NackBackoffPolicy (PLS-NACK-007). The rule a backoff's redelivery answers to.
    nack_backoff_supported: bool = False
    nack_backoff_rule: str = "PLS-NACK-004"
    # PLS-ACKTIMEOUT-001/003: C++ refuses 0 < T < 10 s; Java refuses 0 < T < 1 s.
    ack_timeout_min_ms: int = 10_000
    ack_timeout_error: str = "InvalidArgument"
    ack_timeout_rule: str = "PLS-ACKTIMEOUT-001"
    # PLS-ACKTIMEOUT-002/004: tick t = min(tick, T); not settable from Python (C++ fixed 1000 ms),
    # Java ackTimeoutTickTime >= 100 ms (ConsumerBuilderImpl MIN_TICK_TIME_MILLIS).
    ack_timeout_tick_ms: int = 1000
    ack_timeout_tick_settable: bool = False
    ack_timeout_min_tick_ms: int = 100
    # PLS-ACKTIMEOUT-005: Java ackTimeoutRedeliveryBackoff (UnAckedMessageRedeliveryTracker).
    ack_timeout_backoff_supported: bool = False
    # PLS-ACK-003 / PLS-ACK-006: how cumulative ack on Shared is refused (client side).
    cumulative_ack_shared_error: str = "CumulativeAcknowledgementNotAllowedError"
    cumulative_ack_shared_rule: str = "PLS-ACK-003"
    # PLS-ACK-005: an Exclusive/Failover rewind does not bump redelivery_count (measured 4.0.8/C++).
    rewind_increments_redelivery_count: bool = False
    # PLS-ACK-005: whether closing a Shared consumer bumps the count of its unacked messages.
    # Measured on 4.0.8 (C++ 4.2.0): no (the other consumer got it with count 0). Version
    # dependent per the source notes, so other versions say None = either.
    shared_close_increments_redelivery_count: bool | None = False
    # PLS-REDELIVER-001: C++ keeps its receiver queue on redeliver_unacked; Java clears it, yet a
    # Shared or Key_Shared consumer still takes the copies then on the wire (no epoch, PIP-84), so
    # the dispatcher allows the same stale copies for both and this names the reason.
    redeliver_keeps_receiver_queue: bool = True
    # PLS-SEEK-001: after seek(id) the client skips the message at the seek id unless
    # start_message_id_inclusive. Measured on C++ (pulsar-client 3.13.0) and Java 4.0.8
    # (ConsumerImpl#seekAsyncInternal sets startMessageId to the seek id; messageReceived drops that
    # entry unless resetIncludeHead). A client that differs says False here: the Go client did
    # before v0.17 (apache/pulsar-client-go#919; milvus-io/milvus#46591 on the change).
    seek_by_id_exclusive: bool = True
    # PLS-READER-004: a consumer (or reader) from latest with start_message_id_inclusive begins at the topic's last
    # message. Go does it when each partition's consumer is created (pulsar-client-go v0.19.0 consumer_partition.go
    # newPartitionConsumer: getLastMessageId, then a seek to it unless the topic is empty); C++ and Java only inside
    # hasMessageAvailable (C++ ConsumerImpl::hasMessageAvailableAsync; case up-java-b-reader-latest-inclusive), which
    # traces do not call, so they start after the last message as from latest. Live 4.0.8 (5 Dec 2026, case
    # reader-partitioned): the Go reader r3 read each partition's last message, Java and Python read only what came after.
    latest_inclusive_starts_at_last: bool = False
    # PLS-SEEK-001 / PLS-BACKLOG-001: the client acknowledges the message it skips after seek(id) (Go: MessageReceived drops what
    # messageShouldBeDiscarded says is at or before the start id and AckIDs it), where C++ and Java only drop it, so
    # it stays in the backlog. Live 4.0.8 with 0.19.0, 28 Nov 2026: backlog 4 where C++ leaves 5.
    seek_skip_acks: bool = False
    # PLS-DLQ-001: both clients derive the DLQ name from the consumer's (partition's) topic (Java:
    # from the first topic when retry is on); PLS-RETRY-001: Java only.
    dlq_per_partition: bool = True
    retry_letter_supported: bool | None = False  # None: the client has a retry topic the model does not follow
    # PLS-DLQ-003: C++ ORIGIN_MESSAGE_ID '(l,e,p,b)'; Java 'l:e:p' or 'l:e:p:b',
    # plus REAL_SUBSCRIPTION and the legacy ORIGIN_MESSAGE_IDY_TIME).
    dlq_properties: str = "cpp"
    # PLS-ROUTE-004: the client's own hashing scheme for keyed messages (None: C++ BoostHash, not
    # modelled and not settable from Python); Java's default is JavaStringHash.
    default_hashing_scheme: str | None = None
    hashing_scheme_supported: bool = False
    # PLS-BATCH-003: KeyBased batches go out in order of each key's first (C++) or
    # highest (Java) sequence id; Java keys an ordering key by its Base64 text, apart from partition keys.
    key_batch_order: str = "first"
    # PLS-DELAY-006 / reference_model.batching step 1: a delayed message sends the open batch first (Java)
    delayed_send_flushes_batch: bool = False
    # reference_model.batching step 1b: a message whose sequence id is at most the highest the producer was handed
    # goes in a batch of its own, and so does the next one (Java ProducerImpl#serializeAndSendMessage,
    # isLastSequenceIdPotentialDuplicated + doBatchSendAndAdd)
    repeated_sequence_flushes_batch: bool = False
    # reference_model.batching step 4: a full batch waits for the next message, its timer or a flush (Go)
    full_batch_waits: bool = False
    # PLS-BATCH-009: a sync send on a partitioned producer sends every partition's open batch, not only its own
    # (Java ProducerBase#send -> PartitionedProducerImpl#triggerFlush). Not the Python client: live 4.0.8 (campaign
    # of 1 Dec 2026, history fz-8c05faf471ac) an async m2 on one partition, then a sync m3 on the other, and m2 came
    # with its 100 ms timer, to a subscription made after the sync send (the binding waits on sendAsync; the C++
    # Producer::send that calls triggerFlush is not what it calls). Go's Send flushes its own partition's producer only
    # (producer_partition.go internalSendAsync, flushImmediately)
    sync_send_flushes_all_partitions: bool = False
    # PLS-BATCH-008: the Java client sends a batch that holds one message as a plain message
    # (BatchMessageContainerImpl#createOpSendMsg, OpSendMsg#setMessageId: batch index -1); the C++
    # client writes it as a batch of one (batch index 0).
    single_message_batch_unbatched: bool = False
    # PLS-SUB-007 / PLS-SHARED-003 / PLS-FAILOVER-005: Java-only consumer settings.
    non_durable_supported: bool = False
    priority_level_supported: bool = False
    # PLS-TAG-003: a consumer that gives subscription properties (PIP-105, ConsumerBuilder#subscriptionProperties,
    # pulsar-client 2.10.0 on); the Python client has no such setting
    subscription_properties_supported: bool = False
    # PLS-TXN-006: pulsar-client (Python) 3.13.0 has transaction errors but no way to begin one. The Go client's
    # transactions are followed since its variants of the transaction cases ran live (5 Dec 2026: docs/go-driver.md).
    transactions_supported: bool = False
    # PLS-TXN-004: what the client answers a send in a transaction that ended (Java: InvalidTxnStatus; Go checks the
    # state itself, producer_partition.go: errors.Join(ErrTransaction, "failed to send message by a non-open
    # transaction"), which a trace names OtherError)
    txn_ended_send_error: str = "InvalidTxnStatus"
    # PLS-TXN-011: after an op in a transaction failed, the Java client refuses the commit with
    # TransactionHasOperationFailed and aborts the transaction; the Go client (transaction_impl.go endSendOrAckOp) puts
    # it in TxnError and refuses every later send, ack, commit and abort with it, and never ends it: the broker
    # aborts it at its timeout (PLS-TXN-005)
    txn_failed_op_aborts: bool = True
    # PLS-SCHEMA-025: the client parses an AVRO/JSON definition itself and refuses one that is not Avro (Go:
    # NewAvroSchemaWithValidation); the other clients send it to the broker (PLS-SCHEMA-022).
    schema_definition_checked_by_client: bool = False
    # PLS-COMPACT-005: the C++ and Java clients refuse read_compacted on Shared/Key_Shared and non-persistent topics
    # themselves (InvalidConfiguration); the Go client sends it, and the broker refuses it (PLS-COMPACT-007).
    read_compacted_checked_by_client: bool = True
    # broker >= 4.1 (PIP-391) enables batch index ack by default (batching is not modelled).
    broker_batch_index_ack_default: bool = False
    # The C++ client groups acks and flushes every 100 ms (AckGroupingTrackerEnabled).
    ack_grouping_ms: int = 100
    # PLS-BATCH-005: acknowledgmentAtBatchIndexLevelEnabled on the broker. Stock 4.0 brokers have it
    # off (4.1+ on, see broker_batch_index_ack_default); the suite's embedded broker turns it on
    # (fixtures/embedded.py CONFORMANCE_CONFIG), and every live run here uses that broker, so true.
    broker_batch_index_ack: bool = True
    # PLS-DELAY-004/005: isDelayedDeliveryDeliverAtTimeStrict and delayedDeliveryTickTimeMillis.
    # Broker defaults are non-strict and 1000 ms; the suite's embedded broker runs strict, 100 ms.
    delayed_delivery_strict: bool = True
    delayed_delivery_tick_ms: int = 100
    # PLS-DELAY-007: delayedDeliveryMaxDelayInMillis (3.3.0+; 0 = no limit, the default).
    delayed_max_delay_ms: int = 0
    # reference_model.vendors: the vendor profile of the run ("apache", "tdmq") and the vendor rules it turns on.
    vendor: str = "apache"
    tag_filtering: bool = False  # PLS-TAG-001: subscriptions with tags get only untagged or matching messages
    # PLS-DELAY-007: what the client does with a send the broker refuses with NotAllowedError: "fails" (Java
    # ClientCnx#handleSendError -> recoverNotAllowedError) or "resends" (C++ ClientConnection closes the
    # connection on any send error but a checksum one, and the producer sends the message again, for ever).
    not_allowed_send_error: str = "resends"
    # PLS-CHUNK-002/003: the broker's maxMessageSize (sent to the client in CommandConnected).
    max_message_size: int = 5_242_880
    # PLS-CHUNK-002/003 vs 007/008: how the client measures a send against it (chunking.SIZINGS): "cpp", or "go"
    # (its metadata measure already holds uncompressed_size). The Java client is measured with the C++ arithmetic:
    # no case pins its boundary (docs/java-driver.md).
    chunk_sizing: str = "cpp"
    # PLS-CHUNK-005: the partition a chunked message's id text shows on a topic that is not partitioned: -1, or 0
    # for Go (messageID.String prints the producer's partition index, 0; live 4.0.8 with 0.19.0, 28 Nov 2026)
    unpartitioned_id_text_partition: int = -1
    # PLS-COMPACT-003: topicCompactionRetainNullKey. Keyless messages pass through compaction before
    # 3.2.0 (apache/pulsar PR #1514; PIP-318's cherry-picks default the key to true: 3.0.7's
    # ServiceConfiguration), and are dropped from 3.2.0 on (PIP-318, PR #21578, default false).
    # A live history's broker_config value, when the broker has the key, overrides this default
    # (``with_broker_config``).
    compaction_retains_keyless: bool = False
    # PLS-SCHEMA-022 on a consumer: from 3.3.0 ServerCnx#handleSubscribe wraps the schema check in
    # BookkeeperSchemaStorage#ignoreUnrecoverableBKException (apache/pulsar PR #22469), which also swallows the
    # validator's InvalidSchemaDataException (a non-recoverable SchemaException): a consumer whose AVRO/JSON definition
    # does not parse subscribes on a topic without a schema. Before 3.3.0 (3.0.7 and 3.2.3 sources: no such wrapper)
    # it is refused IncompatibleSchema (live 3.0.7, regression pls-sub-001-unexpected-rejection-00a8d55c2b34).
    consumer_invalid_schema_ignored: bool = True
    # What the Go client (pulsar-client-go, docs/go-driver.md) has no API for: the client (the driver, naming the
    # missing API) refuses an op or option that asks for one with InvalidArgument.
    ack_timeout_supported: bool = True
    redeliver_unacked_supported: bool = True
    initial_sequence_id_supported: bool = True
    routing_mode_supported: bool = True
    exclusive_with_fencing_supported: bool = True  # Go: ProducerAccessMode has Shared, Exclusive, WaitForExclusive
    null_value_supported: bool = True  # Go: a ProducerMessage has no null-value flag
    # PLS-MSG-002: a partition key given as bytes (Java TypedMessageBuilder#keyBytes, sent Base64-encoded with
    # partition_key_b64_encoded), and told apart on receipt (Message#hasBase64EncodedKey / getKeyBytes). The Python
    # client's partition_key is a str (pulsar/__init__.py _build_msg: _check_type_or_none(str, ...)) and its Message
    # has no such flag; Go's ProducerMessage.Key is a string sent without the flag.
    binary_key_supported: bool = False
    # PLS-NP-001 (``non_persistent`` rule 6): the subscribe call returns before the consumer's first flow permits are
    # sent. Java ``ConsumerImpl#connectionOpened`` completes subscribeFuture, then sends the flow; Go
    # ``partitionConsumer.grabConn`` signals connectedCh from a goroutine and the dispatcher goroutine sends the flow
    # (pulsar-client-go 0.19.0 consumer_partition.go). C++ ``ConsumerImpl::handleCreateConsumer`` sends the permits
    # before it completes the subscribe's promise.
    first_permits_after_subscribe: bool = False
    # PLS-DLQ-002: max_redeliver_count is the redeliveries before the dead letter (Java, C++), or the deliveries
    # (Go's DLQPolicy.MaxDeliveries; pulsar-client-go issue #501; live 4.0.8 with 0.19.0, 28 Nov 2026)
    dlq_counts_deliveries: bool = False
    # PLS-RETRY-002 / PLS-DLQ-003, the Java client's retry and dead-letter copies (``dead_letter.java_copy``):
    # REAL_SUBSCRIPTION is absent from pulsar-client 2.10.5, 2.11.0 and 3.0.7 and present from 3.2.3 (the
    # ConsumerImpl bytecode of each; 3.1.x not read), and the original's event time is copied from apache/pulsar
    # PR #24059 on (3.0.11, 3.3.6, 4.0.4, 4.1), none (0) before. Live 2.10.5 with the Java client 2.10.5, 27 Nov
    # 2026: neither (cases retry-*-java). The Java client's release is the broker's (the driver builds against
    # it) unless the history names another (``profile_for``'s ``java_client``).
    java_real_subscription: bool = True
    java_copy_event_time: bool = True
    # PLS-BATCH-009: the Java batch timer sends nothing before the producer's creation + the delay
    # (batching.BatchTimer.for_client: ProducerImpl#batchFlushTask and lastBatchSendNanoTime, set since 2.10.1)
    java_batch_timer_quiet: bool = True
    # PLS-RETRY-001: a retry-enabled Java consumer names its default retry and dead-letter topics after the topic and
    # the subscription (<topic>-<sub>-RETRY); before the fix of apache/pulsar issue #9327 after the subscription
    # only, in the topic's namespace (<sub>-RETRY, <sub>-DLQ). Live 4.0.8 with the Java client 2.7.4, 27 Nov 2026:
    # the copy arrived on s-RETRY (case retry-default-name-java); 2.10.5 names it t-s-RETRY. TDMQ documents the
    # same split by cluster generation (docs/research/tdmq-profile.md, R2/R3: 2.7.2 [sub]-RETRY, 2.9.2
    # [topic]-[sub]-RETRY). The 2.8.x clients are not measured; the bound 2.8.0 is the fix release line.
    java_retry_names_by_topic: bool = True
    # PLS-RETRY-002 / PLS-DLQ-003: ORIGIN_MESSAGE_ID beside the legacy ORIGIN_MESSAGE_IDY_TIME from apache/pulsar
    # PR #12451 (Oct 2021, the 2.9 line; 2.8.x not measured): the Java client 2.7.4 wrote the legacy key only.
    java_origin_message_id: bool = True
    # PLS-FAILOVER-005: on a non-partitioned topic the broker ranks Failover consumers by priority level from 3.0
    # on (AbstractDispatcherSingleActiveConsumer, apache/pulsar PR #19502); a 2.x broker makes the first consumer
    # to connect active whatever its level (PR #4604). Live 2.10.5 with the Java client 2.10.5, 27 Nov 2026: the
    # first-connected level-1 consumer kept the role next to a level-0 one (case failover-priority-java).
    failover_priority_non_partitioned: bool = True
    # PLS-ACCESS-004: ExclusiveWithFencing came with PIP-161 (apache/pulsar PR #15488, 2.11.0); an older
    # broker reads the access mode as Shared (``access_modes.mode_the_broker_reads``).
    exclusive_with_fencing_known: bool = True
    # PLS-TOPIC-005: deleting a topic deletes its schema too (apache/pulsar PR #14608, 2.11.0: ``PersistentTopic#delete``
    # -> ``AbstractTopic#deleteSchema`` -> ``SchemaRegistryService#deleteSchemaStorage``, the ledger itself, so the next
    # registration is version 0 again). Before it the REST delete kept the schema unless asked ``deleteSchema=true``,
    # which the admin (fixtures/admin.py) never asks.
    topic_delete_takes_schema: bool = True
    # PLS-TOPIC-005: deleting one partition of a partitioned topic leaves the schema the partitions share (apache/pulsar
    # PR #21574, "Correct schema deletion for partitioned topic": released in 2.11.4 and 3.2.0; live 4.0.8, 6 Dec 2026,
    # case topic-delete-takes-schema). Before it the partition's delete deleted the partitioned topic's schema (True);
    # None: a 3.0 or 3.1 release from 3.0.2 / 3.1.2 on, which may carry the fix's cherry-pick (not recorded): the
    # ledger is then uncertain until the admin's listing shows it (``SchemaOps.ledger_candidates``).
    partition_delete_takes_schema: bool | None = False
    # PLS-CHUNK-003 / PLS-DEDUP-006: a send refused with MessageTooBig still used up a generated
    # sequence id. C++ ``ProducerImpl::sendAsyncWithStatsUpdate`` takes ``msgSequenceGenerator_++``
    # before its size checks (measured on 4.0.8 / C++ 4.2.0, 2026-11-26: the next send got 1, not 0);
    # Java ``ProducerImpl#sendAsync`` checks the size before ``updateMessageMetadataSequenceId``.
    too_big_uses_sequence_id: bool = True
    # The Go client checks a batched message's payload alone against maxMessageSize before its batch builder numbers
    # it (producer_partition.go updateChunkInfo: ErrMessageTooLarge, no id used); one that fits but whose batch does
    # not is refused when the batch is framed, its id used. Live 4.0.8 with 0.19.0, 28 Nov 2026 (Go fuzz campaign:
    # a batching producer's 5 MB + 1 send refused, the next send got 0; regression pls-dedup-006-wrong-value-e7b72fd14b8d).
    batched_payload_checked_first: bool = False
    # PLS-DEDUP-006: each acknowledged send sets last_sequence_id to its id (C++ ProducerImpl::ackReceived);
    # the Java client keeps the highest one acknowledged (ProducerImpl#ackReceived: Math.max), so an
    # explicit high sequence id stays the last one after later generated ones. Found live by the Java
    # fuzz campaign of 2026-11-26 (conformance/regressions/pls-dedup-006-wrong-value-3a8fbbfaa61f).
    last_sequence_id_highest: bool = False
    # PLS-DEDUP-006 for a batch: the Go client sets last_sequence_id to the batch's sequence id, its first message's
    # (producer_partition.go ReceivedSendReceipt stores pendingItem.sequenceID for each message of the batch); live
    # 4.0.8 with 0.19.0, 28 Nov 2026 (async m1 then a sync m2 in one batch: 0, where C++ and Java say 1).
    last_sequence_id_batch_first: bool = False
    # PLS-DEDUP-005: the Python client passes sequence_id / initial_sequence_id on only when truthy, so 0 means "not
    # given"; the Java and Go clients send an explicit 0 (Go: ProducerMessage.SequenceID is a pointer).
    zero_sequence_id_unset: bool = True
    # PLS-ACK-003/006 on a consumer of several topics: the C++ client routes the id first
    # (OperationNotSupported for an id it cannot place), the Java client checks the subscription
    # type first (InvalidConfiguration). Found live by the same campaign (pls-ack-001-wrong-error-385626413e1a).
    cumulative_type_check_first: bool = False
    # PLS-DEDUP-001/003: brokerDeduplicationEnabled, the deduplication of a namespace without a policy
    # (ServiceConfiguration default false; a set_policy deduplication value overrides it).
    broker_deduplication: bool = False
    # PLS-SCHEMA-*: the schema types the client can build (KEY_VALUE and AUTO_CONSUME are Java only: pulsar-client
    # 3.13.0 has no class for them), the ones it sends to the broker (the C++ client sent no schema for INT32, INT64
    # and DOUBLE: nothing was registered, measured on 4.0.8 / C++ 4.2.0, 2026-11-26), and the data its STRING schema
    # carries (Python ``StringSchema`` stores json.dumps(None) = "null"; Java ``Schema.STRING`` empty data), which
    # makes a Java and a Python STRING schema two versions (PLS-SCHEMA-009).
    schema_types: tuple[str, ...] = ("BYTES", "STRING", "INT32", "INT64", "DOUBLE", "AVRO", "JSON")
    schema_types_sent: tuple[str, ...] = ("STRING", "AVRO", "JSON")
    string_schema_data: str = "null"

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _client_kind(client: str | None) -> str:
    c = (client or "cpp").strip().lower()
    if c in ("cpp", "c++", "python", "pulsar-client") or c.startswith("python") or c.startswith("pulsar-client"):
        return "cpp"
    if c.startswith("java"):
        return "java"
    if c.startswith("go"):
        return "go"
    if c == MIXED:
        return MIXED
    raise ValueError(f"unknown client {client!r}; use 'cpp' (also for the Python client), 'java', 'go' or 'mixed'")


# broker.conf keys that set a Profile field (the live target records them in broker_config, so a
# broker started with another value is judged by the rules of that value; fuzz --broker-configs).
PROFILE_CONFIG_KEYS = {
    "topicCompactionRetainNullKey": "compaction_retains_keyless",  # PLS-COMPACT-003
    "acknowledgmentAtBatchIndexLevelEnabled": "broker_batch_index_ack",  # PLS-BATCH-005
    "isDelayedDeliveryDeliverAtTimeStrict": "delayed_delivery_strict",  # PLS-DELAY-004/005
    "delayedDeliveryTickTimeMillis": "delayed_delivery_tick_ms",  # PLS-DELAY-004/005
    "delayedDeliveryMaxDelayInMillis": "delayed_max_delay_ms",  # PLS-DELAY-007
    "brokerDeduplicationEnabled": "broker_deduplication",  # PLS-DEDUP-001/003
}


def with_broker_config(profile: Profile, broker_config: Mapping[str, Any] | None) -> Profile:
    """``profile`` with the fields ``PROFILE_CONFIG_KEYS`` names set from a history's
    ``broker_config`` (the broker's runtime values: strings "true"/"false" or whole numbers, or
    booleans and ints). An empty value (a key the broker reports unset) keeps the default. A field the
    profile's vendor documents (``vendors.VENDOR_SETTINGS``, e.g. TDMQ's 10-day delay limit) is the
    vendor's contract and stays: a broker configured otherwise breaks that vendor's rule."""
    changes: dict[str, Any] = {}
    documented = vendors.VENDOR_SETTINGS.get(profile.vendor, {})
    for key, name in PROFILE_CONFIG_KEYS.items():
        if not broker_config or key not in broker_config or str(broker_config[key]).strip() == "" or name in documented:
            continue
        value = broker_config[key]
        if isinstance(getattr(profile, name), bool):
            changes[name] = str(value).strip().lower() == "true"
        else:
            changes[name] = int(str(value).strip())  # the loader refuses a value that is not a whole number
    return replace(profile, **changes) if changes else profile


def _before_release(broker_version: str | None, first: tuple[int, int, int]) -> bool:
    """Whether ``broker_version`` is a release older than ``first``; a line or a major (no release number) says
    its newest release, so it is not."""
    number = releases.release_number(broker_version)
    return number is not None and releases.version_tuple(number) < first


def _partition_delete_takes_schema(broker_version: str | None) -> bool | None:
    """``Profile.partition_delete_takes_schema`` of a release: before apache/pulsar PR #21574 (2.11.0-2.11.3, 3.0.0,
    3.0.1, 3.1.0, 3.1.1) True; 2.11.4 on and 3.2.0 on False (as 2.10, which deletes no schema with a topic); the later
    3.0 and 3.1 releases None (not recorded). A line says its newest release."""
    if _before_release(broker_version, (2, 11, 0)) or not _before_release(broker_version, (3, 2, 0)):
        return False
    release = releases.version_tuple(releases.release_number(broker_version))
    if release < (2, 11, 4) or (3, 0, 0) <= release < (3, 0, 2) or (3, 1, 0) <= release < (3, 1, 2):
        return True
    return None if release >= (3, 0, 0) else False


def _retains_keyless_by_default(broker_version: str | None, line: str) -> bool:
    """PLS-COMPACT-003's default: a release before 3.2.0 keeps keyless messages; a line says its newest."""
    return line == "2.x" or _before_release(broker_version, (3, 2, 0))


def _java_client_settings(release: tuple[int, int, int] | None) -> dict[str, bool]:
    """The Java-client fields for pulsar-client ``release`` (None: unknown, the newest behaviour)."""
    if release is None:
        return {}
    before_24059 = release < (3, 0, 11) or (3, 1, 0) <= release < (3, 3, 6) or (4, 0, 0) <= release < (4, 0, 4)
    return {"java_real_subscription": release >= (3, 2, 0), "java_copy_event_time": not before_24059,
            "java_retry_names_by_topic": release >= (2, 8, 0), "java_origin_message_id": release >= (2, 9, 0),
            "java_batch_timer_quiet": release >= (2, 10, 1)}


def java_client_release(client_version: str | None) -> str | None:
    """The Java client release a history header's ``client_version`` names ("java 2.10.5" -> "2.10.5"), or None."""
    m = re.search(r"\bjava (\d+\.\d+\.\d+)", str(client_version or ""))
    return m.group(1) if m else None


def profile_for(broker_version: str | None = None, client: str | None = None,
                overrides: Mapping[str, Any] | None = None, *, java_client: str | None = None) -> Profile:
    """The model parameters for ``broker_version`` (a model line of ``releases.MODEL_LINES`` or a release such as
    "4.0.8") and ``client`` ("cpp"/"python", "java", or "mixed": the C++ values, for a run whose
    handles name their own client), with ``overrides`` applied by field name. ``java_client`` is the Java client's
    release when it is not the broker's."""
    broker = releases.model_line(broker_version)
    kind = _client_kind(client)
    profile = Profile(broker=broker, client=kind)
    if kind == "java":
        profile = replace(
            profile,
            nack_timer="deadline",  # PLS-NACK-005
            nack_early_ms=255,  # negativeAckPrecisionBitCnt = 8
            nack_backoff_supported=True,  # PLS-NACK-004
            ack_timeout_min_ms=1000,  # PLS-ACKTIMEOUT-003: ConsumerBuilderImpl MIN_ACK_TIMEOUT_MILLIS
            ack_timeout_rule="PLS-ACKTIMEOUT-003",
            ack_timeout_tick_settable=True,  # PLS-ACKTIMEOUT-004
            ack_timeout_backoff_supported=True,  # PLS-ACKTIMEOUT-005
            cumulative_ack_shared_error="InvalidConfiguration",  # PLS-ACK-006
            cumulative_ack_shared_rule="PLS-ACK-006",
            redeliver_keeps_receiver_queue=False,  # ConsumerImpl#redeliverUnacknowledgedMessages clears it
            retry_letter_supported=True,  # PLS-RETRY-001
            dlq_properties="java",  # PLS-DLQ-003
            default_hashing_scheme="java_string_hash",  # PLS-ROUTE-004
            hashing_scheme_supported=True,
            key_batch_order="last",  # PLS-BATCH-003
            delayed_send_flushes_batch=True,  # ProducerImpl#processOpSendMsg: batchMessageAndSend first
            sync_send_flushes_all_partitions=True,  # PLS-BATCH-009: PartitionedProducerImpl#triggerFlush
            repeated_sequence_flushes_batch=True,  # batching step 1b
            single_message_batch_unbatched=True,  # PLS-BATCH-008
            too_big_uses_sequence_id=False,  # PLS-DEDUP-006: the size check comes first
            last_sequence_id_highest=True,  # PLS-DEDUP-006
            zero_sequence_id_unset=False,  # PLS-DEDUP-005 is Python's
            cumulative_type_check_first=True,  # PLS-ACK-006
            non_durable_supported=True,  # PLS-SUB-007
            priority_level_supported=True,  # PLS-SHARED-003, PLS-FAILOVER-005
            subscription_properties_supported=True,  # PLS-TAG-003
            transactions_supported=True,  # PLS-TXN-006
            binary_key_supported=True,  # PLS-MSG-002: keyBytes, getKeyBytes
            first_permits_after_subscribe=True,  # PLS-NP-001 (non_persistent rule 6)
            schema_types=("BYTES", "STRING", "INT32", "INT64", "DOUBLE", "AVRO", "JSON", "KEY_VALUE", "AUTO_CONSUME"),
            schema_types_sent=("STRING", "INT32", "INT64", "DOUBLE", "AVRO", "JSON", "KEY_VALUE", "AUTO_CONSUME"),
            string_schema_data="",
            not_allowed_send_error="fails",  # PLS-DELAY-007
        )
    if kind == "go":
        # pulsar-client-go 0.19.0, read in its sources (docs/research/go-client.md) and measured live where a
        # test says so (tests/live/test_go_client_live.py)
        profile = replace(
            profile,
            nack_timer="periodic",  # negative_acks_tracker.go: a ticker every delay / 3
            nack_timer_divisor=3,
            latest_inclusive_starts_at_last=True,  # PLS-READER-004: consumer_partition.go newPartitionConsumer
            nack_early_ms=255,  # the due time's low 8 bits of milliseconds cleared (NackPrecisionBit 8)
            nack_min_delay_ms=1,  # no floor: 0 means the 1 min default (consumer_impl.go)
            nack_backoff_supported=True,  # ConsumerOptions.NackBackoffPolicy
            nack_backoff_rule="PLS-NACK-007",
            ack_timeout_supported=False,
            redeliver_unacked_supported=False,
            initial_sequence_id_supported=False,
            routing_mode_supported=False,
            exclusive_with_fencing_supported=False,
            null_value_supported=False,
            priority_level_supported=False,
            # ConsumerOptions.RetryEnable exists, but the Go client's retry is not the Java one the model follows: it
            # subscribes the retry topic with the consumer's own type, so on Exclusive/Failover the copy is not delayed
            # (consumer_impl.go newConsumer; live 4.0.8, Go campaign of 28 Nov 2026, regression
            # pls-delay-001-early-delivery-e69fb2539423); not modelled until Go retry cases confirm its rules
            retry_letter_supported=None,
            non_durable_supported=True,  # ConsumerOptions.SubscriptionMode
            subscription_properties_supported=True,
            hashing_scheme_supported=True,  # ProducerOptions.HashingScheme
            default_hashing_scheme="java_string_hash",  # PLS-ROUTE-005: Go's own, unsigned; ordering key first
            dlq_counts_deliveries=True,  # PLS-DLQ-008
            transactions_supported=True,  # PLS-TXN-006: the transaction cases' Go variants, live 4.0.8, 5 Dec 2026
            txn_ended_send_error="OtherError",  # PLS-TXN-004
            txn_failed_op_aborts=False,  # PLS-TXN-011
            last_sequence_id_batch_first=True,  # PLS-DEDUP-006
            batched_payload_checked_first=True,  # PLS-DEDUP-006
            seek_skip_acks=True,  # PLS-SEEK-001
            zero_sequence_id_unset=False,  # PLS-DEDUP-005 is Python's
            read_compacted_checked_by_client=False,  # PLS-COMPACT-007
            schema_definition_checked_by_client=True,  # PLS-SCHEMA-025
            chunk_sizing="go",  # PLS-CHUNK-007/008
            unpartitioned_id_text_partition=0,
            cumulative_ack_shared_error="InvalidAck",  # PLS-ACK-007: consumer_partition.go ErrInvalidAck
            cumulative_ack_shared_rule="PLS-ACK-007",
            # what the Go client's ids can show: a lone batched message has batch index 0 of size 1, like a message
            # sent alone (drivers/go reports both as -1, docs/go-driver.md), so it is read as PLS-BATCH-008 reads Java's
            single_message_batch_unbatched=True,
            full_batch_waits=True,  # batching step 4: producer_partition.go internalSend
            first_permits_after_subscribe=True,  # PLS-NP-001 (non_persistent rule 6)
            dlq_properties="go",
            schema_types=("BYTES", "STRING", "INT32", "INT64", "DOUBLE", "AVRO", "JSON"),
            schema_types_sent=("STRING", "INT32", "INT64", "DOUBLE", "AVRO", "JSON"),
        )
    java_release = releases.representative_release(java_client or broker_version)
    if kind == "java" and java_release is not None and java_release < (2, 11, 0):
        # PLS-BATCH-003 / PLS-BATCH-008 before PIP-189 (apache/pulsar PR #16605, 2.11.0): a lone message still goes
        # as a batch of one, and KeyBased batches leave in order of their first message (2.10.5's KeyedBatch keeps
        # the first sequence id; 2.11.0 on sorts BatchMessageContainerImpl sequence ids: bytecode of both). Live
        # 2.10.5 with the Java client 2.10.5, 27 Nov 2026 (case batch-key-based-java).
        profile = replace(profile, key_batch_order="first", single_message_batch_unbatched=False)
    if kind == "java" and java_release is not None and java_release < (2, 10, 0):
        # PLS-TAG-003: ConsumerBuilder#subscriptionProperties came with PIP-105 (2.10.0; absent from the 2.7.4 API)
        profile = replace(profile, subscription_properties_supported=False)
    if broker in ("4.1", "5.x"):
        profile = replace(profile, broker_batch_index_ack_default=True, shared_close_increments_redelivery_count=None)
    profile = replace(profile, **_java_client_settings(java_release))
    if broker == "2.x":
        profile = replace(profile, failover_priority_non_partitioned=False)
    if _before_release(broker_version, (2, 11, 0)):
        profile = replace(profile, exclusive_with_fencing_known=False, topic_delete_takes_schema=False)
    profile = replace(profile, partition_delete_takes_schema=_partition_delete_takes_schema(broker_version))
    if broker == "2.x" or _before_release(broker_version, (3, 3, 0)):
        profile = replace(profile, consumer_invalid_schema_ignored=False)
    if _retains_keyless_by_default(broker_version, broker):
        profile = replace(profile, compaction_retains_keyless=True)
    if broker in ("2.x", "3.x"):
        profile = replace(profile, shared_close_increments_redelivery_count=None)
    vendor = vendors.check_vendor(str((overrides or {}).get("vendor", vendors.APACHE)))
    profile = replace(profile, vendor=vendor, **vendors.VENDOR_SETTINGS[vendor])
    if overrides:
        known = {f.name for f in fields(Profile)}
        unknown = sorted(set(overrides) - known)
        if unknown:
            raise ValueError(f"unknown profile field(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        profile = replace(profile, **dict(overrides))
    return profile


def overrides_of(profile: Profile) -> dict[str, Any]:
    """The fields of ``profile`` that differ from its broker's and client's defaults: the trace's
    overrides, recovered (a field overridden to its default value is the same thing)."""
    base = profile_for(profile.broker, profile.client)
    return {f.name: getattr(profile, f.name) for f in fields(Profile)
            if f.name not in ("broker", "client") and getattr(profile, f.name) != getattr(base, f.name)}


def handle_profile(profile: Profile, client: str | None) -> Profile:
    """The profile of a handle whose creating op says ``"client": client`` in a run with ``profile``:
    ``profile_for(<broker>, <client>, <the run's overrides>)``; ``client`` None: ``profile`` itself."""
    if client is None:
        return profile
    kind = _client_kind(client)
    if kind == profile.client:
        return profile
    try:
        return _other_client_profile(profile, kind)
    except TypeError:  # a field overridden with an unhashable value (a JSON list): not cached
        return profile_for(profile.broker, kind, overrides_of(profile) or None)


@lru_cache(maxsize=256)
def _other_client_profile(profile: Profile, kind: str) -> Profile:
    """``handle_profile`` for a client other than the run's. Pure, and asked for on every op of a handle that names
    its client (each answer costs two ``profile_for``), hence cached."""
    return profile_for(profile.broker, kind, overrides_of(profile) or None)


# Settings only some clients have: (argument, rule, what it is, the Profile flag saying the client has it).
CLIENT_ONLY_SETTINGS = {
    "subscribe": (
        ("nack_backoff", "PLS-NACK-004", "negative-ack redelivery backoff", "nack_backoff_supported"),
        ("ack_timeout_backoff", "PLS-ACKTIMEOUT-005", "ack-timeout redelivery backoff", "ack_timeout_backoff_supported"),
        ("ack_timeout_tick_ms", "PLS-ACKTIMEOUT-004", "settable ack-timeout tick", "ack_timeout_tick_settable"),
        ("priority_level", "PLS-SHARED-003", "consumer priority levels", "priority_level_supported"),
        ("enable_retry", "PLS-RETRY-001", "retry letter topic", "retry_letter_supported"),
        ("subscription_properties", "PLS-TAG-003", "subscription properties on subscribe", "subscription_properties_supported"),
    ),
    "create_producer": (
        ("hashing_scheme", "PLS-ROUTE-004", "choice of hashing scheme", "hashing_scheme_supported"),
    ),
    # PLS-TXN-006: a transaction is begun, and used, with the Java client only
    "new_txn": (("txn", "PLS-TXN-006", "transactions", "transactions_supported"),),
    "send": (("txn", "PLS-TXN-006", "transactions", "transactions_supported"),
             ("key_bytes", "PLS-MSG-002", "partition key given as bytes", "binary_key_supported")),
    "ack": (("txn", "PLS-TXN-006", "transactions", "transactions_supported"),),
    "ack_cumulative": (("txn", "PLS-TXN-006", "transactions", "transactions_supported"),),
}


def go_missing(op: str, args: Mapping[str, Any], profile: Profile) -> str | None:
    """PLS-GO-001: what the trace asks of a client without it (pulsar-client-go's API), or None."""
    if op == "subscribe" and not profile.ack_timeout_supported and any(
            args.get(k) for k in ("ack_timeout_ms", "ack_timeout_tick_ms", "ack_timeout_backoff")):
        return "ack timeout"
    if op == "subscribe" and not profile.priority_level_supported and "priority_level" in args and profile.client == "go":
        return "consumer priority level"
    if op == "redeliver_unacked" and not profile.redeliver_unacked_supported:
        return "redeliverUnacknowledgedMessages on its Consumer"
    if op == "ack_cumulative" and "txn" in args and profile.client == "go":
        return "cumulative ack in a transaction"  # pulsar.Consumer has AckWithTxn only
    if op == "create_producer":
        if "initial_sequence_id" in args and not profile.initial_sequence_id_supported:
            return "initial sequence id option on its producer"
        if "routing_mode" in args and not profile.routing_mode_supported:
            return "routing mode option on its producer"
        if args.get("access_mode") == "ExclusiveWithFencing" and not profile.exclusive_with_fencing_supported:
            return "ExclusiveWithFencing access mode"
    if op == "send" and args.get("tombstone") == "null" and not profile.null_value_supported:
        return "null message value"
    if op == "send" and "key_bytes" in args and profile.client == "go":
        return "binary partition key (ProducerMessage.Key is a string, sent without the Base64 flag)"
    return None


def client_refusal(op: str, args: Mapping[str, Any], profile: Profile) -> tuple[str, str] | None:
    """(rule id, why) if ``profile``'s client has no setting ``args`` ask for (a Python handle given a
    Java-only argument); the client refuses it with InvalidArgument. None: nothing to refuse."""
    missing = go_missing(op, args, profile)
    if missing is not None:
        return "PLS-GO-001", f"the Go client has no {missing}"
    if op == "subscribe" and (args.get("enable_retry") or (args.get("dead_letter") or {}).get("retry_topic")) \
            and profile.retry_letter_supported is None:
        raise NotModelledError(f"a retry-enabled consumer on the {profile.client} client (its retry topic is not the "
                               "Java client's the model follows)")
    for arg, rule, what, flag in CLIENT_ONLY_SETTINGS.get(op, ()):
        if arg in args and not getattr(profile, flag):
            needs = "a newer Java client release" if profile.client == "java" else "the Java client"
            return rule, f"the {profile.client} client has no {what}; {arg} needs {needs}"
    if op == "subscribe" and not profile.non_durable_supported and args.get("subscription_mode", "Durable") != "Durable":
        return "PLS-SUB-007", f"the {profile.client} client has no non-durable subscriptions; subscription_mode NonDurable needs the Java client"
    if op == "subscribe" and not profile.retry_letter_supported and (args.get("dead_letter") or {}).get("retry_topic"):
        return "PLS-RETRY-001", f"the {profile.client} client has no retry letter topic; dead_letter.retry_topic needs the Java client"
    schema = args.get("schema")
    if isinstance(schema, Mapping):
        kinds = [schema.get("type")] + [(schema.get(h) or {}).get("type") for h in ("key", "value") if h in schema]
        missing = [k for k in kinds if k not in profile.schema_types]
        if missing:
            return "PLS-SCHEMA-024", f"the {profile.client} client has no {missing[0]} schema; it needs the Java client"
        if profile.schema_definition_checked_by_client and schema.get("type") in ("AVRO", "JSON"):
            from reference_model.schema import SchemaDefinitionError, parse_avro

            try:
                parse_avro(schema.get("definition"))
            except SchemaDefinitionError as e:
                return "PLS-SCHEMA-025", f"the {profile.client} client cannot build a {schema['type']} schema from this definition: {e}"
    return None
