"""The fault campaign's ledger: what the nemesis did, and what it cost in acknowledged messages.

Jepsen reports a fault campaign by what the system acknowledged and then lost or duplicated; this is
that count for a run of generated traces with fault ops (``fuzz --target embedded --faults``,
docs/faults.md). It reads the live histories a run kept (``OUT/histories/**/*.history.jsonl``),
judges each again with the checker (the same verdicts the run recorded, for the same history and
model), and counts, over the traces that held a fault op:

- the faults drawn, by kind: ``cut`` (``cut_connections``), ``latency`` (``set_latency`` above 0),
  ``stall`` (``stall_connections``), ``restart`` (``restart_broker`` graceful) and ``crash``
  (``restart_broker`` with ``graceful: false``, a SIGKILL);
- the messages the broker acknowledged to a producer (``send`` ok with a message id) and the acks a
  consumer made (``ack`` and ``ack_cumulative`` ok);
- **acked messages lost**: the FAIL verdicts of ``LOSS_RULES`` (each verdict names one message a
  subscription was owed and never got); **acked messages duplicated**: the FAIL verdicts of
  ``DUPLICATE_RULES`` (a message delivered again after an ack the broker had, or a deduplicated send
  stored twice). Both are 0 on a conforming broker. Their PASS verdicts are the messages judged, and
  their INDETERMINATE ones the messages whose fate the history cannot settle (an ack in flight at a
  crash: Jepsen's *info*), reported apart, never as a loss.

Each figure names the rules that judged it, so a non-zero count points at the rule whose text it
breaks (``pulsar-conformance explain RULE``). Pure over histories: no I/O but ``ledger_of_folder``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from conformance.trace import FAULT_OPS, OK, History, load
from reference_model import faults

# A subscription owed a message stored before a fault that never came (reference_model/faults.py).
LOSS_RULES = ("PLS-FAULT-002",)
# A message delivered again after an ack the broker had (across a fault, or at all), a
# deduplicated send stored twice across a fault, a committed transaction's ack undone.
DUPLICATE_RULES = ("PLS-FAULT-001", "PLS-ACK-001", "PLS-FAULT-004", "PLS-TXN-008")

FAULT_KINDS = (faults.CUT, faults.LATENCY, faults.STALL, faults.RESTART, faults.CRASH)


def fault_kind(op: str, args: dict[str, Any]) -> str | None:
    """The nemesis kind of an op (``reference_model.faults.fault_kind``), or None when the op injects no
    fault: not a fault op, or ``set_latency 0``, which ends a latency."""
    if op not in FAULT_OPS or (op == "set_latency" and int(args.get("ms", 0)) <= 0):
        return None
    return faults.fault_kind(op, args)


@dataclass
class RuleTally:
    """One rule's verdicts over the fault traces: messages judged (PASS), broken (FAIL), unsettled."""

    passed: int = 0
    failed: int = 0
    indeterminate: int = 0

    def add(self, status: str) -> None:
        if status == "FAIL":
            self.failed += 1
        elif status == "INDETERMINATE":
            self.indeterminate += 1
        else:
            self.passed += 1


