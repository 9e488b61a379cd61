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

from reference_model import releases
from reference_model.vendors import APACHE, VENDORS

STATUSES = ("normative", "inferred", "tentative", "withdrawn")
CLIENTS = ("python", "cpp", "java", "go")
# The clients the rule table was written with and confirmed on; a rule speaks about the Go client (issue 19,
# docs/go-driver.md) only where its applies_to names "go", after a live run with the Go client confirmed it.
FIRST_CLIENTS = ("python", "cpp", "java")
RULE_ID_RE = re.compile(r"^PLS-(?P<area>[A-Z]+)-(?P<num>\d{3})$")
_VERSION_CLAUSE_RE = re.compile(r"^(?P<op>>=|<=|==|!=|>|<)?\s*(?P<version>\d+(?:\.\d+){0,2})$")


class RuleRegistryError(ValueError):
    """The rule table breaks one of the registry's invariants; the message says which rule and why."""


# --------------------------------------------------------------------------- version specs


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
        clauses.append((m.group("op") or "==", releases.version_tuple(m.group("version"))))
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
    clients: tuple[str, ...] = FIRST_CLIENTS
    # the vendor profiles (reference_model.vendors) under which the rule holds: Apache's rules hold
    # under every profile; a vendor's own rules name that vendor only
    vendors: tuple[str, ...] = VENDORS

    def __post_init__(self) -> None:
        _parse_spec(self.brokers)  # raises RuleRegistryError on a malformed spec
        if not isinstance(self.vendors, tuple) or not self.vendors or any(v not in VENDORS for v in self.vendors):
            raise RuleRegistryError(f"applies_to.vendors must be a non-empty tuple of {VENDORS}, got {self.vendors!r}")
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

_ALL = AppliesTo("*", FIRST_CLIENTS)
_GO = AppliesTo("*", ("go",))
# every client, the Go client confirmed live: the rule passed in Go runs of its cases on broker 4.0.8 (pulsar-client-go
# 0.19.0, 28 Nov 2026; the cases that list go; docs/go-driver.md)
_ALL_GO = AppliesTo("*", CLIENTS)
_CPP = AppliesTo("*", ("python", "cpp"))
_JAVA = AppliesTo("*", ("java",))
_JAVA_GO = AppliesTo("*", ("java", "go"))

_MSG = "docs/concepts-messaging.md"
_CLI = "docs/concepts-clients.md"
_CONS = "docs/client-libraries-consumers.md"
_PY = "apache/pulsar-client-python pulsar/__init__.py"
_CPPLIB = "apache/pulsar-client-cpp lib/"
_BROKER = "apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/service/"
_JCLI = "apache/pulsar pulsar-client/src/main/java/org/apache/pulsar/client/impl/"  # Java client 4.0.8, read

_LIVE = "Live (broker 4.0.8, pulsar-client 3.13.0): "


# --------------------------------------------------------------------------- the rules

