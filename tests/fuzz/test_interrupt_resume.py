"""Ctrl-C and SIGTERM during ``pulsar-conformance fuzz``, then ``--resume``: the same rows as a run
never interrupted (issue 15, item 4).

A 2,000-trace model fuzz (the seeded fast generator: 4 chunks of 500, one corpus part each) runs
uninterrupted into A. The same command runs in its own process group into B, is signalled as
soon as its first part is on disk, must exit 130 (SIGINT, sent to the whole group as a terminal's
Ctrl-C is) or 143 (SIGTERM, to the command alone), keep the parts it finished, leave no partial
file and no process of its group behind, and print the command that continues it. That command
is then run as printed, and B's corpus must hold exactly A's rows: the same count, the same
(trace id, target, step) multiset, the same verdicts per trace; its summary counts all 2,000.
The Hypothesis generator (resumed by trace id) is held to the same, interrupted in-process.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shlex
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from conformance.corpus import read_corpus
from conformance.fuzz import workers
from pulsar_conformance.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES, SEED, CHUNKS = 2000, 5, 4  # the fast generator's chunks hold 500 traces
COUNTS = ("examples", "passed", "indeterminate", "failed", "model_failed", "ops", "signatures")
VERDICT_COLUMNS = ("step", "op", "verdict", "rule_ids", "failed_rule_ids", "indeterminate_rule_ids", "anomalies",
                   "outcome_status", "observation_key")


def _command(out: Path, workers: int) -> list[str]:
    return ["pulsar-conformance", "fuzz", "--target", "model", "--examples", str(EXAMPLES), "--seed", str(SEED),
            "--out", str(out), "--workers", str(workers), "--no-progress"]


def _spawn(argv: list[str]) -> subprocess.Popen:
    assert argv[0] == "pulsar-conformance"
    return subprocess.Popen([sys.executable, "-m", "pulsar_conformance", *argv[1:]], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)


@pytest.fixture(autouse=True)
def _no_leftovers(monkeypatch):
    """Whatever a failing test leaves running (its subprocesses are process group leaders) is killed."""
    started: list[subprocess.Popen] = []
    real = subprocess.Popen

    def tracked(*args, **kwargs):
        proc = real(*args, **kwargs)
        started.append(proc)
        return proc

    monkeypatch.setattr(subprocess, "Popen", tracked)
    try:
        yield
    finally:
        for proc in started:
            if _group_alive(proc.pid):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
def uninterrupted(built_once) -> tuple[dict, dict]:
    """The same fuzz run whole, once per test run (``built_once``: the xdist workers share it)."""
    def make(folder: Path) -> None:
        assert main(_command(folder, 1)[1:]) == 0

    out = built_once("uninterrupted-fuzz", make)
    return json.loads((out / "summary.json").read_text()), _rows(out)


def _rows(out: Path) -> dict:
    table = read_corpus(out / "corpus")
    cols = table.to_pydict()
    keys = Counter(zip(cols["trace_id"], cols["target"], cols["step"]))
    per_trace: dict[str, list] = {}
    for i, tid in enumerate(cols["trace_id"]):
        per_trace.setdefault(tid, []).append(tuple(json.dumps(cols[c][i]) for c in VERDICT_COLUMNS))
    return {"rows": table.num_rows, "keys": keys, "trace_ids": Counter(cols["trace_id"]),
            "verdicts": {tid: sorted(v) for tid, v in per_trace.items()}}


# CI runs Ctrl-C to the group of an in-process run and SIGTERM to the command alone with a pool (the pool must be
# stopped by the command); the other two combinations are the extended tier's (docs/ci.md)
@pytest.mark.parametrize("sig,workers", [
    (signal.SIGINT, 1), pytest.param(signal.SIGINT, 2, marks=pytest.mark.extended),
    pytest.param(signal.SIGTERM, 1, marks=pytest.mark.extended), (signal.SIGTERM, 2)],
    ids=["sigint-1", "sigint-2", "sigterm-1", "sigterm-2"])
def test_an_interrupted_and_resumed_fuzz_has_the_rows_of_an_uninterrupted_one(tmp_path, uninterrupted, sig, workers):
    whole, expected = uninterrupted
    out = tmp_path / "b"
    proc = _spawn(_command(out, workers))
    deadline = time.monotonic() + 120
    while not list((out / "corpus").glob("part-*.parquet")):
        assert proc.poll() is None, f"the fuzz ended before it wrote a part:\n{proc.stderr.read()}"
        assert time.monotonic() < deadline, "no corpus part within 120 s"
        time.sleep(0.005)
    if sig == signal.SIGINT:
        os.killpg(proc.pid, sig)  # a terminal's Ctrl-C reaches the whole foreground group, workers included
    else:
        proc.send_signal(sig)  # `kill PID`: the command alone; it must stop its workers itself
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 128 + sig, f"exit {proc.returncode}\n{stdout}\n{stderr}"

    # no worker (nor the forkserver) survives: the command's process group empties
    gone = time.monotonic() + 10
    while _group_alive(proc.pid) and time.monotonic() < gone:
        time.sleep(0.05)
    assert not _group_alive(proc.pid), "a process of the interrupted fuzz survived it"

    parts = sorted((out / "corpus").iterdir())
    assert all(p.name.endswith(".parquet") for p in parts), f"a partial file was left: {parts}"
    assert 1 <= len(parts) < CHUNKS, f"{len(parts)} parts: the signal came after the run had finished"
    kept = json.loads((out / "summary.json").read_text())
    assert kept["interrupted"] == sig.name and kept["examples"] == len(parts) * EXAMPLES // CHUNKS
    assert read_corpus(out / "corpus").num_rows == kept["ops"]

    lines = [line for line in stderr.splitlines() if "--resume" in line]
    assert len(lines) == 1, stderr
    resume = shlex.split(lines[0].split("continue with: ", 1)[1])
    assert resume == [*_command(out, workers)[:-1], "--resume", kept["run_id"]]  # --no-progress is the test's

    again = _spawn([*resume, "--no-progress"])
    stdout, stderr = again.communicate(timeout=300)
    assert again.returncode == 0, f"{stdout}\n{stderr}"

    got = _rows(out)
    assert got["rows"] == expected["rows"]
    assert got["trace_ids"] == expected["trace_ids"]
    assert got["keys"] == expected["keys"] and max(got["keys"].values()) == 1  # no duplicate, no gap
    assert got["verdicts"] == expected["verdicts"]
    summary = json.loads((out / "summary.json").read_text())
    assert {k: summary[k] for k in COUNTS} == {k: whole[k] for k in COUNTS}
    assert summary["examples"] == EXAMPLES and summary["skipped"] == kept["examples"]
    assert "interrupted" not in summary and summary["run_id"] == kept["run_id"]


def test_a_resumed_hypothesis_fuzz_has_the_rows_and_counts_of_an_uninterrupted_one(tmp_path):
    """The Hypothesis generator resumes by trace id (content hashes): a trace recorded n times
    (Hypothesis may generate the same trace again) is skipped n times, and the summary counts the
    skipped traces from their corpus rows. Interrupted in-process, by a Ctrl-C raised after 120 traces."""
    from conformance.fuzz import fuzz_hypothesis
    from conformance.strategies import MODEL_CONFIG
    from conformance.targets.model import ModelTarget

    def run(out: Path, run_id: str, on_tick=None):
        return fuzz_hypothesis(ModelTarget(), examples=300, seed=3, out_dir=out, run_id=run_id, config=MODEL_CONFIG,
                               reruns=1, progress=False, on_tick=on_tick)

    def ctrl_c(summary) -> None:
        if summary.examples == 120:
            raise KeyboardInterrupt

    whole = run(tmp_path / "a", "whole")
    with pytest.raises(KeyboardInterrupt) as stopped:
        run(tmp_path / "b", "again", ctrl_c)
    assert stopped.value.fuzz_summary.examples == 120 and stopped.value.fuzz_summary.interrupted == "SIGINT"
    assert _rows(tmp_path / "b")["trace_ids"].total() == stopped.value.fuzz_summary.ops
    resumed = run(tmp_path / "b", "again")
    expected, got = _rows(tmp_path / "a"), _rows(tmp_path / "b")
    assert got["rows"] == expected["rows"] and got["keys"] == expected["keys"]
    assert got["verdicts"] == expected["verdicts"]
    assert resumed.skipped == 120
    for count in ("examples", "passed", "indeterminate", "failed", "model_failed", "ops"):
        assert getattr(resumed, count) == getattr(whole, count), count


@pytest.mark.parametrize("target", ["model", "object"])
def test_the_main_jobs_budget_resumes_by_run_id(tmp_path, target):
    """``fuzz_budget(..., run_id=)``: the main job's --resume can continue its fuzz budget."""
    from conformance.fuzz import fuzz_budget
    from conformance.targets.model import ModelTarget

    def budget():
        return fuzz_budget("model" if target == "model" else ModelTarget(), examples=60, seed=2, out_dir=tmp_path,
                           run_id="budget")

    first = budget()
    parts = sorted((tmp_path / "corpus").iterdir())
    again = budget()
    assert sorted((tmp_path / "corpus").iterdir()) == parts  # nothing run, nothing written again
    assert (first.skipped, again.skipped, again.examples, again.ops) == (0, 60, 60, first.ops)


