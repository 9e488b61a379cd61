"""Chapter schema.py: schema resolution, compatibility strategies and the registry (PLS-SCHEMA-001..022).

Expected values come from the Avro 1.11.1 specification, "Schema Resolution"
(https://avro.apache.org/docs/1.11.1/specification/#schema-resolution), from Pulsar's docs (apache/pulsar-site
``docs/schema-understand.md``, ``docs/schema-overview.md``, ``docs/admin-api-schemas.md``), and, where the docs are
silent, from the broker source named in the test. Each test quotes the sentence its expectation comes from.
"""

from __future__ import annotations

import json

import pytest

from reference_model import schema as sc
from reference_model.schema import (
    ALWAYS_COMPATIBLE, ALWAYS_INCOMPATIBLE, BACKWARD, BACKWARD_TRANSITIVE, FORWARD, FORWARD_TRANSITIVE, FULL,
    FULL_TRANSITIVE, Accepted, Refused, Registered, Schema, SchemaDefinitionError, SchemaHistory, TopicUse,
)


def rec(*fields, name="User", namespace=None):
    """An Avro record definition (dict) with ``fields`` given as dicts."""
    d = {"type": "record", "name": name, "fields": list(fields)}
    if namespace:
        d["namespace"] = namespace
    return d


def f(name, type_, **kw):
    return {"name": name, "type": type_, **kw}


NAME = f("name", "string")
AGE = f("age", "int")
AGE_DEFAULT = f("age", "int", default=0)


def avro(d, type_="AVRO"):
    return Schema.avro(d, type_)


def history_of(*definitions, strategy=ALWAYS_COMPATIBLE):
    h = SchemaHistory()
    for d in definitions:
        h, out = sc.register(h, d if isinstance(d, Schema) else avro(d), strategy)
        assert isinstance(out, Registered) and out.new
    return h


# ---------------------------------------------------------------- PLS-SCHEMA-011 promotions


@pytest.mark.parametrize("writer, reader", [
    ("int", "long"), ("int", "float"), ("int", "double"),  # "int is promotable to long, float, or double"
    ("long", "float"), ("long", "double"),                  # "long is promotable to float or double"
    ("float", "double"),                                    # "float is promotable to double"
    ("string", "bytes"),                                    # "string is promotable to bytes"
    ("bytes", "string"),                                    # "bytes is promotable to string"
])
def test_spec_promotions_are_readable(writer, reader):
    assert sc.can_read(json.dumps(reader), json.dumps(writer))


@pytest.mark.parametrize("writer, reader", [
    ("long", "int"), ("double", "float"), ("float", "long"), ("int", "string"), ("boolean", "int"), ("null", "string"),
])
def test_no_other_promotion(writer, reader):
    """Spec: "It is an error if the two schemas do not _match_." and the promotion list is closed."""
    assert not sc.can_read(json.dumps(reader), json.dumps(writer))
    assert "not compatible with writer type" in sc.why_unreadable(json.dumps(reader), json.dumps(writer))[0]


def test_promotion_inside_a_record_field():
    """Spec: "schemas for fields with the same name in both records are resolved recursively." """
    assert sc.can_read(rec(f("age", "long")), rec(AGE))
    assert not sc.can_read(rec(AGE), rec(f("age", "long")))


# ---------------------------------------------------------------- PLS-SCHEMA-012 records


def test_record_fields_matched_by_name_not_position():
    """Spec: "the ordering of fields may be different: fields are matched by name." """
    assert sc.can_read(rec(AGE, NAME), rec(NAME, AGE))


def test_writer_only_field_is_ignored():
    """Spec: "if the writer's record contains a field with a name not present in the reader's record, the writer's
    value for that field is ignored." """
    assert sc.can_read(rec(NAME), rec(NAME, AGE))


def test_reader_only_field_needs_a_default():
    """Spec: "...the reader should use the default value from its field." / "if the reader's record schema has a field
    with no default value, and writer's schema does not have a field with the same name, an error is signalled." """
    assert sc.can_read(rec(NAME, AGE_DEFAULT), rec(NAME))
    assert sc.can_read(rec(NAME, f("nick", ["null", "string"], default=None)), rec(NAME))  # null is a default
    reasons = sc.why_unreadable(rec(NAME, AGE), rec(NAME))
    assert len(reasons) == 1 and "'age'" in reasons[0] and "no default" in reasons[0]


