"""Mutation operators over recorded histories: how much does the checker catch?

Each operator takes a ``History`` that a target really produced and returns ``Mutant`` s: the
same history with one deliberate lie in it (a redelivery that comes too early, a delivery that
never came, a duplicate, two same-key messages swapped, ...). A mutant says which rules it is
*meant* to break, and that set is derived from the history's own ops (the subscription type, the
client, the consumer's configuration, the op that caused a redelivery) and the rule registry,
never from what the checker says. ``benchmarks/mutation_score.py`` then asks
``conformance.checker.check`` about every mutant and counts what it caught.

Rule ids: the operators target PLS-NACK-001/004/005, PLS-ACKTIMEOUT-002/004/005, PLS-DELAY-001/
003/004/005, PLS-EXCL-002, PLS-PROD-002, PLS-FAILOVER-003/004, PLS-SHARED-001,
PLS-KEYSHARED-003/004/005/007 (deliveries; 003/004/005 also the hash ranges stats report),
PLS-READER-001..004, PLS-SEEK-001..003, PLS-ACK-001/002/005, PLS-BACKLOG-001, PLS-DLQ-002,
PLS-TTL-001/003, PLS-COMPACT-001/003, PLS-NP-001/002/004, and the rules behind each rejection
(``_REJECTION_RULES``). Feature lies: ``change_flush_ids`` (PLS-BATCH-001/002/003/007/008,
PLS-DELAY-006: a flush's entries and batch indexes), ``change_send_outcome`` (PLS-DEDUP-001/003/004/
005/006, PLS-CHUNK-002/005: a send's duplicate verdict, last_sequence_id, chunk id),
``deliver_chunk_alone`` (PLS-CHUNK-001), ``change_message_field`` of a key given as bytes (PLS-MSG-002: the hex
shown as a text key); PLS-BATCH-004 (drop_delivery of an acked batch member's
redelivery without batch index ack), PLS-BATCH-005 (deliver_acked with batch index ack), PLS-BATCH-010 (``deliver_entry_acked_by_producer_id``: a sibling of an entry an ack
by the producer's id took, delivered to the consumer that took the subscription over), PLS-DELAY-002
(reorder_same_key holding a delayed message back on Exclusive/Failover), PLS-CHUNK-004 (the
chunking+batching refusal accepted or misnamed). Dead letters, retention and the rest:
PLS-DLQ-001/RETRY-001 (``change_message_field`` moves a copy to the pre-#9327 name), PLS-DLQ-004
(``drop_initial_subscription``), PLS-DLQ-005 (``change_redelivery_count`` on an Exclusive/Failover
dead-letter consumer), PLS-DLQ-006 (``drop_dlq_copy`` of a batch sibling), PLS-DLQ-007 (the
max_redeliver_count refusal accepted or misnamed), PLS-NACK-002 (``shift_delivery_earlier`` under a
delay below the floor), PLS-TTL-002 (``expiry_pass_kept``), PLS-RETENTION-001 (``delete_without_rollover``,
``drop_delivery`` with no ledger rollover), PLS-RETENTION-002 (``drop_delivery`` under retention),
PLS-COMPACT-006 (``read_tombstone``: a tombstone that deleted its key read from the compacted view), PLS-SHARED-003 (``move_to_lower_priority``), PLS-KEYSHARED-001/002
(``misroute_key_shared``), PLS-KEYSHARED-006 (``deliver_before_drained``: a moved hash reaches its new owner
while the old one still holds a message of it), PLS-TOPIC-001 (``refuse_short_topic_name``), PLS-SUB-006
(``stats_after_unsubscribe``), PLS-TOPIC-004 (a delete's refusal accepted, ``accept_rejected``, or its success refused,
``reject_ok_op``), PLS-TOPIC-005, PLS-SEEK-004, PLS-SKIP-001/002 (``deliver_admin_removed``: a message a delete, a reset, a
skip or a clear took away comes after it; PLS-TOPIC-005 also stats on a deleted subscription misnamed,
``change_error_name``), PLS-UNACKED-002/003 (``change_unacked_count``), PLS-UNACKED-001 (``drop_delivery``
after the acks that unblocked a consumer under maxUnackedMessagesPerConsumer). Transactions:
PLS-TXN-001/002/003 (``deliver_through_transaction``: an empty receive shows a message of an open or an
aborted transaction, or one held back behind an open transaction's first message), PLS-TXN-005
(``keep_held_after_timeout``), PLS-TXN-007/008 (``deliver_acked`` of a message acked in a transaction,
open or committed), PLS-TXN-009 (``drop_abort_redelivery``), PLS-RETRY-004 (``drop_failed_reconsume_redelivery``), PLS-TXN-004/006/010/011 (refusals accepted or
misnamed). Schemas: the registry's refusals accepted or misnamed (``_schema_rejection_rules``: PLS-SCHEMA-004/005/
007/008/010/015/016/019/020/022, and PLS-SCHEMA-024 for the Python client's InvalidArgument on KEY_VALUE /
AUTO_CONSUME), ``refuse_schema_admission`` (an admitted producer or consumer that meets a schema refused with
IncompatibleSchema: PLS-SCHEMA-002/003/004/005/006/009/010/016/017/018/019/021), ``change_schema_versions``
(PLS-SCHEMA-001/021: a get_schemas answer with a version renumbered, left out or made up), ``change_schema_version``
(PLS-SCHEMA-023: a received message's schema version). Their rules come from the ops alone (the namespace's schema
policies, the schemas earlier ok producers and consumers brought to the topic, its use, its delete_schema ops; see
``_schema_views``), with the schema chapter's pure ``parse_avro`` and ``same_schema`` to tell an invalid or an
identical schema.

Honesty: a mutant the spec still allows is not a checker miss. Every operator classifies its
mutants: ``allowed`` carries the reason when the lie is one Pulsar is allowed to tell (a
redelivery shifted but still inside its window, a backlog one higher while an ack may still be
in the client's ack-grouping buffer, ...). Those are counted apart.

Choices:
- A delivery's time is the ``t_end_ms`` of its receive. Shifting one later moves every later
  event by the same amount (so the history stays in time order) and widens that receive's
  ``timeout_ms`` to cover its new duration; shifting one earlier moves only that receive's end
  (and its start, if needed), never before the previous event's end.
- Windows are judged with the measurement slack of ``Tolerances.for_target`` (dispatch latency
  late, ``early_ms`` early): a lie inside the slack is "allowed", since no observer can tell it
  from the truth. Bounds are taken conservatively (early: from the cause op's *start*; late: from
  its *end*), so a mutant is only "meant to break" when it breaks under every reading.
- A receive that waited longer than the dispatch tolerance while a message was available and
  owed to it, and got nothing, breaks the delivery rule (the suite's reading of "receives every
  message"; Pulsar states no latency bound, so receives shorter than the tolerance are "allowed").
- Steps in ``Mutant.steps`` are those of the *original* history; ops inserted or removed are
  renumbered so the mutant is a well-formed history.

Not modelled: mutations of admin ops (but a get_schemas answer), and of sends and producers beyond their reported outcome
(ids, duplicate verdicts, sequence ids, flush ids; the operators otherwise lie only about what
consumers, readers and stats observed (backlog, Key_Shared hash ranges), and about rejection
names; and, to tell a retention or expiry lie, an unload taken out or stats put in); a chunked payload's bytes (a delivery carries the send's label only, so a changed payload
is a label no send produced, PLS-MSG-001's); redelivery-count lies on DLQ/retry copies; timing lies on ``redeliver_unacked``
(REDELIVER-001 states no deadline).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping

from conformance.checker import Tolerances
from conformance.trace import (
    OK,
    REJECTED,
    Event,
    History,
    ObservedMessage,
    Op,
    Outcome,
    received_message,
)
from reference_model import dead_letter as dl
from reference_model import schema as schema_chapter
from reference_model import transactions as txn_model
from reference_model import vendors
from reference_model.timing import Span
from reference_model import names
from reference_model import unacked
from reference_model.profiles import go_missing, profile_for
from reference_model.rules import RULES
from reference_model.spec import ack_timeout_redelivery_window_ms, nack_backoff_delay_ms, nack_redelivery_window_ms

ACTIVE_RULES = frozenset(r.id for r in RULES if r.status != "withdrawn")


@dataclass(frozen=True)
class Mutant:
    """One lie in a history: what changed, where, and which rules it is meant to break."""

    history: History
    operator: str
    steps: tuple[int, ...]
    meant_to_break: tuple[str, ...]
    description: str
    allowed: str | None = None  # not None: the spec still allows this history, and why
    unstated: str | None = None  # not None: Pulsar does not allow it, but no registered rule states it

    def to_json(self) -> dict[str, Any]:
        return {"operator": self.operator, "trace_id": self.history.header.trace_id, "steps": list(self.steps),
                "meant_to_break": list(self.meant_to_break), "description": self.description, "allowed": self.allowed,
                "unstated": self.unstated}


# --------------------------------------------------------------------------- history facts


@dataclass
class _Handle:
    name: str
    kind: str  # consumer | reader
    args: Mapping[str, Any]
    step: int
    client: str
    closed_step: int | None = None

    @property
    def sub_key(self) -> str:
        if self.kind == "reader":
            return f"reader:{self.name}"
        topic = self.args.get("topic") or ",".join(self.args.get("topics") or []) or self.args.get("topics_pattern", "")
        return f"{topic}/{self.args['subscription']}"

    @property
    def sub_type(self) -> str:
        return "Reader" if self.kind == "reader" else self.args.get("type", "Exclusive")

    @property
    def topic(self) -> str:
        return self.args.get("topic") or ""


@dataclass
class _Facts:
    """What a history did, indexed for the operators (built once per history)."""

    history: History
    handles: dict[str, list[_Handle]] = field(default_factory=dict)  # name -> incarnations
    by_step: dict[int, _Handle] = field(default_factory=dict)  # receive/ack/... step -> the handle it used
    sends: dict[str, int] = field(default_factory=dict)  # label -> index of its ok send
    producer_topic: dict[str, str] = field(default_factory=dict)
    schema_views: "dict[int, _SchemaView] | None" = None  # built on first use (_schema_views)
    # (event index, partitioned parent or None for the namespace, on; None: the topic and its policies deleted)
    dedup_policies: list[tuple[int, str | None, bool | None]] = field(default_factory=list)

    def handle_at(self, index: int) -> _Handle | None:
        return self.by_step.get(self.history.events[index].step)

    def deduplication(self, index: int, topic: str) -> tuple[bool, bool]:
        """(whether deduplication is on for ``topic`` before event ``index``, the namespace's): a topic's own
        policy decides over its namespace's, a partition follows its partitioned topic's (PLS-POLICY-001)."""
        namespace, own = False, {}
        for at, where, on in self.dedup_policies:
            if at >= index:
                break
            if where is None:
                namespace = bool(on)
            elif on is None:
                own.pop(where, None)
            else:
                own[where] = on
        return own.get(names.partitioned_parent(topic), namespace), namespace

    @property
    def client(self) -> str:
        c = self.history.header.client or "python"
        return "python" if c in ("cpp", "python") else c


def _client_of(args: Mapping[str, Any], header_client: str | None) -> str:
    c = args.get("client") or header_client or "python"
    return c if c in ("java", "go") else "python"


def facts(history: History) -> _Facts:
    f = _Facts(history)
    live: dict[str, _Handle] = {}
    for i, e in enumerate(history.events):
        op, args = e.op.op, e.op.args
        if op in ("subscribe", "create_reader") and e.outcome.status == OK:
            kind = "consumer" if op == "subscribe" else "reader"
            h = _Handle(args[kind], kind, args, e.step, _client_of(args, history.header.client))
            f.handles.setdefault(h.name, []).append(h)
            live[h.name] = h
        elif op == "create_producer" and e.outcome.status == OK:
            f.producer_topic[args["producer"]] = args["topic"]
        elif op == "send" and e.outcome.status == OK:
            f.sends.setdefault(args["payload"], i)
        elif op == "set_policy" and "deduplication" in args and e.outcome.status == OK:
            where = names.partitioned_parent(args["topic"]) if "topic" in args else None
            f.dedup_policies.append((i, where, bool(args["deduplication"])))
        elif op == "delete_topic" and e.outcome.status == OK:
            f.dedup_policies.append((i, names.partitioned_parent(args["topic"]), None))
        name = args.get("consumer") or args.get("reader") or args.get("handle")
        if name in live:
            f.by_step[e.step] = live[name]
            if op in ("close", "unsubscribe"):
                live[name].closed_step = e.step
                del live[name]
    return f


def _delivery(e: Event) -> ObservedMessage | None:
    if e.op.op not in ("receive", "read_next"):
        return None
    return received_message(e.outcome)


def _deliveries(f: _Facts) -> list[tuple[int, _Handle, ObservedMessage]]:
    out = []
    for i, e in enumerate(f.history.events):
        msg = _delivery(e)
        h = f.handle_at(i)
        if msg is not None and h is not None:
            out.append((i, h, msg))
    return out


def _sticky_key(msg: ObservedMessage, f: "_Facts | None" = None) -> str | None:
    """The key a Key_Shared subscription routes ``msg`` by, as a comparable text. A key given as bytes (PLS-MSG-002) is
    its bytes, not its Base64 text (which a text key may share): known from its send's ``key_bytes`` (a C++/Python
    consumer reports the text only), or from the ``key_bytes`` a Java consumer reported."""
    if msg.ordering_key:
        return msg.ordering_key
    sent = f.history.events[f.sends[msg.payload]].op.args if f is not None and msg.payload in f.sends else {}
    binary = sent.get("key_bytes") or msg.key_bytes
    return f"bytes:{binary.lower()}" if binary else msg.key


def _is_copy(msg: ObservedMessage) -> bool:
    """A DLQ or retry copy made by the client (its own topic, its own counts)."""
    return msg.topic.endswith("-DLQ") or msg.topic.endswith("-RETRY") or "ORIGIN_MESSAGE_ID" in msg.properties


def _dead_letter_topics(f: _Facts) -> set[str]:
    """The topics the history's dead-letter policies copy to: the named one, else the default
    ``<topic>-<subscription>-DLQ`` (the generator names ``dlq``, which ends in no suffix)."""
    out = set()
    for c in (x for xs in f.handles.values() for x in xs):
        dead = c.args.get("dead_letter") if c.kind == "consumer" else None
        if dead:
            out.add(dead.get("topic") or f"{c.topic}-{c.args.get('subscription')}-DLQ")
    return out


_GO_PROFILE = profile_for(None, "go")


def _dlq_count_rule(f: _Facts) -> str:
    """The rule that counts a dead-letter policy's deliveries: PLS-DLQ-008 for Go consumers (MaxDeliveries)."""
    go = any(x.client == "go" and x.args.get("dead_letter") for xs in f.handles.values() for x in xs)
    return "PLS-DLQ-008" if go else "PLS-DLQ-002"


def _is_dead_letter_copy(f: _Facts, msg: ObservedMessage) -> bool:
    return msg.topic.endswith("-DLQ") or msg.topic in _dead_letter_topics(f)


def _non_persistent(h: _Handle) -> bool:
    return h.topic.startswith("non-persistent://")


def _delivery_rules(h: _Handle, f: _Facts, index: int) -> tuple[str, ...]:
    """The rules that say what ``h`` is owed next: its type's, its reader's, a seek's, compaction's."""
    events = f.history.events
    seek = next((events[j] for j in range(index - 1, -1, -1)
                 if events[j].op.op == "seek" and f.handle_at(j) is h and events[j].outcome.status == OK), None)
    rules: list[str] = []
    # a seek's rule says where delivery resumes: at stake for the first delivery after it only
    if seek is not None and not any(_delivery(events[j]) is not None and f.handle_at(j) is h
                                    for j in range(events.index(seek) + 1, index)):
        a = seek.op.args
        rules.append("PLS-SEEK-001" if "message" in a else "PLS-SEEK-002" if "publish_time_of" in a else "PLS-SEEK-003")
    if h.kind == "reader":
        start = h.args["start"]
        rules.append("PLS-READER-001" if start == "earliest" else "PLS-READER-002" if start == "latest"
                     else "PLS-READER-004" if h.args.get("inclusive") else "PLS-READER-003")
    else:
        # PLS-PROD-002 (publish order on Exclusive) is at stake only when two deliveries swap (reorder_same_key)
        rules += {"Exclusive": ["PLS-EXCL-002"], "Failover": ["PLS-FAILOVER-003"],
                  "Key_Shared": ["PLS-KEYSHARED-007"]}.get(h.sub_type, ["PLS-SHARED-001"])
        if h.sub_type == "Shared" and _unblocked_by_acks(h, f, index):
            rules = [unacked.RULE_LIMIT if r == "PLS-SHARED-001" else r for r in rules]
    if h.args.get("read_compacted"):
        rules += ["PLS-COMPACT-001", "PLS-COMPACT-004"]
    if _non_persistent(h):
        rules.append("PLS-NP-001")
    return tuple(dict.fromkeys(rules))


def _unblocked_by_acks(h: _Handle, f: _Facts, index: int) -> bool:
    """PLS-UNACKED-001: whether ``h`` (a Shared consumer under the namespace's maxUnackedMessagesPerConsumer
    when it subscribed) reached its limit and was brought back to half of it by its own acks before ``index``."""
    events = f.history.events
    limit = 0
    for e in events[:index]:
        if e.step >= h.step:
            break
        if e.op.op == "set_policy" and e.outcome.status == OK and "max_unacked_messages_per_consumer" in e.op.args:
            limit = int(e.op.args["max_unacked_messages_per_consumer"])
    if not limit:
        return False
    count, blocked, unblocked = 0, False, False
    for j in range(index):
        e = events[j]
        if f.handle_at(j) is not h or e.outcome.status != OK:
            continue
        if _delivery(e) is not None:
            count += 1
            blocked = blocked or unacked.blocks(count, limit)
        elif e.op.op == "ack":
            count = max(count - 1, 0)
            if blocked and unacked.unblocks(count, limit):
                blocked, unblocked = False, True
    return unblocked


# --------------------------------------------------------------------------- editing helpers


def _renumber(events: Iterable[Event]) -> tuple[Event, ...]:
    return tuple(replace(e, op=replace(e.op, step=n)) for n, e in enumerate(events, start=1))


def _with_message(e: Event, msg: ObservedMessage | None) -> Event:
    return replace(e, outcome=Outcome.ok({"message": None if msg is None else msg.to_json()}))


def _shift_after(events: list[Event], index: int, delta: float) -> None:
    """Move every event after ``index`` later by ``delta`` ms (keeps the history in time order)."""
    for j in range(index + 1, len(events)):
        e = events[j]
        events[j] = replace(e, t_start_ms=e.t_start_ms + delta, t_end_ms=e.t_end_ms + delta)


def _set_end(events: list[Event], index: int, new_end: float) -> None:
    """Make receive ``index`` end at ``new_end``: later events move if it got longer; its timeout covers it."""
    e = events[index]
    start = min(e.t_start_ms, new_end)
    need = math.ceil(new_end - start) + 1
    args = dict(e.op.args)
    if "timeout_ms" in args and args["timeout_ms"] < need:
        args["timeout_ms"] = need
    delta = new_end - e.t_end_ms
    events[index] = replace(e, op=replace(e.op, args=args), t_start_ms=start, t_end_ms=new_end)
    if delta > 0:
        _shift_after(events, index, delta)


def _mutant(f: _Facts, events: Iterable[Event], op: str, steps: Iterable[int], rules: Iterable[str], text: str,
            allowed: str | None = None, unstated: str | None = None) -> Mutant | None:
    meant = tuple(r for r in dict.fromkeys(rules) if r in ACTIVE_RULES)
    if not meant and unstated is None:
        return None
    return Mutant(History(f.history.header, _renumber(events)), op, tuple(steps), meant, text, allowed, unstated)


def _tol(f: _Facts) -> Tolerances:
    return Tolerances.for_target(f.history.header.target)


# --------------------------------------------------------------------------- why a delivery came when it did


@dataclass(frozen=True)
class _Timed:
    """A delivery whose time a rule fixes: eligible from ``low``, due by ``high`` (absolute ms, conservative)."""

    index: int
    rules: tuple[str, ...]
    low: float  # earliest allowed arrival (already loosened by the slack)
    high: float | None  # latest allowed arrival (already loosened by the slack); None: no deadline
    band: float  # the width of the rule's own window
    cause: str
    floor_rules: tuple[str, ...] = ()  # rules an arrival before ``low`` breaks besides ``rules`` (a delay floor)


def _broker_delay_config(f: _Facts) -> tuple[bool, int]:
    profile = f.history.header.profile or {}
    cfg = profile.get("broker_config") or {}
    # the broker's own setting, or the profile override a model run names (delayed_delivery_strict / _tick_ms)
    strict = str(cfg.get("isDelayedDeliveryDeliverAtTimeStrict", profile.get("delayed_delivery_strict", "true"))).lower() == "true"
    tick = int(cfg.get("delayedDeliveryTickTimeMillis", profile.get("delayed_delivery_tick_ms", 100)))
    return strict, tick


def _timed_deliveries(f: _Facts) -> list[_Timed]:
    """Deliveries a timing rule governs: nack and ack-timeout redeliveries, held delayed messages."""
    tol = _tol(f)
    events = f.history.events
    out: list[_Timed] = []
    last_seen: dict[tuple[str, str], int] = {}  # (subscription, label) -> index of its previous delivery
    for i, h, msg in _deliveries(f):
        label = msg.payload
        key = (h.sub_key, label)
        prev = last_seen.get(key)
        last_seen[key] = i
        if prev is None and _non_persistent(h) and h.kind == "consumer" and label in f.sends \
                and _is_delayed(events[f.sends[label]].op.args):
            # PLS-NP-004: no delayed tracker on a non-persistent topic: due at once, whatever the type
            send = events[f.sends[label]]
            out.append(_Timed(i, ("PLS-NP-004",), send.t_start_ms - tol.early_ms, send.t_end_ms + tol.dispatch_latency_ms,
                              0.0, f"delayed message sent at step {send.step} to a non-persistent topic"))
            continue
        if _is_copy(msg) or h.kind == "reader" or _non_persistent(h):
            continue
        if prev is None:
            if label in f.sends and h.sub_type in ("Shared", "Key_Shared"):
                send = events[f.sends[label]]
                a = send.op.args
                if "deliver_after_ms" in a or "deliver_at_ms" in a:
                    strict, tick = _broker_delay_config(f)
                    if "deliver_after_ms" in a:
                        at_low, at_high = send.t_start_ms + a["deliver_after_ms"], send.t_end_ms + a["deliver_after_ms"]
                    else:
                        at_low = at_high = float(a["deliver_at_ms"])
                    rules = ["PLS-DELAY-001" if h.sub_type == "Shared" else "PLS-DELAY-003",
                             "PLS-DELAY-004" if strict else "PLS-DELAY-005"]
                    low = at_low - (0 if strict else tick)
                    high = at_high + (2 * tick if strict else tick) + 50
                    out.append(_Timed(i, tuple(rules), low - tol.early_ms, high + tol.dispatch_latency_ms,
                                      high - low, f"delayed message sent at step {send.step}"))
            continue
        # a redelivery: the op between the previous delivery and this one that asked for it
        between = [j for j in range(prev + 1, i) if f.handle_at(j) is not None
                   and f.handle_at(j).sub_key == h.sub_key]
        cause = None
        for j in between:
            e = events[j]
            if e.op.op == "nack" and e.op.args["message"] == label and e.outcome.status == OK:
                cause = ("nack", j)
            elif e.op.op in ("ack", "ack_cumulative", "redeliver_unacked", "seek", "close", "unsubscribe",
                             "reconsume_later") or (e.op.op == "subscribe"):
                cause = ("other", j)
        prev_h = f.handle_at(prev)
        if cause is None and prev_h is h and h.args.get("ack_timeout_ms"):
            cause = ("ack_timeout", prev)
        if cause is None or cause[0] == "other":
            continue
        kind, j = cause
        ce = events[j]
        cfg = prev_h.args if prev_h is not None else h.args
        prev_count = received_message(events[prev].outcome).redelivery_count
        if kind == "nack":
            d = cfg.get("nack_delay_ms", 60_000)
            backoff_client = profile_for(None, prev_h.client)
            if backoff_client.nack_backoff_supported and cfg.get("nack_backoff"):
                b = cfg["nack_backoff"]
                lo, hi = nack_redelivery_window_ms(d, client=prev_h.client, redelivery_count=prev_count,
                                                   backoff=(b["min_delay_ms"], b["max_delay_ms"], b.get("multiplier", 2.0)))
                rules = (backoff_client.nack_backoff_rule,)
                # a Java nack may also wait for a timer an earlier, longer nack armed (a deadline timer): no sure deadline
                hi_any = max(hi, b["max_delay_ms"]) if backoff_client.nack_timer == "deadline" else hi
            else:
                lo, hi = nack_redelivery_window_ms(d, client=prev_h.client)
                rules = {"java": ("PLS-NACK-005",), "go": ("PLS-NACK-006",)}.get(prev_h.client, ("PLS-NACK-001",))
                hi_any = hi
            # PLS-NACK-002: a C++/Python delay under 100 ms is raised to 100 ms, so an early arrival is below the floor
            floor = ("PLS-NACK-002",) if rules == ("PLS-NACK-001",) and d < 100 else ()
            out.append(_Timed(i, rules, ce.t_start_ms + lo - tol.early_ms, ce.t_end_ms + hi_any + tol.dispatch_latency_ms,
                              max(hi - lo, 1), f"nack at step {ce.step}", floor))
        else:
            T = cfg["ack_timeout_ms"]
            java = prev_h.client == "java"
            tick = cfg.get("ack_timeout_tick_ms", 1000) if java else 1000
            try:
                lo, hi = ack_timeout_redelivery_window_ms(T, tick, client="java" if java else "cpp")
            except ValueError:
                continue
            rules = ("PLS-ACKTIMEOUT-004",) if java else ("PLS-ACKTIMEOUT-002",)
            if java and cfg.get("ack_timeout_backoff"):
                b = cfg["ack_timeout_backoff"]
                extra = nack_backoff_delay_ms(prev_count, min_delay_ms=b["min_delay_ms"], max_delay_ms=b["max_delay_ms"],
                                              multiplier=b.get("multiplier", 2.0))
                lo, hi = lo + extra, hi + extra
                rules = ("PLS-ACKTIMEOUT-005",)
            out.append(_Timed(i, rules, ce.t_start_ms + lo - tol.early_ms, ce.t_end_ms + hi + tol.dispatch_latency_ms,
                              max(hi - lo, 1), f"ack timeout of {T} ms after the delivery at step {ce.step}"))
    return out


