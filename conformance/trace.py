"""The trace vocabulary: ops, outcomes, histories, and their JSON-lines form.

A *trace* is what to do; a *history* is what happened when a target did it. Both are data,
versioned and replayable. The prose description, with examples, is ``docs/trace-format.md``;
this module is the schema a reader enforces. Every op name and argument is declared once in
``OP_SPECS`` so that a malformed trace is refused with the file, the line and what is wrong,
before anything runs.

Choices:
- Messages are named by their payload label (``"m1"``), never by message id: ids are chosen
  by the broker and differ between targets, labels do not.
- Time is milliseconds since the trace started, as floats, in every history.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from conformance.host_stalls import stalls_from_json

TRACE_FORMAT = "pulsar-conformance-trace"
TRACE_SCHEMA_VERSION = 1
# The header's optional ``timing`` object (a run fact: the timing bands the run was judged with
# and the calibration they came from, ``conformance.timing.TimingBands.to_json``) carries its own
# version, so the trace schema stays 1: a history without it (every one written before) loads
# as before, and the checker then uses its defaults.
TIMING_SCHEMA_VERSIONS = (1,)
# The header's ``op_count``: how many op lines follow. Optional in schema 1 (files written before it
# load as they are); every file this version writes has it, so one cut at a line boundary is refused.
OP_COUNT = "op_count"

OK = "ok"
REJECTED = "rejected"
INDETERMINATE = "indeterminate"
# The detail of an indeterminate receive that got nothing while its consumer was disconnected (the Python target,
# the Java driver's ``nothingOrUnknown`` and expanded bulk receives all begin with it).
DISCONNECTED_NOTHING = "nothing received while the consumer was disconnected from the broker"
OUTCOME_STATUSES = (OK, REJECTED, INDETERMINATE)

SUBSCRIPTION_TYPES = ("Exclusive", "Shared", "Failover", "Key_Shared")
SUBSCRIPTION_MODES = ("Durable", "NonDurable")
# Which client library runs a handle (docs/java-driver.md). A trace that names none runs every
# handle on the target's client; "python" is the Python client (C++ core).
CLIENT_NAMES = ("python", "java", "go")
HASHING_SCHEMES = ("java_string_hash", "murmur3_32")
INITIAL_POSITIONS = ("Latest", "Earliest")
ACCESS_MODES = ("Shared", "Exclusive", "ExclusiveWithFencing", "WaitForExclusive")
# The schemas a producer or consumer may bring (PLS-SCHEMA-*; docs/trace-format.md#schemas). BYTES
# is the default (no schema is sent); AUTO_CONSUME is for consumers only; KEY_VALUE for Java only.
SCHEMA_TYPES = ("BYTES", "STRING", "INT32", "INT64", "DOUBLE", "AVRO", "JSON", "KEY_VALUE", "AUTO_CONSUME")
SCHEMA_DEFINED_TYPES = ("AVRO", "JSON")  # their ``definition`` is an Avro schema
SCHEMA_STRATEGIES = ("ALWAYS_INCOMPATIBLE", "ALWAYS_COMPATIBLE", "BACKWARD", "FORWARD", "FULL",
                     "BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE", "FULL_TRANSITIVE")

# The closed list of error names an outcome may carry (docs/trace-format.md#outcomes).
ERROR_NAMES = (
    "ConsumerBusy",
    "ProducerBusy",
    "ProducerFenced",
    "ConsumerAssignError",
    "CumulativeAcknowledgementNotAllowedError",
    "InvalidAck",  # the Go client's ErrInvalidAck (PLS-ACK-007)
    "InvalidConfiguration",
    "InvalidTopicName",
    "InvalidArgument",
    "NotAllowedError",
    "TopicNotFound",
    "SubscriptionNotFound",
    "Conflict",  # the admin API's HTTP 409 (Java PulsarAdminException.ConflictException)
    "MessageTooBig",
    "AlreadyClosed",
    "Timeout",
    "UnknownHandle",
    # transactions (PLS-TXN-*; Java client exception names without "Exception")
    "TransactionConflict",
    "InvalidTxnStatus",
    "TransactionNotFound",
    "TransactionCoordinatorNotFound",
    "TransactionHasOperationFailed",
    # schemas (PLS-SCHEMA-*)
    "IncompatibleSchema",
    "OtherError",
)


class TraceFormatError(ValueError):
    """A trace, history or case file does not follow the trace format.

    The message names the file and line (when known) and what to change.
    """

    def __init__(self, problem: str, *, source: str | None = None, line: int | None = None):
        self.problem = problem
        self.source = source
        self.line = line
        where = ""
        if source is not None:
            where = f"{source}:{line}: " if line is not None else f"{source}: "
        super().__init__(where + problem)


# --------------------------------------------------------------------------- op table


@dataclass(frozen=True)
class ArgSpec:
    """One argument of an op: its JSON type(s), whether it is required, allowed values."""

    types: tuple[type, ...]
    required: bool = False
    choices: tuple[Any, ...] | None = None


def _arg(*types: type, required: bool = False, choices: tuple[Any, ...] | None = None) -> ArgSpec:
    return ArgSpec(types=types, required=required, choices=choices)


_STR = str
_INT = int
_BOOL = bool
_DICT = dict
_LIST = list

# handle-argument name -> kind of object it names; used to check handles are live.
HANDLE_ARGS = {"producer": "producer", "consumer": "consumer", "reader": "reader", "txn": "txn"}

OP_SPECS: dict[str, dict[str, ArgSpec]] = {
    "create_topic": {
        "topic": _arg(_STR, required=True),
        "partitions": _arg(_INT),
    },
    "create_producer": {
        "producer": _arg(_STR, required=True),
        "topic": _arg(_STR, required=True),
        "name": _arg(_STR),
        "batching": _arg(_BOOL),
        "initial_sequence_id": _arg(_INT),
        "access_mode": _arg(_STR, choices=ACCESS_MODES),
        "chunking": _arg(_BOOL),
        "send_timeout_ms": _arg(_INT),
        "router": _arg(_DICT),  # {"hashing": "murmur3_32"|"java_string_hash", "client": "java"|"cpp"}
        "routing_mode": _arg(_STR, choices=("RoundRobin", "SinglePartition")),  # keyless messages, default router
        "batching_max_messages": _arg(_INT),
        "batching_max_bytes": _arg(_INT),
        "batching_max_delay_ms": _arg(_INT),
        "batching_type": _arg(_STR, choices=("Default", "KeyBased")),
        "wait_ms": _arg(_INT),  # give the creation this long; then ok {"pending": true}
        "hashing_scheme": _arg(_STR, choices=HASHING_SCHEMES),  # the client's own key hashing (Java only)
        "schema": _arg(_DICT),  # {"type": SCHEMA_TYPES, "definition": avro} (PLS-SCHEMA-*); default BYTES
        "client": _arg(_STR, choices=CLIENT_NAMES),
    },
    "send": {
        "producer": _arg(_STR, required=True),
        "payload": _arg(_STR, required=True),
        "key": _arg(_STR),
        "key_bytes": _arg(_STR),  # a partition key given as bytes, in hex (Java keyBytes; PLS-MSG-002)
        "ordering_key": _arg(_STR),
        "properties": _arg(_DICT),
        "event_time": _arg(_INT),
        "sequence_id": _arg(_INT),
        "deliver_after_ms": _arg(_INT),
        "deliver_at_ms": _arg(_INT),
        "payload_size": _arg(_INT),
        "async": _arg(_BOOL),  # send_async: the id comes with the next flush
        "txn": _arg(_STR),  # produced in this transaction (new_txn); Java only
        "tombstone": _arg(_STR, choices=("empty", "null")),  # a compaction tombstone (no label in the payload)
    },
    "subscribe": {
        "consumer": _arg(_STR, required=True),
        "topic": _arg(_STR),
        "topics": _arg(_LIST),
        "subscription": _arg(_STR, required=True),
        "type": _arg(_STR, choices=SUBSCRIPTION_TYPES),
        "initial_position": _arg(_STR, choices=INITIAL_POSITIONS),
        "consumer_name": _arg(_STR),
        "receiver_queue_size": _arg(_INT),
        "nack_delay_ms": _arg(_INT),
        "ack_timeout_ms": _arg(_INT),
        "start_message_id_inclusive": _arg(_BOOL),
        "batch_index_ack": _arg(_BOOL),
        "dead_letter": _arg(_DICT),
        "nack_backoff": _arg(_DICT),
        "key_shared": _arg(_DICT),  # {"mode": "AutoSplit"|"Sticky", "allow_out_of_order": bool, "ranges": [[s, e], ...]}
        "topics_pattern": _arg(_STR),  # a regex over short topic names in the trace's namespace
        "enable_retry": _arg(_BOOL),  # Java client retry letter topic (reconsume_later)
        # PIP-105 subscription properties, kept only by the consumer that creates the subscription (tags under the
        # tdmq profile: PLS-TAG-001/003); Java only (pulsar-client 2.10 on)
        "subscription_properties": _arg(_DICT),
        "read_compacted": _arg(_BOOL),
        "subscription_mode": _arg(_STR, choices=SUBSCRIPTION_MODES),  # NonDurable: Java only
        "priority_level": _arg(_INT),  # 0 is the highest priority; Java only
        "ack_timeout_tick_ms": _arg(_INT),  # Java only (the C++ tick is fixed at 1000 ms)
        "ack_timeout_backoff": _arg(_DICT),  # Java only, like nack_backoff
        "schema": _arg(_DICT),  # as create_producer's, or {"type": "AUTO_CONSUME"} (PLS-SCHEMA-*)
        "client": _arg(_STR, choices=CLIENT_NAMES),
    },
    "receive": {"consumer": _arg(_STR, required=True), "timeout_ms": _arg(_INT, required=True)},
    # bulk forms of send and receive for production-shaped workloads (docs/trace-format.md#bulk-ops): the target runs
    # the loop in the client itself, and the checker judges them as the sends, receives and acks they stand for
    # (``expand_bulk``). send_many: ``count`` async sends labelled prefix1..prefixN, keyed k<i mod keys> when
    # ``keys`` > 0 (the benchmark's KEY_ROUND_ROBIN), keyless otherwise (NO_KEY); their ids come with the next flush.
    "send_many": {
        "producer": _arg(_STR, required=True),
        "count": _arg(_INT, required=True),
        "prefix": _arg(_STR, required=True),
        "keys": _arg(_INT),
        "payload_size": _arg(_INT),
    },
    # consume: receive until ``max`` messages came or none came for ``idle_ms``, acking each one as it comes
    # (individually, as a message listener that acks does) unless ``ack`` is false
    "consume": {
        "consumer": _arg(_STR, required=True),
        "max": _arg(_INT, required=True),
        "idle_ms": _arg(_INT, required=True),
        "ack": _arg(_BOOL),
    },
    "ack": {"consumer": _arg(_STR, required=True), "message": _arg(_STR, required=True), "txn": _arg(_STR)},
    "ack_cumulative": {"consumer": _arg(_STR, required=True), "message": _arg(_STR, required=True), "txn": _arg(_STR)},
    "nack": {"consumer": _arg(_STR, required=True), "message": _arg(_STR, required=True)},
    "redeliver_unacked": {"consumer": _arg(_STR, required=True)},
    "reconsume_later": {
        "consumer": _arg(_STR, required=True),
        "message": _arg(_STR, required=True),
        "delay_ms": _arg(_INT, required=True),
    },
    "seek": {
        "consumer": _arg(_STR, required=True),
        "message": _arg(_STR),
        "publish_time_of": _arg(_STR),
        "position": _arg(_STR, choices=("earliest", "latest")),
    },
    "close": {"handle": _arg(_STR, required=True)},
    "unsubscribe": {"consumer": _arg(_STR, required=True)},
    "create_reader": {
        "reader": _arg(_STR, required=True),
        "topic": _arg(_STR, required=True),
        "start": _arg(_STR, _DICT, required=True),
        "inclusive": _arg(_BOOL),
        "read_compacted": _arg(_BOOL),
        "client": _arg(_STR, choices=CLIENT_NAMES),
    },
    "read_next": {"reader": _arg(_STR, required=True), "timeout_ms": _arg(_INT, required=True)},
    "advance_time": {"ms": _arg(_INT, required=True)},
    "stats": {"topic": _arg(_STR, required=True), "subscription": _arg(_STR, required=True)},
    # feature ops (docs/trace-format.md#ops): admin actions on the trace's namespace and topics
    "flush": {"producer": _arg(_STR, required=True)},
    "set_policy": {
        "topic": _arg(_STR),  # PLS-POLICY-001: that topic's own policy (reference_model.feature_state.TOPIC_POLICIES)
        "deduplication": _arg(_BOOL),
        "message_ttl_s": _arg(_INT),
        "retention_minutes": _arg(_INT),
        "retention_size_mb": _arg(_INT),
        "max_unacked_messages_per_consumer": _arg(_INT),  # PLS-UNACKED-001; 0: no limit
        "schema_compatibility_strategy": _arg(_STR, choices=SCHEMA_STRATEGIES),  # PLS-SCHEMA-004..007
        "schema_auto_update": _arg(_BOOL),  # isAllowAutoUpdateSchema (PLS-SCHEMA-015)
        "schema_validation_enforced": _arg(_BOOL),  # schemaValidationEnforced (PLS-SCHEMA-016)
    },
    # the schema registry (PLS-SCHEMA-001/021): the topic's live schema versions, and deleting them
    "get_schemas": {"topic": _arg(_STR, required=True)},
    "delete_schema": {"topic": _arg(_STR, required=True), "force": _arg(_BOOL)},
    "compact": {"topic": _arg(_STR, required=True)},
    "unload_topic": {"topic": _arg(_STR, required=True)},
    # the admin API's create-subscription: a durable subscription without consumers, with subscription
    # properties (PIP-105; under the tdmq profile their keys are the subscription's tags, PLS-TAG-001)
    "create_subscription": {
        "topic": _arg(_STR, required=True),
        "subscription": _arg(_STR, required=True),
        "properties": _arg(_DICT),
        "initial_position": _arg(_STR, choices=("Earliest", "Latest")),
    },
    "expire_messages": {
        "topic": _arg(_STR, required=True),
        "subscription": _arg(_STR, required=True),
        "seconds": _arg(_INT, required=True),
    },
    # admin topic and cursor ops (reference_model/admin_ops.py; docs/trace-format.md#ops): deleting a topic
    # (PLS-TOPIC-004/005), resetting a subscription's cursor (PLS-SEEK-004), skipping and clearing its backlog
    # (PLS-SKIP-001/002)
    "delete_topic": {"topic": _arg(_STR, required=True), "force": _arg(_BOOL)},
    "reset_cursor": {
        "topic": _arg(_STR, required=True),
        "subscription": _arg(_STR, required=True),
        "message": _arg(_STR),  # reset to that message's id (inclusive unless ``excluded``)
        "excluded": _arg(_BOOL),  # with ``message``: ResetCursorData.isExcluded, start after it
        "publish_time_of": _arg(_STR),  # reset to that message's publish time (resetcursor/{timestamp})
        "position": _arg(_STR, choices=("earliest", "latest")),
    },
    "skip": {
        "topic": _arg(_STR, required=True),
        "subscription": _arg(_STR, required=True),
        "count": _arg(_INT, required=True),
    },
    # without ``subscription``: every subscription of the topic
    "clear_backlog": {"topic": _arg(_STR, required=True), "subscription": _arg(_STR)},
    # transactions (PLS-TXN-*): a txn handle lives from new_txn to the end of the trace; commit and
    # abort end the transaction, not the handle (later ops on it are refused: PLS-TXN-004)
    "new_txn": {"txn": _arg(_STR, required=True), "timeout_ms": _arg(_INT), "client": _arg(_STR, choices=CLIENT_NAMES)},
    "commit_txn": {"txn": _arg(_STR, required=True)},
    "abort_txn": {"txn": _arg(_STR, required=True)},
    # fault ops (docs/faults.md): injected through the fault proxy between the clients and the
    # broker (fixtures/faults.py); the model says what must survive each (reference_model/faults.py)
    "restart_broker": {"graceful": _arg(_BOOL)},  # default true: SIGTERM; false: SIGKILL
    "cut_connections": {},  # every client connection is dropped; the clients reconnect
    "set_latency": {"ms": _arg(_INT, required=True)},  # every byte both ways waits ms more; 0 ends it
    "stall_connections": {"ms": _arg(_INT, required=True)},  # no byte passes for ms, then all do
}

# The ops that inject a fault: a target runs them only on a broker the suite controls through the
# fault proxy (``fixtures.faults``).
FAULT_OPS = ("restart_broker", "cut_connections", "set_latency", "stall_connections")


def injects_faults(trace: "Trace") -> bool:
    """Whether ``trace`` holds a fault op (it needs a broker behind the fault proxy)."""
    return any(op.op in FAULT_OPS for op in trace.ops)

def _check_key_shared(arg: Mapping[str, Any]) -> None:
    unknown = set(arg) - {"mode", "allow_out_of_order", "ranges"}
    if unknown:
        raise TraceFormatError(f"op 'subscribe': key_shared has unknown field(s) {sorted(unknown)}; allowed: mode, allow_out_of_order, ranges")
    if arg.get("mode", "AutoSplit") not in ("AutoSplit", "Sticky"):
        raise TraceFormatError(f"op 'subscribe': key_shared mode is {arg.get('mode')!r}; allowed: AutoSplit, Sticky")
    if not isinstance(arg.get("allow_out_of_order", False), bool):
        raise TraceFormatError("op 'subscribe': key_shared allow_out_of_order must be a boolean")
    ranges = arg.get("ranges", [])
    if not (isinstance(ranges, list) and all(isinstance(r, list) and len(r) == 2 and all(isinstance(x, int) and not isinstance(x, bool) for x in r) for r in ranges)):
        raise TraceFormatError("op 'subscribe': key_shared ranges must be a list of [start, end] integer pairs")


def _check_router(arg: Mapping[str, Any]) -> None:
    unknown = set(arg) - {"hashing", "client"}
    if unknown:
        raise TraceFormatError(f"op 'create_producer': router has unknown field(s) {sorted(unknown)}; allowed: hashing, client")
    if arg.get("hashing", "murmur3_32") not in ("murmur3_32", "java_string_hash"):
        raise TraceFormatError(f"op 'create_producer': router hashing is {arg.get('hashing')!r}; allowed: murmur3_32, java_string_hash")
    if arg.get("client", "java") not in ("java", "cpp"):
        raise TraceFormatError(f"op 'create_producer': router client is {arg.get('client')!r}; allowed: java, cpp")


def _check_backoff(name: str, backoff: Any) -> None:
    """A ``MultiplierRedeliveryBackoff``: the Java builder refuses multiplier <= 1 and min > max."""
    shape = f"op 'subscribe': {name} must be {{'min_delay_ms': int, 'max_delay_ms': int, 'multiplier': number > 1 (default 2.0)}}"
    if not isinstance(backoff, Mapping) or set(backoff) - {"min_delay_ms", "max_delay_ms", "multiplier"} \
            or not {"min_delay_ms", "max_delay_ms"} <= set(backoff):
        raise TraceFormatError(shape)
    for key in ("min_delay_ms", "max_delay_ms"):
        if not isinstance(backoff[key], int) or isinstance(backoff[key], bool) or backoff[key] < 0:
            raise TraceFormatError(f"{shape}; {key} is {backoff[key]!r}")
    multiplier = backoff.get("multiplier", 2.0)
    if not isinstance(multiplier, (int, float)) or isinstance(multiplier, bool):
        raise TraceFormatError(f"{shape}; multiplier is {multiplier!r}")


def check_schema(op: str, schema: Any, *, half: bool = False) -> None:
    """A ``schema`` argument: ``{"type": T}``, with ``definition`` (an Avro schema: a JSON object,
    list or string, or its text) for AVRO / JSON, ``key`` and ``value`` (schemas) for KEY_VALUE."""
    where = f"op {op!r}: schema" + (" half" if half else "")
    if not isinstance(schema, Mapping) or not isinstance(schema.get("type"), str):
        raise TraceFormatError(f"{where} must be an object with a 'type' among {', '.join(SCHEMA_TYPES)}")
    kind = schema["type"]
    if kind not in SCHEMA_TYPES:
        raise TraceFormatError(f"{where} type is {kind!r}; allowed: {', '.join(SCHEMA_TYPES)}")
    allowed = {"type"} | ({"definition"} if kind in SCHEMA_DEFINED_TYPES else set()) \
        | ({"key", "value"} if kind == "KEY_VALUE" else set())
    if set(schema) - allowed:
        raise TraceFormatError(f"{where} {kind} has unknown field(s) {sorted(set(schema) - allowed)}; allowed: {', '.join(sorted(allowed))}")
    if kind in SCHEMA_DEFINED_TYPES and "definition" not in schema:
        raise TraceFormatError(f"{where} {kind} needs a 'definition' (an Avro schema)")
    if kind == "AUTO_CONSUME" and (op != "subscribe" or half):
        raise TraceFormatError(f"{where}: AUTO_CONSUME is a consumer's schema (subscribe only, not a KEY_VALUE half)")
    if kind == "KEY_VALUE":
        if half:
            raise TraceFormatError(f"{where}: a KEY_VALUE half cannot be KEY_VALUE")
        for part in ("key", "value"):
            if part not in schema:
                raise TraceFormatError(f"{where} KEY_VALUE needs 'key' and 'value' schemas")
            check_schema(op, schema[part], half=True)


def check_key_bytes(text: Any, where: str = "op 'send': key_bytes") -> bytes:
    """A binary key's hex text (``"00ff10"``, case-insensitive, no separators, at least one byte) -> its bytes, else
    ``TraceFormatError``."""
    if not isinstance(text, str) or not text or len(text) % 2 or any(c not in "0123456789abcdefABCDEF" for c in text):
        raise TraceFormatError(f"{where} must be the key's bytes in hex, two digits each (e.g. '00ff10'), got {text!r}")
    return bytes.fromhex(text)


def _check_dead_letter(dead: Any) -> None:
    allowed = {"max_redeliver_count", "topic", "initial_subscription", "retry_topic"}
    if not isinstance(dead, Mapping) or set(dead) - allowed:
        raise TraceFormatError("op 'subscribe': dead_letter must be an object with fields among " + ", ".join(sorted(allowed)))
    count = dead.get("max_redeliver_count")
    if count is not None and (not isinstance(count, int) or isinstance(count, bool)):
        raise TraceFormatError(f"op 'subscribe': dead_letter max_redeliver_count must be an integer, got {count!r}")
    for key in ("topic", "initial_subscription", "retry_topic"):
        if key in dead and not isinstance(dead[key], str):
            raise TraceFormatError(f"op 'subscribe': dead_letter {key} must be a string, got {dead[key]!r}")


# ops that create a handle, and the argument that names it
CREATES_HANDLE = {"create_producer": "producer", "subscribe": "consumer", "create_reader": "reader", "new_txn": "txn"}


def _type_name(types: tuple[type, ...]) -> str:
    names = {str: "string", int: "integer", bool: "boolean", dict: "object", list: "list", type(None): "null"}
    return " or ".join(names.get(t, t.__name__) for t in types)


def validate_op(op: str, args: Mapping[str, Any]) -> None:
    """Raise ``TraceFormatError`` (without location) if ``op``/``args`` break the schema."""
    spec = OP_SPECS.get(op)
    if spec is None:
        raise TraceFormatError(f"unknown op {op!r}; known ops: {', '.join(sorted(OP_SPECS))}")
    if not isinstance(args, Mapping):
        raise TraceFormatError(f"op {op!r}: args must be an object, got {type(args).__name__}")
    for name in args:
        if name not in spec:
            raise TraceFormatError(
                f"op {op!r}: unknown argument {name!r}; allowed: {', '.join(sorted(spec))}"
            )
    for name, arg in spec.items():
        if name not in args:
            if arg.required:
                raise TraceFormatError(f"op {op!r}: missing required argument {name!r}")
            continue
        value = args[name]
        # bool is an int in Python; an integer argument must not accept true/false.
        ok_type = isinstance(value, arg.types) and not (
            isinstance(value, bool) and bool not in arg.types
        )
        if not ok_type:
            raise TraceFormatError(
                f"op {op!r}: argument {name!r} must be {_type_name(arg.types)}, got {value!r}"
            )
        if arg.choices is not None and value not in arg.choices:
            raise TraceFormatError(
                f"op {op!r}: argument {name!r} is {value!r}; allowed: {', '.join(map(str, arg.choices))}"
            )
    if op == "subscribe" and sum(k in args for k in ("topic", "topics", "topics_pattern")) != 1:
        raise TraceFormatError("op 'subscribe': give exactly one of 'topic', 'topics' or 'topics_pattern'")
    if op == "subscribe" and "key_shared" in args:
        _check_key_shared(args["key_shared"])
    if op == "create_producer" and "router" in args:
        _check_router(args["router"])
    if "schema" in args:
        check_schema(op, args["schema"])
    for name in ("nack_backoff", "ack_timeout_backoff"):
        if op == "subscribe" and name in args:
            _check_backoff(name, args[name])
    if op == "subscribe" and "dead_letter" in args:
        _check_dead_letter(args["dead_letter"])
    if op == "seek":
        given = [k for k in ("message", "publish_time_of", "position") if k in args]
        if len(given) != 1:
            raise TraceFormatError(
                "op 'seek': give exactly one of 'message', 'publish_time_of', 'position'"
            )
    if op == "send" and "key_bytes" in args:
        if "key" in args:
            raise TraceFormatError("op 'send': give 'key' (text) or 'key_bytes' (hex), not both: a message has one partition key")
        check_key_bytes(args["key_bytes"])
    if op == "reset_cursor":
        given = [k for k in ("message", "publish_time_of", "position") if k in args]
        if len(given) != 1:
            raise TraceFormatError(
                "op 'reset_cursor': give exactly one of 'message', 'publish_time_of', 'position'"
            )
        if "excluded" in args and "message" not in args:
            raise TraceFormatError("op 'reset_cursor': 'excluded' goes with 'message' only (a reset to a message id)")
    if op == "skip" and args["count"] < 1:
        raise TraceFormatError(f"op 'skip': count must be at least 1, got {args['count']}; "
                               "to skip everything use clear_backlog")
    if op == "create_reader":
        start = args["start"]
        if isinstance(start, str) and start not in ("earliest", "latest"):
            raise TraceFormatError(
                f"op 'create_reader': start is {start!r}; use 'earliest', 'latest' or {{'message': label}}"
            )
        if isinstance(start, dict) and (set(start) != {"message"} or not isinstance(start["message"], str)):
            raise TraceFormatError("op 'create_reader': start object must be {'message': label}")
    if op == "set_policy":
        from reference_model.feature_state import check_policy_args

        why = check_policy_args(args)
        if why:
            raise TraceFormatError(f"op 'set_policy': {why}")
    for name in ("timeout_ms", "ms", "partitions", "payload_size", "receiver_queue_size", "wait_ms", "seconds",
                 "batching_max_messages", "batching_max_bytes", "batching_max_delay_ms", "priority_level", "ack_timeout_tick_ms",
                 "max_unacked_messages_per_consumer"):
        if name in args and args[name] < 0:
            raise TraceFormatError(f"op {op!r}: argument {name!r} must not be negative")


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Op:
    """One operation of a trace: ``step`` counts from 1."""

    step: int
    op: str
    args: Mapping[str, Any]

    def handle(self) -> str | None:
        """The handle this op acts on (or creates), if any."""
        for name in ("producer", "consumer", "reader", "handle", "txn"):
            if name in self.args:
                return self.args[name]
        return None


@dataclass(frozen=True)
class Outcome:
    """What an op did: ``ok`` (with ``value``), ``rejected`` (with ``error``) or ``indeterminate``."""

    status: str
    value: Mapping[str, Any] | None = None
    error: str | None = None
    detail: str | None = None

    @staticmethod
    def ok(value: Mapping[str, Any] | None = None) -> "Outcome":
        return Outcome(OK, value=dict(value or {}))

    @staticmethod
    def rejected(error: str, detail: str | None = None) -> "Outcome":
        if error not in ERROR_NAMES:
            raise ValueError(f"unknown error name {error!r}; add it to ERROR_NAMES or map it to OtherError")
        return Outcome(REJECTED, error=error, detail=detail)

    @staticmethod
    def indeterminate(detail: str) -> "Outcome":
        return Outcome(INDETERMINATE, detail=detail)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status}
        if self.status == OK:
            out["value"] = dict(self.value or {})
        if self.error is not None:
            out["error"] = self.error
        if self.detail is not None:
            out["detail"] = self.detail
        return out

    @staticmethod
    def from_json(data: Any) -> "Outcome":
        if not isinstance(data, Mapping):
            raise TraceFormatError(f"outcome must be an object, got {data!r}")
        status = data.get("status")
        if status not in OUTCOME_STATUSES:
            raise TraceFormatError(f"outcome status is {status!r}; allowed: {', '.join(OUTCOME_STATUSES)}")
        if status == OK:
            value = data.get("value", {})
            if not isinstance(value, Mapping):
                raise TraceFormatError("an ok outcome's value must be an object")
            return Outcome(OK, value=dict(value), detail=data.get("detail"))
        if status == REJECTED:
            error = data.get("error")
            if error not in ERROR_NAMES:
                raise TraceFormatError(f"rejected outcome has unknown error {error!r}")
            return Outcome(REJECTED, error=error, detail=data.get("detail"))
        return Outcome(INDETERMINATE, detail=data.get("detail"))


@dataclass(frozen=True)
class ObservedMessage:
    """A message as a consumer or reader saw it (docs/trace-format.md, ``<message>``)."""

    payload: str
    message_id: tuple[int, int, int, int]
    topic: str
    key: str | None = None
    ordering_key: str | None = None
    properties: Mapping[str, str] = field(default_factory=dict)
    event_time: int = 0
    publish_time: int = 0
    redelivery_count: int = 0
    producer_name: str | None = None
    schema_version: int | None = None  # PLS-SCHEMA-023: the version the broker stamped (None: no schema)
    # PLS-MSG-002: a partition key sent as bytes, as a client that can tell reports it (the Java client's
    # getKeyBytes when hasBase64EncodedKey), in hex; ``key`` is then its Base64 text. None: a text key, or a client
    # that cannot tell (the C++ / Python one hands over the Base64 text only)
    key_bytes: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            **({"schema_version": self.schema_version} if self.schema_version is not None else {}),
            **({"key_bytes": self.key_bytes} if self.key_bytes is not None else {}),
            "payload": self.payload,
            "message_id": list(self.message_id),
            "topic": self.topic,
            "key": self.key,
            "ordering_key": self.ordering_key,
            "properties": dict(self.properties),
            "event_time": self.event_time,
            "publish_time": self.publish_time,
            "redelivery_count": self.redelivery_count,
            "producer_name": self.producer_name,
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> "ObservedMessage":
        try:
            mid = data["message_id"]
            if not (isinstance(mid, (list, tuple)) and len(mid) == 4):
                raise TraceFormatError(f"message_id must be [ledger, entry, partition, batch_index], got {mid!r}")
            return ObservedMessage(
                payload=data["payload"],
                message_id=tuple(int(x) for x in mid),  # type: ignore[arg-type]
                topic=data["topic"],
                key=data.get("key"),
                ordering_key=data.get("ordering_key"),
                properties=dict(data.get("properties") or {}),
                event_time=int(data.get("event_time") or 0),
                publish_time=int(data.get("publish_time") or 0),
                redelivery_count=int(data.get("redelivery_count") or 0),
                producer_name=data.get("producer_name"),
                schema_version=_schema_version(data.get("schema_version")),
                key_bytes=_key_bytes(data.get("key_bytes")),
            )
        except KeyError as missing:
            raise TraceFormatError(f"observed message lacks field {missing}") from None


def _key_bytes(value: Any) -> str | None:
    if value is None:
        return None
    check_key_bytes(value, "observed message key_bytes")
    return value.lower()


def _schema_version(value: Any) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise TraceFormatError(f"observed message schema_version must be an integer or null, got {value!r}")
    return value


def bulk_send_args(args: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``send`` args a ``send_many`` stands for, in send order."""
    keys = int(args.get("keys") or 0)
    sends = []
    for i in range(1, int(args["count"]) + 1):
        one: dict[str, Any] = {"producer": args["producer"], "payload": f"{args['prefix']}{i}", "async": True}
        if keys > 0:
            one["key"] = f"k{i % keys}"
        if "payload_size" in args:
            one["payload_size"] = args["payload_size"]
        sends.append(one)
    return sends