RULES: tuple[Rule, ...] = (
    # ---- topic names -------------------------------------------------------------------
    Rule(
        id="PLS-TOPIC-001", area="TOPIC",
        title="A short topic name x expands to persistent://public/default/x; tenant/ns/x to persistent://tenant/ns/x",
        source=f"{_MSG}#topics",
        quote="If no tenant or namespace is specified when a client creates a topic, the topic is created in the default tenant and namespace.",
        status="normative", applies_to=_ALL_GO,
        note=("The same section: 'The default is persistent, so if you do not specify a type, the topic is "
              f"persistent.' C++ parsing: {_CPPLIB}TopicName.cc. Cases see it through the topic a message "
              "reports (targets map short names into their own namespace)."),
    ),
    Rule(
        id="PLS-TOPIC-002", area="TOPIC",
        title="Partition i of topic T is the topic T-partition-i",
        source=f"{_CPPLIB}TopicName.cc",
        quote="", status="inferred", applies_to=_ALL_GO,
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
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("Docs give the form '{persistent|non-persistent}://tenant/namespace/topic' but not what happens "
              "otherwise; the C++ client refuses the name before contacting the broker (ResultInvalidTopicName). "
              "The local name is not validated and may contain '/'. "
              f"{_LIVE}subscribe and create_producer on 'bad://public/default/x', 'a/b', "
              "'persistent://te nant/ns/x', 'persistent://public/def ault/x' all raise pulsar.InvalidTopicName."),
    ),
    Rule(
        id="PLS-TOPIC-004", area="TOPIC",
        title="An admin delete of a topic that is not forced is refused (HTTP 412) while a producer, consumer or reader is connected to it; with none connected it succeeds, forced or not",
        source=f"{_BROKER}persistent/PersistentTopic.java",
        quote="", status="inferred", applies_to=_ALL,
        note=("PersistentTopic#delete(failIfHasSubscriptions=false, failIfHasBacklogs=false, closeIfClientsConnected=false) "
              "fails with TopicBusyException 'Topic has N connected producers/consumers' when currentUsageCount() > 0; the "
              "admin API (apache/pulsar pulsar-broker/.../admin/v2/PersistentTopics.java#deleteTopic: 'The topic cannot be "
              "deleted if delete is not forcefully and there's any active subscription or producer connected to the it.') "
              "answers 412 'Topic has active producers/subscriptions'. A trace names the refusal NotAllowedError. A forced "
              "delete (deleteForcefully) disconnects the clients first; they reconnect and auto-create the topic again "
              "(apache/pulsar discussion #20920), which the model does not follow. Subscriptions without consumers do "
              "not stop a delete (PLS-TOPIC-005). A partitioned topic is deleted through .../partitions, refused while "
              "any partition has a client. Case topic-delete-needs-no-clients. Live 4.0.8 (2 Dec 2026, pulsar-client "
              "3.13.0 and Java 4.0.8): refused with 412 while a producer or a consumer was connected, a partitioned "
              "topic's delete too; deleted once they closed, forced or not."),
    ),
    Rule(
        id="PLS-TOPIC-005", area="TOPIC",
        title="A deleted topic's messages and subscriptions are gone: a later subscribe or send creates an empty topic of that name, a subscription of the old name is a new one, and no message sent before the delete is delivered; from 2.11.0 its schema goes with it (not with one partition's delete)",
        source=f"{_BROKER}persistent/PersistentTopic.java",
        quote="", status="inferred", applies_to=_ALL,
        note=("PersistentTopic#delete unsubscribes every subscription (unsubscribe(sub) for each) and deletes the managed "
              "ledger (ledger.asyncDelete), then removes the topic from the broker's cache; with allowAutoTopicCreation "
              "(the default) the next producer or consumer creates a new, empty topic with a new ledger. Stats on a "
              "subscription the delete removed fail with SubscriptionNotFound until a subscribe makes it again (at its "
              "initial position, PLS-SUB-002/003). Case topic-delete-needs-no-clients. Live 4.0.8 (2 Dec 2026, "
              "Python and Java): stats on the removed subscription 404; a new Earliest subscribe got nothing of m1, m2, "
              "then m3 sent after; backlog 1. The schema: PersistentTopic#delete -> AbstractTopic#deleteSchema -> "
              "SchemaRegistryService#deleteSchemaStorage deletes the ledger itself (apache/pulsar PR #14608, 2.11.0; "
              "before it the REST delete kept it, deleteSchema=false), so the next schema is version 0, checked against "
              "nothing (PLS-SCHEMA-001 judges the listing); a partitioned topic's goes when the whole topic is deleted, "
              "not with one partition (PR #21574, 2.11.4 and 3.2.0; before it the partition's delete took it; the later "
              "3.0/3.1 releases are not recorded: either, until a listing shows which). Case topic-delete-takes-schema, "
              "live 4.0.8 (6 Dec 2026, Python and Java)."),
    ),
    # ---- message ids and message content ------------------------------------------------
    Rule(
        id="PLS-MSGID-001", area="MSGID",
        title="A message id is (ledger, entry, partition, batch_index); partition -1 on non-partitioned topics, batch_index -1 on non-batched messages",
        source=f"{_CPPLIB}MessageIdImpl.h",
        quote="", status="inferred", applies_to=_ALL_GO,
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
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("MessageId operator< is lexicographic on (ledger, entry, batch_index); the partition takes part "
              "in == but not in <, so ids of different partitions are not ordered. Entry ids grow by one per "
              f"entry within a ledger; a new ledger has a larger id. {_LIVE}consecutive sends got (81,0) then (81,1)."),
    ),
    Rule(
        id="PLS-MSG-001", area="MSG",
        title="Payload, properties, partition key, ordering key and event time arrive unchanged; event time is 0 when unset",
        source=f"{_MSG}#messages",
        quote="If nothing is set to event time, the value is `0`.",
        status="normative", applies_to=_ALL_GO,
        note="The same table lists key, properties and event time as message components carried with the payload.",
    ),
    Rule(
        id="PLS-MSG-002", area="MSG",
        title="A partition key given as bytes (the Java client's keyBytes) travels as its Base64 text, flagged: a Java consumer gets the bytes back (getKeyBytes) and the text from getKey(), a C++/Python consumer the text only; Key_Shared routes the message by the bytes. The Python and Go clients cannot send one (InvalidArgument)",
        source="apache/pulsar pulsar-client/src/main/java/org/apache/pulsar/client/impl/TypedMessageBuilderImpl.java",
        quote="", status="inferred", applies_to=_ALL,
        note=("Java TypedMessageBuilderImpl#keyBytes sets partition_key to Base64(bytes) and partition_key_b64_encoded; "
              "MessageImpl#getKeyBytes decodes it when hasBase64EncodedKey(). The broker's sticky key "
              "(apache/pulsar pulsar-common/.../protocol/Commands.java#peekStickyKey) is the ordering key, else the "
              "Base64-decoded partition key when flagged, else its UTF-8 bytes: a Key_Shared subscription hashes the "
              "bytes (PLS-KEYSHARED-001). The C++ client's Message::getPartitionKey returns the stored text and has no "
              "flag accessor, so a Python consumer sees the Base64 text. The Python client's partition_key must be a "
              "str (apache/pulsar-client-python pulsar/__init__.py _build_msg: _check_type_or_none(str, partition_key)), "
              "Go's ProducerMessage.Key is a string sent without the flag: both cannot send a key as bytes (the trace's "
              "key_bytes is refused, PLS-GO-001 for Go). Not followed: a key given as bytes on a partitioned or batching "
              "producer (which text the Java router and the KeyBased batcher use), and dead-letter or retry copies of "
              "such a message. Cases message-key-bytes-java, cross-message-key-bytes. Live 4.0.8 (2 Dec 2026, Java "
              "4.0.8 and pulsar-client 3.13.0): keyBytes(ff0001) reached the Sticky consumer owning slot 16405 (the "
              "bytes'), not 47170 (its text '/wAB''s); the Java consumer reported key '/wAB' and key_bytes ff0001, the "
              "Python one key '/wAB' only."),
    ),
    # ---- producers -----------------------------------------------------------------------
    Rule(
        id="PLS-PROD-001", area="PROD",
        title="Producer sequence ids: the first message gets initial_sequence_id+1 (0 by default), then +1 per message; last_sequence_id reports the last one",
        source=f"{_CPPLIB}ProducerImpl.cc",
        quote="", status="inferred", applies_to=_ALL_GO,
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
        status="normative", applies_to=_ALL_GO,
    ),
    # ---- subscriptions -------------------------------------------------------------------
    Rule(
        id="PLS-SUB-001", area="SUB",
        title="A subscription is created by the first subscribe; it is durable: it keeps its backlog while no consumer is connected",
        source=_MSG,
        quote="When a subscription is created, Pulsar retains all messages, even if the consumer is disconnected.",
        status="normative", applies_to=_ALL_GO,
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
        status="normative", applies_to=_ALL_GO,
        note=(f"ND: a send racing with the subscribe may or may not be seen. {_LIVE}confirmed (m1 before, m2 after: Latest "
              "gets m2). An async send in flight at the subscribe is in the subscription or not, as the broker stored it "
              "after the cursor or before; of one producer's sends it is a suffix. The checker follows what the "
              "subscription's consumers received (FeatureOps.latest_start_in_flight; case "
              "latest-with-async-sends-in-flight: live 4.0.8, a 3 MB async send after the cursor with C++ and Go)."),
    ),
    Rule(
        id="PLS-SUB-003", area="SUB",
        title="Initial position Earliest starts at the first retained message",
        source=f"{_BROKER}persistent/PersistentTopic.java",
        quote="", status="inferred", applies_to=_ALL_GO,
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
        status="normative", applies_to=_ALL_GO,
        note=f"{_LIVE}re-subscribing with Earliest to an existing Latest subscription resumed at its first unacked message.",
    ),
    Rule(
        id="PLS-SUB-005", area="SUB",
        title="A reconnecting consumer resumes at the first unacknowledged message; individually acked messages after it are skipped",
        source=f"{_CLI}#reader",
        quote=("Whenever a consumer connects to a topic using a pre-existing subscription, it begins reading from the "
               "earliest message un-acked within that subscription."),
        status="normative", applies_to=_ALL_GO,
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
        status="normative", applies_to=_ALL_GO,
        note=("Broker: PersistentSubscription#doUnsubscribe deletes the cursor; it fails with ConsumerBusy unless the "
              "caller is the only connected consumer. "
              f"{_LIVE}after unsubscribe, a message sent, then a Latest re-subscribe: the message is not delivered."),
    ),
    Rule(
        id="PLS-SUB-007", area="SUB",
        title="A NonDurable subscription goes away with its last consumer: its position is not kept, stats then fail with SubscriptionNotFound, and a new subscribe starts at its initial position (Latest by default: messages sent meanwhile are never seen) (java client only)",
        source=f"{_MSG}#subscription-modes",
        quote=("Once a broker stops, the cursor is lost and can never be recovered, so that messages can not continue "
               "to be consumed from the last consumed position."),
        status="normative", applies_to=_JAVA,
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): non-durable-java passed. '
              f"The docs speak of a broker restart; the code goes further: {_BROKER}persistent/PersistentSubscription.java"
              "#removeConsumer closes a non-durable subscription once it has no consumer and PersistentTopic removes it; "
              "a later subscribe creates a new NonDurableCursorImpl at the initial position (Latest: after the last "
              "entry; Earliest: the first). Only the Java client sets subscriptionMode; the Python client cannot "
              "(InvalidArgument). While it has consumers it behaves as a durable one (acks, redeliveries); it does not "
              "keep data from being deleted (PLS-RETENTION-001). To be confirmed live (case non-durable-java)."),
    ),
    Rule(
        id="PLS-SUB-008", area="SUB",
        title="On a persistent topic, a NonDurable subscribe to a name a durable subscription has, or a durable subscribe to a name a connected NonDurable subscription has, is refused with NotAllowedError (java client only)",
        source=f"{_BROKER}persistent/PersistentTopic.java",
        quote="", status="inferred", applies_to=_JAVA,
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): non-durable-name-taken-java passed. '
              "getNonDurableSubscription: 'Durable subscription with the same name already exists.' "
              "(NotAllowedException -> ServerError NotAllowed -> Java NotAllowedException). Docs vs code: "
              "concepts-messaging.md#subscription-modes says 'A durable subscription and a non-durable subscription "
              "can have the same name, they are independent of each other.' The converse: getDurableSubscription refuses "
              "a durable subscribe while a NonDurable cursor holds the name, 'NonDurable subscription with the same name "
              "already exists.' (live 4.0.8, Java 4.0.8, 5 Dec 2026: case durable-name-taken-by-non-durable). "
              "A non-persistent topic has no durable subscriptions (NonPersistentTopic#subscribe ignores the mode): "
              "there the type check answers, e.g. ConsumerBusy for Shared next to Failover (live 4.0.8, Java campaign "
              "2026-11-27, regression pls-sub-008-wrong-error-bbd35633b035)."),
    ),
    Rule(
        id="PLS-SUB-009", area="SUB",
        title="The admin API's create-subscription is refused on a non-persistent topic (HTTP 400) and for a name the topic already has (HTTP 409); on a persistent topic that does not exist it makes the topic, non-partitioned, and the subscription",
        source="apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/admin/v2/PersistentTopics.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("PersistentTopics#createSubscription refuses a non-persistent name before anything else: 'Create "
              "subscription on non-persistent topic can only be done through client' (BAD_REQUEST; a trace names it "
              "OtherError). PersistentTopicsBase#internalCreateSubscriptionForNonPartitionedTopic answers CONFLICT "
              "'Subscription already exists for topic' (a trace names it Conflict) and otherwise gets the topic with "
              "creation allowed (allowAutoTopicCreation, the default, non-partitioned), so a later producer writes to "
              "that topic and the subscription's first consumer starts where the admin call put it (PLS-SUB-002/003). "
              "A partitioned name fans out to its partitions: 409 if any has the name. Live 4.0.8 (5 Dec 2026, the "
              "admin API): 409 for t and for a 2-partition u, 400 on non-persistent://, and on a missing t an Earliest "
              "subscription that got m1, sent after (cases create-subscription-refused, "
              "create-subscription-makes-topic)."),
    ),
    # ---- seek ----------------------------------------------------------------------------
    Rule(
        id="PLS-SEEK-001", area="SEEK",
        title="Seek to a message id: the client skips that message unless start_message_id_inclusive, so delivery resumes after it (C++/Python measured; the Java 4.0.8 source reads the same, either accepted until confirmed live)",
        source=f"{_CPPLIB}ConsumerImpl.cc",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("Python docstring: seek 'Reset the subscription associated with this consumer to a specific message id "
              "or publish timestamp.' The broker resets the cursor to the id; the C++ client then drops messages at "
              "or before it (isPrior) unless start_message_id_inclusive ('Set the consumer to include the given "
              "position of any reset operation like Consumer::seek.'). Message-id seek is for non-partitioned "
              f"topics only. {_LIVE}seek(id of m2) -> m3, m4; with start_message_id_inclusive -> m2. "
              f"Java 4.0.8: {_JCLI}ConsumerImpl.java#seekAsyncInternal sets startMessageId to the seek id on "
              "success, and messageReceived drops a message of that entry at or before it (isPriorEntryIndex / "
              "isPriorBatchIndex) unless resetIncludeHead (startMessageIdInclusive): the same exclusive seek as C++. "
              "Live 4.0.8 with the Java client 4.0.8: seek(id of m2) -> m3; with startMessageIdInclusive -> m2 "
              "(older Java clients did not filter, an inclusive seek for non-batched messages). Cases seek-by-id-java, cross-seek-exclusive. "
              "Go 0.19.0 (apache/pulsar-client-go pulsar/consumer_partition.go): Seek keeps the id, the reconnect the "
              "broker forces makes it startMessageID, and MessageReceived drops a message at or before it "
              "(messageShouldBeDiscarded) unless StartMessageIDInclusive, and also acks it, where C++ leaves it in "
              "the backlog (Profile.seek_skip_acks: the backlog after such a seek is one less, PLS-BACKLOG-001 judges "
              "it; with other consumers on the subscription who gets and acks it is not modelled). Live 4.0.8 with Go "
              "0.19.0: case seek-by-id-java, m3 and m2; case backlog-after-seek-by-id-go, backlog 4 (C++: 5)."),
    ),
    Rule(
        id="PLS-SEEK-002", area="SEEK",
        title="Seek to a publish time: delivery resumes at the first message whose publish time is >= that time",
        source=f"{_PY}#Consumer.seek",
        quote="Reset the subscription associated with this consumer to a specific message id or publish timestamp.",
        status="normative", applies_to=_ALL_GO,
        note=("The >= boundary is the broker's (PersistentSubscription#resetCursor by timestamp); no client-side "
              f"filtering. ND if two messages share a publish time. {_LIVE}seek(publish time of m3) -> m3. "
              "On a consumer of a partitioned topic every partition moves to its own first message at or after the "
              "time (Java MultiTopicsConsumerImpl#seekAsync(long) and C++ MultiTopicsConsumerImpl::seekAsync(uint64_t) "
              "seek all partitions; Go v0.19.0 consumer_impl.go SeekByTime loops them); a message whose send overlaps "
              "the reference's, or one in a batch, may fall on either side (not followed). Case seek-partitioned."),
    ),
    Rule(
        id="PLS-SEEK-003", area="SEEK",
        title="Seek to earliest delivers from the first retained message; seek to latest delivers only messages published afterwards",
        source=f"{_PY}#Consumer.seek",
        quote="The message id can either be a specific message or represent the first or last messages in the topic.",
        status="normative", applies_to=_ALL_GO,
        note=(f"{_LIVE}after seek(earliest) -> m1; after seek(latest) nothing until a new send m5, then m5. "
              "The Go client's Seek refuses its own EarliestMessageID()/LatestMessageID() (partition -1, "
              "apache/pulsar-client-go pulsar/consumer_impl.go checkMsgIDPartition); a Go user seeks with "
              "NewMessageID(-1, -1, -1, 0) or (MaxInt64, MaxInt64, -1, 0), the ids Java sends for earliest and "
              "latest (the Go driver does). Live 4.0.8 with Go 0.19.0: case seek-earliest-latest. On a consumer of a "
              "partitioned topic Java and C++ move every partition (MultiTopicsConsumerImpl#seekAsync: earliest and "
              "latest go to seekAllAsync); the Go client refuses Seek by id on a consumer of more than one partition "
              "(consumer_impl.go Seek: \"for partition topic, seek command should perform on the individual "
              "partitions\", SeekFailed), and its pattern and multi-topic consumers refuse every seek (consumer_regex.go, "
              "consumer_multitopic.go; live 4.0.8, regressions pls-seek-003-unexpected-rejection-f1ec1572dc9b, "
              "pls-seek-002-unexpected-rejection-79e82d75587a). The C++ client seeks every partition to earliest or latest since 3.6.0 "
              "(apache/pulsar-client-cpp PR #426); before, it answered OperationNotSupported (pulsar-client-python "
              "issue #213). Cases seek-partitioned, seek-partitioned-go, up-java-b-seek-partitioned-latest."),
    ),
    Rule(
        id="PLS-SEEK-004", area="SEEK",
        title="An admin reset of a subscription's cursor (resetcursor: a message id, a timestamp, earliest or latest) moves it for every consumer: the next delivery is the first message at or after the reset point (the message itself for an id, after it with isExcluded), and nothing before it is delivered again",
        source=f"{_BROKER}persistent/PersistentSubscription.java",
        quote="", status="inferred", applies_to=_ALL,
        note=("Admin: POST /admin/v2/persistent/{t}/{ns}/{topic}/subscription/{sub}/resetcursor/{timestamp} and "
              ".../resetcursor with a ResetCursorData body (ledgerId, entryId, partitionIndex, batchIndex, isExcluded). "
              "PersistentSubscription#resetCursor disconnects the subscription's consumers, resets the cursor "
              "(ManagedCursorImpl#asyncResetCursor: acks at or after the point forgotten) and lets them reconnect. A "
              "timestamp goes through PersistentMessageFinder: the newest entry published before it "
              "(MessageImpl.isEntryPublishedEarlierThan), then the next: the first published at or after it, as a "
              "client's seek by time (PLS-SEEK-002). Unlike a client's seek by id (PLS-SEEK-001), no client filters "
              "the message at the point: it is delivered. No client knows of the reset, so a connected consumer keeps "
              "what it had prefetched (a copy may surface once). A reset back over individually acked messages meets "
              "KD-001's backlog bug on 4.0.8, as a seek does. Case seek-admin-reset-cursor. Live 4.0.8 (2 Dec 2026, "
              "Python and Java, 3 runs): to m2 -> m2 (no client filter); to m2 excluded -> m3; to the publish time of m4 "
              "-> m4; latest -> nothing; earliest -> m1. The body's flag is the JSON property 'excluded' (an "
              "'isExcluded' key is ignored: the first live run got m2). An ack still in the client's 100 ms group when "
              "the reset lands would ack again after it: the case waits 300 ms after its acks."),
    ),
    # ---- readers -------------------------------------------------------------------------
    Rule(
        id="PLS-READER-001", area="READER",
        title="A reader from earliest reads every retained message in order",
        source=f"{_CLI}#reader",
        quote="The earliest available message in the topic.",
        status="normative", applies_to=_ALL_GO,
        note="Listed in the docs as a reader start option. Readers are non-durable Exclusive subscriptions.",
    ),
    Rule(
        id="PLS-READER-002", area="READER",
        title="A reader from latest reads only messages published after it was created",
        source=f"{_CLI}#reader",
        quote="The latest available message in the topic.",
        status="normative", applies_to=_ALL_GO,
        note=(f"Without inclusive, 'latest' means after the last message. {_LIVE}read_next(300) -> nothing; "
              "after a new send m6 -> m6."),
    ),
    Rule(
        id="PLS-READER-003", area="READER",
        title="A reader from a message id, not inclusive (the default), starts after that message",
        source=f"{_CPPLIB}ConsumerImpl.cc",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("Docs: 'Some other messages between the earliest and the latest. If you select this option, you'll "
              "need to explicitly provide a message ID.' They do not say whether the message itself is read; "
              "the C++ client drops it (isPrior) unless start_message_id_inclusive. "
              f"{_LIVE}reader from id of m2 -> m3. The Go client (0.19.0) drops it too "
              "(pulsar/consumer_partition.go messageShouldBeDiscarded) given the id it holds for m2, which says "
              "batch index 0 for a message stored alone: with batch index -1 the comparison lets m2 through. "
              "Live 4.0.8 with Go 0.19.0: case reader-from-message."),
    ),
    Rule(
        id="PLS-READER-004", area="READER",
        title="A reader from a message id, inclusive, starts at that message",
        source=f"{_PY}#Client.create_reader",
        quote="Set the reader to include the startMessageId or given position of any reset operation like Reader.seek",
        status="normative", applies_to=_ALL_GO,
        note=(f"{_LIVE}reader from id of m2 with start_message_id_inclusive=True -> m2. From latest, inclusive, the Go "
              "client starts at the topic's (each partition's) last message: pulsar-client-go v0.19.0 "
              "consumer_partition.go newPartitionConsumer asks for the last message id and seeks there when the consumer "
              "is made (Profile.latest_inclusive_starts_at_last); C++ and Java do that only inside hasMessageAvailable. "
              "Live 4.0.8 (5 Dec 2026): cases reader-partitioned-latest-inclusive-go and -latest-inclusive."),
    ),
    # ---- subscription types --------------------------------------------------------------
    Rule(
        id="PLS-EXCL-001", area="EXCL",
        title="A second consumer on a connected Exclusive subscription is refused with ConsumerBusy",
        source=f"{_MSG}#exclusive",
        quote="If multiple consumers subscribe to a topic using the same subscription, an error occurs.",
        status="normative", applies_to=_ALL_GO,
        note=(f"Error name: ConsumerBusyException('Exclusive consumer is already connected') in "
              f"{_BROKER}AbstractDispatcherSingleActiveConsumer.java -> ServerError ConsumerBusy -> "
              f"pulsar.ConsumerBusy. {_LIVE}confirmed."),
    ),
    Rule(
        id="PLS-EXCL-002", area="EXCL",
        title="An Exclusive consumer receives messages in publish order",
        source=f"{_CONS}#exclusive",
        quote="The first consumer receives all 10 messages, and the consuming order is the same as the producing order.",
        status="normative", applies_to=_ALL_GO,
    ),
    Rule(
        id="PLS-SUBTYPE-001", area="SUBTYPE",
        title="A consumer whose subscription type differs from the connected consumers' type is refused with ConsumerBusy",
        source=f"{_CONS}#subscribe-to-topics",
        quote="However, a subscription can only have one subscription type at a time.",
        status="normative", applies_to=_ALL_GO,
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
        status="normative", applies_to=_ALL_GO,
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
        status="normative", applies_to=_ALL_GO,
        note=("ND: which consumer gets which message (permits, prefetch, 20-entry round-robin chunks); even with "
              "receiver_queue_size 1 only set properties hold."),
    ),
    Rule(
        id="PLS-SHARED-002", area="SHARED",
        title="Shared: the unacked messages of a closed consumer are redelivered to the remaining consumers",
        source=f"{_MSG}#shared",
        quote=("When a consumer disconnects, all the messages that were sent to it and not acknowledged will be "
               "rescheduled for sending to the remaining consumers."),
        status="normative", applies_to=_ALL_GO,
        note=(f"{_LIVE}s1 (queue 1) held m1 and prefetched m2; after s1 closed, s2 received m1 and m2, both with "
              "redelivery_count 0 (a close does not count as a redelivery on 4.0.8; version dependent)."),
    ),
    Rule(
        id="PLS-SHARED-003", area="SHARED",
        title="Shared with priority levels: a consumer gets a message only when no consumer of a higher priority (lower number) has permits (java client only)",
        source="static/reference/4.0.x/client/client-configuration-consumer.md#prioritylevel",
        quote=("In Shared subscription type, the broker first dispatches messages to the max priority level consumers "
               "if they have permits."),
        status="normative", applies_to=_JAVA,
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): shared-priority-java passed. '
              f"{_BROKER}AbstractDispatcherMultipleConsumers.java#getNextConsumer (consumers sorted by priority, round "
              "robin within a level, a lower level only when no consumer above has permits); the page goes on: "
              "'Otherwise, the broker considers next priority level consumers.' Permits are hidden, so the checker "
              "forbids a lower-priority consumer a message only when a higher-priority one was connected before the "
              "message became available and cannot have filled its receiver queue (a client refills permits after "
              "half its queue: at least q - (q//2 - 1) messages must be queued for zero permits). Key_Shared ignores "
              "priority here. Python cannot set priorityLevel (InvalidArgument). To be confirmed live "
              "(case shared-priority-java)."),
    ),
    # ---- acknowledgement -----------------------------------------------------------------
    Rule(
        id="PLS-ACK-001", area="ACK",
        title="An individually acked message is never delivered again on that subscription",
        source=f"{_PY}#Consumer.acknowledge",
        quote="After that, the message will not be re-delivered to this consumer.",
        status="normative", applies_to=_ALL_GO,
        note=("Holds for the subscription (not just 'this consumer') because the broker deletes the position from "
              "the cursor. Caveat: the C++ client sends grouped acks every 100 ms; a redelivery racing with an "
              "unflushed ack is dropped client-side (AckGroupingTrackerEnabled isDuplicate). A rewind the consumer "
              "asks for (redeliver_unacked, seek) right after an ack may reach the cursor first: the broker applies an "
              "ack through a chain of futures (Consumer#messageAcked) and rewinds at once (live 4.0.8, Java, "
              "acknowledgmentGroupTime 0, 3 runs in 60 of case up-java-a-spc-redelivery-failover: the four messages "
              "acked within 5 ms before redeliverUnacknowledgedMessages came back); within the ack-grouping band such a "
              "copy is not judged."),
    ),
    Rule(
        id="PLS-ACK-002", area="ACK",
        title="Cumulative ack (Exclusive/Failover) acknowledges every message up to and including the given one",
        source=f"{_MSG}#acknowledgment",
        quote="All messages in the stream up to (and including) the provided message are not redelivered to that consumer.",
        status="normative", applies_to=_ALL_GO,
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
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("acknowledgeMessage on a deleted position changes nothing; the client raises nothing (acks are "
              f"fire-and-forget, receipts off). {_LIVE}acking m1 twice raised nothing; a repeated cumulative "
              "ack and an individual ack below the cumulative point left the backlog unchanged."),
    ),
    Rule(
        id="PLS-ACK-005", area="ACK",
        title="Redelivery count is 0 on first delivery and +1 each time the message is redelivered on request (nack, ack timeout, redeliver_unacked) on Shared/Key_Shared",
        source=f"{_BROKER}persistent/PersistentDispatcherMultipleConsumers.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("The broker's InMemoryRedeliveryTracker counts per position on RedeliverUnacknowledgedMessages; "
              "in memory only (reset on topic unload), removed on ack: on any individual ack of the entry, so a "
              "batch-index ack of one message of a batch makes the rest count from 0 again once it reaches the broker "
              "(PersistentSubscription#acknowledgeMessage -> getRedeliveryTracker().removeBatch, 4.0.8 source; live "
              "4.0.8, Java, regression pls-ack-005-wrong-redelivery-count-a31e9da696b3). Exclusive/Failover redeliveries from C++ "
              "are position-less rewinds: count stays 0. A consumer close does not increment it on 4.0.8 "
              f"(see PLS-SHARED-002). {_LIVE}Shared nack twice: counts 0, 1, 2; redeliver_unacked: 0 -> 1."),
    ),
    Rule(
        id="PLS-ACK-006", area="ACK",
        title="Cumulative ack on Shared/Key_Shared is refused by the Java client with InvalidConfiguration; nothing is acked",
        source=f"{_JCLI}ConsumerBase.java",
        quote="", status="inferred", applies_to=_JAVA,
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): ack-cumulative-shared-java passed. '
              "acknowledgeCumulativeAsync: isCumulativeAcknowledgementAllowed(type) is false for Shared and "
              "Key_Shared -> failed future InvalidConfigurationException('Cannot use cumulative acks on a "
              "non-exclusive/non-failover subscription'); the docs say only 'You cannot use cumulative acknowledgment "
              "with Shared type.' (PLS-ACK-003 is the C++ error). To be confirmed live (case ack-cumulative-shared-java)."),
    ),
    Rule(
        id="PLS-ACK-007", area="ACK",
        title="Cumulative ack on Shared/Key_Shared is refused by the Go client with ErrInvalidAck; nothing is acked",
        source="apache/pulsar-client-go pulsar/consumer_partition.go",
        quote="", status="inferred", applies_to=_GO,
        note=("internalAckIDCumulative returns errors.Wrap(ErrInvalidAck, 'cumulative ack is not allowed for the "
              "Shared/KeyShared subscription type') before anything is sent: a plain exported error, not a "
              "pulsar.Error with a Result (the trace calls it InvalidAck). On a partitioned topic the consumer "
              "picks the partition's consumer first, as C++ does (Profile.cumulative_type_check_first stays False). "
              "The docs say only 'You cannot use cumulative acknowledgment with Shared type.' (PLS-ACK-003 is the "
              "C++ error, PLS-ACK-006 the Java one). Live 4.0.8 with Go 0.19.0: case ack-cumulative-shared-go."),
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
        title="On Exclusive/Failover a nack rewinds the subscription: every unacked message is delivered again, in order (C++/Python, Java and Go)",
        source=f"{_CPPLIB}ConsumerImpl.cc",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("Docs and code disagree: concepts-messaging.md#negative-acknowledgment says 'In Exclusive and Failover "
              "subscription types, consumers only negatively acknowledge the last message they receive.' The C++ "
              "client turns a targeted redelivery into redeliver-all for non-Shared types and the single-active "
              "dispatcher rewinds the cursor (apache/pulsar issues #5344, #6461). "
              f"{_LIVE}nack (delay 200 ms) redelivered ALL unacked messages in order, redelivery_count 0, after ~273 ms. "
              f"Java: {_JCLI}ConsumerImpl.java#redeliverUnacknowledgedMessages(Set) turns the nack tracker's targeted "
              "redelivery into redeliverUnacknowledgedMessages() when the type is not Shared/Key_Shared, which also "
              "clears the receiver queue; timing per PLS-NACK-005 (case nack-exclusive-rewind-java). Go 0.19.0 "
              "(apache/pulsar-client-go pulsar/consumer_partition.go internalRedeliver) sends the nacked ids whatever "
              "the type and the broker's single-active dispatcher rewinds all the same; timing per PLS-NACK-006. Live "
              "4.0.8 with Go 0.19.0: cases nack-exclusive-rewind and nack-failover-rewind."),
    ),
    Rule(
        id="PLS-NACK-004", area="NACK",
        title="Java nack backoff: a nacked delivery with redelivery count c comes back in [t + next(c) - 255, t + next(c)] ms, next(c) = min(min_delay * multiplier^c, max_delay), no 100 ms floor (java client only)",
        source=f"{_MSG}#negative-acknowledgment",
        quote=("To redeliver messages with different delays, you can use the redelivery backoff mechanism by "
               "setting the number of retries to deliver the messages."),
        status="normative", applies_to=_JAVA,
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): nack-backoff-java passed. '
              f"Code (Java 4.0.8): {_JCLI}MultiplierRedeliveryBackoff.java (next(c): c<=0 or min<=0 -> min; "
              "c > int(ln(max/min)/ln(multiplier)) + 1 -> max); NegativeAcksTracker#add(Message) passes "
              "message.getRedeliveryCount(), the count of the delivery the application nacked (add(MessageId) "
              "passes 0), uses next(c) as is (the 100 ms MIN_NACK_DELAY_MS only applies to the fixed delay), and "
              "files the id under trimLowerBit(now + next(c), negativeAckPrecisionBitCnt = 8): up to 255 ms early; "
              "the timer is one-shot (PLS-NACK-005), so a nack also waits for a timer an earlier nack with a longer "
              "delay armed. The docs' table ('redelivery count 1 -> 1 s') is next(count-1) if 'count N' means the "
              "N-th redelivery. Builder defaults 10 s / 10 min / x2 differ from the docs' example values. On "
              "Exclusive/Failover the count stays 0, so every nack waits next(0). Not reachable from Python; checked "
              "live through the Java driver (case nack-backoff-java)."),
    ),
    Rule(
        id="PLS-NACK-005", area="NACK",
        title="Java fixed nack delay d = max(configured, 100 ms): redelivered in [t + d - 255, t + d] ms by a one-shot timer (no d/3 period); a nack waits for a timer an earlier, longer nack armed (java client only)",
        source=f"{_JCLI}NegativeAcksTracker.java",
        quote="", status="inferred", applies_to=_JAVA,
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): nack-exclusive-rewind-java, nack-fixed-delay-java passed. '
              "Java 4.0.8 NegativeAcksTracker: nackDelayMs = max(negativeAckRedeliveryDelay, MIN_NACK_DELAY_MS = 100); "
              "add() files the id under trimLowerBit(currentTimeMillis + delay, 8) and, if no timer is armed, arms one "
              "for the delay; triggerRedelivery sends every id whose filed time has passed and re-arms the timer for "
              "the earliest remaining one. So with one delay for every nack the window is [d - 255, d] after the nack "
              "(C++ instead [d, d + d/3], PLS-NACK-001); the client timer ticks every 1 ms (HashedWheelTimer). "
              "Docs (#negative-acknowledgment) only show negativeAckRedeliveryDelay. To be confirmed live "
              "(case nack-fixed-delay-java)."),
    ),
    # ---- ack timeout ---------------------------------------------------------------------
    Rule(
        id="PLS-NACK-006", area="NACK",
        title="Go nack with delay d: due at t + d with the low 8 bits of its millisecond time cleared, asked back on the tracker's tick every d/3: redelivered in [t + d - 255, t + d + d/3] ms (go client only)",
        source="apache/pulsar-client-go pulsar/negative_acks_tracker.go",
        quote="", status="inferred", applies_to=_GO,
        note=("Read in pulsar-client-go 0.19.0: putNackEntry files the message under now + delay trimmed by "
              "NackPrecisionBit (default 8: up to 255 ms early); a ticker every delay / 3 redelivers every entry due by "
              "then (Redeliver -> RedeliverUnacknowledgedMessages with the ids, so the count goes up by one). The "
              "default delay is 1 min and there is no floor. A nacked batched message is filed by entry (batch index "
              "0). Live 4.0.8 with the Go client 0.19.0, 28 Nov 2026: delay 600 ms, three nacks, each back within the "
              "window (tests/live/test_go_client_live.py)."),
    ),
    Rule(
        id="PLS-NACK-007", area="NACK",
        title="Go nack backoff: a nacked delivery with redelivery count c is due at t + next(c), trimmed by up to 255 ms, and asked back on a tick every next(1)/3: redelivered in [t + next(c) - 255, t + next(c) + next(1)/3] ms (go client only)",
        source="apache/pulsar-client-go pulsar/negative_acks_tracker.go",
        quote="", status="inferred", applies_to=_GO,
        note=("Read in pulsar-client-go 0.19.0: with ConsumerOptions.NackBackoffPolicy, Nack(msg) files the message "
              "under now + policy.Next(msg.RedeliveryCount()) trimmed by NackPrecisionBit (AddMessage), and the "
              "tracker's ticker runs every Next(1) / 3 (newNegativeAcksTracker), not every delay / 3 of the message's "
              "own delay. The Go client ships no policy of its own (its default is a 1 min fixed delay): the driver's "
              "policy is the shape of Java's MultiplierRedeliveryBackoff, next(c) = min(min_delay * multiplier^c, "
              "max_delay), and it refuses the arguments Java's builder refuses (InvalidArgument). Java's window is "
              "PLS-NACK-004 (a one-shot timer: no tick). Live 4.0.8 with Go 0.19.0: case nack-backoff-go."),
    ),
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
        id="PLS-ACKTIMEOUT-003", area="ACKTIMEOUT",
        title="Java: an ack timeout 0 < T < 1000 ms or an ack-timeout tick below 100 ms is refused when the consumer is built (InvalidArgument); 0 disables the ack timeout",
        source=f"{_JCLI}ConsumerBuilderImpl.java",
        quote="", status="inferred", applies_to=_JAVA,
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): ack-timeout-minimum-java passed. '
              "ackTimeout: checkArgument(ackTimeout == 0 || ms >= MIN_ACK_TIMEOUT_MILLIS = 1000, 'Ack timeout should be "
              "greater than 1000 ms'); ackTimeoutTickTime: checkArgument(ms >= MIN_TICK_TIME_MILLIS = 100): "
              "IllegalArgumentException, which the driver reports as InvalidArgument (docs/java-driver.md). C++ refuses "
              "below 10 s (PLS-ACKTIMEOUT-001). To be confirmed live (case ack-timeout-minimum-java)."),
    ),
    Rule(
        id="PLS-ACKTIMEOUT-004", area="ACKTIMEOUT",
        title="Java ack timeout T with ackTimeoutTickTime t0, t = min(t0, T): an unacked message is redelivered in (ceil(T/t)*t, (ceil(T/t)+1)*t] after receive (java client only)",
        source=f"{_MSG}#acknowledgment-timeout",
        quote=("You can configure the acknowledgment timeout mechanism to redeliver the message if it is not acknowledged "
               "after `ackTimeout` or to execute a timer task to check the acknowledgment timeout messages during every "
               "`ackTimeoutTickTime` period."),
        status="normative", applies_to=_JAVA,
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): ack-timeout-tick-java passed. '
              f"{_JCLI}UnAckedMessageTracker.java: tickDurationInMs = min(tick, T), a ring of ceil(T/t) + 1 time "
              "partitions, the newest takes a message when the application receives it (ConsumerImpl#messageProcessed "
              "-> trackMessage), each tick pops the oldest and redelivers it: the C++ window (PLS-ACKTIMEOUT-002) with "
              "a settable tick (default 1000 ms). Exclusive/Failover: a rewind (PLS-NACK-003). To be confirmed live "
              "(case ack-timeout-tick-java)."),
    ),
    Rule(
        id="PLS-ACKTIMEOUT-005", area="ACKTIMEOUT",
        title="Java ack-timeout backoff: an unacked delivery with count c is redelivered in (ceil(T/t)*t + next(c), (ceil(T/t)+1)*t + ceil(next(c)/t)*t] after receive (java client only)",
        source=f"{_MSG}#acknowledgment-timeout",
        quote=("You can also use the redelivery backoff mechanism to redeliver messages with different delays by "
               "setting the number of times the messages are retried."),
        status="normative", applies_to=_JAVA,
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): ack-timeout-backoff-java passed. '
              f"{_JCLI}UnAckedMessageRedeliveryTracker.java: the same ring as PLS-ACKTIMEOUT-004, but a popped "
              "partition's ids get the deadline now + next(c) (c = the redelivery count the message was received with, "
              "UnackMessageIdWrapper) and each tick redelivers those whose deadline passed. The docs' table ('10 + 1 "
              "seconds' for redelivery count 1 with min 1 s) matches the low end for c = 0. To be confirmed live "
              "(case ack-timeout-backoff-java)."),
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
              "m3 (from the queue), m2, m3 with count 0. Java (ConsumerImpl#redeliverUnacknowledgedMessages) clears "
              "its receiver queue and its ack-timeout tracker first, so a Java consumer sees no such duplicates."),
    ),
    # ---- backlog, DLQ, retry -------------------------------------------------------------
    Rule(
        id="PLS-BACKLOG-001", area="BACKLOG",
        title="The subscription backlog (admin stats msgBacklog) equals the number of published entries not yet acknowledged on it",
        source=f"{_MSG}#batching",
        quote="Therefore, the backlog size represents the total number of batches instead of the total number of messages.",
        status="normative", applies_to=_ALL_GO,
        note=("Counts entries (a batch is one entry). Acks are grouped by the C++ client for up to 100 ms and "
              f"stats are computed asynchronously: wait before reading. {_LIVE}3 sent -> 3; cumulative ack of "
              "the 2nd -> 1; m1, m3 of 4 individually acked -> 2. A seek to a message id leaves that message "
              "in the backlog (the broker's cursor is on it; the C++ client filters it out). Known deviation "
              "KD-001 (conformance/deviations.yaml): on 4.0.8, after a seek back over individually acked "
              "messages the backlog still subtracts those acks (1 instead of 4); fixed upstream by apache/pulsar "
              "PR #25047 (merged 2025-12), after 4.0.8."),
    ),
    Rule(
        id="PLS-SKIP-001", area="SKIP",
        title="An admin skip of n messages on a subscription acks its n oldest unacked entries (a batch is one entry; fewer if it has fewer): they are never delivered there again and leave the backlog",
        source="apache/pulsar managed-ledger/src/main/java/org/apache/bookkeeper/mledger/impl/ManagedCursorImpl.java",
        quote="", status="inferred", applies_to=_ALL,
        note=("Admin: POST /admin/v2/persistent/{t}/{ns}/{topic}/subscription/{sub}/skip/{n} -> "
              "PersistentSubscription#skipMessages -> ManagedCursorImpl#asyncSkipEntries(n, IndividualDeletedEntries."
              "Exclude): the mark-delete position moves to getPositionAfterN(markDelete, n + the individually acked "
              "entries within that span), so exactly the n oldest entries not yet acked are acked, with the holes "
              "before them; past the last entry it stops there. Counted in entries, as msgBacklog is (PLS-BACKLOG-001). "
              "A consumer's receiver queue may still hold a prefetched copy, which may surface once (as after an "
              "expiry pass). Refused on a partitioned topic (405). Case skip-and-clear-backlog. Live 4.0.8 (2 Dec 2026, "
              "Python and Java): m2 acked, m1 not: skip 2 took m1 and m3 (backlog 4 -> 2, then m4, m5); a skip of 5 with "
              "one entry left emptied the backlog."),
    ),
    Rule(
        id="PLS-SKIP-002", area="SKIP",
        title="An admin clear-backlog (skip_all) on a subscription acks every entry stored so far: none of them is delivered there again and the backlog is 0; messages sent after it are delivered as usual",
        source=f"{_BROKER}persistent/PersistentSubscription.java",
        quote="", status="inferred", applies_to=_ALL,
        note=("Admin: POST /admin/v2/persistent/{t}/{ns}/{topic}/subscription/{sub}/skip_all -> "
              "PersistentSubscription#clearBacklog -> ManagedCursorImpl#asyncClearBacklog: the mark-delete position moves "
              "to the last entry. The trace's clear_backlog without a subscription clears each subscription of the topic "
              "(the live target lists them: GET .../subscriptions). A prefetched copy may surface once, as for a skip. "
              "Case skip-and-clear-backlog. Live 4.0.8 (2 Dec 2026, Python and Java): backlog 0 after skip_all, then only "
              "the message sent after it; without a subscription both s and s2 emptied."),
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
              "second nack moved it to '<ns>/t-s-DLQ' with properties ORIGIN_MESSAGE_ID '(l,e,-1,-1)' and REAL_TOPIC. "
              f"Java: {_JCLI}ConsumerImpl.java constructor, RetryMessageUtil.getDLQTopic(topic, subscription) from the "
              "ConsumerImpl's own topic (a partition's name for a partitioned topic); with enableRetry, "
              "ConsumerBuilderImpl sets it from the first topic instead (the partitioned topic's name), and falls back "
              "to '<namespace>/<subscription>-DLQ' if that topic already exists (issue #9327)."),
    ),
    Rule(
        id="PLS-RETRY-001", area="RETRY",
        title="The default retry-letter topic name is <topic>-<subscription>-RETRY (java client only)",
        source=f"{_MSG}#retry-letter-topic",
        quote="Use the Java client to specify the name of the retry letter topic.",
        status="normative", applies_to=_JAVA,
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): retry-default-name-java passed. '
              "Docs: 'The default retry letter topic uses this format:' followed by '<topicname>-<subscriptionname>-RETRY'; "
              "Java ConsumerBuilderImpl agrees on current versions (before apache/pulsar #9327 the default was "
              "'<namespace>/<subscription>-RETRY', and the builder still falls back to it when that topic exists). "
              "C++/Python have no retry letter topic. The retry topic is subscribed with the consumer's subscription "
              "and always as Shared (ConsumerBase#getSubType); dead_letter.retry_topic names it. Java 4.0.8 source "
              f"({_JCLI}ConsumerBuilderImpl.java#subscribeAsync); confirmed live (case retry-default-name-java)."),
    ),
    Rule(
        id="PLS-RETRY-002", area="RETRY",
        title="A retry copy carries the original's payload, keys, event time and properties plus REAL_TOPIC, ORIGIN_MESSAGE_ID (first retry only), RECONSUMETIMES (1, then +1), DELAY_TIME, REAL_SUBSCRIPTION and ORIGIN_MESSAGE_IDY_TIME, and arrives after the delay (java client only)",
        source=f"{_MSG}#retry-letter-topic",
        quote="The messages in the retry letter topic contain some special properties that are automatically created by the client.",
        status="normative", applies_to=_JAVA,
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): retry-properties-java, retry-to-dlq-java passed. '
              f"{_JCLI}ConsumerImpl.java#doReconsumeLater and #getPropertiesMap (putIfAbsent, so a retried retry copy keeps "
              "the first REAL_TOPIC and ORIGIN_MESSAGE_ID): ORIGIN_MESSAGE_ID = MessageId.toString() of the message "
              "('l:e:p', 'l:e:p:b' when batched), REAL_TOPIC = the topic without '-partition-i' (TopicMessageId owner), "
              "REAL_SUBSCRIPTION = the subscription, ORIGIN_MESSAGE_IDY_TIME = the same id (the deprecated "
              "RetryMessageUtil.SYSTEM_PROPERTY_ORIGIN_MESSAGE_ID, a historical typo), DELAY_TIME = max(delay, 0) ms; the copy is "
              "sent with deliverAfter(delay) when delay > 0, and the retry topic is read as Shared, so delayed-delivery "
              "timing applies (PLS-DELAY-001/004). The docs' table lists four of the properties. To be confirmed live "
              "(case retry-properties-java)."),
    ),
    Rule(
        id="PLS-RETRY-003", area="RETRY",
        title="reconsume_later whose RECONSUMETIMES would exceed maxRedeliverCount (16 when retry is on without a dead-letter policy) publishes the copy to the dead-letter topic instead, and acks the original (java client only)",
        source=f"{_MSG}#retry-letter-topic",
        quote=("Once the maximum number of retries has been reached, the unconsumed messages are moved to a dead letter "
               "topic for manual processing."),
        status="normative", applies_to=_JAVA,
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): retry-to-dlq-java, retry-to-dlq-policy-java passed. '
              f"{_JCLI}ConsumerImpl.java#doReconsumeLater: reconsumeTimes > deadLetterPolicy.getMaxRedeliverCount() -> "
              "the DLQ producer, same properties (RECONSUMETIMES = max + 1), no delay. ConsumerBuilderImpl sets "
              "maxRedeliverCount = RetryMessageUtil.MAX_RECONSUMETIMES (16) and the DLQ '<topic>-<subscription>-DLQ' "
              "when enableRetry has no dead-letter policy; that policy also dead-letters nacked messages after 16 "
              "redeliveries (PLS-DLQ-002). To be confirmed live (case retry-to-dlq-java)."),
    ),
    Rule(
        id="PLS-RETRY-004", area="RETRY",
        title=("A reconsume_later whose copy the broker refuses fails with that error, does not ack the original, and "
               "the client asks for the original again at once: on a Shared subscription it is redelivered with its "
               "count one higher (java client only)"),
        source=f"{_JCLI}ConsumerImpl.java#doReconsumeLater",
        quote="", status="tentative", applies_to=_JAVA,
        note=("ConsumerImpl#doReconsumeLater: the retry producer's sendAsync fails the result, and the result's "
              "exceptionally handler logs 'Send to retry letter topic exception', removes the id from the unacked "
              "tracker and calls redeliverUnacknowledgedMessages({id}) (the same in the bytecode of pulsar-client "
              "2.7.4, 2.10.5 and 4.0.8). Live 4.0.8 with the Java client 4.0.8 and the tdmq profile's "
              "delayedDeliveryMaxDelayInMillis, 28 Nov 2026: a reconsume_later delayed 10 days and 1 s failed with "
              "NotAllowedError (PLS-DELAY-007) and the original came back on its Shared subscription with count 1 "
              "(case tdmq-reconsume-later-delay-limit). Followed on Shared subscriptions only: elsewhere the client "
              "redelivers everything unacked (redeliverUnacknowledgedMessages()), which the model does not follow "
              "after a failed reconsume_later (NotModelledError). Tentative: one refusal cause measured."),
    ),
)


