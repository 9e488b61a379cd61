"""The feature rules inside the broker composition: the part of ``Broker`` that handles
deduplication, batching, chunking, delayed delivery, producer access modes, TTL, compaction and
non-persistent topics.

Pulsar part: ``PersistentTopic#publishMessage`` (dedup, -1/-1 replies), ``NonPersistentTopic``,
the C++ producer (batch container, chunking, sequence ids, access-mode answers), the
multiple-consumer dispatchers' delayed tracker, the expiry monitor, the compacted-topic read path.
Rule ids: PLS-DEDUP-001..006, PLS-BATCH-001..009, PLS-CHUNK-001..006, PLS-DELAY-001..006,
PLS-DLQ-005/006, PLS-ACCESS-001..006, PLS-TTL-001..003, PLS-COMPACT-001..005, PLS-NP-001..004.

``FeatureOps`` is a mixin of ``reference_model.broker.Broker``: its steps (``Broker.STEPS``:
decide, ``yield``, then act) read and change the broker's topics, producers and subscriptions,
and note in the step's facts what the op decided that its ok value does not show (a duplicate,
a chunk count, the rule that decided); ``Broker.step`` returns them with the outcome, so the
checker can judge the observation (``conformance.feature_checks``). The ok values themselves
look exactly like a live target's.

How the features meet the core:
- *Positions* stay one per message: the cursor and the dispatchers work on messages. A batch is
  several positions sharing one entry (``TopicFeatures.entry_of``): its ids are
  ``(ledger, entry, partition, i)``; a nack redelivers every position of the entry
  (PLS-BATCH-006); without effective batch index ack an application's ack is held on the client
  until every index is acked (PLS-BATCH-004), with it each index is acked at once (PLS-BATCH-005).
  The backlog counts entries (PLS-BACKLOG-001).
- *Delayed* messages are eligible on Shared/Key_Shared persistent subscriptions only from their
  deliver-at window (``Subscription.stored_span`` asks ``delivery_span``).
- *Non-persistent* topics: a message is acked at once on every subscription without a connected
  consumer (it is never delivered there); new subscriptions start after the last message;
  a nack drops the message (PLS-NP-002); ids are (0,0,p,-1), (0,0,p,i) in a batch (PLS-NP-003).
- *Async* sends: a non-batching producer's is written at once (the client sends it at once) and
  its id comes with the next flush; a batching producer's wait in its batch until its timer, a full
  container, the next flush or sync send (PLS-BATCH-009). When that is, the client chooses within
  bounds, and the model keeps every choice: each message is stored within its leave window
  (``batching.leave_window``), the model's own timer stores the open batch ``delay`` after its first
  message, a receipt of a message still pending stores it then (``observe_batch_member``), and the
  flush's ids settle the split of every batched message since the last flush, the ones stored
  already included (``batching.match_split``, ``_settle_region``). What the order of two producers'
  messages would depend on (a message stored on a topic while another producer's batch there may or
  may not have left, a position taken from the topic's end then, a close then) is not followed.

- On a partitioned topic each partition's producer (``Broker.partition_producer``) holds its own open batch and
  batch timer, as the clients keep a producer per partition; a flush of the partitioned producer flushes each,
  and each partition's split is read and judged on its own (``_flush_partitioned``).

Not modelled: the split of a batch on a non-persistent topic (its ids show
no entries, PLS-NP-003) once its timer may have fired, a delayed message beside a C++ or Go open batch that may
have left (which goes first is timing), a Key_Shared subscription reading a batch whose split is open, a
sync send on a batching producer that may be a
duplicate of an async send still in its batch (under deduplication it is written after them, as a batch
of one: PLS-DEDUP-004's choice), chunked messages in batches or DLQs, a consumer reading compacted beside other consumers of its
subscription or connected before the compaction (it reads the view or the topic as the broker's reads fall),
automatic compaction, the periodic TTL check (only ``expire_messages`` passes).
Choices: a batched async send is pushed to the broker's dedup state when it is made and persisted at
the next flush or sync send of its producer (so a sync duplicate in between is Unknown, PLS-DEDUP-004).
"""

from __future__ import annotations

import base64
from dataclasses import replace
from typing import Any, Callable, Iterator, Mapping, NamedTuple

from reference_model import access_modes as am
from reference_model import batching, chunking, compaction, dedup, delayed, non_persistent, retention
from reference_model import faults
from reference_model.feature_state import (
    NamespacePolicies,
    TOPIC_POLICIES,
    PendingSend,
    ProducerFeatures,
    TopicFeatures,
    check_policy_args,
    topic_retention_refusal,
    payload_size as feature_payload_size,
    batch_items,
    open_batch,
    plan_batches,
    relative_ids,
    send_plan,
)
from reference_model.ids import MessageId
from reference_model import names
from reference_model.names import is_persistent, partition_name
from reference_model.rejections import ModelError, NotModelledError, Rejected
from reference_model.timing import Span

_READ_COMPACTED_TYPES = ("Exclusive", "Failover")



class LatestStart(NamedTuple):
    """What a subscription made at Latest holds of the async sends in flight then (``latest_start_in_flight``):
    those the history shows after its cursor, and those none of its consumers received (taken as before it)."""

    after: frozenset[str] = frozenset()
    unsure: frozenset[str] = frozenset()

class AsyncRefusal(NamedTuple):
    """An async send the client refuses for its size: the send call returns at once and the error comes in the send's
    callback, so the producer's next flush reports it (``FeatureOps._send_plan``, ``async_refused``)."""

    refused: Rejected


class ProducerDecision(NamedTuple):
    """What creating a producer decides before anything changes (``_feature_create_producer``)."""

    features: ProducerFeatures
    extra: dict  # what the create's ok value adds (``pending`` for a waiting WaitForExclusive producer)
    facts: Mapping[str, Any]  # for the detectors: where its sequence ids start, and why
    fences: tuple[str, ...]  # PLS-ACCESS-004: producers an ExclusiveWithFencing creation fences


