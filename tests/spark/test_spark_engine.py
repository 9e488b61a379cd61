"""``SparkEngine`` (spark_reports/distributed.py) in local mode: the fuzz's chunks and the rejudge's on
executors give the corpus the local engine gives; bad combinations are refused; executors running
other code are refused. The standalone-cluster twin is tests/spark/test_spark_cluster.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conformance.corpus import corpus_digest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def engine(spark):
    from spark_reports.distributed import SparkEngine

    with SparkEngine("local[2]") as running:  # the session fixture's: not stopped on leaving
        yield running


def test_fuzz_chunks_on_executors_equal_the_local_engine(engine, tmp_path):
    from conformance.fuzz.driver import fuzz_model_fast

    waits = []
    on_spark = fuzz_model_fast(examples=1200, seed=3, out_dir=tmp_path / "spark", run_id="s1", progress=False,
                               map_chunks=lambda f, jobs, on_wait: engine.map_chunks(f, jobs, on_wait=lambda: waits.append(1)))
    local = fuzz_model_fast(examples=1200, seed=3, out_dir=tmp_path / "local", run_id="l1", progress=False)
    assert (on_spark.examples, on_spark.ops, on_spark.passed, on_spark.signatures) == \
        (local.examples, local.ops, local.passed, local.signatures)
    assert corpus_digest(tmp_path / "spark" / "corpus") == corpus_digest(tmp_path / "local" / "corpus")
    assert len(list((tmp_path / "spark" / "corpus").glob("part-s1-c*.parquet"))) == 3  # one part per chunk


def test_a_resumed_spark_fuzz_runs_only_the_missing_chunks(engine, tmp_path):
    from conformance.fuzz.driver import fuzz_model_fast

    fuzz_model_fast(examples=1000, seed=4, out_dir=tmp_path / "a", run_id="r1", progress=False)
    first = sorted((tmp_path / "a" / "corpus").glob("part-r1-c000000-*.parquet"))
    for extra in (tmp_path / "a" / "corpus").glob("part-r1-c000001-*.parquet"):
        extra.unlink()  # as if interrupted after the first chunk
    ran = []

    def mapper(f, jobs, on_wait):
        ran.extend(j["chunk"] for j in jobs)
        return engine.map_chunks(f, jobs, on_wait=on_wait)

    resumed = fuzz_model_fast(examples=1000, seed=4, out_dir=tmp_path / "a", run_id="r1", progress=False, map_chunks=mapper)
    assert ran == [1] and resumed.examples == 1000 and resumed.skipped == 500
    assert sorted((tmp_path / "a" / "corpus").glob("part-r1-c000000-*.parquet")) == first
    fuzz_model_fast(examples=1000, seed=4, out_dir=tmp_path / "b", run_id="r2", progress=False)
    assert corpus_digest(tmp_path / "a" / "corpus") == corpus_digest(tmp_path / "b" / "corpus")


def test_rejudge_chunks_on_executors_equal_the_local_engine(engine, tmp_path):
    from conformance.rejudge import rejudge

    evidence = ROOT / "conformance" / "evidence"
    on_spark = rejudge(evidence, tmp_path / "spark", map_chunks=lambda f, jobs: engine.map_chunks(f, jobs), chunk=50)
    local = rejudge(evidence, tmp_path / "local", chunk=50)
    assert on_spark.histories == local.histories > 100
    assert (on_spark.verdicts, on_spark.excused, on_spark.failing, on_spark.errors) == \
        (local.verdicts, local.excused, local.failing, local.errors)
    assert corpus_digest(tmp_path / "spark" / "corpus") == corpus_digest(tmp_path / "local" / "corpus")


def test_an_executor_with_other_code_is_refused(spark, monkeypatch):
    from spark_reports import distributed

    monkeypatch.setattr(distributed, "code_digest", lambda: "not-the-executors")  # the driver's side only
    with pytest.raises(distributed.CodeMismatch, match="another pulsar-conformance than this driver"):
        with distributed.SparkEngine("local[2]"):
            pass


def test_a_chunk_that_raises_fails_the_command_with_its_error(engine, tmp_path):
    from conformance.rejudge import rejudge_chunk
    from spark_reports.distributed import ChunkFailed

    whole = {"run_id": "x", "corpus_dir": str(tmp_path), "chunk": 0, "paths": []}
    with pytest.raises(ChunkFailed, match=r"^a chunk failed on a Spark executor: KeyError: 'paths'$"):
        engine.map_chunks(rejudge_chunk, [whole, {k: v for k, v in whole.items() if k != "paths"}])


@pytest.mark.parametrize(("args", "message"), [
    (["fuzz", "--target", "embedded", "--engine", "spark"], "--engine spark runs the model's generated traces"),
    (["fuzz", "--spark-master", "local[2]"], "--spark-master needs --engine spark"),
    (["rejudge", "--corpus", ".", "--spark-master", "local[2]"], "--spark-master needs --engine spark"),
    (["fuzz", "--engine", "spark", "--workers", "2"], "with --engine spark the tasks run in the Spark master's"),
    (["rejudge", "--corpus", ".", "--engine", "spark", "--workers", "2"], "drop --workers"),
])
def test_options_that_do_not_go_together_are_refused(args, message):
    done = subprocess.run([sys.executable, "-m", "pulsar_conformance", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 2 and message in done.stderr, done.stderr