# --------------------------------------------------------------------------- features
# Chunking, deduplication, delayed delivery, batching, dead-letter topics, TTL, retention,
# compaction, producer access modes, non-persistent topics. The models are the modules named
# in each group's comment; the live probes that established each rule are
# tests/live/test_features_live.py (broker 4.0.8 standalone with batch-index acks on,
# delayedDeliveryTickTimeMillis=100 and strict delayed delivery; pulsar-client 3.13.0).

_PYONLY = AppliesTo("*", ("python",))
_COMPACT = "docs/concepts-topic-compaction.md"
_DELAYED = "apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/delayed/"
_COMPACTOR = "apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/compaction/"
_MAX = "5242880"

RULES = RULES + (
    # ---- chunking (reference_model/chunking.py) ------------------------------------------
    Rule(
        id="PLS-CHUNK-001", area="CHUNK",
        title="A chunking producer splits a payload above the maximum message size into chunks; the consumer receives one message with the whole payload",
        source=f"{_MSG}#chunking",
        quote=("Message chunking enables Pulsar to process large payload messages by splitting the message into chunks "
               "at the producer side and aggregating chunked messages at the consumer side."),
        status="normative", applies_to=_ALL,
        note=("Each chunk is stored as its own entry. "
              f"{_LIVE}payloads of {_MAX} and 10485760 bytes arrived whole, as one message each, written as 2 and 3 entries."),
    ),
    Rule(
        id="PLS-CHUNK-002", area="CHUNK",
        title="C++/Python chunk count: with m the metadata size and c = maxMessageSize - m, a payload of s bytes makes ceil(s/c) chunks if s >= c, else one unchunked entry",
        source=f"{_CPPLIB}ProducerImpl.cc",
        quote="", status="inferred", applies_to=_CPP,
        note=("sendAsyncWithStatsUpdate + getNumOfChunks; m is measured before the chunk fields are added "
              "(producer name, sequence id, publish time, plus application-set metadata); m >= maxMessageSize -> "
              "MessageTooBig. A count of 1 (even s == c) is an ordinary entry, not a chunk. "
              f"{_LIVE}producer name 'pchunk' (m = 17): s = {_MAX}-17 -> 1 entry, id '(l,e,-1,-1)'; s = {_MAX}-16 -> 2 entries; "
              f"s = {_MAX} -> 2; 2*{_MAX} -> 3; 2*{_MAX}+10 -> 3; 100 -> 1."),
    ),
    Rule(
        id="PLS-CHUNK-003", area="CHUNK",
        title="Without chunking, a send whose metadata plus payload exceeds maxMessageSize fails client-side with MessageTooBig",
        source=f"{_CPPLIB}ProducerImpl.cc",
        quote="", status="inferred", applies_to=_CPP,
        note=("Docs (concepts-messaging.md#messages) only give the limit: 'The default size of a message is 5 MB.' "
              "The check is metadata + payload > maxMessageSize (equal is accepted). "
              f"{_LIVE}producer name 'pnochk' (m = 17): {_MAX}-17 bytes accepted, {_MAX}-16 -> pulsar.MessageTooBig; "
              f"{_MAX} and {_MAX}+1 -> MessageTooBig."),
    ),
    Rule(
        id="PLS-CHUNK-004", area="CHUNK",
        title="Python and Go refuse a producer with both chunking and batching: ValueError (Python), a NewProducer error (Go)",
        source=f"{_MSG}#chunking",
        quote="Chunking cannot be enabled simultaneously with batching.",
        status="normative", applies_to=AppliesTo("*", ("python", "go")),
        note=(f"The error is Python's ({_PY}#Client.create_producer); the C++ core instead silently disables chunking. "
              f"{_LIVE}ValueError(\"Batching and chunking of messages can't be enabled together.\"). "
              "Go (apache/pulsar-client-go pulsar/producer_impl.go newProducer): a plain error 'batching and chunking "
              "can not be enabled together', which the driver reports as InvalidArgument (the client refusing its "
              "options); live 4.0.8 with the Go client 0.19.0, 28 Nov 2026."),
    ),
    Rule(
        id="PLS-CHUNK-005", area="CHUNK",
        title="A chunked message's id prints as '(first chunk id);(last chunk id)'; the consumer reports the same id as the send returned",
        source=f"{_CPPLIB}MessageId.cc",
        quote="", status="inferred", applies_to=AppliesTo("*", ("python", "cpp", "go")),
        note=("operator<< of a ChunkMessageIdImpl; its ledger/entry are the last chunk's. Java prints differently. "
              f"{_LIVE}send of {_MAX} bytes returned '(1634,3,-1,-1);(1634,4,-1,-1)' and the received message's id was equal to it. "
              "Go (pulsar/impl_message.go chunkMessageID.String) prints 'first;last' as 'l:e:p', p 0 on a topic that is "
              "not partitioned, and its id is the last chunk's too; live 4.0.8 with the Go client 0.19.0, 28 Nov 2026: "
              "'9:2:0;9:3:0', received as (9,3)."),
    ),
    Rule(
        id="PLS-CHUNK-006", area="CHUNK",
        title="Chunking only works on persistent topics: on a non-persistent topic an oversize send fails with MessageTooBig",
        source=f"{_MSG}#chunking",
        quote="Chunking is only available for persistent topics.",
        status="normative", applies_to=_ALL,
        note=(f"C++ turns chunking off silently ({_CPPLIB}ProducerImpl.cc constructor). "
              f"{_LIVE}chunking_enabled producer on non-persistent://..., 6000000 bytes -> pulsar.MessageTooBig."),
    ),
    Rule(
        id="PLS-CHUNK-007", area="CHUNK",
        title="Go chunk count: the metadata size m includes uncompressed_size (1 + varint(s) bytes more than C++'s); with c = maxMessageSize - m, a payload of s bytes makes ceil(s/c) chunks if s > c, else one unchunked entry (go client only)",
        source="apache/pulsar-client-go pulsar/producer_partition.go",
        quote="", status="inferred", applies_to=_GO,
        note=("updateChunkInfo: payloadChunkSize = maxMessageSize - proto.Size(mm), totalChunks = max(1, ceil(size / "
              "payloadChunkSize)); genMetadata has already set UncompressedSize (field 9) and updateMetaData the sequence "
              "id, so m counts them (reference_model/chunking.py GO_SIZING). ChunkMaxMessageSize lowers c further (not in "
              "the trace vocabulary). The chunked id prints 'l:e:p;l:e:p' (chunkMessageID.String), p 0 on a topic that "
              "is not partitioned. Live 4.0.8 with the Go client 0.19.0, 28 Nov 2026, producer 'pchunk' (m = 22): "
              f"{_MAX}-22 -> 1 entry; {_MAX}-21 -> 2 entries ('9:2:0;9:3:0'); {_MAX}-17 and {_MAX}-16 -> 2 "
              "(the C++ client writes these as 1 and 2: PLS-CHUNK-002); each received whole with the send's id."),
    ),
    Rule(
        id="PLS-CHUNK-008", area="CHUNK",
        title="Go without chunking: a send whose metadata (uncompressed_size included) plus payload exceeds maxMessageSize fails client-side, MessageTooBig (go client only)",
        source="apache/pulsar-client-go pulsar/producer_partition.go",
        quote="", status="inferred", applies_to=_GO,
        note=("Two checks: updateChunkInfo refuses a payload above maxMessageSize with ErrMessageTooLarge "
              "(result MessageTooBig); a payload that fits but whose metadata tips it over is refused when the send is "
              "framed (pulsar/internal/commands.go serializeMessage: 'encryptedPayload exceeds MaxMessageSize', the "
              "internal ErrExceedMaxMessageSize, not a *pulsar.Error: a Go user can only read its text). The driver "
              "reports both as MessageTooBig, the detail keeping the text. Live 4.0.8 with the Go client 0.19.0, "
              f"28 Nov 2026, producer 'pnochk' (m = 22): {_MAX}-17 -> 'encryptedPayload exceeds MaxMessageSize, size: "
              f"5242885'; {_MAX} -> the same, size 5242902; {_MAX}+1 -> MessageTooBig (the C++ client accepts {_MAX}-17: "
              "PLS-CHUNK-003)."),
    ),
    # ---- deduplication (reference_model/dedup.py) ----------------------------------------
    Rule(
        id="PLS-DEDUP-001", area="DEDUP",
        title="With deduplication on, a send whose sequence id is <= the producer's highest persisted one is not stored; the send succeeds with id (-1,-1,-1,-1)",
        source=f"{_MSG}#message-deduplication",
        quote=("When the producer attempts to publish the message again, however, the broker knows that it has already "
               "seen message 1 and thus does not persist the message."),
        status="normative", applies_to=_ALL_GO,
        note=(f"Per producer name: {_BROKER}persistent/MessageDeduplication.java#isDuplicate; the -1/-1 ack is "
              "PersistentTopic#publishMessage. "
              f"{_LIVE}seq 0,1,2 stored at (l,0..2); re-sent seq 1 and 2 -> '(-1,-1,-1,-1)'; seq 10 stored; "
              "the next generated seq 3 and explicit seq 5 -> '(-1,-1,-1,-1)'; a reader saw m0, m1, m2, m10 only."),
    ),
    Rule(
        id="PLS-DEDUP-002", area="DEDUP",
        title="With deduplication on, a producer re-created with the same name continues after the highest persisted sequence id (last_sequence_id); an explicit initial_sequence_id wins",
        source=f"{_CPPLIB}ProducerImpl.cc",
        quote="", status="inferred", applies_to=_CPP,
        note=("handleCreateProducer adopts the broker's lastSequenceId only when neither initial_sequence_id was "
              "configured nor anything sent. "
              f"{_LIVE}after seq 10 was stored: re-created 'pd' has last_sequence_id() 10, its next send gets seq 11 "
              "and is stored; re-created with initial_sequence_id=3: last_sequence_id() 3, next send seq 4 -> Dup."),
    ),
    Rule(
        id="PLS-DEDUP-003", area="DEDUP",
        title="With deduplication off (the default), a re-sent sequence id is stored again and a re-created producer starts at -1",
        source=f"{_MSG}#message-deduplication",
        quote=("The producer then sends message 1 again (in this case due to some retry logic), and the message is "
               "received by the broker and stored in BookKeeper again, which means that duplication has occurred."),
        status="normative", applies_to=_ALL_GO,
        note=(f"{_LIVE}two sends with sequence_id=5 got (l,0) and (l,1), both read back; the re-created producer's "
              "last_sequence_id() was -1 (the broker tracks nothing)."),
    ),
    Rule(
        id="PLS-DEDUP-004", area="DEDUP",
        title="A duplicate of a message still in flight (sequence id above the persisted one but not above the pushed one) fails with MessageDupUnknown",
        source=f"{_BROKER}persistent/MessageDeduplication.java",
        quote="", status="tentative", applies_to=_ALL,
        note=("isDuplicate returns Unknown; PersistentTopic fails the publish with MessageDupUnknownException and "
              "the client retries. Needs two sends of one sequence id racing on the wire: not produced from "
              "Python (a Python send blocks until acked; send_async resends are the client's own). Case "
              "dedup-in-flight-unknown runs on the model only (not_live): an async send is pushed, a sync duplicate "
              "is Unknown, and once the first is persisted the retry is a duplicate (-1,-1,-1,-1)."),
    ),
    Rule(
        id="PLS-DEDUP-005", area="DEDUP",
        title="Python treats sequence_id=0 and initial_sequence_id=0 as not given",
        source=_PY,
        quote="", status="inferred", applies_to=_PYONLY,
        note=("Producer.send / create_producer pass the values on only when truthy ('if sequence_id:'). "
              f"{_LIVE}send(sequence_id=0) used the generator's next id (4) instead, classed Dup, last_sequence_id() 4."),
    ),
    Rule(
        id="PLS-DEDUP-006", area="DEDUP",
        title="last_sequence_id() follows every acknowledged send, duplicates and explicit ids included (C++: that send's id; Java: the highest id acknowledged so far; Go: that send's id, a batch's first); explicit ids do not move the generator",
        source=f"{_CPPLIB}ProducerImpl.cc",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("ackReceived sets lastSequenceIdPublished_; the generator msgSequenceGenerator_ only moves for "
              f"generated ids. {_LIVE}after seq 0..2, explicit 1 -> 1; explicit 10 -> 10; next generated -> 3. Java "
              "(apache/pulsar pulsar-client/.../impl/ProducerImpl.java#ackReceived keeps the maximum): live (4.0.8, Java "
              "client 4.0.8, found by the Java fuzz campaign of 2026-11-26), explicit 29 then a generated 0 -> 29. Go "
              "(apache/pulsar-client-go pulsar/producer_partition.go ReceivedSendReceipt stores the pending item's "
              "sequence id, a batch's first, for each of its messages; an explicit 0 is sent as 0): live 4.0.8 with the Go "
              "client 0.19.0, 28 Nov 2026, found by the Go fuzz campaign: async m1 and a sync m2 in one batch -> 0 (C++ and "
              "Java: 1); a chunked m1 then an explicit 0 -> 0 (Python: 1, PLS-DEDUP-005)."),
    ),
    # ---- operations in general (conformance/checker.py _refusal_rule) ---------------------------
    Rule(
        id="PLS-OP-001", area="OP",
        title="An operation fails only for a reason a rule names: a call on a live handle, with arguments its client takes, that no access-mode, schema, size, quota, subscription-type, transaction or policy rule refuses, succeeds",
        source="apache/pulsar pulsar-client-api/src/main/java/org/apache/pulsar/client/api/Producer.java#send",
        quote=("@throws PulsarClientException.TimeoutException if the message was not correctly received by the system "
               "within the timeout period; @throws PulsarClientException.AlreadyClosedException if the producer was "
               "already closed"),
        status="inferred", applies_to=_ALL_GO,
        note=("The client APIs list why each call fails (Producer#send above; Consumer#acknowledge: 'if the consumer was "
              "already closed'; ProducerBuilder#create: 'if the producer creation fails', whose causes the access-mode, "
              "schema and topic rules name). The suite reads those lists as closed: a refusal the rules give no reason "
              "for is charged here, not to the rule that judges what the op does when it succeeds (PLS-PROD-001's "
              "sequence ids, PLS-BATCH-001's batch ids). A rule whose own text says when its op is refused (PLS-SUB-001, "
              "PLS-ACK-004, PLS-ACCESS-*, PLS-TOPIC-004, PLS-SUB-006/009, ...) keeps those refusals. A timeout or a "
              "dropped connection is not a refusal: the outcome is indeterminate (docs/trace-format.md#outcomes)."),
    ),
    # ---- topic-level policies (reference_model/feature_ops.py policy_for) -----------------
    Rule(
        id="PLS-POLICY-001", area="POLICY",
        title="A topic's own policy (deduplication, message TTL, retention) decides for that topic over its namespace's; a topic that has not set one follows the namespace's, and a partitioned topic's own policy holds for each of its partitions",
        source="docs/cookbooks-deduplication.md#how-it-works",
        quote="You can enable or disable message deduplication at the namespace level or the topic level.",
        status="normative", applies_to=AppliesTo(">=3.0", CLIENTS),
        note=("The order: apache/pulsar pulsar-common/.../policies/data/PolicyHierarchyValue.java ('three hierarchy with "
              "priority : topic > namespace > broker'); a partition's policies are its partitioned topic's "
              "(SystemTopicBasedTopicPoliciesService keys them by TopicName#getPartitionedTopicName); a topic's delete "
              "deletes them (AbstractTopic#deleteTopicPolicies). Topic policies travel through the namespace's "
              "__change_events system topic, so the admin call returns before the broker applies them (upstream tests "
              "wait with Awaitility); the targets wait for the broker to report it applied (docs/trace-format.md#ops). "
              "Set on a topic that does not exist: 404 (PersistentTopicsBase preValidation), TopicNotFound. A topic's own "
              "retention that keeps something must exceed the backlog quota (default backlogQuotaDefaultLimitGB=10): "
              "412 'Retention Quota must exceed configured backlog quota for topic' (live 4.0.8, 4 Dec 2026, regression "
              "pls-policy-001-unexpected-rejection-8c8a1d5acb1e: 10 min / 10 MB refused; -1 / -1 set). Brokers from "
              "3.0 (topicLevelPoliciesEnabled on by default). Judged where the two levels differ: a send's dedup outcome "
              "on a topic whose own deduplication is not its namespace's. Case policy-topic-over-namespace."),
    ),
    # ---- delayed delivery (reference_model/delayed.py) -----------------------------------
    Rule(
        id="PLS-DELAY-001", area="DELAY",
        title="Shared subscriptions hold a delayed message until its deliver-at time",
        source=f"{_MSG}#delayed-message-delivery",
        quote="Only shared subscriptions support delayed message delivery.",
        status="normative", applies_to=_ALL,
        note=(f"{_DELAYED}InMemoryDelayedDeliveryTracker.java (tracked in PersistentDispatcherMultipleConsumers). "
              f"{_LIVE}'late' (deliver_after 600 ms) then 'now': Shared received now at 12 ms, late at 604 ms."),
    ),
    Rule(
        id="PLS-DELAY-002", area="DELAY",
        title="Exclusive and Failover subscriptions deliver a delayed message at once, in publish order",
        source=f"{_MSG}#delayed-message-delivery",
        quote="In other subscriptions, delayed messages are dispatched immediately.",
        status="normative", applies_to=_ALL_GO,
        note=f"{_LIVE}Exclusive and Failover received 'late' (deliver_after 600 ms) before 'now', without waiting.",
    ),
    Rule(
        id="PLS-DELAY-003", area="DELAY",
        title="Key_Shared subscriptions also hold delayed messages (the docs say only Shared)",
        source=f"{_BROKER}persistent/PersistentStickyKeyDispatcherMultipleConsumers.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("The Key_Shared dispatcher extends PersistentDispatcherMultipleConsumers and inherits its delayed "
              "tracker; the docs ('Only shared subscriptions support delayed message delivery.') omit it. "
              f"{_LIVE}Key_Shared received 'now' at 12 ms and 'late' (600 ms) at 677 ms."),
    ),
    Rule(
        id="PLS-DELAY-004", area="DELAY",
        title="Strict mode (isDelayedDeliveryDeliverAtTimeStrict=true): never delivered before deliver-at; at most about two ticks late",
        source=f"{_MSG}#delayed-message-delivery",
        quote=("When true, messages will not be sent to consumer until the deliverAt time has passed, and they may be as "
               "late as the deliverAt time plus the tickTimeMillis for the topic plus the delayedDeliveryTickTimeMillis."),
        status="normative", applies_to=_ALL_GO,
        note=(f"getCutoffTime returns now in strict mode ({_DELAYED}AbstractDelayedDeliveryTracker.java). "
              f"{_LIVE}tick 100 ms, 20 deliver_at sends 120..500 ms ahead on Shared: received 6..104 ms after deliver_at, never before."),
    ),
    Rule(
        id="PLS-DELAY-005", area="DELAY",
        title="Non-strict mode (the default): a delayed message may be delivered up to one tick before deliver-at",
        source=f"{_MSG}#delayed-message-delivery",
        quote=("When false (default), messages may be sent to consumers before the deliverAt time by as much as the "
               "tickTimeMillis."),
        status="tentative", applies_to=_ALL,
        note=(f"Cutoff now + tick ({_DELAYED}AbstractDelayedDeliveryTracker.java#getCutoffTime); a message already "
              "within the cutoff when read is not tracked at all (addMessage returns false). Not probed: the "
              "suite's broker runs strict. Case delay-non-strict-early runs on the model only (profile "
              "delayed_delivery_strict false; not_live)."),
    ),
    Rule(
        id="PLS-DELAY-006", area="DELAY",
        title="A delayed message is never batched: it is sent alone and at once, ahead of a batch still being filled",
        source=f"{_MSG}#batching",
        quote=("However, scheduled messages (configured through the `deliverAt` or the `deliverAfter` parameter) are "
               "always sent as individual messages even when batching is enabled."),
        status="normative", applies_to=_ALL_GO,
        note=(f"C++ canAddToBatch ({_CPPLIB}ProducerImpl.cc). {_LIVE}send_async b0, delayed dl, b1 on a batching "
              "producer: dl got '(2108,0,-1,-1)', b0 and b1 '(2108,1,-1,0)' and '(2108,1,-1,1)'. With dedup on, "
              "this reorders sequence ids on the wire (research note, not probed)."),
    ),
    Rule(
        id="PLS-DELAY-007", area="DELAY",
        title="With delayedDeliveryMaxDelayInMillis set, a persistent topic refuses a message delayed past it (deliver-at minus publish time above the limit) with NotAllowedError; the Java client fails that send",
        source="static/reference/4.0.x/config/reference-configuration-broker.md#delayeddeliverymaxdelayinmillis",
        quote=("The max allowed delay for delayed delivery (in milliseconds). If the broker receives a message which "
               "exceeds this max delay, then it will return an error to the producer."),
        status="normative", applies_to=AppliesTo(">=3.3", ("java",)),
        note=("PIP-315 (apache/pulsar PR #21798), 3.3.0 and later; absent in 3.0.x. PersistentTopic#publishMessage -> "
              "isExceedMaximumDeliveryDelay: delayed delivery on, limit > 0, deliverAtTime - publishTime > limit (read "
              "in the 4.0.8 bytecode); the error text is 'Exceeds max allowed delivery delay of N milliseconds'. Java "
              "ClientCnx#handleSendError -> recoverNotAllowedError fails just that message. The C++ client (Python "
              "pulsar-client 3.13) has no such case: ClientConnection closes the connection on the send error and the "
              "producer re-sends the message, for ever (live 4.0.8 with a 10 s limit and a 20 s delay, 2026-11-27: "
              "2 800 reconnects in 5 minutes, the send never answered), so the rule speaks for Java only and the model "
              "does not follow such a C++ send (NotModelledError). TDMQ documents a 10-day limit (864 000 s; "
              "docs/research/tdmq-profile.md)."),
    ),
    # ---- vendor profiles (reference_model/vendors.py) -------------------------------------
    Rule(
        id="PLS-TAG-001", area="TAG",
        title=("Under the tdmq profile, a message whose tags (properties valued TAGS) share none of a subscription's tags "
               "(its subscription properties' keys) is never delivered on that subscription; untagged messages and "
               "subscriptions without tags are not filtered"),
        source="tencentcloud.com/document/product/1110/46518",
        quote="", status="tentative", applies_to=AppliesTo("*", FIRST_CLIENTS, ("tdmq",)),
        note=("TDMQ's developer guide (docs/research/tdmq-profile.md, section 1.1, rules T1-T7): filtering is done on the "
              "broker, a consumer without tags gets every message, several tags of one subscription are OR-ed, untagged "
              "messages go to every subscription, a tag is a message property valued TAGS, a subscription's tags are its "
              "subscription properties. Tentative: judged live only against the project's reference filter "
              "(fixtures/entry_filters/TagFilter.java, PIP-105 FilterResult.REJECT acks the entry for the subscription) on "
              "Apache brokers 3.0.7 and 4.0.8, never against a TDMQ cluster. A wrongly rejected message is a lost message "
              "of its subscription type's rule (PLS-SHARED-001, PLS-EXCL-002, ...), not of this one. Batched tagged "
              "messages are not followed (TDMQ: tags do not support batching; what happens is undocumented)."),
    ),
    Rule(
        id="PLS-TAG-002", area="TAG",
        title=("Under the tdmq profile, a tagged message sent in a batch is not filtered: it goes to every subscription, "
               "whatever its tags"),
        source="tencentcloud.com/document/product/1110/46518",
        quote="", status="tentative", applies_to=AppliesTo("*", FIRST_CLIENTS, ("tdmq",)),
        note=("TDMQ documents only that tagged messages do not support batching (producers must disable it; "
              "docs/research/tdmq-profile.md, T10) and not what happens otherwise. The broker filters entries, and a batch "
              "entry's metadata carries none of its messages' properties, so the filter sees the batch as untagged: "
              "the reference implementation (streamnative/pulsar-message-filter DefaultEntryFilter) accepts every batch, "
              "and so does the project's filter (fixtures/entry_filters/TagFilter.java). Measured 27 Nov 2026 on 4.0.8 "
              "with that filter, Python (C++) 3.x and Java 4.0.8 clients: three batches of two (tags c then a, a then c, "
              "c and c) all reached a subscription tagged a; a lone tagged c message of a batching producer arrived from "
              "Python (a batch of one) and was filtered from Java (sent unbatched, PLS-BATCH-008) (case "
              "tdmq-tags-batched-unfiltered). Judged where the message is owed: a lost one is this rule's "
              "lost-message."),
    ),
    Rule(
        id="PLS-TAG-003", area="TAG",
        title=("Under the tdmq profile, a subscription keeps the tags it was created with: a consumer that joins it "
               "giving other tags (subscription properties) neither adds nor replaces them"),
        source="tencentcloud.com/document/product/1110/46518",
        quote="", status="tentative", applies_to=AppliesTo("*", ("java",), ("tdmq",)),
        note=("TDMQ's developer guide (docs/research/tdmq-profile.md, T4 and T9): every consumer of a subscription must "
              "give the same tags, else the filter rules 'overwrite each other', and a subscription's tags cannot be "
              "changed once set (unsubscribe and subscribe anew). Which consumer's tags win is not documented; on Apache "
              "Pulsar the subscription properties are the creator's: PersistentTopic#getDurableSubscription keeps an "
              "existing subscription as it is and passes a joining consumer's subscriptionProperties nowhere (the "
              "admin API's create-subscription and the first consumer's subscribe set them; PIP-105, 2.10.0). The model "
              "takes T9 for the rule: the creator's tags filter for every consumer. Java only: the Python client cannot "
              "give subscription properties (ConsumerBuilder#subscriptionProperties, pulsar-client 2.10 on), so a Python "
              "handle, or a Java client before 2.10, refuses them with InvalidArgument. A message the creator's tags "
              "reject but a joining consumer's accept is this rule's when it is delivered; one they accept but a joining "
              "consumer's reject is this rule's when it is owed and never comes (case tdmq-tags-consumers-differ)."),
    ),
    # ---- batching (reference_model/batching.py) ------------------------------------------
    Rule(
        id="PLS-BATCH-001", area="BATCH",
        title="A batch is one entry: its messages get ids (ledger, entry, partition, i) with batch index i = 0..n-1 in send order",
        source=f"{_MSG}#batching",
        quote="In Pulsar, batches are tracked and stored as single units rather than as individual messages.",
        status="normative", applies_to=_ALL_GO,
        note=f"{_LIVE}4 messages in one batch: '(1991,0,-1,0)' .. '(1991,0,-1,3)', the consumer reports the same ids.",
    ),
    Rule(
        id="PLS-BATCH-002", area="BATCH",
        title="C++ batch container: the open batch is sent before a message that would exceed max messages/bytes, and as soon as it is full, or when the publish-delay timer fires",
        source=f"{_CPPLIB}BatchMessageContainerBase.h",
        quote="", status="inferred", applies_to=_CPP,
        note=("hasEnoughSpace: count < max and bytes + len(m) <= maxBytes; isFull: count >= max or bytes >= maxBytes; "
              "the timer starts with the batch's first message (ProducerImpl.cc). Bytes are payload bytes. "
              f"{_LIVE}5 payloads of 40 bytes, max 100 bytes: entries of 2, 2, 1; 10 messages, max 5: 2 entries; "
              "one message with max delay 100 ms: send returned after ~110 ms. A max of 1 (or 0) is refused when the "
              "producer is created (ProducerConfiguration::setBatchingMaxMessages: InvalidArgument, live 2026-11-26)."),
    ),
    Rule(
        id="PLS-BATCH-003", area="BATCH",
        title="KeyBased batching: one batch per key (ordering key, else partition key; keyless together), sent in order of each batch's first message (C++) or last message (Java)",
        source=f"{_MSG}#batching-for-key-shared-subscriptions",
        quote="This batching method ensures that the producers pack the messages with the same key to the same batch.",
        status="normative", applies_to=_ALL,
        note=(f"Order of the batches: {_CPPLIB}BatchMessageKeyBasedContainer.cc sorts by first sequence id. "
              f"{_LIVE}keys a,b,a,'',b,a -> a: (l,0,-1,0..2), b: (l,1,-1,0..1), keyless: (l,2,-1,0). "
              "A Java client before 2.11.0 sent them in order of each batch's first message, as C++ does (2.10.5's "
              "KeyedBatch keeps the first sequence id; live 2.10.5 with the Java client 2.10.5, 27 Nov 2026). "
              f"Java 4.0.8 (confirmed live with the Java client 4.0.8): {_JCLI}BatchMessageKeyBasedContainer.java#createOpSendMsgs "
              "sets every sub-batch's lowest sequence id to its highest (so the broker's dedup sees a weak order) and "
              "sorts by it: keys a,b,a,'',b,a go out as '' (last seq 3), b (4), a (5); getKey is Base64 of the ordering "
              "key if set, else the partition key. Case batch-key-based-java."),
    ),
    Rule(
        id="PLS-BATCH-004", area="BATCH",
        title="Without batch index ack, a partly acked batch that is redelivered comes back whole, acked messages included",
        source=f"{_MSG}#batching",
        quote=("It means that when not all batch messages are acknowledged, then unexpected failures, negative "
               "acknowledgments, or acknowledgment timeouts can result in a redelivery of all messages in this batch."),
        status="normative", applies_to=_ALL_GO,
        note=(f"C++ acks the entry only when every index is acked ({_CPPLIB}BatchMessageAcker.h). "
              f"{_LIVE}batch_index_ack_enabled=False, m0 and m2 of 4 acked, m1 nacked: m0..m3 redelivered with count 1; "
              "m0 and m3 acked then consumer closed: a new consumer got m0..m3. A cumulative ack of a message inside "
              "a batch that is not wholly acked acks only up to the entry before it, so that batch too comes back whole "
              f"({_JCLI}MessageIdAdvUtils.java#acknowledge,prevMessageId; apache/pulsar-client-go "
              "pulsar/consumer_partition.go#internalAckIDCumulative prev(); C++ BatchMessageAcker); upstream tests "
              "ConsumerRedeliveryTest#testAckNotSent, pulsar-client-cpp BatchMessageTest#testCumulativeAck/testMixedAck "
              "(cases up-java-a-redelivery-ack-not-sent-*, up-cpp-batch-*, live 4.0.8 and 5.0.0-M1, 6 Dec 2026)."),
    ),
    Rule(
        id="PLS-BATCH-005", area="BATCH",
        title="With batch index ack on broker and consumer, a redelivered batch brings back only its unacked messages",
        source=f"{_MSG}#batching",
        quote=("When batch index acknowledgment is enabled, the consumer filters out the batch index that has been "
               "acknowledged and sends the batch index acknowledgment request to the broker."),
        status="normative", applies_to=_ALL,
        note=("Needs acknowledgmentAtBatchIndexLevelEnabled=true (broker; default false up to 4.0, true from 4.1 "
              "per PIP-391) and batch_index_ack_enabled=True (Python default False). "
              f"{_LIVE}m0, m2 of 4 acked, m1 nacked: m1 and m3 redelivered (count 1); m0 and m3 acked then close: "
              "a new consumer got m1, m2."),
    ),
    Rule(
        id="PLS-BATCH-006", area="BATCH",
        title="A nack of one message of a batch redelivers the whole entry (minus acked indexes with batch index ack)",
        source=f"{_MSG}#negative-acknowledgment",
        quote="If batching is enabled, all messages in one batch are redelivered to the consumer.",
        status="normative", applies_to=_ALL_GO,
        note=(f"C++ NegativeAcksTracker groups nacks by entry ({_CPPLIB}NegativeAcksTracker.cc). "
              f"{_LIVE}nack of m1 alone also brought m3 (never nacked) back, with count 1."),
    ),
    Rule(
        id="PLS-BATCH-007", area="BATCH",
        title="Python producers do not batch unless batching_enabled=True (C++ and Java default to batching)",
        source=_PY,
        quote="", status="inferred", applies_to=_PYONLY,
        note=(f"create_producer(batching_enabled=False); C++ ProducerConfiguration defaults to true. "
              f"{_LIVE}a default Python producer's ids have batch_index -1."),
    ),
    Rule(
        id="PLS-BATCH-008", area="BATCH",
        title="Java: a batch that holds a single message is sent as a plain message (batch index -1); C++ writes a batch of one (index 0)",
        source="apache/pulsar pulsar-client/src/main/java/org/apache/pulsar/client/impl/BatchMessageContainerImpl.java#createOpSendMsg",
        quote="", status="inferred", applies_to=AppliesTo(">=2.11", ("java",)),
        note=("PIP-189 (apache/pulsar PR #16605, in the 2.11.0 client): before it a lone message went as a batch of one "
              "(live 2.10.5 with the Java client 2.10.5, 27 Nov 2026; profile single_message_batch_unbatched). "
              "The version bound is the Java client's, which the suite builds at the broker's release. "
              "createOpSendMsg copies the one message's own metadata when messages.size() == 1, and "
              "ProducerImpl.OpSendMsg#setMessageId gives it a MessageIdImpl ('If there is only one message in batch, "
              "the producer will publish messages like non-batch'). Live 4.0.8 (Java client 4.0.8): KeyBased batching "
              "of a,b,a,'',b,a wrote the keyless message alone as (l,0,-1,-1) and the others as batches (l,1,-1,0..1), "
              "(l,2,-1,0..2)."),
    ),
    Rule(
        id="PLS-BATCH-009", area="BATCH",
        title=("A batch leaves on the publish-delay timer, when its container is full, or at a flush or sync send: each "
               "entry is a run of one producer's pending messages in send order within the container's limits, and "
               "no batch reaches the broker before its first message was sent"),
        source=(f"{_CPPLIB}ProducerImpl.cc#sendAsync,batchMessageTimeoutHandler; {_JCLI}ProducerImpl.java#batchFlushTask; "
                "apache/pulsar-client-go pulsar/producer_partition.go#runEventsLoop"),
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("docs/concepts-messaging.md#batching: 'The batch size is defined by the maximum number of messages and "
              "the maximum publish latency.' C++ starts its timer when the first message is added to an empty "
              "container (batchTimer_->expires_from_now(batchingMaxPublishDelay)) and the handler sends the open "
              "batch; Java's batchFlushTask runs while batches flow and sends only once batchingMaxPublishDelay has "
              "passed since the last batch send (lastBatchSendNanoTime, first set when the producer connects), so it "
              "may fire at any moment once the producer is older than the delay, and waits at most about two periods; "
              "Go's batchFlushTicker ticks from the producer's creation (so neither sends on its timer within the "
              "delay of the producer's creation). A batch leaves at the latest with the add "
              "that fills it or finds no room in it (Java triggerSendIfFullOrScheduleFlush; C++ isFull; Go only at "
              "the next add), so a Java batch filled within the delay of its producer's creation leaves full "
              "(ConsumerRedeliveryTest#testAckNotSent: batchingMaxMessages 5, a 1 h delay). Where the timer may "
              "fire the model keeps every split (reference_model/batching.py match_split, leave_window) and the "
              "checker follows the one the ids show. Live 4.0.8, Java 1 ms: two async sends 0.4 ms apart and a "
              "flush 0.4 ms later made two entries (2026-11-26)."),
    ),
    Rule(
        id="PLS-BATCH-010", area="BATCH",
        title=("An ack that names a batched message by the id its producer returned (the consumer never received it) "
               "acks the whole entry (Java, Go; C++ with batch index ack on the consumer, or an id rebuilt from its "
               "numbers); from a C++ producer's own id without batch index ack, an individual ack acks nothing and a "
               "cumulative one only what was stored before the entry"),
        source=(f"{_JCLI}MessageIdAdvUtils.java#isBatch,acknowledge; {_JCLI}BatchMessageIdImpl.java (4-argument "
                f"constructor: batch size 0); apache/pulsar-client-go pulsar/impl_message.go#trackingMessageID.ack; "
                f"{_CPPLIB}MessageIdBuilder.cc#build, {_CPPLIB}BatchMessageAcker.h, "
                f"{_CPPLIB}ConsumerImpl.cc#prepareIndividualAck,prepareCumulativeAck"),
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("The docs say an ack acknowledges the message it names; for an id that did not come with a receive the "
              "clients differ. Java: the producer's BatchMessageIdImpl has batch size 0, so isBatch is false and the "
              "ack (either kind, batch index ack or not) goes out for (ledger, entry). Go: an id without its batch "
              "tracker has ack() and ackCumulative() true, so (ledger, entry) is acked (apache/pulsar-client-go issue "
              "#597, open since 2021, asks for the Java behaviour). C++: the producer's id is a BatchedMessageIdImpl "
              "whose acker is the base BatchMessageAcker (ackIndividual and ackCumulative false, an empty bit set): "
              "without batch index ack an individual ack sends nothing (and the received siblings' acker never "
              "learns of it, so the entry stays unacked), a cumulative one acks the previous entry; with it the ack "
              "goes out with an empty ack set, which acks the entry. An id rebuilt from numbers (another client's) is "
              "a plain MessageIdImpl: the entry. Each client also drops copies of what it acked that arrive after the "
              "ack (the ack grouping tracker's isDuplicate), but keeps those already queued. "
              "Live 4.0.8, 6 Dec 2026 (python 3.13.0, java 4.0.8, go 0.19.0; m1..m3 one batch, ack of m2 by the "
              "producer's id, then a new consumer): Java and Go individual and cumulative, any batch index ack: the "
              "new consumer got only m4; C++ without batch index ack: m1..m4 (individual, cumulative, and after the "
              "received m1, m3 were acked too); C++ with it: only m4. Cases batching/ack-producer-batch-id-*."),
    ),
    # ---- dead-letter topics (reference_model/dead_letter.py) -----------------------------
    Rule(
        id="PLS-DLQ-002", area="DLQ",
        title="DLQ (C++/Python and Java): with max_redeliver_count N, the application sees a message N+1 times (counts 0..N); the next nack moves it to the DLQ and acks it",
        source=f"{_CPPLIB}ConsumerImpl.cc",
        quote="", status="inferred", applies_to=_ALL,
        note=("messageReceived remembers deliveries with count >= N; a nack or ack timeout of such a message goes "
              "through processPossibleToDLQ (publish, then ack on the source); a delivery with count > N goes "
              "straight to the DLQ. Docs only say 'When the value of `maxRedeliverCount` is reached, the unconsumed "
              f"messages are moved to a dead letter topic.' {_LIVE}Shared and Key_Shared, N=2, nack delay 100 ms: "
              "counts 0, 1, 2, then the message was in '<topic>-s-DLQ' and the source backlog was 0. Java 4.0.8 "
              f"({_JCLI}ConsumerImpl.java#messageReceived, #processPossibleToDLQ) counts the same way: redeliveryCount "
              ">= maxRedeliverCount remembers the delivery, > skips it straight to the DLQ (confirmed live with the "
              "Java client 4.0.8: cases dlq-java, dlq-max-redeliver-java, cross-dlq-origin-id)."),
    ),
    Rule(
        id="PLS-DLQ-008", area="DLQ",
        title="DLQ (Go): DLQPolicy.MaxDeliveries N is deliveries, not redeliveries: the application sees a message N times (counts 0..N-1), then it goes to the DLQ (go client only)",
        source="apache/pulsar-client-go pulsar/consumer.go (DLQPolicy), pulsar/dlq_router.go",
        quote="MaxDeliveries specifies the maximum number of times that a message will be delivered before being sent to the dead letter queue.",
        status="inferred", applies_to=_GO,
        note=("pulsar-client-go issue #501: the Go client's count is one less than Java's maxRedeliverCount (PLS-DLQ-002); "
              "the trace's max_redeliver_count is given as MaxDeliveries (docs/go-driver.md). dlq_router.go routes a "
              "message whose redeliveryCount >= MaxDeliveries to the DLQ; MaxDeliveries 0 is refused "
              "(InvalidConfiguration, 'DLQPolicy.MaxDeliveries needs to be > 0'), and there is no default dead-letter "
              "topic: a policy without DeadLetterTopic is refused (InvalidConfiguration, 'DLQPolicy.Topic needs to be set "
              "to a valid topic name'; live 4.0.8) unless RetryEnable sets both. The copy carries REAL_TOPIC, "
              "ORIGIN_MESSAGE_ID and the legacy ORIGIN_MESSAGE_IDY_TIME, each id as the Go client's "
              "'ledger:entry:partition' (partition 0 on a topic that is not partitioned). Live 4.0.8 with the Go client "
              "0.19.0, 28 Nov 2026: MaxDeliveries 2 gave counts 0, 1, then the copy; the Java client with 2 gave 0, 1, 2 "
              "(tests/live/test_go_client_live.py)."),
    ),
    Rule(
        id="PLS-GO-001", area="GO",
        title="The Go client has no ack timeout, no redeliverUnacknowledgedMessages, no priority level, no initial sequence id, no routing mode, no ExclusiveWithFencing and no null message value: a trace asking for one is refused by the client (InvalidArgument) (go client only)",
        source="apache/pulsar-client-go pulsar/consumer.go, pulsar/producer.go, pulsar/message.go",
        quote="", status="inferred", applies_to=_GO,
        note=("pulsar-client-go 0.19.0's public API: ConsumerOptions has no AckTimeout or PriorityLevel, the Consumer "
              "interface no RedeliverUnackedMessages, ProducerOptions no InitialSequenceID or routing mode (its default "
              "router only), ProducerAccessMode Shared / Exclusive / WaitForExclusive only, ProducerMessage no "
              "null-value flag. drivers/go refuses each with InvalidArgument naming the missing API; the model does the "
              "same for a Go handle (Profile.*_supported)."),
    ),
    Rule(
        id="PLS-DLQ-003", area="DLQ",
        title="DLQ message: same payload and keys; properties = original + ORIGIN_MESSAGE_ID + REAL_TOPIC; C++ writes the id '(ledger,entry,partition,batch)', Java 'ledger:entry:partition[:batch]' and adds REAL_SUBSCRIPTION and ORIGIN_MESSAGE_IDY_TIME",
        source=f"{_CPPLIB}ConsumerImpl.cc",
        quote="", status="inferred", applies_to=_ALL,
        note=("processPossibleToDLQ; names in lib/ConsumerImpl.h. Java writes ORIGIN_MESSAGE_ID as 'l:e:p' / 'l:e:p:b' "
              "(the docs' example 'ORIGIN_MESSAGE_ID = 1:0:-1:0' is Java's). "
              f"{_LIVE}properties {{'k': 'v', 'ORIGIN_MESSAGE_ID': '(2276,0,-1,-1)', 'REAL_TOPIC': "
              "'persistent://public/<ns>/dl-Shared'}, partition key 'pk' kept, redelivery_count 0 in the DLQ. "
              f"Java 4.0.8 (confirmed live with the Java client 4.0.8, cases dlq-java and cross-dlq-origin-id): {_JCLI}ConsumerImpl.java#processPossibleToDLQ and "
              "#getPropertiesMap (each property only if absent): ORIGIN_MESSAGE_ID = MessageId.toString() (MessageIdImpl "
              "'l:e:p', BatchMessageIdImpl 'l:e:p:b'), REAL_TOPIC = the message's topic (the partition's name), "
              "REAL_SUBSCRIPTION = the subscription, ORIGIN_MESSAGE_IDY_TIME = the same id (RetryMessageUtil's "
              "deprecated name, a historical typo); the DLQ producer is '<topic>-<sub>-<consumer>-<5 random>-DLQ', "
              "batching off; key and event time copied. Case dlq-java."),
    ),
    Rule(
        id="PLS-DLQ-004", area="DLQ",
        title="initial_subscription_name creates that subscription on the DLQ topic when the DLQ producer is created",
        source=f"{_MSG}#dead-letter-topic",
        quote=("To automatically create an initial subscription for the DLQ, you can specify the "
               "`initialSubscriptionName` parameter."),
        status="normative", applies_to=_ALL,
        note=("Fails if the broker's allowAutoSubscriptionCreation is off. The DLQ producer is created lazily, at "
              f"the first move. {_LIVE}after the move the DLQ topic's subscriptions were ['dlqsub'] and 'dlqsub' read the message."),
    ),
    Rule(
        id="PLS-DLQ-005", area="DLQ",
        title="Dead-lettering happens only on Shared and Key_Shared subscriptions; on Exclusive/Failover a nacked message is redelivered forever with count 0",
        source=f"{_MSG}#dead-letter-topic",
        quote="Currently, dead letter topic is enabled in Shared and Key_Shared subscription types.",
        status="normative", applies_to=_ALL,
        note=(f"C++ turns a nack on Exclusive/Failover into a rewind that does not count (see PLS-NACK-003). "
              f"{_LIVE}Exclusive, N=2: 20 deliveries in 2.5 s all with count 0; no DLQ topic was created."),
    ),
    Rule(
        id="PLS-DLQ-006", area="DLQ",
        title="C++/Python: when a batched message is dead-lettered, every message of its batch goes to the DLQ, each with its own ORIGIN_MESSAGE_ID",
        source=f"{_CPPLIB}ConsumerImpl.cc",
        quote="", status="inferred", applies_to=_CPP,
        note=("receiveIndividualMessagesFromBatch remembers the whole batch under the entry id. Without batch "
              "index ack the acked messages of the batch go too. "
              f"{_LIVE}batch b0,b1,b2, N=1, b1 nacked, b0 and b2 acked each time: all three delivered with counts 0 "
              "and 1, then the DLQ held b0, b1, b2 with ORIGIN_MESSAGE_ID '(l,e,-1,0)', '(l,e,-1,1)', '(l,e,-1,2)'."),
    ),
    Rule(
        id="PLS-DLQ-007", area="DLQ",
        title="max_redeliver_count below 1 is refused when the consumer is built (Python ValueError, Java IllegalArgumentException): InvalidArgument",
        source=f"{_PY}#ConsumerDeadLetterPolicy",
        quote="", status="inferred", applies_to=AppliesTo("*", ("python", "java")),
        note=(f"{_LIVE}0 and -1 -> ValueError('max_redeliver_count must be greater than 0'). Java 4.0.8 (read, not yet "
              "confirmed live): apache/pulsar pulsar-client .../impl/ConsumerBuilderImpl.java#deadLetterPolicy "
              "checkArgument(maxRedeliverCount > 0, 'MaxRedeliverCount must be > 0.'); case dlq-max-redeliver-java.")),
    # ---- TTL, retention (reference_model/retention.py) -----------------------------------
    Rule(
        id="PLS-TTL-001", area="TTL",
        title="Message TTL: an expiry pass removes every unacked message older than the TTL from the subscription; younger ones stay",
        source=f"{_MSG}#message-retention-and-expiry",
        quote="Message expiry enables you to set a time to live (TTL) for messages that have not yet been acknowledged",
        status="normative", applies_to=_ALL,
        note=(f"{_BROKER}persistent/PersistentMessageExpiryMonitor.java moves the cursor past the last expired entry. "
              f"{_LIVE}TTL 1 s, m0..m2 sent, 1.3 s later 'fresh' sent, expiry forced on s: backlog 1, a new consumer got only 'fresh'."),
    ),
    Rule(
        id="PLS-TTL-002", area="TTL",
        title="TTL acts only at an expiry pass: every messageExpiryCheckIntervalInMinutes (default 5) or when the admin API forces one",
        source="apache/pulsar pulsar-broker-common/src/main/java/org/apache/pulsar/broker/ServiceConfiguration.java",
        quote="", status="inferred", applies_to=_ALL,
        note=("Docs say nothing of when. Admin: POST /admin/v2/persistent/{t}/{ns}/{topic}/subscription/{sub}/expireMessages/{seconds} "
              "(409 when the subscription is already caught up); on a non-persistent topic the pass is refused (HTTP 405 "
              "'Expire messages on a non-persistent topic is not allowed', found by the Java fuzz campaign of 2026-11-26). "
              f"{_LIVE}messageExpiryCheckIntervalInMinutes=5; TTL 1 s: backlog unchanged 1.8 s after sending; after the forced pass 0."),
    ),
    Rule(
        id="PLS-TTL-003", area="TTL",
        title="An expired message that was delivered but not acked is not redelivered",
        source=f"{_BROKER}persistent/PersistentMessageExpiryMonitor.java",
        quote="", status="inferred", applies_to=_ALL,
        note=(f"Expiry marks the entries deleted on the cursor, delivered or not. {_LIVE}m0 received and held unacked, "
              "expired; after the consumer closed, a new one got only 'fresh'."),
    ),
    Rule(
        id="PLS-RETENTION-001", area="RETENTION",
        title="Without retention, acked messages may still be read until their ledger is trimmed: deletion is allowed, never immediate or required",
        source="apache/pulsar managed-ledger/src/main/java/org/apache/bookkeeper/mledger/impl/ManagedLedgerImpl.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("Docs vs live: concepts-messaging.md#message-retention-and-expiry says brokers 'immediately delete all "
              "messages that have been acknowledged by a consumer'; data goes a ledger at a time (trimConsumedLedgersInBackground) "
              f"after a rollover. {_LIVE}3 messages acked on 'a', then a new Earliest subscription 'b' got all 3; "
              "a reader on a topic that never had a subscription read all 3. Only a closed ledger is trimmed "
              "(ManagedLedgerImpl#currentLedgerIsFull, trimConsumedLedgersInBackground): live 4.0.8, 2026-11-25, after "
              "an unload closed the ledger of 3 acked messages, a new Earliest subscription got none of them, three runs "
              "of three (conformance/evidence/retention/). The checker allows both outcomes for messages acked on every "
              "other subscription once their ledger may be closed (retention.ledger_closed_by: an unload, or a rollover "
              "threshold), and FAILs a deletion from a ledger that is still open (reference_model/feature_ops.py, "
              "trimmable, ledger_closed_by)."),
    ),
    Rule(
        id="PLS-RETENTION-002", area="RETENTION",
        title="With a retention policy, acked messages stay readable (e.g. by a new Earliest subscription) within the retention time and size",
        source=f"{_MSG}#message-retention-and-expiry",
        quote="Message retention enables you to store messages that have been acknowledged by a consumer",
        status="normative", applies_to=_ALL_GO,
        note=f"{_LIVE}retention 10 min / 10 MB, 3 messages acked: a new Earliest subscription got all 3.",
    ),
    # ---- compaction (reference_model/compaction.py) --------------------------------------
    Rule(
        id="PLS-COMPACT-001", area="COMPACT",
        title="A compacted reader sees, up to the compaction horizon, only the latest message of each key, in topic order",
        source=_COMPACT,
        quote=("When you run compaction on a topic, Pulsar goes through a topic's backlog and removes messages that are "
               "obscured by later messages, i.e. topic compaction goes through the topic on a per-key basis and leaves "
               "only the most recent message associated with that key."),
        status="normative", applies_to=_ALL_GO,
        note=(f"Admin: PUT .../compaction, GET .../compaction until status SUCCESS. {_LIVE}a1,b1,a2,(no key),c1,d1 "
              "-> reader with is_read_compacted: a2, b1, c1, d1 at their original ids (case compact-latest-per-key; "
              "tombstones: PLS-COMPACT-006)."),
    ),
    Rule(
        id="PLS-COMPACT-002", area="COMPACT",
        title="Broker 4.0.8 keeps a tombstone (empty payload or null value) as its key's latest message: earlier values are gone, the tombstone is still read",
        source=f"{_COMPACTOR}AbstractTwoPhaseCompactor.java",
        quote="", status="withdrawn", applies_to=AppliesTo("==4.0.8", FIRST_CLIENTS),
        note=("Withdrawn: it encoded a broker bug as the spec. The docs say a tombstone deletes its key, and so do "
              "brokers before 4.0 and after the fix (live: 3.3.6 compacted ledger 2 entries, reader a2, d1). apache/pulsar "
              "PR #23285 ('Reducing the parse of MessageMetadata in compaction', 4.0.0) parses the metadata once on one "
              "slice of RawMessage#getHeadersAndPayload, and extractKeyAndSize then measures a fresh slice: metadata plus "
              "payload, never 0, so a non-batched tombstone without uncompressed_size (C++/Python/Go producers) is kept. "
              "Fixed by PR #25817 ('Fix non-batched null-value messages not removed during topic compaction'), released "
              "in 4.0.11 and 4.2.2. Replaced by PLS-COMPACT-006; what 4.0.8 does is known deviation KD-003."),
    ),
    Rule(
        id="PLS-COMPACT-003", area="COMPACT",
        title="Messages without a key are dropped from the compacted view when topicCompactionRetainNullKey=false (the default from 3.2.0), and kept when it is true (before 3.2.0)",
        source=f"{_COMPACT}#key-configuration-parameters",
        quote=("When `false` (default), messages with null keys are treated as non-key messages and may be removed "
               "during compaction."),
        status="normative", applies_to=_ALL,
        note=(f"{_LIVE}the keyless message was absent from the compacted view (broker topicCompactionRetainNullKey=false). "
              "The key and the drop come from PIP-318 (apache/pulsar PR #21578, 3.2.0); its cherry-picks default it to true "
              "(PR #21662 branch-3.0, #21601 3.1.2, #21665 2.11.4), and older releases always pass keyless messages "
              "through (PR #1514). Live: 2.10.5 (no such key) kept the keyless message. The model reads the broker's "
              "runtime value (profiles.PROFILE_CONFIG_KEYS), else the release's default."),
    ),
    Rule(
        id="PLS-COMPACT-004", area="COMPACT",
        title="After the compaction horizon, a compacted reader reads the topic as published",
        source=_COMPACT,
        quote="Read from the topic like normal (if the message ID is greater than or equal to the compaction horizon) or",
        status="normative", applies_to=_ALL,
        note=f"{_LIVE}a3 sent after the compaction: the compacted reader got a2, b1, c1, d1, a3 (a2 and a3 both).",
    ),
    Rule(
        id="PLS-COMPACT-005", area="COMPACT",
        title="is_read_compacted is refused with InvalidConfiguration on Shared/Key_Shared subscriptions and on non-persistent topics (a reader there: NotAllowedError)",
        source=f"{_CPPLIB}ClientImpl.cc",
        quote="", status="inferred", applies_to=_CPP,
        note=("A client-side check in subscribeAsync; Exclusive, Failover and readers are allowed. "
              f"{_LIVE}Shared and KeyShared -> pulsar.InvalidConfiguration; Exclusive and Failover ok; "
              "non-persistent Exclusive -> InvalidConfiguration. A reader with read_compacted on a non-persistent "
              "topic goes past that check and the broker refuses it: NotAllowedError (live 4.0.8, C++ 4.2.0, "
              "2026-11-26, found by the generated traces of issue 16)."),
    ),
    Rule(
        id="PLS-COMPACT-007", area="COMPACT",
        title="The Go client does not check read_compacted itself: on Shared/Key_Shared subscriptions and non-persistent topics the broker refuses it with NotAllowedError (go client only)",
        source=f"{_BROKER}persistent/PersistentTopic.java",
        quote="", status="inferred", applies_to=_GO,
        note=("pulsar-client-go 0.19.0 passes ConsumerOptions.ReadCompacted to CommandSubscribe without a check "
              "(pulsar/consumer_partition.go); the broker refuses: PersistentTopic#internalSubscribe 'readCompacted only "
              "allowed on failover or exclusive subscriptions', NonPersistentTopic#subscribe 'readCompacted only valid on "
              "persistent topics' (NotAllowedException, 4.0.8 sources). Live 4.0.8 with the Go client 0.19.0, "
              "28 Nov 2026, found by the Go fuzz campaign (a read_compacted Exclusive consumer on a non-persistent topic: "
              "NotAllowedError) and case read-compacted-refused-go."),
    ),
    Rule(
        id="PLS-COMPACT-006", area="COMPACT",
        title="A tombstone (empty payload or null value) as its key's latest message up to the horizon deletes the key: the compacted view has no message of that key",
        source=_COMPACT,
        quote="If any given message has an empty payload, it will be skipped and considered deleted (akin to the concept of tombstones in key-value databases).",
        status="normative", applies_to=_ALL,
        note=(f"Phase one of {_COMPACTOR}PublishingOrderCompactor.java#compactMessage removes the key when the "
              "payload size is 0 (a null value is sent with an empty payload). Live (pulsar-client 3.13.0): broker 3.3.6 "
              "b1 then b'', c1 then send(None) -> compacted ledger 2 entries, the reader read a2, d1 only. Brokers "
              "4.0.0-4.0.10 and 4.1.0-4.2.1 keep a non-batched tombstone from a producer that does not set "
              "uncompressed_size (apache/pulsar PR #23285, fixed by PR #25817): known deviation KD-003, recorded on 4.0.8. "
              "The Java client batches every message (numMessagesInBatch), so its tombstones take the batch path and are "
              "removed on those brokers too."),
    ),
    # ---- producer access modes (reference_model/access_modes.py) -------------------------
    Rule(
        id="PLS-ACCESS-001", area="ACCESS",
        title="Shared access mode (the default): any number of Shared producers may publish together",
        source=f"{_CLI}#access-mode",
        quote="Multiple producers can publish on a topic.",
        status="normative", applies_to=_ALL_GO,
        note=f"{_LIVE}two Shared producers both sent successfully.",
    ),
    Rule(
        id="PLS-ACCESS-002", area="ACCESS",
        title="An Exclusive producer is refused with ProducerFenced when any producer is already connected",
        source=f"{_CLI}#access-mode",
        quote=("If there is already a producer connected, other producers trying to publish on this topic get errors "
               "immediately."),
        status="normative", applies_to=_ALL_GO,
        note=(f"The error is ProducerFenced ({_BROKER}AbstractTopic.java#incrementTopicEpochIfNeeded), whether the "
              f"present producer is Shared or exclusive. {_LIVE}after Shared, Exclusive, ExclusiveWithFencing or "
              "WaitForExclusive: pulsar.ProducerFenced; the first producer kept sending."),
    ),
    Rule(
        id="PLS-ACCESS-003", area="ACCESS",
        title="A Shared producer is refused with ProducerBusy while an exclusive producer holds the topic",
        source=f"{_BROKER}AbstractTopic.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("incrementTopicEpochIfNeeded: 'Topic has an existing exclusive producer'. The docs give only the "
              f"exclusive side. {_LIVE}after Exclusive, ExclusiveWithFencing or WaitForExclusive: pulsar.ProducerBusy."),
    ),
    Rule(
        id="PLS-ACCESS-004", area="ACCESS",
        title="ExclusiveWithFencing always succeeds and fences the present producers: an exclusive one's next send fails ProducerFenced, a Shared or WaitForExclusive one's times out",
        source=f"{_CLI}#access-mode",
        quote="If there is already a producer connected, it will be removed and invalidated immediately.",
        status="normative", applies_to=AppliesTo(">=2.11", FIRST_CLIENTS),
        note=("ExclusiveWithFencing came with PIP-161 (apache/pulsar PR #15488, 2.11.0); an older broker reads "
              "the unknown mode as Shared (live 2.10.5: a Shared producer joins it; it is refused ProducerBusy behind "
              "an exclusive holder; ``access_modes.mode_the_broker_reads``). "
              f"The fenced producer reconnects: ProducerFenced is final in C++ ({_CPPLIB}ProducerImpl.cc#handleCreateProducer), "
              "ProducerBusy (Shared) and waiting (WaitForExclusive) are retried until the send timeout. "
              f"{_LIVE}fenced Exclusive / ExclusiveWithFencing: next send pulsar.ProducerFenced; fenced Shared and "
              "WaitForExclusive: pulsar.Timeout after send_timeout_millis=3000."),
    ),
    Rule(
        id="PLS-ACCESS-005", area="ACCESS",
        title="WaitForExclusive: creation waits while another producer holds the topic and completes when it leaves",
        source=f"{_CLI}#access-mode",
        quote=("If there is already a producer connected, the producer creation is pending (rather than timing out) "
               "until the producer gets the `Exclusive` access."),
        status="normative", applies_to=_ALL_GO,
        note=(f"{_LIVE}create_producer blocked 0.7 s behind an Exclusive producer and returned right after it closed. "
              "Behind Shared producers the waiter gets the topic when the last of them closes only since apache/pulsar "
              "PR #24516 (4.0.6): 3.3.6, 4.0.0 and 4.0.1 keep it pending (known deviations KD-301/KD-302, measured)."),
    ),
    Rule(
        id="PLS-ACCESS-006", area="ACCESS",
        title="A second producer with the name of a connected producer on the topic is refused with ProducerBusy",
        source=f"{_BROKER}AbstractTopic.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("internalAddProducer: NamingException('Producer with name ... is already connected to topic') -> "
              f"ServerError ProducerBusy. {_LIVE}second Shared producer named 'same': pulsar.ProducerBusy."),
    ),
    # ---- non-persistent topics (reference_model/non_persistent.py) -----------------------
    Rule(
        id="PLS-NP-001", area="NP",
        title="Non-persistent topics deliver a message only to subscriptions with a consumer connected when it is published",
        source=f"{_MSG}#non-persistent-topics",
        quote="The received messages are immediately transmitted to all connected consumers.",
        status="normative", applies_to=_ALL_GO,
        note=(f"{_LIVE}a message sent before any consumer was never delivered (even at Earliest); one sent while the "
              "subscription's consumer was closed was lost; a reader got only messages sent after it was created."),
    ),
    Rule(
        id="PLS-NP-002", area="NP",
        title="Non-persistent topics never redeliver: a nacked message does not come back",
        source=f"{_BROKER}nonpersistent/NonPersistentDispatcherMultipleConsumers.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=(f"Nothing is stored, so a redelivery request has nothing to send. {_LIVE}Shared, nack delay 100 ms: nothing "
              "arrived in the next 600 ms."),
    ),
    Rule(
        id="PLS-NP-003", area="NP",
        title="Every message on a non-persistent topic has id (0,0,partition,-1), or (0,0,partition,i) as message i of a batch, on send and on receive",
        source=f"{_BROKER}nonpersistent/NonPersistentTopic.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=(f"publishMessage acks with ledger/entry 0/0. So ids do not identify messages there. {_LIVE}send returned "
              "'(0,0,-1,-1)' for every message and the consumer reported '(0,0,-1,-1)'. A batching C++ producer numbers "
              "its batch's messages from the one receipt: a sync send on it returned '(0,0,-1,0)' (live 4.0.8, "
              "C++ 4.2.0, 2026-11-26, found by the generated traces of issue 16)."),
    ),
    Rule(
        id="PLS-NP-004", area="NP",
        title="Non-persistent topics ignore deliver_at / deliver_after: delivery is immediate on every subscription type",
        source=f"{_BROKER}nonpersistent/NonPersistentDispatcherMultipleConsumers.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=f"No delayed tracker there. {_LIVE}Shared, deliver_after 700 ms: received 2 ms after the send.",
    ),
)


