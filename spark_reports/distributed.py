"""Per-trace work on Spark executors: generation, the model and the checker, one task per chunk.

``pulsar-conformance fuzz --target model --engine spark`` and ``pulsar-conformance rejudge
--engine spark`` plan chunks on the driver (a seed range, a list of history files) and hand them
to ``SparkEngine.map_chunks``: one RDD partition per chunk (``mapPartitions``), each task running
the same chunk function the local engine runs in its worker processes, and writing its corpus part
itself (``conformance.corpus``: temporary name, then rename). Only each chunk's small result (its
tally, the failing traces it found) comes back to the driver. So the corpus an executor writes
is the one a local worker would write for the same chunk: the same seeds give the same rows.

What a cluster must have (``docs/performance.md``, "Running on a cluster"):
- the same pulsar-conformance on every worker's Python (``PYSPARK_PYTHON``, default the driver's
  own interpreter path): ``SparkEngine`` runs one small task first that reports the executors'
  code digest (``code_digest``: the model, the checker and the generator) and refuses to go on,
  naming both, when it is not the driver's: a model of another version would judge differently;
- ``--out`` on a filesystem every executor sees at the same path (local disk on one machine, NFS
  or similar on a cluster): executors write their parts with plain file I/O.

Choices: results are collected in a background thread while the driver thread polls, so a
progress callback runs and Ctrl-C or SIGTERM (``conformance.interruption``) cancels the Spark
jobs at once; tasks are not retried (``spark.task.maxFailures`` stays Spark's default 4 on a
cluster, 1 in local mode), and a chunk function that raises fails the command with the executor's
error, never a partial result.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

CODE_PACKAGES = ("reference_model", "conformance")


def code_digest() -> str:
    """A digest of the Python sources of the model, the checker and the generator as this
    interpreter imports them (``CODE_PACKAGES``): equal on the driver and an executor exactly when
    both judge with the same code."""
    import importlib

    h = hashlib.sha256()
    for name in CODE_PACKAGES:
        root = Path(importlib.import_module(name).__file__).parent
        for path in sorted(root.rglob("*.py")):
            h.update(str(path.relative_to(root.parent)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _executor_identity(_: Iterable[Any]) -> list[tuple[str, str]]:
    import sys

    import conformance

    return [(code_digest(), f"{sys.executable} ({Path(conformance.__file__).parent})")]


class CodeMismatch(RuntimeError):
    """The executors run another pulsar-conformance than the driver."""


class SparkEngine:
    """A Spark session for per-chunk work (``with SparkEngine(master) as engine:``).

    ``master``: ``local[N]`` (default ``local[2]``), ``spark://HOST:PORT`` or any master URL
    Spark takes. On entering, the executors' code is compared with the driver's (``CodeMismatch``).
    The session is stopped on leaving when this engine started it.
    """

    def __init__(self, master: str | None = None, *, app: str = "pulsar-conformance-fuzz", log_path: Path | None = None):
        self.master = master
        self.app = app
        self.log_path = log_path
        self.spark: Any = None
        self._owned = False
        self._spare: set[int] = set()

    def __enter__(self) -> "SparkEngine":
        from contextlib import nullcontext

        from pyspark import SparkContext

        from spark_reports.jobs.common import session, spark_jvms, spark_log_to

        self._spare = spark_jvms()
        # a session already running (a test's, a notebook's) is borrowed, never stopped on leaving
        self._owned = SparkContext._active_spark_context is None
        redirect = spark_log_to(self.log_path) if self.log_path is not None else nullcontext()
        with redirect:
            self.spark = session(self.master, app=self.app, shuffle_partitions=2, driver_memory="1g")
        try:
            self._check_executors()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        from spark_reports.jobs.common import stop_session

        if self._owned and self.spark is not None:
            stop_session(self.spark, spare=self._spare)
        self.spark = None

    @property
    def parallelism(self) -> int:
        return max(1, int(self.spark.sparkContext.defaultParallelism))

    def _check_executors(self) -> None:
        sc = self.spark.sparkContext
        n = self.parallelism
        mine = code_digest()
        seen = set(sc.parallelize(range(n), n).mapPartitions(_executor_identity).collect())
        other = sorted(where for digest, where in seen if digest != mine)
        if other:
            raise CodeMismatch(
                f"the Spark executors run another pulsar-conformance than this driver (code digest {mine}): "
                f"{'; '.join(other)}. Install this same version on every worker's Python (PYSPARK_PYTHON), "
                "or run with --spark-master local[N]")

    def map_chunks(self, func: Callable[[dict[str, Any]], Any], jobs: Sequence[dict[str, Any]], *,
                   on_wait: Callable[[], None] | None = None, poll_s: float = 0.5) -> list[Any]:
        """``[func(job) for job in jobs]``, each job a task of its own on an executor (one partition
        per job, ``mapPartitions``); in the jobs' order. ``on_wait`` runs on the driver every
        ``poll_s`` while the tasks run (progress); an interrupt there cancels the Spark jobs."""
        from conformance.interruption import check

        if not jobs:
            return []
        sc = self.spark.sparkContext
        rdd = sc.parallelize(list(jobs), len(jobs)).mapPartitions(lambda part: [func(job) for job in part])
        box: dict[str, Any] = {}

        def collect() -> None:
            try:
                box["results"] = rdd.collect()
            except BaseException as err:  # noqa: BLE001 - handed to the driver thread, raised there
                box["error"] = err

        worker = threading.Thread(target=collect, name="spark-collect", daemon=True)
        worker.start()
        try:
            while worker.is_alive():
                worker.join(poll_s)
                check()
                if on_wait is not None:
                    on_wait()
        except BaseException:
            sc.cancelAllJobs()
            worker.join(30)
            raise
        if "error" in box:
            raise ChunkFailed(executor_error(box["error"])) from box["error"]
        return box["results"]


class ChunkFailed(RuntimeError):
    """A chunk function raised on an executor (the message is its exception's last line)."""


def executor_error(err: BaseException) -> str:
    """The Python exception an executor raised, as one line, out of the Java stack trace Spark wraps
    it in; the whole error when there is none."""
    text = str(err)
    marker = "PythonException: Traceback (most recent call last):"
    if marker not in text:
        return " ".join(text.split())[:500]
    python_part = text.split(marker, 1)[1].split("\n\tat ", 1)[0]
    last = [line.strip() for line in python_part.splitlines() if line.strip()][-1]
    return f"a chunk failed on a Spark executor: {last}"
