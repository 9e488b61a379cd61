"""Run conformance cases on a target, judge them, and fold the verdicts per rule.

A rule's verdict in a case comes only from its detector (``conformance.checker``): PASS when the
detector judged it at one step or more and none failed. A rule the case names that no detector
judged is NOT_EXERCISED there, never PASS. The case's hand-written ``expect:`` lines are a
separate, named check: a broken expectation fails the case (and the run), and it is charged to a
rule only when that rule's detector failed at the same step.

The verdict of a rule on a target is the worst of what the detectors said about it across cases:
FAIL beats INDETERMINATE beats PASS. A rule no detector judged is NOT_EXERCISED; a rule that does
not apply to the target's broker version or client is NOT_APPLICABLE.
"""

from __future__ import annotations

import json
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Protocol

from conformance.case_files import Case, ExpectationResult, check_expectations
from conformance.host_stalls import was_excused
from conformance.trace import History, Trace, injects_faults, save
from conformance.verdicts import ERROR, FAIL, INDETERMINATE, NOT_APPLICABLE, NOT_EXERCISED, PASS, worst_judged



class Target(Protocol):
    name: str

    def run(self, trace: Trace) -> History: ...

    def describe(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class CaseVerdict:
    """A rule verdict that comes from a case (its expectations), shaped like a checker Verdict."""

    rule_id: str
    step: int | None
    status: str
    anomaly: str | None
    explanation: str


@dataclass(frozen=True)
class ExpectationFailure:
    """A case's ``expect:`` line that the history broke, and the rules failed at its step (if any)."""

    case: str
    step: int
    message: str
    charged_to: tuple[str, ...]
    indeterminate: bool  # an earlier indeterminate outcome may explain it

    def to_json(self) -> dict[str, Any]:
        return {"case": self.case, "step": self.step, "message": self.message, "charged_to": list(self.charged_to),
                "status": INDETERMINATE if self.indeterminate else FAIL}


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
    expectation_failures: list[ExpectationFailure] = field(default_factory=list)
    # the steps the model did not follow ({"step", "op", "reason"}: checker.NotFollowed), counted in summary.json
    not_followed: list[dict[str, Any]] = field(default_factory=list)

    def corpus_verdicts(self) -> list[Any]:
        """What the outcome corpus records for this case: the detectors' verdicts, step by step (so
        the corpus and ``summary.json`` agree rule by rule: both count only judged steps)."""
        return list(self.verdicts)

    def judged_steps(self) -> dict[str, int]:
        """How many verdicts each rule's detector gave in this case (steps, and end-of-history checks)."""
        out: dict[str, int] = {}
        for v in self.verdicts:
            out[v.rule_id] = out.get(v.rule_id, 0) + 1
        return out

    def failure_text(self) -> str:
        lines = []
        for v in self.verdicts:
            if getattr(v, "status", None) in (FAIL, INDETERMINATE):
                lines.append(f"[{v.rule_id}] step {v.step} {v.status}" + (f" ({v.anomaly})" if v.anomaly else "") + f": {v.explanation}")
        for e in self.expectation_failures:
            lines.append(f"[expect] step {e.step}: {e.message}" + (f" (charged to {', '.join(e.charged_to)})" if e.charged_to else ""))
        if self.message:
            lines.append(self.message)
        return "\n".join(lines)


def _broker_version_of(target: Target) -> str | None:
    """The broker release a target plays (a live broker's, or the model's when it was given one)."""
    found = getattr(target, "broker_version", None)
    return found() if callable(found) else found


def _outside_releases(case: Case, target: Target, version: str | None, client: str) -> str:
    """Why a live target is outside the releases the case is written for (its ``brokers`` and ``java_clients``),
    or "" when it is inside them (or the target is the model, or a release cannot be read)."""
    from reference_model.rules import version_in

    if getattr(target, "name", None) == "model":
        return ""
    java = getattr(target, "java_driver_version", None)
    checks = [("broker", version, case.brokers, "brokers")]
    if client in ("java", "mixed") and callable(java):
        checks.append(("Java client", java(), case.java_clients, "java_clients"))
    for what, release, spec, key in checks:
        if not release or spec == "*":
            continue
        try:
            inside = version_in(str(release), spec)
        except ValueError:
            continue  # a line or a custom build: the case's rules decide
        if not inside:
            return f"the case is written for {what} releases {spec} (its {key}), and this run's is {release}"
    return ""


def required_broker_config(case: Case) -> dict[str, Any]:
    """The broker settings ``case`` needs (its ``profile.broker_config`` without the Key_Shared selector's keys, which
    the checker follows from the broker's own report): a live broker must run with these (``broker_config_conflict``)."""
    from reference_model.dispatch.key_shared import BROKER_CONFIG_KEYS

    wanted = (case.trace.header.profile or {}).get("broker_config") or {}
    return {key: value for key, value in wanted.items() if key not in BROKER_CONFIG_KEYS}


def broker_config_conflict(case: Case, target: Target) -> str:
    """Why a live target's broker cannot run ``case``: a key of the case's ``profile.broker_config`` the broker does
    not have at that value (read from its runtime configuration, ``broker_config()``), or "" when it has them all
    (or the target is the model, which takes the case's config as its own). The Key_Shared selector's keys
    (``reference_model.dispatch.key_shared.BROKER_CONFIG_KEYS``) are exempt: the checker follows the selector the
    broker reports, so such a case is written to hold under either."""
    wanted = required_broker_config(case)
    reader = getattr(target, "broker_config", None)
    if getattr(target, "name", None) == "model" or not wanted or not callable(reader):
        return ""
    have = reader() or {}
    missing = []
    for key, value in wanted.items():
        if key not in have:
            missing.append(f"{key}={value} (this broker's value cannot be read)")
        elif str(have[key]).strip().lower() != str(value).strip().lower():
            missing.append(f"{key}={value} (this broker has {have[key] or 'it unset'})")
    if not missing:
        return ""
    overrides = " ".join(f"--config-override {key}={value}" for key, value in wanted.items())
    return (f"the case needs a broker with {', '.join(missing)}; run it on an embedded broker with {overrides}, "
            "or on a cluster configured so")


def _rule_applies(rule_id: str, version: str, client: str, vendor: str = "apache") -> bool:
    """Registry ``applies``; a rule unknown to the registry or an unreadable version counts as applying."""
    from reference_model.rules import applies, rule

    try:
        return applies(rule(rule_id), broker_version=version, client="mixed" if client == "mixed" else client,
                       vendor=vendor)
    except (KeyError, ValueError):
        return True


def _vendor_has(rule_id: str, vendor: str) -> bool:
    """Whether a rule holds under the vendor profile ``vendor`` (an unknown rule counts as holding)."""
    from reference_model.rules import rule

    try:
        return vendor in rule(rule_id).applies_to.vendors
    except KeyError:
        return True


def one_line_cause(err: BaseException, limit: int = 300) -> str:
    """``Type: message`` on one line (an admin error's body or a driver's stack trace cut off)."""
    text = " ".join(str(err).split()) or "(no message)"
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return f"{type(err).__name__}: {text}"


def log_harness_error(path: Path, case_id: str, target_name: str, err: BaseException) -> None:
    """Append ``err``'s full traceback to ``path`` (the run's ``harness-errors.log``), under a header."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    from fixtures.secrets import redact

    with path.open("a", encoding="utf-8") as f:
        f.write(redact(f"=== {stamp} case {case_id} on {target_name}\n" + "".join(traceback.format_exception(err)) + "\n"))


def run_case(case: Case, target: Target, *, client: str, history_dir: Path | None = None, check: Callable[..., Any] | None = None,
             harness_log: Path | None = None) -> CaseResult:
    """Run one case on ``target``, check the history with the model and the case's expectations.

    The model implements every client's rules, so a case for another client (e.g. a Java-only
    rule) runs on the model with that client's profile; a live target driven by ``client``
    reports it NOT_APPLICABLE.

    An exception inside the target is a harness error, never a verdict: the case is ERROR and its
    message is the one-line cause; the full traceback goes to ``harness_log`` when given.
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
    if getattr(target, "name", None) != "model" and not getattr(target, "supports_faults", False) \
            and injects_faults(case.trace):
        return CaseResult(case, target.name, NOT_APPLICABLE, {r: NOT_APPLICABLE for r in case.rules},
                          message="the case injects faults, and this target has no fault proxy (docs/faults.md: "
                                  "--target embedded starts one; an external cluster cannot be restarted from here)")
    version = _broker_version_of(target)
    vendor = str(case.trace.header.profile.get("vendor", "apache"))
    if case.written_for and case.written_for != vendor:
        return CaseResult(case, target.name, NOT_APPLICABLE, {r: NOT_APPLICABLE for r in case.rules},
                          message=f"the case is written for the {case.written_for} profile, and this run is {vendor} "
                                  f"(run it with --profile {case.written_for})")
    outside = _outside_releases(case, target, version, client) or broker_config_conflict(case, target)
    if outside:
        return CaseResult(case, target.name, NOT_APPLICABLE, {r: NOT_APPLICABLE for r in case.rules}, message=outside)
    if case.rules and not any(_rule_applies(r, version, client, vendor) if version else _vendor_has(r, vendor)
                              for r in case.rules):
        return CaseResult(case, target.name, NOT_APPLICABLE, {r: NOT_APPLICABLE for r in case.rules},
                          message=f"no rule the case names applies to broker {version or 'of the model'} under the "
                                  f"{vendor} profile (the rules' applies_to)")
    t0 = time.monotonic()
    try:
        history = target.run(case.trace)
    except Exception as err:  # noqa: BLE001 - a harness error is reported, never a conformance FAIL
        where = ""
        if harness_log is not None:
            try:
                log_harness_error(harness_log, case.id, target.name, err)
                where = f" (traceback in {harness_log})"
            except OSError:
                pass
        return CaseResult(case, target.name, ERROR, message=f"the target could not run the case: {one_line_cause(err)}{where}",
                          duration_s=time.monotonic() - t0)
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
    stalled = stalled_steps(report.verdicts)  # a late receive the host's stalls explain (conformance/host_stalls.py)
    broken = []
    for e in expectations:
        if not e.passed:
            # A broken expectation is the case's own check failing. It is charged only to the
            # rules whose detectors failed at that step; otherwise it stands alone (a case FAIL,
            # never a rule's). After an indeterminate outcome (a timeout, a lost connection) the
            # outage may explain it: INDETERMINATE.
            unknown = (first_unknown is not None and first_unknown <= e.expectation.step) or e.expectation.step in stalled
            broken.append(ExpectationFailure(case.id, e.expectation.step, e.message,
                                             tuple(sorted(failed_at.get(e.expectation.step, ()))), unknown))
    status = worst_judged(rule_verdicts.values()) or PASS
    if any(not b.indeterminate for b in broken):
        status = FAIL
    elif broken and status == PASS:
        status = INDETERMINATE
    for rule in not_in_force(case.rules, history, client=client):
        if rule not in rule_verdicts:
            rule_verdicts[rule] = NOT_APPLICABLE  # the case names it for another client or broker setting
    unjudged = [rule for rule in case.rules if rule not in rule_verdicts]
    for rule in unjudged:
        rule_verdicts[rule] = NOT_EXERCISED  # named by the case, judged by no detector: never PASS
    message = ""
    if unjudged:
        message = f"no detector judged {', '.join(unjudged)}, which the case names"
        if report.tolerances.source != "model":
            # a live band wider than the case's waits leaves a timed rule unjudged: say which band
            message += f" (judged with the lateness band {report.tolerances.describe()})"
        if status == PASS:
            status = INDETERMINATE
    if report.harness_errors and status != FAIL:
        # the harness could not run part of the case: not a verdict on the broker
        status = ERROR
        message = "the harness could not run every op: " + "; ".join(report.harness_errors) + (f"; {message}" if message else "")
    return CaseResult(case, target.name, status, rule_verdicts, list(report.verdicts), expectations, history,
                      history_path, duration, message, broken, [nf.to_json() for nf in report.not_followed])


