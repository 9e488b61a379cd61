"""GitHub Actions surfaces of a ``pulsar-conformance run``: ranked annotations and the job summary.

Part of Pulsar: none (this module reads a finished run). It reads what ``run`` wrote into its
``--out`` folder, never the run's objects:

- ``summary.json``: the target's verdict per rule and per client (``by_client``), the model's when
  the target is a broker (``reference``), ``target``, ``broker_version``, ``exit_code``, ``overall``
  and ``errors`` (harness and broker errors, one line each);
- ``summary-<client>.json``: each client's ``meant_to_judge`` (the rules whose NOT_EXERCISED makes
  the run inconclusive) and ``known_deviations``;
- ``junit.xml`` (``reports/junit.py``): per client and case, the rules the case names, each rule's
  verdict, the checker's explanation of each FAIL and INDETERMINATE (``[rule] step N STATUS:
  ...`` lines), a harness ERROR's message, a known deviation's ``<skipped>``, and the case file.

``problems(out)`` ranks what stands between the run and exit 0: FAILs no known deviation excuses
first, then ERRORs (a case the harness could not run, a run-level error), then INCONCLUSIVE (a
rule the run was meant to judge that ended INDETERMINATE or was never judged); one ``Problem`` per
(kind, rule, case), with the clients it happened with. ``annotations(problems)`` turns them into
at most ``MAX_ANNOTATIONS`` workflow commands (GitHub shows 10 error annotations per step and 50 per
job): ``::error`` for FAIL and ERROR, ``::warning`` for INCONCLUSIVE, each
``file=conformance/cases/...yaml`` when the case file is known, ``title=RULE KIND: case CASE``, and
a one-line message; with more problems than that, the tenth line says how many more the job summary
lists. ``summary_markdown(out)`` is the job summary: the headline, every problem, and the verdict
table (every rule x client, and the cases that name the rule). ``publish(out, ...)`` prints the
annotations and appends the Markdown to ``$GITHUB_STEP_SUMMARY``.

Escaping (GitHub's workflow-command syntax): a property value escapes ``%``, ``\\r``, ``\\n``,
``:`` and ``,``; the message escapes ``%``, ``\\r``, ``\\n``. Messages are one line anyway.

Not modelled: fuzz failures (``OUT/fuzz/``) get no annotation of their own; they count in the exit
code and in ``summary.json``'s counts. Choices: a FAIL excused by a known deviation is not an
annotation (it does not fail the gate); it shows in the table as ``FAIL (KD-...)``.
"""

from __future__ import annotations

from fixtures.secrets import redact

import json
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

MAX_ANNOTATIONS = 10  # GitHub shows at most 10 error annotations per step (50 per job)
MESSAGE_CHARS = 600
FAIL, ERROR, INCONCLUSIVE = "FAIL", "ERROR", "INCONCLUSIVE"
RANK = {FAIL: 0, ERROR: 1, INCONCLUSIVE: 2}
LEVEL = {FAIL: "error", ERROR: "error", INCONCLUSIVE: "warning"}
INCONCLUSIVE_STATUSES = ("INDETERMINATE", "UNJUDGED")


class GithubSurfaceError(ValueError):
    """The run folder holds no summary.json to read: run ``pulsar-conformance run --out DIR`` first."""


@dataclass(frozen=True)
class Problem:
    kind: str  # FAIL, ERROR or INCONCLUSIVE
    rule_id: str  # "" for a run-level error or a case failure charged to no rule
    case_id: str  # "" when no case is known
    clients: tuple[str, ...]
    explanation: str
    file: str = ""  # conformance/cases/...yaml when the case file is known


@dataclass
class _CaseFacts:
    status: str
    named: tuple[str, ...]
    verdicts: dict[str, str]
    lines: dict[str, str]  # rule -> the first "[rule] step N STATUS: ..." line of the case's failure text
    expect_lines: list[str]
    message: str
    file: str
    excused: bool


# --------------------------------------------------------------------------- escaping


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF escaped."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``): also ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def one_line(text: Any, limit: int = MESSAGE_CHARS) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


# --------------------------------------------------------------------------- reading the run's files


def _read_json(path: Path) -> dict[str, Any]:
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return doc if isinstance(doc, dict) else {}