def test_record_names_are_not_compared():
    """The Avro spec asks for "records with the same (unqualified) name"; the resolver the broker runs does not compare
    record names (Avro 1.11.4 in Pulsar 3.0.7/3.3.6/4.0.8: Resolver.resolve sends RECORD to RecordAdjust.resolve, which
    reads no name; read with javap). Live 4.0.8: a producer with record Account joined one with record User (same
    fields) under FULL (conformance/regressions/pls-schema-005-missing-rejection-1adaf7f574c7)."""
    assert sc.can_read(rec(NAME, name="Person"), rec(NAME, name="User"))
    assert sc.can_read(rec(NAME, namespace="a.b"), rec(NAME, namespace="c.d"))
    assert isinstance(sc.register(history_of(rec(NAME, name="User")), avro(rec(NAME, name="Account")), FULL)[1], Registered)
    # the fields still decide
    assert not sc.can_read(rec(NAME, f("age", "long"), name="Person"), rec(NAME, name="User"))


def test_reader_field_alias_finds_the_writer_field():
    """Avro SchemaCompatibility.lookupWriterField: a reader field matches a writer field by name or by its aliases."""
    assert sc.can_read(rec(f("full_name", "string", aliases=["name"])), rec(NAME))


def test_doc_is_ignored():
    """Spec: "A schema's _doc_ fields are ignored for the purposes of schema resolution." """
    with_doc = {**rec({**NAME, "doc": "the user's name"}), "doc": "a user"}
    assert sc.can_read(with_doc, rec(NAME)) and sc.can_read(rec(NAME), with_doc)
    assert sc.same_schema(avro(with_doc), avro(rec(NAME)))


def test_arrays_maps_and_fixed():
    """Spec: "both schemas are arrays whose item types match", "...maps whose value types match", "both schemas are
    fixed whose sizes and (unqualified) names match"."""
    assert sc.can_read({"type": "array", "items": "long"}, {"type": "array", "items": "int"})
    assert not sc.can_read({"type": "array", "items": "int"}, {"type": "array", "items": "long"})
    assert sc.can_read({"type": "map", "values": "double"}, {"type": "map", "values": "float"})
    assert not sc.can_read({"type": "map", "values": "int"}, {"type": "array", "items": "int"})
    md5 = {"type": "fixed", "name": "md5", "size": 16}
    assert sc.can_read(md5, md5)
    assert not sc.can_read({**md5, "size": 20}, md5)
    assert not sc.can_read({**md5, "name": "sha"}, md5)


def test_recursive_record_reads_itself():
    node = rec(f("v", "int"), f("next", ["null", "Node"], default=None), name="Node")
    assert sc.can_read(node, node)
    wider = rec(f("v", "long"), f("next", ["null", "Node"], default=None), name="Node")
    assert sc.can_read(wider, node) and not sc.can_read(node, wider)


# ---------------------------------------------------------------- PLS-SCHEMA-013 enums


SUITS = {"type": "enum", "name": "Suit", "symbols": ["SPADES", "HEARTS"]}
SUITS_MORE = {"type": "enum", "name": "Suit", "symbols": ["SPADES", "HEARTS", "CLUBS"]}


def test_a_writer_enum_symbol_the_reader_lacks_is_no_error_for_the_broker():
    """The spec: "if the writer's symbol is not present in the reader's enum and the reader has a default value, then
    that value is used, otherwise an error is signalled" -- at read time. The validator the broker runs (Avro 1.11.4:
    Resolver.EnumAdjust keeps the missing symbol as a deferred adjustment; Symbol.hasErrors, which ValidateMutualRead
    asks, does not look into EnumAdjustAction; javap) finds no error, default or not. Live 4.0.8 (2026-11-27): a JSON
    schema whose enum dropped MID, without a default, joined under FULL
    (conformance/regressions/pls-schema-005-missing-rejection-4a11d6ce7fc7)."""
    assert sc.can_read(SUITS_MORE, SUITS)
    assert sc.can_read(SUITS, SUITS_MORE)  # CLUBS unknown, no default: still no validation error
    assert sc.why_unreadable(SUITS, SUITS_MORE) == ()
    assert not sc.can_read({**SUITS, "name": "Colour"}, SUITS_MORE), "enum names are still compared"


