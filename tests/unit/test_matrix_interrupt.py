"""Ctrl-C and SIGTERM during ``pulsar-conformance matrix`` (issue 15, item 4): the release runs are
stopped with everything they started, the finished releases are kept, and ``--rerun ''`` continues.

A release's command is a stand-in process tree (``sh -c 'sleep N & sleep N'``: a shell with a
background child, as ``run`` has its broker JVM and Java driver), built by the matrix's injectable
command builder; every sleep carries a duration unique to the test, so a survivor is found by
reading ``/proc``.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from pulsar_conformance import matrix_job

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def mark():
    """A sleep duration no other process has; whatever still sleeps it after the test is killed."""
    mark = f"300.{uuid.uuid4().int % 10**9:09d}"
    yield mark
    for pid in _pids(mark):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _tree(mark: str, *, ignore_term: bool = False) -> list[str]:
    trap = "trap '' TERM; " if ignore_term else ""
    return ["sh", "-c", f"{trap}sleep {mark} & sleep {mark}; wait"]


def _pids(mark: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and mark.encode() in (entry / "cmdline").read_bytes():
                pids.append(int(entry.name))
        except OSError:
            pass
    return pids


def _wait_for(predicate, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


@pytest.mark.parametrize("ignore_term", [False, True], ids=["sigterm", "needs-sigkill"])
def test_stop_leaves_no_process_of_a_release_run(ignore_term, mark):
    releases = matrix_job.Releases(grace_s=1.0)
    codes: list[int | None] = []
    worker = threading.Thread(target=lambda: codes.append(releases.run(_tree(mark, ignore_term=ignore_term),
                                                                       stdin=subprocess.DEVNULL)))
    worker.start()
    _wait_for(lambda: len(_pids(mark)) >= 3, 10, "the stand-in tree did not start")  # sh, two sleeps
    releases.stop()
    worker.join(10)
    assert not worker.is_alive() and codes and codes[0] != 0
    _wait_for(lambda: not _pids(mark), 5, f"processes survived the stop: {_pids(mark)}")
    assert releases.run(["true"]) is None  # nothing starts once the matrix is stopping


SCRIPT = """
import sys
from pathlib import Path
from pulsar_conformance.matrix_job import MatrixOptions, run_matrix

out, mark = Path(sys.argv[1]), sys.argv[2]

def command(build, options, folder):
    if build.release == "3.0.7":  # finishes: a verdict and its summary, as a release run leaves them
        return ["sh", "-c", f"echo '{{}}' > {folder}/summary-python.json"]
    return ["sh", "-c", f"sleep {mark} & sleep {mark}; wait"]

try:
    sys.exit(run_matrix(MatrixOptions(versions=("3.0.7", "4.0.8"), out=out), command=command))
except KeyboardInterrupt:
    sys.exit(130)  # as the command line does
"""


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["sigint", "sigterm"])
def test_an_interrupted_matrix_stops_its_runs_keeps_the_finished_and_continues(tmp_path, sig, mark):
    out = tmp_path / "matrix"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(out), mark], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _wait_for(lambda: len(_pids(mark)) >= 3, 30, "the second release did not start")
    proc.send_signal(sig)  # a terminal's Ctrl-C reaches the matrix alone: its runs are in their own sessions
    try:
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()  # only if the matrix hung
    assert proc.returncode == 128 + sig, f"{stdout}\n{stderr}"
    _wait_for(lambda: not _pids(mark), 5, f"processes of the stopped release survived: {_pids(mark)}")

    doc = json.loads((out / "matrix.json").read_text())
    assert doc["interrupted"] == sig.name
    codes = {r["release"]: r["exit_code"] for r in doc["releases"]}
    assert codes["3.0.7"] == 0 and codes["4.0.8"] not in matrix_job.FINISHED
    line = [x for x in stderr.splitlines() if "continue with:" in x]
    assert len(line) == 1 and "1 of 2 releases finished" in line[0], stderr
    how = shlex.split(line[0].split("continue with: ", 1)[1])
    assert how == ["pulsar-conformance", "matrix", "--versions", "3.0.7,4.0.8", "--client", "python,java,mixed", "--out", str(out),
                   "--rerun", ""]

    # continuing runs only the release that did not finish
    ran, said = [], []

    def command(build, options, folder):
        ran.append(build.release)
        return ["sh", "-c", f"echo '{{}}' > {folder}/summary-python.json"]

    options = matrix_job.MatrixOptions(versions=("3.0.7", "4.0.8"), out=out, rerun=())
    matrix_job.run_matrix(options, say=said.append, command=command)
    assert ran == ["4.0.8"]
    assert any("3.0.7: reusing the previous run (exit 0)" in s for s in said), said
    codes = {r["release"]: r["exit_code"] for r in json.loads((out / "matrix.json").read_text())["releases"]}
    assert codes == {"3.0.7": 0, "4.0.8": 0}
