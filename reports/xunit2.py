"""JUnit XML (xunit2 flavour) over an outcome-corpus report, for CI gating.

One ``<testsuite>`` per target x broker version x client (``python``, ``java``, ``mixed`` for
cross-client traces; the model's lines included, as the reference), one ``<testcase>`` per
active rule in it (``name`` = the rule id, ``classname`` =
``pulsar-conformance.<target>.<version>.<client>``). A rule that FAILs is a ``<failure>`` whose
message is the checker's explanation of its minimal witness (the shortest failing trace, ties by
trace id), followed by where that witness is (``failure_message``), on one line; its text is the
explanation plus the witness listed step by step (with the model's prediction where it differs:
``model_key`` finds the model's rows, also for a client ``profile_for`` does not know).
NOT_APPLICABLE, NOT_EXERCISED and INDETERMINATE are ``<skipped>`` with the reason: they neither
pass nor fail a gate.

The document is valid against Jenkins' junit-10.xsd (``tests/data/junit-10.xsd``, checked by
``tests/reports/test_junit_schema.py``), which GitLab reads too: ``<properties>`` only on
``<testsuite>``, so the facts of a run are suite properties: target, broker version, client (and
client versions), the corpus, its rows and runs, the corpus schema version, the generator seed
when the corpus came from ``spark_reports.generate``, and the Spark version; and no ``skipped``
count on ``<testsuites>`` (each suite carries its own). Written atomically.
"""

from __future__ import annotations

import json
import socket
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, Mapping

from conformance.corpus import CORPUS_SCHEMA_VERSION
from reference_model import releases

MODEL = "model"


def _key(target: Any, broker_version: Any, client: Any) -> str:
    return f"{target}|{broker_version}|{client}"


def _safe(text: Any) -> str:
    return str(text).replace(".", "_") if text is not None else "none"


# --------------------------------------------------------------------------- witness text (shared with html.py)


def observation_text(observation: str | None) -> str:
    """A one-line reading of an observation JSON (``ok m1 (count 1)``, ``rejected ConsumerBusy``)."""
    if not observation:
        return "-"
    try:
        obs = json.loads(observation)
    except ValueError:
        return observation[:120]
    status = obs.get("status")
    if status == "rejected":
        return f"rejected {obs.get('error')}"
    if status == "indeterminate":
        return f"indeterminate ({(obs.get('detail') or '')[:60]})"
    value = obs.get("value") or {}
    if "message" in value:
        m = value["message"]
        if m is None:
            return "ok nothing"
        extra = f", properties {m.get('properties')}" if m.get("properties") else ""
        return f"ok {m.get('payload')} (count {m.get('redelivery_count')}{extra})"
    if "backlog" in value:
        return f"ok backlog {value['backlog']}"
    if "message_id" in value:
        return f"ok id {value['message_id']}"
    return "ok" if not value else f"ok {json.dumps(value, sort_keys=True)[:80]}"


def ms(t: float | None) -> str:
    return "?" if t is None else f"{t:g}"


def op_text(op: str, args: Mapping[str, Any] | None) -> str:
    if not args:
        return op
    inner = ", ".join(f"{k}={v}" for k, v in args.items() if k not in ("topic",) or op == "create_topic")
    return f"{op}({inner})"


def witness_events(data: Mapping[str, Any], witness: Mapping[str, Any], *, target: str | None = None) -> list[dict[str, Any]]:
    """The rows of ``witness``'s trace instance (its run, trace, version and client), in step order."""
    t = target or witness["target"]
    return [r for r in data.get("witness_rows", [])
            if r["run_id"] == witness["run_id"] and r["trace_id"] == witness["trace_id"] and r["target"] == t
            and r["broker_version"] == witness["broker_version"] and r["client"] == witness["client"]]


