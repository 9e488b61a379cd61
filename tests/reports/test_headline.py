"""The one-line answer (``reports/headline.py``) over hand-written ``summary.json`` documents.

Each expected sentence is written by hand from the counting rules in the module's docstring:
every applicable rule in exactly one figure; a FAIL excused by a known deviation is a known
deviation (not conforming, not failing); a FAIL with any client unexcused there is failing;
cases that errored are named, and a run that judged nothing never reads "conforms".
"""

from __future__ import annotations

from reports.headline import conformance_sentence, corpus_sentence, summary_headline


def _client(rules, cases, deviations=None, not_run=None):
    return {"client_version": "x", "rules": rules, "counts": {}, "cases": cases,
            "known_deviations": deviations or {}, "not_run": not_run or {}}


def _summary(by_client, *, target="embedded", version="4.0.8"):
    first = next(iter(by_client.values()))
    return {"target": target, "broker_version": version, "client": next(iter(by_client)), **first, "by_client": by_client}


KD_001 = {"backlog-after-seek#KD-001": {"id": "KD-001", "case": "backlog-after-seek", "rule": "PLS-BACKLOG-001",
                                        "reason": "msgBacklog after a seek", "evidence": "conformance/evidence/x"}}


def test_every_rule_passing_reads_as_conforming_and_counts_each_figure():
    doc = _summary({
        "python": _client({"PLS-ACK-001": "PASS", "PLS-NACK-001": "PASS", "PLS-ACK-006": "NOT_APPLICABLE",
                           "PLS-TXN-001": "NOT_EXERCISED", "PLS-GO-001": "NOT_APPLICABLE"}, {"a": "PASS", "b": "PASS"}),
        "java": _client({"PLS-ACK-001": "PASS", "PLS-NACK-001": "NOT_APPLICABLE", "PLS-ACK-006": "PASS",
                         "PLS-TXN-001": "NOT_EXERCISED", "PLS-GO-001": "NOT_APPLICABLE"}, {"a": "PASS", "c": "PASS"}),
    })
    assert conformance_sentence(doc) == ("broker 4.0.8 conforms to 3 of 4 applicable rules (clients python, java); "
                                         "0 failing; 0 known deviations; 0 inconclusive; 1 not exercised")
    assert summary_headline(doc).ok


def test_a_rule_failing_only_by_a_known_deviation_is_a_known_deviation_not_a_failure():
    doc = _summary({
        "python": _client({"PLS-BACKLOG-001": "FAIL", "PLS-ACK-001": "PASS"},
                          {"backlog-after-seek": "FAIL", "ack": "PASS"}, KD_001),
        "java": _client({"PLS-BACKLOG-001": "PASS", "PLS-ACK-001": "PASS"}, {"backlog-after-seek": "PASS", "ack": "PASS"}),
    })
    assert conformance_sentence(doc) == ("broker 4.0.8 conforms to 1 of 2 applicable rules (clients python, java); "
                                         "0 failing; 1 known deviation (KD-001); 0 inconclusive; 0 not exercised")


def test_a_run_whose_every_case_errored_does_not_read_as_conforming():
    doc = _summary({"python": _client({"PLS-ACK-001": "NOT_EXERCISED", "PLS-NACK-001": "NOT_EXERCISED",
                                       "PLS-ACK-006": "NOT_APPLICABLE"},
                                      {"a": "ERROR", "b": "ERROR", "c": "ERROR"})})
    sentence = conformance_sentence(doc)
    assert sentence == "broker 4.0.8: 0 of 2 applicable rules judged (clients python): 3 cases errored"
    assert "conforms" not in sentence
    assert not summary_headline(doc).ok


