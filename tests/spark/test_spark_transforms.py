"""spark_reports.transforms on a handful of hand-written corpus rows (one rule per test)."""

from __future__ import annotations

import json

import pytest
from pyspark.sql import functions as F

from conformance.corpus import observation_key
from spark_reports import transforms as T
from spark_reports.schemas import CORPUS_STRUCT

_DEFAULT = {
    "run_id": "r1", "trace_id": "t", "step": 1, "op": "receive", "target": "model", "broker_version": "4.0",
    "client": "cpp", "client_version": "reference-model", "profile": "{}", "rule_ids": ["PLS-ACK-005"],
    "anomalies": [], "verdict": "PASS", "outcome_status": "ok", "observation": '{"status": "ok"}',
    "explanation": None, "t_start_ms": 0.0, "t_end_ms": 0.0,
}
_BROKER = {"target": "embedded", "broker_version": "4.0.8", "client": "python", "client_version": "3.13.0"}


def row(**kw):
    r = {**_DEFAULT, **kw}
    # unless a test says otherwise, every rule judged at a step had the step's verdict
    r.setdefault("failed_rule_ids", list(r["rule_ids"]) if r["verdict"] == "FAIL" else [])
    r.setdefault("indeterminate_rule_ids", list(r["rule_ids"]) if r["verdict"] == "INDETERMINATE" else [])
    r.setdefault("observation_key", None if r["observation"] is None else observation_key(json.loads(r["observation"])))
    return tuple(r[f.name] for f in CORPUS_STRUCT.fields)


def broker(**kw):
    return row(**{**_BROKER, **kw})


def msg(label, count=0):
    return json.dumps({"status": "ok", "value": {"message": {"payload": label, "redelivery_count": count}}}, sort_keys=True)


@pytest.fixture
def frame(spark):
    return lambda rows: spark.createDataFrame(rows, CORPUS_STRUCT)


def test_line_and_client_kind_mirror_the_model_profiles(spark):
    from reference_model.profiles import profile_for

    versions = ["3.0.12", "3.3.9", "4.0.8", "4.0", "4.1.2", "4.2.0", "3.x"]
    clients = ["python", "java", "cpp", "Java-4.0"]
    df = spark.createDataFrame([(v, c) for v in versions for c in clients], "v string, c string")
    got = {(r.v, r.c): (r.line, r.kind) for r in df.select("v", "c", T.line_of(F.col("v")).alias("line"),
                                                              T.client_kind_of(F.col("c")).alias("kind")).collect()}
    for (v, c), (line, kind) in got.items():
        p = profile_for(v, c)
        assert (line, kind) == (p.broker, p.client), (v, c)


def test_line_of_reads_odd_versions_as_the_releases_module_does(spark):
    """Spark's column expression and ``releases.model_line_or_text`` are one reading: a
    snapshot or vendor suffix keeps its line, a bare major 3 is 3.x, 2.10+ is 2.x and 5.* is 5.x,
    and what no model line covers (4.x spans two lines; before 2.10, garbage) is kept as written."""
    from reference_model import releases

    expected = {"4.0.8-SNAPSHOT": "4.0", "4.0.8.2": "4.0", " 4.1.2 ": "4.1", "3": "3.x", "3.X": "3.x",
                "4.x": "4.x", "4": "4", "5.0.0": "5.x", "2.10.1": "2.x", "2.9.0": "2.9.0", "abc": "abc", "": "4.0"}
    df = spark.createDataFrame([(v,) for v in expected] + [(None,)], "v string")
    got = {r.v: r.line for r in df.select("v", T.line_of(F.col("v")).alias("line")).collect()}
    assert got.pop(None) == "4.0"
    assert got == expected
    assert {v: releases.model_line_or_text(v) for v in expected} == expected


@pytest.mark.parametrize("exact", [False, True])
def test_model_vs_broker_pairs_null_safely_and_keeps_duplicates(frame, exact):
    rows = [
        row(step=1, observation=msg("m1")), row(step=2, observation=msg("m2")), row(step=3, observation=None),
        row(step=4, observation=None, profile=None),
        broker(step=1, observation=msg("m1")),                       # same
        broker(step=2, observation=msg("m2", 1), verdict="FAIL"),    # differs
        broker(step=3, observation=None),                            # null == null: same
        broker(step=4, observation=None, profile=None),              # null == null: same
        broker(step=5, observation=msg("m3")),                       # no model row
        broker(step=1, observation=msg("m1"), client="java"),        # java: no java model row
        broker(step=1, observation=msg("m1")),                       # a duplicate of the first broker row: kept
    ]
    out = T.model_vs_broker(frame(rows), exact=exact).orderBy("client", "step").collect()
    got = [(r.client, r.step, r.diff) for r in out]
    assert got == [("java", 1, "no_prediction"), ("python", 1, "same"), ("python", 1, "same"), ("python", 2, "differs"),
                   ("python", 3, "same"), ("python", 4, "same"), ("python", 5, "no_prediction")]
    assert len(out) == 7  # one output row per broker row
    if exact:
        assert out[3].model_observation == msg("m2")


