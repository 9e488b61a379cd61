"""``pulsar-conformance matrix``: the case suite on several broker releases, one report.

For each release of ``--versions`` (build specs: ``fixtures/broker_builds.py``), the main job
(``pulsar-conformance run``) runs in its own process with its own embedded broker, into
``OUT/<release>/`` (its JUnit, summaries, histories and corpus), ``--parallel N`` at a time
(default 1: a 2-core machine judges timing better with one broker). The corpora are then linked
into one, ``OUT/corpus/``, and the Spark report job draws ``OUT/report/``: the rule matrix over
every release x client, and the rules x release section (``reports/release_matrix.py``) that
marks where a release differs from the previous one and from the model, and which non-PASS
cells no verdict explains. ``OUT/matrix.json`` records each release's run (exit code, time,
how the broker was obtained) and that release matrix; ``OUT/release-matrix.txt`` is the text
table, also printed.

Exit codes: 2 for a release that is not a build spec (checked before anything starts);
otherwise 4 if a release's run or the report met a harness error (a broker that would not start
included), else 1 if a FAIL cell has no known deviation, else 3 if a cell is INDETERMINATE,
else 0. Every release is run even when an earlier one failed.

Ctrl-C or SIGTERM stops the matrix: each release run is its own process group (``Releases``),
which gets SIGTERM (the run tears down its broker and namespaces), then, after a grace period,
SIGKILL (the embedded broker's JVM and the Java driver die with their parent: PR_SET_PDEATHSIG).
The releases that finished are kept and recorded in ``OUT/matrix.json``; the message gives the
command that continues (``--rerun ''``: run what did not finish, reuse the rest). Exit 130 for
SIGINT, 143 for SIGTERM.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from conformance.interruption import INTERRUPTS, check, interruptible, reraise, signal_name
from conformance.verdict_exit import EXIT_FAIL, EXIT_HARNESS, EXIT_INCONCLUSIVE, EXIT_OK, EXIT_USAGE
from fixtures.broker_builds import BrokerBuild, resolve_build
from fixtures.errors import BrokerStartError
from pulsar_conformance.targets import DEFAULT_CLIENTS, say as _say

# a release run that ended with a verdict (anything else: a harness error, bad usage, a signal)
FINISHED = (EXIT_OK, EXIT_FAIL, EXIT_INCONCLUSIVE)


@dataclass(frozen=True)
class MatrixOptions:
    versions: tuple[str, ...]
    clients: str = ",".join(DEFAULT_CLIENTS)  # the same default as ``run`` (pulsar_conformance.targets)
    out: Path = Path("out/matrix")
    only: tuple[str, ...] = ()
    fuzz_examples: int = 0
    parallel: int = 1
    timing_tolerance_ms: float | None = None
    config_override: tuple[str, ...] = ()
    rerun: tuple[str, ...] | None = None  # with a previous matrix.json in OUT: run only these, reuse the rest


@dataclass
class ReleaseRun:
    build: BrokerBuild
    folder: Path
    exit_code: int | None = None
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {**self.build.describe(), "folder": str(self.folder), "exit_code": self.exit_code,
                "seconds": round(self.seconds, 1)}


def folder_name(build: BrokerBuild) -> str:
    return build.release if build.requested.partition(":")[2] == "" else f"{build.release}-{build.how}"


def parse_versions(text: str) -> list[BrokerBuild]:
    """The builds of ``--versions`` ("3.0.7,4.0,4.0.8:assembled"); refuses an empty list and duplicates."""
    specs = [v.strip() for v in text.split(",") if v.strip()]
    if not specs:
        raise ValueError("--versions names no release; e.g. --versions 3.0.7,4.0.8")
    builds = [resolve_build(s) for s in specs]
    names = [folder_name(b) for b in builds]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise ValueError(f"--versions names {', '.join(dupes)} more than once")
    return builds


def run_command(build: BrokerBuild, options: MatrixOptions, folder: Path) -> list[str]:
    cmd = [sys.executable, "-m", "pulsar_conformance", "run", "--target", "embedded", "--broker-version", build.requested,
           "--client", options.clients, "--out", str(folder), "--fuzz-examples", str(options.fuzz_examples), "--no-report"]
    for sel in options.only:
        cmd += ["--only", sel]
    for item in options.config_override:
        cmd += ["--config-override", item]
    if options.timing_tolerance_ms is not None:
        cmd += ["--timing-tolerance-ms", str(options.timing_tolerance_ms)]
    return cmd


def continue_command(options: MatrixOptions) -> str:
    """The ``pulsar-conformance matrix`` command that continues this matrix in its ``--out``: the
    same options with ``--rerun ''`` (run the releases that did not finish, reuse the others)."""
    cmd = ["pulsar-conformance", "matrix", "--versions", ",".join(options.versions), "--client", options.clients,
           "--out", str(options.out)]
    for sel in options.only:
        cmd += ["--only", sel]
    if options.fuzz_examples:
        cmd += ["--fuzz-examples", str(options.fuzz_examples)]
    if options.parallel != 1:
        cmd += ["--parallel", str(options.parallel)]
    for item in options.config_override:
        cmd += ["--config-override", item]
    if options.timing_tolerance_ms is not None:
        cmd += ["--timing-tolerance-ms", str(options.timing_tolerance_ms)]
    return shlex.join([*cmd, "--rerun", ""])


def _signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to process group ``pgid``; False when no process of it is left."""
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True


