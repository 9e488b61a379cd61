"""A redeliver-all by a consumer with a dead-letter policy (PLS-DLQ-002 with PLS-REDELIVER-001), followed since
7 Dec 2026 where the outcome is the client's own: the consumer is the only one of its Shared subscription. Each held
message comes back with its count one higher (PLS-ACK-005), and a copy whose count is above ``max_redeliver_count``
never reaches the application: the Java and C++ clients write it to the dead-letter topic as it arrives
(``ConsumerImpl#messageReceived``, ``ConsumerImpl::messageReceived``). Upstream's own tests assert exactly this
(apache/pulsar-client-python tests/pulsar_test.py#test_dead_letter_policy, tests/asyncio_test.py#
test_async_dead_letter_policy; cases up-py-dead-letter-policy, up-py-x-async-dead-letter-policy).

Each test makes a history of the model from a trace, then tells one lie in it, and the lie must FAIL a dead-letter
rule; the expected outcomes come from the client code cited above, not from the checker.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Op, Outcome, Trace, TraceHeader, load
from reference_model.broker import Broker
from reference_model.profiles import profile_for
from reference_model.rejections import NotModelledError

DEAD = {"max_redeliver_count": 1, "topic": "dlq-t"}


def _trace(*, second_consumer: bool = False) -> Trace:
    ops = [("subscribe", {"consumer": "d1", "topic": "dlq-t", "subscription": "s", "type": "Shared"}),
           ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared", "dead_letter": DEAD})]
    if second_consumer:
        ops.append(("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Shared",
                                  "dead_letter": DEAD}))
    ops += [("create_producer", {"producer": "p", "topic": "t"}),
            ("send", {"producer": "p", "payload": "m1"}),
            ("receive", {"consumer": "c1", "timeout_ms": 1000}),   # count 0
            ("redeliver_unacked", {"consumer": "c1"}),
            ("receive", {"consumer": "c1", "timeout_ms": 1000}),   # count 1 = the limit: still delivered
            ("redeliver_unacked", {"consumer": "c1"}),             # count 2: dead-lettered on arrival
            ("receive", {"consumer": "c1", "timeout_ms": 100}),    # nothing
            ("receive", {"consumer": "d1", "timeout_ms": 2000})]   # the copy
    return Trace(TraceHeader(trace_id="dlq-redeliver-all"), tuple(Op(i + 1, op, a) for i, (op, a) in enumerate(ops)))


def _history(**kw) -> History:
    return ModelTarget(client="python").run(_trace(**kw))


def _step(h: History, op: str, consumer: str, nth: int) -> int:
    return [e.op.step for e in h.events if e.op.op == op and e.op.args.get("consumer") == consumer][nth]


def _with_outcome(h: History, step: int, outcome: Outcome, waited_ms: float | None = None) -> History:
    """``h`` with ``step``'s outcome replaced; ``waited_ms``: the receive then ends that long after it began, and every
    later event is that much later (a receive that got nothing waited its timeout)."""
    shift = 0.0
    events = []
    for e in h.events:
        if e.op.step == step:
            end = e.t_end_ms if waited_ms is None else e.t_start_ms + waited_ms
            shift = end - e.t_end_ms
            e = replace(e, outcome=outcome, t_end_ms=end)
        elif e.op.step > step:
            e = replace(e, t_start_ms=e.t_start_ms + shift, t_end_ms=e.t_end_ms + shift)
        events.append(e)
    return replace(h, events=tuple(events))


def _failed_rules(h: History) -> set[str]:
    return {v.rule_id for v in check(h).verdicts if v.status == "FAIL"}


def test_the_model_history_passes_and_the_copy_reaches_the_dead_letter_topic():
    h = _history()
    result = check(h)
    assert result.ok, result.summary()
    last = h.events[-1].outcome.value["message"]
    assert last["payload"] == "m1" and last["topic"] == "dlq-t"
    assert h.events[_step(h, "receive", "c1", 2) - 1].outcome.value["message"] is None


def test_the_copy_past_the_limit_given_to_the_application_fails():
    h = _history()
    at_limit = h.events[_step(h, "receive", "c1", 1) - 1].outcome.value["message"]
    assert at_limit["redelivery_count"] == 1
    lie = _with_outcome(h, _step(h, "receive", "c1", 2), Outcome.ok({"message": dict(at_limit, redelivery_count=2)}))
    assert _failed_rules(lie) & {"PLS-DLQ-002", "PLS-ACK-005"}, check(lie).summary()


def test_a_dead_letter_copy_that_never_comes_fails():
    h = _history()
    lie = _with_outcome(h, _step(h, "receive", "d1", 0), Outcome.ok({"message": None}), waited_ms=2000)
    assert "PLS-DLQ-002" in _failed_rules(lie), check(lie).summary()


def test_the_message_at_the_limit_is_still_owed_to_the_application():
    """Count 1 = max_redeliver_count: the client still gives it to the application (it dead-letters above it)."""
    h = _history()
    lie = _with_outcome(h, _step(h, "receive", "c1", 1), Outcome.ok({"message": None}), waited_ms=1000)
    assert "PLS-REDELIVER-001" in _failed_rules(lie), check(lie).summary()


def test_with_a_second_consumer_on_the_subscription_it_stays_not_modelled():
    """Which consumer the copy past the limit reaches is the broker's choice: not followed, never a verdict."""
    h = _history(second_consumer=True)
    result = check(h)
    assert not _failed_rules(h), result.summary()
    assert any("redeliver_unacked by a consumer with a dead-letter policy" in why for why in (nf.reason for nf in result.not_followed)), \
        result.summary()


