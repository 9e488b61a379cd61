"""The Java client's behaviour by release, judged on live histories recorded with the Java client 2.10.5 on broker
2.10.5 (conformance/evidence/java-client-2.10.5/, 27 Nov 2026): each passes under its own release, and the same
history judged as if it came from 4.0.8 FAILs on the rule whose truth changed between the releases.

- retry and dead-letter copies: no REAL_SUBSCRIPTION before 3.2, no event time before apache/pulsar PR #24059
  (PLS-RETRY-002, PLS-DLQ-003);
- KeyBased batches leave in order of their first message and a lone message is a batch of one before PIP-189
  (PR #16605, 2.11.0: PLS-BATCH-003, PLS-BATCH-008);
- on a non-partitioned topic a 2.x broker makes the first Failover consumer active whatever its priority level
  (PR #4604; PLS-FAILOVER-005 from 3.0, PR #19502).

And on broker 4.0.8 with the Java client 2.7.4 (conformance/evidence/java-client-2.7.4/): a retry-enabled consumer
names its retry and dead-letter topics <namespace>/<sub>-RETRY / -DLQ (before the fix of issue #9327, the names TDMQ
documents for 2.7.2 clusters), and writes no ORIGIN_MESSAGE_ID, setting REAL_TOPIC and the legacy id anew on each
retried copy (before PR #12451).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conformance.checker import check
from conformance.trace import History, load
from reference_model.profiles import profile_for

EVIDENCE = Path(__file__).resolve().parents[2] / "conformance" / "evidence" / "java-client-2.10.5"

# history -> a rule FAILed when the history is judged as the 4.0.8 broker with the Java client 4.0.8
AS_4_0_8_FAILS = {
    "retry-properties-java": "PLS-RETRY-002",
    "retry-to-dlq-java": "PLS-RETRY-002",
    "dlq-java": "PLS-DLQ-003",
    "batch-key-based-java": "PLS-BATCH-003",
    "failover-priority-java": "PLS-FAILOVER-005",
}


OLD_CLIENT = EVIDENCE.parent / "java-client-2.7.4"
AS_NEW_CLIENT_FAILS = {
    "retry-default-name-java": "PLS-RETRY-001",
    "retry-properties-java": "PLS-RETRY-002",
    "retry-to-dlq-java": "PLS-RETRY-001",
    "retry-to-dlq-policy-java": "PLS-RETRY-003",
}


def _history(name: str, folder: Path = EVIDENCE, versions: tuple[str, str] = ("2.10.5", "java 2.10.5")) -> History:
    history = load(folder / f"{name}.history.jsonl")
    assert isinstance(history, History)
    assert (history.header.broker_version, history.header.client_version) == versions
    return history


@pytest.mark.parametrize("name,rule", sorted(AS_NEW_CLIENT_FAILS.items()))
def test_a_java_2_7_4_retry_history_passes_under_its_client_and_fails_as_the_brokers_own(name, rule):
    history = _history(name, OLD_CLIENT, ("4.0.8", "java 2.7.4"))
    assert not check(history).failures(), [str(v) for v in check(history).failures()]
    as_new = History(replace(history.header, client_version="java 4.0.8"), history.events)
    assert rule in {v.rule_id for v in check(as_new).failures()}


@pytest.mark.parametrize("name", sorted(AS_4_0_8_FAILS))
def test_a_2_10_5_java_history_passes_under_its_own_release(name):
    assert not check(_history(name)).failures(), [str(v) for v in check(_history(name)).failures()]


@pytest.mark.parametrize("name,rule", sorted(AS_4_0_8_FAILS.items()))
def test_the_same_history_judged_as_4_0_8_fails_the_rule_that_changed(name, rule):
    history = _history(name)
    as_new = History(replace(history.header, broker_version="4.0.8", client_version="java 4.0.8"), history.events)
    assert rule in {v.rule_id for v in check(as_new).failures()}


def test_the_java_client_fields_by_release():
    old, new = profile_for("2.10.5", "java"), profile_for("4.0.8", "java")
    assert (old.key_batch_order, old.single_message_batch_unbatched, old.failover_priority_non_partitioned) == \
        ("first", False, False)
    assert (new.key_batch_order, new.single_message_batch_unbatched, new.failover_priority_non_partitioned) == \
        ("last", True, True)
    assert profile_for("2.10.5", "java", java_client="4.0.8").key_batch_order == "last"
