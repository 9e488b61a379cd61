"""The exit code of a run: one function from rule verdicts to a process status.

``pulsar-conformance run``, ``replay`` and ``check`` all end here, so the same verdicts always
give the same exit code:

  0  every rule the run was meant to judge is PASS (or NOT_APPLICABLE), or FAILed only as an
     excused known deviation (``conformance/deviations.yaml``)
  1  a conformance FAIL: the target did something the model does not allow
  2  bad input, bad usage, or no broker could be had (decided before any verdict; not here)
  3  inconclusive: a rule the run was meant to judge ended INDETERMINATE, or no detector judged
     it (NOT_EXERCISED, UNJUDGED)
  4  harness error: the suite itself failed (an exception inside a target, the Java driver died,
     a checker crash, the report job crashed); the verdicts are incomplete

When several apply, the first in the order 4, 1, 3 wins: a harness error means the verdicts are
incomplete, so neither a FAIL nor a PASS among them is the whole answer; a FAIL is a finding
whatever else stayed inconclusive.

``decide`` is the one answer of ``pulsar-conformance run`` (issue 43): from every label's verdicts
(model and target, per client) it gives the outcome word (``PASS``, ``KNOWN_DEVIATIONS``: exit 0
with every FAIL an excused known deviation, ``FAIL``, ``INCONCLUSIVE``, ``ERROR``, ``INTERRUPTED``),
the exit code (through ``exit_code``: one path) and the reasons (which rules x clients, which
cases), from which ``run`` writes its last line, ``summary.json`` (``overall``, ``exit_code``,
``reasons``), the JUnit outcome suite and the HTML banner.

Choices: the caller decides which rules the run was meant to judge (the keys of
``rule_verdicts``; for ``decide``, each label's ``meant``); a status outside the closed vocabulary
is a caller bug and raises ``ValueError`` rather than being read as success.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection, Mapping, Sequence

from conformance.verdicts import (ERROR, FAIL, INDETERMINATE, NOT_APPLICABLE, NOT_EXERCISED, PASS, STATUSES,
                                  UNJUDGED)

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_INCONCLUSIVE, EXIT_HARNESS = 0, 1, 2, 3, 4

# UNJUDGED: a rule a case or trace named that no detector judged (treated as INDETERMINATE).
FINE = frozenset({PASS, NOT_APPLICABLE})
FAILED = frozenset({FAIL})
INCONCLUSIVE = frozenset({INDETERMINATE, NOT_EXERCISED, UNJUDGED})
BROKEN = frozenset({ERROR})

EXIT_CODES_TEXT = """exit codes:
  0  every rule the run was meant to judge is PASS, or an excused known deviation
  1  a conformance FAIL
  2  bad input, bad usage, or no broker
  3  inconclusive: a rule the run was meant to judge ended INDETERMINATE or was never judged
  4  harness error: the suite itself failed (a target raised, the Java driver died, the broker
     died under the run, the report job crashed)
  130/143  interrupted by Ctrl-C / SIGTERM: what was judged is kept; --resume continues it
  when several apply: 4, then 1, then 3"""


def exit_code(rule_verdicts: Mapping[str, str], *, harness_errors: int = 0, failed_cases: int = 0,
              excused: Collection[str] = ()) -> int:
    """The process exit code for a run whose meant-to-judge rules ended with ``rule_verdicts``.

    ``harness_errors``: how many things of the suite itself failed (cases that ended ERROR, a
    crashed report job, ...). ``failed_cases``: conformance failures not visible as a rule's FAIL
    (a case's broken ``expect:`` line charged to no rule, a fuzz failure), excused ones left out.
    ``excused``: rules whose FAIL is an excused known deviation (counted as PASS here).
    """
    unknown = {rule: status for rule, status in rule_verdicts.items() if status not in STATUSES}
    if unknown:
        raise ValueError(f"unknown verdict status for {unknown}; use one of {sorted(STATUSES)}")
    if harness_errors < 0 or failed_cases < 0:
        raise ValueError(f"counts must be >= 0; got harness_errors={harness_errors}, failed_cases={failed_cases}")
    statuses = {status for rule, status in rule_verdicts.items() if not (status == FAIL and rule in excused)}
    if harness_errors or statuses & BROKEN:
        return EXIT_HARNESS
    if failed_cases or statuses & FAILED:
        return EXIT_FAIL
    if statuses & INCONCLUSIVE:
        return EXIT_INCONCLUSIVE
    return EXIT_OK


# --------------------------------------------------------------------------- the run's one answer

OUTCOME_PASS, OUTCOME_KNOWN, OUTCOME_FAIL = "PASS", "KNOWN_DEVIATIONS", "FAIL"
OUTCOME_INCONCLUSIVE, OUTCOME_ERROR, OUTCOME_INTERRUPTED = "INCONCLUSIVE", "ERROR", "INTERRUPTED"
OUTCOMES = (OUTCOME_PASS, OUTCOME_KNOWN, OUTCOME_FAIL, OUTCOME_INCONCLUSIVE, OUTCOME_ERROR, OUTCOME_INTERRUPTED)
# reason kinds, in the order a reader needs them; the outcome's own kinds come first in its line
KIND_ERROR, KIND_FAIL, KIND_FAILED_CASE, KIND_INCONCLUSIVE = "error", "fail", "failed-case", "inconclusive"
KIND_NOT_RUN, KIND_KNOWN, KIND_INTERRUPTED = "not-run", "known-deviation", "interrupted"
_DECISIVE = {OUTCOME_ERROR: (KIND_ERROR,), OUTCOME_FAIL: (KIND_FAIL, KIND_FAILED_CASE),
             OUTCOME_INCONCLUSIVE: (KIND_INCONCLUSIVE,), OUTCOME_INTERRUPTED: (KIND_INTERRUPTED,),
             OUTCOME_KNOWN: (KIND_KNOWN,), OUTCOME_PASS: ()}
MAX_LISTED = 6  # ids listed in a reason before "..."


@dataclass(frozen=True)
class LabelVerdicts:
    """One client's cases on one target (``run``'s label: ``model``, ``embedded-java``, ...).

    ``rules``: rule id -> verdict (``summary.json`` ``rules``); ``meant``: the rules a case that ran
    names (``meant_to_judge``); ``excused``: rule id -> the known deviations (KD ids) that excused
    its FAIL; ``cases``: case id -> status; ``excused_cases``: case id -> KD ids of a case whose
    every failure they explain; ``case_rules``: case id -> the rules it names; ``errors``: case id
    -> one line (a case that ended ERROR); ``not_run``: case id -> why it did not run; ``fuzz_failures``
    / ``fuzz_errors``: generated traces that failed / crashed the harness; ``case_failed_rules``: case id -> the
    rules that FAILed in it, named or not."""

    label: str
    client: str
    on_model: bool
    rules: Mapping[str, str] = field(default_factory=dict)
    meant: Collection[str] = ()
    excused: Mapping[str, Sequence[str]] = field(default_factory=dict)
    cases: Mapping[str, str] = field(default_factory=dict)
    excused_cases: Mapping[str, Sequence[str]] = field(default_factory=dict)
    case_rules: Mapping[str, Sequence[str]] = field(default_factory=dict)
    errors: Mapping[str, str] = field(default_factory=dict)
    not_run: Mapping[str, str] = field(default_factory=dict)
    fuzz_failures: int = 0
    fuzz_errors: int = 0
    case_failed_rules: Mapping[str, Sequence[str]] = field(default_factory=dict)  # case id -> the rules it FAILed

    @property
    def where(self) -> str:
        """"with the python client" (the target), "with the java client on the model"."""
        return f"with the {self.client} client" + (" on the model" if self.on_model else "")


@dataclass(frozen=True)
class Reason:
    """Why a run is not a plain PASS: ``kind`` (``KIND_*``), the label and client, the rules and
    cases concerned, the known deviations (``KIND_KNOWN``) and one sentence."""

    kind: str
    text: str
    label: str = ""
    client: str = ""
    rules: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()
    deviations: tuple[str, ...] = ()

    def where_word(self) -> str:
        """"(python)", "(java on the model)"."""
        return f"({self.client}{' on the model' if self.label.startswith('model') else ''})" if self.client else ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "label": self.label, "client": self.client, "rules": list(self.rules),
                "cases": list(self.cases), "deviations": list(self.deviations), "text": self.text}

    @staticmethod
    def from_json(doc: Mapping[str, Any]) -> "Reason":
        return Reason(str(doc.get("kind") or ""), str(doc.get("text") or ""), str(doc.get("label") or ""),
                      str(doc.get("client") or ""), tuple(doc.get("rules") or ()), tuple(doc.get("cases") or ()),
                      tuple(doc.get("deviations") or ()))


@dataclass(frozen=True)
class Outcome:
    """The run's one answer: ``overall`` (``OUTCOMES``), ``exit_code`` and the ``reasons``."""

    overall: str
    exit_code: int
    reasons: tuple[Reason, ...] = ()

    def decisive(self) -> tuple[Reason, ...]:
        """The reasons that make the outcome what it is (an INCONCLUSIVE run's inconclusive rules)."""
        kinds = _DECISIVE.get(self.overall, ())
        return tuple(sorted((r for r in self.reasons if r.kind in kinds), key=lambda r: kinds.index(r.kind)))

    def title(self) -> str:
        """"INCONCLUSIVE (exit 3)", "PASS with known deviations (exit 0)"."""
        word = "PASS with known deviations" if self.overall == OUTCOME_KNOWN else self.overall
        return f"{word} (exit {self.exit_code})"

    def why(self) -> str:
        """The decisive reasons in one sentence, then the others in brief ("also: ...")."""
        main = "; ".join(r.text for r in self.decisive())
        others = [r for r in self.reasons if r not in self.decisive()
                  and not (self.overall == OUTCOME_INTERRUPTED and r.kind == KIND_NOT_RUN)]  # counted in its reason
        also = "; ".join(_brief(r) for r in others)
        return main + (f" (also: {also})" if also and main else also)

    def line(self, headline: str = "") -> str:
        """The run's last line: the outcome and why; a PASS carries the headline sentence."""
        why = self.why()
        if self.overall == OUTCOME_PASS:
            return f"{self.title()}: {headline}" if headline else self.title()
        return f"{self.title()}: {why}" if why else self.title()

    def to_json(self) -> dict[str, Any]:
        return {"overall": self.overall, "exit_code": self.exit_code, "reasons": [r.to_json() for r in self.reasons]}

    @staticmethod
    def from_summary(doc: Mapping[str, Any]) -> "Outcome | None":
        """The outcome a ``summary.json`` records (None: it records none)."""
        if doc.get("overall") not in OUTCOMES or not isinstance(doc.get("exit_code"), int):
            return None
        return Outcome(doc["overall"], doc["exit_code"], tuple(Reason.from_json(r) for r in doc.get("reasons") or ()))


