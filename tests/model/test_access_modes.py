"""Chapter access_modes.py: producer access modes, fencing and busy names (PLS-ACCESS-001..006)."""

from __future__ import annotations

import pytest

from reference_model import access_modes as am


# ---------------------------------------------------------------- PLS-ACCESS-*


_OBSERVED_TABLE = {
    # (first, second) -> second's create result, as observed live
    ("Shared", "Shared"): "ok",
    ("Shared", "Exclusive"): "ProducerFenced",
    ("Shared", "ExclusiveWithFencing"): "ok",
    ("Exclusive", "Shared"): "ProducerBusy",
    ("Exclusive", "Exclusive"): "ProducerFenced",
    ("Exclusive", "ExclusiveWithFencing"): "ok",
    ("ExclusiveWithFencing", "Shared"): "ProducerBusy",
    ("ExclusiveWithFencing", "Exclusive"): "ProducerFenced",
    ("ExclusiveWithFencing", "ExclusiveWithFencing"): "ok",
    ("WaitForExclusive", "Shared"): "ProducerBusy",
    ("WaitForExclusive", "Exclusive"): "ProducerFenced",
    ("WaitForExclusive", "ExclusiveWithFencing"): "ok",
    ("Exclusive", "WaitForExclusive"): "waiting",
}


@pytest.mark.parametrize("first,second", sorted(_OBSERVED_TABLE))
def test_access_mode_table(first, second):
    got = am.create_producer((am.PresentProducer("p1", first),), second, "p2")
    assert got.result == _OBSERVED_TABLE[(first, second)]
    assert got.fences == (("p1",) if second == "ExclusiveWithFencing" else ())


def test_fenced_producer_send_errors_and_same_name():
    assert [am.fenced_send_error(m) for m in am.MODES] == ["Timeout", "ProducerFenced", "ProducerFenced", "Timeout"]
    got = am.create_producer((am.PresentProducer("same", "Shared"),), "Shared", "same")
    assert (got.result, got.rule) == ("ProducerBusy", "PLS-ACCESS-006")
    assert am.create_producer((), "Exclusive").result == "ok"
    with pytest.raises(ValueError):
        am.create_producer((), "Bogus")


def _events_after_unload(first_mode, second_mode):
    from conformance.targets.model import ModelTarget
    from conformance.trace import make_trace
    ops = [("create_producer", {"producer": "p1", "topic": "t", "access_mode": first_mode}),
           ("unload_topic", {"topic": "t"}),
           ("create_producer", {"producer": "p2", "topic": "t", "access_mode": second_mode, "wait_ms": 50})]
    return ModelTarget().run(make_trace("t", ops)).events


@pytest.mark.parametrize("first,second", [("WaitForExclusive", "WaitForExclusive"), ("Exclusive", "ExclusiveWithFencing"),
                                          ("Shared", "Exclusive"), ("Exclusive", "Shared")])
def test_an_access_mode_racing_a_reconnect_is_not_modelled(first, second):
    # Live 4.0.8 (mixed campaign, pls-access-005-wrong-value-398b2f3c14ea): after an unload a second
    # WaitForExclusive producer came at once, ahead of the holder's reconnection, once in four runs.
    events = _events_after_unload(first, second)
    assert events[1].outcome.status == "ok"
    assert events[2].outcome.status == "indeterminate" and "reconnecting" in events[2].outcome.detail


def test_shared_producers_after_an_unload_stay_modelled():
    events = _events_after_unload("Shared", "Shared")
    assert events[2].outcome.status == "ok"


def test_a_queued_wait_for_exclusive_producer_blocks_shared_and_exclusive_newcomers():
    """AbstractTopic#incrementTopicEpochIfNeeded refuses a Shared (ProducerBusy) and an Exclusive (ProducerFenced)
    producer while waitingExclusiveProducers is not empty; a second waiter queues too (live 4.0.8, 3.3.6, 5.0.0-M1:
    regression pls-access-001-unexpected-rejection-c98a4c0f3f5d)."""
    shared = (am.PresentProducer("p2", "Shared"),)
    assert (am.create_producer(shared, "Shared", waiters=1).result, am.create_producer(shared, "Shared", waiters=1).rule) \
        == ("ProducerBusy", "PLS-ACCESS-003")
    assert am.create_producer(shared, "Shared").result == "ok"  # without the waiter: PLS-ACCESS-001
    assert am.create_producer((), "Exclusive", waiters=1).result == "ProducerFenced"
    assert am.create_producer((), "WaitForExclusive", waiters=1).result == "waiting"


