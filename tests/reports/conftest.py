"""Fixtures for the report tests: the same local SparkSession as ``tests/spark/conftest.py``
(``local[2]``, 2 shuffle partitions, no UI), and ``report_dir``: one report, built once through
the report command over a small generated corpus, shared by every test here."""

from __future__ import annotations


import pytest


@pytest.fixture(scope="session")
def spark():
    from spark_reports.jobs.common import session

    spark_session = session("local[2]", app="pulsar-conformance-tests", shuffle_partitions=2, driver_memory="1g", parallelism=2)
    yield spark_session
    spark_session.stop()


@pytest.fixture(scope="session")
def report_dir(spark, tmp_path_factory):
    """A report over a small generated corpus (seeded, with injected divergences), built once
    through the report command; returns (report folder, the corpus manifest)."""
    from spark_reports.generate import GenerateConfig, generate
    from spark_reports.jobs import report

    corpus = tmp_path_factory.mktemp("report-corpus")
    manifest = generate(corpus, GenerateConfig(rows=30_000, seed=5, sporadic_rate=0.01))
    out = tmp_path_factory.mktemp("report") / "out"
    out.mkdir()
    (out / "old.txt").write_text("a previous report, replaced only once the new one is complete")
    assert report.main(["--outcomes", str(corpus), "--out", str(out), "--quiet"]) == 0
    return out, manifest
