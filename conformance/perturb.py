"""Random lies: seeded, generic perturbations of any observed value of a recorded history.

The aimed operators of ``conformance.mutation`` each know the rule they break, so they grade the
checker on lies it was built against. This module grades it on lies it was *not* tuned for: it
picks an observed value of a real history at random (a delivery, a time, a count, an id, a
property, a key, a payload label, a schema version, an error, a stats figure), changes it, and asks
``conformance.checker.check`` whether the history still passes. The idea is Jepsen's: a checker is
only as good as the histories it rejects, so feed it histories that differ from a true one in one
observation (Kingsbury and Alvaro, "Elle: Inferring Isolation Anomalies from Experimental
Observations", VLDB 2020, section 6, which validates Elle on histories with injected anomalies);
here the injections are random, as asked in issue 45, item 2 ("Random lies, not only aimed ones").

Kinds (``KINDS``; each draws its site and its change from one ``random.Random``):

- ``drop_delivery``      a receive / read_next that got a message gets nothing (presence);
- ``duplicate_delivery`` an empty receive gets a copy of a message its subscription had before;
- ``swap_deliveries``    two deliveries of one consumer or reader trade messages (order);
- ``shift_time``         an event and every later one move by a fraction of the step's duration
                         (``tail``), or one event ends sooner or later (``end``; later events move
                         with it when it ends later, so the history stays in time order);
- ``redelivery_count``   a received message's redelivery count +/- 1;
- ``stats_count``        a stats backlog (msgBacklog) or a consumer's unackedMessages +/- 1;
- ``stats_figure``       a stats backlog / unackedMessages set to another figure, or a reported
                         Key_Shared hash range moved;
- ``reconnect_figure``   a fault op's reconnect figure (``reconnected_ms``, ``settle_restarts``) +/- 1;
- ``sequence_id``        a producer's reported last_sequence_id, or a send's sequence id, +/- 1;
- ``message_id``         a received, sent or flushed message id: one of ledger / entry / partition /
                         batch index changed, or the whole id made another message's;
- ``property_value``     a received message's property changed, added or removed;
- ``key``                a received message's partition key or ordering key changed;
- ``payload_label``      a received message's payload label made another message's, or a fresh one;
- ``schema_version``     a received message's schema version +/- 1 (or none <-> 0), or a version
                         the admin lists (get_schemas);
- ``error_kind``         a rejected outcome's error made another error name;
- ``outcome_status``     an ok outcome made rejected (with an error name), or a rejected one ok;
- ``message_field``      a received message's event time, publish time or producer name.

Every perturbation is one line (``Perturbation.description``: kind, step, op, field, old -> new),
seeded (the same seed and history give the same lies) and yields a valid history: the perturbed
events go through ``trace.dumps`` and ``trace.parse`` and the parsed history is what is judged.

Judging (``judge``): a lie is *caught* when some rule FAILs on the perturbed history that did not
FAIL on the original (``check`` then makes the exit non-zero). A catch is *covering* when a rule
that FAILed is one whose detector speaks about the perturbed step's op and field
(``covering_rules``: the detector's steps, from ``conformance.detector_registry``, include the op
and its title or "Violated if" sentence names the field), else *caught elsewhere*.

Classifying (``classify``): not every random change is a lie. Each perturbation is classified,
from the rule texts and the history alone (never from the checker's verdicts), as

- ``allowed``: a correct broker and client could have produced the perturbed history under the
  registered rules (a delivery of a plain message arriving later where no rule fixes its time, a
  Shared consumer's two first deliveries in the other order, ...), with the reason;
- ``missed`` (when no rule FAILs): the perturbed history contradicts a registered rule's text,
  named, with the reason (an acked message delivered again: PLS-ACK-001; a first delivery with
  redelivery count 1: PLS-ACK-005; ...);
- ``unclassified``: the reasoning here cannot tell (a timer in flight across a shifted gap, a
  redelivery whose count depends on a client's queue, ...), with what stopped it. A ``missed``
  whose rule the original already FAILs is ``unclassified`` too ("masked"): no new FAIL can show it.

The premise, as in Jepsen and in ``conformance.mutation``: the original history is true (recorded
from a real broker, or made by the model); a value the rules fix given the rest of the history is
therefore fixed at its recorded value, and any change of it is a lie.

Choices:
- Messages are matched by (topic without its ``-partition-N`` suffix, payload label).
- Time slack is the history's own timing bands (``conformance.timing.bands_from_header``, else the
  target's defaults): a receive that got nothing is evidence only when it waited longer than the
  dispatch band, and an ack counts from ack-grouping plus the band, as the rules' detectors read them.
- A time shift moves by f x max(the step's elapsed time since the previous event ended, 100 ms),
  f in ``SHIFT_FRACTIONS``: the floor makes a step the model ran in no virtual time move too.
- Redelivery windows come from ``conformance.mutation._timed_deliveries`` (nack, ack-timeout and
  delayed-delivery windows computed from ``reference_model.spec``), the same ones the aimed timing
  operators use; a delivery inside its window in the original and outside it after a shift is missed.
- Lies are drawn kind first (uniformly among the kinds the history has a site for), then site, then
  change, so rare kinds are exercised; a draw that changes nothing or repeats a lie already made for
  that history is drawn again (at most ``MAX_DRAWS_PER_LIE`` times).

Not modelled: perturbations of op arguments (the trace is what was asked, not what was observed);
perturbations that add or remove ops; classifying lies on dead-letter and retry copies beyond their
copied fields; timing of redeliveries after redeliver_unacked, a close or a fault (their rules state a
band but not a window these classifiers compute): such shifts are ``unclassified``.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping

from conformance import mutation
from conformance.checker import FAIL, INDET, CheckReport, check
from conformance.detector_registry import DETECTORS
from conformance.timing import TimingBands, bands_from_header
from conformance.trace import (
    ERROR_NAMES,
    FAULT_OPS,
    OK,
    REJECTED,
    Event,
    History,
    Outcome,
    TraceFormatError,
    dumps,
    parse,
    received_message,
)
from reference_model import non_persistent
from reference_model.profiles import profile_for
from reference_model.rules import RULES

ALLOWED = "allowed"
MISSED = "missed"
UNCLASSIFIED = "unclassified"

CAUGHT_COVERING = "caught_covering"
CAUGHT_ELSEWHERE = "caught_elsewhere"
SURVIVED = "survived"
CRASHED = "crashed"

SHIFT_FRACTIONS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
SHIFT_FLOOR_MS = 100.0
MAX_DRAWS_PER_LIE = 25
# errors a random ok -> rejected may carry: not Timeout (an op that timed out is indeterminate, not
# refused) and not UnknownHandle (a harness error, never a broker verdict)
_RANDOM_ERRORS = tuple(e for e in ERROR_NAMES if e not in ("Timeout", "UnknownHandle"))
_DELIVERY_OPS = ("receive", "read_next")
_PARTITION_SUFFIX = re.compile(r"-partition-\d+$")
_RULE_TEXT = {r.id: f"{r.title} {DETECTORS[r.id].violated_if}".lower() for r in RULES if r.id in DETECTORS}


# --------------------------------------------------------------------------- values


@dataclass(frozen=True)
class Perturbation:
    """One random lie: which kind, where (event ``index``, its ``step`` and ``op``), which field,
    the value before and after, and the perturbed history as the loader read it back."""

    kind: str
    index: int
    step: int
    op: str
    field: str
    old: Any
    new: Any
    history: History
    seed: str
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def description(self) -> str:
        return f"{self.kind} step {self.step} {self.op} {self.field}: {_short(self.old)} -> {_short(self.new)}"

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "step": self.step, "op": self.op, "field": self.field, "old": self.old,
                "new": self.new, "seed": self.seed, "description": self.description, "detail": dict(self.detail)}


@dataclass(frozen=True)
class Classification:
    """What the rule texts say about a perturbation: ``allowed`` / ``missed`` / ``unclassified``,
    the rules it contradicts (``missed``) or that were considered, and why."""

    cls: str
    rules: tuple[str, ...]
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"class": self.cls, "rules": list(self.rules), "reason": self.reason}


def _short(value: Any, width: int = 90) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return text if len(text) <= width else text[: width - 3] + "..."


def _allowed(reason: str, rules: Iterable[str] = ()) -> Classification:
    return Classification(ALLOWED, tuple(rules), reason)


def _missed(rules: Iterable[str], reason: str) -> Classification:
    return Classification(MISSED, tuple(dict.fromkeys(rules)), reason)


def _unclassified(reason: str, rules: Iterable[str] = ()) -> Classification:
    return Classification(UNCLASSIFIED, tuple(rules), reason)


# --------------------------------------------------------------------------- history facts


def base_topic(topic: str) -> str:
    """``t-partition-2`` -> ``t``: the topic a partition belongs to."""
    return _PARTITION_SUFFIX.sub("", topic or "")


def message_key(msg: Any) -> tuple[str, str]:
    """(topic without partition suffix, payload label): how a message is matched across the history."""
    return base_topic(msg.topic), msg.payload


class _Ctx:
    """What one history did, indexed once for the perturbers and the classifiers."""

    def __init__(self, history: History):
        self.history = history
        self.events = history.events
        self.facts = mutation.facts(history)
        self.bands = bands_from_header(history.header) or TimingBands.for_target(history.header.target)
        self.band = self.bands.dispatch_latency_ms
        self.grouping = self.bands.ack_grouping_ms + self.bands.dispatch_latency_ms
        self.deliveries: list[tuple[int, Any, Any]] = []  # (index, handle, ObservedMessage)
        for i, e in enumerate(self.events):
            if e.op.op in _DELIVERY_OPS:
                m = received_message(e.outcome)
                h = self.facts.handle_at(i)
                if m is not None and h is not None:
                    self.deliveries.append((i, h, m))
        # (topic, label) -> index of its first ok send, and the id it returned (send value or flush)
        self.sends: dict[tuple[str, str], int] = {}
        self.send_ids: dict[tuple[str, str], list[int]] = {}
        for i, e in enumerate(self.events):
            if e.op.op == "send" and e.outcome.status == OK:
                topic = base_topic(self.facts.producer_topic.get(e.op.args["producer"], ""))
                key = (topic, e.op.args["payload"])
                self.sends.setdefault(key, i)
                mid = (e.outcome.value or {}).get("message_id")
                if mid is not None:
                    self.send_ids.setdefault(key, list(mid))
            elif e.op.op == "flush" and e.outcome.status == OK:
                topic = base_topic(self.facts.producer_topic.get(e.op.args["producer"], ""))
                for label, mid in ((e.outcome.value or {}).get("message_ids") or {}).items():
                    self.send_ids.setdefault((topic, label), list(mid))

    def handle_at(self, i: int) -> Any:
        return self.facts.handle_at(i)

    def sub_at(self, i: int) -> str | None:
        h = self.handle_at(i)
        return None if h is None else h.sub_key

    def live(self, h: Any, i: int) -> bool:
        step = self.events[i].step
        return h.step <= step and (h.closed_step is None or step < h.closed_step)

    def handles_of(self, sub: str) -> list[Any]:
        return [h for hs in self.facts.handles.values() for h in hs if h.sub_key == sub]

    def deliveries_of(self, sub: str, key: tuple[str, str], before: int | None = None,
                      after: int | None = None) -> list[tuple[int, Any, Any]]:
        return [(i, h, m) for i, h, m in self.deliveries if h.sub_key == sub and message_key(m) == key
                and (before is None or i < before) and (after is None or i > after)]

    def first_delivery(self, i: int, sub: str, key: tuple[str, str]) -> bool:
        return not self.deliveries_of(sub, key, before=i)

    def delayed_or_txn(self, key: tuple[str, str]) -> bool:
        s = self.sends.get(key)
        if s is None:
            return False
        a = self.events[s].op.args
        return "deliver_after_ms" in a or "deliver_at_ms" in a or "txn" in a

    def ops_between(self, a: int, b: int) -> Iterable[tuple[int, Event]]:
        for k in range(a + 1, b):
            yield k, self.events[k]

    def dead_letter_max(self, h: Any) -> int | None:
        dead = h.args.get("dead_letter") if h.kind == "consumer" else None
        if not dead:
            return None
        return dead.get("max_redeliver_count")

    @property
    def client(self) -> str:
        return self.facts.client


def _is_copy(msg: Any) -> bool:
    return mutation._is_copy(msg)


def _ordered_before(a: Any, b: Any) -> bool | None:
    """Whether message ``a`` was published before ``b`` on the same topic partition (PLS-MSGID-002:
    ids there increase in publish order), or None when they are not on one partition."""
    if base_topic(a.topic) != base_topic(b.topic) or a.topic != b.topic or a.message_id[2] != b.message_id[2]:
        return None
    ka = (a.message_id[0], a.message_id[1], a.message_id[3])
    kb = (b.message_id[0], b.message_id[1], b.message_id[3])
    if ka == kb:
        return None
    return ka < kb


def _sticky(msg: Any) -> str | None:
    return msg.ordering_key or msg.key


def _non_persistent(h: Any) -> bool:
    return (h.args.get("topic") or "").startswith("non-persistent://")


def _order_rules(ctx: _Ctx, h: Any, a: Any, b: Any) -> tuple[str, ...]:
    """The rules that say ``a`` is delivered to ``h`` before ``b`` when ``a`` was published first;
    () when no registered rule orders them (Shared, different partitions, different keys, ...)."""
    if _ordered_before(a, b) is None:
        return ()
    if h.kind == "reader":
        if h.args.get("read_compacted"):
            return ("PLS-COMPACT-001", "PLS-COMPACT-004")
        start = h.args["start"]
        if start == "latest":
            return ()  # PLS-READER-002 says what a latest reader must not read, not in which order
        return ("PLS-READER-001",) if start == "earliest" else \
            ("PLS-READER-004",) if h.args.get("inclusive") else ("PLS-READER-003",)
    t = h.sub_type
    if t == "Exclusive":
        return ("PLS-EXCL-002", "PLS-PROD-002") if a.producer_name and a.producer_name == b.producer_name \
            else ("PLS-EXCL-002",)
    if t == "Failover" and a.message_id[2] == -1:
        return ("PLS-FAILOVER-003",)
    if t == "Key_Shared" and _sticky(a) is not None and _sticky(a) == _sticky(b) \
            and not (h.args.get("key_shared") or {}).get("allow_out_of_order"):
        return ("PLS-KEYSHARED-007",)
    return ()


def _owing_rules(h: Any) -> tuple[str, ...]:
    """The rules that say a message dispatched to ``h`` reaches it (a receive that waits past the
    dispatch band with one owed and gets nothing breaks them), or () when none says so in words."""
    if _non_persistent(h):
        return ("PLS-NP-001",)
    if h.kind == "reader":
        start = h.args["start"]
        if start == "latest":
            return ()  # PLS-READER-002 says what a latest reader must not read, not that it reads everything
        return ("PLS-READER-001",) if start == "earliest" else ("PLS-READER-004",) if h.args.get("inclusive") \
            else ("PLS-READER-003",)
    return {"Exclusive": ("PLS-EXCL-002",), "Failover": ("PLS-FAILOVER-003",), "Shared": ("PLS-SHARED-001",),
            # Key_Shared: the checker's owing rule; the selector rules (003/004/005) say which consumer a key goes to
            "Key_Shared": ("PLS-KEYSHARED-007",)}.get(h.sub_type, ())


_REDELIVERY_OPS = ("nack", "redeliver_unacked", "seek", "close", "unsubscribe", "reconsume_later", "subscribe",
                   "unload_topic", "abort_txn")


def _redelivery_causes(ctx: _Ctx, sub: str, a: int, b: int) -> list[str]:
    """Ops in (a, b) that may deliver a subscription's messages again (a nack, a rewind, a reconnect,
    a fault, an aborted transaction, an ack timeout), each as 'op at step N'."""
    out = []
    for k, e in ctx.ops_between(a, b):
        if e.op.op in FAULT_OPS or e.op.op in ("unload_topic", "abort_txn", "restart_broker"):
            out.append(f"{e.op.op} at step {e.step}")
        elif e.op.op in _REDELIVERY_OPS and ctx.sub_at(k) == sub:
            out.append(f"{e.op.op} at step {e.step}")
    for h in ctx.handles_of(sub):
        open_then = h.closed_step is None or h.closed_step > ctx.events[a].step
        if h.kind == "consumer" and h.args.get("ack_timeout_ms") and open_then \
                and h.step < ctx.events[min(b, len(ctx.events) - 1)].step:
            out.append(f"the ack timeout of {h.name}")
    return out


def roundtrip(history: History) -> History:
    """``history`` as the loader reads back its JSON-lines text (``TraceFormatError`` if refused)."""
    parsed = parse(dumps(history), source=f"<perturbed {history.header.trace_id}>")
    if not isinstance(parsed, History):
        raise TraceFormatError("a perturbed history lost its outcomes")
    return parsed


# --------------------------------------------------------------------------- perturbers


def _with_outcome(e: Event, outcome: Outcome) -> Event:
    return replace(e, outcome=outcome)


def _with_message(e: Event, msg: Mapping[str, Any] | None) -> Event:
    value = dict(e.outcome.value or {})
    value["message"] = None if msg is None else dict(msg)
    return replace(e, outcome=Outcome(OK, value=value, detail=e.outcome.detail))


def _raw_message(e: Event) -> dict[str, Any] | None:
    data = (e.outcome.value or {}).get("message") if e.outcome.status == OK else None
    return None if data is None else json.loads(json.dumps(data))


def _set_value(e: Event, value: Mapping[str, Any]) -> Event:
    return replace(e, outcome=Outcome(OK, value=dict(value), detail=e.outcome.detail))


def _id_text(mid: list[int]) -> str:
    return "(" + ",".join(str(x) for x in mid) + ")"


Made = tuple[list[Event], str, Any, Any, dict[str, Any]]  # events, field, old, new, detail


def _sites_deliveries(ctx: _Ctx) -> list[int]:
    return [i for i, _, _ in ctx.deliveries]


def _make_drop(ctx: _Ctx, i: int, rng: random.Random) -> Made | None:
    """The receive gets nothing, so it lasts its whole timeout (a receive returns empty only then);
    every later event moves by the time it gained."""
    events = list(ctx.events)
    e = events[i]
    old = _raw_message(e)
    new_end = max(e.t_end_ms, e.t_start_ms + float(e.op.args.get("timeout_ms", 0)))
    delta = new_end - e.t_end_ms
    events[i] = replace(_with_message(e, None), t_end_ms=new_end)
    for k in range(i + 1, len(events)):
        x = events[k]
        events[k] = replace(x, t_start_ms=x.t_start_ms + delta, t_end_ms=x.t_end_ms + delta)
    note = f" (waits its {e.op.args.get('timeout_ms')} ms timeout: later events +{delta:.0f} ms)" if delta > 0 else ""
    return events, "message", f"{old['payload']} {_short(old['message_id'])}", "none" + note, {"delta_ms": round(delta, 3)}


def _sites_empty_receives(ctx: _Ctx) -> list[int]:
    out = []
    for i, e in enumerate(ctx.events):
        if e.op.op in _DELIVERY_OPS and e.outcome.status == OK and received_message(e.outcome) is None:
            sub = ctx.sub_at(i)
            if sub is not None and any(j < i and h.sub_key == sub for j, h, _ in ctx.deliveries):
                out.append(i)
    return out


def _make_duplicate(ctx: _Ctx, i: int, rng: random.Random) -> Made | None:
    sub = ctx.sub_at(i)
    earlier = [j for j, h, _ in ctx.deliveries if j < i and h.sub_key == sub]
    j = rng.choice(earlier)
    events = list(ctx.events)
    copy = _raw_message(events[j])
    events[i] = _with_message(events[i], copy)
    return events, "message", "none", f"{copy['payload']} (copy of step {events[j].step})", {"copy_of": j}


def _sites_swaps(ctx: _Ctx) -> list[tuple[int, int]]:
    by_handle: dict[int, list[int]] = {}
    for i, h, _ in ctx.deliveries:
        by_handle.setdefault(id(h), []).append(i)
    return [(a, b) for idx in by_handle.values() for n, a in enumerate(idx) for b in idx[n + 1:]
            if _raw_message(ctx.events[a]) != _raw_message(ctx.events[b])]


def _make_swap(ctx: _Ctx, site: tuple[int, int], rng: random.Random) -> Made | None:
    a, b = site
    events = list(ctx.events)
    ma, mb = _raw_message(events[a]), _raw_message(events[b])
    events[a] = _with_message(events[a], mb)
    events[b] = _with_message(events[b], ma)
    return (events, f"message (with step {events[b].step})", f"{ma['payload']}, {mb['payload']}",
            f"{mb['payload']}, {ma['payload']}", {"other": b})


def _sites_all(ctx: _Ctx) -> list[int]:
    return list(range(len(ctx.events)))


def _make_shift(ctx: _Ctx, i: int, rng: random.Random) -> Made | None:
    events = list(ctx.events)
    e = events[i]
    prev_end = events[i - 1].t_end_ms if i > 0 else 0.0
    elapsed = e.t_end_ms - prev_end
    scale = max(elapsed, SHIFT_FLOOR_MS)
    f = rng.choice(SHIFT_FRACTIONS) * rng.choice((-1, 1))
    mode = rng.choice(("tail", "end"))
    delta = f * scale
    empty = e.op.op in _DELIVERY_OPS and received_message(e.outcome) is None
    if mode == "tail":
        if delta < 0:
            delta = max(delta, prev_end - e.t_start_ms)  # never start before the previous event ended
        if abs(delta) < 1e-3:
            return None
        for k in range(i, len(events)):
            x = events[k]
            events[k] = replace(x, t_start_ms=x.t_start_ms + delta, t_end_ms=x.t_end_ms + delta)
        where = "t_start_ms/t_end_ms of it and every later event"
    else:
        if delta < 0:
            if empty:
                return None  # an empty receive returns when its timeout ends: never sooner
            delta = max(delta, e.t_start_ms - e.t_end_ms)
        if abs(delta) < 1e-3:
            return None
        events[i] = replace(e, t_end_ms=e.t_end_ms + delta)
        if delta > 0:
            for k in range(i + 1, len(events)):
                x = events[k]
                events[k] = replace(x, t_start_ms=x.t_start_ms + delta, t_end_ms=x.t_end_ms + delta)
        where = "t_end_ms" + (" (later events move with it)" if delta > 0 else "")
    return (events, where, round(e.t_end_ms, 3), round(e.t_end_ms + delta, 3),
            {"mode": mode, "delta_ms": round(delta, 3), "fraction": f, "scale_ms": round(scale, 3)})


def _make_redelivery_count(ctx: _Ctx, i: int, rng: random.Random) -> Made | None:
    events = list(ctx.events)
    m = _raw_message(events[i])
    old = int(m.get("redelivery_count") or 0)
    new = old + rng.choice((-1, 1)) if old > 0 else old + 1
    m["redelivery_count"] = new
    events[i] = _with_message(events[i], m)
    return events, "message.redelivery_count", old, new, {}


def _stats_sites(ctx: _Ctx) -> list[tuple[int, str, int]]:
    """(index, figure, position): the backlog (-1) and each consumer's unackedMessages of ok stats."""
    out = []
    for i, e in enumerate(ctx.events):
        if e.op.op != "stats" or e.outcome.status != OK:
            continue
        v = e.outcome.value or {}
        if isinstance(v.get("backlog"), int):
            out.append((i, "backlog", -1))
        for n, c in enumerate(v.get("consumer_unacked") or []):
            if isinstance(c.get("unacked_messages"), int):
                out.append((i, "unacked_messages", n))
    return out


