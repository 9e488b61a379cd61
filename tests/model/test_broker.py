"""The composition broker.py: subscriptions, readers, producers, the op table (PLS-SUB, READER, PROD, MSG, ACK-003/006)."""

from __future__ import annotations

import pytest

from broker_trace_helpers import P, labels, received, recv, run, send, sub
from case_history_helpers import failures, java_history, replace_outcome
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Outcome, make_trace, received_message
from reference_model.broker import Broker
from reference_model.rejections import ModelError, Rejected
from reference_model.timing import Span


def test_latest_skips_earlier_messages_and_earliest_does_not():
    # PLS-SUB-002 / PLS-SUB-003 / PLS-SUB-004
    h = run(P, send("m0"), sub("c1"), send("m1"), recv("c1"), recv("c1"),
            ("subscribe", {"consumer": "c2", "topic": "t", "subscription": "e", "initial_position": "Earliest"}),
            recv("c2"), recv("c2"))
    assert labels(h) == ["m1", None, "m0", "m1"]


def test_reconnect_resumes_at_first_unacked_skipping_holes():
    # PLS-SUB-001 / PLS-SUB-004 / PLS-SUB-005
    h = run(sub("c1"), P, send("m0"), send("m1"), send("m2"), recv("c1"), recv("c1"), recv("c1"),
            ("ack", {"consumer": "c1", "message": "m1"}), ("close", {"handle": "c1"}), send("m3"),
            sub("c2", initial_position="Latest"), recv("c2"), recv("c2"), recv("c2"),
            ("stats", {"topic": "t", "subscription": "s"}))
    assert labels(h) == ["m0", "m1", "m2", "m0", "m2", "m3"]
    assert h.events[-1].outcome.value == {"backlog": 3}


def test_unsubscribe_deletes_subscription():
    # PLS-SUB-006
    h = run(sub("c1"), P, send("m0"), ("unsubscribe", {"consumer": "c1"}), send("m1"), sub("c2"), send("m2"), recv("c2"), recv("c2"))
    assert labels(h) == ["m2", None]


def test_shared_cumulative_ack_refused():
    # PLS-ACK-003
    h = run(sub("c1", "Shared"), P, send("m0"), recv("c1"), ("ack_cumulative", {"consumer": "c1", "message": "m0"}))
    assert h.events[-1].outcome.error == "CumulativeAcknowledgementNotAllowedError"


def test_readers():
    # PLS-READER-001..004
    ops = [P, send("m0"), send("m1"), send("m2")]
    rd = lambda r, start, **kw: ("create_reader", {"reader": r, "topic": "t", "start": start, **kw})
    nxt = lambda r: ("read_next", {"reader": r, "timeout_ms": 100})
    h = run(*ops, rd("r1", "earliest"), nxt("r1"), nxt("r1"), nxt("r1"), nxt("r1"))
    assert labels(h) == ["m0", "m1", "m2", None]
    h = run(*ops, rd("r1", "latest"), nxt("r1"), send("m3"), nxt("r1"))
    assert labels(h) == [None, "m3"]
    h = run(*ops, rd("r1", {"message": "m0"}), nxt("r1"))
    assert labels(h) == ["m1"]
    h = run(*ops, rd("r1", {"message": "m0"}, inclusive=True), nxt("r1"))
    assert labels(h) == ["m0"]


def test_producer_sequence_ids_and_busy_names():
    # PLS-PROD-001
    b = Broker()
    v = b.apply("create_producer", {"producer": "p", "topic": "t", "initial_sequence_id": 9}, Span.at(0))
    assert v["last_sequence_id"] == 9
    b.apply("send", {"producer": "p", "payload": "m0"}, Span.at(0))
    assert b.message("m0").sequence_id == 10
    b.apply("create_producer", {"producer": "q", "topic": "t", "name": "n"}, Span.at(0))
    got = b.apply("create_producer", {"producer": "r", "topic": "t", "name": "n"}, Span.at(0))
    assert isinstance(got, Rejected) and got.error == "ProducerBusy"


def test_message_fields_kept():
    # PLS-MSG-001
    h = run(sub("c1"), P, send("m0", key="k", ordering_key="ok", properties={"a": "1"}, event_time=42), recv("c1"))
    m = h.events[-1].outcome.value["message"]
    assert (m["key"], m["ordering_key"], m["properties"], m["event_time"], m["topic"]) == ("k", "ok", {"a": "1"}, 42, "t")
    assert m["message_id"][2:] == [-1, -1]


