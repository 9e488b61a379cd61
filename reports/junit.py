"""JUnit XML for CI gating of ``pulsar-conformance run``: valid against Jenkins' junit-10.xsd.

Layout (the schema Jenkins and GitLab read: ``tests/data/junit-10.xsd``, checked by
``tests/reports/test_junit_schema.py``):

- one ``<testsuite>`` per target x broker version x client, named
  ``pulsar-conformance.<target>.<broker version>.<client>`` (the model's runs too: target
  ``model``, version the release line its profile plays);
- one ``<testcase>`` per case in it: ``classname`` ``pulsar-conformance.<target>.<version>.<client>``
  with the dots of target and version as ``_`` (so a CI tool that splits the class name at its last
  dot shows the client as the class and target and version as the package, and a python failure
  never looks like a java one), ``name`` ``<case id> [<rule ids>]``, ``time`` the case's duration.

Verdicts. A FAIL is a ``<failure>`` whose message is the checker's explanation of the first
failure (``[rule] step N FAIL (anomaly): explanation``, one line, at most ``MESSAGE_CHARS``) and
whose text is the whole ``CaseResult.failure_text()``. A FAIL that the known deviations recorded for
this broker (``conformance.deviations``) wholly excuse is ``<skipped>`` with the message ``known
deviation KD-...: <reason>``, so a CI gate on this file passes on a documented deviation (and the
deviation stays visible); a FAIL with failures no deviation excuses stays a ``<failure>`` whose
message names the deviation that excuses the rest. The model has no known deviations. A harness
ERROR is an ``<error>``; INDETERMINATE, NOT_APPLICABLE and NOT_EXERCISED are ``<skipped>`` with
their reason: they neither pass nor fail a gate.

Properties. The schema allows ``<properties>`` on a suite only, so the run's facts (target,
broker version, client, client version, the timing bands its timing rules were judged with) and
each case's facts are suite properties, the latter keyed by case: ``rules:<case>``,
``verdict:<case>:<rule>``, ``judged_steps:<case>:<rule>``, ``history:<case>``,
``known_deviations:<case>``; ``judged_steps:<rule>`` sums a rule's judged steps over the suite's
cases. The same case facts are also the test case's ``<system-out>``, which CI tools show beside
the test. Written atomically (a temporary file, then replaced): a reader never sees half a file.

The run's outcome (``conformance.verdict_exit.decide``, issue 43), when given, is one more suite,
``pulsar-conformance.outcome``: a test case ``run outcome`` that passes on PASS and on known
deviations only, is a ``<failure>`` on FAIL and INCONCLUSIVE and an ``<error>`` on ERROR and
INTERRUPTED, its message the run's last line; and one test case per inconclusive rule x client
(``<rule> [<label>]``), a ``<failure type="INCONCLUSIVE">`` whose message starts
"inconclusive: not exercised" (or "inconclusive: INDETERMINATE"), so a CI page never shows an
inconclusive run green (Jenkins, GitHub and GitLab count failures and errors as not passing; a
skip they count as fine). Known deviations stay ``<skipped>`` in their case's test case.
"""

from __future__ import annotations

from fixtures.secrets import redact_file

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Iterable

from conformance.runner import ERROR, FAIL, PASS, CaseResult, unexcused_failures

MESSAGE_CHARS = 500  # a failure message is one line a CI tool shows in a list; the text holds the rest
MODEL = "model"


def _one_line(text: Any, limit: int = MESSAGE_CHARS) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _dotless(text: Any) -> str:
    """A classname part: dots would split it (CI tools read a classname's last dot as package/class)."""
    return str(text).replace(".", "_") if text not in (None, "") else "none"


def _deviations(result: CaseResult, info: dict[str, Any]) -> list[Any]:
    """The known deviations recorded for ``result``'s case on this run's broker (none on the model),
    as ``pulsar_conformance.run_job._excusal`` finds them."""
    version = info.get("broker_version")
    if result.status != FAIL or info.get("target") == MODEL or not version:
        return []
    from conformance.deviations import known_deviations

    return known_deviations(result.case.id, str(version))


def _deviation_text(devs: list[Any]) -> str:
    return "; ".join(f"known deviation {d.id}: {_one_line(d.reason, 10_000)}" for d in devs)