def load_summary(out: Path) -> dict[str, Any]:
    path = Path(out) / "summary.json"
    if not path.is_file():
        raise GithubSurfaceError(f"{path} does not exist: the GitHub annotations and job summary are read from a "
                                 "finished 'pulsar-conformance run --out DIR'")
    doc = _read_json(path)
    if not doc:
        raise GithubSurfaceError(f"{path} is not a JSON object; run 'pulsar-conformance run --out DIR' again")
    return doc


def case_file(path: str, cwd: Path | None = None) -> str:
    """The case file as the workflow's checkout names it: ``conformance/cases/...`` for a built-in
    case, a path relative to ``cwd`` (the working directory: the checkout) for one under it, else ""
    (GitHub cannot place an annotation on a file outside the checkout)."""
    parts = Path(path).parts
    for i in range(len(parts) - 1):
        if parts[i] == "conformance" and parts[i + 1] == "cases":
            return "/".join(parts[i:])
    try:
        return Path(path).resolve().relative_to((cwd or Path.cwd()).resolve()).as_posix()
    except (ValueError, OSError):
        return ""


def _rule_lines(text: str) -> tuple[dict[str, str], list[str]]:
    lines: dict[str, str] = {}
    expect = []
    for line in (text or "").splitlines():
        if line.startswith("[PLS-"):
            rule = line[1:].split("]", 1)[0]
            lines.setdefault(rule, line)
        elif line.startswith("[expect]"):
            expect.append(line)
    return lines, expect


def junit_cases(out: Path, target: str) -> dict[str, dict[str, _CaseFacts]]:
    """client -> case id -> the case's facts, from ``junit.xml``'s suites on ``target`` ({} without the file)."""
    path = Path(out) / "junit.xml"
    if not path.is_file():
        return {}
    found: dict[str, dict[str, _CaseFacts]] = {}
    for suite in ET.parse(path).getroot().iter("testsuite"):
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        if props.get("target") != target:
            continue
        cases = found.setdefault(props.get("client") or "python", {})
        for tc in suite.iter("testcase"):
            case_id = (tc.get("name") or "").split(" [", 1)[0]
            named = tuple(r for r in (props.get(f"rules:{case_id}") or "").split(",") if r)
            verdicts = {k.split(":", 2)[2]: v for k, v in props.items() if k.startswith(f"verdict:{case_id}:")}
            status, message, text, excused = "PASS", "", "", False
            for tag in ("failure", "error", "skipped"):
                el = tc.find(tag)
                if el is not None:
                    message, text = el.get("message") or "", el.text or ""
                    excused = tag == "skipped" and el.get("type") == "known-deviation"
                    status = {"failure": FAIL, "error": ERROR}.get(tag, el.get("type") or "SKIPPED")
            out_text = tc.findtext("system-out") or ""
            file = next((case_file(line.split(":", 1)[1].strip()) for line in out_text.splitlines()
                         if line.startswith("case file:")), "")
            lines, expect = _rule_lines(text)
            cases[case_id] = _CaseFacts(status, named, verdicts, lines, expect, message, file, excused)
    return found


