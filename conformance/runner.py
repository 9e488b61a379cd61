"""Run conformance cases on a target, judge them, and fold the verdicts per rule.

The verdict of a rule on a target is the worst of what every case said about it:
FAIL beats INDETERMINATE beats PASS. A rule no case touched is NOT_EXERCISED; a rule that does
not apply to the target's broker version or client is NOT_APPLICABLE. Nothing is PASS because
it was not looked at.
"""

from __future__ import annotations

import json
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Protocol

from conformance.case_files import Case, ExpectationResult, check_expectations
from conformance.trace import History, Trace, save

PASS, FAIL, INDETERMINATE, NOT_APPLICABLE, NOT_EXERCISED, ERROR = (
    "PASS", "FAIL", "INDETERMINATE", "NOT_APPLICABLE", "NOT_EXERCISED", "ERROR",
)
_SEVERITY = {PASS: 0, INDETERMINATE: 1, FAIL: 2}


class Target(Protocol):
    name: str

    def run(self, trace: Trace) -> History: ...

    def describe(self) -> dict[str, Any]: ...


def worst(statuses: Iterable[str]) -> str | None:
    found = [s for s in statuses if s in _SEVERITY]
    return max(found, key=_SEVERITY.__getitem__) if found else None


@dataclass(frozen=True)
class CaseVerdict:
    """A rule verdict that comes from a case (its expectations), shaped like a checker Verdict."""

    rule_id: str
    step: int | None
    status: str
    anomaly: str | None
    explanation: str


@dataclass
class CaseResult:
    case: Case
    target: str
    status: str  # PASS / FAIL / INDETERMINATE / NOT_APPLICABLE / ERROR
    rule_verdicts: dict[str, str] = field(default_factory=dict)
    verdicts: list[Any] = field(default_factory=list)  # checker Verdicts
    expectations: list[ExpectationResult] = field(default_factory=list)
    history: History | None = None
    history_path: Path | None = None
    duration_s: float = 0.0
    message: str = ""

    def corpus_verdicts(self) -> list[Any]:
        """What the outcome corpus records for this case: the checker's verdicts, plus the case's
        own (each pinned expectation at its step; a case rule nothing judged, at the last step),
        so the corpus and ``summary.json`` agree rule by rule."""
        out = list(self.verdicts)
        judged = {v.rule_id for v in out}
        for e in self.expectations:
            for rule in self.case.rules:
                # a broken expectation counts as run_case charged it; PASS there means "charged elsewhere"
                status = PASS if e.passed else self.rule_verdicts.get(rule, FAIL)
                if e.passed or status != PASS:
                    out.append(CaseVerdict(rule, e.expectation.step, status, None if e.passed else "wrong-value", e.message))
                    judged.add(rule)
        last = self.history.events[-1].step if self.history is not None and self.history.events else None
        for rule, status in self.rule_verdicts.items():
            if rule not in judged and status != NOT_APPLICABLE:
                out.append(CaseVerdict(rule, last, status, None, f"case {self.case.id}: {status}"))
        return out

    def failure_text(self) -> str:
        lines = []
        for v in self.verdicts:
            if getattr(v, "status", None) in (FAIL, INDETERMINATE):
                lines.append(f"[{v.rule_id}] step {v.step} {v.status}" + (f" ({v.anomaly})" if v.anomaly else "") + f": {v.explanation}")
        for e in self.expectations:
            if not e.passed:
                lines.append(f"[expect] {e.message}")
        if self.message:
            lines.append(self.message)
        return "\n".join(lines)