def _not_followed(h: History) -> list[str]:
    return [nf.reason for nf in check(h).not_followed]


def test_a_batch_member_past_the_limit_is_not_followed_and_changes_nothing():
    """m1 and m2 in one batch (a Python batching producer, flushed), max_redeliver_count 1: the second redeliver-all
    would take both past the limit, and which of a batch's members a queue holds is hidden. Not followed; the op
    changes nothing, so the backlog afterwards is the same as with the op taken out (a generator drops such an op
    and goes on with the same state)."""
    ops = [("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared", "dead_letter": DEAD}),
           ("create_producer", {"producer": "p", "topic": "t", "batching": True, "batching_max_delay_ms": 10000}),
           ("send", {"producer": "p", "payload": "m1", "async": True}),
           ("send", {"producer": "p", "payload": "m2", "async": True}),
           ("flush", {"producer": "p"}),
           ("receive", {"consumer": "c1", "timeout_ms": 1000}),
           ("receive", {"consumer": "c1", "timeout_ms": 1000}),
           ("redeliver_unacked", {"consumer": "c1"}),
           ("receive", {"consumer": "c1", "timeout_ms": 1000}),
           ("receive", {"consumer": "c1", "timeout_ms": 1000}),
           ("ack", {"consumer": "c1", "message": "m2"}),
           ("redeliver_unacked", {"consumer": "c1"}),
           ("ack", {"consumer": "c1", "message": "m1"}),
           ("stats", {"topic": "t", "subscription": "s"})]

    trace = Trace(TraceHeader(trace_id="dlq-batch"), tuple(Op(i + 1, op, a) for i, (op, a) in enumerate(ops)))
    assert any("a member of a batch" in why for why in _not_followed(ModelTarget(client="python").run(trace)))

    def generated(kept) -> list[Outcome]:
        """Each op's outcome as the trace generator applies it: an op the model cannot follow is dropped, and the
        model's state goes on as it is (``strategies._apply``)."""
        broker, now, outcomes = Broker(profile_for(None, "python")), 0.0, []
        for op, args in kept:
            try:
                outcome, now = ModelTarget._run_op(broker, op, args, now)
            except NotModelledError:
                continue
            outcomes.append(outcome)
        return outcomes

    assert generated(ops)[-1].value == generated(ops[:11] + ops[12:])[-1].value == {"backlog": 0}


def test_a_retry_enabled_consumer_is_not_followed():
    """Regression pls-delay-001-late-delivery-d668240be3bc: a Java retry-enabled consumer's redeliver-all."""
    trace = load(Path(__file__).resolve().parents[2] /
                 "conformance/regressions/pls-delay-001-late-delivery-d668240be3bc.trace.jsonl")
    h = ModelTarget().run(trace)
    assert any("retry enabled" in why for why in _not_followed(h)), check(h).summary()
    assert not _failed_rules(h)