# --------------------------------------------------------------------------- operators


def shift_delivery_earlier(history: History, ks: tuple[float, ...] = (0.5, 1.0, 3.0)) -> list[Mutant]:
    """A nack / ack-timeout redelivery, or a held delayed message, arrives k x its window's width earlier."""
    f = facts(history)
    out = []
    for t in _timed_deliveries(f):
        if t.rules == ("PLS-NP-004",):
            continue  # due at once: nothing to arrive early for
        e = history.events[t.index]
        floor = history.events[t.index - 1].t_end_ms if t.index > 0 else 0.0
        seen = set()
        for k in ks:
            new_end = max(e.t_end_ms - k * max(t.band, 100.0), floor)
            if new_end >= e.t_end_ms or new_end in seen:
                continue
            seen.add(new_end)
            events = list(history.events)
            _set_end(events, t.index, new_end)
            allowed = None if new_end < t.low else (
                f"arrives at {new_end:.1f} ms, still inside its window from {t.low:.1f} ms ({t.cause}, measurement slack included)")
            m = _mutant(f, events, "shift_delivery_earlier", (e.step,), t.rules + t.floor_rules,
                        f"step {e.step}: delivery moved {e.t_end_ms - new_end:.0f} ms earlier ({t.cause})", allowed)
            if m:
                out.append(m)
    return out


def shift_delivery_later(history: History, ks: tuple[float, ...] = (1.0, 3.0)) -> list[Mutant]:
    """A nack / ack-timeout redelivery, or a held delayed message, arrives k x its window past its deadline.

    A delivery shifted by less than its window (plus slack) is also made, once, and classified allowed."""
    f = facts(history)
    out = []
    for t in _timed_deliveries(f):
        if t.high is None:
            continue
        e = history.events[t.index]
        band = max(t.band, 100.0)
        targets = [(e.t_end_ms + min(band / 4, max(t.high - e.t_end_ms, 0) / 2), "inside")] + \
                  [(max(t.high, e.t_end_ms) + k * band, "late") for k in ks]
        for new_end, _ in targets:
            if new_end <= e.t_end_ms:
                continue
            events = list(history.events)
            _set_end(events, t.index, new_end)
            allowed = None if new_end > t.high else (
                f"arrives at {new_end:.1f} ms, still before its deadline {t.high:.1f} ms ({t.cause}, dispatch slack included)")
            m = _mutant(f, events, "shift_delivery_later", (e.step,), t.rules,
                        f"step {e.step}: delivery moved {new_end - e.t_end_ms:.0f} ms later ({t.cause})", allowed)
            if m:
                out.append(m)
    return out


def _redelivery_cause_rules(f: _Facts, i: int, h: _Handle, msg: ObservedMessage) -> list[str]:
    """The rules that explain why delivery ``i`` (a redelivery) came: the op between it and the previous copy."""
    events = f.history.events
    prev = next((j for j in range(i - 1, -1, -1) if (m := _delivery(events[j])) is not None and m.payload == msg.payload
                 and f.handle_at(j) is not None and f.handle_at(j).sub_key == h.sub_key), None)
    if prev is None:
        return []
    rules: list[str] = []
    pm = _delivery(events[prev])
    for j in range(prev + 1, i):
        e, hh = events[j], f.handle_at(j)
        if hh is None or hh.sub_key != h.sub_key:
            continue
        if e.op.op == "redeliver_unacked":
            rules.append("PLS-REDELIVER-001")
        elif e.op.op == "nack" and h.sub_type in ("Exclusive", "Failover"):
            rules.append("PLS-NACK-003")
        elif e.op.op == "nack" and e.op.args["message"] != msg.payload and f.sends.get(e.op.args["message"]) is not None:
            other = [m for k, hh2, m in _deliveries(f) if m.payload == e.op.args["message"]]
            if other and other[0].message_id[:2] == pm.message_id[:2] and pm.message_id[3] >= 0:
                rules.append("PLS-BATCH-006")  # a sibling of its batch was nacked: the whole entry comes back
        elif e.op.op == "close" and hh is not h:
            # (Key_Shared: no registered rule states where a closed consumer's messages go)
            rules += {"Shared": ["PLS-SHARED-002"], "Failover": ["PLS-FAILOVER-002"], "Exclusive": ["PLS-SUB-005"]}.get(h.sub_type, [])
    return rules


def _initial_position_rule(f: _Facts, h: _Handle, index: int | None = None) -> list[str]:
    """PLS-SUB-002/003 when ``h``'s subscribe created its subscription in this history (what it starts with),
    and, given ``index``, no delivery on that subscription came before event ``index`` (the start is shown once)."""
    if h.kind != "consumer":
        return []
    first = min((x.step for xs in f.handles.values() for x in xs if x.sub_key == h.sub_key), default=h.step)
    if first != h.step:
        return []
    if index is not None and any(j < index and hh.sub_key == h.sub_key for j, hh, _ in _deliveries(f)):
        return []
    return ["PLS-SUB-003" if h.args.get("initial_position") == "Earliest" else "PLS-SUB-002"]


def _retention_policy(f: _Facts, before: int) -> bool:
    """Whether a retention policy (time and size) is in force at event ``before``."""
    on = False
    for e in f.history.events[:before]:
        a = e.op.args
        if e.op.op == "set_policy" and e.outcome.status == OK and "retention_minutes" in a:
            on = bool(a.get("retention_minutes")) and bool(a.get("retention_size_mb"))
    return on


def _acked_everywhere_else(f: _Facts, h: _Handle, label: str) -> bool:
    """Whether ``label`` was acked on every other durable subscription of ``h``'s topic before ``h`` was created
    (and there is at least one): the data PLS-RETENTION-001/002 speak of, read by a new subscription or reader."""
    events = f.history.events
    si = f.sends.get(label)
    created = next((j for j, e in enumerate(events) if e.step == h.step), None)
    if si is None or created is None or not h.topic or f.producer_topic.get(events[si].op.args["producer"]) != h.topic:
        return False
    order = [lab for lab, j in sorted(f.sends.items(), key=lambda kv: kv[1])
             if f.producer_topic.get(events[j].op.args["producer"]) == h.topic]
    subs: dict[str, bool] = {}  # subscription -> acked label
    for j, e in enumerate(events[:created]):
        x = f.handle_at(j)
        if x is None or x.kind != "consumer" or x.topic != h.topic or x.sub_key == h.sub_key or e.outcome.status != OK:
            continue
        name = x.args["subscription"]
        if e.op.op == "subscribe" and x.args.get("subscription_mode") != "NonDurable":
            subs.setdefault(name, False)
        elif e.op.op == "unsubscribe":
            subs.pop(name, None)
        elif e.op.op == "ack" and e.op.args.get("message") == label and name in subs:
            subs[name] = True
        elif e.op.op == "ack_cumulative" and name in subs and e.op.args.get("message") in order \
                and order.index(e.op.args["message"]) >= order.index(label):
            subs[name] = True
    return bool(subs) and all(subs.values())


def _retention_rules(f: _Facts, i: int, h: _Handle, msg: ObservedMessage) -> tuple[list[str], str | None]:
    """The retention rule a missing delivery ``i`` of ``msg`` to ``h`` breaks, or why its absence is allowed.

    Let ``msg`` be acked on every other durable subscription before ``h`` (a new Earliest subscription or
    reader) came. Under a retention policy it must stay readable (PLS-RETENTION-002). Without one the
    broker may delete it, but only once its ledger may be closed (``retention.ledger_closed_by``: an unload,
    or a rollover threshold): before that, its absence breaks PLS-RETENTION-001."""
    if h.kind == "reader" or not _acked_everywhere_else(f, h, msg.payload):
        return [], None
    if _retention_policy(f, i):
        return ["PLS-RETENTION-002"], None
    si = f.sends[msg.payload]
    closed = _ledger_closed_by(f, h.topic, first=si, last=si, at=i)
    if closed is not None:
        return [], f"{closed} may have closed its ledger: acked data may then be deleted (PLS-RETENTION-001)"
    return ["PLS-RETENTION-001"], None


def _ledger_closed_by(f: _Facts, topic: str, *, first: int, last: int, at: int, without: int | None = None) -> str | None:
    """``retention.ledger_closed_by`` for the messages sent at events ``first`` .. ``last``, as of event ``at``,
    from the history's unloads of ``topic`` (leaving out event ``without``) and its sends."""
    from reference_model import retention

    events = f.history.events
    unloads = tuple(e.t_end_ms for x, e in enumerate(events[:at]) if x != without and e.op.op == "unload_topic"
                    and e.outcome.status == OK and e.op.args.get("topic") == topic)
    return retention.ledger_closed_by(first_written_ms=events[first].t_start_ms, last_written_ms=events[last].t_end_ms,
                                      now_ms=events[at].t_end_ms, unloads_ms=unloads, entries_in_topic=len(f.sends))


def _drop_at(f: _Facts, i: int, h: _Handle, msg: ObservedMessage, op_name: str, rules: Iterable[str],
             extra_text: str = "", min_timeout_ms: int = 0) -> Mutant | None:
    """Receive ``i`` got nothing for its whole timeout (at least ``min_timeout_ms``); the ack/nack of that
    message on that handle goes too."""
    events = list(f.history.events)
    e = events[i]
    timeout = max(e.op.args.get("timeout_ms", 0), min_timeout_ms)
    if timeout != e.op.args.get("timeout_ms", 0):
        e = replace(e, op=replace(e.op, args={**e.op.args, "timeout_ms": timeout}))
    events[i] = replace(_with_message(e, None), t_end_ms=e.t_start_ms + timeout)
    if events[i].t_end_ms > e.t_end_ms:
        _shift_after(events, i, events[i].t_end_ms - e.t_end_ms)
    drop = set()
    for j in range(i + 1, len(events)):
        o = events[j]
        if f.handle_at(j) is h and o.op.op in ("ack", "nack", "reconsume_later") and o.op.args.get("message") == msg.payload:
            drop.add(j)
            break
        if f.handle_at(j) is h and o.op.op in ("receive", "read_next") and (_delivery(o) or msg).payload == msg.payload:
            break
    tol = _tol(f)
    later = [j for j in range(i + 1, len(events)) if f.handle_at(j) is not None
             and f.handle_at(j).sub_key == h.sub_key and events[j].op.op in ("receive", "read_next")]
    allowed = unstated = None
    rules = list(rules)
    if h.sub_type == "Key_Shared" and "PLS-KEYSHARED-007" in rules:
        key = _sticky_key(msg, f)
        same_key_later = [j for j in later if (m := _delivery(events[j])) is not None and _sticky_key(m, f) == key]
        if not same_key_later:
            # KEYSHARED-007 orders a key's messages; no registered rule says a Key_Shared subscription
            # delivers every message (PLS-SHARED-001 is stated for Shared)
            rules.remove("PLS-KEYSHARED-007")
            if not [r for r in rules if r not in _initial_position_rule(f, h)]:
                rules = []
                unstated = ("a Key_Shared message is never delivered, and no later message of its key shows a gap: "
                            "no registered rule states Key_Shared delivers every message")
    if (h.args.get("dead_letter") and msg.message_id[3] >= 0 and h.client == "python"):
        allowed = ("a batched message on a dead-letter consumer: the whole batch is dead-lettered together "
                   "(PLS-DLQ-006), so which deliveries its messages get before the copy is not fixed")
    elif timeout <= tol.dispatch_latency_ms and not later:
        allowed = (f"the receive waited {timeout} ms, within the dispatch tolerance {tol.dispatch_latency_ms:g} ms, "
                   "and nothing later on this subscription shows the message missing")
    if h.sub_type in ("Shared", "Key_Shared") and not later and allowed is None:
        others = [x for xs in f.handles.values() for x in xs if x is not h and x.sub_key == h.sub_key]
        if others:
            allowed = "another consumer of this subscription may still hold it, and no later receive shows it missing"
    kept = [ev for j, ev in enumerate(events) if j not in drop]
    if unstated is None and not rules:
        return None
    return _mutant(f, kept, op_name, (e.step,) + tuple(events[j].step for j in sorted(drop)), rules,
                   f"step {e.step}: {h.name} never got {msg.payload}{extra_text}", allowed, unstated)


def drop_delivery(history: History) -> list[Mutant]:
    """The last delivery of a message on a subscription or reader does not happen."""
    f = facts(history)
    dels = _deliveries(f)
    timed = {t.index: t for t in _timed_deliveries(f)}
    out = []
    for n, (i, h, msg) in enumerate(dels):
        if _is_copy(msg):
            continue  # drop_dlq_copy
        if any(j > i and hh.sub_key == h.sub_key and m.payload == msg.payload for j, hh, m in dels):
            continue  # delivered again later: dropping this one is a different lie (a count change)
        rules = list(_delivery_rules(h, f, i)) + _redelivery_cause_rules(f, i, h, msg)
        if msg.redelivery_count == 0:
            rules += _initial_position_rule(f, h, i)
        if i in timed:
            rules = list(timed[i].rules) + rules
        if msg.message_id[3] >= 0 and h.kind == "consumer" and not _index_ack(f, h) and any(
                e.op.op == "ack" and e.outcome.status == OK and e.op.args.get("message") == msg.payload
                and (hh := f.handle_at(j)) is not None and hh.sub_key == h.sub_key for j, e in enumerate(history.events[:i])):
            rules.append("PLS-BATCH-004")  # acked, but without batch index ack its batch comes back whole
        retained, deletable = _retention_rules(f, i, h, msg)
        rules += retained + _batched_tag_rules(f, h, msg)
        m = _drop_at(f, i, h, msg, "drop_delivery", rules)
        if m is not None and m.allowed is None and deletable is not None:
            m = replace(m, allowed=deletable)
        if m is not None and m.allowed is None and i in timed and timed[i].high is not None:
            e = history.events[i]
            end = e.t_start_ms + e.op.args.get("timeout_ms", 0)
            if end <= timed[i].high:
                m = replace(m, allowed=f"the receive ended at {end:.1f} ms, before {msg.payload} was due "
                                       f"({timed[i].cause}, due by {timed[i].high:.1f} ms with the slack)")
        if m:
            out.append(m)
    return out


def _subscription_tags(history: History) -> dict[tuple[str, str], frozenset[str]]:
    """Under the tdmq profile, (topic, subscription) -> the tags it was created with: create_subscription's
    properties, or the subscription properties of the first consumer to subscribe (PLS-TAG-001/003)."""
    return _tags_given(history)[0]


def _joiner_tags(history: History) -> dict[tuple[str, str], list[frozenset[str]]]:
    """Under the tdmq profile, (topic, subscription) -> the other tags consumers gave when they joined it after
    it was created (PLS-TAG-003: the subscription keeps its own)."""
    return _tags_given(history)[1]


def _tags_given(history: History) -> tuple[dict[tuple[str, str], frozenset[str]], dict[tuple[str, str], list[frozenset[str]]]]:
    created: dict[tuple[str, str], frozenset[str]] = {}
    joined: dict[tuple[str, str], list[frozenset[str]]] = {}
    if history.header.profile.get("vendor") != vendors.TDMQ:
        return created, joined
    for e in history.events:
        if e.outcome.status != OK or e.op.op not in ("create_subscription", "subscribe") or "topic" not in e.op.args:
            continue
        key = (e.op.args["topic"], e.op.args["subscription"])
        given = e.op.args.get("properties" if e.op.op == "create_subscription" else "subscription_properties")
        tags = vendors.subscription_tags(given)
        if key not in created:
            created[key] = tags
        elif given is not None and tags != created[key]:
            joined.setdefault(key, []).append(tags)
    return created, joined


def _batched_tag_rules(f: _Facts, h: _Handle, msg: Any) -> list[str]:
    """PLS-TAG-002 when ``msg`` is a batched message whose tags share none of its subscription's tags: the tag
    filter lets it through, so it is owed there."""
    wanted = _subscription_tags(f.history).get((h.topic, h.args.get("subscription", "")))
    tags = vendors.message_tags(msg.properties)
    if h.kind != "consumer" or not wanted or not tags or msg.message_id[3] < 0 or vendors.tag_accepts(tags, wanted):
        return []
    return ["PLS-TAG-002"]


def _index_ack(f: _Facts, h: _Handle) -> bool:
    """PLS-BATCH-005: batch index ack is in effect for ``h`` (asked by the consumer and on at the broker:
    the profile's ``broker_batch_index_ack``, true for the suite's broker, or acknowledgmentAtBatchIndexLevelEnabled)."""
    profile = f.history.header.profile or {}
    cfg = profile.get("broker_config") or {}
    broker = str(cfg.get("acknowledgmentAtBatchIndexLevelEnabled", profile.get("broker_batch_index_ack", True))).lower() == "true"
    return bool(h.args.get("batch_index_ack")) and broker


def _possible_rewind(f: _Facts, h: _Handle, before: int) -> str | None:
    """An op before ``before`` on ``h`` that may make Pulsar deliver its unacked messages again."""
    for j in range(before - 1, -1, -1):
        e = f.history.events[j]
        if f.handle_at(j) is h and e.op.op in ("nack", "redeliver_unacked", "seek"):
            return f"{e.op.op} at step {e.step}"
    if h.kind == "consumer" and h.args.get("ack_timeout_ms"):
        return "the consumer's ack timeout"
    return None


def duplicate_delivery(history: History) -> list[Mutant]:
    """An Exclusive / Failover consumer or a reader gets the same delivery twice in a row."""
    f = facts(history)
    out = []
    for i, h, msg in _deliveries(f):
        if h.sub_type not in ("Exclusive", "Failover", "Reader") or _is_copy(msg):
            continue
        events = list(history.events)
        e = events[i]
        dup = replace(e, t_start_ms=e.t_end_ms, t_end_ms=e.t_end_ms + 0.5)
        events.insert(i + 1, dup)
        _shift_after(events, i + 1, 0.5)
        rewind = _possible_rewind(f, h, i)
        allowed = None if rewind is None else f"{rewind} may redeliver unacked messages"
        rules = list(_delivery_rules(h, f, i))
        if _non_persistent(h):
            # never redelivered (PLS-NP-002); which subscriptions get it (PLS-NP-001) is not at stake
            rules = [r for r in rules if r != "PLS-NP-001"] + ["PLS-NP-002"]
        m = _mutant(f, events, "duplicate_delivery", (e.step,), rules,
                    f"step {e.step}: {h.name} got {msg.payload} a second time at once", allowed)
        if m:
            out.append(m)
    return out


def reorder_same_key(history: History) -> list[Mutant]:
    """Two consecutive first deliveries on one handle swap: same key on Key_Shared, any two on in-order subs."""
    f = facts(history)
    dels = [(i, h, m) for i, h, m in _deliveries(f) if not _is_copy(m) and m.redelivery_count == 0]
    out = []
    by_handle: dict[int, list[tuple[int, _Handle, ObservedMessage]]] = {}
    for d in dels:
        by_handle.setdefault(id(d[1]), []).append(d)
    for ds in by_handle.values():
        for (i, h, a), (j, _, b) in zip(ds, ds[1:]):
            if a.payload == b.payload or a.topic != b.topic or a.message_id[2] != b.message_id[2]:
                continue
            if h.sub_type == "Key_Shared":
                if _sticky_key(a, f) is None or _sticky_key(a, f) != _sticky_key(b, f):
                    continue
                rules = ["PLS-KEYSHARED-007"]
            elif h.sub_type in ("Exclusive", "Failover", "Reader"):
                rules = list(_delivery_rules(h, f, i)) + (["PLS-PROD-002"] if h.sub_type == "Exclusive" else [])
                if h.sub_type != "Reader" and not _non_persistent(h) and a.payload in f.sends and \
                        _is_delayed(history.events[f.sends[a.payload]].op.args):
                    rules.append("PLS-DELAY-002")  # the delayed message is held back behind a later one
            else:
                continue
            if any(history.events[k].op.op in ("seek",) for k in range(i, j)):
                continue
            allowed = None
            if h.sub_type == "Key_Shared" and (h.args.get("key_shared") or {}).get("allow_out_of_order"):
                allowed = "allow_out_of_order is on: Key_Shared does not order a key's messages"
            events = list(history.events)
            events[i], events[j] = _with_message(events[i], b), _with_message(events[j], a)
            m = _mutant(f, events, "reorder_same_key", (history.events[i].step, history.events[j].step), rules,
                        f"steps {history.events[i].step}/{history.events[j].step}: {h.name} got {b.payload} before {a.payload}",
                        allowed)
            if m:
                out.append(m)
    return out


