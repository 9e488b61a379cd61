"""The runner's folding of checker verdicts and case expectations into rule verdicts."""

from __future__ import annotations

from pathlib import Path

from conformance.case_files import load_case
from conformance.runner import FAIL, INDETERMINATE, PASS, fold_rules, run_case
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
    assert result.rule_verdicts["PLS-SUB-001"] == FAIL


def test_after_an_indeterminate_outcome_a_broken_expectation_is_indeterminate(tmp_path):
    target = _Scripted([Outcome.indeterminate("timeout"), Outcome.ok({"producer_name": "p", "last_sequence_id": -1}), Outcome.ok({"message_id": [1, 0, -1, -1]}), Outcome.rejected("OtherError", "no consumer")])
    result = run_case(_case(tmp_path), target, client="python")
    assert result.status == INDETERMINATE, result.failure_text()
    assert result.rule_verdicts["PLS-SUB-001"] == INDETERMINATE


def test_fold_takes_the_worst_verdict_per_rule():
    class R:
        def __init__(self, verdicts):
            self.rule_verdicts = verdicts

    folded = fold_rules([R({"A": PASS, "B": PASS}), R({"A": INDETERMINATE, "B": FAIL}), R({"A": PASS})])
    assert folded == {"A": INDETERMINATE, "B": FAIL}


def test_corpus_verdicts_carry_the_case_expectations(tmp_path):
    target = _Scripted([Outcome.ok(), Outcome.ok({"producer_name": "p", "last_sequence_id": -1}), Outcome.ok({"message_id": [1, 0, -1, -1]}), Outcome.ok({"message": None})])
    result = run_case(_case(tmp_path), target, client="python")
    from_case = [v for v in result.corpus_verdicts() if v not in result.verdicts]
    assert [(v.rule_id, v.step, v.status, v.anomaly) for v in from_case] == [("PLS-SUB-001", 4, FAIL, "wrong-value")]