BULK_OPS = ("send_many", "consume")


def expand_bulk(events: Iterable["Event"]) -> Iterator["Event"]:
    """``events`` with each ``send_many`` and ``consume`` replaced by the steps it stands for, all under its step
    number: a send_many by its async sends (each ok, as an async send is; a refused or unknown send_many by one send
    with its outcome), a consume by a receive per message that came (ended at the time the target saw it, ``at_ms``
    after the op began) and, when it acks, an ack of it right after, then a receive that got nothing for ``idle_ms``
    (unless it stopped at ``max``; an indeterminate one if the consumer was disconnected then)."""
    for event in events:
        op = event.op
        if op.op not in BULK_OPS:
            yield event
            continue
        if op.op == "send_many":
            sends = bulk_send_args(op.args)
            if event.outcome.status != OK:
                yield Event(Op(op.step, "send", sends[0] if sends else {"producer": op.args["producer"], "payload": ""}),
                            event.outcome, event.t_start_ms, event.t_end_ms)
                continue
            for one in sends:
                yield Event(Op(op.step, "send", one), Outcome.ok({}), event.t_start_ms, event.t_end_ms)
            continue
        consumer, idle = op.args["consumer"], int(op.args["idle_ms"])
        receive = Op(op.step, "receive", {"consumer": consumer, "timeout_ms": idle})
        if event.outcome.status != OK:
            yield Event(receive, event.outcome, event.t_start_ms, event.t_end_ms)
            continue
        value = event.outcome.value or {}
        messages = _consumed(value)  # checked as a loaded history's is: an in-memory one may not have been
        last = event.t_start_ms
        for message, offset in zip(messages, value.get("at_ms") or ()):
            seen = min(event.t_end_ms, max(last, event.t_start_ms + float(offset)))
            yield Event(receive, Outcome.ok({"message": message}), last, seen)
            if op.args.get("ack", True):
                label = message.get("payload") if isinstance(message, Mapping) else None
                yield Event(Op(op.step, "ack", {"consumer": consumer, "message": label}), Outcome.ok({}), seen, seen)
            last = seen
        ended = value.get("ended", "idle")
        if ended == "idle":
            yield Event(receive, Outcome.ok({"message": None}), last, event.t_end_ms)
        elif ended == "disconnected":
            yield Event(receive, Outcome.indeterminate(DISCONNECTED_NOTHING), last, event.t_end_ms)