def move_to_other_consumer(history: History) -> list[Mutant]:
    """A Failover delivery goes to a connected inactive consumer; a Key_Shared one to a consumer not serving its key."""
    f = facts(history)
    dels = _deliveries(f)
    out = []
    for i, h, msg in dels:
        if h.kind != "consumer" or h.sub_type not in ("Failover", "Key_Shared") or _is_copy(msg):
            continue
        step = history.events[i].step
        peers = [x for xs in f.handles.values() for x in xs if x is not h and x.sub_key == h.sub_key
                 and x.step < step and (x.closed_step is None or x.closed_step > step)]
        # membership changes on this subscription before this delivery
        changes = [e.step for j, e in enumerate(history.events[:i]) if e.op.op in ("subscribe", "close", "unsubscribe")
                   and f.handle_at(j) is not None and f.handle_at(j).sub_key == h.sub_key]
        last_change = max(changes, default=0)
        for peer in peers:
            if h.sub_type == "Failover":
                # h must evidently be the active one: it got this delivery after the last membership change
                got = [j for j, hh, m in dels if hh is peer and history.events[j].step > last_change
                       and history.events[j].step < step]
                if got:
                    continue
                partitioned = "-partition-" in msg.topic
                rules = ["PLS-FAILOVER-004"] if partitioned else ["PLS-FAILOVER-003"]
                if "priority_level" in h.args or "priority_level" in peer.args:
                    rules.append("PLS-FAILOVER-005")
                allowed = None
            else:
                key = _sticky_key(msg, f)
                if key is None:
                    continue
                if any(hh is peer and _sticky_key(m, f) == key for _, hh, m in dels):
                    continue  # the peer served this key too at some point
                ks = h.args.get("key_shared") or {}
                selector = "PLS-KEYSHARED-005" if ks.get("mode") == "Sticky" else None
                cfg = ((history.header.profile or {}).get("broker_config") or {})
                if selector is None:
                    consistent = str(cfg.get("subscriptionKeySharedUseConsistentHashing", "true")).lower() == "true"
                    selector = "PLS-KEYSHARED-003" if consistent else "PLS-KEYSHARED-004"
                # PLS-KEYSHARED-007 (one consumer at a time) is at stake when h still holds a message of this
                # key (received, not yet acked or nacked): then the key has two consumers at once; otherwise
                # the misplaced delivery breaks the selector alone
                settled = {e.op.args.get("message") for j, e in enumerate(history.events[:i])
                           if f.handle_at(j) is h and e.op.op in ("ack", "nack", "ack_cumulative") and e.outcome.status == OK}
                holding = any(hh is h and _sticky_key(m, f) == key and j < i and m.payload not in settled
                              and history.events[j].op.op != "ack_cumulative" for j, hh, m in dels)
                cumulative = any(f.handle_at(j) is h and e.op.op == "ack_cumulative" for j, e in enumerate(history.events[:i]))
                rules = [selector] + (["PLS-KEYSHARED-007"] if holding and not cumulative else [])
                # a key may move when consumers join or leave between its deliveries
                key_steps = [history.events[j].step for j, hh, m in dels if _sticky_key(m, f) == key and hh.sub_key == h.sub_key]
                moved = [c for c in changes if c > min(key_steps)] if key_steps else []
                allowed = (f"membership changed at step {moved[0]}: the key may have moved"
                           if moved and min(key_steps) < step else None)
            events = list(history.events)
            e = events[i]
            events[i] = replace(e, op=replace(e.op, args={**e.op.args, "consumer": peer.name}))
            m = _mutant(f, events, "move_to_other_consumer", (step,), rules,
                        f"step {step}: {msg.payload} went to {peer.name} instead of {h.name}", allowed)
            if m:
                out.append(m)
            break
    return out


def move_to_lower_priority(history: History) -> list[Mutant]:
    """A Shared delivery goes to a connected consumer of a lower priority (a higher priority_level number) while
    the consumer that got it, connected before the message was sent, still had permits (PLS-SHARED-003)."""
    f = facts(history)
    dels = _deliveries(f)
    out = []
    for n, (i, h, msg) in enumerate(dels):
        if h.kind != "consumer" or h.sub_type != "Shared" or _is_copy(msg) or msg.redelivery_count != 0:
            continue
        step = history.events[i].step
        si = f.sends.get(msg.payload)
        if si is None or h.step > history.events[si].step:
            continue  # h came after the message: the broker may have dispatched it elsewhere first
        level = h.args.get("priority_level", 0)
        lower = [x for xs in f.handles.values() for x in xs if x is not h and x.sub_key == h.sub_key and x.kind == "consumer"
                 and x.args.get("priority_level", 0) > level and x.step < step and (x.closed_step is None or x.closed_step > step)]
        if not lower:
            continue
        # h has no permits only with at least q - (q//2 - 1) messages queued (the client refills at half its queue);
        # at most the messages published so far and not yet received on the subscription can be queued there
        q = h.args.get("receiver_queue_size", 1000)
        received = {m.payload for j, hh, m in dels[:n] if hh.sub_key == h.sub_key}
        queued = sum(1 for lab, j in f.sends.items() if j < i and lab not in received
                     and f.producer_topic.get(history.events[j].op.args["producer"]) == h.topic)
        allowed = None if queued < q - (q // 2 - 1) else (
            f"up to {queued} messages may have been queued at {h.name}: its receiver queue of {q} may have been full")
        peer = lower[0]
        events = list(history.events)
        e = events[i]
        events[i] = replace(e, op=replace(e.op, args={**e.op.args, "consumer": peer.name}))
        m = _mutant(f, events, "move_to_lower_priority", (step,), ("PLS-SHARED-003",),
                    f"step {step}: {msg.payload} went to {peer.name} (priority {peer.args.get('priority_level', 0)}) "
                    f"instead of {h.name} (priority {level})", allowed)
        if m:
            out.append(m)
    return out


def _ks_selector_state(f: _Facts, h: _Handle, i: int) -> tuple[Any, str, Any, dict[Any, str], int] | None:
    """The Key_Shared selector of ``h``'s subscription just before event ``i``, replayed from the history's joins and
    leaves with the reference model's pure selector functions: ``(settings, selector, state, handle_of, since)``
    (``since``: the index of the last membership change); None when the owners cannot be known (a ring
    consumer without a fixed name, a refused join)."""
    from reference_model import key_shared as ks
    from reference_model.dispatch.key_shared import KeySharedPolicy, KeySharedSettings
    from reference_model.rejections import Rejected

    cfg = (f.history.header.profile or {}).get("broker_config") or {}
    try:
        settings = KeySharedSettings.for_broker(f.history.header.broker_version, cfg)
    except ValueError:
        return None
    selector = state = None
    ident: dict[str, Any] = {}
    since = -1
    for j, e in enumerate(f.history.events[:i]):
        x = f.handle_at(j)
        if x is None or x.kind != "consumer" or x.sub_key != h.sub_key or e.outcome.status != OK:
            continue
        if e.op.op == "subscribe":
            policy = KeySharedPolicy.from_arg(x.args.get("key_shared"))
            if selector is None:
                selector = "sticky" if policy.mode == "Sticky" else (
                    "consistent_hashing" if settings.consistent_hashing else "auto_split")
            if selector == "consistent_hashing":
                if not x.args.get("consumer_name"):
                    return None
                state, ident[x.name] = ks.ring_join(state or ks.new_ring(settings.profile, settings.replica_points),
                                                    x.args["consumer_name"])
            elif selector == "auto_split":
                state, ident[x.name] = ks.auto_split_join(state or ks.AutoSplit(), x.name), x.name
            else:
                state, ident[x.name] = ks.sticky_join(state or ks.Sticky(settings.profile), x.name, list(policy.ranges)), x.name
            if isinstance(state, Rejected):
                return None
            since = j
        elif e.op.op in ("close", "unsubscribe") and x.name in ident:
            c = ident.pop(x.name)
            state = (ks.ring_leave if selector == "consistent_hashing" else ks.auto_split_leave
                     if selector == "auto_split" else ks.sticky_leave)(state, c)
            since = j
    if state is None:
        return None
    return settings, selector, state, {c: name for name, c in ident.items()}, since


def _replayed_owner_of_slot(selector: str, state: Any, handle_of: Mapping[Any, str]) -> Callable[[int], Any]:
    """``KeySharedDispatcher.current_owner_of_slot`` for a selector replayed from a history (``_ks_selector_state``):
    the handle owning a slot, None for a slot outside the selector's slot space."""
    from reference_model import key_shared as ks

    def owner(slot: int) -> Any:
        if selector != "consistent_hashing" and not 0 <= slot <= ks.RANGE_SIZE:
            return None
        found = ks.owner_of_slot(selector, state, slot)
        return handle_of.get(found) if selector == "consistent_hashing" and found is not None else found
    return owner


def misroute_key_shared(history: History) -> list[Mutant]:
    """On a Key_Shared subscription, between two changes of its consumers, every delivery goes to the consumer that
    owns its message when the sticky key is resolved wrongly (the partition key over the ordering key, the other
    broker line's keyless fallback: PLS-KEYSHARED-001) or its slot computed by another formula (another selector's
    or broker line's: PLS-KEYSHARED-002). A broker that gets keys or slots wrong gets them wrong for every message,
    so the lie is told for the whole stretch.

    The selector is replayed from the history's joins and leaves (``_ks_selector_state``); a stretch whose owners
    the replay does not confirm, or with a message sent before its last membership change, is left alone."""
    from types import SimpleNamespace

    from conformance.detectors import SLOT_LIES, STICKY_KEY_LIES, ks_owner_under_lie

    f = facts(history)
    out = []
    done: set[str] = set()
    stretches: dict[tuple[str, int], list[tuple[int, _Handle, ObservedMessage, Any]]] = {}
    for i, h, msg in _deliveries(f):
        if h.kind != "consumer" or h.sub_type != "Key_Shared" or "-partition-" in msg.topic:
            continue
        replay = _ks_selector_state(f, h, i)
        key = (h.sub_key, replay[4] if replay is not None else -1)
        si = f.sends.get(msg.payload)
        ok = replay is not None and not _is_copy(msg) and msg.message_id[3] < 0 and msg.redelivery_count == 0 \
            and si is not None and si > replay[4]
        stretches.setdefault(key, []).append((i, h, msg, replay if ok else None))
    for (_, since), dels in stretches.items():
        if any(r is None for *_, r in dels):
            continue
        settings, selector, state, handle_of, _ = dels[-1][3]
        d = SimpleNamespace(settings=settings, selector=selector,
                            current_owner_of_slot=_replayed_owner_of_slot(selector, state, handle_of))
        stored = {}
        for i, h, msg, _ in dels:
            seq = (history.events[f.sends[msg.payload]].outcome.value or {}).get("sequence_id")
            stored[i] = SimpleNamespace(ordering_key=msg.ordering_key, key=msg.key, producer_name=msg.producer_name,
                                        sequence_id=seq)
        own = {i: ks_owner_under_lie(d, stored[i], "PLS-KEYSHARED-002", lambda hv: _right_slot(settings, selector, hv))
               for i, *_ in dels}
        if any(own[i] != h.name for i, h, *_ in dels):
            continue  # the replay disagrees with the history: no claim
        for rule_id, lies in (("PLS-KEYSHARED-001", STICKY_KEY_LIES), ("PLS-KEYSHARED-002", SLOT_LIES)):
            if rule_id in done:
                continue
            for why, lie in lies:
                moved = {i: ks_owner_under_lie(d, stored[i], rule_id, lie) for i, *_ in dels}
                changed = [i for i, h, *_ in dels if moved[i] is not None and moved[i] != h.name]
                if not changed or any(moved[i] is None for i in moved):
                    continue
                events = list(history.events)
                for i in changed:
                    e = events[i]
                    events[i] = replace(e, op=replace(e.op, args={**e.op.args, "consumer": moved[i]}))
                steps = tuple(history.events[i].step for i in changed)
                m = _mutant(f, events, "misroute_key_shared", steps, (rule_id,),
                            f"steps {', '.join(map(str, steps))}: {len(changed)} of {len(dels)} deliveries moved to the "
                            f"consumers that own them with the {'sticky key' if rule_id == 'PLS-KEYSHARED-001' else 'slot'} "
                            f"taken from {why}")
                if m:
                    out.append(m)
                    done.add(rule_id)  # one lie of each kind per history: the checks are uniform
                break
    return out


# Ops that leave a Key_Shared subscription's pending acks alone (besides the consumers' own acks and receives);
# anything else between a join and the delivery (a seek, an unload, expiry, policies, compaction) is left alone.
_DRAIN_NEUTRAL_OPS = frozenset({"receive", "read_next", "send", "ack", "nack", "ack_cumulative", "reconsume_later",
                                "redeliver_unacked", "create_producer", "flush", "advance_time", "create_reader",
                                "create_topic", "subscribe", "close", "unsubscribe", "stats"})


def deliver_before_drained(history: History) -> list[Mutant]:
    """PLS-KEYSHARED-006: after a join (or leave) on a Key_Shared subscription moved a hash slot away from a consumer C
    that held unacked messages of it, the slot's new owner N got a message of it only after C's ack ended the
    draining; the lie moves that ack to just after N's delivery, so N got the message while C still held one.

    Replayed from the history's own ops: the selector before and after the change (``_ks_selector_state``, the
    chapter's pure functions), C's pending messages at the change (received, not acked, nacked or given back) and
    their slots (``key_shared.slot_for``), and the broker line and config from the header. What C holds is what its
    application received, so the broker's draining is at least as long: the lie is one under every reading. The
    ack moved is the one that brought C's count of the slot to zero; a draining that ended otherwise (a nack, a
    cumulative ack, a close, a redelivery request), a later membership change, or a seek, unload, expiry, policy or
    compaction before the delivery is left alone; so are keyless, batched, partitioned and DLQ/retry messages, and
    consumers with an ack timeout (the model counts those messages as given back at once). A stats op between the
    ack and the delivery is left alone too (the backlog it reports would change with the ack).

    Classified: Sticky mode (its ranges never move) and allowOutOfOrderDelivery (no draining) are ``allowed``; a
    broker without draining hashes (3.x, the 4.x classic dispatcher) holds the message back through its
    recently-joined-consumers rule instead: meant to break PLS-KEYSHARED-007 when N's message shares its key with a
    message C holds (a key served by two consumers at once), ``unstated`` otherwise."""
    from reference_model import key_shared as ks

    f = facts(history)
    events = history.events
    out: list[Mutant] = []
    pending: dict[tuple[str, str], dict[str, ObservedMessage]] = {}  # (subscription, handle) -> label -> message held
    seen: set[tuple[str, str]] = set()  # (subscription, slot) already lied about
    for j, e in enumerate(events):
        x = f.handle_at(j)
        if x is None or x.kind != "consumer" or x.sub_type != "Key_Shared" or e.outcome.status != OK:
            continue
        op = e.op.op
        msg = _delivery(e)
        if msg is not None:
            pending.setdefault((x.sub_key, x.name), {})[msg.payload] = msg
        elif op in ("ack", "nack", "reconsume_later"):  # an ack through any consumer of the subscription counts
            for (sub, _), held in pending.items():
                if sub == x.sub_key:
                    held.pop(e.op.args.get("message"), None)
        elif op in ("ack_cumulative", "redeliver_unacked", "seek", "close", "unsubscribe"):
            pending.pop((x.sub_key, x.name), None)
        if op not in ("subscribe", "close", "unsubscribe"):
            continue
        before, after = _ks_selector_state(f, x, j), _ks_selector_state(f, x, j + 1)
        if before is None or after is None:
            continue
        settings, selector = after[0], after[1]
        owner_before = _replayed_owner_of_slot(selector, before[2], before[3])
        owner_after = _replayed_owner_of_slot(selector, after[2], after[3])
        for (sub, c), held in list(pending.items()):
            if sub != x.sub_key:
                continue
            hc = next((y for y in f.handles.get(c, ()) if y.sub_key == x.sub_key and y.step <= e.step
                       and (y.closed_step is None or y.closed_step > e.step)), None)
            if c == x.name or hc is None or hc.args.get("ack_timeout_ms"):
                continue
            by_slot: dict[int, list[ObservedMessage]] = {}
            for m in held.values():
                key = _sticky_key(m, f)
                if key is None or _is_copy(m) or m.message_id[3] >= 0 or "-partition-" in m.topic:
                    by_slot = {}
                    break  # a message whose slot the replay cannot name: C's counts are not known
                by_slot.setdefault(ks.slot_for(settings.profile, selector, key), []).append(m)
            for slot, msgs in by_slot.items():
                new = owner_after(slot)
                if owner_before(slot) != c or new in (None, c) or (x.sub_key, slot) in seen:
                    continue
                m = _drain_lie(f, j, hc, new, slot, msgs, settings, selector)
                if m is not None:
                    seen.add((x.sub_key, slot))
                    out.append(m)
    return out


def _drain_lie(f: _Facts, j: int, c: _Handle, new: str, slot: int, held: list[ObservedMessage], settings: Any,
               selector: str) -> Mutant | None:
    """``deliver_before_drained`` for one moved slot: the ack of C that ended its draining moves after N's delivery."""
    from reference_model import key_shared as ks
    from reference_model.dispatch.key_shared import KeySharedPolicy

    events, sub_key = f.history.events, c.sub_key
    labels = {m.payload for m in held}
    left, ended = set(labels), None
    for k in range(j + 1, len(events)):
        e = events[k]
        y = f.handle_at(k)
        if e.op.op not in _DRAIN_NEUTRAL_OPS:
            return None  # a seek, an unload, expiry, a policy, compaction: not followed
        if y is None or y.sub_key != sub_key or e.outcome.status != OK:
            continue
        if e.op.op in ("subscribe", "close", "unsubscribe"):
            return None  # the next membership change (or C's close) before N got a message of the slot
        msg = _delivery(e)
        named = e.op.args.get("message")
        if named in labels:
            if y is c and e.op.op == "ack" and named in left and ended is None:
                left.discard(named)
                ended = k if not left else None
                continue
            return None  # given back, acked twice or through another consumer: not followed
        if y is c:
            if e.op.op in ("ack_cumulative", "redeliver_unacked"):
                return None
            continue
        if msg is None or _is_copy(msg) or msg.message_id[3] >= 0 or msg.payload in labels:
            continue
        key = _sticky_key(msg, f)
        if key is None or ks.slot_for(settings.profile, selector, key) != slot:
            continue
        if ended is None or y.name != new or msg.redelivery_count != 0:
            return None  # delivered while C still held the slot (already told), or not the first-hand new owner's
        if any(events[i].op.op == "stats" for i in range(ended + 1, k)):
            return None
        ack = events[ended]
        dur = ack.t_end_ms - ack.t_start_ms
        moved = replace(ack, t_start_ms=e.t_end_ms, t_end_ms=e.t_end_ms + dur)
        rows = list(events[:ended]) + list(events[ended + 1:k + 1]) + [moved] + list(events[k + 1:])
        _shift_after(rows, k, dur)
        policies = [KeySharedPolicy.from_arg(z.args.get("key_shared")) for zs in f.handles.values() for z in zs
                    if z.sub_key == sub_key and z.kind == "consumer" and z.step < e.step
                    and (z.closed_step is None or z.closed_step > e.step)]
        allowed = unstated = None
        rules: tuple[str, ...] = (ks.RULE_DRAINING,)
        if selector == "sticky":
            allowed = "Sticky mode: STICKY consumers never drain (the broker sets drainingHashesRequired for AUTO_SPLIT only)"
        elif any(p.allow_out_of_order for p in policies):
            allowed = "allowOutOfOrderDelivery is on: a moved hash is not drained (PLS-KEYSHARED-006's exception)"
        elif not settings.profile.draining_hashes:
            same_key = any(_sticky_key(m, f) == key for m in held)
            rules = ("PLS-KEYSHARED-007",) if same_key else ()
            if not same_key:
                unstated = (f"broker {settings.profile.label} has no draining hashes; its recently-joined-consumers "
                            "rule holds the message back, which no registered rule states for another key of the slot")
        held_labels = ", ".join(sorted(labels))
        return _mutant(f, rows, "deliver_before_drained", (ack.step, e.step), rules,
                       f"steps {ack.step}/{e.step}: {new} got {msg.payload} (hash {slot}) while {c.name} still held "
                       f"{held_labels} of that hash, moved away from it at step {events[j].step} (its ack now after)",
                       allowed, unstated)
    return None


def _right_slot(settings: Any, selector: str, hv: int) -> int:
    """PLS-KEYSHARED-002: the slot of hash ``hv`` for ``selector`` on the broker of ``settings`` (``key_shared.slot_for``)."""
    from reference_model import key_shared as ks

    profile = settings.profile
    if selector == "consistent_hashing":
        return hv if profile.ring_range is None else ks.make_sticky_key_hash(hv, *profile.ring_range)
    return ks.make_sticky_key_hash(hv, 0, ks.RANGE_SIZE - 1) if profile.range_slot_remap_zero else hv % ks.RANGE_SIZE


# Which rule a rejection speaks to, from the op and its args (reference_model/rules.py).
_WRONG_ERROR = {
    "ConsumerBusy": "NotAllowedError", "NotAllowedError": "ConsumerBusy", "ProducerFenced": "ProducerBusy",
    "ProducerBusy": "ProducerFenced", "InvalidTopicName": "TopicNotFound", "TopicNotFound": "InvalidTopicName",
    "CumulativeAcknowledgementNotAllowedError": "InvalidConfiguration",
    "InvalidAck": "CumulativeAcknowledgementNotAllowedError",
    "InvalidConfiguration": "InvalidArgument", "InvalidArgument": "InvalidConfiguration",
    "ConsumerAssignError": "ConsumerBusy", "MessageTooBig": "InvalidArgument",
    "SubscriptionNotFound": "TopicNotFound",
    "InvalidTxnStatus": "TransactionNotFound",
    "TransactionConflict": "OtherError",
    "TransactionHasOperationFailed": "InvalidTxnStatus",
    "IncompatibleSchema": "InvalidConfiguration",
}


def _rejection_rules(f: _Facts, i: int) -> tuple[str, ...]:
    e = f.history.events[i]
    op, a, err = e.op.op, e.op.args, e.outcome.error
    if err == "InvalidArgument" and _client_of(a, f.history.header.client) == "go" \
            and go_missing(op, a, _GO_PROFILE) is not None:
        return ("PLS-GO-001",)  # a Go handle asked for what the Go client has no API for
    if err == "InvalidArgument" and _client_of(a, f.history.header.client) == "go" and isinstance(a.get("schema"), Mapping) \
            and (a["schema"].get("type") in ("AVRO", "JSON")):
        return ("PLS-SCHEMA-025",)  # the Go client refuses a definition its Avro parser does not accept
    schema_rules = _schema_rejection_rules(f, i)
    if schema_rules is not None:
        return schema_rules
    if err in ("InvalidTopicName",) or (op in ("create_producer", "subscribe", "create_reader") and err == "TopicNotFound"):
        return ("PLS-TOPIC-003",)
    if op == "subscribe":
        if err == "ConsumerBusy":
            connected = [x for xs in f.handles.values() for x in xs if x.kind == "consumer"
                         and x.args.get("subscription") == a["subscription"] and x.args.get("topic") == a.get("topic")
                         and x.step < e.step and (x.closed_step is None or x.closed_step > e.step)]
            types = {x.sub_type for x in connected}
            if types == {"Key_Shared"} and a.get("type") == "Key_Shared":
                return ("PLS-KEYSHARED-008",)  # an incompatible KeySharedPolicy (mode or allowOutOfOrderDelivery)
            return ("PLS-SUBTYPE-001",) if types and a.get("type", "Exclusive") not in types else ("PLS-EXCL-001",)
        if err == "ConsumerAssignError":
            return ("PLS-KEYSHARED-005",)
        if err == "NotAllowedError" and a.get("read_compacted"):
            return ("PLS-COMPACT-007",)  # the Go client leaves the check to the broker
        if err == "NotAllowedError":
            return ("PLS-SUB-008",)
        if err == "InvalidArgument" and (a.get("dead_letter") or {}).get("max_redeliver_count", 1) < 1:
            return ("PLS-DLQ-007",)  # the client refuses the policy when the consumer is built
        if err == "InvalidConfiguration":
            if a.get("read_compacted"):
                return ("PLS-COMPACT-005",)
            if "ack_timeout_ms" in a or "ack_timeout_tick_ms" in a:
                return ("PLS-ACKTIMEOUT-003",) if _client_of(a, f.history.header.client) == "java" else ("PLS-ACKTIMEOUT-001",)
            if "dead_letter" in a:
                return ("PLS-DLQ-007",)
    if op == "create_producer":
        if err == "ProducerFenced":
            return ("PLS-ACCESS-002",)
        if err == "ProducerBusy":
            return ("PLS-ACCESS-003", "PLS-ACCESS-006")
        if err in ("InvalidConfiguration", "InvalidArgument") and a.get("chunking") and a.get("batching"):
            return ("PLS-CHUNK-004",)  # Python's ValueError: chunking and batching together
    if op == "send":
        if err == "MessageTooBig":
            return ("PLS-CHUNK-003", "PLS-CHUNK-006", "PLS-CHUNK-008")
        if err == "ProducerFenced":
            return ("PLS-ACCESS-004",)
        if err == "NotAllowedError" and ("deliver_after_ms" in a or "deliver_at_ms" in a):
            return ("PLS-DELAY-007",)  # delayed past delayedDeliveryMaxDelayInMillis
    if op in ("new_txn", "send", "ack", "ack_cumulative") and "txn" in a and err == "InvalidArgument":
        return ("PLS-TXN-006",)  # the Python client has no transactions
    if op in ("send", "ack", "ack_cumulative", "commit_txn", "abort_txn") and "txn" in a and err in ("InvalidTxnStatus", "OtherError") \
            and any(x.op.op in ("ack", "ack_cumulative") and x.op.args.get("txn") == a["txn"] and x.outcome.status == "rejected"
                    and x.outcome.error == "TransactionConflict" for x in f.history.events[:i]):
        return ("PLS-TXN-011",)  # a Go client holds a transaction with a failed op in its error state
    if op in ("send", "ack", "ack_cumulative", "commit_txn", "abort_txn") and err == "InvalidTxnStatus":
        return ("PLS-TXN-004",)
    if op == "send" and "txn" in a and err == "OtherError" and _client_of(a, f.history.header.client) == "go":
        return ("PLS-TXN-004",)  # the Go producer's own check of an ended transaction
    if op == "create_subscription" and err in ("Conflict", "OtherError"):
        return ("PLS-SUB-009",)  # the name exists (409) or the topic is non-persistent (400)
    if op in ("ack", "ack_cumulative") and err == "TransactionConflict":
        return ("PLS-TXN-010",)
    if op == "commit_txn" and err == "TransactionHasOperationFailed":
        return ("PLS-TXN-011",)
    if op == "ack_cumulative":
        return ({"CumulativeAcknowledgementNotAllowedError": "PLS-ACK-003", "InvalidAck": "PLS-ACK-007"}.get(err, "PLS-ACK-006"),)
    if op == "delete_topic" and err == "NotAllowedError":
        return ("PLS-TOPIC-004",)  # refused while a client was connected
    if op == "stats" and err == "SubscriptionNotFound":
        return {"unsubscribe": ("PLS-SUB-006",), "non-durable": ("PLS-SUB-007",), "delete": ("PLS-TOPIC-005",)}.get(
            _why_subscription_gone(f, i, a["topic"], a["subscription"]), ())
    return ()