# How often a case whose only undecided verdicts came from host stalls runs again (conformance/host_stalls.py)
STALL_RERUNS = 2


def run_case_past_stalls(case: Case, target: Target, *, client: str, history_dir: Path | None = None,
                         harness_log: Path | None = None,
                         on_stall: Callable[[int, CaseResult], None] | None = None) -> CaseResult:
    """``run_case``, run again (at most ``STALL_RERUNS`` times) while its result is INDETERMINATE only
    because the host stalled where the case was due (``only_host_stalls``): such a run proved nothing
    either way. ``on_stall(attempt, result)`` hears of each such run. Every history is kept: the first
    run's in ``history_dir``, rerun n's in ``history_dir/rerun-<n>``."""
    result = run_case(case, target, client=client, history_dir=history_dir, harness_log=harness_log)
    for attempt in range(1, STALL_RERUNS + 1):
        if not only_host_stalls(result):
            break
        if on_stall is not None:
            on_stall(attempt, result)
        result = run_case(case, target, client=client, harness_log=harness_log,
                          history_dir=history_dir / f"rerun-{attempt}" if history_dir is not None else None)
    return result


def first_undecided(result: CaseResult) -> str:
    """The first INDETERMINATE verdict of ``result``, as one line."""
    return next((f"[{v.rule_id}] step {v.step}: {v.explanation}" for v in result.verdicts if v.status == INDETERMINATE), "")