def model_key(broker_version: Any, client: Any) -> tuple[str, str]:
    """The (line, client kind) of the model rows that predict a broker's rows.

    ``reference_model.profiles.profile_for`` decides the line and the client kind; where it
    refuses a value (a client it does not know yet, an unreadable version) this falls back
    instead of failing: the line as ``transforms.line_of`` computes it, the kind ``java`` for
    ``java*`` else ``cpp``. A cross-client trace (client ``mixed``) is always kind ``mixed``: the
    model records those histories under client ``mixed`` (``ModelTarget``), whatever a profile says.
    """
    from reference_model.profiles import profile_for

    c = str(client or "").strip().lower()
    try:
        line = profile_for(broker_version, None).broker
    except ValueError:
        line = releases.model_line_or_text(broker_version)
    if c == "mixed":
        return line, "mixed"  # the model's cross-client rows carry client "mixed", whatever a profile says
    try:
        kind = profile_for(None, client).client
    except ValueError:
        kind = "java" if c.startswith("java") else "cpp"
    return line, kind


def model_events(data: Mapping[str, Any], witness: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The model's rows for the witness trace in the same run (its line and client kind)."""
    line, kind = model_key(witness["broker_version"], witness["client"])
    return [r for r in data.get("witness_rows", [])
            if r["run_id"] == witness["run_id"] and r["trace_id"] == witness["trace_id"] and r["target"] == MODEL
            and r["broker_version"] == line and r["client"] == kind]


def witness_listing(events: list[Mapping[str, Any]], trace: Any = None, predicted: list[Mapping[str, Any]] | None = None) -> str:
    """The witness as a short program: one line per step, failing steps marked."""
    ops = {o.step: o for o in trace.ops} if trace is not None else {}
    model = {r["step"]: r for r in (predicted or [])}
    lines = []
    for r in events:
        op = ops.get(r["step"])
        mark = "FAIL" if r["verdict"] == "FAIL" else "    "
        line = (f"{mark} {r['step']:>3}  {op_text(r['op'], op.args if op else None):<60} -> "
                f"{observation_text(r['observation'])}  @ {ms(r['t_end_ms'])} ms")
        m = model.get(r["step"])
        if m is not None and m["observation"] != r["observation"]:
            line += f"   (model: {observation_text(m['observation'])})"
        if r["verdict"] == "FAIL" and r.get("anomalies"):
            line += f"  [{', '.join(r['anomalies'])}]"
        lines.append(line)
    return "\n".join(lines)


MESSAGE_CHARS = 1000  # a failure message is one line a CI tool lists; the text holds the rest


def failure_message(w: Mapping[str, Any]) -> str:
    """A failing rule's ``<failure message>``: the checker's explanation first (what a CI page shows
    in its list), then the rule, step and anomalies, then the minimal witness; one line, at most
    ``MESSAGE_CHARS``, the explanation shortened first so the witness's trace id always shows."""
    anomalies = ", ".join(w.get("anomalies") or []) or "no anomaly named"
    where = (f" ({w['rule_id']} at step {w['step']} {w['op']} [{anomalies}]; fails on {w['failing_instances']} trace "
             f"instance(s); minimal witness: trace {w['trace_id']}, run {w['run_id']}, {w['length']} steps)")
    explanation = " ".join(str(w.get("explanation") or f"{w['rule_id']} failed: see the listing").split())
    room = max(MESSAGE_CHARS - len(where), 80)
    if len(explanation) > room:
        explanation = explanation[: room - 3] + "..."
    return (explanation + where)[:MESSAGE_CHARS]


# --------------------------------------------------------------------------- document


def build_xunit2(data: Mapping[str, Any], matrix: Mapping[str, Any], *, traces: Mapping[str, Any] | None = None) -> ET.Element:
    traces = traces or {}
    witnesses = {(_key(w["target"], w["broker_version"], w["client"]), w["rule_id"]): w for w in data.get("witnesses", [])}
    manifest = data.get("manifest") or {}
    seed = (manifest.get("config") or {}).get("seed")
    root = ET.Element("testsuites", name="pulsar-conformance report")
    totals = {"tests": 0, "failures": 0}  # junit-10.xsd: no "skipped" on <testsuites>
    for combo in data["combos"]:
        key = _key(combo["target"], combo["broker_version"], combo["client"])
        verdicts = matrix["matrix"][key]
        failures = sum(v == "FAIL" for v in verdicts.values())
        skipped = sum(v not in ("PASS", "FAIL") for v in verdicts.values())
        suite = ET.SubElement(
            root, "testsuite",
            name=f"pulsar-conformance[{combo['target']} {combo['broker_version']} {combo['client']}]",
            tests=str(len(verdicts)), failures=str(failures), errors="0", skipped=str(skipped), time="0.000",
            timestamp=data.get("generated_at", "").rstrip("Z"), hostname=socket.gethostname(),
        )
        props = ET.SubElement(suite, "properties")
        facts = [
            ("target", combo["target"]), ("broker_version", combo["broker_version"]), ("client", combo["client"]),
            ("client_versions", ",".join(combo.get("client_versions") or [])),
            ("corpus", data.get("corpus")), ("corpus_rows", combo.get("rows")), ("runs", combo.get("runs")),
            ("corpus_schema_version", CORPUS_SCHEMA_VERSION), ("spark_version", data.get("spark_version")),
            ("coverage", f"{matrix['coverage']['exercised']}/{matrix['coverage']['of']}"),
        ]
        if seed is not None:
            facts.append(("generator_seed", seed))
            facts.append(("generator_id", manifest.get("generator_id")))
        for name, value in facts:
            if value not in (None, ""):
                ET.SubElement(props, "property", name=name, value=str(value))
        classname = f"pulsar-conformance.{_safe(combo['target'])}.{_safe(combo['broker_version'])}.{_safe(combo['client'])}"
        for rule in matrix["rules"]:
            verdict = verdicts[rule["id"]]
            case = ET.SubElement(suite, "testcase", classname=classname, name=rule["id"], time="0.000")
            # xunit2 allows properties on suites only: how many steps judged each rule, on the suite
            counts = matrix.get("counts", {}).get(key, {}).get(rule["id"]) or {}
            ET.SubElement(props, "property", name=f"judged_steps:{rule['id']}", value=str(counts.get("rows", 0)))
            if verdict == "FAIL":
                w = witnesses.get((key, rule["id"]))
                if w is None:  # cannot happen: a FAIL cell comes from a FAIL row
                    ET.SubElement(case, "failure", message=f"{rule['id']} failed", type="FAIL").text = rule["title"]
                    continue
                events = witness_events(data, w)
                text = [f"{rule['id']}: {rule['title']}", "", f"Explanation (checker): {w.get('explanation') or '-'}",
                        f"Observed at step {w['step']}: {w.get('observation')}"]
                if events:
                    text += ["", "Witness:", witness_listing(events, traces.get(w["trace_id"]), model_events(data, w))]
                text += ["", f"Replay: pulsar-conformance replay <the case file of {w['trace_id']}> "
                             f"--target {combo['target']} --broker-version {combo['broker_version']}"]
                ET.SubElement(case, "failure", message=failure_message(w),
                              type=",".join(w.get("anomalies") or []) or "FAIL").text = "\n".join(text)
            elif verdict != "PASS":
                reason = {
                    "NOT_APPLICABLE": f"NOT_APPLICABLE: the rule speaks about clients {rule['clients']} / brokers {rule['brokers']}",
                    "NOT_EXERCISED": "NOT_EXERCISED: no step in the corpus judged this rule here",
                    "INDETERMINATE": "INDETERMINATE: an outcome the checker could not judge (a timeout, an op not modelled)",
                }.get(verdict, verdict)
                ET.SubElement(case, "skipped", message=reason)
        totals["tests"] += len(verdicts)
        totals["failures"] += failures
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("errors", "0")
    root.set("time", "0.000")
    return root


def write_xunit2(path: Path, data: Mapping[str, Any], matrix: Mapping[str, Any], *, traces: Mapping[str, Any] | None = None) -> Path:
    root = build_xunit2(data, matrix, traces=traces)
    ET.indent(root)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    ET.ElementTree(root).write(tmp, encoding="utf-8", xml_declaration=True)
    tmp.replace(path)
    return path