def nothing_while_disconnected(outcome: Outcome) -> bool:
    """Whether ``outcome`` is a receive's (or a read's) that got nothing while its consumer was disconnected from the
    broker at some point (``DISCONNECTED_NOTHING``; every target and driver says it so): the application took no
    message, and the emptiness proves nothing."""
    return outcome.status == INDETERMINATE and (outcome.detail or "").startswith(DISCONNECTED_NOTHING)


def received_message(outcome: Outcome) -> ObservedMessage | None:
    """The message a ``receive``/``read_next`` outcome carries, or None (nothing arrived)."""
    if outcome.status != OK or not outcome.value:
        return None
    data = outcome.value.get("message")
    return None if data is None else ObservedMessage.from_json(data)


@dataclass(frozen=True)
class ReportedConsumer:
    """One consumer of a Key_Shared ``stats`` value (``"consumers"``): the trace handle the target
    matched it to (None: it could not tell), the ``consumerName`` the broker reported and the hash
    ranges the consumer stats report (``keyHashRanges``), inclusive ``(start, end)`` pairs, sorted."""

    consumer: str | None
    consumer_name: str | None
    key_hash_ranges: tuple[tuple[int, int], ...]

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> "ReportedConsumer":
        ranges = data.get("key_hash_ranges")
        if not isinstance(ranges, (list, tuple)) or not all(
                isinstance(r, (list, tuple)) and len(r) == 2 and all(isinstance(x, int) for x in r) for r in ranges):
            raise TraceFormatError(f"stats consumer key_hash_ranges must be [[start, end], ...], got {ranges!r}")
        return ReportedConsumer(consumer=data.get("consumer"), consumer_name=data.get("consumer_name"),
                                key_hash_ranges=tuple(sorted((int(r[0]), int(r[1])) for r in ranges)))


