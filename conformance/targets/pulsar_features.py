"""The live target's side of the feature vocabulary (docs/trace-format.md): what ``BrokerTarget``
does for ``flush``, ``set_policy``, ``compact``, ``expire_messages``, the admin topic and cursor ops
(``delete_topic``, ``reset_cursor``, ``skip``, ``clear_backlog``), asynchronous and tombstone
sends, pending producer creation, and ``non-persistent://<short>`` names.

Only ``conformance.targets.pulsar`` calls these; they talk to the broker through the run's
``pulsar.Client`` and ``fixtures.admin.AdminClient``.

Choices:
- An ``async`` send is ``producer.send_async``; ``flush`` calls ``producer.flush()`` and then
  waits (up to the operation timeout) for every callback, so its value has every id.
- A ``create_producer`` with ``wait_ms`` runs the (blocking) creation in a thread; if it has not
  returned in time the op is ok with ``{"pending": true}`` and the next op on that handle waits
  for it (``resolve_producer``).
- A message whose payload is empty or null (a tombstone) is named by the id its send returned.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import _pulsar
import pulsar

from conformance.trace import Outcome

NON_PERSISTENT = "non-persistent://"


def full_name(namespace: str, short: str) -> str:
    """``t`` -> ``persistent://<ns>/t``; ``non-persistent://t`` -> ``non-persistent://<ns>/t``; full names unchanged."""
    if short.startswith(NON_PERSISTENT) and "/" not in short[len(NON_PERSISTENT):]:
        return f"{NON_PERSISTENT}{namespace}/{short[len(NON_PERSISTENT):]}"
    if "://" in short:
        return short
    return f"persistent://{namespace}/{short}"


def short_name(namespace: str, full: str) -> str:
    for domain in ("persistent://", NON_PERSISTENT):
        prefix = f"{domain}{namespace}/"
        if full.startswith(prefix):
            rest = full[len(prefix):]
            return rest if domain == "persistent://" else NON_PERSISTENT + rest
    return full


def producer_kwargs(pulsar: Any, a: dict) -> dict[str, Any]:
    """create_producer's batching arguments (PLS-BATCH-002/003) as pulsar-client keywords."""
    kwargs: dict[str, Any] = {}
    for arg, kw in (("batching_max_messages", "batching_max_messages"),
                    ("batching_max_bytes", "batching_max_allowed_size_in_bytes"),
                    ("batching_max_delay_ms", "batching_max_publish_delay_ms")):
        if arg in a:
            kwargs[kw] = a[arg]
    if a.get("batching_type") == "KeyBased":
        kwargs["batching_type"] = pulsar.BatchingType.KeyBased
    return kwargs


class PendingProducer:
    """A producer creation still running in a thread (WaitForExclusive behind a holder)."""

    def __init__(self, create: Any):
        self.result: Any = None
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(create,), daemon=True)
        self._thread.start()

    def _run(self, create: Any) -> None:
        try:
            self.result = create()
        except BaseException as err:  # noqa: BLE001 - handed to the op that waits for it
            self.error = err

    def wait(self, timeout_s: float | None) -> bool:
        self._thread.join(timeout_s)
        return not self._thread.is_alive()

    def get(self, timeout_s: float) -> Any:
        if not self.wait(timeout_s):
            raise ProducerNotCreated("Timeout", f"the producer creation did not complete in {timeout_s:g} s")
        if self.error is not None:
            name = type(self.error).__name__
            raise ProducerNotCreated(name, f"the producer creation failed: {name}: {self.error}")
        return self.result


class ProducerNotCreated(Exception):
    """An op on a producer whose pending creation (PLS-ACCESS-005) never completed: the op was not
    issued at all, so its outcome is ``rejected`` (it did not act), with the creation's error name
    (``Timeout`` when the broker kept the producer waiting past the operation timeout)."""

    def __init__(self, error: str, detail: str):
        super().__init__(detail)
        self.error = error


