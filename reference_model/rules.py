"""The rule registry: every messaging rule the suite checks, with its id, source and status.

Part of Pulsar: all of it. This module is data. Each rule has a stable id ``PLS-<AREA>-<NNN>``
that model code, cases, verdicts and reports cite; an id is never reused (a rule found wrong is
kept with status ``withdrawn`` and a note saying why, and a new id states the corrected rule).

Fields:
- ``source``: the Pulsar docs page and heading (``docs/<page>.md#<anchor>`` in apache/pulsar-site,
  or a generated reference page ``static/reference/<version>/...md#<anchor>``) when the docs state
  the rule; otherwise the implementing source file
  (``apache/pulsar ...``, ``apache/pulsar-client-cpp lib/...``, ``apache/pulsar-client-python ...``).
- ``quote``: one sentence copied verbatim from ``source`` (docs prose or an API docstring; for
  docs, the rendered text: markdown links and emphasis dropped), or ``""`` when ``source`` is code;
  a paraphrase never goes in ``quote``, it goes in ``note``.
- ``status``:
    ``normative``  the docs say it and the code agrees;
    ``inferred``   read from the code, the docs are silent (or only hint at it);
    ``tentative``  not yet confirmed on a live broker, or client/broker-version dependent;
    ``withdrawn``  found wrong; kept so the id is never reused (``note`` says why).
- ``applies_to``: broker versions (a spec such as ``">=3.0"`` or ``">=3.0,<4.1"``; ``"*"`` = any)
  and the clients whose behaviour the rule describes. The Python client is a wrapper over the
  C++ client, so client-side rules of the C++ core list both ``"python"`` and ``"cpp"``.
- ``note``: paraphrase, caveats, docs-vs-code disagreements and what the live broker did. "Live:"
  lines record observations on broker 4.0.8 + pulsar-client (Python) 3.13.0 unless they say
  otherwise.

The registry is validated when this module is imported (unique ids, id format, area matches the
id, known status, a quote for every normative rule, a note for every non-normative one), so a bad
edit fails loudly at import time.

Not modelled here: the semantics themselves (see the other ``reference_model`` modules), and
how a case exercises a rule (see ``conformance/cases/``).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field

STATUSES = ("normative", "inferred", "tentative", "withdrawn")
CLIENTS = ("python", "cpp", "java")
RULE_ID_RE = re.compile(r"^PLS-(?P<area>[A-Z]+)-(?P<num>\d{3})$")
_VERSION_CLAUSE_RE = re.compile(r"^(?P<op>>=|<=|==|!=|>|<)?\s*(?P<version>\d+(?:\.\d+){0,2})$")


class RuleRegistryError(ValueError):
    """The rule table breaks one of the registry's invariants; the message says which rule and why."""


# --------------------------------------------------------------------------- version specs


def _version_tuple(text: str) -> tuple[int, int, int]:
    m = re.match(r"^\s*(\d+)(?:\.(\d+))?(?:\.(\d+))?", text)
    if m is None:
        raise ValueError(f"cannot read a version from {text!r}; expected e.g. '4.0.8'")
    return tuple(int(g) if g is not None else 0 for g in m.groups())  # type: ignore[return-value]


def _parse_spec(spec: str) -> tuple[tuple[str, tuple[int, int, int]], ...]:
    if not isinstance(spec, str):
        raise RuleRegistryError(f"broker version spec must be a string, got {spec!r}")
    if spec.strip() in ("", "*"):
        return ()
    clauses = []
    for part in spec.split(","):
        m = _VERSION_CLAUSE_RE.match(part.strip())
        if m is None:
            raise RuleRegistryError(f"bad broker version clause {part!r} in {spec!r}; use e.g. '>=3.0,<4.1' or '*'")
        clauses.append((m.group("op") or "==", _version_tuple(m.group("version"))))
    return tuple(clauses)


_OPS = {
    ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    "<": lambda a, b: a < b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}



# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class AppliesTo:
    """Which brokers and clients a rule speaks about.

    ``brokers`` is a version spec: comma-separated clauses ``>=3.0``, ``<4.1``, ``==4.0.8`` (all
    must hold), or ``"*"`` for every version. ``clients`` names clients from ``CLIENTS``.
    """

    brokers: str = "*"
    clients: tuple[str, ...] = CLIENTS

    def __post_init__(self) -> None:
        _parse_spec(self.brokers)  # raises RuleRegistryError on a malformed spec
        if not isinstance(self.clients, tuple) or not self.clients:
            raise RuleRegistryError(f"applies_to.clients must be a non-empty tuple, got {self.clients!r}")
        unknown = [c for c in self.clients if c not in CLIENTS]
        if unknown:
            raise RuleRegistryError(f"applies_to.clients has unknown clients {unknown}; known: {CLIENTS}")