def _verdict_element(case: ET.Element, r: CaseResult, devs: list[Any]) -> None:
    """The ``<failure>``, ``<error>`` or ``<skipped>`` child of a test case (none for a PASS)."""
    text = r.failure_text()
    if r.status == PASS:
        return
    if r.status == FAIL:
        left = unexcused_failures(r, devs or None)
        if devs and not left:  # every failure is a documented deviation: a skip, with its id
            ET.SubElement(case, "skipped", type="known-deviation", message=_one_line(_deviation_text(devs))).text = (
                "\n".join([text, ""] + [f"{d.id} (rule {d.rule}, anomaly {d.anomaly}, step {d.step}): evidence {d.evidence}"
                                        for d in devs]))
            return
        first = left[0] if left else f"{r.case.title}: rule verdicts {_failing(r)}"
        note = f" (known deviation {', '.join(d.id for d in devs)} excuses only part of this case)" if devs else ""
        ET.SubElement(case, "failure", type="FAIL",
                      message=_one_line(first, MESSAGE_CHARS - len(note)) + note).text = text
    elif r.status == ERROR:
        ET.SubElement(case, "error", type="ERROR",
                      message=_one_line(r.message or "the harness could not run this case")).text = text
    else:  # INDETERMINATE, NOT_APPLICABLE, NOT_EXERCISED: neither pass nor fail a gate
        reason = r.message or (text.splitlines()[0] if text else "no reason recorded")
        ET.SubElement(case, "skipped", type=r.status, message=_one_line(f"{r.status}: {reason}")).text = text or None


def _failing(r: CaseResult) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(r.rule_verdicts.items()) if v != PASS) or "expectations"


def _case_properties(r: CaseResult, devs: list[Any]) -> list[tuple[str, str]]:
    """A case's facts as suite properties (name, value), keyed by case: junit-10.xsd has no
    ``<properties>`` on a test case."""
    cid = r.case.id
    props = [(f"rules:{cid}", ",".join(r.case.rules))]
    props += [(f"verdict:{cid}:{rule}", verdict) for rule, verdict in sorted(r.rule_verdicts.items())]
    props += [(f"judged_steps:{cid}:{rule}", str(steps)) for rule, steps in sorted(r.judged_steps().items())]
    if r.history_path is not None:
        props.append((f"history:{cid}", str(r.history_path)))
    if devs:
        props.append((f"known_deviations:{cid}", ",".join(d.id for d in devs)))
    if r.not_followed:
        props.append((f"not_followed:{cid}", "; ".join(f"step {nf['step']} {nf['op']}: {nf['reason']}" for nf in r.not_followed)))
    return props


def _case_text(r: CaseResult, devs: list[Any]) -> str:
    """The case's facts for a reader of the CI page: its rules, each rule's verdict and judged steps."""
    steps = r.judged_steps()
    excused = " (every failure excused by a known deviation)" if devs and not unexcused_failures(r, devs) else ""
    lines = [f"case {r.case.id}: {r.status}{excused}; rules named: {', '.join(r.case.rules) or '-'}",
             "rule verdicts (judged steps):"]
    lines += [f"  {rule:<20} {verdict:<14} {steps.get(rule, 0)}" for rule, verdict in sorted(r.rule_verdicts.items())]
    if devs:
        lines.append(f"known deviations on this broker: {', '.join(d.id for d in devs)}")
    lines += [f"not followed by the model: step {nf['step']} {nf['op']}: {nf['reason']}" for nf in r.not_followed]
    if r.history_path is not None:
        lines.append(f"history: {r.history_path}")
    if r.case.path is not None:
        lines.append(f"case file: {r.case.path}")
    return "\n".join(lines)


def _suite(results: list[CaseResult], info: dict[str, Any], taken: set[str]) -> ET.Element:
    target, version, client = info.get("target"), info.get("broker_version"), info.get("client")
    name = f"pulsar-conformance.{target}.{version}.{client}"
    classname = f"pulsar-conformance.{_dotless(target)}.{_dotless(version)}.{_dotless(client)}"
    if name in taken:  # two runs of one target x version x client: keep (classname, name) pairs distinct
        n = next(i for i in range(2, len(taken) + 2) if f"{name}#{i}" not in taken)
        name, classname = f"{name}#{n}", f"{classname}_run{n}"
    taken.add(name)
    suite = ET.Element("testsuite", name=name, tests="0", failures="0", errors="0", skipped="0", time="0.000")
    props = ET.SubElement(suite, "properties")
    for key in ("target", "broker_version", "client", "client_version"):
        if info.get(key) is not None:
            ET.SubElement(props, "property", name=key, value=str(info[key]))
    timing = info.get("timing")
    if timing:  # the bands this run's timing rules were judged with (conformance/timing.py)
        for key in ("source", "dispatch_latency_ms", "early_ms", "delayed_late_ms", "derivation"):
            ET.SubElement(props, "property", name=f"timing_{key}", value=str(timing.get(key)))
    steps_per_rule: dict[str, int] = {}
    for r in results:
        devs = _deviations(r, info)
        rules = f" [{', '.join(r.case.rules)}]" if r.case.rules else ""
        case = ET.SubElement(suite, "testcase", classname=classname, name=f"{r.case.id}{rules}",
                             time=f"{r.duration_s:.3f}")
        _verdict_element(case, r, devs)
        for key, value in _case_properties(r, devs):
            ET.SubElement(props, "property", name=key, value=value)
        ET.SubElement(case, "system-out").text = _case_text(r, devs)
        for rule, steps in r.judged_steps().items():
            steps_per_rule[rule] = steps_per_rule.get(rule, 0) + steps
    for rule, steps in sorted(steps_per_rule.items()):
        ET.SubElement(props, "property", name=f"judged_steps:{rule}", value=str(steps))
    # the steps of these cases the model did not follow (summary.json not_followed counts the same)
    ET.SubElement(props, "property", name="not_followed_steps", value=str(sum(len(r.not_followed) for r in results)))
    # the counts are read back from the test cases written above, so they cannot disagree with them
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    for tag, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        suite.set(attr, str(sum(c.find(tag) is not None for c in cases)))
    suite.set("time", f"{sum(r.duration_s for r in results):.3f}")
    return suite


