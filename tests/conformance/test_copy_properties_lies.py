"""A dead-letter or retry copy carries exactly the original's properties plus the ones its client adds (PLS-DLQ-003,
PLS-DLQ-008 for a Go consumer's copy, PLS-RETRY-002): the random-lie benchmark (benchmarks/random_lies.py) added a
property to such a copy in 13 live histories and the checker let every one through, because it only looked for
the properties a copy must have, never at one it must not.

Each history was recorded on a live 4.0.8 broker (target "embedded"). The expected verdicts come from what each
client writes, not from the checker's output:

- C++/Python ``ConsumerImpl::processPossibleToDLQ`` (apache/pulsar-client-cpp lib/ConsumerImpl.cc) copies the
  message's properties and adds ORIGIN_MESSAGE_ID '(l,e,p,b)' and REAL_TOPIC;
- Java ``ConsumerImpl#getPropertiesMap`` (apache/pulsar pulsar-client .../impl/ConsumerImpl.java) copies them and
  puts, each only if absent, REAL_TOPIC, ORIGIN_MESSAGE_ID and ORIGIN_MESSAGE_IDY_TIME 'l:e:p[:b]' and
  REAL_SUBSCRIPTION; ``doReconsumeLater`` adds RECONSUMETIMES and DELAY_TIME and writes that one map to the retry
  topic or, past maxRedeliverCount, to the dead-letter topic;
- Go (pulsar-client-go 0.19.0 dlq_router.go, ``SysPropertyRealTopic``, ``SysPropertyOriginMessageID``,
  ``PropertyOriginMessageID``) copies them and adds REAL_TOPIC and the id 'l:e:p' under both id keys.

None of them adds anything else, and the traces give reconsume_later no custom properties: a property on the copy
that neither the original had nor its client adds did not come from the client.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conformance.checker import check
from conformance.trace import History, Outcome, load, received_message

LIVE = Path(__file__).resolve().parent / "live_histories"
PYTHON_DLQ = LIVE / "live-4.0.8-dlq-default-name-python.jsonl"
JAVA_RETRY = LIVE / "live-4.0.8-retry-properties-java.jsonl"
JAVA_RETRY_TO_DLQ = LIVE / "live-4.0.8-retry-to-dlq-policy-java.jsonl"
GO_DLQ = LIVE / "live-4.0.8-dlq-named-topic-go.jsonl"


def _with_property(h: History, step: int, key: str, value: str) -> History:
    """``h`` with the message received at ``step`` carrying one more property."""
    events = list(h.events)
    i = next(i for i, e in enumerate(events) if e.step == step)
    msg = received_message(events[i].outcome)
    assert key not in msg.properties
    changed = replace(msg, properties={**dict(msg.properties), key: value})
    events[i] = replace(events[i], outcome=Outcome.ok({**events[i].outcome.value, "message": changed.to_json()}))
    return History(h.header, tuple(events))


def _verdicts(h: History, rule: str, step: int) -> list[str]:
    return [v.status for v in check(h).verdicts if v.rule_id == rule and v.step == step]


def test_a_python_dead_letter_copy_with_an_extra_property_fails_pls_dlq_003():
    """Python 3.13.0, Shared, max_redeliver_count 1: m1 (no properties) nacked twice, and consumer d reads its copy
    from t-s-DLQ at step 9 with ORIGIN_MESSAGE_ID '(366,0,-1,-1)' and REAL_TOPIC only. The lie adds 'TAGS-x': 'v'.
    PLS-DLQ-003: properties = original + ORIGIN_MESSAGE_ID + REAL_TOPIC; m1 had none, and the C++ client adds
    nothing else."""
    h = load(PYTHON_DLQ)
    assert check(h).ok, check(h).summary()
    assert _verdicts(h, "PLS-DLQ-003", 9) == ["PASS"]
    assert _verdicts(_with_property(h, 9, "TAGS-x", "v"), "PLS-DLQ-003", 9) == ["FAIL"]


def test_a_java_retry_copy_with_an_extra_property_fails_pls_retry_002():
    """Java 4.0.8, retry on: m1 sent with property app=v, reconsumed later twice; its copies arrive from t-s-RETRY at
    steps 6 and 8 with app=v, REAL_TOPIC, REAL_SUBSCRIPTION, both origin ids, DELAY_TIME and RECONSUMETIMES 1, then 2
    (the second a copy of the first: it keeps the first's origin, putIfAbsent). The lie adds 'k': 'v' to either.
    PLS-RETRY-002: the copy is the original's properties plus the retry properties; 'k' is neither."""
    h = load(JAVA_RETRY)
    assert check(h).ok, check(h).summary()
    for step in (6, 8):
        assert _verdicts(h, "PLS-RETRY-002", step) == ["PASS"]
        assert _verdicts(_with_property(h, step, "k", "v"), "PLS-RETRY-002", step) == ["FAIL"]


def test_a_java_reconsume_past_the_maximum_with_an_extra_property_fails_pls_retry_002():
    """Java 4.0.8, retry on, dead-letter policy max_redeliver_count 1 on topic 'dead': the second reconsumeLater has
    RECONSUMETIMES 2 > 1, so doReconsumeLater writes the copy to 'dead' (PLS-RETRY-003), read by d at step 9 with the
    same retry properties (DELAY_TIME 200, RECONSUMETIMES 2). The lie adds 'k': 'v'. The copy's properties are
    PLS-RETRY-002's on either topic (the one map doReconsumeLater builds), and m1 had none of its own."""
    h = load(JAVA_RETRY_TO_DLQ)
    assert check(h).ok, check(h).summary()
    assert _verdicts(h, "PLS-RETRY-002", 9) == ["PASS"]
    assert _verdicts(_with_property(h, 9, "k", "v"), "PLS-RETRY-002", 9) == ["FAIL"]


def test_a_go_dead_letter_copy_with_an_extra_property_fails_pls_dlq_008():
    """Go 0.19.0, Shared, MaxDeliveries 1, dead-letter topic 'dlq': m1 and m2 (no properties) are each nacked once
    and their copies read by c3 at steps 11 and 17 with REAL_TOPIC and the id 'l:e:0' under ORIGIN_MESSAGE_ID and
    ORIGIN_MESSAGE_IDY_TIME. The lie adds 'TAGS-x': 'v' to m2's copy. PLS-DLQ-008: the Go client's copy carries the
    original's properties, REAL_TOPIC and the two id keys, and nothing else."""
    h = load(GO_DLQ)
    assert check(h).ok, check(h).summary()
    assert _verdicts(h, "PLS-DLQ-008", 17) == ["PASS"]
    assert _verdicts(_with_property(h, 17, "TAGS-x", "v"), "PLS-DLQ-008", 17) == ["FAIL"]