class Releases:
    """The release runs under way, each a child in its own session and process group, so stopping
    a run reaches everything it started there (its background children included), and a
    terminal's Ctrl-C reaches the matrix alone, which decides. ``stop()`` sends every group
    SIGTERM, waits up to ``grace_s`` for the groups to empty, then SIGKILLs what is left; a run
    asked for after ``stop()`` is not started."""

    def __init__(self, grace_s: float = 30.0):
        self.grace_s = grace_s
        self.stopping = False
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen] = set()

    def run(self, cmd: list[str], **popen) -> int | None:
        """Run ``cmd`` to its end: its exit code, or None if the matrix was stopping already."""
        with self._lock:
            if self.stopping:
                return None
            proc = subprocess.Popen(cmd, start_new_session=True, **popen)
            self._procs.add(proc)
        try:
            return proc.wait()
        finally:
            with self._lock:
                self._procs.discard(proc)

    def stop(self) -> None:
        with self._lock:
            self.stopping = True
            groups = [p.pid for p in self._procs]  # a session leader's pid is its group's id
        live = [g for g in groups if _signal_group(g, signal.SIGTERM)]
        deadline = time.monotonic() + self.grace_s
        try:
            while live and time.monotonic() < deadline:
                time.sleep(0.1)
                live = [g for g in live if _signal_group(g, 0)]
        finally:  # past the grace period, or a second Ctrl-C: no more waiting
            for g in live:
                _signal_group(g, signal.SIGKILL)