def test_an_enum_symbol_change_passes_every_strategy_but_always_incompatible():
    h = history_of(rec(f("suit", SUITS)))
    add = avro(rec(f("suit", SUITS_MORE)))
    for strategy in (BACKWARD, FORWARD, FULL):
        assert isinstance(sc.register(h, add, strategy)[1], Registered), strategy


# ---------------------------------------------------------------- PLS-SCHEMA-014 unions


def test_union_widening():
    """Spec: reader union, writer not: "The first schema in the reader's union that matches the writer's schema is
    recursively resolved against it." Writer union, reader not: "If they do not match, an error is signalled." """
    assert sc.can_read(["null", "string"], '"string"')  # a str is JSON text, so a bare primitive is quoted
    assert not sc.can_read('"string"', ["null", "string"])  # the null branch cannot be read as a string
    assert sc.can_read(["null", "string", "long"], ["null", "string", "int"])  # int read by long
    assert not sc.can_read(["null", "string"], ["null", "string", "int"])
    h = history_of(rec(NAME))
    widened = avro(rec(f("name", ["null", "string"], default=None)))
    assert isinstance(sc.register(h, widened, BACKWARD)[1], Registered)
    assert isinstance(sc.register(h, widened, FORWARD)[1], Refused)


# ---------------------------------------------------------------- PLS-SCHEMA-005 strategies on field changes


@pytest.mark.parametrize("strategy, with_default, without_default", [
    # docs schema-understand.md "Schema compatibility check strategy", column "Changes allowed":
    (BACKWARD, True, False),  # BACKWARD: "Add optional fields"
    (FORWARD, True, True),    # FORWARD: "Add fields"
    (FULL, True, False),      # FULL: "Modify optional fields"
])
def test_field_add_with_and_without_default(strategy, with_default, without_default):
    h = history_of(rec(NAME))
    ok_default = sc.register(h, avro(rec(NAME, AGE_DEFAULT)), strategy)[1]
    ok_plain = sc.register(h, avro(rec(NAME, AGE)), strategy)[1]
    assert isinstance(ok_default, Registered) is with_default
    assert isinstance(ok_plain, Registered) is without_default


@pytest.mark.parametrize("strategy, required_removed, optional_removed", [
    (BACKWARD, True, True),   # BACKWARD: "Delete fields"
    (FORWARD, False, True),   # FORWARD: "Delete optional fields"
    (FULL, False, True),      # FULL: "Modify optional fields"
])
def test_field_removal(strategy, required_removed, optional_removed):
    required = sc.register(history_of(rec(NAME, AGE)), avro(rec(NAME)), strategy)[1]
    optional = sc.register(history_of(rec(NAME, AGE_DEFAULT)), avro(rec(NAME)), strategy)[1]
    assert isinstance(required, Registered) is required_removed
    assert isinstance(optional, Registered) is optional_removed


def test_field_type_change():
    """int -> long: the new schema reads old data (promotion) but old readers cannot read longs as ints."""
    h = history_of(rec(AGE))
    widened = avro(rec(f("age", "long")))
    assert isinstance(sc.register(h, widened, BACKWARD)[1], Registered)
    assert isinstance(sc.register(h, widened, FORWARD)[1], Refused)
    to_string = sc.register(h, avro(rec(f("age", "string"))), BACKWARD)[1]
    assert isinstance(to_string, Refused) and to_string.error == sc.INCOMPATIBLE_SCHEMA
    assert to_string.message.startswith("Error during schema compatibility check with strategy BACKWARD")


# ---------------------------------------------------------------- PLS-SCHEMA-004 transitive vs latest


V1 = rec(NAME)
V2 = rec(NAME, AGE_DEFAULT)
V3 = rec(NAME, AGE)  # reads V2 (age present) but not V1 (age absent, no default)


@pytest.mark.parametrize("strategy, accepted", [
    (BACKWARD, True),              # "Check against which schema": "Latest version"
    (BACKWARD_TRANSITIVE, False),  # "All previous versions"
    (FULL, True),                  # V2 reads V3 too (V3 has age); latest only
    (FULL_TRANSITIVE, False),
])
def test_transitive_checks_every_version(strategy, accepted):
    """Docs: BACKWARD_TRANSITIVE "Consumers using schema V3 can process data written by producers using **all previous
    schema versions** V2 and V1." vs BACKWARD: "...using the **last schema version** V2." """
    h = history_of(V1, V2)
    h2, out = sc.register(h, avro(V3), strategy)
    assert isinstance(out, Registered) is accepted
    if accepted:
        assert out == Registered(2, True) and len(h2.entries) == 3
    else:
        assert h2 == h