def test_the_composed_model_counts_a_queued_waiter():
    from conformance.checker import check
    from conformance.targets.model import ModelTarget
    from conformance.trace import History, Outcome, make_trace
    from dataclasses import replace
    ops = [("create_producer", {"producer": "p2", "topic": "t"}),
           ("create_producer", {"producer": "p3", "topic": "t", "access_mode": "WaitForExclusive", "wait_ms": 50}),
           ("create_producer", {"producer": "p4", "topic": "t", "access_mode": "Shared"})]
    history = ModelTarget().run(make_trace("t", ops))
    assert [e.outcome.status for e in history.events] == ["ok", "ok", "rejected"]
    assert history.events[2].outcome.error == "ProducerBusy"
    accepted = list(history.events)
    accepted[2] = replace(accepted[2], outcome=Outcome.ok({"producer_name": "standalone-0-9", "last_sequence_id": -1}))
    failed = {(v.rule_id, v.anomaly) for v in check(History(history.header, tuple(accepted))).failures()}
    assert ("PLS-ACCESS-003", "missing-rejection") in failed


def _dead_letter_then_producer(wait_ms: int, mode: str = "WaitForExclusive"):
    from conformance.targets.model import ModelTarget
    from conformance.trace import make_trace
    ops = [("subscribe", {"consumer": "c4", "topic": "t", "subscription": "s", "type": "Shared", "nack_delay_ms": 150,
                          "dead_letter": {"max_redeliver_count": 1, "topic": "dlq"}}),
           ("create_producer", {"producer": "p2", "topic": "t"}),
           ("send", {"producer": "p2", "payload": "m4"}),
           ("receive", {"consumer": "c4", "timeout_ms": 700}), ("nack", {"consumer": "c4", "message": "m4"}),
           ("receive", {"consumer": "c4", "timeout_ms": 700}), ("nack", {"consumer": "c4", "message": "m4"}),
           ("advance_time", {"ms": wait_ms}),
           ("create_producer", {"producer": "p3", "topic": "dlq", "access_mode": mode, "wait_ms": 2000})]
    return ModelTarget().run(make_trace("t", ops)).events


def test_the_consumers_dead_letter_producer_holds_the_dlq_topic_as_a_shared_producer():
    """Live 5.0.0-M1 (regression pls-access-005-wrong-value-f2c305cf51be, 3/3): once m4 went to the DLQ, a
    WaitForExclusive producer there waits: the consumer's client keeps its dead-letter producer open."""
    events = _dead_letter_then_producer(1500)
    assert events[-1].outcome.status == "ok" and events[-1].outcome.value.get("pending") is True
    refused = _dead_letter_then_producer(1500, "Exclusive")[-1].outcome
    assert (refused.status, refused.error) == ("rejected", "ProducerFenced")


def test_while_the_copy_may_still_come_such_a_producer_is_not_modelled():
    """Before the nack's timer sent m4 to the DLQ the client has no dead-letter producer yet, but makes one with the
    copy; once the copy is stored it may still be on its way for DEAD_LETTER_PUBLISH_MS."""
    before = _dead_letter_then_producer(100)[-1].outcome
    assert before.status == "indeterminate" and "makes that producer with the first copy" in before.detail
    during = _dead_letter_then_producer(400)[-1].outcome
    assert during.status == "indeterminate" and "on its way" in during.detail


