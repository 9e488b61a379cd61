"""An ack just before a rewind may reach the broker after it (PLS-ACK-001 INDETERMINATE, not FAIL).

Live 4.0.8, Java client 4.0.8, case up-java-a-spc-redelivery-failover (apache/pulsar SimpleProducerConsumerTest
#testRedeliveryFailOverConsumer, acknowledgmentGroupTime 0): c1 acked my-message-4..7 at 2125-2129 ms and called
redeliverUnacknowledgedMessages at 2129.26 ms; after the 1 s sleep it received my-message-4..7 again. The client
sends the acks and then the redeliver on one connection, but the broker applies an ack through a chain of futures
(Consumer#messageAcked) and rewinds the Failover cursor at once, so the rewind may read what was just acked: two runs
in sixty on 6 Dec 2026. Within the ack-grouping tolerance (the timing band's ack_grouping_ms + dispatch latency) the
history cannot tell that race from a broker that resurrects acked messages; past it, it can.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.checker import check
from conformance.trace import parse

LIVE = Path(__file__).resolve().parent / "live_histories" / "live-4.0.8-java-failover-redeliver-after-acks.jsonl"


def _history(shift_from_step: int | None = None, shift_ms: float = 0.0):
    lines = [json.loads(line) for line in LIVE.read_text(encoding="utf-8").splitlines() if line.strip()]
    for d in lines[1:]:
        if shift_from_step is not None and d["step"] >= shift_from_step:
            d["t_start_ms"] += shift_ms
            d["t_end_ms"] += shift_ms
    return parse("\n".join(json.dumps(d) for d in lines))


def _ack_001(h, step: int) -> list[str]:
    return [v.status for v in check(h).verdicts if v.rule_id == "PLS-ACK-001" and v.step == step]


def test_acked_messages_after_a_rewind_right_after_their_acks_are_not_judged():
    h = _history()
    for step in (46, 48, 50):
        assert _ack_001(h, step) == ["INDETERMINATE"], (step, _ack_001(h, step))
    assert not [v for v in check(h).verdicts if v.status == "FAIL" and v.rule_id == "PLS-ACK-001"]


def test_a_rewind_well_after_the_acks_fails_them():
    """The same history with the redeliver (step 42) and everything after it 500 ms later: the acks had time to
    reach the broker, so my-message-5..7 coming back breaks PLS-ACK-001."""
    h = _history(shift_from_step=42, shift_ms=500.0)
    for step in (46, 48, 50):
        assert _ack_001(h, step) == ["FAIL"], (step, _ack_001(h, step))