def outcome_suite(outcome: Any) -> ET.Element:
    """The ``pulsar-conformance.outcome`` suite of ``outcome`` (a ``verdict_exit.Outcome``; see the module notes)."""
    from conformance.verdict_exit import KIND_INCONCLUSIVE, OUTCOME_FAIL, OUTCOME_INCONCLUSIVE, OUTCOME_KNOWN, OUTCOME_PASS

    suite = ET.Element("testsuite", name="pulsar-conformance.outcome", tests="0", failures="0", errors="0", skipped="0",
                       time="0.000")
    props = ET.SubElement(suite, "properties")
    for key, value in (("overall", outcome.overall), ("exit_code", outcome.exit_code)):
        ET.SubElement(props, "property", name=key, value=str(value))
    classname = "pulsar-conformance.outcome"
    case = ET.SubElement(suite, "testcase", classname=classname, name="run outcome", time="0.000")
    line = outcome.line()
    if outcome.overall not in (OUTCOME_PASS, OUTCOME_KNOWN):
        tag = "failure" if outcome.overall in (OUTCOME_FAIL, OUTCOME_INCONCLUSIVE) else "error"
        ET.SubElement(case, tag, type=outcome.overall, message=_one_line(line)).text = "\n".join(r.text for r in outcome.reasons)
    ET.SubElement(case, "system-out").text = "\n".join([line, *(f"{r.kind}: {r.text}" for r in outcome.reasons)])
    for reason in outcome.reasons:
        if reason.kind != KIND_INCONCLUSIVE:
            continue
        what = "INDETERMINATE" if "INDETERMINATE" in reason.text else "not exercised"
        for rule in reason.rules:
            one = ET.SubElement(suite, "testcase", classname=f"{classname}.{_dotless(reason.label)}",
                                name=f"{rule} [{reason.label}]", time="0.000")
            cases = f" (cases {', '.join(reason.cases)})" if reason.cases else ""
            ET.SubElement(one, "failure", type="INCONCLUSIVE",
                          message=_one_line(f"inconclusive: {what}: {rule} with the {reason.client} client{cases}")).text = reason.text
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    for tag, attr in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        suite.set(attr, str(sum(c.find(tag) is not None for c in cases)))
    return suite


def write_junit(path: Path, runs: Iterable[tuple[list[CaseResult], dict[str, Any]]], *, outcome: Any = None) -> Path:
    """Write ``runs`` (each: one client's case results on one target, and that run's target facts:
    ``target``, ``broker_version``, ``client``, ...) to ``path`` as JUnit XML; returns ``path``.
    ``outcome`` (``conformance.verdict_exit.Outcome``): the run's answer, as the outcome suite."""
    root = ET.Element("testsuites", name="pulsar-conformance")
    taken: set[str] = set()
    for results, info in runs:
        root.append(_suite(results, info, taken))
    if outcome is not None:
        root.append(outcome_suite(outcome))
    suites = root.findall("testsuite")
    for attr in ("tests", "failures", "errors"):  # junit-10.xsd has no "skipped" on <testsuites>
        root.set(attr, str(sum(int(s.get(attr)) for s in suites)))
    root.set("time", f"{sum(float(s.get('time')) for s in suites):.3f}")
    ET.indent(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    ET.ElementTree(root).write(tmp, encoding="utf-8", xml_declaration=True)
    redact_file(tmp)  # no secret shows (fixtures/secrets.py)
    tmp.replace(path)
    return path