def reported_consumers(outcome: Outcome) -> tuple[ReportedConsumer, ...] | None:
    """The consumers a ``stats`` outcome reports on a Key_Shared subscription, or None: not reported
    (another subscription type, a partitioned topic, or a history written before they were)."""
    if outcome.status != OK or not outcome.value or outcome.value.get("consumers") is None:
        return None
    data = outcome.value["consumers"]
    if not isinstance(data, (list, tuple)) or not all(isinstance(c, Mapping) for c in data):
        raise TraceFormatError(f"a stats value's consumers must be a list of objects, got {data!r}")
    return tuple(ReportedConsumer.from_json(c) for c in data)


@dataclass(frozen=True)
class Event:
    """One op of a history, with its outcome and when it started and ended (ms)."""

    op: Op
    outcome: Outcome
    t_start_ms: float
    t_end_ms: float

    @property
    def step(self) -> int:
        return self.op.step


@dataclass(frozen=True)
class TraceHeader:
    trace_id: str
    title: str = ""
    rules: tuple[str, ...] = ()
    profile: Mapping[str, Any] = field(default_factory=dict)
    target: str | None = None
    broker_version: str | None = None
    client: str | None = None
    client_version: str | None = None
    namespace: str | None = None  # where the target placed the trace's short topic names
    timing: Mapping[str, Any] | None = None  # the run's timing bands + calibration (TIMING_SCHEMA_VERSIONS)
    # the host stalls seen while a live trace ran (conformance/host_stalls.py); None: not measured
    stalls: tuple[Any, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": "header",
            "format": TRACE_FORMAT,
            "version": TRACE_SCHEMA_VERSION,
            "trace_id": self.trace_id,
            "title": self.title,
            "rules": list(self.rules),
            "profile": dict(self.profile),
        }
        for name in ("target", "broker_version", "client", "client_version", "namespace"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.timing is not None:
            out["timing"] = dict(self.timing)
        if self.stalls is not None:
            out["host_stalls"] = [s.to_json() for s in self.stalls]
        return out


@dataclass(frozen=True)
class Trace:
    header: TraceHeader
    ops: tuple[Op, ...]

    def __post_init__(self) -> None:
        check_handles(self.ops)


@dataclass(frozen=True)
class History:
    header: TraceHeader
    events: tuple[Event, ...]

    def trace(self) -> Trace:
        """The trace this history ran: the ops without outcomes, header without run facts."""
        header = replace(self.header, target=None, broker_version=None, client=None, client_version=None, namespace=None,
                         timing=None, stalls=None)
        return Trace(header, tuple(e.op for e in self.events))


def check_handles(ops: Iterable[Op], *, source: str | None = None, lines: Mapping[int, int] | None = None) -> None:
    """Refuse ops that use a handle before it exists, reuse a live one, or name the wrong kind."""
    live: dict[str, str] = {}
    expected = 1
    for op in ops:
        line = (lines or {}).get(op.step)
        if op.step != expected:
            raise TraceFormatError(f"step {op.step} out of order; expected step {expected}", source=source, line=line)
        expected += 1
        created = CREATES_HANDLE.get(op.op)
        if created is not None:
            name = op.args[created]
            if name in live:
                raise TraceFormatError(
                    f"step {op.step}: handle {name!r} is already live ({live[name]}); close it first or pick a new name",
                    source=source,
                    line=line,
                )
            live[name] = created
            continue
        for arg, kind in HANDLE_ARGS.items():
            if arg in op.args:
                name = op.args[arg]
                if live.get(name) != kind:
                    what = f"a {live[name]}" if name in live else "not live"
                    raise TraceFormatError(
                        f"step {op.step}: op {op.op!r} needs {kind} handle {name!r}, which is {what}",
                        source=source,
                        line=line,
                    )
        if op.op == "close":
            name = op.args["handle"]
            if name not in live:
                raise TraceFormatError(
                    f"step {op.step}: close of {name!r}, which is not live", source=source, line=line
                )
            del live[name]
        elif op.op == "unsubscribe":
            live.pop(op.args["consumer"], None)


# --------------------------------------------------------------------------- JSON lines


def op_to_json(op: Op) -> dict[str, Any]:
    return {"kind": "op", "step": op.step, "op": op.op, "args": dict(op.args)}


def event_to_json(event: Event) -> dict[str, Any]:
    out = op_to_json(event.op)
    out["outcome"] = event.outcome.to_json()
    out["t_start_ms"] = round(event.t_start_ms, 3)
    out["t_end_ms"] = round(event.t_end_ms, 3)
    return out


FORMAT_DOC = "docs/trace-format.md"  # where a refused file's reader learns the format


def header_from_json(data: Mapping[str, Any], *, source: str | None = None, line: int | None = 1) -> TraceHeader:
    if data.get("kind") != "header":
        raise TraceFormatError("the first line must be the header ({\"kind\": \"header\", ...}); "
                               f"is this a trace or history file? ({FORMAT_DOC})", source=source, line=line)
    if data.get("format") != TRACE_FORMAT:
        raise TraceFormatError(f"header format is {data.get('format')!r}, expected {TRACE_FORMAT!r}; "
                               f"give a trace or history file ({FORMAT_DOC})", source=source, line=line)
    version = data.get("version")
    if version != TRACE_SCHEMA_VERSION or isinstance(version, bool):
        raise TraceFormatError(
            f"header version: trace format version {version!r} is not supported (this reader knows version "
            f"{TRACE_SCHEMA_VERSION}); read it with the pulsar-conformance release that wrote it, or regenerate it",
            source=source,
            line=line,
        )
    trace_id = data.get("trace_id")
    if not isinstance(trace_id, str) or not trace_id:
        raise TraceFormatError("header needs a non-empty string trace_id; name the trace", source=source, line=line)
    rules = data.get("rules", [])
    if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
        raise TraceFormatError("header rules must be a list of rule id strings, e.g. [\"PLS-ACK-001\"]", source=source, line=line)
    profile = data.get("profile", {})
    if not isinstance(profile, Mapping):
        raise TraceFormatError("header profile must be an object of model profile fields, e.g. {}", source=source, line=line)
    if (why := _broker_config_problem(profile.get("broker_config"))) is not None:
        raise TraceFormatError(f"header profile {why}; fix or delete it", source=source, line=line)
    for name in ("title", "target", "broker_version", "client", "client_version", "namespace"):
        if data.get(name) is not None and not isinstance(data[name], str):
            raise TraceFormatError(f"header {name} must be a string, got {data[name]!r}; fix or delete it",
                                   source=source, line=line)
    timing = data.get("timing")
    if timing is not None:
        if not isinstance(timing, Mapping):
            raise TraceFormatError("header timing must be an object (the run's timing bands)", source=source, line=line)
        if timing.get("version") not in TIMING_SCHEMA_VERSIONS:
            raise TraceFormatError(
                f"header timing version {timing.get('version')!r} is not supported (this reader knows "
                f"{', '.join(map(str, TIMING_SCHEMA_VERSIONS))}); judge it with a newer pulsar-conformance, "
                "or delete the header's timing to judge it with the default bands",
                source=source, line=line)
    stalls = None
    if data.get("host_stalls") is not None:
        try:
            stalls = stalls_from_json(data["host_stalls"])
        except ValueError as err:
            raise TraceFormatError(f"header {err}; fix or delete it (docs/trace-format.md)", source=source, line=line) from None
    return TraceHeader(
        trace_id=trace_id,
        title=str(data.get("title", "")),
        rules=tuple(rules),
        profile=dict(profile),
        target=data.get("target"),
        broker_version=data.get("broker_version"),
        client=data.get("client"),
        client_version=data.get("client_version"),
        namespace=data.get("namespace"),
        timing=dict(timing) if timing is not None else None,
        stalls=stalls,
    )


# broker.conf keys whose value the model reads as a whole number (reference_model/dispatch/key_shared.py)
_INTEGER_BROKER_KEYS = ("subscriptionKeySharedConsistentHashingReplicaPoints", "delayedDeliveryTickTimeMillis")


def _broker_config_problem(config: Any) -> str | None:
    """Why a header's ``profile.broker_config`` cannot be read (an object of broker.conf keys to
    scalar values, the numeric ones whole numbers), or None."""
    if config is None:
        return None
    if not isinstance(config, Mapping):
        return f"broker_config must be an object of broker.conf keys, got {config!r}"
    for key, value in config.items():
        if not isinstance(value, (str, bool, int, float)) or value is None:
            return f"broker_config {key} must be a string, number or boolean, got {value!r}"
        if key in _INTEGER_BROKER_KEYS and value != "" and not (
                (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, str) and value.strip().lstrip("-").isdigit())):
            return f"broker_config {key} must be a whole number, got {value!r}"
    return None


