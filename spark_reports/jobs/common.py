"""The Spark session and the corpus reader shared by the jobs.

Choices (tuned on 2 cores for ``benchmarks/spark_report_10m.py``): local mode ``local[2]`` unless
``--spark-master URL`` says otherwise (the same code runs on a cluster); few shuffle partitions
with adaptive execution coalescing them; Arrow for collecting results; the UI off.
"""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from pyspark.sql import DataFrame, SparkSession

from spark_reports.schemas import CORPUS_STRUCT, check_corpus_folder, require_corpus_schema

DEFAULT_MASTER = "local[2]"


def session(master: str | None = None, *, app: str = "pulsar-conformance-report", shuffle_partitions: int = 8,
            driver_memory: str = "4g", parallelism: int | None = None) -> SparkSession:
    """A Spark session for ``master`` (default ``local[2]``); reuses a running one.

    The only place a session is made (jobs and tests alike). In local mode the driver binds to
    127.0.0.1 and advertises it: the suite's network traffic stays on loopback, whatever the
    machine's hostname resolves to; so does a standalone master on loopback (``spark://127.0.0.1:PORT``).
    Any other cluster master URL is used as given.
    """
    master = master or DEFAULT_MASTER
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # a master on this machine's loopback (the cluster test's) gets a driver on loopback too: the
    # executors connect back to the driver, and on loopback that address is 127.0.0.1
    local = master.startswith("local") or master.startswith(("spark://127.0.0.1:", "spark://localhost:"))
    if local:
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # read by the JVM launcher
    builder = (
        SparkSession.builder.appName(app)
        .master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.adaptive.enabled", "true")
        .config("spark.sql.adaptive.coalescePartitions.enabled", "true")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.memory", driver_memory)
        .config("spark.sql.files.maxPartitionBytes", str(64 * 1024 * 1024))
    )
    if local:
        builder = builder.config("spark.driver.bindAddress", "127.0.0.1").config("spark.driver.host", "127.0.0.1")
    if parallelism is not None:
        builder = builder.config("spark.default.parallelism", str(parallelism))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@contextmanager
def spark_log_to(path: Path) -> Iterator[bool]:
    """While a session starts inside, the process's stderr (fd 2) goes to ``path``: the JVM it
    launches inherits it, so its launcher notes and log4j output (task failures with their stack
    traces) land there, not on the terminal. Yields whether no session ran before (the caller then
    owns the one it makes, and stops it); with one running, nothing is redirected."""
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        yield False
        return
    sys.stderr.flush()
    saved = os.dup(2)
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.dup2(log, 2)
        yield True
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(log)


def spark_jvms() -> set[int]:
    """The Spark JVMs this process launched and that still run (children running SparkSubmit;
    read from /proc, so empty where there is none)."""
    found = set()
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    me = str(os.getpid())
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if stat[1] == me and stat[0] != "Z" and b"SparkSubmit" in (entry / "cmdline").read_bytes():
                found.add(int(entry.name))
        except (OSError, IndexError):
            continue
    return found


def stop_session(spark: SparkSession | None, *, spare: set[int] = frozenset()) -> None:
    """Stop ``spark`` and make sure the JVM this process launched for it is gone. After an
    interrupt (Ctrl-C, SIGTERM) in the middle of a py4j call, or while the JVM was still starting,
    the gateway may not answer, and the JVM does not die with its parent; so every Spark JVM child
    of this process not in ``spare`` (those that ran before) is terminated, then killed."""
    import logging
    import signal
    import time
    import warnings

    from pyspark import SparkContext

    logging.getLogger("py4j").setLevel(logging.CRITICAL)  # a broken gateway's complaints
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if spark is not None:
                spark.stop()
    except Exception:  # noqa: BLE001 - the gateway is gone or broken: its process is still ours to end
        pass
    left = spark_jvms() - set(spare)
    for sig, wait_s in ((signal.SIGTERM, 15.0), (signal.SIGKILL, 5.0)):
        for pid in left:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + wait_s
        while left and time.monotonic() < deadline:
            for pid in list(left):
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done = pid
                if done == pid:
                    left.discard(pid)
            time.sleep(0.1)
    SparkContext._gateway = None  # its JVM is gone: a later session launches a new one
    SparkContext._jvm = None


def read_corpus(spark: SparkSession, corpus_dir: str | Path) -> DataFrame:
    """The corpus folder as a DataFrame with the v1 schema, after checking every part file
    (``CorpusError`` names a missing folder, a truncated file or another schema version)."""
    parts = check_corpus_folder(corpus_dir)
    df = spark.read.schema(CORPUS_STRUCT).parquet(*[str(p) for p in parts])
    return require_corpus_schema(df, source=str(corpus_dir))