# --------------------------------------------------------------------------- hashing, routing, Key_Shared
# Models: reference_model/hashing.py, routing.py, key_shared.py. Read in the released
# pulsar-broker jars (3.0.0, 3.0.2, 3.0.7, 3.2.3, 3.3.6, 4.0.8) and the C++ client source;
# confirmed live on 4.0.8 and 3.3.6 by tests/live/test_key_shared_live.py.

_LIVE_KS = "Live (brokers 4.0.8 and 3.3.6, pulsar-client 3.13.0): "
_COMMON = "apache/pulsar pulsar-common/src/main/java/org/apache/pulsar/common/"

RULES = RULES + (
    Rule(
        id="PLS-HASH-001", area="HASH",
        title="Pulsar's Murmur3_32Hash is MurmurHash3_x86_32 with seed 0 over the UTF-8 key bytes, masked with 0x7fffffff",
        source=f"{_COMMON}util/Murmur3_32Hash.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("makeHash returns the signed-bit-cleared hash. The docs' example murmur32('Order-3459134') = "
              "3112179635 is the unsigned value; Pulsar uses 964695987. Vectors checked against the 4.0.8 jar on a JVM."),
    ),
    Rule(
        id="PLS-HASH-002", area="HASH",
        title="JavaStringHash: Java hashes UTF-16 code units (String.hashCode); the C++ client hashes UTF-8 bytes as signed chars, so they differ for non-ASCII keys",
        source=f"{_CPPLIB}JavaStringHash.cc",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("'é': Java 233, C++ 2147481670 (after & INT_MAX). C++ assumes char is signed (x86-64); on ARM it is "
              "not. Checked by compiling lib/JavaStringHash.cc with g++ and against String.hashCode on a JVM."),
    ),
    Rule(
        id="PLS-ROUTE-001", area="ROUTE",
        title="A keyed message goes to partition hash(partition key) mod N; the ordering key does not route",
        source=f"{_CPPLIB}RoundRobinMessageRouter.cc",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("Java: signSafeMod(hash.makeHash(key), N) with JavaStringHash by default; C++: masked hash % N, "
              "BoostHash by default, and Python cannot choose the scheme, so live cases use a custom router that "
              "reproduces a scheme and check the client's own default only for 'same key, same partition'."),
    ),
    Rule(
        id="PLS-ROUTE-002", area="ROUTE",
        title="RoundRobin without a key: per message from a random first partition; with batching, the C++ client switches partition per batch",
        source=f"{_CPPLIB}RoundRobinMessageRouter.cc",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("ND: the first partition. Java with batching switches on a wall-clock period "
              "(RoundRobinPartitionMessageRouterImpl.java) instead of per batch."),
    ),
    Rule(
        id="PLS-ROUTE-003", area="ROUTE",
        title="SinglePartition: one partition, chosen at random when the producer is created, takes every keyless message",
        source=f"{_CPPLIB}SinglePartitionMessageRouter.cc",
        quote="", status="inferred", applies_to=_ALL,
        note="ND: which partition. Keyed messages are still hashed (PLS-ROUTE-001).",
    ),
    Rule(
        id="PLS-FAILOVER-004", area="FAILOVER",
        title="Failover on a partitioned topic: partition p's active consumer is sorted[p mod k], consumers sorted by priority level then name, k = how many share the best priority",
        source=f"{_BROKER}AbstractDispatcherSingleActiveConsumer.java#pickAndScheduleActiveConsumer",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=(f"Names compare as Java String.compareTo (UTF-16 code units). {_LIVE_KS}each partition's active "
              "consumer was sorted[p mod k] (Python cannot set priority levels, so all share priority 0)."),
    ),
    Rule(
        id="PLS-FAILOVER-005", area="FAILOVER",
        title="Failover with priority levels: only consumers of the best (lowest) priority level can be active, on a non-partitioned topic too; a worse-level consumer only drains what was in flight before the switch (java client only)",
        source=f"{_BROKER}AbstractDispatcherSingleActiveConsumer.java#pickAndScheduleActiveConsumer",
        quote="", status="inferred", applies_to=AppliesTo(">=3.0", ("java",)),
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): failover-priority-java passed. '
              "A 2.x broker makes a non-partitioned topic's first-connected consumer active whatever its level "
              "(apache/pulsar PR #4604; the ranking came back with PR #19502, 3.0): live 2.10.5 with the Java client "
              "2.10.5, 27 Nov 2026, the level-1 consumer that connected first kept the role "
              "(Profile.failover_priority_non_partitioned). "
              "Read in the 4.0.8 jar: the consumers are sorted by priorityLevel then name; when levels differ, only "
              "the first k (those of the best level) take part, in sorted[p mod k] (partition p) and in the hash ring "
              "(non-partitioned topic, PLS-FAILOVER-003). A switch after a join takes effect after "
              "activeConsumerFailoverDelayTimeMillis (1000 ms), so messages published within that time may still reach "
              "the previous active consumer. The docs (concepts-messaging.md#failover) mention priority only for "
              "partitioned topics. To be confirmed live (case failover-priority-java)."),
    ),
    Rule(
        id="PLS-ROUTE-004", area="ROUTE",
        title="The Java producer hashes the partition key with its own scheme, JavaStringHash by default (hashing_scheme: murmur3_32): partition signSafeMod(hash, N); the Python client cannot choose (InvalidArgument) (java client only)",
        source=f"{_MSG}#hashing-scheme",
        quote="The default hashing function for producers is `JavaStringHash`.",
        status="normative", applies_to=_JAVA,
        note=('Live 4.0.8 with the Java client 4.0.8 (drivers/java): route-hashing-scheme-java passed. '
              "Java 4.0.8: apache/pulsar pulsar-client .../impl/conf/ProducerConfigurationData.java (hashingScheme = "
              "JavaStringHash), RoundRobinPartitionMessageRouterImpl / SinglePartitionMessageRouterImpl "
              "(signSafeMod(hash.makeHash(key), N)), JavaStringHash (String.hashCode & INT_MAX, UTF-16), Murmur3Hash32 "
              "(UTF-8 bytes). Keyless messages without batching: round robin from a random start "
              "(ThreadLocalRandom.nextInt(N)), as PLS-ROUTE-002. The C++ default (BoostHash) is not modelled and the "
              "Python client has no hashing_scheme. To be confirmed live (case route-hashing-scheme-java)."),
    ),
    Rule(
        id="PLS-ROUTE-005", area="ROUTE",
        title="The Go producer routes by the ordering key when there is one, else the key: JavaStringHash over the UTF-8 bytes as an unsigned 32-bit value, partition hash % N (go client only)",
        source="apache/pulsar-client-go pulsar/default_router.go, pulsar/internal/hash.go",
        quote="", status="inferred", applies_to=_GO,
        note=("Read in pulsar-client-go 0.19.0: NewDefaultRouter hashes message.OrderingKey when set, else message.Key, "
              "with the producer's HashingScheme (JavaStringHash by default: h = 31*h + byte, uint32, the sign bit kept; "
              "Murmur3_32Hash masks it like Java), partition hash % N. So a key whose hash has the top bit set goes to "
              "another partition than from Java or C++ (which clear the sign bit first) unless N is a power of two, and "
              "an ordering key decides the partition where Java and C++ use the key. Live 4.0.8 with the Go client "
              "0.19.0, 28 Nov 2026: tests/live/test_go_client_live.py (3 partitions: keys with the top bit set, and a "
              "message with both keys)."),
    ),
    Rule(
        id="PLS-KEYSHARED-001", area="KEYSHARED",
        title="The sticky key of a message is its ordering key, else its partition key, else (keyless) a per-version fallback",
        source=f"{_COMMON}protocol/Commands.java#resolveStickyKey",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("4.x hashes producerName + '-' + sequenceId for a keyless message before falling back to NONE_KEY "
              "(the docs say NON_KEY); 3.x uses NONE_KEY. A batch carries its first message's keys. "
              f"{_LIVE_KS}keyless messages reached the consumer the per-version rule predicts."),
    ),
    Rule(
        id="PLS-KEYSHARED-002", area="KEYSHARED",
        title="The slot of a sticky key depends on broker version and selector: 4.x ring h % 65535 + 1; hash ranges h % 65536 (4.x maps 0 to 1); 3.x ring the full 31-bit h",
        source=f"{_BROKER}StickyKeyConsumerSelectorUtils.java#makeStickyKeyHash",
        quote="", status="inferred", applies_to=_ALL_GO,
        note="'Order-3459134': 4.x ring slot 20788, hash-range slot 6067 (the docs' 6067 is right only for ranges).",
    ),
    Rule(
        id="PLS-KEYSHARED-003", area="KEYSHARED",
        title="Consistent hashing (the default): each consumer has replica points on a ring; a key goes to the first point at or after its slot, wrapping",
        source=f"{_BROKER}ConsistentHashingStickyKeyConsumerSelector.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("Point key and collision rule differ by release: 3.0.0-3.0.2 name+i with sorted-list collisions; "
              "3.2.3 name\\0i; 3.0.7/3.3.6 name\\0nameIndex\\0i, newcomer wins; 4.x the same key, first owner keeps the "
              "point and others queue FIFO. The docs' description (name + i for i in 1..100, hash % list size) is "
              f"outdated. {_LIVE_KS}120/120 messages reached the predicted consumer and reported hash ranges matched "
              "range for range, including a collision and a hand-over on leave. "
              "Reported ranges (consumer stats keyHashRanges, ConsumerHashAssignmentsSnapshot on 4.x): the ring cut at "
              "its points, each consumer's ranges merged (key_shared.ring_reported_ranges); judged at every stats op "
              "on a Key_Shared subscription (case keyshared-ring-reported-ranges, live 4.0.8: all 6 stats matched "
              "across joins, a leave and a same-name rejoin)."),
    ),
    Rule(
        id="PLS-KEYSHARED-004", area="KEYSHARED",
        title="AUTO_SPLIT hash ranges (consistent hashing off): a joining consumer takes the lower half of the largest range; a leaving consumer's range merges into the next",
        source=f"{_BROKER}HashRangeAutoSplitStickyKeyConsumerSelector.java",
        quote="", status="inferred", applies_to=_ALL,
        note=("Ties pick the lowest range end; when the top range's owner leaves, the next-lower owner takes the top. "
              "No range left to split: ConsumerAssignError. Only with subscriptionKeySharedUseConsistentHashing=false. "
              f"{_LIVE_KS}ranges after 4 joins matched the docs diagram; leaves matched the merge rules. "
              "Reported ranges (consumer stats keyHashRanges): one range per consumer, the top one ending at 65536 "
              "(key_shared.auto_split_assignments); judged at every stats op (case keyshared-auto-split-reported-ranges, "
              "live 4.0.8 with the override: all 4 stats matched)."),
    ),
    Rule(
        id="PLS-KEYSHARED-005", area="KEYSHARED",
        title="STICKY: each consumer declares its own ranges in [0, 65535]; conflicts are refused with ConsumerAssignError; slots no one covers are not dispatched",
        source=f"{_BROKER}HashRangeExclusiveStickyKeyConsumerSelector.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("Client (lib/KeySharedPolicy.cc): empty list and bounds outside [0, 65535] refused; reversed or identical "
              "duplicate ranges get through. 4.0.8 refuses start > end, a consumer's own overlaps and overlaps with "
              "others; 3.x checks only start > end. Python sees ResultConsumerAssignError (the text is in the broker log). "
              "Reported ranges (consumer stats keyHashRanges): the declared ranges, on 4.x sorted and merged when "
              "adjacent (ConsumerHashAssignmentsSnapshot: live 4.0.8 reports [0, 99] + [100, 199] as [0, 199]); judged "
              "at every stats op (case keyshared-sticky-reported-ranges)."),
    ),
    Rule(
        id="PLS-KEYSHARED-006", area="KEYSHARED",
        title="4.x draining hashes: when a hash moves to a new consumer, none of its messages go there while the old consumer still holds unacked messages of that hash",
        source=f"{_BROKER}DrainingHashesTracker.java",
        quote="", status="inferred", applies_to=AppliesTo(">=4.0", CLIENTS),
        note=("PIP-379 (apache/pulsar #23309, #23352, #23429) replaced 3.x's 'recently joined consumers' rule. "
              "allowOutOfOrderDelivery=true turns it off. Live 4.0.8 (case keyshared-draining): a joining consumer "
              "got no message of a moved hash until the old owner acked its pending ones; 3.3.6 shows the same "
              "observable result through its recently-joined-consumers rule."),
    ),
    Rule(
        id="PLS-KEYSHARED-007", area="KEYSHARED",
        title="Key_Shared: a key is served by one consumer at a time, and its messages are first delivered in publish order",
        source=f"{_BROKER}persistent/PersistentStickyKeyDispatcherMultipleConsumers.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("Without allowOutOfOrderDelivery. Redeliveries (nack, close, ack timeout) may come in any order. "
              "Judged by reference_model/dispatch/key_shared.py on every Key_Shared history; "
              f"{_LIVE_KS}the keyshared cases passed, also on 4.0.8 with consistent hashing off."),
    ),
    Rule(
        id="PLS-KEYSHARED-008", area="KEYSHARED",
        title="A Key_Shared consumer whose KeySharedPolicy (AUTO_SPLIT/STICKY mode or allowOutOfOrderDelivery) differs from the connected consumers' is refused with ConsumerBusy; the connected consumers stay",
        source=f"{_BROKER}persistent/PersistentSubscription.java#checkForConsumerCompatibilityErrorWithDispatcher",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("apache/pulsar PR #23449 (issue #23272; release/4.0.1, "
              "RN pulsar-4.0.1): SubscriptionBusyException('Subscription is of different type. Active subscription "
              "key_shared mode of ... / ... out of order delivery ...') -> ServerError ConsumerBusy. Before it the "
              "broker replaced the dispatcher and closed the connected consumers, which reconnected and closed the "
              "newcomer in turn (known deviation KD-202). Once every consumer has left, a new policy is taken "
              "(#12035). Case keyshared-incompatible-policy."),
    ),
)