@dataclass(frozen=True)
class Rule:
    id: str
    area: str
    title: str
    source: str
    quote: str
    status: str
    applies_to: AppliesTo = field(default_factory=AppliesTo)
    note: str = ""

    def __post_init__(self) -> None:
        m = RULE_ID_RE.match(self.id)
        if m is None:
            raise RuleRegistryError(f"rule id {self.id!r} must look like PLS-<AREA>-<NNN>, e.g. PLS-ACK-004")
        if m.group("area") != self.area:
            raise RuleRegistryError(f"rule {self.id}: area {self.area!r} does not match the id's area {m.group('area')!r}")
        if self.status not in STATUSES:
            raise RuleRegistryError(f"rule {self.id}: status {self.status!r} is not one of {STATUSES}")
        if not self.title.strip() or not self.source.strip():
            raise RuleRegistryError(f"rule {self.id}: title and source must not be empty")
        if self.status == "normative" and not self.quote.strip():
            raise RuleRegistryError(
                f"rule {self.id}: a normative rule needs a verbatim quote from its source; "
                "if the docs do not say it, make it 'inferred' and cite the source file"
            )
        if self.status != "normative" and not self.note.strip():
            raise RuleRegistryError(f"rule {self.id}: a {self.status} rule needs a note saying where it comes from")
        if not isinstance(self.applies_to, AppliesTo):
            raise RuleRegistryError(f"rule {self.id}: applies_to must be an AppliesTo")

    @property
    def number(self) -> int:
        return int(self.id.rsplit("-", 1)[1])


# --------------------------------------------------------------------------- shorthands

_ALL = AppliesTo("*", CLIENTS)
_CPP = AppliesTo("*", ("python", "cpp"))
_JAVA = AppliesTo("*", ("java",))

_MSG = "docs/concepts-messaging.md"
_CLI = "docs/concepts-clients.md"
_CONS = "docs/client-libraries-consumers.md"
_PY = "apache/pulsar-client-python pulsar/__init__.py"
_CPPLIB = "apache/pulsar-client-cpp lib/"
_BROKER = "apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/service/"

_LIVE = "Live (broker 4.0.8, pulsar-client 3.13.0): "


# --------------------------------------------------------------------------- the rules

