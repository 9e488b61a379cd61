"""The client dimension in the Spark transforms and the report data: a corpus with rows for all
three clients of the main job (python, java, and mixed cross-client traces), from
``spark_reports.samples``, whose verdicts are known by construction."""

from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from reference_model.rules import active_rules
from spark_reports import transforms as T
from spark_reports.jobs import report
from spark_reports.jobs.common import read_corpus
from spark_reports.samples import EXPECTED, write_sample_corpus

CLIENTS = ("python", "java", "mixed")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return write_sample_corpus(tmp_path_factory.mktemp("clients-corpus"))


@pytest.fixture(scope="module")
def df(spark, corpus):
    return read_corpus(spark, corpus)


@pytest.fixture(scope="module")
def data(spark, corpus):
    return report.collect_report_data(spark, corpus)


def test_the_corpus_has_broker_and_model_rows_for_every_client(df):
    combos = {(r.target, r.broker_version, r.client) for r in df.select("target", "broker_version", "client").distinct().collect()}
    assert combos == {("embedded", "4.0.8", c) for c in CLIENTS} | {("model", "4.0", k) for k in ("cpp", "java", "mixed")}


def test_client_kind_of_keeps_mixed_apart(spark):
    rows = spark.createDataFrame([(c,) for c in ("python", "java", "mixed", "Mixed ", "cpp", None)], "c string")
    got = [r.kind for r in rows.select(T.client_kind_of(F.col("c")).alias("kind")).collect()]
    assert got == ["cpp", "java", "mixed", "mixed", "cpp", "cpp"]


def test_each_client_is_paired_with_its_own_model_rows(df):
    diff = T.model_vs_broker(df).collect()
    assert {r.client_kind for r in diff if r.client == "mixed"} == {"mixed"}
    assert not [r for r in diff if r.diff == T.NO_PREDICTION]
    differing = sorted((r.client, r.trace_id, r.step) for r in diff if r.diff == T.DIFFERS)
    assert differing == [("java", "seek-publish-time", 16), ("java", "seek-publish-time", 17),
                         ("mixed", "cross-cumulative-ack-shared", 7)]
    assert T.unobserved_steps(df).count() == 0


def test_a_mixed_broker_row_is_not_predicted_by_a_python_model_row(spark):
    from spark_reports.schemas import CORPUS_STRUCT

    def row(target, version, client, observation):
        r = {f.name: None for f in CORPUS_STRUCT.fields}
        r.update(run_id="r1", trace_id="t", step=1, op="receive", target=target, broker_version=version, client=client,
                 profile="{}", rule_ids=[], anomalies=[], failed_rule_ids=[], indeterminate_rule_ids=[],
                 verdict="PASS", outcome_status="ok", observation=observation, observation_key=observation)
        return tuple(r[f.name] for f in CORPUS_STRUCT.fields)

    frame = spark.createDataFrame([
        row("model", "4.0", "cpp", "a"),        # the python prediction for trace t
        row("model", "4.0", "mixed", "b"),      # the cross-client prediction for trace t
        row("embedded", "4.0.8", "python", "a"),
        row("embedded", "4.0.8", "mixed", "b"),
    ], CORPUS_STRUCT)
    got = {(r.client, r.client_kind): r.diff for r in T.model_vs_broker(frame).collect()}
    assert got == {("python", "cpp"): T.SAME, ("mixed", "mixed"): T.SAME}  # one pairing each, never crossed


def test_rule_verdicts_and_witnesses_per_client(df):
    verdicts = {(r.client, r.rule_id): r.verdict for r in T.rule_verdicts(T.summarise(T.broker_rows(df))).collect()}
    assert {k for k, v in verdicts.items() if v == "FAIL"} == EXPECTED["fail"]
    assert {k for k, v in verdicts.items() if v == "PASS"} == EXPECTED["pass"]
    witnesses = {(w.client, w.rule_id): w for w in T.minimal_witnesses(df).collect()}
    assert set(witnesses) == EXPECTED["fail"]
    w = witnesses[("mixed", "PLS-ACK-003")]
    assert (w.trace_id, w.step, w.length, list(w.anomalies)) == ("cross-cumulative-ack-shared", 7, 11, ["wrong-value"])
    trend = {(r.client, r.target): (r.traces, r.failing_traces) for r in T.trend_by_run(df).collect()}
    assert trend[("mixed", "embedded")] == (2, 1) and trend[("python", "embedded")] == (3, 0)
    assert trend[("mixed", "model")] == (2, 0)


