"""Both JUnit files the product writes are valid against Jenkins' junit-10.xsd, the schema Jenkins
and GitLab read (``tests/data/junit-10.xsd``, as pytest ships it to check its own xunit2 output),
and say what a CI page needs: ``run``'s ``junit.xml`` (``reports/junit.py``) one test per case x
client x release with all three visible, a failure's message the checker's explanation, a known
deviation skipped with its id; the report's ``junit.xml`` (``reports/xunit2.py``) with a failing
rule's explanation as its failure message.

The schema is shown to refuse what the old files had (``<properties>`` inside a ``<testcase>``,
``skipped`` on ``<testsuites>``), so a validation here is a real check.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import xmlschema

from conformance import mutation
from conformance.case_files import discover_cases
from conformance.runner import ERROR, FAIL, NOT_APPLICABLE, PASS, run_case
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome, load
from reports.junit import write_junit

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = xmlschema.XMLSchema(str(Path(__file__).resolve().parent.parent / "data" / "junit-10.xsd"))
KD1_EVIDENCE = ROOT / "conformance/evidence/KD-001-backlog-after-seek-4.0.8.history.jsonl"
KD1_CASE = "backlog-after-seek-individual-acks"  # KD-001 in conformance/deviations.yaml: this case on the 4.0 line
MODEL_CASES = ("ack-cumulative-failover", "ack-individual")  # written for the python and java clients
CLIENTS = ("python", "java")


def _valid(path_or_text) -> None:
    """Validate against junit-10.xsd; on failure, the schema's own reason is the assertion message."""
    errors = list(SCHEMA.iter_errors(str(path_or_text)))
    assert not errors, "\n".join(str(e) for e in errors[:5])


def _doc(suite_body: str, root_attrs: str = "") -> str:
    return (f'<testsuites {root_attrs}><testsuite name="s" tests="1" failures="0" errors="0">{suite_body}'
            f"</testsuite></testsuites>")


# --------------------------------------------------------------------------- the schema is a real check


def test_the_schema_refuses_properties_in_a_testcase_and_skipped_on_testsuites():
    case = '<testcase name="c" classname="k" time="0.001"/>'
    props = '<properties><property name="rule" value="PLS-ACK-001"/></properties>'
    SCHEMA.validate(_doc(props + case))  # the same document with properties on the suite is valid
    assert not SCHEMA.is_valid(_doc(f'<testcase name="c" classname="k">{props}</testcase>'))
    assert not SCHEMA.is_valid(_doc(case, 'skipped="1"'))
    assert SCHEMA.is_valid(_doc(case, 'tests="1" failures="0" errors="0" time="0.001"'))


# --------------------------------------------------------------------------- run's junit.xml (reports/junit.py)


class _Replay:
    """A target that returns a given history: a recorded broker's, or a mutant of the model's."""

    def __init__(self, history: History, name: str):
        self.history, self.name = history, name

    def run(self, trace):
        return self.history


class _Broken:
    """A target whose run raises: a harness error, never a verdict."""

    name = "embedded"

    def run(self, trace):
        raise ConnectionError("connection refused by 127.0.0.1:6650")


@pytest.fixture(scope="module")
def cases():
    return {c.id: c for c in discover_cases()}


@pytest.fixture(scope="module")
def model_runs(cases):
    """The model cases once per client, as ``run`` judges them on the model."""
    return {client: [run_case(cases[cid], ModelTarget(), client=client) for cid in MODEL_CASES] for client in CLIENTS}


@pytest.fixture(scope="module")
def mutant_fail(cases):
    """A FAIL on the model: a mutant of the model's own history of ack-cumulative-failover with a
    duplicate delivery, and the rules the mutant is meant to break (derived from its ops, not from
    the checker)."""
    case = cases["ack-cumulative-failover"]
    history = ModelTarget(client="python").run(case.trace)
    for m in mutation.mutants(history, ["duplicate_delivery"]):
        if m.allowed is None and m.unstated is None:
            result = run_case(case, _Replay(m.history, "model"), client="python")
            if result.status == FAIL:
                return result, set(m.meant_to_break)
    pytest.fail("no duplicate_delivery mutant of ack-cumulative-failover FAILs: the checker or the operator changed")