def test_model_vs_broker_pairs_by_run_and_line(frame):
    rows = [
        row(run_id="r1", observation=msg("m1")), row(run_id="r2", observation=msg("mX")),
        row(run_id="r1", broker_version="4.1", observation=msg("m9")),
        broker(run_id="r1", observation=msg("m1")), broker(run_id="r2", observation=msg("m1")),
        broker(run_id="r1", broker_version="4.1.2", observation=msg("m1")),
    ]
    got = {(r.run_id, r.broker_version): r.diff for r in T.model_vs_broker(frame(rows)).collect()}
    assert got == {("r1", "4.0.8"): "same", ("r2", "4.0.8"): "differs", ("r1", "4.1.2"): "differs"}


def test_model_vs_broker_pairs_whatever_config_the_broker_reported(frame):
    """A live history's profile carries the broker's own ``broker_config`` (conformance/targets/pulsar.py);
    the model's row of the same trace has the trace's profile only. They pair all the same (issue 20:
    keyed on profile, every broker row of a real run had no prediction), and a Go row pairs with the
    Go model row, not the C++ one."""
    config = json.dumps({"broker_config": {"subscriptionKeySharedUseConsistentHashing": "true"}}, sort_keys=True)
    rows = [
        row(step=1, observation=msg("m1")), row(step=2, observation=msg("m2")),
        row(step=1, client="go", observation=msg("g1")),
        broker(step=1, observation=msg("m1"), profile=config),
        broker(step=2, observation=msg("m9"), profile=config, verdict="FAIL"),
        broker(step=1, client="go", client_version="go 0.19.0", observation=msg("g1"), profile=config),
    ]
    got = {(r.client, r.step): r.diff for r in T.model_vs_broker(frame(rows)).collect()}
    assert got == {("python", 1): "same", ("python", 2): "differs", ("go", 1): "same"}
    (r,) = T.with_model_observation(T.model_vs_broker(frame(rows)).filter("diff = 'differs'"), frame(rows)).collect()
    assert r.model_observation == msg("m2")


def test_version_vs_version_pairs_releases_that_report_different_configs(frame):
    rows = [
        broker(broker_version="3.3.6", step=1, observation=msg("m1"), profile='{"broker_config": {"a": "1"}}'),
        broker(broker_version="4.0.8", step=1, observation=msg("m1"), profile='{"broker_config": {"a": "1", "b": "2"}}'),
    ]
    (r,) = T.version_vs_version(frame(rows), "3.3.6", "4.0.8").collect()
    assert (r.step, r.changed) == (1, False)


def test_with_model_observation_fetches_the_prediction(frame):
    rows = [row(step=2, observation=msg("m2")), broker(step=2, observation=msg("m2", 1))]
    df = frame(rows)
    diff = T.model_vs_broker(df).filter("diff = 'differs'")
    (r,) = T.with_model_observation(diff, df).collect()
    assert (r.observation, r.model_observation) == (msg("m2", 1), msg("m2"))


def test_unobserved_steps_are_model_steps_without_a_broker_row(frame):
    rows = [row(step=s) for s in (1, 2, 3)] + [broker(step=s) for s in (1, 2)] + [row(step=1, client="java")]
    got = [(r.step, r.broker_version) for r in T.unobserved_steps(frame(rows)).collect()]
    assert got == [(3, "4.0.8")]  # the java model row has no java broker trace: not expected


def test_version_vs_version_compares_the_same_traces(frame):
    rows = [
        broker(broker_version="4.0.7", step=1, observation=msg("m1")),
        broker(broker_version="4.0.8", step=1, observation=msg("m1")),
        broker(broker_version="4.0.7", step=2, observation=msg("m2")),
        broker(broker_version="4.0.8", step=2, observation=msg("m2", 1), verdict="FAIL"),
        broker(broker_version="4.0.8", step=3, observation=msg("m3")),  # only on one version: left out
    ]
    out = {r.step: r for r in T.version_vs_version(frame(rows), "4.0.7", "4.0.8").collect()}
    assert sorted(out) == [1, 2]
    assert not out[1].changed and out[2].changed
    assert (out[2].base_verdicts, out[2].other_verdicts, out[2].other_fail_rows) == (["PASS"], ["FAIL"], 1)