# ---- per-consumer unacked accounting (reference_model/unacked.py) --------------------------
RULES = RULES + (
    Rule(
        id="PLS-UNACKED-001", area="UNACKED",
        title="A Shared consumer at maxUnackedMessagesPerConsumer gets no more messages; acks that bring its count to half the limit resume delivery",
        source="static/reference/4.0.x/config/reference-configuration-broker.md#maxunackedmessagesperconsumer",
        quote=("Broker will stop sending messages to consumer once, this limit reaches until consumer starts "
               "acknowledging messages back and unack count reaches to maxUnackedMessagesPerConsumer/2."),
        status="normative", applies_to=_ALL,
        note=("Set per namespace by set_policy max_unacked_messages_per_consumer (admin "
              "set-max-unacked-messages-per-consumer). Not checked on a non-durable subscription: "
              "Consumer#getMaxUnackedMessages answers 0 unless the consumer is durable (live 4.0.8 and 4.2.4, Java, "
              "6 Dec 2026: regression pls-unacked-001-wrong-value-d010a708ddb1). Regression: apache/pulsar PR #20990 (2.10.6, 2.11.3, 3.0.2) made "
              "Consumer#individualAckNormal decrement the count after the unblock test, so with a limit of 1 an acked "
              "consumer stays blocked (blockedConsumerOnUnackedMsgs true, unackedMessages 0); fixed by PR #23796 "
              "(issue #22657; 3.3.5, 4.0.3). Live (pulsar-client 3.13.0), case unacked-limit-one-resumes: m1 never "
              "delivered on 3.0.2, 3.0.7 and 4.0.1 (KD-101, deviations.d/unacked.yaml); delivered on 3.3.6, 4.0.8, 4.2.4 "
              "and 5.0.0-M1. A redelivery request by ids (a nack's, a retry's) clears the blocked flag whatever the ids "
              "name (Consumer#redeliverUnacknowledgedMessages(List)), and the Shared dispatcher gives an unblocked "
              "consumer at least one entry, at its limit too: one more message is allowed from the request's earliest "
              "time (live 4.2.4, Go, regression pls-unacked-001-wrong-value-e82a48cad144)."),
    ),
    Rule(
        id="PLS-UNACKED-002", area="UNACKED",
        title="A Shared / Key_Shared consumer's unackedMessages counts the messages dispatched to it and not yet acked, redelivered or expired",
        source=f"{_BROKER}Consumer.java",
        quote="", status="inferred", applies_to=_ALL_GO,
        note=("Stats: subscriptions.<s>.consumers[i].unackedMessages, judged as a range (the receiver queue is hidden). "
              "apache/pulsar issue #369 (maintainer): it 'should tell the number of messages pushed to a particular consumer "
              "that weren't acked yet'. An expiry pass that moves the mark-delete past messages a consumer holds takes them "
              "out: apache/pulsar PR #25581 (4.2.2) 'Decrement unacked counter when removeAllUpTo removes pending acks'. "
              "Live, case unacked-expired-leave-count: 5 held then expired -> 0 on 4.2.4 and 5.0.0-M1; still 5 (6 after "
              "one more message) on 3.0.2, 3.0.7, 3.3.6, 4.0.1 and 4.0.8 (KD-103)."),
    ),
    Rule(
        id="PLS-UNACKED-003", area="UNACKED",
        title="On a non-persistent topic a Shared consumer's unackedMessages stays 0: nothing waits for an ack there",
        source=f"{_BROKER}nonpersistent/NonPersistentDispatcherMultipleConsumers.java",
        quote="", status="inferred", applies_to=_ALL,
        note=("Clients send no acks on non-persistent topics (Java NonPersistentAcknowledgmentGroupingTracker), so the "
              "broker takes a message out of the count once it is written to the consumer: apache/pulsar PR #21592 "
              "(issue #21568; 2.10.6, 2.11.4, 3.0.3, 3.1.3). Live, case unacked-non-persistent-zero: 5 received and "
              "acked -> 5 on 3.0.2 and 3.1.0 (KD-102); 0 on 3.0.7, 4.0.1, 4.2.4 and 5.0.0-M1."),
    ),
)