def resolve_producer(run: Any, handle: str, timeout_s: float) -> Any:
    producer = run.producers[handle]
    if isinstance(producer, PendingProducer):
        producer = run.producers[handle] = producer.get(timeout_s)
    return producer


def create_producer(run: Any, create: Any, a: dict) -> tuple[Any, bool]:
    """(producer or PendingProducer, pending?) honouring ``wait_ms``."""
    if "wait_ms" not in a:
        return create(), False
    pending = PendingProducer(create)
    if pending.wait(a["wait_ms"] / 1000.0):
        if pending.error is not None:
            raise pending.error
        return pending.result, False
    return pending, True


# the look at a partitioned topic's publishers around a creation (with_partition_names) is inside the op's timed
# span: a broker that does not answer soon (a fault, a stall) leaves the names out rather than the op stretched
PUBLISHERS_LOOK_S = 3.0


def partition_publishers(run: Any, full: str) -> list[set[str]] | None:
    """The producer names publishing on each partition of the partitioned topic ``full`` (None: not partitioned, or
    the stats cannot be read). ``with_partition_names`` diffs them around a creation."""
    try:
        stats = run.admin.partitioned_stats(full, timeout_s=PUBLISHERS_LOOK_S)
    except Exception:  # noqa: BLE001 - the names are a help to the model, never a verdict
        return None
    parts = stats.get("partitions") or {}
    count = int(stats.get("metadata", {}).get("partitions", 0) or len(parts))
    if count <= 0:
        return None
    return [{p.get("producerName") for p in (parts.get(f"{full}-partition-{i}") or {}).get("publishers") or ()}
            for i in range(count)]


def with_partition_names(run: Any, full: str, create: Any) -> Any:
    """Run ``create`` (a create_producer that returns an ``Outcome``) and, on a partitioned topic, add to its value
    ``partition_producer_names``: the name each partition's producer writes. An unnamed C++ or Go partition producer
    takes the name the broker gives it, and its client reports only partition 0's (PLS-KEYSHARED-001 hashes a
    keyless message by that name; live 4.0.8, 6 Dec 2026); the broker's publishers show each, told apart from the
    producers already there by a look before and after. Left out when the look cannot tell (stats unreadable, or
    not exactly one new publisher on a partition)."""
    if full not in run.partitioned:  # a topic create_topic did not make partitioned: one producer, its name reported
        return create()
    before = partition_publishers(run, full)
    outcome = create()
    if before is None or outcome.status != "ok" or (outcome.value or {}).get("pending"):
        return outcome
    after = partition_publishers(run, full)
    if after is None or len(after) != len(before):
        return outcome
    new = [sorted(a - b) for a, b in zip(after, before)]
    if any(len(n) != 1 for n in new):
        return outcome
    return Outcome.ok({**(outcome.value or {}), "partition_producer_names": [n[0] for n in new]})


def note_publish_time(run: Any, label: str, publish_time: int) -> None:
    """A receipt's publish time for ``label``: its first receipt replaces the wall-clock guess its send left (a batch
    carries its first message's publish time, which the guess misses), and later ones change nothing (a dead-letter
    or retry copy received under the same label has a publish time of its own, and ``publish_time_of`` names the
    message as sent, as the model's ``Broker.message`` does: regression pls-seek-002-lost-message-813005f35b70)."""
    if label not in run.publish_time_received:
        run.publish_time_received.add(label)
        run.publish_times[label] = publish_time


def payload_bytes(a: dict, pad: str) -> bytes | None:
    label = a["payload"]
    if a.get("tombstone") == "null":
        return None
    if a.get("tombstone") == "empty":
        return b""
    data = label
    if "payload_size" in a and a["payload_size"] > len(label.encode()):
        data = label + pad + "." * (a["payload_size"] - len(label.encode()) - 1)
    return data.encode()


