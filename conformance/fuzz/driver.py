"""The generation driver: generated traces on the model and a target, judged, shrunk, recorded.

The fuzz runs behind ``pulsar-conformance fuzz`` and the main job's fuzz budget.

Each generated trace (``conformance.strategies``) runs on the reference model and on the target;
the checker judges both histories (the model's own history must pass: a FAIL there is a model or
checker bug; the target's history is the conformance question). Every judged history is
appended to the outcome corpus (``CorpusWriter``; ``--resume RUN_ID`` skips traces already
recorded), and a live target's history is kept whole under ``OUT/histories/`` so that a later
model re-judges it (``pulsar-conformance rejudge --corpus OUT``). The model's fast path keeps no
history files: its traces are its seeds, run again by any later version. A failure is identified by its *signature*, the (rule id, anomaly) of its first FAIL
verdict; it is shrunk while keeping that signature, re-run ``--reruns`` times to tell FAIL from
FLAKY (never retried away), saved to ``OUT/regressions/<id>.trace.jsonl`` (or the folder the
caller names; never the source tree by default) with ``<id>.history.jsonl`` and
``<id>.verdicts.json``, and printed as a short program.

Ctrl-C and SIGTERM stop a run cleanly (``fuzz``): workers are terminated, every finished corpus
part is kept (parts are written to a temporary name and renamed), ``summary.json`` counts what
was kept, and one line says how to continue (``--resume RUN_ID``); a resumed run skips what is
recorded and its summary counts the whole run.

Choices:
- Two generators behind one builder. Mass runs (the default for ``--target model``) use the
  seeded fast generator: trace ``i`` depends only on ``(seed, i)``, so workers split the range
  with no coordination and 100 000 examples finish in minutes; Hypothesis's engine (its database,
  its health checks, its bookkeeping per example) would cost more than the model itself. Live
  runs (the default for a broker) use the Hypothesis strategy ``strategies.traces``: examples
  cost seconds each, so Hypothesis's overhead is free and its shrinker is worth having.
- Shrinking: a Hypothesis failure is shrunk by Hypothesis (each attempt is a fresh run on the
  target; ``BrokerTarget`` gives every run a fresh namespace), capped at ``max_shrinks`` target
  runs, then polished by deleting ops together with what depends on them (delta debugging over
  the trace, ``ddmin``) and dropping optional arguments (500 runs on the model, 30 on a broker);
  a fast-generator failure (not in Hypothesis's choice space) is shrunk by ``ddmin`` alone. Both keep the failure's signature, so shrinking never slides to another bug.
- Hypothesis never re-runs the final minimal example itself here (it would raise ``Flaky`` on a
  live broker); flakiness is measured explicitly by re-running the shrunk trace.
- A signature found once is "known" for the rest of the run: later traces with it are counted
  and recorded in the corpus, not shrunk again.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from conformance.corpus import ChunkWriter, remove_partial_parts
from conformance.fuzz.judge import FAIL, FLAKY, INDET, check_history, error_report, has_signature, run_and_judge, signature, trace_status
from conformance.fuzz.regressions import FailureRecord, finish_failure
from conformance.interruption import (
    INTERRUPTS,
    Terminated,
    check,
    exit_code,
    exit_quietly,
    reraise,
    signal_name,
    interruptible,
    worker_cleans_up_on_sigterm,
    worker_ignores_sigint,
)
from conformance.fuzz.shrink import shrink_keeping_signature
from conformance.fuzz.workers import InflightRecorder, inflight_path, keep_crash, run_supervised
from conformance.strategies import (
    LIVE_CONFIG,
    LIVE_FAULT_CONFIG,
    MODEL_CONFIG,
    GenConfig,
    GeneratorCrash,
    focused,
    generation_config,
    random_trace_with_model_history,
    traces,
    with_content_id,
)
from conformance.trace import History, Trace, dumps, save


# --------------------------------------------------------------------------- Hypothesis search


class _Found(Exception):
    """Raised inside the Hypothesis test when a trace shows the wanted failure."""


@contextmanager
def hypothesis_home(directory: Path | None) -> Iterator[None]:
    """Hypothesis keeps files (a cache of the code's constants) in ``.hypothesis/`` of the working
    folder; while inside, in ``directory`` instead (unless the user chose one with
    ``HYPOTHESIS_STORAGE_DIRECTORY``, or ``directory`` is None)."""
    import hypothesis.configuration as hc

    if directory is None or os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        yield
        return
    saved = getattr(hc, "__hypothesis_home_directory", None)
    hc.set_hypothesis_home_dir(directory)
    try:
        yield
    finally:
        hc.set_hypothesis_home_dir(saved)


def hypothesis_search(target: Any, *, config: GenConfig, max_examples: int, seed: int,
                      known: set[tuple[str, str]], on_example: Callable[[Trace, History, Any], None] | None = None,
                      skip: Callable[[Trace], bool] | None = None, max_shrinks: int = 200,
                      shrink_seconds: float = 120.0, storage_dir: Path | None = None):
    """Run up to ``max_examples`` Hypothesis traces; return ``(examples_run, found)`` where
    ``found`` is ``(original trace, shrunk trace, signature)`` for the first new failure.
    Hypothesis' own files go to ``storage_dir`` (``hypothesis_home``)."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed

    state: dict[str, Any] = {"sig": None, "first": None, "best": None, "best_exc": None, "shrinks": 0, "runs": 0}

    @hseed(seed)
    @settings(max_examples=max_examples, database=None, deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck), phases=(Phase.generate, Phase.shrink),
              report_multiple_bugs=False, print_blob=False, verbosity=Verbosity.quiet)
    @given(traces(config))
    def probe(trace: Trace) -> None:
        check()  # an interruption whose exception a gc callback swallowed
        hit = False
        if state["sig"] is not None and state["best"] is not None and trace.ops == state["best"].ops:
            hit = True  # the best so far is never re-run (a live re-run may pass: measured later)
        else:
            if state["sig"] is not None:
                if state["shrinks"] >= max_shrinks:
                    return
                state["shrinks"] += 1
            elif skip is not None and skip(trace):
                return
            state["runs"] += 1
            history, report = run_and_judge(target, trace)
            if state["sig"] is None and on_example is not None:
                on_example(trace, history, report)
            sig = signature(report)
            if state["sig"] is None and sig is not None and sig not in known:
                state["sig"], state["first"] = sig, trace
            if state["sig"] is not None and has_signature(report, state["sig"]):
                if state["best"] is None or len(trace.ops) <= len(state["best"].ops):
                    state["best"] = trace
                hit = True
        if hit:  # one raise site: Hypothesis tells failures apart by where they are raised
            raise _Found(str(state["sig"]))

    # Hypothesis keeps proposing shrinks (each one builds a trace, running the model alongside)
    # for up to 5 minutes; past our budget of target runs that is wasted, so cap its time too.
    from hypothesis.internal.conjecture import engine

    saved = engine.MAX_SHRINKING_SECONDS
    engine.MAX_SHRINKING_SECONDS = shrink_seconds
    try:
        with hypothesis_home(storage_dir):
            probe()
    except _Found:
        pass
    except Exception as err:  # noqa: BLE001 - Hypothesis' own Flaky etc.: report what we have
        if state["best"] is None:
            raise
        print(f"hypothesis stopped with {type(err).__name__}: {err}", file=sys.stderr)
    finally:
        engine.MAX_SHRINKING_SECONDS = saved
    generated = state["runs"] - state["shrinks"]
    if state["sig"] is None:
        return generated, None
    return generated, (state["first"], state["best"], state["sig"])