# ---- faults (reference_model/faults.py): what survives a cut, a stall, latency, a restart -----------
_FAULTS = "reference_model/faults.py; docs/faults.md"
RULES = RULES + (
    Rule(
        id="PLS-FAULT-001", area="FAULT",
        title="An ack the broker had is kept across a cut connection or a graceful broker restart: the message is not delivered again",
        source=f"{_MSG}#acknowledgment",
        quote=("Messages are only deleted after all the subscriptions have already consumed them."),
        status="normative", applies_to=_ALL,
        note=("An ack made less than ack_grouping + latency + dispatch slack before the fault may not have reached the "
              "broker (the client groups acks, ackGroupingTimeMs 100 ms): its redelivery is INDETERMINATE, never FAIL. "
              "Not in force across a crash (SIGKILL): the cursor's position is persisted at most "
              "managedLedgerDefaultMarkDeleteRateLimit (1) times a second and flushed every "
              "managedLedgerCursorPositionFlushSeconds (60) (ManagedCursorImpl), and at-least-once lets an acked "
              f"message come back. {_FAULTS}."),
    ),
    Rule(
        id="PLS-FAULT-002", area="FAULT",
        title="No persisted message is lost across a fault: one sent (acknowledged) before a cut or restart is still delivered to each subscription that had not acked it",
        source=f"{_MSG}#acknowledgment",
        quote="Pulsar ... guarantees at-least-once delivery",
        status="normative", applies_to=_ALL,
        note=(f"Judged when a message stored before the fault and not delivered before it arrives after (PASS), or is "
              f"owed and does not come (FAIL, lost-message). {_FAULTS}."),
    ),
    Rule(
        id="PLS-FAULT-003", area="FAULT",
        title="After a reconnect (cut connection or broker restart) a consumer's delivery resumes at its subscription's first unacknowledged message: what it had received and not acked comes again",
        source="docs/concepts-messaging.md#subscription-types",
        quote=("If a consumer disconnects, all the messages that were sent to it and not acknowledged will be "
               "rescheduled for sending to the remaining consumers."),
        status="normative", applies_to=_ALL,
        note=("The client clears its receiver queue and subscribes again (ConsumerImpl::connectionOpened); "
              "PersistentDispatcherSingleActiveConsumer rewinds to the mark-delete position, "
              "PersistentDispatcherMultipleConsumers#removeConsumer puts pending acks back for replay. "
              f"Judged as the start rule of the deliveries after the fault, like PLS-SUB-005. {_FAULTS}."),
    ),
    Rule(
        id="PLS-FAULT-004", area="FAULT",
        title="Deduplication survives a cut connection and a broker restart: a sequence id persisted before it is still a duplicate after it",
        source=f"{_MSG}#message-deduplication",
        quote=("When the producer attempts to publish the message again, however, the broker knows that it has already "
               "seen message 1 and thus does not persist the message."),
        status="normative", applies_to=_ALL,
        note=(f"{_BROKER}persistent/MessageDeduplication.java#recoverSequenceIdsMap rebuilds the producer -> highest "
              "sequence id map from the dedup snapshot and "
              "replays the ledger after it. Judged (instead of PLS-DEDUP-001) on a deduplicated send once a fault "
              f"happened after the topic stored its first message. {_FAULTS}."),
    ),
    Rule(
        id="PLS-FAULT-005", area="FAULT",
        title="A delayed message stays delayed across a cut connection or a broker restart: not delivered before its time, delivered after it",
        source=f"{_DELAYED}InMemoryDelayedDeliveryTracker.java",
        quote="",
        status="inferred", applies_to=_ALL,
        note=("The delayed-delivery index lives in the broker's memory and is rebuilt on reload from the messages "
              "after the mark-delete position (each carries its deliver-at time). Judged on a delayed message stored "
              f"before the fault and received after it. {_FAULTS}."),
    ),
    Rule(
        id="PLS-FAULT-006", area="FAULT",
        title="A producer's sequence ids go on across a fault: a producer's next send after a reconnect gets the next id, and with deduplication on a producer re-created after a restart continues after the highest persisted one",
        source=f"{_CPPLIB}ProducerImpl.cc",
        quote="",
        status="inferred", applies_to=_CPP,
        note=("The producer keeps msgSequenceGenerator_ across reconnects and re-sends what was pending with the same "
              "ids; the broker recovers lastSequenceIdPushed from the ledger (MessageDeduplication). Judged (instead "
              f"of PLS-DEDUP-006 / PLS-DEDUP-002) once a fault happened. {_FAULTS}."),
    ),
)


