"""A redeliver_unacked with nothing unacked to rewind to owes nothing later (PLS-REDELIVER-001, PLS-TXN-009).

Model seed 1272 (regression pls-redeliver-001-late-redelivery-bd4feab04e12): a Java Exclusive consumer acked m3 in
transaction x2 (timeout 1 s) at 600 ms and called redeliver_unacked at once. The pending ack holds m3 (the broker's
dispatcher filters it out), so the rewind finds nothing; m3 comes back only when the transaction times out and its
abort rewinds (live 4.0.8: at 1,230 ms). The checker used to owe m3 from the redeliver at 600 ms.
"""

from __future__ import annotations

import json
from pathlib import Path

from conformance.checker import check
from conformance.trace import parse
from model_history_helpers import without_ops

HISTORY = Path(__file__).resolve().parents[2] / "conformance" / "regressions" / \
    "pls-redeliver-001-late-redelivery-bd4feab04e12.history.jsonl"


def _edited(edit):
    lines = [json.loads(line) for line in HISTORY.read_text(encoding="utf-8").splitlines() if line.strip()]
    return parse("\n".join(json.dumps(d) for d in edit(lines)))


def _failed(h) -> set[str]:
    return {v.rule_id for v in check(h).verdicts if v.status == "FAIL"}


def test_the_transactions_abort_brings_the_message_back_not_the_earlier_redeliver():
    h = _edited(lambda lines: lines)
    assert check(h).ok, check(h).summary()


def test_without_the_transaction_the_redeliver_owes_the_message_at_once():
    """The same history with m3 acked by no one (the ack at step 8 taken out of the transaction and turned into a
    no-op is not expressible, so the ack is dropped): the redeliver at 600 ms rewinds to m3, which then came only
    at 1,000 ms: PLS-REDELIVER-001 late-redelivery."""
    assert "PLS-REDELIVER-001" in _failed(_edited(lambda lines: without_ops(lines, "ack")))