# --------------------------------------------------------------------------- runs


@dataclass
class FuzzSummary:
    run_id: str
    target: str
    generator: str
    examples: int = 0  # traces judged on the target in the whole run, resumed parts included
    skipped: int = 0  # of which an earlier, interrupted run of the same run id judged (--resume)
    passed: int = 0
    indeterminate: int = 0  # no FAIL, some INDETERMINATE
    failed: int = 0  # traces with a FAIL on the target
    model_failed: int = 0  # traces whose *model* history the checker failed (model/checker bug)
    signatures: dict[str, int] = field(default_factory=dict)  # "rule anomaly" -> traces
    failures: list[FailureRecord] = field(default_factory=list)
    duration_s: float = 0.0
    corpus_dir: str = ""
    ops: int = 0
    interrupted: str | None = None  # "SIGINT" / "SIGTERM": the run stopped early, counts are what it kept
    resume: str | None = None  # the command that continues an interrupted run
    # --broker-configs: config name -> its overrides and its part of the counts
    broker_configs: dict[str, dict[str, Any]] = field(default_factory=dict)
    # worker processes that died inside a client (worker, how, the trace kept): a crash fails the run
    crashes: list[dict[str, Any]] = field(default_factory=list)
    # fuzz --faults on a broker: the nemesis ledger (conformance/fault_ledger.py): faults by kind,
    # acked messages lost and duplicated, the rules that judged them
    fault_ledger: dict[str, Any] | None = None
    fault_ledger_text: str = ""

    @property
    def flaky(self) -> int:
        return sum(1 for f in self.failures if f.status == FLAKY)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.model_failed == 0 and not self.crashes

    def merge(self, other: "FuzzSummary") -> None:
        for name in ("examples", "skipped", "passed", "indeterminate", "failed", "model_failed", "ops"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for k, v in other.signatures.items():
            self.signatures[k] = self.signatures.get(k, 0) + v

    def to_json(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in ("run_id", "target", "generator", "examples", "skipped", "passed",
                                              "indeterminate", "failed", "model_failed", "signatures",
                                              "duration_s", "corpus_dir", "ops")}
        out["flaky"] = self.flaky
        out["failures"] = [f.to_json() for f in self.failures]
        if self.interrupted:
            out["interrupted"], out["resume"] = self.interrupted, self.resume
        if self.broker_configs:
            out["broker_configs"] = self.broker_configs
        if self.crashes:
            out["crashes"] = self.crashes
        if self.fault_ledger is not None:
            out["fault_ledger"] = self.fault_ledger
        return out

    def text(self) -> str:
        rate = (self.examples - self.skipped) / self.duration_s if self.duration_s else 0.0
        lines = [f"fuzz {self.run_id} on {self.target} ({self.generator}): {self.examples} traces, {self.ops} ops "
                 f"in {self.duration_s:.1f} s ({rate:.1f} traces/s); {self.passed} pass, {self.indeterminate} "
                 f"indeterminate, {self.failed} FAIL on the target, {self.model_failed} FAIL on the model; "
                 f"{self.skipped} of them judged before a resume"]
        for k, v in sorted(self.signatures.items(), key=lambda kv: -kv[1]):
            lines.append(f"  {v:>6} traces  {k}")
        for name, part in self.broker_configs.items():
            lines.append(f"  broker config {name} {part['overrides'] or '(the suite default)'}: {part['examples']} traces, "
                         f"{part['failed']} FAIL, {part['indeterminate']} indeterminate"
                         + "".join(f"; {k} x{v}" for k, v in part["signatures"].items()))
        for c in self.crashes:
            lines.append(f"  worker w{c['worker']} crashed ({c['why']}); trace: {c['trace'] or 'none started'}")
        if self.fault_ledger_text:
            lines.append(self.fault_ledger_text)
        for f in self.failures:
            lines.append(f"\n{f.status} {f.signature[0]} {f.signature[1]} on {f.target} "
                         f"(shrunk {f.original_ops} -> {f.shrunk_ops} ops; failed {f.reruns_failed}/{f.reruns} re-runs)")
            lines.append(f"  {f.explanation}")
            lines += ["    " + line for line in f.program.splitlines()]
            if f.paths:
                lines.append(f"  saved: {f.paths.get('trace')}")
        return "\n".join(lines)


# A fast chunk's part carries the chunk's tally and new failures in its footer, written with it
# (atomically: tmp + rename), so a resumed run counts and shrinks what the earlier one found.
CHUNK_KEY = b"pulsar_conformance_fuzz_chunk"
_COUNTS = ("examples", "passed", "indeterminate", "failed", "model_failed", "ops")


def _chunk_footer(summary: FuzzSummary, new: dict[tuple[str, str], str]) -> dict[bytes, bytes]:
    doc = {k: getattr(summary, k) for k in _COUNTS}
    doc["signatures"] = summary.signatures
    doc["found"] = [[sig[0], sig[1], text] for sig, text in new.items()]
    return {CHUNK_KEY: json.dumps(doc).encode()}


def _count_chunks(summary: FuzzSummary, found: dict[tuple[str, str], str], examples: int,
                  chunk: int) -> list[tuple[int, int, int]]:
    """Count into ``summary`` the chunks of ``examples`` already in its corpus; the others, to run,
    as (chunk number, first trace, traces)."""
    todo = []
    for n, start in enumerate(range(0, examples, chunk)):
        count = min(chunk, examples - start)
        parts = sorted(Path(summary.corpus_dir).glob(f"part-{summary.run_id}-c{n:06d}-*.parquet"))
        if parts:
            _resume_chunk(summary, found, parts, count)
        else:
            todo.append((n, start, count))
    return todo


def _resume_chunk(summary: FuzzSummary, found: dict[tuple[str, str], str], parts: list[Path], count: int) -> None:
    """Count a chunk an earlier run of the same run id finished: its footer's tally, as skipped."""
    import pyarrow.parquet as pq

    raw = (pq.read_schema(parts[0]).metadata or {}).get(CHUNK_KEY)
    if raw is None:  # a part written before chunks carried their tally: its traces, uncounted
        summary.examples += count
        summary.skipped += count
        return
    doc = json.loads(raw)
    part = FuzzSummary(summary.run_id, summary.target, summary.generator, signatures=doc["signatures"],
                       **{k: doc[k] for k in _COUNTS})
    summary.merge(part)
    summary.skipped += part.examples
    for rule, anomaly, text in doc["found"]:
        found.setdefault((rule, anomaly), text)


def _tally(summary: FuzzSummary, trace: Trace, report: Any, model_report: Any | None) -> None:
    summary.examples += 1
    summary.ops += len(trace.ops)
    status = trace_status(report)
    if status == FAIL:
        summary.failed += 1
    elif status == INDET:
        summary.indeterminate += 1
    else:
        summary.passed += 1
    sig = signature(report)
    if sig is not None:
        key = f"{sig[0]} {sig[1]}"
        summary.signatures[key] = summary.signatures.get(key, 0) + 1
    if model_report is not None and model_report is not report and signature(model_report) is not None:
        summary.model_failed += 1
        msig = signature(model_report)
        key = f"model: {msig[0]} {msig[1]}"
        summary.signatures[key] = summary.signatures.get(key, 0) + 1


def _fast_chunk(job: dict[str, Any]) -> tuple[FuzzSummary, list[tuple[str, tuple[str, str]]]]:
    """Worker: run traces [start, start+count) of the seeded generator on the model; the chunk's
    rows reach the corpus as one part, at the end (all of the chunk or none of it)."""
    from conformance.targets.model import ModelTarget

    summary = FuzzSummary(job["run_id"], "model", "fast")
    config: GenConfig = job["config"]
    new: dict[tuple[str, str], str] = {}
    writer = ChunkWriter(Path(job["corpus_dir"]), job["run_id"], f"c{job['chunk']:06d}")
    for i in range(job["start"], job["start"] + job["count"]):
        check()
        # The generator ran the model alongside: its history is the model target's (one pass, not two).
        try:
            trace, history = random_trace_with_model_history(random.Random(f"{job['seed']}:{i}"), config)
        except GeneratorCrash as crash:
            # a model crash is a finding like any FAIL (HARNESS_ERROR, shrunk and kept), not the end of the run:
            # the partial trace, replayed on the model target, crashes the same way
            trace = with_content_id(crash.trace)
            history, report = run_and_judge(ModelTarget(), trace)
        else:
            try:
                report = check_history(history)
            except Exception as err:  # noqa: BLE001 - a checker crash is a finding
                report = error_report(trace, "checker", err)
        writer.add(history, report.verdicts)
        _tally(summary, trace, report, report)
        sig = signature(report)
        if sig is not None and sig not in new:
            new[sig] = dumps(trace)
    writer.metadata = _chunk_footer(summary, new)
    writer.close()
    return summary, [(text, sig) for sig, text in new.items()]


def _progress(total: int, description: str):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), transient=False,
                    console=_console())