def content_for(producer: Any, data: bytes | None) -> Any:
    """What ``producer.send`` takes for ``data``: the Python client encodes content with the producer's schema, and
    its ``StringSchema`` takes a str (bytes are a TypeError), so a STRING producer gets the label text (UTF-8, as the
    schema encodes it: the same bytes on the wire). Found by the live campaign of issue 16 (2026-11-27)."""
    from pulsar.schema import StringSchema

    if isinstance(data, bytes) and isinstance(getattr(producer, "_schema", None), StringSchema):
        return data.decode("utf-8")
    return data


def send_async(run: Any, producer_handle: str, producer: Any, label: str, data: bytes | None, kwargs: dict) -> Outcome:
    pending = run.__dict__.setdefault("async_pending", {}).setdefault(producer_handle, [])
    slot: dict[str, Any] = {"label": label, "done": threading.Event()}

    def callback(result: Any, msg_id: Any) -> None:
        slot["result"], slot["id"] = result, msg_id
        slot["done"].set()

    producer.send_async(content_for(producer, data), callback, **kwargs)
    pending.append(slot)
    return Outcome.ok({})


def flush(run: Any, producer_handle: str, producer: Any, timeout_s: float, id_tuple: Any) -> Outcome:
    producer.flush()
    slots = run.__dict__.setdefault("async_pending", {}).pop(producer_handle, [])
    deadline = time.monotonic() + timeout_s
    ids: dict[str, list[int]] = {}
    texts: dict[str, str] = {}
    failed: list[str] = []
    for slot in slots:
        if not slot["done"].wait(max(0.0, deadline - time.monotonic())):
            return Outcome.indeterminate(f"flush: no answer for {slot['label']} in {timeout_s:g} s")
        if str(slot["result"]) not in ("Ok", "Result.Ok", "0"):
            failed.append(f"{slot['label']}: {slot['result']}")
            continue
        ids[slot["label"]] = list(id_tuple(slot["id"]))
        texts[slot["label"]] = str(slot["id"])
        run.sent[slot["label"]] = slot["id"]
    if failed:
        return Outcome.rejected("OtherError", "async sends failed: " + "; ".join(failed))
    return Outcome.ok({"message_ids": ids, "id_texts": texts})


def seek(consumer: Any, target: Any, timeout_s: float) -> Outcome:
    """A consumer's seek, waited for at most ``timeout_s``. The C++ client answers a
    seek only once the consumer has reconnected after the broker's reset; a reconnect the broker
    refuses for good (e.g. the same schema under ALWAYS_INCOMPATIBLE, refused by
    ``checkConsumerCompatibility`` once the topic has a schema) leaves the blocking ``seek`` waiting
    for ever, so the async call is used and an unanswered seek is indeterminate. A failed seek
    raises the client's exception for its result, as the blocking call does."""
    done = threading.Event()
    box: dict[str, Any] = {}

    def callback(result: Any) -> None:
        box["result"] = result
        done.set()

    consumer._consumer.seek_async(pulsar._seek_arg_convert(target), callback)  # the wrapper's own conversion of ids and times
    if not done.wait(timeout_s):
        return Outcome.indeterminate(f"seek: no answer from the client in {timeout_s:g} s (the C++ client answers "
                                     "after the consumer's reconnect, which may never succeed)")
    name = str(box["result"]).rsplit(".", 1)[-1]
    if name not in ("Ok", "0"):
        raise getattr(_pulsar, name, _pulsar.PulsarException)(f"Pulsar error: {name}")
    return Outcome.ok()


def set_policy(run: Any, a: dict) -> Outcome:
    if "topic" in a:
        return set_topic_policy(run, run.full(a["topic"]), a)
    if "deduplication" in a:
        run.admin.set_deduplication(run.namespace, bool(a["deduplication"]))
    if "message_ttl_s" in a:
        run.admin.set_message_ttl(run.namespace, int(a["message_ttl_s"]))
    if "retention_minutes" in a or "retention_size_mb" in a:
        run.admin.set_retention(run.namespace, minutes=int(a.get("retention_minutes", 0)), size_mb=int(a.get("retention_size_mb", 0)))
    if "max_unacked_messages_per_consumer" in a:  # PLS-UNACKED-001
        run.admin.request("POST", f"/admin/v2/namespaces/{run.namespace}/maxUnackedMessagesPerConsumer",
                          body=int(a["max_unacked_messages_per_consumer"]))
    set_schema_policies(run, a)
    return Outcome.ok({})


