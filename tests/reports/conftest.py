"""Fixtures for the report tests: the same local SparkSession as ``tests/spark/conftest.py``
(``local[2]``, 2 shuffle partitions, no UI), ``report_dir``: one report, built once through
the report command over a small generated corpus (clients python and java), shared by every test
here; and ``clients_report_dir``: one over the hand-written sample corpus with rows for all three
clients of the main job (python, java, mixed)."""

from __future__ import annotations


import pytest


@pytest.fixture(scope="session")
def spark():
    from spark_reports.jobs.common import session

    spark_session = session("local[2]", app="pulsar-conformance-tests", shuffle_partitions=2, driver_memory="1g", parallelism=2)
    yield spark_session
    spark_session.stop()


@pytest.fixture(scope="session")
def report_dir(spark, generated_corpus, built_once):
    """A report over the generated corpus (tests/conftest.py: seeded, with injected divergences), built
    once per run (``built_once``: shared by the xdist workers) through the report command; returns
    (report folder, the corpus manifest)."""
    from spark_reports.jobs import report

    corpus, manifest = generated_corpus

    def make(out):
        (out / "old.txt").write_text("a previous report, replaced only once the new one is complete")
        assert report.main(["--outcomes", str(corpus), "--out", str(out), "--quiet"]) == 0

    return built_once("report", make), manifest


@pytest.fixture(scope="session")
def clients_corpus(built_once):
    """The sample corpus with rows for every client: python, java and mixed (``spark_reports.samples``)."""
    from spark_reports.samples import write_sample_corpus

    return built_once("clients-corpus", write_sample_corpus)


@pytest.fixture(scope="session")
def clients_report_dir(spark, clients_corpus, built_once):
    """A report over the three-client sample corpus, built once per run through the report command; the
    client x feature matrix comes from the corpus's own verdicts."""
    from spark_reports.jobs import report

    def make(folder):
        assert report.main(["--outcomes", str(clients_corpus), "--out", str(folder / "out"), "--quiet"]) == 0

    return built_once("clients-report", make) / "out"