@dataclass
class FaultLedger:
    """The campaign's counts; ``add`` one judged history at a time."""

    traces: int = 0
    fault_traces: int = 0
    faults: Counter = field(default_factory=Counter)  # kind -> ops drawn
    traces_by_kind: Counter = field(default_factory=Counter)  # kind -> traces holding one
    sends_acked: int = 0  # in the fault traces: sync sends the broker acknowledged with a message id
    async_sends: int = 0  # in the fault traces: async sends that completed ok
    consumer_acks: int = 0  # in the fault traces
    rules: dict[str, RuleTally] = field(default_factory=lambda: {r: RuleTally() for r in (*LOSS_RULES, *DUPLICATE_RULES)})
    failing_traces: list[dict[str, Any]] = field(default_factory=list)  # trace id, file, rules that FAILed
    by_client: Counter = field(default_factory=Counter)  # client -> fault traces

    def add(self, history: History, verdicts: Iterable[Any], *, source: str | None = None) -> None:
        self.traces += 1
        kinds = [k for e in history.events if (k := fault_kind(e.op.op, dict(e.op.args))) is not None]
        if not kinds:
            return
        self.fault_traces += 1
        self.by_client[history.header.client or "unknown"] += 1
        self.faults.update(kinds)
        self.traces_by_kind.update(set(kinds))
        for e in history.events:
            if e.outcome.status != OK:
                continue
            if e.op.op == "send" and (e.outcome.value or {}).get("message_id") is not None:
                self.sends_acked += 1
            elif e.op.op == "send" and e.op.args.get("async"):
                self.async_sends += 1
            elif e.op.op in ("ack", "ack_cumulative"):
                self.consumer_acks += 1
        failed = set()
        for v in verdicts:
            tally = self.rules.get(v.rule_id)
            if tally is not None:
                tally.add(v.status)
            if v.status == "FAIL":
                failed.add(v.rule_id)
        if failed:
            self.failing_traces.append({"trace_id": history.header.trace_id, "file": source, "rules": sorted(failed)})

    def lost(self) -> int:
        return sum(self.rules[r].failed for r in LOSS_RULES)

    def duplicated(self) -> int:
        return sum(self.rules[r].failed for r in DUPLICATE_RULES)

    def fault_share(self) -> float:
        return self.fault_traces / self.traces if self.traces else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "traces": self.traces,
            "fault_traces": self.fault_traces,
            "fault_share": round(self.fault_share(), 4),
            "faults": {k: self.faults.get(k, 0) for k in FAULT_KINDS},
            "traces_by_kind": {k: self.traces_by_kind.get(k, 0) for k in FAULT_KINDS},
            "fault_traces_by_client": dict(self.by_client),
            "sends_acked": self.sends_acked,
            "async_sends": self.async_sends,
            "consumer_acks": self.consumer_acks,
            "acked_lost": self.lost(),
            "acked_duplicated": self.duplicated(),
            "rules": {r: vars(t) for r, t in self.rules.items()},
            "loss_rules": list(LOSS_RULES),
            "duplicate_rules": list(DUPLICATE_RULES),
            "failing_traces": self.failing_traces,
        }

    def text(self) -> str:
        def judged(rules: tuple[str, ...]) -> str:
            return ", ".join(f"{r} {self.rules[r].passed} pass/{self.rules[r].failed} FAIL/"
                             f"{self.rules[r].indeterminate} unsettled" for r in rules)

        kinds = ", ".join(f"{k} {self.faults.get(k, 0)} in {self.traces_by_kind.get(k, 0)} traces" for k in FAULT_KINDS)
        lines = [f"faults: {self.fault_traces} of {self.traces} traces held a fault op ({100 * self.fault_share():.0f}%): {kinds}",
                 f"  in them the broker acknowledged {self.sends_acked} sends (and {self.async_sends} async sends completed); "
                 f"consumers made {self.consumer_acks} acks",
                 f"  acked messages lost: {self.lost()} (judged by {judged(LOSS_RULES)})",
                 f"  acked messages duplicated: {self.duplicated()} (judged by {judged(DUPLICATE_RULES)})"]
        lines += [f"  FAIL in {t['trace_id']}: {', '.join(t['rules'])} ({t['file']})" for t in self.failing_traces]
        return "\n".join(lines)


def history_files(folder: Path) -> list[Path]:
    """Every kept live history under ``folder`` (a run's ``OUT/histories``), in a stable order."""
    return sorted(Path(folder).rglob("*.history.jsonl"))


def ledger_of_folder(folder: Path) -> FaultLedger:
    """Judge every history under ``folder`` again and count it into a ledger."""
    from conformance.checker import check

    ledger = FaultLedger()
    for path in history_files(folder):
        history = load(path)
        if not isinstance(history, History):
            continue
        ledger.add(history, check(history).verdicts, source=str(path))
    return ledger
