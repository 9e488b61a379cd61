"""The model FAILed its own checker on 15 traces of seed 11's 441,000-trace campaign (issue 45 item 4): each
fix ends a false FAIL, and each rule it touches still FAILs a history that breaks it.

The shrunk traces are regressions in ``conformance/regressions/`` (replayed by tests/fuzz/test_regressions.py).
Here each one is run on the model and judged (no FAIL); then the same trace without what made the fix
necessary is run, a wrong observation is written into its history, and the checker must FAIL the rule.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import History, Outcome, Trace, load, make_trace

from model_history_helpers import H

STORE = Path(__file__).resolve().parents[2] / "conformance" / "regressions"


def _stored(name: str) -> Trace:
    trace = load(STORE / f"{name}.trace.jsonl")
    assert isinstance(trace, Trace)
    return trace


def _ops(trace: Trace) -> list[tuple[str, dict[str, Any]]]:
    return [(op.op, dict(op.args)) for op in trace.ops]


def _run(ops: list[tuple[str, dict[str, Any]]]) -> History:
    return ModelTarget().run(make_trace("seed11", ops))


def _observe(history: History, step: int, value: dict[str, Any], end: float | None = None) -> History:
    """``history`` with step ``step``'s ok value replaced by ``value`` (and its end time by ``end``)."""
    events = tuple(replace(e, outcome=Outcome.ok(value), t_end_ms=e.t_end_ms if end is None else end)
                   if e.step == step else e for e in history.events)
    return replace(history, events=events)


def _fails(history: History) -> set[tuple[str, str | None]]:
    return {(v.rule_id, v.anomaly) for v in check(history).failures()}


# ---------------------------------------------------------------- PLS-BACKLOG-001: a consumer not followed acts

def test_a_consumer_not_followed_that_acks_leaves_its_backlog_unjudged():
    trace = _stored("pls-backlog-001-wrong-backlog-b55ea1aa480c")  # compact, then the read_compacted c1 acks m1
    report = check(ModelTarget().run(trace))
    assert not report.failures()
    assert any("stats not judged" in n and "s1" in n for n in report.notes), report.notes


def test_a_backlog_is_still_judged_where_the_consumer_is_followed():
    ops = [o for o in _ops(_stored("pls-backlog-001-wrong-backlog-b55ea1aa480c")) if o[0] != "compact"]
    history = _run(ops)
    stats = next(e for e in history.events if e.op.op == "stats")
    assert stats.outcome.value["backlog"] == 0  # c1's ack of m1 (no compaction: c1 is followed)
    assert ("PLS-BACKLOG-001", "wrong-backlog") in _fails(_observe(history, stats.step, {"backlog": 1}))


def test_only_the_subscription_of_the_consumer_not_followed_goes_unjudged():
    ops = _ops(_stored("pls-backlog-001-wrong-backlog-b55ea1aa480c"))
    # a second subscription on t whose consumer reads normally; m1 stays in its backlog
    ops.insert(1, ("subscribe", {"consumer": "c9", "topic": "t", "subscription": "s9", "type": "Shared"}))
    ops.append(("stats", {"topic": "t", "subscription": "s9"}))
    history = _run(ops)
    last = history.events[-1]
    assert last.outcome.value["backlog"] == 1
    assert not _fails(history)
    assert ("PLS-BACKLOG-001", "wrong-backlog") in _fails(_observe(history, last.step, {"backlog": 0}))


# ---------------------------------------------------------------- PLS-KEYSHARED-003: a consumer not followed on the ring

def _ranges_stats(history: History):
    return next(e for e in history.events if e.op.op == "stats")


def test_hash_ranges_are_not_judged_when_a_consumer_on_the_ring_is_not_followed():
    trace = _stored("pls-keyshared-003-wrong-value-0c67fc511be4")  # a fenced send: c3 may have reconnected
    report = check(ModelTarget().run(trace))
    assert not report.failures()
    assert any("key hash ranges not judged" in n and "c3" in n for n in report.notes), report.notes


