"""A seek or admin reset to the earliest position while async sends are in flight, or a batch may or may not have left
(``Broker._to_earliest``; issue 46: async sends at the clients' defaults).

Where the broker stores such a send, before the reset or after it, it is after the earliest position either way, so
the model follows the reset and still owes every message. A position taken from the end (latest) or by publish time
is another matter: the send may land on either side of it, and that stays not followed
(``FeatureOps.check_no_async_in_flight``, docs/not-modelled.md).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import Outcome, make_trace

SUBSCRIBE = ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Exclusive"})
RECEIVE = ("receive", {"consumer": "c1", "timeout_ms": 500})


def _ops(reset: tuple[str, dict], *, batching: bool = False, partitions: int = 0) -> list:
    producer = {"producer": "p1", "topic": "t"}
    if batching:
        producer.update(batching=True, batching_max_delay_ms=10)
    setup = [("create_topic", {"topic": "t", "partitions": partitions})] if partitions else []
    return setup + [SUBSCRIBE, ("create_producer", producer), ("send", {"producer": "p1", "payload": "m0"}),
                    ("send", {"producer": "p1", "payload": "m1", "async": True}),
                    ("send", {"producer": "p1", "payload": "m2", "async": True}),
                    reset, RECEIVE, RECEIVE, RECEIVE, RECEIVE, ("flush", {"producer": "p1"})]


SEEK_EARLIEST = ("seek", {"consumer": "c1", "position": "earliest"})
RESET_EARLIEST = ("reset_cursor", {"topic": "t", "subscription": "s", "position": "earliest"})


def _judged(ops, receipts=None):
    """(FAILs, not-followed reasons) of the model's history of ``ops``; with ``receipts``, its receives' outcomes
    replaced by those labels (None: nothing), each message as the model's own run observed it."""
    h = ModelTarget().run(make_trace("t", list(ops)))
    if receipts is not None:
        seen = {e.outcome.value["message"]["payload"]: e.outcome.value["message"] for e in h.events
                if e.op.op == "receive" and e.outcome.value.get("message")}
        labels = iter(receipts)
        h = replace(h, events=tuple(
            replace(e, outcome=Outcome.ok({"message": None if (label := next(labels)) is None else seen[label]}))
            if e.op.op == "receive" else e for e in h.events))
    report = check(h)
    return sorted({(v.rule_id, v.anomaly) for v in report.verdicts if v.status == "FAIL"}), report.not_followed


@pytest.mark.parametrize("batching", [False, True])
@pytest.mark.parametrize("reset", [SEEK_EARLIEST, RESET_EARLIEST], ids=["seek", "admin-reset"])
def test_a_reset_to_earliest_with_sends_in_flight_is_followed_and_owes_them(reset, batching):
    fails, not_followed = _judged(_ops(reset, batching=batching))
    assert (fails, not_followed) == ([], ())
    # every message is after the earliest position wherever the broker stored it: m1 is owed after the reset
    fails, not_followed = _judged(_ops(reset, batching=batching), ["m0", "m2", None, None])
    assert not_followed == () and fails != []
    fails, _ = _judged(_ops(reset, batching=batching), ["m0", "m1", None, None])
    assert any(anomaly == "lost-message" for _, anomaly in fails)


def test_a_partitioned_consumer_seeking_earliest_with_sends_in_flight_is_followed():
    assert _judged(_ops(SEEK_EARLIEST, partitions=2)) == ([], ())


@pytest.mark.parametrize("reset", [("seek", {"consumer": "c1", "position": "latest"}),
                                   ("seek", {"consumer": "c1", "publish_time_of": "m0"})],
                         ids=["latest", "publish-time"])
def test_a_position_taken_from_the_end_or_by_time_is_still_not_followed(reset):
    """Live 4.0.8, 26 Nov 2026: an async m1, a seek to latest, and m1 was delivered (stored after the position)."""
    _, not_followed = _judged(_ops(reset))
    assert not_followed and "in flight" in not_followed[0].reason


@pytest.mark.parametrize("name", ["live-4.0.8-python-seek-earliest-async-in-flight",
                                  "live-4.0.8-java-seek-earliest-open-batch"])
def test_live_histories_of_a_reset_to_earliest_in_flight_pass_followed(name):
    """Live 4.0.8, 7 Dec 2026 (2 runs each of Python, Java and Go, of both traces: all PASS): m0 sent, then async m1
    (2 MB) and m2 in flight, or an open batch of two with a 10 ms delay, when c1 sought the earliest position; c1
    got every message once, in order."""
    from pathlib import Path

    from conformance.trace import load
    report = check(load(Path(__file__).resolve().parents[1] / "conformance" / "live_histories" / f"{name}.jsonl"))
    assert report.not_followed == ()
    assert [v for v in report.verdicts if v.status == "FAIL"] == []
    assert any(v.rule_id == "PLS-SEEK-003" and v.status == "PASS" for v in report.verdicts)
