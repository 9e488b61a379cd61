"""The model target: runs a trace against the reference model, in virtual time, instantly.

Every op happens at the current virtual instant and takes no time; ``receive``/``read_next``
with nothing deliverable advance the clock up to their timeout or to the instant a redelivery
becomes due (whichever is first); ``advance_time`` advances it. Where Pulsar is
nondeterministic the model makes its canonical choice (``reference_model.dispatch.base``), which
is always one of the outcomes the checker allows.

An op the model does not describe (see "Not modelled" in ``reference_model``) gets an
``indeterminate`` outcome whose detail starts with ``not modelled:``.
"""

from __future__ import annotations

from typing import Any

from conformance.checker import relaxed_gc
from conformance.trace import Event, History, Outcome, Trace, TraceHeader, bulk_send_args
from reference_model.broker import Broker, split_profile
from reference_model.dispatch.key_shared import KeySharedSettings
from reference_model.profiles import Profile, profile_for, with_broker_config
from reference_model.rejections import NotModelledError, Rejected
from reference_model.timing import Span
from reference_model.unacked import SOLE_UNNAMED

NOT_MODELLED = "not modelled: "


class ModelTarget:
    """``ModelTarget(profile=None, client=None).run(trace) -> History`` (header target "model").

    ``profile`` fixes every parameter; otherwise each trace gets ``client``'s profile (python by
    default; "java", or "mixed" where each handle names its client) with the trace header's
    overrides applied. ``broker_version`` (a release such as "3.0.7", or a line) picks the model
    line of that release and its Key_Shared selectors; None: the default line."""

    name = "model"

    def __init__(self, profile: Profile | None = None, *, client: str | None = None, broker_version: str | None = None):
        self.profile = profile
        self.client = client
        self.broker_version = broker_version

    def describe(self) -> dict[str, Any]:
        profile = self.profile or profile_for(self.broker_version, self.client)
        return {"target": self.name, "broker_version": profile.broker, "client": profile.client,
                "client_version": "reference-model"}

    def run(self, trace: Trace) -> History:
        overrides, broker_config = split_profile(trace.header.profile)
        profile = self.profile or with_broker_config(profile_for(self.broker_version, self.client, overrides or None),
                                                     broker_config)
        selectors = self.broker_version if self.profile is None and self.broker_version else profile.broker
        broker = Broker(profile, key_shared=KeySharedSettings.for_broker(selectors, broker_config))
        with relaxed_gc():
            events = self._run_ops(broker, trace)
        header = TraceHeader(
            trace_id=trace.header.trace_id, title=trace.header.title, rules=trace.header.rules,
            profile=trace.header.profile, target=self.name, broker_version=selectors,
            client=profile.client, client_version="reference-model")
        return History(header, tuple(events))

    def _run_ops(self, broker: Broker, trace: Trace) -> list[Event]:
        now = 0.0
        events: list[Event] = []
        unmodelled: dict[str, str] = {}  # handle -> why the model cannot follow it
        for op in trace.ops:
            start = now
            handle = op.handle()
            if handle in unmodelled and op.op in ("close", "unsubscribe"):
                # it still leaves its subscription (who is connected matters to the others); the
                # checker follows it the same way (Checker._follow_quietly)
                del unmodelled[handle]
            elif handle in unmodelled and op.op not in ("create_producer", "subscribe", "create_reader"):
                events.append(Event(op, Outcome.indeterminate(NOT_MODELLED + unmodelled[handle]), start, now))
                continue
            try:
                outcome, now = self._run_op(broker, op.op, op.args, now)
            except NotModelledError as err:
                outcome = Outcome.indeterminate(NOT_MODELLED + str(err))
                if handle is not None:
                    unmodelled[handle] = str(err)
            events.append(Event(op, outcome, start, now))
        return events

    @staticmethod
    def _consume(broker: Broker, args: dict[str, Any], start: float) -> tuple[Outcome, float]:
        """Receive until ``max`` came or nothing came for ``idle_ms``, acking each (conformance.trace.expand_bulk)."""
        handle, now = args["consumer"], start
        messages: list[dict[str, Any]] = []
        at: list[float] = []
        while len(messages) < int(args["max"]):
            got = broker.receive(handle, now, float(args["idle_ms"]))
            if isinstance(got, Rejected):
                if not messages:
                    return Outcome.rejected(got.error, got.detail), now
                return Outcome.ok({"messages": messages, "at_ms": at, "ended": "idle"}), now
            message, now = got
            if message is None:
                return Outcome.ok({"messages": messages, "at_ms": at, "ended": "idle"}), now
            messages.append(message)
            at.append(now - start)
            if args.get("ack", True):
                broker.apply("ack", {"consumer": handle, "message": message["payload"]}, Span.at(now))
        return Outcome.ok({"messages": messages, "at_ms": at, "ended": "max"}), now

    @staticmethod
    def _run_op(broker: Broker, op: str, args: dict[str, Any], now: float) -> tuple[Outcome, float]:
        if op in ("receive", "read_next"):
            handle = args.get("consumer") or args.get("reader")
            got = broker.receive(handle, now, float(args["timeout_ms"]))
            if isinstance(got, Rejected):
                return Outcome.rejected(got.error, got.detail), now
            message, t = got
            return Outcome.ok({"message": message}), t
        if op == "advance_time":
            return Outcome.ok({}), now + float(args["ms"])
        if op == "send_many":
            for one in bulk_send_args(args):
                sent = broker.apply("send", one, Span.at(now))
                if isinstance(sent, Rejected):  # judged as that one refused send (conformance.trace.expand_bulk)
                    return Outcome.rejected(sent.error, sent.detail), now
            return Outcome.ok({}), now
        if op == "consume":
            return ModelTarget._consume(broker, args, now)
        if op == "stats":
            got = broker.backlog(args["topic"], args["subscription"], Span.at(now))
            if isinstance(got, Rejected):
                return Outcome.rejected(got.error, got.detail), now
            value: dict[str, Any] = {"backlog": got[0]}
            ranges = broker.key_hash_ranges(args["topic"], args["subscription"], Span.at(now))
            if ranges is not None:  # a Key_Shared subscription: each consumer's reported hash ranges
                value["consumers"] = [{"consumer": h, "consumer_name": ranges.names[h],
                                       "key_hash_ranges": [list(r) for r in rs]} for h, rs in ranges.ranges.items()]
            counts = broker.consumer_unacked(args["topic"], args["subscription"], Span.at(now))
            # (a consumer whose name is its client's to choose has none the model could report)
            named = {name: rng for name, rng in (counts or {}).items() if name != SOLE_UNNAMED}
            if named:  # PLS-UNACKED-002/003: the model's own count, the low end of each range
                value["consumer_unacked"] = [{"consumer_name": name, "unacked_messages": rng.low,
                                              "blocked": False} for name, rng in named.items()]
            return Outcome.ok(value), now
        value = broker.apply(op, args, Span.at(now))
        if isinstance(value, Rejected):
            return Outcome.rejected(value.error, value.detail), now
        return Outcome.ok(value), now