def test_forward_transitive():
    """FORWARD_TRANSITIVE: "Consumers using **all previous schema versions** V2 or V1 can process data written by
    producers using a new schema V3." Removing a field that V1 required but V2 made optional."""
    h = history_of(rec(NAME, AGE), rec(NAME, AGE_DEFAULT))
    v3 = avro(rec(NAME))
    assert isinstance(sc.register(h, v3, FORWARD)[1], Registered)
    assert isinstance(sc.register(h, v3, FORWARD_TRANSITIVE)[1], Refused)


# ---------------------------------------------------------------- PLS-SCHEMA-001/002/003 versions


def test_first_schema_is_version_0_and_new_ones_count_up():
    """Docs schema-understand.md "Schema versioning": "(2) The schema is transmitted to the broker and stored since there
    is no existing schema." and "...stores the new schema as the current version (with a new version number)." """
    h, out = sc.register(SchemaHistory(), avro(V1), FULL)
    assert out == Registered(0, True)
    h, out = sc.register(h, avro(V2), FULL)
    assert out == Registered(1, True)


def test_same_schema_reuses_its_version():
    """Docs: "The broker attempts to store the schema in BookKeeper but then determines that it's already stored, so it
    is used to tag produced messages." Same = equal parsed Avro schemas (getSchemaVersionBySchemaData), so whitespace
    and key order do not matter, and any live version is found, not only the latest."""
    h = history_of(V1, V2)
    spaced = Schema("AVRO", json.dumps({"fields": [NAME], "name": "User", "type": "record"}, indent=4))
    h2, out = sc.register(h, spaced, FULL)
    assert out == Registered(0, False) and h2 == h
    assert sc.register(h, avro(V2), FULL)[1] == Registered(1, False)
    # field order is part of the schema: a new version
    assert sc.register(h, avro(rec(AGE_DEFAULT, NAME)), FULL)[1] == Registered(2, True)


def test_same_definition_other_type_is_not_the_same_schema():
    """getSchemaVersionBySchemaData also compares the type; JSON after AVRO is a type change (PLS-SCHEMA-008)."""
    h = history_of(V1)
    out = sc.register(h, avro(V1, "JSON"), FULL)[1]
    assert out == Refused("PLS-SCHEMA-008", sc.INCOMPATIBLE_SCHEMA,
                          "Incompatible schema: exists schema type AVRO, new schema type JSON")


def test_primitive_schemas():
    """Docs: "all the other schema types share the default compatibility checker that disables the schema evolution."
    STRING carries no data, so a STRING producer always finds version 0; a different type is refused."""
    h, out = sc.register(SchemaHistory(), Schema("STRING"), FULL)
    assert out == Registered(0, True)
    assert sc.register(h, Schema("STRING"), FULL)[1] == Registered(0, False)
    refused = sc.register(h, Schema("INT32"), FULL)[1]
    assert isinstance(refused, Refused) and refused.message == (
        "Incompatible schema: exists schema type STRING, new schema type INT32")


# ---------------------------------------------------------------- PLS-SCHEMA-006/007 ALWAYS_*


def test_always_incompatible_refuses_changes_but_gives_the_identical_schema_its_version():
    """Docs: ALWAYS_INCOMPATIBLE "Disable schema evolution, that is, any schema change is rejected." The identical
    schema is not a change: the lookup (schema-overview.md step 3 "If the schema is registered, the broker returns the
    schema version to the producer.") runs before the check."""
    h, out = sc.register(SchemaHistory(), avro(V1), ALWAYS_INCOMPATIBLE)
    assert out == Registered(0, True)  # the first schema is not a change
    assert sc.register(h, avro(V1), ALWAYS_INCOMPATIBLE)[1] == Registered(0, False)
    refused = sc.register(h, avro(V2), ALWAYS_INCOMPATIBLE)[1]  # compatible under every other strategy
    assert isinstance(refused, Refused) and refused.rule == "PLS-SCHEMA-007"
    assert sc.register(h, avro(V2), FULL_TRANSITIVE)[1] == Registered(1, True)
    # primitives too: the DEFAULT checker refuses under ALWAYS_INCOMPATIBLE only
    hs = history_of(Schema("STRING"))
    assert sc.register(hs, Schema("STRING"), ALWAYS_INCOMPATIBLE)[1] == Registered(0, False)