def _ids(ids: Sequence[str], limit: int = MAX_LISTED) -> str:
    """"A", "A and B", "A, B and C", "A, B, ..." (more than ``limit``)."""
    ids = list(ids)
    if len(ids) > limit:
        return ", ".join(ids[:limit]) + ", ..."
    return ids[0] if len(ids) == 1 else ", ".join(ids[:-1]) + " and " + ids[-1] if ids else ""


def _brief(r: Reason) -> str:
    if r.kind == KIND_INCONCLUSIVE:
        return f"{len(r.rules)} inconclusive {r.where_word()}"
    if r.kind == KIND_KNOWN:
        return f"known deviation {', '.join(r.deviations)} {r.where_word()}"
    if r.kind == KIND_NOT_RUN:
        return f"{len(r.cases)} cases not run {r.where_word()}"
    return r.text


def decide(labels: Sequence[LabelVerdicts], *, errors: Sequence[str] = (), interrupted: int | None = None,
           signal_name: str = "", resume: str = "") -> Outcome:
    """The run's outcome over ``labels``. ``errors``: harness errors outside any case (a broker
    death, the client matrix or the report job failing, calibration), one line each;
    ``interrupted``: the exit code of a run stopped by a signal (130, 143), ``signal_name`` its name,
    ``resume`` the command that continues it.
    The exit code is ``exit_code`` over the same verdicts and counts (one path)."""
    reasons: list[Reason] = [Reason(KIND_ERROR, e) for e in errors]
    verdicts: dict[str, str] = {}
    excused: set[str] = set()
    harness = len(errors)
    failed_cases = 0
    for lab in labels:
        for rule in lab.meant:
            if rule in lab.rules:
                verdicts[f"{lab.label} {rule}"] = lab.rules[rule]
        excused |= {f"{lab.label} {rule}" for rule in lab.excused}
        errored = sorted(c for c, s in lab.cases.items() if s == ERROR)
        harness += len(errored) + lab.fuzz_errors
        if errored:
            detail = "; ".join(f"{c}: {lab.errors.get(c) or 'no message'}" for c in errored[:3])
            reasons.append(Reason(KIND_ERROR, f"{_n(len(errored), 'case')} ended ERROR {lab.where} "
                                  f"({detail}{'; ...' if len(errored) > 3 else ''})", lab.label, lab.client,
                                  cases=tuple(errored)))
        broken = sorted(r for r in lab.meant if lab.rules.get(r) == ERROR)
        if broken:
            reasons.append(Reason(KIND_ERROR, f"{_ids(broken)} ended ERROR {lab.where}", lab.label, lab.client, tuple(broken)))
        if lab.fuzz_errors:
            reasons.append(Reason(KIND_ERROR, f"{_n(lab.fuzz_errors, 'generated trace')} crashed the target or the checker "
                                  f"{lab.where} (fuzz/)", lab.label, lab.client))
        failing_cases = sorted(c for c, s in lab.cases.items() if s == FAIL and not lab.excused_cases.get(c))
        failed_cases += len(failing_cases) + lab.fuzz_failures
        failing_rules = sorted(r for r in lab.meant if lab.rules.get(r) == FAIL and r not in lab.excused)
        if failing_rules:
            cases = tuple(c for c in failing_cases if set(lab.case_rules.get(c, ())) & set(failing_rules))
            reasons.append(Reason(KIND_FAIL, f"{_ids(failing_rules)} failed {lab.where}"
                                  + (f" (cases {_ids(cases)})" if cases else ""), lab.label, lab.client,
                                  tuple(failing_rules), cases))
        beyond = tuple(c for c in failing_cases if not set(lab.case_rules.get(c, ())) & set(failing_rules))
        if beyond:
            # a case fails on any rule that FAILs in it, named or not; summary.json's rules say which ones did
            unnamed = sorted({r for c in beyond for r in lab.case_failed_rules.get(c, ())
                              if r not in lab.case_rules.get(c, ()) and r not in lab.excused})
            why = (f"on a rule {'it does' if len(beyond) == 1 else 'they do'} not name ({_ids(unnamed)}) or an expect: line"
                   if unnamed else "with no rule failing (an expect: line)")
            reasons.append(Reason(KIND_FAILED_CASE, f"{_n(len(beyond), 'case')} failed {lab.where} {why}: {_ids(beyond)}",
                                  lab.label, lab.client, cases=beyond))
        if lab.fuzz_failures:
            reasons.append(Reason(KIND_FAILED_CASE, f"{_n(lab.fuzz_failures, 'generated trace')} failed {lab.where} (fuzz/)",
                                  lab.label, lab.client))
        for statuses, words in (((NOT_EXERCISED, UNJUDGED), "were not exercised" ), ((INDETERMINATE,), "ended INDETERMINATE")):
            rules = sorted(r for r in lab.meant if lab.rules.get(r) in statuses)
            if rules:
                cases = tuple(sorted(c for c, named in lab.case_rules.items() if set(named) & set(rules) and c in lab.cases))
                verb = words if len(rules) > 1 else words.replace("were", "was")
                reasons.append(Reason(KIND_INCONCLUSIVE, f"{_ids(rules)} {verb} {lab.where}"
                                      + (f" (cases {_ids(cases)})" if cases else ""), lab.label, lab.client, tuple(rules), cases))
        known = sorted(r for r in lab.excused if lab.rules.get(r) == FAIL)
        if known:
            devs = tuple(sorted({d for r in known for d in lab.excused[r]}))
            cases = tuple(sorted(c for c in lab.excused_cases))
            reasons.append(Reason(KIND_KNOWN, f"{_ids(known)} failed {lab.where} only as known deviation{'s' if len(devs) > 1 else ''} "
                                  f"{', '.join(devs)} (cases {_ids(cases)})", lab.label, lab.client, tuple(known), cases, devs))
        if lab.not_run:
            why = sorted(set(lab.not_run.values()))
            reasons.append(Reason(KIND_NOT_RUN, f"{_n(len(lab.not_run), 'case')} not run {lab.where} ({'; '.join(why[:2])})",
                                  lab.label, lab.client, cases=tuple(sorted(lab.not_run))))
    if interrupted is not None:
        left = sum(len(lab.not_run) for lab in labels)
        reasons.insert(0, Reason(KIND_INTERRUPTED, f"interrupted ({signal_name or 'signal'}) with {_n(left, 'case')} not run; "
                                 f"continue with: {resume or 'the same command with --resume'}"))
        return Outcome(OUTCOME_INTERRUPTED, interrupted, tuple(reasons))
    code = exit_code(verdicts, harness_errors=harness, failed_cases=failed_cases, excused=excused)
    overall = {EXIT_HARNESS: OUTCOME_ERROR, EXIT_FAIL: OUTCOME_FAIL, EXIT_INCONCLUSIVE: OUTCOME_INCONCLUSIVE}.get(code)
    if overall is None:
        overall = OUTCOME_KNOWN if any(r.kind == KIND_KNOWN for r in reasons) else OUTCOME_PASS
    outcome = Outcome(overall, code, tuple(reasons))
    if code != EXIT_OK and not outcome.decisive():  # the code and its reasons come from the same sets
        raise AssertionError(f"exit {code} with no reason among {reasons}")
    return outcome


def outcome_of_error(code: int, error: str) -> Outcome:
    """A run that stopped before any verdict (bad usage, no broker: exit 2; an exception: 4)."""
    return Outcome(OUTCOME_INTERRUPTED if code in (130, 143) else OUTCOME_ERROR, code,
                   (Reason(KIND_INTERRUPTED if code in (130, 143) else KIND_ERROR, error),))


def _n(n: int, one: str) -> str:
    return f"{n} {one}{'' if n == 1 else 's'}"
