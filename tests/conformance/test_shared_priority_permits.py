"""PLS-SHARED-003: a lower-priority Shared consumer gets nothing while a higher-priority one surely has permits.

Upstream: apache/pulsar SimpleProducerConsumerTest#testPriorityConsumer (case up-java-a-spc-priority-consumer):
consumers c1, c2, c3 at priority level 1 and c4 at level 2, each with receiverQueueSize 5; 15 async sends; c1 and
c2 receive 20 times each (200 ms); five more async sends; ``assertNull(consumer4.receive(200 ms))``: "consumer1 and
consumer2 now has more permits (as received and sent more permits) ... should not dispatch to consumer4".

The broker gives an entry to a lower priority level only when no consumer above is available (permits > 0):
``AbstractDispatcherMultipleConsumers#getNextConsumer``. A client returns permits once half its queue was processed
(Java ``ConsumerImpl#increaseAvailablePermits``), so what an application already received sits in no queue and
cannot use up permits. The model used to judge "surely has permits" by the number of messages on the subscription
alone (20 here, more than a queue of 5 needs), and its own run gave c4 my-message-15; it now counts only the
messages no application had received (``SharedDispatcher._maybe_queued``).

Two runs of the case on the embedded broker 4.0.8, Java client 4.0.8 (6 Dec 2026), both as upstream asserts:
- ``live-4.0.8-java-shared-priority-permits-renewed``: c1 received my-message-0, c2 my-message-1..4 (the other ten
  sat in c3's or c4's queue), and c4's receive after the five later sends came back empty;
- ``live-4.0.8-java-shared-priority-all-received``: c1 received my-message-0..5, c2 my-message-6..14, then both
  sat idle; c4's receive came back empty. With every message in c1's and c2's hands, the checker is sure they had
  permits: the same history with c4 receiving my-message-15 FAILs PLS-SHARED-003.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import make_trace, parse, received_message
from model_history_helpers import H

HERE = Path(__file__).parent / "live_histories"
LIVE = "live-4.0.8-java-shared-priority-permits-renewed"


def _rows(name: str = LIVE) -> list[dict]:
    return [json.loads(line) for line in (HERE / f"{name}.jsonl").read_text().splitlines() if line.strip()]


def _history(rows: list[dict]):
    return parse("\n".join(json.dumps(r) for r in rows) + "\n", source=LIVE)


def _message(template: dict, payload: str, message_id: list[int], publish_time: int) -> dict:
    message = copy.deepcopy(template)
    message.update(payload=payload, message_id=message_id, publish_time=publish_time)
    return message


def _failures(history) -> set[tuple[str, str, int | None]]:
    return {(v.rule_id, v.anomaly, v.step) for v in check(history).failures()}


ALL_RECEIVED = "live-4.0.8-java-shared-priority-all-received"


def test_the_live_histories_pass():
    for name in (LIVE, ALL_RECEIVED):
        report = check(_history(_rows(name)))
        assert report.ok, (name, report.summary())
        assert report.rule_verdicts()["PLS-SHARED-003"] == "PASS"


def test_the_live_history_with_c4_taking_a_later_message_fails():
    """The recorded run where c1 and c2 took all fifteen, with one change: c4's last receive gets my-message-15."""
    rows = _rows(ALL_RECEIVED)
    template = next(r for r in rows if r.get("step") == 22)["outcome"]["value"]["message"]
    last = next(r for r in rows if r.get("step") == 67)
    assert last["args"]["consumer"] == "c4" and last["outcome"]["value"]["message"] is None
    last["outcome"]["value"]["message"] = _message(template, "my-message-15", [template["message_id"][0], 6, -1, 0],
                                                   template["publish_time"] + 7100)
    failures = _failures(_history(rows))
    assert ("PLS-SHARED-003", "wrong-consumer", 67) in failures, failures


def test_the_model_gives_the_priority_2_consumer_nothing():
    """The case's ops on the model: c1 and c2 take all fifteen, so c4 gets none of the five later messages (the model
    used to hand it my-message-15)."""
    ops = [(r["op"], r["args"]) for r in _rows() if r.get("kind") == "op"]
    history = ModelTarget(client="java").run(make_trace("up-java-a-spc-priority-consumer", ops))
    got = {e.op.step: received_message(e.outcome) for e in history.events if e.op.op == "receive"}
    assert got[67] is None
    taken = [m.payload for step, m in sorted(got.items()) if m is not None]
    assert sorted(taken) == sorted(f"my-message-{i}" for i in range(15)), taken
    assert check(history).ok


def _all_fifteen_to_c1_and_c2(rows: list[dict]) -> list[dict]:
    """The live history with c1 and c2 receiving my-message-0..14 in turn (steps 22..36, ids as the flush reported),
    then idle: every message is in an application's hands, so nothing can fill a queue."""
    rows = copy.deepcopy(rows)
    ids = next(r for r in rows if r.get("op") == "flush")["outcome"]["value"]["message_ids"]
    template = next(r for r in rows if r.get("step") == 22)["outcome"]["value"]["message"]
    for r in rows:
        if r.get("op") == "receive" and 22 <= r["step"] <= 36:
            label = f"my-message-{r['step'] - 22}"
            r["outcome"]["value"]["message"] = _message(template, label, ids[label], template["publish_time"])
        elif r.get("op") == "receive" and 37 <= r["step"] <= 61:
            r["outcome"]["value"]["message"] = None
    return rows


