"""The runner's folding of checker verdicts and case expectations into rule verdicts."""

from __future__ import annotations

from pathlib import Path

from conformance.case_files import load_case
from conformance.runner import FAIL, INDETERMINATE, NOT_EXERCISED, PASS, fold_rules, run_case, summary
from conformance.trace import Event, History, Outcome, replace_header

CASE = """
id: tiny
title: tiny
rules: [PLS-SUB-001]
ops:
  - subscribe: {consumer: c1, topic: t, subscription: s, consumer_name: c1}
  - create_producer: {producer: p1, topic: t}
  - send: {producer: p1, payload: m1}
  - receive: {consumer: c1, timeout_ms: 1000}
expect:
  - {step: 4, status: ok, payload: m1}
"""


class _Scripted:
    """A target that returns a fixed history: what a broker might have done."""

    name = "scripted"

    def __init__(self, outcomes):
        self.outcomes = outcomes

    def run(self, trace):
        events = tuple(Event(op, out, float(i), float(i + 1)) for i, (op, out) in enumerate(zip(trace.ops, self.outcomes)))
        return History(replace_header(trace.header, target="scripted", broker_version="4.0.8", client="python"), events)


def _case(tmp_path: Path):
    path = tmp_path / "tiny.yaml"
    path.write_text(CASE)
    return load_case(path)


def test_a_broken_expectation_is_a_fail(tmp_path):
    target = _Scripted([Outcome.ok(), Outcome.ok({"producer_name": "p", "last_sequence_id": -1}), Outcome.ok({"message_id": [1, 0, -1, -1]}), Outcome.ok({"message": None})])
    result = run_case(_case(tmp_path), target, client="python")
    assert result.status == FAIL
    # the expectation is the case's own check: it fails the case, and no detector failed at its
    # step, so it is charged to no rule (PLS-SUB-001's detector judged the subscribe: PASS)
    assert result.rule_verdicts["PLS-SUB-001"] == PASS
    [broken] = result.expectation_failures
    assert (broken.step, broken.charged_to, broken.indeterminate) == (4, (), False)


def test_after_an_indeterminate_outcome_a_broken_expectation_is_indeterminate(tmp_path):
    target = _Scripted([Outcome.indeterminate("timeout"), Outcome.ok({"producer_name": "p", "last_sequence_id": -1}), Outcome.ok({"message_id": [1, 0, -1, -1]}), Outcome.rejected("OtherError", "no consumer")])
    result = run_case(_case(tmp_path), target, client="python")
    assert result.status == INDETERMINATE, result.failure_text()
    [broken] = result.expectation_failures
    assert broken.indeterminate and broken.to_json()["status"] == INDETERMINATE


def test_fold_takes_the_worst_verdict_per_rule():
    class R:
        def __init__(self, verdicts):
            self.rule_verdicts = verdicts

    folded = fold_rules([R({"A": PASS, "B": PASS}), R({"A": INDETERMINATE, "B": FAIL}), R({"A": PASS})])
    assert folded == {"A": INDETERMINATE, "B": FAIL}


def test_corpus_verdicts_are_the_detectors_only_and_summary_lists_the_broken_expectation(tmp_path):
    target = _Scripted([Outcome.ok(), Outcome.ok({"producer_name": "p", "last_sequence_id": -1}), Outcome.ok({"message_id": [1, 0, -1, -1]}), Outcome.ok({"message": None})])
    result = run_case(_case(tmp_path), target, client="python")
    assert result.corpus_verdicts() == result.verdicts
    doc = summary([result], target_info={"target": "scripted"})
    assert [(e["case"], e["step"], e["status"]) for e in doc["expectations"]["failed"]] == [("tiny", 4, FAIL)]
    assert doc["judged_steps"]["PLS-SUB-001"] == sum(1 for v in result.verdicts if v.rule_id == "PLS-SUB-001") > 0


def test_a_rule_the_case_names_that_no_detector_judged_is_never_pass(tmp_path):
    path = tmp_path / "named.yaml"
    path.write_text(CASE.replace("id: tiny", "id: named").replace("rules: [PLS-SUB-001]", "rules: [PLS-SUB-001, PLS-TTL-001]"))
    target = _Scripted([Outcome.ok(), Outcome.ok({"producer_name": "p", "last_sequence_id": -1}), Outcome.ok({"message_id": [1, 0, -1, -1]}), Outcome.ok({"message": {"payload": "m1", "message_id": [1, 0, -1, -1], "topic": "t", "key": None, "ordering_key": None, "properties": {}, "event_time": 0, "publish_time": 2, "redelivery_count": 0, "producer_name": "p"}})])
    result = run_case(load_case(path), target, client="python")
    assert result.rule_verdicts["PLS-TTL-001"] == NOT_EXERCISED  # no TTL in this history: nothing judged it
    assert result.status == INDETERMINATE and "PLS-TTL-001" in result.message
    doc = summary([result], target_info={"target": "scripted"})
    assert doc["rules"]["PLS-TTL-001"] == NOT_EXERCISED and doc["judged_steps"]["PLS-TTL-001"] == 0
    assert "PLS-TTL-001" in doc["meant_to_judge"]


def test_the_main_junit_carries_judged_steps_per_rule_and_the_timing_bands(tmp_path):
    import xml.etree.ElementTree as ET

    from conformance.targets.model import ModelTarget
    from conformance.timing import TimingBands
    from reports.junit import write_junit

    result = run_case(_case(tmp_path), ModelTarget(), client="python")
    counted = sum(1 for v in result.verdicts if v.rule_id == "PLS-SUB-001")
    info = {"target": "model", "timing": TimingBands.for_model().to_json()}
    root = ET.parse(write_junit(tmp_path / "junit.xml", [([result], info)])).getroot()
    suite = root.find("testsuite") if root.tag == "testsuites" else root
    suite_props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert suite_props["timing_source"] == "model" and suite_props["timing_dispatch_latency_ms"] == "0.0"
    # junit-10.xsd allows properties on a suite only: a case's facts are suite properties keyed by case
    assert suite.find("testcase").find("properties") is None
    assert suite_props["judged_steps:tiny:PLS-SUB-001"] == str(counted) and counted > 0
    assert suite_props["judged_steps:PLS-SUB-001"] == str(counted)  # summed over the suite's one case


def test_the_junit_classname_names_target_version_and_client_and_the_area_is_in_system_out(tmp_path):
    import xml.etree.ElementTree as ET

    from conformance.case_files import discover_cases
    from conformance.targets.model import ModelTarget
    from reports.junit import write_junit

    cases = {c.id: c for c in discover_cases()}
    results = [run_case(cases[i], ModelTarget(), client="python") for i in ("dlq-whole-batch", "dlq-default-name")]
    info = {"target": "model", "broker_version": "4.0", "client": "python"}
    root = ET.parse(write_junit(tmp_path / "junit.xml", [(results, info)])).getroot()
    suite = root.find("testsuite")
    # the dots of the version would split the classname (CI tools read the last dot as package.class)
    assert {t.get("classname") for t in suite.iter("testcase")} == {"pulsar-conformance.model.4_0.python"}
    # dlq-whole-batch was in dlq-features/: the case file (and so its area) is in the case's output
    assert all("/cases/dlq/" in t.find("system-out").text for t in suite.iter("testcase"))