def test_unmodelled_ops_are_indeterminate_not_wrong():
    # a pattern that matches no topic yet would need auto-discovery, which is not modelled
    h = ModelTarget().run(make_trace("t", [("subscribe", {"consumer": "c1", "topics_pattern": "nothing-.*", "subscription": "s"})]))
    assert h.events[0].outcome.status == "indeterminate" and "not modelled" in h.events[0].outcome.detail
    report = check(h)
    assert report.ok and report.notes


def test_key_shared_is_judged_as_shared_and_refuses_cumulative_ack():
    # PLS-ACK-003 on Key_Shared; dispatch judged with Shared's allowed sets.
    h = run(sub("c1", "Key_Shared"), P, send("m0"), recv("c1"), ("ack_cumulative", {"consumer": "c1", "message": "m0"}))
    assert labels(h) == ["m0"]
    assert h.events[-1].outcome.error == "CumulativeAcknowledgementNotAllowedError"


def test_partitioned_topic_round_robin_and_union_of_partitions():
    # PLS-TOPIC-002 / PLS-MSGID-001: partition i is t-partition-i and the id carries i.
    h = run(("create_topic", {"topic": "t", "partitions": 2}), sub("c1"), P, send("m0"), send("m1"), send("m2"),
            recv("c1"), recv("c1"), recv("c1"), recv("c1", 10), ("stats", {"topic": "t", "subscription": "s"}))
    got = [e.outcome.value["message"] for e in h.events if e.op.op == "receive" and e.outcome.value["message"]]
    assert [(m["payload"], m["topic"], m["message_id"][2]) for m in got] == [
        ("m0", "t-partition-0", 0), ("m1", "t-partition-1", 1), ("m2", "t-partition-0", 0)]
    assert h.events[-1].outcome.value == {"backlog": 3}


def test_dead_letter_after_max_redeliveries():
    # PLS-DLQ-001 (C++): counts 0..N reach the app, the (N+1)-th nack publishes to <t>-<s>-DLQ.
    h = run(("subscribe", {"consumer": "d", "topic": "t-s-DLQ", "subscription": "d"}),
            sub("c1", "Shared", nack_delay_ms=200, dead_letter={"max_redeliver_count": 1}), P, send("m1"),
            recv("c1"), ("nack", {"consumer": "c1", "message": "m1"}), recv("c1"),
            ("nack", {"consumer": "c1", "message": "m1"}), recv("d", 2000), recv("c1", 500),
            ("stats", {"topic": "t", "subscription": "s"}))
    assert received(h)[:3] == [("m1", 0, 0), ("m1", 1, 200), ("m1", 0, 400)]
    dlq = h.events[8].outcome.value["message"]
    assert dlq["topic"] == "t-s-DLQ" and dlq["properties"]["REAL_TOPIC"] == "persistent://public/default/t"
    assert dlq["properties"]["ORIGIN_MESSAGE_ID"] == "(2,0,-1,-1)"
    assert labels(h)[-1] is None and h.events[-1].outcome.value == {"backlog": 0}


def test_the_op_table_covers_the_trace_vocabulary():
    """Every op the trace format defines is either a step of the composition (``Broker.STEPS``)
    or an observation the model follows elsewhere (receive/read_next, stats), or a bulk form of those
    (send_many, consume: conformance.trace.expand_bulk)."""
    from conformance.trace import OP_SPECS

    observations = {"receive", "read_next", "stats", "send_many", "consume"}
    assert set(Broker.STEPS) == set(OP_SPECS) - observations
    with pytest.raises(ModelError, match="op 'receive' is not applied with Broker.apply; it applies advance_time"):
        Broker().apply("receive", {"consumer": "c"}, Span.at(0))


def test_a_refusal_names_an_anomaly_from_the_vocabulary():
    from reference_model.dispatch.base import Refusal

    assert Refusal("lost-message", "PLS-SHARED-001", "why").anomaly == "lost-message"
    with pytest.raises(KeyError, match="unknown anomaly 'message-lost'; add it to reference_model.anomalies"):
        Refusal("message-lost", "PLS-SHARED-001", "why")


