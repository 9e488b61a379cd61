"""Worker processes of a parallel live fuzz: started, watched and, when one dies, restarted.

A live worker runs traces through a client library in its own process. When that process dies
without returning (the C++ client segfaulted in two workers of the 3.2.3 campaign on 27 Nov 2026:
``libpulsar`` in ``dmesg``), ``multiprocessing.Pool`` replaces the process and loses its task, and the
command waited forever. Here each job has its own process: the parent sees the death (its exit
code, a signal), keeps the trace that was running as a crash finding, and starts the job again as a
resume of the same run (the corpus keeps what the job judged; ``fuzz_hypothesis`` skips it), up to
``MAX_RESTARTS`` times, after which the command fails naming the job.

The trace that was running is known because each worker wraps its target in ``InflightRecorder``,
which writes every trace to ``OUT/inflight/w<N>.trace.jsonl`` before it runs it.
"""

from __future__ import annotations

import queue
import signal
import time
from pathlib import Path
from typing import Any, Callable

from conformance.trace import Trace, dumps

MAX_RESTARTS = 3  # per job: a client that crashes on every trace stops the command instead of looping


class WorkerDied(RuntimeError):
    """A worker process died more often than ``MAX_RESTARTS`` allows."""


def inflight_path(out_dir: Path | str, worker: int) -> Path:
    return Path(out_dir) / "inflight" / f"w{worker}.trace.jsonl"


class InflightRecorder:
    """A target that writes each trace to ``path`` before the wrapped target runs it (overwriting the
    last one), so a process that dies inside the client leaves the trace that killed it."""

    def __init__(self, target: Any, path: Path):
        self._target = target
        self._path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def run(self, trace: Trace) -> Any:
        tmp = self._path.with_suffix(".tmp")
        tmp.write_text(dumps(trace), encoding="utf-8")
        tmp.replace(self._path)
        return self._target.run(trace)

    def __getattr__(self, name: str) -> Any:  # name, supports_faults, close, ...: the wrapped target's
        return getattr(self._target, name)


def describe_exit(code: int) -> str:
    """How a process that has ended ended: ``exit code N`` or ``killed by SIGNAME``."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def keep_crash(out_dir: Path | str, worker: int, regressions_dir: Path | str, why: str) -> Path | None:
    """Move the trace worker ``worker`` was running into ``regressions_dir`` as ``crash-<trace id>``
    (with a note of how the process died); None when it had not started a trace."""
    path = inflight_path(out_dir, worker)
    if not path.exists():
        return None
    from conformance.trace import load

    trace = load(path)
    target_dir = Path(regressions_dir)
    target_dir.mkdir(parents=True, exist_ok=True)
    kept = target_dir / f"crash-{trace.header.trace_id}.trace.jsonl"
    path.replace(kept)
    kept.with_name(kept.name.replace(".trace.jsonl", ".crash.txt")).write_text(
        f"worker w{worker} died running this trace: {why}.\nReplay it with "
        f"`pulsar-conformance replay {kept.name} --target embedded` to see whether the client crashes again.\n",
        encoding="utf-8")
    return kept


def run_supervised(ctx: Any, jobs: list[dict[str, Any]], entry: Callable[[dict[str, Any], Any], None], *,
                   results: Any, on_part: Callable[[Any], None], on_tick: Callable[[Any], None], ticks: Any,
                   check: Callable[[], None], on_death: Callable[[dict[str, Any], str, bool], None],
                   grace_s: float, max_restarts: int = MAX_RESTARTS) -> None:
    """Run each job in a process of its own (``entry(job, results)``, which puts ``("done", worker,
    part)`` or ``("error", worker, text)`` on ``results``); call ``on_part`` with each finished part,
    ``on_tick`` with each item of ``ticks``, ``check`` between polls (it raises to stop), and
    ``on_death(job, why, restarting)`` when a process ends without a result, then start that job again
    (``restarting`` False when it has died more than ``max_restarts`` times: the run stops). Leaving
    (done, an error, Ctrl-C, SIGTERM) stops every process still running: SIGTERM, then SIGKILL after
    ``grace_s``."""
    by_worker = {job["worker"]: job for job in jobs}
    procs: dict[int, Any] = {}
    restarts = {w: 0 for w in by_worker}
    done: set[int] = set()

    def start(w: int) -> None:
        procs[w] = ctx.Process(target=entry, args=(by_worker[w], results), name=f"fuzz-w{w}", daemon=False)
        procs[w].start()

    def drain_results() -> None:
        while True:
            try:
                kind, w, payload = results.get_nowait()
            except queue.Empty:
                return
            if kind == "error":
                raise RuntimeError(f"fuzz worker w{w} failed:\n{payload}")
            done.add(w)
            on_part(payload)

    try:
        for w in by_worker:
            start(w)
        while len(done) < len(by_worker):
            check()
            try:
                on_tick(ticks.get(timeout=0.5))
            except queue.Empty:
                pass
            drain_results()
            for w, proc in list(procs.items()):
                if w in done or proc.exitcode is None:
                    continue
                drain_results()  # a result put just before the process ended
                if w in done:
                    continue
                why = describe_exit(proc.exitcode)
                proc.join()
                restarts[w] += 1
                on_death(by_worker[w], why, restarts[w] <= max_restarts)
                if restarts[w] > max_restarts:
                    raise WorkerDied(f"fuzz worker w{w} died {restarts[w]} times (last: {why}); its crash traces are "
                                     "kept with the regressions")
                start(w)
        for proc in procs.values():
            proc.join(grace_s)  # each put its part and is ending
    finally:
        alive = [p for p in procs.values() if p.exitcode is None]
        for p in alive:
            p.terminate()  # SIGTERM: the worker's cleanup (namespaces, its broker, its corpus part) runs
        deadline = time.monotonic() + grace_s
        for p in alive:
            p.join(max(0.0, deadline - time.monotonic()))
            if p.exitcode is None:
                p.kill()  # blocked in a client call, it never reached its handler
                p.join(5)