def _op_from_json(data: Mapping[str, Any], *, source: str | None, line: int) -> tuple[Op, Outcome | None, float, float]:
    if data.get("kind") != "op":
        raise TraceFormatError(f"expected an op line (kind 'op'), got kind {data.get('kind')!r}", source=source, line=line)
    step = data.get("step")
    if not isinstance(step, int) or isinstance(step, bool):
        raise TraceFormatError(f"step must be an integer, got {step!r}; number the ops 1, 2, 3, ...", source=source, line=line)
    name = data.get("op")
    if not isinstance(name, str):
        raise TraceFormatError(f"op must be an op name (a string), got {name!r}; see {FORMAT_DOC}#ops", source=source, line=line)
    args = data.get("args", {})
    try:
        validate_op(name, args)
    except TraceFormatError as err:
        raise TraceFormatError(f"{err.problem}; fix the op ({FORMAT_DOC}#ops)", source=source, line=line) from None
    op = Op(step=step, op=name, args=dict(args))
    if "outcome" not in data:
        return op, None, 0.0, 0.0
    try:
        outcome = Outcome.from_json(data["outcome"])
        _check_outcome_value(outcome)
    except TraceFormatError as err:
        raise TraceFormatError(f"{err.problem}; fix the outcome or regenerate the history ({FORMAT_DOC}#outcomes)",
                               source=source, line=line) from None
    t_start, t_end = data.get("t_start_ms"), data.get("t_end_ms")
    if not all(isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) for t in (t_start, t_end)):
        raise TraceFormatError("an op with an outcome needs numeric t_start_ms and t_end_ms (ms since the trace began); "
                               "fix the line or regenerate the history", source=source, line=line) from None
    return op, outcome, float(t_start), float(t_end)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _message_id_problem(name: str, mid: Any) -> str | None:
    if isinstance(mid, list) and len(mid) == 4 and all(_is_int(x) for x in mid):
        return None
    return f"{name} must be [ledger, entry, partition, batch_index] (four integers), got {mid!r}"