def stalled_steps(verdicts: Iterable[Any]) -> set[int]:
    """The steps at which a verdict was left INDETERMINATE because the host stalled (conformance/host_stalls.py)."""
    return {v.step for v in verdicts if v.status == INDETERMINATE and v.step is not None
            and was_excused(v.explanation)}


def only_host_stalls(result: CaseResult) -> bool:
    """Whether ``result`` is INDETERMINATE only because the host stalled where it was judged late: every
    INDETERMINATE verdict and every broken expectation is at a stalled step, and every named rule was
    judged. Such a case proved nothing either way, and running it again may."""
    if result.status != INDETERMINATE or result.message:
        return False
    stalled = stalled_steps(result.verdicts)
    undecided = [v for v in result.verdicts if v.status == INDETERMINATE]
    return bool(stalled) and all(v.step in stalled for v in undecided) \
        and all(b.step in stalled for b in result.expectation_failures)


def not_in_force(rules: Iterable[str], history: History, *, client: str) -> set[str]:
    """The rules among ``rules`` that cannot speak about ``history``: registered for other clients or
    broker releases (``applies_to``), or a Key_Shared selector the broker that ran it did not use
    (a case may name the ring and the AUTO_SPLIT rule, and be judged by the one its broker uses)."""
    from reference_model.broker import split_profile
    from reference_model.dispatch.key_shared import KeySharedSettings
    from reference_model.rules import applies, rule as registered

    header = history.header
    version = header.broker_version or "4.0"
    who = header.client or client
    vendor = str(header.profile.get("vendor", "apache"))
    out = set()
    for rule_id in rules:
        try:
            if not applies(registered(rule_id), broker_version=version, client=who, vendor=vendor):
                out.add(rule_id)
        except (KeyError, ValueError):
            continue
    _, broker_config = split_profile(header.profile)
    settings = KeySharedSettings.for_broker(version, broker_config)
    out.add("PLS-KEYSHARED-004" if settings.consistent_hashing else "PLS-KEYSHARED-003")
    return out & set(rules)