def test_hash_ranges_are_still_judged_when_every_consumer_is_followed():
    ops = [o for o in _ops(_stored("pls-keyshared-003-wrong-value-0c67fc511be4")) if o[0] != "send"]
    history = _run(ops)
    stats = _ranges_stats(history)
    value = dict(stats.outcome.value)
    assert [c["consumer"] for c in value["consumers"]] == ["c3"]
    assert value["consumers"][0]["key_hash_ranges"] != [[0, 100]]
    value["consumers"] = [{**c, "key_hash_ranges": [[0, 100]]} for c in value["consumers"]]
    assert ("PLS-KEYSHARED-003", "wrong-value") in _fails(_observe(history, stats.step, value))


# ---------------------------------------------------------------- PLS-NACK-001: a nack before the copy arrives

def _nack_before_receipt(first_at: float, second: tuple[float, float]) -> History:
    """c1 (C++ client, nack delay 200 ms) nacks m1 before receiving it, receives m1 at ``first_at`` and then
    nothing during ``second``."""
    return (H().sub("c1", "Shared", nack_delay_ms=200).producer().send("m1", 0)
            .ok("nack", {"consumer": "c1", "message": "m1"}, t=0)
            .recv("c1", "m1", 0, t=first_at)
            .recv("c1", None, t=second, timeout=int(second[1] - second[0])).history())


def test_a_nack_of_a_copy_surely_dispatched_before_the_request_is_owed():
    # m1 was dispatched when sent (the only consumer, connected): pending on c1 when the request comes
    assert ("PLS-NACK-001", "late-redelivery") in _fails(_nack_before_receipt(0.0, (0.0, 1000.0)))


def test_a_nack_before_a_copy_that_may_come_after_the_request_is_not_owed():
    trace = _stored("pls-nack-001-late-redelivery-e043c266c59b")  # a restart gives m2 back; it comes at 218 ms
    assert not check(ModelTarget().run(trace)).failures()


# ---------------------------------------------------------------- PLS-DLQ-002 / PLS-SUB-001: a nacked stale copy

DEAD_LETTERED_STALE = [("pls-sub-001-wrong-value-a17dfbf06afb", "m2", ("PLS-SUB-001", "wrong-value")),
                       ("pls-dlq-002-early-delivery-c96afce6ad14", "m1", ("PLS-DLQ-002", "early-delivery"))]


@pytest.mark.parametrize("name,label,broken", DEAD_LETTERED_STALE, ids=[n for n, _, _ in DEAD_LETTERED_STALE])
def test_a_nacked_last_copy_goes_to_the_dead_letter_topic_whichever_copy_it_was(name, label, broken):
    # Go, max_redeliver_count 1 (count 0 is the last copy), after a reconnect: the checker reads it as a stale copy
    history = ModelTarget().run(_stored(name))
    dlq = history.events[-1].outcome.value["message"]
    assert dlq["topic"] == "dlq" and dlq["payload"] == label
    assert not check(history).failures()


@pytest.mark.parametrize("name,label,broken", DEAD_LETTERED_STALE, ids=[n for n, _, _ in DEAD_LETTERED_STALE])
def test_a_dead_letter_copy_before_the_last_copy_still_fails(name, label, broken):
    history = ModelTarget().run(_stored(name))
    # the same history, but the consumer allowed one more redelivery: the count-0 copy's nack is not the last
    events = []
    for e in history.events:
        if e.op.op == "subscribe" and e.op.args.get("dead_letter"):
            args = {**e.op.args, "dead_letter": {**e.op.args["dead_letter"], "max_redeliver_count": 2}}
            e = replace(e, op=replace(e.op, args=args))
        events.append(e)
    assert broken in _fails(replace(history, events=tuple(events)))


# ---------------------------------------------------------------- PLS-RETRY-001/002: a dead-letter copy retried

RETRIED_DLQ_COPY = "pls-retry-001-wrong-value-89e266215f43"  # C++ dead-letters m3; a Java consumer retries the copy


def test_a_retried_dead_letter_copy_keeps_the_id_properties_it_carried():
    history = ModelTarget().run(_stored(RETRIED_DLQ_COPY))
    props = history.events[-1].outcome.value["message"]["properties"]
    assert props["ORIGIN_MESSAGE_ID"] == "(3,0,-1,-1)"  # the C++ dead-letter copy's, kept (putIfAbsent)
    assert props["ORIGIN_MESSAGE_IDY_TIME"] == "2:0:-1"  # absent on that copy: the retried copy's own id
    assert not check(history).failures()