# The value fields of an ok outcome the checker reads, and the JSON types each must have; a
# history with another shape is refused here, naming the line, rather than crashing the checker.
_VALUE_TYPES: dict[str, tuple[type, ...]] = {
    "publish_time": (int,), "last_sequence_id": (int,), "backlog": (int,), "id_texts": (dict,),
    "message_ids": (dict,), "consumer_unacked": (list,), "message": (dict,), "producer_name": (str,),
}


def _check_outcome_value(outcome: Outcome) -> None:
    """Refuse an ok outcome whose value fields have shapes no target writes (``TraceFormatError``)."""
    value = outcome.value or {}
    for name, types in _VALUE_TYPES.items():
        got = value.get(name)
        if got is not None and (not isinstance(got, types) or isinstance(got, bool)):
            raise TraceFormatError(f"outcome value {name} must be {_type_name(types)}, got {got!r}")
    if "message_id" in value and (why := _message_id_problem("outcome value message_id", value["message_id"])):
        raise TraceFormatError(why)
    for label, mid in (value.get("message_ids") or {}).items():
        if why := _message_id_problem(f"outcome value message_ids[{label!r}]", mid):
            raise TraceFormatError(why)
    for entry in value.get("consumer_unacked") or []:
        if not isinstance(entry, Mapping):
            raise TraceFormatError(f"outcome value consumer_unacked entries must be objects, got {entry!r}")
        for name, types in (("consumer_name", (str, type(None))), ("unacked_messages", (int,)), ("blocked", (bool,))):
            got = entry.get(name)
            if name in entry and (not isinstance(got, types) or (name == "unacked_messages" and isinstance(got, bool))):
                raise TraceFormatError(f"outcome value consumer_unacked {name} must be {_type_name(types)}, got {got!r}")
    for message in [value.get("message")] + _consumed(value):
        if message is None:
            continue
        if not isinstance(message, Mapping):
            raise TraceFormatError(f"a received message must be an object, got {message!r}")
        if why := _message_id_problem("received message_id", message.get("message_id")):
            raise TraceFormatError(why)
        for name, types in (("payload", (str,)), ("topic", (str,)), ("key", (str, type(None))),
                            ("ordering_key", (str, type(None))), ("producer_name", (str, type(None))),
                            ("properties", (dict, type(None))), ("event_time", (int, type(None))),
                            ("publish_time", (int, type(None))), ("redelivery_count", (int, type(None)))):
            got = message.get(name)
            if name in ("payload", "topic") and name not in message:
                raise TraceFormatError(f"received message lacks field {name!r}")
            if not isinstance(got, types) or isinstance(got, bool):
                raise TraceFormatError(f"received message {name} must be {_type_name(types)}, got {got!r}")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in (message.get("properties") or {}).items()):
            raise TraceFormatError("received message properties must map strings to strings")
    reported_consumers(outcome)  # a Key_Shared stats value's consumers: TraceFormatError if malformed