def _set_stat(ctx: _Ctx, site: tuple[int, str, int], change: Callable[[int], int | None]) -> Made | None:
    i, figure, n = site
    events = list(ctx.events)
    value = json.loads(json.dumps(events[i].outcome.value))
    old = value["backlog"] if figure == "backlog" else value["consumer_unacked"][n]["unacked_messages"]
    new = change(old)
    if new is None or new == old or new < 0:
        return None
    if figure == "backlog":
        value["backlog"] = new
        where = "backlog"
    else:
        value["consumer_unacked"][n]["unacked_messages"] = new
        where = f"consumer_unacked[{value['consumer_unacked'][n].get('consumer_name')}].unacked_messages"
    events[i] = _set_value(events[i], value)
    return events, where, old, new, {"figure": figure, "position": n}


def _make_stats_count(ctx: _Ctx, site: tuple[int, str, int], rng: random.Random) -> Made | None:
    d = rng.choice((-1, 1))
    return _set_stat(ctx, site, lambda v: v + d)


def _stats_figure_sites(ctx: _Ctx) -> list[tuple[int, str, int]]:
    out = list(_stats_sites(ctx))
    for i, e in enumerate(ctx.events):
        if e.op.op == "stats" and e.outcome.status == OK:
            for n, c in enumerate((e.outcome.value or {}).get("consumers") or []):
                if c.get("key_hash_ranges"):
                    out.append((i, "key_hash_ranges", n))
    return out


def _make_stats_figure(ctx: _Ctx, site: tuple[int, str, int], rng: random.Random) -> Made | None:
    i, figure, n = site
    if figure != "key_hash_ranges":
        return _set_stat(ctx, site, lambda v: rng.choice((0, v + rng.randint(2, 5), 2 * v + 1, max(v - rng.randint(2, 5), 0))))
    events = list(ctx.events)
    value = json.loads(json.dumps(events[i].outcome.value))
    entry = value["consumers"][n]
    old = [list(r) for r in entry["key_hash_ranges"]]
    ranges = [list(r) for r in old]
    r = rng.randrange(len(ranges))
    side = rng.randrange(2)
    ranges[r][side] = max(0, min(65535, ranges[r][side] + rng.choice((-1, 1)) * rng.choice((1, 100, 1000))))
    if ranges[r][0] > ranges[r][1] or ranges == old:
        return None
    entry["key_hash_ranges"] = ranges
    events[i] = _set_value(events[i], value)
    return events, f"consumers[{entry.get('consumer_name')}].key_hash_ranges", old, ranges, {"figure": figure, "position": n}


def _reconnect_sites(ctx: _Ctx) -> list[tuple[int, str]]:
    out = []
    for i, e in enumerate(ctx.events):
        if e.op.op in FAULT_OPS and e.outcome.status == OK:
            for name in ("reconnected_ms", "settle_restarts"):
                if isinstance((e.outcome.value or {}).get(name), (int, float)):
                    out.append((i, name))
    return out


def _off_by_one(ctx: _Ctx, site: tuple[int, str], rng: random.Random, *, floor: int | None) -> Made | None:
    """The integer ``name`` of event ``i``'s value, one more or one less (never below ``floor``)."""
    i, name = site
    events = list(ctx.events)
    value = dict(events[i].outcome.value)
    old = value[name]
    new = old + rng.choice((-1, 1))
    if floor is not None and new < floor:
        return None
    value[name] = new
    events[i] = _set_value(events[i], value)
    return events, name, old, new, {}


def _make_reconnect(ctx: _Ctx, site: tuple[int, str], rng: random.Random) -> Made | None:
    return _off_by_one(ctx, site, rng, floor=0)  # a duration or a count: never negative


def _sequence_sites(ctx: _Ctx) -> list[tuple[int, str]]:
    out = []
    for i, e in enumerate(ctx.events):
        v = e.outcome.value or {} if e.outcome.status == OK else {}
        if e.op.op == "create_producer" and isinstance(v.get("last_sequence_id"), int):
            out.append((i, "last_sequence_id"))
        elif e.op.op == "send" and isinstance(v.get("sequence_id"), int):
            out.append((i, "sequence_id"))
    return out


