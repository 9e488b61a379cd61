"""Judging one generated trace: run it on a target, check the history, name the failure.

Part of the differential fuzzer (``conformance.fuzz``). A failure is identified by its
*signature*, the (rule id, anomaly) of its first FAIL verdict; shrinking keeps it, so shrinking
never slides to another bug. A crash of the target or of the checker is a finding too: an
``ErrorReport`` with signature ``HARNESS-ERROR`` / ``<where>:<exception>``, shrunk like any FAIL.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from conformance.trace import History, Trace
from conformance.verdicts import FAIL, PASS, worst_judged
from conformance.verdicts import INDETERMINATE as INDET

FLAKY = "FLAKY"  # a fuzz outcome, not a rule verdict: failed once, passed on a rerun


def check_history(history: History):
    from conformance.checker import check  # looked up on each call: tests may swap the checker's model

    return check(history)


def signature(report: Any) -> tuple[str, str] | None:
    """The failure's identity: (rule id, anomaly) of its first FAIL verdict, or None."""
    for v in report.verdicts:
        if v.status == FAIL:
            return (v.rule_id, v.anomaly or "")
    return None


def has_signature(report: Any, sig: tuple[str, str]) -> bool:
    return any(v.status == FAIL and (v.rule_id, v.anomaly or "") == sig for v in report.verdicts)


def trace_status(report: Any) -> str:
    return worst_judged((v.status for v in report.verdicts), PASS)


HARNESS_ERROR = "HARNESS-ERROR"


@dataclass(frozen=True)
class _ErrorVerdict:
    rule_id: str
    step: int | None
    status: str
    anomaly: str | None
    allowed: str
    observed: str
    explanation: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ErrorReport:
    """Stands in for a ``CheckReport`` when the target or the checker raised: a crash is a
    finding too (signature ``HARNESS-ERROR``, ``<where>:<exception>``), shrunk like any FAIL."""

    trace_id: str
    verdicts: tuple[_ErrorVerdict, ...]

    def failures(self) -> list[_ErrorVerdict]:
        return list(self.verdicts)

    def rule_verdicts(self) -> dict[str, str]:
        return {HARNESS_ERROR: "FAIL"}

    def to_json(self) -> dict[str, Any]:
        return {"trace_id": self.trace_id, "rule_verdicts": self.rule_verdicts(),
                "verdicts": [v.to_json() for v in self.verdicts]}


def error_report(trace: Trace, where: str, err: BaseException) -> ErrorReport:
    import traceback

    frame = traceback.extract_tb(err.__traceback__)[-1] if err.__traceback__ else None
    at = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return ErrorReport(trace.header.trace_id, (_ErrorVerdict(
        HARNESS_ERROR, None, "FAIL", f"{where}:{type(err).__name__}", "no exception", f"{type(err).__name__}: {err}",
        f"The {where} raised {type(err).__name__}{at}: {err}"),))


def run_and_judge(target: Any, trace: Trace):
    """Run ``trace`` on ``target`` and judge it; a crash of either becomes an ``ErrorReport``."""
    try:
        history = target.run(trace)
    except Exception as err:  # noqa: BLE001 - a harness crash is reported, shrunk, never hidden
        from conformance.trace import Event, Outcome

        events = tuple(Event(op, Outcome.indeterminate("not run: the target crashed"), 0.0, 0.0) for op in trace.ops)
        return History(trace.header, events), error_report(trace, "target", err)
    try:
        return history, check_history(history)
    except Exception as err:  # noqa: BLE001
        return history, error_report(trace, "checker", err)