@pytest.mark.parametrize("key,wrong", [("ORIGIN_MESSAGE_ID", "3:0:-1"), ("ORIGIN_MESSAGE_IDY_TIME", "3:0:-1"),
                                       ("ORIGIN_MESSAGE_IDY_TIME", "2:0:0")])
def test_the_id_properties_of_a_retried_copy_are_still_judged(key, wrong):
    history = ModelTarget().run(_stored(RETRIED_DLQ_COPY))
    last = history.events[-1]
    message = {**last.outcome.value["message"]}
    message["properties"] = {**message["properties"], key: wrong}
    assert ("PLS-RETRY-002", "wrong-value") in _fails(_observe(history, last.step, {"message": message}))


# ---------------------------------------------------------------- PLS-SUB-005 / PLS-MSG-001: after a fenced send

CUMULATIVE_ACK_NOT_FOLLOWED = "pls-sub-005-lost-message-58fe1483caba"  # c1's ack of m1 after p1's fenced send
FLUSH_NOT_FOLLOWED = "pls-msg-001-wrong-value-ee8734e6a2c7"  # p4's flush of m1 after p1's fenced send


def test_a_subscription_a_consumer_not_followed_acked_on_is_not_judged_strictly():
    report = check(ModelTarget().run(_stored(CUMULATIVE_ACK_NOT_FOLLOWED)))
    assert not report.failures()


def test_a_consumer_resuming_a_subscription_is_still_owed_its_first_unacked_message():
    # without the fenced send c1 is followed; without its ack m1 stays unacked and c3 must get it
    ops = [o for o in _ops(_stored(CUMULATIVE_ACK_NOT_FOLLOWED)) if o[0] not in ("ack_cumulative",)
           and not (o[0] == "send" and o[1]["payload"] == "m2")]
    history = _run(ops)
    last = history.events[-1]
    assert last.op.op == "receive" and last.outcome.value["message"]["payload"] == "m1"
    assert ("PLS-SUB-005", "lost-message") in _fails(_observe(history, last.step, {"message": None}, end=921.0))


def test_a_flush_not_followed_makes_its_batched_messages_unjudged_sends():
    report = check(ModelTarget().run(_stored(FLUSH_NOT_FOLLOWED)))
    assert not report.failures()
    assert any(v.rule_id == "PLS-MSG-001" and v.status == "INDETERMINATE" for v in report.verdicts)


def test_a_message_no_send_produced_still_fails_after_a_flush_not_followed():
    history = ModelTarget().run(_stored(FLUSH_NOT_FOLLOWED))
    last = history.events[-1]
    message = {**last.outcome.value["message"], "payload": "m9"}  # m9 was never sent
    assert ("PLS-MSG-001", "wrong-value") in _fails(_observe(history, last.step, {"message": message}))


def test_what_arrives_on_a_subscription_a_consumer_not_followed_acted_on_is_still_judged():
    # p1's fenced send may close the connection c1 shares: c1 is not followed after it, and its ack moves s's cursor.
    # c2's deliveries on s are then not owed strictly, but what arrives must still be what was sent (PLS-MSG-001).
    fencing = {"topic": "u", "access_mode": "ExclusiveWithFencing"}
    ops = [("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared"}),
           ("create_producer", {"producer": "p1", **fencing}), ("create_producer", {"producer": "p2", **fencing}),
           ("send", {"producer": "p1", "payload": "x"}),
           ("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Shared"}),
           ("create_producer", {"producer": "p", "topic": "t"}),
           ("send", {"producer": "p", "payload": "m1"}), ("send", {"producer": "p", "payload": "m2"}),
           ("ack", {"consumer": "c1", "message": "m1"}),
           ("receive", {"consumer": "c2", "timeout_ms": 500})]
    history = _run(ops)
    assert history.events[3].outcome.error == "ProducerFenced"
    report = check(history)
    assert any("c1" in n and "not judged after it" in n for n in report.notes), report.notes
    assert not report.failures()
    last = history.events[-1]
    message = last.outcome.value["message"]
    assert message is not None
    tampered = {**message, "properties": {"tampered": "yes"}}
    assert ("PLS-MSG-001", "wrong-value") in _fails(_observe(history, last.step, {"message": tampered}))
