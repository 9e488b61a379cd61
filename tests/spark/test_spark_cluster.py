"""The distributed commands on a real Spark standalone cluster: a master and two workers on loopback,
started from pyspark's own distribution (``spark_reports.standalone``), driven by the same commands
as local mode (issue 20).

- ``fuzz --target model --engine spark --spark-master spark://...``: executors generate, run the
  model, judge and write their corpus parts; the corpus equals, row for row (run id aside), the one
  the process pool writes for the same seeds. (That Spark's local mode writes the same corpus as the
  local engine is tests/spark/test_spark_engine.py's: one Spark run fewer here.)
- ``report --spark-master spark://...`` over that corpus: the same summary as in local mode.
- ``rejudge --engine spark`` of the suite's recorded histories: the same verdicts as locally.

The campaign of at least 10 M model-judged ops is ``benchmarks/spark_cluster_fuzz.py`` (minutes, not
for CI; docs/performance.md has its figures).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.corpus import corpus_digest

# The extended tier (docs/ci.md): a master, two workers and two 1,000-trace fuzzes; the gate runs the same commands in
# Spark's local mode (tests/spark/test_spark_engine.py)
pytestmark = pytest.mark.extended

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES, SEED = 1000, 20  # two chunks of 500: one per executor


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    from spark_reports.standalone import LoopbackCluster

    with LoopbackCluster(tmp_path_factory.mktemp("spark-cluster"), workers=2) as running:
        assert running.alive_workers() == 2
        yield running


def _cli(env, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "pulsar_conformance", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)
    return done


def _fuzz(env, out: Path, *engine: str) -> dict:
    done = _cli(env, "fuzz", "--target", "model", "--examples", str(EXAMPLES), "--seed", str(SEED), "--out", str(out),
                "--no-progress", *engine)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads((out / "summary.json").read_text())


COUNTS = ("examples", "passed", "indeterminate", "failed", "model_failed", "ops", "signatures")


@pytest.fixture(scope="module")
def fuzzed(cluster, tmp_path_factory):
    base = tmp_path_factory.mktemp("fuzz")
    outs = {"cluster": base / "cluster", "processes": base / "processes"}
    summaries = {
        "cluster": _fuzz(cluster.env, outs["cluster"], "--engine", "spark", "--spark-master", cluster.master_url),
        "processes": _fuzz(cluster.env, outs["processes"], "--workers", "2"),
    }
    return outs, summaries


def test_fuzz_on_the_cluster_equals_the_local_engines(fuzzed):
    outs, summaries = fuzzed
    counts = {name: {k: s[k] for k in COUNTS} for name, s in summaries.items()}
    assert counts["cluster"]["examples"] == EXAMPLES and counts["cluster"]["ops"] > 10 * EXAMPLES
    assert counts["cluster"] == counts["processes"]
    digests = {name: corpus_digest(out / "corpus") for name, out in outs.items()}
    assert digests["cluster"][0] == counts["cluster"]["ops"]  # one row per judged op
    assert digests["cluster"] == digests["processes"]
    # the executors wrote the parts: one per chunk of 500 seeds, under the run's id
    parts = sorted(p.name for p in (outs["cluster"] / "corpus").glob("part-*.parquet"))
    assert len(parts) == -(-EXAMPLES // 500) and all(f"-{summaries['cluster']['run_id']}-c" in p for p in parts)


def _report(env, corpus: Path, out: Path, master: str) -> dict:
    done = _cli(env, "report", "--outcomes", str(corpus), "--out", str(out), "--spark-master", master, "--quiet")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    return json.loads((out / "summary.json").read_text())


def test_the_report_on_the_cluster_equals_local_mode(cluster, fuzzed, tmp_path):
    outs, _ = fuzzed
    corpus = outs["cluster"] / "corpus"
    on_cluster = _report(cluster.env, corpus, tmp_path / "cluster", cluster.master_url)
    local = _report(cluster.env, corpus, tmp_path / "local", "local[2]")
    assert on_cluster["rows"] == corpus_digest(corpus)[0]
    assert on_cluster == local
    html = (tmp_path / "cluster" / "index.html").read_text()
    assert cluster.master_url in html  # the report says where it was computed


def test_rejudge_on_the_cluster_equals_local(cluster, tmp_path):
    evidence = ROOT / "conformance" / "evidence"

    def rejudge(out: Path, *engine: str) -> dict:
        done = _cli(cluster.env, "rejudge", "--corpus", str(evidence), "--out", str(out), *engine)
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]  # every FAIL there is a known deviation
        doc = json.loads((out / "rejudge.json").read_text())
        return {k: doc[k] for k in ("histories", "verdicts", "errors", "changed", "excused", "failing", "not_recorded")}

    on_cluster = rejudge(tmp_path / "cluster", "--engine", "spark", "--spark-master", cluster.master_url)
    local = rejudge(tmp_path / "local")
    assert on_cluster["histories"] == len(list(evidence.rglob("*.history.jsonl"))) > 100
    assert on_cluster == local
    assert corpus_digest(tmp_path / "cluster" / "corpus") == corpus_digest(tmp_path / "local" / "corpus")