def _kd1_result(cases, *, break_step_20: bool = False):
    """The case of KD-001 judged on its evidence (a history recorded on 4.0.8); with ``break_step_20``
    the first stats (step 20) also reports one backlog too few, a failure KD-001 does not name."""
    history = load(KD1_EVIDENCE)
    if break_step_20:
        events = list(history.events)
        i = next(i for i, e in enumerate(events) if e.step == 20)
        ev = events[i]
        assert ev.op.op == "stats"
        value = {**(ev.outcome.value or {}), "backlog": ev.outcome.value["backlog"] - 1}
        events[i] = Event(ev.op, Outcome.ok(value), ev.t_start_ms, ev.t_end_ms)
        history = History(history.header, tuple(events))
    result = run_case(cases[KD1_CASE], _Replay(history, "embedded"), client="python")
    assert result.status == FAIL
    return result


def _info(target: str, version: str, client: str) -> dict[str, str]:
    return {"target": target, "broker_version": version, "client": client}


def _testcases(root: ET.Element) -> dict[tuple[str, str], ET.Element]:
    return {(c.get("classname"), c.get("name")): c for c in root.iter("testcase")}


def _one_line(text: str) -> str:
    return " ".join(text.split())


def test_run_junit_is_valid_and_one_test_per_case_client_and_release(tmp_path, model_runs):
    runs = [(model_runs[c], _info("model", "4.0", c)) for c in CLIENTS]
    path = write_junit(tmp_path / "junit.xml", runs)
    _valid(path)
    root = ET.parse(path).getroot()
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [f"pulsar-conformance.model.4.0.{c}" for c in CLIENTS]
    # every (classname, name) pair is distinct across the two clients, and the client is the class
    pairs = [(c.get("classname"), c.get("name")) for c in root.iter("testcase")]
    assert len(pairs) == len(set(pairs)) == len(MODEL_CASES) * len(CLIENTS)
    for client, suite in zip(CLIENTS, suites):
        for case, result in zip(suite.findall("testcase"), model_runs[client]):
            assert case.get("classname") == f"pulsar-conformance.model.4_0.{client}"
            assert case.get("name") == f"{result.case.id} [{', '.join(result.case.rules)}]"
            assert float(case.get("time")) == pytest.approx(result.duration_s, abs=0.0006)
            assert case.find("properties") is None
        props = {p.get("name"): p.get("value") for p in suite.find("properties")}
        assert props["client"] == client
        for result in model_runs[client]:  # a case's facts are suite properties keyed by case
            assert props[f"rules:{result.case.id}"] == ",".join(result.case.rules)
            for rule, verdict in result.rule_verdicts.items():
                assert props[f"verdict:{result.case.id}:{rule}"] == verdict


def test_a_fail_is_a_failure_whose_message_is_the_explanation(tmp_path, model_runs, mutant_fail):
    result, meant = mutant_fail
    results = [*model_runs["python"], result]
    path = write_junit(tmp_path / "junit.xml", [(results, _info("model", "4.0", "python"))])
    _valid(path)
    root = ET.parse(path).getroot()
    (suite,) = root.findall("testsuite")
    case = _testcases(root)[("pulsar-conformance.model.4_0.python", f"{result.case.id} [{', '.join(result.case.rules)}]")]
    failure = case.find("failure")
    assert failure is not None and case.find("skipped") is None
    first = next(v for v in result.verdicts if v.status == FAIL)
    assert first.rule_id in meant
    message = failure.get("message")
    assert "\n" not in message and len(message) <= 500
    assert f"[{first.rule_id}]" in message and _one_line(first.explanation)[:200] in message
    assert all(v.explanation in failure.text for v in result.verdicts if v.status == FAIL)
    # the counts agree with the cases: one failure among the model cases that PASS
    assert [r.status for r in model_runs["python"]] == [PASS] * len(MODEL_CASES)
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == (
        str(len(results)), "1", "0", "0")
    assert (root.get("tests"), root.get("failures")) == (str(len(results)), "1")


