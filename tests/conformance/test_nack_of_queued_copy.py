"""Two requests for one message: a nack of a copy the receiver queue kept, then a nack of the broker's copy
(PLS-NACK-001 with PLS-REDELIVER-001 and PLS-UNACKED-001; regression pls-shared-001-duplicate-delivery-e2a893d38a24).

Live 4.0.8, Python (C++) client, Key_Shared, maxUnackedMessagesPerConsumer 1, nack delay 261 ms: after an admin
reset_cursor the consumer got m1 twice with count 0 (at 363 and 451 ms: one copy its queue held across the reset,
one the broker sent again) and nacked each at once; the count-1 copy came at 634 ms, 271 ms after the first nack and
183 ms after the second. The C++ nack tracker asks for each id after its delay (``NegativeAcksTracker``), and the broker
redelivers a message on any request that finds it pending on the consumer (``Consumer#redeliverUnacknowledgedMessages``),
so the copy is due from the first request, and the second cannot make it later. The expected verdicts come from that
client and broker code, not from the checker's output.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import History, Outcome, load

TRACE = Path(__file__).resolve().parents[2] / "conformance/regressions/pls-shared-001-duplicate-delivery-e2a893d38a24.trace.jsonl"


def _live_shaped(third_at: float) -> History:
    """The model's history of the regression trace, given the live run's times and counts: m1 count 0 at 363 ms,
    nacked; m1 count 0 at 451 ms, nacked; m1 count 1 at ``third_at``."""
    h = ModelTarget().run(load(TRACE))
    receipts = {6: (0.0, 363.0, 0), 8: (363.0, 451.0, 0), 10: (451.0, third_at, 1)}
    events = []
    for e in h.events:
        if e.op.step in receipts:
            start, end, count = receipts[e.op.step]
            message = dict(e.outcome.value["message"], redelivery_count=count)
            e = replace(e, outcome=Outcome.ok({"message": message}), t_start_ms=start, t_end_ms=end)
        elif e.op.step in (7, 9):
            at = 363.0 if e.op.step == 7 else 451.0
            e = replace(e, t_start_ms=at, t_end_ms=at)
        events.append(e)
    return replace(h, header=replace(h.header, target="embedded"), events=tuple(events))


def _failed(h: History) -> set[str]:
    return {v.rule_id for v in check(h).verdicts if v.status == "FAIL"}


def test_the_copy_due_from_the_first_nack_is_not_early():
    assert not _failed(_live_shaped(634.0)), check(_live_shaped(634.0)).summary()


def test_a_copy_before_either_nack_delay_is_early():
    """363 + 261 = 624 ms is the first request's time: a count-1 copy at 500 ms came before any request."""
    assert "PLS-NACK-001" in _failed(_live_shaped(500.0)), check(_live_shaped(500.0)).summary()