def test_summarise_explodes_rules_and_anomalies(frame):
    rows = [
        broker(rule_ids=["PLS-A-001", "PLS-B-001"], anomalies=["lost-message"], verdict="FAIL"),
        broker(step=2, rule_ids=["PLS-A-001"]),
        broker(step=3, rule_ids=[]),  # judged nothing: not in the summary
        broker(step=4, rule_ids=["PLS-A-001"], verdict="INDETERMINATE"),
    ]
    got = {(r.rule_id, r.anomaly): (r.rows, r["pass"], r.fail, r.indeterminate) for r in T.summarise(frame(rows)).collect()}
    assert got == {("PLS-A-001", "lost-message"): (1, 0, 1, 0), ("PLS-B-001", "lost-message"): (1, 0, 1, 0),
                   ("PLS-A-001", None): (2, 1, 0, 1)}
    verdicts = {r.rule_id: r.verdict for r in T.rule_verdicts(T.summarise(frame(rows))).collect()}
    assert verdicts == {"PLS-A-001": "FAIL", "PLS-B-001": "FAIL"}


def test_flaky_traces_differ_across_runs(frame):
    rows = [
        broker(run_id="r1", trace_id="a"), broker(run_id="r2", trace_id="a", step=2, verdict="FAIL"),
        broker(run_id="r3", trace_id="a"),
        broker(run_id="r1", trace_id="b", verdict="FAIL"), broker(run_id="r2", trace_id="b", verdict="FAIL"),  # always fails
        broker(run_id="r1", trace_id="c"), broker(run_id="r2", trace_id="c"),
    ]
    (f,) = T.flaky_traces(frame(rows)).collect()
    assert (f.trace_id, f.runs, f.fail_runs, f.verdicts, f.first_fail_run) == ("a", 3, 1, ["FAIL", "PASS"], "r2")


def test_minimal_witness_is_the_shortest_failing_trace_ties_by_trace_id(frame):
    def trace(trace_id, n, fail_at, run="r1", rules=("PLS-A-001",)):
        return [broker(run_id=run, trace_id=trace_id, step=s, rule_ids=list(rules),
                       verdict="FAIL" if s == fail_at else "PASS", explanation="Let x. Then y." if s == fail_at else None)
                for s in range(1, n + 1)]

    rows = trace("long", 5, 2) + trace("zeta", 3, 3) + trace("beta", 3, 1, run="r2") + trace("beta", 3, 2, run="r1") \
        + trace("other-rule", 1, 1, rules=("PLS-B-001",)) + trace("passing", 1, 0)
    got = {r.rule_id: r for r in T.minimal_witnesses(frame(rows)).collect()}
    assert set(got) == {"PLS-A-001", "PLS-B-001"}
    w = got["PLS-A-001"]
    assert (w.trace_id, w.run_id, w.length, w.step, w.explanation) == ("beta", "r1", 3, 2, "Let x. Then y.")
    assert w.failing_instances == 4


def test_trend_and_timing_points(frame):
    rows = [
        row(step=2, op="receive", rule_ids=["PLS-NACK-001"], observation=msg("m1", 1), t_end_ms=300.0),
        broker(step=2, op="receive", rule_ids=["PLS-NACK-001", "PLS-ACK-005"], observation=msg("m1", 1), t_end_ms=280.0,
               verdict="FAIL", anomalies=["early-redelivery"]),
        broker(step=1, op="receive", rule_ids=["PLS-NACK-001"], observation=msg("m0", 0), t_end_ms=1.0),  # first delivery
        broker(run_id="r2", trace_id="u"),
    ]
    df = frame(rows)
    (p,) = T.timing_points(T.model_vs_broker(df)).collect()
    assert (p.rule_id, p.delta_ms, p.verdict) == ("PLS-NACK-001", -20.0, "FAIL")
    trend = {(r.run_id, r.target): (r.traces, r.failing_traces) for r in T.trend_by_run(df).collect()}
    assert trend == {("r1", "model"): (1, 0), ("r1", "embedded"): (1, 1), ("r2", "embedded"): (1, 0)}