def _make_sequence(ctx: _Ctx, site: tuple[int, str], rng: random.Random) -> Made | None:
    return _off_by_one(ctx, site, rng, floor=None)  # -1 is a sequence id too (none yet)


def _id_sites(ctx: _Ctx) -> list[tuple[int, str, str | None]]:
    out: list[tuple[int, str, str | None]] = [(i, "received", None) for i, _, _ in ctx.deliveries]
    for i, e in enumerate(ctx.events):
        v = e.outcome.value or {} if e.outcome.status == OK else {}
        if e.op.op == "send" and v.get("message_id") is not None:
            out.append((i, "send", None))
        elif e.op.op == "flush":
            out += [(i, "flush", label) for label in sorted(v.get("message_ids") or {})]
    return out


def _all_ids(ctx: _Ctx) -> list[list[int]]:
    ids = [list(m.message_id) for _, _, m in ctx.deliveries] + [list(x) for x in ctx.send_ids.values()]
    return [list(x) for x in {tuple(x) for x in ids}]


def _new_id(ctx: _Ctx, old: list[int], rng: random.Random) -> tuple[list[int], str]:
    others = [x for x in _all_ids(ctx) if x != old]
    if others and rng.random() < 0.4:
        return sorted(others)[rng.randrange(len(others))], "another message's id"
    new = list(old)
    part = rng.randrange(4)
    name = ("ledger", "entry", "partition", "batch index")[part]
    if part == 0:
        new[0] = old[0] + rng.randint(1, 3)
    else:
        d = rng.choice((-1, 1))
        low = 0 if part == 1 else -1
        new[part] = old[part] + d if old[part] + d >= low else old[part] - d
    return new, f"a fresh {name}"


def _make_message_id(ctx: _Ctx, site: tuple[int, str, str | None], rng: random.Random) -> Made | None:
    i, where, label = site
    events = list(ctx.events)
    e = events[i]
    if where == "received":
        m = _raw_message(e)
        old = list(m["message_id"])
        new, how = _new_id(ctx, old, rng)
        m["message_id"] = new
        events[i] = _with_message(e, m)
        fld = "message.message_id"
    elif where == "send":
        value = dict(e.outcome.value)
        old = list(value["message_id"])
        new, how = _new_id(ctx, old, rng)
        value["message_id"] = new
        if value.get("id_text") == _id_text(old):  # keep the printed id in step with it
            value["id_text"] = _id_text(new)
        events[i] = _set_value(e, value)
        fld = "message_id"
    else:
        value = json.loads(json.dumps(e.outcome.value))
        old = list(value["message_ids"][label])
        new, how = _new_id(ctx, old, rng)
        value["message_ids"][label] = new
        if (value.get("id_texts") or {}).get(label) == _id_text(old):
            value["id_texts"][label] = _id_text(new)
        events[i] = _set_value(e, value)
        fld = f"message_ids[{label}]"
    if new == old:
        return None
    return events, fld, old, new, {"where": where, "label": label, "how": how}


def _make_property(ctx: _Ctx, i: int, rng: random.Random) -> Made | None:
    events = list(ctx.events)
    m = _raw_message(events[i])
    props = dict(m.get("properties") or {})
    old = dict(props)
    choice = rng.choice(("change", "add", "remove")) if props else "add"
    if choice == "change":
        k = rng.choice(sorted(props))
        props[k] = props[k] + "-x" if rng.random() < 0.5 else ""
        fld = f"message.properties[{k}]"
        if props[k] == old[k]:
            props[k] = "x"
    elif choice == "add":
        k = rng.choice(("perturbed", "k", "TAGS-x"))
        if k in props:
            return None
        props[k] = "v"
        fld = f"message.properties[{k}] (added)"
    else:
        k = rng.choice(sorted(props))
        del props[k]
        fld = f"message.properties[{k}] (removed)"
    m["properties"] = props
    events[i] = _with_message(events[i], m)
    return events, fld, old, props, {"change": choice, "property": k}


def _make_key(ctx: _Ctx, i: int, rng: random.Random) -> Made | None:
    events = list(ctx.events)
    m = _raw_message(events[i])
    name = rng.choice(("key", "ordering_key"))
    old = m.get(name)
    others = sorted({x for _, _, o in ctx.deliveries for x in (o.key, o.ordering_key) if x is not None and x != old})
    pick = rng.random()
    if others and pick < 0.5:
        new = rng.choice(others)
    elif old is not None and pick < 0.75:
        new = None
    else:
        new = (old or "k") + "-x"
    m[name] = new
    events[i] = _with_message(events[i], m)
    return events, f"message.{name}", old, new, {"name": name}


def _make_payload(ctx: _Ctx, i: int, rng: random.Random) -> Made | None:
    events = list(ctx.events)
    m = _raw_message(events[i])
    old = m["payload"]
    labels = sorted({label for (_, label) in ctx.sends} - {old})
    if labels and rng.random() < 0.7:
        new, how = rng.choice(labels), "another message's label"
    else:
        new, how = old + "-x", "a label no send used"
    m["payload"] = new
    events[i] = _with_message(events[i], m)
    return events, "message.payload", old, new, {"how": how}


def _schema_sites(ctx: _Ctx) -> list[tuple[int, int]]:
    out = [(i, -1) for i, _, m in ctx.deliveries if "schema_version" in (_raw_message(ctx.events[i]) or {})]
    for i, e in enumerate(ctx.events):
        if e.op.op == "get_schemas" and e.outcome.status == OK:
            out += [(i, n) for n, _ in enumerate((e.outcome.value or {}).get("schemas") or [])]
    return out


def _make_schema(ctx: _Ctx, site: tuple[int, int], rng: random.Random) -> Made | None:
    i, n = site
    events = list(ctx.events)
    if n < 0:
        m = _raw_message(events[i])
        old = m.get("schema_version")
        new = 0 if old is None else (None if old == 0 and rng.random() < 0.5 else max(old + rng.choice((-1, 1)), 0))
        if new == old:
            new = old + 1
        m["schema_version"] = new
        events[i] = _with_message(events[i], m)
        return events, "message.schema_version", old, new, {}
    value = json.loads(json.dumps(events[i].outcome.value))
    entry = value["schemas"][n]
    old = entry.get("version")
    if not isinstance(old, int):
        return None
    entry["version"] = old + rng.choice((-1, 1)) if old > 0 else old + 1
    events[i] = _set_value(events[i], value)
    return events, f"schemas[{n}].version", old, entry["version"], {}


def _rejected_sites(ctx: _Ctx) -> list[int]:
    return [i for i, e in enumerate(ctx.events) if e.outcome.status == REJECTED]


def _make_error(ctx: _Ctx, i: int, rng: random.Random) -> Made | None:
    events = list(ctx.events)
    e = events[i]
    new = rng.choice([x for x in _RANDOM_ERRORS if x != e.outcome.error])
    events[i] = _with_outcome(e, Outcome(REJECTED, error=new, detail="perturbed"))
    return events, "error", e.outcome.error, new, {}


def _status_sites(ctx: _Ctx) -> list[int]:
    # not receives (presence is drop_delivery's) and not advance_time (the harness waiting: no broker answer)
    return [i for i, e in enumerate(ctx.events) if e.op.op != "advance_time"
            and (e.outcome.status == REJECTED or (e.outcome.status == OK and e.op.op not in _DELIVERY_OPS))]


def _make_status(ctx: _Ctx, i: int, rng: random.Random) -> Made | None:
    events = list(ctx.events)
    e = events[i]
    if e.outcome.status == REJECTED:
        value: dict[str, Any] = {}
        if e.op.op == "create_producer":
            value = {"producer_name": "perturbed-0", "last_sequence_id": -1}
        events[i] = _with_outcome(e, Outcome(OK, value=value))
        return events, "status", f"rejected {e.outcome.error}", "ok", {"to": "ok"}
    err = rng.choice(_RANDOM_ERRORS)
    events[i] = _with_outcome(e, Outcome(REJECTED, error=err, detail="perturbed"))
    return events, "status", "ok", f"rejected {err}", {"to": "rejected", "error": err}


def _make_message_field(ctx: _Ctx, i: int, rng: random.Random) -> Made | None:
    events = list(ctx.events)
    m = _raw_message(events[i])
    name = rng.choice(("event_time", "publish_time", "producer_name"))
    old = m.get(name)
    if name == "producer_name":
        others = sorted({o.producer_name for _, _, o in ctx.deliveries if o.producer_name and o.producer_name != old})
        new = rng.choice(others) if others and rng.random() < 0.6 else f"{old or 'p'}-x"
    else:
        new = int(old or 0) + rng.choice((-1, 1, 1000))
        if new < 0:
            new = int(old or 0) + 1
    m[name] = new
    events[i] = _with_message(events[i], m)
    return events, f"message.{name}", old, new, {"name": name}


@dataclass(frozen=True)
class _Kind:
    sites: Callable[[_Ctx], list[Any]]
    make: Callable[[_Ctx, Any, random.Random], Made | None]


KINDS: dict[str, _Kind] = {
    "drop_delivery": _Kind(_sites_deliveries, _make_drop),
    "duplicate_delivery": _Kind(_sites_empty_receives, _make_duplicate),
    "swap_deliveries": _Kind(_sites_swaps, _make_swap),
    "shift_time": _Kind(_sites_all, _make_shift),
    "redelivery_count": _Kind(_sites_deliveries, _make_redelivery_count),
    "stats_count": _Kind(_stats_sites, _make_stats_count),
    "stats_figure": _Kind(_stats_figure_sites, _make_stats_figure),
    "reconnect_figure": _Kind(_reconnect_sites, _make_reconnect),
    "sequence_id": _Kind(_sequence_sites, _make_sequence),
    "message_id": _Kind(_id_sites, _make_message_id),
    "property_value": _Kind(_sites_deliveries, _make_property),
    "key": _Kind(_sites_deliveries, _make_key),
    "payload_label": _Kind(_sites_deliveries, _make_payload),
    "schema_version": _Kind(_schema_sites, _make_schema),
    "error_kind": _Kind(_rejected_sites, _make_error),
    "outcome_status": _Kind(_status_sites, _make_status),
    "message_field": _Kind(_sites_deliveries, _make_message_field),
}


def history_seed_key(history: History) -> str:
    """What a history contributes to its lies' seeds: its trace id, target and client (a trace run on
    the model and on a broker, or with two clients, gets different lies)."""
    h = history.header
    return f"{h.trace_id}:{h.target}:{h.client}"