def _run_release(run: ReleaseRun, options: MatrixOptions, say: Callable[[str], None], releases: Releases,
                 command: Callable[[BrokerBuild, MatrixOptions, Path], list[str]] = run_command) -> ReleaseRun:
    if releases.stopping:
        return run
    run.folder.mkdir(parents=True, exist_ok=True)
    # a release run again starts clean: an earlier run's corpus parts would join the report
    for stale in ("corpus", "histories"):
        shutil.rmtree(run.folder / stale, ignore_errors=True)
    for stale in run.folder.glob("summary*.json"):
        stale.unlink()
    log = run.folder / "run.log"
    say(f"== {run.build.requested}: running (log {log})")
    t0 = time.monotonic()
    with log.open("wb") as f:
        code = releases.run(command(run.build, options, run.folder), stdout=f, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    run.exit_code, run.seconds = code, time.monotonic() - t0
    say(f"== {run.build.requested}: exit {run.exit_code} in {run.seconds:.0f} s")
    return run


def _reuse_previous(runs: list[ReleaseRun], options: MatrixOptions, out: Path, say: Callable[[str], None]) -> list[ReleaseRun]:
    """The runs to do again: those ``--rerun`` names, and any without a finished previous run in
    ``OUT/matrix.json`` (a harness error or no summary); the others keep their recorded results."""
    previous = {}
    try:
        previous = {r["folder"]: r for r in json.loads((out / "matrix.json").read_text())["releases"]}
    except (OSError, ValueError, KeyError):
        raise ValueError(f"--rerun needs the matrix.json of a previous matrix run in {out}") from None
    wanted = {folder_name(b) for b in parse_versions(",".join(options.rerun))} if options.rerun else set()
    todo = []
    for run in runs:
        old = previous.get(str(run.folder))
        done = old is not None and old.get("exit_code") in FINISHED and any(run.folder.glob("summary-*.json"))
        if folder_name(run.build) in wanted or not done:
            todo.append(run)
        else:
            run.exit_code, run.seconds = old["exit_code"], old.get("seconds", 0.0)
            say(f"== {run.build.requested}: reusing the previous run (exit {run.exit_code})")
    return todo


def link_corpora(runs: list[ReleaseRun], corpus: Path) -> int:
    """Hard-link (or copy) every release's corpus parts into ``corpus``; their run ids keep them apart."""
    if corpus.exists():
        shutil.rmtree(corpus)
    corpus.mkdir(parents=True)
    count = 0
    for run in runs:
        for part in sorted((run.folder / "corpus").glob("part-*.parquet")):
            target = corpus / part.name
            try:
                os.link(part, target)
            except OSError:
                shutil.copy2(part, target)
            count += 1
    return count


def _stopped(err: BaseException, runs: list[ReleaseRun], options: MatrixOptions, out: Path,
             say: Callable[[str], None]) -> None:
    """Record what an interrupted matrix kept, and say how to continue it."""
    finished = [r for r in runs if r.exit_code in FINISHED]
    how = continue_command(options)
    doc = {"releases": [r.to_json() for r in runs], "interrupted": signal_name(err), "continue": how}
    (out / "matrix.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    say(f"matrix interrupted ({signal_name(err)}): {len(finished)} of {len(runs)} releases finished and kept in {out} "
        f"({', '.join(r.build.requested for r in finished) or 'none'}); continue with: {how}")


def run_matrix(options: MatrixOptions, *, say: Callable[[str], None] = _say,
               command: Callable[[BrokerBuild, MatrixOptions, Path], list[str]] = run_command,
               releases: Releases | None = None) -> int:
    """Run the matrix; ``command`` builds a release's run command (``run_command``), ``releases``
    runs and stops them (``Releases()``)."""
    from reports import release_matrix

    try:
        builds = parse_versions(",".join(options.versions))
    except (BrokerStartError, ValueError) as err:
        say(f"error: {err.problem if isinstance(err, BrokerStartError) else err}")
        return EXIT_USAGE
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = [ReleaseRun(b, out / folder_name(b)) for b in builds]
    say(f"matrix: {len(runs)} releases ({', '.join(b.requested for b in builds)}), clients {options.clients}, "
        f"{options.parallel} at a time, into {out}")
    todo = runs
    if options.rerun is not None:
        todo = _reuse_previous(runs, options, out, say)
    releases = releases or Releases()
    pool = ThreadPoolExecutor(max_workers=max(1, options.parallel))
    with interruptible():
        try:
            pending = {pool.submit(_run_release, r, options, say, releases, command) for r in todo}
            while pending:
                check()  # an interruption whose exception was lost (raised in a gc callback)
                done, pending = wait(pending, timeout=0.5)
                for fut in done:
                    fut.result()
        except INTERRUPTS as err:
            releases.stop()
            pool.shutdown(wait=True, cancel_futures=True)
            _stopped(err, runs, options, out, say)
            reraise(err)
        finally:
            pool.shutdown(wait=True)
    harness = [r for r in runs if r.exit_code not in FINISHED]
    parts = link_corpora(runs, out / "corpus")
    summaries = sorted(str(p) for r in runs for p in r.folder.glob("summary-*.json"))
    doc: dict = {"releases": [r.to_json() for r in runs], "corpus_parts": parts}
    code_report = None
    rm = None
    if parts:
        from spark_reports.jobs.report import main as report_main

        say("== report (Spark, local mode)")
        args = ["--outcomes", str(out / "corpus"), "--out", str(out / "report"), "--quiet"]
        for s in summaries:
            args += ["--summary", s]
        code_report = report_main(args)
        rm_path = out / "report" / "release-matrix.json"
        if code_report == 0 and rm_path.exists():
            rm = json.loads(rm_path.read_text())
    doc["report_exit_code"] = code_report
    doc["release_matrix"] = rm
    (out / "matrix.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    if rm is not None:
        table = release_matrix.text(rm)
        (out / "release-matrix.txt").write_text(table + "\n", encoding="utf-8")
        print(table)
    for r in runs:
        say(f"{r.build.requested:<18} {r.build.how:<10} exit {r.exit_code}  {r.seconds:6.0f} s  {r.folder}")
    if harness:
        say("harness errors (see each run.log): " + ", ".join(f"{r.build.requested} (exit {r.exit_code})" for r in harness))
    if code_report not in (0, None) or not parts:
        say(f"the report failed (exit {code_report}, {parts} corpus parts)")
        return EXIT_HARNESS
    if harness:
        return EXIT_HARNESS
    needs = rm["needs_verdict"] if rm else []
    if any(n["verdict"] == "FAIL" for n in needs):
        say(f"{sum(n['verdict'] == 'FAIL' for n in needs)} FAIL cell(s) without a verdict: see {out / 'release-matrix.txt'}")
        return EXIT_FAIL
    if needs:
        return EXIT_INCONCLUSIVE
    say(f"every non-PASS cell has a verdict; report {out / 'report' / 'index.html'}")
    return EXIT_OK