# --------------------------------------------------------------------------- transactions
# Model: reference_model/transactions.py. Read in the broker and Java client sources; confirmed live
# on broker 4.0.8 with the Java client 4.0.8 (the cases in conformance/cases/transactions/, run live by tests/conformance/test_cases.py).

_TXN_BUFFER = "apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/transaction/buffer/impl/TopicTransactionBuffer.java"
_TXN_CLIENT = "apache/pulsar pulsar-client/src/main/java/org/apache/pulsar/client/impl/transaction/TransactionImpl.java"
_LIVE_TXN = "Live (broker 4.0.8, Java client 4.0.8; the cases also PASS on 3.3.6 and 3.0.7 with their Java clients): "
# Clients: java, the only client that can begin a transaction; PLS-TXN-001..003 are the broker's, and a
# Python consumer sees the same in a mixed run (a mixed run judges every client's rules).

RULES = RULES + (
    Rule(
        id="PLS-TXN-001", area="TXN",
        title="A message produced in a transaction is not delivered to any consumer or reader before the transaction commits; after the commit it is delivered",
        source="docs/txn-what.md#transaction-semantics",
        quote='In other words, the broker does not deliver transactional messages which are part of an open transaction or messages which are part of an aborted transaction.', status="normative", applies_to=_JAVA_GO,
        note=(f"{_TXN_BUFFER}: maxReadPosition stays before the transaction's first message; commitTxn writes a "
              f"commit marker and moves it. {_LIVE_TXN}a1 and a2 sent in an open transaction: a Shared consumer "
              "received nothing for 1.5 s; right after commit_txn it received a1 and a2."),
    ),
    Rule(
        id="PLS-TXN-002", area="TXN",
        title="A message produced in a transaction that aborts (by the application or by its timeout) is never delivered",
        source="docs/txn-what.md#transaction-semantics",
        quote='In other words, the broker does not deliver transactional messages which are part of an open transaction or messages which are part of an aborted transaction.', status="normative", applies_to=_JAVA_GO,
        note=("apache/pulsar pulsar-broker/.../service/AbstractBaseDispatcher.java#filterEntriesForConsumer asks the "
              "transaction buffer isTxnAborted and acks such entries instead of sending them; markers are acked the same "
              "way (the same in the 3.0.7, 3.3.6 and 4.0.8 jars). "
              f"{_LIVE_TXN}b1 sent in a transaction, then n2 without one, then abort_txn: the consumer received n2 only."),
    ),
    Rule(
        id="PLS-TXN-003", area="TXN",
        title="A topic is read up to the first message of its oldest open transaction: a message appended after it waits for that transaction to end, even if it was sent without a transaction; committed messages keep their append order",
        source=_TXN_BUFFER,
        quote="", status="inferred", applies_to=_JAVA_GO,
        note=("maxReadPosition is the position before the first message of the oldest ongoing transaction on the topic "
              "(ongoingTxns), or the last confirmed entry when none is open; the dispatcher never reads past it. "
              f"{_LIVE_TXN}a1 (txn), n1 (no txn), a2 (txn): nothing delivered until the commit, then a1, n1, a2 in that "
              "order; with a 2 000 ms transaction timeout and no commit, n1 was delivered 2 050 ms after the transaction began."),
    ),
    Rule(
        id="PLS-TXN-004", area="TXN",
        title="Once a transaction has committed, aborted or timed out, the client refuses to send, ack, commit or abort with it (InvalidTxnStatus; a Go send, a plain client error)",
        source=_TXN_CLIENT,
        quote="", status="inferred", applies_to=_JAVA_GO,
        note=("checkState / checkIfOpen: an op on a transaction that is not OPEN fails with "
              "TransactionCoordinatorClientException.InvalidTxnStatusException; the client's own timer sets TIME_OUT at "
              f"the timeout. {_LIVE_TXN}commit after abort: '[0:1] with unexpected state: ABORTED, expect: [OPEN, COMMITTING]'; "
              "abort after commit and commit twice likewise; a send with a committed transaction: 'with unexpected state : "
              "COMMITTED, expect OPEN state!'; after a 2 000 ms timeout: state TIME_OUT for send, commit and abort. Go "
              "0.19.0 checks a send's transaction itself (pulsar/producer_partition.go: errors.Join(ErrTransaction, "
              "'failed to send message by a non-open transaction'), a trace's OtherError; its commit and abort answer "
              "InvalidStatus, 'Expected transaction state: TxnOpen, actual: TxnCommitted' (live 4.0.8, 5 Dec 2026, "
              "case txn-ended-refused-go)."),
    ),
    Rule(
        id="PLS-TXN-005", area="TXN",
        title="A transaction still open when its timeout passes is aborted: its messages are never delivered and the messages it held back become readable",
        source="docs/txn-how.md#transaction-coordinator",
        quote='It handles transaction timeout, and ensures that the transaction is aborted after a transaction timeout.', status="normative", applies_to=_JAVA_GO,
        note=("apache/pulsar pulsar-broker/.../TransactionMetadataStoreService.java#endTransactionForTimeout: the "
              "coordinator's timeout tracker (TransactionTimeoutTrackerImpl, a 100 ms tick) ends the transaction with an "
              "abort, which writes abort markers to its topics. The Java client's default timeout is 60 s (TransactionBuilderImpl). "
              "Timed: the abort may come up to 1 s (tentative) after the deadline. "
              f"{_LIVE_TXN}timeout 2 000 ms, t1 sent in it and n1 after it: n1 arrived 2 050 ms after the transaction began; "
              "t1 never; the abort marker took an entry id."),
    ),
    Rule(
        id="PLS-TXN-007", area="TXN",
        title="A message acked individually in a transaction still open is pending: it is not redelivered on that subscription while the transaction is open, whatever asks for a redelivery (a cumulative ack in a transaction moves nothing until the commit)",
        source="docs/txn-how.md#pending-acknowledge-state",
        quote=("If a message is in the pending acknowledge state, the message cannot be acknowledged by other transactions "
               "until the message is removed from the pending acknowledge state."),
        status="normative", applies_to=_JAVA_GO,
        note=("apache/pulsar pulsar-broker/.../transaction/pendingack/impl/PendingAckHandleImpl.java keeps the position; the "
              "dispatcher filters positions in pending ack from redeliveries. The quote is about other transactions; that "
              f"nothing redelivers the message is the source's. {_LIVE_TXN}m1 acked in A, then redeliver_unacked: the Shared "
              "consumer got m2 and m3 back, not m1; m2 acked in B, then its consumer closed: the other consumer got m1 and "
              "m3, not m2; x1 acked in D on Exclusive, redeliver_unacked: x0 and x2 came again, not x1. A cumulative ack of "
              "x2 in D is only a claim until the commit: redeliver_unacked brought x0, x1, x2 back."),
    ),
    Rule(
        id="PLS-TXN-008", area="TXN",
        title="A transaction's commit makes its acks final: the messages are never delivered on that subscription again",
        source="docs/txn-what.md#transaction-semantics",
        quote=("A message is acked successfully only once by a consumer under the subscription when acknowledging the "
               "message with the transaction ID."),
        status="normative", applies_to=_JAVA_GO,
        note=("PendingAckHandleImpl#internalCommitTxn acks the positions on the cursor. "
              f"{_LIVE_TXN}m2 acked in C, C committed, then redeliver_unacked: m1 and m3 came back, not m2."),
    ),
    Rule(
        id="PLS-TXN-009", area="TXN",
        title="A transaction's abort (or timeout) undoes its acks: an individually acked message is redelivered at once (Shared / Key_Shared: its redelivery count one higher; Exclusive / Failover: the subscription rewinds); a cumulative ack in it is dropped and redelivers nothing; a message acked outside the transaction meanwhile stays acked",
        source="docs/txn-what.md#transaction-semantics",
        quote="If a transaction is aborted, all the writes and acknowledgments in this transaction rollback.",
        status="normative", applies_to=_JAVA_GO,
        note=("apache/pulsar pulsar-broker/.../service/persistent/PersistentSubscription.java#endTxn: on an abort of "
              "individual acks the broker calls redeliverUnacknowledgedMessages for those positions (Shared) or rewinds "
              "(single active consumer). How the redelivery goes is the source's; the docs only say the acks roll back. "
              f"{_LIVE_TXN}m2 acked in B, B aborted: the Shared consumer got m2 at once; x1 acked in D on Exclusive, D "
              "aborted: x1, x2, x3 came again; a cumulative ack of x2 in E, E aborted: nothing came within 1.5 s. Live "
              "4.0.8, 5 Dec 2026: a message acked plainly while pending in t1 (PersistentSubscription#acknowledgeMessage "
              "does not ask the pending-ack handle) was not redelivered by t1's abort, and on Exclusive the abort still "
              "rewound (case txn-plain-ack-of-pending). With another transaction's cumulative ack pending on the Exclusive "
              "subscription an aborted individual ack was not rolled back at all, 3/3: KD-601/602 (case "
              "txn-abort-beside-pending-cumulative)."),
    ),
    Rule(
        id="PLS-TXN-010", area="TXN",
        title="Acking in a transaction a message pending in another open transaction, or one acked already, fails with TransactionConflict; so does a cumulative ack in a transaction at or below the mark-delete position, or while another transaction's cumulative ack is pending, or at or before its own pending one (another transaction's pending individual acks are no conflict)",
        source="docs/txn-how.md#pending-acknowledge-state",
        quote=("If a message is in the pending acknowledge state, the message cannot be acknowledged by other transactions "
               "until the message is removed from the pending acknowledge state."),
        status="normative", applies_to=_JAVA_GO,
        note=("PendingAckHandleImpl#internalIndividualAcknowledgeMessage / #internalCumulativeAcknowledgeMessage throw "
              "TransactionConflictException; the client gets PulsarClientException.TransactionConflictException. "
              f"{_LIVE_TXN}'Transaction:(0,3) try to ack message:14:0 (ackSet is null) in pending ack status.'; an ack in a "
              "transaction of a message acked plainly before: '... already acked before.'; a cumulative ack in E below or "
              "above D's pending one: 'try to cumulative batch ack position: 14:1 within range of current ...'."),
    ),
    Rule(
        id="PLS-TXN-011", area="TXN",
        title="A transaction in which an op failed cannot commit: the Java client refuses the commit (TransactionHasOperationFailed) and aborts the transaction; the Go client holds it in its error state, refusing every later send, ack, commit and abort with it, and the broker aborts it at its timeout",
        source=_TXN_CLIENT,
        quote="", status="inferred", applies_to=_JAVA_GO,
        note=("TransactionImpl#commit checks for failed ops (registered by the failed send or ack), aborts and fails with "
              "TransactionCoordinatorClientException.TransactionHasOperationFailedException ('Now allowed to commit the "
              "transaction due to failed operations of producing or acknowledgment', sic). "
              f"{_LIVE_TXN}after a TransactionConflict in A, commit_txn A failed so, abort_txn A then answered "
              "InvalidTxnStatus (ABORTED), and m1, acked in A, came back to its consumer. Go (pulsar-client-go 0.19.0, "
              "pulsar/transaction_impl.go): endSendOrAckOp stores TxnError when an op fails, and Commit and Abort refuse "
              "any state but TxnOpen with InvalidStatus (a trace's InvalidTxnStatus), so nothing ends it but the broker's "
              "timeout. Live 4.0.8, Go 0.19.0, 5 Dec 2026 (case txn-ack-conflict-go): commit_txn B and abort_txn B "
              "after the conflict, 'Expected transaction state: TxnOpen, actual: TxnError'."),
    ),
    Rule(
        id="PLS-TXN-006", area="TXN",
        title="The Python client has no transactions: beginning one, or sending or acking in one, is refused by the client",
        source=_PY,
        quote="", status="inferred", applies_to=_PYONLY,
        note=("pulsar-client 3.13.0 defines the errors TransactionConflict, TransactionNotFound and "
              "TransactionCoordinatorNotFoundError but its Client has no method that begins a transaction, and send / "
              "acknowledge take none. The suite's Python target refuses new_txn, and a txn on send or ack, with "
              "InvalidArgument; the other transaction rules are judged with the Java client."),
    ),
)