def _console():
    from rich.console import Console

    return Console(stderr=True)


def _regressions_dir(out_dir: Path | str, regressions_dir: Path | str | None) -> Path:
    """Where failures are saved: ``regressions_dir`` if given, else ``OUT/regressions``; never the
    source tree's ``conformance/regressions/`` unless a caller names it."""
    return Path(out_dir) / "regressions" if regressions_dir is None else Path(regressions_dir)


@contextmanager
def _kept_on_interrupt(summary: FuzzSummary, t0: float,
                       recount: Callable[[], FuzzSummary] | None = None) -> Iterator[None]:
    """On Ctrl-C or SIGTERM, hand what was judged so far to the caller (``err.fuzz_summary``):
    ``summary``, or what ``recount()`` reads back from the corpus once the workers are stopped."""
    try:
        yield
    except INTERRUPTS as err:
        summary = recount() if recount is not None else summary
        summary.duration_s = time.monotonic() - t0
        summary.interrupted = signal_name(err)
        err.fuzz_summary = summary
        raise


# How chunks run when not in this process's pool: ``map_chunks(func, jobs, on_wait=...)`` returns
# ``[func(job) for job in jobs]`` computed elsewhere (``spark_reports.distributed.SparkEngine``:
# one Spark task per chunk), calling ``on_wait()`` now and then while it waits.
ChunkMapper = Callable[..., list]


