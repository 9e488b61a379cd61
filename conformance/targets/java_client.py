"""Trace ops on handles owned by the Java client, for one run of the live target.

``BrokerTarget`` hands every op on a Java handle to ``JavaSession.apply``, which translates it
for the driver (docs/java-driver.md: full topic names, absolute times, message ids the harness
knows) and turns the answer back into an ``Outcome`` in the trace's terms (short topic names,
labels). Messages sent by either client are known to both: a Python consumer can ack, seek to
or start a reader at a message a Java producer sent, and the other way round.

Choices:
- A tombstone's empty payload carries no label: it is named by the id its send returned, as in
  the Python path (``_Run.label_by_id_tuple``).
- An answer's ``error`` outside the trace format's error names becomes ``OtherError`` with the
  driver's name kept in ``detail``.
"""

from __future__ import annotations

import time
from typing import Any

from conformance.targets import pulsar_features as fx
from conformance.targets.java_driver import JavaDriver, JavaDriverError
from conformance.targets.stall_sources import driver_stalls
from conformance.trace import ERROR_NAMES, Op, Outcome, bulk_send_args

PAD = "|"

# op -> whether it creates a handle (True) or acts on one (False)
JAVA_OPS = {
    "create_producer": True, "subscribe": True, "create_reader": True,
    "send": False, "flush": False, "receive": False, "ack": False, "ack_cumulative": False, "nack": False,
    "reconsume_later": False, "redeliver_unacked": False, "seek": False, "close": False,
    "unsubscribe": False, "read_next": False, "send_many": False, "consume": False,
    "new_txn": True, "commit_txn": False, "abort_txn": False,
}


def _schema_request(schema: dict) -> dict:
    """A trace ``schema`` as the driver takes it: AVRO / JSON definitions as the text the Python client sends too."""
    from reference_model.schema_ops import schema_text

    out = dict(schema)
    if "definition" in out:
        out["definition"] = schema_text(out["definition"])
    for half in ("key", "value"):
        if half in out:
            out[half] = _schema_request(out[half])
    return out


def _with_schema_text(args: dict) -> dict:
    return dict(args, schema=_schema_request(args["schema"])) if "schema" in args else args