def test_rule_matrix_applies_every_rule_to_mixed_and_splits_coverage_by_client(data):
    matrix = report.rule_matrix(data)
    cell = lambda client, rule: matrix["matrix"][f"embedded|4.0.8|{client}"][rule]  # noqa: E731
    for client, rule in EXPECTED["fail"]:
        assert cell(client, rule) == "FAIL"
    for client, rule in EXPECTED["pass"]:
        assert cell(client, rule) == "PASS"
    # a cross-client trace has handles of both clients: a rule of either applies to it
    # (every Apache rule: a vendor's own rules, PLS-TAG-001, apply only under its profile)
    vendor_only = {r.id for r in active_rules() if "apache" not in r.applies_to.vendors}
    assert vendor_only and all(matrix["matrix"]["embedded|4.0.8|mixed"][r] == "NOT_APPLICABLE" for r in vendor_only)
    assert "NOT_APPLICABLE" not in [v for r, v in matrix["matrix"]["embedded|4.0.8|mixed"].items() if r not in vendor_only]
    assert cell("mixed", "PLS-NACK-004") == cell("mixed", "PLS-NACK-001") == "NOT_EXERCISED"
    assert cell("python", "PLS-NACK-004") == "NOT_APPLICABLE" and cell("java", "PLS-NACK-001") == "NOT_APPLICABLE"
    # the model's mixed column too: it is the reference for the cross-client traces
    assert matrix["matrix"]["model|4.0|mixed"]["PLS-ACK-003"] == "PASS"
    by_client = matrix["coverage"]["by_client"]
    assert set(by_client) == set(CLIENTS)
    for client in CLIENTS:
        mine = {r for c, r in EXPECTED["pass"] | EXPECTED["fail"] if c == client}
        assert set(by_client[client]["exercised_rules"]) == mine
        assert by_client[client]["failing_rules"] == sorted(r for c, r in EXPECTED["fail"] if c == client)
    assert by_client["mixed"]["applicable"] == len(active_rules()) - len(vendor_only) > by_client["java"]["applicable"]
    assert matrix["failing_rules"] == sorted(r for _, r in EXPECTED["fail"])


def test_witness_rows_cover_every_failing_client_with_the_model_prediction(data):
    from reports.xunit2 import model_events, witness_events

    for w in data["witnesses"]:
        if w["target"] == "model":
            continue
        events, predicted = witness_events(data, w), model_events(data, w)
        assert events and len(predicted) == len(events), (w["client"], w["rule_id"])
        assert {r["client"] for r in predicted} == {{"python": "cpp"}.get(w["client"], w["client"])}


def test_summary_json_per_client_and_the_client_matrix_from_the_corpus(data):
    from reports import client_matrix

    matrix = report.rule_matrix(data)
    summary = report.summary_json(data, matrix)
    assert set(summary["by_client"]) == set(CLIENTS)
    assert summary["rules"]["PLS-ACK-003"] == "FAIL" and summary["by_client"]["python"]["rules"]["PLS-ACK-003"] != "FAIL"
    derived = report.client_summaries(data, matrix)
    assert sorted(d["client"] for d in derived) == sorted(CLIENTS)
    cm = client_matrix.build(derived)
    assert cm.clients == CLIENTS
    assert cm.row("Consumer \u203a ACK \u203a NACK Backoff").cell("java").verdict == "PASS"
    assert cm.row("Consumer \u203a Seek \u203a by timestamp").cell("java").verdict == "FAIL"
    assert cm.row("Producer \u203a Sync | Async Send").cell("mixed").verdict == "PASS"
