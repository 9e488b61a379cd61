"""The schema rules (PLS-SCHEMA-*), each proved able to FAIL on a hand-built history that breaks it, and to PASS
on the same history as the live broker played it.

The kept histories follow what broker 4.0.8 did with the Python client 3.13.0 and the Java client 4.0.8 (the cases of
conformance/cases/schemas/, which also PASS on 3.3.6 and 3.0.7). Each broken history changes one observation of the
kept one, so a FAIL comes from that change. Expected outcomes come from the Pulsar docs quoted in the rules, never
from the model's output.
"""

from __future__ import annotations

from conformance.checker import check
from conformance.trace import History

from model_history_helpers import H, msg

V1 = {"type": "record", "name": "User", "fields": [{"name": "name", "type": "string"}]}
V2 = {"type": "record", "name": "User", "fields": [{"name": "name", "type": "string"},
                                                   {"name": "age", "type": "int", "default": 0}]}
V3 = {"type": "record", "name": "User", "fields": [{"name": "name", "type": "string"},
                                                   {"name": "age", "type": "int"}]}
V4 = {"type": "record", "name": "User", "fields": [{"name": "name", "type": "string"},
                                                   {"name": "city", "type": "string"}]}


def _failed(history: History) -> set[str]:
    return {v.rule_id for v in check(history).failures()}


def _passed(history: History) -> set[str]:
    return {rule for rule, status in check(history).rule_verdicts().items() if status == "PASS"}


def _producer(h: H, name: str, definition: dict | None, *, refused: bool = False, topic: str = "t", kind: str = "AVRO") -> H:
    args = {"producer": name, "topic": topic}
    if definition is not None:
        args["schema"] = {"type": kind, "definition": definition}
    if refused:
        return h.rejected("create_producer", args, "IncompatibleSchema")
    return h.ok("create_producer", args, {"producer_name": name, "last_sequence_id": -1})


def _listing(*versions: int, kind: str = "AVRO") -> dict:
    return {"schemas": [{"version": v, "type": kind} for v in versions]}