RULES: tuple[Rule, ...] = (
    # ---- topic names -------------------------------------------------------------------
    Rule(
        id="PLS-TOPIC-001", area="TOPIC",
        title="A short topic name x expands to persistent://public/default/x; tenant/ns/x to persistent://tenant/ns/x",
        source=f"{_MSG}#topics",
        quote="If no tenant or namespace is specified when a client creates a topic, the topic is created in the default tenant and namespace.",
        status="normative", applies_to=_ALL,
        note=("The same section: 'The default is persistent, so if you do not specify a type, the topic is "
              f"persistent.' C++ parsing: {_CPPLIB}TopicName.cc. Cases see it through the topic a message "
              "reports (targets map short names into their own namespace)."),
    ),
    Rule(
        id="PLS-TOPIC-002", area="TOPIC",
        title="Partition i of topic T is the topic T-partition-i",
        source=f"{_CPPLIB}TopicName.cc",
        quote="", status="inferred", applies_to=_ALL,
        note=("Docs (concepts-messaging.md#partitioned-topics) only say 'A partitioned topic is implemented as N "
              "internal topics, where N is the number of partitions.'; the '-partition-<i>' suffix is from "
              "TopicName::getTopicPartitionName (C++) and PARTITIONED_TOPIC_SUFFIX (apache/pulsar "
              "pulsar-common .../naming/TopicName.java). "
              f"{_LIVE}a message from a 1-partition topic reports topic '<T>-partition-0' and partition 0 in its id."),
    ),
    Rule(
        id="PLS-TOPIC-003", area="TOPIC",
        title="Invalid topic names (bad domain, two-part a/b, bad characters in tenant/namespace) are rejected with InvalidTopicName",
        source=f"{_CPPLIB}TopicName.cc",
        quote="", status="inferred", applies_to=_ALL,
        note=("Docs give the form '{persistent|non-persistent}://tenant/namespace/topic' but not what happens "
              "otherwise; the C++ client refuses the name before contacting the broker (ResultInvalidTopicName). "
              "The local name is not validated and may contain '/'. "
              f"{_LIVE}subscribe and create_producer on 'bad://public/default/x', 'a/b', "
              "'persistent://te nant/ns/x', 'persistent://public/def ault/x' all raise pulsar.InvalidTopicName."),
    ),
    # ---- message ids and message content ------------------------------------------------
    Rule(
        id="PLS-MSGID-001", area="MSGID",
        title="A message id is (ledger, entry, partition, batch_index); partition -1 on non-partitioned topics, batch_index -1 on non-batched messages",
        source=f"{_CPPLIB}MessageIdImpl.h",
        quote="", status="inferred", applies_to=_ALL,
        note=("Docs (concepts-messaging.md#messages) only say 'Message ID indicates a message's specific position "
              "in a ledger and is unique within a Pulsar cluster.' The -1 conventions are the C++/Python "
              "MessageId defaults. Ledger ids are broker-assigned: opaque. "
              f"{_LIVE}non-partitioned non-batched ids print as '(81,0,-1,-1)'; partition 0 of a "
              "1-partition topic as '(80,0,0,-1)'."),
    ),
    Rule(
        id="PLS-MSGID-002", area="MSGID",
        title="On one topic or partition, message ids increase in publish order, ordered by (ledger, entry, batch_index)",
        source=f"{_CPPLIB}MessageId.cc",
        quote="", status="inferred", applies_to=_ALL,
        note=("MessageId operator< is lexicographic on (ledger, entry, batch_index); the partition takes part "
              "in == but not in <, so ids of different partitions are not ordered. Entry ids grow by one per "
              f"entry within a ledger; a new ledger has a larger id. {_LIVE}consecutive sends got (81,0) then (81,1)."),
    ),
    Rule(
        id="PLS-MSG-001", area="MSG",
        title="Payload, properties, partition key, ordering key and event time arrive unchanged; event time is 0 when unset",
        source=f"{_MSG}#messages",
        quote="If nothing is set to event time, the value is `0`.",
        status="normative", applies_to=_ALL,
        note="The same table lists key, properties and event time as message components carried with the payload.",
    ),
    # ---- producers -----------------------------------------------------------------------
    Rule(
        id="PLS-PROD-001", area="PROD",
        title="Producer sequence ids: the first message gets initial_sequence_id+1 (0 by default), then +1 per message; last_sequence_id reports the last one",
        source=f"{_CPPLIB}ProducerImpl.cc",
        quote="", status="inferred", applies_to=_ALL,
        note=("Docs (concepts-messaging.md#messages): 'The sequence ID of a message is initially assigned by its "
              "producer, indicating its order in that sequence, and can also be customized.' The numbering is "
              "from the code (initial_sequence_id defaults to -1). "
              f"{_LIVE}last_sequence_id() is -1 on a new producer and 0 after one send; with "
              "initial_sequence_id=10 it is 10, then 11 after one send. Traces see it through create_producer's "
              "ok value (send's ok value does not report the sequence id)."),
    ),
    Rule(
        id="PLS-PROD-002", area="PROD",
        title="Messages of one producer are stored, and delivered to an Exclusive consumer, in publish order",
        source=f"{_MSG}#multi-topic-subscriptions",
        quote="When a producer sends messages to a single topic, all messages are guaranteed to be read from that topic in the same order.",
        status="normative", applies_to=_ALL,
    ),
    # ---- subscriptions -------------------------------------------------------------------
    Rule(
        id="PLS-SUB-001", area="SUB",
        title="A subscription is created by the first subscribe; it is durable: it keeps its backlog while no consumer is connected",
        source=_MSG,
        quote="When a subscription is created, Pulsar retains all messages, even if the consumer is disconnected.",
        status="normative", applies_to=_ALL,
        note=("Creation: concepts-messaging.md#subscription-modes 'If a consumer specifies a subscription that "
              "does not exist before, the subscription is automatically created.' (broker "
              "allowAutoSubscriptionCreation=true, the default). Python consumers are always Durable."),
    ),
    Rule(
        id="PLS-SUB-002", area="SUB",
        title="Initial position Latest (the default) starts after the last message published before the subscription was created",
        source=f"{_CLI}#reader",
        quote=("Whenever a new subscription is created, it is initially positioned at the end of the topic (by default), "
               "and consumers associated with that subscription begin reading with the first message created afterward."),
        status="normative", applies_to=_ALL,
        note=f"ND: a send racing with the subscribe may or may not be seen. {_LIVE}confirmed (m1 before, m2 after: Latest gets m2).",
    ),
    Rule(
        id="PLS-SUB-003", area="SUB",
        title="Initial position Earliest starts at the first retained message",
        source=f"{_BROKER}persistent/PersistentTopic.java",
        quote="", status="inferred", applies_to=_ALL,
        note=("The docs name the option (client-libraries; Python docstring 'It could be either: "
              "InitialPosition.Earliest or InitialPosition.Latest.') but do not define it; the broker opens the "
              "new cursor at the first available position. "
              f"{_LIVE}confirmed (m1 published before the subscribe is delivered first)."),
    ),
    Rule(
        id="PLS-SUB-004", area="SUB",
        title="The initial position is ignored when the subscription already exists",
        source=f"{_CLI}#reader",
        quote=("Whenever a consumer connects to a topic using a pre-existing subscription, it begins reading from the "
               "earliest message un-acked within that subscription."),
        status="normative", applies_to=_ALL,
        note=f"{_LIVE}re-subscribing with Earliest to an existing Latest subscription resumed at its first unacked message.",
    ),
    Rule(
        id="PLS-SUB-005", area="SUB",
        title="A reconnecting consumer resumes at the first unacknowledged message; individually acked messages after it are skipped",
        source=f"{_CLI}#reader",
        quote=("Whenever a consumer connects to a topic using a pre-existing subscription, it begins reading from the "
               "earliest message un-acked within that subscription."),
        status="normative", applies_to=_ALL,
        note=("Holes: the cursor keeps individually deleted ranges (ManagedCursor individuallyDeletedMessages) and "
              "skips them on read. The C++ client groups acks for up to 100 ms and flushes them on close. "
              f"{_LIVE}m1..m4 received, m1 and m3 acked, close, resubscribe: m2, m4, then nothing."),
    ),
    Rule(
        id="PLS-SUB-006", area="SUB",
        title="Unsubscribe deletes the subscription and its backlog; a later subscribe creates a new one",
        source=f"{_PY}#Consumer.unsubscribe",
        quote=("Once the consumer is unsubscribed, no more messages will be received and subsequent new messages will "
               "not be retained for this consumer."),
        status="normative", applies_to=_ALL,
        note=("Broker: PersistentSubscription#doUnsubscribe deletes the cursor; it fails with ConsumerBusy unless the "
              "caller is the only connected consumer. "
              f"{_LIVE}after unsubscribe, a message sent, then a Latest re-subscribe: the message is not delivered."),
    ),
    # ---- seek ----------------------------------------------------------------------------
    Rule(
        id="PLS-SEEK-001", area="SEEK",
        title="Seek to a message id: the C++/Python client skips that message unless start_message_id_inclusive, so delivery resumes after it",
        source=f"{_CPPLIB}ConsumerImpl.cc",
        quote="", status="inferred", applies_to=_CPP,
        note=("Python docstring: seek 'Reset the subscription associated with this consumer to a specific message id "
              "or publish timestamp.' The broker resets the cursor to the id; the C++ client then drops messages at "
              "or before it (isPrior) unless start_message_id_inclusive ('Set the consumer to include the given "
              "position of any reset operation like Consumer::seek.'). Message-id seek is for non-partitioned "
              f"topics only. {_LIVE}seek(id of m2) -> m3, m4; with start_message_id_inclusive -> m2."),
    ),
    Rule(
        id="PLS-SEEK-002", area="SEEK",
        title="Seek to a publish time: delivery resumes at the first message whose publish time is >= that time",
        source=f"{_PY}#Consumer.seek",
        quote="Reset the subscription associated with this consumer to a specific message id or publish timestamp.",
        status="normative", applies_to=_ALL,
        note=("The >= boundary is the broker's (PersistentSubscription#resetCursor by timestamp); no client-side "
              f"filtering. ND if two messages share a publish time. {_LIVE}seek(publish time of m3) -> m3."),
    ),
    Rule(
        id="PLS-SEEK-003", area="SEEK",
        title="Seek to earliest delivers from the first retained message; seek to latest delivers only messages published afterwards",
        source=f"{_PY}#Consumer.seek",
        quote="The message id can either be a specific message or represent the first or last messages in the topic.",
        status="normative", applies_to=_ALL,
        note=f"{_LIVE}after seek(earliest) -> m1; after seek(latest) nothing until a new send m5, then m5.",
    ),
    # ---- readers -------------------------------------------------------------------------
    Rule(
        id="PLS-READER-001", area="READER",
        title="A reader from earliest reads every retained message in order",
        source=f"{_CLI}#reader",
        quote="The earliest available message in the topic.",
        status="normative", applies_to=_ALL,
        note="Listed in the docs as a reader start option. Readers are non-durable Exclusive subscriptions.",
    ),
    Rule(
        id="PLS-READER-002", area="READER",
        title="A reader from latest reads only messages published after it was created",
        source=f"{_CLI}#reader",
        quote="The latest available message in the topic.",
        status="normative", applies_to=_ALL,
        note=(f"Without inclusive, 'latest' means after the last message. {_LIVE}read_next(300) -> nothing; "
              "after a new send m6 -> m6."),
    ),
    Rule(
        id="PLS-READER-003", area="READER",
        title="A reader from a message id, not inclusive (the default), starts after that message",
        source=f"{_CPPLIB}ConsumerImpl.cc",
        quote="", status="inferred", applies_to=_ALL,
        note=("Docs: 'Some other messages between the earliest and the latest. If you select this option, you'll "
              "need to explicitly provide a message ID.' They do not say whether the message itself is read; "
              "the C++ client drops it (isPrior) unless start_message_id_inclusive. "
              f"{_LIVE}reader from id of m2 -> m3."),
    ),
    Rule(
        id="PLS-READER-004", area="READER",
        title="A reader from a message id, inclusive, starts at that message",
        source=f"{_PY}#Client.create_reader",
        quote="Set the reader to include the startMessageId or given position of any reset operation like Reader.seek",
        status="normative", applies_to=_ALL,
        note=f"{_LIVE}reader from id of m2 with start_message_id_inclusive=True -> m2.",
    ),
    # ---- subscription types --------------------------------------------------------------
    Rule(
        id="PLS-EXCL-001", area="EXCL",
        title="A second consumer on a connected Exclusive subscription is refused with ConsumerBusy",
        source=f"{_MSG}#exclusive",
        quote="If multiple consumers subscribe to a topic using the same subscription, an error occurs.",
        status="normative", applies_to=_ALL,
        note=(f"Error name: ConsumerBusyException('Exclusive consumer is already connected') in "
              f"{_BROKER}AbstractDispatcherSingleActiveConsumer.java -> ServerError ConsumerBusy -> "
              f"pulsar.ConsumerBusy. {_LIVE}confirmed."),
    ),
    Rule(
        id="PLS-EXCL-002", area="EXCL",
        title="An Exclusive consumer receives messages in publish order",
        source=f"{_CONS}#exclusive",
        quote="The first consumer receives all 10 messages, and the consuming order is the same as the producing order.",
        status="normative", applies_to=_ALL,
    ),
    Rule(
        id="PLS-SUBTYPE-001", area="SUBTYPE",
        title="A consumer whose subscription type differs from the connected consumers' type is refused with ConsumerBusy",
        source=f"{_CONS}#subscribe-to-topics",
        quote="However, a subscription can only have one subscription type at a time.",
        status="normative", applies_to=_ALL,
        note=("Broker: SubscriptionBusyException('Subscription is of different type...') in "
              f"{_BROKER}persistent/PersistentSubscription.java -> ServerError ConsumerBusy. Once every consumer "
              f"has left, the type may change. {_LIVE}Shared consumer on a connected Exclusive subscription -> "
              "ConsumerBusy 'Subscription is of different type'."),
    ),
    Rule(
        id="PLS-FAILOVER-001", area="FAILOVER",
        title="Failover on a non-partitioned topic: the first consumer in connection order is active and gets every message",
        source=f"{_MSG}#failover",
        quote="For non-partitioned topics, the broker will pick consumers in the order they subscribe to the non-partitioned topics.",
        status="withdrawn", applies_to=_ALL,
        note=("Withdrawn: docs and code disagree and the live broker follows the code. "
              f"{_BROKER}AbstractDispatcherSingleActiveConsumer.java#pickAndScheduleActiveConsumer sorts consumers "
              "by (priority, name) and, for partitionIndex -1, picks from a consistent-hash ring of consumer "
              "names keyed by the topic name (its javadoc still says 'order they subscribe'). "
              f"{_LIVE}c1 then c2 on 12 fresh topics: c1 was active on 5, c2 on 7; the hash ring predicted all 12. "
              "Replaced by PLS-FAILOVER-003. Connection order may still hold on brokers before apache/pulsar PR #19502 "
              "(2.x); not checked."),
    ),
    Rule(
        id="PLS-FAILOVER-002", area="FAILOVER",
        title="When the active Failover consumer disconnects, another connected consumer becomes active and receives the unacked messages",
        source=f"{_MSG}#failover",
        quote="When the master consumer disconnects, all (non-acknowledged and subsequent) messages are delivered to the next consumer in line.",
        status="normative", applies_to=_ALL,
        note=("'Next in line' is the broker's re-pick among the remaining consumers (see PLS-FAILOVER-003), not "
              "connection order; with two consumers the remaining one. ND: a message in flight to the old "
              f"active consumer may be received by both. {_LIVE}two consumers; closing the active one moves every "
              "unacked message to the other."),
    ),
    Rule(
        id="PLS-FAILOVER-003", area="FAILOVER",
        title="Failover on a non-partitioned topic: exactly one consumer is active and gets every message; it is picked by a consistent-hash ring of consumer names keyed by the topic name, not by connection order",
        source="static/reference/4.1.x/config/reference-configuration-broker.md#activeconsumerfailoverconsistenthashing",
        quote="For non-partitioned topics, consistent hashing is used by default.",
        status="normative", applies_to=AppliesTo(">=3.0", CLIENTS),
        note=("Added because PLS-FAILOVER-001 (connection order, from concepts-messaging.md#failover) is stale. "
              f"Code: {_BROKER}AbstractDispatcherSingleActiveConsumer.java#pickAndScheduleActiveConsumer sorts "
              "consumers by (priorityLevel, consumerName); for partitionIndex -1 the ring has 100 points per "
              "consumer at murmur3_32(name + j) & 0x7fffffff, j = 0..99, and the active consumer owns the first "
              "point >= murmur3(full topic name). The pick is redone whenever a consumer joins or leaves, so a "
              "join can switch the active consumer (applied after activeConsumerFailoverDelayTimeMillis, 1000 ms). "
              "The topic name includes the namespace, so a case cannot pin which consumer is active; the "
              "checker must accept either (or recompute the ring from the full topic name). Introduced by "
              "apache/pulsar PR #19502 (PIP-392's background); the 3.0 lower bound is assumed, not verified. "
              f"{_LIVE}hash-ring prediction matched 12/12 fresh topics; connection order would have matched 5/12."),
    ),
    Rule(
        id="PLS-SHARED-001", area="SHARED",
        title="Shared: each message is delivered to one consumer at a time; together the consumers receive every message",
        source=f"{_MSG}#shared",
        quote="Messages are delivered in a round-robin distribution across consumers, and any given message is delivered to only one consumer.",
        status="normative", applies_to=_ALL,
        note=("ND: which consumer gets which message (permits, prefetch, 20-entry round-robin chunks); even with "
              "receiver_queue_size 1 only set properties hold."),
    ),
    Rule(
        id="PLS-SHARED-002", area="SHARED",
        title="Shared: the unacked messages of a closed consumer are redelivered to the remaining consumers",
        source=f"{_MSG}#shared",
        quote=("When a consumer disconnects, all the messages that were sent to it and not acknowledged will be "
               "rescheduled for sending to the remaining consumers."),
        status="normative", applies_to=_ALL,
        note=(f"{_LIVE}s1 (queue 1) held m1 and prefetched m2; after s1 closed, s2 received m1 and m2, both with "
              "redelivery_count 0 (a close does not count as a redelivery on 4.0.8; version dependent)."),
    ),
    # ---- acknowledgement -----------------------------------------------------------------
    Rule(
        id="PLS-ACK-001", area="ACK",
        title="An individually acked message is never delivered again on that subscription",
        source=f"{_PY}#Consumer.acknowledge",
        quote="After that, the message will not be re-delivered to this consumer.",
        status="normative", applies_to=_ALL,
        note=("Holds for the subscription (not just 'this consumer') because the broker deletes the position from "
              "the cursor. Caveat: the C++ client sends grouped acks every 100 ms; a redelivery racing with an "
              "unflushed ack is dropped client-side (AckGroupingTrackerEnabled isDuplicate)."),
    ),
    Rule(
        id="PLS-ACK-002", area="ACK",
        title="Cumulative ack (Exclusive/Failover) acknowledges every message up to and including the given one",
        source=f"{_MSG}#acknowledgment",
        quote="All messages in the stream up to (and including) the provided message are not redelivered to that consumer.",
        status="normative", applies_to=_ALL,
        note=f"{_LIVE}m1..m3 received, cumulative ack of m2: backlog 3 -> 1; after reconnect only m3 is delivered.",
    ),
    Rule(
        id="PLS-ACK-003", area="ACK",
        title="Cumulative ack on Shared/Key_Shared is refused by the C++/Python client with CumulativeAcknowledgementNotAllowedError",
        source=f"{_MSG}#shared",
        quote="You cannot use cumulative acknowledgment with Shared type.",
        status="normative", applies_to=_CPP,
        note=(f"The error is client-side: {_CPPLIB}ConsumerImpl.cc#acknowledgeCumulativeAsync; nothing is sent. "
              "A Java client rejects too (different exception); the broker itself silently ignores a cumulative "
              f"ack on an individual-ack subscription. {_LIVE}confirmed (pulsar.CumulativeAcknowledgementNotAllowedError)."),
    ),
    Rule(
        id="PLS-ACK-004", area="ACK",
        title="Acknowledging an already acknowledged message is a no-op: no error, no change",
        source=f"{_BROKER}persistent/PersistentSubscription.java",
        quote="", status="inferred", applies_to=_ALL,
        note=("acknowledgeMessage on a deleted position changes nothing; the client raises nothing (acks are "
              f"fire-and-forget, receipts off). {_LIVE}acking m1 twice raised nothing; a repeated cumulative "
              "ack and an individual ack below the cumulative point left the backlog unchanged."),
    ),
    Rule(
        id="PLS-ACK-005", area="ACK",
        title="Redelivery count is 0 on first delivery and +1 each time the message is redelivered on request (nack, ack timeout, redeliver_unacked) on Shared/Key_Shared",
        source=f"{_BROKER}persistent/PersistentDispatcherMultipleConsumers.java",
        quote="", status="inferred", applies_to=_ALL,
        note=("The broker's InMemoryRedeliveryTracker counts per position on RedeliverUnacknowledgedMessages; "
              "in memory only (reset on topic unload), removed on ack. Exclusive/Failover redeliveries from C++ "
              "are position-less rewinds: count stays 0. A consumer close does not increment it on 4.0.8 "
              f"(see PLS-SHARED-002). {_LIVE}Shared nack twice: counts 0, 1, 2; redeliver_unacked: 0 -> 1."),
    ),
    # ---- negative acknowledgement --------------------------------------------------------
    Rule(
        id="PLS-NACK-001", area="NACK",
        title="C++/Python nack: redelivered after the fixed negative_ack_redelivery_delay d, inside [d, d + d/3] (+ dispatch latency); no backoff",
        source=f"{_PY}#Consumer.negative_acknowledge",
        quote="When a message is \"negatively acked\" it will be marked for redelivery after some fixed delay.",
        status="normative", applies_to=_CPP,
        note=(f"Window from {_CPPLIB}NegativeAcksTracker.cc: deadline now+d, timer period d/3. No backoff in C++. "
              f"{_LIVE}d=200 ms -> redelivered after ~270 ms on Shared (count 1, then 2)."),
    ),
    Rule(
        id="PLS-NACK-002", area="NACK",
        title="C++/Python nack delay has a floor of 100 ms",
        source=f"{_CPPLIB}NegativeAcksTracker.cc",
        quote="", status="inferred", applies_to=_CPP,
        note=f"MIN_NACK_DELAY_MILLIS = 100: the effective delay is max(d, 100 ms). {_LIVE}d=10 ms -> redelivered after ~137 ms.",
    ),
    Rule(
        id="PLS-NACK-003", area="NACK",
        title="C++/Python on Exclusive/Failover: a nack rewinds the subscription: every unacked message is delivered again, in order",
        source=f"{_CPPLIB}ConsumerImpl.cc",
        quote="", status="inferred", applies_to=_CPP,
        note=("Docs and code disagree: concepts-messaging.md#negative-acknowledgment says 'In Exclusive and Failover "
              "subscription types, consumers only negatively acknowledge the last message they receive.' The C++ "
              "client turns a targeted redelivery into redeliver-all for non-Shared types and the single-active "
              "dispatcher rewinds the cursor (apache/pulsar issues #5344, #6461). "
              f"{_LIVE}nack (delay 200 ms) redelivered ALL unacked messages in order, redelivery_count 0, after ~273 ms."),
    ),
    Rule(
        id="PLS-NACK-004", area="NACK",
        title="Java MultiplierRedeliveryBackoff: delay for redelivery count c is min(min_delay * multiplier^c, max_delay) (java client only)",
        source=f"{_MSG}#negative-acknowledgment",
        quote=("To redeliver messages with different delays, you can use the redelivery backoff mechanism by "
               "setting the number of retries to deliver the messages."),
        status="tentative", applies_to=_JAVA,
        note=("Code: apache/pulsar pulsar-client .../impl/MultiplierRedeliveryBackoff.java (next(c): c<=0 -> min; "
              "beyond maxMultiplierPow -> max). The docs' table ('redelivery count 1 -> 1 s') is next(count-1) "
              "if 'count N' means the N-th redelivery: the wording is ambiguous. Builder defaults 10 s / 10 min / "
              "x2 differ from the docs' example values. Not reachable from Python; never confirmed live here."),
    ),
    # ---- ack timeout ---------------------------------------------------------------------
    Rule(
        id="PLS-ACKTIMEOUT-001", area="ACKTIMEOUT",
        title="C++/Python: an ack timeout below 10000 ms is refused at subscribe (Python ValueError); 0/None disables it",
        source=f"{_CPPLIB}ConsumerConfiguration.cc",
        quote="", status="inferred", applies_to=_CPP,
        note=("setUnAckedMessagesTimeoutMs throws invalid_argument for 0 < t < 10000; Python skips falsy values. "
              "Java's minimum is 1 s. Docs (#acknowledgment-timeout) only say it is disabled by default. "
              f"{_LIVE}5000 and 9999 -> ValueError '... Unacknowledged message timeout should be greater than 10 "
              "seconds.'; 0 and None accepted (disabled)."),
    ),
    Rule(
        id="PLS-ACKTIMEOUT-002", area="ACKTIMEOUT",
        title="C++/Python ack timeout T, tick t=min(1000,T): an unacked message is redelivered in (ceil(T/t)*t, (ceil(T/t)+1)*t] after receive",
        source=f"{_CPPLIB}UnAckedMessageTrackerEnabled.cc",
        quote="", status="inferred", applies_to=_CPP,
        note=("Docs (#acknowledgment-timeout): 'After this acknowledgment timeout (`ackTimeout`) period, the client "
              "sends `redeliver unacknowledged messages` request to the broker'. The window is from the ring of "
              "ceil(T/t)+1 tick partitions; tracking starts when the app receives the message. Exclusive/Failover: "
              "a rewind (PLS-NACK-003). Tick not settable from Python. "
              f"{_LIVE}T=10000: redelivered 10.92 s after receive on Shared (count 1) and 10.97 s on "
              "Exclusive (count 0)."),
    ),
    Rule(
        id="PLS-REDELIVER-001", area="REDELIVER",
        title="redeliver_unacknowledged_messages: every unacked message of that consumer is delivered again (Shared: count+1; Exclusive/Failover: rewind)",
        source=f"{_PY}#Consumer.redeliver_unacknowledged_messages",
        quote="Redelivers all the unacknowledged messages.",
        status="normative", applies_to=_ALL,
        note=("The C++ client does not clear its receiver queue, so messages already prefetched are delivered "
              "from the queue and again by the broker (duplicates). "
              f"{_LIVE}Shared m1, m2 -> m1, m2 with count 1; Exclusive (m1 acked, m2 received, m3 prefetched): "
              "m3 (from the queue), m2, m3 with count 0."),
    ),
    # ---- backlog, DLQ, retry -------------------------------------------------------------
    Rule(
        id="PLS-BACKLOG-001", area="BACKLOG",
        title="The subscription backlog (admin stats msgBacklog) equals the number of published entries not yet acknowledged on it",
        source=f"{_MSG}#batching",
        quote="Therefore, the backlog size represents the total number of batches instead of the total number of messages.",
        status="normative", applies_to=_ALL,
        note=("Counts entries (a batch is one entry). Acks are grouped by the C++ client for up to 100 ms and "
              f"stats are computed asynchronously: wait before reading. {_LIVE}3 sent -> 3; cumulative ack of "
              "the 2nd -> 1; m1, m3 of 4 individually acked -> 2."),
    ),
    Rule(
        id="PLS-DLQ-001", area="DLQ",
        title="The default dead-letter topic name is <topic>-<subscription>-DLQ (C++: per partition, the partition's name)",
        source=f"{_MSG}#dead-letter-topic",
        quote="The default dead letter topic uses this format:",
        status="normative", applies_to=_ALL,
        note=("The format that follows in the docs is '<topicname>-<subscriptionname>-DLQ'. C++ builds it from the "
              f"consumer's topic ({_CPPLIB}ConsumerImpl.cc), so each partition consumer of a partitioned topic uses "
              "'<T>-partition-<i>-<sub>-DLQ'. Docs: 'dead letter topic is enabled in Shared and Key_Shared "
              f"subscription types.' {_LIVE}Shared, max_redeliver_count 1: m1 delivered with count 0 and 1, the "
              "second nack moved it to '<ns>/t-s-DLQ' with properties ORIGIN_MESSAGE_ID '(l,e,-1,-1)' and REAL_TOPIC."),
    ),
    Rule(
        id="PLS-RETRY-001", area="RETRY",
        title="The default retry-letter topic name is <topic>-<subscription>-RETRY (java client only)",
        source=f"{_MSG}#retry-letter-topic",
        quote="Use the Java client to specify the name of the retry letter topic.",
        status="tentative", applies_to=_JAVA,
        note=("Docs: 'The default retry letter topic uses this format:' followed by '<topicname>-<subscriptionname>-RETRY'; "
              "Java ConsumerBuilderImpl agrees on current versions (before apache/pulsar #9327 the default was "
              "'<namespace>/<subscription>-RETRY', and the builder still falls back to it when that topic exists). "
              "C++/Python have no retry letter topic. Not confirmable here (no Java client): tentative."),
    ),
)


