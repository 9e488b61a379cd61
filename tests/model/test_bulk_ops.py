"""Issue 46: the bulk ops send_many and consume (docs/trace-format.md#bulk-ops), judged as the sends, receives and
acks they stand for (``conformance.trace.expand_bulk``).

The histories judged here are the model's own, then altered by hand the ways a broker could go wrong inside one
bulk op: a message a consume never got, a message that comes again after its ack, a consume that stopped early
while messages were owed. Each must FAIL the rule it breaks; the model's own history must PASS with every step
followed.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from case_history_helpers import failures
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import History, Outcome, TraceFormatError, bulk_send_args, expand_bulk, make_trace, parse

TOPIC = ("create_topic", {"topic": "t", "partitions": 3})
PRODUCER = ("create_producer", {"producer": "p", "topic": "t", "batching": True})


def _subscribe(consumer: str, kind: str, sub: str = "s") -> tuple[str, dict]:
    return ("subscribe", {"consumer": consumer, "topic": "t", "subscription": sub, "type": kind, "consumer_name": consumer})


def _history(*ops) -> History:
    return ModelTarget().run(make_trace("bulk", ops))


def _consume(consumer: str, most: int = 100) -> tuple[str, dict]:
    return ("consume", {"consumer": consumer, "max": most, "idle_ms": 500})


def _workload(kind: str = "Failover", count: int = 30) -> History:
    return _history(TOPIC, _subscribe("c1", kind), _subscribe("c2", kind), PRODUCER,
                    ("send_many", {"producer": "p", "count": count, "prefix": "m", "keys": 7, "payload_size": 64}),
                    ("flush", {"producer": "p"}), _consume("c1"), _consume("c2"))


def _with_consume_value(history: History, step: int, change) -> History:
    events = []
    for e in history.events:
        if e.step == step:
            value = dict(e.outcome.value)
            change(value)
            e = replace(e, outcome=Outcome.ok(value))
        events.append(e)
    return History(history.header, tuple(events))


def test_send_many_stands_for_its_async_sends_in_order():
    sends = bulk_send_args({"producer": "p", "count": 4, "prefix": "r1-", "keys": 3, "payload_size": 1024})
    assert [s["payload"] for s in sends] == ["r1-1", "r1-2", "r1-3", "r1-4"]
    assert [s["key"] for s in sends] == ["k1", "k2", "k0", "k1"]  # the benchmark's round robin over the keys
    assert all(s["async"] and s["payload_size"] == 1024 and s["producer"] == "p" for s in sends)
    assert "key" not in bulk_send_args({"producer": "p", "count": 1, "prefix": "x"})[0]  # keys 0: keyless


@pytest.mark.parametrize("kind", ["Failover", "Shared", "Key_Shared", "Exclusive"])
def test_the_models_own_bulk_history_passes_with_every_step_followed(kind):
    if kind == "Exclusive":
        h = _history(TOPIC, _subscribe("c1", kind), PRODUCER,
                     ("send_many", {"producer": "p", "count": 30, "prefix": "m", "keys": 7}),
                     ("flush", {"producer": "p"}), _consume("c1"))
    else:
        h = _workload(kind)
    consumed = [m["payload"] for e in h.events if e.op.op == "consume" for m in e.outcome.value["messages"]]
    assert sorted(consumed, key=lambda x: int(x[1:])) == [f"m{i}" for i in range(1, 31)]  # each once, across both
    report = check(h)
    assert not failures(report) and not report.not_followed and not report.harness_errors


def test_a_message_a_consume_never_got_fails_as_lost():
    h = _workload()
    step = next(e.step for e in h.events if e.op.op == "consume" and e.outcome.value["messages"])

    def drop_first(value):
        value["messages"], value["at_ms"] = value["messages"][1:], value["at_ms"][1:]

    broken = failures(check(_with_consume_value(h, step, drop_first)))
    assert {"PLS-FAILOVER-003"} & {rule for rule, _ in broken}, broken


def test_a_message_that_comes_again_after_its_ack_fails_the_ack_rule():
    h = _workload("Shared")
    step = next(e.step for e in h.events if e.op.op == "consume" and len(e.outcome.value["messages"]) >= 2)

    def repeat_first(value):
        value["messages"] = value["messages"] + [value["messages"][0]]
        value["at_ms"] = value["at_ms"] + [value["at_ms"][-1]]

    broken = failures(check(_with_consume_value(h, step, repeat_first)))
    assert "PLS-ACK-001" in {rule for rule, _ in broken}, broken


def test_a_consume_that_stopped_early_while_messages_were_owed_fails():
    """Let the only consumer's consume end as idle after half its messages: the empty receive at its end had the
    rest owed (an Exclusive subscription: no other consumer may have them)."""
    h = _history(TOPIC, _subscribe("c1", "Exclusive"), PRODUCER,
                 ("send_many", {"producer": "p", "count": 30, "prefix": "m", "keys": 7}),
                 ("flush", {"producer": "p"}), _consume("c1"))
    step = next(e.step for e in h.events if e.op.op == "consume")

    def stop_early(value):
        half = len(value["messages"]) // 2
        value["messages"], value["at_ms"] = value["messages"][:half], value["at_ms"][:half]

    broken = failures(check(_with_consume_value(h, step, stop_early)))
    assert "PLS-EXCL-002" in {rule for rule, _ in broken}, broken


def test_how_a_consume_ended_decides_its_last_receive():
    h = _workload()
    consume = next(e for e in h.events if e.op.op == "consume" and e.outcome.value["messages"])
    n = len(consume.outcome.value["messages"])
    idle = list(expand_bulk([consume]))
    assert [e.op.op for e in idle] == ["receive", "ack"] * n + ["receive"]
    assert idle[-1].outcome.value == {"message": None} and all(e.step == consume.step for e in idle)
    times = [e.t_end_ms for e in idle if e.op.op == "receive"]
    assert times == sorted(times) and consume.t_start_ms <= times[0] and times[-1] == consume.t_end_ms
    full = replace(consume, outcome=Outcome.ok({**consume.outcome.value, "ended": "max"}))
    assert [e.op.op for e in expand_bulk([full])][-1] == "ack"  # stopped at max: no empty receive
    gone = replace(consume, outcome=Outcome.ok({**consume.outcome.value, "ended": "disconnected"}))
    assert list(expand_bulk([gone]))[-1].outcome.status == "indeterminate"
    no_ack = replace(consume, op=replace(consume.op, args={**consume.op.args, "ack": False}))
    assert "ack" not in {e.op.op for e in expand_bulk([no_ack])}


def test_a_consume_value_without_one_time_per_message_is_refused():
    header = {"kind": "header", "format": "pulsar-conformance-trace", "version": 1, "trace_id": "x"}
    op = {"kind": "op", "step": 1, "op": "consume", "args": {"consumer": "c", "max": 5, "idle_ms": 10},
          "outcome": {"status": "ok", "value": {"messages": [], "at_ms": [1.0], "ended": "idle"}},
          "t_start_ms": 0, "t_end_ms": 1}
    with pytest.raises(TraceFormatError, match="at_ms"):
        parse("\n".join(json.dumps(x) for x in (header, op)) + "\n")
    op["outcome"]["value"] = {"messages": [], "at_ms": [], "ended": "later"}
    with pytest.raises(TraceFormatError, match="ended"):
        parse("\n".join(json.dumps(x) for x in (header, op)) + "\n")


def test_an_ack_of_a_message_the_model_never_held_is_not_judged():
    """A send the model does not follow (here: a keyless message on a partitioned topic with a Key_Shared
    subscription, whose sticky key the history does not report) leaves its message unknown to the model; a consume
    that gets it and acks it is noted, never a FAIL of the ack rule (found by the workload's first live run, 5 Dec
    2026: the acks of such messages were judged as acks of messages never received)."""
    h = _history(TOPIC, _subscribe("c1", "Key_Shared"), PRODUCER,
                 ("send_many", {"producer": "p", "count": 6, "prefix": "m"}),
                 ("flush", {"producer": "p"}), _consume("c1"))
    # as recorded before the live target reported each partition producer's name (partition_producer_names)
    from dataclasses import replace
    from conformance.trace import History
    h = History(h.header, tuple(
        replace(e, outcome=replace(e.outcome, value={k: v for k, v in e.outcome.value.items()
                                                     if k != "partition_producer_names"}))
        if e.op.op == "create_producer" else e for e in h.events))
    report = check(h)
    assert report.not_followed and not failures(report)


def test_a_rule_passes_once_per_bulk_op_with_a_count_of_the_rest():
    """A consume of k messages on a partitioned topic: PLS-TOPIC-002 is judged at each message received (its topic and
    id name one partition), so it PASSes once at the consume's step and says it held at k - 1 more; a FAIL inside the
    same consume is still its own verdict (the other tests here)."""
    h = _workload("Shared")
    for e in h.events:
        if e.op.op != "consume" or len(e.outcome.value["messages"]) < 2:
            continue
        k = len(e.outcome.value["messages"])
        passes = [v for v in check(h).verdicts if v.step == e.step and v.rule_id == "PLS-TOPIC-002"]
        assert len(passes) == 1 and passes[0].status == "PASS"
        assert f"held at {k - 1} more of the sends, receives and acks of bulk op step {e.step}" in passes[0].explanation
        return
    pytest.fail("no consume received two messages")