def versions_history(*, listed=(0, 1), m2_version: int | None = 1, v2_refused: bool = False, v3_refused: bool = True) -> History:
    """p1 V1, p2 V2 (an optional field: FULL lets it in), p3 V4 (a required field V2 lacks: FULL refuses it); the admin then
    lists the versions, and a consumer gets m1 (p1) and m2 (p2) with the versions their producers were given."""
    h = H(client="python")
    _producer(h, "p1", V1)
    _producer(h, "p2", V2, refused=v2_refused)
    _producer(h, "p3", V4, refused=v3_refused)
    h.ok("get_schemas", {"topic": "t"}, _listing(*listed))
    h.ok("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "initial_position": "Earliest"})
    h.ok("send", {"producer": "p1", "payload": "m1"}, {"message_id": [1, 0, -1, -1], "publish_time": 0})
    h.ok("send", {"producer": "p2", "payload": "m2"}, {"message_id": [1, 1, -1, -1], "publish_time": 0})
    h.ok("receive", {"consumer": "c", "timeout_ms": 1000}, {"message": dict(msg("m1", 0, producer="p1"), schema_version=0)}, t=(10, 12))
    m2 = dict(msg("m2", 1, producer="p2"))
    if m2_version is not None:
        m2["schema_version"] = m2_version
    h.ok("receive", {"consumer": "c", "timeout_ms": 1000}, {"message": m2}, t=(13, 15))
    return h.history()


def test_the_versions_history_as_the_broker_played_it_passes():
    history = versions_history()
    assert _failed(history) == set()
    assert {"PLS-SCHEMA-001", "PLS-SCHEMA-003", "PLS-SCHEMA-005", "PLS-SCHEMA-023"} <= _passed(history)


def test_versions_listed_from_one_fail_001():
    assert "PLS-SCHEMA-001" in _failed(versions_history(listed=(1, 2)))


def test_a_refused_schema_listed_fails_001():
    assert "PLS-SCHEMA-001" in _failed(versions_history(listed=(0, 1, 2)))


def test_a_message_without_its_producers_version_fails_023():
    assert "PLS-SCHEMA-023" in _failed(versions_history(m2_version=None))
    assert "PLS-SCHEMA-023" in _failed(versions_history(m2_version=0))


def test_a_compatible_schema_refused_fails_005():
    broken = versions_history(v2_refused=True, listed=(0,), m2_version=None)
    assert "PLS-SCHEMA-005" in _failed(broken)


def test_an_incompatible_schema_let_in_fails_005():
    assert "PLS-SCHEMA-005" in _failed(versions_history(v3_refused=False, listed=(0, 1, 2)))


def policy_history(strategy: str, *, second_refused: bool, second=V3, kind: str = "AVRO") -> History:
    h = H(client="java")
    h.ok("set_policy", {"schema_compatibility_strategy": strategy})
    _producer(h, "p1", V1)
    _producer(h, "p2", second, refused=second_refused, kind=kind)
    return h.history()


def test_always_compatible_refusing_fails_006_and_letting_in_passes():
    assert "PLS-SCHEMA-006" in _passed(policy_history("ALWAYS_COMPATIBLE", second_refused=False))
    assert "PLS-SCHEMA-006" in _failed(policy_history("ALWAYS_COMPATIBLE", second_refused=True))


def test_always_incompatible_letting_a_change_in_fails_007():
    assert "PLS-SCHEMA-007" in _passed(policy_history("ALWAYS_INCOMPATIBLE", second=V2, second_refused=True))
    assert "PLS-SCHEMA-007" in _failed(policy_history("ALWAYS_INCOMPATIBLE", second=V2, second_refused=False))


def test_a_type_change_let_in_fails_008():
    # the same definition as JSON: FULL refuses the type change
    assert "PLS-SCHEMA-008" in _passed(policy_history("FULL", second=V1, kind="JSON", second_refused=True))
    assert "PLS-SCHEMA-008" in _failed(policy_history("FULL", second=V1, kind="JSON", second_refused=False))


def transitive_history(*, refused: bool) -> History:
    """BACKWARD_TRANSITIVE: V3 reads V2 (the latest) but not V1."""
    h = H(client="python")
    h.ok("set_policy", {"schema_compatibility_strategy": "BACKWARD_TRANSITIVE"})
    _producer(h, "p1", V1)
    _producer(h, "p2", V2)
    _producer(h, "p3", V3, refused=refused)
    return h.history()


def test_transitive_letting_in_what_an_older_version_refuses_fails_004():
    assert "PLS-SCHEMA-004" in _passed(transitive_history(refused=True))
    assert "PLS-SCHEMA-004" in _failed(transitive_history(refused=False))


def consumers_history(*, c2_refused: bool = False, c3_refused: bool = True, listed=(0,)) -> History:
    """c1 brings V1 to an idle topic (it registers), c2 V2 (reads V1: checked, not stored), c3 V3 (cannot read V1)."""
    h = H(client="python")
    h.ok("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s1", "schema": {"type": "AVRO", "definition": V1}})
    for name, sub, definition, refused in (("c2", "s2", V2, c2_refused), ("c3", "s3", V3, c3_refused)):
        args = {"consumer": name, "topic": "t", "subscription": sub, "schema": {"type": "AVRO", "definition": definition}}
        if refused:
            h.rejected("subscribe", args, "IncompatibleSchema")
        else:
            h.ok("subscribe", args)
    h.ok("get_schemas", {"topic": "t"}, _listing(*listed))
    return h.history()


def test_the_consumers_history_as_the_broker_played_it_passes():
    history = consumers_history()
    assert _failed(history) == set()
    assert {"PLS-SCHEMA-018", "PLS-SCHEMA-019", "PLS-SCHEMA-001"} <= _passed(history)


def test_a_consumer_that_reads_the_latest_refused_fails_019():
    assert "PLS-SCHEMA-019" in _failed(consumers_history(c2_refused=True))


def test_a_consumer_that_cannot_read_the_latest_let_in_fails_019():
    assert "PLS-SCHEMA-019" in _failed(consumers_history(c3_refused=False))


def test_a_consumers_schema_stored_on_a_topic_in_use_fails_001():
    assert "PLS-SCHEMA-001" in _failed(consumers_history(listed=(0, 1)))


def delete_history(*, listed_after_delete=(), listed_at_end=(2,)) -> History:
    h = H(client="java")
    _producer(h, "p1", V1)
    h.ok("close", {"handle": "p1"})
    h.ok("delete_schema", {"topic": "t"})
    h.ok("get_schemas", {"topic": "t"}, _listing(*listed_after_delete))
    _producer(h, "p2", V3)  # FULL would refuse it against V1: after the delete nothing is checked
    h.ok("get_schemas", {"topic": "t"}, _listing(*listed_at_end))
    return h.history()


def test_the_delete_history_passes_and_a_kept_version_or_reused_number_fails_021():
    assert "PLS-SCHEMA-021" in _passed(delete_history())
    assert "PLS-SCHEMA-021" in _failed(delete_history(listed_after_delete=(0,)))
    assert "PLS-SCHEMA-021" in _failed(delete_history(listed_at_end=(1,)))  # the delete marker took 1