def test_a_step_failing_one_rule_does_not_count_against_the_others(frame):
    df = frame([
        broker(rule_ids=["PLS-A-001", "PLS-B-001"], failed_rule_ids=["PLS-B-001"], anomalies=["lost-message"], verdict="FAIL"),
        broker(step=2, rule_ids=["PLS-A-001", "PLS-C-001"], indeterminate_rule_ids=["PLS-C-001"], verdict="INDETERMINATE"),
    ])
    verdicts = {r["rule_id"]: r["verdict"] for r in T.rule_verdicts(T.summarise(df)).collect()}
    assert verdicts == {"PLS-A-001": "PASS", "PLS-B-001": "FAIL", "PLS-C-001": "INDETERMINATE"}
    anomalies = {(r["rule_id"], r["anomaly"]) for r in T.summarise(df).collect()}
    assert ("PLS-A-001", "lost-message") not in anomalies and ("PLS-B-001", "lost-message") in anomalies
    assert {r["rule_id"] for r in T.failing_steps(df).collect()} == {"PLS-B-001"}


def test_a_passing_rule_is_counted_once_at_a_step_with_several_anomalies(frame):
    df = frame([broker(rule_ids=["PLS-A-001", "PLS-B-001"], failed_rule_ids=["PLS-B-001"],
                       anomalies=["lost-message", "wrong-value"], verdict="FAIL")])
    rows = {(r["rule_id"], r["anomaly"]): (r["rows"], r["pass"], r["fail"]) for r in T.summarise(df).collect()}
    assert rows[("PLS-A-001", None)] == (1, 1, 0)
    assert rows[("PLS-B-001", "lost-message")] == (1, 0, 1) and rows[("PLS-B-001", "wrong-value")] == (1, 0, 1)


def test_a_model_line_row_takes_the_one_release_its_model_rows_name(frame):
    """A run on 4.0.8: the cases' model rows name the release, the fuzz builder's only the line.
    One model column per release and client; a line with two releases, or none, stays a line."""
    df = frame([
        row(run_id="cases", broker_version="4.0.8"), row(run_id="fuzz", broker_version="4.0"),
        row(run_id="cases", broker_version="4.0.8", client="java"), row(run_id="fuzz", broker_version="4.0", client="java"),
        row(run_id="cases", broker_version="3.0.7"), row(run_id="cases", broker_version="3.3.6"),
        row(run_id="fuzz", broker_version="3.x"),
        row(run_id="fuzz", broker_version="4.1"),
        broker(run_id="cases", broker_version="4.0"),
    ])
    got = sorted((r.run_id, r.target, r.broker_version, r.client)
                 for r in T.model_release_of_line(df).select("run_id", "target", "broker_version", "client").collect())
    assert got == sorted([
        ("cases", "model", "4.0.8", "cpp"), ("fuzz", "model", "4.0.8", "cpp"),
        ("cases", "model", "4.0.8", "java"), ("fuzz", "model", "4.0.8", "java"),
        ("cases", "model", "3.0.7", "cpp"), ("cases", "model", "3.3.6", "cpp"), ("fuzz", "model", "3.x", "cpp"),
        ("fuzz", "model", "4.1", "cpp"),
        ("cases", "embedded", "4.0", "python"),  # a broker row is never renamed
    ])
    assert T.model_release_of_line(df).columns == df.columns


def test_divergent_rows_are_counted_with_the_rules_that_failed_at_the_step(frame):
    other = json.dumps({"status": "ok", "value": {"backlog": 1}})
    df = frame([
        row(trace_id="kd", step=1, rule_ids=["PLS-BACKLOG-001", "PLS-ACK-005"]),
        broker(trace_id="kd", step=1, rule_ids=["PLS-BACKLOG-001", "PLS-ACK-005"], verdict="FAIL",
               failed_rule_ids=["PLS-BACKLOG-001"], observation=other),
        row(trace_id="kd", step=2), broker(trace_id="kd", step=2, verdict="FAIL", observation=other),
        row(trace_id="ok", step=1), broker(trace_id="ok", step=1, observation=other),  # differs, allowed: not counted
        row(trace_id="ok", step=2), broker(trace_id="ok", step=2, verdict="FAIL"),  # same observation: not divergent
    ])
    got = sorted((r.trace_id, tuple(r.failed_rule_ids), r.rows) for r in T.divergent_rule_counts(T.model_vs_broker(df)).collect())
    assert got == [("kd", ("PLS-ACK-005",), 1), ("kd", ("PLS-BACKLOG-001",), 1)]