def test_a_known_deviation_is_skipped_with_its_id_and_an_unexcused_fail_names_it(tmp_path, cases):
    excused = _kd1_result(cases)
    unexcused = _kd1_result(cases, break_step_20=True)
    runs = [([excused], _info("embedded", "4.0.8", "python")),
            ([unexcused], _info("embedded", "4.0.8", "java")),
            ([excused], _info("embedded", "4.2.4", "python"))]  # KD-001 is recorded for the 4.0 line only
    path = write_junit(tmp_path / "junit.xml", runs)
    _valid(path)
    root = ET.parse(path).getroot()
    by_suite = {s.get("name"): s for s in root.findall("testsuite")}
    name = f"{KD1_CASE} [PLS-BACKLOG-001, PLS-SEEK-002]"

    (case,) = by_suite["pulsar-conformance.embedded.4.0.8.python"].findall("testcase")
    assert case.get("name") == name and case.find("failure") is None
    assert case.find("skipped").get("message").startswith("known deviation KD-001: ")
    assert by_suite["pulsar-conformance.embedded.4.0.8.python"].get("skipped") == "1"
    assert by_suite["pulsar-conformance.embedded.4.0.8.python"].get("failures") == "0"

    (case,) = by_suite["pulsar-conformance.embedded.4.0.8.java"].findall("testcase")
    message = case.find("failure").get("message")
    assert "KD-001" in message and "[PLS-BACKLOG-001] step 20" in message  # the failure KD-001 does not excuse

    (case,) = by_suite["pulsar-conformance.embedded.4.2.4.python"].findall("testcase")
    message = case.find("failure").get("message")
    assert "[PLS-BACKLOG-001] step 23" in message and "KD-" not in message
    assert root.get("failures") == "2" and root.get("skipped") is None


def test_error_and_not_applicable_are_error_and_skipped(tmp_path, cases):
    java_only = next(c for c in cases.values() if c.clients == ("java",))
    error = run_case(cases["ack-individual"], _Broken(), client="python")
    not_applicable = run_case(java_only, _Broken(), client="python")  # refused before the target runs
    assert (error.status, not_applicable.status) == (ERROR, NOT_APPLICABLE)
    path = write_junit(tmp_path / "junit.xml", [([error, not_applicable], _info("embedded", "4.0.8", "python"))])
    _valid(path)
    root = ET.parse(path).getroot()
    (suite,) = root.findall("testsuite")
    first, second = suite.findall("testcase")
    assert "connection refused" in first.find("error").get("message")
    skipped = second.find("skipped").get("message")
    assert skipped.startswith("NOT_APPLICABLE: ") and "java" in skipped  # the case is for the java client only
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"), suite.get("skipped")) == ("2", "0", "1", "1")


# --------------------------------------------------------------------------- the report's junit.xml (reports/xunit2.py)


def test_the_report_junit_is_valid(report_dir):
    path, _ = report_dir
    _valid(path / "junit.xml")


def test_the_clients_report_junit_is_valid_and_a_failure_message_is_the_explanation(clients_report_dir):
    from spark_reports.samples import TRACES

    _valid(clients_report_dir / "junit.xml")
    root = ET.parse(clients_report_dir / "junit.xml").getroot()
    # the sample corpus's mixed trace fails PLS-ACK-003 at its ack_cumulative step; its rows explain
    # it as "Let <op> at step <n> be judged by <rules>. ..." (spark_reports.samples)
    (trace_id, step), = [(t, i) for (client, t), steps in TRACES.items() if client == "mixed"
                         for i, s in enumerate(steps, start=1) if "PLS-ACK-003" in s[2]]
    (case,) = [c for s in root.findall("testsuite") for c in s.findall("testcase")
               if c.get("classname") == "pulsar-conformance.embedded.4_0_8.mixed" and c.get("name") == "PLS-ACK-003"]
    message = case.find("failure").get("message")
    assert message.startswith(f"Let ack_cumulative at step {step} be judged by PLS-ACK-003. Then the broker's ")
    assert trace_id in message and "\n" not in message
