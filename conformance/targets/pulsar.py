"""The live target: runs a trace against a real broker through pulsar-client and the admin API.

This is the only code in ``conformance`` that talks to a broker. Each trace runs in a fresh
namespace (``public/conf-<random>``), deleted afterwards, so traces never see each other's
topics. Time is real: ``advance_time`` sleeps, and every op records when it started and ended
on a monotonic clock, in milliseconds since the trace began.

Choices:
- A message is referred to by its payload label. ``ack``/``nack`` use the delivery the consumer
  most recently received with that label; if it never received one, the id from the send.
- A client-side exception the trace format names (``ConsumerBusy`` ...) is a ``rejected``
  outcome. A timeout or lost connection on anything but ``receive``/``read_next`` is
  ``indeterminate``: the op may or may not have acted.
- The Python client is a wrapper over the C++ client, so its client kind is ``python`` with
  C++ semantics (see reference_model/profiles.py).
- With ``client="java"`` (or a handle-creating op that says ``"client": "java"``) the handles
  run on the Java client through the driver (``java_client.py``, docs/java-driver.md); admin
  ops and ``advance_time`` stay here. A run whose handles used both clients is reported with
  client ``mixed``, and every handle-creating op of its history names its client, so the model
  replays each handle with its own client's rules.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable

import _pulsar
import pulsar

from conformance.trace import (
    DISCONNECTED_NOTHING,
    Event,
    History,
    Op,
    Outcome,
    Trace,
    bulk_send_args,
    injects_faults,
    replace_header,
)
from conformance.targets import pulsar_features as fx
from conformance.targets.java_client import JAVA_OPS, JavaSession
from conformance.targets import go_driver
from conformance.targets.java_driver import JavaDriver, client_version_for, start_driver
from conformance.targets.stall_sources import GcLog, StallWatch, cpu_pressure_watch, harness_watch, relative
from conformance.host_stalls import BROKER_GC, CPU_PRESSURE, HARNESS, JAVA_DRIVER, Stall, overlapping
from fixtures.admin import AdminClient
from fixtures.endpoint import BrokerEndpoint
from fixtures.errors import AdminError
from fixtures.namespaces import reaper_for
from reference_model import routing
from reference_model.dispatch.key_shared import BROKER_CONFIG_KEYS
from reference_model.profiles import PROFILE_CONFIG_KEYS, client_refusal, profile_for

CLIENT_KIND = "python"
RUN_CLIENTS = ("python", "java", "go", "mixed")  # mixed: each handle names its client; unnamed ones are python
DRIVER_CLIENTS = ("java", "go")  # clients run by a driver process (docs/java-driver.md, docs/go-driver.md)
_PYTHON_PROFILE = profile_for(None, CLIENT_KIND)
PAD = "|"


_SUB_TYPES = {
    "Exclusive": pulsar.ConsumerType.Exclusive,
    "Shared": pulsar.ConsumerType.Shared,
    "Failover": pulsar.ConsumerType.Failover,
    "Key_Shared": pulsar.ConsumerType.KeyShared,
}
_POSITIONS = {"Latest": pulsar.InitialPosition.Latest, "Earliest": pulsar.InitialPosition.Earliest}
_ACCESS = {
    "Shared": pulsar.ProducerAccessMode.Shared,
    "Exclusive": pulsar.ProducerAccessMode.Exclusive,
    "ExclusiveWithFencing": pulsar.ProducerAccessMode.ExclusiveWithFencing,
    "WaitForExclusive": pulsar.ProducerAccessMode.WaitForExclusive,
}
# pulsar-client exception class name -> trace-format error name (docs/trace-format.md).
_REJECTIONS = {
    "ConsumerBusy": "ConsumerBusy",
    "ProducerBusy": "ProducerBusy",
    "ProducerFenced": "ProducerFenced",
    "ConsumerAssignError": "ConsumerAssignError",
    "CumulativeAcknowledgementNotAllowedError": "CumulativeAcknowledgementNotAllowedError",
    "InvalidConfiguration": "InvalidConfiguration",
    "InvalidTopicName": "InvalidTopicName",
    "NotAllowedError": "NotAllowedError",
    "TopicNotFound": "TopicNotFound",
    "SubscriptionNotFound": "SubscriptionNotFound",
    "MessageTooBig": "MessageTooBig",
    "AlreadyClosed": "AlreadyClosed",
    "IncompatibleSchema": "IncompatibleSchema",  # PLS-SCHEMA-*
}
# connection-level failures: the op may or may not have reached the broker.
_INDETERMINATE = {"Timeout", "ConnectError", "ServiceUnitNotReady", "BrokerMetadataError", "BrokerPersistenceError", "LookupError", "TooManyLookupRequestException", "ProducerBlockedQuotaExceededError"}


# How long the clients get to reconnect after a fault op before the op is indeterminate: the
# C++ client retries with a backoff from 100 ms doubling to 60 s (ClientConfiguration), so after a
# broker restart of ~20-40 s its next try may come ~30 s later.
RECONNECT_AFTER_CUT_S = 30.0
RECONNECT_AFTER_RESTART_S = 90.0


class FaultsUnavailable(RuntimeError):
    """A trace injects faults this target cannot inject: a harness error, never a verdict."""


def _connected(handle: Any) -> bool:
    try:
        return bool(handle.is_connected())
    except Exception:  # noqa: BLE001 - a closed handle reconnects to nothing: not waited for
        return True


def client_version() -> str:
    return getattr(pulsar, "__version__", "unknown")


@dataclass
class _Consumer:
    consumer: Any
    type: str
    received: dict[str, Any] = field(default_factory=dict)  # label -> last pulsar.Message
    # the one topic and the subscription it is on (None for a consumer of a list or pattern of
    # topics), where the broker's stats can show that it subscribed again
    topic: str | None = None
    subscription: str = ""
    prefetches: bool = True  # receiver_queue_size > 0: the client holds messages the app has not taken


@dataclass
class _Run:
    """The state of one trace run: handles, messages seen, and the namespace it lives in."""

    namespace: str
    client: Any
    admin: AdminClient
    epoch_ms_at_start: float
    producers: dict[str, Any] = field(default_factory=dict)
    consumers: dict[str, _Consumer] = field(default_factory=dict)
    readers: dict[str, Any] = field(default_factory=dict)
    sent: dict[str, Any] = field(default_factory=dict)  # label -> pulsar MessageId
    # label -> its publish time: the wall clock at its send until its first receipt tells the broker's (a dead-letter
    # or retry copy received later under the same label has one of its own, and the label names the message as
    # sent, as the model's Broker.message does: note_publish_time)
    publish_times: dict[str, int] = field(default_factory=dict)
    publish_time_received: set[str] = field(default_factory=set)
    java_sent: dict[str, tuple[int, ...]] = field(default_factory=dict)  # label -> id sent by the Java client
    owner: dict[str, str] = field(default_factory=dict)  # handle -> client running it
    partitioned: set[str] = field(default_factory=set)  # full names of the partitioned topics create_topic made
    created_by: dict[int, str] = field(default_factory=dict)  # step of a handle-creating op -> its client
    java: JavaSession | None = None
    go: JavaSession | None = None  # the Go driver speaks the Java driver's protocol
    not_created: dict[str, str] = field(default_factory=dict)  # handle -> the creating op that did not succeed
    tombstones: dict[str, str | None] = field(default_factory=dict)  # label sent with an empty or null payload -> its topic
    tombstone_marks: dict[str, tuple] = field(default_factory=dict)  # such a label -> tombstone_mark of its send
    # a tombstone a driver's consumer received and the harness named (label_by_id_tuple) -> its id: an ack or nack of
    # it by that label needs the id, which the driver has only once a flush reported its async send (5.0.0-M1 Java
    # campaign of 6 Dec 2026: an async tombstone m3, received, then nack(m3) refused by the driver; pls-nack-005-
    # unexpected-rejection-3897204081cb)
    named_tombstones: dict[str, tuple[int, ...]] = field(default_factory=dict)

    def sent_id_tuple(self, label: str) -> tuple[int, ...] | None:
        """The (ledger, entry, partition, batch) id either client got when it sent ``label``."""
        if label in self.sent:
            return _id_tuple(self.sent[label])
        return self.java_sent.get(label) or self.named_tombstones.get(label)

    def _answered_async_id(self, label: str) -> tuple[int, ...] | None:
        """The id an async send of ``label`` got in its callback, before any flush reported it (the
        Python client's callbacks: ``pulsar_features.send_async``); None if not answered yet. Used only
        to name a received tombstone: two async tombstones without a flush between them were
        indistinguishable (regression pls-msg-001-wrong-value-5e7c14c57566, live campaign of issue 16)."""
        for slots in self.__dict__.get("async_pending", {}).values():
            for slot in slots:
                if slot["label"] == label and slot["done"].is_set() and str(slot.get("result")) in ("Ok", "Result.Ok", "0"):
                    return _id_tuple(slot["id"])
        return None

    def sent_message_id(self, label: str) -> Any:
        """A ``pulsar.MessageId`` for ``label``, also for a message the Java client sent; else None."""
        if label in self.sent:
            return self.sent[label]
        found = self.java_sent.get(label)
        if found is None:
            return None
        ledger, entry, partition, batch = found
        return pulsar.MessageId(partition=partition, ledger_id=ledger, entry_id=entry, batch_index=batch)

    def label_by_id_tuple(self, found: tuple[int, ...], received: Any = (), topic: str | None = None,
                          mark: tuple | None = None) -> str | None:
        """The tombstone (empty or null payload: no label to read) a message with id ``found`` is.
        On a persistent topic, the one whose send returned that id (ledger, entry, batch index;
        either client), or else the one async tombstone whose flush has not reported an id yet. A
        non-persistent ``topic`` answers every send with the same id, so there the tombstones are
        named in send order, skipping those the consumer has ``received``. Found by the live
        campaign of issue 16 (2026-11-27): the first label with a shared id named a tombstone m4 "m1".
        ``mark`` (``tombstone_mark`` of the received message) first narrows the candidates to tombstones
        sent with the same key, properties and event time: on a non-persistent topic a reader that came
        after m1 was sent can only get a later one (5.0.0-M1 campaign: m7, key k1, was named m1, no key)."""
        order = list(self.tombstones)  # filled at each send: send order
        if mark is not None:
            fitting = [label for label in order if self.tombstone_marks.get(label, mark) == mark]
            order = fitting or order
        if topic is not None and topic.startswith("non-persistent://"):
            unseen = [label for label in order if self.tombstones[label] in (topic, None) and label not in received]
            return unseen[0] if unseen else None
        key = (found[0], found[1], found[3])
        known = {label: self.sent_id_tuple(label) or self._answered_async_id(label) for label in order}
        same_id = [label for label in order if (sent := known[label]) is not None and (sent[0], sent[1], sent[3]) == key]
        if len(same_id) == 1:
            return same_id[0]
        no_id_yet = [label for label in order if known[label] is None and label not in received]
        return no_id_yet[0] if not same_id and len(no_id_yet) == 1 else None

    def full(self, short: str) -> str:
        # ``non-persistent://t`` is a short name too (docs/trace-format.md#names)
        return fx.full_name(self.namespace, short)

    def short(self, full: str) -> str:
        return fx.short_name(self.namespace, full)


class BrokerTarget:
    """Run traces on the broker at ``endpoint``."""

    def __init__(self, endpoint: BrokerEndpoint, *, tenant: str = "public", operation_timeout_s: int = 15, log_path: str | None = None,
                 client: str = CLIENT_KIND, java_client_version: str | None = None, progress: Callable[[str], None] | None = None,
                 go_client_version: str | None = None):
        if client not in RUN_CLIENTS:
            raise ValueError(f"unknown client {client!r}; use one of {', '.join(RUN_CLIENTS)}")
        self.endpoint = endpoint
        self.client = client
        self.java_client_version = java_client_version
        self.go_client_version = go_client_version or go_driver.DEFAULT_CLIENT_VERSION
        self.progress = progress
        self._driver: JavaDriver | None = None
        self._go_driver: go_driver.GoDriver | None = None
        self.tenant = tenant
        self.operation_timeout_s = operation_timeout_s
        self.log_path = log_path
        self._broker_version: str | None = endpoint.version
        self._broker_config: dict[str, Any] | None = None
        # The timing bands (``conformance.timing.TimingBands.to_json``) this run is judged with,
        # recorded in every history's header; None: the checker's defaults.
        self.timing: dict[str, Any] | None = None
        self._gc_log: GcLog | None = None  # the embedded broker's GC log, read as it grows

    @property
    def name(self) -> str:
        return self.endpoint.kind if self.endpoint.kind != "external" else self.endpoint.service_url

    @property
    def supports_faults(self) -> bool:
        """The fault ops can run here: the broker has the fault proxy, and the handles are Python's."""
        return self.endpoint.controls is not None and self.client == CLIENT_KIND

    def admin(self) -> AdminClient:
        return AdminClient(self.endpoint.admin_url, token=self.endpoint.token)

    def broker_version(self) -> str:
        if self._broker_version is None:
            admin = self.admin()
            try:
                self._broker_version = admin.broker_version()
            finally:
                admin.close()
        return self._broker_version

    def broker_config(self) -> dict[str, Any]:
        """The broker.conf values the model depends on (``BROKER_CONFIG_KEYS``), read once from
        ``GET /admin/v2/brokers/configuration/runtime`` (values are strings there). Empty if the
        endpoint is refused (e.g. a token without superuser rights): the model then assumes the
        broker defaults, and says so in the history header."""
        if self._broker_config is None:
            admin = self.admin()
            try:
                runtime = admin.request("GET", "/admin/v2/brokers/configuration/runtime") or {}
                self._broker_config = {k: runtime[k] for k in (*BROKER_CONFIG_KEYS, *PROFILE_CONFIG_KEYS) if k in runtime}
            except AdminError:
                self._broker_config = {}
            finally:
                admin.close()
        return self._broker_config

    def describe(self) -> dict[str, Any]:
        return {"target": self.name, "broker_version": self.broker_version(), "client": self.client,
                "client_version": self.client_versions()}

    def client_versions(self) -> str:
        """``3.13.0`` (Python), ``java 4.0.8``, ``go 0.19.0``, or both for a mixed run."""
        python = client_version()
        if self.client == "go":
            return self._go_version()
        java = f"java {self.java_driver_version()}"
        return {"python": python, "java": java}.get(self.client, f"python {python} + {java}")

    def _go_version(self) -> str:
        return f"go {self._go_driver.client_version if self._go_driver is not None else self.go_client_version}"

    def java_driver_version(self) -> str:
        if self._driver is not None:
            return self._driver.client_version
        return self.java_client_version or client_version_for(self.broker_version())

    def java_driver(self) -> JavaDriver:
        """The driver JVM, built and started on first use and kept for every later run."""
        if self._driver is None or not self._driver.alive():
            self._driver = start_driver(self.java_driver_version(), log_path=self._driver_log("java"), progress=self.progress)
        return self._driver

    def _driver_log(self, kind: str) -> Any:
        """Where a driver's own log goes: beside the run's client log, or (None) the driver's default."""
        if not self.log_path:
            return None
        return Path(self.log_path).with_name(Path(self.log_path).stem + f"-{kind}-driver.log")

    def go_driver(self) -> go_driver.GoDriver:
        """The Go driver process, built and started on first use and kept for every later run."""
        if self._go_driver is None or not self._go_driver.alive():
            self._go_driver = go_driver.start_driver(self.go_client_version, log_path=self._driver_log("go"),
                                                     progress=self.progress)
        return self._go_driver

    def close(self) -> None:
        """Stop the Java and Go drivers, if they were started."""
        for attr in ("_driver", "_go_driver"):
            driver = getattr(self, attr)
            setattr(self, attr, None)
            if driver is not None:
                driver.close()

    @property
    def default_client(self) -> str:
        """The client of a handle that names none: java or go for a Java or Go run, else python (mixed too)."""
        return self.client if self.client in DRIVER_CLIENTS else CLIENT_KIND

    def _needs(self, trace: Trace, kind: str = "java") -> bool:
        return self.default_client == kind or any(op.args.get("client") == kind for op in trace.ops)

    def _needs_driver(self, trace: Trace) -> bool:
        return any(self._needs(trace, kind) for kind in DRIVER_CLIENTS)

    def _driver_transactions(self, trace: Trace, kind: str) -> bool:
        """Whether the trace begins a transaction on that driver's client (its client then enables them)."""
        return any(op.op == "new_txn" and (op.args.get("client") or self.default_client) == kind for op in trace.ops)

    def _client_of(self, run: _Run, op: Op) -> str:
        if JAVA_OPS.get(op.op):  # creates a handle
            return op.args.get("client") or self.default_client
        return run.owner.get(op.handle() or "", self.default_client)

    def _client(self) -> Any:
        kwargs: dict[str, Any] = {"operation_timeout_seconds": self.operation_timeout_s, "connection_timeout_ms": 5000}
        if self.endpoint.token:
            kwargs["authentication"] = pulsar.AuthenticationToken(self.endpoint.token)
        if self.log_path:
            kwargs["logger"] = pulsar.FileLogger(pulsar.LoggerLevel.Info, self.log_path)
        else:
            quiet = logging.getLogger("pulsar-conformance.client")
            quiet.setLevel(logging.CRITICAL)
            kwargs["logger"] = quiet
        controls = self.endpoint.controls
        if controls is not None:  # through the fault proxy (fixtures/faults.py): ask for its listener
            kwargs["listener_name"] = controls.listener_name
            return pulsar.Client(controls.service_url, **kwargs)
        return pulsar.Client(self.endpoint.service_url, **kwargs)

    def run(self, trace: Trace, *, on_event: Callable[[Event], None] | None = None) -> History:
        admin = self.admin()
        namespace = admin.fresh_namespace(self.tenant)
        client = self._client()
        run = _Run(namespace=namespace, client=client, admin=admin, epoch_ms_at_start=time.time() * 1000)
        watch = harness_watch()
        cpu_pressure_watch()  # reading from now on, for _stalls
        t0 = time.monotonic()
        events: list[Event] = []
        if self.endpoint.controls is not None:
            self.endpoint.controls.reset()  # no latency left over from an earlier trace
        try:
            if injects_faults(trace):
                if self.endpoint.controls is None:
                    raise FaultsUnavailable(f"trace {trace.header.trace_id} injects faults, and the broker at {self.endpoint.service_url} "
                                            "has no fault proxy: run it on --target embedded (the suite starts the proxy there)")
                if self._needs_driver(trace):
                    raise FaultsUnavailable(f"trace {trace.header.trace_id} injects faults with Java or Go handles; the fault "
                                            "ops run with the Python client only (docs/faults.md)")
            if self._needs(trace, "java"):
                run.java = JavaSession(self.java_driver(), run, operation_timeout_s=self.operation_timeout_s)
                run.java.open(self.endpoint.service_url, self.endpoint.token, transactions=self._driver_transactions(trace, "java"))
            if self._needs(trace, "go"):
                run.go = JavaSession(self.go_driver(), run, operation_timeout_s=self.operation_timeout_s)
                run.go.open(self.endpoint.service_url, self.endpoint.token, transactions=self._driver_transactions(trace, "go"))
            for op in trace.ops:
                start = (time.monotonic() - t0) * 1000
                outcome = self._apply(run, op)
                end = (time.monotonic() - t0) * 1000
                event = Event(op, outcome, start, end)
                events.append(event)
                if on_event:
                    on_event(event)
        finally:
            stalls = self._stalls(run, watch, t0)
            for session in (run.java, run.go):
                if session is not None:
                    try:
                        session.close()
                    except Exception:  # noqa: BLE001 - a failing close must not hide the history
                        pass
            try:
                client.close()
            except Exception:  # noqa: BLE001 - a failing close must not hide the history
                pass
            if self.endpoint.controls is not None:
                try:
                    self.endpoint.controls.reset()
                except OSError:
                    pass
            # retired, not deleted at once: a 3.x broker can hang for 30 s on a namespace deleted
            # while a topic's transaction buffer is still recovering (fixtures/namespaces.py)
            reaper_for(self.endpoint.admin_url, self.endpoint.token).retire(namespace, admin)
            admin.close()
        # The broker's own config wins over whatever the trace pinned for the model.
        profile = dict(trace.header.profile)
        config = self.broker_config()
        if config:
            profile["broker_config"] = {**dict(profile.get("broker_config") or {}), **config}
        used = set(run.created_by.values())
        run_client = used.pop() if len(used) == 1 else ("mixed" if used else self.default_client)
        if run_client == "mixed":
            events = [_name_client(ev, run.created_by) for ev in events]
        versions = {"python": client_version(), "java": f"java {self.java_driver_version()}", "go": self._go_version()}
        header = replace_header(trace.header, target=self.name, broker_version=self.broker_version(), client=run_client,
                                client_version=versions.get(run_client) or self.client_versions(), namespace=namespace, profile=profile,
                                timing=self.timing, stalls=tuple(stalls))
        return History(header, tuple(events))

    def _stalls(self, run: _Run, watch: StallWatch, t0: float) -> list[Stall]:
        """The host stalls seen while the trace ran (conformance/host_stalls.py), in ms since ``t0``: the
        harness's watchdog, the Java driver's, the embedded broker's GC pauses and the CPU pressure."""
        end = time.monotonic()
        found = relative(watch.between(t0, end), t0, HARNESS)
        found += relative(cpu_pressure_watch().between(t0, end), t0, CPU_PRESSURE)
        if run.java is not None:
            found += relative(overlapping(run.java.stalls(), t0, end), t0, JAVA_DRIVER)
        gc_dir = getattr(self.endpoint, "gc_log_dir", None)
        if gc_dir:
            if self._gc_log is None or self._gc_log.folder != Path(gc_dir):
                self._gc_log = GcLog(gc_dir)
            wall_minus_mono = time.time() - time.monotonic()
            found += relative(self._gc_log.between(t0 + wall_minus_mono, end + wall_minus_mono), t0 + wall_minus_mono, BROKER_GC)
        return sorted(found, key=lambda s: (s.from_ms, s.seen_by))

    # ------------------------------------------------------------------ ops

    def _apply(self, run: _Run, op: Op) -> Outcome:
        """Run ``op``; an op on a handle whose creation did not succeed is the harness's
        ``UnknownHandle`` (never sent to a client, never a broker verdict)."""
        name = op.handle()
        creating = op.op in ("create_producer", "subscribe", "create_reader")
        if not creating and name is not None and name in run.not_created:
            return Outcome.rejected("UnknownHandle", f"{name} does not exist: its {run.not_created[name]} did not succeed, "
                                    "so the harness cannot run this op (a harness error, not a verdict)")
        outcome = self._apply_op(run, op)
        if creating and name is not None:
            if outcome.status == "ok":
                run.not_created.pop(name, None)
            else:
                run.not_created[name] = f"{op.op} at step {op.step}"
        return outcome

    def _apply_op(self, run: _Run, op: Op) -> Outcome:
        if op.op in JAVA_OPS:
            owner = self._client_of(run, op)
            if JAVA_OPS[op.op]:
                run.owner[op.handle() or ""] = owner
                run.created_by[op.step] = owner
            if op.op == "create_producer" and owner != "java" and "name" not in op.args:
                # PLS-KEYSHARED-001: the name each unnamed C++ or Go partition producer writes, from the broker
                return fx.with_partition_names(run, run.full(op.args["topic"]), lambda: self._apply_client_op(run, op, owner))
            return self._apply_client_op(run, op, owner)
        return self._apply_python_op(run, op.op, op.args)

    def _apply_client_op(self, run: _Run, op: Op, owner: str) -> Outcome:
        """``op`` (one of ``JAVA_OPS``) on a handle of ``owner``'s client (python, java or go)."""
        if owner in DRIVER_CLIENTS:
            session = run.java if owner == "java" else run.go
            assert session is not None
            outcome = session.apply(op)  # a JavaDriverError (GoDriverError) propagates: a harness ERROR
            if op.op in ("close", "unsubscribe") and outcome.status == "ok":
                run.owner.pop(op.handle() or "", None)
            return outcome
        args = {k: v for k, v in op.args.items() if k != "client"}
        refused = client_refusal(op.op, args, _PYTHON_PROFILE)  # what the model refuses a Python handle
        if refused is not None:
            return Outcome.rejected("InvalidArgument", refused[1])
        return self._apply_python_op(run, op.op, args)

    def _apply_python_op(self, run: _Run, name: str, args: dict) -> Outcome:
        """An op through the Python client or the admin API, its errors classified."""
        handler = getattr(self, "_op_" + name)
        try:
            return handler(run, args)
        except fx.ProducerNotCreated as err:
            # the op was never issued: its producer's creation did not complete (PLS-ACCESS-005)
            return Outcome.rejected(_REJECTIONS.get(err.error, "Timeout" if err.error == "Timeout" else "OtherError"), str(err))
        except pulsar.Timeout as err:
            return Outcome.indeterminate(f"client timeout: {err}")
        except ValueError as err:
            return Outcome.rejected("InvalidArgument", str(err))
        except AdminError as err:
            return Outcome.indeterminate(str(err)) if err.status in (0, 500, 503) else Outcome.rejected("OtherError", str(err))
        except _pulsar.PulsarException as err:  # the client's own errors: classified, never a crash
            name = type(err).__name__
            if name in _REJECTIONS:
                return Outcome.rejected(_REJECTIONS[name], str(err))
            if name in _INDETERMINATE:
                return Outcome.indeterminate(f"{name}: {err}")
            return Outcome.rejected("OtherError", f"{name}: {err}")
        # Anything else (a KeyError on a handle, the fault proxy's OSError, a bug here) is the
        # harness failing: it propagates, the case is ERROR (exit 4), and no rule is charged.

    def _op_create_topic(self, run: _Run, a: dict) -> Outcome:
        partitions = a.get("partitions", 0)
        if partitions:
            run.admin.create_partitioned_topic(run.full(a["topic"]), partitions)
            run.partitioned.add(run.full(a["topic"]))
        else:
            run.admin.create_topic(run.full(a["topic"]))
        return Outcome.ok()

    def _op_create_producer(self, run: _Run, a: dict) -> Outcome:
        kwargs: dict[str, Any] = {"batching_enabled": a.get("batching", False), "chunking_enabled": a.get("chunking", False)}
        if "name" in a:
            kwargs["producer_name"] = a["name"]
        if "initial_sequence_id" in a:
            kwargs["initial_sequence_id"] = a["initial_sequence_id"]
        if "access_mode" in a:
            kwargs["access_mode"] = _ACCESS[a["access_mode"]]
        if "send_timeout_ms" in a:
            kwargs["send_timeout_millis"] = a["send_timeout_ms"]
        if "router" in a:
            # PLS-ROUTE-001: a custom router reproducing a client's hashing scheme exactly; keyless
            # messages round robin from partition 0 (this router's own choice).
            kwargs["message_routing_mode"] = pulsar.PartitionsRoutingMode.CustomPartition
            kwargs["message_router"] = _SchemeRouter(a["router"].get("hashing", "murmur3_32"), a["router"].get("client", "java"))
        elif a.get("routing_mode") == "SinglePartition":
            kwargs["message_routing_mode"] = pulsar.PartitionsRoutingMode.UseSinglePartition
        kwargs.update(fx.producer_kwargs(pulsar, a))
        if "schema" in a:
            kwargs["schema"] = fx.python_schema(a["schema"])
        producer, pending = fx.create_producer(run, lambda: run.client.create_producer(run.full(a["topic"]), **kwargs), a)
        run.producers[a["producer"]] = producer
        if pending:
            # PLS-ACCESS-005: still queued; the next op on this handle waits for it.
            return Outcome.ok({"pending": True})
        value = {"producer_name": producer.producer_name(), "last_sequence_id": producer.last_sequence_id()}
        if "wait_ms" in a:
            value["pending"] = False
        return Outcome.ok(value)

    def _op_flush(self, run: _Run, a: dict) -> Outcome:
        producer = fx.resolve_producer(run, a["producer"], self.operation_timeout_s)
        return fx.flush(run, a["producer"], producer, self.operation_timeout_s, _id_tuple)

    def _op_set_policy(self, run: _Run, a: dict) -> Outcome:
        return fx.set_policy(run, a)

    def _op_get_schemas(self, run: _Run, a: dict) -> Outcome:
        return fx.get_schemas(run, run.full(a["topic"]))

    def _op_delete_schema(self, run: _Run, a: dict) -> Outcome:
        return fx.delete_schema(run, run.full(a["topic"]), bool(a.get("force", False)))

    def _op_compact(self, run: _Run, a: dict) -> Outcome:
        return fx.compact(run, run.full(a["topic"]))

    def _op_unload_topic(self, run: _Run, a: dict) -> Outcome:
        return fx.unload_topic(run, run.full(a["topic"]))

    def _op_create_subscription(self, run: _Run, a: dict) -> Outcome:
        try:
            run.admin.create_subscription(run.full(a["topic"]), a["subscription"], properties=a.get("properties"),
                                          earliest=a.get("initial_position", "Latest") == "Earliest")
        except AdminError as err:
            if err.status == 409:  # PLS-SUB-009: "Subscription already exists for topic"
                return Outcome.rejected("Conflict", str(err))
            raise
        return Outcome.ok()

    def _op_expire_messages(self, run: _Run, a: dict) -> Outcome:
        return fx.expire_messages(run, run.full(a["topic"]), a["subscription"], a["seconds"])

    def _op_delete_topic(self, run: _Run, a: dict) -> Outcome:
        topic = run.full(a["topic"])
        outcome = fx.delete_topic(run, topic, bool(a.get("force", False)), _is_partitioned(run.admin, topic))
        if outcome.status == "ok":
            run.partitioned.discard(topic)  # made again, it is whatever its create_topic (or a send) makes it
        return outcome

    def _op_reset_cursor(self, run: _Run, a: dict) -> Outcome:
        return fx.reset_cursor(run, run.full(a["topic"]), a["subscription"], a)

    def _op_skip(self, run: _Run, a: dict) -> Outcome:
        return fx.skip(run, run.full(a["topic"]), a["subscription"], a["count"])

    def _op_clear_backlog(self, run: _Run, a: dict) -> Outcome:
        return fx.clear_backlog(run, run.full(a["topic"]), a.get("subscription"))

    def _op_send(self, run: _Run, a: dict) -> Outcome:
        producer = fx.resolve_producer(run, a["producer"], self.operation_timeout_s)
        label = a["payload"]
        data = fx.payload_bytes(a, PAD)
        kwargs: dict[str, Any] = {}
        for arg, kw in (("properties", "properties"), ("key", "partition_key"), ("ordering_key", "ordering_key"), ("event_time", "event_timestamp"), ("sequence_id", "sequence_id")):
            if arg in a:
                kwargs[kw] = a[arg]
        if "deliver_after_ms" in a:
            kwargs["deliver_after"] = timedelta(milliseconds=a["deliver_after_ms"])
        if "deliver_at_ms" in a:
            kwargs["deliver_at"] = int(run.epoch_ms_at_start + a["deliver_at_ms"])
        before = int(time.time() * 1000)
        if a.get("tombstone"):
            run.tombstones[label] = producer.topic()
            run.tombstone_marks[label] = fx.tombstone_mark(a.get("key"), a.get("properties"), a.get("event_time"))
        if a.get("async"):
            run.publish_times.setdefault(label, before)
            return fx.send_async(run, a["producer"], producer, label, data, kwargs)
        msg_id = producer.send(fx.content_for(producer, data), **kwargs)
        run.sent[label] = msg_id
        run.publish_times.setdefault(label, before)
        return Outcome.ok({"message_id": list(_id_tuple(msg_id)), "sequence_id": producer.last_sequence_id(), "id_text": str(msg_id)})

    def _op_subscribe(self, run: _Run, a: dict) -> Outcome:
        if "topics_pattern" in a:
            # The broker reads the namespace out of the pattern's text, so it is not escaped
            # (namespace names are [a-z0-9-], nothing a regex treats specially outside a class).
            # The trace's pattern is over short names: grouped, so "t|u" is (t or u) in the
            # namespace, not "persistent://ns/t" or a bare "u" (found by issue 16's live campaign).
            topic: Any = re.compile(f"persistent://{run.namespace}/(?:{a['topics_pattern']})")
        else:
            topic = [run.full(t) for t in a["topics"]] if "topics" in a else run.full(a["topic"])
        sub_type = a.get("type", "Exclusive")
        kwargs: dict[str, Any] = {
            "consumer_type": _SUB_TYPES[sub_type],
            "initial_position": _POSITIONS[a.get("initial_position", "Latest")],
        }
        for arg, kw in (
            ("consumer_name", "consumer_name"),
            ("receiver_queue_size", "receiver_queue_size"),
            ("nack_delay_ms", "negative_ack_redelivery_delay_ms"),
            ("start_message_id_inclusive", "start_message_id_inclusive"),
            ("batch_index_ack", "batch_index_ack_enabled"),
            ("read_compacted", "is_read_compacted"),
        ):
            if arg in a:
                kwargs[kw] = a[arg]
        if "ack_timeout_ms" in a:
            kwargs["unacked_messages_timeout_ms"] = a["ack_timeout_ms"]
        if "key_shared" in a and sub_type == "Key_Shared":
            ks = a["key_shared"]
            mode = {"AutoSplit": pulsar.KeySharedMode.AutoSplit, "Sticky": pulsar.KeySharedMode.Sticky}[ks.get("mode", "AutoSplit")]
            ranges = [tuple(r) for r in ks["ranges"]] if ks.get("ranges") else None
            kwargs["key_shared_policy"] = pulsar.ConsumerKeySharedPolicy(
                mode, allow_out_of_order_delivery=bool(ks.get("allow_out_of_order", False)), sticky_ranges=ranges)
        if "dead_letter" in a:
            dl = a["dead_letter"]
            kwargs["dead_letter_policy"] = pulsar.ConsumerDeadLetterPolicy(
                max_redeliver_count=dl.get("max_redeliver_count"),
                dead_letter_topic=run.full(dl["topic"]) if dl.get("topic") else None,
                initial_subscription_name=dl.get("initial_subscription"),
            )
        if "schema" in a:
            kwargs["schema"] = fx.python_schema(a["schema"])
        consumer = run.client.subscribe(topic, a["subscription"], **kwargs)
        run.consumers[a["consumer"]] = _Consumer(consumer, sub_type, topic=topic if isinstance(topic, str) else None,
                                                 subscription=a["subscription"],
                                                 prefetches=a.get("receiver_queue_size", 1000) != 0)
        return Outcome.ok()

    def _observe(self, run: _Run, msg: Any, received: Any = ()) -> dict[str, Any]:
        data = (msg.data() or b"").decode("utf-8", errors="replace")
        label = data.split(PAD, 1)[0]
        if not label:
            # a tombstone carries no label: name it by the id its send returned
            label = run.label_by_id_tuple(_id_tuple(msg.message_id()), received, msg.topic_name(),
                                          fx.tombstone_mark(msg.partition_key(), msg.properties(), msg.event_timestamp())) or label
        fx.note_publish_time(run, label, msg.publish_timestamp())
        version = fx.schema_version_of(msg.schema_version())
        return {
            **({"schema_version": version} if version is not None else {}),
            "payload": label,
            "message_id": list(_id_tuple(msg.message_id())),
            "topic": run.short(msg.topic_name()),
            "key": msg.partition_key() or None,
            "ordering_key": (msg.ordering_key() or None) if hasattr(msg, "ordering_key") else None,
            "properties": dict(msg.properties()),
            "event_time": msg.event_timestamp(),
            "publish_time": msg.publish_timestamp(),
            "redelivery_count": msg.redelivery_count(),
            "producer_name": msg.producer_name() if hasattr(msg, "producer_name") else None,
        }

    def _op_receive(self, run: _Run, a: dict) -> Outcome:
        holder = run.consumers[a["consumer"]]
        msg = _next_or_nothing(holder.consumer, holder.consumer.receive, a["timeout_ms"])
        return msg if isinstance(msg, Outcome) else Outcome.ok({"message": self._take(run, holder, msg)})

    def _take(self, run: _Run, holder: _Consumer, msg: Any) -> dict[str, Any]:
        """What ``holder`` received, observed, and kept under its label for a later ack or nack of it."""
        observed = self._observe(run, msg, holder.received)
        holder.received[observed["payload"]] = msg
        return observed

    def _op_send_many(self, run: _Run, a: dict) -> Outcome:
        for one in bulk_send_args(a):
            outcome = self._op_send(run, one)
            if outcome.status != "ok":  # judged as that one send (conformance.trace.expand_bulk)
                return outcome
        return Outcome.ok()

    def _op_consume(self, run: _Run, a: dict) -> Outcome:
        """Receive until ``max`` came or nothing came for ``idle_ms``, acking each as it comes (a listener's loop)."""
        holder = run.consumers[a["consumer"]]
        start = time.monotonic()
        messages: list[dict[str, Any]] = []
        at: list[float] = []
        ended = "max"
        while len(messages) < a["max"]:
            msg = _next_or_nothing(holder.consumer, holder.consumer.receive, a["idle_ms"])
            if isinstance(msg, Outcome):
                ended = "idle" if msg.status == "ok" else "disconnected"
                break
            at.append(round((time.monotonic() - start) * 1000.0, 3))
            messages.append(self._take(run, holder, msg))
            if a.get("ack", True):
                holder.consumer.acknowledge(msg)
        return Outcome.ok({"messages": messages, "at_ms": at, "ended": ended})

    def _message_ref(self, run: _Run, holder: _Consumer, label: str) -> Any:
        if label in holder.received:
            return holder.received[label]
        found = run.sent_message_id(label)
        if found is not None:
            return found
        raise KeyError(label)

    def _with_message(self, run: _Run, a: dict, action: Callable[[Any, Any], None]) -> Outcome:
        holder = run.consumers[a["consumer"]]
        try:
            ref = self._message_ref(run, holder, a["message"])
        except KeyError:
            return Outcome.rejected("OtherError", f"message {a['message']!r} was neither sent nor received in this run")
        action(holder.consumer, ref)
        return Outcome.ok()

    def _op_ack(self, run: _Run, a: dict) -> Outcome:
        return self._with_message(run, a, lambda c, m: c.acknowledge(m))

    def _op_ack_cumulative(self, run: _Run, a: dict) -> Outcome:
        return self._with_message(run, a, lambda c, m: c.acknowledge_cumulative(m))

    def _op_nack(self, run: _Run, a: dict) -> Outcome:
        return self._with_message(run, a, lambda c, m: c.negative_acknowledge(m))

    def _op_reconsume_later(self, run: _Run, a: dict) -> Outcome:
        raise ValueError("the Python client (C++ core) has no reconsumeLater; reconsume_later needs the Java client")

    def _no_transactions(self, run: _Run, a: dict) -> Outcome:
        # PLS-TXN-006: pulsar-client 3.x has transaction errors but no way to begin a transaction
        raise ValueError("the Python client (C++ core) has no transactions; new_txn, commit_txn and abort_txn need the Java client")

    _op_new_txn = _op_commit_txn = _op_abort_txn = _no_transactions

    def _op_redeliver_unacked(self, run: _Run, a: dict) -> Outcome:
        run.consumers[a["consumer"]].consumer.redeliver_unacknowledged_messages()
        return Outcome.ok()

    def _op_seek(self, run: _Run, a: dict) -> Outcome:
        consumer = run.consumers[a["consumer"]].consumer
        if "position" in a:
            target: Any = pulsar.MessageId.earliest if a["position"] == "earliest" else pulsar.MessageId.latest
        elif "message" in a:
            label = a["message"]
            target = run.sent_message_id(label)
            if target is None:
                return Outcome.rejected("OtherError", f"message {label!r} was not sent in this run")
        else:
            label = a["publish_time_of"]
            if label not in run.publish_times:
                return Outcome.rejected("OtherError", f"no publish time known for {label!r}")
            target = int(run.publish_times[label])
        return fx.seek(consumer, target, 2 * self.operation_timeout_s)

    def _op_close(self, run: _Run, a: dict) -> Outcome:
        name = a["handle"]
        if name in run.producers:
            fx.resolve_producer(run, name, self.operation_timeout_s)
        for table in (run.producers, run.readers):
            if name in table:
                table.pop(name).close()
                return Outcome.ok()
        run.consumers.pop(name).consumer.close()
        return Outcome.ok()

    def _op_unsubscribe(self, run: _Run, a: dict) -> Outcome:
        holder = run.consumers[a["consumer"]]
        holder.consumer.unsubscribe()
        run.consumers.pop(a["consumer"])
        try:
            holder.consumer.close()
        except Exception:  # noqa: BLE001 - already closed by unsubscribe
            pass
        return Outcome.ok()

    def _op_create_reader(self, run: _Run, a: dict) -> Outcome:
        start = a["start"]
        if start == "earliest":
            start_id = pulsar.MessageId.earliest
        elif start == "latest":
            start_id = pulsar.MessageId.latest
        else:
            label = start["message"]
            start_id = run.sent_message_id(label)
            if start_id is None:
                return Outcome.rejected("OtherError", f"message {label!r} was not sent in this run")
        extra = {"is_read_compacted": True} if a.get("read_compacted") else {}
        reader = run.client.create_reader(run.full(a["topic"]), start_id, start_message_id_inclusive=a.get("inclusive", False), **extra)
        run.readers[a["reader"]] = reader
        return Outcome.ok()

    def _op_read_next(self, run: _Run, a: dict) -> Outcome:
        reader = run.readers[a["reader"]]
        msg = _next_or_nothing(reader, reader.read_next, a["timeout_ms"])
        return msg if isinstance(msg, Outcome) else Outcome.ok({"message": self._observe(run, msg)})

    # ------------------------------------------------------------------ faults (fixtures/faults.py)

    def _op_cut_connections(self, run: _Run, a: dict) -> Outcome:
        before = self._consumer_sessions(run)
        self.endpoint.controls.cut_connections()
        return self._reconnected(run, RECONNECT_AFTER_CUT_S, before)

    def _op_restart_broker(self, run: _Run, a: dict) -> Outcome:
        before = self._consumer_sessions(run)
        settle_restarts = self.endpoint.controls.restart_broker(a.get("graceful", True))
        outcome = self._reconnected(run, RECONNECT_AFTER_RESTART_S, before)
        if settle_restarts and outcome.status == "ok":
            # the crash was followed by graceful restarts to end the bookie's lock loop (EmbeddedBroker.restart)
            return Outcome.ok({**(outcome.value or {}), "settle_restarts": settle_restarts})
        return outcome

    def _op_set_latency(self, run: _Run, a: dict) -> Outcome:
        self.endpoint.controls.set_latency(a["ms"])
        return Outcome.ok()

    def _op_stall_connections(self, run: _Run, a: dict) -> Outcome:
        self.endpoint.controls.stall(a["ms"])
        return Outcome.ok()

    def _reconnected(self, run: _Run, within_s: float, before: dict[str, set[tuple]]) -> Outcome:
        """Wait until every producer, consumer and reader of the run is back: ok with how long that
        took; indeterminate naming the ones that are not within ``within_s``.

        "Back" is more than ``is_connected()``: the C++ client (since 4.0.1, apache/pulsar-client-cpp
        #533; pulsar-client 3.13 bundles 4.2.0) reports a consumer connected as soon as its new
        connection is opened (``ConsumerImpl::connectionOpened`` sets the connection; the handler's
        state stays Ready throughout), while a durable consumer's receiver queue keeps the
        messages it had prefetched before the fault until the broker answers the new subscribe
        (``handleCreateConsumer`` clears it; ``clearReceiveQueue`` leaves a durable queue alone). A
        receive in that window returns a pre-fault message, ahead of the redelivery (seen in CI
        under load: m3 before the redelivered m2 after a crash). So a consumer on one topic is back
        once the broker lists a new session of it (``_consumer_sessions``) that has asked for
        messages (the client's flow permits follow the clearing)."""
        t0 = time.monotonic()
        handles = {**run.producers, **{k: c.consumer for k, c in run.consumers.items()}, **run.readers}
        while True:
            waiting = {name for name, h in handles.items() if not _connected(h)}
            if not waiting:
                after = self._consumer_sessions(run, flowing=True)
                waiting = {name for name, sessions in after.items() if not sessions - before.get(name, set())}
            if not waiting:
                return Outcome.ok({"reconnected_ms": round((time.monotonic() - t0) * 1000, 1)})
            if time.monotonic() - t0 >= within_s:
                return Outcome.indeterminate(f"not reconnected within {within_s:g} s: {', '.join(sorted(waiting))}")
            time.sleep(0.05)

    def _consumer_sessions(self, run: _Run, *, flowing: bool = False) -> dict[str, set[tuple]]:
        """For each consumer of one non-partitioned topic: the sessions the broker lists for it
        on its subscription (``consumerName``, ``address``, ``connectedSince`` of the topic's stats),
        with ``flowing`` only those that have asked for messages (permits, or messages sent out) or
        whose client prefetches nothing. Consumers of several topics or partitions are left out: the
        model does not follow them across a reconnect (``reference_model.faults.unfollowable``)."""
        out: dict[str, set[tuple]] = {}
        stats_by_topic: dict[str, dict | None] = {}
        for name, holder in run.consumers.items():
            if holder.topic is None:
                continue
            if holder.topic not in stats_by_topic:
                try:
                    partitioned = _is_partitioned(run.admin, holder.topic)
                    stats_by_topic[holder.topic] = None if partitioned else run.admin.topic_stats(holder.topic)
                except AdminError:
                    stats_by_topic[holder.topic] = {}  # the topic is loading again: nobody listed yet
            if stats_by_topic[holder.topic] is None:
                continue
            sub = stats_by_topic[holder.topic].get("subscriptions", {}).get(holder.subscription) or {}
            own = holder.consumer.consumer_name()
            out[name] = {(c.get("consumerName"), c.get("address"), c.get("connectedSince")) for c in sub.get("consumers") or []
                         if c.get("consumerName") == own and (not flowing or not holder.prefetches
                                                               or int(c.get("availablePermits", 0)) > 0 or int(c.get("msgOutCounter", 0)) > 0)}
        return out

    def _op_advance_time(self, run: _Run, a: dict) -> Outcome:
        time.sleep(a["ms"] / 1000.0)
        return Outcome.ok()

    def _op_stats(self, run: _Run, a: dict) -> Outcome:
        topic = run.full(a["topic"])
        partitioned = _is_partitioned(run.admin, topic)
        try:
            stats = run.admin.topic_stats(topic) if not partitioned else run.admin.partitioned_stats(topic)
        except AdminError as err:
            if err.status != 404:
                raise
            # no topic (never made, or deleted: PLS-TOPIC-005): no subscription on it either
            return Outcome.rejected("SubscriptionNotFound", f"no subscription {a['subscription']!r} on {a['topic']}: {err}")
        sub = stats.get("subscriptions", {}).get(a["subscription"])
        if sub is None:
            return Outcome.rejected("SubscriptionNotFound", f"no subscription {a['subscription']!r} on {a['topic']}")
        value: dict[str, Any] = {"backlog": int(sub.get("msgBacklog", 0))}
        if sub.get("type") == "Key_Shared" and not partitioned:
            # PLS-KEYSHARED-003/004/005: each connected consumer's reported hash ranges. Partitioned
            # topics are not reported: each partition has its own selector (not judged).
            value["consumers"] = _key_hash_ranges(run, topic, a["subscription"], sub.get("consumers") or [])
        if sub.get("type") in ("Shared", "Key_Shared") and not partitioned:
            # PLS-UNACKED-001/002/003: each consumer's pending count and whether the limit blocks it
            value["consumer_unacked"] = [
                {"consumer_name": c.get("consumerName"), "unacked_messages": int(c.get("unackedMessages", 0)),
                 "blocked": bool(c.get("blockedConsumerOnUnackedMsgs", False))} for c in sub.get("consumers") or []]
        return Outcome.ok(value)


class _SchemeRouter:
    """A ``message_router`` that routes keyed messages as the Java or C++ client does with a given
    hashing scheme (``routing.partition_for_key``), and keyless ones round robin from 0."""

    def __init__(self, hashing: str, client: str):
        self.hashing = hashing
        self.client = client
        self.keyless = 0

    def __call__(self, msg: Any, num_partitions: int) -> int:
        key = msg.partition_key()
        if key:
            return routing.partition_for_key(key, num_partitions, hashing_scheme=self.hashing, client=self.client)
        p = self.keyless % num_partitions
        self.keyless += 1
        return p


def _name_client(event: Event, created_by: dict[int, str]) -> Event:
    """The event with its handle-creating op naming the client that ran it (mixed histories)."""
    op = event.op
    client = created_by.get(op.step)
    if client is None or "client" in op.args:
        return event
    return Event(Op(op.step, op.op, {**op.args, "client": client}), event.outcome, event.t_start_ms, event.t_end_ms)


def _next_or_nothing(handle: Any, take: Callable[..., Any], timeout_ms: int) -> Any:
    """The message ``take`` (a consumer's receive, a reader's read_next) gives within ``timeout_ms``, else what waiting
    showed of ``handle`` (``_nothing_or_unknown``)."""
    connected_before = handle.is_connected()
    try:
        return take(timeout_millis=max(1, timeout_ms))
    except pulsar.Timeout:
        return _nothing_or_unknown(handle, connected_before)


def _nothing_or_unknown(handle: Any, connected_before: bool) -> Outcome:
    """An empty receive proves nothing was deliverable only if the consumer stayed connected."""
    if connected_before and handle.is_connected():
        return Outcome.ok({"message": None})
    return Outcome.indeterminate(f"{DISCONNECTED_NOTHING}: a message may have been withheld by the outage, not by the "
                                 "broker's rules")


_RANGE_TEXT = re.compile(r"\[\s*(\d+)\s*,\s*(\d+)\s*\]")


def _key_hash_ranges(run: _Run, topic: str, subscription: str, reported: list[dict]) -> list[dict[str, Any]]:
    """The ``consumers`` of a Key_Shared stats value: per consumer the stats list, its trace handle
    (None when it cannot be told: several connected handles share its name, or a Java handle), its
    ``consumerName`` and its ranges.

    The broker fills them in ``Consumer.getStats`` (apache/pulsar ``pulsar-broker/.../service/Consumer.java``
    into ``ConsumerStatsImpl.java``): ``keyHashRangeArrays`` (4.x, ``[[start, end], ...]``) or the
    ``keyHashRanges`` strings (``"[start, end]"``, every release). A handle is found by the name its
    Python consumer reports (``consumer_name()``: the trace's ``consumer_name``, or the one the client drew).
    """
    names: dict[str, list[str]] = {}
    for handle, holder in run.consumers.items():
        c = holder.consumer
        try:
            if holder.type != "Key_Shared" or c.subscription_name() != subscription or c.topic() != topic:
                continue
            names.setdefault(c.consumer_name(), []).append(handle)
        except Exception:  # noqa: BLE001 - a multi-topic consumer or a closed one: not attributable
            continue
    out = []
    for entry in reported:
        if entry.get("keyHashRangeArrays") is not None:
            ranges = [[int(r[0]), int(r[1])] for r in entry["keyHashRangeArrays"]]
        else:
            ranges = [[int(x) for x in m.groups()] for r in entry.get("keyHashRanges") or []
                      if (m := _RANGE_TEXT.match(str(r))) is not None]
        name = entry.get("consumerName")
        handles = names.get(name, [])
        out.append({"consumer": handles[0] if len(handles) == 1 else None, "consumer_name": name,
                    "key_hash_ranges": sorted(ranges)})
    return out


def _is_partitioned(admin: AdminClient, topic: str) -> bool:
    return admin.partitions_of(topic) != [topic]


def _id_tuple(msg_id: Any) -> tuple[int, int, int, int]:
    return (msg_id.ledger_id(), msg_id.entry_id(), msg_id.partition(), msg_id.batch_index())