def test_a_message_outside_the_application_near_the_limit_is_not_followed():
    """m2 is never received while c1 redelivers m1 twice (max_redeliver_count 1): m2 may sit in c1's queue, counted up
    by each redeliver-all, so by the second it may come past the limit, and whether the client dead-letters it on
    arrival is hidden."""
    ops = [("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared", "dead_letter": DEAD,
                          "receiver_queue_size": 1000}),
           ("create_producer", {"producer": "p", "topic": "t"}),
           ("send", {"producer": "p", "payload": "m1"}),
           ("send", {"producer": "p", "payload": "m2"}),
           ("receive", {"consumer": "c1", "timeout_ms": 1000}),
           ("redeliver_unacked", {"consumer": "c1"}),
           ("redeliver_unacked", {"consumer": "c1"})]
    trace = Trace(TraceHeader(trace_id="dlq-outside"), tuple(Op(i + 1, op, a) for i, (op, a) in enumerate(ops)))
    h = ModelTarget(client="python").run(trace)
    assert any("does not hold may be counted past" in why for why in _not_followed(h)), check(h).summary()


# ---------------------------------------------------------------------------- a consumer the checker stops following


def _unfollowed_redeliver_trace(*, second_redeliver: bool) -> Trace:
    """Model fuzz seed 20261223, fz-979cf20710b4: a chunked m2 (three chunks), a redeliver_unacked before the first
    receive (so the copy received may be the broker's redelivered one or the one queued before it), another after it,
    and a nack at the limit of 1. The checker does not follow the second redeliver_unacked."""
    ops = [("subscribe", {"consumer": "c2", "topic": "t", "subscription": "sx1", "type": "Shared", "nack_delay_ms": 160,
                          "dead_letter": {"max_redeliver_count": 1, "topic": "dlq"}}),
           ("subscribe", {"consumer": "c3", "topic": "dlq", "subscription": "s1", "type": "Shared"}),
           ("create_producer", {"producer": "p3", "topic": "t", "chunking": True}),
           ("send", {"producer": "p3", "payload": "m2", "payload_size": 10485777}),
           ("redeliver_unacked", {"consumer": "c2"}),
           ("receive", {"consumer": "c2", "timeout_ms": 156})]
    if second_redeliver:
        ops.append(("redeliver_unacked", {"consumer": "c2"}))
    ops += [("receive", {"consumer": "c2", "timeout_ms": 700}),
            ("nack", {"consumer": "c2", "message": "m2"}),
            ("receive", {"consumer": "c3", "timeout_ms": 1300})]
    return Trace(TraceHeader(trace_id="dlq-unfollowed"), tuple(Op(i + 1, op, a) for i, (op, a) in enumerate(ops)))


def test_a_dead_letter_copy_after_an_op_the_checker_does_not_follow_is_not_judged():
    history = ModelTarget(client="python").run(_unfollowed_redeliver_trace(second_redeliver=True))
    report = check(history)
    assert [f.op for f in report.not_followed] == ["redeliver_unacked"]
    last = history.events[-1].op.step
    assert report.failures() == [], report.summary()
    assert [v.status for v in report.verdicts if v.rule_id == "PLS-DLQ-002" and v.step == last] == ["INDETERMINATE"]


def test_a_dead_letter_copy_before_the_limit_is_still_judged_when_its_consumer_is_followed():
    # without the second redeliver_unacked, the nack after the first receipt (count 0 or 1) is followed; a copy read
    # at once on dlq, before m2 could use its last allowed delivery, is a lie the checker must FAIL
    history = ModelTarget(client="python").run(_unfollowed_redeliver_trace(second_redeliver=False))
    report = check(history)
    assert report.not_followed == () or "redeliver_unacked" not in [f.op for f in report.not_followed]
    copy = {"payload": "m2", "message_id": [9, 0, -1, -1], "topic": "dlq", "key": None, "ordering_key": None,
            "properties": {}, "event_time": 0, "publish_time": 0, "redelivery_count": 0, "producer_name": "x"}
    events = list(history.events)
    first_receive = next(i for i, e in enumerate(events) if e.op.op == "receive" and e.op.args["consumer"] == "c2")
    lie = Op(len(events) + 1, "receive", {"consumer": "c3", "timeout_ms": 100})
    at = events[first_receive].t_end_ms
    events.insert(first_receive + 1, Event(lie, Outcome.ok({"message": copy}), at, at))
    events = [Event(Op(i + 1, e.op.op, e.op.args), e.outcome, e.t_start_ms, e.t_end_ms) for i, e in enumerate(events)]
    lied = History(history.header, tuple(events))
    assert "PLS-DLQ-002" in {v.rule_id for v in check(lied).failures()}
