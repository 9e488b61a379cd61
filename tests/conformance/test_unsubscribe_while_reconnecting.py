"""An unsubscribe right after the broker dropped the consumer's connection (an admin reset_cursor, a seek, an unload, a
fault). The client unsubscribes over its connection and has none while it reconnects: Java
``ConsumerImpl#unsubscribeAsync`` fails "Not connected to broker" (live 4.0.8, Java fuzz campaign of 7 Dec 2026, 3/3:
regression pls-sub-006-unexpected-rejection-dd776047c2b1). A refusal there is the reconnect's, not followed; an
unsubscribe that succeeded (its client was back) is followed: the subscription is gone, so a new Exclusive consumer
may take it (the review of 3b9822f: not following it made that subscribe a false PLS-EXCL-001 FAIL)."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.checker import check
from conformance.trace import load, parse

REGRESSION = (Path(__file__).resolve().parents[2] / "conformance" / "regressions"
              / "pls-sub-006-unexpected-rejection-dd776047c2b1.history.jsonl")


def test_a_refused_unsubscribe_while_reconnecting_is_not_followed_nor_failed():
    report = check(load(REGRESSION))
    assert not [v for v in report.verdicts if v.status == "FAIL"], report.summary()
    assert [nf.op for nf in report.not_followed] == ["unsubscribe"]


def test_an_unsubscribe_that_succeeded_in_the_window_is_followed():
    lines = [json.loads(line) for line in REGRESSION.read_text(encoding="utf-8").splitlines() if line.strip()]
    header, ops = dict(lines[0]), lines[1:]
    unsubscribe = dict(ops[-1], outcome={"status": "ok", "value": {}})
    unsubscribe["t_start_ms"] += 1400.0  # inside faults.RECONNECT_WINDOW_MS of the reset, the client back
    unsubscribe["t_end_ms"] = unsubscribe["t_start_ms"] + 5.0
    again = {"kind": "op", "step": unsubscribe["step"] + 1, "op": "subscribe",
             "args": {"consumer": "c3", "topic": "t", "subscription": "sx1", "type": "Exclusive", "client": "java"},
             "outcome": {"status": "ok", "value": {}},
             "t_start_ms": unsubscribe["t_end_ms"] + 1.0, "t_end_ms": unsubscribe["t_end_ms"] + 20.0}
    header["op_count"] += 1
    report = check(parse("\n".join(json.dumps(d) for d in [header, *ops[:-1], unsubscribe, again])))
    assert not [v for v in report.verdicts if v.status == "FAIL"], report.summary()
    assert not report.not_followed, report.not_followed