def test_exclusive_with_fencing_named_like_a_connected_producer_is_not_judged():
    """Accepted live on 4.0.8 (Java, d2dc93fc47c0) and refused with ProducerBusy on 4.0.0 (campaign, 3f7084be6f7c):
    the fenced producer's removal races the name check, so the model does not say which."""
    from conformance.targets.model import ModelTarget
    from conformance.trace import make_trace
    ops = [("create_producer", {"producer": "p1", "topic": "t", "name": "n3"}),
           ("create_producer", {"producer": "p2", "topic": "t", "access_mode": "ExclusiveWithFencing", "name": "n3"})]
    last = ModelTarget().run(make_trace("t", ops)).events[-1].outcome
    assert last.status == "indeterminate" and "races the name check" in last.detail
    other = [ops[0], ("create_producer", {"producer": "p2", "topic": "t", "access_mode": "ExclusiveWithFencing", "name": "n4"})]
    assert ModelTarget().run(make_trace("t", other)).events[-1].outcome.status == "ok"  # another name: it fences p1



def test_the_5_0_0_m1_flaky_refusal_of_that_race_is_not_judged_either():
    """Regression pls-access-004-unexpected-rejection-e8f2ab15ac1c (5.0.0-M1 campaign, FLAKY 0/3): the recorded
    history (p2 accepted) passes, and the same history with p2 refused ProducerBusy judges nothing on that step;
    an ExclusiveWithFencing producer of another name refused there still FAILs PLS-ACCESS-004."""
    import json
    from pathlib import Path

    from conformance.checker import check
    from conformance.trace import parse

    path = (Path(__file__).resolve().parents[2] / "conformance" / "regressions"
            / "pls-access-004-unexpected-rejection-e8f2ab15ac1c.history.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert check(parse(path.read_text())).ok

    def refused_at_step_9(**args):
        edited = []
        for d in records:
            if d.get("step") == 9:
                d = dict(d, args=dict(d["args"], **args),
                         outcome={"status": "rejected", "error": "ProducerBusy", "detail": "ProducerBusy"})
            edited.append(json.dumps(d))
        return parse("\n".join(edited) + "\n")

    busy = check(refused_at_step_9())
    assert not [v for v in busy.failures() if v.step == 9], busy.summary()
    other_name = check(refused_at_step_9(name="n4"))  # nothing races: it fences p1 and gets the topic
    assert ("PLS-ACCESS-004", "unexpected-rejection") in [(v.rule_id, v.anomaly) for v in other_name.failures()], \
        other_name.summary()


@pytest.mark.parametrize("version,second_result", [("2.10.5", "ok"), ("2.11.0", "ProducerBusy"), ("2.x", "ProducerBusy"),
                                                    ("4.0.8", "ProducerBusy")])
def test_a_broker_before_2_11_reads_exclusive_with_fencing_as_shared(version, second_result):
    """Let an ExclusiveWithFencing producer hold topic t and a Shared producer come next. Then a broker that knows
    the mode (PIP-161, 2.11.0 on; a line says its newest release) refuses the newcomer ProducerBusy, and 2.10.5,
    which reads the unknown wire value as Shared, accepts it (live: the 2.10.5 campaign of 27 Nov 2026)."""
    from conformance.targets.model import ModelTarget
    from conformance.trace import make_trace
    ops = [("create_producer", {"producer": "p1", "topic": "t", "access_mode": "ExclusiveWithFencing"}),
           ("create_producer", {"producer": "p2", "topic": "t"})]
    events = ModelTarget(broker_version=version).run(make_trace("t", ops)).events
    assert events[0].outcome.status == "ok"
    assert (events[1].outcome.error or events[1].outcome.status) == second_result


def test_the_mode_the_broker_reads():
    assert am.mode_the_broker_reads("ExclusiveWithFencing", fencing_known=False) == "Shared"
    assert am.mode_the_broker_reads("ExclusiveWithFencing", fencing_known=True) == "ExclusiveWithFencing"
    assert am.mode_the_broker_reads("Exclusive", fencing_known=False) == "Exclusive"
    with pytest.raises(ValueError, match="unknown access mode 'Fenced'"):
        am.mode_the_broker_reads("Fenced", fencing_known=True)