def test_key_value_with_only_a_primitive_half_changed_is_the_stored_schema():
    """Found live on 4.0.8: KV(INT32, V1) after KV(STRING, V1) is given version 0 (the halves' types are properties,
    not data), so a refusal there FAILs PLS-SCHEMA-002 and a new version listed FAILs PLS-SCHEMA-001."""
    def kv(key: str) -> dict:
        return {"type": "KEY_VALUE", "key": {"type": key}, "value": {"type": "AVRO", "definition": V1}}

    def history(*, refused: bool, listed=(0,)) -> History:
        h = H(client="java")
        h.ok("create_producer", {"producer": "p1", "topic": "t", "schema": kv("STRING")}, {"producer_name": "p1", "last_sequence_id": -1})
        args = {"producer": "p2", "topic": "t", "schema": kv("INT32")}
        if refused:
            h.rejected("create_producer", args, "IncompatibleSchema")
        else:
            h.ok("create_producer", args, {"producer_name": "p2", "last_sequence_id": -1})
        h.ok("get_schemas", {"topic": "t"}, _listing(*listed, kind="KEY_VALUE"))
        return h.history()

    assert "PLS-SCHEMA-002" in _passed(history(refused=False))
    assert "PLS-SCHEMA-002" in _failed(history(refused=True))
    assert "PLS-SCHEMA-001" in _failed(history(refused=False, listed=(0, 1)))


def test_a_producer_without_schema_refused_while_not_enforced_fails_016():
    def history(*, enforced: bool, refused: bool) -> History:
        h = H(client="python")
        _producer(h, "p1", V1)
        if enforced:
            h.ok("set_policy", {"schema_validation_enforced": True})
        _producer(h, "b", None, refused=refused)
        return h.history()

    assert "PLS-SCHEMA-016" in _passed(history(enforced=False, refused=False))
    assert "PLS-SCHEMA-016" in _failed(history(enforced=False, refused=True))
    assert "PLS-SCHEMA-016" in _passed(history(enforced=True, refused=True))
    assert "PLS-SCHEMA-016" in _failed(history(enforced=True, refused=False))


# --------------------------------------------------------------------- a partitioned topic (issue 46, case schema-partitioned)
# As broker 4.0.8 played it with the python, java and go clients (6 Dec 2026): each partition checks the consumer's
# schema against the ledger the partitions share (TopicName#getSchemaName).

def _schema_sub(name: str, topic: str, definition: dict) -> dict:
    return {"consumer": name, "topic": topic, "subscription": "s-" + name, "schema": {"type": "AVRO", "definition": definition}}


def partitioned_history(*, c1_refused: bool = False, listed_first=(0,), c3_refused: bool = True,
                        busy_refused: bool = True, busy_listed=()) -> History:
    """Idle partitioned topic i: c1 V1 registers once, c3 V3 (cannot read V1) refused; topic n has a partitioned
    producer without a schema, so every partition is in use: c5 V1 is refused, nothing stored."""
    h = H(client="java")
    h.ok("create_topic", {"topic": "i", "partitions": 3})
    (h.rejected("subscribe", _schema_sub("c1", "i", V1), "IncompatibleSchema") if c1_refused
     else h.ok("subscribe", _schema_sub("c1", "i", V1)))
    h.ok("get_schemas", {"topic": "i"}, _listing(*listed_first))
    (h.rejected("subscribe", _schema_sub("c3", "i", V3), "IncompatibleSchema") if c3_refused
     else h.ok("subscribe", _schema_sub("c3", "i", V3)))
    h.ok("create_topic", {"topic": "n", "partitions": 3})
    _producer(h, "b", None, topic="n")
    (h.rejected("subscribe", _schema_sub("c5", "n", V1), "IncompatibleSchema") if busy_refused
     else h.ok("subscribe", _schema_sub("c5", "n", V1)))
    h.ok("get_schemas", {"topic": "n"}, _listing(*busy_listed))
    return h.history()


def test_the_partitioned_history_as_the_broker_played_it_passes():
    history = partitioned_history()
    assert _failed(history) == set()
    assert {"PLS-SCHEMA-018", "PLS-SCHEMA-019", "PLS-SCHEMA-020", "PLS-SCHEMA-001"} <= _passed(history)


def test_an_idle_partitioned_topic_refusing_the_first_schema_fails_018():
    assert "PLS-SCHEMA-018" in _failed(partitioned_history(c1_refused=True, listed_first=()))


def test_each_partition_registering_its_own_version_fails_001():
    assert "PLS-SCHEMA-001" in _failed(partitioned_history(listed_first=(0, 1, 2)))


def test_a_partitioned_topic_letting_in_what_its_schema_refuses_fails_019():
    assert "PLS-SCHEMA-019" in _failed(partitioned_history(c3_refused=False))


