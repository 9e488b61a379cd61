"""Detectors of the context rules: rules that say which messages a step may or must not show.

The checker (``conformance.checker``) asks the reference model what a step allows and charges a
disallowed observation to the rule the model names. Some rules do not produce an allowed option of
their own; they *remove* messages from what is allowed (an acknowledged message, an expired one, a
dead-lettered one, a key-less message in a compacted view, a non-persistent message already
dispatched) or say where a message must come from (the partition's Failover owner). Without a
detector of their own, a violation of one of them was charged to whichever rule the model's
refusal happened to name (an early delayed delivery to PLS-DELAY-001, a dead-lettered message
seen again to PLS-ACK-001, a wrong Failover consumer to the withdrawn PLS-FAILOVER-001), and a run
in which they held said nothing about them.

Each detector here is one function named in ``conformance.detector_registry``, judging one rule:
its docstring says "Violated if ...". A detector sees every receive (or op) its rule speaks about
through ``Watch``, which keeps the history facts the rules need (which positions were acked, how;
which were delivered; which sends were delayed or chunked) beside the model, and returns findings:
PASS when the rule was in force at that step and the observation kept it, FAIL (with the anomaly
and a "Let ... Then ..." explanation) when the observation broke it. A step that breaks several
rules fails each of them; a rule that was not in force at a step says nothing there.

``Watch.charge`` is the other half: when the model refuses a delivery, the refusal names one rule;
the detectors that claim the refused message say which rules it really breaks.

Not modelled: the detectors read model state through ``reference_model.broker.Broker``'s
attributes (subscriptions, cursors, readers, copies); the narrow model interface of the issue
"One source of truth" will replace those reads.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
import heapq
from typing import Any, Callable, Iterable, Mapping

from conformance.model_view import ModelView
from conformance.verdicts import FAIL, INDETERMINATE, PASS
from reference_model import faults, names, unacked, vendors



@dataclass(frozen=True)
class Finding:
    """What one detector says about one step."""

    rule: str
    status: str  # PASS | FAIL
    anomaly: str | None
    allowed: str
    observed: str
    explanation: str


@dataclass(frozen=True)
class Receipt:
    """A receive (or read_next) step as the detectors see it."""

    step: int
    handle: str
    label: str | None  # None: nothing arrived
    at_end: float
    redelivery_count: int = 0
    allowed: bool = True  # the model allowed this delivery (a candidate matched)
    refusal: str | None = None  # when not allowed: the anomaly the model saw (early-redelivery, wrong-consumer, ...)
    cause_rules: tuple[str, ...] = ()  # the matched candidate's rules (why it may arrive now)
    message_id: tuple[int, ...] | None = None  # the id the consumer reported (None: not given)
    at_start: float | None = None  # when the receive began (given for a receive that got nothing)


@dataclass
class AdminReset:
    """An admin reset of a subscription's cursor (PLS-SEEK-004), as the detectors need it."""

    start: int  # the reset point: positions before it count as acked
    first: int  # the first unacked position at or after it: a single-active subscription's next delivery
    step_end: float  # when the reset returned
    how: str  # "to m2", "to earliest", ...
    first_pending: bool = True  # nothing delivered on the subscription since


@dataclass
class _SubFacts:
    acked_individually: set[int] = field(default_factory=set)
    acked_cumulatively: set[int] = field(default_factory=set)
    acked_with_entry: dict[int, str] = field(default_factory=dict)  # PLS-BATCH-010: pos -> the ack that took it
    delivered: set[int] = field(default_factory=set)
    nacked: bool = False
    nacked_positions: set[int] = field(default_factory=set)
    connected_at_publish_gap: set[int] = field(default_factory=set)  # NP: published while nobody was connected
    seen_expiry: bool = False


class Watch:
    """The history facts the context detectors need, kept step by step beside the model."""

    def __init__(self, model: ModelView):
        self.model = model
        self.subs: dict[tuple[str, str], _SubFacts] = {}
        self.delayed_labels: set[str] = set()
        self.chunked_labels: set[str] = set()
        self.chunk_ids: dict[str, tuple[tuple[int, ...], ...]] = {}  # chunked label -> its chunks' ids, in order
        self.chunk_sent_id: dict[str, tuple[int, ...]] = {}  # chunked label -> the id its send returned
        self.ttl_pass_at: dict[str, float] = {}  # topic full name -> last expiry pass
        self.existing_subscription: set[int] = set()  # steps whose subscribe found the subscription
        self.dead_letter_asked: dict[str, int] = {}  # handle -> max_redeliver_count its subscribe asked for
        self.unsubscribed: dict[tuple[str, str], float] = {}  # (topic full name, subscription) -> when an unsubscribe deleted it
        self.ks_delivered: dict[tuple[str, str], list[tuple[int, int, str]]] = {}  # Key_Shared deliveries per subscription
        # PLS-FAULT-001: how long before a fault an ack must be to surely have reached the broker
        # (faults.ack_settle_ms; the checker sets it from its timing bands and the latency in force)
        self.ack_settle_ms = 0.0
        self.dispatch_latency_ms = 0.0  # the checker's dispatch band (PLS-TXN-005)
        # PLS-SEEK-004: (topic full name, subscription) -> the admin reset last made there
        self.resets: dict[tuple[str, str], AdminReset] = {}
        # (handle, label, its subscription) while judge_receipt runs (the detectors read the model, never change it)
        self._judging: tuple[str, str | None, Any] | None = None

    # ------------------------------------------------------------------ model reads

    def _sub_key(self, sub: Any) -> tuple[str, str]:
        return (sub.topic.full, sub.name)

    def facts(self, sub: Any) -> _SubFacts:
        return self.subs.setdefault(self._sub_key(sub), _SubFacts())

    def subscription_for(self, handle: str, label: str | None) -> Any:
        """The subscription of ``handle`` that holds ``label`` (a partitioned or multi-topic consumer has several)."""
        if self._judging is not None and self._judging[:2] == (handle, label):
            return self._judging[2]
        pairs = self.model.attachments(handle) if handle in self.model.consumers else []
        if label is not None:
            stored = self.model.message_for(handle, label)
            if stored is not None:
                for _, sub in pairs:
                    if sub.topic.short == stored.topic:
                        return sub
        return pairs[0][1] if len(pairs) == 1 else None

    def subscriptions_of(self, handle: str) -> list[Any]:
        return [sub for _, sub in self.model.attachments(handle)] if handle in self.model.consumers else []

    def _pos(self, sub: Any, label: str | None) -> int | None:
        return sub.topic.by_label.get(label) if label is not None else None

    # ------------------------------------------------------------------ following ops

    def before_op(self, op: str, args: Mapping[str, Any]) -> dict[str, Any]:
        """What an op will change, read before the model applies it."""
        if op in ("ack", "ack_cumulative"):
            sub = self.subscription_for(args["consumer"], args.get("message"))
            if sub is None:
                return {}
            return {"sub": sub, "acked": sub.cursor.snapshot()}
        if op == "subscribe":
            topic = self.model.topic_named(args["topic"]) if "topic" in args else None
            exists = topic is not None and args.get("subscription") in topic.subscriptions
            return {"existed": exists}
        if op == "unsubscribe" and args.get("consumer") in self.model.consumers:
            return {"deleted": [self._sub_key(s) for s in self.subscriptions_of(args["consumer"])]}
        if op == "delete_topic":
            topic = self.model.topic_named(args["topic"])
            if topic is not None:
                fulls = [topic.full] + [names.partition_name(topic.full, i) for i in range(topic.partitions)]
                return {"deleted_topics": fulls}
        return {}

    def after_op(self, op: str, args: Mapping[str, Any], before: Mapping[str, Any], *, at_end: float,
                 ok: bool) -> None:
        """Record what an op that the model followed did."""
        if not ok:
            return
        if op in ("ack", "ack_cumulative") and before.get("sub") is not None and "txn" not in args:
            # (an ack in a transaction is pending until the transaction ends: PLS-TXN-007..009, not PLS-ACK-001/002)
            sub = before["sub"]
            newly = sub.cursor.acked_since(before["acked"], len(sub.topic.entries))
            f = self.facts(sub)
            named = self._pos(sub, args.get("message"))
            if named is not None and args.get("message") not in self.model.received_labels.get(args.get("consumer"), ()):
                # PLS-BATCH-010: by the id its producer returned, the client may ack the named message's batch
                # siblings too (the whole entry): those are the client's doing, not the application's ack
                extra = {p for p in newly if p > named or (op == "ack" and p != named)}
                for p in extra:
                    f.acked_with_entry[p] = (f"acked with its batch entry by {args.get('consumer')}'s "
                                             f"{'cumulative ' if op == 'ack_cumulative' else ''}ack of "
                                             f"{args.get('message')}, named by the id its producer returned")
                newly = [p for p in newly if p not in extra]
            (f.acked_individually if op == "ack" else f.acked_cumulatively).update(newly)
        elif op == "unsubscribe":
            for key in before.get("deleted", ()):
                self.unsubscribed[key] = at_end
        elif op == "subscribe" and isinstance(args.get("dead_letter"), Mapping):
            self.dead_letter_asked[args["consumer"]] = args["dead_letter"].get("max_redeliver_count")
        elif op == "nack":
            sub = self.subscription_for(args["consumer"], args.get("message"))
            if sub is not None:
                self.facts(sub).nacked = True
                pos = self._pos(sub, args.get("message"))
                if pos is not None:
                    self.facts(sub).nacked_positions.add(pos)
        elif op == "send":
            if args.get("deliver_at") is not None or args.get("deliver_after_ms") is not None \
                    or args.get("deliver_after") is not None:
                self.delayed_labels.add(args["payload"])
            stored = self.model.message(args["payload"])
            topic = next((t for t in self.model.topics.values() if stored is not None and t.short == stored.topic), None)
            if topic is not None and not names.is_persistent(topic.full):
                for sub in topic.subscriptions.values():
                    if sub.dispatcher is None or not sub.dispatcher.connected():
                        self.facts(sub).connected_at_publish_gap.add(stored.pos)
        elif op == "delete_topic":
            # PLS-TOPIC-005: a subscription of the same name on the topic made again is a new one: forget the old's facts
            gone = set(before.get("deleted_topics", ()))
            for table in (self.subs, self.unsubscribed, self.ks_delivered, self.resets):
                for key in [k for k in table if k[0] in gone]:
                    del table[key]
            for full in gone:
                self.ttl_pass_at.pop(full, None)
        elif op == "reset_cursor":
            topic = self.model.topic_named(args["topic"])
            sub = topic.subscriptions.get(args["subscription"]) if topic is not None else None
            # (a non-persistent subscription has no cursor: its reset to a publish time moves nothing)
            if sub is not None and names.is_persistent(topic.full):
                start = sub.cursor.mark_delete + 1  # cursor.reset(start) left every position before it acked
                self.resets[self._sub_key(sub)] = AdminReset(start, sub.cursor.first_unacked(start), at_end,
                                                             _reset_how(args))
        elif op == "expire_messages":
            topic = self.model.topic_named(args["topic"])
            if topic is not None:
                self.ttl_pass_at[topic.full] = at_end
                sub = topic.subscriptions.get(args["subscription"])
                if sub is not None:
                    self.facts(sub).seen_expiry = True

    def note_chunked(self, label: str, id_text: str | None = None, message_id: Iterable[int] | None = None) -> None:
        """``label`` was sent in chunks; ``id_text`` ('(l,a,p,b);(l,z,p,b)', PLS-CHUNK-005) names its chunks' entries,
        ``message_id`` is the id its send returned."""
        self.chunked_labels.add(label)
        if message_id is not None:
            self.chunk_sent_id[label] = tuple(int(x) for x in message_id)
        parts = [p.strip("()").split(",") for p in str(id_text or "").split(";")]
        if len(parts) == 2 and all(len(x) == 4 for x in parts):
            (l, a, p, b), (_, z, _, _) = [[int(v) for v in x] for x in parts]
            self.chunk_ids[label] = tuple((l, e, p, b) for e in range(a, z + 1))

    def note_delivered(self, handle: str, label: str) -> None:
        sub = self.subscription_for(handle, label)
        pos = self._pos(sub, label) if sub is not None else None
        if pos is not None:
            self.facts(sub).delivered.add(pos)
            reset = self.resets.get(self._sub_key(sub))
            if reset is not None:
                reset.first_pending = False  # PLS-SEEK-004: the first delivery after the reset came
            d = sub.dispatcher
            if d is not None and d.type_name == "Key_Shared":
                # (epoch count, position, consumer) for PLS-KEYSHARED-001/002: who got what since the last change
                self.ks_delivered.setdefault(self._sub_key(sub), []).append((d.epoch_number(), pos, handle))

    # ------------------------------------------------------------------ judging

    def judge_receipt(self, r: Receipt) -> list[Finding]:
        """Every context detector's finding at a receive step."""
        found: list[Finding] = []
        # the detectors only read the model: the subscription holding the received message is looked up once
        self._judging = (r.handle, r.label, self.subscription_for(r.handle, r.label))
        try:
            for detector in RECEIPT_DETECTORS:
                found += detector(self, r)
        finally:
            self._judging = None
        return found


# ====================================================================== the detectors


