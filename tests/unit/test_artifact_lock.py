"""The first-use lock (fixtures/artifact_lock.py) with real processes on one empty cache folder: an artifact is
made once when runs start together, a waiting run says once what it waits for and reuses the finished
artifact, and a run killed while making it leaves no stale lock.

The artifact here is a folder written in two stages ("half", then "whole" and a ``done`` marker) with a
pause between: without the lock the second process would run ``make`` too (the log would hold two pids) or
start from the half-written folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from fixtures.artifact_lock import lock_path, maven_downloads, watch

REPO = Path(__file__).resolve().parents[2]

WORKER = r"""
import os, sys, time
from pathlib import Path
from fixtures.artifact_lock import make_once

artifact, log, pause = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])

def ready():
    return (artifact / "content").read_text() if (artifact / "done").exists() else None

def make():
    with log.open("a") as f:
        f.write(f"{os.getpid()}\n")
    artifact.mkdir(parents=True, exist_ok=True)
    (artifact / "content").write_text("half")
    time.sleep(pause)
    (artifact / "content").write_text("whole")
    (artifact / "done").touch()
    return "whole"

result = make_once(artifact, "the test artifact", ready=ready, make=make,
                   progress=lambda line: print("progress:", line, flush=True))
print("result:", result, flush=True)
"""


def _start(tmp_path: Path, pause: float) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p))
    return subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path / "cache" / "thing"), str(tmp_path / "made.log"),
                             str(pause)], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _finish(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out
    return out


def _wait_for_maker(tmp_path: Path, timeout: float = 30) -> None:
    """Until a worker is inside ``make`` (its pid is in the log)."""
    deadline = time.monotonic() + timeout
    while not ((tmp_path / "made.log").exists() and (tmp_path / "made.log").read_text().strip()):
        assert time.monotonic() < deadline, "no worker started making the artifact"
        time.sleep(0.05)


def _makers(tmp_path: Path) -> list[str]:
    return (tmp_path / "made.log").read_text().split()


def test_two_processes_started_together_make_the_artifact_once(tmp_path):
    procs = [_start(tmp_path, 2.0), _start(tmp_path, 2.0)]
    outs = [_finish(p) for p in procs]
    assert all("result: whole" in out for out in outs), outs
    assert len(_makers(tmp_path)) == 1, f"make ran in more than one process: {_makers(tmp_path)}"


def test_a_waiting_process_says_once_what_it_waits_for_and_reuses_the_artifact(tmp_path):
    first = _start(tmp_path, 3.0)
    _wait_for_maker(tmp_path)
    second = _start(tmp_path, 3.0)
    out_first, out_second = _finish(first), _finish(second)
    waits = [line for line in out_second.splitlines() if "waiting for another process" in line]
    assert len(waits) == 1, out_second
    assert "the test artifact" in waits[0] and f"pid {first.pid}" in waits[0], waits[0]
    assert "reusing what the other process made" in out_second and "result: whole" in out_second
    assert "waiting" not in out_first and "result: whole" in out_first
    assert _makers(tmp_path) == [str(first.pid)]


def test_a_process_killed_while_making_leaves_no_stale_lock(tmp_path):
    first = _start(tmp_path, 600.0)
    _wait_for_maker(tmp_path)
    first.send_signal(signal.SIGKILL)
    first.wait(10)
    assert lock_path(tmp_path / "cache" / "thing").exists(), "the lock file stays; only the lock goes with its holder"
    t0 = time.monotonic()
    out = _finish(_start(tmp_path, 0.1), timeout=30)
    assert "result: whole" in out and "waiting" not in out, out
    assert time.monotonic() - t0 < 20
    assert len(_makers(tmp_path)) == 2, "the half-made artifact of the killed process is made again, not reused"


def test_a_long_step_reports_progress_and_a_short_one_says_nothing():
    lines: list[str] = []
    with watch(lines.append, lambda: f"step: {len(lines)}", every_s=0.2):
        time.sleep(0.7)
    assert lines[:2] == ["step: 0", "step: 1"] and len(lines) <= 4
    quiet: list[str] = []
    with watch(quiet.append, lambda: "never", every_s=5):
        pass
    assert quiet == []


def test_maven_downloads_are_counted_from_its_log(tmp_path):
    log = tmp_path / "fetch.log"
    log.write_text("[INFO] old run\nDownloaded from central: https://x/a.jar (2.0 MB at 1 MB/s)\n")
    offset = log.stat().st_size
    with log.open("a") as f:
        f.write("[INFO] Downloading from central: https://x/b.pom\n"
                "[INFO] Downloaded from central: https://x/b.pom (1.5 kB at 10 kB/s)\n"
                "[INFO] Downloaded from central: https://x/c.jar (12 MB at 3.1 MB/s)\n")
    assert maven_downloads(log, offset) == ", 2 files (12 MB) downloaded"
    assert maven_downloads(tmp_path / "absent.log") == ""
