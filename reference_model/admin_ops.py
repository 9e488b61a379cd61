"""Admin operations on topics and subscription cursors: deleting a topic, resetting a cursor, skipping and
clearing a subscription's backlog.

Pulsar part: the admin REST API's ``PersistentTopics`` (``DELETE /admin/v2/persistent/{tenant}/{ns}/{topic}``,
``.../partitions`` for a partitioned topic; ``POST .../subscription/{sub}/resetcursor/{timestamp}`` and
``.../resetcursor`` with a ``ResetCursorData`` body; ``POST .../subscription/{sub}/skip/{n}`` and ``.../skip_all``)
and what they call: ``BrokerService#deleteTopic`` -> ``PersistentTopic#delete`` / ``#deleteForcefully``,
``PersistentSubscription#resetCursor``, ``#skipMessages`` (``ManagedCursorImpl#asyncSkipEntries``) and
``#clearBacklog``. Sources: apache/pulsar ``pulsar-broker/src/main/java/org/apache/pulsar/broker/service/persistent/
PersistentTopic.java`` (``delete(failIfHasSubscriptions, failIfHasBacklogs, closeIfClientsConnected)``),
``.../admin/v2/PersistentTopics.java`` (``deleteTopic``: "The topic cannot be deleted if delete is not forcefully
and there's any active subscription or producer connected to the it."), ``managed-ledger/.../ManagedCursorImpl.java``
(``asyncSkipEntries``), ``.../persistent/PersistentMessageFinder.java`` (a timestamp's position).
Rule ids: PLS-TOPIC-004 (a delete is refused while a client is connected), PLS-TOPIC-005 (a deleted topic's
messages and subscriptions are gone; a later subscribe or send creates it anew, empty), PLS-SEEK-004 (after an
admin reset the subscription's next delivery is the first message at or after the reset point), PLS-SKIP-001
(skip n acks the n oldest unacked entries), PLS-SKIP-002 (clearing the backlog acks every entry stored so far).

The steps read like the docs, one sentence each:
1. Delete (not forced): the broker refuses while any producer or consumer (a reader is a consumer) is connected
   (``currentUsageCount() > 0``: HTTP 412 "Topic has active producers/subscriptions"); otherwise it deletes every
   subscription (connected or not: ``delete()`` does not fail on subscriptions) and the ledger. A forced delete
   with nobody connected does the same. The topic's name is free again: the next subscribe or send auto-creates an
   empty topic, a new ledger, no subscriptions (``allowAutoTopicCreation``). A non-persistent topic is refused and
   deleted alike (``NonPersistentTopic#delete``); one the broker does not hold is no 404 but a success, with nothing
   to delete (``BrokerService#deleteTopic`` has no managed ledger to remove for a non-persistent name).
2. Reset: the subscription's cursor moves to a message id (that entry itself; after it with ``isExcluded``; a batched
   message's id: ``batched_reset_point``), to the
   first entry published at or after a timestamp (the finder's newest entry published *before* it, then the next),
   or to the earliest / latest position; acks at or after the point are forgotten, before it everything counts as
   acked. The broker disconnects the subscription's consumers first; they reconnect. Unlike a client's seek, no
   client knows of the reset: a consumer keeps what its receiver queue had prefetched (the dispatcher's ``reset``
   with no seeker), so such a copy may surface once more.
3. Skip n: the mark-delete position moves past the first n entries after it that are not acked individually
   (``getNumIndividualDeletedEntriesToSkip``), so exactly the n oldest unacked entries are acked (a batch is one
   entry); past the end it stops at the last entry.
4. Clear backlog (``skip_all``): the mark-delete position moves to the last entry: every entry stored so far is
   acked. Without a subscription named, every subscription of the topic (the live target asks for the list).
Skipped and cleared messages are acked as by an application's ack (a consumer may still hold a prefetched copy,
which may surface once: a ghost, as for an expiry pass).
5. A deleted topic's schema goes with it, from 2.11.0 (apache/pulsar PR #14608: ``PersistentTopic#delete`` ->
   ``AbstractTopic#deleteSchema`` -> ``SchemaRegistryService#deleteSchemaStorage``, the ledger itself and not a
   delete marker, so the next schema is stored as version 0 unchecked); a partitioned topic's when the whole topic is
   deleted, not when one partition is (PR #21574, from 2.11.4 and 3.2.0; before it one partition's delete took the
   schema the partitions share). Before 2.11.0 the REST delete keeps the schema (``deleteSchema`` defaults to false).
   Live 4.0.8, 6 Dec 2026 (case topic-delete-takes-schema, Python and Java): a persistent, a partitioned and a non-persistent topic's
   schema gone with them, a partition's kept.
6. A non-persistent topic has no cursor (``non_persistent_cursor_refusal``): a reset to a publish time succeeds and
   moves nothing; a skip, a clear_backlog and a reset to an id or a position fail with HTTP 500 (the handlers cast the
   topic to a persistent one), whatever the subscription, and change nothing either. On a partitioned one a skip and a
   reset to a position are refused 405 first, as on a persistent one. Live 4.0.8, 6 Dec 2026 (case
   np-admin-cursor-ops; tests/conformance/test_np_admin_cursor_ops.py).

Not modelled (``NotModelledError``): a forced delete with clients connected (they are disconnected, reconnect and
auto-create the topic again while the delete runs), a topic written in a transaction, a topic a dead-letter or retry
producer of a connected consumer writes to; any of the cursor ops on a non-durable subscription, or on a topic with transactional messages; a topic-wide
clear_backlog of a partitioned topic whose partitions do not all have the same subscriptions; a skip whose n oldest unacked entries include chunks of a chunked message; a reset
back over a message that went to a dead-letter topic (as for seek).
On a partitioned topic (``PersistentTopicsBase``): a reset to a publish time and a clear_backlog are applied to
every partition's subscription (``internalResetCursor``, ``internalSkipAllMessages`` fan a partitioned name out;
a partition without the subscription answers 404); a skip and a reset to a message id or to earliest / latest are
refused, HTTP 405 (``internalSkipMessages``: "Skip messages on a partitioned topic is not allowed";
``internalResetCursorOnPosition``: "Reset-cursor at position is not allowed for partitioned-topic"), whether the
subscription exists or not.
Choices: the refusal of a delete is ``NotAllowedError`` in a trace (HTTP 412, the broker's TopicBusyException);
HTTP 405 is ``NotAllowedError`` too (the Java admin's NotAllowedException);
a missing topic is ``TopicNotFound``, a missing subscription ``SubscriptionNotFound`` (HTTP 404).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from reference_model import names
from reference_model.cursor import position_by_publish_time
from reference_model.names import is_persistent, partition_name
from reference_model.rejections import ModelError, NotModelledError, Rejected

DELETE_REFUSED = "NotAllowedError"  # HTTP 412 "Topic has active producers/subscriptions"


# ====================================================================== the pure rules


def delete_refusal(connected: Sequence[str], *, force: bool) -> str | None:
    """PLS-TOPIC-004, step 1: why a delete is refused (None: it deletes). ``connected``: the producers, consumers
    and readers connected to the topic (or to one of its partitions)."""
    if connected and not force:
        return (f"Topic has active producers/subscriptions: {', '.join(sorted(connected))} connected "
                "(a delete that is not forced needs none)")
    return None


def reset_start(publish_times: Sequence[int], *, message_pos: int | None = None, excluded: bool = False,
                publish_time: int | None = None, position: str | None = None) -> int:
    """PLS-SEEK-004, step 2: the position the subscription's next delivery starts from, given one of a message's
    position (``excluded``: the one after it), a publish time, or ``earliest`` / ``latest``. ``publish_times`` are
    the topic's messages' in position order; ``len(publish_times)`` is "after the last one"."""
    if message_pos is not None:
        return message_pos + 1 if excluded else message_pos
    if publish_time is not None:
        return position_by_publish_time(publish_times, publish_time)  # the same finder as a seek by time
    if position == "earliest":
        return 0
    if position == "latest":
        return len(publish_times)
    raise ValueError("reset_start needs one of message_pos, publish_time, position")


def batched_reset_point(entry: Sequence[int], message_pos: int, *, excluded: bool, batch_index_ack: bool) -> tuple[int, bool]:
    """PLS-SEEK-004, step 2 for a batched message's id (its ``entry``'s positions, in batch index order): the message
    position and ``excluded`` to give ``reset_start``. The broker reads the entry's batch size and moves the cursor to
    the entry with an ack set that marks the indexes before the id's (through it, excluded) as acked
    (``PersistentTopicsBase#calculatePositionAckSet``; excluded and the last index: the next entry). The ack set
    counts only with ``acknowledgmentAtBatchIndexLevelEnabled`` (the cursor keeps it as the entry's deleted batch
    indexes, the dispatcher sends them and the client skips those messages): then the reset is to that message;
    without it the whole entry is read again, from its first message."""
    if batch_index_ack:
        return message_pos, excluded
    if excluded and message_pos == entry[-1]:
        return message_pos, True
    return entry[0], False


NON_PERSISTENT_CURSOR_ERROR = "OtherError"  # HTTP 500: the live target records it indeterminate


def non_persistent_cursor_refusal(op: str, args: dict, *, subscription_exists: bool, rule: str,
                                  missing_certain: bool = True) -> Rejected | None:
    """Step 6: an admin cursor op on a non-persistent topic (or partition), which has no cursor to move. A reset to a
    publish time succeeds and moves nothing (``NonPersistentSubscription#resetCursor(long)`` completes at once; a
    missing subscription is 404); every other op meets the handlers' cast of the topic to a persistent one and fails
    with HTTP 500, whatever the subscription (``PersistentTopicsBase#internalSkipMessages``,
    ``#internalSkipAllMessages``, ``#internalResetCursorOnPosition``). The 500 is an unexpected server error, so the
    refusal is not ``certain``: the live target records it indeterminate, and nothing follows from it either way.
    ``missing_certain`` False: the subscription was there and its consumers have gone, after which the broker drops a
    non-durable one, and a durable one too in the releases measured (not confirmed in the source for every release)."""
    if op == "reset_cursor" and "publish_time_of" in args:
        if not subscription_exists:
            return Rejected("SubscriptionNotFound", rule, f"no subscription {args['subscription']!r} on {args['topic']}",
                            certain=missing_certain)
        return None
    return Rejected(NON_PERSISTENT_CURSOR_ERROR, rule, f"HTTP 500: {op} on a non-persistent topic (the admin handler "
                    "casts it to a persistent topic)", certain=False)


def skipped_entries(unacked_entries: Sequence[Sequence[int]], count: int) -> list[int]:
    """PLS-SKIP-001, step 3: the positions ``skip count`` acks: every position of the ``count`` oldest entries that
    still hold an unacked message (``unacked_entries``, oldest first; an entry is its positions, a batch several),
    all of them when there are fewer."""
    return [p for entry in unacked_entries[:max(0, count)] for p in entry]


def cleared_entries(unacked_entries: Sequence[Sequence[int]]) -> list[int]:
    """PLS-SKIP-002, step 4: clearing the backlog acks every position of every entry stored so far."""
    return [p for entry in unacked_entries for p in entry]


# ====================================================================== the broker's steps


class AdminOps:
    """Mixin of ``reference_model.broker.Broker``: the steps of ``delete_topic``, ``reset_cursor``, ``skip`` and
    ``clear_backlog`` (``Broker.STEPS``). ``_init_admin`` runs in ``Broker.__init__``."""

    def _init_admin(self) -> None:
        # PLS-TOPIC-005: label -> (the deleted topic or partition, its position there, when the delete returned, the
        # full name the delete named): a message of a deleted topic is no message of the topic that later takes its name
        self.deleted_labels: dict[str, tuple[Any, int, float, str]] = {}
        # PLS-TOPIC-005: (topic full name, subscription) -> when a delete removed it (until a subscribe makes it again)
        self.deleted_subscriptions: dict[tuple[str, str], float] = {}
        self.ledgers_deleted = 0  # ledgers are never reused: a recreated topic gets a new one

    # ------------------------------------------------------------------ delete_topic

    def _topics_of(self, topic: Any) -> list[Any]:
        """``topic`` and, for a partitioned topic, each of its partitions."""
        return [topic] + [t for i in range(topic.partitions) if (t := self.topics.get(partition_name(topic.full, i)))]

    def connected_to(self, topics: Iterable[Any]) -> list[str]:
        """The live producers, consumers and readers on ``topics`` (the broker's usage count). A partitioned topic's
        producer or reader is on each of its partitions (the clients connect every partition at creation)."""
        topics = list(topics)
        parents = {names.partitioned_parent(t.full) for t in topics if t.partition_index >= 0}
        fulls = {t.full for t in topics} | {p for p in parents if getattr(self.topics.get(p), "partitions", 0)}
        handles = {h for h, p in self.producers.items() if p.topic.full in fulls}
        handles |= {h for t in topics for s in t.subscriptions.values() if s.dispatcher is not None
                    for h in s.dispatcher.connected()}
        handles |= {h for h, r in self.readers.items() if r.topic.full in fulls}
        return sorted(handles)

    def _op_delete_topic(self, args, at, observed):
        full = names.expand_trace(args["topic"])
        if isinstance(full, str) and not is_persistent(full) and full not in self.topics:
            # PLS-TOPIC-004: a non-persistent topic the broker does not hold has nothing to delete (BrokerService
            # #deleteTopic: no topic loaded and no managed ledger for a non-persistent name), so no 404
            yield  # decided: nothing to delete
            return {}
        topic = self._admin_topic(args["topic"], "PLS-TOPIC-004")
        if isinstance(topic, Rejected):
            return topic
        gone = self._topics_of(topic)
        connected = self.connected_to(gone)
        force = bool(args.get("force", False))
        refused = delete_refusal(connected, force=force)
        if refused is not None:
            return Rejected(DELETE_REFUSED, "PLS-TOPIC-004", refused)
        if connected:
            raise NotModelledError(f"a forced delete of {topic.short} with {', '.join(connected)} connected "
                                   "(they are disconnected, reconnect and may create the topic again)")
        self._check_deletable(topic, gone)
        yield  # decided: the topic, its subscriptions and its messages are deleted
        for t in gone:
            # PLS-TOPIC-005: its messages are no longer anyone's; its subscriptions are gone with it
            for label, pos in t.by_label.items():
                if self.labels.get(label, (None,))[0] is t:
                    del self.labels[label]
                self.deleted_labels[label] = (t, pos, at.end, topic.full)
            for name in t.subscriptions:
                self.deleted_subscriptions[(t.full, name)] = at.end
                self.deleted_subscriptions[(topic.full, name)] = at.end  # a partition's: stats name the topic
            del self.topics[t.full]
            self.ledgers_deleted += 1
            for table in (self.tfx, self.dedup_states, self.unloads):
                table.pop(t.full, None)
            self.removed_non_durable = {k for k in self.removed_non_durable if k[0] != t.full}
            self.app_acked = {k: v for k, v in self.app_acked.items() if k[0] != t.full}
            self._key_partition = {k: v for k, v in self._key_partition.items() if k[0] != t.full}
            self._key_partition_guess = {k: v for k, v in self._key_partition_guess.items() if k[0] != t.full}
        parent = self.topics.get(names.partitioned_parent(topic.full))
        if topic.partition_index >= 0 and parent is not None and topic.partition_index < parent.partitions:
            # one partition of a partitioned topic: the partitioned metadata still lists it, so the next client of
            # the partitioned topic makes it again, empty, on a new ledger (as auto-creation would; PLS-TOPIC-005)
            self.topics[topic.full] = type(topic)(topic.full, self._next_ledger(), partition_index=topic.partition_index)
        self._delete_schema_with(topic)
        # PLS-POLICY-001: its own policies go with it (PersistentTopic#delete -> AbstractTopic#deleteTopicPolicies,
        # keyed by the partitioned topic's name, so a partition's delete takes its partitioned topic's too)
        self.topic_policies.pop(self._policy_key(topic), None)
        return {}

    def _delete_schema_with(self, topic: Any) -> None:
        """Step 5: the schema goes with the topic (``Profile.topic_delete_takes_schema``); one partition's delete leaves
        the schema the partitions share, except on a release before apache/pulsar PR #21574
        (``partition_delete_takes_schema``; unknown for some). A partition is told by its name, as the broker's
        ``TopicName#isPartitioned`` does (a topic auto-created under a partition's name is one)."""
        from reference_model.schema_ops import schema_key

        one_partition = schema_key(topic.full) != topic.full
        self.schema_deleted_with(topic.full, self.profile.partition_delete_takes_schema if one_partition
                                 else self.profile.topic_delete_takes_schema)

    def _check_deletable(self, topic: Any, gone: list[Any]) -> None:
        """What a delete the model follows must not meet (see the module's "Not modelled")."""
        if any(t.txn_of for t in gone):
            raise NotModelledError(f"deleting {topic.short}, written in a transaction")
        if any(full == t.full for (full, _) in self.copies for t in gone) or \
                any(self.copy_producer_present(t.full) for t in gone):
            raise NotModelledError(f"deleting {topic.short}, a dead-letter or retry topic a client writes to")

    def deleted_subscription_rejection(self, topic: str, subscription: str) -> Rejected | None:
        """PLS-TOPIC-005: the refusal of an op on a subscription a delete removed and nothing made again, else None."""
        full = names.expand_trace(topic)
        if isinstance(full, Rejected) or (full, subscription) not in self.deleted_subscriptions:
            return None
        t = self.topics.get(full)
        if t is not None and subscription in t.subscriptions:
            return None
        return Rejected("SubscriptionNotFound", "PLS-TOPIC-005",
                        f"a delete of {names.short_name(full)} at {self.deleted_subscriptions[(full, subscription)]:g} ms "
                        f"removed subscription {subscription!r}, and no subscribe made it again")

    # ------------------------------------------------------------------ the cursor ops

    def _admin_subscriptions(self, args, rule: str):
        """The subscriptions an admin cursor op acts on (each partition's, for a partitioned topic, in partition
        order), or the ``Rejected`` the broker answers (HTTP 404, for the first partition without it)."""
        topic = self._admin_topic(args["topic"], rule)
        if isinstance(topic, Rejected):
            return topic
        if not topic.partitions:
            sub = self._admin_subscription(args, rule)
            return sub if isinstance(sub, Rejected) else [sub]
        subs = []
        for part in self.message_topics(topic):
            sub = self._admin_subscription(dict(args, topic=part.full), rule)
            if isinstance(sub, Rejected):
                return sub
            subs.append(sub)
        return subs

    def _refused_on_partitions(self, args, rule: str, why: str) -> Rejected | None:
        """HTTP 405 for an op the broker does not fan out to a partitioned topic's partitions (``why``: its text)."""
        topic = self._admin_topic(args["topic"], rule)
        if isinstance(topic, Rejected) or not topic.partitions:
            return None
        return Rejected("NotAllowedError", rule, why)

    def _non_persistent_cursor_op(self, op: str, args, rule: str) -> tuple[bool, Rejected | None]:
        """(whether ``args`` name a non-persistent topic, and if so its refusal or None: an op that succeeds and moves
        nothing): ``non_persistent_cursor_refusal`` on the topic, or on each partition for an op the broker fans out.
        A partitioned topic's skip and reset to a position were refused before (HTTP 405); a clear_backlog without a
        subscription clears each subscription the topic lists (none once its consumers are gone: ok)."""
        topic = self._admin_topic(args["topic"], rule)
        if isinstance(topic, Rejected) or is_persistent(topic.full):
            return False, None
        parts = self.message_topics(topic)

        def held(t: Any, name: str) -> bool:
            return self.non_persistent_held(t.subscriptions.get(name))

        if op == "clear_backlog" and "subscription" not in args:
            # each subscription the topic lists is cleared by name: HTTP 500 at the first, ok when it lists none
            listed = sorted({name for t in parts for name in t.subscriptions if held(t, name)})
            return True, (non_persistent_cursor_refusal(op, dict(args, subscription=listed[0]), subscription_exists=True,
                                                        rule=rule) if listed else None)
        exists = all(held(t, args["subscription"]) for t in parts)
        known = any(args["subscription"] in t.subscriptions for t in parts)
        return True, non_persistent_cursor_refusal(op, args, subscription_exists=exists, rule=rule, missing_certain=not known)

    def _admin_subscription(self, args, rule: str):
        """The subscription an admin cursor op names on one (non-partitioned) topic, or the ``Rejected`` the broker
        answers (HTTP 404)."""
        topic = self._admin_topic(args["topic"], rule)
        if isinstance(topic, Rejected):
            return topic
        if topic.partitions or not is_persistent(topic.full):
            raise ModelError(f"an admin cursor op reached {topic.short}'s subscription: a partitioned topic's goes to its "
                             "partitions, a non-persistent topic's to _non_persistent_cursor_op")
        if topic.txn_of:
            raise NotModelledError(f"an admin cursor op on {topic.short}, which holds transactional messages")
        sub = topic.subscriptions.get(args["subscription"])
        if sub is None:
            gone = self.deleted_subscription_rejection(args["topic"], args["subscription"])
            if gone is not None:
                return gone
            return Rejected("SubscriptionNotFound", rule, f"no subscription {args['subscription']!r} on {args['topic']}",
                            certain=False)
        if not sub.durable:
            raise NotModelledError(f"an admin cursor op on the non-durable subscription {sub.name}")
        return sub

    def _unacked_entries(self, sub: Any) -> list[list[int]]:
        """The entries of ``sub``'s topic that hold an unacked message, oldest first (a batch is one entry)."""
        seen: set[int] = set()
        out: list[list[int]] = []
        for pos in range(len(sub.topic.entries)):
            if pos in seen:
                continue
            entry = sorted(self.entry_members(sub, pos))
            seen.update(entry)
            if any(not sub.cursor.is_acked(p) for p in entry):
                out.append(entry)
        return out

    def _admin_ack(self, sub: Any, positions: Sequence[int], at: Any, rule: str, why: str) -> list[int]:
        """Ack ``positions`` on ``sub`` as the broker's cursor move does; returns those newly acked. A consumer may
        still hold a prefetched copy (the dispatcher's ``acked``: a ghost may surface once)."""
        newly = [p for p in positions if sub.cursor.ack(p)]
        for p in newly:
            sub.admin_acked[p] = (rule, why)
        if newly and sub.dispatcher is not None:
            sub.dispatcher.acked(newly, at)
        return newly

    def _op_skip(self, args, at, observed):
        refused = self._refused_on_partitions(args, "PLS-SKIP-001", "Skip messages on a partitioned topic is not allowed")
        if refused is not None:
            return refused
        non_persistent, refused = self._non_persistent_cursor_op("skip", args, "PLS-SKIP-001")
        if non_persistent:
            return refused  # (always refused: a skip has nothing to skip there)
        sub = self._admin_subscription(args, "PLS-SKIP-001")
        if isinstance(sub, Rejected):
            return sub
        chosen = self._unacked_entries(sub)[:int(args["count"])]
        chunks = self.topic_features(sub.topic).chunks
        if any(chunks.get(p, 1) > 1 for entry in chosen for p in entry):
            raise NotModelledError("a skip over a chunked message (each chunk is an entry the skip counts)")
        if sub.unsure_in_flight:
            # PLS-SUB-002: async sends in flight at its Latest start that none of its consumers received are taken as
            # before its cursor, but the broker may have stored them after it, and then the skip counts them
            raise NotModelledError("a skip of a subscription made at Latest while async sends were in flight (which "
                                   "entries it counts is where the broker stored them)")
        yield  # decided: the n oldest unacked entries are acked
        positions = skipped_entries(chosen, len(chosen))
        self._admin_ack(sub, positions, at, "PLS-SKIP-001", f"skipped by the admin skip of {args['count']} at {at.start:g} ms")
        self.facts = {"skipped": [sub.label(p) for p in positions]}
        return {}

    def _op_clear_backlog(self, args, at, observed):
        non_persistent, refused = self._non_persistent_cursor_op("clear_backlog", args, "PLS-SKIP-002")
        if non_persistent:
            if refused is not None:
                return refused
            yield  # decided: no subscription to clear
            self.facts = {"cleared": {}}
            return {}
        if "subscription" in args:
            subs = self._admin_subscriptions(args, "PLS-SKIP-002")
            if isinstance(subs, Rejected):
                return subs
        else:
            topic = self._admin_topic(args["topic"], "PLS-SKIP-002")
            if isinstance(topic, Rejected):
                return topic
            # the live target lists the topic's subscriptions (a partitioned topic's: its partitions' names) and
            # clears each by name
            parts = self.message_topics(topic)
            if len({frozenset(t.subscriptions) for t in parts}) > 1:
                raise NotModelledError(f"clear_backlog of {topic.short}, whose partitions have different subscriptions "
                                       "(a partition without one answers 404 part way through)")
            subs = []
            for name in sorted(parts[0].subscriptions):
                found = self._admin_subscriptions({"topic": args["topic"], "subscription": name}, "PLS-SKIP-002")
                if isinstance(found, Rejected):
                    raise NotModelledError(f"clear_backlog of {topic.short}: {found.detail}")
                subs += found
        yield  # decided: every entry stored so far is acked on each subscription
        cleared: dict[str, list[str]] = {}
        for sub in subs:
            positions = cleared_entries(self._unacked_entries(sub))
            self._admin_ack(sub, positions, at, "PLS-SKIP-002", f"cleared by the admin clear_backlog at {at.start:g} ms")
            cleared.setdefault(sub.name, []).extend(sub.label(p) for p in positions)
            sub.unsure_in_flight.clear()  # wherever the broker stored them, they are cleared too (Broker.backlog)
        self.facts = {"cleared": cleared}
        return {}

    def _op_reset_cursor(self, args, at, observed):
        if "publish_time_of" not in args:
            refused = self._refused_on_partitions(args, "PLS-SEEK-004", "Reset-cursor at position is not allowed for partitioned-topic")
            if refused is not None:
                return refused
        non_persistent, refused = self._non_persistent_cursor_op("reset_cursor", args, "PLS-SEEK-004")
        if non_persistent:
            if refused is not None:
                return refused
            yield  # decided: a non-persistent subscription has no cursor: nothing moves, nobody is disconnected
            self.facts = {"reset_how": "a non-persistent topic's reset to a publish time: no effect"}
            return {}
        # one subscription, or every partition's for a reset to a publish time (``internalResetCursor`` fans the
        # timestamp out: each partition's cursor moves to its own first entry published at or after it)
        subs = self._admin_subscriptions(args, "PLS-SEEK-004")
        if isinstance(subs, Rejected):
            return subs
        if "message" in args:
            sub = subs[0]  # a partitioned topic's reset to a message id was refused above
            pos = sub.topic.by_label.get(args["message"])
            if pos is None:
                # the live target cannot even name an id for it; the broker would answer 412 for an unknown position
                return Rejected("InvalidArgument", "PLS-SEEK-004", f"no message {args['message']!r} on {args['topic']}",
                                certain=False)
            point, excluded = batched_reset_point(self.entry_members(sub, pos), pos, excluded=bool(args.get("excluded")),
                                                  batch_index_ack=self.profile.broker_batch_index_ack)
            starts = [reset_start([m.publish_time for m in sub.topic.entries], message_pos=point, excluded=excluded)]
            how = f"to {args['message']}" + (" (excluded)" if args.get("excluded") else "")
        elif "publish_time_of" in args:
            ref = self.message(args["publish_time_of"])
            if ref is None:
                return Rejected("InvalidArgument", "PLS-SEEK-004", f"no message {args['publish_time_of']!r}", certain=False)
            starts = [reset_start([m.publish_time for m in sub.topic.entries], publish_time=ref.publish_time) for sub in subs]
            how = f"to the publish time of {args['publish_time_of']} ({ref.publish_time})"
        else:
            starts = [reset_start([m.publish_time for m in sub.topic.entries], position=args["position"]) for sub in subs]
            how = f"to {args['position']}"
        for sub, start in zip(subs, starts):
            if "message" not in args and not self._to_earliest(args):
                self.check_no_async_in_flight(sub.topic.full, "an admin reset to a position or a publish time")
            self.check_reconnects_admitted(sub.dispatcher.connected() if sub.dispatcher is not None else [], "an admin reset")
        yield  # decided: the cursor (every partition's) is reset
        for sub, start in zip(subs, starts):
            # the broker disconnects the consumers and resets; no client knows, so each keeps its queue (seeker None)
            self.reset_subscription(sub, start, at, "PLS-SEEK-004", seeker=None)
            if sub.dispatcher is None or not sub.dispatcher.connected():
                sub.reset_rule = "PLS-SEEK-004"  # the next consumer to join starts there: the reset explains it
        self.facts = {"reset_to": starts[0] if len(starts) == 1 else starts, "reset_how": how}
        return {}