# --------------------------------------------------------------------------- schema registry (PLS-SCHEMA-*)
# The model chapter is reference_model/schema.py (research notes: docs/research/schema-registry.md), composed by
# reference_model/schema_ops.py. Ids PLS-SCHEMA-011..014 (Avro resolution, inside -005's decisions) are the chapter's
# and not registered: their outcomes are judged as -005's.
_SCHEMA_REG = "apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/service/schema/SchemaRegistryServiceImpl.java"
_SCHEMA_CNX = "apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/service/ServerCnx.java"
_SCHEMA_TOPIC = "apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/service/persistent/PersistentTopic.java"
_SU = "docs/schema-understand.md"
_SO = "docs/schema-overview.md"
# the 13 cases of conformance/cases/schemas PASS with both clients and mixed on 4.0.8, 3.3.6 and 3.0.7 (2026-11-26)
_LIVE_SCHEMA = "Live (broker 4.0.8; Python client 3.13.0 and Java client 4.0.8; the cases also PASS on 3.3.6 and 3.0.7): "
_JAVA_SCHEMA = AppliesTo("*", ("java",))

RULES = RULES + (
    Rule(
        id="PLS-SCHEMA-001", area="SCHEMA",
        title="A topic's schema versions count from 0, one per stored schema; the admin lists the live versions oldest first",
        source=f"{_SU}#schema-versioning",
        quote="The broker determines that the schema is compatible and stores the new schema as the current version (with a new version number).",
        status="normative", applies_to=_ALL_GO,
        note=(f"{_SCHEMA_REG}#putSchemaIfAbsent; apache/pulsar .../schema/BookkeeperSchemaStorage.java numbers entries "
              "from 0. Judged at get_schemas (GET /admin/v2/schemas/<tenant>/<ns>/<topic>/schemas). A client that sends "
              "no schema registers nothing: the Python client (C++ 4.2) sent none for INT32, INT64 and DOUBLE "
              f"(Profile.schema_types_sent). {_LIVE_SCHEMA}an AVRO producer registered version 0."),
    ),
    Rule(
        id="PLS-SCHEMA-002", area="SCHEMA",
        title="A schema already registered on the topic is given its version, whatever the strategy or auto-update setting, and stores nothing new",
        source=f"{_SU}#schema-versioning",
        quote="The broker attempts to store the schema in BookKeeper but then determines that it's already stored, so it is used to tag produced messages.",
        status="normative", applies_to=_ALL_GO,
        note=(f"{_SCHEMA_REG}#getSchemaVersionBySchemaData runs before any check: AVRO/JSON definitions are compared as "
              "parsed Avro schemas, other types by their data bytes."),
    ),
    Rule(
        id="PLS-SCHEMA-003", area="SCHEMA",
        title="The first schema of a topic is stored without any compatibility check",
        source=_SCHEMA_REG, quote="", status="inferred", applies_to=_ALL_GO,
        note="putSchemaIfAbsent with no stored version skips the checker, whatever the strategy (ALWAYS_INCOMPATIBLE included).",
    ),
    Rule(
        id="PLS-SCHEMA-004", area="SCHEMA",
        title="A transitive strategy checks a new schema against every live version; the others against the latest only",
        source=f"{_SU}#schema-compatibility-check-strategy",
        quote="Consumers using schema V3 can process data written by producers using **all previous schema versions** V2 and V1.",
        status="normative", applies_to=_ALL_GO,
        note=(f"{_SCHEMA_REG}#checkCompatibilityWithAll / #checkCompatibilityWithLatest. A refusal carries this rule when "
              "only an older version refuses the new schema (the latest alone would accept it)."),
    ),
    Rule(
        id="PLS-SCHEMA-005", area="SCHEMA",
        title="BACKWARD lets in a schema that reads the latest version's data, FORWARD one whose data the latest reads, FULL one that does both, by Avro schema resolution; otherwise IncompatibleSchema",
        source=f"{_SU}#schema-compatibility-check-strategy",
        quote="Consumers using schema V3 can process data written by producers using the **last schema version** V2.",
        status="normative", applies_to=_ALL_GO,
        note=("apache/pulsar .../schema/AvroSchemaBasedCompatibilityCheck.java builds Avro's SchemaValidator (canRead, "
              "canBeRead, mutualRead); the model decides by its own Avro resolution (reference_model/schema.py, ids "
              "-011..-014 there). The broker's default strategy is FULL. "
              f"{_LIVE_SCHEMA}a record gaining a field without a default was refused under FULL with 'Error during schema "
              "compatibility check with strategy FULL: org.apache.avro.SchemaValidationException: Unable to read schema'."),
    ),
    Rule(
        id="PLS-SCHEMA-006", area="SCHEMA",
        title="ALWAYS_COMPATIBLE lets in any schema, of any type, as a new version",
        source=f"{_SU}#schema-compatibility-check-strategy",
        quote="Disable schema compatibility check.",
        status="normative", applies_to=_ALL_GO,
        note=f"{_SCHEMA_REG}#checkCompatibilityWithLatest returns at once for ALWAYS_COMPATIBLE, before the type comparison.",
    ),
    Rule(
        id="PLS-SCHEMA-007", area="SCHEMA",
        title="ALWAYS_INCOMPATIBLE refuses every schema not already registered once the topic has one (IncompatibleSchema)",
        source=f"{_SU}#schema-compatibility-check-strategy",
        quote="Disable schema evolution, that is, any schema change is rejected.",
        status="normative", applies_to=_ALL_GO,
        note="apache/pulsar .../schema/validator NeverSchemaValidator for Avro-based types; the DEFAULT checker for the others.",
    ),
    Rule(
        id="PLS-SCHEMA-008", area="SCHEMA",
        title="Unless the strategy is ALWAYS_COMPATIBLE, a schema of another type than the version it is checked against is refused (IncompatibleSchema)",
        source=_SCHEMA_REG, quote="", status="inferred", applies_to=_ALL_GO,
        note="'Incompatible schema: exists schema type X, new schema type Y' (PR #9797, 2.7.2).",
    ),
    Rule(
        id="PLS-SCHEMA-009", area="SCHEMA",
        title="Types without a checker of their own (STRING and the other primitives) never fail a compatibility check except under ALWAYS_INCOMPATIBLE: a different schema of the same type becomes a new version",
        source=f"{_SU}#schema-compatibility-check",
        quote="the other schema types share the default compatibility checker that disables the schema evolution.",
        status="normative",
        note=("apache/pulsar .../schema/SchemaCompatibilityCheck.java DEFAULT: only ALWAYS_INCOMPATIBLE refuses. The "
              "Python StringSchema stores the data 'null' (json.dumps(None)) where the Java Schema.STRING stores none, so "
              "a Java and a Python STRING producer register two versions. "
              f"{_LIVE_SCHEMA}a Python STRING producer registered data 'null'."),
    ),
    Rule(
        id="PLS-SCHEMA-010", area="SCHEMA",
        title="A KEY_VALUE schema is checked half by half: the key and value types must match the stored ones, then each half by the strategy",
        source="apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/service/schema/KeyValueSchemaCompatibilityCheck.java",
        quote="", status="inferred", applies_to=_JAVA_SCHEMA,
        note=("Only the Java client builds KEY_VALUE schemas (pulsar-client 3.13.0 has no KeyValue schema class). "
              "The halves' types are schema properties, not data: a KEY_VALUE schema whose halves differ from a stored "
              "one only in primitive types has the same data and is given that version (PLS-SCHEMA-002) before any check. "
              f"{_LIVE_SCHEMA}KV(STRING, V1) v0, KV(STRING, V2) v1, KV(INT32, V3) refused ('Key schemas or Value schemas "
              "are different schema type'), KV(INT32, V1) given v0."),
    ),
    Rule(
        id="PLS-SCHEMA-015", area="SCHEMA",
        title="With isAllowAutoUpdateSchema false, a producer whose schema is not registered is refused (IncompatibleSchema); a registered one connects",
        source=f"{_SO}#producer-side",
        quote="If it's not allowed to be auto-updated, then the schema cannot be registered, and the broker rejects the producer.",
        status="normative", applies_to=_ALL_GO,
        note=f"{_SCHEMA_REG}: 'Schema not found and schema auto updating is disabled.'",
    ),
    Rule(
        id="PLS-SCHEMA-016", area="SCHEMA",
        title="A producer without a schema connects to a topic with a schema unless schemaValidationEnforced is set, then it is refused (IncompatibleSchema)",
        source=f"{_SU}#schema-validation-enforcement",
        quote="A producer without a schema can produce any messages to a topic with schemas, which may result in producing trash data to the topic.",
        status="normative",
        note=f"{_SCHEMA_CNX}#tryAddSchema.",
    ),
    Rule(
        id="PLS-SCHEMA-017", area="SCHEMA",
        title="A consumer without a schema, or with AUTO_CONSUME, subscribes without any compatibility check",
        source=f"{_SO}#consumer-side",
        quote="If a consumer connects to a topic **without a schema** (meaning it consumes raw bytes), the consumer can connect to the topic successfully without doing any compatibility check.",
        status="normative", applies_to=_ALL_GO,
        note=f"{_SCHEMA_CNX}#handleSubscribe checks only a schema that is not AUTO_CONSUME (PIP-236, PR #17449). AUTO_CONSUME is Java only here.",
    ),
    Rule(
        id="PLS-SCHEMA-018", area="SCHEMA",
        title="A consumer with a schema on an idle topic (no schema, producer, consumer or data) registers its schema as a producer would",
        source=f"{_SO}#consumer-side",
        quote="The broker checks if the topic is in use (has at least one of the objects: schema, data, active producer or consumer).",
        status="normative", applies_to=_ALL_GO,
        note=f"{_SCHEMA_TOPIC}#addSchemaIfIdleOrCheckCompatible.",
    ),
    Rule(
        id="PLS-SCHEMA-019", area="SCHEMA",
        title="A consumer with a schema on a topic in use must be able to read the latest version (BACKWARD, FORWARD, FORWARD_TRANSITIVE, FULL) or pass the transitive strategy against every live version; its schema is never stored",
        source=_SCHEMA_REG, quote="", status="inferred", applies_to=_ALL_GO,
        note="#checkConsumerCompatibility: the consumer is the reader; ALWAYS_COMPATIBLE passes; IncompatibleSchema otherwise.",
    ),
    Rule(
        id="PLS-SCHEMA-020", area="SCHEMA",
        title="A consumer with a schema on a topic in use that has no schema is refused (IncompatibleSchema)",
        source=_SCHEMA_TOPIC, quote="", status="inferred", applies_to=_ALL_GO,
        note=("'Failed to add schema to an active topic with empty(BYTES) schema' since PR #22974 (2024); before it "
              "NotExistSchemaException 'Topic does not have schema to check'. Either way the client sees IncompatibleSchema: "
              "the schema-consumers case PASSes on 3.0.7, 3.3.6 and 4.0.8 (2026-11-26). A topic whose only use is a producer "
              "whose creation had not completed when the history's wait ended is in use or not by timing: not judged "
              "(SchemaOps._topic_use_open; live 4.0.8, Python, 1 run in 3 let the consumer in)."),
    ),
    Rule(
        id="PLS-SCHEMA-021", area="SCHEMA",
        title="Deleting a topic's schema stores a delete marker that takes the next version number; the admin then lists no version and the next schema is stored unchecked",
        source="docs/admin-api-schemas.md#delete-a-schema",
        quote="In any case, the delete action deletes all versions of a schema registered for a topic.",
        status="normative", applies_to=_ALL_GO,
        note=f"{_SCHEMA_REG}#deleteSchema / #trimDeletedSchemaAndGetList; a forced delete removes the ledger (numbering restarts at 0).",
    ),
    Rule(
        id="PLS-SCHEMA-022", area="SCHEMA",
        title="An AVRO schema whose definition is not a valid Avro schema is refused (IncompatibleSchema)",
        source="apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/service/schema/validator/StructSchemaDataValidator.java",
        quote="", status="inferred",
        note=(f"{_LIVE_SCHEMA}'Invalid schema definition data for AVRO schema' (InvalidSchemaDataException), seen by the "
              "Python client as IncompatibleSchema. A JSON schema with an invalid Avro definition got no answer at all "
              "(15 s operation timeout; the validator falls back to the pre-2.x Jackson JsonSchema format for JSON): "
              "the model predicts that refusal as uncertain. A consumer on a topic without a schema: from 3.3.0 the "
              "subscribe path swallows the validator's non-recoverable error (ServerCnx#handleSubscribe -> "
              "BookkeeperSchemaStorage#ignoreUnrecoverableBKException, apache/pulsar PR #22469) and the consumer "
              "subscribes with its schema dropped (live 4.0.8); before 3.3.0 it is refused IncompatibleSchema (live "
              "3.0.7; the 3.2.3 sources have no such wrapper). Profile.consumer_invalid_schema_ignored."),
    ),
    Rule(
        id="PLS-SCHEMA-024", area="SCHEMA",
        title="The Python client has no KEY_VALUE or AUTO_CONSUME schema: a producer or consumer asking for one is refused by the client",
        source=_PY, quote="", status="inferred", applies_to=_PYONLY,
        note=("pulsar-client 3.13.0's pulsar.schema has AvroSchema, JsonSchema, StringSchema, BytesSchema and "
              "ProtobufNativeSchema only (its _pulsar.SchemaType lists KEY_VALUE and AUTO_CONSUME, but no class builds "
              "them). The suite's Python target refuses them with InvalidArgument; the model does the same for a Python "
              "handle (Profile.schema_types)."),
    ),
    Rule(
        id="PLS-SCHEMA-023", area="SCHEMA",
        title="A message carries the schema version its producer was given; a message of a producer without a schema carries none",
        source=f"{_SO}#producer-side",
        quote="If the schema is registered, the broker returns the schema version to the producer.",
        status="normative", applies_to=_ALL_GO,
        note=(f"{_LIVE_SCHEMA}a consumer received a message of an AVRO producer with version 0 (8 bytes, big-endian), and a "
              "BYTES producer's message with none. Go (0.19.0, live 4.0.8, 28 Nov 2026): a batched message carries it; an "
              "unbatched one (batching off, a delayed or chunked send) carries none, KD-504 (case schema-version-unbatched-go)."),
    ),
    Rule(
        id="PLS-SCHEMA-025", area="SCHEMA",
        title="The Go client builds an AVRO or JSON schema only from a definition its Avro parser accepts: a producer or consumer given another is refused by the client (go client only)",
        source="apache/pulsar-client-go pulsar/schema.go", quote="", status="inferred", applies_to=_GO,
        note=("NewAvroSchemaWithValidation / NewJSONSchemaWithValidation parse the definition (initAvroCodec, the "
              "hamba/avro parser) and return the error; NewAvroSchema / NewJSONSchema log.Fatalf on it. The driver uses "
              "the validating constructors and reports InvalidArgument; nothing reaches the broker, so no version is "
              "stored and no topic is touched (where the other clients meet the broker's PLS-SCHEMA-022 refusal, or, for a "
              "JSON schema, no answer). The model judges the definition with its own Avro parser (reference_model/schema.py "
              "parse_avro). Live 4.0.8 with the Go client 0.19.0, 28 Nov 2026: '{not json' -> 'avro: unknown type: {not "
              "json'; a field of type 'integer' -> refused (case schema-invalid-definition-go)."),
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


def applies(r: Rule, *, broker_version: str, client: str, vendor: str = APACHE) -> bool:
    """Does rule ``r`` speak about this broker version, client and vendor profile? Withdrawn rules
    apply nowhere. ``client`` "mixed" (a run whose handles name their own client) speaks about
    every client."""
    if r.status == "withdrawn" or vendor not in r.applies_to.vendors:
        return False
    if client == "mixed":  # a run whose handles name their client: every client's rules may apply
        return _applies_to_version(r, broker_version)
    if client not in r.applies_to.clients:
        return False
    return _applies_to_version(r, broker_version)


def _applies_to_version(r: Rule, broker_version: str) -> bool:
    return version_in(broker_version, r.applies_to.brokers)


def version_in(broker_version: str, spec: str) -> bool:
    """Whether ``broker_version`` satisfies a version spec such as ``">=4.0.0,<4.0.7"`` (``"*"``: any)."""
    version = releases.version_tuple(broker_version)
    return all(_OPS[op](version, bound) for op, bound in _parse_spec(spec))


def to_json(indent: int | None = 2) -> str:
    """The registry as JSON (a list of rule objects in registry order), for reports and other tools."""
    return json.dumps([_rule_dict(r) for r in RULES], indent=indent, ensure_ascii=False)


def _rule_dict(r: Rule) -> dict:
    d = asdict(r)
    d["applies_to"] = {"brokers": r.applies_to.brokers, "clients": list(r.applies_to.clients)}
    return d