def test_all_received_then_idle_passes():
    rows = _all_fifteen_to_c1_and_c2(_rows())
    report = check(_history(rows))
    assert report.ok, report.summary()


def test_the_priority_2_consumer_taking_a_later_message_fails():
    """c1 and c2 hold all fifteen and sit idle with renewed permits; c4 then receiving my-message-15 breaks the rule."""
    rows = _all_fifteen_to_c1_and_c2(_rows())
    last = next(r for r in rows if r.get("step") == 67)
    template = next(r for r in rows if r.get("step") == 22)["outcome"]["value"]["message"]
    last["outcome"]["value"]["message"] = _message(template, "my-message-15", [13, 6, -1, 0],
                                                   template["publish_time"] + 7100)
    failures = _failures(_history(rows))
    assert ("PLS-SHARED-003", "wrong-consumer", 67) in failures, failures


def test_a_priority_1_consumer_that_just_received_is_not_sure():
    """The flow a receive frees needs time to reach the broker: when c1 and c2 received their last messages within the
    dispatch latency of the later send, c4 may still get it (the checker does not claim permits it cannot see)."""
    rows = _all_fifteen_to_c1_and_c2(_rows())
    send_at = next(r for r in rows if r.get("step") == 62)["t_start_ms"]
    # move the receives of steps 22..36 right before the later sends (keeping their order), drop the idle ones
    kept = [r for r in rows if not (r.get("op") == "receive" and 37 <= r["step"] <= 61)]
    for i, r in enumerate(r for r in kept if r.get("op") == "receive" and 22 <= r["step"] <= 36):
        r["t_start_ms"] = send_at - 30 + i
        r["t_end_ms"] = send_at - 29.5 + i
    for n, r in enumerate(x for x in kept if x.get("kind") == "op"):
        r["step"] = n + 1
    kept[0]["op_count"] = len(kept) - 1
    last = kept[-1]
    template = next(r for r in kept if r.get("op") == "receive")["outcome"]["value"]["message"]
    last["outcome"]["value"]["message"] = _message(template, "my-message-15", [13, 6, -1, 0],
                                                   template["publish_time"] + 7100)
    failures = {f for f in _failures(_history(kept)) if f[0] == "PLS-SHARED-003"}
    assert not failures, failures


def _one_permit(first_to_low: str) -> set[tuple[str, str, int | None]]:
    """high (level 0, receiverQueueSize 1) and low (level 1); m1..m3 sent; low receives ``first_to_low``."""
    entry = {"m1": 0, "m2": 1, "m3": 2}
    h = (H(client="java")
         .sub("high", "Shared", t=(0, 1), priority_level=0, receiver_queue_size=1)
         .sub("low", "Shared", t=(1, 2), priority_level=1)
         .producer(t=(2, 3))
         .send("m1", 0, t=(10, 12)).send("m2", 1, t=(12, 14)).send("m3", 2, t=(14, 16))
         .recv("low", first_to_low, entry[first_to_low], t=(16, 17)))
    return _failures(h.history())


def test_one_permit_is_surely_there_for_the_first_message_only():
    """high's one permit was there when m1 came (nothing had been dispatched before): m1 is high's. With m1 in its
    queue high may be out of permits, so m2 may go to low."""
    assert ("PLS-SHARED-003", "wrong-consumer", 7) in _one_permit("m1")
    assert not {f for f in _one_permit("m2") if f[0] == "PLS-SHARED-003"}


def _put_back(between) -> list[tuple[str, str, int]]:
    """c1 and c2 at level 0 and c4 at level 1, queues of 5 (Java); m0..m5 sent, then ``between``, then c4 receives m0."""
    h = (H(client="java")
         .sub("c1", "Shared", t=(0, 1), priority_level=0, receiver_queue_size=5)
         .sub("c2", "Shared", t=(1, 2), priority_level=0, receiver_queue_size=5)
         .sub("c4", "Shared", t=(2, 3), priority_level=1, receiver_queue_size=5)
         .producer(t=(3, 4)))
    for i in range(6):
        h.send(f"m{i}", i, t=(10 + 2 * i, 11 + 2 * i))
    between(h)
    h.recv("c4", "m0", 0, t=(200, 201))
    return [(v.rule_id, v.anomaly, v.step) for v in check(h.history()).failures()]


def test_a_queue_put_back_may_reach_a_lower_level_out_of_read_order():
    """Review of 6 Dec 2026: m0 may have sat unseen in c2's queue and m1..m5 filled c1's; when c2 closes, the broker
    takes m0 back and, c1 having no permits, gives it to c4. Nothing shows that c1 or c2 had permits then."""
    assert _put_back(lambda h: h.ok("close", {"handle": "c2"}, t=(100, 101))) == []


def test_without_a_queue_put_back_the_lower_level_gets_nothing_first():
    """The same without the close: m0, the first entry, was dispatched while both level-0 consumers had their five
    permits, so c4 getting it breaks PLS-SHARED-003."""
    assert [f[:2] for f in _put_back(lambda h: None)] == [("PLS-SHARED-003", "wrong-consumer")]