class FeatureOps:
    """Mixin of ``Broker``; ``_init_features`` runs in ``Broker.__init__``."""

    def _init_features(self) -> None:
        # PLS-DEDUP-001/003: brokerDeduplicationEnabled is the default a namespace policy overrides
        self.policies = NamespacePolicies(deduplication=self.profile.broker_deduplication)
        # PLS-POLICY-001: a topic's own policies (set_policy with topic), by the topic's full name (a partitioned topic's
        # hold for each of its partitions: the broker keys them by TopicName#getPartitionedTopicName)
        self.topic_policies: dict[str, dict[str, Any]] = {}
        self.dedup_states: dict[str, dedup.DedupState] = {}  # topic full name -> broker dedup maps
        self.pfx: dict[str, ProducerFeatures] = {}  # producer handle -> its features
        self.tfx: dict[str, TopicFeatures] = {}  # topic full name -> its features
        self.unloads: dict[str, list[float]] = {}  # topic full name -> when an unload closed its ledger (PLS-RETENTION-001)
        # Producers that reconnected after an unload or a fault: until they close, a new producer's access
        # mode on their topic races their reconnection (see ``_feature_create_producer``).
        self.reconnected_producers: set[str] = set()
        # PLS-NP-001 (non_persistent rule 5): a message big enough to leave a connection unwritable was sent
        self.large_message_sent = False
        # producer handle -> (label, refusal) of each async send its client refused for its size since its last flush
        # (AsyncRefusal): every client's callback has the error, and the flush that waits for it fails
        self.async_refused: dict[str, list[tuple[str, Rejected]]] = {}
        self.index_ack: dict[str, bool] = {}  # consumer handle -> batch index ack in effect
        self.client_index_ack: dict[str, bool] = {}  # consumer handle -> its own batch_index_ack setting
        self.reads_compacted: set[str] = set()  # consumer handles subscribed with read_compacted
        # (topic, sub, entry, consumer) -> positions that consumer's application acked, held by its client's batch acker
        # until the whole entry is (PLS-BATCH-004): one delivery's marks (C++ BatchMessageAcker, Java's ack set, Go's
        # ackTracker belong to the messages one receipt brought), gone when the consumer closes or rewinds
        self.app_acked: dict[tuple[str, str, int, str], set[int]] = {}
        self.facts: dict[str, Any] = {}
        self.flushed: dict[str, dict[str, list[int]]] = {}  # producer -> ids written since its last flush op
        self.receipt_settled: tuple[str, ...] = ()  # the run the last receipt's ids settled (observe_batch_member)
        self.settled_by_receipts: dict[str, set[str]] = {}  # producer -> labels receipts settled since its last flush
        self.sent_ahead: dict[str, set[str]] = {}  # producer -> delayed async sends written ahead of its batch (PLS-DELAY-006)
        # PLS-DEDUP-004: producer -> its async sends a duplicate may have found in flight: the broker
        # answers that duplicate Unknown (MessageDupUnknownException, a send error), the client
        # reconnects and sends its pending messages again, and each of them, stored the first time,
        # is then acked as a duplicate: its flush may report (-1, -1, -1, -1). Measured on 4.0.8
        # (C++ 4.2.0, 2026-11-26): async m1 (sequence id 20), then sync m2 (sequence id 0): both
        # reported (-1, -1, -1, -1), m1 stored. Whether m1 was still in flight is timing.
        self.resent_as_duplicate: dict[str, set[str]] = {}

    # ------------------------------------------------------------------ lookups

    def topic_features(self, topic: Any) -> TopicFeatures:
        fx = self.tfx.get(topic.full)
        if fx is None:
            fx = self.tfx[topic.full] = TopicFeatures()
        return fx

    def producer_access_mode(self, handle: str) -> str:
        """The access mode producer ``handle`` was created with (PLS-ACCESS-001..005; Shared by default)."""
        pf = self.pfx.get(handle)
        return pf.access_mode if pf is not None else am.SHARED

    def delivery_span(self, sub: Any, pos: int) -> Span:
        """When ``sub`` may first deliver position ``pos`` (PLS-DELAY-001..005, PLS-NP-004)."""
        stored = sub.topic.entries[pos].stored
        fx = self.tfx.get(sub.topic.full)
        if fx is None or pos not in fx.deliver_at or sub.dispatcher is None:
            return stored
        # PLS-DELAY-002: Exclusive / Failover dispatch at once; PLS-NP-004: non-persistent too
        return delayed.delivery_span(fx.deliver_at[pos], stored, subscription_type=sub.dispatcher.type_name,
                                     persistent=is_persistent(sub.topic.full),
                                     strict=self.profile.delayed_delivery_strict,
                                     tick_ms=self.profile.delayed_delivery_tick_ms)

    def entry_members(self, sub: Any, pos: int) -> list[int]:
        """The positions stored in ``pos``'s entry on ``sub``'s topic (PLS-BATCH-001: a batch is one entry)."""
        fx = self.tfx.get(sub.topic.full)
        return fx.batch_of(pos) if fx is not None else [pos]

    def delay_tracked(self, sub: Any, pos: int) -> bool:
        """Whether ``sub``'s delayed-delivery tracker holds ``pos``: a delayed message on a persistent Shared or
        Key_Shared subscription (``delayed.honours_delay``, step 1)."""
        fx = self.tfx.get(sub.topic.full)
        return fx is not None and pos in fx.deliver_at and sub.dispatcher is not None \
            and delayed.honours_delay(sub.dispatcher.type_name, persistent=is_persistent(sub.topic.full))

    def delivery_rules(self, sub: Any, pos: int) -> tuple[str, ...]:
        """The feature rules a delivery of ``pos`` on ``sub`` speaks to (cited in verdicts)."""
        fx = self.tfx.get(sub.topic.full)
        if fx is None or pos not in fx.deliver_at:
            return ()
        if not is_persistent(sub.topic.full):
            return ("PLS-NP-004",)
        kind = sub.dispatcher.type_name if sub.dispatcher is not None else ""
        if kind == "Shared":
            return ("PLS-DELAY-001", "PLS-DELAY-004" if self.profile.delayed_delivery_strict else "PLS-DELAY-005")
        if kind == "Key_Shared":
            return ("PLS-DELAY-003", "PLS-DELAY-004" if self.profile.delayed_delivery_strict else "PLS-DELAY-005")
        return ("PLS-DELAY-002",)

    def _fault_since_first_entry(self, topic: Any) -> bool:
        """A cut, restart or crash happened after ``topic`` stored its first message (PLS-FAULT-004/006)."""
        return bool(topic.entries) and bool(faults.reconnects_after_store(faults.injected(self.fault_log), topic.entries[0].seq))

    def _current_dedup_state(self, topic: Any) -> dedup.DedupState:
        """The topic's dedup maps under the namespace's current policy (changes nothing). A non-persistent topic
        never deduplicates: NonPersistentTopic#publishMessage has no duplicate check (javap, 4.0.8; found live by
        issue 16's campaign, 2026-11-27: a lower generated sequence id after an explicit 24 was stored)."""
        state = self.dedup_states.get(topic.full)
        enabled = self.policy_for(topic).deduplication and is_persistent(topic.full)
        if state is None or state.enabled != enabled:
            # A policy change on a loaded topic starts the maps empty either way (MessageDeduplication#checkStatus):
            # disabling deletes the dedup cursor and clears them; enabling opens a new cursor at the end of the ledger
            # and replays from there, so no message stored before counts (PLS-POLICY-001, case policy-topic-over-namespace).
            state = dedup.DedupState(enabled=enabled)
        return state

    def _dedup_open(self, producer: Any, topic: Any, sequence_id: int) -> str | None:
        """Why whether a sync send of partition producer ``producer`` on ``topic`` with ``sequence_id`` is a duplicate
        is open, or None: its partitioned producer sent messages asynchronously whose partitions nothing in the history
        shows (``Broker._place_unshown``), one guessed onto this partition (it may be on another) or one with a
        sequence id at least this one's (it may be on this one). Then the broker's answer is followed (model fuzz seed
        20261223, fz-55a257610851, and its live replays on 4.0.8, Python: async m2 and m3 with key k3 and sequence ids
        12 and 26, then m4 with 19 on partition 1 was a duplicate in one run and stored in the other, as k3's
        partition went)."""
        if topic.full in self.dedup_unknown:
            return f"a deduplication policy change on {topic.short} was not followed, so whether it is on is not known"
        parent = self.partition_parent.get(producer.handle)
        for label, guessed, s in self.unplaced_sequences.get(parent, []) if parent is not None else []:
            if guessed == topic.full or s >= sequence_id:
                return (f"{label}, sent with sequence id {s}, went to a partition nothing shows, which may or may not "
                        f"be {topic.short}")
        return None

    def _dedup_state(self, topic: Any) -> dedup.DedupState:
        state = self.dedup_states[topic.full] = self._current_dedup_state(topic)
        return state

    # ------------------------------------------------------------------ policies, admin ops

    @staticmethod
    def _policy_key(topic: Any) -> str:
        """Whose topic policies ``topic`` follows: its own, or a partition its partitioned topic's."""
        return names.partitioned_parent(topic.full)

    def policy_for(self, topic: Any) -> NamespacePolicies:
        """The policies ``topic`` follows: those it set itself over the namespace's (PLS-POLICY-001)."""
        return self.policies.under(self.topic_policies.get(self._policy_key(topic), {}))

    def _own_policy_decides(self, topic: Any, name: str) -> bool:
        """``topic``'s own policy ``name`` differs from its namespace's, so the topic's decides (PLS-POLICY-001)."""
        own = self.topic_policies.get(self._policy_key(topic), {})
        return name in own and own[name] != getattr(self.policies, name)

    def _op_set_policy(self, args, at, observed):
        """A namespace policy, or with ``topic`` that topic's own (PLS-POLICY-001). A topic policy needs the topic
        (the admin API's preValidation answers 404 for one that does not exist); the target returns once the
        broker applies it (docs/trace-format.md#ops), so the model applies it at the op."""
        why = check_policy_args(args)
        if why:
            return Rejected("InvalidArgument", "PLS-POLICY-001" if "topic" in args else "PLS-DEDUP-001", why)
        if "topic" in args:
            topic = self._admin_topic(args["topic"], "PLS-POLICY-001")
            if isinstance(topic, Rejected):
                return topic
            if (refused := topic_retention_refusal(args)) is not None:
                return Rejected("OtherError", "PLS-POLICY-001", refused)
            if "deduplication" in args:
                self._check_dedup_flip_settled(t for t in self.topics.values() if self._policy_key(t) == self._policy_key(topic))
            yield  # decided: the topic's own policy is set
            key = self._policy_key(topic)
            self.topic_policies.setdefault(key, {}).update({name: args[name] for name in TOPIC_POLICIES if name in args})
            if "deduplication" in args:  # the topic's own policy, followed: known again (a namespace change is not
                # enough: the topic's own policy, which the model may have missed, decides over it)
                self.dedup_unknown -= {t.full for t in self.topics.values() if self._policy_key(t) == key}
            self._settle_dedup_states(t for t in self.topics.values() if self._policy_key(t) == key)
            return {}
        if "deduplication" in args:
            self._check_dedup_flip_settled(list(self.topics.values()))
        yield  # decided: the namespace policy is set
        self.policies.apply(args)
        self._settle_dedup_states(self.topics.values())
        return {}

    def _check_dedup_flip_settled(self, topics: Any) -> None:
        """A deduplication policy change on ``topics`` while a producer there holds sends that have not reached the
        broker (an open batch, async sends no flush has reported) is not followed: the model pushes a send to the dedup
        state when it is made, and the target waits until the broker applies the policy (hundreds of ms), during which
        the batch timer may send them before or after the change (model campaign of 5 Dec 2026, mixed clients: a Go
        batch [m1, m7] pending across a topic's dedup switched on, then a send with sequence id 1)."""
        topics = list(topics)
        try:
            for topic in topics:
                for handle, pf in self.pfx.items():
                    producer = self.producer_of(handle)
                    # every partition's producer has its own entry here, on its own partition, which is among ``topics``
                    if producer is not None and producer.topic is topic and pf.pending:
                        raise NotModelledError(f"a deduplication policy change while {handle} holds sends that have "
                                               "not reached the broker (its batch may go before or after the change)")
                self.check_no_async_in_flight(topic.full, "a deduplication policy change")
        except NotModelledError:
            if self._committing:
                # the broker applies the change all the same: whether those topics deduplicate is not known from here
                # (model fuzz seed 20261224, fz-8bb7efd13a35: a topic's deduplication switched on, not followed, then a
                # send's duplicate reply was judged as a stored message's id)
                self.dedup_unknown |= {t.full for t in topics}
            raise

    def _settle_dedup_states(self, topics: Any) -> None:
        """After a policy change: each loaded topic's dedup maps under its policy now (turned off, or off and on
        again, they start empty: ``_current_dedup_state``)."""
        for topic in list(topics):
            if topic.full in self.dedup_states:
                self._dedup_state(topic)

    def _op_compact(self, args, at, observed):
        topic = self._admin_topic(args["topic"], "PLS-COMPACT-001")
        if isinstance(topic, Rejected):
            return topic
        # A partitioned topic is compacted partition by partition (apache/pulsar PersistentTopicsBase
        # internalTriggerCompaction: a partitioned name triggers each partition's own compaction), each with its own
        # horizon: the rules below hold per partition, as for any topic.
        parts = self.message_topics(topic)
        horizons = {t.full: len(t.entries) - 1 for t in parts}
        behind = tuple(h for h in sorted(self.reads_compacted)
                       if any(sub.topic.full in horizons and sub.cursor.first_unacked() <= horizons[sub.topic.full]
                              for _, sub in self.attachments(h)))
        yield  # decided: compaction runs
        # PLS-COMPACT-004: the horizon is the last message when compaction started.
        for t in parts:
            self.topic_features(t).horizon = horizons[t.full]
        if behind:
            # PLS-COMPACT-001: the dispatcher serves a read_compacted consumer from the compacted ledger whenever its
            # cursor's read position is at or before the horizon (CompactedTopicUtils#asyncReadCompactedEntries), so
            # what a connected one gets next depends on whether the broker had read past these messages before the
            # compaction: a Failover consumer's first read waits activeConsumerFailoverDelayTimeMillis, any rewind
            # reads again. Live 4.0.8 and 4.2.4 (regression pls-failover-003-order-violation-5ba9a21ffbba): a
            # Failover consumer connected before m1..m4 were sent got the compacted view after the compaction.
            # The model does not follow them further (the checker stops judging them).
            self.facts["unfollowed_handles"] = behind
            self.facts["unfollowed_why"] = ("read_compacted consumers with unacked messages up to the compaction horizon "
                                            "(which of them they read depends on the broker's read timing)")
        return {}

    def _op_unload_topic(self, args, at, observed):
        """The topic is closed and loaded again; what it stored, its cursors and its dedup state stay.

        PLS-DEDUP-001/002: the broker rebuilds the dedup maps from its snapshot and the ledger, so a
        re-sent sequence id is still a duplicate after the reload.
        """
        topic = self._admin_topic(args["topic"], "PLS-TOPIC-001")
        if isinstance(topic, Rejected):
            return topic
        # a partitioned topic is unloaded partition by partition: its subscriptions live there
        unloaded = [topic] + [t for i in range(topic.partitions) if (t := self.topics.get(partition_name(topic.full, i)))]
        # its consumers are disconnected and subscribe again to the reloaded topic: a restart of that topic alone
        # (faults.UNLOAD); what a reconnect leaves open is not followed (faults.unfollowable), nor are async sends
        # still pending (the producer re-sends them: stored once or twice)
        joined = [(h, pair) for h, pair in self.consumers.items()
                  if any(s.topic in unloaded for _, s in self.attachments(h))]
        why = self._fault_refusal([h for h, _ in joined], producers=[]) if joined else None
        if why is None and any(pf.pending for h, pf in self.pfx.items() if (p := self.producer_of(h)) is not None and p.topic in unloaded):
            why = "async sends pending (the producer re-sends them: stored once or twice)"
        if why is not None:
            raise NotModelledError(f"unloading {topic.short}: {why}")
        self.check_reconnects_admitted([h for h, _ in joined], "an unload")
        yield  # decided: the topic is reloaded, with everything it kept
        for t in unloaded:
            self.unloads.setdefault(t.full, []).append(at.end)  # its ledger is closed (PLS-RETENTION-001)
        self.reconnected_producers |= {h for h, p in self.producers.items() if p.topic in unloaded}
        self._end_timer_quiet({h for h, p in self.producers.items() if p.topic in unloaded})
        if joined:
            self.fault_log.append(faults.Fault(faults.UNLOAD, at.start, at.end, stored_before=self._stored_count))
            self.reconnect_consumers(joined, faults.EFFECTS[faults.UNLOAD], at)
            self.facts = {"reconnected": [h for h, _ in joined]}
        return {}

    def _op_expire_messages(self, args, at, observed):
        topic = self._peek_topic(args["topic"])
        if isinstance(topic, Rejected):
            return topic
        if topic is not None and not is_persistent(topic.full):
            # PersistentTopicsBase / NonPersistentTopics: HTTP 405 "Expire messages on a non-persistent topic is not
            # allowed" (found live by the Java fuzz campaign of 2026-11-26: pls-ttl-002-unexpected-rejection-9af966e51625)
            return Rejected("OtherError", "PLS-TTL-002", f"{topic.full} is non-persistent: the broker refuses to expire messages on it")
        sub = topic.subscriptions.get(args["subscription"]) if topic is not None else None
        if sub is None:
            return Rejected("SubscriptionNotFound", "PLS-TTL-002", f"no subscription {args['subscription']!r} on {args['topic']}",
                            certain=False)
        held = [pos for h in (sub.dispatcher.connected() if sub.dispatcher is not None else ())
                for label in self.received_labels.get(h, ()) if (pos := topic.by_label.get(label)) is not None]
        if self.policies.max_unacked_messages_per_consumer and any(not sub.cursor.is_acked(p) for p in held):
            # the pass moves the cursor only: the broker keeps what a consumer received in its pending acks, so it
            # stays blocked at maxUnackedMessagesPerConsumer where the model would free it (live 4.0.8, mixed campaign,
            # 28 Nov 2026, 3/3: limit 1, m1 received, a pass expired it, m3 never came; regression
            # pls-unacked-001-lost-message-af21c941efb9); which received messages the pass covers is timing
            raise NotModelledError("an expiry pass on a subscription whose consumers hold received messages under "
                                   "maxUnackedMessagesPerConsumer")
        yield  # decided: the expiry pass runs
        # PLS-TTL-001/003: the pass moves the cursor past the last expired message, delivered or not.
        # Judged surely expired: stored at the latest instant of its store span, the pass at the earliest.
        unacked = tuple(retention.Stored(str(m.pos), m.stored.end) for m in topic.entries if not sub.cursor.is_acked(m.pos))
        remaining = retention.expire(unacked, at.start, int(args["seconds"]))
        expired = unacked[:len(unacked) - len(remaining)]
        last = int(expired[-1].name) if expired else -1
        if last >= 0:
            newly = [p for p in range(0, last + 1) if not sub.cursor.is_acked(p)]
            removed = self._backlog_removed_by(sub, lambda: sub.cursor.ack_cumulative(last))
            sub.expired |= set(newly)  # for the checker's explanations
            # the broker moves its cursor when the pass's search ends, after the call returned (retention.py):
            # until then the backlog may still count the entries the pass expires
            sub.expiry_settling.append((retention.expiry_settled_by(at.end), removed))
            if sub.dispatcher is not None and newly:
                # As an ack: an expired message already dispatched to a consumer's receiver queue (not yet
                # received by its application) may still surface there once (a ghost, INDETERMINATE). The pass
                # moves the cursor only; the client's queue keeps the copy. Measured 27 Nov 2026 on 4.0.8 and
                # 4.2.4 (Python client, Exclusive, m1 sent to a connected consumer, a pass 1.1 s later with
                # seconds=1: m1 received after it, 3/3; conformance/regressions/pls-ttl-001-ack-resurrection-
                # e4a5b09cb023). Earlier the model cleared those ghosts, so such a delivery FAILed PLS-TTL-001.
                sub.dispatcher.acked(newly, at)
        self.facts = {"expired_through": last}
        return {}

    # ------------------------------------------------------------------ producers

    def _feature_create_producer(self, args, topic, name: str | None) -> ProducerDecision | Rejected:
        """Access mode (PLS-ACCESS-*), chunking with batching (PLS-CHUNK-004), where sequence ids
        start (PLS-DEDUP-002/003/005): what the producer's creation decides; changes nothing."""
        # the Java builder's batchingMaxPublishDelay is 1 ms (ProducerConfigurationData), Python's 10 ms
        fx = ProducerFeatures.from_args(args, key_order=self.args_profile(args).key_batch_order,
                                        default_delay_ms=1 if self.args_profile(args).client == "java" else 10,
                                        delayed_sends_open_batch=self.args_profile(args).delayed_send_flushes_batch,
                                        repeats_send_open_batch=self.args_profile(args).repeated_sequence_flushes_batch,
                                        full_batch_waits=self.args_profile(args).full_batch_waits,
                                        client=self.args_profile(args).client)
        fx.access_mode = am.mode_the_broker_reads(fx.access_mode, fencing_known=self.profile.exclusive_with_fencing_known)
        refused = chunking.check_producer_config(chunking_enabled=fx.chunking, batching_enabled=fx.batching)
        if refused is not None:
            return Rejected("InvalidArgument", "PLS-CHUNK-004", refused)
        if "batching_max_messages" in args and int(args["batching_max_messages"]) <= 1 and self.args_profile(args).client == "cpp":
            # PLS-BATCH-002: C++ ProducerConfiguration::setBatchingMaxMessages (which the Python client
            # calls whether batching is on or not); measured live on 4.0.8 / C++ 4.2.0, 2026-11-26
            return Rejected("InvalidArgument", "PLS-BATCH-002", "batchingMaxMessages needs to be greater than 1")
        present = []
        waiters = 0  # WaitForExclusive producers still queued on the topic (PLS-ACCESS-005)
        if topic is not None:
            for handle, p in self.producers.items():
                pf = self.pfx.get(handle)
                mode = pf.access_mode if pf else "Shared"
                if p.topic is topic and handle in self.reconnected_producers and not (pf and pf.fenced) \
                        and (mode, fx.access_mode) != (am.SHARED, am.SHARED):
                    # Live 4.0.8, mixed campaign 2026-11-27 (pls-access-005-wrong-value-398b2f3c14ea): after an
                    # unload a WaitForExclusive producer came at once while the topic's WaitForExclusive holder was
                    # still reconnecting; the access mode follows whoever reaches the reloaded topic first.
                    raise NotModelledError(f"a {fx.access_mode} producer on {topic.full} while {handle} ({mode}) may still "
                                           f"be reconnecting after an unload or fault: whoever arrives first holds the topic")
                if p.topic is topic and not (pf and (pf.waiting or pf.fenced)):
                    present.append(am.PresentProducer(p.name, mode))
                elif p.topic is topic and pf and pf.waiting and not pf.fenced:
                    waiters += 1
        full = names.expand_trace(args["topic"])
        copier = self.copy_producer_present(full) if fx.access_mode != am.SHARED and isinstance(full, str) else None
        if copier is not None:
            present.append(am.PresentProducer(copier, am.SHARED))
        if fx.access_mode == am.EXCLUSIVE_WITH_FENCING and name is not None and any(p.name == name for p in present):
            # The fencing disconnects the named producer and the name check follows at once: live, the newcomer was
            # accepted (4.0.8, Java: regression pls-access-006-missing-rejection-d2dc93fc47c0) and refused with
            # ProducerBusy (4.0.0 campaign, 27 Nov 2026, 3/3 in its runs; accepted on 4.0.0 and 4.0.8 when replayed).
            raise NotModelledError(f"an ExclusiveWithFencing producer named {name!r} like a connected one: the fenced "
                                   "producer's removal races the name check")
        decided = am.create_producer(tuple(present), fx.access_mode, name, waiters=waiters)
        if decided.result not in ("ok", "waiting"):
            return Rejected(decided.result, decided.rule,
                            f"{fx.access_mode} producer next to {', '.join(f'{p.name} ({p.mode})' for p in present)}"
                            + (f" and {waiters} WaitForExclusive producer(s) still queued" if waiters else ""))
        extra: dict[str, Any] = {}
        facts: dict[str, Any] = {}
        if decided.result == "waiting":
            if "wait_ms" not in args:
                raise NotModelledError("a WaitForExclusive creation that waits with no wait_ms (the op would block)")
            fx.waiting = True
            extra["pending"] = True
        if "wait_ms" in args:
            facts["pending"] = decided.result == "waiting"
        # PLS-DEDUP-005: Python drops initial_sequence_id=0.
        python = self.args_profile(args).zero_sequence_id_unset
        seq = dedup.ProducerSequence.create(args.get("initial_sequence_id"), python=python)
        state = self._current_dedup_state(topic) if topic is not None else dedup.DedupState(enabled=self.policies.deduplication)
        if name is not None:
            seq = dedup.producer_connected(seq, dedup.broker_last_sequence_id(state, name))
            configured = dedup.python_sequence_argument(args.get("initial_sequence_id"), python=python) is not None
            rule = "PLS-DEDUP-002" if state.enabled else "PLS-DEDUP-003"
            if state.enabled and topic is not None and self._fault_since_first_entry(topic):
                rule = "PLS-FAULT-006"  # the broker recovered the name's last sequence id across the fault
            facts.update(sequence_rule=rule if not configured else "PLS-DEDUP-002", last_sequence_id=seq.last,
                         sequence_reason=(f"producer {name}: initial_sequence_id was given, so it starts there ({seq.last})"
                                          if configured else
                                          f"producer {name}: deduplication is {'on' if state.enabled else 'off'}, so it "
                                          f"starts after the broker's last persisted sequence id for its name ({seq.last})"))
        fx.sequence = seq
        return ProducerDecision(fx, extra, facts, tuple(decided.fences))

    def _feature_producer_created(self, topic: Any, decision: ProducerDecision) -> tuple[ProducerFeatures, dict]:
        """Apply what ``_feature_create_producer`` decided: its facts, and the producers it fences."""
        self.facts = dict(decision.facts)
        for fenced in decision.fences:
            # PLS-ACCESS-004: the fenced producers lose the topic.
            for handle, p in self.producers.items():
                if p.topic is topic and p.name == fenced:
                    self.pfx.setdefault(handle, ProducerFeatures()).fenced = True
        return decision.features, decision.extra

    def _feature_producer_closed(self, producer: Any) -> None:
        """PLS-ACCESS-005: a waiting WaitForExclusive producer gets the topic when nobody else holds it."""
        self.reconnected_producers.discard(producer.handle)
        self.async_refused.pop(producer.handle, None)  # the close fails what is pending; nothing is left to report
        topic = producer.topic
        live = [h for h, p in self.producers.items() if p.topic is topic and not self.pfx.get(h, ProducerFeatures()).waiting
                and not self.pfx.get(h, ProducerFeatures()).fenced]
        if live:
            return
        for handle, p in self.producers.items():
            pf = self.pfx.get(handle)
            if p.topic is topic and pf is not None and pf.waiting:
                pf.waiting = False
                return

    def _holds_pending(self, handle: str) -> bool:
        """Whether producer ``handle``, or a partition's producer it keeps (``Broker.partition_producer``), holds
        messages its client has not sent yet or whose receipts have not come."""
        return any(self.pfx[h].pending for h in (handle, *self.partition_producers_of(handle)) if h in self.pfx)

    def _feature_send_check(self, producer: Any, args: Any = None) -> Rejected | None:
        """What a send must not be, checked before the model decides anything (a NotModelledError
        raised later would leave the producer's sequence moved for an op the generator drops)."""
        pf = self.pfx.get(producer.handle)
        if pf is None:
            return None
        held = self._holds_pending(producer.handle)
        if args is not None and pf.batching and held and not args.get("async") and not is_persistent(producer.topic.full) \
                and "deliver_after_ms" not in args and "deliver_at_ms" not in args:
            # it joins the open batch (its batch index), and a non-persistent topic's ids say nothing else (PLS-NP-003):
            # live 4.0.8, Java, 2026-11-27 (regression pls-np-003-wrong-value-cc7343488154)
            raise NotModelledError("a sync send joining the open batch of a batching producer on a non-persistent topic")
        if args is not None and pf.batching and held and ("deliver_after_ms" in args or "deliver_at_ms" in args) \
                and self._dedup_state(producer.topic).enabled:
            # PLS-DELAY-006 under deduplication: the delayed message's sequence id reaches the broker
            # before the open batch's lower ones (C++), or the order of their receipts is timing
            raise NotModelledError("a delayed send on a batching producer holding async sends, under deduplication")
        if pf.fenced and args is not None and args.get("async"):
            # Live 4.0.8 (regression pls-access-004-missing-rejection-be620961b24c): the fenced
            # producer's client is still reconnecting when the async send comes, so the send is
            # queued and returns at once; the ProducerFenced comes later, in its callback.
            raise NotModelledError("the async send of a fenced producer (queued while its client reconnects; "
                                   "the error comes in the send's callback)")
        if pf.fenced:
            error = am.fenced_send_error(pf.access_mode)
            if error == "ProducerFenced":
                return Rejected(error, "PLS-ACCESS-004", f"producer {producer.name} was fenced by an ExclusiveWithFencing producer")
            # the send times out: how long depends on send_timeout_ms, which traces do not pin
            raise NotModelledError("the send of a fenced Shared/WaitForExclusive producer (it times out after send_timeout_ms)")
        if pf.waiting:
            raise NotModelledError("a send on a WaitForExclusive producer still waiting for the topic")
        return None

    # ------------------------------------------------------------------ sends

    def _send_plan(self, producer: Any, topic: Any, args) -> Any:
        """PLS-CHUNK-002/003/006: the entries a plain (not batched, not async) send on ``topic``
        writes, or the ``Rejected`` its size earns; None for a batched or async send that fits.

        A message a batching producer batches is checked alone (C++ checks the batch it travels in:
        ``BatchMessageContainer``, MessageTooBig); one that joins others in the batch is not modelled. An async send
        that is too big is refused in its callback (every client makes a sync send an async one and waits: Java
        ``ProducerImpl#sendAsync``, C++ ``ProducerImpl::sendAsync``, Go ``partitionProducer.internalSendAsync``), so the
        send returns at once and the producer's next flush reports the error (``AsyncRefusal``); followed on a producer
        that neither batches nor is partitioned (a batch the refused message would join, and a partitioned producer's
        router, are not). A refused generated-id send used up its id on C++ (``Profile.too_big_uses_sequence_id``)."""
        pf = self.pfx.setdefault(producer.handle, ProducerFeatures())
        persistent = is_persistent(topic.full)
        _, s = dedup.next_sequence_id(pf.current_sequence(), args.get("sequence_id"), python=self.profile_of(producer.handle).zero_sequence_id_unset)  # PLS-DEDUP-005/006
        batched = pf.batching and "deliver_after_ms" not in args and "deliver_at_ms" not in args  # PLS-DELAY-006
        plan = send_plan(replace(pf, chunking=False) if batched else pf, producer.name, s, args, persistent=persistent,
                         max_message_size=self.profile.max_message_size, sizing=self._sizing(producer))
        if isinstance(plan, Rejected):
            if args.get("async") and (batched or topic.partitions or producer.handle in self.partition_producers):
                raise NotModelledError("an async send the client refuses for its size on a batching or partitioned "
                                       "producer (the error comes with a later flush)")
            if batched and self._holds_pending(producer.handle):
                raise NotModelledError("a message too big for a batch that already holds messages (which of them fail)")
            client = self.profile_of(producer.handle).client
            if not persistent and pf.chunking and client in ("java", "go"):
                # live 4.0.8, Java, 2026-11-27: a 5 MB + 1 message to a non-persistent topic was sent (chunked), a 10 MB
                # one timed out after 218 retries (regressions pls-chunk-006-missing-rejection-58079fbd209b,
                # pls-dedup-006-wrong-value-a86c9d89b256): not the C++ client's refusal, and not followed. Go does not
                # turn chunking off there either (updateChunkInfo has no such check; live 4.0.8 with 0.19.0,
                # 28 Nov 2026: 5 MB + 1 sent as '0:0:0;0:0:0' and received whole by a connected consumer)
                raise NotModelledError(f"a {client} chunked message too big for one entry on a non-persistent topic")
            if not persistent and pf.chunking and plan.rule == "PLS-CHUNK-003":
                plan = Rejected(plan.error, "PLS-CHUNK-006", plan.detail + " (chunking only works on persistent topics)")
            if args.get("async"):
                return AsyncRefusal(plan)  # the send returns ok; what it uses up: _refuse_async
            return plan  # what it uses up: _feature_refused_for_size, when the refusal is committed
        if getattr(plan, "chunks", 1) > 1 and self.policies.max_unacked_messages_per_consumer:
            # each chunk counts against maxUnackedMessagesPerConsumer: a message of more chunks than the limit
            # never completes (live 4.0.8, Java, 2026-11-27: regression pls-sub-002-lost-message-50bbf5bf267a)
            raise NotModelledError("a chunked message under maxUnackedMessagesPerConsumer (its chunks count as unacked)")
        return None if batched or args.get("async") else plan

    def _sequence_rule(self, producer: Any, args) -> str:
        """PLS-DEDUP-005 for Python's explicit 0 (taken as not given), else PLS-DEDUP-006."""
        python_zero = self.profile_of(producer.handle).zero_sequence_id_unset and args.get("sequence_id") == 0
        return "PLS-DEDUP-005" if python_zero else "PLS-DEDUP-006"

    def _sizing(self, producer: Any) -> chunking.ClientSizing:
        """PLS-CHUNK-002/003 or, for Go, 007/008: how ``producer``'s client measures a send."""
        return chunking.SIZINGS[self.profile_of(producer.handle).chunk_sizing]

    def _delay_limit_refusal(self, producer: Any, topic: Any, args, at: Span) -> Rejected | None:
        """PLS-DELAY-007: a persistent topic refuses a message delayed past delayedDeliveryMaxDelayInMillis."""
        limit = self.profile.delayed_max_delay_ms
        if limit <= 0 or not is_persistent(topic.full):
            return None
        deliver_at = delayed.deliver_at_range(at, deliver_at_ms=args.get("deliver_at_ms"), deliver_after_ms=args.get("deliver_after_ms"))
        refused = delayed.exceeds_max_delay(deliver_at, (at.start, at.end), limit)
        if refused is False:
            return None
        if self.profile_of(producer.handle).not_allowed_send_error != "fails":
            raise NotModelledError("a send past delayedDeliveryMaxDelayInMillis with the C++ client: it closes its "
                                   "connection on the NotAllowedError and sends the message again, for ever")
        if args.get("async") or self._holds_pending(producer.handle):
            raise NotModelledError("an async send past delayedDeliveryMaxDelayInMillis (its error comes with a later flush)")
        return Rejected("NotAllowedError", "PLS-DELAY-007", f"Exceeds max allowed delivery delay of {limit} milliseconds",
                        certain=refused is True)

    def _feature_send(self, producer: Any, topic: Any, args, at: Span, observed) -> dict | Rejected:
        """One send on ``topic`` (already routed): async, batched, chunked, delayed, deduplicated, non-persistent."""
        pf = self.pfx.setdefault(producer.handle, ProducerFeatures())
        label = args["payload"]
        seq, s = dedup.next_sequence_id(pf.current_sequence(), args.get("sequence_id"), python=self.profile_of(producer.handle).zero_sequence_id_unset)  # PLS-DEDUP-005/006
        deliver_at = delayed.deliver_at_range(at, deliver_at_ms=args.get("deliver_at_ms"),
                                              deliver_after_ms=args.get("deliver_after_ms"))
        plan = self._send_plan(producer, topic, args)
        if isinstance(plan, Rejected):
            return plan
        if isinstance(plan, AsyncRefusal):
            self._refuse_async(producer, args, plan.refused)
            return {}
        pf.sequence = seq
        pf.used_up.clear()  # folded into ``seq``
        # batching step 1b: whether its sequence id may repeat one handed to the client before it
        handed = pf.sequence.last if pf.handed is None else pf.handed
        repeats, pf.handed = s <= handed, max(handed, s)
        after_repeat = bool(pf.pending) and pf.pending[-1].repeats
        state = self._dedup_state(topic)
        parent = self.partition_parent.get(producer.handle)
        if label in self.unplaced_labels and parent is not None:
            self.unplaced_sequences.setdefault(parent, []).append((label, topic.full, s))
        if args.get("async"):
            state, status = dedup.publish(state, producer.name, s)
            self.dedup_states[topic.full] = state
            item = PendingSend(label, dict(args), at, s, deliver_at, repeats)
            if pf.batching and not delayed.batchable(deliver_at):
                # PLS-DELAY-006: a delayed message is sent alone and at once, ahead of the batch being filled, so it
                # is stored now; its id comes with the next flush (found live by issue 16's campaign, 2026-11-27:
                # the backlog counted it before any flush)
                self._write_batches_sent_before(producer, pf, topic, at, item)
                self.sent_ahead.setdefault(producer.handle, set()).add(label)
                self.facts = {}
                return {}
            pf.pending.append(item)
            if pf.batching:
                self._batch_joined(producer, pf, item)  # PLS-BATCH-009: its batch leaves on the timer at the latest
            if not pf.batching:
                # Not batched: the client sends it at once (C++ ProducerImpl::sendAsyncWithStatsUpdate ->
                # sendMessage), so it is stored now and consumers may get it before any flush; its id
                # comes with the next flush (found live by the generated traces of issue 16).
                self.flushed.setdefault(producer.handle, {}).update(self._flush_pending(producer, pf, topic, at, observed={}))
            self.facts = {}
            return {}
        # PLS-DEDUP-006 is judged on non-partitioned producers: a partitioned C++ producer keeps one
        # sequence per partition and last_sequence_id() reports one of them.
        facts: dict[str, Any] = {}
        # PLS-DEDUP-004: a duplicate of a message still in flight (pushed, not persisted) is Unknown.
        first = dedup.classify(state, producer.name, s)
        if pf.pending and pf.batching and not delayed.batchable(deliver_at):
            # PLS-DELAY-006: the batches already sent are written before this delayed message, and
            # the open batch after it (C++) or before it (Java): reference_model.batching step 1.
            # The next flush reports their ids.
            self._write_batches_sent_before(producer, pf, topic, at, PendingSend(label, dict(args), at, s, deliver_at, repeats),
                                            include=False)
            state = self._dedup_state(topic)
        elif pf.pending and pf.batching and first == dedup.NOT_DUP and is_persistent(topic.full) \
                and not (pf.batch_config.repeats_send_open_batch and (repeats or after_repeat)):
            # (for a send that may be a duplicate of one still in the batch, and on a non-persistent topic whose ids
            # say nothing of entries (PLS-NP-003), the model keeps its older, coarser order: the pending batch
            # first, then this message with its dedup classification, PLS-DEDUP-004; case dedup-in-flight-unknown)
            # The message joins the open batch (both clients add it to the container and wait for the batch):
            # the batches go out together, one receipt each (live 4.0.8, 2026-11-27: async m1, then a sync m2,
            # gave m1 (e,0) and m2 (e,1); regression pls-dedup-006-wrong-value-9745a1bf7f4b; the same under
            # deduplication, live 4.0.8 and 4.2.4, regression pls-batch-001-wrong-value-23648ae90e27). The next
            # flush reports the others' ids.
            if state.enabled:
                state, _ = dedup.publish(state, producer.name, s)  # pushed with its batch, persisted at the flush below
                self.dedup_states[topic.full] = state
                facts["duplicate"] = False
                facts["dedup_rule"] = "PLS-FAULT-004" if self._fault_since_first_entry(topic) else "PLS-DEDUP-001"
                facts["dedup_reason"] = f"{label}: sequence id {s} of {producer.name} is above the highest pushed one: stored"
            # whether the open batch's timer may fire before this send joins it: it is added to the container
            # some time within its span, so the batch may leave without it (its id says; PLS-BATCH-009)
            timer_may_cut = self._open_batch_may_have_left(producer, pf, at)
            pf.pending.append(PendingSend(label, dict(args), at, s, deliver_at, repeats))
            if pf.region:
                pf.region.append(pf.pending[-1])  # PLS-BATCH-009: its batch is settled by this send
            ids = self._flush_pending(producer, pf, topic, at, observed={})
            self._sync_send_settles(producer, pf, label, at, observed, timer_may_cut=timer_may_cut)
            mine = MessageId.from_list(ids.pop(label))
            self.flushed.setdefault(producer.handle, {}).update(ids)
            if topic.partition_index < 0:
                facts["sequence_id"] = pf.sequence.last
            facts["sequence_rule"] = self._sequence_rule(producer, args)
            self.facts = facts
            written = topic.entries[topic.by_label[label]] if label in topic.by_label else None
            return {"message_id": mine.to_list(), "sequence_id": pf.sequence.last, "id_text": str(mine),
                    "publish_time": int(observed["publish_time"]) if "publish_time" in observed
                    else written.publish_time if written is not None else int(at.start)}  # its batch's (PLS-MSG-001)
        elif pf.pending:
            # C++ writes in order: the async sends before this one complete first; the next flush reports them.
            self.flushed.setdefault(producer.handle, {}).update(self._flush_pending(producer, pf, topic, at, observed={}))
            if pf.region:
                pf.region_cuts[len(pf.region)] = at.end  # PLS-BATCH-009: the container is empty after this send
            state = self._dedup_state(topic)
        open_because = self._dedup_open(producer, topic, s) if (state.enabled or topic.full in self.dedup_unknown) \
            and "message_id" in (observed or {}) else None
        if open_because is not None:
            # the broker's answer is followed: a stored id, or a duplicate's (-1, -1)
            if [int(x) for x in observed["message_id"]][:2] == [-1, -1]:
                status = dedup.DUP
            else:
                state, status = dedup.follow_stored(state, producer.name, s), dedup.NOT_DUP
        else:
            state, status = dedup.publish_and_persist(state, producer.name, s)
        self.dedup_states[topic.full] = state
        if state.enabled and status == dedup.DUP and self.flushed.get(producer.handle):
            self.resent_as_duplicate.setdefault(producer.handle, set()).update(self.flushed[producer.handle])
        pf.sequence = dedup.send_acknowledged(pf.sequence, s, highest=self.profile_of(producer.handle).last_sequence_id_highest)  # PLS-DEDUP-006
        producer.last_sequence_id = pf.sequence.last
        if topic.partition_index < 0:
            facts["sequence_id"] = pf.sequence.last  # what last_sequence_id() reports after the send (Java: the highest)
        facts["sequence_rule"] = self._sequence_rule(producer, args)
        if facts["sequence_rule"] == "PLS-DEDUP-006" and self.reconnects_after(pf.faults_at_creation):
            facts["sequence_rule"] = "PLS-FAULT-006"  # the producer's ids go on across a reconnect
        if state.enabled:
            facts["duplicate"] = status == dedup.DUP
            facts["dedup_rule"] = "PLS-DEDUP-004" if first == dedup.UNKNOWN else "PLS-DEDUP-001"
            if first != dedup.UNKNOWN and self._fault_since_first_entry(topic):
                facts["dedup_rule"] = "PLS-FAULT-004"  # the dedup state came through a reconnect or restart
            facts["dedup_reason"] = (f"{label}: sequence id {s} of {producer.name} "
                                     + ("was still in flight (Unknown), and once it was persisted the retry was a duplicate"
                                        if first == dedup.UNKNOWN else
                                        "is at most the highest persisted one: not stored" if status == dedup.DUP else
                                        "is above the highest persisted one: stored"))
        elif args.get("sequence_id") is not None:
            facts["duplicate"] = False
            facts["dedup_rule"] = "PLS-DEDUP-003"
            facts["dedup_reason"] = f"{label}: deduplication is off, so sequence id {s} is stored whatever came before"
        if open_because is not None:
            facts["duplicate"] = status == dedup.DUP
            facts["dedup_rule"] = "PLS-DEDUP-001"
            facts["dedup_reason"] = (f"{label}: sequence id {s} of {producer.name} is "
                                     + ("a duplicate" if status == dedup.DUP else "stored")
                                     + f" as the broker said: {open_because}")
        if facts.get("dedup_rule") in ("PLS-DEDUP-001", "PLS-DEDUP-003") and self._own_policy_decides(topic, "deduplication"):
            facts["dedup_rule"] = "PLS-POLICY-001"
            facts["dedup_reason"] += (f" ({topic.short}'s own deduplication policy, {'on' if state.enabled else 'off'}, "
                                      f"decides over its namespace's, {'on' if self.policies.deduplication else 'off'})")
        if status == dedup.DUP:
            self.facts = facts
            mid = dedup.duplicate_reply_id(topic.partition_index)
            return {"message_id": mid.to_list(), "sequence_id": pf.sequence.last, "id_text": str(mid)}
        if pf.batching and delayed.batchable(deliver_at):
            # PLS-BATCH-001: a sync send on a batching producer waits for the batch timer and is
            # written as a batch of one: batch index 0 (measured on 4.0.8: '(l,e,-1,0)').
            # PLS-BATCH-008: the Java client sends that batch of one as a plain message (index -1); ``_write`` numbers
            # its entry then (numbering it here too left a gap in the entry ids: seed-0 fuzz of 3 Dec 2026)
            alone = self.profile_of(producer.handle).single_message_batch_unbatched
            lingering = bool(pf.region) and self._timer_batch_may_linger(pf, at)
            entry = None
            if not alone:
                fx = self.topic_features(topic)
                entry = fx.next_entry
                fx.next_entry += 1
            value = self._write(producer, topic, label, args, at, s, deliver_at, observed, pf,
                                batch_index=None if alone else 0, entry=entry)
            if pf.region:
                # PLS-BATCH-009: messages the model's timer stored may still have been open: this one may have
                # joined their batch (its id says); the next flush settles them
                pf.region.append(PendingSend(label, dict(args), at, s, deliver_at, repeats))
                self._sync_send_settles(producer, pf, label, at, observed, timer_may_cut=lingering)
                if "sequence_id" in facts:
                    facts["sequence_id"] = value["sequence_id"] = pf.sequence.last
        else:
            value = self._write(producer, topic, label, args, at, s, deliver_at, observed, pf, batch_index=None, plan=plan)
        self.facts = {**facts, **self.facts}
        return value

    def _write(self, producer, topic, label, args, at, s, deliver_at, observed, pf, *, batch_index, entry=None,
               plan=None, entry_publish_time: int | None = None) -> dict:
        """Store one message; returns the send's ok value. ``batch_index`` None: not batched;
        ``plan``: the send's ``send_plan``, when the caller already made it; ``entry_publish_time``: the publish time
        of the batch this message joins (its first message's, PLS-MSG-001 with PLS-BATCH-001)."""
        fx = self.topic_features(topic)
        persistent = is_persistent(topic.full)
        chunks = 1
        facts: dict[str, Any] = {}
        if batch_index is None and persistent:
            sizing = self._sizing(producer)
            if plan is None:
                plan = send_plan(pf, producer.name, s, args, persistent=persistent,
                                 max_message_size=self.profile.max_message_size, sizing=sizing)
            chunks = plan.chunks if not isinstance(plan, Rejected) else 1
            if pf.chunking:
                facts["chunks"] = chunks
                facts["chunk_rule"] = sizing.count_rule
                if topic.partition_index < 0:
                    facts["id_text_partition"] = self.profile_of(producer.handle).unpartitioned_id_text_partition
                facts["chunk_reason"] = (f"{chunking.chunk_count.__name__}: payload {args.get('payload_size', len(label))} bytes, "
                                         f"metadata {chunking.metadata_size.__name__} -> {chunks} entr{'y' if chunks == 1 else 'ies'}")
        if not persistent:
            mid = non_persistent.message_id(topic.partition_index, -1 if batch_index is None else batch_index)  # PLS-NP-003
            facts["non_persistent"] = True
            facts["np_batch_index"] = mid.batch_index  # PLS-NP-003: -1 alone, i in a batch
            # ... and the partition its sender reports: -1 from a producer opened on a partition's name (as_sender_reports)
            opened_on_partition = producer.topic.partition_index >= 0 and producer.handle not in self.partition_producers
            facts["np_partition"] = -1 if opened_on_partition else topic.partition_index
        else:
            if entry is None:
                entry = fx.next_entry
                fx.next_entry += chunks
            last_entry = entry + chunks - 1
            mid = MessageId(topic.ledger, last_entry, topic.partition_index, -1 if batch_index is None else batch_index)
        publish_time = int(observed["publish_time"]) if "publish_time" in observed else int(at.start)
        if entry_publish_time is not None:
            publish_time = entry_publish_time
        key, key_b64 = args.get("key"), False
        if "key_bytes" in args:
            # PLS-MSG-002: the Java client sends a key given as bytes as its Base64 text, flagged
            key, key_b64 = base64.b64encode(bytes.fromhex(args["key_bytes"])).decode("ascii"), True
        stored = self._store(topic, label, key=key, ordering_key=args.get("ordering_key"), key_b64=key_b64,
                             properties=args.get("properties") or {}, event_time=int(args.get("event_time", 0)),
                             publish_time=publish_time, producer_name=producer.name, sequence_id=s, at=at,
                             message_id=mid)
        self.labels[label] = (topic, stored.pos)
        if persistent and batch_index is not None:
            fx.entry_of[stored.pos] = (entry, batch_index)
            fx.members.setdefault(entry, []).append(stored.pos)
        if deliver_at is not None:
            fx.deliver_at[stored.pos] = deliver_at
        if args.get("tombstone"):
            fx.tombstone[stored.pos] = args["tombstone"]
        if chunks > 1:
            fx.chunks[stored.pos] = chunks
        if not persistent:
            # PLS-NP-001: only subscriptions with a connected consumer get it; the others never will.
            getting = non_persistent.receivers({name for name, sub in topic.subscriptions.items()
                                                if sub.dispatcher is not None and sub.dispatcher.connected()})
            for name, sub in topic.subscriptions.items():
                if name not in getting:
                    sub.cursor.ack(stored.pos)
                    continue
                if non_persistent.before_first_permits(at.start, [self.first_permits_by.get(h)
                                                                  for h in sub.dispatcher.connected()]):
                    sub.maybe_absent.add(stored.pos)  # rule 6: its consumers' first permits may be on their way
                if self.np_drop_possible(sub, stored.pos) is not None:
                    # rule 5: no permits, or a connection not writable, as the broker dispatches it
                    sub.maybe_absent.add(stored.pos)
                    sub.maybe_dropped.add(stored.pos)
        self.facts = facts
        id_text = str(mid)
        if chunks > 1:
            entry_ids = chunking.chunk_entry_ids(MessageId(mid.ledger, mid.entry - chunks + 1, mid.partition, -1), chunks)
            id_text = chunking.chunk_message_id_str(entry_ids[0], entry_ids[-1])
        return {"message_id": mid.to_list(), "sequence_id": pf.sequence.last, "id_text": id_text, "publish_time": publish_time}

    def _flush_pending(self, producer, pf: ProducerFeatures, topic, at: Span, observed, *,
                       settles: bool = True) -> dict[str, list[int]]:
        """Write a producer's pending async sends (PLS-BATCH-001/002/003, PLS-DELAY-006); returns label -> id.
        A batched message is stored within the window its batch may reach the broker in (PLS-BATCH-009), which
        ends with ``at`` when the op ``settles`` the batch (a flush, a sync send), not when its timer may send it."""
        left = self._pending_windows(producer, pf, at.end if settles else None)
        pending, pf.pending = pf.pending, []
        ids: dict[str, list[int]] = {}
        state = self._dedup_state(topic)
        stored_items = []
        for item in pending:
            # Dedup: pushed at send, persisted now (a Dup is not written, id -1/-1).
            if state.enabled and dedup.classify(dedup.DedupState(True, state.persisted, state.persisted), producer.name, item.sequence_id) == dedup.DUP:
                ids[item.label] = dedup.duplicate_reply_id(topic.partition_index).to_list()
                continue
            state = dedup.persist(state, producer.name, item.sequence_id)
            stored_items.append(item)
            pf.sequence = dedup.send_acknowledged(pf.sequence, item.sequence_id,
                                                  highest=self.profile_of(producer.handle).last_sequence_id_highest)
        self.dedup_states[topic.full] = state
        producer.last_sequence_id = pf.sequence.last
        fx = self.topic_features(topic)
        if not pf.batching:
            for item in stored_items:  # each its own entry, maybe chunked (batch index -1)
                value = self._write(producer, topic, item.label, item.args, Span(item.at.start, at.end), item.sequence_id,
                                    item.deliver_at, {}, pf, batch_index=None)
                ids[item.label] = value["message_id"]
            return ids
        entries = plan_batches(stored_items, pf.batch_config)
        highest = self.profile_of(producer.handle).last_sequence_id_highest
        first = self.profile_of(producer.handle).last_sequence_id_batch_first
        for group in entries:  # one receipt per entry, in the order they were written (PLS-DEDUP-006)
            pf.sequence = dedup.batch_acknowledged(pf.sequence, [stored_items[i].sequence_id for i in group],
                                                   highest=highest, first=first)
        producer.last_sequence_id = pf.sequence.last
        # a delayed message is sent alone (PLS-DELAY-006); a Java batch of one is a plain message (PLS-BATCH-008)
        java_single = self.profile_of(producer.handle).single_message_batch_unbatched
        alone = frozenset(group[0] for group in entries
                          if len(group) == 1 and (not delayed.batchable(stored_items[group[0]].deliver_at) or java_single))
        planned = batching.assign_ids(entries, ledger=topic.ledger, first_entry=fx.next_entry,
                                      partition=topic.partition_index, single_messages=alone)  # PLS-BATCH-001
        fx.next_entry += len(entries)
        for group in entries:
            stamp = None
            for i in group:
                item, mid = stored_items[i], planned[i]
                value = self._write(producer, topic, item.label, item.args, left.get(item.label, Span(item.at.start, at.end)),
                                    item.sequence_id, item.deliver_at, {}, pf,
                                    batch_index=None if mid.batch_index < 0 else mid.batch_index, entry=mid.entry,
                                    entry_publish_time=stamp)
                # PLS-MSG-001 with PLS-BATCH-001: a batch is one entry with one metadata, made from its first message's
                # (Java BatchMessageContainerImpl, C++ BatchMessageContainer): every member reports its publish time
                stamp = value["publish_time"]
                ids[item.label] = value["message_id"]
        return ids

    def _write_batches_sent_before(self, producer, pf: ProducerFeatures, topic, at: Span, item: PendingSend, *,
                                   include: bool = True) -> None:
        """PLS-DELAY-006: a delayed message ``item`` on a batching producer holding async sends. Write
        the pending messages the client has sent by the time ``item`` goes (the full batches, and for
        Java the open one: ``batching.open_batch``), then ``item`` itself if ``include``; the open
        batch stays pending. Their ids come with the next flush (``flushed``)."""
        held = set(open_batch(pf.pending + [item], pf.batch_config))
        sent = [p for i, p in enumerate(pf.pending) if i not in held]
        waiting = [p for i, p in enumerate(pf.pending) if i in held]
        pf.pending = sent + ([item] if include else [])
        if pf.pending:
            self.flushed.setdefault(producer.handle, {}).update(self._flush_pending(producer, pf, topic, at, observed={}))
        pf.pending = waiting
        if pf.region and not waiting:
            # PLS-BATCH-009: nothing stays open (Java sends its open batch ahead of the delayed message), so the
            # container was surely empty after this send and the next run needs no timer cut (regression
            # pls-batch-009-wrong-value-d8437d639915, a model self-FAIL of 3 Dec 2026)
            pf.region_cuts[len(pf.region)] = at.end

    def _feature_refused_for_size(self, producer: Any, args) -> None:
        """A send refused with MessageTooBig used up its generated sequence id on C++, and on Java for
        a batched message (Java checks a batched message's size when its batch is complete:
        ProducerImpl#sendAsync; Profile.too_big_uses_sequence_id); on Go unless it was a batched message whose
        payload alone is too big (Profile.batched_payload_checked_first)."""
        pf = self.pfx.setdefault(producer.handle, ProducerFeatures())
        batched = pf.batching and "deliver_after_ms" not in args and "deliver_at_ms" not in args
        prof = self.profile_of(producer.handle)
        if batched and prof.batched_payload_checked_first and feature_payload_size(args) > self.profile.max_message_size:
            return  # Go: refused before its batch builder numbered it
        if prof.too_big_uses_sequence_id or batched:
            self._use_up_generated_id(producer, args)

    def _refuse_async(self, producer: Any, args, refused: Rejected) -> None:
        """An async send its client refused for its size (``AsyncRefusal``): nothing reaches the broker, its generated
        sequence id is used up as a sync send's would be, and the producer's next flush fails with it."""
        self.async_refused.setdefault(producer.handle, []).append((args["payload"], refused))
        self._feature_refused_for_size(producer, args)

    def async_refusal_of_flush(self, producer: Any) -> Rejected | None:
        """The flush of ``producer`` after async sends its client refused for their size: every client's flush waits
        for its sends' callbacks, and the trace's flush reports the failed ones, ``OtherError`` (docs/trace-format.md:
        the live targets' flush is rejected with "async sends failed: <label>: <error>"; the others' ids are not
        shown). The refusal's rule is the first refused send's."""
        refused = self.async_refused.get(producer.handle)
        if not refused:
            return None
        return Rejected("OtherError", refused[0][1].rule,
                        "async sends failed: " + "; ".join(f"{label}: {r.error}" for label, r in refused))

    def flush_refused_for_async(self, op: str, args: Mapping[str, Any], refused: Any) -> bool:
        """Whether ``refused`` is the refusal ``async_refusal_of_flush`` predicts for this ``op`` (a flush), not
        another one (a fenced producer's AlreadyClosed)."""
        producer = self.producers.get(args.get("producer", "")) if op == "flush" else None
        return producer is not None and isinstance(refused, Rejected) and refused == self.async_refusal_of_flush(producer)

    def commit_async_refusal_of_flush(self, producer: Any, at: Span) -> None:
        """What a flush refused by ``async_refusal_of_flush`` still did: it waited for every send, so the sends that
        were not refused are written and no longer in flight (their ids, which it does not report, are the model's);
        the refused ones are forgotten."""
        self.async_refused.pop(producer.handle, None)
        self._flush_one(producer, self.pfx.setdefault(producer.handle, ProducerFeatures()), at, {})

    def _use_up_generated_id(self, producer: Any, args) -> None:
        """A refused send that had taken a generated sequence id (no explicit one) used it up: the next send gets
        the one after (PLS-DEDUP-006). Called for a size refusal the client made after numbering the message, and
        for a send the broker refused (PLS-DELAY-007), which went out with its id."""
        prof = self.profile_of(producer.handle)
        if dedup.python_sequence_argument(args.get("sequence_id"), python=prof.zero_sequence_id_unset) is None:
            self.pfx.setdefault(producer.handle, ProducerFeatures()).used_up.add(args["payload"])

    def check_no_async_in_flight(self, topic: str, what: str) -> None:
        """A position taken from the end of ``topic`` (full name) while a non-batching producer there
        has async sends no flush has reported yet is not followed: the model stores such a send at
        once, but the broker may store it after the position was taken (live 4.0.8, 2026-11-26: an
        async m1, then seek latest, then m1 delivered). A partition counts its partitioned producer's sends stored
        there. Not followed even for one producer: a later message of another producer may be stored before it, and
        the history does not show that order. (A subscription made at Latest on a persistent topic is followed:
        ``latest_start_in_flight``; a seek or admin reset to the earliest position does not ask, since the send is after
        it wherever it lands: ``Broker._to_earliest``.)"""
        t = self.topics.get(topic)
        for handle, labels in self._unbatched_unreported(t).items() if t is not None else ():
            if labels:
                raise NotModelledError(f"{what} while {handle}'s async sends may still be in flight")
        self._refuse_floating(topic, Span.at(self.now), what)  # PLS-BATCH-009 (batched ones)

    def latest_start_in_flight(self, topic: str, receipts: Mapping[str, Mapping[str, Any]] | None,
                               what: str) -> "LatestStart":
        """PLS-SUB-002 with async sends in flight: what a subscription created at Latest on ``topic`` (full name)
        holds of the unbatched async sends there that no flush has reported. The broker makes the cursor at the end
        of what it has stored, and whether such a send was stored before it is out of the history's sight; of one
        producer's sends it is a prefix (they are stored in send order). Both are allowed, and the checker follows
        what the subscription's consumers received (``receipts``: received topic short name -> {label: (ledger,
        entry)}, ``conformance.checker.later_receipts``):

        - a send they received is after the cursor (``LatestStart.after``), and so is every later send of its
          producer, and every send whose id the history shows (a receipt anywhere, a flush: ``shown_ids``) above
          the first of those;
        - any other is taken as before the cursor (``LatestStart.unsure``): the look ahead saw every receipt of the
          subscription up to where its cursor next moves back, and none was of it, so nothing owes it there; a
          backlog may still count it (``Broker.backlog``), since the broker may have stored it after the cursor.

        With no history to follow (the model target) the model's own choice: it stored them at once, before the
        cursor, as a look ahead that saw no receipt of them would say (so a checker judging the model's own history
        decides the same). Not followed: a history whose look ahead cannot be complete (a pattern consumer of the
        subscription, a retry topic, a reader, an op on it of unknown outcome: ``later_receipts``), since a receipt
        it did not see may be of a send the model would take as before the cursor; and where the ids show a message
        stored ahead of one the subscription holds that the model stores after it (its store order is the send order): another producer's batch stored ahead of a 5 MB async send
        (live 4.0.8, python campaign of 5 Dec 2026, fz-d53f54edbda3: p1's m1 in flight at c2's Latest subscribe,
        c2 got p2's m2..m4 and then m1). Batched sends whose batch may or may not have left: ``_refuse_floating``."""
        self._refuse_floating(topic, Span.at(self.now), what)  # PLS-BATCH-009
        t = self.topics.get(topic)
        in_flight = sorted(t.by_label[label] for labels in self._unbatched_unreported(t).values() for label in labels) \
            if t is not None else []
        if not in_flight:
            return LatestStart()
        if receipts is None:
            if self.follows_history:
                raise NotModelledError(f"{what} while async sends were in flight, on a subscription whose receipts the "
                                       "look ahead does not follow (a pattern consumer of it, a retry topic, a reader, "
                                       "an op on it of unknown outcome)")
            receipts = {}  # the model's own history: it stored them at once, so none is after the cursor
        mine = receipts.get(t.short, {})
        known = {pos: tuple(mine.get(t.entries[pos].label) or self.shown_ids.get((t.short, t.entries[pos].label)) or ())
                 for pos in in_flight}
        after = {pos for pos in in_flight if t.entries[pos].label in mine}
        if after:
            first_id = min(known[pos] for pos in after)
            after |= {pos for pos in in_flight if known[pos] and known[pos] > first_id}
            for pos in sorted(after):  # one producer's sends are stored in send order: the later ones are after it too
                after |= {q for q in in_flight if q > pos and t.entries[q].producer_name == t.entries[pos].producer_name}
        if self._store_order_overtaken(t, sorted(after), known, mine):
            raise NotModelledError(f"{what} while async sends were in flight: the history's ids show a message "
                                   "stored ahead of one of them that the model stores after it (its store order is "
                                   "the send order)")
        return LatestStart(frozenset(t.entries[pos].label for pos in after),
                           frozenset(t.entries[pos].label for pos in in_flight if pos not in after))

    @staticmethod
    def _store_order_overtaken(t: Any, held: list[int], known: Mapping[int, tuple], mine: Mapping[str, Any]) -> bool:
        """Whether the ids the history shows put the broker's store order against the model's for a subscription
        that holds the in-flight positions ``held`` of topic ``t``: two in-flight sends (``known``: position -> id)
        in the other order, or a message its consumers received (``mine``: label -> id) that the model stores after
        one of ``held`` (most are sent after the subscribe) with an id below it."""
        shown = sorted((seen, pos) for pos, seen in known.items() if seen)
        if [pos for _, pos in shown] != sorted(pos for _, pos in shown):
            return True
        for label, seen in mine.items():
            later = [pos for pos in held if label not in t.by_label or t.by_label[label] > pos]
            if any(known[pos] and tuple(seen) < known[pos] for pos in later):
                return True
        return False

    def maybe_in_flight(self, handle: str) -> list[str]:
        """The labels of ``handle``'s async sends that no flush has reported yet (``flushed``, in send order) and that
        may still be on their way to the broker: a send some consumer received surely reached it, and so did every
        earlier one of its producer (one connection stores them in send order). The model's run, whose timer stored
        a batched send, and its checker, which read the send's receipt as settling its batch, then agree that it
        landed (regression pls-backlog-001-wrong-backlog-b35548036fbc)."""
        order = list(self.flushed.get(handle, ()))
        landed = max((i for i, label in enumerate(order) if label in self.ever_received), default=-1)
        return order[landed + 1:]

    def _unbatched_unreported(self, t: Any) -> dict[str, list[str]]:
        """Producer handle -> the labels stored on topic ``t`` of its unbatched async sends that may still be in
        flight (``maybe_in_flight``; a batched one, in ``pf.region``, floats instead: ``_floating``)."""
        found = {}
        for handle in self.flushed:
            pf = self.pfx.get(handle)
            batched = {p.label for p in pf.region} if pf is not None else set()
            found[handle] = [label for label in self.maybe_in_flight(handle) if label not in batched and label in t.by_label]
        return found

    # ------------------------------------------------------------------ when a batch leaves (PLS-BATCH-009)

    def _batch_timer(self, pf: ProducerFeatures) -> batching.BatchTimer:
        return batching.BatchTimer.for_client(pf.timer_client, pf.batch_delay_ms, created_at=pf.timer_quiet_from)

    def _end_timer_quiet(self, handles: set[str]) -> None:
        """The producers ``handles`` (and their partitions' producers) may have reconnected (an unload, a fault):
        their batch timers' quiet periods (``BatchTimer.for_client``) are no longer counted on."""
        for handle in handles:
            for h in (handle, *self.partition_producers_of(handle)):
                if h in self.pfx:
                    self.pfx[h].timer_quiet_from = None

    def _region_windows(self, pf: ProducerFeatures, settled_by: float | None = None) -> list[Span]:
        """PLS-BATCH-009: when each message of ``pf.region`` may reach the broker (``batching.leave_window``):
        each run since a sync send is settled by that send; ``settled_by`` settles the rest (a flush)."""
        items = batch_items(pf.region)
        sent = [p.at for p in pf.region]
        timer = self._batch_timer(pf)
        cuts = sorted(pf.region_cuts)
        windows = []
        runs = batching.RunPlans(items, pf.batch_config)  # the container's plans, shared by every j (same windows)
        for j in range(len(items)):
            start = max((c for c in cuts if c <= j), default=0)
            settled = next((pf.region_cuts[c] for c in cuts if c > j), settled_by)
            windows.append(batching.leave_window(items, sent, j, pf.batch_config, timer, run_start=start, settled_by=settled,
                                                 plans=runs))
        return windows

    def _pending_windows(self, producer: Any, pf: ProducerFeatures, settled_by: float | None) -> dict[str, Span]:
        """The leave windows of ``pf.pending`` (label -> span), for a batching producer on a persistent topic."""
        if not pf.batching or not pf.region or not is_persistent(producer.topic.full):
            return {}
        region = {p.label for p in pf.region}
        if any(p.label not in region for p in pf.pending):
            return {}
        return {p.label: w for p, w in zip(pf.region, self._region_windows(pf, settled_by)) if p in pf.pending}

    def _batch_joined(self, producer: Any, pf: ProducerFeatures, item: PendingSend) -> None:
        """An async send joined ``producer``'s open batch (PLS-BATCH-009). When the batch leaves is the client's:
        the model's own timer (``BatchTimer.canonical``) writes what is pending ``delay`` after the batch's first
        message; a checker that sees it leave earlier (a receive) or later (a flush) follows that instead. Either
        way each message is stored within its leave window, so no receive is owed it before it surely left."""
        if not is_persistent(producer.topic.full):
            return  # PLS-NP-003: a non-persistent topic's ids show no entries (check_batch_timer)
        pf.region.append(item)
        if batching.fills_alone(batch_items([item])[0], pf.batch_config):
            # its container is full with it alone, so the client sends it, and the batch it had no room in before it,
            # in this send call (batching step 4; Java ProducerImpl#serializeAndSendMessage -> batchMessageAndSend,
            # C++ ProducerImpl::sendAsync): stored now, the container surely empty after it (live 4.0.8, Java
            # campaign of 6 Dec 2026: batching_max_messages 1, a 5 MB async send, then another producer's message on
            # that partition came after it; regression pls-excl-002-order-violation-f69bf30d4a9f)
            self._container_emptied(producer, pf, item.at)
            return
        config = pf.batch_config
        if len(pf.pending) < config.max_messages and not (config.repeats_send_open_batch and any(p.repeats for p in pf.pending[-2:])) \
                and sum(feature_payload_size(p.args) for p in pf.pending) < config.max_bytes:
            held = set(range(len(pf.pending)))  # neither full nor out of room: the container sends nothing (a shortcut)
        else:
            held = set(open_batch(pf.pending, config))
        first = pf.pending[0]
        if len(held) < len(pf.pending):
            # the model's container (what it holds since its own timer last fired) is full with this message, or had
            # no room for it: the client sends those batches in this send call (batching steps 2 and 4), so the
            # model stores them now, and what stays waits for its own timer (apache/pulsar ConsumerRedeliveryTest
            # #testAckNotSent: a Java batch of 5 at batchingMaxMessages 5 leaves with its fifth add)
            waiting = [p for i, p in enumerate(pf.pending) if i in held]
            pf.pending = [p for i, p in enumerate(pf.pending) if i not in held]
            self._commit_pending(producer, pf, item.at)
            pf.pending = waiting
            first = waiting[0] if waiting else None
        elif len(pf.pending) > 1:
            first = None  # its timer runs since the batch's first message
        if first is not None:
            due = self._batch_timer(pf).canonical(first.at)
            handle = producer.handle
            self._schedule(due, lambda: self._batch_timer_fired(handle, first, due))

    def sync_send_flushed_partitions(self, producer: Any, sent_on: str, at: Span) -> None:
        """PLS-BATCH-009: a sync send on the partitioned ``producer`` (by its partition producer ``sent_on``) sends the
        open batch of every other partition too, after its own message was enqueued (Java ``ProducerBase#send`` ->
        ``PartitionedProducerImpl#triggerFlush``; not Python or Go, ``Profile.sync_send_flushes_all_partitions``):
        each such container is surely empty by the send's end,
        and what it held is stored, its ids reported by the next flush. Found by the live Java campaign of 6 Dec 2026
        (pls-batch-009-wrong-value-acfcc203fb2b: async m1 on one partition, a sync m2 on the other, and m1 received
        before its timer could fire)."""
        if not self.profile_of(producer.handle).sync_send_flushes_all_partitions:
            return
        for handle in self.partition_producers_of(producer.handle):
            pf, part = self.pfx.get(handle), self.partition_producers.get(handle)
            if handle == sent_on or pf is None or part is None or not pf.batching or not pf.pending \
                    or not is_persistent(part.topic.full):
                continue
            self._container_emptied(part, pf, at)

    def _container_emptied(self, producer: Any, pf: ProducerFeatures, at: Span) -> None:
        """The client sent everything ``producer`` held pending during ``at`` (PLS-BATCH-009): stored now, each within a
        window ending with ``at``, the container surely empty after it; the next flush reports the ids."""
        pf.container_sent.update(p.label for p in pf.pending)
        self.flushed.setdefault(producer.handle, {}).update(
            self._flush_pending(producer, pf, producer.topic, at, observed={}, settles=True))
        if pf.region:
            pf.region_cuts[len(pf.region)] = at.end

    def _batch_timer_fired(self, handle: str, first: PendingSend, due: float) -> None:
        pf, producer = self.pfx.get(handle), self.producer_of(handle)
        if pf is None or producer is None or not pf.pending or pf.pending[0] is not first:
            return  # flushed, sent with a sync send, or closed since
        pf.timer_stored.update(p.label for p in pf.pending)  # the client's timer may fire later (_timer_batch_may_linger)
        self._commit_pending(producer, pf, Span.at(due))

    def _commit_pending(self, producer: Any, pf: ProducerFeatures, at: Span) -> None:
        """The pending messages left (the timer, or a receive saw one): store them; the next flush reports their ids
        and settles which of them share an entry (``_settle_region``)."""
        self.flushed.setdefault(producer.handle, {}).update(
            self._flush_pending(producer, pf, producer.topic, at, observed={}, settles=False))

    def _region_of(self, label: str) -> tuple[str, ProducerFeatures, int] | None:
        """(producer handle, its features, index) of a batched message whose batch no flush has settled yet."""
        for handle, pf in self.pfx.items():
            if pf.batching and self.producer_of(handle) is not None:
                for i, p in enumerate(pf.region):
                    if p.label == label:
                        return handle, pf, i
        return None

    def _floating(self, topic_full: str, during: Span, *, besides: str | None = None) -> list[str]:
        """PLS-BATCH-009: messages of batching producers on ``topic_full`` (other than ``besides``) whose order
        against something stored during ``during`` is open: stored by the model though they may still be on their
        way (their window ends after ``during`` starts), or still pending though they may have left (it starts
        before ``during`` ends)."""
        found = []
        received = self.ever_received  # a received message surely left
        for pf in self._unsettled_batchers(topic_full, besides):
            pending = {p.label for p in pf.pending}
            # a message some consumer received surely left, and so did every one sent before it
            seen = max((i for i, p in enumerate(pf.region) if p.label in received), default=-1)
            for i, (p, w) in enumerate(zip(pf.region, self._region_windows(pf))):
                if p.label in pending:
                    if w.start <= during.end:
                        found.append(p.label)
                elif p.label in self.labels and i > seen and \
                        w.end + (0.0 if p.label in pf.container_sent else self.slack_ms) >= during.start:
                    found.append(p.label)  # (the slack: a timer may fire that much late; a full container has none)
        return found

    def _unsettled_batchers(self, topic_full: str, besides: str | None) -> Iterator[ProducerFeatures]:
        """The batching producers on ``topic_full`` (other than ``besides``) with messages whose batch no flush settled
        (``pf.region``): the only ones whose messages can float (``_floating``)."""
        for handle, pf in self.pfx.items():
            if handle != besides and pf.batching and pf.region:
                producer = self.producer_of(handle)
                if producer is not None and producer.topic.full == topic_full:
                    yield pf

    def _refuse_floating(self, topic_full: str, during: Span, what: str, *, besides: str | None = None,
                         only: str | None = None) -> None:
        """Not followed (PLS-BATCH-009): ``what``, during ``during``, while batched messages on the topic (of
        producer ``only``, or of any but ``besides``) may or may not have reached the broker (``_floating``)."""
        floating = self._floating(topic_full, during, besides=besides)
        if only is not None:
            mine = {p.label for p in self.pfx[only].region} if only in self.pfx else set()
            floating = [x for x in floating if x in mine]
        if floating:
            raise NotModelledError(f"{what} while {', '.join(floating)} may or may not have left in a batch")

    def _refuse_np_batch(self, handle: str, pf: ProducerFeatures, when: float, what: str, *,
                         full_counts: bool = True) -> None:
        """Not followed: ``what`` once ``handle``'s open batch on a non-persistent topic may have left (its timer, or
        a full container): its ids show no entries (PLS-NP-003), so no observation settles when it left."""
        producer = self.producer_of(handle)
        if not pf.batching or not pf.pending or producer is None or is_persistent(producer.topic.full):
            return
        if (full_counts and self._batch_full(pf)) or self._np_timer_due(handle, pf, when):
            raise NotModelledError(f"{what} while {handle}'s open batch on a non-persistent topic may have left "
                                   f"(its timer, {pf.batch_delay_ms:g} ms, or a full container)")

    @staticmethod
    def _batch_full(pf: ProducerFeatures) -> bool:
        """Whether the open batch's container is full (a message count or the bytes reached), so the
        client sent it at once (batching steps 2 and 4)."""
        cfg = pf.batch_config
        if cfg.full_batch_waits:
            return len(plan_batches(pf.pending, cfg)) > 1  # Go: a full batch waits for the next message (step 4)
        return (len(plan_batches(pf.pending, cfg)) > 1 or len(pf.pending) >= cfg.max_messages
                or sum(feature_payload_size(p.args) for p in pf.pending) >= cfg.max_bytes)

    def _np_timer_due(self, handle: str, pf: ProducerFeatures, when: float) -> bool:
        """Non-persistent topics (PLS-NP-003: ids show no entries): whether the open batch may have left by ``when``
        (Java and Go timers are periodic; C++'s starts with the batch's first message)."""
        return self._batch_timer(pf).periodic or when >= pf.pending[0].at.start + pf.batch_delay_ms

    def batch_may_have_left(self, handle: str, at: Span) -> bool:
        """Whether some of ``handle``'s pending messages may have left by ``at``: on its timer (PLS-BATCH-009), or
        at once with a full container (live 3.3.6, C++ client, 2026-11-27: one 100-byte async send with
        batching_max_bytes 64, then stats: backlog 1; regression pls-backlog-001-wrong-backlog-6130e6b9a9fe)."""
        pf, producer = self.pfx.get(handle), self.producer_of(handle)
        if pf is None or producer is None or not pf.batching or not pf.pending:
            return False
        if not is_persistent(producer.topic.full):
            return self._batch_full(pf) or self._np_timer_due(handle, pf, at.end)
        windows = self._pending_windows(producer, pf, None)
        return any(w.start <= at.end for w in windows.values()) if windows else self._batch_full(pf)

    def _open_batch_may_have_left(self, producer: Any, pf: ProducerFeatures, at: Span) -> bool:
        """Whether a message of the open batch (the one the container has not sent as full) may have left on its
        timer by ``at`` (PLS-BATCH-009)."""
        held = {pf.pending[i].label for i in open_batch(pf.pending, pf.batch_config)}
        windows = self._pending_windows(producer, pf, None)
        return any(w.start <= at.end for label, w in windows.items() if label in held)

    def _timer_batch_may_linger(self, pf: ProducerFeatures, at: Span) -> bool:
        """Whether a batch the model's own timer stored (a region message no longer pending, its split not yet
        settled) may still have been in the client at ``at``: a client's timer runs late by as much as a dispatch
        may (the slack), so within the slack after its leave window the batch may not have left yet. Live 4.0.8
        under two busy loops, 4 Dec 2026: a Go producer's ticker had not sent m7's batch (10 ms delay) when m10, a
        delayed message, went 9 ms later, ahead of it (regression pls-delay-006-wrong-value-f9cc21bdd16e)."""
        if not pf.region or not pf.timer_stored:
            return False
        pending = {p.label for p in pf.pending}
        windows = self._region_windows(pf)
        return any(w.end + self.slack_ms >= at.start for p, w in zip(pf.region, windows)
                   if p.label in pf.timer_stored and p.label not in pending)

    def batch_entries_unsure(self, topic: Any, at: Span) -> int:
        """PLS-BACKLOG-001 with PLS-BATCH-009: how many entries more than the model counts ``topic`` may hold by
        ``at``: pending messages that may have left (on a periodic timer each may be an entry of its own), and the
        messages the model stored on its timer whose split no flush has settled (each may be its own entry)."""
        extra = 0
        fx = self.tfx.get(topic.full)
        for handle, pf in self.pfx.items():
            producer = self.producer_of(handle)
            if not pf.batching or producer is None or producer.topic is not topic:
                continue
            if pf.pending and self.batch_may_have_left(handle, at):
                extra += len(pf.pending) if pf.region else len(plan_batches(pf.pending, pf.batch_config))
            pending = {p.label for p in pf.pending}
            stored = [topic.by_label[p.label] for p in pf.region if p.label not in pending and p.label in topic.by_label]
            entries = {fx.entry_of.get(pos, ("alone", pos))[0] if fx is not None else pos for pos in stored}
            extra += len(stored) - len(entries)
        return extra

    def check_batch_timer(self, handle: str, at: Span, args: Any = None) -> None:
        """A send on a batching producer (PLS-BATCH-009). Where the timer leaves the split open the model follows
        it (``_batch_joined``, ``_settle_region``), except where the order against other messages would be
        timing: a message stored on the topic while another producer's batch there may or may not have left; a
        delayed message beside a C++ open batch that may have left (C++ sends the delayed one ahead of a batch
        still open, PLS-DELAY-006); and on a non-persistent topic, whose ids show no entries (PLS-NP-003), any
        send or flush once the open batch may have left (live 4.0.8, Java, 2026-11-26: with 1 ms, two async sends
        0.4 ms apart and a flush 0.4 ms later made two entries)."""
        pf = self.pfx.get(handle)
        producer = self.producer_of(handle)
        if pf is None or producer is None:
            return
        topic = producer.topic
        if args is not None:
            async_batched = pf.batching and args.get("async") and "deliver_after_ms" not in args and "deliver_at_ms" not in args
            if any(self._unsettled_batchers(topic.full, handle)):  # else nothing of another producer can float
                item = PendingSend(args.get("payload", ""), dict(args), at, 0, None)
                mine = batching.leave_window(batch_items(pf.pending + [item]), [p.at for p in pf.pending + [item]],
                                             len(pf.pending), pf.batch_config, self._batch_timer(pf)) if async_batched else at
                self._refuse_floating(topic.full, mine, f"a message of {handle} on {topic.short} (which is first is timing)",
                                      besides=handle)
        delayed_send = args is not None and ("deliver_after_ms" in args or "deliver_at_ms" in args)
        # C++ and Go send the delayed message ahead of a batch still open, so whether the open batch left first is
        # timing (and a batch the model's timer stored may still be in the client: _timer_batch_may_linger); and when
        # the batch timer fires before a sync delayed send's receipt comes, the batch's receipt may come last, and
        # last_sequence_id is the batch's (live 4.0.8, 2026-11-27: regression pls-dedup-006-wrong-value-9745a1bf7f4b)
        ahead_of_batch = delayed_send and pf.batching and not pf.batch_config.delayed_sends_open_batch
        lingering = ahead_of_batch and self._timer_batch_may_linger(pf, at)
        if not pf.batching or not (pf.pending or lingering):
            return
        if pf.pending:
            self._refuse_np_batch(handle, pf, at.start, "a send or flush", full_counts=False)
        if lingering or (pf.pending and delayed_send and (
                (ahead_of_batch and self._open_batch_may_have_left(producer, pf, at))
                or (not args.get("async") and at.end >= pf.pending[0].at.start + pf.batch_delay_ms))):
            raise NotModelledError(f"a delayed send while {handle}'s open batch may leave on its timer (PLS-DELAY-006: "
                                   "which goes first, and whose receipt comes last, is timing)")

    def first_send_window(self, handle: str, args: Any, at: Span) -> Span:
        """When the first message of a batching producer ``handle`` would reach the broker (``check_batch_timer``'s
        window for it): the send itself, or, an async one, its batch's leave window (PLS-BATCH-009)."""
        pf = self.pfx.get(handle)
        if pf is None or not pf.batching or not args.get("async") or "deliver_after_ms" in args or "deliver_at_ms" in args:
            return at
        item = PendingSend(args.get("payload", ""), dict(args), at, 0, None)
        return batching.leave_window(batch_items([item]), [at], 0, pf.batch_config, self._batch_timer(pf))

    def check_close_drops_open_batch(self, handle: str, at: Span) -> None:
        """Closing a batching producer fails the messages of its open batch with AlreadyClosed and cancels the
        batch timer (C++ ``ProducerImpl::closeAsync``: ``cancelTimers``, ``failPendingMessages``; Java's
        ``closeAndClearPendingMessages``): the model drops what is still pending. What surely left (its window
        ended before the close) the model has stored already; a batch that may or may not have left when the
        close came may be stored all the same, so such a close is not followed (live 3.2.3, 27 Nov 2026, 3/3: an
        async send on a non-persistent topic with a 10 ms batch delay, the close 15 ms later, and the consumer got
        the message; regression pls-msg-001-wrong-value-e7aff73518b1)."""
        pf, producer = self.pfx.get(handle), self.producer_of(handle)
        if pf is None or producer is None or not pf.batching:
            return
        self._refuse_np_batch(handle, pf, at.end, f"closing {handle} (the broker may store it although the close fails "
                                                  "its sends)")
        self._refuse_floating(producer.topic.full, at, f"closing {handle} (the broker may store them although the "
                                                        "close fails their sends)", only=handle)

    def check_no_batch_in_flight(self, topics: set[str], at: Span, key_shared: frozenset[str] = frozenset()) -> None:
        """A receive on ``topics`` (full names). On a persistent topic a batching producer's open batch may or may
        not have left by then, and both are followed (PLS-BATCH-009): nothing, or a message stored within its leave
        window (the model's timer stores it ``delay`` after the batch's first message; a receipt of a message still
        pending stores it then: ``observe_batch_member``). On a non-persistent topic, whose ids show no entries, a
        receive while a batch may already have left is not followed (found live by the generated traces of issue 16).
        ``key_shared``: those of ``topics`` the receiver reads through a Key_Shared subscription, where an open split
        decides which consumer a message goes to (``_key_split_open``); a reader or another subscription type reads
        the entries in order whatever the split (random lies of 7 Dec 2026: a compacted reader's reads were not
        followed for a Key_Shared subscription's sake)."""
        for handle, pf in self.pfx.items():
            if not pf.pending and len(pf.region) < 2:
                continue  # nothing open, and no split left open (what _refuse_np_batch and _key_split_open ask)
            producer = self.producer_of(handle)
            if producer is not None and producer.topic.full in topics:
                self._refuse_np_batch(handle, pf, at.end, "a receive on its topic")
                if producer.topic.full in key_shared and self._key_split_open(producer, pf):
                    raise NotModelledError(f"a receive on a Key_Shared subscription while the split of {handle}'s "
                                           "batched messages is open (an entry's sticky key is its first message's, "
                                           "and the timer's phase is the client's)")

    def _key_split_open(self, producer: Any, pf: ProducerFeatures) -> bool:
        """PLS-KEYSHARED-001 with PLS-BATCH-009: whether a Key_Shared subscription of ``producer``'s topic would route
        the messages of its unsettled run (``pf.region``) differently by a split the timer leaves open. A batch is
        hashed by its first message's keys, so where the timer may cut between messages of different keys the entry
        each lands in, and so the consumer, is not known until a flush or a receipt's id settles it; the model
        follows the split once settled (``_write_split``), and a receive before that is not followed."""
        if len(pf.region) < 2 or not _key_shared_dispatchers(producer.topic):
            return False
        keys = {(p.args.get("ordering_key"), p.args.get("key"), p.args.get("key_bytes")) for p in pf.region}
        keyless_by_sequence = (None, None, None) in keys and self.key_shared.profile.keyless_producer_sequence
        if len(keys) < 2 and not keyless_by_sequence:
            return False
        items, sent, timer = batch_items(pf.region), [p.at for p in pf.region], self._batch_timer(pf)
        # an id already seen (a sync send's, a receipt's) with batch index b shows the b messages before it in its entry:
        # no cut between them, where the model keeps them in one entry too (both stored there, or both pending)
        fx, pending = self.topic_features(producer.topic), {p.label for p in pf.pending}

        def together(a: str, b: str) -> bool:
            if a in pending or b in pending:
                return a in pending and b in pending
            ea, eb = (fx.entry_of.get(producer.topic.by_label.get(x, -1)) for x in (a, b))
            return ea is not None and eb is not None and ea[0] == eb[0]

        joined = {i for j, p in enumerate(pf.region) if p.label in pf.region_ids
                  for i in range(max(j - max(int(pf.region_ids[p.label][3]), 0) + 1, 1), j + 1)
                  if together(pf.region[i - 1].label, pf.region[i].label)}
        start = 0
        for i in range(1, len(pf.region)):
            if i in pf.region_cuts:
                start = i  # a sync send emptied the container before i
                continue
            if i in joined:
                continue
            if batching.timer_cut_possible(sent, batching.open_since(items, pf.batch_config, start, i), i, timer):
                return True
        return False

    def drop_pending(self, handle: str) -> list[str]:
        """A checker that stops following producer ``handle`` forgets the messages it still holds in its batch:
        the model's timer must not store them (their receipts are then not judged). Returns their labels."""
        dropped = []
        for each in (handle, *self.partition_producers_of(handle)):
            pf = self.pfx.get(each)
            if pf is not None:
                dropped += [p.label for p in pf.pending]
                pf.pending = []
                pf.clear_region()
        return dropped

    def observe_batch_member(self, label: str, message_id: Any, at: Span, topic: str | None = None) -> list[tuple[str, str]]:
        """A consumer or reader received ``label`` with ``message_id`` during ``at`` (PLS-BATCH-009). If it was still
        pending, its batch left before: the model stores what is pending now. Its batch index says where its batch
        starts; returns what the batch rules say against it (``(rule, sentence)``), empty when it is allowed:
        received before its batch could have left, or with more messages before it in its batch than its
        producer's open run held. Once every message of the open run came with its id, the split is settled by
        those receipts (``_settle_from_receipts``). ``topic``: the (short) topic the receipt named; a copy on
        another topic (a dead-letter or retry copy) says nothing of how the original was batched."""
        self.receipt_settled = ()
        found = self._region_of(label)
        if found is None:
            return []
        handle, pf, k = found
        producer = self.producer_of(handle)
        if not is_persistent(producer.topic.full) or (topic is not None and topic != producer.topic.short):
            return []
        window = self._region_windows(pf)[k]
        broken: list[tuple[str, str]] = []
        if at.end < window.start:
            broken.append(("PLS-BATCH-009", f"{label} was received by {at.end:g} ms, but its batch could not leave before "
                                            f"{window.start:g} ms (sent from {pf.region[k].at.start:g} ms, "
                                            f"batching_max_delay_ms {pf.batch_delay_ms:g})"))
        if message_id is not None and len(message_id) == 4:
            index = int(message_id[3])
            start = max((c for c in pf.region_cuts if c <= k), default=0)
            if index > k - start:
                broken.append(("PLS-BATCH-009", f"{label} came with batch index {index}, but only {k - start} of "
                                                f"{producer.handle}'s messages were sent before it in the same run"))
            elif index >= pf.batch_config.max_messages:
                broken.append(("PLS-BATCH-009", f"{label} came with batch index {index}, beyond the container's "
                                                f"{pf.batch_config.max_messages} messages"))
            pf.region_ids[label] = [int(v) for v in message_id]
        if any(p.label == label for p in pf.pending):
            self._commit_pending(producer, pf, at)
        return broken + self._settle_from_receipts(producer, pf, at)

    def _settle_from_receipts(self, producer: Any, pf: ProducerFeatures, at: Span) -> list[tuple[str, str]]:
        """PLS-BATCH-009: when every message of ``producer``'s open run has been received, the receipts' ids show its
        split as a flush's would, and every batch of it has left: the split is settled now (``_settle_region``), so
        that an ack or a redelivery before the next flush is judged on the entries the broker wrote, not on the
        model's tentative ones (a Java timer that cut a run the model kept whole: an individual ack of the message it
        sent alone acks that entry). Returns the batch rules' objections to the split. A consumer's client writes a
        batch of one its own way (the Go driver says -1 for it, drivers/go idJSON), so what a batch of one's index
        says of its producer's client (PLS-BATCH-001) is left to the flush's ids."""
        if pf.pending or not pf.region or any(p.label not in pf.region_ids for p in pf.region):
            return []
        if any(p.deliver_at is not None for p in pf.region) or self.sent_ahead.get(producer.handle):
            return []  # a delayed message is written ahead of its batch (PLS-DELAY-006): the flush reads those
        labels = [p.label for p in pf.region]
        entries = batching.entries_from_ids(labels, pf.region_ids)
        if entries is not None:
            # a batch of one as its producer's client writes it (index 0 from C++, -1 from Java and Go: what its flush
            # would report), not as the consumer's client reads it (the Go driver says -1 for both: drivers/go idJSON)
            lone_index = 0 if self.profile_of(producer.handle).client == "cpp" else -1
            for e in entries:
                if len(e) == 1 and int(pf.region_ids[labels[e[0]]][3]) in (-1, 0):
                    pf.region_ids[labels[e[0]]] = [*pf.region_ids[labels[e[0]]][:3], lone_index]
        gaps = [] if entries is None else [
            f"{', '.join(labels[i] for i in e)} share an entry with batch indexes "
            f"{', '.join(str(pf.region_ids[labels[i]][3]) for i in e)}, not 0..{len(e) - 1}"
            for e in entries if len(e) > 1 and [int(pf.region_ids[labels[i]][3]) for i in e] != list(range(len(e)))
            or len(e) == 1 and int(pf.region_ids[labels[e[0]]][3]) > 0]
        settled = self._settle_region(producer, pf, at, None, False, receipts=True)
        if settled is None:
            return []
        self.receipt_settled = tuple(labels)
        self.settled_by_receipts.setdefault(producer.handle, set()).update(labels)
        pf.clear_region()  # every batch of the run left, as after a flush
        return [(rule, why) for rule, why in settled[1].get("split_violations", ())] + [("PLS-BATCH-001", g) for g in gaps]

    def id_unreported(self, label: str) -> bool:
        """True if ``label`` was sent async and no flush has reported its id yet (pending in the
        producer, or stored ahead of the flush)."""
        return (any(p.label == label for pf in self.pfx.values() for p in pf.pending)
                or any(label in ids for ids in self.flushed.values()))

    def _sync_send_settles(self, producer: Any, pf: ProducerFeatures, label: str, at: Span, observed, *,
                           timer_may_cut: bool = False) -> None:
        """A sync send on a batching producer (the last of ``pf.region``) empties its container: the runs before it
        are settled by its end (PLS-BATCH-009). Its id says how many messages its batch holds before it; the Go
        client's last_sequence_id is that batch's first message's (PLS-DEDUP-006), its own when it is alone or first
        in its batch (the ticker sent the messages before it in a batch of their own: live 4.0.8, Go, CI of 2 Dec
        2026). Alone it reads index -1: the Go driver says -1 for a batch of one (drivers/go idJSON: the client's
        ids cannot tell it from a message stored alone), as Java's id does for its unbatched batch of one.

        ``timer_may_cut``: whether the open batch before this send left is timing: the model put the send into the
        batch though its timer may have fired before the client added it (C++: the one-shot timer was due within the
        send's span), or the model's timer stored the batch though the client's may have run late
        (``_timer_batch_may_linger``). Then its id says which happened, and a C++ producer's last_sequence_id is its
        own batch's (first id + count - 1, ``dedup.batch_acknowledged``): live 4.0.8 under two busy loops, 4 Dec 2026, async m3 then a sync m5 joining
        it 5 ms later read 2, m5 alone in its batch (regression pls-dedup-006-wrong-value-9745a1bf7f4b, whose
        recorded history has m5 joining m3's batch and reads 1)."""
        pf.region_cuts[len(pf.region)] = at.end
        mid = observed.get("message_id") if observed else None
        if mid is None or len(mid) != 4 or list(mid)[:2] == [-1, -1]:
            return
        pf.region_ids[label] = [int(v) for v in mid]
        index = max(int(mid[3]), 0)  # -1: alone in its batch (above)
        if index >= len(pf.region):
            return
        profile = self.profile_of(producer.handle)
        if profile.last_sequence_id_batch_first:
            pf.sequence = dedup.send_acknowledged(pf.sequence, pf.region[-1 - index].sequence_id)
        elif timer_may_cut and not profile.last_sequence_id_highest:
            pf.sequence = dedup.batch_acknowledged(pf.sequence, [p.sequence_id for p in pf.region[len(pf.region) - 1 - index:]])
        producer.last_sequence_id = pf.sequence.last

    def _settle_region(self, producer: Any, pf: ProducerFeatures, at: Span, observed, delayed_any: bool, *,
                       receipts: bool = False):
        """PLS-BATCH-009 at a flush: its ids, with those seen before (receipts, sync sends), show how every batched
        message since the last flush was split (``batching.entries_from_ids``). A split the client may have made
        (``batching.match_split``) is the model's from now on, for the messages it stored already too
        (``_write_split``); one it cannot have made is reported (facts ``split_violations``) and the model writes
        its own plan. None: nothing to read (the model's own run, a duplicate's id, a delayed message among them).
        ``receipts``: the ids are consumers' (``_settle_from_receipts``), whose batch of one is their client's."""
        if not pf.batching or not pf.region or not is_persistent(producer.topic.full) or delayed_any:
            return None
        reported = dict(pf.region_ids)
        reported.update({k: [int(x) for x in v] for k, v in ((observed or {}).get("message_ids") or {}).items()})
        labels = [p.label for p in pf.region]
        stored_or_pending = {p.label for p in pf.pending} | {x for x in labels if x in self.labels}
        if any(x not in stored_or_pending or list(reported.get(x, [0, 0]))[:2] == [-1, -1] for x in labels):
            return None  # a duplicate's id shows no entry (PLS-DEDUP-001)
        entries = batching.entries_from_ids(labels, reported)
        if entries is None:
            return None
        match = batching.match_split(batch_items(pf.region), [p.at for p in pf.region], entries, pf.batch_config,
                                     self._batch_timer(pf), certain_cuts=sorted(pf.region_cuts), names=labels)
        if not self.profile_of(producer.handle).single_message_batch_unbatched and not receipts:
            # PLS-BATCH-001: C++ and Go write a batch of one as a batch (index 0); Java's is PLS-BATCH-008's
            lone = [labels[e[0]] for e in entries if len(e) == 1 and int(reported[labels[e[0]]][3]) != 0]
            if lone:
                match = batching.SplitMatch(match.cuts, match.violations + (
                    ("PLS-BATCH-001", f"{', '.join(lone)} alone in an entry with batch index "
                                      f"{', '.join(str(reported[x][3]) for x in lone)}: a batch of one has index 0"),))
        if not match.allowed:
            violations = [list(v) for v in match.violations]
            if self.profile_of(producer.handle).client == "cpp":
                # PLS-BATCH-002 states the C++ container and its timer: what breaks them breaks it too
                violations += [["PLS-BATCH-002", why] for rule, why in match.violations if rule == "PLS-BATCH-009"]
            return self._flush_pending(producer, pf, producer.topic, at, observed), {"split_violations": violations}
        return self._write_split(producer, pf, at, [[labels[i] for i in e] for e in entries], reported), {
            "timer_cuts": [labels[c] for c in match.cuts]}

    def _write_split(self, producer: Any, pf: ProducerFeatures, at: Span, entries: list[list[str]],
                     reported: Mapping[str, list[int]]) -> dict[str, list[int]]:
        """Make ``entries`` (labels, in the order written) the entries of ``pf.region`` (PLS-BATCH-009): the pending
        messages are written, the ones the model stored already lose their tentative entries and take these (ids,
        batch members); every window now ends with the flush. Returns the ids of the pending ones."""
        topic = producer.topic
        fx = self.topic_features(topic)
        prof = self.profile_of(producer.handle)
        left = self._pending_windows(producer, pf, at.end)
        pending = {p.label: p for p in pf.pending}
        pf.pending = []
        state = self._dedup_state(topic)
        for item in pending.values():
            state = dedup.persist(state, producer.name, item.sequence_id)  # no duplicate here (_settle_region)
        self.dedup_states[topic.full] = state
        held: dict[int, set[tuple[str, str]]] = {}  # position -> (topic, subscription) whose client holds its ack
        old_number: dict[str, int] = {}  # label -> the entry the model stored it in before (its tentative split)
        for label in (x for entry in entries for x in entry if x not in pending):
            pos = topic.by_label[label]
            old_number[label] = topic.entries[pos].message_id.entry
            old = fx.entry_of.pop(pos, None)
            if old is not None:
                fx.members.pop(old[0], None)
                for key, acked in list(self.app_acked.items()):
                    if key[0] == topic.full and key[2] == old[0] and pos in acked:
                        held.setdefault(pos, set()).add((key[0], key[1], key[3]))
                        acked.discard(pos)
                        if not acked:
                            del self.app_acked[key]
        sequence_of = {p.label: p.sequence_id for p in pf.region}
        ids: dict[str, list[int]] = {}
        for entry in entries:
            pf.sequence = dedup.batch_acknowledged(pf.sequence, [sequence_of[x] for x in entry],
                                                   highest=prof.last_sequence_id_highest,
                                                   first=prof.last_sequence_id_batch_first)  # PLS-DEDUP-006
            alone = len(entry) == 1 and int(reported[entry[0]][3]) < 0  # PLS-BATCH-008: a Java batch of one
            number = None
            kept = {old_number.get(x) for x in entry}
            if len(kept) == 1 and None not in kept and sum(n in kept for n in old_number.values()) == len(entry):
                # the model's timer stored exactly this entry already: it keeps its number (a fresh one would leave a
                # gap in the topic's entries that the next flush of another producer there would read as its own:
                # model fuzz of 4 Dec 2026, seed 10, trace 3438)
                number = kept.pop()
            elif not alone or entry[0] not in pending:
                number = fx.next_entry
                fx.next_entry += 1
            stamp = None  # the entry's publish time, its first message's (PLS-MSG-001 with PLS-BATCH-001)
            for index, label in enumerate(entry):
                if label in pending:
                    item = pending[label]
                    value = self._write(producer, topic, label, item.args, left.get(label, Span(item.at.start, at.end)),
                                        item.sequence_id, item.deliver_at, {}, pf,
                                        batch_index=None if alone else index, entry=number, entry_publish_time=stamp)
                    ids[label] = value["message_id"]
                    stamp = value["publish_time"]
                    continue
                pos = topic.by_label[label]
                stored = topic.entries[pos]
                mid = MessageId(topic.ledger, number, topic.partition_index, -1 if alone else index)
                topic.entries[pos] = replace(stored, message_id=mid, publish_time=stored.publish_time if stamp is None else stamp,
                                             stored=Span(stored.stored.start, max(stored.stored.start, min(stored.stored.end, at.end))))
                stamp = topic.entries[pos].publish_time
                if not alone:
                    fx.entry_of[pos] = (number, index)
                    fx.members.setdefault(number, []).append(pos)
                    for topic_full, sub, handle in held.get(pos, ()):  # PLS-BATCH-004: still held, now by its settled entry
                        self.app_acked.setdefault((topic_full, sub, number, handle), set()).add(pos)
                for written in self.flushed.values():
                    if label in written:
                        written[label] = mid.to_list()
        producer.last_sequence_id = pf.sequence.last
        rewritten = [topic.by_label[x] for entry in entries for x in entry if x in topic.by_label]
        for dispatcher in _key_shared_dispatchers(topic):
            dispatcher.forget_sticky_keys(rewritten)  # PLS-KEYSHARED-001: the settled entries' first keys
        return ids

    def _op_flush(self, args, at, observed):
        producer = self.producers.get(args["producer"])
        if producer is None:
            return self._handle_missing(args["producer"], "producer")
        for each in (producer.handle, *self.partition_producers_of(producer.handle)):
            self.check_batch_timer(each, at)
        if producer.handle in self.failed_last_send and self.profile_of(producer.handle).client == "java":
            # Live 4.0.8 (regression pls-batch-001-unexpected-rejection-71a206f32cda): the Java flush returns
            # the last send's future (ProducerImpl.LastSendFutureWrapper#handleOnce), so it fails once with
            # that send's error
            raise NotModelledError("a Java flush after a failed send (it reports that send's error once)")
        features = self.pfx.get(producer.handle)
        if features is not None and features.fenced:
            # PLS-ACCESS-004: a C++ producer that learned it was fenced (a send refused with ProducerFenced) is
            # closed: its flush fails with AlreadyClosed (live 4.2.4 and 4.0.8, Python client, 2026-11-27, 3/3:
            # regression pls-batch-001-unexpected-rejection-3271e68de915). Before it learned, the flush races
            # the client's reconnect: not modelled.
            if features.fence_known:
                return Rejected("AlreadyClosed", "PLS-ACCESS-004",
                                f"producer {producer.name} was fenced by an ExclusiveWithFencing producer and is closed")
            raise NotModelledError("a flush of a fenced producer before a send told its client it was fenced")
        refused = self.async_refusal_of_flush(producer)
        if refused is not None:
            return refused  # what it still did: commit_async_refusal_of_flush
        yield  # decided: the producer's pending messages are written
        if producer.topic.partitions:
            return self._flush_partitioned(producer, at, observed)
        ids, facts = self._flush_one(producer, self.pfx.setdefault(producer.handle, ProducerFeatures()), at, observed)
        facts.pop("relative_ids_from")
        self.facts = facts
        return self.as_sender_reports(producer, {"message_ids": ids, "id_texts": {k: str(MessageId.from_list(v)) for k, v in ids.items()}})

    def _flush_partitioned(self, producer: Any, at: Span, observed) -> dict:
        """A partitioned producer's flush flushes each partition's producer (Java PartitionedProducerImpl#flushAsync,
        C++ PartitionedProducerImpl::flushAsync, Go partitionedProducer.Flush) and reports the ids of the async sends
        no flush reported yet. An unbatched async send was written when it was made, on the partition the history
        shows (``Broker._op_send``); a batched one waits in the open batch of its partition's producer
        (``Broker.partition_producer``), which is flushed as a producer of its own: each partition is a topic with
        its own entries, so its split is read and judged on its own (PLS-BATCH-001/002/009)."""
        pf = self.pfx.setdefault(producer.handle, ProducerFeatures())
        if pf.pending:
            raise ModelError(f"{producer.handle}: a batch pending on a partitioned producer itself, not on a partition's")
        ids = self.flushed.pop(producer.handle, {})
        persistent = is_persistent(producer.topic.full)
        stored = {k: v for k, v in ids.items() if list(v)[:2] != [-1, -1] and persistent}
        facts: dict[str, Any] = {"rules": ["PLS-BATCH-001", "PLS-BATCH-002"] if pf.batching else ["PLS-BATCH-007"],
                                 "may_report_duplicate": sorted(self.resent_as_duplicate.pop(producer.handle, set()) & set(ids))}
        reasons = [f"{', '.join(ids)}: one entry each, in send order on each partition."] if ids else []
        for handle in self.partition_producers_of(producer.handle):
            part = self.partition_producers[handle]
            mine, part_facts = self._flush_one(part, self.pfx[handle], at, observed)
            if not mine:
                continue
            ids.update(mine)
            stored.update(part_facts["relative_ids_from"])
            facts["rules"] = list(dict.fromkeys(facts["rules"] + part_facts["rules"]))
            facts["may_report_duplicate"] = sorted(set(facts["may_report_duplicate"]) | set(part_facts["may_report_duplicate"]))
            for key in ("split_violations", "timer_cuts"):
                if part_facts.get(key):
                    facts.setdefault(key, []).extend(part_facts[key])
            if part_facts["np_ids"]:
                facts.setdefault("np_ids", {}).update(part_facts["np_ids"])
            reasons.append(f"partition {part.topic.partition_index}: {part_facts['reason']}")
        facts["relative_ids"] = relative_ids(stored)
        facts["reason"] = " ".join(reasons) or "nothing is pending: every send since the last flush was reported."
        self.facts = facts
        return {"message_ids": ids, "id_texts": {k: str(MessageId.from_list(v)) for k, v in ids.items()}}

    def _flush_one(self, producer: Any, pf: ProducerFeatures, at: Span, observed) -> tuple[dict[str, list[int]], dict]:
        """Flush one producer (an application's on a topic that is not partitioned, or a partition's producer):
        write what is pending, read the split the flush's ids show (PLS-BATCH-009); returns the ids it reports (the
        ones written now and those written since the last flush) and what the batch rules say of them (facts;
        ``relative_ids_from``: the ids ``relative_ids`` is judged on)."""
        labels = [p.label for p in pf.pending]
        delayed_any = any(p.deliver_at is not None for p in pf.pending) or bool(self.sent_ahead.pop(producer.handle, None))
        settled = self._settle_region(producer, pf, at, observed, delayed_any)  # PLS-BATCH-009
        by_receipts = self.settled_by_receipts.pop(producer.handle, set())
        region = [p.label for p in pf.region]
        ids, split = settled if settled is not None else (self._flush_pending(producer, pf, producer.topic, at, observed), {})
        pf.clear_region()  # a flush settles every batch since the last one
        earlier = self.flushed.pop(producer.handle, {})
        ids = {**earlier, **ids}
        rules = ["PLS-BATCH-001", "PLS-BATCH-002"] if pf.batching else ["PLS-BATCH-007"]
        if pf.batching and pf.batch_config.key_based:
            rules.append("PLS-BATCH-003")  # C++ first-message order, Java last-message order
        if settled is not None:
            rules.append("PLS-BATCH-009")  # where the timer may have cut, the split the ids show
        if delayed_any:
            rules.append("PLS-DELAY-006")
        # A duplicate's id (-1, -1) and a non-persistent message's (PLS-NP-003: every one has the same
        # id, so there is no entry layout to judge) say nothing of how the batch was written.
        persistent = is_persistent(producer.topic.full)
        stored = {k: v for k, v in ids.items() if list(v)[:2] != [-1, -1] and persistent}
        if settled is not None:
            # the split is judged by batching.match_split (split_violations): the model's own numbering (it may
            # have stored some of them before, on its timer) is no second opinion on the ids
            stored = {k: v for k, v in (observed.get("message_ids") or {}).items() if k in stored}
        else:
            # the receipts settled these (_settle_from_receipts) and their split was judged there; the model's numbering
            # of the rest may hold another producer's floating messages between them
            stored = {k: v for k, v in stored.items() if k not in by_receipts}
        reason = (f"{', '.join(region)}: a split the batch container and its timer allow"
                  + (f" (the timer sent the open batch before {', '.join(split['timer_cuts'])})" if split.get("timer_cuts") else "")
                  + "." if settled is not None else
                  f"{', '.join(labels)}: entries and batch indexes as the batch rules plan them.")
        # PLS-NP-003: a non-persistent message's id names no entry, only the partition its sender reports (-1 from a
        # producer opened on a partition's name, as ``_write``'s np_partition)
        opened_on_partition = producer.topic.partition_index >= 0 and producer.handle not in self.partition_producers
        shown = -1 if opened_on_partition else producer.topic.partition_index
        # its batch index is the split's when the producer batches (None: not judged), -1 when it does not
        np_ids = {} if persistent else {k: [0, 0, shown, None if pf.batching else -1] for k in ids}
        return ids, {"relative_ids": relative_ids(stored), "relative_ids_from": stored, "rules": rules, "reason": reason,
                     **split, "np_ids": np_ids,
                     "may_report_duplicate": sorted(self.resent_as_duplicate.pop(producer.handle, set()) & set(ids))}

    # ------------------------------------------------------------------ consumers

    def _feature_subscribe_check(self, args, sub_type: str, full: str | None) -> Rejected | None:
        """PLS-COMPACT-005 (Go: -007): read_compacted only on persistent Exclusive/Failover subscriptions."""
        if args.get("read_compacted"):
            persistent = full is None or is_persistent(full)
            why = compaction.check_read_compacted(sub_type, persistent=persistent,
                                                  checked_by_client=self.args_profile(args).read_compacted_checked_by_client)
            if why is not None:
                return why
        return None

    def _feature_subscribed(self, config: Any, sub: Any, args) -> None:
        broker_on = self.profile.broker_batch_index_ack
        self.index_ack[config.handle] = bool(args.get("batch_index_ack", False)) and broker_on
        self.client_index_ack[config.handle] = bool(args.get("batch_index_ack", False))
        if args.get("read_compacted"):
            self.reads_compacted.add(config.handle)
        else:
            self.reads_compacted.discard(config.handle)

    def _feature_ack(self, config: Any, sub: Any, pos: int, at: Span) -> list[int] | None:
        """PLS-BATCH-004/005: which positions an app ack of ``pos`` acks at the broker (None: the core rule)."""
        fx = self.tfx.get(sub.topic.full)
        if fx is None or pos not in fx.entry_of:
            return None
        if self.index_ack.get(config.handle, False):
            return None  # batch index ack: the index is acked at once
        members = fx.members[fx.entry_of[pos][0]]
        if self._mark_batch_acks(config, sub, fx.entry_of[pos][0], [pos]):
            return [p for p in members if not sub.cursor.is_acked(p)]
        return []  # held on the client until every index is acked

    def _feature_ack_cumulative(self, config: Any, sub: Any, pos: int) -> int | None:
        """PLS-BATCH-004: the position a cumulative ack of ``pos`` acks up to at the broker (None: ``pos`` itself, the
        core rule). A consumer without batch index ack keeps a batch's acks on the client: a cumulative ack of one of
        its messages marks it and those before it in the batch, and sends a cumulative ack of the whole entry once
        every index is marked, else of the entry before it (apache/pulsar ``ConsumerImpl`` and
        ``MessageIdAdvUtils#acknowledge`` / ``#prevMessageId``; pulsar-client-go ``consumer_partition.go``
        ``internalAckIDCumulative``: ``ackCumulative``, else ``prev()``; pulsar-client-cpp ``BatchMessageAcker``).
        So the entry comes back whole after a redelivery (ConsumerRedeliveryTest#testAckNotSent, Cumulative;
        pulsar-client-go TestConsumerBatchCumulativeAck; pulsar-client-cpp BatchMessageTest testCumulativeAck)."""
        fx = self.tfx.get(sub.topic.full)
        if fx is None or pos not in fx.entry_of or self.client_index_ack.get(config.handle, False):
            return None
        entry = fx.entry_of[pos][0]
        members = fx.members[entry]
        if self._mark_batch_acks(config, sub, entry, [p for p in members if p <= pos]):
            return max(members)
        return min(members) - 1

    def _mark_batch_acks(self, config: Any, sub: Any, entry: int, positions: list[int]) -> bool:
        """PLS-BATCH-004: ``config``'s client marks ``positions`` of batch ``entry`` acked; True (its marks dropped) once
        every index of the entry is marked or acked at the broker, so the client acks the whole entry."""
        key = (sub.topic.full, sub.name, entry, config.handle)
        acked = self.app_acked.setdefault(key, set())
        acked.update(positions)
        members = self.tfx[sub.topic.full].members[entry]
        if batching.entry_acked(len(members), {i for i, p in enumerate(members) if p in acked or sub.cursor.is_acked(p)}):
            self.app_acked.pop(key, None)
            return True
        return False

    def check_cumulative_in_batch(self, config: Any, sub: Any, pos: int, label: str) -> None:
        """Not followed (PLS-BATCH-004 with PLS-BATCH-009): a cumulative ack, without batch index ack, of a received
        batched message whose entry may be another than the model's (``_split_open``): the entry before it, or whether
        every index of it is marked, would be the model's guess (review of 6 Dec 2026: Java, a timer cut before b, the
        model's tentative entry a, b, c)."""
        fx = self.tfx.get(sub.topic.full)
        if fx is None or pos not in fx.entry_of or self.client_index_ack.get(config.handle, False) \
                or label not in self.received_labels.get(config.handle, ()):
            return
        if self._split_open(label):
            raise NotModelledError(f"a cumulative ack of {label}, a batched message whose batch split no flush has "
                                   "settled and a timer may have cut")

    def _split_open(self, label: str) -> bool:
        """PLS-BATCH-009: whether the entry ``label`` is in may be another than the model's: its producer's batches since
        the last flush are not settled, and a timer may have cut the run that holds it (``batching.timer_cut_possible``
        at some boundary of it)."""
        found = self._region_of(label)
        if found is None:
            return False
        _, pf, _ = found
        items, sent, timer = batch_items(pf.region), [p.at for p in pf.region], self._batch_timer(pf)
        cuts = set(pf.region_cuts)
        start = 0
        for i in range(1, len(items)):
            if i in cuts:
                start = i
            elif batching.timer_cut_possible(sent, batching.open_since(items, pf.batch_config, start, i), i, timer):
                return True
        return False

    def forget_batch_marks(self, handle: str) -> None:
        """PLS-BATCH-004: ``handle`` closed or asked for its messages again: the batch acks its client held are gone
        with the messages they marked (a redelivered entry comes with a fresh acker)."""
        handles = {handle} | {config.handle for config, _ in self.attachments(handle)}
        for key in [k for k in self.app_acked if k[3] in handles]:
            del self.app_acked[key]

    def _producer_id_ack(self, config: Any, sub: Any, pos: int, label: str, *, cumulative: bool) -> list[int] | int | None:
        """PLS-BATCH-010: what an ack of batched message ``label`` acks at the broker when its consumer never
        received it (the target then acks by the id the producer returned: ``_message_ref`` in the targets), or
        None when the ack is an ordinary one (a received message, or one not in a batch). An individual ack: the
        positions it acks (the whole entry, or none); a cumulative one: the position it acks up to (the entry's
        last, or the one before its first)."""
        fx = self.tfx.get(sub.topic.full)
        if fx is None or pos not in fx.entry_of or label in self.received_labels.get(config.handle, ()):
            return None
        members = fx.members[fx.entry_of[pos][0]]
        reach = batching.producer_id_ack_reach(
            self.profile_of(config.handle).client, cumulative=cumulative,
            client_batch_index_ack=self.client_index_ack.get(config.handle, False),
            own_producer_id=self.sender_client.get(label) == "cpp")
        if cumulative:
            return max(members) if reach == "entry" else min(members) - 1
        return list(members) if reach == "entry" else []

    def _feature_nack_positions(self, config: Any, sub: Any, pos: int) -> list[int]:
        """PLS-BATCH-006: a nack redelivers the whole entry; PLS-NP-002: nothing on non-persistent topics."""
        fx = self.tfx.get(sub.topic.full)
        if fx is None or pos not in fx.entry_of:
            return [pos]
        entry, index = fx.entry_of[pos]
        self.app_acked.pop((sub.topic.full, sub.name, entry, config.handle), None)  # the client forgets the entry's acks
        members = fx.members[entry]
        # Without batch index ack the broker holds no partial acks of the entry (they wait on the
        # client, forgotten now), so its acked indexes are empty or all.
        again = batching.nack_redelivers(len(members), index, {i for i, p in enumerate(members) if sub.cursor.is_acked(p)},
                                         batch_index_ack=self.index_ack.get(config.handle, False))
        return [members[i] for i in again if not sub.cursor.is_acked(members[i])]

    def _backlog_removed_by(self, sub: Any, change: Callable[[], Any]) -> int:
        """How many entries ``change()`` (a cursor move) takes off ``sub``'s backlog (PLS-BACKLOG-001)."""
        before = self._feature_backlog(sub.topic, sub)
        change()
        return before - self._feature_backlog(sub.topic, sub)

    def _feature_backlog(self, topic: Any, sub: Any) -> int:
        """PLS-BACKLOG-001: entries (a batch counts once, a chunked message once per chunk: each chunk
        is an entry of its own) with an unacked message."""
        fx = self.tfx.get(topic.full)
        entries: dict[tuple[str, int], list[int]] = {}
        for m in topic.entries:
            entries.setdefault(fx.entry_key(m.pos) if fx is not None else ("p", m.pos), []).append(m.pos)
        groups = list(entries.values())
        extra_chunks = sum(n - 1 for p, n in (fx.chunks.items() if fx is not None else ()) if not sub.cursor.is_acked(p))
        return extra_chunks + batching.backlog_entries([len(g) for g in groups],
                                                       [{i for i, p in enumerate(g) if sub.cursor.is_acked(p)} for g in groups])

    # ------------------------------------------------------------------ retention

    def _trimmable_at_creation(self, topic: Any, exclude: Any = None) -> set[int]:
        """PLS-RETENTION-001: positions acked on every other subscription, with no retention policy:
        the broker may delete them (a ledger at a time), so a new Earliest subscription or reader
        may or may not read them. With retention (PLS-RETENTION-002) nothing is trimmable."""
        if False not in retention.acked_may_be_read(retention_covers=bool(self.policy_for(topic).retention)):
            return set()  # PLS-RETENTION-002: retained data must stay readable
        if not is_persistent(topic.full):
            return set()
        # a non-durable subscription (PLS-SUB-007) does not keep data from being deleted
        others = [s for s in topic.subscriptions.values() if s is not exclude and s.durable]
        if not others:
            return set()
        # A position another subscription may itself have found deleted (its own ``trimmable``: acked everywhere when
        # it was made, and not delivered to it since) keeps nothing either: the ledger may be gone already (live
        # 5.0.0-M1, 4.0.8 and 3.3.6, 27 Nov 2026: m1 acked on sx1, an unload, sx2 made at Earliest through the admin
        # API, then s2 at Earliest: s2 never got m1, 3/3; regression pls-sub-003-lost-message-4a4c056431d5).
        return {m.pos for m in topic.entries if all(s.cursor.is_acked(m.pos) or m.pos in s.trimmable for s in others)}

    def trimmable(self, handle: str) -> set[int]:
        """Positions ``handle`` may find deleted and not yet read or acked (checker: allowed-outcome set)."""
        reader = self.readers.get(handle)
        if reader is not None:
            return {p for p in reader.trimmable if p >= reader.next_pos}
        found = self.consumers.get(handle)
        if found is None or handle in self.partition_consumers:
            return set()
        sub = found[1]
        return {p for p in sub.trimmable if not sub.cursor.is_acked(p)}

    def ledger_closed_by(self, handle: str, positions: set[int], at: Span) -> tuple[list[str], str | None]:
        """PLS-RETENTION-001: the labels at ``positions`` of ``handle``'s topic, and what may have closed
        the ledger holding them by ``at`` (``retention.ledger_closed_by``; None: it is still open)."""
        reader = self.readers.get(handle)
        found = self.consumers.get(handle)
        topic = reader.topic if reader is not None else found[1].topic if found is not None else None
        if topic is None:
            return [], "an unknown topic"
        stored = [topic.entries[p] for p in sorted(positions) if 0 <= p < len(topic.entries)]
        labels = [m.label for m in stored]
        if not stored:
            return labels, "nothing stored"
        return labels, retention.ledger_closed_by(
            first_written_ms=min(m.stored.start for m in stored), last_written_ms=max(m.stored.end for m in stored),
            now_ms=at.end, unloads_ms=tuple(self.unloads.get(topic.full, ())), entries_in_topic=len(topic.entries))

    def trim(self, handle: str, at: Span) -> list[str]:
        """The broker deleted the trimmable data: it is gone for ``handle`` (returns the labels)."""
        gone = sorted(self.trimmable(handle))
        reader = self.readers.get(handle)
        if reader is not None:
            reader.skip |= set(gone)
            self._reader_skip(reader)
            return [reader.topic.entries[p].label for p in gone]
        sub = self.consumers[handle][1]
        newly: list[int] = []
        removed = self._backlog_removed_by(sub, lambda: newly.extend(p for p in gone if sub.cursor.ack(p)))
        if newly and sub.dispatcher is not None:
            sub.dispatcher.acked(newly, at)
            for p in newly:
                sub.dispatcher.ghosts.pop(p, None)  # deleted before this subscription could have it: no queued copy
        # The history shows the data gone for this consumer (nothing came), not that the broker's count forgot it:
        # live 4.0.0, 27 Nov 2026 (regression pls-backlog-001-wrong-backlog-d2decbdd1648, 2 runs in 3): m1 acked
        # on sx1, an unload, sx2 at Earliest got nothing in 500 ms, and its stats then said backlog 1.
        sub.trimmed_uncertain += removed
        sub.trimmable = set()
        return [sub.topic.entries[p].label for p in gone]

    def _compacted_skip(self, topic: Any) -> set[int]:
        """PLS-COMPACT-001, -003, -004, -006: positions up to the horizon that a compacted reader does not see."""
        fx = self.tfx.get(topic.full)
        if fx is None or fx.horizon is None:
            return set()
        msgs = tuple(compaction.KeyedMessage(str(m.pos), m.key, b"" if m.pos in fx.tombstone else b"x",
                                             null_value=fx.tombstone.get(m.pos) == "null")
                     for m in topic.entries)
        kept = {int(m.name) for m in compaction.read_compacted(  # PLS-COMPACT-006: tombstones delete
            msgs, fx.horizon, retain_null_key=self.profile.compaction_retains_keyless)}  # PLS-COMPACT-003
        return {p for p in range(fx.horizon + 1) if p not in kept}


def _key_shared_dispatchers(topic: Any) -> list[Any]:
    """The dispatchers of ``topic``'s Key_Shared subscriptions (PLS-KEYSHARED-001: they route a batch by its first
    message's key)."""
    return [s.dispatcher for s in topic.subscriptions.values()
            if s.dispatcher is not None and s.dispatcher.type_name == "Key_Shared"]
