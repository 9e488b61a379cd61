"""The one-line answer of a run: does the broker conform, to how many rules, and what is left.

Part of Pulsar: none; this folds verdicts the checker gave (``conformance.runner.summary``) into
one sentence that ``pulsar-conformance run`` prints last and the HTML report shows first, e.g.

    broker 4.0.8 conforms to 118 of 121 applicable rules (clients python, java, mixed); 0 failing;
    1 known deviation (KD-001); 0 inconclusive; 2 not exercised

What each figure counts (every applicable rule is in exactly one, so they add up to the total):

- *applicable*: rules that are not NOT_APPLICABLE for at least one client of the run;
- *failing*: a rule that FAILed with any client, except where that client's FAIL is an excused
  known deviation (``summary.json`` ``known_deviations``: a deviation that explained a whole case,
  ``conformance/deviations.yaml``); the same rule as ``conformance.verdict_exit`` reads it;
- *known deviation*: a rule whose every FAIL is such an excused deviation (not conforming, not a
  failure: the sentence names the deviation ids);
- *inconclusive*: no FAIL, and some client ended INDETERMINATE (or ERROR), or some client was
  meant to judge it (a case that ran with that client names it: ``meant_to_judge``) and did not
  (NOT_EXERCISED, UNJUDGED): the same rule x client ``conformance.verdict_exit.decide`` reads
  as INCONCLUSIVE (exit 3), so the sentence never says "0 inconclusive" on an exit 3;
- *conforms*: no FAIL, nothing inconclusive, and at least one client judged it PASS;
- *not exercised*: no client judged it (NOT_EXERCISED / UNJUDGED everywhere it applies) and no
  case meant to (no case that ran names it);
- *exercised*: applicable and not "not exercised" (``Headline.judged``: conforming, failing, known
  deviations and inconclusive together); the report's overview and its "By client" list say
  "exercised" in this sense only, per client with ``headlines_by_client``.

Steps the model did not follow (summary.json ``not_followed``: an op the model leaves unspecified, after which
the handles or topics it touched are judged less) are counted last, when there are any: the answer holds for
what was judged, and the sentence says how much was not.

Cases are counted beside the rules where they change the answer: cases that ended ERROR (the
suite could not run them: their rules are not judged, so a run whose every case errored reads
"0 of N applicable rules judged: 40 cases errored", never "conforms"), cases not run (a broker
death, an interruption), and cases that FAILed without any rule failing (a broken ``expect:`` line
charged to no rule) or with only excused rules failing while the case itself is not excused.

``conformance_sentence`` reads a ``summary.json`` of ``pulsar-conformance run`` (the primary
document, whose ``by_client`` holds every client's verdicts, or one ``summary-<client>.json``).
``corpus_sentence`` says the same over what the HTML report is drawn from (the outcome corpus's
rule matrix, ``spark_reports.jobs.report.rule_matrix``): the corpus has no row for a case that
errored, so that form cannot count errors; the report uses the run's summary when it has one.

Choices: pure functions over mappings (no file is read here); counts in words a reader can add
up; rule and deviation ids listed only for failing rules and known deviations (few by design).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Sequence

from conformance.verdicts import ERROR, FAIL, INDETERMINATE, NOT_APPLICABLE, NOT_EXERCISED, PASS, UNJUDGED

MAX_IDS = 6  # ids listed in the sentence before "..."
CLIENT_ORDER = ("python", "java", "mixed", "go")


@dataclass(frozen=True)
class Headline:
    """The figures of the one-line answer (``sentence`` words them)."""

    subject: str  # "broker 4.0.8", "model 4.0"
    clients: tuple[str, ...]
    applicable: int
    conforming: int
    failing: tuple[str, ...]  # rule ids
    deviations: tuple[str, ...]  # known-deviation ids (KD-...) of the rules that fail only by them
    deviation_rules: tuple[str, ...]
    inconclusive: int
    not_exercised: int
    errored_cases: int | None = 0  # None: not known (an outcome corpus has no row for an errored case)
    not_run_cases: int = 0
    failed_cases: tuple[str, ...] = field(default=())  # case ids failing beyond what the rules show
    not_followed_steps: int = 0  # steps the model did not follow (summary.json ``not_followed``): judged less after them

    @property
    def judged(self) -> int:
        return self.applicable - self.not_exercised

    @property
    def ok(self) -> bool:
        """True when the answer is "conforms" with nothing held back: no failure, nothing
        inconclusive, no case errored or not run (known deviations and unexercised rules allowed)."""
        return (not self.failing and not self.failed_cases and not self.inconclusive and not self.errored_cases
                and not self.not_run_cases and self.judged > 0)

    def sentence(self) -> str:
        clients = f" (clients {', '.join(self.clients)})" if self.clients else ""
        if self.judged == 0:
            head = f"{self.subject}: 0 of {self.applicable} applicable rules judged{clients}"
            tail = [_n(self.errored_cases, "case errored", "cases errored") if self.errored_cases is not None
                    else "the corpus does not record errored cases (the run's summary.json does)"]
            if self.not_run_cases:
                tail.append(f"{self.not_run_cases} not run")
            if self.not_followed_steps:
                tail.append(self._not_followed())
            return f"{head}: {'; '.join(tail)}"
        parts = [f"{self.subject} conforms to {self.conforming} of {self.applicable} applicable rules{clients}",
                 f"{len(self.failing)} failing" + _ids(self.failing),
                 _n(len(self.deviation_rules), "known deviation", "known deviations") + _ids(self.deviations),
                 f"{self.inconclusive} inconclusive", f"{self.not_exercised} not exercised"]
        if self.failed_cases:
            parts.append(_n(len(self.failed_cases), "case failed", "cases failed") + " beyond the rules' verdicts"
                         + _ids(self.failed_cases))
        if self.errored_cases:
            parts.append(_n(self.errored_cases, "case errored", "cases errored"))
        if self.not_run_cases:
            parts.append(_n(self.not_run_cases, "case not run", "cases not run"))
        if self.not_followed_steps:
            parts.append(self._not_followed())
        return "; ".join(parts)

    def _not_followed(self) -> str:
        return _n(self.not_followed_steps, "step", "steps") + " the model did not follow (summary.json not_followed)"


def _n(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _ids(ids: Sequence[str]) -> str:
    if not ids:
        return ""
    shown = ", ".join(ids[:MAX_IDS]) + (", ..." if len(ids) > MAX_IDS else "")
    return f" ({shown})"


def _ordered_clients(clients: Iterable[str]) -> tuple[str, ...]:
    found = list(dict.fromkeys(c for c in clients if c))
    return tuple([c for c in CLIENT_ORDER if c in found] + sorted(c for c in found if c not in CLIENT_ORDER))


def subject_of(target: Any, broker_version: Any) -> str:
    """"broker 4.0.8", or "model 4.0" for the reference model target."""
    what = "model" if target == "model" else "broker"
    return f"{what} {broker_version}" if broker_version else what


def fold_rules(per_client: Mapping[str, Mapping[str, str]], excused: Mapping[str, Mapping[str, Sequence[str]]],
               meant: Mapping[str, Iterable[str]] | None = None,
               ) -> tuple[int, int, list[str], list[str], list[str], int, int]:
    """Sort every rule into one figure over the clients' verdicts.

    ``per_client``: client -> rule id -> verdict. ``excused``: client -> rule id -> the known
    deviation ids that excused its FAIL there. ``meant``: client -> the rules a case that ran with
    it names (``meant_to_judge``; absent: none). Returns (applicable, conforming, failing rule ids,
    known-deviation rule ids, their deviation ids, inconclusive, not exercised)."""
    meant_sets = {c: set(rules) for c, rules in (meant or {}).items()}
    rules = sorted({r for verdicts in per_client.values() for r in verdicts})
    applicable = conforming = inconclusive = not_exercised = 0
    failing: list[str] = []
    deviation_rules: list[str] = []
    deviation_ids: set[str] = set()
    for rule in rules:
        seen = {c: v[rule] for c, v in per_client.items() if rule in v and v[rule] != NOT_APPLICABLE}
        if not seen:
            continue
        applicable += 1
        fails = [c for c, v in seen.items() if v == FAIL]
        plain = [c for c in fails if not excused.get(c, {}).get(rule)]
        if plain:  # FAIL with any client, unexcused there
            failing.append(rule)
        elif fails:  # every FAIL is an excused known deviation
            deviation_rules.append(rule)
            deviation_ids.update(d for c in fails for d in excused[c][rule])
        elif any(v in (INDETERMINATE, ERROR) or (v in (NOT_EXERCISED, UNJUDGED) and rule in meant_sets.get(c, ()))
                 for c, v in seen.items()):
            inconclusive += 1
        elif any(v == PASS for v in seen.values()):
            conforming += 1
        else:
            not_exercised += 1
    return applicable, conforming, failing, deviation_rules, sorted(deviation_ids), inconclusive, not_exercised


def summary_headline(summary: Mapping[str, Any]) -> Headline:
    """The figures of ``summary`` (a ``pulsar-conformance run`` ``summary.json``; see the module notes)."""
    by_client = summary.get("by_client") or {summary.get("client") or "": summary}
    per_client = {c: dict(doc.get("rules") or {}) for c, doc in by_client.items()}
    excused: dict[str, dict[str, list[str]]] = {}
    excused_cases: dict[str, set[str]] = {}
    for c, doc in by_client.items():
        for dev in (doc.get("known_deviations") or {}).values():
            excused.setdefault(c, {}).setdefault(dev["rule"], []).append(dev["id"])
            excused_cases.setdefault(c, set()).add(dev["case"])
    # a client whose every case ended ERROR judged nothing: its rules are not inconclusive but unjudged
    meant = {c: doc.get("meant_to_judge") or () for c, doc in by_client.items()
             if any(s != ERROR for s in (doc.get("cases") or {}).values()) or not doc.get("cases")}
    applicable, conforming, failing, dev_rules, dev_ids, inconclusive, not_exercised = fold_rules(per_client, excused, meant)
    errored = sum(1 for doc in by_client.values() for s in (doc.get("cases") or {}).values() if s == ERROR)
    not_run = sum(len(doc.get("not_run") or {}) for doc in by_client.values())
    failed_cases: list[str] = []
    for c, doc in by_client.items():
        for case, status in (doc.get("cases") or {}).items():
            if status == FAIL and case not in excused_cases.get(c, set()) and case not in failed_cases:
                failed_cases.append(case)
    # a failing case is news only when no failing rule already says the run fails
    shown_cases = tuple(sorted(failed_cases)) if not failing else ()
    not_followed = sum(int((doc.get("not_followed") or {}).get("steps") or 0) for doc in by_client.values())
    return Headline(subject_of(summary.get("target"), summary.get("broker_version")),
                    _ordered_clients(by_client), applicable, conforming, tuple(failing), tuple(dev_ids), tuple(dev_rules),
                    inconclusive, not_exercised, errored, not_run, shown_cases, not_followed)


def conformance_sentence(summary: Mapping[str, Any]) -> str:
    """The one-line answer of a ``pulsar-conformance run`` ``summary.json`` document."""
    return summary_headline(summary).sentence()


def corpus_headline(combos: Sequence[Mapping[str, Any]], matrix: Mapping[str, Mapping[str, str]],
                    excused: Mapping[str, Mapping[str, Sequence[str]]] | None = None) -> Headline:
    """The figures over an outcome corpus's rule matrix (what the HTML report draws).

    ``combos``: the corpus's target x broker version x client entries (``data["combos"]``; the
    model's are the reference and are left out); ``matrix``: ``"target|version|client"`` -> rule id
    -> verdict (``rule_matrix(...)["matrix"]``); ``excused``: the same keys -> rule id -> known
    deviation ids that explain every FAIL of that rule there. A case that errored left no row, so
    errors are not counted here."""
    brokers = [c for c in combos if c["target"] != "model"]
    keys = {f"{c['target']}|{c['broker_version']}|{c['client']}": c for c in brokers}
    per_combo = {k: dict(matrix.get(k) or {}) for k in keys}
    applicable, conforming, failing, dev_rules, dev_ids, inconclusive, not_exercised = fold_rules(per_combo, excused or {})
    targets = sorted({str(c["target"]) for c in brokers})
    versions = sorted({str(c["broker_version"]) for c in brokers if c["broker_version"]})
    subject = subject_of(targets[0] if len(targets) == 1 else None, ", ".join(versions))
    if len(versions) > 1:
        subject = subject.replace("broker ", "brokers ", 1)
    return Headline(subject, _ordered_clients(c["client"] for c in brokers), applicable, conforming, tuple(failing),
                    tuple(dev_ids), tuple(dev_rules), inconclusive, not_exercised, errored_cases=None)


def headlines_by_client(summary: Mapping[str, Any] | None = None, *, combos: Sequence[Mapping[str, Any]] = (),
                        matrix: Mapping[str, Mapping[str, str]] | None = None,
                        excused: Mapping[str, Mapping[str, Sequence[str]]] | None = None) -> dict[str, Headline]:
    """The same figures for each client alone (client -> ``Headline``), in ``CLIENT_ORDER``: from
    ``summary`` (its ``by_client``) when given, else from the corpus's rule matrix as
    ``corpus_headline`` reads it (``combos``, ``matrix``, ``excused``)."""
    if summary is not None:
        by_client = summary.get("by_client") or {summary.get("client") or "": summary}
        return {c: summary_headline({**summary, "by_client": {c: by_client[c]}}) for c in _ordered_clients(by_client)}
    brokers = [c for c in combos if c["target"] != "model"]
    return {client: corpus_headline([c for c in brokers if c["client"] == client], matrix or {}, excused)
            for client in _ordered_clients(c["client"] for c in brokers)}


def corpus_sentence(combos: Sequence[Mapping[str, Any]], matrix: Mapping[str, Mapping[str, str]],
                    excused: Mapping[str, Mapping[str, Sequence[str]]] | None = None) -> str:
    """``corpus_headline(...)`` as one sentence."""
    return corpus_headline(combos, matrix, excused).sentence()


__all__ = ["Headline", "conformance_sentence", "corpus_headline", "corpus_sentence", "fold_rules", "headlines_by_client",
           "subject_of", "summary_headline"]
