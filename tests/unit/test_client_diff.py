"""diff-clients' classification: same, differs explained by a client rule, allowed, unexplained.

The "live" runs here are the model itself with each client's profile (a faithful broker), and a
tampered copy of one of them (a broker that breaks a rule); the live comparison against the
embedded broker is in tests/live/test_java_client.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.client_diff import ALLOWED, EXPLAINED, SAME, UNEXPLAINED, diff_clients
from conformance.targets.model import ModelTarget
from conformance.trace import load, Event, History, Op, Outcome, Trace, TraceHeader

# a cumulative ack on Shared: both clients refuse it, each with its own error (PLS-ACK-003 / PLS-ACK-006)
CUMULATIVE_TRACE = load(Path(__file__).resolve().parents[1] / "data" / "cumulative-ack-shared.trace.jsonl")


def model(client: str) -> History:
    return ModelTarget(client=None if client == "python" else client).run(CUMULATIVE_TRACE)


def test_a_difference_the_model_predicts_is_explained_by_its_rule():
    diff = diff_clients(CUMULATIVE_TRACE, run_on=model, model_on=model)
    by_step = {s.step: s for s in diff.steps}
    assert all(by_step[i].verdict == SAME for i in range(1, 9)), diff.text()
    refused = by_step[9]
    assert refused.verdict == EXPLAINED, diff.text()
    assert refused.observed["python"] == {"status": "rejected", "error": "CumulativeAcknowledgementNotAllowedError"}
    assert refused.observed["java"] == {"status": "rejected", "error": "InvalidConfiguration"}
    assert {"PLS-ACK-003", "PLS-ACK-006"} & set(refused.rules), refused.rules


def test_a_broken_history_is_unexplained_and_names_the_rule():
    def tampered(client: str) -> History:
        history = model(client)
        if client != "java":
            return history
        events = list(history.events)  # a Java client that accepted the cumulative ack on Shared
        events[8] = Event(events[8].op, Outcome.ok({}), events[8].t_start_ms, events[8].t_end_ms)
        return History(history.header, tuple(events))

    diff = diff_clients(CUMULATIVE_TRACE, run_on=tampered, model_on=model)
    refused = {s.step: s for s in diff.steps}[9]
    assert refused.verdict == UNEXPLAINED, diff.text()
    assert refused.rules


SHARED_TRACE = Trace(TraceHeader(trace_id="shared-two", title="who gets m1", rules=("PLS-SHARED-001",)), tuple(
    Op(i, name, args) for i, (name, args) in enumerate([
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared", "receiver_queue_size": 1}),
        ("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Shared", "receiver_queue_size": 1}),
        ("create_producer", {"producer": "p1", "topic": "t"}),
        ("send", {"producer": "p1", "payload": "m1"}),
        ("receive", {"consumer": "c2", "timeout_ms": 500}),
        ("receive", {"consumer": "c1", "timeout_ms": 500}),
    ], start=1)))


def test_an_outcome_both_clients_may_have_is_allowed_not_a_client_difference():
    def on(client: str) -> History:
        return ModelTarget(client=None if client == "python" else client).run(SHARED_TRACE)

    def other_consumer(client: str) -> History:
        history = on(client)
        if client != "java":
            return history
        events = list(history.events)  # Shared: c1 may have been the one that got m1
        e5, e6 = events[4], events[5]
        got = e5.outcome.value["message"] or e6.outcome.value["message"]
        events[4] = Event(e5.op, Outcome.ok({"message": None}), e5.t_start_ms, e5.t_end_ms)
        events[5] = Event(e6.op, Outcome.ok({"message": got}), e6.t_start_ms, e6.t_end_ms)
        return History(history.header, tuple(events))

    diff = diff_clients(SHARED_TRACE, run_on=other_consumer, model_on=on)
    verdicts = {s.step: s.verdict for s in diff.steps}
    assert verdicts[5] == ALLOWED and verdicts[6] == ALLOWED, diff.text()


def test_runs_must_be_driven_by_the_client_they_are_compared_as():
    with pytest.raises(ValueError, match="reports client"):
        diff_clients(CUMULATIVE_TRACE, run_on=lambda c: model("java"), model_on=model)


def test_a_cross_client_trace_is_refused():
    trace = Trace(CUMULATIVE_TRACE.header, (Op(1, "subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "client": "java"}),))
    with pytest.raises(ValueError, match="names the client of its handles"):
        diff_clients(trace, run_on=model, model_on=model)


def test_topic_names_in_properties_are_compared_without_the_runs_namespace():
    from conformance.client_diff import normalise

    def event(real_topic: str, origin: str):
        message = {"payload": "m1", "redelivery_count": 0, "topic": "t-s-DLQ", "key": None, "ordering_key": None,
                   "properties": {"REAL_TOPIC": real_topic, "ORIGIN_MESSAGE_ID": origin}}
        return Event(Op(1, "receive", {"consumer": "w", "timeout_ms": 1}), Outcome.ok({"message": message}), 0.0, 1.0)

    a = normalise(event("persistent://public/conf-ab12/t", "(12,3,-1,-1)"))
    b = normalise(event("persistent://public/conf-zz99/t", "(40,0,-1,-1)"))
    c = normalise(event("persistent://public/conf-zz99/t", "40:0:-1"))
    assert a == b and a != c  # same shape across runs; the clients' id formats still differ


def test_three_clients_each_refusing_in_their_own_words_are_explained():
    diff = diff_clients(CUMULATIVE_TRACE, run_on=model, model_on=model, clients=("python", "java", "go"))
    refused = {s.step: s for s in diff.steps}[9]
    assert refused.verdict == EXPLAINED, diff.text()
    assert refused.observed["go"] == {"status": "rejected", "error": "InvalidAck"}
    assert "PLS-ACK-007" in refused.rules, refused.rules
    assert "      go " in diff.text() and diff.to_json()["clients"] == ["python", "java", "go"]


def test_a_go_run_that_answers_like_java_is_unexplained_on_the_go_rule():
    def go_says_invalid_configuration(client: str) -> History:
        history = model(client)
        if client != "go":
            return history
        events = list(history.events)
        events[8] = Event(events[8].op, Outcome.rejected("InvalidConfiguration", "as Java would"),
                          events[8].t_start_ms, events[8].t_end_ms)
        return History(history.header, tuple(events))

    diff = diff_clients(CUMULATIVE_TRACE, run_on=go_says_invalid_configuration, model_on=model, clients=("java", "go"))
    refused = {s.step: s for s in diff.steps}[9]
    assert refused.verdict == UNEXPLAINED and "PLS-ACK-007" in refused.rules, diff.text()


@pytest.mark.parametrize("clients", [("python",), ("python", "python"), ("python", "ruby"), ()])
def test_clients_must_be_two_or_more_known_and_different(clients):
    with pytest.raises(ValueError, match="two or more different clients"):
        diff_clients(CUMULATIVE_TRACE, run_on=model, model_on=model, clients=clients)


def test_the_cli_refuses_a_bad_client_list_before_starting_a_broker(capsys):
    from pulsar_conformance.cli import main

    code = main(["diff-clients", "ack-cumulative-shared-refused", "--target", "embedded", "--clients", "python,rust"])
    assert code == 2
    assert "--clients 'python,rust'" in capsys.readouterr().err