def _some_labels(sub: Any, positions: Iterable[int], most: int = 5) -> str:
    """The labels of the first ``most`` of ``positions`` (in topic order), and how many more: a PASS on a long
    history names a few, not a hundred thousand."""
    positions = list(positions)
    first = ", ".join(sub.label(p) for p in heapq.nsmallest(most, positions))
    return first if len(positions) <= most else f"{first} and {len(positions) - most} more"


def _forbidding(rule: str, anomaly: str, forbidden: Callable[[Watch, Any], Mapping[int, str]] | None,
                what: str, *, then: str = "Then it is never delivered there again",
                at: Callable[[Watch, Any, int], str | None] | None = None,
                candidates: Callable[[Watch, Any], Iterable[int]] | None = None) -> Callable[[Watch, Receipt], list[Finding]]:
    """A detector for a rule that removes messages from a subscription: PASS when a receive on a
    subscription where it removed some showed none of them, FAIL when it showed one.

    ``at(w, sub, pos)``, when given with ``candidates(w, sub)`` (the positions that may be removed), says whether
    one position is removed (and why) without listing them all: a rule whose removed positions grow with the
    history (every ack) is then judged per receive by one look-up and a search that stops at the first removed
    candidate (judged only where something is removed, as before), and its PASS names the message received rather
    than every one removed (docs/workloads.md, "Size"); ``forbidden`` is then not used (None)."""

    def detect(w: Watch, r: Receipt) -> list[Finding]:
        holder = w.subscription_for(r.handle, r.label) if r.label is not None else None
        # A message received is judged on the subscription that holds it (a partitioned consumer's other partitions
        # showed nothing at this receive); a receive of nothing, or of a message the model cannot place, on each.
        subs = [holder] if holder is not None else w.subscriptions_of(r.handle)
        if not subs:
            return []
        out: list[Finding] = []
        for sub in subs:
            if at is not None and candidates is not None:
                if any(at(w, sub, p) is not None for p in candidates(w, sub)):
                    out += _forbidding_at(rule, anomaly, what, then, at, w, r, sub, holder)
                continue
            assert forbidden is not None, f"{rule}: a _forbidding detector needs forbidden, or at and candidates"
            gone = forbidden(w, sub)
            if not gone:
                continue
            pos = w._pos(sub, r.label) if sub is holder else None
            if pos is not None and pos in gone and (r.allowed or r.refusal == "order-violation"):
                # the model explains this copy otherwise (e.g. one queued in the client before the ack), or refuses it
                # for its order (a queued copy behind one that never came: Broker.explain_refusal), not for the ack
                continue
            if pos is not None and pos in gone:
                out.append(_came_again(rule, anomaly, what, then, r, sub, gone[pos]))
            else:
                labels = _some_labels(sub, gone)
                out.append(Finding(rule, PASS, None, f"none of {labels}",
                                   r.label or "nothing",
                                   f"{labels} {'is' if len(gone) == 1 else 'are'} {what} on {sub.name}, and "
                                   f"{r.handle} {'received ' + r.label if r.label else 'received nothing'}."))
        return out

    return detect


def _came_again(rule: str, anomaly: str, what: str, then: str, r: Receipt, sub: Any, why: str) -> Finding:
    """The FAIL of a ``_forbidding`` rule: ``r`` delivered on ``sub`` a message the rule removed there (``why``)."""
    return Finding(rule, FAIL, anomaly, f"not {r.label} ({what})", f"{r.label} at {r.at_end:g} ms",
                   f"Let {r.label} be {what} on subscription {sub.name}: {why}. "
                   f"{then}; {r.handle} received it at {r.at_end:g} ms.")


def _forbidding_at(rule: str, anomaly: str, what: str, then: str, at: Callable[[Watch, Any, int], str | None],
                   w: Watch, r: Receipt, sub: Any, holder: Any) -> list[Finding]:
    """``_forbidding``'s judgement of one subscription by ``at``: FAIL when the position received is removed (and
    the model does not explain the copy otherwise), PASS when the receive showed another message or none."""
    pos = w._pos(sub, r.label) if sub is holder else None
    why = at(w, sub, pos) if pos is not None else None
    if why is not None:
        if r.allowed or r.refusal == "order-violation":
            # the model explains this copy otherwise (e.g. one queued in the client before the ack), or refuses it for
            # its order (a queued copy behind one that never came: Broker.explain_refusal), not for the ack
            return []
        return [_came_again(rule, anomaly, what, then, r, sub, why)]
    got = f"received {r.label}, which is not {what} there" if r.label else "received nothing"
    return [Finding(rule, PASS, None, f"no message {what}", r.label or "nothing",
                    f"On {sub.name}, {r.handle} {got}.")]


def _still_acked(sub: Any, positions: Iterable[int]) -> list[int]:
    return [p for p in positions if sub.cursor.is_acked(p)]


def _acked_individually_at(w: Watch, sub: Any, pos: int) -> str | None:
    """Why ``pos`` is acknowledged individually on ``sub`` and must not come again (persistent topics; an expired
    or dead-lettered message is another rule's), or None."""
    if pos not in w.facts(sub).acked_individually or not sub.cursor.is_acked(pos) or pos in sub.expired \
            or not names.is_persistent(sub.topic.full) or pos in _dead_lettered(w, sub):
        return None
    return "acknowledged by an individual ack"


def _acked_cumulatively_at(w: Watch, sub: Any, pos: int) -> str | None:
    """Why ``pos`` is covered by a cumulative ack on ``sub`` and still acked, or None (a message acked both ways
    breaks both rules when it comes back)."""
    return "covered by a cumulative ack" if pos in w.facts(sub).acked_cumulatively and sub.cursor.is_acked(pos) else None


def _expired(w: Watch, sub: Any, *, delivered: bool | None) -> dict[int, str]:
    """Positions an expiry pass removed from ``sub``: those delivered before it (``delivered``
    True), never delivered (False), or all (None)."""
    if not sub.expired:
        return {}
    f = w.facts(sub)
    gone = _still_acked(sub, sub.expired)
    return {p: "expired by an expiry pass" + (" after it was delivered" if p in f.delivered else " before any delivery")
            for p in gone if delivered is None or (p in f.delivered) == delivered}


def _np_dispatched(w: Watch, sub: Any) -> dict[int, str]:
    if names.is_persistent(sub.topic.full):
        return {}
    f = w.facts(sub)
    return {p: "dispatched once on a non-persistent topic" for p in f.delivered}


def _np_unconnected(w: Watch, sub: Any) -> dict[int, str]:
    if names.is_persistent(sub.topic.full):
        return {}
    return {p: "published while no consumer of it was connected" for p in w.facts(sub).connected_at_publish_gap}


def _dead_lettered(w: Watch, sub: Any) -> dict[int, str]:
    out = {}
    dead_topics = {full for (full, _), (kind, _) in w.model.copies.items() if kind in ("dlq", "retry-dlq")}
    for full in dead_topics:
        topic = w.model.topics.get(full)
        if topic is None:
            continue
        for label in topic.by_label:
            p = sub.topic.by_label.get(label)
            if p is not None and sub.cursor.is_acked(p) and sub.dispatcher is not None and \
                    any(h in w.model.dead_letter for h in sub.dispatcher.connected()):
                out[p] = f"moved to the dead-letter topic {names.short_name(full)} after its last allowed delivery"
    return out


ack_individual = _forbidding(
    "PLS-ACK-001", "ack-resurrection", None, "acknowledged", at=_acked_individually_at,
    candidates=lambda w, sub: w.facts(sub).acked_individually)
ack_individual.__doc__ = """PLS-ACK-001. Violated if a message acknowledged individually on a subscription (and not
brought back by a seek) is delivered on that subscription again."""

ack_cumulative = _forbidding(
    "PLS-ACK-002", "ack-resurrection", None, "acknowledged", at=_acked_cumulatively_at,
    candidates=lambda w, sub: w.facts(sub).acked_cumulatively)
ack_cumulative.__doc__ = """PLS-ACK-002. Violated if, after a cumulative ack of message m on an Exclusive or Failover
subscription, m or any message before it is delivered on that subscription again."""

def _acked_with_entry(w: Watch, sub: Any) -> dict[int, str]:
    """The positions an ack by a producer's id took with their entry and still acked (an expired or dead-lettered one
    is another rule's, as for ``_acked_individually_at``)."""
    f = w.facts(sub)
    if not f.acked_with_entry or not names.is_persistent(sub.topic.full):
        return {}
    dead = _dead_lettered(w, sub)
    return {p: why for p, why in f.acked_with_entry.items()
            if sub.cursor.is_acked(p) and p not in sub.expired and p not in dead}


batch_acked_by_producer_id = _forbidding("PLS-BATCH-010", "ack-resurrection", _acked_with_entry, "acknowledged")
batch_acked_by_producer_id.__doc__ = """PLS-BATCH-010. Violated if a batched message that its client acked together with
a sibling named by the id its producer returned (the whole entry: Java, Go, C++ with batch index ack) is delivered on
that subscription again, other than a copy its client had queued before the ack."""

ttl_expired_gone = _forbidding("PLS-TTL-001", "ack-resurrection", lambda w, s: _expired(w, s, delivered=None), "expired")
ttl_expired_gone.__doc__ = """PLS-TTL-001. Violated if a message that an expiry pass removed (unacked and older than the
TTL, delivered before the pass or not) is delivered on that subscription afterwards. One delivered before the pass
breaks PLS-TTL-003 as well."""

ttl_delivered_not_redelivered = _forbidding("PLS-TTL-003", "ack-resurrection",
                                            lambda w, s: _expired(w, s, delivered=True), "expired")
ttl_delivered_not_redelivered.__doc__ = """PLS-TTL-003. Violated if a message delivered but not acked before an expiry
pass removed it is delivered again on that subscription."""

np_no_redelivery = _forbidding("PLS-NP-002", "duplicate-delivery", _np_dispatched, "already dispatched")
np_no_redelivery.__doc__ = """PLS-NP-002. Violated if a message of a non-persistent topic is delivered twice on one
subscription (after a nack, a close, a redeliver request, or anything else)."""

_np_unconnected_received = _forbidding("PLS-NP-001", "wrong-value", _np_unconnected, "not for this subscription")