def _why_subscription_gone(f: _Facts, i: int, topic: str, subscription: str) -> str | None:
    """Why subscription ``topic``/``subscription`` does not exist at event ``i``: an ok unsubscribe deleted it
    ("unsubscribe", PLS-SUB-006), the last consumer of a NonDurable one left ("non-durable", PLS-SUB-007), or an ok
    delete of its topic took it ("delete", PLS-TOPIC-005)."""
    why: str | None = None
    connected: set[str] = set()
    for j, e in enumerate(f.history.events[:i]):
        if e.op.op == "delete_topic" and e.outcome.status == OK and e.op.args["topic"] == topic:
            why = "delete"
            connected.clear()
            continue
        h = f.handle_at(j)
        if e.outcome.status != OK or h is None or h.kind != "consumer" or h.sub_key != f"{topic}/{subscription}":
            continue
        if e.op.op == "subscribe":
            why = None
            connected.add(h.name)
        elif e.op.op == "unsubscribe":
            why = "unsubscribe"
            connected.discard(h.name)
        elif e.op.op == "close":
            connected.discard(h.name)
            if not connected and h.args.get("subscription_mode") == "NonDurable":
                why = "non-durable"
    return why


def change_error_name(history: History) -> list[Mutant]:
    """A rejected op names a different (wrong) error."""
    f = facts(history)
    out = []
    for i, e in enumerate(history.events):
        if e.outcome.status != REJECTED or e.outcome.error not in _WRONG_ERROR:
            continue
        rules = _rejection_rules(f, i)
        events = list(history.events)
        wrong = _WRONG_ERROR[e.outcome.error]
        events[i] = replace(e, outcome=Outcome.rejected(wrong, e.outcome.detail))
        m = _mutant(f, events, "change_error_name", (e.step,), rules,
                    f"step {e.step}: {e.op.op} rejected with {wrong} instead of {e.outcome.error}")
        if m:
            out.append(m)
    return out


def change_stat(history: History) -> list[Mutant]:
    """A stats answer reports a backlog one higher or one lower."""
    f = facts(history)
    tol = _tol(f)
    out = []
    for i, e in enumerate(history.events):
        if e.op.op != "stats" or e.outcome.status != OK or "backlog" not in (e.outcome.value or {}):
            continue
        b = e.outcome.value["backlog"]
        lag = tol.ack_grouping_ms + tol.dispatch_latency_ms
        recent_ack = next((x for x in history.events[:i] if x.op.op in ("ack", "ack_cumulative")
                           and x.outcome.status == OK and e.t_start_ms - x.t_end_ms <= lag), None)
        for d in (+1, -1):
            if b + d < 0:
                continue
            allowed = None
            if d == +1 and recent_ack is not None:
                allowed = (f"an ack at step {recent_ack.step} ended within {lag:g} ms (ack grouping + dispatch) before "
                           "the stats: the broker may not have counted it yet")
            events = list(history.events)
            events[i] = replace(e, outcome=Outcome.ok({**e.outcome.value, "backlog": b + d}))
            m = _mutant(f, events, "change_stat", (e.step,), ("PLS-BACKLOG-001",),
                        f"step {e.step}: backlog {b + d} instead of {b}", allowed)
            if m:
                out.append(m)
    return out


def change_unacked_count(history: History) -> list[Mutant]:
    """A stats answer reports a Shared / Key_Shared consumer's unackedMessages above every message the history
    sent (PLS-UNACKED-002; on a non-persistent topic PLS-UNACKED-003). Only consumers whose name exactly one
    subscribe gave."""
    f = facts(history)
    sent = sum(1 for e in history.events if e.op.op == "send")
    named = [e.op.args.get("consumer_name") for e in history.events if e.op.op == "subscribe"]
    out = []
    for i, e in enumerate(history.events):
        reported = (e.outcome.value or {}).get("consumer_unacked") if e.op.op == "stats" and e.outcome.status == OK else None
        if not isinstance(reported, list):
            continue
        rule = unacked.RULE_NON_PERSISTENT if str(e.op.args["topic"]).startswith("non-persistent://") else unacked.RULE_COUNT
        for k, entry in enumerate(reported):
            if named.count(entry.get("consumer_name")) != 1:
                continue
            lie = [dict(x) for x in reported]
            lie[k]["unacked_messages"] = sent + 1
            events = list(history.events)
            events[i] = replace(e, outcome=Outcome.ok({**e.outcome.value, "consumer_unacked": lie}))
            m = _mutant(f, events, "change_unacked_count", (e.step,), (rule,),
                        f"step {e.step}: {entry.get('consumer_name')} reports {sent + 1} unacked messages, more than were sent")
            if m:
                out.append(m)
    return out


def stats_after_unsubscribe(history: History) -> list[Mutant]:
    """Stats asked right after an ok unsubscribe say the subscription is still there (a backlog), or fail
    with an error other than SubscriptionNotFound (PLS-SUB-006: the subscription and its backlog are gone)."""
    f = facts(history)
    out = []
    for x, e in enumerate(history.events):
        h = f.handle_at(x)
        if e.op.op != "unsubscribe" or e.outcome.status != OK or h is None or h.kind != "consumer" or not h.topic:
            continue
        args = {"topic": h.topic, "subscription": h.args["subscription"]}
        for outcome, text in ((Outcome.ok({"backlog": 0}), "answered backlog 0: the subscription survived"),
                              (Outcome.rejected("TopicNotFound", "mutant"), "failed with TopicNotFound")):
            events = list(history.events)
            events.insert(x + 1, Event(Op(0, "stats", args), outcome, e.t_end_ms, e.t_end_ms + 1.0))
            _shift_after(events, x + 1, 1.0)
            m = _mutant(f, events, "stats_after_unsubscribe", (e.step,), ("PLS-SUB-006",),
                        f"after step {e.step}: stats on {args['subscription']} {text} instead of SubscriptionNotFound")
            if m:
                out.append(m)
    return out


def _selector_rule(history: History, h: _Handle) -> str:
    """The Key_Shared rule that states ``h``'s hash ranges, from its subscribe and the broker config."""
    if (h.args.get("key_shared") or {}).get("mode") == "Sticky":
        return "PLS-KEYSHARED-005"
    cfg = (history.header.profile or {}).get("broker_config") or {}
    consistent = str(cfg.get("subscriptionKeySharedUseConsistentHashing", "true")).lower() == "true"
    return "PLS-KEYSHARED-003" if consistent else "PLS-KEYSHARED-004"


def change_reported_ranges(history: History) -> list[Mutant]:
    """A Key_Shared stats answer reports one consumer's hash ranges one slot short (its first range ends
    one slot earlier; a one-slot range grows by one)."""
    f = facts(history)
    out = []
    for i, e in enumerate(history.events):
        consumers = (e.outcome.value or {}).get("consumers") if e.op.op == "stats" and e.outcome.status == OK else None
        if not consumers:
            continue
        sub_key = f"{e.op.args['topic']}/{e.op.args['subscription']}"
        live = [h for hs in f.handles.values() for h in hs if h.kind == "consumer" and h.sub_key == sub_key
                and h.step < e.step and (h.closed_step is None or h.closed_step > e.step)]
        for k, c in enumerate(consumers):
            ranges = [list(r) for r in c.get("key_hash_ranges") or []]
            named = [h for h in live if h.name == c.get("consumer")] or [
                h for h in live if c.get("consumer_name") and h.args.get("consumer_name") == c.get("consumer_name")]
            if not ranges or not named:
                continue  # nobody the trace knows: no rule can say what it reports
            rule = _selector_rule(history, named[0])
            if rule == "PLS-KEYSHARED-003" and any(not h.args.get("consumer_name") for h in live):
                continue  # a ring of random names: nobody can predict the ranges, a lie is not observable
            start, end = ranges[0]
            ranges[0] = [start, end - 1] if end > start else [start, end + 1]
            events = list(history.events)
            changed = [dict(x) for x in consumers]
            changed[k] = {**changed[k], "key_hash_ranges": ranges}
            events[i] = replace(e, outcome=Outcome.ok({**e.outcome.value, "consumers": changed}))
            who = c.get("consumer") or c.get("consumer_name")
            m = _mutant(f, events, "change_reported_ranges", (e.step,), (rule,),
                        f"step {e.step}: {who} reports [{ranges[0][0]}, {ranges[0][1]}] instead of [{start}, {end}]")
            if m:
                out.append(m)
    return out


def _dead_letter_max(h: _Handle) -> int | None:
    dl = h.args.get("dead_letter") or {}
    return dl.get("max_redeliver_count")