def run_case(case: Case, target: Target, *, client: str, history_dir: Path | None = None, check: Callable[..., Any] | None = None) -> CaseResult:
    """Run one case on ``target``, check the history with the model and the case's expectations.

    The model implements every client's rules, so a case for another client (e.g. a Java-only
    rule) runs on the model with that client's profile; a live target driven by ``client``
    reports it NOT_APPLICABLE.
    """
    if check is None:
        from conformance.checker import check as check  # noqa: PLW0127 - late import keeps startup light
    if getattr(target, "name", None) == "model":
        # a case for another client runs with that client's profile; a model target not pinned to
        # a profile follows the client it is asked to play (the trace header's overrides apply)
        wanted = client if case.runs_on(client) else case.clients[0]
        unpinned = getattr(target, "profile", None) is None
        if wanted != client or (unpinned and (getattr(target, "client", None) or "python") != wanted):
            from conformance.targets.model import ModelTarget

            target, client = ModelTarget(client=wanted), wanted
    if case.not_live and getattr(target, "name", None) != "model":
        return CaseResult(case, target.name, NOT_APPLICABLE, {r: NOT_APPLICABLE for r in case.rules},
                          message=f"not applicable to a live target: {case.not_live}")
    if not case.runs_on(client):
        return CaseResult(case, target.name, NOT_APPLICABLE, {r: NOT_APPLICABLE for r in case.rules}, message=f"case is for clients {list(case.clients)}, not {client}")
    t0 = time.monotonic()
    try:
        history = target.run(case.trace)
    except Exception as err:  # noqa: BLE001 - a harness error is reported, never a conformance FAIL
        return CaseResult(case, target.name, ERROR, message=f"the target could not run the case: {type(err).__name__}: {err}\n{traceback.format_exc(limit=3)}", duration_s=time.monotonic() - t0)
    duration = time.monotonic() - t0
    history_path = None
    if history_dir is not None:
        history_path = save(history, history_dir / f"{case.id}.history.jsonl")
    report = check(history)
    rule_verdicts = dict(report.rule_verdicts())
    expectations = check_expectations(case, history)
    failed_at: dict[int, set[str]] = {}
    for v in report.verdicts:
        if v.status == FAIL and v.step is not None:
            failed_at.setdefault(v.step, set()).add(v.rule_id)
    first_unknown = min((ev.step for ev in history.events if ev.outcome.status == "indeterminate"), default=None)
    for e in expectations:
        if not e.passed:
            # charge a broken expectation to the rules the checker blamed at that step; when the
            # checker saw nothing wrong there, to every rule the case is about. After an
            # indeterminate outcome (a timeout, a lost connection) nothing later can be a FAIL:
            # the outage may explain it.
            unknown = first_unknown is not None and first_unknown <= e.expectation.step
            for rule in failed_at.get(e.expectation.step) or case.rules:
                if unknown:
                    if rule_verdicts.get(rule) != FAIL:
                        rule_verdicts[rule] = INDETERMINATE
                else:
                    rule_verdicts[rule] = FAIL
    for rule in case.rules:
        rule_verdicts.setdefault(rule, PASS)
    status = worst(rule_verdicts.values()) or PASS
    return CaseResult(case, target.name, status, rule_verdicts, list(report.verdicts), expectations, history, history_path, duration)


def fold_rules(results: Iterable[CaseResult]) -> dict[str, str]:
    folded: dict[str, list[str]] = {}
    for result in results:
        for rule, status in result.rule_verdicts.items():
            folded.setdefault(rule, []).append(status)
    out = {}
    for rule, statuses in folded.items():
        verdict = worst(statuses)
        out[rule] = verdict if verdict is not None else (NOT_APPLICABLE if NOT_APPLICABLE in statuses else NOT_EXERCISED)
    return out


def summary(results: list[CaseResult], *, target_info: dict[str, Any], applies: Callable[[str], bool] | None = None) -> dict[str, Any]:
    """The ``summary.json`` document: one verdict per registered rule."""
    from reference_model.rules import RULES

    folded = fold_rules(results)
    rules: dict[str, str] = {}
    for rule in RULES:
        if getattr(rule, "status", "") == "withdrawn":
            continue
        if applies is not None and not applies(rule.id):
            rules[rule.id] = NOT_APPLICABLE
        else:
            rules[rule.id] = folded.get(rule.id, NOT_EXERCISED)
    counts: dict[str, int] = {}
    for verdict in rules.values():
        counts[verdict] = counts.get(verdict, 0) + 1
    return {
        "target": target_info.get("target"),
        "broker_version": target_info.get("broker_version"),
        "client": target_info.get("client"),
        "client_version": target_info.get("client_version"),
        "rules": rules,
        "counts": counts,
        "cases": {r.case.id: r.status for r in results},
    }


def write_json(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