def fuzz_model_fast(*, examples: int, seed: int, out_dir: Path, run_id: str, workers: int = 1,
                    config: GenConfig = MODEL_CONFIG, regressions_dir: Path | None = None,
                    chunk: int = 500, progress: bool = True, max_shrink_runs: int = 2000,
                    map_chunks: ChunkMapper | None = None) -> FuzzSummary:
    """Mass run on the model with the seeded generator, ``workers`` processes, chunked.

    A chunk's part is written whole when the chunk ends; on resume (the same ``run_id``) a chunk
    with a part is counted from its footer and not run again, so an interrupted and resumed run
    has exactly the rows of an uninterrupted one. Failures go to ``regressions_dir``
    (default ``OUT/regressions``). With ``map_chunks`` (``--engine spark``) the chunks run there
    instead of in ``workers`` processes: the same chunk function, so the same parts; this process
    only plans the chunks, sums their tallies and shrinks what they found."""
    from conformance.targets.model import ModelTarget

    t0 = time.monotonic()
    corpus_dir = Path(out_dir) / "corpus"
    corpus_dir.mkdir(parents=True, exist_ok=True)
    remove_partial_parts(corpus_dir, run_id)  # a part a stopped run was writing (never visible as a part)
    summary = FuzzSummary(run_id, "model", "fast", corpus_dir=str(corpus_dir))
    found: dict[tuple[str, str], str] = {}
    jobs = [{"run_id": run_id, "seed": seed, "start": start, "count": count, "chunk": n, "config": config,
             "corpus_dir": str(corpus_dir)} for n, start, count in _count_chunks(summary, found, examples, chunk)]

    def recount() -> FuzzSummary:  # the chunks finished so far, the workers' last ones included
        kept = FuzzSummary(run_id, "model", "fast", corpus_dir=str(corpus_dir))
        _count_chunks(kept, {}, examples, chunk)
        kept.skipped, kept.failures = summary.skipped, summary.failures
        return kept

    bar = _progress(examples, "model") if progress else None
    task = bar.add_task(f"fuzz model x{workers}", total=examples, info="", completed=summary.skipped) if bar else None

    def take(result: tuple[FuzzSummary, list]) -> None:
        part, new = result
        summary.merge(part)
        for text, sig in new:
            found.setdefault(tuple(sig), text)
        if bar:
            bar.update(task, advance=part.examples, info=f"{summary.failed} FAIL / {len(found)} kinds")

    if bar:
        bar.start()

    def finished_chunks() -> None:  # progress while a Spark job runs: its chunks' parts, as they land
        done = sum(1 for _ in corpus_dir.glob(f"part-{run_id}-c*.parquet"))
        bar.update(task, completed=min(examples, done * chunk), info=f"{done} of {len(jobs)} chunks")

    with _kept_on_interrupt(summary, t0, recount):
        try:
            if map_chunks is not None:
                for result in map_chunks(_fast_chunk, jobs, on_wait=finished_chunks if bar else None):
                    take(result)
            elif workers <= 1 or len(jobs) <= 1:
                for job in jobs:
                    take(_fast_chunk(job))
            else:
                import multiprocessing

                # forkserver, not fork: a forked child inherits the locks of the parent's other threads (the
                # pulsar-client C++ threads, a Java driver's reader thread) and can hang on one that was held.
                # Leaving the ``with`` (done, Ctrl-C, SIGTERM) terminates the workers; a part one was writing
                # stays a .tmp file, removed below.
                ctx = multiprocessing.get_context("forkserver")
                with ctx.Pool(min(workers, len(jobs)), initializer=worker_ignores_sigint) as pool:
                    results = pool.imap_unordered(_fast_chunk, jobs)
                    for _ in jobs:
                        while True:
                            check()
                            try:
                                take(results.next(timeout=0.5))
                                break
                            except multiprocessing.TimeoutError:
                                pass
        finally:
            remove_partial_parts(corpus_dir, run_id)
            if bar:
                bar.stop()
        from conformance.trace import parse

        target = ModelTarget()
        for sig, text in sorted(found.items()):
            original = parse(text)
            shrunk = shrink_keeping_signature(target, original, sig, max_shrink_runs)
            summary.failures.append(finish_failure(target, "model", original, shrunk, sig, reruns=1,
                                                    regressions_dir=_regressions_dir(out_dir, regressions_dir),
                                                    found_by="fast"))
    summary.duration_s = time.monotonic() - t0
    return summary


def fuzz_hypothesis(target: Any, *, examples: int, seed: int, out_dir: Path, run_id: str,
                    config: GenConfig = LIVE_CONFIG, regressions_dir: Path | None = None,
                    reruns: int = 3, max_shrinks: int = 60, progress: bool = True, with_model: bool = True,
                    on_tick: Callable[[FuzzSummary], None] | None = None, writer_tag: str = "h",
                    stop_when: Callable[[FailureRecord], bool] | None = None, polish_runs: int = 30) -> FuzzSummary:
    """Hypothesis-generated traces on ``target`` (live or model), shrinking each new failure."""
    from conformance.targets.model import ModelTarget

    t0 = time.monotonic()
    corpus_dir = Path(out_dir) / "corpus"
    name = getattr(target, "name", "target")
    summary = FuzzSummary(run_id, name, "hypothesis", corpus_dir=str(corpus_dir))
    recorded = _recorded(corpus_dir, run_id, name)  # --resume: what an earlier run of run_id judged
    to_skip = {tid: r.times for tid, r in recorded.items()}
    model = ModelTarget()
    known: set[tuple[str, str]] = set()
    bar = _progress(examples, name) if progress else None
    task = bar.add_task(f"fuzz {name}", total=examples, info="") if bar else None

    # Incremental: a live trace takes seconds, so every trace's rows reach disk within ~2 s.
    writer = ChunkWriter(corpus_dir, run_id, writer_tag, flush_every=50_000, flush_interval_s=2.0)

    histories_dir = Path(out_dir) / "histories" / writer_tag

    def keep_history(history: History) -> None:
        # a live history is kept whole, so a later model can judge it again ('pulsar-conformance
        # rejudge --corpus OUT'); Hypothesis may run a trace twice: each run keeps its own file
        stem = history.header.trace_id
        path = histories_dir / f"{stem}.history.jsonl"
        n = 1
        while path.exists():
            n += 1
            path = histories_dir / f"{stem}-{n}.history.jsonl"
        save(history, path)

    def on_example(trace: Trace, history: History, report: Any) -> None:
        model_report = report
        if with_model and name != "model":
            keep_history(history)
            model_history, model_report = run_and_judge(model, trace)
            writer.add(history, report.verdicts, (model_history, model_report.verdicts))
        else:
            writer.add(history, report.verdicts)
        _tally(summary, trace, report, model_report)
        if bar:
            bar.update(task, advance=1, info=f"{summary.failed} FAIL")
        if on_tick:
            on_tick(summary)

    resumed: list[str] = []

    def skip(trace: Trace) -> bool:
        # a trace recorded n times (Hypothesis may generate the same trace again) is skipped n times
        tid = trace.header.trace_id
        if to_skip.get(tid, 0) > 0:
            to_skip[tid] -= 1
            resumed.append(tid)
            if bar:
                bar.update(task, advance=1)
            return True
        return False

    if bar:
        bar.start()
    try:
        round_seed = seed
        while summary.examples + len(resumed) < examples:
            left = examples - summary.examples - len(resumed)
            before = summary.examples + len(resumed)
            _, found = hypothesis_search(target, config=config, max_examples=left, seed=round_seed, known=known,
                                         on_example=on_example, skip=skip, max_shrinks=max_shrinks,
                                         shrink_seconds=5.0 if name == "model" else 240.0,
                                         storage_dir=Path(out_dir) / ".hypothesis")
            round_seed += 1_000_003
            if found is None:
                if summary.examples + len(resumed) == before:
                    break  # Hypothesis ran out of distinct examples
                continue
            original, shrunk, sig = found
            known.add(sig)
            # Polish Hypothesis' result by deleting ops with their dependents (free on the model,
            # ~1 s a run on a broker, hence the smaller budget there).
            shrunk = shrink_keeping_signature(target, shrunk, sig, 500 if name == "model" else polish_runs)
            if bar:
                bar.update(task, info=f"{summary.failed} FAIL; confirming {sig[0]}")
            summary.failures.append(finish_failure(target, name, original, shrunk, sig, reruns=reruns,
                                                    regressions_dir=_regressions_dir(out_dir, regressions_dir),
                                                    found_by="hypothesis"))
            if stop_when is not None and stop_when(summary.failures[-1]):
                break
    except INTERRUPTS as err:
        summary.interrupted = signal_name(err)
        err.fuzz_summary = summary
        raise
    finally:
        writer.close()  # the traces judged so far, whole (a trace's rows are added at once)
        _count_recorded(summary, recorded, resumed)
        summary.duration_s = time.monotonic() - t0
        if bar:
            bar.stop()
    return summary