class JavaSession:
    """The Java side of one trace run: opens the driver's client, applies ops, closes it."""

    def __init__(self, driver: JavaDriver, run: Any, *, operation_timeout_s: float):
        self.driver = driver
        self.run = run
        self.operation_timeout_s = operation_timeout_s

    def open(self, service_url: str, token: str | None, *, transactions: bool = False) -> None:
        """``transactions``: the trace begins transactions (PLS-TXN-*), so the client connects to the
        broker's transaction coordinator (a broker without one then fails the open)."""
        args: dict[str, Any] = {"service_url": service_url, "operation_timeout_ms": int(self.operation_timeout_s * 1000),
                                "connection_timeout_ms": 5000}
        if transactions:
            args["enable_transaction"] = True
        if token:
            args["token"] = token
        answer = self.driver.request("open", args, timeout_s=self.operation_timeout_s)
        if answer["status"] != "ok":
            raise JavaDriverError(f"the driver could not create its PulsarClient: {answer.get('error')}: {answer.get('detail')}")

    def close(self) -> None:
        if self.driver.alive():
            self.driver.request("close_run", {}, timeout_s=self.operation_timeout_s)

    def stalls(self) -> list[tuple[float, float]]:
        """The stalls the Java driver's watchdog saw since it was last asked, in monotonic seconds
        (conformance/host_stalls.py); none from a driver without the op (Go) or on another clock."""
        if self.driver.error_class is not JavaDriverError or not self.driver.alive():
            return []
        asked = time.monotonic()
        try:
            answer = self.driver.request("stalls", {}, timeout_s=self.operation_timeout_s)
        except JavaDriverError:
            return []
        return driver_stalls(answer.get("value"), asked, time.monotonic()) or []

    # ---------------------------------------------------------------- ops

    def apply(self, op: Op) -> Outcome:
        translate = getattr(self, "_args_" + op.op, None)
        args = {k: v for k, v in op.args.items() if k != "client"}
        args = translate(args) if translate else args
        if isinstance(args, Outcome):  # refused before reaching the driver
            return args
        answer = self.driver.request(op.op, args, timeout_s=self._budget_s(op))
        outcome = self._outcome(answer)
        after = getattr(self, "_after_" + op.op, None)
        return after(op.args, outcome) if after and outcome.status == "ok" else outcome

    def _budget_s(self, op: Op) -> float:
        extra = op.args.get("timeout_ms", 0) + op.args.get("wait_ms", 0)
        if op.op in ("send_many", "consume"):  # a loop in the driver: up to 5 ms a message on a loaded host
            extra += op.args.get("idle_ms", 0) + 5 * (op.args.get("count", 0) + op.args.get("max", 0))
        return self.operation_timeout_s + extra / 1000.0

    @staticmethod
    def _outcome(answer: dict[str, Any]) -> Outcome:
        status = answer["status"]
        if status == "ok":
            return Outcome.ok(answer.get("value") or {})
        if status == "rejected":
            error = answer.get("error") or "OtherError"
            detail = answer.get("detail") or ""
            if error not in ERROR_NAMES:
                detail, error = f"{error}: {detail}", "OtherError"
            return Outcome.rejected(error, detail)
        return Outcome.indeterminate(answer.get("detail") or "the Java client did not say")

    # ---------------------------------------------------------------- translation, out

    def _full(self, short: str) -> str:
        return fx.full_name(self.run.namespace, short)

    def _sent_id(self, label: str) -> list[int] | None:
        found = self.run.sent_id_tuple(label)
        return list(found) if found is not None else None

    def _with_id(self, args: dict) -> dict:
        known = self._sent_id(args["message"])
        return dict(args, message_id=known) if known is not None else args

    def _args_create_producer(self, a: dict) -> dict:
        return _with_schema_text(dict(a, topic=self._full(a["topic"])))

    def _args_send(self, a: dict) -> dict:
        out = {k: v for k, v in a.items() if k not in ("payload_size", "tombstone", "deliver_at_ms")}
        data = fx.payload_bytes(a, PAD)
        out["data"] = None if data is None else data.decode("utf-8")
        if "deliver_at_ms" in a:
            out["deliver_at_epoch_ms"] = int(self.run.epoch_ms_at_start + a["deliver_at_ms"])
        self.run.publish_times.setdefault(a["payload"], int(time.time() * 1000))
        return out

    def _args_send_many(self, a: dict) -> dict:
        now = int(time.time() * 1000)
        for one in bulk_send_args(a):
            self.run.publish_times.setdefault(one["payload"], now)
        return dict(a, pad=PAD)

    def _args_subscribe(self, a: dict) -> dict:
        out = dict(a)
        if "topic" in a:
            out["topic"] = self._full(a["topic"])
        if "topics" in a:
            out["topics"] = [self._full(t) for t in a["topics"]]
        if "topics_pattern" in a:
            out["topics_pattern"] = f"persistent://{self.run.namespace}/(?:{a['topics_pattern']})"  # grouped: see the Python target
        if "dead_letter" in a:
            dead = dict(a["dead_letter"])
            for key in ("topic", "retry_topic"):
                if dead.get(key):
                    dead[key] = self._full(dead[key])
            out["dead_letter"] = dead
        return _with_schema_text(out)

    def _args_ack(self, a: dict) -> dict:
        return self._with_id(a)

    _args_ack_cumulative = _args_nack = _args_reconsume_later = _args_ack

    def _args_seek(self, a: dict) -> dict | Outcome:
        if "message" in a:
            known = self._sent_id(a["message"])
            if known is None:
                return Outcome.rejected("OtherError", f"message {a['message']!r} was not sent in this run")
            return {"consumer": a["consumer"], "message_id": known}
        if "publish_time_of" in a:
            label = a["publish_time_of"]
            if label not in self.run.publish_times:
                return Outcome.rejected("OtherError", f"no publish time known for {label!r}")
            return {"consumer": a["consumer"], "timestamp": int(self.run.publish_times[label])}
        return a

    def _args_create_reader(self, a: dict) -> dict | Outcome:
        out = dict(a, topic=self._full(a["topic"]))
        if isinstance(a["start"], dict):
            known = self._sent_id(a["start"]["message"])
            if known is None:
                return Outcome.rejected("OtherError", f"message {a['start']['message']!r} was not sent in this run")
            out["start"] = {"message_id": known}
        return out

    # ---------------------------------------------------------------- translation, back

    def _after_send(self, a: dict, outcome: Outcome) -> Outcome:
        if a.get("tombstone"):
            self.run.tombstones[a["payload"]] = None  # its topic is the driver's
            self.run.tombstone_marks[a["payload"]] = fx.tombstone_mark(a.get("key"), a.get("properties"), a.get("event_time"))
        value = dict(outcome.value or {})
        if "message_id" in value:
            self.run.java_sent[a["payload"]] = tuple(value["message_id"])
        return outcome

    def _after_flush(self, a: dict, outcome: Outcome) -> Outcome:
        for label, found in dict((outcome.value or {}).get("message_ids") or {}).items():
            self.run.java_sent[label] = tuple(found)
        return outcome

    def _after_receive(self, a: dict, outcome: Outcome) -> Outcome:
        message = (outcome.value or {}).get("message")
        if message is None:
            return outcome
        message = dict(message)
        full_topic = message["topic"]
        message["topic"] = self.run.short(full_topic)
        if not message.get("payload"):
            mark = fx.tombstone_mark(message.get("key"), message.get("properties"), message.get("event_time"))
            message["payload"] = self.run.label_by_id_tuple(tuple(message["message_id"]), topic=full_topic, mark=mark) \
                or message.get("payload") or ""
            if message["payload"] and not full_topic.startswith("non-persistent://"):
                self.run.named_tombstones.setdefault(message["payload"], tuple(message["message_id"]))
        if message.get("publish_time"):
            fx.note_publish_time(self.run, message["payload"], message["publish_time"])
        return Outcome.ok({"message": message})

    _after_read_next = _after_receive

    def _after_consume(self, a: dict, outcome: Outcome) -> Outcome:
        value = dict(outcome.value or {})
        value["messages"] = [(self._after_receive(a, Outcome.ok({"message": m})).value or {})["message"]
                             for m in value.get("messages") or ()]
        return Outcome.ok(value)