TOPIC_POLICY_APPLIED_S = 10.0  # how long a topic policy may take to reach the broker's topic before the op is indeterminate


def _topic_policy_requests(a: dict) -> dict[str, tuple[dict, Any]]:
    """The topic policies admin API's requests for a ``set_policy`` with ``topic``: the path under the topic, the
    request's keyword arguments, and the value ``GET <path>?applied=true`` reports once the broker applied it."""
    wanted: dict[str, tuple[dict, Any]] = {}
    if "deduplication" in a:
        wanted["deduplicationEnabled"] = ({"body": bool(a["deduplication"])}, bool(a["deduplication"]))
    if "message_ttl_s" in a:
        wanted["messageTTL"] = ({"params": {"messageTTL": int(a["message_ttl_s"])}}, int(a["message_ttl_s"]))
    if "retention_minutes" in a:
        body = {"retentionTimeInMinutes": int(a["retention_minutes"]), "retentionSizeInMB": int(a["retention_size_mb"])}
        wanted["retention"] = ({"body": body}, body)
    return wanted


def set_topic_policy(run: Any, topic: str, a: dict, *, timeout_s: float = TOPIC_POLICY_APPLIED_S,
                     poll_s: float = 0.05) -> Outcome:
    """PLS-POLICY-001: the topic's own policies, through the topic policies admin API. The broker writes them to the
    namespace's ``__change_events`` topic and applies them when its reader reads them back
    (SystemTopicBasedTopicPoliciesService), after the call returns; so the op returns once ``GET ...?applied=true``
    reports each new value and, for deduplication, once every partition's stats report ``deduplicationStatus``
    settled (``Enabled`` or ``Disabled``, not ``Recovering``: MessageDeduplication#checkStatus replays the ledger
    before a duplicate is refused). Not settled in ``timeout_s``: indeterminate. 404 (no such topic): TopicNotFound."""
    from fixtures.admin import AdminClient

    path = AdminClient._topic_path(topic)
    wanted = _topic_policy_requests(a)
    refused = _admin(lambda: [run.admin.request("POST", f"{path}/{name}", **kwargs) for name, (kwargs, _) in wanted.items()])
    if refused.status != "ok":
        return refused
    want_dedup = "Enabled" if a.get("deduplication") else "Disabled"
    deadline = time.monotonic() + timeout_s
    while True:
        waiting = [name for name, (_, value) in wanted.items()
                   if run.admin.request("GET", f"{path}/{name}", params={"applied": "true"}) != value]
        if not waiting and "deduplication" in a and topic.startswith("persistent://"):
            statuses = {part: (run.admin.topic_stats(part) or {}).get("deduplicationStatus") for part in run.admin.partitions_of(topic)}
            waiting = [f"{part} deduplicationStatus {status}" for part, status in statuses.items() if status != want_dedup]
        if not waiting:
            return Outcome.ok({})
        if time.monotonic() > deadline:
            return Outcome.indeterminate(f"set_policy on {topic}: not applied by the broker in {timeout_s:g} s "
                                         f"(still waiting for {', '.join(waiting)})")
        time.sleep(poll_s)


class RawSchema:
    """A schema the Python client sends as given, over payloads it passes through unchanged: the harness's
    payloads stay label bytes whatever the schema (the broker never decodes a payload; PLS-SCHEMA-*)."""

    def __new__(cls, kind: str, definition: str):
        import _pulsar
        from pulsar.schema import Schema

        class _Raw(Schema):
            def __init__(self) -> None:  # Schema.__init__ would json.dumps the definition; keep the text as given
                self._record_cls = bytes
                self._schema_info = _pulsar.SchemaInfo(getattr(_pulsar.SchemaType, kind), "", definition)

            def encode(self, obj: bytes) -> bytes:
                return obj

            def decode(self, data: bytes) -> bytes:
                return data

        return _Raw()