@dataclass
class _Recorded:
    """One trace id in the corpus of a run: how many times it was recorded, its ops, its verdicts."""

    times: int = 0
    ops: int = 0
    verdicts: set[str] = field(default_factory=set)  # on the target
    model_failed: bool = False  # a FAIL in the model's rows of a live trace


def _recorded(corpus_dir: Path, run_id: str, name: str) -> dict[str, _Recorded]:
    """The traces run ``run_id`` recorded, read back from its corpus parts (a recording is one
    row per op; its first step tells recordings apart)."""
    import pyarrow.parquet as pq

    from conformance.corpus import check_part

    rows: dict[str, list[tuple[int, str, str]]] = {}
    for part in sorted(Path(corpus_dir).glob(f"part-{run_id}-*.parquet")):
        check_part(part)
        cols = pq.read_table(part, columns=["trace_id", "target", "step", "verdict"]).to_pydict()
        for tid, target, step, verdict in zip(cols["trace_id"], cols["target"], cols["step"], cols["verdict"]):
            rows.setdefault(tid, []).append((step, target, verdict))
    out = {}
    for tid, items in rows.items():
        mine = [(step, verdict) for step, target, verdict in items if name == "model" or target != "model"]
        first = min((step for step, _ in mine), default=None)
        times = sum(1 for step, _ in mine if step == first)
        out[tid] = _Recorded(times, len(mine) // max(times, 1), {v for _, v in mine},
                             any(t == "model" and v == FAIL for _, t, v in items) and name != "model")
    return out


def _count_recorded(summary: FuzzSummary, recorded: dict[str, _Recorded], trace_ids: list[str]) -> None:
    """Count the traces an earlier run judged (``--resume`` skipped them) from their corpus rows:
    pass / indeterminate / FAIL on the target, ops, FAILs of the model's history on a live run.
    (Their signatures are not in the rows: ``signatures`` counts this run's traces.)"""
    for tid in trace_ids:
        r = recorded[tid]
        summary.examples += 1
        summary.skipped += 1
        summary.ops += r.ops
        if FAIL in r.verdicts:
            summary.failed += 1
        elif INDET in r.verdicts:
            summary.indeterminate += 1
        else:
            summary.passed += 1
        summary.model_failed += r.model_failed


def _live_worker(job: dict[str, Any]) -> FuzzSummary:
    """Worker process: its own client (and namespace per trace), optionally its own broker."""
    from conformance.targets.pulsar import BrokerTarget
    from fixtures.provider import broker_for

    def go(endpoint: Any) -> FuzzSummary:
        target = job["make_target"]() if job.get("make_target") else BrokerTarget(  # make_target: a test's stand-in
            endpoint, client=job.get("client", "python"), java_client_version=job.get("java_client_version"))
        target = InflightRecorder(target, inflight_path(job["out_dir"], job["worker"]))  # kept if the process dies
        return fuzz_hypothesis(target, examples=job["examples"], seed=job["seed"],
                               out_dir=Path(job["out_dir"]), run_id=job["run_id"], config=job["config"],
                               regressions_dir=job["regressions_dir"], reruns=job["reruns"],
                               max_shrinks=job["max_shrinks"], progress=False, writer_tag=f"w{job['worker']}",
                               on_tick=(lambda s: job["ticks"].put(s.failed)) if job.get("ticks") is not None else None)

    try:
        if job.get("endpoint") is not None:
            return go(job["endpoint"])
        with broker_for(job["spec"], version=job.get("version")) as endpoint:
            return go(endpoint)
    except Terminated as err:  # the parent stops its workers with SIGTERM; the cleanup above is done
        exit_quietly(err)


def _live_worker_entry(job: dict[str, Any], results: Any) -> None:
    """A worker process (``workers.run_supervised``): run the job, put its part (or its error) on ``results``."""
    worker_cleans_up_on_sigterm()
    try:
        part = _live_worker(job)
    except Exception:  # noqa: BLE001 - the parent re-raises it with this text
        import traceback

        results.put(("error", job["worker"], traceback.format_exc()))
        return
    results.put(("done", job["worker"], part))


