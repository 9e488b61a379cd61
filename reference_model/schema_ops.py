"""The schema registry inside the broker composition: which producers and consumers a topic's schema lets in,
which version each message carries, and the admin view of a topic's versions.

Pulsar part: ``ServerCnx.handleProducer`` -> ``tryAddSchema`` (producers), ``ServerCnx.handleSubscribe`` ->
``addSchemaIfIdleOrCheckCompatible`` (consumers), the admin ``SchemasResource`` (``GET .../schemas``,
``DELETE .../schema``), the namespace policies ``schemaCompatibilityStrategy``, ``isAllowAutoUpdateSchema`` and
``schemaValidationEnforced``. The decisions are the chapter's (``reference_model/schema.py``); this mixin only
turns trace ops into its inputs and keeps its per-topic ledgers.
Rule ids: PLS-SCHEMA-001..010, PLS-SCHEMA-015..023.

``SchemaOps`` is a mixin of ``reference_model.broker.Broker``. Its steps wrap the core's ``create_producer``,
``subscribe`` and ``send`` steps: the schema decision comes first (the broker checks the schema before it adds the
producer or the consumer), a refusal is the op's outcome, and an accepted schema is committed only when the core
step went on to succeed. A topic's schema ledger is keyed by its base name: the partitions of a partitioned topic
share one (``TopicName.getSchemaName``).

What a client sends is the profile's (``Profile.schema_types_sent``, ``Profile.string_schema_data``): a schema the
client does not send is "no schema", as the broker sees it.

Not modelled: a schema policy changed while a topic is loaded (the topic learns it asynchronously: on 4.0.8 a producer
without a schema right after schemaValidationEnforced was turned on was let in once in a few runs; traces set the
policies before the topics are loaded, or unload them after), a consumer whose reconnect (after a seek or a fault)
the registry would refuse (``check_reconnects_admitted`` raises NotModelledError), a producer's reconnect
re-registering its schema, schemas on
retry-letter subscriptions, a partitioned topic's whose partitions' checks race (``NotModelledError``);
readers with a schema; a schema registered by a consumer whose subscribe then fails for another reason (the broker
keeps it; the model does not); the broker-level and topic-level strategy policies (only the namespace's);
what a consumer does with the version when it decodes (the harness never decodes: payloads stay label bytes).
Choices: the broker's default strategy is FULL (``schemaCompatibilityStrategy`` in broker.conf; the refusal text
"strategy FULL" was read on 4.0.8, 2026-11-26).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Iterable, Mapping

from reference_model import schema as sc
from reference_model.names import PARTITION_SUFFIX
from reference_model.profiles import Profile
from reference_model.rejections import ModelError, NotModelledError, Rejected


def schema_text(definition: Any) -> str:
    """An AVRO / JSON ``definition`` as the text a client sends: a string as given (it may be invalid on purpose,
    PLS-SCHEMA-022), a JSON value serialised compactly (the targets send the same text)."""
    return definition if isinstance(definition, str) else json.dumps(definition, separators=(",", ":"))


def sent_schema(arg: Mapping[str, Any] | None, prof: Profile) -> sc.Schema | None:
    """The schema a client with ``prof`` sends for a trace ``schema`` argument; None: it sends none (BYTES, or a
    type the client does not put on the wire)."""
    if not arg:
        return None
    kind = arg["type"]
    if kind == "KEY_VALUE":
        return sc.Schema.key_value(_half(arg["key"], prof), _half(arg["value"], prof))
    if kind == "BYTES" or kind not in prof.schema_types_sent:
        return None
    return _half(arg, prof)


def _half(arg: Mapping[str, Any], prof: Profile) -> sc.Schema:
    kind = arg["type"]
    if kind in ("AVRO", "JSON"):
        return sc.Schema.avro(schema_text(arg["definition"]), kind)
    if kind == "STRING":
        return sc.Schema("STRING", prof.string_schema_data)
    return sc.Schema(kind)


def schema_key(full: str) -> str:
    """The schema ledger's name: a partition shares its topic's."""
    base, sep, index = full.rpartition(PARTITION_SUFFIX)
    return base if sep and index.isdigit() else full


# Refusals the broker makes after its schema check (``tryAddSchema`` / ``addSchemaIfIdleOrCheckCompatible`` run
# before ``addProducer`` / ``subscribe``); every other refusal (the client's own checks, a bad topic name) comes first.
_UNDECIDED = object()  # schema_admission_rule's "decide it yourself" (None is a decision: the op meets no schema)

AFTER_SCHEMA_CHECK = ("ProducerBusy", "ProducerFenced", "ConsumerBusy", "ConsumerAssignError")
# refusals by rule that the broker makes once the schema check passed: PLS-SUB-008's durable / non-durable name clash
# comes from PersistentTopic#subscribe (getDurableSubscription, getNonDurableSubscription), which ServerCnx reaches
# after addSchemaIfIdleOrCheckCompatible (live 4.2.4, Go campaign of 6 Dec 2026: a durable AVRO subscribe beside a
# NonDurable subscription of that name got IncompatibleSchema; regression pls-sub-008-wrong-error-836303905060)
AFTER_SCHEMA_CHECK_RULES = ("PLS-SUB-008",)


def _core_refusal_first(core) -> Rejected | None:
    """Run a core step to its decision without committing: its refusal when that comes before the schema check."""
    try:
        next(core)
    except StopIteration as done:
        refused = done.value
        return refused if isinstance(refused, Rejected) and refused.error not in AFTER_SCHEMA_CHECK \
            and refused.rule not in AFTER_SCHEMA_CHECK_RULES else None
    core.close()
    return None


def _refusal(refused: sc.Refused, arg: Mapping[str, Any] | None) -> Rejected:
    # the client sees every registry refusal as IncompatibleSchema (ServerError.IncompatibleSchema), an invalid
    # definition included ("Invalid schema definition data for AVRO schema", measured on 4.0.8, 2026-11-26). A JSON
    # schema with an invalid Avro definition got no answer at all on 4.0.8 (15 s, 2026-11-26): not certain.
    kinds = {(arg or {}).get("type")} | {(arg or {}).get(h, {}).get("type") for h in ("key", "value")}
    json_invalid = refused.rule == "PLS-SCHEMA-022" and "JSON" in kinds
    return Rejected("IncompatibleSchema", refused.rule, refused.message, certain=not json_invalid)


class SchemaOps:
    """The schema steps of ``Broker`` (see the module docstring)."""

    def _init_schemas(self) -> None:
        self.schemas: dict[str, sc.SchemaHistory] = {}  # schema ledger name -> its entries
        self.consumer_schema_types: dict[str, str] = {}  # consumer handle -> the schema type it sent
        self.consumer_schemas: dict[str, sc.Schema | None] = {}  # consumer handle -> the schema it sent (None: none)
        self._label_schema_version: dict[str, int] = {}  # payload label -> its producer's version (PLS-SCHEMA-023)
        # ledger name -> the ledgers it may be after an op with a schema the model did not follow (schema_unfollowed);
        # the admin's listing settles which (_op_get_schemas)
        self.ledger_candidates: dict[str, tuple[sc.SchemaHistory, ...]] = {}

    def schema_history(self, topic_name: str) -> sc.SchemaHistory:
        return self.schemas.get(schema_key(topic_name), sc.SchemaHistory())

    def schema_unfollowed(self, op: str, args: Mapping[str, Any]) -> None:
        """An op with a schema that the model did not follow (its step raised NotModelledError), whatever its outcome:
        the broker may have registered the schema on each ledger the op names (a refused partitioned subscribe may
        leave a partition's registration behind, ``_partitions_subscribe``). Each such ledger is now either as it
        was or with the schema registered, until the admin's listing shows which (``_op_get_schemas``); a producer or
        consumer whose decision differs between the two is not followed (``schema_admission``)."""
        if op not in ("create_producer", "subscribe"):
            return
        prof = self.args_profile(args)
        schema = sent_schema(args.get("schema"), prof)
        if schema is None:
            return
        if "topic" in args:
            names = [n] if not isinstance(n := self._full_name(args["topic"]), Rejected) else []
        else:
            names = self._subscribed_topics(args)
        for key in {schema_key(n) for n in names}:
            now = self.ledger_candidates.get(key) or (self.schemas.get(key, sc.SchemaHistory()),)
            after = []
            for ledger in now:
                registered, outcome = sc.register(ledger, schema, self.policies.schema_compatibility_strategy,
                                                  self.policies.schema_auto_update)
                after += [ledger] + ([] if isinstance(outcome, sc.Refused) else [registered])
            self._leave_ledger(key, after)

    def _leave_ledger(self, key: str, ledgers: Iterable[sc.SchemaHistory]) -> None:
        """Ledger ``key`` is one of ``ledgers`` now: settled if they are one, else uncertain (``ledger_candidates``)
        until the admin's listing shows which (``_op_get_schemas``)."""
        distinct = tuple(dict.fromkeys(ledgers))
        if len(distinct) == 1:
            self.schemas[key] = distinct[0]
            self.ledger_candidates.pop(key, None)
        else:
            self.ledger_candidates[key] = distinct

    def schema_deleted_with(self, full: str, takes: bool | None) -> None:
        """A delete of topic ``full`` (reference_model/admin_ops.py step 5): its schema ledger goes with it (``takes``:
        the ledger itself, so the next registration is version 0), stays (False), or either (None: a release whose
        behaviour is not recorded), until the admin's listing shows which."""
        key = schema_key(full)
        if takes:
            self.schemas.pop(key, None)
            self.ledger_candidates.pop(key, None)
        elif takes is None:
            now = self.ledger_candidates.get(key) or (self.schemas.get(key, sc.SchemaHistory()),)
            self._leave_ledger(key, [*now, sc.SchemaHistory()])

    def _settled_ledger(self, key: str, why: str) -> sc.SchemaHistory:
        """The ledger ``key``, or NotModelledError when an op the model did not follow left it uncertain
        (``schema_unfollowed``) and ``why``, the decision about to read it, would differ between its candidates."""
        if key not in self.ledger_candidates:
            return self.schemas.get(key, sc.SchemaHistory())
        raise NotModelledError(f"{why} on schema ledger {key}, which an op the model did not follow may have written "
                               "to, or a delete may have taken (the admin's listing of its schemas settles it)")

    def _full_name(self, name: str) -> str | Rejected:
        from reference_model import names

        return names.expand_trace(name)

    # ------------------------------------------------------------------ decisions (pure)

    def schema_admission(self, op: str, args: Mapping[str, Any]) -> "tuple[str, sc.SchemaHistory, sc.Accepted | sc.Refused] | None":
        """The registry's decision for a ``create_producer`` / single-topic ``subscribe``: (ledger name, the ledger
        after it, Accepted or Refused). Nothing changes. None: the op meets no schema (a multi-topic subscribe
        without one)."""
        prof = self.args_profile(args)
        policies = self.policies
        strategy = policies.schema_compatibility_strategy
        if op == "create_producer":
            full = self._full_name(args["topic"])
            if isinstance(full, Rejected):
                return None
            key = schema_key(full)
            history, outcome = sc.producer_connects(self._settled_ledger(key, "a producer's schema check"),
                                                    sent_schema(args.get("schema"), prof),
                                                    strategy, policies.schema_auto_update, policies.schema_validation_enforced)
            return key, history, outcome
        if args.get("enable_retry"):
            if args.get("schema") and args["schema"]["type"] != "BYTES":
                raise NotModelledError("a schema on a retry-letter subscription")
            return None
        if "topic" not in args:
            schema = sent_schema(args.get("schema"), prof)
            return None if schema is None else self._topics_subscribe(args, schema, strategy)
        full = self._full_name(args["topic"])
        if isinstance(full, Rejected):
            return None
        key = schema_key(full)
        schema = sent_schema(args.get("schema"), prof)
        topic = self.topics.get(full)
        ledger = self._settled_ledger(key, "a consumer's schema check") if schema is not None else \
            self.schemas.get(key, sc.SchemaHistory())  # (no schema: no check, PLS-SCHEMA-017)
        if topic is not None and topic.partitions and schema is not None:
            return key, *self._partitions_subscribe(ledger, schema, strategy, topic)
        history, outcome = sc.consumer_subscribes(ledger, schema, strategy, self._topic_use(topic),
                                                  policies.schema_auto_update)
        return key, history, outcome

    def _subscribed_topics(self, args: Mapping[str, Any]) -> list[str]:
        """The full names a multi-topic or pattern subscribe names, each once (``Broker.multi_topic_names``); none if
        the broker refuses the names themselves (an invalid name or pattern), before any schema check."""
        chosen = self.multi_topic_names(args)
        return [] if isinstance(chosen, Rejected) else list(dict.fromkeys(chosen))

    def _topics_subscribe(self, args: Mapping[str, Any], schema: sc.Schema, strategy: str) -> Any:
        """A consumer with ``schema`` subscribing to a list of topics or a pattern: the client subscribes each topic
        (Java ``MultiTopicsConsumerImpl``, C++ ``MultiTopicsConsumerImpl::start``, Go ``newMultiTopicConsumer``), and
        each decides on its own ledger as a one-topic subscribe does (a partitioned one as ``_partitions_subscribe``
        says). The subscribe succeeds if every topic lets it in, and then each ledger is as its topic left it.

        Let one topic refuse it. Then the subscribe fails, and an idle topic that let it in has registered the schema
        if its subscribe reached the broker before the client gave up: ``multi_topic_refused`` leaves such a ledger
        uncertain (``schema_unfollowed``'s two ledgers), for the admin's listing to settle. Returns ((ledger names),
        (ledgers after), the first refusal in topic order or Accepted), the shape ``_admitted`` commits."""
        allow = self.policies.schema_auto_update
        keys, histories, outcomes = [], [], []
        for full in self._subscribed_topics(args):
            key = schema_key(full)
            if key in keys:
                continue
            ledger = self._settled_ledger(key, "a consumer's schema check")
            topic = self.topics.get(full)
            if topic is not None and topic.partitions:
                history, outcome = self._partitions_subscribe(ledger, schema, strategy, topic)
            else:
                history, outcome = sc.consumer_subscribes(ledger, schema, strategy, self._topic_use(topic), allow)
            history, outcome = self._invalid_consumer_schema(history, outcome, args)
            keys.append(key)
            histories.append(history)
            outcomes.append(outcome)
        if not keys:
            return None
        refused = next((o for o in outcomes if isinstance(o, sc.Refused)), None)
        registered = next((o for o in outcomes if o.rule == "PLS-SCHEMA-018"), None)
        return tuple(keys), tuple(histories), refused or registered or outcomes[0]

    def multi_topic_refused(self, args: Mapping[str, Any]) -> None:
        """A multi-topic or pattern subscribe with a schema that some topic refused (``_topics_subscribe``): each
        ledger another topic's check would have registered the schema on may now hold it, or not."""
        decision = self.schema_admission("subscribe", args) if "topic" not in args and not args.get("enable_retry") else None
        if decision is None or not isinstance(decision[0], tuple):
            return
        for key, history in zip(decision[0], decision[1]):
            before = self.schemas.get(key, sc.SchemaHistory())
            if history != before:
                self._leave_ledger(key, (before, history))

    def _partitions_subscribe(self, ledger: sc.SchemaHistory, schema: sc.Schema, strategy: str,
                              parent: Any) -> tuple[sc.SchemaHistory, sc.Accepted | sc.Refused]:
        """A consumer with ``schema`` subscribing to the partitioned topic ``parent``: the client subscribes every
        partition at once (Java ``MultiTopicsConsumerImpl#subscribeAsync`` per partition, C++
        ``MultiTopicsConsumerImpl::start``, Go ``newPartitionConsumer`` per partition), and each partition runs the
        consumer check of PLS-SCHEMA-017..020 on the one ledger they share (``TopicName.getSchemaName``), judging its
        own use (its producers, consumers, data). The subscribe succeeds if every partition's does.

        Let the ledger hold a live schema: every partition is in use and makes the same check, so that is the
        outcome. Let it hold none: a partition in use refuses (PLS-SCHEMA-020) unless the strategy lets anything in,
        and an idle one registers the schema (PLS-SCHEMA-018); a partition whose check comes after that
        registration checks against it instead (an idle one's second registration of the same schema is its
        version). Then the outcome is settled when every partition accepts whichever it meets: the ledger
        registered if some partition was idle. When one order accepts and another refuses (a partition in use
        beside an idle one; ALWAYS_INCOMPATIBLE, which refuses a check against the schema just registered), it is
        which partition's subscribe the broker handles first: live 4.0.8 (6 Dec 2026, python, java, go, two runs
        each) a partitioned topic with data on one partition refused the consumer with its schema registered by
        Java and Go and not by Python, and under ALWAYS_INCOMPATIBLE an idle one let Java and Go in and refused
        Python once in two runs, its schema registered each time."""
        allow = self.policies.schema_auto_update
        uses = [self._partition_use(t, parent) for t in self.message_topics(parent)]
        unchanged = [sc.consumer_subscribes(ledger, schema, strategy, use, allow) for use in uses]
        if ledger.latest() is not None:
            return unchanged[0]  # in use everywhere: one check, the same on each partition
        idle = [i for i, use in enumerate(uses) if not (use.producers or use.consumers or use.has_data)]
        if not idle:
            return unchanged[0]  # no partition registers: each refuses (PLS-SCHEMA-020) or each lets it in
        registered, registration = unchanged[idle[0]]
        if isinstance(registration, sc.Refused):
            return ledger, registration  # the schema itself is refused (an idle partition's registration fails)
        after = sc.consumer_subscribes(registered, schema, strategy, uses[idle[0]], allow)[1]
        if all(isinstance(o, sc.Accepted) for _, o in unchanged + [(registered, after)]):
            return registered, registration
        raise NotModelledError("a schema on a partitioned topic's subscription whose partitions' checks race (one "
                               "partition's registration decides whether another's check passes)")

    def _partition_use(self, partition: Any, parent: Any) -> sc.TopicUse:
        """``_topic_use`` for one partition of ``parent``: a partitioned producer is connected to every partition
        (the clients make one producer per partition when it is created)."""
        use = self._topic_use(partition)
        whole = sum(1 for p in self.producers.values() if p.topic is parent)
        return sc.TopicUse(use.producers + whole, use.consumers, use.has_data)

    def schema_admission_rule(self, op: str, args: Mapping[str, Any], decision: Any = _UNDECIDED) -> str | None:
        """The rule that lets this producer or consumer in, when the op meets a schema (it brings one, or the topic
        has one); None when it meets none or the registry refuses it. Nothing changes. ``decision``: the op's
        ``schema_admission``, when the caller already has it (a step need not decide twice)."""
        if decision is _UNDECIDED:
            try:
                decision = self.schema_admission(op, args)
            except NotModelledError:
                return None
        if decision is None or isinstance(decision[2], sc.Refused):
            return None
        key, _, accepted = decision
        before = self.schemas.get(key)
        brings = sent_schema(args.get("schema"), self.args_profile(args)) is not None
        return accepted.rule if brings or (before is not None and before.latest() is not None) else None

    def _topic_use_open(self, args: Mapping[str, Any]) -> str | None:
        """Why whether the topic of a subscribe is in use (PLS-SCHEMA-018 against PLS-SCHEMA-020) is timing, or None:
        its only use is producers whose creation the broker had not answered when the history's wait ended
        (``creation_unsure``), so they may not have been on the topic when the subscribe reached it. Live 4.0.8,
        Python (probe seed 7301, fz-a16dec8f9073, FLAKY 1 of 3): a WaitForExclusive producer of a new topic still
        pending after its wait of 50 ms, then a consumer with an AVRO schema, accepted once and refused twice."""
        full = self._full_name(args["topic"]) if "topic" in args else None
        topic = self.topics.get(full) if isinstance(full, str) else None
        if topic is None:
            return None
        unsure = sorted(h for h in self.creation_unsure if (p := self.producers.get(h)) is not None and p.topic is topic)
        use = self._topic_use(topic)
        if not unsure or use.producers > len(unsure) or use.consumers or use.has_data:
            return None
        return (f"the topic's only use was {', '.join(unsure)}, whose creation had not completed when its wait ended, "
                "so whether it was on the topic when the subscribe arrived is timing")

    def _topic_use(self, topic: Any) -> sc.TopicUse:
        """What makes ``topic`` in use for a subscribing consumer: its producers, its connected consumers other than
        AUTO_CONSUME ones (readers included), whether it ever stored a message."""
        if topic is None:
            return sc.TopicUse()
        producers = sum(1 for p in self.producers.values() if p.topic is topic)
        handles = set(self.consumers) | set(self.partition_consumers)  # multi-topic consumers are attached per topic
        consumers = sum(1 for h in handles for _, sub in self.attachments(h)
                        if sub.topic is topic and self.consumer_schema_types.get(h) != "AUTO_CONSUME")
        consumers += sum(1 for r in self.readers.values() if r.topic is topic)
        return sc.TopicUse(producers, consumers, bool(topic.entries))

    # ------------------------------------------------------------------ steps

    def _op_create_producer_schema(self, args, at, observed):
        return (yield from self._admitted("create_producer", self._op_create_producer, args, at, observed))

    def _op_subscribe_schema(self, args, at, observed):
        refused = self._java_only_refusal("subscribe", args, self.args_profile(args))
        if refused is not None:
            return refused  # (before schema_admission: a Python handle cannot even build an AUTO_CONSUME schema)
        return (yield from self._admitted("subscribe", self._op_subscribe, args, at, observed))

    def _invalid_consumer_schema(self, history: sc.SchemaHistory, outcome: Any, args: Mapping[str, Any]) -> tuple:
        """PLS-SCHEMA-022 for a subscribing consumer's definition the validator refuses, on one ledger: (ledger,
        outcome) as the subscribe meets it."""
        if not (isinstance(outcome, sc.Refused) and outcome.rule == "PLS-SCHEMA-022"):
            return history, outcome
        if history.live() or not self.args_profile(args).consumer_invalid_schema_ignored:
            # a topic with a schema checks the consumer's against it, and the parse fails: IncompatibleSchema
            # (SchemaParseException; live 4.0.8, Java, 2026-11-27: regression pls-sub-001-unexpected-rejection-3e3c8d552010);
            # before 3.3.0 the validator's refusal reaches the client on an idle topic too (Profile field's note)
            return history, sc.Refused("PLS-SCHEMA-022", sc.INCOMPATIBLE_SCHEMA, outcome.message)
        # a consumer's invalid definition is dropped, not refused: from 3.3.0 the subscribe path ignores schema
        # errors the broker does not mark recoverable (ServerCnx, apache/pulsar PR #22469; measured with the
        # Java client on 4.0.8, 2026-11-26)
        return history, sc.Accepted(None)

    def _admitted(self, op: str, core_step, args, at, observed):
        """The registry decides first; a refusal is the op's outcome unless the core refuses earlier (the client's
        checks, a bad topic name); an accepted schema is committed once the core step succeeded."""
        decision = self.schema_admission(op, args)  # (a NotModelledError stops the step here)
        rule = self.schema_admission_rule(op, args, decision)
        if op == "subscribe" and decision is not None and not isinstance(decision[0], tuple):
            history, outcome = self._invalid_consumer_schema(decision[1], decision[2], args)
            if outcome is not decision[2]:
                decision = (decision[0], history, outcome)
                rule = None if isinstance(outcome, sc.Accepted) else rule
        if decision is not None and isinstance(decision[2], sc.Refused):
            refusal = _refusal(decision[2], args.get("schema"))
            open_because = self._topic_use_open(args) if op == "subscribe" and decision[2].rule == "PLS-SCHEMA-020" else None
            if open_because is not None:
                refusal = replace(refusal, certain=False, open_because=open_because)
            return _core_refusal_first(core_step(args, at, observed)) or refusal
        outcome = yield from core_step(args, at, observed)
        if decision is None or isinstance(outcome, Rejected):
            return outcome
        key, history, accepted = decision
        if isinstance(key, tuple):  # a multi-topic or pattern subscribe: one ledger per topic (_topics_subscribe)
            self.schemas.update(zip(key, history))
        else:
            self.schemas[key] = history
        if rule:
            self.facts["schema_rule"] = rule
        if op == "create_producer":
            self.producers[args["producer"]].schema_version = accepted.version
        else:
            self.consumer_schema_types[args["consumer"]] = (args.get("schema") or {}).get("type", "BYTES")
            self.consumer_schemas[args["consumer"]] = sent_schema(args.get("schema"), self.args_profile(args))
        return outcome

    def check_reconnects_admitted(self, handles: "list[str]", why: str) -> None:
        """Consumers that reconnect (``why``: the broker disconnected them) subscribe again through the schema check.
        One the registry would now refuse (ALWAYS_INCOMPATIBLE refuses even its own schema once the topic has one,
        ``checkConsumerCompatibility``; a deleted schema leaves an active topic without one, PLS-SCHEMA-020) is
        refused on every retry: its client retries for ever, and the C++ client's seek, which answers after the
        reconnect, never answers (seen live on 4.0.8, 2026-11-27). That consumer is not modelled: NotModelledError."""
        strategy = self.policies.schema_compatibility_strategy
        for handle in handles:
            schema = self.consumer_schemas.get(handle)
            if schema is None:
                continue
            for _, sub in self.attachments(handle):
                key = schema_key(sub.topic.full)
                _, outcome = sc.consumer_subscribes(self.schemas.get(key, sc.SchemaHistory()), schema, strategy,
                                                    self._topic_use(sub.topic), self.policies.schema_auto_update)
                if isinstance(outcome, sc.Refused):
                    raise NotModelledError(f"{why}: consumer {handle} reconnects and the broker now refuses its schema "
                                           f"({outcome.rule}: {outcome.message}); a consumer refused on reconnect is "
                                           "not modelled (its client retries for ever)")

    def _op_send_schema(self, args, at, observed):
        core = self._op_send(args, at, observed)
        try:
            next(core)
        except StopIteration as refused:
            return refused.value
        yield  # decided as the core decided: the message is sent, carrying its producer's version (PLS-SCHEMA-023)
        producer = self.producers.get(args["producer"])
        if producer is not None and producer.schema_version is not None:
            self._label_schema_version[args["payload"]] = producer.schema_version
        try:
            next(core)
        except StopIteration as done:
            return done.value
        raise ModelError("a step yields once, at its decision point")

    def _op_get_schemas(self, args, at, observed):
        full = self._full_name(args["topic"])
        if isinstance(full, Rejected):
            return full
        yield  # decided: the admin answers (an empty list for a topic without a schema)
        key = schema_key(full)
        if key in self.ledger_candidates:
            # the listing shows which of the ledgers it may be the broker holds; none matching: judged against the first
            listed = [(int(e["version"]), e["type"]) for e in observed.get("schemas") or []]
            candidates = self.ledger_candidates.pop(key)
            self.schemas[key] = next((c for c in candidates if [(e.version, e.schema.type) for e in c.live()] == listed),
                                     candidates[0])
        live = self.schema_history(full).live()
        schemas = [{"version": e.version, "type": e.schema.type} for e in live]
        self.facts["schemas"] = schemas
        self.facts["schemas_observed"] = observed.get("schemas")
        self.facts["schema_deleted_before"] = len(self.schema_history(full).entries) > len(live)
        return {"schemas": schemas}

    def _op_delete_schema(self, args, at, observed):
        full = self._full_name(args["topic"])
        if isinstance(full, Rejected):
            return full
        yield  # decided: the schema is deleted (a delete marker, or the whole ledger when forced)
        key = schema_key(full)
        if key in self.ledger_candidates:
            after = tuple(dict.fromkeys(sc.delete_schema(c, force=bool(args.get("force"))) for c in self.ledger_candidates[key]))
            if len(after) > 1:
                self.ledger_candidates[key] = after
                return {}
            del self.ledger_candidates[key]
            self.schemas[key] = after[0]
            return {}
        self.schemas[key] = sc.delete_schema(self.schemas.get(key, sc.SchemaHistory()), force=bool(args.get("force")))
        return {}