def _state(value, seen=None):
    """A comparable picture of everything reachable from ``value`` (callables left out)."""
    seen = set() if seen is None else seen
    if value is None or isinstance(value, (bool, int, float, str, bytes)):
        return value
    if callable(value) and not hasattr(value, "__dict__") or type(value).__name__ in ("function", "method"):
        return "<callable>"
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return [_state(v, seen) for v in value]
    if id(value) in seen:
        return f"<seen {type(value).__name__}>"
    seen.add(id(value))
    if isinstance(value, dict):
        return [(repr(k), _state(v, seen)) for k, v in sorted(value.items(), key=lambda kv: repr(kv[0]))]
    if isinstance(value, (set, frozenset)):
        return sorted(repr(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [_state(v, seen) for v in value]
    if hasattr(value, "__dict__"):
        return (type(value).__name__, _state(vars(value), seen))
    if hasattr(value, "__slots__"):
        return (type(value).__name__, [_state(getattr(value, s, None), seen) for s in value.__slots__])
    return repr(value)


def test_predict_changes_nothing_and_agrees_with_step(monkeypatch):
    """``predict`` runs a step to its decision only: across every case, predicting an op leaves
    the model as it was (but for the clock), and a refusal it predicts is the one the step gives."""
    import conformance.targets.model as model_target
    from conformance.case_files import discover_cases

    checked = []

    class Watched(Broker):
        def apply(self, op, args, at, *, observed=None):
            self.advance(at.start)
            before = _state(self)
            predicted = self.predict(op, args, at)
            assert _state(self) == before, f"predict({op}) changed the model"
            outcome = super().apply(op, args, at, observed=observed)
            if predicted is not None:
                assert outcome == predicted, (op, predicted, outcome)
            checked.append(op)
            return outcome

    monkeypatch.setattr(model_target, "Broker", Watched)
    for case in discover_cases():
        model_target.ModelTarget().run(case.trace)
    assert {"subscribe", "send", "ack", "nack", "create_producer", "seek", "close", "flush"} <= set(checked)


# ---------------------------------------------------------------- PLS-ACK-006 (Java)


def test_java_cumulative_ack_on_shared():
    history = java_history("ack-cumulative-shared-java")
    assert check(history).ok
    assert ("PLS-ACK-006", "wrong-error") in failures(
        replace_outcome(history, 7, Outcome.rejected("CumulativeAcknowledgementNotAllowedError")))
    assert ("PLS-ACK-006", "missing-rejection") in failures(replace_outcome(history, 8, Outcome.ok({})))


# ---------------------------------------------------------------- PLS-SUB-007 / -008 (Java)


def test_non_durable_case_passes():
    report = check(java_history("non-durable-java"))
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-SUB-007"] == "PASS"


def test_stats_of_a_gone_non_durable_subscription_must_fail():
    history = java_history("non-durable-java")
    assert ("PLS-SUB-007", "missing-rejection") in failures(replace_outcome(history, 10, Outcome.ok({"backlog": 1})))


def test_a_non_durable_resubscribe_must_not_see_messages_sent_meanwhile():
    history = java_history("non-durable-java")
    m2 = history.events[10].outcome.value["message_id"]
    m3 = received_message(history.events[14].outcome)
    broken = replace_outcome(history, 13, Outcome.ok({"message": dict(m3.to_json(), payload="m2", message_id=m2)}))
    assert ("PLS-SUB-007", "wrong-value") in failures(broken)


def test_non_durable_on_a_durable_name():
    history = java_history("non-durable-name-taken-java")
    assert check(history).ok
    assert ("PLS-SUB-008", "missing-rejection") in failures(replace_outcome(history, 3, Outcome.ok({})))


def test_a_non_persistent_topic_has_no_durable_subscriptions():
    # PLS-SUB-008 holds on persistent topics; on a non-persistent one the mode is ignored and the type check
    # answers (live 4.0.8, Java: pls-sub-008-wrong-error-bbd35633b035)
    np = "non-persistent://public/default/n"
    ops = [("subscribe", {"consumer": "c1", "topic": np, "subscription": "s1", "type": "Failover", "client": "java"}),
           ("subscribe", {"consumer": "c2", "topic": np, "subscription": "s1", "type": "Shared", "client": "java",
                          "subscription_mode": "NonDurable"})]
    h = ModelTarget().run(make_trace("t", ops))
    assert (h.events[1].outcome.status, h.events[1].outcome.error) == ("rejected", "ConsumerBusy")
    ops[1][1]["type"] = "Failover"
    h = ModelTarget().run(make_trace("t", ops))
    assert h.events[1].outcome.status == "ok"


def test_a_topic_a_connected_pattern_consumer_matches_is_not_modelled_when_created():
    # auto-discovery (live 4.0.8, Java: pls-sub-001-wrong-value-440f7b582907): the pattern consumer may subscribe at once
    ops = [("create_topic", {"topic": "u"}),
           ("subscribe", {"consumer": "c1", "topics_pattern": "[tu]", "subscription": "s1", "type": "Shared"}),
           ("create_producer", {"producer": "p1", "topic": "t"}),
           ("create_producer", {"producer": "p2", "topic": "v"})]
    h = ModelTarget().run(make_trace("t", ops))
    assert [e.outcome.status for e in h.events] == ["ok", "ok", "indeterminate", "ok"]
    assert "auto-discovery" in h.events[2].outcome.detail
