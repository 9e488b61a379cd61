"""Key_Shared subscriptions: Shared dispatch plus "one key, one consumer, in order".

Pulsar part: ``PersistentStickyKeyDispatcherMultipleConsumers`` (4.x, with PIP-379 draining
hashes; 3.x with the "recently joined consumers" rule) over the sticky-key selectors modelled
in ``reference_model.key_shared`` (consistent-hash ring, AUTO_SPLIT hash ranges, STICKY ranges).
Rule ids: PLS-KEYSHARED-001 (sticky key: ordering key, else partition key, else the per-version
keyless fallback), PLS-KEYSHARED-002 (slot), PLS-KEYSHARED-003 (ring), PLS-KEYSHARED-004
(AUTO_SPLIT), PLS-KEYSHARED-005 (STICKY, and its refusals), PLS-KEYSHARED-006 (4.x draining
hashes), PLS-KEYSHARED-007 (a key is served by one consumer at a time, its first deliveries in
publish order), PLS-KEYSHARED-008 (an incompatible KeySharedPolicy is refused), and everything Shared says (``shared.py``): Key_Shared only *removes* options.

What a consumer may receive, on top of Shared's allowed set:

1. Its owner. The selector in effect is a value (``Ring``/``AutoSplit``/``Sticky``); every join
   or leave starts a new *epoch*. A message may go to the owner of its sticky key in any epoch
   since it was stored: a copy pushed to a receiver queue before the owner changed still
   surfaces there (prefetch is hidden state). The model's own choice is the current owner.
   The ring depends on consumer *names*: when a consumer has no ``consumer_name`` (the client
   draws a random one) the owner in that epoch is unknown and only rule 3 judges.
2. Not while its slot drains for another consumer. On 4.x (AUTO_SPLIT mode) this is the draining
   rule, kept as a map with the chapter's functions (PLS-KEYSHARED-006,
   ``key_shared.register_draining_hashes`` on every join and leave, ``may_dispatch`` per delivery,
   ``acked`` when a message leaves a consumer's hands, ``consumer_closed`` on a leave). What a
   consumer has *pending* is what its application received and has not acked, nacked or lost:
   the broker's pending acks also hold what sits unseen in receiver queues, so the model's draining
   starts with fewer messages and ends no later than the broker's (the sound direction for a
   judge). On 3.x the recently-joined rule holds a key back while another consumer holds a
   message of it, for *first* deliveries only (replays are not restricted there).
   ``allow_out_of_order`` turns the rule off; STICKY consumers never drain (4.x sets
   ``drainingHashesRequired`` for AUTO_SPLIT mode only).
3. In key order: a first delivery of a key is refused while an earlier message of the same key
   has never been delivered to anyone (PLS-KEYSHARED-007); redeliveries may come in any order.
   Within one epoch with unknown owners, a key's first deliveries go to one consumer only.

A consumer whose policy differs from the connected consumers' (mode, or allowOutOfOrderDelivery)
is refused with ConsumerBusy (PLS-KEYSHARED-008, ``incompatible``).

Not modelled: permits, look-ahead limits and the replay queue order (which consumer gets a
message *when* beyond the above), priority levels, 3.x recently-joined rule's full effect on the model's
own choice (it is an over-approximation: the model may deliver sooner than a 3.x broker).
Choices: a consumer's selector identity is its handle (AUTO_SPLIT, STICKY) or a ``KsConsumer``
of its name (ring); a keyless message's 4.x sticky key uses the producer name the history reports.
A batched entry is hashed by its batch's keys: the clients fill the batch metadata from the
batch's first message (C++ ``Commands::initBatchMessageMetadata`` from
``BatchMessageContainer::add``; Java ``Commands.initBatchMessageMetadata`` from
``BatchMessageContainerImpl.add``), and the broker hashes the entry's metadata
(``Commands.resolveStickyKey``). Draining where the model cannot see the broker's state is
settled in the broker's favour: a slot whose owner is unknown (ring consumers without names) never
starts draining; a slot that comes back to the consumer draining it stops draining at once (as
measured on 4.0.8, see ``key_shared`` step 2); a
``redeliver_unacked`` gives back everything the consumer had pending, so its drainings end; a
message under an ack timeout is counted as given back from its delivery; a batch counts once per
message received (the broker: once per entry, which leaves its pending acks only with the batch's
last message), so the model's count never outlasts the broker's.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field, replace
from typing import Any, Hashable, Iterable, Mapping

from reference_model import hashing, key_shared as ks, releases
from reference_model.dispatch.base import Candidate, ConsumerConfig, ReceiveOptions, Refusal, SubscriptionView, owed
from reference_model.dispatch.shared import SharedDispatcher
from reference_model.profiles import Profile
from reference_model.rejections import ModelError, Rejected
from reference_model.timing import Span, Window

RULE_KEY = "PLS-KEYSHARED-001"
RULE_ORDER = "PLS-KEYSHARED-007"
RULE_POLICY = "PLS-KEYSHARED-008"
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
    # sticky key -> the handle serving it in this epoch (``_owner``), filled as keys are asked for
    owners: dict[bytes, str | None] = field(default_factory=dict, compare=False, repr=False)


def _cut_back(seen: list[int], indexes: Iterable[list[int]], first: int) -> None:
    """An index of positions (ascending lists, built up to ``seen[0]``) forgets ``first`` and what follows it."""
    if seen[0] > first:
        seen[0] = first
        for positions in indexes:
            del positions[bisect_left(positions, first):]


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
        self._hash_slots: dict[int, int] = {}
        # PLS-KEYSHARED-006 (4.x, AUTO_SPLIT mode): slot -> DrainingHash(handle, count), and for
        # explanations slot -> the change that started it. Kept with allow_out_of_order too, to
        # tell the deliveries that rule exempts (``_draining_waived``).
        self.draining: dict[int, ks.DrainingHash] = {}
        self.drain_cause: dict[int, str] = {}
        # Indexes kept between receives, each over the positions before its "looked at" mark, cut back to the first
        # position whose sticky key changed (``forget_sticky_keys``): handle -> (epoch count, looked at, the positions
        # the selector in effect gives it) for ``_first_allowed_fresh``, looked at anew after a join or leave; and
        # (looked at, sticky key -> its positions) for ``_earlier_undelivered``. Positions are ascending in both.
        self._owned: dict[str, tuple[int, list[int], list[int]]] = {}
        self._by_key: tuple[list[int], dict[bytes, list[int]]] = ([0], {})

    # ------------------------------------------------------------------ keys and owners

    def sticky_key(self, pos: int) -> bytes:
        """PLS-KEYSHARED-001: the bytes the broker hashes for the entry at ``pos``: a batch's entry
        is hashed by its first message's keys (``hashing.batch_sticky_key``)."""
        if pos not in self._keys:
            entries = self.sub.topic.entries  # type: ignore[attr-defined]
            members = self.batch_members(pos)
            key = hashing.batch_sticky_key(
                [{"ordering_key": entries[p].ordering_key, "partition_key": entries[p].key,
                  "partition_key_b64_encoded": entries[p].key_b64,  # PLS-MSG-002: a key given as bytes
                  "producer_name": entries[p].producer_name, "sequence_id": entries[p].sequence_id} for p in members],
                producer_sequence_fallback=self.settings.profile.keyless_producer_sequence)
            for p in members:
                self._keys[p] = key
        return self._keys[pos]

    def forget_sticky_keys(self, positions: Iterable[int]) -> None:
        """The entries of ``positions`` were settled anew (PLS-BATCH-009: the split a flush's ids show): their
        sticky keys are computed again from their settled batches."""
        first = None
        for pos in positions:
            self._keys.pop(pos, None)
            self._hash_slots.pop(pos, None)  # the slot is the new key's
            first = pos if first is None else min(first, pos)
        if first is not None:
            for _, seen, owned in self._owned.values():
                _cut_back(seen, [owned], first)
            seen, table = self._by_key
            _cut_back(seen, table.values(), first)

    def batch_members(self, pos: int) -> list[int]:
        """The positions stored in the entry of ``pos``, in batch-index order: the storage
        features' ``TopicFeatures.batch_of`` (``[pos]`` for a message that is its own entry)."""
        return list(self.sub.batch_of(pos))

    def hash_slot(self, pos: int) -> int:
        """PLS-KEYSHARED-002: the sticky-key hash (slot) of ``pos`` for the selector in effect, the
        number the broker's draining hashes are kept by."""
        slot = self._hash_slots.get(pos)
        if slot is None:
            slot = ks.slot_for(self.settings.profile, self.selector or "consistent_hashing", self.sticky_key(pos))
            if self.selector is not None:  # fixed by the first consumer for this dispatcher's life
                self._hash_slots[pos] = slot
        return slot

    def _owner(self, epoch: _Epoch, key: bytes) -> str | None:
        """The handle serving ``key`` in ``epoch`` (None: nobody, the message waits)."""
        if epoch.state is None:
            return None
        if key in epoch.owners:
            return epoch.owners[key]
        owner = ks.owner_of(self.selector or "consistent_hashing", epoch.state, self.settings.profile, key)
        if self.selector == "consistent_hashing":
            owner = None if owner is None else epoch.handle_of.get(owner)  # a ring consumer is a KsConsumer
        epoch.owners[key] = owner  # type: ignore[assignment]
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
        """The handle the selector in effect gives ``pos`` now: the owner of its slot when every owner
        is known, else the model's own guess (a ring consumer without a fixed name placed by its handle)."""
        if self.owners_known():
            return self.current_owner_of_slot(self.hash_slot(pos))
        return self._owner(self.epochs[-1], self.sticky_key(pos)) if self.epochs else None

    def current_owner_of_key(self, key: bytes) -> str | None:
        """The handle the selector in effect gives the sticky key ``key`` now (``current_owner_of_slot``); None when
        nobody serves it (a STICKY consumer whose ranges miss its hash) or the owners are unknown (a ring of several
        consumers without fixed names)."""
        if self.selector is None:
            return None
        connected = self.connected()
        if self.selector != "sticky" and len(connected) == 1:
            return connected[0]  # a hash ring or AUTO_SPLIT ranges with one consumer give it every key, named or not
        return self.current_owner_of_slot(ks.slot_for(self.settings.profile, self.selector, key))

    def epoch_number(self) -> int:
        """How many joins and leaves this subscription's selector has seen (the current epoch's number)."""
        return len(self.epochs)

    def owners_known(self) -> bool:
        """Whether the selector in effect has a state and every owner in it is determined (a ring
        of consumers that all have fixed names, or AUTO_SPLIT / STICKY)."""
        return bool(self.epochs) and self.epochs[-1].state is not None and self.epochs[-1].known

    def current_owner_of_slot(self, slot: int) -> str | None:
        """The handle the selector in effect gives ``slot`` now; None when nobody serves it, when the
        owners are unknown (a ring of random names), or when ``slot`` is outside the selector's
        slot space (so a slot computed by another release's formula simply finds no owner)."""
        if self.selector is None or not self.owners_known():
            return None
        epoch = self.epochs[-1]
        if self.selector != "consistent_hashing" and not 0 <= slot <= ks.RANGE_SIZE:
            return None
        owner = ks.owner_of_slot(self.selector, epoch.state, slot)
        if self.selector == "consistent_hashing":
            return None if owner is None else epoch.handle_of.get(owner)  # a ring consumer is a KsConsumer
        return owner  # type: ignore[return-value]

    def out_of_order_allowed(self) -> bool:
        """allowOutOfOrderDelivery on a consumer of this subscription: key order and draining are off."""
        return any(p.allow_out_of_order for p in self.policies.values())

    def holder_of_key(self, handle: str, pos: int) -> tuple[str, int] | None:
        """Another consumer holding (received, not acked, nacked or released) a message of the same
        sticky key as ``pos``, and which message: PLS-KEYSHARED-007's "one consumer at a time"."""
        key = self.sticky_key(pos)
        for other, held in self.held_by.items():
            if other == handle:
                continue
            for q in held:
                slot = self.slots.get(q)
                if slot is not None and slot.holder == other and slot.release is None and self.sticky_key(q) == key:
                    return other, q
        return None

    # ------------------------------------------------------------------ draining hashes (PLS-KEYSHARED-006)

    def _draining_kept(self) -> bool:
        """The broker keeps draining hashes: 4.x default dispatcher, AUTO_SPLIT mode (ring or ranges)."""
        return self.settings.profile.draining_hashes and self.selector in ("consistent_hashing", "auto_split")

    def _drained_by_other(self, handle: str, pos: int) -> tuple[int, ks.DrainingHash] | None:
        """The slot of ``pos`` and its draining entry, when it drains for a consumer other than ``handle``."""
        if not self.draining:
            return None
        slot = self.hash_slot(pos)
        allowed, _ = ks.may_dispatch(self.draining, slot, handle)
        return None if allowed else (slot, self.draining[slot])

    def _pending(self, handle: str) -> dict[int, int]:
        """Slot -> how many messages ``handle``'s application holds unacked (received, not acked,
        not nacked, not released)."""
        out: dict[int, int] = {}
        for q in self.held_by.get(handle, ()):
            slot = self.slots.get(q)
            if slot is not None and slot.holder == handle and slot.release is None:
                h = self.hash_slot(q)
                out[h] = out.get(h, 0) + 1
        return out

    def _slot_owner(self, epoch: _Epoch, slot: int) -> str | None:
        if epoch.state is None:
            return None
        owner = ks.owner_of_slot(self.selector or "consistent_hashing", epoch.state, slot)
        if self.selector == "consistent_hashing":
            return None if owner is None else epoch.handle_of.get(owner)  # type: ignore[arg-type]
        return owner  # type: ignore[return-value]

    def _register_draining(self, before: _Epoch | None, changed: str, cause: str) -> None:
        """Step 1 after a join or leave of ``changed`` (the new epoch is in effect)."""
        after = self.epochs[-1]
        if not self._draining_kept() or before is None or not (before.known and after.known):
            return  # an owner the model cannot name never starts a draining (the broker's favour)
        pending: dict[str, dict[int, int]] = {}
        for h in self.consumers:
            mine = self._pending(h)
            # A slot draining for someone else cannot be pending here at the broker (its addEntry
            # would refuse); such a copy came from a receiver queue filled earlier: not counted.
            mine = {s: n for s, n in mine.items() if s not in self.draining or self.draining[s].consumer == h}
            if mine:
                pending[h] = mine
        drained = ks.register_draining_hashes(
            self.draining, owner_before=lambda s: self._slot_owner(before, s),
            owner_after=lambda s: self._slot_owner(after, s), changed=changed, pending=pending)
        for s in drained.keys() - self.draining.keys():
            self.drain_cause[s] = cause
        # A slot back with the consumer draining it stops draining (step 2: the broker lets that
        # consumer have it again; measured on 4.0.8, the draining is gone at the change already).
        for s, entry in list(drained.items()):
            if self._slot_owner(after, s) == entry.consumer:
                _, drained = ks.may_dispatch(drained, s, entry.consumer)
        self.draining = drained
        self._forget_causes()

    def _count_down(self, handle: str, pos: int) -> None:
        """Step 3: one of ``handle``'s pending messages at ``pos`` left its hands."""
        if not self.draining:
            return
        slot = self.hash_slot(pos)
        entry = self.draining.get(slot)
        if entry is not None and entry.consumer == handle:
            self.draining = ks.acked(self.draining, slot, handle)
            self._forget_causes()

    def _pending_holder(self, pos: int) -> str | None:
        slot = self.slots.get(pos)
        return slot.holder if slot is not None and slot.release is None else None

    def _forget_causes(self) -> None:
        for s in self.drain_cause.keys() - self.draining.keys():
            del self.drain_cause[s]

    def _in_own_gap(self, handle: str, pos: int) -> bool:
        """Whether a broker with the STICKY endpoint map (before apache/pulsar#24730) would have given
        ``pos`` to ``handle``: its slot lies in a gap between ``handle``'s own ranges (KD-201)."""
        return any(e.state is not None and ks.endpoint_map_select(e.state, self.hash_slot(pos)) == handle
                   for e in self._epochs_since(self.sub.stored_span(pos).start))

    def _earlier_undelivered(self, pos: int) -> int | None:
        """An earlier message of ``pos``'s key never delivered, which holds ``pos`` back (PLS-KEYSHARED-007).

        A delayed message (PLS-DELAY-003) holds back nothing: the dispatcher hands it to its delayed-delivery
        tracker and goes on reading, so later messages of its key are dispatched before it. Measured 27 Nov
        2026 on 4.0.8 and 3.3.6 (Python client): ``late`` (key k1, deliver_after 800 ms) then ``now`` (key k1),
        ``now`` received at once (the 3.3.6 campaign's findings pls-keyshared-007-key-order-violation-cac79d251f27
        and -37b5a09a3ee0; ``tests/model/test_dispatch_key_shared.py``)."""
        cursor = self.sub.cursor
        same_key = self._positions_of_key(self.sticky_key(pos))
        lo = max(self.sub.start_pos, cursor.mark_delete + 1)  # what the mark-delete covers is acked
        for q in same_key[bisect_left(same_key, lo):bisect_left(same_key, pos)]:
            if q not in self.delivered_once and not cursor.is_acked(q) and not self.sub.tracked_by_delay(q):
                return q
        return None

    def _positions_of_key(self, key: bytes) -> list[int]:
        """The positions whose sticky key is ``key``, ascending (an index grown as the topic grows; see ``__init__``)."""
        seen, table = self._by_key
        n = self.sub.n_entries()
        for q in range(seen[0], n):
            table.setdefault(self.sticky_key(q), []).append(q)
        seen[0] = max(seen[0], n)
        return table.get(key, [])

    def _may_take(self, handle: str, pos: int) -> bool:
        """Not a message whose key another consumer has owned in every epoch since it was stored: ``refusal`` refuses
        those first (a key-stickiness violation), so they are not listed at all."""
        owners = self.owners(pos)
        return owners is None or handle in owners

    def refusal(self, handle: str, pos: int, first: bool) -> Refusal | None:
        """Why Key_Shared (beyond Shared) forbids ``handle`` receiving ``pos`` now, or None."""
        label = self.sub.label(pos)
        key = self.sticky_key(pos).decode("utf-8", "replace")
        owners = self.owners(pos)
        if owners is not None and handle not in owners:
            rule = _SELECTOR_RULE[self.selector or "consistent_hashing"]
            who = ", ".join(sorted(owners)) or "no consumer (no range covers its slot)"
            why = (f"Let the sticky key of {label} be {key!r}. Then the {self.selector} selector gives it to "
                   f"{who} (every epoch since {label} was stored); {handle} received it.")
            if self.selector == "sticky" and self._in_own_gap(handle, pos):
                why += (f" Its slot {self.hash_slot(pos)} lies between two of {handle}'s own ranges: a broker before "
                        "apache/pulsar#24730 (4.0.7) serves a consumer those gaps.")
            return Refusal("key-stickiness-violation", rule, why)
        if not self.out_of_order_allowed():
            if self._draining_kept():
                drained = self._drained_by_other(handle, pos)
                if drained is not None:
                    slot, entry = drained
                    return Refusal("draining-violation", ks.RULE_DRAINING,
                                   f"Let {entry.consumer} hold {entry.unacked} unacked message(s) of hash {slot} when "
                                   f"{self.drain_cause.get(slot, 'a join or leave')} moved that hash away from it. Then no "
                                   f"message of hash {slot} goes to another consumer until {entry.consumer} acks them or "
                                   f"closes; {handle} received {label} (key {key!r}, hash {slot}).")
            elif first and not self.settings.profile.draining_hashes:
                # 3.x: the recently-joined rule, for first deliveries only
                held = self.holder_of_key(handle, pos)
                if held is not None:
                    other, q = held
                    return Refusal("key-stickiness-violation", RULE_ORDER,
                                   f"Let {other} hold {self.sub.label(q)} (key {key!r}) unacked. Then the key is served by "
                                   f"{other} alone; {handle} received {label} first-hand.")
        if first and not self.out_of_order_allowed():
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
            refused = self.incompatible(policy)
            if refused is not None:
                return refused
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

    def incompatible(self, policy: KeySharedPolicy) -> Rejected | None:
        """PLS-KEYSHARED-008: a consumer whose KeySharedPolicy differs from the connected consumers' in
        mode (AUTO_SPLIT / STICKY) or in allowOutOfOrderDelivery is refused with ConsumerBusy, and the
        connected consumers stay (apache/pulsar#23449, 4.0.1: ``checkForConsumerCompatibilityErrorWithDispatcher``
        in ``PersistentSubscription.addConsumer`` raises ``SubscriptionBusyException``). Before it the
        broker replaced the dispatcher and closed the connected consumers (known deviation KD-202)."""
        active = next(iter(self.policies.values()), None)
        if active is None:
            return None
        mode = {"AutoSplit": "AUTO_SPLIT", "Sticky": "STICKY"}
        if active.mode != policy.mode:
            return Rejected("ConsumerBusy", RULE_POLICY,
                            f"Subscription is of different type. Active subscription key_shared mode of "
                            f"'{mode.get(active.mode, active.mode)}' is different than the connecting consumer's "
                            f"key_shared mode '{mode.get(policy.mode, policy.mode)}'.")
        if active.allow_out_of_order != policy.allow_out_of_order:
            detail = ("Active subscription allows out of order delivery while the connecting consumer does not allow it."
                      if active.allow_out_of_order else
                      "Active subscription does not allow out of order delivery while the connecting consumer allows it.")
            return Rejected("ConsumerBusy", RULE_POLICY, f"Subscription is of different type. {detail}")
        return None

    def add_consumer(self, consumer: ConsumerConfig, at: Span, start_rule: str) -> None:
        policy = KeySharedPolicy.from_arg(consumer.key_shared)
        if self.selector is None:
            self.selector = "sticky" if policy.mode == "Sticky" else (
                "consistent_hashing" if self.settings.consistent_hashing else "auto_split")
        refused = self.admit(consumer)
        if refused is not None:
            # every subscribe answers admit's refusal first (PLS-KEYSHARED-005/008), and a consumer the model cannot
            # follow across a reconnect is never re-added (faults.unfollowable): a path that skipped it is a model bug
            raise ModelError(f"a Key_Shared consumer the selector refuses was added: {refused.detail}")
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
        before = self.epochs[-1] if self.epochs else None
        self._new_epoch(at)
        self._register_draining(before, consumer.handle, f"the join of {consumer.handle} at {at.start:g} ms")

    def remove_consumer(self, handle: str, at: Span) -> None:
        # PersistentStickyKeyDispatcherMultipleConsumers.removeConsumer: the selector first, then
        # the leaver's pending acks go (its drainings end), then the others' moved slots drain.
        super().remove_consumer(handle, at)
        self.draining = ks.consumer_closed(self.draining, handle)
        self._forget_causes()
        self.policies.pop(handle, None)
        c = self.ident.pop(handle, None)
        if c is not None and self.state is not None:
            if self.selector == "consistent_hashing":
                self.state = ks.ring_leave(self.state, c)
            elif self.selector == "auto_split":
                self.state = ks.auto_split_leave(self.state, c)
            else:
                self.state = ks.sticky_leave(self.state, c)
        before = self.epochs[-1] if self.epochs else None
        self._new_epoch(at)
        self._register_draining(before, handle, f"the close of {handle} at {at.start:g} ms")

    def _new_epoch(self, at: Span) -> None:
        handle_of = {c: h for h, c in self.ident.items()}
        known = self.selector != "consistent_hashing" or all(
            self.consumers[h].consumer_name for h in self.consumers)
        self.epochs.append(_Epoch(at.start, self.state, handle_of, known))
        self.learned.clear()

    # ------------------------------------------------------------------ what may arrive

    def _owned_positions(self, handle: str) -> list[int]:
        """The positions whose key the selector in effect gives ``handle`` (``current_owner``), ascending (an
        index grown as the topic grows; see ``__init__``)."""
        memo = self._owned.get(handle)
        if memo is None or memo[0] != len(self.epochs):
            memo = self._owned[handle] = (len(self.epochs), [0], [])
        _, seen, owned = memo
        n = self.sub.n_entries()
        owned.extend(pos for pos in range(seen[0], n) if self.current_owner(pos) == handle)
        seen[0] = max(seen[0], n)
        return owned

    def _first_allowed_fresh(self, handle: str) -> int | None:
        """The first position from the fresh ones on that ``handle`` owns, not acked, and may receive now."""
        cursor = self.sub.cursor
        owned = self._owned_positions(handle)
        start = cursor.first_unacked(max(self.next_fresh, self.skip_before.get(handle, 0)))
        for pos in owned[bisect_left(owned, start):]:
            if not cursor.is_acked(pos) and self.refusal(handle, pos, True) is None:
                return pos
        return None

    def must_receive_by(self, handle: str, at: Span) -> tuple[float, str | None, str] | None:
        """Owed only to the sole consumer, or a first delivery the draining rule waives (see ``options``)."""
        if len(self.consumers) == 1 or (self._draining_kept() and self.out_of_order_allowed()):
            return owed(self.options(handle, at))
        return None

    def options(self, handle: str, at: Span, focus: int | None = None) -> ReceiveOptions:
        if handle not in self.consumers:
            return ReceiveOptions(())
        base = super().options(handle, at, focus)
        extra = self._first_allowed_fresh(handle)
        cands = list(base.candidates)
        if extra is not None and all(c.pos != extra for c in cands):
            stored = self.sub.stored_span(extra)
            # the sole consumer is owed it by the time it was stored, as on Shared (PLS-SHARED-001); with others the
            # dispatcher's order among them is not modelled
            due = max(stored.end, self.sole_since) if len(self.consumers) == 1 and extra not in self.no_deadline else None
            timed = self.sub.delivery_rules(extra)  # a delayed message: its deliver-at time has come (as on Shared)
            cands.append(Candidate(extra, Window(stored.start, stored.start, due),
                                   timed + self.start_rules.get(handle, ()) + ("PLS-SHARED-001",),
                                   "its deliver-at time has come" if timed else "not yet delivered to any consumer",
                                   0, self._fresh_hi(extra), kind="pool"))
        cands = self.limit_filter(handle, cands)  # PLS-UNACKED-001
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
            if self._draining_kept() and not self.out_of_order_allowed():
                rules += (ks.RULE_DRAINING,)
            elif self._draining_waived(handle, c):
                # PLS-KEYSHARED-006's stated exception: with allowOutOfOrderDelivery a moved hash is
                # not drained, so this delivery is the rule's exemption observed, and it is owed now.
                rules += (ks.RULE_DRAINING,)
                waived.append(c)
            w = c.window
            if self.current_owner(c.pos) != handle and self.owners(c.pos) is not None:
                w = Window(w.low, float("inf"), None)  # a former owner: allowed, never due, never the model's choice
            kept.append(replace(c, window=w, rules=rules))
        kept.sort(key=lambda c: c.pos)
        must_by = must_rule = None
        reason = ""
        single = len(self.consumers) == 1
        if single and (self.settings.profile.draining_hashes or not self.ever_multi):
            # a STICKY consumer alone is owed only the keys of the ranges it declared (PLS-KEYSHARED-005: a slot no one
            # covers is not dispatched)
            dues = [(c.window.high, c) for c in kept if c.window.high is not None and c.kind != "stale"
                    and (self.selector != "sticky" or (self.owners_known() and self.current_owner(c.pos) == handle))]
            if dues:
                due, c = min(dues, key=lambda d: d[0])
                must_by, must_rule = due, c.rules[0]
                reason = f"{self.sub.label(c.pos)} was deliverable ({c.cause}) and {handle} is the only consumer"
        dues = [(c.window.high, c) for c in waived if c.window.high is not None]
        if must_by is None and dues:
            due, c = min(dues, key=lambda d: d[0])
            slot, entry = self._drained_by_other(handle, c.pos) or (self.hash_slot(c.pos), None)
            other = entry.consumer if entry is not None else "another consumer"
            must_by, must_rule = due, ks.RULE_DRAINING
            reason = (f"Let {other} hold unacked messages of hash {slot} that moved to {handle}. Then with "
                      f"allowOutOfOrderDelivery the hash is not drained: {self.sub.label(c.pos)} goes to {handle} at once")
        return ReceiveOptions(tuple(kept), must_by, must_rule, reason)

    def _draining_waived(self, handle: str, c: Candidate) -> bool:
        """Whether ``c`` is a first delivery that the 4.x draining rule would hold back but allowOutOfOrderDelivery lets through."""
        return (self._draining_kept() and self.out_of_order_allowed()
                and c.kind in ("first", "pool") and c.pos not in self.delivered_once
                and self.current_owner(c.pos) == handle and self._drained_by_other(handle, c.pos) is not None)

    # ------------------------------------------------------------------ what happened

    def deliver(self, handle: str, pos: int, at: Span, count: int, candidate: Candidate | None) -> None:
        self.check_modelled(handle, pos, candidate)  # before anything changes
        if candidate is None or candidate.kind not in ("stale", "ghost"):
            if pos not in self.delivered_once and self.owners(pos) is None:
                self.learned.setdefault(self.sticky_key(pos), handle)
        # PLS-KEYSHARED-007 orders *dispatches*: a stale or ghost copy was pushed by the broker to
        # a receiver queue before, so its message has been dispatched once either way, and later
        # messages of its key are no longer held back by it.
        self.delivered_once.add(pos)
        if self.draining:
            # Step 2: a message of a slot draining for this very consumer ends that draining.
            self.draining = ks.may_dispatch(self.draining, self.hash_slot(pos), handle)[1]
            self._forget_causes()
        super().deliver(handle, pos, at, count, candidate)

    def acked(self, positions: Iterable[int], at: Span) -> None:
        positions = list(positions)
        for pos in positions:
            holder = self._pending_holder(pos)
            if holder is not None:
                self._count_down(holder, pos)  # step 3: an ack
        super().acked(positions, at)

    def nack(self, handle: str, pos: int, at: Span) -> None:
        holder = self._pending_holder(pos)
        super().nack(handle, pos, at)
        if holder is not None and self._pending_holder(pos) is None:
            self._count_down(holder, pos)  # step 3: given back for redelivery

    def redeliver_unacked(self, handle: str, at: Span) -> None:
        super().redeliver_unacked(handle, at)
        # Step 3 for every pending entry of ``handle``, its receiver queue's included.
        self.draining = ks.consumer_closed(self.draining, handle)
        self._forget_causes()

    def reset(self, pos: int, at: Span, rule: str, filter_for: tuple[str, int] | None = None,
              seeker: str | None = None) -> None:
        super().reset(pos, at, rule, filter_for, seeker)
        self.delivered_once = {p for p in self.delivered_once if p < pos}
        self.learned.clear()
        # A seek disconnects every consumer: their pending acks go, and with them every draining.
        for h in list(self.consumers):
            self.draining = ks.consumer_closed(self.draining, h)
        self._forget_causes()

    def explain(self, handle: str, pos: int, at: Span) -> Refusal:
        base = super().explain(handle, pos, at)
        if base.anomaly != "wrong-value":
            return base
        why = self.refusal(handle, pos, pos not in self.delivered_once)
        return why or base
