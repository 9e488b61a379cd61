"""A session-scoped local SparkSession for the transform tests: ``local[2]``, 2 shuffle
partitions, no UI. The jobs create their own session in ``main``; a test calling ``main`` gets
this one back from ``getOrCreate``."""

from __future__ import annotations


import pytest


@pytest.fixture(scope="session")
def spark():
    from spark_reports.jobs.common import session

    spark_session = session("local[2]", app="pulsar-conformance-tests", shuffle_partitions=2, driver_memory="1g", parallelism=2)
    yield spark_session
    spark_session.stop()