def resume_command(target_name: str, *, examples: int, seed: int, out_dir: Path, run_id: str, workers: int = 1,
                   broker_per_worker: bool = False, generator: str | None = None, regressions_dir: Path | None = None,
                   reruns: int | None = None, max_shrinks: int = 60, admin_url: str | None = None,
                   faults: bool = False, client: str | None = None, broker_configs: str | None = None,
                   features: str | None = None, broker_version: str | None = None, focus: str | None = None,
                   java_client_version: str | None = None) -> str:
    """The ``pulsar-conformance fuzz`` command that continues run ``run_id`` (a token is passed again
    the way it was the first time: ``--token-env``/``--token-file``; it is never printed)."""
    import shlex

    cmd = ["pulsar-conformance", "fuzz", "--target", target_name, "--examples", str(examples), "--seed", str(seed),
           "--out", str(out_dir), "--workers", str(workers)]
    if broker_per_worker:
        cmd.append("--broker-per-worker")
    if generator:
        cmd += ["--generator", generator]
    if regressions_dir is not None and Path(regressions_dir) != Path(out_dir) / "regressions":
        cmd += ["--regressions", str(regressions_dir)]
    if reruns is not None:
        cmd += ["--reruns", str(reruns)]
    if max_shrinks != 60:
        cmd += ["--max-shrinks", str(max_shrinks)]
    if admin_url:
        cmd += ["--pulsar-admin-url", admin_url]
    if faults:
        cmd.append("--faults")
    if client:
        cmd += ["--client", client]
    if broker_configs:
        cmd += ["--broker-configs", broker_configs]
    if features:
        cmd += ["--features", features]
    if broker_version:
        cmd += ["--broker-version", broker_version]
    if focus:
        cmd += ["--focus", focus]
    if java_client_version:
        cmd += ["--java-client-version", java_client_version]
    return shlex.join([*cmd, "--resume", run_id])


def _write_summary(out_dir: Path, summary: FuzzSummary) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "summary.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(summary.to_json(), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


class CorpusInUseError(ValueError):
    """A new fuzz run (no ``--resume``) was pointed at an ``--out`` whose corpus holds another run's
    traces: bad usage (exit 2), never a second run mixed into the first's corpus."""


def check_fresh_corpus(out_dir: Path) -> None:
    """Refuse a new run into ``out_dir`` when its ``corpus/`` already holds another run's parts: the
    two runs' traces would sit in one corpus, the first ones twice over once the same seed runs
    again. ``--resume RUN_ID`` continues that run; another ``--out`` starts apart. ``CorpusInUseError``."""
    import re

    parts = sorted((Path(out_dir) / "corpus").glob("part-*.parquet"))
    runs = sorted({m.group(1) for p in parts for m in [re.match(r"part-([0-9a-f]{12})", p.name)] if m})
    if parts:
        named = ", ".join(runs) or "another run"
        raise CorpusInUseError(f"--out {out_dir}: its corpus already holds {len(parts)} part(s) of fuzz run {named}; "
                               f"continue that run with --resume {runs[-1] if runs else 'RUN_ID'}, or give another --out")


def fuzz(target_name: str, *, examples: int, seed: int, out_dir: Path, run_id: str | None = None,
         workers: int = 1, broker_per_worker: bool = False, generator: str | None = None,
         regressions_dir: Path | None = None, reruns: int | None = None, max_shrinks: int = 60,
         progress: bool = True, endpoint: Any = None, target: Any = None, admin_url: str | None = None,
         token: str | None = None, faults: bool = False, client: str | None = None,
         broker_configs: str | None = None, features: str | None = None,
         broker_version: str | None = None, focus: str | None = None,
         map_chunks: ChunkMapper | None = None, java_client_version: str | None = None) -> FuzzSummary:
    """The whole command: pick a generator, obtain the broker(s), run, write ``summary.json``.

    Failures are saved under ``regressions_dir`` (default ``OUT/regressions``). Ctrl-C or SIGTERM
    stops the run: worker processes are terminated, every finished corpus part is kept (no
    partial one is left), ``summary.json`` counts what was kept (``"interrupted"``, ``"resume"``),
    one line on stderr gives the command that continues it (``--resume RUN_ID``), and the
    interruption is re-raised: ``KeyboardInterrupt`` for Ctrl-C (the command line exits 130),
    ``SystemExit(143)`` for SIGTERM (``interruption.reraise``; only when SIGTERM had its default
    disposition, which would have killed the process outright).

    ``faults``: the generator draws the fault ops on a broker too (docs/faults.md; ``LIVE_FAULT_CONFIG``),
    and an embedded broker is started behind the fault proxy (the model draws them always).

    ``client``: python, java, go or mixed (``strategies.generation_config``): every generated handle
    names its client (mixed: drawn per handle) and a live target runs it on that client (the Java
    and Go ones through their drivers, docs/java-driver.md, docs/go-driver.md). Default: mixed on the
    model, python live.

    ``features``: ``core`` (the live default) or ``all`` (every feature pool on a broker too;
    the model always draws all).

    ``broker_configs``: ``all`` or names from ``fixtures.broker_configs`` (embedded or docker, one
    worker): one broker per config in turn, the traces split between them.

    ``focus``: comma-separated feature names (``strategies.ALL_FEATURES``) every trace has on, on top
    of the swarm's draws (``strategies.focused``): a campaign aimed at one area.

    ``broker_version``: the release the embedded or docker broker runs (an external cluster must run
    it); the model follows the release each history's header reports (issue 16: 2,000 traces per
    release of the version matrix).

    ``java_client_version``: the org.apache.pulsar:pulsar-client release the Java driver runs (default: the broker's;
    ``--java-client-version``), for ``client`` java or mixed on a broker: a release whose own client does not run
    here (5.0.0-M1) is fuzzed with Java through an older one, as ``run`` does (issue 49's client axis).

    ``map_chunks``: where the fast generator's chunks run instead of ``workers`` processes
    (``--engine spark``: ``spark_reports.distributed.SparkEngine.map_chunks``); model target only."""
    from fixtures.endpoint import parse_target

    run_id = run_id or uuid.uuid4().hex[:12]
    out_dir = Path(out_dir)
    regressions_dir = _regressions_dir(out_dir, regressions_dir)
    spec = parse_target(target_name, admin_url=admin_url)
    chosen = generator
    generator = generator or ("fast" if spec.kind == "model" else "hypothesis")
    with interruptible():
        try:
            if broker_version and spec.kind == "model":
                raise ValueError("--broker-version names the release of a broker the command starts or checks: it needs "
                                 "--target embedded, docker or a broker URL, not model")
            if java_client_version and (spec.kind == "model" or (client or "python") not in ("java", "mixed")):
                raise ValueError("--java-client-version names the Java driver's client release: it needs a broker target "
                                 "(not model) and --client java or mixed")
            if faults and spec.kind != "model" and (spec.kind != "embedded" or workers > 1):
                raise ValueError("--faults needs --target model, or --target embedded with one worker (the fault proxy "
                                 "fronts the one broker the command starts)")
            focus_names = [n for n in (focus or "").split(",") if n.strip()]
            if "faults" in focus_names and spec.kind != "model" and not faults:
                raise ValueError("--focus faults on a broker needs --faults (the fault proxy in front of the broker)")
            model_config = focused(generation_config(model=True, client=client), focus_names)
            live_config = focused(generation_config(model=False, faults=faults, client=client, features=features),
                                  focus_names)
            configs = None
            if broker_configs:
                from fixtures.broker_configs import broker_configs as named_configs

                configs = named_configs(broker_configs)
                if spec.kind not in ("embedded", "docker") or workers > 1 or endpoint is not None or target is not None:
                    raise ValueError("--broker-configs starts one broker per config: it needs --target embedded or docker "
                                     "and one worker")
            if map_chunks is not None and (spec.kind != "model" or generator != "fast"):
                raise ValueError("--engine spark runs the model's fast generator on Spark executors: it needs --target "
                                 "model and the fast generator (a broker's traces run on its broker; judge their "
                                 "histories on Spark with 'pulsar-conformance rejudge --engine spark')")
            if spec.kind == "model" and generator == "fast":
                summary = fuzz_model_fast(examples=examples, seed=seed, out_dir=out_dir, run_id=run_id, workers=workers,
                                          regressions_dir=regressions_dir, progress=progress, config=model_config,
                                          map_chunks=map_chunks)
            elif spec.kind == "model":
                from conformance.targets.model import ModelTarget

                summary = fuzz_hypothesis(target or ModelTarget(), examples=examples, seed=seed, out_dir=out_dir,
                                          run_id=run_id, config=model_config, regressions_dir=regressions_dir,
                                          reruns=reruns or 1, max_shrinks=max_shrinks * 10, progress=progress)
            elif configs is not None:
                summary = _live_by_broker_config(spec, configs, token, version=broker_version, examples=examples,
                                                 seed=seed, run_id=run_id, java_client_version=java_client_version,
                                                 client=client, faults=faults, out_dir=out_dir, regressions_dir=regressions_dir,
                                                 reruns=reruns or 3, max_shrinks=max_shrinks, progress=progress,
                                                 config=live_config)
            elif target is not None or workers <= 1:
                summary = _live_single(spec, target, endpoint, token, faults=faults, version=broker_version,
                                       examples=examples, seed=seed, java_client_version=java_client_version,
                                       out_dir=out_dir, run_id=run_id, regressions_dir=regressions_dir, reruns=reruns or 3,
                                       max_shrinks=max_shrinks, progress=progress, config=live_config, client=client)
            else:
                summary = _live_parallel(spec, endpoint, token, version=broker_version, examples=examples, seed=seed,
                                         out_dir=out_dir, java_client_version=java_client_version,
                                         run_id=run_id, workers=workers, broker_per_worker=broker_per_worker,
                                         regressions_dir=regressions_dir, reruns=reruns or 3, max_shrinks=max_shrinks,
                                         progress=progress, config=live_config, client=client)
        except INTERRUPTS as err:
            kept = getattr(err, "fuzz_summary", None) or FuzzSummary(run_id, spec.name, generator,
                                                                     corpus_dir=str(out_dir / "corpus"))
            kept.interrupted = signal_name(err)
            kept.resume = resume_command(target_name, examples=examples, seed=seed, out_dir=out_dir, run_id=run_id,
                                         workers=workers, broker_per_worker=broker_per_worker, generator=chosen,
                                         regressions_dir=regressions_dir, reruns=reruns, max_shrinks=max_shrinks,
                                         admin_url=admin_url, faults=faults, client=client,
                                         broker_configs=broker_configs, features=features,
                                         broker_version=broker_version, focus=focus,
                                         java_client_version=java_client_version)
            if faults and spec.kind != "model":
                _add_fault_ledger(kept, out_dir)  # what the traces kept so far cost
            _write_summary(out_dir, kept)
            print(f"fuzz {run_id} interrupted ({kept.interrupted}, exit {exit_code(err)}): {kept.examples} of {examples} "
                  f"traces judged and kept in {kept.corpus_dir}; continue with: {kept.resume}", file=sys.stderr, flush=True)
            err.resume_announced = True  # the command's edge need not say it again
            reraise(err)
    if faults and spec.kind != "model":
        _add_fault_ledger(summary, out_dir)
    _write_summary(out_dir, summary)
    return summary


