"""A Spark standalone cluster on loopback, from pyspark's own distribution: one master, N workers.

For the cluster test (``tests/spark/test_spark_cluster.py``) and the cluster campaign
(``benchmarks/spark_cluster_fuzz.py``): the same commands a user points at their own cluster
(``--spark-master spark://HOST:7077``) run here against a real master and real worker JVMs, each
worker starting its executors and their Python workers as a cluster would. Every process binds
127.0.0.1; logs and the workers' scratch folders go under the folder given.

Nothing here is needed to use a cluster: ``SparkEngine`` and the report take any master URL.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from fixtures.ports import free_port


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


class ClusterStartError(RuntimeError):
    """The master or a worker did not come up (the message names the log to read)."""


class LoopbackCluster:
    """``with LoopbackCluster(folder, workers=2) as cluster:`` then ``cluster.master_url``
    (``spark://127.0.0.1:PORT``); ``cluster.env`` is what a driver process needs (loopback, the
    same Python for the executors)."""

    def __init__(self, folder: Path, *, workers: int = 2, cores_per_worker: int = 1, memory_per_worker: str = "2g",
                 start_timeout_s: float = 90.0):
        self.folder = Path(folder)
        self.workers = workers
        self.cores_per_worker = cores_per_worker
        self.memory_per_worker = memory_per_worker
        self.start_timeout_s = start_timeout_s
        self.port = free_port()
        self.ui_port = free_port()
        self._procs: list[subprocess.Popen] = []
        self._logs: list[Any] = []

    @property
    def master_url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1",
                "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable,
                "SPARK_LOG_DIR": str(self.folder / "logs"), "SPARK_WORKER_DIR": str(self.folder / "work")}

    def _start(self, name: str, *args: str) -> None:
        log = (self.folder / f"{name}.log").open("wb")
        self._logs.append(log)
        cmd = [str(spark_home() / "bin" / "spark-class"), *args]
        self._procs.append(subprocess.Popen(cmd, env=self.env, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True))

    def alive_workers(self) -> int:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as r:
                doc = json.load(r)
        except OSError:
            return -1
        return sum(1 for w in doc.get("workers", []) if w.get("state") == "ALIVE")

    def __enter__(self) -> "LoopbackCluster":
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "work").mkdir(exist_ok=True)
        self._start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                    "--port", str(self.port), "--webui-port", str(self.ui_port))
        try:
            self._wait(lambda: self.alive_workers() >= 0, "the master", self.folder / "master.log")
            for i in range(self.workers):
                self._start(f"worker-{i}", "org.apache.spark.deploy.worker.Worker", self.master_url,
                            "--host", "127.0.0.1", "--webui-port", str(free_port()), "--cores", str(self.cores_per_worker),
                            "--memory", self.memory_per_worker, "--work-dir", str(self.folder / "work" / f"w{i}"))
            self._wait(lambda: self.alive_workers() >= self.workers, f"{self.workers} workers", self.folder / "worker-0.log")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def _wait(self, ready: Any, what: str, log: Path) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while not ready():
            dead = [p for p in self._procs if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                why = f"exited with {dead[0].returncode}" if dead else f"not ready after {self.start_timeout_s:.0f} s"
                raise ClusterStartError(f"Spark standalone: {what} {why}; see {log}")
            time.sleep(0.5)

    def __exit__(self, *exc: object) -> None:
        import signal

        for p in reversed(self._procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in self._procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(5)
        for log in self._logs:
            log.close()
        self._procs, self._logs = [], []