def test_always_compatible_allows_everything_even_a_type_change():
    """Docs: ALWAYS_COMPATIBLE "Disable schema compatibility check." / "All changes are allowed"."""
    h = history_of(rec(NAME, AGE))
    assert sc.register(h, avro(rec(f("x", "boolean"), name="Other")), ALWAYS_COMPATIBLE)[1] == Registered(1, True)
    assert sc.register(h, Schema("STRING"), ALWAYS_COMPATIBLE)[1] == Registered(1, True)


# ---------------------------------------------------------------- PLS-SCHEMA-010 KeyValue


def test_key_value_checks_key_and_value_separately():
    """KeyValueSchemaCompatibilityCheck: key and value types must not change; each part is checked with the strategy."""
    kv1 = Schema.key_value(Schema("STRING"), avro(V1))
    h = history_of(kv1)
    assert sc.register(h, Schema.key_value(Schema("STRING"), avro(V2)), BACKWARD)[1] == Registered(1, True)
    assert isinstance(sc.register(h, Schema.key_value(Schema("STRING"), avro(V3)), BACKWARD)[1], Refused)
    # the halves' types are properties, not data: a key type change alone is "the same schema" (found live on
    # 4.0.8: KV(INT32, V1) after KV(STRING, V1) got version 0), so the value changes too
    assert sc.register(h, Schema.key_value(Schema("INT64"), avro(V1)), BACKWARD)[1] == Registered(0, False)
    key_changed = sc.register(h, Schema.key_value(Schema("INT64"), avro(V2)), BACKWARD)[1]
    assert isinstance(key_changed, Refused) and key_changed.message.startswith(
        "Key schemas or Value schemas are different schema type, from key schema type is STRING")
    assert sc.register(h, kv1, BACKWARD)[1] == Registered(0, False)


# ---------------------------------------------------------------- PLS-SCHEMA-015 auto-update off


def test_auto_update_disabled():
    """Docs schema-overview.md step 4: "If it's not allowed to be auto-updated, then the schema cannot be registered,
    and the broker rejects the producer." A registered schema is found at step 3, before that."""
    h = history_of(V1, V2)
    assert sc.producer_connects(h, avro(V1), FULL, allow_auto_update=False) == (h, Accepted(0))
    h2, out = sc.producer_connects(h, avro(V3), ALWAYS_COMPATIBLE, allow_auto_update=False)
    assert h2 == h and out == Refused("PLS-SCHEMA-015", sc.INCOMPATIBLE_SCHEMA,
                                      "Schema not found and schema auto updating is disabled.")
    # a consumer on an idle topic goes the same way (schema-overview.md consumer step 4: "Otherwise, the broker
    # rejects the consumer.")
    _, out = sc.consumer_subscribes(SchemaHistory(), avro(V1), FULL, allow_auto_update=False)
    assert isinstance(out, Refused) and out.rule == "PLS-SCHEMA-015"


# ---------------------------------------------------------------- PLS-SCHEMA-016 producer without a schema


def test_producer_without_schema_and_validation_enforcement():
    """Docs schema-understand.md "Producer side": "If schema validation enforcement is **disabled** ... the producer is
    allowed to connect to the topic and produce data." / "Otherwise, the producer is rejected." """
    with_schema = history_of(V1)
    assert sc.producer_connects(with_schema, None, FULL)[1] == Accepted(None)
    assert sc.producer_connects(with_schema, Schema("BYTES"), FULL)[1] == Accepted(None)
    out = sc.producer_connects(with_schema, None, FULL, validation_enforced=True)[1]
    assert out == Refused("PLS-SCHEMA-016", sc.INCOMPATIBLE_SCHEMA,
                          "Producers cannot connect or send message without a schema to topics with a schema")
    # a topic without a schema has nothing to enforce
    assert sc.producer_connects(SchemaHistory(), None, FULL, validation_enforced=True)[1] == Accepted(None)