def test_partitions_in_use_letting_a_schema_in_fails_020():
    assert "PLS-SCHEMA-020" in _failed(partitioned_history(busy_refused=False))


def racing_history(*, listed=(0,), producer=V1, producer_refused: bool = False) -> History:
    """Topic m holds a message on partition 1 only: the consumer's subscribe races (not followed); the listing
    settles the ledger, and a producer with V1 is then judged against it."""
    h = H(client="java")
    h.ok("create_topic", {"topic": "m", "partitions": 3})
    _producer(h, "b1", None, topic="m-partition-1")
    h.ok("send", {"producer": "b1", "payload": "x1"}, {"message_id": [1, 0, -1, -1], "publish_time": 0})
    h.rejected("subscribe", _schema_sub("c6", "m", V1), "IncompatibleSchema")
    h.ok("get_schemas", {"topic": "m"}, _listing(*listed))
    _producer(h, "v1", producer, topic="m", refused=producer_refused)
    stored = listed if producer_refused or (listed and producer is V1) else listed + (len(listed),)
    h.ok("get_schemas", {"topic": "m"}, _listing(*stored))
    return h.history()


def test_a_racing_subscribe_is_settled_by_the_listing_either_way():
    for listed in ((0,), ()):
        history = racing_history(listed=listed)
        assert _failed(history) == set(), listed
        assert "PLS-SCHEMA-001" in _passed(history)


def test_after_the_listing_settled_the_ledger_the_producer_is_judged_against_it():
    # V1 stored (listed v0): FULL refuses V3, a required field V1 lacks, so V3 let in FAILs; refused, it PASSes.
    # Nothing stored (listed none): V3 is the first schema, so V3 refused FAILs (PLS-SCHEMA-003).
    assert _failed(racing_history(listed=(0,), producer=V3, producer_refused=True)) == set()
    assert "PLS-SCHEMA-005" in _failed(racing_history(listed=(0,), producer=V3))
    assert _failed(racing_history(listed=(), producer=V3)) == set()
    assert "PLS-SCHEMA-003" in _failed(racing_history(listed=(), producer=V3, producer_refused=True))


# --------------------------------------------------------------------- several topics (issue 46, case schema-multi-topic)
# As broker 4.0.8 played it with the python, java and go clients (6 Dec 2026): each topic of a list or a pattern
# decides on its own ledger; the subscribe succeeds if every topic lets the consumer in.

def multi_history(*, a2_listed=(0,), busy_refused: bool = True, a3_listed=(0,), required_refused: bool = True) -> History:
    h = H(client="java")
    h.ok("subscribe", {"consumer": "c1", "topics": ["a1", "a2"], "subscription": "s1",
                       "schema": {"type": "AVRO", "definition": V1}})
    h.ok("get_schemas", {"topic": "a1"}, _listing(0))
    h.ok("get_schemas", {"topic": "a2"}, _listing(*a2_listed))
    _producer(h, "pb", None, topic="b1")
    busy = {"consumer": "c2", "topics": ["a3", "b1"], "subscription": "s2", "schema": {"type": "AVRO", "definition": V1}}
    h.rejected("subscribe", busy, "IncompatibleSchema") if busy_refused else h.ok("subscribe", busy)
    h.ok("get_schemas", {"topic": "a3"}, _listing(*a3_listed))
    h.ok("get_schemas", {"topic": "b1"}, _listing())
    required = {"consumer": "c3", "topics_pattern": "a[12]", "subscription": "s3", "schema": {"type": "AVRO", "definition": V3}}
    h.rejected("subscribe", required, "IncompatibleSchema") if required_refused else h.ok("subscribe", required)
    h.ok("subscribe", {"consumer": "c4", "topics_pattern": "a[12]", "subscription": "s4",
                       "schema": {"type": "AVRO", "definition": V2}})
    return h.history()


def test_the_multi_topic_history_as_the_broker_played_it_passes_either_way_a3_went():
    for a3 in ((0,), ()):
        history = multi_history(a3_listed=a3)
        assert _failed(history) == set(), a3
        assert {"PLS-SCHEMA-018", "PLS-SCHEMA-019", "PLS-SCHEMA-020", "PLS-SCHEMA-001"} <= _passed(history)


def test_a_topic_of_the_list_left_without_the_schema_fails_001():
    assert "PLS-SCHEMA-001" in _failed(multi_history(a2_listed=()))


def test_a_list_with_a_topic_in_use_letting_a_schema_in_fails_020():
    assert "PLS-SCHEMA-020" in _failed(multi_history(busy_refused=False))


def test_a_pattern_letting_in_what_its_topics_refuse_fails_019():
    assert "PLS-SCHEMA-019" in _failed(multi_history(required_refused=False))