def python_schema(arg: dict | None) -> Any:
    """The Python client's schema for a trace ``schema`` argument: the client's own ``StringSchema`` for STRING and
    ``BytesSchema`` for BYTES (what an application gets), a raw schema of the type for the others. KEY_VALUE and
    AUTO_CONSUME have no class in pulsar-client 3.x: ``ValueError`` (InvalidArgument), as the model predicts."""
    from pulsar.schema import BytesSchema, StringSchema

    from reference_model.schema_ops import schema_text

    if not arg:
        return None
    kind = arg["type"]
    if kind in ("KEY_VALUE", "AUTO_CONSUME"):
        raise ValueError(f"the Python client has no {kind} schema; it needs the Java client")
    if kind == "BYTES":
        return BytesSchema()
    if kind == "STRING":
        return StringSchema()
    return RawSchema(kind, schema_text(arg["definition"]) if kind in ("AVRO", "JSON") else "null")


def schema_version_of(raw: Any) -> int | None:
    """A received message's schema version: the 8-byte big-endian long the broker stamped, None when it has none."""
    if not raw:
        return None
    data = raw.encode("latin-1") if isinstance(raw, str) else bytes(raw)
    return int.from_bytes(data, "big", signed=True)


SCHEMA_STRATEGY_PATH = "schemaCompatibilityStrategy"


def set_schema_policies(run: Any, a: dict) -> None:
    """PLS-SCHEMA-004..007 / -015 / -016: the namespace's schema policies."""
    ns = f"/admin/v2/namespaces/{run.namespace}"
    if "schema_compatibility_strategy" in a:
        run.admin.request("PUT", f"{ns}/{SCHEMA_STRATEGY_PATH}", body=a["schema_compatibility_strategy"])
    if "schema_auto_update" in a:
        run.admin.request("POST", f"{ns}/isAllowAutoUpdateSchema", body=bool(a["schema_auto_update"]))
    if "schema_validation_enforced" in a:
        run.admin.request("POST", f"{ns}/schemaValidationEnforced", body=bool(a["schema_validation_enforced"]))


def _schema_path(topic: str) -> str:
    from fixtures.admin import split_topic

    domain, tenant, ns, local = split_topic(topic)
    return f"/admin/v2/schemas/{tenant}/{ns}/{local}"


def get_schemas(run: Any, topic: str) -> Outcome:
    """PLS-SCHEMA-001: the topic's live versions (after its last delete), oldest first; none: an empty list."""
    answer = run.admin.request("GET", f"{_schema_path(topic)}/schemas", ok_statuses=(404,))
    entries = (answer or {}).get("getSchemaResponses") or [] if isinstance(answer, dict) else []
    return Outcome.ok({"schemas": [{"version": int(e["version"]), "type": e["type"]} for e in entries]})


def delete_schema(run: Any, topic: str, force: bool) -> Outcome:
    """PLS-SCHEMA-021: ``DELETE .../schema`` (a delete marker; ``force``: the whole ledger)."""
    run.admin.request("DELETE", f"{_schema_path(topic)}/schema", params={"force": str(force).lower()})
    return Outcome.ok({})


def tombstone_mark(key: Any, properties: Any, event_time: Any) -> tuple:
    """What a tombstone (no label in its payload) carries that tells it from another: its key, properties and
    event time, as a send's args give them and as a received message reports them (absent = None / {} / 0)."""
    return (key or None, tuple(sorted((properties or {}).items())), int(event_time or 0))


def compact(run: Any, topic: str) -> Outcome:
    status = run.admin.compact(topic)
    if status.get("status") != "SUCCESS":
        return Outcome.rejected("OtherError", f"compaction ended {status.get('status')}: {status.get('lastError')}")
    return Outcome.ok({})