def drop_dlq_copy(history: History) -> list[Mutant]:
    """The dead-letter copy of a message never reaches the DLQ consumer.

    A C++/Python copy of a batched message that the application never nacked is a batch sibling
    (PLS-DLQ-006: the whole batch goes); the nacked one's copy is PLS-DLQ-002's too. The receive
    that misses the copy waits past the copy's latest publication: the longest nack window of a
    dead-letter consumer, plus ``DEAD_LETTER_PUBLISH_MS``, plus twice the dispatch tolerance, after
    the copy was in fact observed."""
    f = facts(history)
    out = []
    tol = _tol(f)
    makers = [x for xs in f.handles.values() for x in xs if x.kind == "consumer" and x.args.get("dead_letter")]
    width = max((max(x.args.get("nack_delay_ms", 60_000), 100) // 3 + 256 for x in makers), default=0)
    for i, h, msg in _deliveries(f):
        if not _is_dead_letter_copy(f, msg):
            continue
        retry = any(x.args.get("enable_retry") for xs in f.handles.values() for x in xs)
        nacked = any(e.op.op == "nack" and e.op.args.get("message") == msg.payload for e in history.events[:i])
        dlq_rule = _dlq_count_rule(f)
        if not retry and _batched_copy(f, msg):
            rules: tuple[str, ...] = ("PLS-DLQ-006",) + ((dlq_rule,) if nacked else ())
        else:
            rules = (dlq_rule,) + (("PLS-RETRY-003",) if retry else ())
        e = history.events[i]
        wait = math.ceil(e.t_end_ms - e.t_start_ms + width + dl.DEAD_LETTER_PUBLISH_MS + 2 * tol.dispatch_latency_ms)
        m = _drop_at(f, i, h, msg, "drop_dlq_copy", rules, " (its dead-letter copy)", min_timeout_ms=wait)
        if m:
            out.append(m)
    return out


def drop_initial_subscription(history: History) -> list[Mutant]:
    """Stats on the dead-letter topic's initial subscription, asked once the copy must have been written (and before
    anyone subscribes to it), fail with SubscriptionNotFound: the client never created it (PLS-DLQ-004).

    The stats come after the nack that dead-letters a message (a delivery with count max_redeliver_count,
    then a nack) by the longest nack window, ``DEAD_LETTER_PUBLISH_MS`` and twice the dispatch tolerance;
    later events move later by as much as the stats had to wait."""
    f = facts(history)
    out = []
    tol = _tol(f)
    events0 = history.events
    dels = _deliveries(f)
    for c in (x for xs in f.handles.values() for x in xs):
        dead = c.args.get("dead_letter") or {}
        initial, n_max = dead.get("initial_subscription"), dead.get("max_redeliver_count")
        if c.kind != "consumer" or not initial or n_max is None or c.args.get("enable_retry") or not c.topic \
                or c.sub_type not in ("Shared", "Key_Shared"):
            continue
        dlq = dead.get("topic") or f"{c.topic}-{c.args['subscription']}-DLQ"
        last = {m.payload: j for j, hh, m in dels if hh is c and m.redelivery_count == n_max}
        nack = next((k for k, e in enumerate(events0) if e.op.op == "nack" and f.handle_at(k) is c and e.outcome.status == OK
                     and last.get(e.op.args.get("message"), len(events0)) < k), None)
        if nack is None:
            continue
        at = next((k for k in range(nack + 1, len(events0)) if events0[k].op.op == "subscribe"
                   and events0[k].op.args.get("topic") == dlq and events0[k].op.args.get("subscription") == initial), len(events0))
        d = max(c.args.get("nack_delay_ms", 60_000), 100)
        due = events0[nack].t_end_ms + d + d / 3 + dl.DEAD_LETTER_PUBLISH_MS + 2 * tol.dispatch_latency_ms
        start = max(due, events0[at - 1].t_end_ms)
        events = list(events0)
        events.insert(at, Event(Op(0, "stats", {"topic": dlq, "subscription": initial}),
                                Outcome.rejected("SubscriptionNotFound", "mutant"), start, start + 1.0))
        if at + 1 < len(events):
            _shift_after(events, at, max(0.0, start + 1.0 - events[at + 1].t_start_ms))
        m = _mutant(f, events, "drop_initial_subscription", (events0[nack].step,), ("PLS-DLQ-004",),
                    f"after step {events0[at - 1].step}: stats on {dlq}/{initial} fail with SubscriptionNotFound, though "
                    f"the nack at step {events0[nack].step} dead-lettered a message")
        if m:
            out.append(m)
    return out


def dlq_one_redelivery_fewer(history: History) -> list[Mutant]:
    """The last redelivery before dead-lettering (count N) never happens: the copy comes one delivery early."""
    f = facts(history)
    out = []
    dels = _deliveries(f)
    for i, h, msg in dels:
        n = _dead_letter_max(h) if h.kind == "consumer" else None
        if n is None or _is_copy(msg) or msg.redelivery_count != n or h.sub_type not in ("Shared", "Key_Shared"):
            continue
        copies = [j for j, hh, m in dels if j > i and _is_dead_letter_copy(f, m) and m.payload == msg.payload]
        if not copies:
            continue
        events = list(history.events)
        drop = {i}
        for j in range(i + 1, len(events)):
            if f.handle_at(j) is h and events[j].op.op in ("nack", "ack") and events[j].op.args.get("message") == msg.payload:
                drop.add(j)
                break
        kept = [ev for j, ev in enumerate(events) if j not in drop]
        allowed = None
        if msg.message_id[3] >= 0 and h.client == "python":
            allowed = ("a batched message: when one message of a batch is dead-lettered the whole batch goes "
                       "(PLS-DLQ-006), so its copy may come before its own last delivery")
        mt = _mutant(f, kept, "dlq_one_redelivery_fewer", tuple(history.events[j].step for j in sorted(drop)),
                     ("PLS-DLQ-008",) if h.client == "go" else ("PLS-DLQ-002",), f"step {history.events[i].step}: the delivery of {msg.payload} with count {n} "
                     f"is gone, yet its dead-letter copy still arrives (max_redeliver_count {n})", allowed)
        if mt:
            out.append(mt)
    return out


def change_redelivery_count(history: History) -> list[Mutant]:
    """A delivery reports a redelivery count one higher or one lower."""
    f = facts(history)
    dels = _deliveries(f)
    timed = {t.index for t in _timed_deliveries(f)}
    out = []
    seen: dict[tuple[str, str], int] = {}
    for i, h, msg in dels:
        key = (h.sub_key, msg.payload)
        prev = seen.get(key)
        seen[key] = i
        if h.kind != "consumer" or _is_copy(msg):
            continue
        # ACK-005 fixes the count after a first delivery (0) and after a nack / ack-timeout redelivery (+1)
        # (on Shared/Key_Shared; C++ Exclusive/Failover rewinds keep 0, per the rule's note; Java's are not stated)
        shared = h.sub_type in ("Shared", "Key_Shared")
        fixed = prev is None or (i in timed and (shared or h.client == "python"))
        if not fixed and shared:
            fixed = any(e.op.op == "redeliver_unacked" for e in history.events[prev + 1:i])
        # PLS-DLQ-005: a nacked message on an Exclusive/Failover dead-letter consumer always comes back with count 0
        nacked = any(e.op.op == "nack" and e.outcome.status == OK and e.op.args.get("message") == msg.payload
                     and (hh := f.handle_at(k)) is not None and hh.sub_key == h.sub_key
                     for k, e in enumerate(history.events[:i]))
        dlq_zero = nacked and h.sub_type in ("Exclusive", "Failover") and bool(h.args.get("dead_letter"))
        for d in (+1, -1):
            c = msg.redelivery_count + d
            if c < 0:
                continue
            rules = ["PLS-ACK-005"] if fixed else []
            if dlq_zero and c != 0:
                rules.append("PLS-DLQ-005")
            allowed = None if rules else ("the message came back after a reconnect, rewind or seek, where the "
                                          "count's increment is not fixed by PLS-ACK-005's wording")
            events = list(history.events)
            events[i] = _with_message(events[i], replace(msg, redelivery_count=c))
            m = _mutant(f, events, "change_redelivery_count", (history.events[i].step,), rules or ("PLS-ACK-005",),
                        f"step {history.events[i].step}: {msg.payload} with redelivery_count {c} instead of {msg.redelivery_count}",
                        allowed)
            if m:
                out.append(m)
    return out


def _observed_from_send(f: _Facts, label: str, like: ObservedMessage, count: int = 0) -> ObservedMessage | None:
    """The message a consumer would see for ``label``'s send, on ``like``'s topic."""
    if label not in f.sends:
        return None
    s = f.history.events[f.sends[label]]
    a, v = s.op.args, s.outcome.value or {}
    if "message_id" not in v:
        return None
    return ObservedMessage(payload=label, message_id=tuple(int(x) for x in v["message_id"]), topic=like.topic,
                           key=a.get("key"), ordering_key=a.get("ordering_key"), properties=dict(a.get("properties") or {}),
                           event_time=int(a.get("event_time") or 0), publish_time=int(v.get("publish_time") or 0),
                           redelivery_count=count, producer_name=like.producer_name)


# --------------------------------------------------------------------------- transactions (PLS-TXN-*)


@dataclass(frozen=True)
class _TxnFacts:
    begun: int  # index of its ok new_txn
    timeout_ms: int
    ended: int | None  # index of its ok commit_txn / abort_txn
    committed: bool


def _transactions(f: _Facts) -> dict[str, _TxnFacts]:
    out: dict[str, _TxnFacts] = {}
    for i, e in enumerate(f.history.events):
        name = e.op.args.get("txn")
        if e.outcome.status != OK or name is None:
            continue
        if e.op.op == "new_txn":
            out[name] = _TxnFacts(i, int(e.op.args.get("timeout_ms", txn_model.DEFAULT_TIMEOUT_MS)), None, False)
        elif e.op.op in ("commit_txn", "abort_txn") and name in out and out[name].ended is None:
            out[name] = replace(out[name], ended=i, committed=e.op.op == "commit_txn")
    return out


def _abort_window(f: _Facts, t: _TxnFacts) -> Span:
    """When the broker may abort ``t`` at its timeout (``transactions.broker_timeout``, the dispatch band as slack)."""
    begun = f.history.events[t.begun]
    return txn_model.broker_timeout(txn_model.begin("", Span(begun.t_start_ms, begun.t_end_ms), t.timeout_ms),
                                    _tol(f).dispatch_latency_ms)


def _txn_state_at(f: _Facts, t: _TxnFacts, i: int) -> str | None:
    """OPEN / ENDED (committed before event ``i``) / ABORTED (aborted or surely timed out before it), or None
    when the timeout may or may not have taken effect during it."""
    events = f.history.events
    if t.ended is not None and t.ended < i:
        return "ENDED" if t.committed else "ABORTED"
    window = _abort_window(f, t)
    if events[i].t_end_ms < window.start:
        return "OPEN"
    return "ABORTED" if events[i].t_start_ms > window.end else None


def deliver_through_transaction(history: History) -> list[Mutant]:
    """A receive that got nothing gets instead a message of an open transaction (PLS-TXN-001), of an
    aborted one (PLS-TXN-002), or one sent without a transaction after an open transaction's first
    message on the topic (PLS-TXN-003)."""
    f = facts(history)
    txns = _transactions(f)
    if not txns:
        return []
    dels = _deliveries(f)
    out = []
    used: set[tuple[str, str]] = set()
    for i, e in enumerate(history.events):
        h = f.handle_at(i)
        if e.op.op not in ("receive", "read_next") or e.outcome.status != OK or (e.outcome.value or {}).get("message") \
                or h is None or h.topic == "":
            continue
        like = next((m for _, hh, m in dels if hh.topic == h.topic), None)
        if like is None:
            continue
        first_open: str | None = None  # the first message on the topic of a transaction open at event i
        for label, j in sorted(f.sends.items(), key=lambda kv: kv[1]):
            send = history.events[j]
            if j > i or f.producer_topic.get(send.op.args["producer"]) != h.topic:
                continue
            name = send.op.args.get("txn")
            state = _txn_state_at(f, txns[name], i) if name in txns else None
            if name is not None and state is None:
                first_open = first_open or label  # may still be open: later messages may be held back
                continue
            if name is not None and state == "OPEN":
                rule, why = "PLS-TXN-001", f"{label} of transaction {name}, still open"
                first_open = first_open or label
            elif name is not None and state == "ABORTED":
                rule, why = "PLS-TXN-002", f"{label} of transaction {name}, which aborted"
            elif name is None and first_open is not None:
                rule, why = "PLS-TXN-003", f"{label}, appended after {first_open} of an open transaction"
            else:
                continue
            if (rule, h.sub_key) in used:
                continue
            msg = _observed_from_send(f, label, like)
            if msg is None:
                continue
            used.add((rule, h.sub_key))
            events = list(history.events)
            events[i] = replace(_with_message(e, msg), t_end_ms=min(e.t_end_ms, e.t_start_ms + 5))
            m = _mutant(f, events, "deliver_through_transaction", (e.step,), (rule,), f"step {e.step}: {h.name} got {why}")
            if m:
                out.append(m)
    return out


def keep_held_after_timeout(history: History) -> list[Mutant]:
    """A message a timed-out transaction held back, received by an Exclusive or Failover consumer or a reader,
    never comes: the receive that got it waits its whole timeout and gets nothing (PLS-TXN-005)."""
    f = facts(history)
    txns = _transactions(f)
    out = []
    tol = _tol(f)
    for i, e in enumerate(history.events):
        h = f.handle_at(i)
        got = (e.outcome.value or {}).get("message") if e.op.op in ("receive", "read_next") and e.outcome.status == OK else None
        if not got or h is None or h.sub_type not in ("Exclusive", "Failover", "Reader"):
            continue
        label = got["payload"]
        j = f.sends.get(label)
        if j is None or history.events[j].op.args.get("txn") is not None:
            continue
        holders = [(name, t) for name, t in txns.items() if t.ended is None and any(
            k < j and history.events[k].op.args.get("txn") == name
            and f.producer_topic.get(history.events[k].op.args["producer"]) == h.topic for k in f.sends.values())]
        if not holders:
            continue
        name, t = holders[0]
        window_end = _abort_window(f, t).end
        if e.t_start_ms > window_end:
            continue
        events = list(history.events)
        events[i] = _with_message(e, None)
        _set_end(events, i, max(e.t_start_ms + e.op.args.get("timeout_ms", 0), window_end + tol.dispatch_latency_ms + 1))
        m = _mutant(f, events, "keep_held_after_timeout", (e.step,), ("PLS-TXN-005",),
                    f"step {e.step}: {label}, held back by {name} (timeout {t.timeout_ms} ms), never came")
        if m:
            out.append(m)
    return out


def delete_without_rollover(history: History) -> list[Mutant]:
    """Acked data a new Earliest subscription found deleted, with the unload that closed its ledger taken out of
    the history: the broker deleted it from a ledger still open (PLS-RETENTION-001: deletion is never immediate)."""
    f = facts(history)
    out = []
    events = history.events
    tol = _tol(f)
    for x, un in enumerate(events):
        if un.op.op != "unload_topic" or un.outcome.status != OK or _retention_policy(f, x):
            continue
        topic = un.op.args["topic"]
        for i, e in enumerate(events):
            h = f.handle_at(i)
            if i <= x or e.op.op != "receive" or e.outcome.status != OK or _delivery(e) is not None or h is None \
                    or h.topic != topic or h.step <= un.step or h.args.get("initial_position") != "Earliest" \
                    or e.op.args.get("timeout_ms", 0) <= tol.dispatch_latency_ms:
                continue
            gone = [lab for lab, si in f.sends.items() if si < x and _acked_everywhere_else(f, h, lab)
                    and not any(d.payload == lab for j, hh, d in _deliveries(f) if hh is h and j < i)]
            first = min((f.sends[lab] for lab in gone), default=None)
            last = max((f.sends[lab] for lab in gone), default=None)
            if first is None or _ledger_closed_by(f, topic, first=first, last=last, at=i, without=x) is not None:
                continue
            kept = [ev for j, ev in enumerate(events) if j != x]
            rules = ["PLS-RETENTION-001"] + list(_delivery_rules(h, f, i)) + _initial_position_rule(f, h)
            m = _mutant(f, kept, "delete_without_rollover", (un.step, e.step), rules,
                        f"step {e.step}: {h.name} found {', '.join(gone)} deleted, and no unload (step {un.step} removed) "
                        "closed their ledger")
            if m:
                out.append(m)
            break
    return out


def _expired_by_pass(f: _Facts, x: int) -> list[str] | None:
    """The labels the expiry pass at event ``x`` surely expired on its topic: sent to it, not acked by an
    individual ack, and older than its ``seconds`` (the send ended that long before the pass started).
    None when a cumulative ack came before (which messages it covered is not read here)."""
    events = f.history.events
    ex = events[x]
    topic, secs = ex.op.args["topic"], ex.op.args["seconds"]
    if any(e.op.op == "ack_cumulative" for e in events[:x]):
        return None
    acked = {e.op.args["message"] for e in events[:x] if e.op.op == "ack" and e.outcome.status == OK}
    return [lab for lab, si in f.sends.items() if si < x and f.producer_topic.get(events[si].op.args["producer"]) == topic
            and ex.t_start_ms - events[si].t_end_ms > secs * 1000 and lab not in acked]


def deliver_ttl_expired(history: History) -> list[Mutant]:
    """After an expiry pass, a receive on that subscription gets a message the pass expired."""
    f = facts(history)
    out = []
    dels = _deliveries(f)
    for x, ex in enumerate(history.events):
        if ex.op.op != "expire_messages" or ex.outcome.status != OK:
            continue
        topic, sub = ex.op.args["topic"], ex.op.args["subscription"]
        expired = _expired_by_pass(f, x)
        if not expired:
            continue
        later = [(i, h) for i, e in enumerate(history.events) if i > x and e.op.op == "receive"
                 and (h := f.handle_at(i)) is not None and h.args.get("subscription") == sub and h.topic == topic]
        like = next((m for _, _, m in dels), None)
        if not later or like is None:
            continue
        i, h = later[0]

        def delivered_before(label: str) -> list[Any]:
            return [m for j, hh, m in dels if j < x and hh.sub_key == h.sub_key and m.payload == label]

        # one expired message that had been delivered (PLS-TTL-003 as well) and one that never was
        chosen = [lab for lab in (next((lab for lab in expired if delivered_before(lab)), None),
                                  next((lab for lab in expired if not delivered_before(lab)), None)) if lab is not None]
        for label in chosen:
            before = delivered_before(label)
            count = before[-1].redelivery_count + 1 if before else 0
            msg = _observed_from_send(f, label, like, count)
            if msg is None:
                continue
            events = list(history.events)
            e = events[i]
            events[i] = replace(_with_message(e, msg), t_end_ms=min(e.t_end_ms, e.t_start_ms + 5))
            rules = ("PLS-TTL-003", "PLS-TTL-001") if before else ("PLS-TTL-001",)
            m = _mutant(f, events, "deliver_ttl_expired", (e.step,), rules,
                        f"step {e.step}: {h.name} got {label}, which the expiry pass at step {ex.step} removed"
                        + (" after it was delivered" if before else " before any delivery"))
            if m:
                out.append(m)
    return out


def expiry_pass_kept(history: History) -> list[Mutant]:
    """Stats after an expiry pass still count the messages it expired (the pass removed nothing)."""
    f = facts(history)
    out = []
    for x, ex in enumerate(history.events):
        if ex.op.op != "expire_messages" or ex.outcome.status != OK:
            continue
        topic, sub = ex.op.args["topic"], ex.op.args["subscription"]
        expired = _expired_by_pass(f, x)
        stats = next((i for i in range(x + 1, len(history.events)) if history.events[i].op.op == "stats"
                      and history.events[i].op.args == {"topic": topic, "subscription": sub}
                      and history.events[i].outcome.status == OK), None)
        if not expired or stats is None:
            continue
        between = [e for e in history.events[x + 1:stats] if e.op.op in ("ack", "ack_cumulative", "expire_messages", "seek")]
        if between:
            continue  # another op moved the cursor since the pass: the backlog says nothing about the pass alone
        e = history.events[stats]
        b = e.outcome.value["backlog"]
        events = list(history.events)
        events[stats] = replace(e, outcome=Outcome.ok({**e.outcome.value, "backlog": b + len(expired)}))
        m = _mutant(f, events, "expiry_pass_kept", (ex.step, e.step), ("PLS-TTL-002", "PLS-BACKLOG-001"),
                    f"step {e.step}: backlog {b + len(expired)} instead of {b}: the expiry pass at step {ex.step} "
                    f"left {', '.join(expired)}")
        if m:
            out.append(m)
    return out


def compacted_sees_stale(history: History) -> list[Mutant]:
    """A compacted reader or consumer sees a superseded value of a key, or a key-less message, before the horizon."""
    f = facts(history)
    out = []
    compacts = [(x, e) for x, e in enumerate(history.events) if e.op.op == "compact" and e.outcome.status == OK]
    if not compacts:
        return out
    for i, h, msg in _deliveries(f):
        if not h.args.get("read_compacted") or msg.payload not in f.sends:
            continue
        si = f.sends[msg.payload]
        x = next((x for x, e in compacts if x > si and x < i and e.op.args["topic"] == h.topic), None)
        if x is None or msg.key is None:
            continue
        older = [lab for lab, j in f.sends.items() if j < si and history.events[j].op.args.get("key") == msg.key
                 and f.producer_topic.get(history.events[j].op.args["producer"]) == h.topic
                 and not history.events[j].op.args.get("tombstone")]
        keyless = [lab for lab, j in f.sends.items() if j < x and "key" not in history.events[j].op.args
                   and f.producer_topic.get(history.events[j].op.args["producer"]) == h.topic]
        for lab, rule, why in ([(older[-1], "PLS-COMPACT-001", f"a superseded value of key {msg.key!r}")] if older else []) + \
                ([(keyless[0], "PLS-COMPACT-003", "a message without a key")] if keyless else []):
            stale = _observed_from_send(f, lab, msg)
            if stale is None:
                continue
            events = list(history.events)
            events[i] = _with_message(events[i], stale)
            m = _mutant(f, events, "compacted_sees_stale", (history.events[i].step,), (rule,),
                        f"step {history.events[i].step}: {h.name} read {lab} ({why}) instead of {msg.payload}")
            if m:
                out.append(m)
    return out


def read_tombstone(history: History) -> list[Mutant]:
    """A compacted reader reads, in place of a message it read after the compaction, a tombstone (an empty or null
    value) of another key sent before that compaction: the view kept the tombstone, which the docs say deletes its
    key (PLS-COMPACT-006; what brokers 4.0.0-4.0.10 do for a C++/Python producer, known deviation KD-003)."""
    f = facts(history)
    out = []
    compacts = [x for x, e in enumerate(history.events) if e.op.op == "compact" and e.outcome.status == OK]
    tombstones = [(lab, j) for lab, j in f.sends.items() if history.events[j].op.args.get("tombstone")]
    for i, h, msg in _deliveries(f):
        if not h.args.get("read_compacted"):
            continue
        for lab, j in tombstones:
            if f.producer_topic.get(history.events[j].op.args["producer"]) != h.topic:
                continue
            if not any(j < x < i and history.events[x].op.args["topic"] == h.topic for x in compacts):
                continue  # sent after the last compaction: read as published (PLS-COMPACT-004)
            key = history.events[j].op.args.get("key")
            later = [k for k in f.sends.values() if k > j and history.events[k].op.args.get("key") == key
                     and f.producer_topic.get(history.events[k].op.args["producer"]) == h.topic]
            if later or key == msg.key:
                continue  # a later value of the key supersedes the tombstone
            tomb = _observed_from_send(f, lab, msg)
            if tomb is None:
                continue
            events = list(history.events)
            events[i] = _with_message(events[i], tomb)
            m = _mutant(f, events, "read_tombstone", (history.events[i].step,), ("PLS-COMPACT-006",),
                        f"step {history.events[i].step}: {h.name} read the tombstone {lab} (key {key!r}) instead of {msg.payload}")
            if m:
                out.append(m)
            break
    return out


def redeliver_non_persistent(history: History) -> list[Mutant]:
    """A non-persistent topic's consumer gets a message again (after its nack, or out of nothing)."""
    f = facts(history)
    out = []
    for i, h, msg in _deliveries(f):
        if h.kind != "consumer" or not _non_persistent(h):
            continue
        events = list(history.events)
        at = i
        for j in range(i + 1, len(events)):
            if f.handle_at(j) is h and events[j].op.op == "nack" and events[j].op.args["message"] == msg.payload:
                at = j
                break
        base = events[at]
        again = Event(Op(0, "receive", {"consumer": h.name, "timeout_ms": 1000}),
                      Outcome.ok({"message": replace(msg, redelivery_count=msg.redelivery_count + 1).to_json()}),
                      base.t_end_ms, base.t_end_ms + 1.0)
        events.insert(at + 1, again)
        _shift_after(events, at + 1, 1.0)
        m = _mutant(f, events, "redeliver_non_persistent", (history.events[i].step,), ("PLS-NP-002",),
                    f"after step {base.step}: {h.name} got {msg.payload} again on a non-persistent topic")
        if m:
            out.append(m)
    return out


def deliver_tag_filtered(history: History) -> list[Mutant]:
    """Under the tdmq profile, a consumer of a subscription with tags (``create_subscription``
    properties, or its first consumer's subscription properties) gets a message whose tags share none of
    them (PLS-TAG-001; PLS-TAG-003 when a consumer that joined giving other tags would take it): inserted
    after one of its receives, as the message the producer's send stored."""
    tags_of = _subscription_tags(history)
    joiners = _joiner_tags(history)
    if not any(tags_of.values()):
        return []
    f = facts(history)
    out = []
    for i, h, msg in _deliveries(f):
        wanted = tags_of.get((h.topic, h.args.get("subscription", "")))
        if h.kind != "consumer" or not wanted:
            continue
        for label, x in f.sends.items():
            send = history.events[x]
            tags = vendors.message_tags(send.op.args.get("properties"))
            if x > i or f.producer_topic.get(send.op.args["producer"]) != h.topic or vendors.tag_accepts(tags, wanted):
                continue
            observed = _observed_from_send(f, label, msg)
            if observed is None:
                continue
            events = list(history.events)
            base = events[i]
            events.insert(i + 1, Event(Op(0, "receive", {"consumer": h.name, "timeout_ms": 1000}),
                                       Outcome.ok({"message": observed.to_json()}), base.t_end_ms, base.t_end_ms + 1.0))
            _shift_after(events, i + 1, 1.0)
            # PLS-TAG-003 when a consumer that joined giving other tags would have let it through
            joined = any(vendors.tag_accepts(tags, other) for other in joiners.get((h.topic, h.args.get("subscription", "")), ()))
            m = _mutant(f, events, "deliver_tag_filtered", (base.step,), ("PLS-TAG-003" if joined else "PLS-TAG-001",),
                        f"after step {base.step}: {h.name} got {label} (tags {', '.join(sorted(tags))}) on a subscription "
                        f"with tags {', '.join(sorted(wanted))}")
            if m:
                out.append(m)
            break
    return out


def cumulative_ack_partial(history: History) -> list[Mutant]:
    """A message a cumulative ack covered is delivered again right after it (the ack acted on one message only)."""
    f = facts(history)
    dels = _deliveries(f)
    out = []
    for x, ack in enumerate(history.events):
        if ack.op.op != "ack_cumulative" or ack.outcome.status != OK:
            continue
        h = f.handle_at(x)
        if h is None or h.sub_type not in ("Exclusive", "Failover"):
            continue
        target = ack.op.args["message"]
        got = [(j, m) for j, hh, m in dels if j < x and hh.sub_key == h.sub_key]
        labels = [m.payload for _, m in got]
        if target not in labels:
            continue
        covered = [(j, m) for j, m in got if m.payload != target and labels.index(m.payload) < labels.index(target)]
        if not covered:
            continue
        j, msg = covered[-1]
        last_rx = max(jj for jj, _ in got)
        pending = next((history.events[k] for k in range(last_rx + 1, x) if f.handle_at(k) is h
                        and history.events[k].op.op in ("nack", "redeliver_unacked")), None)
        allowed = None if pending is None else (
            f"{pending.op.op} at step {pending.step} may still redeliver unacked messages")
        events = list(history.events)
        # past the ack-grouping and dispatch slack: the broker has had the ack for certain
        tol = _tol(f)
        wait = tol.ack_grouping_ms + tol.dispatch_latency_ms + 10.0
        again = Event(Op(0, "receive", {"consumer": h.name, "timeout_ms": int(wait) + 1000}),
                      Outcome.ok({"message": msg.to_json()}), ack.t_end_ms, ack.t_end_ms + wait)
        events.insert(x + 1, again)
        _shift_after(events, x + 1, wait)
        m = _mutant(f, events, "cumulative_ack_partial", (ack.step,), ("PLS-ACK-002",),
                    f"after step {ack.step}: {msg.payload}, covered by the cumulative ack of {target}, came back", allowed)
        if m:
            out.append(m)
    return out


# --------------------------------------------------------------------------- field and outcome lies


def _relabel_deliveries(events: list[Event], label: str, change: Callable[[ObservedMessage], ObservedMessage]) -> list[int]:
    """Apply ``change`` to every delivery of ``label``; the indexes it touched."""
    hit = []
    for j, e in enumerate(events):
        m = _delivery(e)
        if m is not None and m.payload == label and not _is_copy(m):
            events[j] = _with_message(e, change(m))
            hit.append(j)
    return hit


def _legacy_copy_topic(f: _Facts, msg: ObservedMessage, suffix: str) -> str | None:
    """A wrong name for the copy's topic: the namespace-level ``<subscription><suffix>`` (the default before
    apache/pulsar #9327) instead of the ``<topic>-<subscription><suffix>`` it arrived on; None when the copy's
    topic is not the default name of a consumer in the history (a name the policy gave explicitly)."""
    for xs in f.handles.values():
        for x in xs:
            if x.kind == "consumer" and x.topic and msg.topic == f"{x.topic}-{x.args['subscription']}{suffix}":
                return f"{x.args['subscription']}{suffix}"
    return None


def _batched_copy(f: _Facts, msg: ObservedMessage) -> bool:
    """Whether a C++/Python dead-letter copy is of a batched message (its ORIGIN_MESSAGE_ID '(l,e,p,b)' has b >= 0)."""
    text = str(msg.properties.get("ORIGIN_MESSAGE_ID", ""))
    if not (text.startswith("(") and text.endswith(")")):
        return False  # not the C++ form (Java writes 'l:e:p[:b]')
    try:
        return int(text[1:-1].split(",")[3]) >= 0
    except (IndexError, ValueError):
        return False


def change_message_field(history: History) -> list[Mutant]:
    """A delivered message arrives with a changed key, event time or property (a copy: a changed copy property or topic)."""
    f = facts(history)
    out = []
    done: set[str] = set()
    for i, h, msg in _deliveries(f):
        step = history.events[i].step
        if msg.topic.endswith("-DLQ") and "ORIGIN_MESSAGE_ID" in msg.properties:
            retry = any(x.args.get("enable_retry") for xs in f.handles.values() for x in xs)
            # (PLS-DLQ-001: the copy is the original plus ORIGIN_MESSAGE_ID and REAL_TOPIC)
            origin_rules = ("PLS-RETRY-003",) if retry else ("PLS-DLQ-001", "PLS-DLQ-003")
            if not retry and _batched_copy(f, msg):
                origin_rules += ("PLS-DLQ-006",)  # each batched copy carries its own ORIGIN_MESSAGE_ID
            variants = [("ORIGIN_MESSAGE_ID", replace(msg, properties={k: v for k, v in msg.properties.items() if k != "ORIGIN_MESSAGE_ID"}),
                         origin_rules)]
            legacy = _legacy_copy_topic(f, msg, "-DLQ")
            if legacy is not None:
                # past the retry maximum the copy is published "to the dead-letter topic instead" (PLS-RETRY-003)
                variants.append(("DLQ topic", replace(msg, topic=legacy), ("PLS-DLQ-001",) + (("PLS-RETRY-003",) if retry else ())))
        elif msg.topic.endswith("-RETRY"):
            # (PLS-RETRY-001: the retry topic holds a copy of the original with the retry properties)
            variants = [("RECONSUMETIMES", replace(msg, properties={**msg.properties, "RECONSUMETIMES": "99"}),
                         ("PLS-RETRY-002", "PLS-RETRY-001"))]
            legacy = _legacy_copy_topic(f, msg, "-RETRY")
            if legacy is not None:
                variants.append(("retry topic", replace(msg, topic=legacy), ("PLS-RETRY-001",)))
        elif _is_copy(msg) or msg.payload not in f.sends:
            continue
        elif "key_bytes" in history.events[f.sends[msg.payload]].op.args:
            # PLS-MSG-002: a key given as bytes arrives as its Base64 text (and, at a Java consumer, as the bytes)
            variants = [("binary key", replace(msg, key=history.events[f.sends[msg.payload]].op.args["key_bytes"],
                                               key_bytes=None), ("PLS-MSG-002",))]
        else:
            variants = [("key", replace(msg, key=(msg.key or "") + "-x"), ("PLS-MSG-001",)),
                        ("event_time", replace(msg, event_time=msg.event_time + 1), ("PLS-MSG-001",)),
                        ("properties", replace(msg, properties={**msg.properties, "mutated": "1"}), ("PLS-MSG-001",))]
        for what, changed, rules in variants:
            # one lie of each kind per history: field checks are uniform, so more would only pad the score
            if what in done:
                continue
            done.add(what)
            events = list(history.events)
            events[i] = _with_message(events[i], changed)
            m = _mutant(f, events, "change_message_field", (step,), rules, f"step {step}: {msg.payload} arrived with {what} changed")
            if m:
                out.append(m)
    return out


def _partitions(f: _Facts, topic: str) -> int:
    for e in f.history.events:
        if e.op.op == "create_topic" and e.op.args["topic"] == topic and e.outcome.status == OK:
            return int(e.op.args.get("partitions") or 0)
    return 0


def change_send_id(history: History) -> list[Mutant]:
    """A send's message id lies: another partition (routing), ids out of publish order, or a bad id shape.

    The deliveries of that message carry the same lie, so only the send-side rule is at stake."""
    f = facts(history)
    out = []
    events0 = history.events
    last_on_topic: dict[str, int] = {}
    first_keyless: dict[str, int] = {}
    for label, si in sorted(f.sends.items(), key=lambda kv: kv[1]):
        e = events0[si]
        a, v = e.op.args, e.outcome.value or {}
        if "message_id" not in v:
            continue
        mid = [int(x) for x in v["message_id"]]
        if mid[0] < 0:
            continue  # a deduplicated send: nothing was stored (PLS-DEDUP-001 ids)
        prod = a["producer"]
        topic = f.producer_topic.get(prod, "")
        pargs = next((x.op.args for x in events0 if x.op.op == "create_producer" and x.op.args["producer"] == prod), {})
        client = _client_of(pargs, history.header.client)
        # 1) routing: another partition
        n = _partitions(f, topic)
        if n > 1 and mid[2] >= 0:
            allowed = None
            if "key" in a or (client == "go" and "ordering_key" in a):
                rules = ["PLS-ROUTE-001"]
                if client == "java":
                    rules.append("PLS-ROUTE-004")
                if client == "go":
                    rules.append("PLS-ROUTE-005")  # the Go router: ordering key first, unsigned hash
                hashing = (pargs.get("router") or {}).get("hashing") or pargs.get("hashing_scheme")
                rules.append("PLS-HASH-002" if hashing == "java_string_hash" or (client == "java" and hashing is None) else "PLS-HASH-001")
            else:
                mode = pargs.get("routing_mode", "RoundRobin")
                rules = ["PLS-ROUTE-003" if mode == "SinglePartition" else "PLS-ROUTE-002"]
                first = first_keyless.setdefault(prod, si)
                if first == si:
                    allowed = "the first keyless message's partition is chosen at random"
                elif mode != "SinglePartition" and pargs.get("batching", client == "java"):
                    allowed = "a batching producer switches partitions per batch, not per message"
            q = (mid[2] + 1) % n
            new = mid[:2] + [q] + mid[3:]
            events = list(events0)
            events[si] = replace(e, outcome=Outcome.ok({**v, "message_id": new}))
            base = topic.split("-partition-")[0]
            _relabel_deliveries(events, label, lambda m: replace(
                m, message_id=(m.message_id[0], m.message_id[1], q, m.message_id[3]),
                topic=m.topic.rsplit("-partition-", 1)[0] + f"-partition-{q}"))
            mt = _mutant(f, events, "change_send_id", (e.step,), rules,
                         f"step {e.step}: {label} stored on partition {q} instead of {mid[2]} of {base}", allowed)
            if mt:
                out.append(mt)
        # 2) publish order: this send's id swapped with the previous one's on the same topic/partition
        key = f"{topic}#{mid[2]}"
        prev = last_on_topic.get(key)
        last_on_topic[key] = si
        if prev is not None and mid[2] < 0 and not topic.startswith("non-persistent://"):
            pe = events0[prev]
            pv = pe.outcome.value or {}
            if "message_id" in pv and list(pv["message_id"]) != mid:
                events = list(events0)
                events[prev] = replace(pe, outcome=Outcome.ok({**pv, "message_id": mid}))
                events[si] = replace(e, outcome=Outcome.ok({**v, "message_id": list(pv["message_id"])}))
                _relabel_deliveries(events, label, lambda m: replace(m, message_id=tuple(pv["message_id"])))
                _relabel_deliveries(events, pe.op.args["payload"], lambda m: replace(m, message_id=tuple(mid)))
                mt = _mutant(f, events, "change_send_id", (pe.step, e.step), ("PLS-MSGID-002",),
                             f"steps {pe.step}/{e.step}: {pe.op.args['payload']} and {label} swapped ids")
                if mt:
                    out.append(mt)
        # 3) shape: a non-persistent id must be (0,0,p,-1); a plain id has batch index -1
        if topic.startswith("non-persistent://"):
            new, rules = [mid[0] + 1, mid[1], mid[2], mid[3]], ("PLS-NP-003",)
        elif mid[3] == -1:
            new, rules = mid[:3] + [0], ("PLS-MSGID-001",)
            if not pargs.get("batching", client == "java"):
                pass
            else:
                continue  # a batching producer may write a batch of one (PLS-BATCH-008)
        else:
            continue
        events = list(events0)
        events[si] = replace(e, outcome=Outcome.ok({**v, "message_id": new}))
        _relabel_deliveries(events, label, lambda m: replace(m, message_id=tuple(new)))
        mt = _mutant(f, events, "change_send_id", (e.step,), rules, f"step {e.step}: {label} got id {new} instead of {mid}")
        if mt:
            out.append(mt)
    return out


def change_received_id(history: History) -> list[Mutant]:
    """A delivery carries an id other than the one its send returned (or another partition's topic name)."""
    f = facts(history)
    out = []
    seen = set()
    for i, h, msg in _deliveries(f):
        if _is_copy(msg) or msg.payload not in f.sends or h.sub_key in seen:
            continue
        seen.add(h.sub_key)  # one per subscription or reader
        step = history.events[i].step
        mid = msg.message_id
        if msg.topic.startswith("non-persistent://") or h.topic.startswith("non-persistent://"):
            rules, changed = ("PLS-NP-003",), replace(msg, message_id=(mid[0] + 1,) + mid[1:])
        elif mid[2] >= 0:
            rules, changed = ("PLS-TOPIC-002",), replace(msg, topic=msg.topic.rsplit("-partition-", 1)[0] + f"-partition-{mid[2] + 7}")
        else:
            rules, changed = ("PLS-MSGID-001",), replace(msg, message_id=(mid[0], mid[1] + 1000) + mid[2:])
        events = list(history.events)
        events[i] = _with_message(events[i], changed)
        m = _mutant(f, events, "change_received_id", (step,), rules, f"step {step}: {msg.payload} arrived as {changed.topic} {list(changed.message_id)}")
        if m:
            out.append(m)
    return out


def change_last_sequence_id(history: History) -> list[Mutant]:
    """A new producer reports last_sequence_id one higher than it should."""
    f = facts(history)
    out = []
    for i, e in enumerate(history.events):
        if e.op.op != "create_producer" or e.outcome.status != OK or "last_sequence_id" not in (e.outcome.value or {}):
            continue
        a, v = e.op.args, e.outcome.value
        named_again = "name" in a and any(x.op.op == "create_producer" and x.op.args.get("name") == a["name"]
                                          for x in history.events[:i])
        if not named_again and any(x.op.op == "create_producer" for x in history.events[:i]):
            continue  # one plain PROD-001 lie per history
        rules = ["PLS-PROD-001"]
        if named_again:
            rules = ["PLS-DEDUP-002"] if f.deduplication(i, a["topic"])[0] else ["PLS-DEDUP-003"]
        if a.get("initial_sequence_id") == 0 and _client_of(a, history.header.client) == "python":
            rules.append("PLS-DEDUP-005")
        events = list(history.events)
        events[i] = replace(e, outcome=Outcome.ok({**v, "last_sequence_id": v["last_sequence_id"] + 1}))
        m = _mutant(f, events, "change_last_sequence_id", (e.step,), rules,
                    f"step {e.step}: last_sequence_id {v['last_sequence_id'] + 1} instead of {v['last_sequence_id']}")
        if m:
            out.append(m)
    return out


def accept_rejected(history: History) -> list[Mutant]:
    """An op the target refused succeeds instead (a missing rejection)."""
    f = facts(history)
    out = []
    for i, e in enumerate(history.events):
        if e.outcome.status != REJECTED or e.op.op not in ("subscribe", "create_producer", "create_reader", "ack_cumulative",
                                                           "new_txn", "commit_txn", "abort_txn", "delete_topic") \
                and not (e.op.op == "ack" and "txn" in e.op.args):
            continue
        rules = _rejection_rules(f, i)
        value = {"producer_name": f"mutant-{e.step}", "last_sequence_id": -1} if e.op.op == "create_producer" else {}
        events = list(history.events)
        events[i] = replace(e, outcome=Outcome.ok(value))
        m = _mutant(f, events, "accept_rejected", (e.step,), rules, f"step {e.step}: {e.op.op} succeeded instead of {e.outcome.error}")
        if m:
            out.append(m)
    return out


def reject_ok_op(history: History) -> list[Mutant]:
    """An op the rules say succeeds is refused (an unexpected rejection): charged to the rule whose text says when that
    op is refused, or to PLS-OP-001 where none does (a plain producer's creation, a send on it)."""
    f = facts(history)
    out = []
    live_producers: dict[str, list[str]] = {}
    acked: set[tuple[str, str]] = set()
    acked_ops: set[str] = set()  # op kinds that already have their one lie
    plain_producers: set[str] = set()  # producers made without an access mode
    for i, e in enumerate(history.events):
        op, a = e.op.op, e.op.args
        rules: list[str] = []
        error = "OtherError"
        if e.outcome.status == OK and op == "create_producer":
            others = live_producers.setdefault(a["topic"], [])
            mode = a.get("access_mode", "Shared")
            if mode == "Shared" and others:
                rules, error = ["PLS-ACCESS-001"], "ProducerBusy"
            elif mode == "WaitForExclusive":
                rules, error = ["PLS-ACCESS-005"], "ProducerBusy"
            elif "access_mode" not in a and "create_producer" not in acked_ops:
                # PLS-OP-001: no rule gives a reason to refuse a plain producer (one lie per history)
                rules, error = ["PLS-OP-001"], "OtherError"
                acked_ops.add("create_producer")
            others.append(a["producer"])
            if "access_mode" not in a:
                plain_producers.add(a["producer"])
        elif (e.outcome.status == OK and op == "send" and a.get("producer") in plain_producers
              and "send" not in acked_ops and "txn" not in a):
            rules, error = ["PLS-OP-001"], "OtherError"  # nor to refuse a send on it (one lie per history)
            acked_ops.add("send")
        elif e.outcome.status == OK and op == "subscribe":
            rules, error = (["PLS-SUB-001"] if "subscribe" not in acked_ops else []), "ConsumerBusy"
            acked_ops.add("subscribe")  # one plain-subscribe lie per history
            if a.get("ack_timeout_ms"):
                # an ack timeout at or above the client's minimum is accepted (PLS-ACKTIMEOUT-001/003)
                java = _client_of(a, history.header.client) == "java"
                rules, error = ["PLS-ACKTIMEOUT-003" if java else "PLS-ACKTIMEOUT-001"], "InvalidConfiguration"
            if any(x.op.op == "subscribe" and x.op.args.get("subscription") == a["subscription"]
                   and x.op.args.get("topic") == a.get("topic") and x.outcome.status == OK for x in history.events[:i]):
                rules = ["PLS-SUB-004"] if "initial_position" in a else []
        elif e.outcome.status == OK and op == "delete_topic":
            # PLS-TOPIC-004: the delete went ahead, so no client was connected; refused, it breaks the rule
            rules, error = ["PLS-TOPIC-004"], "NotAllowedError"
        elif e.outcome.status == OK and op == "create_subscription":
            # PLS-SUB-009: a new name on a persistent topic (made if missing) is created; refused, it breaks the rule
            rules, error = ["PLS-SUB-009"], "Conflict"
        elif e.outcome.status == OK and op == "ack":
            k = (a["consumer"], a["message"])
            if k in acked:
                rules, error = ["PLS-ACK-004"], "OtherError"
            acked.add(k)
        if not rules:
            continue
        events = list(history.events)
        events[i] = replace(e, outcome=Outcome.rejected(error, "mutant"))
        m = _mutant(f, events, "reject_ok_op", (e.step,), rules, f"step {e.step}: {op} rejected with {error}")
        if m:
            out.append(m)
    return out


# --------------------------------------------------------------------------- admin topic and cursor ops


_CURSOR_MOVES = ("seek", "reset_cursor", "skip", "clear_backlog", "expire_messages", "ack_cumulative")


def _open_on(f: _Facts, topic: str, subscription: str, at: int) -> list[_Handle]:
    """The consumers of ``topic``/``subscription`` open at the op of event ``at``."""
    step = f.history.events[at].step
    return [h for hs in f.handles.values() for h in hs if h.kind == "consumer" and h.topic == topic
            and h.args.get("subscription") == subscription and h.step < step
            and (h.closed_step is None or h.closed_step > step)]


def _next_receive_on(f: _Facts, topic: str, subscription: str | None, after: int) -> int | None:
    """The first receive after event ``after`` by a consumer of ``topic`` (and ``subscription``), unless a cursor op or
    a delete of the topic comes first."""
    for i in range(after + 1, len(f.history.events)):
        e = f.history.events[i]
        if e.op.op in _CURSOR_MOVES + ("delete_topic",) and (e.op.args.get("topic") == topic or e.op.op in ("seek", "ack_cumulative")):
            return None
        h = f.handle_at(i)
        if e.op.op == "receive" and h is not None and h.topic == topic \
                and (subscription is None or h.args.get("subscription") == subscription):
            return i
    return None


def _sent_to(f: _Facts, topic: str, first: int, last: int) -> list[str]:
    """The labels sent to ``topic`` by ok sends between events ``first`` and ``last`` (exclusive), in send order."""
    events = f.history.events
    return [lab for lab, si in sorted(f.sends.items(), key=lambda kv: kv[1]) if first < si < last
            and f.producer_topic.get(events[si].op.args["producer"]) == topic]


def _created_at(f: _Facts, topic: str, subscription: str, before: int) -> int | None:
    """The event of the first ok subscribe (or create_subscription) that made ``topic``/``subscription`` before ``before``."""
    for i, e in enumerate(f.history.events[:before]):
        if e.outcome.status == OK and e.op.op in ("subscribe", "create_subscription") and e.op.args.get("topic") == topic \
                and e.op.args.get("subscription") == subscription:
            return i
    return None


def deliver_admin_removed(history: History) -> list[Mutant]:
    """A receive after an admin op shows a message that op took away from the subscription (or the topic):
    - after an ok ``skip`` (PLS-SKIP-001): the subscription's oldest message, when nothing could have acked or
      moved past it before (sent after the subscription was made, no ok ack naming it, no earlier cursor op there);
    - after an ok ``clear_backlog`` (PLS-SKIP-002): the last message sent to the topic before it, sent after any
      earlier cursor op there and never acked by an op;
    - after an ok ``reset_cursor`` to a message of a single-active subscription (PLS-SEEK-004): the message after the
      reset point instead of the first one (the one sent right after it, or, excluded, the reset message itself);
    - after an ok ``delete_topic`` (PLS-TOPIC-005): the last message sent to the topic before the delete.
    Only where no consumer of the subscription was connected at the op: one that was may still hold a copy its queue
    prefetched before, which may surface once."""
    f = facts(history)
    out = []
    dels = _deliveries(f)
    like = next((m for _, _, m in dels), None)
    if like is None:
        return []
    events = history.events
    acked = {e.op.args["message"] for e in events if e.op.op == "ack" and e.outcome.status == OK}
    for x, ex in enumerate(events):
        op, a = ex.op.op, ex.op.args
        if ex.outcome.status != OK or op not in ("skip", "clear_backlog", "reset_cursor", "delete_topic"):
            continue
        topic, sub = a["topic"], a.get("subscription")
        if op != "delete_topic" and (sub is None or _open_on(f, topic, sub, x)):
            continue
        i = _next_receive_on(f, topic, sub, x)
        if i is None:
            continue
        h = f.handle_at(i)
        made = _created_at(f, topic, sub, x) if sub is not None else None
        earlier = [j for j, e in enumerate(events[:x]) if e.outcome.status == OK and e.op.op in _CURSOR_MOVES
                   and (e.op.args.get("topic") == topic and e.op.args.get("subscription") == sub
                        or (f.handle_at(j) is not None and f.handle_at(j).sub_key == f"{topic}/{sub}"))]
        since = max([made if made is not None else -1] + earlier)
        label, rules, text = None, (), ""
        if op == "skip" and made is not None and not earlier:
            label = next((lab for lab in _sent_to(f, topic, made, x) if lab not in acked), None)
            rules, text = ("PLS-SKIP-001",), "the skip acked it (the oldest message there)"
        elif op == "clear_backlog":
            label = next((lab for lab in reversed(_sent_to(f, topic, since, x)) if lab not in acked), None)
            rules, text = ("PLS-SKIP-002",), "the clear acked it"
        elif op == "reset_cursor" and "message" in a and h is not None and h.sub_type in ("Exclusive", "Failover"):
            sent = _sent_to(f, topic, -1, x)
            at = sent.index(a["message"]) if a["message"] in sent else None
            if at is not None and a.get("excluded"):
                label, rules, text = a["message"], ("PLS-SEEK-004",), "the reset was to the message after it"
            elif at is not None and at + 1 < len(sent):
                label, rules, text = sent[at + 1], ("PLS-SEEK-004",), f"the reset was to {a['message']}, which comes first"
        elif op == "delete_topic":
            label = next(iter(reversed(_sent_to(f, topic, -1, x))), None)
            rules, text = ("PLS-TOPIC-005",), "the delete took it with its topic"
        if label is None or not rules:
            continue
        msg = _observed_from_send(f, label, like)
        if msg is None:
            continue
        e = events[i]
        mutated = list(events)
        mutated[i] = _with_message(e, replace(msg, topic=h.topic or msg.topic))
        m = _mutant(f, mutated, "deliver_admin_removed", (e.step,), rules,
                    f"step {e.step}: {h.name if h else '?'} got {label} after the {op} at step {ex.step}: {text}")
        if m:
            out.append(m)
    return out


def refuse_short_topic_name(history: History) -> list[Mutant]:
    """The first accepted subscribe or reader that names a topic by its short form (``t``, ``tenant/ns/t``) is refused with
    InvalidTopicName: the client did not expand the name to ``persistent://public/default/t`` (PLS-TOPIC-001)."""
    f = facts(history)
    # a refused consumer or reader leaves no trace in later ops (the checker follows it no further); a refused
    # create_topic or producer would leave later sends and deliveries on a topic the history says was never made
    for i, e in enumerate(history.events):
        topic = e.op.args.get("topic")
        if e.op.op not in ("subscribe", "create_reader") or e.outcome.status != OK \
                or not isinstance(topic, str) or "://" in topic:
            continue
        events = list(history.events)
        events[i] = replace(e, outcome=Outcome.rejected("InvalidTopicName", "mutant"))
        m = _mutant(f, events, "refuse_short_topic_name", (e.step,), ("PLS-TOPIC-001",),
                    f"step {e.step}: {e.op.op} on {topic!r} rejected with InvalidTopicName")
        return [m] if m else []
    return []


def deliver_acked(history: History) -> list[Mutant]:
    """An individually acked message is delivered again on that subscription (past the ack-grouping slack)."""
    f = facts(history)
    out = []
    tol = _tol(f)
    dels = _deliveries(f)
    txns = _transactions(f)
    for x, ack in enumerate(history.events):
        if ack.op.op != "ack" or ack.outcome.status != OK:
            continue
        h = f.handle_at(x)
        got = [m for j, hh, m in dels if j < x and hh is h and m.payload == ack.op.args["message"]]
        if h is None or not got or _is_copy(got[-1]) or _non_persistent(h):
            continue
        if "txn" in ack.op.args:
            out += _deliver_txn_acked(f, x, h, got[-1], txns.get(ack.op.args["txn"]))
            continue
        if any(history.events[k].op.op == "seek" and f.handle_at(k) is not None and f.handle_at(k).sub_key == h.sub_key
               for k in range(x + 1, len(history.events))):
            continue  # a later seek may legitimately bring it back; insert right after the ack only
        allowed = None
        if got[-1].message_id[3] >= 0 and not h.args.get("batch_index_ack"):
            allowed = ("a batched message without batch index ack: a redelivered batch comes back whole, acked "
                       "messages included (PLS-BATCH-004)")
        events = _delivered_again_after(history, x, h, got[-1], tol.ack_grouping_ms + tol.dispatch_latency_ms + 10.0)
        # a batched message comes back only with its entry: with batch index ack, one that brings back an acked index
        rules = ("PLS-ACK-001", "PLS-BATCH-005") if got[-1].message_id[3] >= 0 and _index_ack(f, h) else ("PLS-ACK-001",)
        m = _mutant(f, events, "deliver_acked", (ack.step,), rules,
                    f"after step {ack.step}: {got[-1].payload} delivered again after its ack", allowed)
        if m:
            out.append(m)
    return out


def _reported_ids(history: History) -> dict[str, list[int]]:
    """label -> the id its send or its producer's flush reported (ledger, entry, partition, batch index)."""
    out: dict[str, list[int]] = {}
    for e in history.events:
        if e.outcome.status != OK:
            continue
        v = e.outcome.value or {}
        if e.op.op == "send" and v.get("message_id"):
            out[e.op.args["payload"]] = [int(x) for x in v["message_id"]]
        elif e.op.op == "flush":
            out.update({k: [int(x) for x in m] for k, m in (v.get("message_ids") or {}).items()})
    return out


def deliver_entry_acked_by_producer_id(history: History) -> list[Mutant]:
    """PLS-BATCH-010: an ack that named a batched message by the id its producer returned took the whole entry (a
    Java or Go consumer, or one with batch index ack); a consumer that took the subscription over after the acking
    one closed gets a sibling of that entry (one the ack did not name; for a cumulative ack, one after it) instead of
    its first message."""
    f = facts(history)
    ids = _reported_ids(history)
    received_by: dict[str, set[str]] = {}
    out = []
    for x, e in enumerate(history.events):
        h = f.handle_at(x)
        if h is not None and e.op.op == "consume" and e.outcome.status == OK:
            received_by.setdefault(h.name, set()).update(m.get("payload") for m in (e.outcome.value or {}).get("messages") or ())
        msg = _delivery(e)
        if msg is not None and h is not None:
            received_by.setdefault(h.name, set()).add(msg.payload)
        if e.op.op not in ("ack", "ack_cumulative") or e.outcome.status != OK or h is None or "txn" in e.op.args:
            continue
        label = e.op.args["message"]
        named = ids.get(label)
        if named is None or named[3] < 0 or label in received_by.get(h.name, set()) or _non_persistent(h):
            continue
        if h.client not in ("java", "go") and not h.args.get("batch_index_ack"):
            continue  # a C++ producer's own id without batch index ack takes nothing of the entry
        siblings = [k for k, m in ids.items() if m[:3] == named[:3] and m[3] >= 0 and k != label
                    and (e.op.op == "ack" or m[3] > named[3])]
        closing = next((g for g in history.events[x + 1:] if g.step == h.closed_step), None)
        if not siblings or closing is None or closing.op.op != "close":
            continue  # an unsubscribe deletes the subscription: a later one may read the entry again
        after = next(((j, g) for j, g in enumerate(history.events[x + 1:], x + 1) if _delivery(g) is not None
                      and f.handle_at(j) is not None and f.handle_at(j).sub_key == h.sub_key
                      and f.handle_at(j).step > h.closed_step), None)
        if after is None or _delivery(after[1]).payload in siblings:
            continue
        j, g = after
        if any(k.op.op in ("seek", "reset_cursor", "delete_topic", "unsubscribe", "skip", "clear_backlog")
               for k in history.events[x + 1:j]):
            continue  # the cursor may have moved back over the entry
        sibling = siblings[0]
        shown = replace(_delivery(g), payload=sibling, message_id=tuple(ids[sibling]))
        events = list(history.events)
        events[j] = replace(g, outcome=Outcome.ok({**(g.outcome.value or {}), "message": shown.to_json()}))
        m = _mutant(f, events, "deliver_entry_acked_by_producer_id", (e.step, g.step), ("PLS-BATCH-010",),
                    f"step {g.step}: {sibling} delivered to {f.handle_at(j).name} though step {e.step}'s ack of "
                    f"{label} by its producer's id acked their entry")
        if m:
            out.append(m)
    return out


def _delivered_again_after(history: History, at: int, h: _Handle, msg: ObservedMessage, wait: float) -> list[Event]:
    """The history's events with a receive inserted right after event ``at``: ``h`` gets ``msg`` again (count+1)
    ``wait`` ms later; everything after moves by ``wait``."""
    events = list(history.events)
    anchor = events[at]
    again = Event(Op(0, "receive", {"consumer": h.name, "timeout_ms": int(wait) + 1000}),
                  Outcome.ok({"message": replace(msg, redelivery_count=msg.redelivery_count + 1).to_json()}),
                  anchor.t_end_ms, anchor.t_end_ms + wait)
    events.insert(at + 1, again)
    _shift_after(events, at + 1, wait)
    return events


def _deliver_txn_acked(f: _Facts, x: int, h: _Handle, msg: ObservedMessage, txn: "_TxnFacts | None") -> list[Mutant]:
    """A message acked in a transaction is delivered again right after the ack, while the transaction is open
    (PLS-TXN-007), and right after the transaction committed (PLS-TXN-008); after an abort it may come back."""
    history = f.history
    tol = _tol(f)
    wait = tol.dispatch_latency_ms + 10.0
    out = []
    places = [(x, "PLS-TXN-007", "while its transaction is open")]
    if txn is not None and txn.ended is not None and txn.committed:
        places.append((txn.ended, "PLS-TXN-008", "after its transaction committed"))
    for at, rule, when in places:
        if any(history.events[k].op.op == "seek" and f.handle_at(k) is not None and f.handle_at(k).sub_key == h.sub_key
               for k in range(x + 1, len(history.events))):
            break  # a later seek may legitimately bring it back
        if h.closed_step is not None and h.closed_step <= history.events[at].step:
            continue
        anchor = history.events[at]
        events = _delivered_again_after(history, at, h, msg, wait)
        m = _mutant(f, events, "deliver_acked", (history.events[x].step,), (rule,),
                    f"after step {anchor.step}: {msg.payload}, acked in a transaction, delivered again {when}")
        if m:
            out.append(m)
    return out


def drop_abort_redelivery(history: History) -> list[Mutant]:
    """After a transaction that acked a message individually aborts, the receive that got the message back
    gets nothing, waiting past the dispatch band (PLS-TXN-009)."""
    f = facts(history)
    txns = _transactions(f)
    tol = _tol(f)
    out = []
    for name, t in txns.items():
        if t.ended is None or t.committed:
            continue
        abort = history.events[t.ended]
        acked = {(f.handle_at(k).sub_key, e.op.args["message"]) for k, e in enumerate(history.events)
                 if e.op.op == "ack" and e.op.args.get("txn") == name and e.outcome.status == OK and f.handle_at(k) is not None}
        seen: set[str] = set()
        for i in range(t.ended + 1, len(history.events)):
            e = history.events[i]
            h = f.handle_at(i)
            if e.op.op != "receive" or h is None or h.sub_key in seen or h.kind != "consumer":
                continue
            seen.add(h.sub_key)  # the first receive on each subscription after the abort
            got = (e.outcome.value or {}).get("message")
            if not got or (h.sub_key, got["payload"]) not in acked or e.t_start_ms > abort.t_end_ms + tol.dispatch_latency_ms:
                continue
            m = _receipt_dropped_past_band(f, history, i, abort.t_end_ms, "drop_abort_redelivery", "PLS-TXN-009",
                                           f"step {e.step}: {got['payload']}, acked in {name} which aborted at step "
                                           f"{abort.step}, never came back")
            if m:
                out.append(m)
    return out


def _receipt_dropped_past_band(f: _Facts, history: History, i: int, since_ms: float, name: str, rule: str,
                               text: str) -> Mutant | None:
    """The mutant where receive ``i`` gets nothing and waits past the dispatch band counted from ``since_ms``."""
    tol = _tol(f)
    e = history.events[i]
    events = list(history.events)
    events[i] = _with_message(e, None)
    due = since_ms + tol.dispatch_latency_ms
    _set_end(events, i, max(e.t_start_ms + e.op.args.get("timeout_ms", 0), due + tol.dispatch_latency_ms + 1))
    return _mutant(f, events, name, (e.step,), (rule,), text)


def drop_failed_reconsume_redelivery(history: History) -> list[Mutant]:
    """After a reconsume_later the broker refused (its retry copy delayed past the broker's limit), the first
    receive of that consumer that got the original back gets nothing, waiting past the dispatch band
    (PLS-RETRY-004)."""
    f = facts(history)
    tol = _tol(f)
    out = []
    for k, failed in enumerate(history.events):
        if failed.op.op != "reconsume_later" or failed.outcome.status != REJECTED or failed.outcome.error != "NotAllowedError":
            continue
        handle, label = failed.op.args["consumer"], failed.op.args["message"]
        for i in range(k + 1, len(history.events)):
            e = history.events[i]
            if e.op.op != "receive" or e.op.args.get("consumer") != handle:
                continue
            got = (e.outcome.value or {}).get("message")
            if not got or got["payload"] != label or e.t_start_ms > failed.t_end_ms + tol.dispatch_latency_ms:
                break
            m = _receipt_dropped_past_band(f, history, i, failed.t_end_ms, "drop_failed_reconsume_redelivery", "PLS-RETRY-004",
                                           f"step {e.step}: {label}, whose reconsume_later failed at step {failed.step}, "
                                           "never came back")
            if m:
                out.append(m)
            break
    return out


# --------------------------------------------------------------------------- feature lies (batches, chunks, dedup)


def _producer_args(history: History, producer: str, before: int) -> dict[str, Any]:
    """The args of the create_producer that made ``producer`` (the last one before event ``before``)."""
    return next((dict(e.op.args) for e in reversed(history.events[:before]) if e.op.op == "create_producer"
                 and e.op.args.get("producer") == producer and e.outcome.status == OK), {})


def _is_delayed(args: Mapping[str, Any]) -> bool:
    return "deliver_after_ms" in args or "deliver_at_ms" in args


def _flush_mutant(f: _Facts, x: int, ids: Mapping[str, list[int]], new: Mapping[str, list[int]], rules: Iterable[str],
                  text: str, unstated: str | None = None) -> Mutant | None:
    """Flush ``x`` reports ``new`` ids for some of its messages; their deliveries carry the same ids."""
    events = list(f.history.events)
    e = events[x]
    v = dict(e.outcome.value or {})
    merged = {**{k: list(m) for k, m in v["message_ids"].items()}, **{k: list(m) for k, m in new.items()}}
    value = {**v, "message_ids": merged}
    if "id_texts" in v:
        value["id_texts"] = {k: "(" + ",".join(map(str, merged[k])) + ")" if k in new else t for k, t in v["id_texts"].items()}
    events[x] = replace(e, outcome=Outcome.ok(value))
    for label, mid in new.items():
        _relabel_deliveries(events, label, lambda m, mid=mid: replace(m, message_id=tuple(mid)))
    return _mutant(f, events, "change_flush_ids", (e.step,), rules, f"step {e.step}: {text}", unstated=unstated)


def change_flush_ids(history: History) -> list[Mutant]:
    """A flush reports entries and batch indexes other than the batch rules plan (the deliveries agree):

    two indexes of one batch swapped (PLS-BATCH-001); one message moved across the boundary of two
    batches of one container (PLS-BATCH-002, C++/Python); two KeyBased batches of different keys
    written in swapped order (PLS-BATCH-003); two messages of a non-batching Python producer written
    as one batch (PLS-BATCH-007); a Java batch of one written with index 0 (PLS-BATCH-008); a delayed
    message written inside a batch, or after the batch that was open when it was sent (PLS-DELAY-006)."""
    f = facts(history)
    out: list[Mutant] = []
    tol = _tol(f)
    for x, e in enumerate(history.events):
        if e.op.op != "flush" or e.outcome.status != OK:
            continue
        ids = {k: [int(y) for y in m] for k, m in ((e.outcome.value or {}).get("message_ids") or {}).items() if list(m)[:2] != [-1, -1]}
        if len(ids) < 2:
            continue
        prod = e.op.args["producer"]
        pargs = _producer_args(history, prod, x)
        client = _client_of(pargs, history.header.client)
        batching = bool(pargs.get("batching", client == "java"))
        key_based = batching and pargs.get("batching_type") == "KeyBased"
        sends = {ev.op.args["payload"]: (j, ev) for j, ev in enumerate(history.events[:x])
                 if ev.op.op == "send" and ev.op.args.get("producer") == prod and ev.op.args["payload"] in ids}
        order = sorted(ids, key=lambda k: sends[k][0] if k in sends else len(history.events))
        delayed = {k for k in ids if k in sends and _is_delayed(sends[k][1].op.args)}
        entries: dict[tuple[int, int, int], list[str]] = {}
        for k in order:
            entries.setdefault((ids[k][0], ids[k][1], ids[k][2]), []).append(k)
        groups = [entries[k] for k in sorted(entries)]
        batches = [g for g in groups if not set(g) & delayed and all(ids[k][3] >= 0 for k in g)]
        # 1) PLS-BATCH-001: two indexes of one batch swapped
        big = next((g for g in batches if len(g) >= 2), None)
        if big is not None:
            a, b = big[0], big[1]
            m = _flush_mutant(f, x, ids, {a: ids[a][:3] + [ids[b][3]], b: ids[b][:3] + [ids[a][3]]}, ("PLS-BATCH-001",),
                              f"{a} and {b} of one batch carry each other's batch index")
            if m:
                out.append(m)
        # 2) PLS-BATCH-002: a message moved across the boundary of two consecutive batches (one key, if KeyBased)
        first_send = min((sends[k][1].t_start_ms for k in ids if k in sends), default=e.t_start_ms)
        timer = float(pargs.get("batching_max_delay_ms", 10))
        # a batch the publish-delay timer may have closed is left alone: which messages it held depends on timing
        timed_out = e.t_end_ms - first_send + tol.dispatch_latency_ms >= timer
        key = lambda k: str(sends[k][1].op.args.get("ordering_key") or sends[k][1].op.args.get("key") or "") if k in sends else ""
        for g1, g2 in zip(batches, batches[1:]):
            if timed_out or groups.index(g2) != groups.index(g1) + 1 or (key_based and {key(k) for k in g1 + g2} != {key(g1[0])}):
                continue
            if len(g2) >= 2:  # the first of g2 joins g1 at its end
                moved, new = g2[0], {g2[0]: ids[g1[0]][:3] + [len(g1)]}
                new.update({k: ids[k][:3] + [i] for i, k in enumerate(g2[1:])})
            elif len(g1) >= 2:  # the last of g1 opens g2
                moved, new = g1[-1], {g1[-1]: ids[g2[0]][:3] + [0]}
                new.update({k: ids[k][:3] + [i + 1] for i, k in enumerate(g2)})
            else:
                continue
            # PLS-BATCH-002 states the C++ container (the Python client's core); PLS-BATCH-009 every client's: a cut
            # the container did not force where the timer could not fire, or a batch bigger than the container
            m = _flush_mutant(f, x, ids, new, ("PLS-BATCH-002", "PLS-BATCH-009") if client == "python" else ("PLS-BATCH-009",),
                              f"{moved} moved across the boundary of the batches {g1} and {g2}")
            if m:
                out.append(m)
            break
        # 3) PLS-BATCH-003: two consecutive KeyBased batches of different keys written in swapped order
        if key_based:
            plain = [g for g in groups if not set(g) & delayed]
            pair = next(((g1, g2) for g1, g2 in zip(plain, plain[1:]) if key(g1[0]) != key(g2[0])), None)
            if pair is not None:
                g1, g2 = pair
                e1, e2 = ids[g1[0]][:3], ids[g2[0]][:3]
                new = {k: e2 + [ids[k][3]] for k in g1}
                new.update({k: e1 + [ids[k][3]] for k in g2})
                m = _flush_mutant(f, x, ids, new, ("PLS-BATCH-003",),
                                  f"the batch of key {key(g2[0])!r} written before that of key {key(g1[0])!r}")
                if m:
                    out.append(m)
        # 4) PLS-BATCH-007: two messages of a non-batching Python producer written as one batch
        if not batching:
            alone = [g[0] for g in groups if len(g) == 1 and g[0] not in delayed and ids[g[0]][3] == -1]
            if len(alone) >= 2:
                a, b = alone[0], alone[1]
                stated = client == "python"
                m = _flush_mutant(f, x, ids, {a: ids[a][:3] + [0], b: ids[a][:3] + [1]}, ("PLS-BATCH-007",) if stated else (),
                                  f"{a} and {b} of a producer without batching written as one batch",
                                  unstated=None if stated else "no registered rule says a Java producer with batching "
                                  "off writes no batch")
                if m:
                    out.append(m)
        # 5) PLS-BATCH-008: a Java batch of one written as a batch (index 0)
        if batching and client == "java":
            single = next((g[0] for g in groups if len(g) == 1 and g[0] not in delayed and ids[g[0]][3] == -1), None)
            if single is not None:
                m = _flush_mutant(f, x, ids, {single: ids[single][:3] + [0]}, ("PLS-BATCH-008",),
                                  f"{single}, alone in its batch, written with batch index 0")
                if m:
                    out.append(m)
        # 6) PLS-DELAY-006: a delayed message inside the next batch, or written after it
        for d in sorted(delayed, key=order.index):
            if ids[d][3] != -1:
                continue
            after = [g for g in batches if (ids[g[0]][0], ids[g[0]][1]) > (ids[d][0], ids[d][1])]
            if not after:
                continue
            g = after[0]
            members = sorted(g + [d], key=order.index)
            m = _flush_mutant(f, x, ids, {k: ids[g[0]][:3] + [i] for i, k in enumerate(members)}, ("PLS-DELAY-006",),
                              f"the delayed {d} written inside the batch {g}")
            if m:
                out.append(m)
            last = ids[g[-1]]
            m = _flush_mutant(f, x, ids, {d: [last[0], last[1] + 1, last[2], -1]}, ("PLS-DELAY-006",),
                              f"the delayed {d} written after the batch {g} that was open when it was sent")
            if m:
                out.append(m)
            break
    return out


def _shift_entries(events: list[Event], after: int, topic: str, f: _Facts, ledger: int, from_entry: int) -> None:
    """Every id on ``topic``'s ledger at or past ``from_entry`` that a send or flush after event ``after``
    returned moves one entry on (its deliveries too): room for one more stored entry."""
    def bump(mid: list[int]) -> list[int]:
        return [mid[0], mid[1] + 1] + list(mid[2:]) if mid[0] == ledger and mid[1] >= from_entry else list(mid)

    for j in range(after + 1, len(events)):
        e = events[j]
        v = e.outcome.value or {}
        if e.outcome.status != OK or f.producer_topic.get(e.op.args.get("producer", "")) != topic:
            continue
        if e.op.op == "send" and "message_id" in v:
            new = bump([int(x) for x in v["message_id"]])
            if new != list(v["message_id"]):
                events[j] = replace(e, outcome=Outcome.ok({**v, "message_id": new, "id_text": "(" + ",".join(map(str, new)) + ")"}))
                _relabel_deliveries(events, e.op.args["payload"], lambda m, new=new: replace(m, message_id=tuple(new)))
        elif e.op.op == "flush" and v.get("message_ids"):
            ids = {k: bump([int(x) for x in m]) for k, m in v["message_ids"].items()}
            texts = {k: "(" + ",".join(map(str, m)) + ")" for k, m in ids.items()}
            events[j] = replace(e, outcome=Outcome.ok({**v, "message_ids": ids, "id_texts": texts}))
            for k, m in ids.items():
                _relabel_deliveries(events, k, lambda msg, m=m: replace(msg, message_id=tuple(m)))


def change_send_outcome(history: History) -> list[Mutant]:
    """A synchronous send reports another outcome than the producer rules give it:

    a duplicate reported stored, or a fresh message reported dropped as a duplicate (PLS-DEDUP-001; a
    duplicate of a message still in flight, PLS-DEDUP-004; with deduplication off, a re-sent sequence
    id, PLS-DEDUP-003); last_sequence_id one higher after the send (PLS-DEDUP-006), or 0 after a
    Python send(sequence_id=0) (PLS-DEDUP-005); a chunked id text spanning one chunk more
    (PLS-CHUNK-002), or a chunked message id carrying its first chunk's entry (PLS-CHUNK-005)."""
    f = facts(history)
    out: list[Mutant] = []
    events0 = history.events
    in_flight: dict[str, set[int]] = {}  # producer name -> explicit sequence ids of async sends not yet flushed
    seen_seq: dict[str, set[int]] = {}
    done: set[str] = set()
    for i, e in enumerate(events0):
        a, v = e.op.args, e.outcome.value or {}
        if e.op.op == "flush":
            pname = _producer_args(history, a.get("producer", ""), i).get("name") or a.get("producer", "")
            in_flight.pop(pname, None)
        if e.op.op != "send" or e.outcome.status != OK:
            continue
        pargs = _producer_args(history, a["producer"], i)
        pname = pargs.get("name") or a["producer"]
        client = _client_of(pargs, history.header.client)
        topic = f.producer_topic.get(a["producer"], "")
        if a.get("async"):
            if "sequence_id" in a:
                in_flight.setdefault(pname, set()).add(int(a["sequence_id"]))
            continue
        if "message_id" not in v:
            continue
        mid = [int(x) for x in v["message_id"]]
        dup = mid[:2] == [-1, -1]
        seq = a.get("sequence_id")
        on, dedup = f.deduplication(i, topic)  # the topic's own policy decides over the namespace's
        # 1) dedup: stored <-> dropped
        if not topic.startswith("non-persistent://") and (on or (seq is not None and int(seq) in seen_seq.get(pname, set()))):
            if on != dedup:
                rules = ("PLS-POLICY-001",)  # the levels differ: a lie the namespace's policy would allow
            elif not on:
                rules = ("PLS-DEDUP-003",)
            elif seq is not None and int(seq) in in_flight.get(pname, set()):
                rules = ("PLS-DEDUP-004",)
            elif any(k < i for k in _faults_at(history)) and any(x.op.op == "send" and x.outcome.status == OK
                                                                 for x in events0[:min(k for k in _faults_at(history))]):
                rules = ("PLS-FAULT-004",)  # the dedup state came through a cut or restart (reference_model/faults.py)
            else:
                rules = ("PLS-DEDUP-001",)
            kind = rules[0] + ("dup" if dup else "stored")  # one lie of each kind per rule and history
            if kind not in done:
                done.add(kind)
                events = list(events0)
                if dup:
                    # written after every message stored before it, the async ones still pending included
                    pending = {x.op.args["payload"] for x in events0[:i] if x.op.op == "send" and x.op.args.get("async")
                               and x.op.args.get("producer") == a["producer"]}
                    later = [[int(y) for y in m] for x in events0[i + 1:] if x.op.op == "flush" and x.outcome.status == OK
                             for k, m in ((x.outcome.value or {}).get("message_ids") or {}).items()
                             if k in pending and list(m)[:2] != [-1, -1]]
                    prev = [m for m in _stored_ids_before(history, f, i, topic) + later if m[2] == (mid[2] if mid[2] >= 0 else -1)]
                    if prev:
                        last = max(prev, key=lambda m: (m[0], m[1]))
                        new = [last[0], last[1] + 1, last[2], -1]
                        _shift_entries(events, i, topic, f, new[0], new[1])
                        events[i] = replace(e, outcome=Outcome.ok({**v, "message_id": new, "id_text": "(" + ",".join(map(str, new)) + ")"}))
                        m = _mutant(f, events, "change_send_outcome", (e.step,), rules,
                                    f"step {e.step}: {a['payload']} (a duplicate) reported stored as {new}")
                        if m:
                            out.append(m)
                elif on or rules in (("PLS-DEDUP-003",), ("PLS-POLICY-001",)):
                    events[i] = replace(e, outcome=Outcome.ok({**{k: x for k, x in v.items() if k != "publish_time"},
                                                               "message_id": [-1, -1, -1, -1], "id_text": "(-1,-1,-1,-1)"}))
                    m = _mutant(f, events, "change_send_outcome", (e.step,), rules,
                                f"step {e.step}: {a['payload']} (a fresh sequence id) reported dropped as a duplicate")
                    if m:
                        out.append(m)
        # 2) last_sequence_id after the send (C++/Python; judged on non-partitioned producers)
        if "sequence_id" in v and client == "python" and _partitions(f, topic) == 0:
            if seq == 0 and int(v["sequence_id"]) != 0:
                new_seq, rules = 0, ("PLS-DEDUP-005",)
            elif seq != 0:
                new_seq, rules = int(v["sequence_id"]) + 1, ("PLS-DEDUP-006",)
            else:
                new_seq = None
            if new_seq is not None and rules[0] not in done:
                done.add(rules[0])
                events = list(events0)
                events[i] = replace(e, outcome=Outcome.ok({**v, "sequence_id": new_seq}))
                m = _mutant(f, events, "change_send_outcome", (e.step,), rules,
                            f"step {e.step}: last_sequence_id {new_seq} after {a['payload']} instead of {v['sequence_id']}")
                if m:
                    out.append(m)
        # 3) chunks (a C++/Python or Go chunking producer): the id text spans one chunk more; the id names the first
        # chunk. The C++ client prints '(l,e,p,b);(l,e,p,b)', the Go client 'l:e:p;l:e:p' (a model history of a Go
        # trace carries the C++ form)
        text = str(v.get("id_text") or "")
        if pargs.get("chunking") and client in ("python", "go") and text and not dup:
            count_rule = "PLS-CHUNK-007" if client == "go" else "PLS-CHUNK-002"
            cpp_text = text.startswith("(")
            if cpp_text:
                first = [int(x) for x in text.split(";")[0].strip("()").split(",")]
                # a chunked id spans one chunk fewer (its first chunk one entry on); a plain one, one chunk more
                moved = [first[0], first[1] + (1 if ";" in text else -1)] + first[2:]
                other = "(" + ",".join(map(str, moved)) + ");" + "(" + ",".join(map(str, mid)) + ")"
            else:
                first = [int(x) for x in text.split(";")[0].split(":")]
                moved = [first[0], first[1] + (1 if ";" in text else -1), first[2]]
                other = ":".join(map(str, moved)) + f";{mid[0]}:{mid[1]}:{text.split(';')[-1].split(':')[2]}"
            if moved[1] >= 0:
                events = list(events0)
                events[i] = replace(e, outcome=Outcome.ok({**v, "id_text": other}))
                m = _mutant(f, events, "change_send_outcome", (e.step,), (count_rule,),
                            f"step {e.step}: {a['payload']} reported as {other} instead of {text}")
                if m:
                    out.append(m)
            if client == "python" and cpp_text and ";" in text:
                head = first
                events = list(events0)
                events[i] = replace(e, outcome=Outcome.ok({**v, "message_id": head}))
                _relabel_deliveries(events, a["payload"], lambda msg: replace(msg, message_id=tuple(head)))
                m = _mutant(f, events, "change_send_outcome", (e.step,), ("PLS-CHUNK-005",),
                            f"step {e.step}: chunked {a['payload']} got id {head} (its first chunk) instead of {mid}")
                if m:
                    out.append(m)
        if not dup and seq is not None:
            seen_seq.setdefault(pname, set()).add(int(seq))
        elif not dup and "sequence_id" in v:
            seen_seq.setdefault(pname, set()).add(int(v["sequence_id"]))
    return out


def _stored_ids_before(history: History, f: _Facts, before: int, topic: str) -> list[list[int]]:
    """The ids sends and flushes on ``topic`` returned for stored messages before event ``before``."""
    out = []
    for e in history.events[:before]:
        v = e.outcome.value or {}
        if e.outcome.status != OK or f.producer_topic.get(e.op.args.get("producer", "")) != topic:
            continue
        ids = [v["message_id"]] if e.op.op == "send" and "message_id" in v else \
            list((v.get("message_ids") or {}).values()) if e.op.op == "flush" else []
        out += [[int(x) for x in m] for m in ids if list(m)[:2] != [-1, -1]]
    return out


def deliver_chunk_alone(history: History) -> list[Mutant]:
    """A message sent in chunks reaches a consumer as its first chunk alone (that chunk's id), never whole
    (PLS-CHUNK-001; the consumer reports another id than the send returned: PLS-CHUNK-005 (C++/Python), PLS-MSGID-001)."""
    f = facts(history)
    out: list[Mutant] = []
    seen: set[tuple[str, str]] = set()
    for i, h, msg in _deliveries(f):
        if h.kind != "consumer" or _is_copy(msg) or msg.payload not in f.sends or (h.sub_key, msg.payload) in seen:
            continue
        send = history.events[f.sends[msg.payload]]
        text = str((send.outcome.value or {}).get("id_text") or "")
        if ";" not in text:
            continue
        seen.add((h.sub_key, msg.payload))
        first = tuple(int(x) for x in text.split(";")[0].strip("()").split(","))
        if first == tuple(msg.message_id):
            continue
        pargs = _producer_args(history, send.op.args["producer"], f.sends[msg.payload])
        rules = ["PLS-CHUNK-001", "PLS-MSGID-001"]
        if _client_of(pargs, history.header.client) == "python":
            rules.insert(1, "PLS-CHUNK-005")
        events = list(history.events)
        events[i] = _with_message(events[i], replace(msg, message_id=first))  # type: ignore[arg-type]
        m = _mutant(f, events, "deliver_chunk_alone", (history.events[i].step,), rules,
                    f"step {history.events[i].step}: {h.name} got the first chunk of {msg.payload} {list(first)} alone")
        if m:
            out.append(m)
    return out


# --------------------------------------------------------------------------- fault lies (reference_model/faults.py)


_RECONNECTING = ("cut_connections", "restart_broker")


def _faults_at(history: History) -> list[int]:
    """Indexes of the fault ops that dropped every connection and completed (PLS-FAULT-*)."""
    return [k for k, e in enumerate(history.events) if e.op.op in _RECONNECTING and e.outcome.status == OK]


def _latency_before(history: History, k: int) -> float:
    """The latency a set_latency op before index ``k`` left in force (ms)."""
    ms = 0.0
    for e in history.events[:k]:
        if e.op.op == "set_latency" and e.outcome.status == OK:
            ms = float(e.op.args["ms"])
    return ms


def deliver_acked_after_fault(history: History) -> list[Mutant]:
    """A message acked well before a cut or restart is delivered again right after it (PLS-FAULT-001; after a
    crash the spec allows it: at-least-once)."""
    from reference_model import faults as fault_model

    f = facts(history)
    out: list[Mutant] = []
    tol = _tol(f)
    dels = _deliveries(f)
    for k in _faults_at(history):
        fault = history.events[k]
        settle = fault_model.ack_settle_ms(tol.ack_grouping_ms, _latency_before(history, k), tol.dispatch_latency_ms)
        for x, ack in enumerate(history.events[:k]):
            h = f.handle_at(x)
            if ack.op.op != "ack" or ack.outcome.status != OK or h is None or h.kind != "consumer" or _non_persistent(h):
                continue
            if h.closed_step is not None and h.closed_step <= fault.step:
                continue
            got = [m for j, hh, m in dels if j < x and hh is h and m.payload == ack.op.args["message"]]
            if not got or _is_copy(got[-1]) or got[-1].message_id[3] >= 0 or fault.t_start_ms - ack.t_end_ms < settle:
                continue
            crash = fault.op.op == "restart_broker" and not fault.op.args.get("graceful", True)
            allowed = "a broker crash may lose acks its cursor had not persisted (at-least-once)" if crash else None
            wait = tol.dispatch_latency_ms + 10.0
            events = list(history.events)
            again = Event(Op(0, "receive", {"consumer": h.name, "timeout_ms": int(wait) + 1000}),
                          Outcome.ok({"message": replace(got[-1], redelivery_count=got[-1].redelivery_count + 1).to_json()}),
                          fault.t_end_ms, fault.t_end_ms + wait)
            events.insert(k + 1, again)
            _shift_after(events, k + 1, wait)
            m = _mutant(f, events, "deliver_acked_after_fault", (ack.step, fault.step), ("PLS-FAULT-001", "PLS-ACK-001"),
                        f"after step {fault.step} ({fault.op.op}): {got[-1].payload}, acked at step {ack.step}, delivered again",
                        allowed)
            if m:
                out.append(m)
    return out


def drop_after_fault(history: History) -> list[Mutant]:
    """The first delivery after a cut or restart of a message stored before it never comes: one the subscription
    had delivered and not acked (PLS-FAULT-003) or one it had not delivered yet (PLS-FAULT-002)."""
    f = facts(history)
    out: list[Mutant] = []
    dels = _deliveries(f)
    for k in _faults_at(history):
        seen: set[tuple[str, str]] = set()
        for i, h, msg in dels:
            if i <= k or h.kind != "consumer" or _is_copy(msg) or (h.sub_key, msg.payload) in seen:
                continue
            seen.add((h.sub_key, msg.payload))
            sent = f.sends.get(msg.payload)
            if sent is None or sent > k:
                continue  # sent after the fault: not something the fault could lose
            if any(j > i and hh.sub_key == h.sub_key and m.payload == msg.payload for j, hh, m in dels):
                continue  # delivered again later: dropping this one is a count change
            before = any(j < k and hh.sub_key == h.sub_key and m.payload == msg.payload for j, hh, m in dels)
            rules = ["PLS-FAULT-003" if before else "PLS-FAULT-002"] + list(_delivery_rules(h, f, i))
            m = _drop_at(f, i, h, msg, "drop_after_fault", rules,
                         f" after the {history.events[k].op.op} at step {history.events[k].step}")
            if m:
                out.append(m)
    return out


def early_delayed_after_fault(history: History) -> list[Mutant]:
    """A delayed message stored before a cut or restart arrives at the first receive after it, before its time
    (PLS-FAULT-005, and the delay rule of its subscription type)."""
    f = facts(history)
    out: list[Mutant] = []
    dels = _deliveries(f)
    timed = {t.index: t for t in _timed_deliveries(f)}
    for k in _faults_at(history):
        for i, h, msg in dels:
            sent = f.sends.get(msg.payload)
            if i <= k or sent is None or sent > k or not _is_delayed(history.events[sent].op.args) or i not in timed:
                continue
            first = next((j for j in range(k + 1, i) if f.handle_at(j) is h and history.events[j].op.op == "receive"
                          and _delivery(history.events[j]) is None), None)
            if first is None or history.events[first].t_end_ms >= timed[i].low:
                continue
            events = list(history.events)
            events[first] = _with_message(events[first], msg)
            events[i] = _with_message(events[i], None)
            rules = ["PLS-FAULT-005"] + list(timed[i].rules)
            m = _mutant(f, events, "early_delayed_after_fault", (history.events[first].step,), rules,
                        f"step {history.events[first].step}: {h.name} got the delayed {msg.payload} right after the "
                        f"{history.events[k].op.op}, before its time")
            if m:
                out.append(m)
    return out


def forget_across_fault(history: History) -> list[Mutant]:
    """A send after a cut or restart as if the fault had reset the producer or the broker: a deduplicated
    duplicate stored (PLS-FAULT-004), or the producer's sequence ids started again (PLS-FAULT-006)."""
    f = facts(history)
    out: list[Mutant] = []
    faults_at = _faults_at(history)
    for x, send in enumerate(history.events):
        value = send.outcome.value or {}
        if send.op.op != "send" or send.outcome.status != OK or not any(k < x for k in faults_at):
            continue
        k = max(k for k in faults_at if k < x)
        created = next((j for j in range(x - 1, -1, -1) if history.events[j].op.op == "create_producer"
                        and history.events[j].op.args.get("producer") == send.op.args["producer"]), None)
        if list(value.get("message_id") or [])[:2] == [-1, -1]:
            events = list(history.events)
            events[x] = replace(send, outcome=Outcome.ok({**value, "message_id": [99, 0, -1, -1], "id_text": "(99,0,-1,-1)"}))
            m = _mutant(f, events, "forget_across_fault", (send.step,), ("PLS-FAULT-004",),
                        f"step {send.step}: the duplicate {send.op.args['payload']} was stored after the "
                        f"{history.events[k].op.op} at step {history.events[k].step}")
            if m:
                out.append(m)
        elif "sequence_id" in value and created is not None and created < k and "sequence_id" not in send.op.args:
            events = list(history.events)
            events[x] = replace(send, outcome=Outcome.ok({**value, "sequence_id": 0}))
            if value["sequence_id"] == 0:
                continue
            m = _mutant(f, events, "forget_across_fault", (send.step,), ("PLS-FAULT-006",),
                        f"step {send.step}: {send.op.args['producer']}'s sequence ids started again at 0 after the "
                        f"{history.events[k].op.op} at step {history.events[k].step}")
            if m:
                out.append(m)
    return out


# --------------------------------------------------------------------------- schema registry (PLS-SCHEMA-*)
#
# What the history's own ops say about a topic's schema registry, as of each create_producer / subscribe /
# get_schemas / delete_schema: the namespace's schema policies set so far (the broker's default strategy is FULL,
# PLS-SCHEMA-005's note; auto-update on, validation not enforced: the trace vocabulary's defaults), the schemas
# stored on the topic since its last delete (an ok producer's schema that is not the same as a stored one, and an
# ok consumer's schema on an idle topic, PLS-SCHEMA-018), whether the topic is in use (a producer, a consumer other
# than an AUTO_CONSUME one, a reader, or an ok send before), and the ok delete_schema ops on it.
# "Same schema" is PLS-SCHEMA-002's, decided by the chapter's pure ``same_schema`` (a STRING schema of the Python
# client is not the Java client's, PLS-SCHEMA-009's note).
# The Python client sends no schema for INT32, INT64 and DOUBLE (PLS-SCHEMA-001's note; DOUBLE measured on 4.0.8 with
# the C++ 4.2 core, 2026-11-26: nothing registered).

_SCHEMA_TRANSITIVE = ("BACKWARD_TRANSITIVE", "FORWARD_TRANSITIVE", "FULL_TRANSITIVE")
_SCHEMA_NO_CHECKER = ("STRING", "INT32", "INT64", "DOUBLE")  # PLS-SCHEMA-009: the DEFAULT checker's types
_SCHEMA_PY_UNSENT = ("INT32", "INT64", "DOUBLE")  # PLS-SCHEMA-001's note: the Python (C++) client registers nothing for them
_SCHEMA_JAVA_ONLY = ("KEY_VALUE", "AUTO_CONSUME")  # PLS-SCHEMA-024: the Python client builds neither


@dataclass(frozen=True)
class _SentSchema:
    """A schema a client put on the wire: the trace's ``schema`` argument and the client that sent it."""

    arg: Mapping[str, Any]
    client: str

    @property
    def type(self) -> str:
        return self.arg["type"]


@dataclass(frozen=True)
class _SchemaView:
    """A topic's registry as the history's ops before one event left it (see above)."""

    topic: str
    strategy: str
    auto_update: bool
    enforced: bool
    live: tuple[_SentSchema, ...]  # stored since the last delete, oldest first
    deletes: tuple[bool, ...]  # the ``force`` flag of every ok delete_schema of the topic before
    in_use: bool  # a producer, a consumer (not AUTO_CONSUME), a reader, or data

    @property
    def transitive(self) -> bool:
        return self.strategy in _SCHEMA_TRANSITIVE


def _schema_topic(name: str) -> str:
    """A trace topic name in its long form, a partition as its topic (they share one schema ledger)."""
    if "://" not in name:
        name = "persistent://" + (name if name.count("/") == 2 else f"public/default/{name}")
    base, sep, index = name.rpartition("-partition-")
    return base if sep and index.isdigit() else name


def _sent_schema(args: Mapping[str, Any], client: str) -> _SentSchema | None:
    """The schema a producer or consumer sends (None: none, i.e. BYTES, AUTO_CONSUME, or a Python INT32 / INT64)."""
    s = args.get("schema")
    if not isinstance(s, Mapping) or s.get("type") in (None, "BYTES", "AUTO_CONSUME"):
        return None
    if client == "python" and s["type"] in _SCHEMA_PY_UNSENT:
        return None
    return _SentSchema(s, client)


def _chapter_schema(arg: Mapping[str, Any], client: str) -> "schema_chapter.Schema":
    """A trace ``schema`` argument as the chapter's ``Schema`` value: AVRO / JSON definitions as the compact JSON text
    the targets send, a STRING schema's data "null" for the Python client and none for Java (PLS-SCHEMA-009's note),
    a KEY_VALUE schema's two halves."""
    kind = arg["type"]
    if kind == "KEY_VALUE":
        return schema_chapter.Schema.key_value(_chapter_schema(arg["key"], client), _chapter_schema(arg["value"], client))
    if kind in ("AVRO", "JSON"):
        return schema_chapter.Schema.avro(arg["definition"], kind)
    return schema_chapter.Schema(kind, "null" if kind == "STRING" and client == "python" else "")


def _same_schema(a: _SentSchema, b: _SentSchema) -> bool:
    """PLS-SCHEMA-002's "already registered", as the chapter's pure ``same_schema`` decides it (equal parsed Avro
    definitions; for other types equal data, so two KEY_VALUE schemas whose halves differ only in primitive types
    are the same)."""
    try:
        return schema_chapter.same_schema(_chapter_schema(a.arg, a.client), _chapter_schema(b.arg, b.client))
    except schema_chapter.SchemaDefinitionError:
        return False


def _invalid_definition(s: Mapping[str, Any] | None) -> bool:
    """PLS-SCHEMA-022: an AVRO / JSON schema (or KEY_VALUE half) whose definition the chapter's parse_avro refuses."""
    if not isinstance(s, Mapping):
        return False
    parts = [s.get("key"), s.get("value")] if s.get("type") == "KEY_VALUE" else [s]
    for part in parts:
        if isinstance(part, Mapping) and part.get("type") in ("AVRO", "JSON"):
            try:
                schema_chapter.parse_avro(part.get("definition"))
            except schema_chapter.SchemaDefinitionError:
                return True
    return False


def _schema_views(f: _Facts) -> dict[int, _SchemaView]:
    """Event index -> ``_SchemaView`` of its topic before it, for create_producer, single-topic subscribe,
    get_schemas and delete_schema ops."""
    if f.schema_views is not None:
        return f.schema_views
    views: dict[int, _SchemaView] = {}
    strategy, auto_update, enforced = "FULL", True, False
    live: dict[str, list[_SentSchema]] = {}
    deletes: dict[str, list[bool]] = {}
    data: set[str] = set()
    partitioned: set[str] = set()
    users: dict[str, str] = {}  # live producer / consumer (not AUTO_CONSUME) / reader handle -> its topic
    producers: dict[str, str] = {}
    for i, e in enumerate(f.history.events):
        op, a, ok = e.op.op, e.op.args, e.outcome.status == OK
        topic = _schema_topic(a["topic"]) if isinstance(a.get("topic"), str) else None
        single = op != "subscribe" or not (a.get("enable_retry") or topic in partitioned)
        if topic is not None and single and op in ("create_producer", "subscribe", "get_schemas", "delete_schema"):
            views[i] = _SchemaView(topic, strategy, auto_update, enforced, tuple(live.get(topic, ())),
                                   tuple(deletes.get(topic, ())), topic in data or topic in users.values())
        if not ok:
            continue
        client = _client_of(a, f.history.header.client)
        if op == "set_policy":
            strategy = a.get("schema_compatibility_strategy", strategy)
            auto_update = bool(a.get("schema_auto_update", auto_update))
            enforced = bool(a.get("schema_validation_enforced", enforced))
        elif op == "create_topic" and topic is not None and a.get("partitions"):
            partitioned.add(topic)
        elif op == "create_producer" and topic is not None:
            users[a["producer"]] = producers[a["producer"]] = topic
            sent = _sent_schema(a, client)
            if sent is not None and not any(_same_schema(sent, x) for x in live.get(topic, ())):
                live.setdefault(topic, []).append(sent)
        elif op == "subscribe" and topic is not None and single:
            sent = _sent_schema(a, client)
            if sent is not None and not live.get(topic) and topic not in data and topic not in users.values():
                live.setdefault(topic, []).append(sent)  # PLS-SCHEMA-018: an idle topic takes it
            if (a.get("schema") or {}).get("type") != "AUTO_CONSUME":
                users[a["consumer"]] = topic
        elif op == "create_reader" and topic is not None:
            users[a["reader"]] = topic
        elif op in ("close", "unsubscribe"):
            users.pop(a.get("handle") or a.get("consumer") or "", None)
        elif op == "send" and a["producer"] in producers:
            data.add(producers[a["producer"]])
        elif op == "delete_schema" and topic is not None:
            live[topic] = []
            deletes.setdefault(topic, []).append(bool(a.get("force")))
    f.schema_views = views
    return views


def _schema_rejection_rules(f: _Facts, i: int) -> tuple[str, ...] | None:
    """The schema rule a refused create_producer / subscribe speaks to (what accepting it, or naming another error,
    breaks); None when the refusal is not a schema one.

    InvalidArgument for a Python handle asking for KEY_VALUE or AUTO_CONSUME: PLS-SCHEMA-024. IncompatibleSchema,
    first match: an invalid Avro definition -> 022; a consumer: on a topic in use with no stored schema -> 020, on one
    with a schema -> 019 (and 008 when its type is not the latest stored one's); auto-update off and the schema not
    stored -> 015; a producer without a schema under schemaValidationEnforced on a topic with a schema -> 016;
    then ALWAYS_INCOMPATIBLE -> 007 and/or a type other than a stored one it is checked against (the latest, every
    live one under a transitive strategy) -> 008, KEY_VALUE halves of other types -> 010; else a transitive strategy
    -> 004 or 005, otherwise 005 (and 010 for a KEY_VALUE). A refusal none of these speak to (a schema already stored,
    the first schema, a type without a checker, ALWAYS_COMPATIBLE, a consumer without a schema) gives ()."""
    e = f.history.events[i]
    op, a, err = e.op.op, e.op.args, e.outcome.error
    if op not in ("create_producer", "subscribe"):
        return None
    s = a.get("schema")
    client = _client_of(a, f.history.header.client)
    if err == "InvalidArgument" and isinstance(s, Mapping) and client == "python":
        kinds = {s.get("type")} | {(s.get(h) or {}).get("type") for h in ("key", "value")}
        return ("PLS-SCHEMA-024",) if kinds & set(_SCHEMA_JAVA_ONLY) else None
    if err != "IncompatibleSchema":
        return None
    v = _schema_views(f).get(i)
    if v is None:
        return ()
    if _invalid_definition(s):
        return ("PLS-SCHEMA-022",)
    sent = _sent_schema(a, client)
    if op == "subscribe":
        if sent is None:
            return ()
        if not v.live:
            return ("PLS-SCHEMA-020",) if v.in_use else ()
        return ("PLS-SCHEMA-019",) + (("PLS-SCHEMA-008",) if v.live[-1].type != sent.type else ())
    if sent is None:
        return ("PLS-SCHEMA-016",) if v.enforced and v.live else ()
    if any(_same_schema(sent, x) for x in v.live):
        return ()
    if not v.auto_update:
        return ("PLS-SCHEMA-015",)
    if not v.live or v.strategy == "ALWAYS_COMPATIBLE":
        return ()
    against = v.live if v.transitive else v.live[-1:]
    rules = ["PLS-SCHEMA-007"] if v.strategy == "ALWAYS_INCOMPATIBLE" else []
    if any(x.type != sent.type for x in against):
        rules.append("PLS-SCHEMA-008")
    elif sent.type == "KEY_VALUE" and any((x.arg["key"]["type"], x.arg["value"]["type"])
                                          != (sent.arg["key"]["type"], sent.arg["value"]["type"]) for x in against):
        rules.append("PLS-SCHEMA-010")
    if rules:
        return tuple(rules)
    if sent.type in _SCHEMA_NO_CHECKER:
        return ()
    kv = ("PLS-SCHEMA-010",) if sent.type == "KEY_VALUE" else ()
    return (("PLS-SCHEMA-004", "PLS-SCHEMA-005") if v.transitive else ("PLS-SCHEMA-005",)) + kv


def _schema_admission_rules(f: _Facts, i: int, v: _SchemaView) -> tuple[str, ...]:
    """The rule that lets an ok create_producer / subscribe in when it meets a schema (it brings one, or its topic
    has one), first match. A consumer: without a schema or with AUTO_CONSUME -> 017 (only when the topic has a
    schema, or AUTO_CONSUME); with one on an idle topic -> 018, on a topic in use -> 019. A producer: without a
    schema on a topic with one -> 016; the same schema as a stored one -> 002; the first schema -> 003 (021 after a
    delete; both after a forced one, which restarts the ledger); ALWAYS_COMPATIBLE -> 006; KEY_VALUE -> 010; STRING /
    INT32 / INT64 / DOUBLE -> 009; a transitive strategy -> 004; else 005. () when the op meets no schema."""
    e = f.history.events[i]
    op, a = e.op.op, e.op.args
    s = a.get("schema") or {}
    sent = _sent_schema(a, _client_of(a, f.history.header.client))
    if op == "subscribe":
        if sent is None:
            return ("PLS-SCHEMA-017",) if v.live or s.get("type") == "AUTO_CONSUME" else ()
        return ("PLS-SCHEMA-018",) if not v.live and not v.in_use else ("PLS-SCHEMA-019",)
    if sent is None:
        return ("PLS-SCHEMA-016",) if v.live else ()
    if any(_same_schema(sent, x) for x in v.live):
        return ("PLS-SCHEMA-002",)
    if not v.live:
        if not v.deletes:
            return ("PLS-SCHEMA-003",)
        return ("PLS-SCHEMA-003", "PLS-SCHEMA-021") if any(v.deletes) else ("PLS-SCHEMA-021",)
    if v.strategy == "ALWAYS_COMPATIBLE":
        return ("PLS-SCHEMA-006",)
    if sent.type == "KEY_VALUE":
        return ("PLS-SCHEMA-010",)
    if sent.type in _SCHEMA_NO_CHECKER:
        return ("PLS-SCHEMA-009",)
    return ("PLS-SCHEMA-004",) if v.transitive else ("PLS-SCHEMA-005",)


def refuse_schema_admission(history: History) -> list[Mutant]:
    """An accepted producer or consumer that meets a schema (brings one, or its topic has one) is refused with
    IncompatibleSchema; the rule that lets it in is ``_schema_admission_rules``'s."""
    f = facts(history)
    views = _schema_views(f)
    out = []
    for i, e in enumerate(history.events):
        v = views.get(i)
        if e.outcome.status != OK or e.op.op not in ("create_producer", "subscribe") or v is None:
            continue
        rules = _schema_admission_rules(f, i, v)
        if not rules:
            continue
        events = list(history.events)
        events[i] = replace(e, outcome=Outcome.rejected("IncompatibleSchema", "mutant"))
        m = _mutant(f, events, "refuse_schema_admission", (e.step,), rules,
                    f"step {e.step}: {e.op.op} rejected with IncompatibleSchema")
        if m:
            out.append(m)
    return out


def change_schema_versions(history: History) -> list[Mutant]:
    """An admin's list of a topic's schema versions lies: one version number one higher, or the newest entry left
    out (an entry put in when the list is empty). PLS-SCHEMA-001, or PLS-SCHEMA-021 when an ok delete_schema of the
    topic came before (both after a forced delete, which restarts the ledger, or a delete of a topic that may have
    had nothing stored)."""
    f = facts(history)
    views = _schema_views(f)
    out = []
    for i, e in enumerate(history.events):
        v = views.get(i)
        if e.op.op != "get_schemas" or e.outcome.status != OK or v is None:
            continue
        listed = [dict(x) for x in (e.outcome.value or {}).get("schemas") or []]
        if not v.deletes:
            rules: tuple[str, ...] = ("PLS-SCHEMA-001",)
        else:
            # a delete marker surely exists when an ok producer with a schema (whose schema is then stored) came
            # before the first delete and no delete was forced; otherwise either rule may be the one at stake
            first = next(j for j in range(i) if history.events[j].op.op == "delete_schema" and j in views
                         and views[j].topic == v.topic and history.events[j].outcome.status == OK)
            stored = any(x.op.op == "create_producer" and x.outcome.status == OK and j in views and views[j].topic == v.topic
                         and _sent_schema(x.op.args, _client_of(x.op.args, history.header.client)) is not None
                         for j, x in enumerate(history.events[:first]))
            rules = ("PLS-SCHEMA-021",) if stored and not any(v.deletes) else ("PLS-SCHEMA-001", "PLS-SCHEMA-021")
        lies: list[tuple[list[dict[str, Any]], str]] = []
        if listed:
            bumped = [dict(x) for x in listed]
            bumped[-1]["version"] = int(bumped[-1]["version"]) + 1
            lies.append((bumped, f"version {bumped[-1]['version']} listed instead of {listed[-1]['version']}"))
            lies.append((listed[:-1], f"version {listed[-1]['version']} left out"))
        else:
            kind = next((x.type for x in reversed(v.live)), "AVRO")
            lies.append(([{"version": 0, "type": kind}], f"a version 0 ({kind}) listed for a topic with none"))
        for schemas, text in lies:
            events = list(history.events)
            events[i] = replace(e, outcome=Outcome.ok({**(e.outcome.value or {}), "schemas": schemas}))
            m = _mutant(f, events, "change_schema_versions", (e.step,), rules, f"step {e.step}: get_schemas: {text}")
            if m:
                out.append(m)
    return out


def change_schema_version(history: History) -> list[Mutant]:
    """A received message carries another schema version than its producer was given (PLS-SCHEMA-023): one higher,
    or none when it had one; version 0 when it had none and its producer was created with a schema."""
    f = facts(history)
    out = []
    producer_schema: dict[str, bool] = {}
    for e in history.events:
        if e.op.op == "create_producer" and e.outcome.status == OK:
            producer_schema[e.op.args["producer"]] = (e.op.args.get("schema") or {}).get("type", "BYTES") != "BYTES"
    for i, e in enumerate(history.events):
        msg = _delivery(e)
        if msg is None or _is_copy(msg):
            continue
        if msg.schema_version is not None:
            lies = [msg.schema_version + 1, None]
        else:
            send = f.sends.get(msg.payload)
            if send is None or not producer_schema.get(history.events[send].op.args["producer"]):
                continue
            lies = [0]
        for version in lies:
            events = list(history.events)
            events[i] = _with_message(e, replace(msg, schema_version=version))
            m = _mutant(f, events, "change_schema_version", (e.step,), ("PLS-SCHEMA-023",),
                        f"step {e.step}: {msg.payload} carries schema version {version} instead of {msg.schema_version}")
            if m:
                out.append(m)
    return out


OPERATORS: dict[str, Callable[[History], list[Mutant]]] = {
    "shift_delivery_earlier": shift_delivery_earlier,
    "deliver_entry_acked_by_producer_id": deliver_entry_acked_by_producer_id,
    "shift_delivery_later": shift_delivery_later,
    "drop_delivery": drop_delivery,
    "duplicate_delivery": duplicate_delivery,
    "reorder_same_key": reorder_same_key,
    "move_to_other_consumer": move_to_other_consumer,
    "move_to_lower_priority": move_to_lower_priority,
    "misroute_key_shared": misroute_key_shared,
    "deliver_before_drained": deliver_before_drained,
    "change_error_name": change_error_name,
    "change_stat": change_stat,
    "change_unacked_count": change_unacked_count,
    "stats_after_unsubscribe": stats_after_unsubscribe,
    "change_reported_ranges": change_reported_ranges,
    "drop_dlq_copy": drop_dlq_copy,
    "dlq_one_redelivery_fewer": dlq_one_redelivery_fewer,
    "drop_initial_subscription": drop_initial_subscription,
    "change_redelivery_count": change_redelivery_count,
    "deliver_ttl_expired": deliver_ttl_expired,
    "expiry_pass_kept": expiry_pass_kept,
    "delete_without_rollover": delete_without_rollover,
    "compacted_sees_stale": compacted_sees_stale,
    "read_tombstone": read_tombstone,
    "redeliver_non_persistent": redeliver_non_persistent,
    "deliver_tag_filtered": deliver_tag_filtered,
    "drop_failed_reconsume_redelivery": drop_failed_reconsume_redelivery,
    "cumulative_ack_partial": cumulative_ack_partial,
    "change_message_field": change_message_field,
    "change_send_id": change_send_id,
    "change_received_id": change_received_id,
    "change_last_sequence_id": change_last_sequence_id,
    "accept_rejected": accept_rejected,
    "deliver_through_transaction": deliver_through_transaction,
    "keep_held_after_timeout": keep_held_after_timeout,
    "drop_abort_redelivery": drop_abort_redelivery,
    "reject_ok_op": reject_ok_op,
    "refuse_short_topic_name": refuse_short_topic_name,
    "deliver_admin_removed": deliver_admin_removed,
    "deliver_acked": deliver_acked,
    "change_flush_ids": change_flush_ids,
    "change_send_outcome": change_send_outcome,
    "deliver_chunk_alone": deliver_chunk_alone,
    "deliver_acked_after_fault": deliver_acked_after_fault,
    "drop_after_fault": drop_after_fault,
    "early_delayed_after_fault": early_delayed_after_fault,
    "forget_across_fault": forget_across_fault,
    "refuse_schema_admission": refuse_schema_admission,
    "change_schema_versions": change_schema_versions,
    "change_schema_version": change_schema_version,
}


def mutants(history: History, operators: Iterable[str] | None = None) -> list[Mutant]:
    """Every mutant of ``history`` by every operator (or the named ones), in operator order."""
    out: list[Mutant] = []
    for name in operators or OPERATORS:
        out += OPERATORS[name](history)
    return out