def test_auto_produce_brings_the_latest_schema():
    """Docs: "`AUTO_PRODUCE` transfers data from a producer to a Pulsar topic that has a schema and helps the producer
    validate whether the outbound bytes are compatible with the schema of the topic." """
    h = history_of(V1, V2)
    assert sc.producer_connects(h, sc.auto_produce_schema(h), FULL)[1] == Accepted(1)
    assert sc.auto_produce_schema(SchemaHistory()) is None


# ---------------------------------------------------------------- PLS-SCHEMA-017..020 consumers


def test_consumer_without_schema_or_auto_consume_is_not_checked():
    """Docs schema-understand.md "Consumer side": "If a consumer connects to a topic **without a schema** (meaning it
    consumes raw bytes), the consumer can connect to the topic successfully without doing any compatibility check." """
    h = history_of(V1)
    for s in (None, Schema("BYTES"), Schema("AUTO_CONSUME")):
        assert sc.consumer_subscribes(h, s, ALWAYS_INCOMPATIBLE, TopicUse(producers=1)) == (h, Accepted(None))


def test_consumer_on_idle_topic_registers_its_schema():
    """Docs schema-overview.md consumer step 4: "If the schema can be auto-updated, the broker registers the schema and
    connects the consumer." Step 3: in use = "has at least one of the objects: schema, data, active producer or
    consumer"."""
    h, out = sc.consumer_subscribes(SchemaHistory(), avro(V1), FULL)
    assert out == Accepted(0) and h == history_of(V1)
    # data on the topic, no schema: in use, and there is nothing to check against
    h, out = sc.consumer_subscribes(SchemaHistory(), avro(V1), FULL, TopicUse(has_data=True))
    assert h == SchemaHistory() and isinstance(out, Refused) and out.rule == "PLS-SCHEMA-020"
    assert sc.consumer_subscribes(SchemaHistory(), avro(V1), ALWAYS_COMPATIBLE, TopicUse(producers=1))[1] == Accepted(None)


def test_consumer_on_topic_in_use_must_read_the_latest():
    """checkConsumerCompatibility: BACKWARD/FORWARD/FORWARD_TRANSITIVE/FULL check the consumer against the latest as
    BACKWARD (the consumer reads it); the consumer's schema is not stored."""
    h = history_of(V1, V2)
    for strategy in (BACKWARD, FORWARD, FORWARD_TRANSITIVE, FULL):
        assert sc.consumer_subscribes(h, avro(V1), strategy) == (h, Accepted(None))  # ignores age
        h2, out = sc.consumer_subscribes(h, avro(rec(NAME, AGE, f("email", "string"))), strategy)
        assert h2 == h and isinstance(out, Refused) and out.rule == "PLS-SCHEMA-019"
    # BACKWARD_TRANSITIVE: against every live version; V3 reads V2 but not V1
    assert sc.consumer_subscribes(h, avro(V3), BACKWARD)[1] == Accepted(None)
    assert isinstance(sc.consumer_subscribes(h, avro(V3), BACKWARD_TRANSITIVE)[1], Refused)
    # another type is refused outright
    out = sc.consumer_subscribes(h, Schema("STRING"), FULL)[1]
    assert out.rule == "PLS-SCHEMA-008"


def test_consumer_with_identical_schema_refused_under_always_incompatible():
    """Source, SchemaRegistryServiceImpl.checkConsumerCompatibility: ALWAYS_INCOMPATIBLE goes to
    checkCompatibilityWithAll, which has no identical-schema shortcut; NeverSchemaValidator refuses when any version
    exists. (Inferred from code; not yet observed on a live broker.)"""
    h = history_of(V1)
    out = sc.consumer_subscribes(h, avro(V1), ALWAYS_INCOMPATIBLE)[1]
    assert isinstance(out, Refused) and out.rule == "PLS-SCHEMA-019"
    assert sc.producer_connects(h, avro(V1), ALWAYS_INCOMPATIBLE)[1] == Accepted(0)


# ---------------------------------------------------------------- PLS-SCHEMA-021 delete