def test_a_real_failure_with_one_client_only_counts_as_failing():
    doc = _summary({
        "python": _client({"PLS-ACK-001": "PASS", "PLS-NACK-001": "INDETERMINATE", "PLS-SEEK-001": "PASS"},
                          {"a": "PASS", "n": "INDETERMINATE"}),
        "java": _client({"PLS-ACK-001": "FAIL", "PLS-NACK-001": "NOT_APPLICABLE", "PLS-SEEK-001": "PASS"},
                        {"a": "FAIL"}),
    })
    assert conformance_sentence(doc) == ("broker 4.0.8 conforms to 1 of 3 applicable rules (clients python, java); "
                                         "1 failing (PLS-ACK-001); 0 known deviations; 1 inconclusive; 0 not exercised")


def test_a_deviation_excuses_only_the_client_it_was_recorded_for():
    # KD-001 excused the python FAIL; java FAILed the same rule with nothing to excuse it
    doc = _summary({
        "python": _client({"PLS-BACKLOG-001": "FAIL"}, {"backlog-after-seek": "FAIL"}, KD_001),
        "java": _client({"PLS-BACKLOG-001": "FAIL"}, {"backlog-after-seek": "FAIL"}),
    })
    assert conformance_sentence(doc) == ("broker 4.0.8 conforms to 0 of 1 applicable rules (clients python, java); "
                                         "1 failing (PLS-BACKLOG-001); 0 known deviations; 0 inconclusive; 0 not exercised")


def test_a_case_that_failed_with_no_rule_failing_and_errors_beside_verdicts_are_named():
    doc = _summary({"python": _client({"PLS-ACK-001": "PASS", "PLS-SEEK-001": "PASS"},
                                      {"a": "PASS", "expect-broken": "FAIL", "crashed": "ERROR"},
                                      not_run={"late": "broker died at case crashed"})})
    assert conformance_sentence(doc) == ("broker 4.0.8 conforms to 2 of 2 applicable rules (clients python); 0 failing; "
                                         "0 known deviations; 0 inconclusive; 0 not exercised; "
                                         "1 case failed beyond the rules' verdicts (expect-broken); 1 case errored; "
                                         "1 case not run")


def test_the_model_target_and_a_single_client_summary_without_by_client():
    doc = {"target": "model", "broker_version": "4.0", "client": "python",
           "rules": {"PLS-ACK-001": "PASS", "PLS-NACK-001": "NOT_EXERCISED"}, "cases": {"a": "PASS"}, "known_deviations": {}}
    assert conformance_sentence(doc) == ("model 4.0 conforms to 1 of 2 applicable rules (clients python); 0 failing; "
                                         "0 known deviations; 0 inconclusive; 1 not exercised")


def test_the_corpus_form_leaves_the_model_columns_out_and_says_errors_are_not_in_the_corpus():
    combos = [{"target": "model", "broker_version": "4.0", "client": "cpp"},
              {"target": "embedded", "broker_version": "4.0.8", "client": "python"},
              {"target": "embedded", "broker_version": "4.0.8", "client": "java"}]
    matrix = {"model|4.0|cpp": {"PLS-ACK-001": "FAIL", "PLS-BACKLOG-001": "PASS", "PLS-NACK-001": "PASS"},
              "embedded|4.0.8|python": {"PLS-ACK-001": "PASS", "PLS-BACKLOG-001": "FAIL", "PLS-NACK-001": "NOT_EXERCISED"},
              "embedded|4.0.8|java": {"PLS-ACK-001": "PASS", "PLS-BACKLOG-001": "PASS", "PLS-NACK-001": "NOT_APPLICABLE"}}
    excused = {"embedded|4.0.8|python": {"PLS-BACKLOG-001": ["KD-001"]}}
    assert corpus_sentence(combos, matrix, excused) == (
        "broker 4.0.8 conforms to 1 of 3 applicable rules (clients python, java); 0 failing; "
        "1 known deviation (KD-001); 0 inconclusive; 1 not exercised")
    nothing = [combos[0], {"target": "embedded", "broker_version": "4.0.8", "client": "python"}]
    empty = {"embedded|4.0.8|python": {"PLS-ACK-001": "NOT_EXERCISED"}}
    assert corpus_sentence(nothing, empty) == ("broker 4.0.8: 0 of 1 applicable rules judged (clients python): the corpus "
                                               "does not record errored cases (the run's summary.json does)")