def fold_rules(results: Iterable[CaseResult]) -> dict[str, str]:
    """One verdict per rule over cases: the worst a detector gave; NOT_EXERCISED when a case named it
    and no detector judged it anywhere; NOT_APPLICABLE when every case that named it did not apply."""
    folded: dict[str, list[str]] = {}
    for result in results:
        for rule, status in result.rule_verdicts.items():
            folded.setdefault(rule, []).append(status)
    out = {}
    for rule, statuses in folded.items():
        verdict = worst_judged(statuses)
        if verdict is None:
            verdict = NOT_EXERCISED if NOT_EXERCISED in statuses or any(s != NOT_APPLICABLE for s in statuses) else NOT_APPLICABLE
        out[rule] = verdict
    return out


def judged_steps(results: Iterable[CaseResult]) -> dict[str, int]:
    """How many verdicts each rule's detector gave over all cases."""
    out: dict[str, int] = {}
    for result in results:
        for rule, n in result.judged_steps().items():
            out[rule] = out.get(rule, 0) + n
    return out


def meant_to_judge(results: Iterable[CaseResult]) -> set[str]:
    """The rules a run was meant to judge: every rule a case that ran names (NOT_APPLICABLE cases aside)."""
    return {rule for r in results if r.status not in (NOT_APPLICABLE, ERROR) for rule in r.case.rules
            if r.rule_verdicts.get(rule) != NOT_APPLICABLE}