def perturbations(history: History, *, count: int, seed: int | str = 0,
                  kinds: Iterable[str] | None = None) -> list[Perturbation]:
    """Up to ``count`` distinct random lies about ``history``, the same for the same seed.

    Lie n is drawn with ``random.Random(f"{seed}:{history_seed_key(history)}:{n}")``: kind, then
    site, then change; a draw that changes nothing or repeats an earlier lie is drawn again with the
    same generator, at most ``MAX_DRAWS_PER_LIE`` times. Every lie's history has been through
    ``dumps`` and ``parse`` (``roundtrip``)."""
    ctx = _Ctx(history)
    names = list(kinds) if kinds is not None else list(KINDS)
    unknown = [k for k in names if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown perturbation kind(s) {', '.join(unknown)}; known: {', '.join(KINDS)}")
    sites = {k: KINDS[k].sites(ctx) for k in names}
    applicable = [k for k in names if sites[k]]
    out: list[Perturbation] = []
    seen: set[str] = set()
    if not applicable:
        return out
    original_text = dumps(history)
    for n in range(count):
        tag = f"{seed}:{history_seed_key(history)}:{n}"
        rng = random.Random(tag)
        for _ in range(MAX_DRAWS_PER_LIE):
            kind = rng.choice(applicable)
            site = rng.choice(sites[kind])
            made = KINDS[kind].make(ctx, site, rng)
            if made is None:
                continue
            events, fld, old, new, detail = made
            index = site if isinstance(site, int) else site[0]
            e = history.events[index]
            p = Perturbation(kind, index, e.step, _op_label(e), fld, old, new,
                             History(history.header, tuple(events)), tag, detail)
            if p.description in seen:
                continue
            text = dumps(p.history)
            if text == original_text:
                continue
            p = replace(p, history=roundtrip(p.history))
            seen.add(p.description)
            out.append(p)
            break
    return out


def _op_label(e: Event) -> str:
    handle = e.op.handle()
    return f"{e.op.op}({handle})" if handle else e.op.op


# --------------------------------------------------------------------------- covering rules

# keywords a rule's title or "Violated if" sentence must contain to speak about a perturbed field
_FIELD_WORDS: dict[str, tuple[str, ...]] = {
    "presence": ("deliver", "receive", "reads", "read ", "comes back", "arriv", "redeliver", "duplicate", "twice",
                 "again", "order", "owed", "lost", "held"),
    "time": ("timing band", "window", "before", "after", "late", "early", "deliver-at", "timeout", "tick", " ms",
             "at once", "sooner", "within", "held", "waits"),
    "redelivery_count": ("redelivery count", "count"),
    "backlog": ("backlog",),
    "unacked_messages": ("unackedmessages", "unacked"),
    "key_hash_ranges": ("hash range", "ranges"),
    "reconnect": ("reconnect", "cut", "restart", "fault"),
    "sequence": ("sequence id", "last_sequence_id"),
    "message_id": (" id", "ids"),
    "properties": ("propert", "origin_message_id", "real_topic", "tags"),
    "key": ("key",),
    "payload": ("payload", "never sent", "differs from what was sent"),
    "schema_version": ("schema version", "version"),
    "error": ("refused", "fails", "error", "succeeds", "accepted", "let in", "is built", "created", "completes"),
    "event_time": ("event time",),
    "publish_time": ("publish time",),
    "producer_name": ("producer name",),
}
# words by which a detector's sentence speaks about an op even where its ``steps`` do not list it
_OP_WORDS: dict[str, tuple[str, ...]] = {
    "receive": ("receive", "deliver"), "read_next": ("read", "deliver", "receive"), "send": ("send",),
    "create_producer": ("producer",), "subscribe": ("subscribe", "consumer"), "stats": ("stats",),
    "get_schemas": ("admin lists", "lists"), "ack": ("ack",), "ack_cumulative": ("cumulative ack",),
    "nack": ("nack",), "flush": ("flush", "batch"), "close": ("close",), "unsubscribe": ("unsubscribe",),
    "create_reader": ("reader",), "seek": ("seek",), "commit_txn": ("commit",), "abort_txn": ("abort",),
    "new_txn": ("transaction",), "reconsume_later": ("reconsume_later",),
}
# rules about a message's fields, not about whether or when it is delivered
_FIELD_ONLY_RULES = frozenset({"PLS-MSG-001", "PLS-ACK-005", "PLS-SCHEMA-023", "PLS-TOPIC-002", "PLS-MSGID-001"})


def _aspect(p: Perturbation) -> str:
    if p.kind in ("drop_delivery", "duplicate_delivery", "swap_deliveries"):
        return "presence"
    if p.kind == "shift_time":
        return "time"
    if p.kind in ("stats_count", "stats_figure"):
        return p.detail.get("figure", "backlog")
    if p.kind == "reconnect_figure":
        return "reconnect"
    if p.kind == "sequence_id":
        return "sequence"
    if p.kind in ("error_kind", "outcome_status"):
        return "error"
    if p.kind == "property_value":
        return "properties"
    if p.kind == "payload_label":
        return "payload"
    if p.kind == "message_field":
        return p.detail.get("name", "event_time")
    return p.kind  # redelivery_count, message_id, key, schema_version


def covering_rules(p: Perturbation) -> frozenset[str]:
    """The rules whose detector speaks about ``p``'s step and field: its steps (the op kinds it
    judges at) include the perturbed op (for a time shift, any moved op), or its "Violated if"
    sentence names the op (``_OP_WORDS``: PLS-MSGID-001 judges at ``send`` but speaks of what a
    consumer receives); and its title or "Violated if" sentence contains a word of the field
    (``_FIELD_WORDS``)."""
    events = p.history.events
    if p.kind == "shift_time" and (p.detail["mode"] == "tail" or p.detail["delta_ms"] > 0):
        ops = {e.op.op for e in events[p.index:]}
    else:
        ops = {events[p.index].op.op}
        if p.kind == "swap_deliveries":
            ops.add(events[p.detail["other"]].op.op)
    aspect = _aspect(p)
    words = _FIELD_WORDS.get(aspect, ())
    out = set()
    for rule_id, det in DETECTORS.items():
        if aspect == "presence" and rule_id in _FIELD_ONLY_RULES:
            continue
        text = _RULE_TEXT[rule_id]
        if not ops & set(det.steps) and not any(w in det.violated_if.lower() for op in ops for w in _OP_WORDS.get(op, ())):
            continue
        if any(w in text for w in words):
            out.add(rule_id)
    return frozenset(out)


# --------------------------------------------------------------------------- classifiers


def _masked(c: Classification, baseline_fails: set[str], step: int, failed_steps: set[int]) -> Classification:
    if c.cls == MISSED and c.rules and set(c.rules) <= baseline_fails:
        return _unclassified(f"masked: the original already FAILs {', '.join(c.rules)} ({c.reason})", c.rules)
    if c.cls == MISSED and step in failed_steps:
        return _unclassified(f"masked: the original already FAILs a rule at step {step}, so the checker stops "
                             f"judging it there ({c.reason})", c.rules)
    return c


def _message_at(ctx: _Ctx, i: int) -> Any:
    return received_message(ctx.events[i].outcome)


def _removal(ctx: _Ctx, sub: str, msg: Any, after: int, until: int) -> tuple[int, str] | None:
    """The first op in (after, until) that takes ``msg`` out of what ``sub`` owes: an ack of it (by id:
    the broker accepts an ack of any id), a cumulative ack at or past it, a seek, an unsubscribe, an
    expiry, a reconsume_later of it."""
    key = message_key(msg)
    for k, e in ctx.ops_between(after, until):
        if e.outcome.status != OK:
            continue
        op, a = e.op.op, e.op.args
        if op == "expire_messages" and base_topic(a["topic"]) == key[0] and sub.endswith("/" + a["subscription"]):
            return k, f"expire_messages at step {e.step}"
        if ctx.sub_at(k) != sub:
            continue
        if op in ("ack", "reconsume_later") and a.get("message") == key[1] and "txn" not in a:
            return k, f"{op} of {key[1]} at step {e.step}"
        if op == "ack_cumulative" and "txn" not in a:
            upto = [m for j, h, m in ctx.deliveries if j < k and h.sub_key == sub and m.payload == a.get("message")]
            if upto and (upto[-1].message_id == msg.message_id or _ordered_before(msg, upto[-1])):
                return k, f"ack_cumulative of {a.get('message')} at step {e.step}"
        if op in ("seek", "unsubscribe"):
            return k, f"{op} at step {e.step}"
    return None


def _due(ctx: _Ctx, i: int, h: Any, msg: Any, alone: bool) -> tuple[float | None, str]:
    """By when the rules owe delivery ``i`` (the message ``msg`` to ``h``), in the original's times,
    and why: the window's end of a timed redelivery or delayed message (``mutation._timed_deliveries``,
    bands included); the end of the op that asked for a rewind or a redelivery plus the dispatch band
    (PLS-NACK-003 / PLS-REDELIVER-001 / PLS-SHARED-002 / PLS-SEEK-* / PLS-SUB-005 state no window but the
    band); for a first delivery of a plain message, when it was stored (and ``h`` subscribed, when
    ``alone``: the only consumer it can go to) plus the band. (None, why) when the rules leave it open."""
    sub, key = h.sub_key, message_key(msg)
    for t in mutation._timed_deliveries(ctx.facts):
        if t.index == i:
            return t.high, t.cause
    earlier = ctx.deliveries_of(sub, key, before=i)
    if earlier:
        # the ops whose rule states a band: a seek (PLS-SEEK-*), redeliver_unacked (PLS-REDELIVER-001), a
        # nack on Exclusive / Failover (PLS-NACK-003), a close of another Shared / Failover consumer
        # (PLS-SHARED-002 / PLS-FAILOVER-002), a reconnect to an Exclusive / Failover subscription (PLS-SUB-005)
        ordered = h.sub_type in ("Exclusive", "Failover")
        causes = [(k, x) for k, x in ctx.ops_between(earlier[-1][0], i) if x.outcome.status == OK and ctx.sub_at(k) == sub
                  and (x.op.op in ("seek", "redeliver_unacked")
                       or (x.op.op == "nack" and ordered)
                       or (x.op.op == "close" and h.sub_type in ("Shared", "Failover"))
                       or (x.op.op == "subscribe" and ordered))]
        if causes and not any(x.op.op in FAULT_OPS for _, x in ctx.ops_between(earlier[-1][0], i)):
            k, x = causes[-1]
            return x.t_end_ms + ctx.band, f"{x.op.op} at step {x.step}"
        return None, "a redelivery whose cause states no deadline here"
    s = ctx.sends.get(key)
    if s is None or ctx.delayed_or_txn(key) or _is_copy(msg) or not alone:
        return None, "when this first delivery became owed is not fixed here"
    seeks = [x for k, x in ctx.ops_between(s, i) if x.op.op == "seek" and ctx.sub_at(k) == sub]
    if seeks or any(x.op.op in FAULT_OPS for x in ctx.events[:i]):
        return None, "a seek or a fault moved the position"
    if any(x.op.op == "new_txn" for x in ctx.events[:i]):
        return None, "a transaction may hold it back (PLS-TXN-003)"
    start = ctx.events[next(k for k, x in enumerate(ctx.events) if x.step == h.step)].t_end_ms
    if h.sub_type == "Failover" and not _non_persistent(h):
        # the broker reads for a newly picked active consumer only after activeConsumerFailoverDelayTimeMillis, the
        # first one too (PLS-FAILOVER-003, reference_model.dispatch.failover): from the last join, leave or seek
        # before i (a non-persistent topic's dispatcher sends at once: FailoverDispatcher.activation_delay_ms)
        changes = [x for k, x in enumerate(ctx.events[:i]) if ctx.sub_at(k) == sub and x.outcome.status == OK
                   and x.op.op in ("subscribe", "close", "unsubscribe", "seek")]
        if changes:
            delay = profile_for(None, h.client).failover_activation_delay_ms
            if changes[-1].t_end_ms + delay > max(ctx.events[s].t_end_ms, start):
                start = changes[-1].t_end_ms + delay
                return start + ctx.band, f"the active consumer picked at step {changes[-1].step} reads after {delay} ms"
    return max(ctx.events[s].t_end_ms, start) + ctx.band, f"stored at step {ctx.events[s].step}"


def _maybe_before_first_permits(ctx: _Ctx, h: Any, key: tuple[str, str]) -> bool:
    """Whether the rules leave the non-persistent message ``key`` maybe absent from ``h``'s subscription:
    published before every connected consumer's first flow permits surely reached the broker
    (``reference_model.non_persistent`` rule 6: a Java or Go consumer sends them after its subscribe
    returned, so they arrive by the subscribe's end plus the dispatch band)."""
    s = ctx.sends.get(key)
    if s is None or not _non_persistent(h):
        return False
    by = []
    for c in ctx.handles_of(h.sub_key):
        if c.kind != "consumer" or not ctx.live(c, s):
            continue
        subscribed = ctx.events[next(k for k, x in enumerate(ctx.events) if x.step == c.step)]
        late = profile_for(None, c.client).first_permits_after_subscribe
        by.append(subscribed.t_end_ms + ctx.band if late else None)
    return non_persistent.before_first_permits(ctx.events[s].t_start_ms, by)


def _alone(ctx: _Ctx, h: Any, i: int) -> bool:
    """Whether ``h`` is the only consumer its message at ``i`` can go to: a reader, an Exclusive
    consumer, or the only consumer connected to its subscription then (Shared, Failover, Key_Shared)."""
    if h.kind == "reader" or h.sub_type == "Exclusive":
        return True
    return [x for x in ctx.handles_of(h.sub_key) if x.kind == "consumer" and ctx.live(x, i)] == [h]


def _classify_drop(ctx: _Ctx, p: Perturbation) -> Classification:
    """The receive at ``i`` waited its whole timeout and got nothing. Owed to ``h``: a message the
    rules route to ``h`` alone (its only consumer, an Exclusive consumer or a reader; on Key_Shared the
    key's owner, as the original shows). A missed lie is a receive owing it that ended past the due time
    with nothing, a later-published message handed over first where order is stated, or (Shared, at the
    end) every consumer's last receive empty past the due time (PLS-SHARED-001)."""
    i = p.index
    q = p.history.events
    h = ctx.handle_at(i)
    msg = _message_at(ctx, i)
    sub = h.sub_key
    key = message_key(msg)
    n = len(ctx.events)
    timed = _timing_lies(ctx, _Ctx(p.history))
    if timed is not None:
        return timed
    acked = _ack_before(ctx, sub, msg, i)
    if acked is not None:
        # a copy after its ack is allowed (a queued copy, a redelivery racing the ack), never owed: the held-out
        # campaign of 7 Dec 2026, a Python batch-index ack of m3 then a redeliver_unacked that brought m3 once more
        return _unclassified(f"{key[1]} was acknowledged at step {ctx.events[acked[0]].step}, before this receipt: a "
                             "copy after the ack may come or not (PLS-ACK-001's queued copies), it is never owed; "
                             "whether the empty wait made another delivery late is not classified", _owing_rules(h))
    if ctx.first_delivery(i, sub, key) and _maybe_before_first_permits(ctx, h, key):
        return _allowed(f"{key[1]} was published before the first flow permits of {h.name}'s subscription surely "
                        "reached the broker, which may drop it (non-persistent rule 6)", _owing_rules(h))
    later = next((j for j, _, _ in ctx.deliveries_of(sub, key, after=i)), None)
    stop = later if later is not None else n
    removed = _removal(ctx, sub, msg, i, stop)
    end = removed[0] if removed else stop
    owing = _owing_rules(h)
    alone = _alone(ctx, h, i)
    moves = [x for k, x in ctx.ops_between(i, end) if x.op.op in ("subscribe", "close", "unsubscribe")
             and ctx.sub_at(k) == sub]
    # a key stays with its owner (Key_Shared), a partition with its active consumer (Failover)
    exclusive_like = alone or (h.sub_type in ("Key_Shared", "Failover") and not moves)
    due, why_due = _due(ctx, i, h, msg, alone)
    # owed to the subscription as a whole (PLS-SHARED-001's "together"): from when it was stored
    due_sub, why_sub = (due, why_due) if alone else _due(ctx, i, h, msg, True)
    shift = p.detail.get("delta_ms", 0.0)
    faulted = any(x.op.op in FAULT_OPS for x in ctx.events[:end])
    # a dead-lettered message: the copy comes only after the N+1-th delivery (PLS-DLQ-002)
    max_n = ctx.dead_letter_max(h)
    if max_n is not None and not _is_copy(msg):
        copies = [j for j, hj, m in ctx.deliveries if j > i and m.payload == msg.payload and _is_copy(m)
                  and m.topic.endswith("-DLQ")]
        seen = len(ctx.deliveries_of(sub, key, before=copies[0])) - 1 if copies else None
        if copies and seen is not None and seen < max_n + 1 <= seen + 1:
            rule = "PLS-DLQ-008" if h.client == "go" else "PLS-DLQ-002"
            return _missed((rule,), f"with max_redeliver_count {max_n}, {key[1]} now reaches the application "
                                    f"{seen} times before its dead-letter copy (step {ctx.events[copies[0]].step}), "
                                    f"not {max_n + 1}")
    for k in range(i, end):
        e = q[k]
        if e.op.op not in _DELIVERY_OPS or e.outcome.status != OK:
            continue
        hk = ctx.handle_at(k)
        if hk is None or hk.sub_key != sub or (hk is not h and (ctx.live(h, k) or not exclusive_like)):
            continue  # owed to h while it is connected; after it leaves, to the consumer that resumes (Exclusive)
        got = received_message(e.outcome)
        if got is None and owing and exclusive_like and due is not None and e.t_end_ms > due + (shift if k > i else 0) \
                and e.t_end_ms - e.t_start_ms > ctx.band:
            if faulted:
                return _unclassified("a fault lies before: a resume grace (faults.RESUME_GRACE_MS) may apply", owing)
            return _missed(owing, f"{key[1]} is owed to {hk.name} by {due:.0f} ms ({why_due}); the receive at step "
                                  f"{e.step} ended at {e.t_end_ms:.0f} ms with nothing")
        if got is not None and hk is h and k > i and ctx.first_delivery(k, sub, message_key(got)) \
                and not ctx.delayed_or_txn(message_key(got)):
            order = _order_rules(ctx, h, msg, got)
            if order and _ordered_before(msg, got):
                return _missed(order, f"{got.payload} (published after {key[1]}) is delivered to {h.name} at step "
                                      f"{e.step} while {key[1]}, dispatched to it, is not")
    if later is None and removed is None and h.kind == "consumer" and h.sub_type == "Shared" and due_sub is not None:
        lasts = []
        for c in (x for x in ctx.handles_of(sub) if x.kind == "consumer" and (x.closed_step is None)):
            mine = [k for k in range(n) if q[k].op.op == "receive" and ctx.handle_at(k) is c]
            lasts.append(q[mine[-1]] if mine else None)
        if lasts and all(x is not None and received_message(x.outcome) is None for x in lasts) \
                and min(x.t_end_ms for x in lasts) > due_sub + shift:
            if faulted:
                return _unclassified("a fault lies before: a resume grace may apply", ("PLS-SHARED-001",))
            return _missed(("PLS-SHARED-001",), f"{key[1]} (owed by {due_sub:.0f} ms, {why_sub}) is never delivered "
                                                "and every consumer's last receive got nothing")
    if not owing:
        return _unclassified(f"no registered rule says in words that a {h.sub_type} "
                             f"{'reader from ' + str(h.args.get('start')) if h.kind == 'reader' else 'consumer'} "
                             "gets every message")
    if later is not None:
        lm = _message_at(ctx, later)
        if lm.redelivery_count > msg.redelivery_count:
            return _unclassified(f"{key[1]} now first arrives at step {ctx.events[later].step} with redelivery count "
                                 f"{lm.redelivery_count}, which says it was delivered before; whether the count or the "
                                 "presence is the lie needs the redelivery's cause", ("PLS-ACK-005",))
    refs = [x for k, x in ctx.ops_between(i, end) if ctx.sub_at(k) == sub and x.op.args.get("message") == key[1]
            and x.op.op in ("nack", "reconsume_later")]
    if refs:
        return _unclassified(f"{refs[0].op.op} of {key[1]} at step {refs[0].step} acts on a message the consumer "
                             "never got in this history")
    if not exclusive_like and h.sub_type == "Shared" and due_sub is not None:
        return _allowed(f"Shared with several consumers: {key[1]} may have gone to another one, and no consumer's "
                        "last receive shows it lost (PLS-SHARED-001 fixes who gets a message only as 'together')", owing)
    if due is None:
        return _unclassified(f"{why_due}: whether a receive owed {key[1]} cannot be told", owing)
    until = (f"before {removed[1]}" if removed else
             f"before it came at step {ctx.events[later].step}" if later is not None else "before the history ended")
    return _allowed(f"no receive owing {key[1]} ended past its due time ({due:.0f} ms, {why_due}) {until}", owing)


def _ack_before(ctx: _Ctx, sub: str, msg: Any, before: int) -> tuple[int, str] | None:
    """The last ok ack (individual, no transaction) of ``msg`` on ``sub`` before index ``before``, or
    a cumulative ack at or past it there: (index, rule)."""
    key = message_key(msg)
    found = None
    for k in range(before):
        e = ctx.events[k]
        if e.outcome.status != OK or ctx.sub_at(k) != sub or "txn" in e.op.args:
            continue
        if e.op.op == "ack" and e.op.args["message"] == key[1]:
            found = (k, "PLS-ACK-001")
        elif e.op.op == "ack_cumulative":
            upto = [m for j, h, m in ctx.deliveries if j < k and h.sub_key == sub and m.payload == e.op.args["message"]]
            if upto and (upto[-1].message_id == msg.message_id or _ordered_before(msg, upto[-1])):
                found = (k, "PLS-ACK-002")
        elif e.op.op in ("seek", "unsubscribe"):
            found = None  # a seek brings acked messages back; an unsubscribe starts a new subscription
    return found


def _classify_duplicate(ctx: _Ctx, p: Perturbation) -> Classification:
    i = p.index
    hk = ctx.handle_at(i)
    src = p.detail["copy_of"]
    msg = _message_at(ctx, src)
    sub = hk.sub_key
    key = message_key(msg)
    last = ctx.deliveries_of(sub, key, before=i)[-1]
    holder = last[1]
    acked = _ack_before(ctx, sub, msg, i)
    e = ctx.events[i]
    if acked is not None:
        a, rule = acked
        ae = ctx.events[a]
        gap = e.t_end_ms - ae.t_end_ms
        if gap <= ctx.grouping:
            return _allowed(f"the copy comes {gap:.0f} ms after the ack at step {ae.step}, inside ack grouping plus "
                            f"the band ({ctx.grouping:g} ms): the ack may not have reached the broker", (rule,))
        rewind = next((x for k, x in ctx.ops_between(a, i) if x.op.op == "redeliver_unacked" and x.outcome.status == OK
                       and ctx.handle_at(k) is hk and x.t_start_ms - ae.t_end_ms <= ctx.grouping), None)
        if rewind is not None:
            return _allowed(f"the rewind at step {rewind.step} came {rewind.t_start_ms - ae.t_end_ms:.0f} ms after the ack "
                            f"at step {ae.step}, inside ack grouping plus the band ({ctx.grouping:g} ms): the broker may "
                            "rewind before it applies the ack (PLS-ACK-001's note)", (rule,))
        faults = [x for _, x in ctx.ops_between(a, i) if x.op.op in FAULT_OPS]
        if faults:
            return _unclassified(f"a {faults[0].op.op} at step {faults[0].step} lies between the ack and the copy "
                                 "(PLS-FAULT-001 keeps acks across a fault only past its settle time)", (rule, "PLS-FAULT-001"))
        asked = _redelivery_causes(ctx, sub, last[0], a)
        if asked:
            return _unclassified(f"{asked[0]} asked for a redelivery before the ack at step {ae.step}: a copy queued "
                                 "then may surface after the ack (PLS-REDELIVER-001's note: the C++ client keeps its "
                                 "receiver queue)", (rule,))
        return _missed((rule,), f"{key[1]} was acked on {sub} at step {ae.step} and is delivered there again at step "
                                f"{p.step}, {gap:.0f} ms later")
    if hk.kind == "reader":
        seeks = [x for k, x in ctx.ops_between(last[0], i) if x.op.op == "seek" and ctx.handle_at(k) is hk]
        if not seeks:
            rules = _owing_rules(hk) or ("PLS-READER-002",)
            return _missed(rules, f"reader {hk.name} reads {key[1]} a second time (steps "
                                  f"{ctx.events[last[0]].step} and {p.step}): it reads each message once, in order")
        return _unclassified("a seek on the reader lies between the two reads")
    if _non_persistent(hk):
        return _missed(("PLS-NP-002",), f"a non-persistent message ({key[1]}) is delivered twice on {sub}")
    causes = _redelivery_causes(ctx, sub, last[0], i)
    if hk.sub_type in ("Exclusive", "Failover"):
        if causes:
            return _unclassified(f"{causes[0]} between the deliveries may rewind the subscription (PLS-NACK-003 / "
                                 "PLS-REDELIVER-001 / PLS-SUB-005)")
        if hk.sub_type == "Exclusive":  # PLS-EXCL-002's detector names "a duplicate of one it already had"
            return _missed(("PLS-EXCL-002",), f"{hk.name} is given {key[1]} again at step {p.step} (first at step "
                                              f"{ctx.events[last[0]].step}) with no rewind between: a duplicate outside a rewind")
        after = [m.payload for j, hh, m in ctx.deliveries if last[0] < j < i and hh.sub_key == sub
                 and ctx.first_delivery(j, sub, message_key(m)) and _ordered_before(msg, m)]
        if after:  # PLS-FAILOVER-003 names order, not duplicates: the copy comes after a later-published message
            return _missed(("PLS-FAILOVER-003",), f"{key[1]} comes again at step {p.step}, after {after[0]} (published "
                                                  "after it) was delivered: out of publish order")
        return _unclassified("a Failover copy right after the first delivery: PLS-FAILOVER-003 states order and who "
                             "gets a message, not duplicates", ("PLS-FAILOVER-003",))
    # Shared / Key_Shared
    faults = [x for x in ctx.events[:i] if x.op.op in FAULT_OPS]
    if holder is not hk and ctx.live(holder, i) and not causes and faults:
        return _unclassified(f"a {faults[0].op.op} at step {faults[0].step}: a consumer may still hold a copy "
                             "prefetched before the reconnect")
    if holder is not hk and ctx.live(holder, i) and not causes:
        rules = ("PLS-SHARED-001",) if hk.sub_type == "Shared" else ("PLS-KEYSHARED-007",)
        return _missed(rules, f"{key[1]}, held unacked by {holder.name} (step {ctx.events[last[0]].step}), is also "
                              f"delivered to {hk.name} at step {p.step}: one consumer at a time")
    if causes:
        return _unclassified(f"{causes[0]} between the deliveries may redeliver it (a redelivery's count and window "
                             "are needed to judge the copy)", ("PLS-ACK-005",))
    return _unclassified(f"{hk.name} is given {key[1]} a second time with the same redelivery count and no request "
                         "between: no registered rule says in words that a Shared consumer is not handed a message it "
                         "holds again", ("PLS-ACK-005", "PLS-SHARED-001"))


def _classify_swap(ctx: _Ctx, p: Perturbation) -> Classification:
    a, b = p.index, p.detail["other"]
    h = ctx.handle_at(a)
    ma, mb = _message_at(ctx, a), _message_at(ctx, b)
    sub = h.sub_key
    ka, kb = message_key(ma), message_key(mb)
    again = [j for j, hh, m in ctx.deliveries if j > a and hh.sub_key == sub and message_key(m) in (ka, kb)
             and j not in (a, b)]
    if again:
        return _unclassified(f"{ctx.events[again[0]].op.op} at step {ctx.events[again[0]].step} delivers one of them "
                             "again: its window counts from the delivery that moved")
    timed = _timing_lies(ctx, _Ctx(p.history), {a: b, b: a})
    if timed is not None:
        return timed
    if not (ctx.first_delivery(a, sub, ka) and ctx.first_delivery(b, sub, kb)):
        return _unclassified("a redelivery is among the two: its place is fixed by its cause's window and its count")
    sb = ctx.sends.get(kb)
    if sb is not None and sb > a:
        return _unclassified(f"{kb[1]} now arrives at step {p.step}, before its send at step {ctx.events[sb].step}: "
                             "causality, which no registered rule states in words")
    if ma.message_id[3] >= 0 or mb.message_id[3] >= 0:
        return _unclassified("a batched message is among the two: a batch is one entry, dispatched by its entry's key "
                             "and unpacked in index order")
    q = _Ctx(p.history)
    new = _inversions(q, h) - _inversions(ctx, h)
    if new:
        (first, later, rules) = sorted(new)[0]
        return _missed(rules, f"{later} (published after {first}) now reaches {h.name} before it")
    if _order_rules(ctx, h, ma, mb):
        return _unclassified("the original delivered these two out of publish order already")
    refs = [(k, x) for k, x in ctx.ops_between(a, b) if ctx.sub_at(k) == sub and x.op.args.get("message") == ka[1]]
    for k, x in refs:
        if x.op.op == "ack" and x.outcome.status == OK and "txn" not in x.op.args:
            gap = ctx.events[b].t_end_ms - x.t_end_ms
            if gap > ctx.grouping:
                return _missed(("PLS-ACK-001",), f"{ka[1]} is acked at step {x.step} and now delivered at step "
                                                 f"{ctx.events[b].step}, {gap:.0f} ms after the ack")
        return _unclassified(f"{x.op.op} of {ka[1]} at step {x.step} now comes before {ka[1]} is received")
    if ctx.delayed_or_txn(ka) or ctx.delayed_or_txn(kb):
        return _unclassified("a delayed or transactional message is among the two")
    if any(x.op.op == "new_txn" for x in ctx.events):
        return _unclassified("an open transaction may hold messages back until it ends (PLS-TXN-003)")
    if h.sub_type == "Shared" or (h.sub_type == "Key_Shared" and _sticky(ma) != _sticky(mb)):
        joins = [x for k, x in ctx.ops_between(a, b) if x.op.op in ("subscribe", "close", "unsubscribe")
                 and ctx.sub_at(k) == sub]
        if h.sub_type == "Key_Shared" and joins:
            return _unclassified(f"{joins[0].op.op} at step {joins[0].step} may move a key between the deliveries")
        return _allowed(f"{h.sub_type}: no rule orders one consumer's first deliveries "
                        f"{'of different keys ' if h.sub_type == 'Key_Shared' else ''}(PLS-SHARED-001 fixes who gets a "
                        "message, not when); both were stored before either receive returned")
    return _unclassified(f"{h.sub_type if h.kind == 'consumer' else 'reader'}: the two messages are on different "
                         "topics or partitions, whose relative order no rule fixes in words")


def _inversions(ctx: _Ctx, h: Any) -> set[tuple[str, str, tuple[str, ...]]]:
    """Pairs of first deliveries to ``h`` in the wrong order where a rule states the order
    (``_order_rules``): (the one published first, the one published after it but delivered first, rules)."""
    firsts = [(i, m) for i, hh, m in ctx.deliveries if (hh.name, hh.step) == (h.name, h.step)
              and ctx.first_delivery(i, h.sub_key, message_key(m))
              and not ctx.delayed_or_txn(message_key(m))]
    out = set()
    for n, (_, x) in enumerate(firsts):
        for _, y in firsts[n + 1:]:
            rules = _order_rules(ctx, h, y, x)
            if rules and _ordered_before(y, x):
                out.add((y.payload, x.payload, rules))
    return out


def _timing_lies(o: _Ctx, q: _Ctx, moved: Mapping[int, int] | None = None) -> Classification | None:
    """A delivery inside its rule's window in ``o`` (nack, ack timeout, delayed delivery) and outside
    it in ``q``; or a delivery after an ack that was inside the ack-grouping band and is past it now.
    ``moved``: index in ``q`` -> index in ``o`` of the same delivery, where deliveries traded places."""
    moved = moved or {}
    before = {t.index: t for t in mutation._timed_deliveries(o.facts)}
    for t in mutation._timed_deliveries(q.facts):
        ot = before.get(moved.get(t.index, t.index))
        if ot is None:
            continue
        at_o, at_q = o.events[ot.index].t_end_ms, q.events[t.index].t_end_ms
        # a receive that began after the window closed gets the message within the band of asking: the
        # window's end, or the receive's start plus the band, whichever is later ("holds it past its window")
        high_o = None if ot.high is None else max(ot.high, o.events[ot.index].t_start_ms + o.band)
        high_q = None if t.high is None else max(t.high, q.events[t.index].t_start_ms + q.band)
        inside_o = ot.low <= at_o and (high_o is None or at_o <= high_o)
        outside_q = at_q < t.low or (high_q is not None and at_q > high_q)
        if inside_o and outside_q:
            side = "before its window opens" if at_q < t.low else "after its window closes"
            rules = t.rules + (t.floor_rules if at_q < t.low else ())
            return _missed(rules, f"the delivery at step {q.events[t.index].step} ({t.cause}) now arrives at "
                                  f"{at_q:.1f} ms, {side} [{t.low:.1f}, "
                                  f"{'-' if high_q is None else format(high_q, '.1f')}] ms (bands included)")
    still = {(k, m.payload) for k, _, m in q.deliveries}
    for k, h, m in o.deliveries:
        if (k, m.payload) not in still:
            continue  # the lie took this delivery away: no copy comes late (drop_delivery)
        acked = _ack_before(o, h.sub_key, m, k)
        if acked is None or acked[1] != "PLS-ACK-001":
            continue
        a = acked[0]
        gap_o = o.events[k].t_end_ms - o.events[a].t_end_ms
        gap_q = q.events[k].t_end_ms - q.events[a].t_end_ms
        if gap_o <= o.grouping < gap_q:
            return _missed(("PLS-ACK-001",), f"{m.payload} comes again at step {o.events[k].step}, now {gap_q:.0f} ms "
                                             f"after its ack at step {o.events[a].step} (was {gap_o:.0f} ms, inside "
                                             f"the {o.grouping:g} ms ack-grouping band)")
    return None


def _timers_across(ctx: _Ctx, cut: int, p: Perturbation) -> list[str]:
    """Time-dependent things in flight across the cut (between event ``cut - 1`` and ``cut``) that the
    window check does not judge: each a reason the shift cannot be called allowed."""
    out: list[str] = []
    events = ctx.events
    n = len(events)
    if cut <= 0:
        return out
    for k in range(cut):
        e = events[k]
        op, a = e.op.op, e.op.args
        if e.outcome.status != OK:
            continue
        if op == "nack":
            sub = ctx.sub_at(k)
            if sub and not any(j > k and j < cut and hh.sub_key == sub and m.payload == a["message"]
                               for j, hh, m in ctx.deliveries):
                out.append(f"nack at step {e.step} not yet redelivered")
        elif op == "send" and ("deliver_after_ms" in a or "deliver_at_ms" in a):
            key = (base_topic(ctx.facts.producer_topic.get(a["producer"], "")), a["payload"])
            if not any(j < cut and message_key(m) == key for j, _, m in ctx.deliveries):
                out.append(f"delayed message {a['payload']} (step {e.step}) not yet delivered")
        elif op in FAULT_OPS:
            out.append(f"{op} at step {e.step} (fault settle and resume windows)")
        elif op == "new_txn":
            tx = a["txn"]
            if not any(events[j].op.op in ("commit_txn", "abort_txn") and events[j].op.args.get("txn") == tx
                       for j in range(k + 1, cut)):
                out.append(f"transaction {tx} open (its timeout, PLS-TXN-005)")
        elif op in ("redeliver_unacked", "close", "seek", "unload_topic", "reconsume_later", "subscribe", "unsubscribe"):
            sub = ctx.sub_at(k)
            if op in ("unload_topic",) or (sub and not any(k < j < cut and hh.sub_key == sub for j, hh, _ in ctx.deliveries)
                                           and any(j >= cut and hh.sub_key == sub for j, hh, _ in ctx.deliveries)):
                if op == "subscribe" and not any(h.sub_key == sub and h.step < e.step for h in ctx.handles_of(sub)) \
                        or op == "subscribe" and any(h.sub_key == sub and h.step < e.step and ctx.live(h, k)
                                                     for h in ctx.handles_of(sub)):
                    continue  # a first subscribe, or one joining connected consumers, asks for nothing to come again
                out.append(f"{op} at step {e.step} whose deliveries come after the cut (a timing band applies)")
        elif op == "create_producer" and (a.get("access_mode") == "WaitForExclusive" or "wait_ms" in a):
            out.append(f"producer {a['producer']} waits for exclusive access (step {e.step})")
    for h in (x for xs in ctx.facts.handles.values() for x in xs):
        if h.kind == "consumer" and h.args.get("ack_timeout_ms") and h.step <= events[min(cut, n - 1)].step:
            out.append(f"{h.name} has an ack timeout")
            break
    ttl = any(e.op.op == "set_policy" and "message_ttl_s" in e.op.args for e in events)
    if ttl or any(e.op.op == "expire_messages" for e in events[cut:]):
        out.append("message TTL / an expiry pass measures ages across the cut")
    # stats right after the cut whose acks or sends right before it were in flight
    for k in range(cut, n):
        e = events[k]
        if e.op.op != "stats":
            continue
        topic = base_topic(e.op.args["topic"])
        if e.t_start_ms - ctx.grouping > events[cut - 1].t_end_ms:
            break
        recent = [x for x in events[:cut] if x.op.op in ("ack", "ack_cumulative", "send", "seek", "nack")
                  and x.t_end_ms >= e.t_start_ms - ctx.grouping
                  and (x.op.op != "send" or base_topic(ctx.facts.producer_topic.get(x.op.args["producer"], "")) == topic)]
        if recent:
            out.append(f"stats at step {e.step} read soon after {recent[-1].op.op} at step {recent[-1].step}")
            break
    return out


def _classify_shift(ctx: _Ctx, p: Perturbation) -> Classification:
    q = _Ctx(p.history)
    timed = _timing_lies(ctx, q)
    if timed is not None:
        return timed
    i = p.index
    mode, delta = p.detail["mode"], p.detail["delta_ms"]
    e = ctx.events[i]
    # the gaps that grow or shrink: before i (tail), after i (end), and before a delivery whose arrival moved
    cuts = {i} if mode == "tail" else {i + 1} | ({i} if e.op.op in _DELIVERY_OPS else set())
    reasons = [r for c in sorted(cuts) if c < len(ctx.events) for r in _timers_across(ctx, c, p)]
    if mode == "end":
        if e.op.op in _DELIVERY_OPS and received_message(e.outcome) is None and delta > 0:
            h = ctx.handle_at(i)
            owed = [m.payload for j, hh, m in ctx.deliveries if j > i and h is not None and hh is h
                    and ctx.sends.get(message_key(m)) is not None
                    and ctx.events[ctx.sends[message_key(m)]].t_end_ms < e.t_start_ms]
            if owed:
                reasons.append(f"the empty receive now waits longer while {owed[0]} (stored before it) was owed")
    if reasons:
        return _unclassified("; ".join(dict.fromkeys(reasons)))
    moved = "it and every later event" if mode == "tail" else "its end" + (" and every later event" if delta > 0 else "")
    return _allowed(f"{moved} move by {delta:+.1f} ms; every delivery a timing rule governs keeps its window, and no "
                    "timer (nack, ack timeout, delayed message, transaction, fault, redelivery request) spans the "
                    "change: no registered rule fixes when the next op happens")


def _redelivery_request(ctx: _Ctx, sub: str, label: str, prev: int, i: int, holder: Any) -> tuple[str, list[str]]:
    """What asked for the redelivery at ``i`` of ``label`` last delivered at ``prev``: ``nack``,
    ``redeliver_unacked``, ``ack_timeout``, ``other`` (a close, reconnect, seek, fault, ...) or ``none``."""
    causes: list[str] = []
    kinds = set()
    for k, e in ctx.ops_between(prev, i):
        if e.op.op in FAULT_OPS or e.op.op in ("unload_topic", "abort_txn"):
            kinds.add("other"); causes.append(f"{e.op.op} at step {e.step}")
        elif ctx.sub_at(k) == sub and e.outcome.status == OK:
            if e.op.op == "nack" and e.op.args["message"] == label:
                kinds.add("nack"); causes.append(f"nack at step {e.step}")
            elif e.op.op == "redeliver_unacked":
                kinds.add("redeliver_unacked"); causes.append(f"redeliver_unacked at step {e.step}")
            elif e.op.op in ("close", "seek", "unsubscribe", "subscribe", "reconsume_later"):
                kinds.add("other"); causes.append(f"{e.op.op} at step {e.step}")
    if not kinds and holder is not None and holder.args.get("ack_timeout_ms"):
        kinds.add("ack_timeout"); causes.append(f"the ack timeout of {holder.name}")
    if not kinds:
        return "none", causes
    return (kinds.pop() if len(kinds) == 1 else "other"), causes


def _classify_redelivery_count(ctx: _Ctx, p: Perturbation) -> Classification:
    i = p.index
    h = ctx.handle_at(i)
    msg = _message_at(ctx, i)
    new = p.new
    if _is_copy(msg):
        return _unclassified("a dead-letter or retry copy: its count is the copy's own (not classified)")
    sub, key = h.sub_key, message_key(msg)
    earlier = ctx.deliveries_of(sub, key, before=i)
    dlq = ctx.dead_letter_max(h)
    extra = ("PLS-DLQ-002",) if dlq is not None and new > dlq and h.sub_type in ("Shared", "Key_Shared") else ()
    if not earlier:
        # (a seek or an admin reset disconnects the subscription's consumers: their prefetched copies go back with +1
        # as a close's do, which the model allows: the held-out campaign of 7 Dec 2026, a Java Key_Shared consumer's
        # first receipt after a seek to earliest)
        unseen = [x for k, x in ctx.ops_between(-1, i) if x.op.op in FAULT_OPS + ("unload_topic",)
                  or (ctx.sub_at(k) == sub and x.op.op in ("redeliver_unacked", "close", "seek"))
                  or (x.op.op == "reset_cursor" and f"{x.op.args.get('topic')}/{x.op.args.get('subscription')}" == sub)]
        if unseen:  # a copy dispatched but never handed to the application may have been redelivered with +1
            return _unclassified(f"{unseen[0].op.op} at step {unseen[0].step} may have redelivered a copy the "
                                 "application never saw (PLS-REDELIVER-001's note: prefetched messages count too)",
                                 ("PLS-ACK-005",))
        if msg.redelivery_count == 0:
            return _missed(("PLS-ACK-005",) + extra, f"the first delivery of {key[1]} on {sub} now has redelivery "
                                                     f"count {new}: it is 0 on first delivery")
        return _unclassified(f"the original first delivery already has count {msg.redelivery_count}")
    prev_i, prev_h, prev_m = earlier[-1]
    cp = prev_m.redelivery_count
    if any(m.message_id[3] >= 0 for _, _, m in ctx.deliveries if m.message_id[0] == msg.message_id[0]
           and m.message_id[1] == msg.message_id[1]):
        return _unclassified("a batched message: a batch-index ack of a sibling resets its count (PLS-ACK-005's note)")
    if h.sub_type in ("Exclusive", "Failover"):
        if msg.redelivery_count == cp:
            rules = ("PLS-ACK-005",) + (("PLS-DLQ-005",) if dlq is not None else ())
            return _missed(rules, f"{key[1]} comes again on {h.sub_type} {sub} with count {new}, was {cp}: a rewind "
                                  "leaves the count unchanged")
        return _unclassified(f"the original count went {cp} -> {msg.redelivery_count} on {h.sub_type}")
    kind, causes = _redelivery_request(ctx, sub, key[1], prev_i, i, prev_h)
    if kind == "redeliver_unacked" and prev_h.client != "java":
        return _unclassified("after redeliver_unacked the C++ client also hands out its queued copy with the old count "
                             "(PLS-REDELIVER-001's note): which copy this is cannot be told", ("PLS-ACK-005",))
    if kind in ("nack", "redeliver_unacked", "ack_timeout") and msg.redelivery_count == cp + 1:
        return _missed(("PLS-ACK-005",) + extra, f"{key[1]} was redelivered on request ({causes[0]}) on "
                                                 f"{h.sub_type}: count {cp} + 1 = {cp + 1}, not {new}")
    if kind == "none":
        return _unclassified(f"no request between the deliveries at steps {ctx.events[prev_i].step} and {p.step}")
    return _unclassified(f"the redelivery came after {', '.join(causes[:2])}: the rules do not fix its count in words")


def _quiet_before(ctx: _Ctx, i: int, topic: str) -> list[str]:
    """Ops on ``topic`` that may still be in flight when stats ``i`` is read (ack grouping plus the band)."""
    e = ctx.events[i]
    out = []
    for k in range(i):
        x = ctx.events[k]
        if x.t_end_ms < e.t_start_ms - ctx.grouping:
            continue
        op = x.op.op
        xt = x.op.args.get("topic")
        if op == "send":
            xt = ctx.facts.producer_topic.get(x.op.args["producer"])
        elif xt is None:
            h = ctx.handle_at(k)
            xt = h.topic if h is not None else None
        if op in ("ack", "ack_cumulative", "send", "seek", "expire_messages", "reconsume_later", "commit_txn",
                  "abort_txn", "unsubscribe", "nack", "receive", "redeliver_unacked", "close", "flush") \
                and (xt is None or base_topic(xt) == topic):
            out.append(f"{op} at step {x.step}")
    return out


def _classify_stats(ctx: _Ctx, p: Perturbation) -> Classification:
    i = p.index
    e = ctx.events[i]
    figure = p.detail["figure"]
    topic = base_topic(e.op.args["topic"])
    sub = f"{e.op.args['topic']}/{e.op.args['subscription']}"
    if figure == "key_hash_ranges":
        hs = [h for h in ctx.handles_of(sub) if h.kind == "consumer"]
        sticky = any((h.args.get("key_shared") or {}).get("mode") == "Sticky" for h in hs)
        cfg = (ctx.history.header.profile or {}).get("broker_config") or {}
        rule = "PLS-KEYSHARED-005" if sticky else "PLS-KEYSHARED-004" \
            if str(cfg.get("subscriptionKeySharedUseConsistentHashing", "true")).lower() == "false" else "PLS-KEYSHARED-003"
        return _missed((rule,), f"the hash ranges a consumer reports follow from the consumers connected ({rule}); "
                                f"they are now {p.new}, not {p.old}")
    if any(x.op.op in ("new_txn",) for x in ctx.events) or topic.startswith("non-persistent"):
        return _unclassified("transactions or a non-persistent topic: stats the classifier does not reason about")
    if any(x.op.op in ("expire_messages", "compact") or (x.op.op == "set_policy" and "message_ttl_s" in x.op.args)
           for x in ctx.events[:i]) or any(x.op.op in FAULT_OPS for x in ctx.events[:i]):
        return _unclassified("an expiry pass, compaction or a fault before the stats: its effect settles after the call "
                             "returns (the checker allows a settle time)")
    inflight = _quiet_before(ctx, i, topic)
    if figure == "backlog":
        if inflight:
            return _unclassified(f"not quiet: {inflight[-1]} within ack grouping plus the band before the stats; "
                                 "PLS-BACKLOG-001 then allows a range", ("PLS-BACKLOG-001",))
        return _missed(("PLS-BACKLOG-001",), f"nothing on {topic} in flight for {ctx.grouping:g} ms before the stats: "
                                             f"msgBacklog is the unacked entries, {p.old} in this history, not {p.new}")
    # unackedMessages (PLS-UNACKED-002: Shared / Key_Shared consumers)
    entry = (e.outcome.value or {})["consumer_unacked"][p.detail["position"]]
    name = entry.get("consumer_name")
    hs = [h for h in ctx.handles_of(sub) if h.kind == "consumer" and ctx.live(h, i)]
    match = [h for h in hs if h.args.get("consumer_name", h.name) == name] or (hs if len(hs) == 1 else [])
    if len(match) != 1:
        return _unclassified(f"the stats consumer {name!r} cannot be matched to one handle")
    h = match[0]
    if h.sub_type not in ("Shared", "Key_Shared"):
        return _allowed(f"{h.sub_type} consumer: no registered rule states its unackedMessages "
                        "(PLS-UNACKED-002 is for Shared and Key_Shared)")
    mine = [(j, m) for j, hh, m in ctx.deliveries if hh is h and j < i]
    ops = [x for k, x in enumerate(ctx.events[:i]) if ctx.handle_at(k) is h and x.op.op not in ("receive", "subscribe")]
    if any(x.op.op not in ("ack",) for x in ops) or any(m.message_id[3] >= 0 for _, m in mine) or \
            any(x.op.op in FAULT_OPS + ("expire_messages", "seek") for x in ctx.events[:i]):
        return _unclassified("nacks, batches, seeks, faults or expiry touch this consumer's count")
    acked = {x.op.args["message"] for x in ops if x.outcome.status == OK}
    held = len({m.payload for _, m in mine} - acked)
    # what the subscription could have dispatched: messages stored after it began (from the first
    # subscribe when Latest, the default; all when Earliest), less those already delivered on it
    first = min(hh.step for hh in ctx.handles_of(sub))
    earliest = any(hh.args.get("initial_position") == "Earliest" for hh in ctx.handles_of(sub) if hh.step == first)
    stored = {(topic, x.op.args["payload"]) for x in ctx.events[:i] if x.op.op == "send" and x.outcome.status == OK
              and base_topic(ctx.facts.producer_topic.get(x.op.args["producer"], "")) == topic
              and (earliest or x.step > first) and (x.outcome.value or {}).get("message_id") != [-1, -1, -1, -1]}
    got = {message_key(m) for j, hh, m in ctx.deliveries if hh.sub_key == sub and j < i}
    queue_room = len(stored - got)
    if h.args.get("receiver_queue_size") is not None:
        queue_room = min(queue_room, int(h.args["receiver_queue_size"]))
    recent_acks = sum(1 for x in ops if x.op.op == "ack" and x.t_end_ms >= e.t_start_ms - ctx.grouping)
    low, high = held, held + queue_room + recent_acks
    if p.new < low:
        return _missed(("PLS-UNACKED-002",), f"{h.name} holds {held} unacked messages, so unackedMessages cannot be "
                                             f"{p.new}")
    if p.new > high:
        return _missed(("PLS-UNACKED-002",), f"{h.name} holds {held}, its receiver queue can hold at most {queue_room} "
                                             f"more and {recent_acks} ack(s) may be in flight: at most {high}, not {p.new}")
    return _allowed(f"{p.new} is within [{low}, {high}]: held unacked, plus what its receiver queue and in-flight acks "
                    "can explain (PLS-UNACKED-002)", ("PLS-UNACKED-002",))


def _classify_sequence(ctx: _Ctx, p: Perturbation) -> Classification:
    i = p.index
    e = ctx.events[i]
    fault = any(x.op.op in FAULT_OPS for x in ctx.events[:i])
    if e.op.op == "create_producer":
        name = e.op.args.get("name")
        dedup = any(x.op.op == "set_policy" and x.op.args.get("deduplication") for x in ctx.events[:i])
        reused = name is not None and any(x.op.op == "create_producer" and x.op.args.get("name") == name
                                          for x in ctx.events[:i])
        rule = "PLS-FAULT-006" if fault and dedup else "PLS-DEDUP-002" if dedup and reused else \
            "PLS-DEDUP-003" if reused else "PLS-PROD-001"
        init = e.op.args.get("initial_sequence_id")
        expected = -1 if rule == "PLS-PROD-001" and (init is None or (init == 0 and ctx.client == "python")) else init \
            if rule == "PLS-PROD-001" else None
        if expected is not None and p.old != expected:
            return _unclassified(f"the original reported {p.old}, not the {expected} this classifier expects")
        return _missed((rule,), f"a new producer's last_sequence_id is fixed by {rule} given this history "
                                f"({p.old}); it is now {p.new}")
    prod = e.op.args["producer"]
    topic = ctx.facts.producer_topic.get(prod, "")
    if any(x.op.op == "create_topic" and x.op.args.get("topic") == topic and x.op.args.get("partitions")
           for x in ctx.events):
        return _unclassified("a partitioned topic: the client numbers each partition's messages on its own (the "
                             "original shows it), which PLS-PROD-001's text does not say", ("PLS-PROD-001",))
    explicit = e.op.args.get("sequence_id")
    if explicit is not None and not (explicit == 0 and ctx.client == "python"):
        if p.old == explicit:
            return _missed(("PLS-PROD-001",), f"the send gave sequence_id {explicit} explicitly; it reports {p.new}")
        return _unclassified("the original did not report the explicit sequence id")
    # the generator: the producer's last_sequence_id at creation, then +1 per generated id
    start = None
    last = None
    for k in range(i):
        x = ctx.events[k]
        if x.op.op == "create_producer" and x.op.args.get("producer") == prod and x.outcome.status == OK:
            start = (x.outcome.value or {}).get("last_sequence_id")
            last = start
        elif x.op.op == "send" and x.op.args.get("producer") == prod and x.outcome.status == OK \
                and x.op.args.get("sequence_id") in (None, 0 if ctx.client == "python" else None):
            last = (x.outcome.value or {}).get("sequence_id", last)
    if last is None or fault:
        return _unclassified("the producer's generator cannot be followed here (no start, or a fault between)")
    if p.old != last + 1:
        return _unclassified(f"the original sequence id {p.old} is not the previous one + 1 ({last + 1})")
    return _missed(("PLS-PROD-001",), f"producer {prod}'s generated sequence ids go +1 per message: {last} then "
                                      f"{last + 1}, not {p.new}")


def _classify_message_id(ctx: _Ctx, p: Perturbation) -> Classification:
    i = p.index
    where = p.detail["where"]
    new = list(p.new)
    if where == "received":
        msg = _message_at(ctx, i)
        h = ctx.handle_at(i)
        key = message_key(msg)
        if _non_persistent(h) and not (new[0] == 0 and new[1] == 0):
            return _missed(("PLS-NP-003",), f"a non-persistent message's id is (0,0,partition,batch): now {new}")
        partitioned = msg.topic != base_topic(msg.topic)
        if not partitioned and new[2] != -1:
            return _missed(("PLS-MSGID-001",), f"partition -1 on a non-partitioned topic; the id is now {new}")
        sent = ctx.send_ids.get(key)
        if sent is not None and not _is_copy(msg):
            if list(msg.message_id) == sent:
                return _missed(("PLS-MSGID-001",), f"{key[1]}'s send returned {sent}; the consumer now reports {new}")
            return _unclassified(f"the original received id {list(msg.message_id)} already differs from the send's {sent}")
        same = [m for _, _, m in ctx.deliveries if message_key(m) == key and m.topic == msg.topic]
        if len({tuple(m.message_id) for m in same}) == 1 and len(same) > 1:
            return _unclassified(f"{key[1]} is received elsewhere with id {list(msg.message_id)}: one message, two ids, "
                                 "but the rule text ties an id to its send, which reported none (a copy)", ("PLS-MSGID-001",))
        return _unclassified("the only observation of this message's id (a copy, or a send that reported none)")
    label = p.detail["label"] if where == "flush" else ctx.events[i].op.args["payload"]
    topic = base_topic(ctx.facts.producer_topic.get(ctx.events[i].op.args["producer"], ""))
    key = (topic, label)
    old = list(p.old)
    if old == [-1, -1, -1, -1]:
        return _missed(("PLS-DEDUP-001",), "a deduplicated send returns (-1,-1,-1,-1); it now returns " + str(new))
    received = [m for _, _, m in ctx.deliveries if message_key(m) == key and not _is_copy(m)]
    if any(list(m.message_id) == old for m in received):
        return _missed(("PLS-MSGID-001",), f"{label} is received with id {old}, the id its send returned before the "
                                           f"change; the send now returns {new}")
    if topic.startswith("non-persistent"):
        return _missed(("PLS-NP-003",), f"a non-persistent send returns (0,0,partition,-1); now {new}")
    if where == "flush" or old[3] >= 0 or new[3] >= 0:
        return _unclassified("a batched or flushed id: the batch rules judge relative ids the classifier does not rebuild")
    same_topic = [(k, ctx.send_ids[kk]) for kk, k in sorted(ctx.sends.items(), key=lambda x: x[1])
                  if kk[0] == topic and kk in ctx.send_ids and ctx.send_ids[kk][2] == old[2]]
    before = [x for k, x in same_topic if k < i and x != [-1, -1, -1, -1]]
    after = [x for k, x in same_topic if k > i and x != [-1, -1, -1, -1]]
    ko = lambda x: (x[0], x[1], x[3])  # noqa: E731
    if new[2] != old[2] and old[2] == -1:
        return _missed(("PLS-MSGID-001",), f"partition -1 on a non-partitioned topic; the send now returns {new}")
    if (before and ko(new) <= ko(before[-1])) or (after and ko(new) >= ko(after[0])):
        return _missed(("PLS-MSGID-002",), f"{new} no longer sorts between the ids sent before and after it on "
                                           f"{topic} ({before[-1] if before else '-'}, {after[0] if after else '-'})")
    return _unclassified(f"{new} still sorts in publish order; PLS-MSGID-002's note says entries grow by one per "
                         "entry, which no detector states as a rule")


def _send_of(ctx: _Ctx, msg: Any) -> Event | None:
    s = ctx.sends.get(message_key(msg))
    return None if s is None else ctx.events[s]


def _classify_message_fields(ctx: _Ctx, p: Perturbation) -> Classification:
    i = p.index
    msg = _message_at(ctx, i)
    send = _send_of(ctx, msg)
    copy = _is_copy(msg)
    kind = p.kind
    if kind == "payload_label" and copy:
        rule = "PLS-RETRY-002" if msg.topic.endswith("-RETRY") or "RECONSUMETIMES" in msg.properties else "PLS-DLQ-003"
        return _missed((rule,), f"a copy has the original's payload ({p.old}); it now says {p.new}")
    if kind == "payload_label":
        new = p.new
        if not any(label == new for (_, label) in ctx.sends):
            return _missed(("PLS-MSG-001",), f"no send in the history has payload {new!r}")
        other = ctx.sends.get((base_topic(msg.topic), new))
        if other is None:
            return _missed(("PLS-MSG-001",), f"{new!r} was sent to another topic, not {base_topic(msg.topic)}")
        oid = ctx.send_ids.get((base_topic(msg.topic), new))
        if oid is not None and oid != list(msg.message_id) and not copy:
            return _missed(("PLS-MSGID-001",), f"{new}'s send returned {oid}; this delivery carries "
                                               f"{list(msg.message_id)}")
        oa = ctx.events[other].op.args
        sent = (oa.get("key"), oa.get("ordering_key"), oa.get("properties") or {})
        if sent != (msg.key, msg.ordering_key, dict(msg.properties)) and not copy:
            return _missed(("PLS-MSG-001",), f"{new}'s send had other keys or properties than this delivery")
        return _unclassified(f"{new} and {msg.payload} cannot be told apart by the other fields here")
    if copy:
        props = "properties" if kind == "property_value" else ("keys" if kind == "key" else "")
        if props:
            rule = "PLS-RETRY-002" if msg.topic.endswith("-RETRY") or "RECONSUMETIMES" in msg.properties else "PLS-DLQ-003"
            k = p.detail.get("property")
            if kind == "property_value" and k == "ORIGIN_MESSAGE_IDY_TIME" and p.detail.get("change") == "change":
                return _unclassified("the value of ORIGIN_MESSAGE_IDY_TIME is not stated by the rule")
            return _missed((rule,), f"a copy carries the original's {props} and the listed properties ({rule}); "
                                    f"{p.field} changed")
        return _unclassified("a dead-letter or retry copy's own field (not classified)")
    if send is None:
        return _unclassified("the message's send is not in the history")
    a = send.op.args
    if kind == "property_value":
        if dict(a.get("properties") or {}) == dict(p.old):
            return _missed(("PLS-MSG-001",), f"properties arrive unchanged: sent {a.get('properties') or {}}, now "
                                             f"{p.new}")
        return _unclassified("the original's properties already differ from the send's")
    if kind == "key":
        name = p.detail["name"]
        if a.get(name) == p.old:
            return _missed(("PLS-MSG-001",), f"the {name.replace('_', ' ')} arrives unchanged: sent {a.get(name)!r}, "
                                             f"now {p.new!r}")
        return _unclassified(f"the original's {name} already differs from the send's")
    name = p.detail["name"]  # message_field
    if name == "event_time":
        if int(a.get("event_time") or 0) == p.old:
            return _missed(("PLS-MSG-001",), f"event time arrives unchanged ({p.old}, 0 when unset); now {p.new}")
        return _unclassified("the original's event time already differs from the send's")
    if name == "producer_name":
        made = [x for x in ctx.events[: ctx.sends[message_key(msg)]] if x.op.op == "create_producer"
                and x.op.args.get("producer") == a["producer"] and x.outcome.status == OK]
        pn = (made[-1].outcome.value or {}).get("producer_name") if made else None
        if pn is not None and pn == p.old:
            return _missed(("PLS-MSG-001",), f"the producer name is {pn}, the name its producer reported; now {p.new}")
        return _unclassified("the producer's name is not reported, or already differs")
    # publish_time: fixed when it is observed elsewhere (the send's value, another delivery)
    sent_pt = (send.outcome.value or {}).get("publish_time")
    others = [m.publish_time for j, _, m in ctx.deliveries if j != i and message_key(m) == message_key(msg)
              and not _is_copy(m)]
    if (sent_pt is not None and sent_pt == p.old) or (others and all(x == p.old for x in others)):
        where = "its send reported it" if sent_pt == p.old else f"{len(others)} other deliveries of it say so"
        return _missed(("PLS-MSG-001",), f"{msg.payload}'s publish time is {p.old} ({where}); this delivery now "
                                         f"says {p.new}")
    # a batch is one entry with one metadata: its other members' deliveries show the publish time too (not on a
    # non-persistent topic, whose ids are all (0, 0, p, i) and name no entry)
    entry = tuple(msg.message_id)[:3]
    members = [m.publish_time for j, h, m in ctx.deliveries if j != i and msg.message_id[3] >= 0 and not _is_copy(m)
               and m.message_id[3] >= 0 and tuple(m.message_id)[:3] == entry and m.topic == msg.topic
               and not _non_persistent(h) and not m.topic.startswith("non-persistent://") and message_key(m) != message_key(msg)]
    if members and all(x == p.old for x in members):
        return _missed(("PLS-MSG-001",), f"{msg.payload} is in one batch entry with {len(members)} other deliveries that "
                                         f"show publish time {p.old}; this delivery now says {p.new}")
    if any(x.op.op == "seek" and "publish_time_of" in x.op.args for x in ctx.events):
        return _unclassified("a seek by publish time reads publish times")
    return _allowed(f"the only observation of {msg.payload}'s publish time: a broker could have stamped {p.new}")


def _classify_schema(ctx: _Ctx, p: Perturbation) -> Classification:
    e = ctx.events[p.index]
    if e.op.op == "get_schemas":
        deleted = any(x.op.op == "delete_schema" for x in ctx.events[: p.index])
        rule = "PLS-SCHEMA-021" if deleted else "PLS-SCHEMA-001"
        return _missed((rule,), f"the admin lists the live versions the trace stored, numbered from 0 ({rule}); "
                                f"{p.old} became {p.new}")
    msg = _message_at(ctx, p.index)
    if _is_copy(msg):
        return _unclassified("a dead-letter or retry copy's schema version (not classified)")
    h = ctx.handle_at(p.index)
    if h is not None and h.client == "go":
        return _unclassified("Go reports no schema version on unbatched messages (KD-504)")
    if p.old is None:
        send = _send_of(ctx, msg)
        schema = None
        if send is not None:
            made = [x for x in ctx.events if x.op.op == "create_producer" and x.op.args.get("producer") == send.op.args["producer"]]
            schema = made[0].op.args.get("schema") if made else None
        if schema is None or schema.get("type") == "BYTES":
            return _missed(("PLS-SCHEMA-023",), "a message of a producer without a schema carries no schema version; "
                                                f"it now carries {p.new}")
        return _unclassified("the producer had a schema yet the original carries none")
    return _missed(("PLS-SCHEMA-023",), f"the message carries the version its producer was given ({p.old}); now {p.new}")


_RULES = {r.id: r for r in RULES}
_REFUSAL_WORDS = ("refused", "fails", "error", "succeeds", "accepted", "let in", "is built")


def _rules_naming(ctx: _Ctx, i: int, error: str) -> tuple[str, ...]:
    """The rules that state the refusal of op ``i`` with ``error``: those whose detector judges the op,
    whose "Violated if" sentence names the error and which apply to the handle's client; narrowed to
    the rules the history's case declares (its header) when some are among them, else the declared
    rules that judge the op's refusals."""
    op = ctx.events[i].op.op
    args = ctx.events[i].op.args
    client = args.get("client") or ctx.history.header.client or "python"
    client = "python" if client in ("cpp", "python", "mixed") else client
    word = re.compile(r"\b" + re.escape(error.lower()) + r"\b")
    naming = [r for r, d in DETECTORS.items() if op in d.steps and word.search(d.violated_if.lower())
              and client in _RULES[r].applies_to.clients]
    declared = set(ctx.history.header.rules)
    if declared & set(naming):
        return tuple(r for r in naming if r in declared)
    judged = [r for r in declared if r in DETECTORS and op in DETECTORS[r].steps
              and any(w in DETECTORS[r].violated_if.lower() for w in _REFUSAL_WORDS)]
    return tuple(sorted(judged)) or tuple(naming)


def _classify_error(ctx: _Ctx, p: Perturbation) -> Classification:
    e = ctx.events[p.index]
    op = e.op.op
    if p.kind == "error_kind" or p.detail.get("to") == "ok":
        rules = _rules_naming(ctx, p.index, e.outcome.error)
        if not rules:
            return _unclassified(f"no registered rule names {e.outcome.error} for {op}: the refusal is not one a rule "
                                 "states")
        what = f"refused with {p.new}" if p.kind == "error_kind" else "accepted"
        return _missed(rules, f"{op} was refused with {e.outcome.error}, the error these rules name for it; now {what}")
    # ok -> rejected
    err = p.detail["error"]
    if op in ("subscribe", "close"):
        return _missed(("PLS-SUB-001",), f"the {op} the original accepted (and the rules accept given this history) "
                                         f"is now refused with {err}")
    if op == "unsubscribe":
        return _missed(("PLS-SUB-006",), f"the unsubscribe is now refused with {err}")
    if op == "ack":
        sub = ctx.sub_at(p.index)
        label = e.op.args["message"]
        if any(x.op.op == "ack" and x.op.args.get("message") == label and x.outcome.status == OK
               and ctx.sub_at(k) == sub for k, x in enumerate(ctx.events[: p.index])):
            return _missed(("PLS-ACK-004",), f"acking {label} again is a no-op without an error; it now fails with {err}")
        return _unclassified(f"no registered rule says a first ack cannot fail ({err})")
    if op == "create_producer" and err in ("ProducerBusy", "ProducerFenced") \
            and e.op.args.get("access_mode", "Shared") == "Shared":
        others = [x for x in ctx.events[: p.index] if x.op.op == "create_producer" and x.outcome.status == OK
                  and x.op.args.get("topic") == e.op.args["topic"] and x.op.args.get("access_mode", "Shared") != "Shared"]
        named = e.op.args.get("name") is not None
        if not others and not named:
            return _missed(("PLS-ACCESS-001",), f"only Shared producers are on {e.op.args['topic']}: a Shared producer "
                                                f"is not refused for its access mode ({err})")
    return _unclassified(f"no registered rule says in words that this {op} succeeds (now {err})")


def _classify_reconnect(ctx: _Ctx, p: Perturbation) -> Classification:
    return _allowed(f"{p.field} is the harness's measurement of the reconnect, not a broker observation a rule states")


_CLASSIFIERS: dict[str, Callable[[_Ctx, Perturbation], Classification]] = {
    "drop_delivery": _classify_drop,
    "duplicate_delivery": _classify_duplicate,
    "swap_deliveries": _classify_swap,
    "shift_time": _classify_shift,
    "redelivery_count": _classify_redelivery_count,
    "stats_count": _classify_stats,
    "stats_figure": _classify_stats,
    "reconnect_figure": _classify_reconnect,
    "sequence_id": _classify_sequence,
    "message_id": _classify_message_id,
    "property_value": _classify_message_fields,
    "key": _classify_message_fields,
    "payload_label": _classify_message_fields,
    "message_field": _classify_message_fields,
    "schema_version": _classify_schema,
    "error_kind": _classify_error,
    "outcome_status": _classify_error,
}


def classify(original: History, p: Perturbation, baseline_fails: Iterable[str] = (), *,
             ctx: _Ctx | None = None, failed_steps: Iterable[int] = ()) -> Classification:
    """Classify ``p`` from the rule texts and ``original`` alone: ``allowed``, ``missed`` (naming the
    rules it contradicts) or ``unclassified``; a ``missed`` whose rules the original already FAILs, or
    at a step where the original already FAILs (``failed_steps``), is ``unclassified`` (masked).
    ``ctx``: the original's facts, when the caller built them once."""
    ctx = ctx or _Ctx(original)
    if p.kind in ("drop_delivery", "swap_deliveries", "redelivery_count", "property_value", "key", "payload_label",
                  "message_field") and ctx.handle_at(p.index) is None:
        return _unclassified("the delivery's handle is not known (its creation failed)")
    try:
        c = _CLASSIFIERS[p.kind](ctx, p)
    except (KeyError, IndexError, TypeError, ValueError) as err:  # a history shape the reasoning does not know
        return _unclassified(f"the classifier could not read this history ({type(err).__name__}: {err})")
    return _masked(c, set(baseline_fails), p.step, set(failed_steps))


# --------------------------------------------------------------------------- judging


def fails_of(report: CheckReport) -> set[str]:
    return {v.rule_id for v in report.verdicts if v.status == FAIL}


def judge(original: History, p: Perturbation, base: CheckReport | None = None, *, ctx: _Ctx | None = None) -> dict[str, Any]:
    """Check ``p``'s history and say whether the lie was caught (a rule FAILs that did not FAIL on
    ``original``), on a covering rule or elsewhere; classify it either way (a caught lie classified
    ``allowed`` is a possible false alarm of the checker)."""
    base = base or check(original)
    base_fails = fails_of(base)
    base_indets = {v.rule_id for v in base.verdicts if v.status == INDET}
    covering = covering_rules(p)
    out: dict[str, Any] = {**p.to_json(), "covering_rules": sorted(covering)}
    try:
        report = check(p.history)
    except Exception as err:  # the checker crashed on a well-formed history: a finding in itself
        out.update(outcome=CRASHED, new_fails=[], new_indets=[], crash=f"{type(err).__name__}: {err}")
    else:
        new = fails_of(report) - base_fails
        out["new_fails"] = sorted(new)
        out["new_indets"] = sorted({v.rule_id for v in report.verdicts if v.status == INDET} - base_indets - new)
        out["outcome"] = SURVIVED if not new else CAUGHT_COVERING if new & covering else CAUGHT_ELSEWHERE
        step = p.history.events[p.index].step
        # the checker said it does not follow the perturbed step (a NotModelledError there): the run lists it, by reason
        out["not_followed"] = next((nf.reason for nf in report.not_followed if nf.step == step), None)
    failed_steps = {v.step for v in base.verdicts if v.status == FAIL and v.step is not None}
    out["classification"] = classify(original, p, base_fails, ctx=ctx, failed_steps=failed_steps).to_json()
    return out