def _add_fault_ledger(summary: FuzzSummary, out_dir: Path) -> None:
    """The nemesis ledger of a live ``--faults`` run, from the histories it kept (resumed parts
    included): what faults were drawn and what they cost in acked messages (docs/faults.md)."""
    from conformance.fault_ledger import ledger_of_folder

    ledger = ledger_of_folder(out_dir / "histories")
    summary.fault_ledger = ledger.to_json()
    summary.fault_ledger_text = ledger.text()


def _live_by_broker_config(spec, configs, token, *, examples: int, seed: int, run_id: str, client: str | None,
                           faults: bool = False, version: str | None = None, java_client_version: str | None = None,
                           **kw) -> FuzzSummary:
    """One embedded broker per config (``fixtures.broker_configs``), in turn, each running its share
    of the traces; each share is its own sub-run (``RUN_ID-CONFIG`` in the corpus, so ``--resume``
    finds what it recorded), and the summary counts every share and each apart."""
    from conformance.targets.pulsar import BrokerTarget
    from fixtures.provider import broker_for

    t0 = time.monotonic()
    total = FuzzSummary(run_id, spec.name, "hypothesis", corpus_dir=str(Path(kw["out_dir"]) / "corpus"))
    shares = [examples // len(configs) + (1 if i < examples % len(configs) else 0) for i in range(len(configs))]
    for i, (cfg, n) in enumerate(zip(configs, shares)):
        if not n:
            continue
        with broker_for(spec, version=version, token=token, overrides=cfg.overrides, faults=faults,
                        progress=lambda s: print(s, file=sys.stderr)) as ep:
            part = fuzz_hypothesis(BrokerTarget(ep, client=client or "python", java_client_version=java_client_version),
                                   examples=n, seed=seed + 7919 * i,
                                   run_id=f"{run_id}-{cfg.name}", writer_tag=cfg.name, **kw)
        total.merge(part)
        total.failures += part.failures
        total.broker_configs[cfg.name] = {"overrides": dict(cfg.overrides), "run_id": part.run_id, "examples": part.examples,
                                          "failed": part.failed, "indeterminate": part.indeterminate,
                                          "signatures": dict(part.signatures)}
    total.duration_s = time.monotonic() - t0
    return total


def _live_single(spec, target, endpoint, token, *, faults: bool = False, client: str | None = None,
                 version: str | None = None, java_client_version: str | None = None, **kw) -> FuzzSummary:
    from conformance.targets.pulsar import BrokerTarget
    from fixtures.provider import broker_for

    if target is not None:
        return fuzz_hypothesis(target, **kw)
    if endpoint is not None:
        return fuzz_hypothesis(BrokerTarget(endpoint, client=client or "python", java_client_version=java_client_version), **kw)
    with broker_for(spec, version=version, token=token, progress=lambda s: print(s, file=sys.stderr), faults=faults) as ep:
        return fuzz_hypothesis(BrokerTarget(ep, client=client or "python", java_client_version=java_client_version), **kw)


def _live_parallel(spec, endpoint, token, *, examples, seed, out_dir, run_id, workers, broker_per_worker,
                   regressions_dir, reruns, max_shrinks, progress, make_target=None, config: GenConfig = LIVE_CONFIG,
                   client: str | None = None, version: str | None = None,
                   java_client_version: str | None = None) -> FuzzSummary:
    import contextlib
    import multiprocessing

    from fixtures.provider import broker_for

    t0 = time.monotonic()
    summary = FuzzSummary(run_id, spec.name, "hypothesis", corpus_dir=str(Path(out_dir) / "corpus"))
    shares = [examples // workers + (1 if w < examples % workers else 0) for w in range(workers)]
    with contextlib.ExitStack() as stack:
        if endpoint is None and not broker_per_worker:
            endpoint = stack.enter_context(broker_for(spec, version=version, token=token,
                                                      progress=lambda s: print(s, file=sys.stderr)))
        jobs = [{"examples": n, "seed": seed + 7919 * w, "out_dir": str(out_dir), "run_id": run_id,
                 "config": config, "client": client or "python", "regressions_dir": regressions_dir, "reruns": reruns, "max_shrinks": max_shrinks,
                 "endpoint": None if broker_per_worker else endpoint, "spec": spec, "version": version, "worker": w,
                 "java_client_version": java_client_version,
                 "make_target": make_target}
                for w, n in enumerate(shares) if n]
        bar = _progress(examples, spec.name) if progress else None
        task = bar.add_task(f"fuzz {spec.name} x{workers}", total=examples, info="") if bar else None
        ctx = multiprocessing.get_context("spawn")
        manager = stack.enter_context(ctx.Manager())
        ticks = manager.Queue()  # one item per finished trace, for the progress bar
        for job in jobs:
            job["ticks"] = ticks
        if bar:
            bar.start()
        corpus_dir = Path(summary.corpus_dir)
        before = sum(r.times for r in _recorded(corpus_dir, run_id, spec.name).values())

        def recount() -> FuzzSummary:  # the workers' summaries die with them: read the corpus back
            kept = FuzzSummary(run_id, spec.name, "hypothesis", corpus_dir=str(corpus_dir))
            recorded = _recorded(corpus_dir, run_id, spec.name)
            _count_recorded(kept, recorded, [tid for tid, r in recorded.items() for _ in range(r.times)])
            kept.skipped = before
            return kept

        with _kept_on_interrupt(summary, t0, recount):
            try:
                def on_tick(failed: Any) -> None:
                    if bar:
                        bar.update(task, advance=1, info=f"{failed} FAIL in a worker" if failed else "")

                def on_part(part: FuzzSummary) -> None:
                    summary.merge(part)
                    summary.failures += part.failures
                    if bar:
                        bar.update(task, info=f"{summary.failed} FAIL")

                def on_death(job: dict[str, Any], why: str, restarting: bool) -> None:
                    kept = keep_crash(out_dir, job["worker"], regressions_dir or Path(out_dir) / "regressions", why)
                    summary.crashes.append({"worker": job["worker"], "why": why,
                                            "trace": str(kept) if kept is not None else None})
                    print(f"fuzz worker w{job['worker']} died ({why})"
                          + (f" running the trace kept as {kept}" if kept is not None else " before its first trace")
                          + ("; it starts again and resumes its share" if restarting
                             else "; it has died too often: the run stops"), file=sys.stderr, flush=True)

                # Leaving (done, Ctrl-C, SIGTERM) stops the workers with SIGTERM, which each turns into
                # ``Terminated``: its corpus rows, namespace and own broker are cleaned up.
                run_supervised(ctx, jobs, _live_worker_entry, results=manager.Queue(), on_part=on_part, on_tick=on_tick,
                               ticks=ticks, check=check, on_death=on_death, grace_s=WORKER_GRACE_S)
            finally:
                if bar:
                    bar.stop()
    summary.duration_s = time.monotonic() - t0
    return summary


# How long a worker has to clean up after SIGTERM before it is killed (its namespace, its parts).
WORKER_GRACE_S = 20.0


def fuzz_budget(target: Any, *, examples: int, seed: int, out_dir: Path | str,
                regressions_dir: Path | None = None, reruns: int = 2, max_shrinks: int = 40,
                run_id: str | None = None) -> FuzzSummary:
    """A small fuzz budget for the main job: ``target`` is a target name ("model", "embedded",
    a URL) or a runnable target object (``ModelTarget``, ``BrokerTarget``). No progress bar.
    Failures are saved under ``regressions_dir`` (default ``OUT/regressions``). Given the
    ``run_id`` of an interrupted budget, it resumes it (what that run recorded is not run again)."""
    out_dir = Path(out_dir)
    if isinstance(target, str):
        return fuzz(target, examples=examples, seed=seed, out_dir=out_dir, regressions_dir=regressions_dir,
                    reruns=reruns, max_shrinks=max_shrinks, progress=False, run_id=run_id)
    name = getattr(target, "name", "target")
    # the fault ops are drawn on the model, and on a broker behind the fault proxy (docs/faults.md)
    if name == "model":
        config = MODEL_CONFIG
    else:
        config = LIVE_FAULT_CONFIG if getattr(target, "supports_faults", False) else LIVE_CONFIG
    summary = fuzz_hypothesis(target, examples=examples, seed=seed, out_dir=out_dir, run_id=run_id or uuid.uuid4().hex[:12],
                              config=config, regressions_dir=regressions_dir, reruns=1 if name == "model" else reruns,
                              max_shrinks=max_shrinks * (10 if name == "model" else 1), progress=False)
    _write_summary(out_dir, summary)
    return summary

