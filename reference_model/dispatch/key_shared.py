"""Key_Shared subscriptions: Shared dispatch plus "one key, one consumer, in order".

Pulsar part: ``PersistentStickyKeyDispatcherMultipleConsumers`` (4.x, with PIP-379 draining
hashes; 3.x with the "recently joined consumers" rule) over the sticky-key selectors modelled
in ``reference_model.key_shared`` (consistent-hash ring, AUTO_SPLIT hash ranges, STICKY ranges).
Rule ids: PLS-KEYSHARED-001 (sticky key: ordering key, else partition key, else the per-version
keyless fallback), PLS-KEYSHARED-002 (slot), PLS-KEYSHARED-003 (ring), PLS-KEYSHARED-004
(AUTO_SPLIT), PLS-KEYSHARED-005 (STICKY, and its refusals), PLS-KEYSHARED-006 (4.x draining
hashes), PLS-KEYSHARED-007 (a key is served by one consumer at a time, its first deliveries in
publish order), and everything Shared says (``shared.py``): Key_Shared only *removes* options.

What a consumer may receive, on top of Shared's allowed set:

1. Its owner. The selector in effect is a value (``Ring``/``AutoSplit``/``Sticky``); every join
   or leave starts a new *epoch*. A message may go to the owner of its sticky key in any epoch
   since it was stored: a copy pushed to a receiver queue before the owner changed still
   surfaces there (prefetch is hidden state). The model's own choice is the current owner.
   The ring depends on consumer *names*: when a consumer has no ``consumer_name`` (the client
   draws a random one) the owner in that epoch is unknown and only rule 3 judges.
2. Not while another consumer holds the key (its application received a message of that key
   and has not acked, nacked or lost it). On 4.x this is the draining rule (PLS-KEYSHARED-006:
   the old owner drains first); on 3.x the recently-joined rule gives the same for *first*
   deliveries only (replays are not restricted there), so 3.x judges first deliveries only.
   ``allow_out_of_order`` turns the rule off.
3. In key order: a first delivery of a key is refused while an earlier message of the same key
   has never been delivered to anyone (PLS-KEYSHARED-007); redeliveries may come in any order.
   Within one epoch with unknown owners, a key's first deliveries go to one consumer only.

Not modelled: permits, look-ahead limits and the replay queue order (which consumer gets a
message *when* beyond the above), priority levels, mixing AutoSplit and Sticky consumers on one
subscription (refused as not modelled), 3.x recently-joined rule's full effect on the model's
own choice (it is an over-approximation: the model may deliver sooner than a 3.x broker).
Choices: a consumer's selector identity is its handle (AUTO_SPLIT, STICKY) or a ``KsConsumer``
of its name (ring); a keyless message's 4.x sticky key uses the producer name the history reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable, Mapping

from reference_model import hashing, key_shared as ks, releases
from reference_model.dispatch.base import Candidate, ConsumerConfig, ReceiveOptions, Refusal, SubscriptionView
from reference_model.dispatch.shared import SharedDispatcher
from reference_model.profiles import Profile
from reference_model.rejections import NotModelledError, Rejected
from reference_model.timing import Span, Window

RULE_KEY = "PLS-KEYSHARED-001"
RULE_ORDER = "PLS-KEYSHARED-007"
_SELECTOR_RULE = {"consistent_hashing": ks.RULE_RING, "auto_split": ks.RULE_AUTO_SPLIT, "sticky": ks.RULE_STICKY}

# broker.conf keys that change Key_Shared dispatch (read from the live broker's runtime config)
BROKER_CONFIG_KEYS = (
    "subscriptionKeySharedUseConsistentHashing",
    "subscriptionKeySharedConsistentHashingReplicaPoints",
    "subscriptionKeySharedUseClassicPersistentImplementation",
)


def _flag(value: Any, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() == "true"


@dataclass(frozen=True)
class KeySharedSettings:
    """The broker facts Key_Shared depends on: release (selector code) and broker config."""

    profile: ks.KeySharedProfile
    consistent_hashing: bool = True  # subscriptionKeySharedUseConsistentHashing (default true)
    replica_points: int = ks.DEFAULT_REPLICA_POINTS

    @staticmethod
    def for_broker(version: str | None, broker_config: Mapping[str, Any] | None = None) -> "KeySharedSettings":
        """Settings for broker ``version`` ("4.0.8", "3.3.6", a line "4.0", "3.x") and its config."""
        config = dict(broker_config or {})
        release = releases.parse(version or releases.DEFAULT_LINE)
        classic = _flag(config.get("subscriptionKeySharedUseClassicPersistentImplementation"), False)
        try:
            profile = ks.profile_for_broker(release.number, classic_dispatcher=classic and release.major >= 4)
        except ValueError:
            # an unchecked release: take its line's checked release (documented in key_shared)
            profile = ks.PROFILE_4 if release.major >= 4 else ks.PROFILE_3_NAME_INDEX
        points = config.get("subscriptionKeySharedConsistentHashingReplicaPoints")
        return KeySharedSettings(
            profile=profile,
            consistent_hashing=_flag(config.get("subscriptionKeySharedUseConsistentHashing"), True),
            replica_points=int(points) if points not in (None, "") else ks.DEFAULT_REPLICA_POINTS)


@dataclass(frozen=True)
class KeySharedPolicy:
    """A consumer's ``key_shared`` subscribe arg, defaults applied."""

    mode: str = "AutoSplit"  # AutoSplit | Sticky
    allow_out_of_order: bool = False
    ranges: tuple[tuple[int, int], ...] = ()

    @staticmethod
    def from_arg(arg: Mapping[str, Any] | None) -> "KeySharedPolicy":
        arg = arg or {}
        return KeySharedPolicy(mode=str(arg.get("mode", "AutoSplit")),
                               allow_out_of_order=bool(arg.get("allow_out_of_order", False)),
                               ranges=tuple((int(r[0]), int(r[1])) for r in arg.get("ranges") or ()))


