"""Keyless messages on a partitioned topic with a Key_Shared subscription (issue 46).

A 4.x broker hashes a keyless message by its producer's name and sequence id. Recorded live on 4.0.8 (6 Dec 2026,
the Python and the Java client): two Key_Shared consumers of a 2-partition topic; a producer named ``pn-name`` and an
unnamed one each send six keyless messages round robin. Each partition producer keeps its own sequence ids (0, 0, 1,
1, ...); the Java client writes partition 0's name on every partition, the C++ client the broker's own name for each,
and a given name goes on every partition. So every message is judged except an unnamed C++ producer's messages on
partition 1, whose name no history shows.

Each lie moves one delivered message to the other consumer, which the hash does not allow: it must FAIL.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conformance.checker import check
from conformance.trace import History, Outcome, load

HERE = Path(__file__).parent / "live_histories"


def _history(client: str) -> History:
    return load(HERE / f"live-4.0.8-keyless-partitioned-key-shared-{client}.jsonl")


def _moved(history: History, label: str) -> History:
    """The history with ``label``'s delivery made to the other consumer: its receive is taken away from the one that
    got it and given to the other consumer's first receive that got nothing."""
    events = list(history.events)
    got = next(i for i, e in enumerate(events) if e.op.op == "receive" and ((e.outcome.value or {}).get("message") or {}).get("payload") == label)
    owner = events[got].op.args["consumer"]
    other = "c2" if owner == "c1" else "c1"
    empty = next(i for i, e in enumerate(events) if e.op.op == "receive" and e.op.args["consumer"] == other
                 and not (e.outcome.value or {}).get("message"))
    events[empty] = replace(events[empty], outcome=events[got].outcome)
    events[got] = replace(events[got], outcome=Outcome.ok({"message": None}))
    return History(history.header, tuple(events))


def _judged(history: History, label: str) -> bool:
    return any(v.rule_id.startswith("PLS-KEYSHARED") and label in v.explanation for v in check(history).verdicts)


@pytest.mark.parametrize("client", ["java", "python"])
def test_as_the_broker_played_it_passes(client):
    report = check(_history(client))
    assert report.failures() == [], report.summary()


def test_the_java_clients_keyless_messages_are_all_judged_and_a_moved_one_fails():
    history = _history("java")
    for label in ("n1", "n4", "j1", "j6"):
        failed = {v.rule_id for v in check(_moved(history, label)).failures()}
        assert failed & {"PLS-KEYSHARED-001", "PLS-KEYSHARED-002", "PLS-KEYSHARED-003"}, (label, failed)


def test_a_named_c_plus_plus_producers_keyless_message_moved_fails():
    history = _history("python")
    for label in ("n1", "n2", "n3"):
        failed = {v.rule_id for v in check(_moved(history, label)).failures()}
        assert failed & {"PLS-KEYSHARED-001", "PLS-KEYSHARED-002", "PLS-KEYSHARED-003"}, (label, failed)


def test_an_unnamed_c_plus_plus_producer_is_followed_until_its_first_message_on_partition_1():
    """From there the checker stops following that producer (its router's state is then unknown too)."""
    history = _history("python")
    report = check(history)
    sends = [e for e in history.events if e.op.op == "send" and e.op.args["producer"] == "pj"]
    first_on_1 = next(e for e in sends if e.outcome.value["message_id"][2] == 1)
    assert [n.step for n in report.not_followed if n.op == "send"] == [first_on_1.step]
    before = [e.op.args["payload"] for e in sends if e.step < first_on_1.step]
    assert all(_judged(history, label) for label in before)
