"""The fault campaign's ledger (conformance/fault_ledger.py): it counts the faults a trace held, and an
acked message lost or duplicated exactly when the history shows one, with the rule that judged it.

The histories are the model's own history of a fault case and that history changed the way a broker
that broke the rule would show it (the changes of tests/conformance/test_fault_rules.py): a message
acked before the cut delivered again, and a message stored before the cut that never comes."""

from __future__ import annotations

import json
from pathlib import Path

from conformance.checker import check
from conformance.fault_ledger import FaultLedger, fault_kind, ledger_of_folder
from conformance.trace import History, Outcome, save
from tests.conformance.test_fault_rules import changed, delivery, model_history


def _ledger(*histories: History) -> FaultLedger:
    ledger = FaultLedger()
    for h in histories:
        ledger.add(h, check(h).verdicts, source=h.header.trace_id)
    return ledger


def _sends_and_acks(history: History) -> tuple[int, int]:
    """Counted from the history's own ops here, to hold the ledger to them."""
    sends = sum(1 for e in history.events if e.op.op == "send" and e.outcome.status == "ok"
                and (e.outcome.value or {}).get("message_id") is not None)
    acks = sum(1 for e in history.events if e.op.op in ("ack", "ack_cumulative") and e.outcome.status == "ok")
    return sends, acks


def test_fault_kinds_follow_the_op_and_its_arguments():
    assert fault_kind("cut_connections", {}) == "cut"
    assert fault_kind("set_latency", {"ms": 300}) == "latency"
    assert fault_kind("set_latency", {"ms": 0}) is None  # ends a latency, injects nothing
    assert fault_kind("stall_connections", {"ms": 500}) == "stall"
    assert fault_kind("restart_broker", {}) == "restart"
    assert fault_kind("restart_broker", {"graceful": False}) == "crash"
    assert fault_kind("send", {"producer": "p", "payload": "m1"}) is None


def test_a_correct_history_loses_and_duplicates_nothing():
    h = model_history("fault-cut-exclusive-resumes")
    ledger = _ledger(h)
    assert (ledger.traces, ledger.fault_traces, ledger.faults["cut"]) == (1, 1, 1)
    assert (ledger.lost(), ledger.duplicated()) == (0, 0)
    assert (ledger.sends_acked, ledger.consumer_acks) == _sends_and_acks(h)
    assert ledger.rules["PLS-FAULT-002"].passed > 0, "the messages stored before the cut were judged"
    assert ledger.failing_traces == []


def test_an_acked_message_back_after_the_cut_is_one_duplicate():
    h = model_history("fault-cut-exclusive-resumes")
    m1 = delivery(h, "m1")  # acked at step 10, 500 ms before the cut at step 12
    ledger = _ledger(changed(h, 13, Outcome.ok({"message": {**m1, "redelivery_count": 0}})))
    assert ledger.duplicated() >= 1 and ledger.lost() == 0
    assert ledger.rules["PLS-FAULT-001"].failed == 1
    assert "PLS-FAULT-001" in ledger.failing_traces[0]["rules"]
    assert "acked messages duplicated: " + str(ledger.duplicated()) in ledger.text()


def test_a_stored_message_that_never_comes_is_one_loss():
    h = model_history("fault-cut-exclusive-resumes")
    ledger = _ledger(changed(h, 15, Outcome.ok({"message": None}), lasts_ms=3000))
    assert ledger.lost() == 1 and ledger.rules["PLS-FAULT-002"].failed == 1
    assert "acked messages lost: 1" in ledger.text()


def test_traces_without_a_fault_are_counted_but_not_in_the_ledger(tmp_path):
    """The folder reader: every kept history, the fault traces apart; the share is of all traces."""
    plain = model_history("fault-cut-exclusive-resumes")
    events = tuple(e for e in plain.events if fault_kind(e.op.op, dict(e.op.args)) is None)
    from dataclasses import replace

    without = History(replace(plain.header, trace_id="no-fault"), tuple(
        replace(e, op=replace(e.op, step=i)) for i, e in enumerate(events, start=1)))
    save(plain, tmp_path / "w0" / "a.history.jsonl")
    save(without, tmp_path / "w0" / "b.history.jsonl")
    ledger = ledger_of_folder(tmp_path)
    assert (ledger.traces, ledger.fault_traces, ledger.fault_share()) == (2, 1, 0.5)
    doc = ledger.to_json()
    json.dumps(doc)  # summary.json carries it
    assert doc["faults"] == {"cut": 1, "latency": 0, "stall": 0, "restart": 0, "crash": 0}
    assert doc["acked_lost"] == 0 and doc["acked_duplicated"] == 0
