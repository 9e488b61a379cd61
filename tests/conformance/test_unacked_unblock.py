"""A redelivery request unblocks a Shared consumer at its unacked limit for one more entry (PLS-UNACKED-001), and an
admin clear is not a batch index ack (PLS-BATCH-005): two FLAKY findings of the newest-release campaigns, triaged on
6 Dec 2026 (docs/fuzzing.md, "The untriaged FLAKYs").

The first is a live Go history on 4.2.4 (limit 1: m1 received and held, m2 nacked before it was received, then m2
arrives at once; the same trace without the nack gets nothing, 10 runs of 10). The broker clears the consumer's
blocked flag on any redelivery request by ids, whatever they name (``Consumer#redeliverUnacknowledgedMessages(List)``),
and its Shared dispatcher gives an unblocked consumer at least one entry. The expected verdicts below come from that
code and the clients' nack timing (PLS-NACK-004/005/006: the Go and Java trackers may send the request up to 255 ms before
the nack delay; the C++ one at the delay), not from the checker's output.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.checker import check
from conformance.trace import load, parse
from model_history_helpers import without_ops

LIVE = Path(__file__).resolve().parent / "live_histories"
GO_NACK = LIVE / "live-4.2.4-go-nack-unreceived-unblocks.jsonl"
CLEAR_RACE = LIVE / "live-5.0.0-M1-clear-backlog-racing-redelivery-python.jsonl"


def _statuses(h, rule: str) -> list[str]:
    return [v.status for v in check(h).verdicts if v.rule_id == rule and v.step is not None]


def _edited(path: Path, edit) -> object:
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return parse("\n".join(json.dumps(d) for d in edit(lines)))


def test_a_go_nack_of_an_unreceived_message_lets_one_more_entry_through():
    h = load(GO_NACK)
    assert check(h).ok, check(h).summary()
    assert "PASS" in _statuses(h, "PLS-UNACKED-001")


def test_without_the_nack_the_blocked_consumer_gets_nothing_more():
    """The same history with the nack taken out: m2 reaches a consumer that holds m1 at its limit of 1."""
    assert "FAIL" in _statuses(_edited(GO_NACK, lambda lines: without_ops(lines, "nack")), "PLS-UNACKED-001")


def test_a_cpp_nack_unblocks_only_from_its_delay():
    """The same history told of the Python client (C++): its nack tracker asks at the nack delay (100 ms), so m2 one
    millisecond after the nack came while the consumer was still blocked."""
    def python_consumer(lines):
        lines[0]["client"] = "python"
        lines[0].pop("client_version", None)
        for d in lines[1:]:
            d["args"].pop("client", None)
        return lines
    assert "FAIL" in _statuses(_edited(GO_NACK, python_consumer), "PLS-UNACKED-001")


def test_a_message_acked_by_an_admin_clear_is_not_charged_to_batch_index_acks():
    """Live 5.0.0-M1, Python: m3 (batch index 0, consumer c6 with batch index ack) was acked by a topic-wide
    clear_backlog while a redeliver_unacked was under way; c6 got it again, a copy its queue may have kept. That is
    PLS-ACK-001's undecidable ghost, not a batch index ack PLS-BATCH-005 speaks of."""
    h = load(CLEAR_RACE)
    at_20 = {(v.rule_id, v.status) for v in check(h).verdicts if v.step == 20}
    assert ("PLS-ACK-001", "INDETERMINATE") in at_20, at_20
    assert ("PLS-BATCH-005", "FAIL") not in at_20, at_20


# --- requests that reach the broker later than the nack (review of 6 Dec 2026): each request counts once, whenever it
# --- arrives while the consumer is blocked; a request is not lost when the consumer is unblocked in between

def _go_limit_one(variant: str, *, extra: bool = False):
    """Built on the live Go history's first three ops (limit 1, a Go Shared consumer, nack delay 1000 ms here): m1, m2,
    m3 (m4) sent; m1 received and held, which blocks c2. ``A``: nack m3 (unreceived), ack m1 (unblocked by its count),
    receive m2 (blocked again); the nack's request, due about 1 s after it, then lets m3 through. ``B``: nack m2 and,
    500 ms later, m3 (both unreceived): two requests, so m2 and m3 come. ``extra``: one more message (m4) after them,
    which no request explains."""
    src = [json.loads(line) for line in GO_NACK.read_text(encoding="utf-8").splitlines() if line.strip()]

    def op(name, args, value, t0, t1):
        return {"kind": "op", "step": 0, "op": name, "args": args, "outcome": {"status": "ok", "value": value},
                "t_start_ms": t0, "t_end_ms": t1}

    def got(i, label):
        return {"message": {"event_time": 0, "key": None, "message_id": [10989, i, -1, -1], "ordering_key": None,
                            "payload": label, "producer_name": "standalone-0-3678", "properties": {},
                            "publish_time": 1796555215189 + i, "redelivery_count": 0, "schema_version": None, "topic": "t"}}

    ev = [src[1], dict(src[2], args=dict(src[2]["args"], nack_delay_ms=1000)), src[3]]
    t = 35.0
    for i in range(4 if extra else 3):
        ev.append(op("send", {"producer": "p2", "payload": f"m{i + 1}"},
                     {"id_text": f"10989:{i}:0", "message_id": [10989, i, -1, -1], "sequence_id": i}, t, t + 2))
        t += 3
    ev.append(op("receive", {"consumer": "c2", "timeout_ms": 300}, got(0, "m1"), t, t + 1))
    t += 2
    if variant == "A":
        ev.append(op("nack", {"consumer": "c2", "message": "m3"}, {}, t, t + 1))
        ev.append(op("ack", {"consumer": "c2", "message": "m1"}, {}, t + 2, t + 3))
        ev.append(op("receive", {"consumer": "c2", "timeout_ms": 300}, got(1, "m2"), t + 4, t + 14))
        ev.append(op("receive", {"consumer": "c2", "timeout_ms": 2000}, got(2, "m3"), t + 16, 1050.0))
        t = 1052.0
    else:
        ev.append(op("nack", {"consumer": "c2", "message": "m2"}, {}, t, t + 1))
        ev.append(op("nack", {"consumer": "c2", "message": "m3"}, {}, t + 500, t + 501))
        ev.append(op("receive", {"consumer": "c2", "timeout_ms": 2000}, got(1, "m2"), t + 503, 800.0))
        ev.append(op("receive", {"consumer": "c2", "timeout_ms": 2000}, got(2, "m3"), 802.0, 1300.0))
        t = 1302.0
    if extra:
        ev.append(op("receive", {"consumer": "c2", "timeout_ms": 2000}, got(3, "m4"), t, t + 5))
    for i, e in enumerate(ev):
        e["step"] = i + 1
    return parse("\n".join(json.dumps(e) for e in [dict(src[0], op_count=len(ev))] + ev))


def test_a_request_after_an_ack_unblocked_the_consumer_still_counts_when_it_arrives():
    h = _go_limit_one("A")
    assert check(h).ok, check(h).summary()


def test_each_of_two_requests_lets_one_entry_through():
    h = _go_limit_one("B")
    assert check(h).ok, check(h).summary()


def test_an_entry_no_request_explains_fails():
    assert "FAIL" in _statuses(_go_limit_one("B", extra=True), "PLS-UNACKED-001")
    assert "FAIL" in _statuses(_go_limit_one("A", extra=True), "PLS-UNACKED-001")
