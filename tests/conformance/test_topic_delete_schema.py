"""A deleted topic's schema goes with it (PLS-TOPIC-005, reference_model/admin_ops.py step 5), by release:
from 2.11.0 the ledger itself is deleted (apache/pulsar PR #14608), one partition's delete keeps the partitioned
topic's (PR #21574, 2.11.4 and 3.2.0), and before 2.11.0 the REST delete keeps it. Case topic-delete-takes-schema
(live 4.0.8, Python and Java): its model history passes, and each listing or producer outcome of the other
behaviour FAILs PLS-SCHEMA-001 or the producer's schema rule."""

from __future__ import annotations

import pytest

from conformance.case_files import discover_cases
from conformance.checker import check
from conformance.runner import run_case
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome

CASE = next(c for c in discover_cases() if c.id == "topic-delete-takes-schema")
V1_LISTED = {"schemas": [{"version": 0, "type": "AVRO"}]}
# the case's steps (conformance/cases/topics/topic-delete-takes-schema.yaml)
AFTER_DELETE, SECOND_PRODUCER, AFTER_PARTITION_DELETE, AFTER_NP_DELETE = 6, 7, 26, 30


def model_history(client: str = "python", broker_version: str | None = None) -> History:
    result = run_case(CASE, ModelTarget(client=client, broker_version=broker_version), client=client)
    return result.history


def alter(history: History, step: int, outcome: Outcome) -> History:
    return History(history.header, tuple(Event(e.op, outcome, e.t_start_ms, e.t_end_ms) if e.step == step else e
                                         for e in history.events))


def failed(history: History) -> set[str]:
    return {v.rule_id for v in check(history).failures()}


@pytest.mark.parametrize("client", ["python", "java"])
def test_the_model_history_passes(client):
    result = run_case(CASE, ModelTarget(client=client), client=client)
    assert result.status == "PASS", result.failure_text()


@pytest.mark.parametrize("step", [AFTER_DELETE, AFTER_NP_DELETE])
def test_a_schema_listed_after_its_topic_was_deleted_fails(step):
    history = alter(model_history(), step, Outcome.ok(V1_LISTED))
    assert "PLS-SCHEMA-001" in failed(history)


def test_a_partition_delete_that_took_the_schema_fails_on_a_fixed_release():
    history = alter(model_history(), AFTER_PARTITION_DELETE, Outcome.ok({"schemas": []}))
    assert "PLS-SCHEMA-001" in failed(history)


def test_the_new_schema_refused_after_the_delete_fails():
    """The required field FULL would refuse against V1: after the delete nothing is there to refuse it."""
    history = alter(model_history(), SECOND_PRODUCER, Outcome.rejected("IncompatibleSchema", "incompatible"))
    assert failed(history) & {"PLS-SCHEMA-002", "PLS-SCHEMA-003", "PLS-SCHEMA-004", "PLS-SCHEMA-005", "PLS-SCHEMA-001"}


@pytest.mark.parametrize("release, kept", [("2.10.5", True), ("2.11.0", False), ("4.0.8", False)])
def test_a_whole_topic_delete_takes_the_schema_from_2_11(release, kept):
    history = model_history(broker_version=release)
    listed = next(e.outcome.value for e in history.events if e.step == AFTER_DELETE)
    assert (listed == V1_LISTED) is kept, listed


@pytest.mark.parametrize("release, taken", [("2.11.0", True), ("3.1.0", True), ("2.11.4", False), ("3.2.0", False)])
def test_one_partition_delete_takes_the_schema_before_pr_21574(release, taken):
    history = model_history(broker_version=release)
    listed = next(e.outcome.value for e in history.events if e.step == AFTER_PARTITION_DELETE)
    assert (listed == {"schemas": []}) is taken, listed


@pytest.mark.parametrize("listed", [{"schemas": []}, V1_LISTED])
def test_a_release_not_recorded_follows_either_listing(listed):
    """3.0.7: whether the partition's delete took the schema is not recorded: either listing passes, and settles it."""
    history = alter(model_history(broker_version="3.0.7"), AFTER_PARTITION_DELETE, Outcome.ok(listed))
    assert "PLS-SCHEMA-001" not in failed(history)


def test_a_release_not_recorded_still_fails_a_listing_neither_allows():
    history = alter(model_history(broker_version="3.0.7"), AFTER_PARTITION_DELETE,
                    Outcome.ok({"schemas": [{"version": 1, "type": "AVRO"}]}))
    assert "PLS-SCHEMA-001" in failed(history)