def _consumed(value: Mapping[str, Any]) -> list[Any]:
    """A consume value's messages (``[]`` for any other value), checked to come with one number per message in
    ``at_ms`` and an ``ended`` reason the checker knows."""
    if "messages" not in value:
        return []
    messages, at = value.get("messages"), value.get("at_ms")
    if not isinstance(messages, list) or not isinstance(at, list) or len(at) != len(messages) \
            or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in at):
        raise TraceFormatError("a consume value needs messages and at_ms, two lists of the same length (at_ms: numbers)")
    if value.get("ended", "idle") not in ("idle", "max", "disconnected"):
        raise TraceFormatError(f"a consume value's ended must be idle, max or disconnected, got {value.get('ended')!r}")
    return messages


def _json_lines(text: str, source: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except json.JSONDecodeError as err:
            raise TraceFormatError(f"not valid JSON ({err.msg} at column {err.colno}); the line is cut short or "
                                   "malformed: fix it, or regenerate the file", source=source, line=number) from None
        except RecursionError:
            raise TraceFormatError("not valid JSON (nested too deeply); fix the line", source=source, line=number) from None
        if not isinstance(data, dict):
            raise TraceFormatError(f"each line must be a JSON object ({FORMAT_DOC})", source=source, line=number)
        yield number, data


def parse(text: str, *, source: str = "<string>") -> Trace | History:
    """Parse JSON lines into a ``Trace`` (no outcomes) or a ``History`` (every op has one)."""
    lines = list(_json_lines(text, source))
    if not lines:
        raise TraceFormatError(f"empty file: a trace needs at least a header line; give a trace or history file ({FORMAT_DOC})",
                               source=source, line=1)
    header = header_from_json(lines[0][1], source=source, line=lines[0][0])
    parsed = [(_op_from_json(data, source=source, line=n), n) for n, data in lines[1:]]
    with_outcome = [p for p, _ in parsed if p[1] is not None]
    if with_outcome and len(with_outcome) != len(parsed):
        first = next(n for p, n in parsed if p[1] is None)
        raise TraceFormatError("some ops have outcomes and this one does not: a history needs an outcome on every op; "
                               "the history is damaged, regenerate it", source=source, line=first)
    _check_op_count(lines[0][1], len(parsed), source=source, line=lines[0][0])
    ops = tuple(p[0] for p, _ in parsed)
    try:
        check_handles(ops, source=source, lines={p[0].step: n for p, n in parsed})
    except TraceFormatError as err:
        raise TraceFormatError(f"{err.problem}; create a handle (create_producer, subscribe, create_reader) before "
                               "using it, and close it once", source=source, line=err.line) from None
    if with_outcome:
        events = tuple(Event(op, outcome, t0, t1) for (op, outcome, t0, t1), _ in parsed)  # type: ignore[arg-type]
        return History(header, events)
    return Trace(header, ops)


def _check_op_count(header: Mapping[str, Any], found: int, *, source: str, line: int) -> None:
    """The header's ``op_count`` (written since it was added; older files have none and are read as
    they are) must be the number of op lines that follow it."""
    if OP_COUNT not in header:
        return
    declared = header[OP_COUNT]
    if not _is_int(declared) or declared < 0:
        raise TraceFormatError(f"header {OP_COUNT} must be a whole number >= 0, got {declared!r}; fix or delete it",
                               source=source, line=line)
    if declared != found:
        cut = "cut short" if found < declared else "longer than written"
        raise TraceFormatError(f"truncated or damaged: the header says {declared} ops and the file has {found} ({cut}); "
                               "regenerate the file, or copy it again whole", source=source, line=line)


def load(path: str | Path) -> Trace | History:
    """Read a trace or history file; errors name the file and line."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise TraceFormatError("no such file; check the path", source=str(path)) from None
    except OSError as err:
        raise TraceFormatError(f"cannot be read ({err.strerror}); give a readable trace or history file",
                               source=str(path)) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise TraceFormatError(f"not UTF-8 text (byte {err.start}: a binary file?); give a JSON-lines trace or "
                               f"history ({FORMAT_DOC})", source=str(path), line=line) from None
    return parse(text, source=str(path))


def dumps(item: Trace | History) -> str:
    """The JSON-lines text of a trace or history. The header line carries ``op_count``, so a file cut
    short at a line boundary (a copy or a write that did not finish) is refused, not judged as if its
    last steps never happened."""
    count = len(item.events) if isinstance(item, History) else len(item.ops)
    lines = [json.dumps({**item.header.to_json(), OP_COUNT: count}, sort_keys=False)]
    if isinstance(item, History):
        lines += [json.dumps(event_to_json(e)) for e in item.events]
    else:
        lines += [json.dumps(op_to_json(op)) for op in item.ops]
    return "\n".join(lines) + "\n"


def save(item: Trace | History, path: str | Path) -> Path:
    """Write atomically: a reader never sees half a file. A registered secret (an auth token a
    client's error message carried into an outcome) is written as ``<token>`` (fixtures/secrets.py)."""
    from fixtures.secrets import redact

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(redact(dumps(item)), encoding="utf-8")
    tmp.replace(path)
    return path


def make_trace(trace_id: str, ops: Iterable[tuple[str, Mapping[str, Any]]], **header: Any) -> Trace:
    """Build a validated trace from ``(op, args)`` pairs, numbering steps from 1."""
    built = []
    for step, (name, args) in enumerate(ops, start=1):
        try:
            validate_op(name, args)
        except TraceFormatError as err:
            raise TraceFormatError(f"step {step}: {err.problem}") from None
        built.append(Op(step, name, dict(args)))
    return Trace(TraceHeader(trace_id=trace_id, **header), tuple(built))


def replace_header(header: TraceHeader, **changes: Any) -> TraceHeader:
    """A copy of ``header`` with run facts (target, broker_version, client, ...) filled in."""
    return replace(header, **changes)