def np_connected_only(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-NP-001. Violated if a subscription of a non-persistent topic receives a message published while it had no
    consumer connected. Let a message be published on a non-persistent topic while a subscription had a consumer
    connected. Then it may come there (the rule's other half: one that was owed and never came is charged to it as
    the owed message's rule); when nothing was published there without a consumer, that is what a receipt shows."""
    found = _np_unconnected_received(w, r)
    if found or r.label is None or not r.allowed:
        return found
    holder = w.subscription_for(r.handle, r.label)
    if holder is None or names.is_persistent(holder.topic.full):
        return found
    return [Finding("PLS-NP-001", PASS, None, "a message published while a consumer was connected", r.label,
                    f"{r.label} was published on non-persistent {holder.topic.short} while subscription {holder.name} "
                    f"had a consumer connected, and {r.handle} received it.")]

def _other_tags_accept(sub: Any, tags: frozenset[str]) -> list[str]:
    """The consumers that joined ``sub`` giving other tags (PLS-TAG-003) whose tags would let a message with
    ``tags`` through."""
    return sorted(h for h, other in (getattr(sub, "other_tags", {}) or {}).items() if vendors.tag_accepts(tags, other))


def _entry_tags(sub: Any, pos: int) -> frozenset[str]:
    stored = sub.topic.entries[pos]
    return vendors.filtered_tags(dict(stored.properties), batched=stored.message_id.batch_index >= 0)


def _tag_rejected(w: Watch, sub: Any) -> dict[int, str]:
    """PLS-TAG-001's: the positions the subscription's tags reject and no joining consumer's tags would accept
    (those are PLS-TAG-003's)."""
    return {p: why for p, why in (getattr(sub, "tag_rejected", {}) or {}).items()
            if not _other_tags_accept(sub, _entry_tags(sub, p))}


def _tags_kept(w: Watch, sub: Any) -> dict[int, str]:
    """PLS-TAG-003's: the positions the subscription's own tags reject that a joining consumer's would accept."""
    out = {}
    for p, why in (getattr(sub, "tag_rejected", {}) or {}).items():
        joined = _other_tags_accept(sub, _entry_tags(sub, p))
        if joined:
            out[p] = (f"{why}; {', '.join(joined)} joined giving {_tag_list(sub.other_tags[joined[0]])}, which would "
                      f"take it, but the subscription keeps the tags it was created with")
    return out


def _tag_list(tags: frozenset[str]) -> str:
    return "the tags " + ", ".join(sorted(tags)) if tags else "no tags"


tag_filtered = _forbidding("PLS-TAG-001", "wrong-value", _tag_rejected, "filtered out by its tags",
                           then="Then it is never delivered on that subscription")
tag_filtered.__doc__ = """PLS-TAG-001 (tdmq profile). Violated if a consumer of a subscription with tags receives a
message that carries tags (properties valued TAGS) none of which is one of the subscription's tags."""

def _batched_past_tags(w: Watch, sub: Any, pos: int) -> bool:
    """Whether the message at ``pos`` carries tags none of ``sub``'s tags match but came in a batch, which the
    tag filter does not filter (``vendors`` rule 4)."""
    if not w.model.profile.tag_filtering or not sub.tags or not 0 <= pos < len(sub.topic.entries):
        return False
    stored = sub.topic.entries[pos]
    tags = vendors.message_tags(dict(stored.properties))
    return stored.message_id.batch_index >= 0 and bool(tags) and not vendors.tag_accepts(tags, sub.tags)


def tag_batch_unfiltered(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-TAG-002 (tdmq profile). Violated if a batched message whose tags share none of a subscription's tags is
    not delivered on that subscription when it is owed there (charged where the checker finds it owed:
    ``tag_owed_rules``). PASS here: such a message arrives."""
    if r.label is None or not r.allowed:
        return []
    sub = w.subscription_for(r.handle, r.label)
    pos = w._pos(sub, r.label) if sub is not None else None
    if pos is None or not _batched_past_tags(w, sub, pos):
        return []
    return [Finding("PLS-TAG-002", PASS, None, f"{r.label}, batched: not filtered", r.label,
                    f"{r.label} carries tags {', '.join(sorted(vendors.message_tags(dict(sub.topic.entries[pos].properties))))} "
                    f"and none of {sub.name}'s, but came in a batch, which the filter does not read; it arrived.")]


def _joined_tags_reject(w: Watch, sub: Any, pos: int) -> list[str]:
    """The consumers that joined ``sub`` giving other tags (PLS-TAG-003) whose tags would filter out the message at
    ``pos``, which the subscription's own tags let through."""
    if not w.model.profile.tag_filtering or not getattr(sub, "other_tags", None) or not 0 <= pos < len(sub.topic.entries):
        return []
    tags = _entry_tags(sub, pos)
    if not vendors.tag_accepts(tags, sub.tags):
        return []
    return sorted(h for h, other in sub.other_tags.items() if not vendors.tag_accepts(tags, other))


_tags_kept_delivered = _forbidding("PLS-TAG-003", "wrong-value", _tags_kept, "filtered out by the tags it was created with",
                                   then="Then it is never delivered on that subscription")


def tags_fixed_at_creation(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-TAG-003 (tdmq profile). Violated if a consumer of a subscription that another consumer joined giving other
    tags receives a message the subscription's own tags reject but the joiner's accept, or (charged where the checker
    finds it owed: ``tag_owed_rules``) never receives one its own tags accept but the joiner's reject. PASS here: the
    receipt showed none of the first kind, or brought one of the second."""
    out = _tags_kept_delivered(w, r)
    if r.label is None or not r.allowed:
        return out
    sub = w.subscription_for(r.handle, r.label)
    pos = w._pos(sub, r.label) if sub is not None else None
    joined = _joined_tags_reject(w, sub, pos) if pos is not None else []
    if joined:
        out.append(Finding("PLS-TAG-003", PASS, None, f"{r.label} by {sub.name}'s own tags", r.label,
                           f"Let {r.label} carry {_tag_list(_entry_tags(sub, pos))}, which {sub.name}'s own "
                           f"{_tag_list(sub.tags)} let through and {_tag_list(sub.other_tags[joined[0]])}, given by "
                           f"{', '.join(joined)} on joining, would filter out. Then the subscription's own tags decide: "
                           f"{r.handle} received it."))
    return out


def tag_owed_rules(w: Watch, handle: str, pos: int) -> list[str]:
    """The tag rule an owed message that never came breaks: PLS-TAG-002 when it is a batched message whose tags
    share none of the subscription's (the filter must let the batch through); PLS-TAG-003 when the subscription's
    own tags let it through and a consumer that joined giving other tags would not (the broker took the joiner's)."""
    subs = w.subscriptions_of(handle)
    if len(subs) != 1:
        return []
    return ((["PLS-TAG-002"] if _batched_past_tags(w, subs[0], pos) else [])
            + (["PLS-TAG-003"] if _joined_tags_reject(w, subs[0], pos) else []))


_dlq_gone = _forbidding("PLS-DLQ-002", "ack-resurrection", _dead_lettered, "dead-lettered")


def dlq_n_plus_one(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-DLQ-002. Violated if, with max_redeliver_count N, the application sees a message more than N+1
    times (a delivery with redelivery count above N, or any after it was dead-lettered), or a copy
    arrives on the dead-letter topic before the original's N+1-th delivery was nacked or timed out.
    (A Go consumer's count is PLS-DLQ-008's: ``dlq_max_deliveries``.)"""
    return [] if w.model.profile_of(r.handle).dlq_counts_deliveries else _dlq_deliveries(w, r, "PLS-DLQ-002")


def dlq_max_deliveries(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-DLQ-008. Violated if, with a Go consumer's MaxDeliveries N, the application sees a message more than N
    times (a delivery with redelivery count N or more, or any after it was dead-lettered), or a copy arrives on
    the dead-letter topic before the original's N-th delivery was nacked (the model keeps N - 1 redeliveries)."""
    return _dlq_deliveries(w, r, "PLS-DLQ-008") if w.model.profile_of(r.handle).dlq_counts_deliveries else []


def _dlq_deliveries(w: Watch, r: Receipt, rule: str) -> list[Finding]:
    """The delivery counts and copies of a consumer with a dead-letter policy, charged to ``rule``."""
    out = [replace(f, rule=rule) for f in _dlq_gone(w, r)]
    subs = w.subscriptions_of(r.handle)
    dead = w.model.dead_letter.get(r.handle)
    if dead is not None and r.label is not None and any(s.dispatcher is not None and s.dispatcher.type_name in ("Shared", "Key_Shared") for s in subs):
        ok = r.redelivery_count <= dead.max_redeliver
        out.append(Finding(rule, PASS if ok else FAIL, None if ok else "wrong-redelivery-count",
                           f"redelivery count 0..{dead.max_redeliver}", f"redelivery count {r.redelivery_count}",
                           (f"Let the Go consumer's MaxDeliveries be {dead.max_redeliver + 1}" if rule == "PLS-DLQ-008" else
                            f"Let max_redeliver_count be {dead.max_redeliver}") + f". Then the application sees {r.label} with "
                           f"counts 0..{dead.max_redeliver} and the next failure dead-letters it; it saw count "
                           f"{r.redelivery_count}."))
    if r.label is not None and _is_dead_letter_handle(w, r.handle):
        stored = w.model.message_for(r.handle, r.label)
        if stored is not None and r.allowed:
            out.append(Finding(rule, PASS, None, "a copy after the last allowed delivery", r.label,
                               f"{r.label} reached the dead-letter topic after its last allowed delivery."))
        elif stored is None and w.model.message(r.label) is not None:
            out.append(Finding(rule, FAIL, "early-delivery", "no copy yet", r.label,
                               f"Let {r.label} not yet have used its last allowed delivery. Then no copy of it is on "
                               f"the dead-letter topic; {r.handle} read one at {r.at_end:g} ms."))
    return out


def _is_dead_letter_handle(w: Watch, handle: str) -> bool:
    dead_topics = {full for (full, _), (kind, _) in w.model.copies.items() if kind in ("dlq", "retry-dlq")}
    dead_topics |= {d.topic for d in w.model.dead_letter.values() if d.topic}
    reader = w.model.readers.get(handle)
    if reader is not None:
        return reader.topic.full in dead_topics
    return any(s.topic.full in dead_topics or s.topic.full.endswith("-DLQ") for s in w.subscriptions_of(handle))


def owed_copy_rule(w: Watch, handle: str) -> str | None:
    """The rule that owes ``handle`` a copy when it reads a dead-letter topic: PLS-DLQ-002 for a copy a
    consumer's dead-letter policy writes (PLS-DLQ-008 a Go consumer's), PLS-RETRY-003 for one the retry letter
    writes past its maximum."""
    topics = {s.topic.full for s in w.subscriptions_of(handle)}
    reader = w.model.readers.get(handle)
    if reader is not None:
        topics.add(reader.topic.full)
    kinds = {(kind, client) for (full, _), (kind, client) in w.model.copies.items() if full in topics}
    if any(kind == "retry-dlq" for kind, _ in kinds):
        return "PLS-RETRY-003"
    if ("dlq", "go") in kinds:
        return "PLS-DLQ-008"  # a Go consumer's copy (MaxDeliveries)
    if any(kind == "dlq" for kind, _ in kinds):
        return "PLS-DLQ-002"
    return None


def owed_copy_rules_at(w: Watch, handle: str, pos: int) -> list[str]:
    """The rules a missing C++/Python dead-letter copy of a batched message breaks ([] if the message at
    ``pos`` of ``handle``'s dead-letter topic is no such copy).

    Let a batched message be dead-lettered. Then every message of its batch is copied to the DLQ, each
    with its own ORIGIN_MESSAGE_ID (PLS-DLQ-006); the copy of the one whose redeliveries ran out is
    PLS-DLQ-002's as well. A sibling the application acked or never nacked owes its copy to PLS-DLQ-006
    alone."""
    if owed_copy_rule(w, handle) != "PLS-DLQ-002":
        return []
    subs = w.subscriptions_of(handle)
    reader = w.model.readers.get(handle)
    topic = reader.topic if reader is not None else (subs[0].topic if len(subs) == 1 else None)
    if topic is None or not 0 <= pos < len(topic.entries):
        return []
    stored = topic.entries[pos]
    copy = w.model.copy_info(stored)
    origin = str(dict(stored.properties).get("ORIGIN_MESSAGE_ID", ""))
    if copy is None or copy[0] != "dlq" or copy[1] == "java" or not origin.startswith("("):
        return []
    try:
        batched = int(origin.strip("()").split(",")[3]) >= 0
    except (IndexError, ValueError):
        return []
    if not batched:
        return []
    original = w.model.topics.get(str(dict(stored.properties).get("REAL_TOPIC", "")))
    at = original.by_label.get(stored.label) if original is not None else None
    nacked = at is not None and any(at in w.facts(s).nacked_positions for s in original.subscriptions.values())
    return ["PLS-DLQ-006"] + (["PLS-DLQ-002"] if nacked else [])


def dlq_shared_only(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-DLQ-005. Violated if, on an Exclusive or Failover subscription whose consumer has a dead-letter
    policy, a nacked message is delivered with a redelivery count other than 0 or is dead-lettered."""
    if r.label is not None and r.allowed and owed_copy_rule(w, r.handle) == "PLS-DLQ-002" \
            and w.model.message_for(r.handle, r.label) is not None:
        # the other half: the policy acted, and only a Shared or Key_Shared subscription's policy acts
        return [Finding("PLS-DLQ-005", PASS, None, "dead-lettering from a Shared or Key_Shared subscription", r.label,
                        f"{r.label} reached the dead-letter topic from a subscription whose type dead-letters.")]
    if r.handle not in w.dead_letter_asked or r.label is None:
        return []
    sub = w.subscription_for(r.handle, r.label)
    if sub is None or sub.dispatcher is None or sub.dispatcher.type_name not in ("Exclusive", "Failover"):
        return []
    if w._pos(sub, r.label) not in w.facts(sub).nacked_positions:
        return []  # never nacked here: PLS-ACK-005 alone fixes its count
    ok = r.redelivery_count == 0
    return [Finding("PLS-DLQ-005", PASS if ok else FAIL, None if ok else "wrong-redelivery-count",
                    "redelivery count 0 (no dead-lettering here)", f"redelivery count {r.redelivery_count}",
                    f"Let {sub.name} be a {sub.dispatcher.type_name} subscription. Then its dead-letter policy never "
                    f"acts and {r.label} comes with count 0; it came with {r.redelivery_count}.")]


def compacted_reader(w: Watch, handle: str) -> Any:
    """``(reader, horizon)`` when ``handle`` is a compacted reader of a compacted topic, else None."""
    reader = w.model.readers.get(handle)
    if reader is None:
        return None
    features = w.model.tfx.get(reader.topic.full)
    horizon = features.horizon if features is not None else None
    return (reader, horizon) if reader.rule == "PLS-COMPACT-001" and horizon is not None else None


def _compaction(rule: str, which: str, doc: str) -> Callable[[Watch, Receipt], list[Finding]]:
    def detect(w: Watch, r: Receipt) -> list[Finding]:
        found = compacted_reader(w, r.handle)
        if found is None:
            return []
        reader, horizon = found
        entries = reader.topic.entries
        pos = reader.topic.by_label.get(r.label) if r.label is not None else None
        skipped = reader.skip
        keyless = {p for p in skipped if entries[p].key is None}
        # PLS-COMPACT-006: a tombstone up to the horizon is never in the view (it deleted its key, or a later value
        # of the key superseded it); the values before it are superseded (PLS-COMPACT-001)
        tombstones = {p for p in skipped if p in w.model.tfx[reader.topic.full].tombstone}
        superseded = skipped - keyless - tombstones
        if which == "keyless":
            if w.model.profile.compaction_retains_keyless:  # topicCompactionRetainNullKey=true (before 3.2.0)
                return _keyless_kept(rule, r, entries, pos, horizon)
            if not keyless:
                return []
            bad = pos in keyless
            return [Finding(rule, FAIL if bad else PASS, "wrong-value" if bad else None, "no key-less message up to the horizon",
                            r.label or "nothing", (f"Let {r.label} have no key and lie before the compaction horizon. Then "
                            f"the compacted view drops it; {r.handle} read it.") if bad else
                            "The key-less messages before the horizon were not shown.")]
        if which == "latest":
            if pos is None or pos > horizon:
                return []
            bad = pos in superseded
            return [Finding(rule, FAIL if bad else PASS, "wrong-value" if bad else None,
                            "only each key's latest message up to the horizon", r.label,
                            (f"Let {r.label} have a later message of key {entries[pos].key!r} before the horizon. Then the "
                             f"compacted view drops it; {r.handle} read it.") if bad else
                            f"{r.label} is the latest message of key {entries[pos].key!r} up to the horizon.")]
        if which == "tombstone":
            if not tombstones or pos is None:
                return []
            if pos in tombstones:
                key = entries[pos].key
                return [Finding(rule, FAIL, "wrong-value", f"no message of key {key!r} from the view (a tombstone deletes it)",
                                r.label, f"Let {r.label} be a tombstone of key {key!r} before the compaction horizon. Then "
                                f"compaction deletes the key and the compacted view has no message of it up to the "
                                f"horizon; {r.handle} read {r.label}.")]
            if pos > min(tombstones):
                return [Finding(rule, PASS, None, "no tombstone read", r.label,
                                f"{r.label} is read after the tombstones before it, which the view does not show.")]
            return []
        if which == "after":
            if pos is None or pos <= horizon:
                return []
            if not r.allowed:  # read out of publish order, twice, or past one it skipped
                return [Finding(rule, FAIL, r.refusal or "order-violation", "messages after the horizon as published",
                                r.label, f"Let {r.label} lie after the compaction horizon. Then the compacted reader reads "
                                f"it as published, in order and once; {r.handle} read it out of that order.")]
            return [Finding(rule, PASS, None, "messages after the horizon as published", r.label,
                            f"{r.label} was published after the compaction horizon and read as published.")]
        return []

    detect.__doc__ = doc
    return detect


def _keyless_kept(rule: str, r: Receipt, entries: Any, pos: int | None, horizon: int) -> list[Finding]:
    """PLS-COMPACT-003 where the broker keeps keyless messages: one read before the horizon PASSes,
    a read that skipped one (the reader's order refuses it) FAILs."""
    if pos is None or pos > horizon and r.allowed:
        return []
    if not r.allowed and r.refusal == "order-violation":
        return [Finding(rule, FAIL, "wrong-value", "the key-less messages up to the horizon, in the view", r.label,
                        f"Let topicCompactionRetainNullKey be true (the default before 3.2.0). Then the compacted view "
                        f"keeps every key-less message before the horizon in topic order; {r.handle} read {r.label} "
                        "past one it did not read.")]
    if entries[pos].key is not None or pos > horizon:
        return []
    return [Finding(rule, PASS, None, "the key-less messages up to the horizon, in the view", r.label,
                    f"Let topicCompactionRetainNullKey be true (the default before 3.2.0). Then the compacted view keeps "
                    f"{r.label}, which has no key; it was read.")]


compacted_latest_per_key = _compaction("PLS-COMPACT-001", "latest", """PLS-COMPACT-001. Violated if a compacted reader
reads, before the compaction horizon, a message whose key has a later message before the horizon.""")
compacted_tombstone = _compaction("PLS-COMPACT-006", "tombstone", """PLS-COMPACT-006. Violated if a compacted reader
reads a tombstone (an empty payload or a null value) published before the compaction horizon: it deleted its key.""")
compacted_keyless_dropped = _compaction("PLS-COMPACT-003", "keyless", """PLS-COMPACT-003. Violated if a compacted reader
reads a key-less message published before the compaction horizon while topicCompactionRetainNullKey is false (the
default from 3.2.0), or, while it is true (the default before), skips one.""")
compacted_after_horizon = _compaction("PLS-COMPACT-004", "after", """PLS-COMPACT-004. Violated if a compacted reader
does not read the messages after the compaction horizon as published (judged through the reader's order).""")


def delayed_immediate_on_exclusive(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-DELAY-002. Violated if an Exclusive or Failover subscription holds back a delayed message: it must
    come in publish order, without waiting for its deliver-at time (a later message that overtakes a delayed
    one still owed shows the delayed one held back)."""
    if r.label is None:
        return []
    sub = w.subscription_for(r.handle, r.label)
    if sub is None or sub.dispatcher is None or sub.dispatcher.type_name not in ("Exclusive", "Failover"):
        return []
    if r.label not in w.delayed_labels:
        pos = w._pos(sub, r.label)
        held = [x for x in sorted(w.delayed_labels) if (q := w._pos(sub, x)) is not None and pos is not None and q < pos
                and q not in w.facts(sub).delivered and not sub.cursor.is_acked(q)]
        if r.allowed or r.refusal != "order-violation" or not held:
            return []
        return [Finding("PLS-DELAY-002", FAIL, "order-violation", f"{held[0]} (delayed) first, at once", r.label,
                        f"Let {held[0]} be published with a delivery time before {r.label}. Then "
                        f"{sub.dispatcher.type_name} delivers it at once, in publish order; {r.handle} got {r.label} "
                        f"while {held[0]} was held back.")]
    if not r.allowed and r.refusal != "order-violation":
        return []
    return [Finding("PLS-DELAY-002", PASS if r.allowed else FAIL, None if r.allowed else "order-violation",
                    "the delayed message at once, in publish order", r.label,
                    f"{r.label} was sent with a delivery time and arrived on {sub.dispatcher.type_name} in publish order."
                    if r.allowed else f"{r.label} was delayed, but on {sub.dispatcher.type_name} it must come at once in "
                    "publish order; it came out of order.")]


def nack_delay_floor(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-NACK-002. Violated if, on a C++/Python consumer configured with a nack delay under 100 ms, a nacked
    message comes back sooner than 100 ms after the nack."""
    if r.label is None or "PLS-NACK-001" not in r.cause_rules:
        return []
    config = w.model.consumer_config(r.handle)
    if config is None or config.nack_delay_ms >= 100 or (not r.allowed and r.refusal != "early-redelivery"):
        return []
    return [Finding("PLS-NACK-002", PASS if r.allowed else FAIL, None if r.allowed else "early-redelivery",
                    "redelivered no sooner than 100 ms after the nack", f"{r.label} at {r.at_end:g} ms",
                    f"The consumer asked for a {config.nack_delay_ms} ms nack delay; the client raises it to 100 ms, and "
                    + (f"{r.label} came back within that window." if r.allowed else f"{r.label} came back sooner."))]


def failover_partition_owner(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-FAILOVER-004. Violated if a message of partition p reaches a consumer other than that partition's
    active consumer (sorted by priority level then name, index p mod k)."""
    if r.label is None:
        return []
    sub = w.subscription_for(r.handle, r.label)
    if sub is None:
        sub = next((s for s in w.subscriptions_of(r.handle) if s.topic.partition_index >= 0
                    and r.label in s.topic.by_label), None)
    if sub is None or sub.topic.partition_index < 0 or sub.dispatcher is None or sub.dispatcher.type_name != "Failover":
        return []
    if not r.allowed and r.refusal != "wrong-consumer":
        return []
    return [Finding("PLS-FAILOVER-004", PASS if r.allowed else FAIL, None if r.allowed else "wrong-consumer",
                    f"the active consumer of partition {sub.topic.partition_index}", r.handle,
                    f"{r.label} of partition {sub.topic.partition_index} reached {r.handle}, its active consumer."
                    if r.allowed else f"Let {r.handle} not be partition {sub.topic.partition_index}'s active consumer. "
                    f"Then it may receive nothing of it; it received {r.label}.")]


# PLS-KEYSHARED-001/002: the ways a broker could resolve a message's sticky key or its slot wrongly. Each is a
# function of the message (ordering key, partition key, producer name, sequence id) and the broker profile; a
# message it does not apply to keeps its right key or slot.
def _key_partition_over_ordering(profile: Any, m: Any) -> bytes:
    from reference_model import hashing

    if m.ordering_key is not None and m.key is not None:
        return hashing.sticky_key(partition_key=m.key, partition_key_b64_encoded=getattr(m, "key_b64", False))
    return _right_key(profile, m)


def _key_other_keyless_fallback(profile: Any, m: Any) -> bytes:
    from reference_model import hashing

    if m.ordering_key is not None or m.key is not None:
        return _right_key(profile, m)
    return hashing.sticky_key(producer_name=m.producer_name, sequence_id=m.sequence_id,
                              producer_sequence_fallback=not profile.keyless_producer_sequence)


def _key_text_over_bytes(profile: Any, m: Any) -> bytes:
    from reference_model import hashing

    if m.ordering_key is None and getattr(m, "key_b64", False):
        return hashing.to_bytes(m.key)  # PLS-MSG-002: the Base64 text of a key given as bytes, not the bytes
    return _right_key(profile, m)


def _right_key(profile: Any, m: Any) -> bytes:
    from reference_model import hashing

    return hashing.sticky_key(ordering_key=m.ordering_key, partition_key=m.key,
                              partition_key_b64_encoded=getattr(m, "key_b64", False), producer_name=m.producer_name,
                              sequence_id=m.sequence_id, producer_sequence_fallback=profile.keyless_producer_sequence)


STICKY_KEY_LIES: tuple[tuple[str, Callable[[Any, Any], bytes]], ...] = (
    ("its partition key instead of its ordering key", _key_partition_over_ordering),
    ("the other broker line's keyless fallback", _key_other_keyless_fallback),
    ("the Base64 text of a key given as bytes instead of the bytes", _key_text_over_bytes),
)


def _slot_formula(start: int | None, end: int | None, remap_zero: bool) -> Callable[[int], int]:
    from reference_model import key_shared as ks

    if start is None:
        return lambda h: h  # the 3.x ring: the full 31-bit hash
    if remap_zero:
        return lambda h: ks.make_sticky_key_hash(h, start, end)
    return lambda h: h % (end - start + 1) + start


SLOT_LIES: tuple[tuple[str, Callable[[int], int]], ...] = (
    ("the 4.x ring's h % 65535 + 1", _slot_formula(1, 65535, True)),
    ("the 4.x hash ranges' h % 65536 with 0 as 1", _slot_formula(0, 65535, True)),
    ("3.x hash ranges' h % 65536", _slot_formula(0, 65535, False)),
    ("3.x ring's full 31-bit hash", _slot_formula(None, None, False)),
)


def ks_owner_under_lie(d: Any, m: Any, rule: str, lie: Callable[..., Any]) -> Any:
    """The handle that the selector in effect on dispatcher ``d`` gives message ``m`` when its sticky key
    (PLS-KEYSHARED-001) or its slot (PLS-KEYSHARED-002) is computed by ``lie`` instead of the rule."""
    from reference_model import hashing, key_shared as ks

    profile = d.settings.profile
    if rule == "PLS-KEYSHARED-001":
        slot = ks.slot_for(profile, d.selector, lie(profile, m))
    else:
        slot = lie(hashing.pulsar_murmur3(_right_key(profile, m)))
    return d.current_owner_of_slot(slot)


def _keyshared_misrouted(w: Watch, r: Receipt, rule: str, lies: Iterable[tuple[str, Callable[..., Any]]]) -> list[Finding]:
    """Let a Key_Shared delivery go to a consumer the selector does not give its key (the model refuses it). Then
    either the selector (PLS-KEYSHARED-003/004/005) misplaced it, or the broker computed its sticky key or slot
    another way. The second is charged only when one such way explains this delivery *and* every earlier
    delivery on the subscription since its membership last changed: a broker that resolves keys wrongly does so
    for every message, while a selector slip is one delivery among correct ones."""
    if r.label is None or r.allowed or r.refusal not in ("wrong-consumer", "key-stickiness-violation"):
        return []
    sub = w.subscription_for(r.handle, r.label)
    d = sub.dispatcher if sub is not None else None
    pos = w._pos(sub, r.label) if sub is not None else None
    if d is None or d.type_name != "Key_Shared" or pos is None or d.selector is None or not d.epoch_number():
        return []
    if not d.owners_known() or d.batch_members(pos)[0] != pos:
        return []  # owners unknown; a batch goes by its first message's keys
    if d.current_owner(pos) == r.handle:
        return []  # the right key and slot give it this very consumer: refused for another reason (a held key)
    entries = sub.topic.entries
    before = [(q, h) for e, q, h in w.ks_delivered.get(w._sub_key(sub), ()) if e == d.epoch_number()]
    for why, lie in lies:
        if ks_owner_under_lie(d, entries[pos], rule, lie) != r.handle:
            continue
        if all(ks_owner_under_lie(d, entries[q], rule, lie) == h for q, h in before):
            what = "sticky key" if rule == "PLS-KEYSHARED-001" else "slot"
            return [Finding(rule, FAIL, r.refusal, f"{d.current_owner(pos)} (the owner of {r.label}'s {what})", r.handle,
                            f"Let {r.label}'s {what} be computed as the rule says for broker {d.settings.profile.label} "
                            f"(sticky key {d.sticky_key(pos)!r}, slot {d.hash_slot(pos)}). Then it goes to "
                            f"{d.current_owner(pos)}; it reached {r.handle}, which owns it when the {what} is taken "
                            f"from {why}, as every delivery on {sub.name} since its consumers last changed agrees "
                            "(or the selector misplaced it).")]
    return []


def sticky_key_routing(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-KEYSHARED-001. Violated if Key_Shared messages reach the consumers that own the slots of sticky keys
    other than their own (the partition key though there is an ordering key, the other broker line's keyless
    fallback): a delivery the selector does not explain, that such a key explains along with every delivery on
    the subscription since its consumers last changed."""
    return _keyshared_misrouted(w, r, "PLS-KEYSHARED-001", STICKY_KEY_LIES)


def slot_routing(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-KEYSHARED-002. Violated if Key_Shared messages reach the consumers that own slots of their sticky keys
    computed by another selector's or broker line's formula: a delivery the selector does not explain, that such
    a formula explains along with every delivery on the subscription since its consumers last changed."""
    return _keyshared_misrouted(w, r, "PLS-KEYSHARED-002", SLOT_LIES)


def key_held_elsewhere_at(w: Watch, handle: str, label: str) -> tuple[str, str, str] | None:
    """PLS-KEYSHARED-007 beside the selector rule: for a Key_Shared delivery of ``label`` to ``handle`` that the
    selector does not give ``handle``, the other consumer that holds (received, not acked, nacked or released) a
    message of the same sticky key, that message, and who the selector gives the key to; None when nobody holds
    it, when owners are unknown, or with allowOutOfOrderDelivery. The key then has two consumers at once, which
    breaks PLS-KEYSHARED-007 as well as the selector rule (the checker's receive judges both)."""
    sub = w.subscription_for(handle, label)
    d = sub.dispatcher if sub is not None else None
    pos = w._pos(sub, label) if sub is not None else None
    if d is None or d.type_name != "Key_Shared" or pos is None or d.out_of_order_allowed():
        return None
    owners = d.owners(pos)
    if owners is None or handle in owners:
        return None
    held = d.holder_of_key(handle, pos)
    if held is None:
        return None
    other, q = held
    return other, sub.label(q), ", ".join(sorted(owners)) or "nobody"


def retained_acked_at(w: Watch, handle: str, pos: int) -> bool:
    """PLS-RETENTION-002: whether, under a retention policy, the message at ``pos`` of ``handle``'s topic was acked on
    every other durable subscription before ``handle``'s subscription (or reader) was created: it must stay readable
    there, so a receive that owed it and got nothing breaks PLS-RETENTION-002 as well."""
    if not w.model.policies.retention:
        return False
    reader = w.model.readers.get(handle)
    subs = w.subscriptions_of(handle)
    mine = None if reader is not None else (subs[0] if len(subs) == 1 else None)
    holder = reader if reader is not None else mine
    if holder is None:
        return False
    created = holder.created.start
    others = [s for s in holder.topic.subscriptions.values() if s is not mine and s.durable]
    return bool(others) and all(s.cursor.is_acked(pos) and s.ack_times.get(pos, float("inf")) <= created for s in others)


def retention_keeps_acked(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-RETENTION-002. Violated if, under a retention policy, a message acked on every other subscription
    is not readable by a reader or a new Earliest subscription (judged where one is read)."""
    if r.label is None or not w.model.policies.retention:
        return []
    stored = w.model.message_for(r.handle, r.label)
    topic = next((t for t in w.model.topics.values() if stored is not None and t.short == stored.topic), None)
    if topic is None:
        return []
    others = [s for s in topic.subscriptions.values() if s not in w.subscriptions_of(r.handle)]
    if not r.allowed or not others or not all(s.cursor.is_acked(stored.pos) for s in others):
        return []
    return [Finding("PLS-RETENTION-002", PASS if r.allowed else FAIL, None if r.allowed else "lost-message",
                    "acked messages stay readable under retention", r.label,
                    f"{r.label} was acked on every other subscription and stays readable under the retention policy.")]


def batch_redelivered_whole(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-BATCH-004. Violated if, without batch index ack, a redelivered batch does not come back whole:
    a message of it acked before the redelivery is missing (judged through the allowed redeliveries)."""
    return _batch_redelivery(w, r, "PLS-BATCH-004", index_ack=False)


def batch_redelivered_unacked_only(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-BATCH-005. Violated if, with batch index ack on broker and consumer, a redelivered batch brings back a
    message of it that was acked."""
    return _batch_redelivery(w, r, "PLS-BATCH-005", index_ack=True)


def _batch_redelivery(w: Watch, r: Receipt, rule: str, *, index_ack: bool) -> list[Finding]:
    # a redelivery: counted, or (PLS-BATCH-004, whose verdict here is a PASS) a rewind by redeliver_unacked, which a
    # single-active subscription does not count; an acked message after a rewind may also be a copy queued before the
    # ack (PLS-ACK-001's ack-resurrection), so PLS-BATCH-005 does not take a rewind alone for a redelivery
    rewound = not index_ack and any(x.startswith("PLS-REDELIVER") for x in r.cause_rules)
    if r.label is None or r.redelivery_count == 0 and r.allowed and not rewound:
        return []
    stored = w.model.message_for(r.handle, r.label)
    if stored is None or stored.message_id.batch_index < 0:
        return []
    sub = w.subscription_for(r.handle, r.label)
    if sub is None:
        return []
    on = w.model.index_ack.get(r.handle, False)
    if on != index_ack:
        return []
    acked = sub.cursor.is_acked(stored.pos)
    if index_ack and acked and (r.allowed or stored.pos in getattr(sub, "admin_acked", {})):
        # A copy the checker allows although acked may have been queued before the ack (PLS-ACK-001 judges that
        # ghost), and an ack by an admin cursor op is not a batch index ack (PLS-SKIP-* judge what it forbids).
        return []
    if index_ack and acked:
        return [Finding(rule, FAIL, "ack-resurrection", "only the batch's unacked messages", r.label,
                        f"Let {r.label} be acked by its batch index. Then a redelivery of its batch leaves it out; "
                        f"{r.handle} received it again.")]
    if not r.allowed:
        return []
    return [Finding(rule, PASS, None, "the batch redelivered " + ("without its acked messages" if index_ack else "whole"),
                    r.label, f"{r.label} came back with its batch as the batch-ack rule says.")]


def batch_nack_whole_entry(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-BATCH-006. Violated if a nack of one message of a batch does not bring back the other (unacked)
    messages of its entry (judged on each redelivered batch member the nack explains)."""
    if r.label is None or not r.allowed or r.redelivery_count == 0:
        return []
    stored = w.model.message_for(r.handle, r.label)
    if stored is None or stored.message_id.batch_index < 0 or not any(x.startswith("PLS-NACK") or x == "PLS-BATCH-006" for x in r.cause_rules):
        return []
    return [Finding("PLS-BATCH-006", PASS, None, "the nacked message's whole entry", r.label,
                    f"{r.label} came back with the batch entry a nack of one of its messages redelivers.")]


def chunked_whole(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-CHUNK-001. Violated if a message sent in chunks reaches the consumer as anything but one message
    with the whole payload (a chunk alone, or a changed payload: judged with PLS-MSG-001's fields)."""
    if r.label is None or r.label not in w.chunked_labels or not r.allowed:
        return []
    chunks = w.chunk_ids.get(r.label, ())
    # (an id equal to the one the send returned is the send's claim, judged by PLS-CHUNK-005 there)
    if r.message_id is not None and tuple(r.message_id) in chunks[:-1] and tuple(r.message_id) != w.chunk_sent_id.get(r.label):
        k = chunks.index(tuple(r.message_id))
        return [Finding("PLS-CHUNK-001", FAIL, "wrong-value", "one message with the whole payload",
                        f"{r.label} as chunk {k + 1} of {len(chunks)} {list(r.message_id)}",
                        f"Let {r.label} be sent in {len(chunks)} chunks. Then the consumer aggregates them and receives "
                        f"one message, with the last chunk's id; {r.handle} received chunk {k + 1} alone.")]
    return [Finding("PLS-CHUNK-001", PASS, None, "one message with the whole payload", r.label,
                    f"{r.label} was sent in chunks and arrived as one message.")]


# ---------------------------------------------------------------- faults (reference_model/faults.py)


def _settled_acks(w: Watch, sub: Any) -> dict[int, str]:
    """PLS-FAULT-001: positions still acked on ``sub`` whose ack surely reached the broker before a
    later cut or graceful restart (``faults.settled_before``)."""
    out: dict[int, str] = {}
    if not w.model.fault_log:
        return out  # no cut or restart: nothing to settle before (and no walk over every ack, a hot path)
    for pos, at in getattr(sub, "ack_times", {}).items():
        if not sub.cursor.is_acked(pos):
            continue
        fault = faults.settled_before(at, w.model.fault_log, w.ack_settle_ms)
        if fault is not None:
            out[pos] = (f"acked at {at:g} ms, at least {w.ack_settle_ms:g} ms (ack grouping, latency, timing band) "
                        f"before the {fault.kind} at {fault.start:g} ms")
    return out


fault_acked_stays_acked = _forbidding(
    "PLS-FAULT-001", "ack-resurrection", _settled_acks, "acked before a cut or restart")
fault_acked_stays_acked.__doc__ = """PLS-FAULT-001. Violated if, after a cut connection or a graceful broker
restart, a message is delivered again whose ack was made before the fault by more than the settle time
(``faults.ack_settle_ms``)."""


def _stored_before_fault(w: Watch, sub: Any, pos: int) -> Any:
    """The last reconnecting fault after ``pos`` was stored on ``sub`` and before now, if it had not
    been delivered there before that fault (``None`` otherwise)."""
    seq = sub.topic.entries[pos].seq
    after = faults.reconnects_after_store(w.model.fault_log, seq)
    if not after or pos in w.facts(sub).delivered:
        return None
    return after[-1]


def fault_nothing_lost(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-FAULT-002. Violated if a message stored before a cut or restart, never delivered to the
    subscription before it, is owed after it and does not come (charged where the checker finds it
    owed: ``fault_owed_rules``). PASS here: such a message arrives after the fault."""
    if r.label is None or not r.allowed:
        return []
    sub = w.subscription_for(r.handle, r.label)
    pos = w._pos(sub, r.label) if sub is not None else None
    fault = _stored_before_fault(w, sub, pos) if pos is not None else None
    if fault is None:
        return []
    return [Finding("PLS-FAULT-002", PASS, None, f"{r.label}, stored before the {fault.kind}", r.label,
                    f"{r.label} was stored before the {fault.kind} at {fault.start:g} ms and not yet delivered on "
                    f"{sub.name}; {r.handle} got it after the fault.")]


def fault_owed_rules(w: Watch, handle: str, pos: int) -> list[str]:
    """The fault rule an owed message that never came breaks: PLS-FAULT-002 when it was stored before
    a cut or restart and never delivered on the subscription before it."""
    subs = w.subscriptions_of(handle)
    if len(subs) != 1:
        return []
    return ["PLS-FAULT-002"] if _stored_before_fault(w, subs[0], pos) is not None else []


def fault_delayed_kept(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-FAULT-005. Violated if a delayed message stored before a cut or restart is delivered after
    it before its deliver-at time (PASS: it arrives within its window)."""
    if r.label is None or r.label not in w.delayed_labels:
        return []
    sub = w.subscription_for(r.handle, r.label)
    pos = w._pos(sub, r.label) if sub is not None else None
    if pos is None:
        return []
    seq = sub.topic.entries[pos].seq
    fault = next(reversed(faults.reconnects_after_store(w.model.fault_log, seq)), None)
    if fault is None:
        return []
    if r.allowed:
        return [Finding("PLS-FAULT-005", PASS, None, f"{r.label} at or after its deliver-at time", r.label,
                        f"{r.label} was delayed, stored before the {fault.kind} at {fault.start:g} ms, and came in its window.")]
    if r.refusal in ("early-redelivery", "early-delivery"):
        return [Finding("PLS-FAULT-005", FAIL, "early-delivery", f"{r.label} not before its deliver-at time",
                        f"{r.label} at {r.at_end:g} ms",
                        f"Let {r.label} be delayed and stored before the {fault.kind} at {fault.start:g} ms. Then the "
                        f"broker rebuilds its delay index and still holds it until its time; {r.handle} got it early, "
                        f"at {r.at_end:g} ms.")]
    return []


# ---------------------------------------------------------------------- transactions (PLS-TXN-*)


def _txn_topics(w: Watch, r: Receipt) -> list[tuple[Any, str, int | None]]:
    """(topic, where, position of the received label there or None) for each topic ``r.handle`` reads; none while
    the history has no transaction (the transaction rules then have nothing to judge)."""
    if not w.model.txns:
        return []
    reader = w.model.readers.get(r.handle)
    if reader is not None:
        topics = [(reader.topic, f"reader {r.handle}")]
    else:
        topics = [(sub.topic, f"subscription {sub.name}") for sub in w.subscriptions_of(r.handle)]
    stored = w.model.message_for(r.handle, r.label) if r.label is not None else None
    return [(t, where, t.by_label.get(r.label) if stored is not None and stored.topic == t.short else None)
            for t, where in topics]


def _txn_state(w: Watch, topic: Any, pos: int) -> Any:
    name = topic.txn_of.get(pos)
    return w.model.txns.get(name) if name is not None else None


def txn_uncommitted_invisible(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-TXN-001. Violated if a consumer or reader receives a message produced in a transaction
    that had not committed when the receive returned."""
    out: list[Finding] = []
    for topic, where, pos in _txn_topics(w, r):
        txn = _txn_state(w, topic, pos) if pos is not None else None
        if txn is not None and txn.state == "OPEN":
            out.append(Finding("PLS-TXN-001", FAIL, "uncommitted-delivery", f"not {r.label} (uncommitted)",
                               f"{r.label} at {r.at_end:g} ms",
                               f"Let {r.label} be produced in transaction {txn.name}, still open at {r.at_end:g} ms. "
                               f"Then no consumer or reader gets it before the commit; {r.handle} received it on {where}."))
            continue
        if txn is not None and txn.state == "COMMITTED":
            out.append(Finding("PLS-TXN-001", PASS, None, f"{r.label} after the commit", r.label or "nothing",
                               f"{r.label} of transaction {txn.name} arrived after its commit at {txn.ended.end:g} ms."))
            continue
        pending = sorted(p for p, name in topic.txn_of.items() if w.model.txns[name].state == "OPEN")
        if pending:
            labels = ", ".join(topic.entries[p].label for p in pending)
            out.append(Finding("PLS-TXN-001", PASS, None, f"none of {labels} (uncommitted)", r.label or "nothing",
                               f"{labels} {'is' if len(pending) == 1 else 'are'} in an open transaction, and {r.handle} "
                               f"{'received ' + r.label if r.label else 'received nothing'} on {where}."))
    return out


def txn_aborted_never(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-TXN-002. Violated if a consumer or reader receives a message produced in a transaction
    that aborted or timed out."""
    out: list[Finding] = []
    for topic, where, pos in _txn_topics(w, r):
        if not topic.aborted:
            continue
        if pos is not None and pos in topic.aborted:
            txn = _txn_state(w, topic, pos)
            how = "timed out" if txn.state == "TIME_OUT" else "aborted"
            out.append(Finding("PLS-TXN-002", FAIL, "aborted-delivery", f"not {r.label} ({how})",
                               f"{r.label} at {r.at_end:g} ms",
                               f"Let {r.label} be produced in transaction {txn.name}, which {how} at {txn.ended.start:g} ms. "
                               f"Then it is never delivered; {r.handle} received it on {where} at {r.at_end:g} ms."))
            continue
        labels = ", ".join(topic.entries[p].label for p in sorted(topic.aborted))
        out.append(Finding("PLS-TXN-002", PASS, None, f"none of {labels} (aborted)", r.label or "nothing",
                           f"{labels} {'was' if len(topic.aborted) == 1 else 'were'} produced in aborted transactions, and "
                           f"{r.handle} {'received ' + r.label if r.label else 'received nothing'} on {where}."))
    return out


def txn_read_position(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-TXN-003. Violated if a consumer or reader receives a message sent without a transaction
    that was appended after the first message of a transaction still open when the receive returned."""
    out: list[Finding] = []
    for topic, where, pos in _txn_topics(w, r):
        if topic.max_read is None:
            continue
        first = topic.entries[topic.max_read]
        txn = w.model.txns[topic.txn_of[topic.max_read]]
        if pos is not None and pos > topic.max_read and pos not in topic.txn_of:
            out.append(Finding("PLS-TXN-003", FAIL, "read-past-open-transaction", f"nothing after {first.label}",
                               f"{r.label} at {r.at_end:g} ms",
                               f"Let {first.label} be the first message of transaction {txn.name}, open at {r.at_end:g} ms, "
                               f"and {r.label} appended after it. Then {r.label} waits for {txn.name} to end; {r.handle} "
                               f"received it on {where}."))
            continue
        if pos is None or pos < topic.max_read:
            held = [topic.entries[p].label for p in range(topic.max_read + 1, len(topic.entries)) if p not in topic.txn_of]
            if held:
                out.append(Finding("PLS-TXN-003", PASS, None, f"none of {', '.join(held)} (held back)", r.label or "nothing",
                                   f"{', '.join(held)} wait{'s' if len(held) == 1 else ''} behind {first.label} of open "
                                   f"transaction {txn.name}, and {r.handle} "
                                   f"{'received ' + r.label if r.label else 'received nothing'} on {where}."))
    return out


def _txn_pending(w: Watch, sub: Any) -> dict[int, str]:
    return {pos: f"acked in transaction {name}, still open" for pos, name in sub.txn_pending.items()}


def _txn_committed(w: Watch, sub: Any) -> dict[int, str]:
    return {pos: f"acked in transaction {name}, which committed" for pos, name in sub.txn_committed.items()
            if sub.cursor.is_acked(pos)}


txn_pending_ack_held = _forbidding("PLS-TXN-007", "ack-resurrection", _txn_pending, "acked in an open transaction")
txn_pending_ack_held.__doc__ = """PLS-TXN-007. Violated if a message acked individually in a transaction still open is delivered on
that subscription again, whatever asked for a redelivery."""

txn_committed_ack_final = _forbidding("PLS-TXN-008", "ack-resurrection", _txn_committed, "acked by a committed transaction")
txn_committed_ack_final.__doc__ = """PLS-TXN-008. Violated if a message whose ack in a transaction was committed (and not
brought back by a seek) is delivered on that subscription again."""


def _surely_active(dispatcher: Any, handle: str) -> bool:
    """Whether ``handle`` is surely the active consumer of a Failover ``dispatcher``: the one the model has
    established, with no membership change that may have moved the role since and no better priority level."""
    return (dispatcher.active_handle == handle and not dispatcher.switch_possible
            and handle not in dispatcher.outranked_at)


def txn_timeout_releases(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-TXN-005. Violated if an Exclusive consumer, a Failover subscription's surely active consumer, or a
    reader, waits across the end of a timed-out transaction's abort window (plus the dispatch band) and receives
    nothing, while a message that transaction held back is still unacked and not yet delivered to it.

    A Failover consumer that is not surely the active one is owed nothing (model fuzz seed 20261220: c2 and c3 on
    one Failover subscription, c3 the one that received; c2's empty receive after the timeout was charged a loss;
    regression pls-txn-005-lost-message-c63a5d33d687)."""
    reader = w.model.readers.get(r.handle)
    if reader is not None:
        views = [(reader.topic, lambda p, rd=reader: p < rd.next_pos)]
    else:
        views = [(sub.topic, lambda p, s=sub: p in w.facts(s).delivered or s.cursor.is_acked(p))
                 for sub in w.subscriptions_of(r.handle)
                 if sub.dispatcher is not None and (sub.dispatcher.type_name == "Exclusive"
                                                    or (sub.dispatcher.type_name == "Failover"
                                                        and _surely_active(sub.dispatcher, r.handle)))]
    out: list[Finding] = []
    for topic, done in views:
        released = [(pos, window) for pos, window in sorted(topic.timeout_released.items()) if pos not in topic.aborted]
        got = topic.by_label.get(r.label) if r.label is not None else None
        hit = next(((pos, window) for pos, window in released if pos == got), None)
        if hit is not None:
            label = topic.entries[hit[0]].label
            out.append(Finding("PLS-TXN-005", PASS, None, label, label,
                               f"{label}, held back by a transaction that timed out, arrived after its abort "
                               f"(due by {hit[1].end:g} ms)."))
            continue
        owed = next(((pos, window) for pos, window in released if not done(pos)), None)
        if owed is None or r.label is not None or r.at_start is None:
            continue
        pos, window = owed
        due = window.end + w.dispatch_latency_ms
        if r.at_start <= window.end and r.at_end > due:
            label = topic.entries[pos].label
            out.append(Finding("PLS-TXN-005", FAIL, "lost-message", f"{label} by {due:g} ms", "nothing",
                               f"Let the transaction that held {label} back time out, its abort due by {window.end:g} ms. "
                               f"Then {label} becomes readable and {r.handle}, waiting from {r.at_start:g} to "
                               f"{r.at_end:g} ms, gets it by {due:g} ms (dispatch band {w.dispatch_latency_ms:g} ms); "
                               "nothing came."))
    return out


# ---------------------------------------------------------------------- admin ops on topics and cursors


def _reset_how(args: Mapping[str, Any]) -> str:
    if "message" in args:
        return f"to {args['message']}" + (" (excluded)" if args.get("excluded") else "")
    if "publish_time_of" in args:
        return f"to the publish time of {args['publish_time_of']}"
    return f"to {args.get('position')}"


def admin_reset_start(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-SEEK-004. Violated if after an admin reset of a subscription's cursor, a message before the reset point
    (acked by the reset, and not a copy a consumer's queue held from before it) is delivered on that subscription, or
    the first delivery on an Exclusive or Failover subscription after the reset is not the first message at or after
    the reset point (a message id: that message, or the one after it when excluded)."""
    if r.label is None:
        return []
    out: list[Finding] = []
    for sub in w.subscriptions_of(r.handle):
        reset = w.resets.get(w._sub_key(sub))
        pos = w._pos(sub, r.label)
        if reset is None or pos is None:
            continue
        where = f"subscription {sub.name} reset {reset.how} at {reset.step_end:g} ms"
        first = sub.label(reset.first) if reset.first < len(sub.topic.entries) else "the next message published"
        if pos < reset.start and sub.cursor.is_acked(pos) and not r.allowed:
            out.append(Finding("PLS-SEEK-004", FAIL, "ack-resurrection", f"nothing before {first}", r.label,
                               f"Let {where}. Then every message before the reset point counts as acknowledged there and "
                               f"is not delivered again; {r.handle} received {r.label} at {r.at_end:g} ms."))
        elif reset.first_pending and not r.allowed and pos != reset.first and sub.dispatcher is not None \
                and sub.dispatcher.type_name in ("Exclusive", "Failover"):
            out.append(Finding("PLS-SEEK-004", FAIL, "order-violation", first, r.label,
                               f"Let {where}. Then the next delivery on {sub.name} is {first}, the first message at or "
                               f"after the reset point; {r.handle} received {r.label} first."))
        elif reset.first_pending and r.allowed:
            out.append(Finding("PLS-SEEK-004", PASS, None, first if pos == reset.first else f"from {first} on", r.label,
                               f"{sub.name} was reset {reset.how}; {r.handle} then received {r.label}, which the reset "
                               "point allows."))
    return out


def _admin_acked_by(rule: str) -> Callable[[Watch, Any], dict[int, str]]:
    def gone(w: Watch, sub: Any) -> dict[int, str]:
        return {p: why for p, (by, why) in (getattr(sub, "admin_acked", {}) or {}).items()
                if by == rule and sub.cursor.is_acked(p)}
    return gone


skip_acks_oldest = _forbidding("PLS-SKIP-001", "ack-resurrection", _admin_acked_by("PLS-SKIP-001"), "acknowledged")
skip_acks_oldest.__doc__ = """PLS-SKIP-001. Violated if a message an admin skip acked (one of the n oldest unacked
entries of the subscription) is delivered on that subscription afterwards, other than a copy its consumer's queue held
from before the skip. (Which entries the skip took, and that the backlog lost them, is judged at stats by
PLS-BACKLOG-001.)"""

clear_backlog_acks_all = _forbidding("PLS-SKIP-002", "ack-resurrection", _admin_acked_by("PLS-SKIP-002"),
                                     "acknowledged")
clear_backlog_acks_all.__doc__ = """PLS-SKIP-002. Violated if a message stored before an admin clear-backlog of a
subscription is delivered on that subscription afterwards, other than a copy its consumer's queue held from before
the clear."""


def _deleted_here(w: Watch, handle: str) -> dict[str, tuple[Any, int, float, str]]:
    """The messages of deleted topics that had the name of a topic ``handle`` reads (a partitioned one's partitions
    or the topic they belong to): label -> (topic, pos, when, the name deleted)."""
    reader = w.model.readers.get(handle)
    fulls = {reader.topic.full} if reader is not None else {s.topic.full for s in w.subscriptions_of(handle)}
    fulls |= {f.rpartition(names.PARTITION_SUFFIX)[0] for f in fulls if names.PARTITION_SUFFIX in f}
    return {label: found for label, found in getattr(w.model, "deleted_labels", {}).items()
            if found[0].full in fulls or found[3] in fulls}


def deleted_topic_gone(w: Watch, r: Receipt) -> list[Finding]:
    """PLS-TOPIC-005. Violated if a message sent to a topic before it was deleted is delivered (to a consumer or a
    reader of the topic that later took its name), or stats report a subscription the delete removed before a
    subscribe made it again (judged at stats through the model's SubscriptionNotFound)."""
    gone = _deleted_here(w, r.handle)
    if not gone:
        return []
    if r.label in gone:
        topic, _, when, _ = gone[r.label]
        return [Finding("PLS-TOPIC-005", FAIL, "wrong-value", "none of the deleted messages", r.label,
                        f"Let {topic.short} be deleted at {when:g} ms with {r.label} on it. Then {r.label} is gone with "
                        f"its ledger, and the topic that took the name starts empty; {r.handle} received it at "
                        f"{r.at_end:g} ms.")]
    labels = ", ".join(sorted(gone))
    return [Finding("PLS-TOPIC-005", PASS, None, f"none of {labels}", r.label or "nothing",
                    f"{labels} went with the deleted topic, and {r.handle} "
                    f"{'received ' + r.label if r.label else 'received nothing'}.")]


def delete_needs_no_clients(w: Watch, step: int, op: str, args: Mapping[str, Any], ok: bool,
                            value: Mapping[str, Any]) -> list[Finding]:
    """PLS-TOPIC-004. Violated if a delete that is not forced succeeds while a producer, consumer or reader is
    connected to the topic (judged by the model's predicted refusal), or a delete with none connected is refused."""
    if op != "delete_topic":
        return []
    if not ok:
        # judge_op sees a refusal only where the model accepts the op: nobody was connected
        return [Finding("PLS-TOPIC-004", FAIL, "unexpected-rejection", "ok: no client connected",
                        f"rejected {value.get('error')}",
                        f"Let no producer, consumer or reader be connected to {args['topic']}. Then the delete goes "
                        f"ahead; it was refused with {value.get('error')}.")]
    return [Finding("PLS-TOPIC-004", PASS, None, "ok: no client connected", "ok",
                    f"No client was connected to {args['topic']}: the delete went ahead.")]


RECEIPT_DETECTORS: tuple[Callable[[Watch, Receipt], list[Finding]], ...] = (
    fault_acked_stays_acked, fault_nothing_lost, fault_delayed_kept,
    ack_individual, ack_cumulative, ttl_expired_gone, ttl_delivered_not_redelivered, np_no_redelivery,
    np_connected_only, tag_filtered, tag_batch_unfiltered, tags_fixed_at_creation, dlq_n_plus_one, dlq_shared_only, compacted_latest_per_key, compacted_tombstone,
    compacted_keyless_dropped, compacted_after_horizon, delayed_immediate_on_exclusive, nack_delay_floor,
    failover_partition_owner, retention_keeps_acked, sticky_key_routing, slot_routing, batch_redelivered_whole,
    batch_redelivered_unacked_only,
    batch_nack_whole_entry, batch_acked_by_producer_id, chunked_whole,
    txn_uncommitted_invisible, txn_aborted_never, txn_read_position, txn_timeout_releases,
    txn_pending_ack_held, txn_committed_ack_final,
    admin_reset_start, skip_acks_oldest, clear_backlog_acks_all, deleted_topic_gone,
)


# ====================================================================== op detectors


def ttl_only_at_pass(w: Watch, step: int, op: str, args: Mapping[str, Any], ok: bool, value: Mapping[str, Any]) -> list[Finding]:
    """PLS-TTL-002. Violated if messages older than the TTL are gone from a subscription before any expiry
    pass, or a pass leaves them (judged at the pass: it must find and remove them; at receives: they are still
    deliverable; at stats after the pass: ``ttl_pass_kept``)."""
    if op != "expire_messages" or not ok:
        return []
    through = value.get("expired_through")
    return [Finding("PLS-TTL-002", PASS, None, "an expiry pass removes the messages older than the TTL",
                    "the pass ran", f"The expiry pass ran at step {step}" + (f" and removed every unacked message through "
                    f"position {through}." if isinstance(through, int) and through >= 0 else "; nothing was old enough."))]


def ttl_pass_kept(w: Watch, step: int, topic_name: str, subscription: str, got: Any, high: int) -> list[Finding]:
    """PLS-TTL-002 at stats. Violated if, after an expiry pass, the subscription's backlog still counts messages
    the pass removed: stats above the model's highest count by no more than the pass removed, with no ack on the
    subscription since the pass that could explain it."""
    topic = w.model.topic_named(topic_name)
    sub = topic.subscriptions.get(subscription) if topic is not None else None
    if sub is None or not w.facts(sub).seen_expiry or not isinstance(got, int):
        return []
    removed = len(_still_acked(sub, sub.expired))
    passed_at = w.ttl_pass_at.get(topic.full)
    if not removed or passed_at is None or any(when > passed_at for when, _, _ in sub.ack_log):
        return []
    kept = got - high
    if kept <= 0:
        return [Finding("PLS-TTL-002", PASS, None, f"backlog without the {removed} expired message(s)", f"backlog {got}",
                        f"The expiry pass removed {removed} message(s) from {subscription}; the backlog no longer counts them.")]
    if kept > removed:
        return []
    return [Finding("PLS-TTL-002", FAIL, "wrong-backlog", f"backlog without the {removed} expired message(s)",
                    f"backlog {got}", f"Let the expiry pass at {passed_at:g} ms remove {removed} message(s) older than the "
                    f"TTL from {subscription}. Then the backlog is at most {high}; stats said {got}, as if {kept} of them "
                    "were still there.")]


def unacked_counts(w: Watch, step: int, subscription: str, expected: Mapping[str, Any] | None,
                   reported: Any) -> list[Finding]:
    """PLS-UNACKED-002 at stats. Violated if a Shared / Key_Shared consumer of a persistent topic reports an
    ``unackedMessages`` outside the range the model gives it: below what its application holds unacked, or
    above that plus what may sit in its receiver queue and its acks still on their way (messages an expiry
    moved past count no more). Consumers the model cannot name (no or shared consumer_name) are not judged, but for
    the only consumer of the subscription, which the stats list alone."""
    return _unacked_findings("PLS-UNACKED-002", subscription, expected, reported)


def unacked_non_persistent(w: Watch, step: int, subscription: str, expected: Mapping[str, Any] | None,
                           reported: Any) -> list[Finding]:
    """PLS-UNACKED-003 at stats. Violated if a Shared consumer of a non-persistent topic reports an
    ``unackedMessages`` above the messages still in flight to it (nothing there waits for an ack)."""
    return _unacked_findings("PLS-UNACKED-003", subscription, expected, reported)


def _unacked_findings(rule: str, subscription: str, expected: Mapping[str, Any] | None, reported: Any) -> list[Finding]:
    if not expected or not isinstance(reported, (list, tuple)):
        return []
    out = []
    sole = expected.get(unacked.SOLE_UNNAMED) if len(reported) == 1 else None  # the only consumer, its name its client's
    for entry in reported:
        name = entry.get("consumer_name") if isinstance(entry, Mapping) else None
        rng = sole or (expected.get(name) if name is not None else None)
        got = entry.get("unacked_messages") if rng is not None and rng.rule == rule else None
        if not isinstance(got, int):
            continue
        allowed = f"unackedMessages {rng.low}" if rng.low == rng.high else f"unackedMessages {rng.low}..{rng.high}"
        ok = rng.low <= got <= rng.high
        out.append(Finding(rule, PASS if ok else FAIL, None if ok else "wrong-value", allowed, f"unackedMessages {got}",
                           f"Consumer {name} of {subscription}: {rng.why}; stats said {got}." if ok else
                           f"Let consumer {name} of {subscription} have {rng.why}. Then its unackedMessages is "
                           f"{allowed.split(' ', 1)[1]}; stats said {got}."))
    return out


def dlq_initial_subscription(w: Watch, step: int, op: str, args: Mapping[str, Any], ok: bool, value: Mapping[str, Any]) -> list[Finding]:
    """PLS-DLQ-004. Violated if the dead-letter topic has no subscription named initial_subscription_name once
    the client created its dead-letter producer (judged when that subscription is used: stats or subscribe)."""
    if op not in ("stats", "subscribe"):
        return []
    wanted = {d.initial_subscription for d in w.model.dead_letter.values() if d.initial_subscription}
    if args.get("subscription") not in wanted:
        return []
    topic = w.model.topic_named(args["topic"])
    if topic is None or not any(full == topic.full for (full, _) in w.model.copies):
        return []
    if not ok:
        if op != "stats" or value.get("error") != "SubscriptionNotFound" or args["subscription"] not in topic.subscriptions:
            return []
        return [Finding("PLS-DLQ-004", FAIL, "unexpected-rejection", f"subscription {args['subscription']} on the dead-letter topic",
                        "rejected SubscriptionNotFound", f"Let a dead-letter policy name the initial subscription "
                        f"{args['subscription']}, and the client have written a copy to {topic.short}. Then the client "
                        f"created {args['subscription']} with its dead-letter producer, before the first copy; stats "
                        "said it does not exist.")]
    return [Finding("PLS-DLQ-004", PASS, None, f"subscription {args['subscription']} on the dead-letter topic",
                    "it exists", f"The dead-letter topic has the initial subscription {args['subscription']}, "
                    "created with the dead-letter producer, and it kept the copies.")]


def initial_position_ignored(w: Watch, step: int, op: str, args: Mapping[str, Any], ok: bool, value: Mapping[str, Any]) -> list[Finding]:
    """PLS-SUB-004. Violated if a subscribe to an existing subscription moves its position to the initial
    position it asks for (judged at the subscribe, then through what the consumer is allowed to receive)."""
    if op != "subscribe" or not ok or step not in w.existing_subscription:
        return []
    return [Finding("PLS-SUB-004", PASS, None, "the subscription keeps its position", "subscribed",
                    f"{args.get('subscription')} already existed; the subscribe kept its position "
                    f"(initial position {args.get('initial_position', 'Latest')} ignored).")]


def unsubscribe_deletes(w: Watch, step: int, op: str, args: Mapping[str, Any], ok: bool, value: Mapping[str, Any]) -> list[Finding]:
    """PLS-SUB-006. Violated if an unsubscribe fails where the model says it succeeds, or the subscription and
    its backlog survive it (a later subscribe must start anew: judged through later deliveries and stats)."""
    if op != "unsubscribe" or not ok:
        return []
    return [Finding("PLS-SUB-006", PASS, None, "ok: the subscription is deleted", "ok",
                    f"{args.get('consumer')} unsubscribed; its subscription and backlog are gone.")]


def short_topic_name(w: Watch, step: int, op: str, args: Mapping[str, Any], ok: bool, value: Mapping[str, Any]) -> list[Finding]:
    """PLS-TOPIC-001. Violated if a short topic name is not taken as persistent://public/default/<name> (or
    tenant/ns/x as persistent://tenant/ns/x): an op on it is refused, or it reaches another topic."""
    topic = args.get("topic")
    if op not in ("create_producer", "subscribe", "create_reader", "create_topic") or not isinstance(topic, str):
        return []
    if topic.startswith(("persistent://", "non-persistent://")):
        return []
    full = names.expand_trace(topic)
    if not ok:
        # judge_op sees a refusal only where the model accepts the op; one that names the topic is this rule's
        error = value.get("error")
        if error not in ("InvalidTopicName", "TopicNotFound"):
            return []
        return [Finding("PLS-TOPIC-001", FAIL, "unexpected-rejection", f"{topic} means {full}", f"rejected {error}",
                        f"Let {topic} be a short topic name. Then it means {full}, a valid topic the model accepts "
                        f"this {op} on; it was refused with {error}.")]
    return [Finding("PLS-TOPIC-001", PASS, None, f"{topic} means {full}", "accepted",
                    f"{topic} was taken as {full}.")]


def shared_producers_together(w: Watch, step: int, op: str, args: Mapping[str, Any], ok: bool, value: Mapping[str, Any]) -> list[Finding]:
    """PLS-ACCESS-001. Violated if a Shared-mode producer is refused for its access mode (ProducerBusy or
    ProducerFenced) while only Shared producers are connected to the topic."""
    if op != "create_producer" or args.get("access_mode", "Shared") != "Shared":
        return []
    topic = w.model.topic_named(args["topic"]) if "topic" in args else None
    if topic is None:
        return []
    others = [p for h, p in w.model.producers.items() if p.topic is topic and h != args.get("producer")]
    if not others or (not ok and value.get("error") not in ("ProducerBusy", "ProducerFenced")):
        return []  # a refusal for another reason (a schema, PLS-SCHEMA-*) says nothing about access modes
    return [Finding("PLS-ACCESS-001", PASS if ok else FAIL, None if ok else "unexpected-rejection",
                    "ok: Shared producers publish together", "ok" if ok else "rejected",
                    f"{len(others)} other producer(s) were on the topic; a Shared producer joined them."
                    if ok else "Let only Shared producers be on the topic. Then another Shared producer is accepted; it was refused.")]


# ====================================================================== schema registry (PLS-SCHEMA-*)


def _schema_admission(w: Watch, op: str, args: Mapping[str, Any], ok: bool, value: Mapping[str, Any]) -> Finding | None:
    """The admission finding of a producer or consumer that meets a schema: PASS under the rule that let it in, FAIL
    when the broker refused with IncompatibleSchema one that rule lets in (``ModelView.schema_admission_rule``)."""
    if op not in ("create_producer", "subscribe"):
        return None
    if ok:
        rule = value.get("schema_rule")
        return Finding(rule, PASS, None, "ok", "ok", f"The {_schema_what(args)} was let in, as {rule} says.") if rule else None
    if value.get("error") != "IncompatibleSchema":
        return None
    rule = w.model.schema_admission_rule(op, args)
    if rule is None:
        return None
    return Finding(rule, FAIL, "unexpected-rejection", "ok", "rejected IncompatibleSchema",
                   f"Let the topic's schema versions and policies be as the trace left them. Then {rule} lets the "
                   f"{_schema_what(args)} in; the broker refused it with IncompatibleSchema.")


def _schema_what(args: Mapping[str, Any]) -> str:
    kind = (args.get("schema") or {}).get("type", "BYTES")
    who = "producer" if "producer" in args else "consumer"
    return f"{who} {args.get('producer') or args.get('consumer')} " + (f"({kind} schema)" if kind != "BYTES" else "(no schema)")


def _admission_detector(rule: str, violated_if: str) -> Callable[..., list[Finding]]:
    """The detector of one admission rule: the admission finding when it is that rule's."""
    def detect(w: Watch, step: int, op: str, args: Mapping[str, Any], ok: bool, value: Mapping[str, Any]) -> list[Finding]:
        found = _schema_admission(w, op, args, ok, value)
        return [found] if found is not None and found.rule == rule else []
    detect.__doc__ = f"{rule}. Violated if {violated_if}"
    detect.__name__ = detect.__qualname__ = f"schema_admission_{rule[-3:]}"
    return detect


schema_same_reused = _admission_detector("PLS-SCHEMA-002", "a producer or consumer bringing a schema the topic already has is refused.")
schema_first_stored = _admission_detector("PLS-SCHEMA-003", "the first schema brought to a topic is refused.")
schema_transitive_checked = _admission_detector("PLS-SCHEMA-004", "a transitive strategy refuses a schema every live version accepts.")
schema_strategy_checked = _admission_detector("PLS-SCHEMA-005", "BACKWARD, FORWARD or FULL refuses a schema Avro resolution finds compatible with the latest version.")
schema_always_compatible = _admission_detector("PLS-SCHEMA-006", "ALWAYS_COMPATIBLE refuses a new schema.")
schema_no_checker = _admission_detector("PLS-SCHEMA-009", "a new schema of a type without a checker is refused under a strategy other than ALWAYS_INCOMPATIBLE.")
schema_key_value_checked = _admission_detector("PLS-SCHEMA-010", "a KEY_VALUE schema whose halves keep their types and pass the strategy is refused.")
schema_producer_unenforced = _admission_detector("PLS-SCHEMA-016", "a producer without a schema is refused while schemaValidationEnforced is off.")
schema_consumer_unchecked = _admission_detector("PLS-SCHEMA-017", "a consumer without a schema, or with AUTO_CONSUME, is refused for its schema.")
schema_consumer_idle = _admission_detector("PLS-SCHEMA-018", "a consumer bringing a schema to an idle topic is refused where a producer with it is let in.")
schema_consumer_checked = _admission_detector("PLS-SCHEMA-019", "a consumer whose schema reads the topic's latest version (or passes the transitive strategy) is refused.")
SCHEMA_ADMISSION_DETECTORS = (schema_same_reused, schema_first_stored, schema_transitive_checked, schema_strategy_checked,
                              schema_always_compatible, schema_no_checker, schema_key_value_checked,
                              schema_producer_unenforced, schema_consumer_unchecked, schema_consumer_idle,
                              schema_consumer_checked)


def _schema_listing(op: str, args: Mapping[str, Any], ok: bool, value: Mapping[str, Any]) -> Finding | None:
    """The get_schemas finding: the admin's live versions against the schemas the trace stored."""
    if op != "get_schemas" or not ok or value.get("schemas_observed") is None:
        return None
    expected = [(e["version"], e["type"]) for e in value.get("schemas") or []]
    observed = [(int(e["version"]), e["type"]) for e in value["schemas_observed"]]
    rule = "PLS-SCHEMA-021" if value.get("schema_deleted_before") else "PLS-SCHEMA-001"
    same = expected == observed

    def text(vs: list[tuple[int, str]]) -> str:
        return ", ".join(f"v{v} {t}" for v, t in vs) or "none"

    return Finding(rule, PASS if same else FAIL, None if same else "wrong-value", text(expected), text(observed),
                   f"{args['topic']} lists {text(observed)}, as stored." if same else
                   f"Let {args['topic']} have stored the schemas the trace registered"
                   + (" since its last delete (whose marker took a version number)" if rule == "PLS-SCHEMA-021" else "")
                   + f". Then the admin lists {text(expected)}; it listed {text(observed)}.")


def schema_versions(w: Watch, step: int, op: str, args: Mapping[str, Any], ok: bool, value: Mapping[str, Any]) -> list[Finding]:
    """PLS-SCHEMA-001. Violated if the admin lists a topic's live versions with other numbers or types than the schemas
    the trace stored, numbered from 0 (a topic that never had a schema deleted)."""
    found = _schema_listing(op, args, ok, value)
    return [found] if found is not None and found.rule == "PLS-SCHEMA-001" else []


def schema_deleted(w: Watch, step: int, op: str, args: Mapping[str, Any], ok: bool, value: Mapping[str, Any]) -> list[Finding]:
    """PLS-SCHEMA-021. Violated if after a delete the admin lists a version from before it, or numbers later versions
    other than after the delete marker's."""
    found = _schema_listing(op, args, ok, value)
    return [found] if found is not None and found.rule == "PLS-SCHEMA-021" else []


OP_DETECTORS = (ttl_only_at_pass, dlq_initial_subscription, initial_position_ignored, unsubscribe_deletes,
                delete_needs_no_clients,
                short_topic_name, shared_producers_together, *SCHEMA_ADMISSION_DETECTORS, schema_versions, schema_deleted)


def judge_op(w: Watch, step: int, op: str, args: Mapping[str, Any], ok: bool, value: Mapping[str, Any]) -> list[Finding]:
    found: list[Finding] = []
    for detector in OP_DETECTORS:
        found += detector(w, step, op, args, ok, value)
    return found


# ====================================================================== stats: reported hash ranges


def _ranges_text(ranges: Iterable[tuple[int, int]]) -> str:
    """``[[s, e], ...]``; a long list (a ring's) as its first three and last two ranges and the count."""
    rs = [f"[{s}, {e}]" for s, e in ranges]
    if len(rs) > 6:
        rs = rs[:3] + [f"... {len(rs) - 5} more ..."] + rs[-2:]
    return "[" + ", ".join(rs) + "]"


def _reported_ranges(rule: str, how: str, expected: Any, reported: Iterable[Any]) -> list[Finding]:
    """Compare the hash ranges a stats op reported per consumer with the model's (``ModelView.key_hash_ranges``).

    A reported consumer is matched to its trace handle (the target's, else the one connected handle
    with that fixed ``consumer_name``); consumers sharing a name are compared as a group (as multisets).
    Ranges that cannot be attributed are INDETERMINATE. When the model cannot predict any of them
    (``expected.unknown``: a ring with consumers of random names) the stats are not judged at all,
    as a delivery is not judged against an owner nobody can know: the rule states nothing there.
    """
    if expected is None or expected.rule != rule or expected.unknown:
        return []
    reported = list(reported)
    want = {h: tuple(rs) for h, rs in expected.ranges.items()}
    mismatches: list[str] = []
    judged: list[str] = []
    leftover = []
    for r in reported:
        if r.consumer is not None and r.consumer in want:
            got, exp = tuple(r.key_hash_ranges), want.pop(r.consumer)
            judged.append(r.consumer)
            if got != exp:
                mismatches.append(f"{r.consumer} ({r.consumer_name}) reported {_ranges_text(got)}, "
                                  f"expected {_ranges_text(exp)}")
        elif r.consumer is not None:
            mismatches.append(f"{r.consumer} ({r.consumer_name}) reported {_ranges_text(r.key_hash_ranges)} but is not "
                              "connected in the model")
        else:
            leftover.append(r)
    # consumers the target could not attribute: by their fixed name, a group of same-named handles at once
    by_name: dict[str, list[str]] = {}
    for h in want:
        name = expected.names.get(h)
        if name:
            by_name.setdefault(name, []).append(h)
    for name in sorted({r.consumer_name for r in leftover if r.consumer_name in by_name}):
        group = [r for r in leftover if r.consumer_name == name]
        handles = by_name[name]
        got_set = sorted(tuple(r.key_hash_ranges) for r in group)
        exp_set = sorted(want.pop(h) for h in handles)
        judged += handles
        if got_set != exp_set:
            mismatches.append(f"consumers named {name} ({', '.join(handles)}) reported "
                              f"{', '.join(_ranges_text(g) for g in got_set) or 'nothing'}, expected "
                              f"{', '.join(_ranges_text(e) for e in exp_set)}")
    unattributed = [r for r in leftover if r.consumer_name not in by_name]
    unnamed_left = [h for h in want if not expected.names.get(h)]
    # a handle the stats do not list: named ones always; unnamed ones when no unmatched consumer could be them
    missing = [h for h in want if expected.names.get(h) or not unattributed]
    if missing:
        mismatches.append(f"{', '.join(missing)} reported no ranges: the stats list no such consumer")
    if unattributed and not unnamed_left:
        mismatches.append("the stats list consumer(s) " + ", ".join(repr(r.consumer_name) for r in unattributed)
                          + " the model does not know")
    out: list[Finding] = []
    allowed = "; ".join(f"{h}: {_ranges_text(expected.ranges[h])}" for h in expected.ranges) or "no consumer"
    if mismatches:
        out.append(Finding(rule, FAIL, "wrong-value", allowed, "; ".join(mismatches),
                           f"Let {how}. Then each consumer's stats report its share of the hash space as the model "
                           "cuts it; instead " + "; ".join(mismatches) + "."))
    elif judged:
        out.append(Finding(rule, PASS, None, allowed, allowed,
                           f"Let {how}. Then the stats of {', '.join(judged)} show the ranges the model gives, "
                           "range for range."))
    if unattributed and unnamed_left:
        names_ = ", ".join(repr(r.consumer_name) for r in unattributed)
        out.append(Finding(rule, INDETERMINATE, None, f"{', '.join(unnamed_left)}: {allowed}", f"consumer(s) {names_}",
                           f"Not judged: the stats list consumer(s) {names_} that could not be matched to "
                           f"{', '.join(unnamed_left)} (no fixed consumer_name in the trace, and the target could "
                           "not tell)."))
    return out


def ring_ranges_reported(w: Watch, step: int, expected: Any, reported: Iterable[Any]) -> list[Finding]:
    """PLS-KEYSHARED-003 at stats. Violated if under consistent hashing a consumer's stats report hash ranges
    other than its cut of the ring (``key_shared.ring_reported_ranges``: 4.x the ring cut at its points from
    1, the wrap-around to the lowest point's owner, a consumer's ranges merged; 3.x per point), apache/pulsar
    ``ConsistentHashingStickyKeyConsumerSelector.java`` and ``ConsumerHashAssignmentsSnapshot.java``."""
    return _reported_ranges("PLS-KEYSHARED-003", "the consistent-hash ring of the connected consumers place "
                            "each one's replica points by its name", expected, reported)


def auto_split_ranges_reported(w: Watch, step: int, expected: Any, reported: Iterable[Any]) -> list[Finding]:
    """PLS-KEYSHARED-004 at stats. Violated if under AUTO_SPLIT hash ranges a consumer's stats report a range
    other than the one the joins and leaves so far give it (``key_shared.auto_split_assignments``; the top
    range ends at 65536), apache/pulsar ``HashRangeAutoSplitStickyKeyConsumerSelector.java``."""
    return _reported_ranges("PLS-KEYSHARED-004", "AUTO_SPLIT split the largest range at each join and merge "
                            "each leaver's range into the next", expected, reported)


def sticky_ranges_reported(w: Watch, step: int, expected: Any, reported: Iterable[Any]) -> list[Finding]:
    """PLS-KEYSHARED-005 at stats. Violated if a STICKY consumer's stats report ranges other than the ones it
    declared (4.x: sorted and merged when adjacent), apache/pulsar
    ``HashRangeExclusiveStickyKeyConsumerSelector.java`` and ``ConsumerHashAssignmentsSnapshot.java``."""
    return _reported_ranges("PLS-KEYSHARED-005", "each STICKY consumer serve the ranges it declared",
                            expected, reported)


# rule -> the detector of its reported ranges (the checker's ``_stats`` runs the one the model's rule names)
RANGE_DETECTORS = {"PLS-KEYSHARED-003": ring_ranges_reported, "PLS-KEYSHARED-004": auto_split_ranges_reported,
                   "PLS-KEYSHARED-005": sticky_ranges_reported}


def judge_reported_ranges(w: Watch, step: int, expected: Any, reported: Iterable[Any]) -> list[Finding]:
    """The findings of the detector whose rule states the ranges of ``expected`` (None: nothing stated)."""
    if expected is None:
        return []
    return RANGE_DETECTORS[expected.rule](w, step, expected, reported)


def batch_of_one(w: Watch, step: int, producer: str, predicted: Mapping[str, Any], observed: Mapping[str, Any]) -> list[Finding]:
    """PLS-BATCH-008 (Java). Violated if a Java producer's batch that holds a single message is written as a
    batch (batch index 0) instead of a plain message (batch index -1)."""
    if w.model.profile_of(producer).client != "java":
        return []
    from reference_model.feature_state import relative_ids

    want = {k: tuple(v) for k, v in (predicted.get("relative_ids") or {}).items()}
    # a partitioned producer's flush: offsets count on each partition (relative_ids), so an entry is (partition, offset)
    partition = {k: int(v[2]) for k, v in (observed.get("message_ids") or {}).items() if len(v) >= 3}
    per_entry: dict[tuple[int, int], list[str]] = {}
    for label, (entry, _) in want.items():
        per_entry.setdefault((partition.get(label, -1), entry), []).append(label)
    alone = [labels[0] for labels in per_entry.values() if len(labels) == 1 and want[labels[0]][1] == -1]
    if not alone or "PLS-BATCH-001" not in (predicted.get("rules") or ()):
        return []  # not a batching producer: every message is plain anyway (PLS-BATCH-007)
    got = relative_ids({k: v for k, v in (observed.get("message_ids") or {}).items() if k in want and list(v)[:2] != [-1, -1]})
    out = []
    for label in alone:
        index = got.get(label, (None, None))[1]
        ok = index == -1
        out.append(Finding("PLS-BATCH-008", PASS if ok else FAIL, None if ok else "wrong-value", "batch index -1",
                           f"batch index {index}", f"{label} was alone in its batch, and the Java client sends such a batch "
                           "as a plain message" + ("." if ok else f"; it carried batch index {index}.")))
    return out