def check_policy(policy: KeySharedPolicy) -> Rejected | None:
    """PLS-KEYSHARED-005, client side: what ``KeySharedPolicy(...)`` refuses before connecting."""
    if policy.mode not in ("AutoSplit", "Sticky"):
        return Rejected("InvalidArgument", ks.RULE_STICKY, f"key_shared mode must be AutoSplit or Sticky, got {policy.mode!r}")
    if policy.mode == "Sticky":
        try:
            ks.validate_sticky_ranges(list(policy.ranges))
        except ValueError as err:
            return Rejected("InvalidArgument", ks.RULE_STICKY, str(err))
    return None


@dataclass(frozen=True)
class _Epoch:
    since: float
    state: Any  # Ring | AutoSplit | Sticky | None
    handle_of: Mapping[Hashable, str]
    known: bool  # every owner determined (ring: every consumer has a fixed name)


class KeySharedDispatcher(SharedDispatcher):
    """Key_Shared: Shared's allowed set, filtered by owner, key holding and key order."""

    type_name = "Key_Shared"

    def __init__(self, sub: SubscriptionView, profile: Profile, slack_ms: float = 0.0,
                 settings: KeySharedSettings | None = None):
        super().__init__(sub, profile, slack_ms)
        self.settings = settings or KeySharedSettings.for_broker(profile.broker)
        self.policies: dict[str, KeySharedPolicy] = {}
        self.selector: str | None = None
        self.state: Any = None
        self.ident: dict[str, Hashable] = {}  # handle -> selector identity
        self.epochs: list[_Epoch] = []
        self.delivered_once: set[int] = set()
        self.learned: dict[bytes, str] = {}  # key -> consumer, this epoch, when owners are unknown
        self.ever_multi = False
        self._keys: dict[int, bytes] = {}

    # ------------------------------------------------------------------ keys and owners

    def sticky_key(self, pos: int) -> bytes:
        """PLS-KEYSHARED-001: the bytes the broker hashes for the entry at ``pos``."""
        if pos not in self._keys:
            m = self.sub.topic.entries[pos]  # type: ignore[attr-defined]
            self._keys[pos] = hashing.sticky_key(
                ordering_key=m.ordering_key, partition_key=m.key, producer_name=m.producer_name,
                sequence_id=m.sequence_id, producer_sequence_fallback=self.settings.profile.keyless_producer_sequence)
        return self._keys[pos]

    def _owner(self, epoch: _Epoch, key: bytes) -> str | None:
        """The handle serving ``key`` in ``epoch`` (None: nobody, the message waits)."""
        if epoch.state is None:
            return None
        owner = ks.owner_of(self.selector or "consistent_hashing", epoch.state, self.settings.profile, key)
        if self.selector == "consistent_hashing":
            return None if owner is None else epoch.handle_of.get(owner)  # a ring consumer is a KsConsumer
        return owner  # type: ignore[return-value]

    def _epochs_since(self, t: float) -> list[_Epoch]:
        out = []
        for i, e in enumerate(self.epochs):
            end = self.epochs[i + 1].since if i + 1 < len(self.epochs) else float("inf")
            if end >= t:
                out.append(e)
        return out

    def owners(self, pos: int) -> set[str] | None:
        """Consumers that owned the key of ``pos`` since it was stored; None: unknown (anyone)."""
        key = self.sticky_key(pos)
        owners: set[str] = set()
        for e in self._epochs_since(self.sub.stored_span(pos).start):
            if not e.known:
                return None
            o = self._owner(e, key)
            if o is not None:
                owners.add(o)
        return owners

    def current_owner(self, pos: int) -> str | None:
        return self._owner(self.epochs[-1], self.sticky_key(pos)) if self.epochs else None

    def _out_of_order_allowed(self) -> bool:
        return any(p.allow_out_of_order for p in self.policies.values())

    def _holder_of_key(self, handle: str, pos: int) -> tuple[str, int] | None:
        """Another consumer holding a message of the same key (and which)."""
        key = self.sticky_key(pos)
        for other, held in self.held_by.items():
            if other == handle:
                continue
            for q in held:
                slot = self.slots.get(q)
                if slot is not None and slot.holder == other and slot.release is None and self.sticky_key(q) == key:
                    return other, q
        return None

    def _earlier_undelivered(self, pos: int) -> int | None:
        key = self.sticky_key(pos)
        cursor = self.sub.cursor
        for q in range(self.sub.start_pos, pos):
            if q not in self.delivered_once and not cursor.is_acked(q) and self.sticky_key(q) == key:
                return q
        return None

    def refusal(self, handle: str, pos: int, first: bool) -> Refusal | None:
        """Why Key_Shared (beyond Shared) forbids ``handle`` receiving ``pos`` now, or None."""
        label = self.sub.label(pos)
        key = self.sticky_key(pos).decode("utf-8", "replace")
        owners = self.owners(pos)
        if owners is not None and handle not in owners:
            rule = _SELECTOR_RULE[self.selector or "consistent_hashing"]
            who = ", ".join(sorted(owners)) or "no consumer (no range covers its slot)"
            return Refusal("key-stickiness-violation", rule,
                           f"Let the sticky key of {label} be {key!r}. Then the {self.selector} selector gives it to "
                           f"{who} (every epoch since {label} was stored); {handle} received it.")
        if not self._out_of_order_allowed() and (first or self.settings.profile.draining_hashes):
            held = self._holder_of_key(handle, pos)
            if held is not None:
                other, q = held
                if self.settings.profile.draining_hashes:
                    return Refusal("draining-violation", ks.RULE_DRAINING,
                                   f"Let {other} hold {self.sub.label(q)} (key {key!r}) unacked. Then no message of that "
                                   f"key goes to another consumer until {other} acks it or closes; {handle} received {label}.")
                return Refusal("key-stickiness-violation", RULE_ORDER,
                               f"Let {other} hold {self.sub.label(q)} (key {key!r}) unacked. Then the key is served by "
                               f"{other} alone; {handle} received {label} first-hand.")
        if first and not self._out_of_order_allowed():
            earlier = self._earlier_undelivered(pos)
            if earlier is not None:
                return Refusal("key-order-violation", RULE_ORDER,
                               f"Let {self.sub.label(earlier)} and {label} share key {key!r}, {self.sub.label(earlier)} "
                               f"published first. Then {label} is not delivered before {self.sub.label(earlier)}; "
                               f"{handle} received {label} while {self.sub.label(earlier)} was never delivered.")
            if owners is None:
                learned = self.learned.get(self.sticky_key(pos))
                stored_now = self.epochs and self.sub.stored_span(pos).start >= self.epochs[-1].since
                if learned is not None and learned != handle and learned in self.consumers and stored_now:
                    return Refusal("key-stickiness-violation", RULE_ORDER,
                                   f"{learned} received key {key!r} since the last join or leave; {handle} received {label} of the same key.")
        return None

    # ------------------------------------------------------------------ membership

    def admit(self, consumer: ConsumerConfig) -> Rejected | None:
        policy = KeySharedPolicy.from_arg(consumer.key_shared)
        if self.consumers and self.selector is not None:
            if (policy.mode == "Sticky") != (self.selector == "sticky"):
                raise NotModelledError("mixing Key_Shared AutoSplit and Sticky consumers on one subscription")
        if policy.mode == "Sticky":
            state = self.state if (self.selector == "sticky" and self.state is not None) else ks.Sticky(self.settings.profile)
            joined = ks.sticky_join(state, consumer.handle, list(policy.ranges))
            if isinstance(joined, Rejected):
                return joined
        elif self.selector == "auto_split" and self.state is not None:
            joined = ks.auto_split_join(self.state, consumer.handle)
            if isinstance(joined, Rejected):
                return joined
        return None

    def add_consumer(self, consumer: ConsumerConfig, at: Span, start_rule: str) -> None:
        policy = KeySharedPolicy.from_arg(consumer.key_shared)
        if self.selector is None:
            self.selector = "sticky" if policy.mode == "Sticky" else (
                "consistent_hashing" if self.settings.consistent_hashing else "auto_split")
        refused = self.admit(consumer)
        if refused is not None:
            raise NotModelledError(f"a Key_Shared consumer the selector refuses was added: {refused.detail}")
        super().add_consumer(consumer, at, start_rule)
        self.policies[consumer.handle] = policy
        self.ever_multi = self.ever_multi or len(self.consumers) > 1
        if self.selector == "consistent_hashing":
            ring = self.state or ks.new_ring(self.settings.profile, self.settings.replica_points)
            self.state, c = ks.ring_join(ring, consumer.consumer_name or consumer.handle)
            self.ident[consumer.handle] = c
        elif self.selector == "auto_split":
            self.state = ks.auto_split_join(self.state or ks.AutoSplit(), consumer.handle)
            self.ident[consumer.handle] = consumer.handle
        else:
            self.state = ks.sticky_join(self.state or ks.Sticky(self.settings.profile), consumer.handle, list(policy.ranges))
            self.ident[consumer.handle] = consumer.handle
        self._new_epoch(at)

    def remove_consumer(self, handle: str, at: Span) -> None:
        super().remove_consumer(handle, at)
        self.policies.pop(handle, None)
        c = self.ident.pop(handle, None)
        if c is not None and self.state is not None:
            if self.selector == "consistent_hashing":
                self.state = ks.ring_leave(self.state, c)
            elif self.selector == "auto_split":
                self.state = ks.auto_split_leave(self.state, c)
            else:
                self.state = ks.sticky_leave(self.state, c)
        self._new_epoch(at)

    def _new_epoch(self, at: Span) -> None:
        handle_of = {c: h for h, c in self.ident.items()}
        known = self.selector != "consistent_hashing" or all(
            self.consumers[h].consumer_name for h in self.consumers)
        self.epochs.append(_Epoch(at.start, self.state, handle_of, known))
        self.learned.clear()

    # ------------------------------------------------------------------ what may arrive

    def _first_allowed_fresh(self, handle: str) -> int | None:
        cursor = self.sub.cursor
        n = self.sub.n_entries()
        pos = cursor.first_unacked(max(self.next_fresh, self.skip_before.get(handle, 0)))
        while pos < n:
            if not cursor.is_acked(pos) and self.current_owner(pos) == handle and self.refusal(handle, pos, True) is None:
                return pos
            pos += 1
        return None

    def options(self, handle: str, at: Span, focus: int | None = None) -> ReceiveOptions:
        if handle not in self.consumers:
            return ReceiveOptions(())
        base = super().options(handle, at, focus)
        extra = self._first_allowed_fresh(handle)
        cands = list(base.candidates)
        if extra is not None and all(c.pos != extra for c in cands):
            stored = self.sub.stored_span(extra)
            cands.append(Candidate(extra, Window(stored.start, stored.start, None), self.start_rules.get(handle, ()) + ("PLS-SHARED-001",),
                                   "not yet delivered to any consumer", 0, self._fresh_hi(extra), kind="pool"))
        kept: list[Candidate] = []
        waived: list[Candidate] = []
        for c in cands:
            if c.kind in ("stale", "ghost"):
                kept.append(c)
                continue
            first = c.pos not in self.delivered_once
            if self.refusal(handle, c.pos, first) is not None:
                continue
            rules = c.rules + (RULE_KEY, ks.RULE_SLOT, _SELECTOR_RULE[self.selector or "consistent_hashing"], RULE_ORDER)
            if self.settings.profile.draining_hashes and not self._out_of_order_allowed():
                rules += (ks.RULE_DRAINING,)
            elif self._draining_waived(handle, c):
                # PLS-KEYSHARED-006's stated exception: with allowOutOfOrderDelivery a moved hash is
                # not drained, so this delivery is the rule's exemption observed, and it is owed now.
                rules += (ks.RULE_DRAINING,)
                waived.append(c)
            w = c.window
            if self.current_owner(c.pos) != handle and self.owners(c.pos) is not None:
                w = Window(w.low, float("inf"), None)  # a former owner: allowed, never due, never the model's choice
            kept.append(Candidate(c.pos, w, rules, c.cause, c.count_low, c.count_high, c.kind, c.topic))
        kept.sort(key=lambda c: c.pos)
        must_by = must_rule = None
        reason = ""
        single = len(self.consumers) == 1 and self.selector != "sticky"
        if single and (self.settings.profile.draining_hashes or not self.ever_multi):
            dues = [(c.window.high, c) for c in kept if c.window.high is not None and c.kind != "stale"]
            if dues:
                due, c = min(dues, key=lambda d: d[0])
                must_by, must_rule = due, c.rules[0]
                reason = f"{self.sub.label(c.pos)} was deliverable ({c.cause}) and {handle} is the only consumer"
        dues = [(c.window.high, c) for c in waived if c.window.high is not None]
        if must_by is None and dues:
            due, c = min(dues, key=lambda d: d[0])
            other, q = self._holder_of_key(handle, c.pos) or ("another consumer", c.pos)
            must_by, must_rule = due, ks.RULE_DRAINING
            reason = (f"Let {other} hold {self.sub.label(q)} of the same key unacked, and the key now belong to {handle}. "
                      f"Then with allowOutOfOrderDelivery the hash is not drained: {self.sub.label(c.pos)} goes to {handle} at once")
        return ReceiveOptions(tuple(kept), must_by, must_rule, reason)

    def _draining_waived(self, handle: str, c: Candidate) -> bool:
        """Whether ``c`` is a first delivery that the 4.x draining rule would hold back but allowOutOfOrderDelivery lets through."""
        return (self.settings.profile.draining_hashes and self._out_of_order_allowed()
                and c.kind in ("first", "pool") and c.pos not in self.delivered_once
                and self.current_owner(c.pos) == handle and self._holder_of_key(handle, c.pos) is not None)

    # ------------------------------------------------------------------ what happened

    def deliver(self, handle: str, pos: int, at: Span, count: int, candidate: Candidate | None) -> None:
        if candidate is None or candidate.kind not in ("stale", "ghost"):
            if pos not in self.delivered_once and self.owners(pos) is None:
                self.learned.setdefault(self.sticky_key(pos), handle)
        # PLS-KEYSHARED-007 orders *dispatches*: a stale or ghost copy was pushed by the broker to
        # a receiver queue before, so its message has been dispatched once either way, and later
        # messages of its key are no longer held back by it.
        self.delivered_once.add(pos)
        super().deliver(handle, pos, at, count, candidate)

    def reset(self, pos: int, at: Span, rule: str, filter_for: tuple[str, int] | None = None,
              seeker: str | None = None) -> None:
        super().reset(pos, at, rule, filter_for, seeker)
        self.delivered_once = {p for p in self.delivered_once if p < pos}
        self.learned.clear()

    def explain(self, handle: str, pos: int, at: Span) -> Refusal:
        base = super().explain(handle, pos, at)
        if base.anomaly != "wrong-value":
            return base
        why = self.refusal(handle, pos, pos not in self.delivered_once)
        return why or base
