"""JUnit XML for CI gating: one ``<testsuite>`` per target, one ``<testcase>`` per case.

Each test case carries ``<properties>`` with its rule ids (``rule``), the target, the broker
version and the client, so a CI system can group failures by rule. A FAIL becomes
``<failure>`` whose text is the checker's explanation; a harness ERROR becomes ``<error>``;
INDETERMINATE and NOT_APPLICABLE become ``<skipped>`` with the reason (they neither pass nor
fail a gate). Written atomically: a reader never sees half a file.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Iterable

from conformance.runner import ERROR, FAIL, INDETERMINATE, NOT_APPLICABLE, CaseResult


def _suite(results: list[CaseResult], info: dict[str, Any]) -> ET.Element:
    name = f"pulsar-conformance[{info.get('target')}]"
    failures = sum(r.status == FAIL for r in results)
    errors = sum(r.status == ERROR for r in results)
    skipped = sum(r.status in (INDETERMINATE, NOT_APPLICABLE) for r in results)
    suite = ET.Element(
        "testsuite",
        name=name,
        tests=str(len(results)),
        failures=str(failures),
        errors=str(errors),
        skipped=str(skipped),
        time=f"{sum(r.duration_s for r in results):.3f}",
    )
    props = ET.SubElement(suite, "properties")
    for key in ("target", "broker_version", "client", "client_version"):
        if info.get(key) is not None:
            ET.SubElement(props, "property", name=key, value=str(info[key]))
    timing = info.get("timing")
    if timing:  # the bands this run's timing rules were judged with (conformance/timing.py)
        for key in ("source", "dispatch_latency_ms", "early_ms", "delayed_late_ms", "derivation"):
            ET.SubElement(props, "property", name=f"timing_{key}", value=str(timing.get(key)))
    for r in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"{name}.{r.case.path.parent.name if r.case.path else 'cases'}",
            name=r.case.id,
            time=f"{r.duration_s:.3f}",
        )
        cprops = ET.SubElement(case, "properties")
        for rule in r.case.rules:
            ET.SubElement(cprops, "property", name="rule", value=rule)
        for rule, verdict in sorted(r.rule_verdicts.items()):
            ET.SubElement(cprops, "property", name=f"verdict:{rule}", value=verdict)
        for rule, steps in sorted(r.judged_steps().items()):
            ET.SubElement(cprops, "property", name=f"judged_steps:{rule}", value=str(steps))
        if r.history_path is not None:
            ET.SubElement(cprops, "property", name="history", value=str(r.history_path))
        text = r.failure_text()
        if r.status == FAIL:
            ET.SubElement(case, "failure", message=f"{r.case.title}: rule verdicts {_failing(r)}").text = text
        elif r.status == ERROR:
            ET.SubElement(case, "error", message="the harness could not run this case").text = text
        elif r.status in (INDETERMINATE, NOT_APPLICABLE):
            ET.SubElement(case, "skipped", message=f"{r.status}: {text or r.message}"[:500])
    return suite


def _failing(r: CaseResult) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(r.rule_verdicts.items()) if v != "PASS") or "expectations"


def write_junit(path: Path, runs: Iterable[tuple[list[CaseResult], dict[str, Any]]]) -> Path:
    root = ET.Element("testsuites")
    for results, info in runs:
        root.append(_suite(results, info))
    ET.indent(root)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    ET.ElementTree(root).write(tmp, encoding="utf-8", xml_declaration=True)
    tmp.replace(path)
    return path
