"""A partition key given as bytes (PLS-MSG-002): the Java client's keyBytes, judged. Each alteration of a case's model
history that breaks the rule FAILs it (or the Key_Shared rule that routes by the bytes); the unaltered ones pass.

Cases message-key-bytes-java (Java producer and consumers, Key_Shared by the bytes) and cross-message-key-bytes (a
Python consumer sees the Base64 text only; a Python producer cannot send a key as bytes).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.case_files import discover_cases
from conformance.checker import check
from conformance.runner import run_case
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome, TraceFormatError, received_message, validate_op

CASES = {c.id: c for c in discover_cases()}
JAVA, CROSS = "message-key-bytes-java", "cross-message-key-bytes"


def model_history(case_id: str) -> History:
    client = CASES[case_id].clients[0]
    result = run_case(CASES[case_id], ModelTarget(client=client), client=client)
    assert result.status == "PASS", result.failure_text()
    return result.history


def shows(history: History, step: int, change) -> History:
    """``history`` with the message received at ``step`` changed by ``change`` (an ObservedMessage -> ObservedMessage)."""
    events = []
    for e in history.events:
        if e.step == step:
            e = Event(e.op, Outcome.ok({"message": change(received_message(e.outcome)).to_json()}), e.t_start_ms, e.t_end_ms)
        events.append(e)
    return History(history.header, tuple(events))


def message_at(history: History, step: int):
    return received_message(next(e for e in history.events if e.step == step).outcome)


def failed(history: History) -> set[tuple[str, str | None]]:
    return {(v.rule_id, v.anomaly) for v in check(history).failures()}


@pytest.mark.parametrize("case_id", [JAVA, CROSS])
def test_the_unaltered_histories_pass(case_id):
    assert not failed(model_history(case_id))


def test_the_model_reports_the_bytes_to_a_java_consumer_and_the_text_to_a_python_one():
    java = message_at(model_history(JAVA), 12)
    assert (java.payload, java.key, java.key_bytes) == ("m1", "/wAB", "ff0001")
    text_key = message_at(model_history(JAVA), 14)
    assert (text_key.payload, text_key.key, text_key.key_bytes) == ("m3", "/wAB", None)
    python = message_at(model_history(CROSS), 8)
    assert (python.payload, python.key, python.key_bytes) == ("m1", "/wAB", None)


def test_a_java_consumer_without_the_bytes_fails_msg_002():
    history = shows(model_history(JAVA), 12, lambda m: replace(m, key_bytes=None))
    assert ("PLS-MSG-002", "wrong-value") in failed(history)


def test_a_key_that_arrives_as_the_hex_text_fails_msg_002_and_not_msg_001():
    history = shows(model_history(CROSS), 8, lambda m: replace(m, key="ff0001"))
    rules = failed(history)
    assert ("PLS-MSG-002", "wrong-value") in rules and "PLS-MSG-001" not in {r for r, _ in rules}


def test_routing_by_the_base64_text_fails_the_sticky_key_rule():
    """m1's bytes belong to ca's range, its text to cb's; m2 the other way round: routed by the text, they swap."""
    history = model_history(JAVA)
    m1, m2 = message_at(history, 8), message_at(history, 9)
    swapped = shows(shows(history, 8, lambda _: m2), 9, lambda _: m1)
    assert ("PLS-KEYSHARED-001", "key-stickiness-violation") in failed(swapped)


def test_a_python_producer_let_send_a_key_as_bytes_fails_msg_002():
    events = [Event(e.op, Outcome.ok({"message_id": [9, 9, -1, -1], "sequence_id": 1, "id_text": "(9,9,-1,-1)"}),
                    e.t_start_ms, e.t_end_ms) if e.step == 6 else e for e in model_history(CROSS).events]
    assert ("PLS-MSG-002", "missing-rejection") in failed(History(model_history(CROSS).header, tuple(events)))


@pytest.mark.parametrize("args, says", [
    ({"producer": "p", "payload": "m", "key": "k", "key_bytes": "00"}, "not both"),
    ({"producer": "p", "payload": "m", "key_bytes": "0"}, "two digits each"),
    ({"producer": "p", "payload": "m", "key_bytes": "zz"}, "two digits each"),
    ({"producer": "p", "payload": "m", "key_bytes": "00 ff "}, "two digits each"),
    ({"producer": "p", "payload": "m", "key_bytes": ""}, "two digits each"),
])
def test_malformed_binary_keys_are_refused(args, says):
    with pytest.raises(TraceFormatError, match=says):
        validate_op("send", args)