def not_followed_summary(results: Iterable[CaseResult]) -> dict[str, Any]:
    """summary.json ``not_followed``: how many steps of the run's cases the model did not follow, in which cases,
    and by reason (``checker.not_followed_reason``), the most frequent first. What came after such a step is judged
    less or not at all, so the count is shown wherever the answer is (issue 46: silence is no PASS)."""
    by_case: dict[str, int] = {}
    by_reason: dict[str, int] = {}
    for r in results:
        for nf in r.not_followed:
            by_case[r.case.id] = by_case.get(r.case.id, 0) + 1
            by_reason[nf["reason"]] = by_reason.get(nf["reason"], 0) + 1
    return _not_followed_doc(by_case, by_reason)


def merge_not_followed(parts: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, Any]:
    """One ``not_followed`` over several runs' (``(client, not_followed_summary)`` pairs): steps and reasons
    summed, cases named ``<client>/<case>``. What a run's headline and last line count over its clients."""
    by_case: dict[str, int] = {}
    by_reason: dict[str, int] = {}
    for client, doc in parts:
        by_case.update({f"{client}/{case}": int(n) for case, n in (doc.get("cases") or {}).items()})
        for reason, n in (doc.get("by_reason") or {}).items():
            by_reason[reason] = by_reason.get(reason, 0) + int(n)
    return _not_followed_doc(by_case, by_reason)


def _not_followed_doc(by_case: Mapping[str, int], by_reason: Mapping[str, int]) -> dict[str, Any]:
    return {"steps": sum(by_case.values()), "cases": dict(sorted(by_case.items())),
            "by_reason": dict(sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0])))}


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
    steps = judged_steps(results)
    return {
        "target": target_info.get("target"),
        "broker_version": target_info.get("broker_version"),
        "client": target_info.get("client"),
        "client_version": target_info.get("client_version"),
        "rules": rules,
        "counts": counts,
        "cases": {r.case.id: r.status for r in results},
        # for every rule, how many steps its detector judged (0: its verdict rests on no observation)
        "judged_steps": {rule: steps.get(rule, 0) for rule in rules},
        "meant_to_judge": sorted(meant_to_judge(results) & set(rules)),
        "expectations": {"checked": sum(len(r.expectations) for r in results),
                         "failed": [e.to_json() for r in results for e in r.expectation_failures]},
        "harness_errors": {r.case.id: r.message.splitlines()[0] if r.message else "" for r in results if r.status == ERROR},
        "not_followed": not_followed_summary(results),
    }


def write_json(path: Path, data: Any) -> Path:
    from fixtures.secrets import redact

    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(redact(json.dumps(data, indent=2, sort_keys=False) + "\n"), encoding="utf-8")  # no secret shows
    tmp.replace(path)
    return path


def unexcused_failures(result: CaseResult, deviation: Any | None) -> list[str]:
    """The failures of ``result`` that ``deviation`` (a ``conformance.deviations.Deviation``, a list
    of them, or None) does not excuse: every FAIL verdict that no deviation names by rule, anomaly
    and step, and every broken expectation not charged only to rules excused at that step (one
    charged to no rule, after an excused step, is taken as that bug's consequence). Empty:
    the case is PASS or an excused known deviation."""
    devs = [] if deviation is None else list(deviation) if isinstance(deviation, (list, tuple)) else [deviation]
    left = []
    excused: dict[Any, set[str]] = {}
    failing_steps: dict[Any, set[str]] = {}
    for v in result.verdicts:
        if getattr(v, "status", None) != FAIL:
            continue
        if v.step is not None:
            failing_steps.setdefault(v.step, set()).add(v.rule_id)
        if any(d.excuses(result.case.id, v.rule_id, v.anomaly, v.step) for d in devs):
            excused.setdefault(v.step, set()).add(v.rule_id)
            continue
        left.append(f"[{v.rule_id}] step {v.step} FAIL" + (f" ({v.anomaly})" if v.anomaly else "") + f": {v.explanation}")
    for e in result.expectation_failures:
        if e.indeterminate:
            continue
        if e.step in excused and e.charged_to and set(e.charged_to) <= excused[e.step]:
            continue
        # an expectation no rule is charged with, whose nearest failing step before it is wholly excused:
        # that bug's consequence
        # (a redelivered message shifts every later receive), since every detector passed that step
        prior = [k for k in failing_steps if e.step is not None and k < e.step]
        if not e.charged_to and prior and max(prior) in excused and excused[max(prior)] == failing_steps[max(prior)]:
            continue
        left.append(f"[expect] step {e.step}: {e.message}")
    if result.status == FAIL and not left and not devs:
        left.append(result.failure_text() or "the case failed")
    return left