def test_delete_then_new_schema():
    """Docs admin-api-schemas.md: "In any case, the delete action deletes all versions of a schema registered for a
    topic." The delete marker takes a version (BookkeeperSchemaStorage), so numbering continues; the next schema is
    not checked against the deleted ones."""
    h = history_of(V1)
    h = sc.delete_schema(h)
    assert h.latest() is None and h.live() == () and h.next_version() == 2
    h2, out = sc.register(h, avro(rec(f("x", "boolean"), name="Other")), FULL)
    assert out == Registered(2, True)
    # the re-registered old definition is new again: it was deleted
    assert sc.register(h, avro(V1), FULL)[1] == Registered(2, True)
    assert sc.register(sc.delete_schema(history_of(V1), force=True), avro(V1), FULL)[1] == Registered(0, True)


# ---------------------------------------------------------------- PLS-SCHEMA-022 bad definitions


@pytest.mark.parametrize("definition, fragment", [
    ("{not json", "not JSON"),
    ('{"type": "record", "fields": []}', "record has no 'name'"),
    ('{"type": "record", "name": "U"}', "needs 'fields'"),
    ('{"type": "record", "name": "U", "fields": [{"name": "a"}]}', "field 'a' has no 'type'"),
    ('{"type": "record", "name": "U", "fields": [{"name": "a", "type": "Address"}]}', "undefined name 'Address'"),
    ('{"type": "record", "name": "U", "fields": [{"name": "a", "type": "int"}, {"name": "a", "type": "long"}]}',
     "duplicate field 'a'"),
    ('{"type": "record", "name": "1U", "fields": []}', "illegal name '1U'"),
    ('{"type": "enum", "name": "E", "symbols": ["A", "A"]}', "duplicate enum symbol"),
    ('{"type": "enum", "name": "E", "symbols": ["A"], "default": "B"}', "enum default 'B' is not one of the symbols"),
    ('{"type": "fixed", "name": "F"}', "needs 'size'"),
    ('{"type": "array"}', "array has no 'items'"),
    ('{"type": "map"}', "map has no 'values'"),
    ('["null", ["int", "long"]]', "may not immediately contain another union"),
    ('["int", "int"]', "duplicate 'int' in union"),
    ('{"name": "x"}', "object has no 'type'"),
])
def test_bad_definitions_raise_schema_definition_error(definition, fragment):
    with pytest.raises(SchemaDefinitionError) as e:
        sc.parse_avro(definition)
    assert fragment in str(e.value)


def test_invalid_definition_refused_at_registration():
    """StructSchemaDataValidator: "Invalid schema definition data for AVRO schema"."""
    h, out = sc.register(SchemaHistory(), Schema("AVRO", '{"type": "record"}'), FULL)
    assert h == SchemaHistory() and out.rule == "PLS-SCHEMA-022" and out.error == sc.INVALID_SCHEMA_DATA
    assert out.message.startswith("Invalid schema definition data for AVRO schema")


def test_parse_values_are_frozen_and_defaults_distinguish_null_from_absent():
    """Docs admin-api-schemas.md: "A null default and an omitted default have different schema semantics"."""
    r = sc.parse_avro(rec(f("a", ["null", "int"], default=None), f("b", ["null", "int"])))
    assert r.fields[0].has_default and r.fields[0].default is None
    assert not r.fields[1].has_default
    with pytest.raises(Exception):
        r.fields[0].name = "c"  # frozen
    assert sc.parse_avro('"int"') == sc.parse_avro({"type": "int"})


def test_unknown_strategy_is_a_caller_error():
    with pytest.raises(ValueError, match="unknown strategy"):
        sc.check_compatibility((avro(V1),), avro(V2), "SIDEWAYS")


def test_an_enum_default_does_not_make_another_schema():
    """Let a record's enum field gain a default. Then it is the same schema (Avro's EnumSchema.equals leaves the default
    out: live 4.0.8 and 4.2.4 listed one version), while a new symbol makes another."""
    import json
    from reference_model import schema as sc

    def avro(enum: dict) -> "sc.Schema":
        return sc.Schema("AVRO", json.dumps({"type": "record", "name": "User", "fields": [
            {"name": "name", "type": "string"}, {"name": "level", "type": {"type": "enum", "name": "Level", **enum}}]}))

    plain = avro({"symbols": ["LOW", "HIGH"]})
    assert sc.same_schema(plain, avro({"symbols": ["LOW", "HIGH"], "default": "LOW"}))
    assert not sc.same_schema(plain, avro({"symbols": ["LOW", "HIGH", "MID"]}))