def _runs(out: Path, summary: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    """(label, junit client, rule verdicts, that client's own summary) for the target's clients, then
    the model's when the target is a broker (labelled ``model/<client>``)."""
    by_client = summary.get("by_client") or {summary.get("client") or "python": summary}
    runs = []
    for client, doc in by_client.items():
        own = _read_json(Path(out) / f"summary-{client}.json") or (summary if client == summary.get("client") else {})
        runs.append((client, client, doc.get("rules") or {}, own))
    if summary.get("target") != "model":
        for client, doc in (summary.get("reference") or {}).items():
            runs.append((f"model/{client}", client, doc.get("rules") or {}, {}))
    return runs


# --------------------------------------------------------------------------- problems


def problems(out: Path) -> list[Problem]:
    """What stands between the run in ``out`` and exit 0, ranked: FAIL, then ERROR, then INCONCLUSIVE."""
    out = Path(out)
    summary = load_summary(out)
    target = str(summary.get("target") or "")
    live = junit_cases(out, target)
    model = junit_cases(out, "model") if target != "model" else live
    found: dict[tuple[str, str, str], tuple[list[str], str, str]] = {}

    def add(kind: str, rule: str, case: str, label: str, explanation: str, file: str = "") -> None:
        labels, first, known_file = found.setdefault((kind, rule, case), ([], one_line(explanation), file))
        if label not in labels:
            labels.append(label)
        if file and not known_file:
            found[(kind, rule, case)] = (labels, first, file)

    for label, client, rules, own in _runs(out, summary):
        cases = (model if label.startswith("model/") else live).get(client, {})
        excused_cases = {(d.get("rule"), d.get("case")) for d in (own.get("known_deviations") or {}).values()
                         if isinstance(d, dict)}
        charged = set()
        for rule, verdict in rules.items():
            if verdict == FAIL:
                failing = [(cid, c) for cid, c in cases.items() if c.verdicts.get(rule) == FAIL]
                left = [(cid, c) for cid, c in failing if not c.excused and (rule, cid) not in excused_cases]
                if failing and not left:
                    continue  # every FAIL of the rule is an excused known deviation
                for cid, c in left:
                    charged.add(cid)
                    why = c.lines.get(rule) or next((x for x in c.expect_lines if rule in x), "") or c.message
                    add(FAIL, rule, cid, label, why, c.file)
                if not failing:
                    add(FAIL, rule, "", label, f"{rule} is FAIL for {label}; junit.xml names no failing case "
                                               "(a fuzz failure? see the run's fuzz/ folder)")
            elif verdict == ERROR and not any(c.status == ERROR and rule in c.named for c in cases.values()):
                add(ERROR, rule, "", label, f"{rule} ended ERROR: the harness failed while judging it")
            elif verdict in INCONCLUSIVE_STATUSES:
                unsure = [(cid, c) for cid, c in cases.items() if c.verdicts.get(rule) in INCONCLUSIVE_STATUSES]
                for cid, c in unsure:
                    add(INCONCLUSIVE, rule, cid, label, c.lines.get(rule) or c.message or f"{rule} ended {verdict}", c.file)
                if not unsure:
                    add(INCONCLUSIVE, rule, "", label, f"{rule} ended {verdict}")
        for rule in own.get("meant_to_judge") or ():
            if rules.get(rule) == "NOT_EXERCISED":
                named = [(cid, c) for cid, c in cases.items() if rule in c.named]
                cid, c = named[0] if named else ("", None)
                add(INCONCLUSIVE, rule, cid, label, f"a case that ran names {rule}, but no detector judged it "
                                                    "(NOT_EXERCISED): the run cannot say whether it holds",
                    c.file if c else "")
        for cid, c in cases.items():
            if c.status == ERROR:
                add(ERROR, ",".join(c.named), cid, label, c.message or "the harness could not run this case", c.file)
            elif c.status == FAIL and not c.excused and cid not in charged:
                # an expect: line charged to no rule: the case's own rules are what it pins
                add(FAIL, ",".join(c.named), cid, label, (c.expect_lines or [c.message])[0], c.file)
    for error in summary.get("errors") or ():
        add(ERROR, "", "", "run", str(error))
    ranked = [Problem(kind, rule, case, tuple(labels), why, file)
              for (kind, rule, case), (labels, why, file) in found.items()]
    return sorted(ranked, key=lambda p: (RANK[p.kind], p.rule_id == "", p.rule_id, p.case_id))


# --------------------------------------------------------------------------- annotations


def _title(p: Problem) -> str:
    what = f"{p.rule_id} {p.kind}" if p.rule_id else p.kind
    return f"{what}: case {p.case_id}" if p.case_id else what


def annotation(p: Problem, *, target: str = "") -> str:
    """One workflow command for ``p`` (one line)."""
    props = [f"file={escape_property(p.file)}"] if p.file else []
    props.append(f"title={escape_property(_title(p))}")
    where = f" on {target}" if target else ""
    hint = f" (pulsar-conformance explain {p.rule_id.split(',')[0]})" if p.rule_id else ""
    message = one_line(f"{_title(p)}{where}, {', '.join(p.clients)}: {p.explanation}") + hint
    return f"::{LEVEL[p.kind]} {','.join(props)}::{escape_data(message)}"


def annotations(found: list[Problem], *, target: str = "", limit: int = MAX_ANNOTATIONS) -> list[str]:
    """At most ``limit`` annotation lines, in rank order; the last says how many more there are."""
    if len(found) <= limit:
        return [annotation(p, target=target) for p in found]
    shown = found[: limit - 1]
    rest = found[limit - 1:]
    kinds = ", ".join(f"{sum(p.kind == k for p in rest)} {k}" for k in RANK if any(p.kind == k for p in rest))
    more = (f"::{LEVEL[rest[0].kind]} title={escape_property(f'{len(rest)} more problems')}::"
            + escape_data(f"{len(rest)} more problems ({kinds}) are not annotated (GitHub shows {limit} per step); "
                          "the job summary lists every one"))
    return [annotation(p, target=target) for p in shown] + [more]


# --------------------------------------------------------------------------- the job summary


def _cell(text: Any) -> str:
    return one_line(text, 10_000).replace("|", "\\|")


def summary_markdown(out: Path, found: list[Problem] | None = None) -> str:
    """The job summary of the run in ``out``: headline, every problem, every rule's verdict per client."""
    out = Path(out)
    summary = load_summary(out)
    found = problems(out) if found is None else found
    target, version = summary.get("target", "?"), summary.get("broker_version", "?")
    try:
        from reports.headline import conformance_sentence

        headline = conformance_sentence(summary)
    except Exception:  # noqa: BLE001 - the table below stands without the sentence
        headline = f"{target} {version}"
    lines = [f"## Pulsar conformance: {summary.get('overall', '?')} (exit {summary.get('exit_code', '?')})", "",
             _cell(headline), ""]
    if found:
        lines += [f"### Problems ({len(found)})", "", "| | rule | case | clients | explanation |", "|---|---|---|---|---|"]
        lines += [f"| {p.kind} | {_cell(p.rule_id) or '-'} | {_cell(p.case_id) or '-'}"
                  + (f" (`{_cell(p.file)}`)" if p.file else "") + f" | {_cell(', '.join(p.clients))} | {_cell(p.explanation)} |"
                  for p in found]
        lines.append("")
    runs = _runs(out, summary)
    live = junit_cases(out, str(target))
    naming: dict[str, list[str]] = {}
    for cases in live.values():
        for cid, c in cases.items():
            for rule in c.named:
                if cid not in naming.setdefault(rule, []):
                    naming[rule].append(cid)
    deviations: dict[tuple[str, str], set[str]] = {}
    for label, _client, _rules, own in runs:
        for d in (own.get("known_deviations") or {}).values():
            if isinstance(d, dict):
                deviations.setdefault((label, d.get("rule")), set()).add(str(d.get("id")))
    rule_ids = _rule_order({rule for _l, _c, rules, _o in runs for rule in rules})
    labels = [label for label, *_ in runs]
    lines += [f"### Verdicts on {_cell(target)} {_cell(version)}: {len(rule_ids)} rules", "",
              "| rule | " + " | ".join(labels) + " | cases |", "|---" * (len(labels) + 2) + "|"]
    for rule in rule_ids:
        cells = []
        for label, _client, rules, _own in runs:
            verdict = rules.get(rule, "-")
            kd = deviations.get((label, rule))
            cells.append(f"{verdict} ({', '.join(sorted(kd))})" if verdict == FAIL and kd else verdict)
        lines.append(f"| {rule} | " + " | ".join(cells) + f" | {_cell(', '.join(naming.get(rule, [])))} |")
    return "\n".join(lines) + "\n"


def _rule_order(ids: Iterable[str]) -> list[str]:
    """Registry order (a rule the registry no longer has goes last, by id)."""
    from reference_model.rules import RULES

    ids = set(ids)
    ordered = [r.id for r in RULES if r.id in ids]
    return ordered + sorted(ids - set(ordered))


# --------------------------------------------------------------------------- both


def publish(out: Path, *, write: Any = print, step_summary: str | None = None) -> list[Problem]:
    """Print the annotations with ``write`` and append the job summary to ``step_summary`` (the
    ``$GITHUB_STEP_SUMMARY`` file; None: not written). Returns the ranked problems."""
    summary = load_summary(out)
    found = problems(out)
    target = " ".join(str(summary.get(k)) for k in ("target", "broker_version") if summary.get(k))
    for line in annotations(found, target=target):
        write(redact(line))
    if step_summary:
        with open(step_summary, "a", encoding="utf-8") as f:
            f.write(redact(summary_markdown(out, found)))  # no secret shows (fixtures/secrets.py)
    return found
