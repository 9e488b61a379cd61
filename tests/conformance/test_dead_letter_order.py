"""The order of dead-letter copies on the DLQ topic (PLS-DLQ-001, ``Broker._next_dead_letter``).

The Java client dead-letters the messages of one timer run from a hash set, so their order on the DLQ topic is
the set's: live on 4.0.8 (2 Dec 2026), hello-0..2 dead-lettered after one ack timeout were written as hello-2,
hello-1, hello-0 (entries 0, 1, 2 of the DLQ ledger), and an Exclusive consumer of the DLQ received them so
(upstream case up-java-dlq-event-time). The C++ client's tracker keeps the ids ordered, so with it that order
breaks the DLQ consumer's order (PLS-EXCL-002).

The histories here are the model's own for the case, with the DLQ consumer's receives rewritten to the order
seen live: the messages reversed, their ids in the DLQ topic's order.
"""

from __future__ import annotations

import copy
from dataclasses import replace


from conformance.case_files import discover_cases
from conformance.checker import check, later_ids
from conformance.targets.model import ModelTarget
from conformance.trace import History, received_message

JAVA_CASE, JAVA_DLQ_CONSUMER = "up-java-dlq-event-time", "d1"  # three copies after one ack timeout
CPP_CASE, CPP_DLQ_CONSUMER = "dlq-whole-batch", "w"  # three copies of one batch after one nack


def _model_history(case_id: str, client: str) -> History:
    case = next(c for c in discover_cases() if c.id == case_id)
    return ModelTarget(client=client).run(case.trace)


def _dlq_receives(history: History, consumer: str = JAVA_DLQ_CONSUMER) -> list[int]:
    return [i for i, e in enumerate(history.events)
            if e.op.op == "receive" and e.op.args["consumer"] == consumer and received_message(e.outcome)]


def _reversed_on_the_dlq(history: History, consumer: str = JAVA_DLQ_CONSUMER) -> History:
    """``history`` with the DLQ consumer's messages in the reverse order, each with the id of the place it came in."""
    steps = _dlq_receives(history, consumer)
    messages = [copy.deepcopy(dict(history.events[i].outcome.value["message"])) for i in steps]
    ids = [m["message_id"] for m in messages]
    events = list(history.events)
    for place, (i, message) in enumerate(zip(steps, reversed(messages))):
        message["message_id"] = ids[place]
        events[i] = replace(events[i], outcome=replace(events[i].outcome, value={"message": message}))
    return replace(history, events=tuple(events))


def _failed(history: History) -> list[tuple[str, int, str]]:
    return [(v.rule_id, v.step, v.anomaly) for v in check(history).verdicts if v.status == "FAIL"]


def test_the_model_writes_the_copies_in_message_order_when_nothing_shows_another():
    history = _model_history(JAVA_CASE, "java")
    labels = [received_message(history.events[i].outcome).payload for i in _dlq_receives(history)]
    assert labels == ["hello-0", "hello-1", "hello-2"]
    assert not _failed(history)


def test_java_copies_in_the_order_seen_live_pass():
    history = _reversed_on_the_dlq(_model_history(JAVA_CASE, "java"))
    labels = [received_message(history.events[i].outcome).payload for i in _dlq_receives(history)]
    assert labels == ["hello-2", "hello-1", "hello-0"]
    assert not _failed(history), _failed(history)
    judged = check(history).rule_verdicts()
    assert judged.get("PLS-DLQ-003") == "PASS" and judged.get("PLS-DLQ-001") == "PASS", judged


def test_cpp_copies_in_another_order_than_the_messages_fail():
    """The C++ tracker keeps the ids it dead-letters in an ordered std::set: the copies of one batch (b0, b1, b2)
    come in the message order, and the reverse order is a FAIL of the DLQ consumer's order."""
    history = _model_history(CPP_CASE, "python")
    assert [received_message(history.events[i].outcome).payload for i in _dlq_receives(history, CPP_DLQ_CONSUMER)] \
        == ["b0", "b1", "b2"]
    assert not _failed(history), _failed(history)
    failed = {rule for rule, _, _ in _failed(_reversed_on_the_dlq(history, CPP_DLQ_CONSUMER))}
    assert "PLS-EXCL-002" in failed, failed


def test_later_ids_are_the_first_receipt_per_topic_and_label():
    history = _reversed_on_the_dlq(_model_history(JAVA_CASE, "java"))
    seen = later_ids(history)
    dlq = {label: entry for (topic, label), (_, entry) in seen.items() if topic.endswith("-DLQ")}
    assert dlq == {"hello-2": 0, "hello-1": 1, "hello-0": 2}
    source = {label for (topic, label) in seen if topic == "t"}
    assert source == {"hello-0", "hello-1", "hello-2"}