def expire_messages(run: Any, topic: str, subscription: str, seconds: int) -> Outcome:
    run.admin.expire_messages(topic, subscription, seconds)
    return Outcome.ok({})


def unload_topic(run: Any, topic: str) -> Outcome:
    run.admin.unload_topic(topic)
    return Outcome.ok({})


# ---------------------------------------------------------------------- admin ops on topics and cursors


def admin_refusal(err: Any) -> Outcome | None:
    """The trace outcome of an ``AdminError`` a topic or cursor op met (reference_model/admin_ops.py, "Choices"):
    404 is ``TopicNotFound`` or ``SubscriptionNotFound`` by the broker's reason, 412 on a delete ``NotAllowedError``
    (PLS-TOPIC-004: "Topic has active producers/subscriptions"), 405 ``NotAllowedError`` (a skip or a reset to a
    position on a partitioned topic: PLS-SKIP-001, PLS-SEEK-004); None: the caller's usual mapping."""
    reason = str(getattr(err, "reason", "")).lower()
    if err.status == 404:
        return Outcome.rejected("SubscriptionNotFound" if "subscription" in reason else "TopicNotFound", str(err))
    if err.status == 412 and err.method == "DELETE":
        return Outcome.rejected("NotAllowedError", str(err))
    if err.status == 405:
        return Outcome.rejected("NotAllowedError", str(err))
    return None


def _admin(action: Any) -> Outcome:
    from fixtures.errors import AdminError

    try:
        action()
    except AdminError as err:
        refused = admin_refusal(err)
        if refused is None:
            raise
        return refused
    return Outcome.ok({})


def delete_topic(run: Any, topic: str, force: bool, partitioned: bool) -> Outcome:
    """PLS-TOPIC-004/005: ``DELETE .../{topic}`` (``/partitions`` for a partitioned one). The run's clients forget
    nothing: a handle on the topic was closed before (a delete that is not forced needs it), or the delete was refused."""
    return _admin(lambda: run.admin.delete_topic(topic, force=force, partitioned=partitioned))


def reset_cursor(run: Any, topic: str, subscription: str, a: dict) -> Outcome:
    """PLS-SEEK-004: ``resetcursor`` to a sent message's id (the id its send returned, either client), to a sent
    message's publish time (as for a seek by time: the instant before its send), or to earliest / latest."""
    if "message" in a:
        found = run.sent_id_tuple(a["message"])
        if found is None:
            return Outcome.rejected("InvalidArgument", f"message {a['message']!r} was not sent in this run")
        ledger, entry, partition, batch = found
        return _admin(lambda: run.admin.reset_cursor_to_id(topic, subscription, ledger, entry, partition=partition,
                                                           batch_index=batch, excluded=bool(a.get("excluded"))))
    if "publish_time_of" in a:
        label = a["publish_time_of"]
        if label not in run.publish_times:
            return Outcome.rejected("InvalidArgument", f"no publish time known for {label!r}")
        return _admin(lambda: run.admin.reset_cursor_to_time(topic, subscription, int(run.publish_times[label])))
    end = 9223372036854775807  # Long.MAX_VALUE: the latest position (MessageId.latest)
    ledger, entry = (-1, -1) if a["position"] == "earliest" else (end, end)
    return _admin(lambda: run.admin.reset_cursor_to_id(topic, subscription, ledger, entry))


def skip(run: Any, topic: str, subscription: str, count: int) -> Outcome:
    """PLS-SKIP-001: ``skip/<n>``."""
    return _admin(lambda: run.admin.skip_messages(topic, subscription, count))


def clear_backlog(run: Any, topic: str, subscription: str | None) -> Outcome:
    """PLS-SKIP-002: ``skip_all`` on the subscription, or on each subscription the topic lists (GET .../subscriptions)."""
    def clear() -> None:
        for name in [subscription] if subscription is not None else run.admin.subscriptions(topic):
            run.admin.clear_backlog(topic, name)
    return _admin(clear)
