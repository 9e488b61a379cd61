"""On a corpus generated from the model with injected divergences, the reports find exactly the
injected ones (rows, FAIL rows per rule, flaky traces); and the report command refuses bad input
without touching ``--out`` (its outputs are checked in ``tests/reports/``).
Not timed: the figures for 10 M rows are ``benchmarks/spark_report_10m.py``'s job."""

from __future__ import annotations

from collections import Counter

import pytest
from pyspark.sql import functions as F

from spark_reports import transforms as T
from spark_reports.generate import GenerateConfig, generate
from spark_reports.jobs import report
from spark_reports.jobs.common import read_corpus

ROWS = 100_000  # tests/conftest.py's generated_corpus: a few runs of the base block (31 675 rows on 2 Dec 2026)


@pytest.fixture(scope="module")
def corpus(generated_corpus):
    return generated_corpus


def test_the_generator_writes_exactly_the_rows_asked_with_injections(corpus):
    out, manifest = corpus
    import pyarrow.parquet as pq

    assert sum(pq.ParquetFile(p).metadata.num_rows for p in out.glob("part-*.parquet")) == ROWS == manifest["rows"]
    # injections go into whole runs of the case block, which grows with the cases: 100,000 rows held 20 on 5 Dec 2026
    # (with 11 more cases than the day before, which held more); the point is that there are many, of several kinds
    assert manifest["expected"]["injections"] >= 10
    assert len(manifest["persistent"]) == 3
    kinds = {i["mutation"] for i in manifest["injections"]}
    assert len(kinds) >= 4 and "redelivery-count+1" in kinds, kinds  # several kinds of divergence, drawn by seed



def test_the_generator_is_seeded(tmp_path):
    from conformance.case_files import discover_cases

    cases = discover_cases()[:8]  # a few cases keep this quick
    config = GenerateConfig(rows=3000, seed=3, sporadic_rate=0.2)
    one = generate(tmp_path / "one", config, cases=cases)
    two = generate(tmp_path / "two", config, cases=cases)
    assert one["injections"] == two["injections"] and one["injections"]
    other = generate(tmp_path / "other", GenerateConfig(rows=3000, seed=4, sporadic_rate=0.2), cases=cases)
    assert other["injections"] != one["injections"]


def test_the_report_finds_exactly_the_injected_divergences(spark, corpus):
    out, manifest = corpus
    exp = manifest["expected"]
    df = read_corpus(spark, out)
    # divergent rows: the changed observations, by (run, trace, version, client, step)
    not_same = T.model_vs_broker(df).filter(F.col("diff") != T.SAME).collect()
    assert not [r for r in not_same if r.diff == T.NO_PREDICTION]
    found = {(r.run_id, r.trace_id, r.broker_version, r.client, r.step) for r in not_same}
    injected = {(i["run_id"], i["trace_id"], i["broker_version"], i["client"], i["step"])
                for i in manifest["injections"] if i["observation_changed"]}
    assert found == injected and len(not_same) == exp["divergent_rows"]
    # FAIL rows, in total and per rule
    fails = T.failing_steps(df).select("run_id", "trace_id", "broker_version", "client", "step", "rule_id").collect()
    assert len({(r.run_id, r.trace_id, r.broker_version, r.client, r.step) for r in fails}) == exp["fail_rows"]
    assert dict(Counter(r.rule_id for r in fails)) == exp["fail_rows_by_rule"]
    # the summary: a FAIL row counts once per rule it judged and anomaly it names
    per_anomaly: Counter[str] = Counter()
    for i in manifest["injections"]:
        for f in i["fails"]:
            for a in f["anomalies"]:
                per_anomaly[a] += len(f["rule_ids"])
    summary = Counter()
    for r in T.summarise(df).filter(F.col("fail") > 0).collect():
        summary[r.anomaly] += r.fail
    assert dict(summary) == dict(per_anomaly)
    # flaky traces
    flaky = sorted([r.trace_id, r.target, r.broker_version, r.client, r.profile] for r in T.flaky_traces(df).collect())
    assert flaky == exp["flaky_traces"]
    # every failing rule has a witness on every (version, client) where it failed
    witnesses = {(w.rule_id, w.broker_version, w.client) for w in T.minimal_witnesses(df).collect()}
    failing = {(r, i["broker_version"], i["client"]) for i in manifest["injections"] for f in i["fails"] for r in f["rule_ids"]}
    assert witnesses == failing


def test_bad_input_is_refused_naming_the_file_and_leaves_out_alone(spark, corpus, tmp_path, capsys):
    out, _ = corpus
    dest = tmp_path / "report"
    dest.mkdir()
    (dest / "old.txt").write_text("previous report")
    assert report.main(["--outcomes", str(tmp_path / "missing"), "--out", str(dest), "--quiet"]) == 2
    assert "no such corpus folder" in capsys.readouterr().err
    bad = tmp_path / "bad"
    bad.mkdir()
    part = next(out.glob("part-*.parquet"))
    (bad / part.name).write_bytes(part.read_bytes()[:5000])
    assert report.main(["--outcomes", str(bad), "--out", str(dest), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert part.name in err and "truncated" in err
    import pyarrow.parquet as pq

    from conformance.corpus import VERSION_KEY

    table = pq.read_table(part)
    (bad / part.name).unlink()
    pq.write_table(table.replace_schema_metadata({VERSION_KEY: b"1"}), bad / "part-v1-000000.parquet")
    assert report.main(["--outcomes", str(bad), "--out", str(dest), "--quiet"]) == 2
    assert "part-v1-000000.parquet: corpus schema version 1, this reader knows 2" in capsys.readouterr().err
    assert [p.name for p in dest.iterdir()] == ["old.txt"]
    assert not list(tmp_path.glob(".report.*"))