PARALLEL = """
import sys
from pathlib import Path
from conformance.fuzz import driver
from conformance.interruption import reraise, interruptible
from conformance.targets.model import ModelTarget
from fixtures.endpoint import parse_target

out = Path(sys.argv[1])
with interruptible():
    try:
        driver._live_parallel(parse_target("pulsar://127.0.0.1:6650"), "stand-in", None, examples=100_000, seed=1,
                              out_dir=out, run_id="par", workers=2, broker_per_worker=False,
                              regressions_dir=out / "regressions", reruns=1, max_shrinks=10, progress=False,
                              make_target=ModelTarget)
    except KeyboardInterrupt as err:
        reraise(err)
"""


def _until_both_workers_wrote(script: str, tmp_path: Path, *argv: str):
    """Start ``script`` (``PARALLEL`` or a variant) and wait until both workers wrote a corpus part."""
    proc = subprocess.Popen([sys.executable, "-c", script, str(tmp_path), *argv], cwd=REPO, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    corpus = tmp_path / "corpus"
    deadline = time.monotonic() + 120
    while not (list(corpus.glob("part-par-w0-*.parquet")) and list(corpus.glob("part-par-w1-*.parquet"))):
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, "the workers wrote no parts within 120 s"
        time.sleep(0.05)
    return proc, corpus


def test_sigterm_stops_the_parallel_hypothesis_workers(tmp_path):
    """The live fuzz's worker pool (spawned workers, each with its own target; here the model
    stands in for the broker): SIGTERM to the command stops both workers through their cleanup,
    promptly, and each one's rows up to its last flush are kept. (Hypothesis takes a SystemExit
    raised in a test for a failing example: a worker once went on after SIGTERM, and the command
    hung joining it.)"""
    proc, corpus = _until_both_workers_wrote(PARALLEL, tmp_path)
    proc.send_signal(signal.SIGTERM)
    t0 = time.monotonic()
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 143, stderr
    assert time.monotonic() - t0 < 30
    gone = time.monotonic() + 10
    while _group_alive(proc.pid) and time.monotonic() < gone:
        time.sleep(0.05)
    assert not _group_alive(proc.pid), "a worker survived"
    assert all(p.name.endswith(".parquet") for p in corpus.iterdir())
    assert read_corpus(corpus).num_rows > 0


STUCK = PARALLEL.replace("from conformance.targets.model import ModelTarget",
                         "sys.path.insert(0, str(Path(sys.argv[2])))\nfrom stuck_target import StuckAfterFewTraces") \
    .replace("make_target=ModelTarget", "make_target=StuckAfterFewTraces")


def test_sigterm_kills_a_worker_stuck_in_a_client_call(tmp_path):
    """A worker that cannot run its SIGTERM handler (blocked in a client call: here SIGTERM is
    blocked) is killed after ``WORKER_GRACE_S``: the command exits 143 instead of joining it forever."""
    from conformance.fuzz.driver import WORKER_GRACE_S

    assert "StuckAfterFewTraces" in STUCK
    proc, _ = _until_both_workers_wrote(STUCK, tmp_path, str(Path(__file__).parent))
    time.sleep(6)  # both workers are stuck by now (five seconds after their first trace)
    proc.send_signal(signal.SIGTERM)
    t0 = time.monotonic()
    _, stderr = proc.communicate(timeout=WORKER_GRACE_S + 60)
    assert proc.returncode == 143, stderr
    assert time.monotonic() - t0 < WORKER_GRACE_S + 30
    gone = time.monotonic() + 10
    while _group_alive(proc.pid) and time.monotonic() < gone:
        time.sleep(0.05)
    assert not _group_alive(proc.pid), "a worker survived"


CRASHING = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from crashing_target import CrashesOnce
from conformance.fuzz import driver
from fixtures.endpoint import parse_target

out = Path(sys.argv[1])
summary = driver._live_parallel(parse_target("pulsar://127.0.0.1:6650"), "stand-in", None, examples=40, seed=1,
                                out_dir=out, run_id="par", workers=2, broker_per_worker=False,
                                regressions_dir=out / "regressions", reruns=1, max_shrinks=10, progress=False,
                                make_target=CrashesOnce)
print(json.dumps(summary.to_json()))
"""


def test_a_worker_that_dies_in_the_client_is_restarted_and_its_trace_kept(tmp_path):
    """A worker process killed by a signal (a segfault in the client library) loses no job: the parent sees it,
    keeps the trace that was running as ``crash-<id>`` beside the regressions, starts the job again as a resume,
    and the run ends with every trace judged, not judged as passing: a crash fails it. (With
    ``multiprocessing.Pool`` the job was lost and the command waited forever.)"""
    env = dict(os.environ, CRASH_MARKER=str(tmp_path / "crashed"))
    proc = subprocess.run([sys.executable, "-c", CRASHING, str(tmp_path), str(Path(__file__).parent)], cwd=REPO,
                          text=True, capture_output=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    crashed = (tmp_path / "crashed").read_text(encoding="utf-8")
    assert "died (killed by SIGSEGV)" in proc.stderr
    kept = tmp_path / "regressions" / f"crash-{crashed}.trace.jsonl"
    assert kept.exists() and "SIGSEGV" in kept.with_name(f"crash-{crashed}.crash.txt").read_text(encoding="utf-8")
    assert [c["why"] for c in summary["crashes"]] == ["killed by SIGSEGV"]
    assert summary["examples"] == 40  # the restarted worker finished its share


def _dies_at_once(job, results):
    os._exit(3)  # like a client that aborts the process: no result, no cleanup


def test_a_worker_that_keeps_dying_stops_the_run_and_is_not_announced_as_restarting():
    """Let the only worker die at once every time it starts. Then it is started 1 + max_restarts times,
    each death is reported with how it ended, every report but the last says it starts again, and the
    run stops with WorkerDied naming the worker and its count: it does not wait forever nor restart
    without end."""
    ctx = multiprocessing.get_context("fork")
    deaths = []
    with pytest.raises(workers.WorkerDied, match=r"w0 died 3 times \(last: exit code 3\)"):
        workers.run_supervised(ctx, [{"worker": 0}], _dies_at_once, results=ctx.Queue(), on_part=lambda part: None,
                               on_tick=lambda tick: None, ticks=ctx.Queue(), check=lambda: None,
                               on_death=lambda job, why, restarting: deaths.append((job["worker"], why, restarting)),
                               grace_s=2.0, max_restarts=2)
    assert deaths == [(0, "exit code 3", True), (0, "exit code 3", True), (0, "exit code 3", False)]


def test_describe_exit_names_the_signal_or_the_code():
    assert workers.describe_exit(-signal.SIGSEGV) == "killed by SIGSEGV"
    assert workers.describe_exit(2) == "exit code 2"
    assert workers.describe_exit(-200) == "killed by signal 200"
