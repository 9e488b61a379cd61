"""Model histories of the cases, edited the way a faulty broker would answer (shared by the chapter tests)."""

from __future__ import annotations

from conformance.case_files import discover_cases
from conformance.checker import CheckReport, check
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome, received_message

CASES = {c.id: c for c in discover_cases()}


def java_history(case_id: str) -> History:
    return ModelTarget(client="java").run(CASES[case_id].trace)


def replace_outcome(history: History, step: int, outcome: Outcome, t_end: float | None = None) -> History:
    events = list(history.events)
    ev = events[step - 1]
    events[step - 1] = Event(ev.op, outcome, ev.t_start_ms, ev.t_end_ms if t_end is None else t_end)
    return History(history.header, tuple(events))


def received(history: History, step: int, label: str, **changes) -> History:
    """The receive at ``step`` shows message ``label`` (as the model observed it elsewhere) instead."""
    found = next(received_message(e.outcome) for e in history.events if received_message(e.outcome)
                 and received_message(e.outcome).payload == label)
    return replace_outcome(history, step, Outcome.ok({"message": dict(found.to_json(), **changes)}))


def failures(judged: History | CheckReport) -> set[tuple[str, str | None]]:
    """(rule id, anomaly) of every FAIL: of ``check(history)``, or of a report already made."""
    report = check(judged) if isinstance(judged, History) else judged
    return {(v.rule_id, v.anomaly) for v in report.failures()}