# --------------------------------------------------------------------------- registry


def build_registry(rules: tuple[Rule, ...] | list[Rule]) -> dict[str, Rule]:
    """Validate a rule table and index it by id. Raises ``RuleRegistryError`` naming the problem."""
    registry: dict[str, Rule] = {}
    for r in rules:
        if not isinstance(r, Rule):
            raise RuleRegistryError(f"registry entries must be Rule values, got {r!r}")
        if r.id in registry:
            raise RuleRegistryError(f"duplicate rule id {r.id}: ids are unique and never reused")
        registry[r.id] = r
    return registry


_REGISTRY = build_registry(RULES)


def rule(rule_id: str) -> Rule:
    """The rule with this id; ``KeyError`` naming close ids when it is not registered."""
    try:
        return _REGISTRY[rule_id]
    except KeyError:
        area = RULE_ID_RE.match(rule_id)
        same_area = sorted(i for i in _REGISTRY if area and i.startswith(f"PLS-{area.group('area')}-"))
        hint = f"; rules in that area: {', '.join(same_area)}" if same_area else f"; known areas: {', '.join(rules_by_area())}"
        raise KeyError(f"unknown rule id {rule_id!r}{hint}") from None


def rules_by_area() -> dict[str, tuple[Rule, ...]]:
    """Rules grouped by area, in registry order."""
    out: dict[str, list[Rule]] = {}
    for r in RULES:
        out.setdefault(r.area, []).append(r)
    return {area: tuple(rs) for area, rs in out.items()}


def active_rules() -> tuple[Rule, ...]:
    """Every rule that is not withdrawn."""
    return tuple(r for r in RULES if r.status != "withdrawn")


def applies(r: Rule, *, broker_version: str, client: str) -> bool:
    """Does rule ``r`` speak about this broker version and client? Withdrawn rules apply nowhere."""
    if r.status == "withdrawn":
        return False
    if client not in r.applies_to.clients:
        return False
    version = _version_tuple(broker_version)
    return all(_OPS[op](version, bound) for op, bound in _parse_spec(r.applies_to.brokers))


def to_json(indent: int | None = 2) -> str:
    """The registry as JSON (a list of rule objects in registry order), for reports and other tools."""
    return json.dumps([_rule_dict(r) for r in RULES], indent=indent, ensure_ascii=False)


def _rule_dict(r: Rule) -> dict:
    d = asdict(r)
    d["applies_to"] = {"brokers": r.applies_to.brokers, "clients": list(r.applies_to.clients)}
    return d
