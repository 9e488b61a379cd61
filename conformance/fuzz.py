"""Differential fuzzing: generated traces on the model and on a target, judged, shrunk, stored.

  pulsar-conformance fuzz --target model|embedded|docker|URL [--examples N] [--seed S]
                          [--out DIR] [--workers W] [--broker-per-worker] [--resume RUN_ID]

Each generated trace (``conformance.strategies``) runs on the reference model and on the target;
the checker judges both histories (the model's own history must pass: a FAIL there is a model or
checker bug; the target's history is the conformance question). Every judged history is
appended to the outcome corpus (``CorpusWriter``; ``--resume RUN_ID`` skips traces already
recorded). A failure is identified by its *signature*, the (rule id, anomaly) of its first FAIL
verdict; it is shrunk while keeping that signature, re-run ``--reruns`` times to tell FAIL from
FLAKY (never retried away), saved to ``conformance/regressions/<id>.trace.jsonl`` with
``<id>.history.jsonl`` and ``<id>.verdicts.json``, and printed as a short program.

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

import argparse
import json
import os
import queue
import random
import sys
import time
import uuid
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from conformance.corpus import CorpusWriter, completed_traces
from conformance.strategies import (
    LIVE_CONFIG,
    MODEL_CONFIG,
    GenConfig,
    random_trace_with_model_history,
    trace_id_for,
    traces,
)
from conformance.trace import History, Op, Trace, TraceFormatError, TraceHeader, check_handles, dumps, save

REGRESSIONS_DIR = Path(__file__).parent / "regressions"
FAIL, FLAKY, PASS, INDET = "FAIL", "FLAKY", "PASS", "INDETERMINATE"


# --------------------------------------------------------------------------- judging


def _check(history: History):
    from conformance.checker import check  # looked up on each call: tests may swap the checker's model

    return check(history)


def signature(report: Any) -> tuple[str, str] | None:
    """The failure's identity: (rule id, anomaly) of its first FAIL verdict, or None."""
    for v in report.verdicts:
        if v.status == "FAIL":
            return (v.rule_id, v.anomaly or "")
    return None


def has_signature(report: Any, sig: tuple[str, str]) -> bool:
    return any(v.status == "FAIL" and (v.rule_id, v.anomaly or "") == sig for v in report.verdicts)


def trace_status(report: Any) -> str:
    statuses = {v.status for v in report.verdicts}
    return FAIL if "FAIL" in statuses else INDET if "INDETERMINATE" in statuses else PASS


HARNESS_ERROR = "HARNESS-ERROR"


@dataclass(frozen=True)
class _ErrorVerdict:
    rule_id: str
    step: int | None
    status: str
    anomaly: str | None
    allowed: str
    observed: str
    explanation: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class ErrorReport:
    """Stands in for a ``CheckReport`` when the target or the checker raised: a crash is a
    finding too (signature ``HARNESS-ERROR``, ``<where>:<exception>``), shrunk like any FAIL."""

    trace_id: str
    verdicts: tuple[_ErrorVerdict, ...]

    def failures(self) -> list[_ErrorVerdict]:
        return list(self.verdicts)

    def rule_verdicts(self) -> dict[str, str]:
        return {HARNESS_ERROR: "FAIL"}

    def to_json(self) -> dict[str, Any]:
        return {"trace_id": self.trace_id, "rule_verdicts": self.rule_verdicts(),
                "verdicts": [v.to_json() for v in self.verdicts]}


def _error_report(trace: Trace, where: str, err: BaseException) -> ErrorReport:
    import traceback

    frame = traceback.extract_tb(err.__traceback__)[-1] if err.__traceback__ else None
    at = f" at {Path(frame.filename).name}:{frame.lineno}" if frame else ""
    return ErrorReport(trace.header.trace_id, (_ErrorVerdict(
        HARNESS_ERROR, None, "FAIL", f"{where}:{type(err).__name__}", "no exception", f"{type(err).__name__}: {err}",
        f"The {where} raised {type(err).__name__}{at}: {err}"),))


def run_and_judge(target: Any, trace: Trace):
    """Run ``trace`` on ``target`` and judge it; a crash of either becomes an ``ErrorReport``."""
    try:
        history = target.run(trace)
    except Exception as err:  # noqa: BLE001 - a harness crash is reported, shrunk, never hidden
        from conformance.trace import Event, Outcome

        events = tuple(Event(op, Outcome.indeterminate("not run: the target crashed"), 0.0, 0.0) for op in trace.ops)
        return History(trace.header, events), _error_report(trace, "target", err)
    try:
        return history, _check(history)
    except Exception as err:  # noqa: BLE001
        return history, _error_report(trace, "checker", err)


# --------------------------------------------------------------------------- the short program


def _lit(v: Any) -> str:
    return json.dumps(v) if isinstance(v, (str, dict, list)) else repr(v)


def _kw(args: dict[str, Any], skip: Iterable[str]) -> str:
    rest = [f"{k}={_lit(v)}" for k, v in args.items() if k not in skip]
    return (", " + ", ".join(rest)) if rest else ""


def op_line(op: Op) -> str:
    a, name = op.args, op.op
    if name == "create_topic":
        return f"create_topic({_lit(a['topic'])}, partitions={a.get('partitions', 0)})"
    if name == "create_producer":
        return f"{a['producer']} = producer({_lit(a['topic'])}{_kw(a, ('producer', 'topic'))})"
    if name == "send":
        return f"{a['producer']}.send({_lit(a['payload'])}{_kw(a, ('producer', 'payload'))})"
    if name == "subscribe":
        return (f"{a['consumer']} = subscribe({_lit(a.get('topic') or a.get('topics'))}, {_lit(a['subscription'])}, "
                f"{a.get('type', 'Exclusive')}{_kw(a, ('consumer', 'topic', 'topics', 'subscription', 'type'))})")
    if name in ("receive", "read_next"):
        who = a.get("consumer") or a.get("reader")
        return f"{who}.{name}(timeout_ms={a['timeout_ms']})"
    if name in ("ack", "ack_cumulative", "nack"):
        return f"{a['consumer']}.{name}({_lit(a['message'])})"
    if name in ("redeliver_unacked", "unsubscribe"):
        return f"{a['consumer']}.{name}()"
    if name == "seek":
        return f"{a['consumer']}.seek({_kw(a, ('consumer',))[2:]})"
    if name == "close":
        return f"{a['handle']}.close()"
    if name == "create_reader":
        return f"{a['reader']} = reader({_lit(a['topic'])}, start={_lit(a['start'])}{_kw(a, ('reader', 'topic', 'start'))})"
    if name == "advance_time":
        return f"sleep_ms({a['ms']})"
    if name == "stats":
        return f"backlog({_lit(a['topic'])}, {_lit(a['subscription'])})"
    return f"{name}({_kw(a, ())[2:]})"


def program(trace: Trace, history: History | None = None, report: Any = None) -> str:
    """The trace as a few lines a person reads; with a history, what each op observed."""
    fails: dict[int | None, list[str]] = {}
    if report is not None:
        for v in report.verdicts:
            if v.status == "FAIL":
                fails.setdefault(v.step, []).append(f"FAIL {v.rule_id} {v.anomaly or ''}".rstrip())
    lines = []
    events = {e.step: e for e in history.events} if history is not None else {}
    for op in trace.ops:
        line = op_line(op)
        notes = []
        event = events.get(op.step)
        if event is not None:
            out = event.outcome
            if out.status == "rejected":
                notes.append(f"rejected {out.error}")
            elif out.status == "indeterminate":
                notes.append("indeterminate")
            elif op.op in ("receive", "read_next"):
                msg = (out.value or {}).get("message")
                notes.append("nothing" if msg is None else f"{msg['payload']} (redelivery {msg['redelivery_count']})")
                notes[-1] += f" at {event.t_end_ms:.0f} ms"
            elif op.op == "stats":
                notes.append(f"backlog {(out.value or {}).get('backlog')}")
        notes += fails.get(op.step, [])
        lines.append(line + (f"   # -> {'; '.join(notes)}" if notes else ""))
    for note in fails.get(None, []):
        lines.append(f"# at the end: {note}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- structural shrinking


def _rebuild(trace: Trace, ops: list[tuple[str, dict[str, Any]]]) -> Trace | None:
    built = tuple(Op(i, name, dict(args)) for i, (name, args) in enumerate(ops, start=1))
    try:
        check_handles(built)
    except TraceFormatError:
        return None
    return Trace(trace.header, built)


def _without(ops: list[tuple[str, dict[str, Any]]], index: int) -> list[tuple[str, dict[str, Any]]]:
    """Drop op ``index`` and every later op that depends on what it created or sent."""
    name, args = ops[index]
    handles: set[str] = set()
    labels: set[str] = set()
    if name in ("create_producer", "subscribe", "create_reader"):
        handles.add(args.get("producer") or args.get("consumer") or args.get("reader"))
    if name == "send":
        labels.add(args["payload"])
    out = ops[:index]
    for later_name, later in ops[index + 1:]:
        if later_name == "send" and later.get("producer") in handles:
            labels.add(later["payload"])
        uses = {later.get("producer"), later.get("consumer"), later.get("reader"), later.get("handle")}
        named = {later.get("message"), later.get("publish_time_of")}
        if isinstance(later.get("start"), dict):
            named.add(later["start"].get("message"))
        if uses & handles or named & labels:
            continue
        out.append((later_name, later))
    return out


OPTIONAL_ARGS = ("key", "ordering_key", "properties", "event_time", "initial_position", "receiver_queue_size",
                 "inclusive", "consumer_name")


def ddmin(trace: Trace, fails: Callable[[Trace], bool], *, max_runs: int = 2000) -> Trace:
    """Smallest trace (by op deletion with dependents, then argument removal) for which ``fails``."""
    runs = 0
    best = trace
    changed = True
    while changed and runs < max_runs:
        changed = False
        ops = [(op.op, dict(op.args)) for op in best.ops]
        i = len(ops) - 1
        while i >= 0 and runs < max_runs:
            candidate = _rebuild(best, _without(ops, i))
            if candidate is not None and len(candidate.ops) < len(best.ops):
                runs += 1
                if fails(candidate):
                    best, ops, changed = candidate, [(op.op, dict(op.args)) for op in candidate.ops], True
                    i = min(i, len(ops)) - 1
                    continue
            i -= 1
        for i, (name, args) in enumerate(list(ops)):
            for arg in OPTIONAL_ARGS:
                if arg in args and not (arg == "consumer_name" and args.get("type") == "Failover") and runs < max_runs:
                    trial = list(ops)
                    trial[i] = (name, {k: v for k, v in args.items() if k != arg})
                    candidate = _rebuild(best, trial)
                    runs += 1
                    if candidate is not None and fails(candidate):
                        best, ops, args, changed = candidate, trial, trial[i][1], True
    return best


# --------------------------------------------------------------------------- failures


@dataclass
class FailureRecord:
    signature: tuple[str, str]
    status: str  # FAIL or FLAKY
    target: str
    trace_id: str
    original_ops: int
    shrunk_ops: int
    reruns_failed: int
    reruns: int
    program: str
    explanation: str
    found_by: str  # "hypothesis" | "fast"
    paths: dict[str, str] = field(default_factory=dict)
    shrunk: Trace | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("shrunk")
        out["signature"] = list(self.signature)
        return out


def confirm(target: Any, trace: Trace, sig: tuple[str, str], reruns: int):
    """Re-run ``trace`` ``reruns`` times: (how many showed ``sig``, last failing history, report)."""
    failed, last = 0, None
    for _ in range(reruns):
        history, report = run_and_judge(target, trace)
        if has_signature(report, sig):
            failed += 1
            last = (history, report)
        elif last is None:
            last = (history, report)
    return failed, last


def save_regression(directory: Path, record: FailureRecord, history: History, report: Any) -> dict[str, str]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rid = f"{record.signature[0].lower()}-{record.signature[1] or 'fail'}-{record.trace_id[3:]}"
    trace = Trace(TraceHeader(trace_id=rid, title=f"fuzz: {record.signature[0]} {record.signature[1]} on {record.target}",
                              rules=(record.signature[0],)), record.shrunk.ops)
    paths = {
        "trace": str(save(trace, directory / f"{rid}.trace.jsonl")),
        "history": str(save(history, directory / f"{rid}.history.jsonl")),
    }
    doc = {"id": rid, "status": record.status, "target": record.target, "signature": list(record.signature),
           "reruns": [record.reruns_failed, record.reruns], "program": record.program.splitlines(),
           "classification": "unclassified", "report": report.to_json()}
    path = directory / f"{rid}.verdicts.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    paths["verdicts"] = str(path)
    return paths


def _finish_failure(target: Any, target_name: str, original: Trace, shrunk: Trace, sig: tuple[str, str], *,
                    reruns: int, regressions_dir: Path | None, found_by: str) -> FailureRecord:
    failed, last = confirm(target, shrunk, sig, reruns)
    history, report = last
    status = FAIL if failed == reruns else FLAKY
    first = next((v for v in report.verdicts if v.status == "FAIL" and (v.rule_id, v.anomaly or "") == sig), None)
    record = FailureRecord(sig, status, target_name, trace_id_for(shrunk), len(original.ops), len(shrunk.ops),
                           failed, reruns, program(shrunk, history, report),
                           first.explanation if first else "(did not fail on re-run)", found_by, shrunk=shrunk)
    if regressions_dir is not None:
        record.paths = save_regression(regressions_dir, record, history, report)
    return record


# --------------------------------------------------------------------------- Hypothesis search


class _Found(Exception):
    """Raised inside the Hypothesis test when a trace shows the wanted failure."""


def hypothesis_search(target: Any, *, config: GenConfig, max_examples: int, seed: int,
                      known: set[tuple[str, str]], on_example: Callable[[Trace, History, Any], None] | None = None,
                      skip: Callable[[Trace], bool] | None = None, max_shrinks: int = 200,
                      shrink_seconds: float = 120.0):
    """Run up to ``max_examples`` Hypothesis traces; return ``(examples_run, found)`` where
    ``found`` is ``(original trace, shrunk trace, signature)`` for the first new failure."""
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed

    state: dict[str, Any] = {"sig": None, "first": None, "best": None, "best_exc": None, "shrinks": 0, "runs": 0}

    @hseed(seed)
    @settings(max_examples=max_examples, database=None, deadline=None, derandomize=False,
              suppress_health_check=list(HealthCheck), phases=(Phase.generate, Phase.shrink),
              report_multiple_bugs=False, print_blob=False, verbosity=Verbosity.quiet)
    @given(traces(config))
    def probe(trace: Trace) -> None:
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
    examples: int = 0  # traces run (on the target)
    skipped: int = 0  # already in the corpus (--resume)
    passed: int = 0
    indeterminate: int = 0  # no FAIL, some INDETERMINATE
    failed: int = 0  # traces with a FAIL on the target
    model_failed: int = 0  # traces whose *model* history the checker failed (model/checker bug)
    signatures: dict[str, int] = field(default_factory=dict)  # "rule anomaly" -> traces
    failures: list[FailureRecord] = field(default_factory=list)
    duration_s: float = 0.0
    corpus_dir: str = ""
    ops: int = 0

    @property
    def flaky(self) -> int:
        return sum(1 for f in self.failures if f.status == FLAKY)

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.model_failed == 0

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
        return out

    def text(self) -> str:
        rate = self.examples / self.duration_s if self.duration_s else 0.0
        lines = [f"fuzz {self.run_id} on {self.target} ({self.generator}): {self.examples} traces, {self.ops} ops "
                 f"in {self.duration_s:.1f} s ({rate:.1f} traces/s); {self.passed} pass, {self.indeterminate} "
                 f"indeterminate, {self.failed} FAIL on the target, {self.model_failed} FAIL on the model; "
                 f"{self.skipped} skipped (resume)"]
        for k, v in sorted(self.signatures.items(), key=lambda kv: -kv[1]):
            lines.append(f"  {v:>6} traces  {k}")
        for f in self.failures:
            lines.append(f"\n{f.status} {f.signature[0]} {f.signature[1]} on {f.target} "
                         f"(shrunk {f.original_ops} -> {f.shrunk_ops} ops; failed {f.reruns_failed}/{f.reruns} re-runs)")
            lines.append(f"  {f.explanation}")
            lines += ["    " + line for line in f.program.splitlines()]
            if f.paths:
                lines.append(f"  saved: {f.paths.get('trace')}")
        return "\n".join(lines)


class _ChunkWriter(CorpusWriter):
    """A corpus writer whose part names carry a chunk tag, so parallel workers never collide."""

    def __init__(self, out_dir: Path, run_id: str, tag: str, *, flush_every: int = 1 << 30,
                 flush_interval_s: float = float("inf")):
        super().__init__(Path(out_dir), run_id, flush_every=flush_every, flush_interval_s=flush_interval_s)
        self.tag = tag
        self._part = len(list(self.out_dir.glob(f"part-{run_id}-{tag}-*.parquet")))  # resume appends

    def flush(self) -> Path | None:
        if not self._rows:
            return None
        import pyarrow as pa
        import pyarrow.parquet as pq

        from conformance.corpus import SCHEMA

        path = self.out_dir / f"part-{self.run_id}-{self.tag}-{self._part:03d}.parquet"
        tmp = path.with_name(path.name + ".tmp")
        pq.write_table(pa.Table.from_pylist(self._rows, schema=SCHEMA), tmp, compression="zstd")
        os.replace(tmp, path)
        self._part += 1
        self.rows_written += len(self._rows)
        self._rows = []
        return path


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
    """Worker: run traces [start, start+count) of the seeded generator on the model."""
    from conformance.targets.model import ModelTarget

    target = ModelTarget()
    summary = FuzzSummary(job["run_id"], "model", "fast")
    config: GenConfig = job["config"]
    new: dict[tuple[str, str], str] = {}
    writer = _ChunkWriter(Path(job["corpus_dir"]), job["run_id"], f"c{job['chunk']:06d}")
    for i in range(job["start"], job["start"] + job["count"]):
        # The generator ran the model alongside: its history is the model target's (one pass, not two).
        trace, history = random_trace_with_model_history(random.Random(f"{job['seed']}:{i}"), config)
        try:
            report = _check(history)
        except Exception as err:  # noqa: BLE001 - a checker crash is a finding
            report = _error_report(trace, "checker", err)
        writer.add(history, report.verdicts)
        _tally(summary, trace, report, report)
        sig = signature(report)
        if sig is not None and sig not in new:
            new[sig] = dumps(trace)
    writer.close()
    return summary, [(text, sig) for sig, text in new.items()]


def _shrink_fast_failure(target: Any, trace: Trace, sig: tuple[str, str], max_runs: int) -> Trace:
    def fails(candidate: Trace) -> bool:
        _, report = run_and_judge(target, candidate)
        return has_signature(report, sig)

    return ddmin(trace, fails, max_runs=max_runs)


def _progress(total: int, description: str):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
                    TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), transient=False,
                    console=_console())


def _console():
    from rich.console import Console

    return Console(stderr=True)


def fuzz_model_fast(*, examples: int, seed: int, out_dir: Path, run_id: str, workers: int = 1,
                    config: GenConfig = MODEL_CONFIG, regressions_dir: Path | None = REGRESSIONS_DIR,
                    chunk: int = 500, progress: bool = True, max_shrink_runs: int = 2000) -> FuzzSummary:
    """Mass run on the model with the seeded generator, ``workers`` processes, chunked."""
    from conformance.targets.model import ModelTarget

    t0 = time.monotonic()
    corpus_dir = Path(out_dir) / "corpus"
    corpus_dir.mkdir(parents=True, exist_ok=True)
    summary = FuzzSummary(run_id, "model", "fast", corpus_dir=str(corpus_dir))
    jobs = []
    for n, start in enumerate(range(0, examples, chunk)):
        count = min(chunk, examples - start)
        if list(corpus_dir.glob(f"part-{run_id}-c{n:06d}-*.parquet")):
            summary.skipped += count  # --resume: this chunk is in the corpus already
            continue
        jobs.append({"run_id": run_id, "seed": seed, "start": start, "count": count, "chunk": n,
                     "config": config, "corpus_dir": str(corpus_dir)})
    found: dict[tuple[str, str], str] = {}
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
    try:
        if workers <= 1:
            for job in jobs:
                take(_fast_chunk(job))
        else:
            import multiprocessing

            # forkserver, not fork: a forked child inherits the locks of the parent's other threads (the
            # pulsar-client C++ threads, a Java driver's reader thread) and can hang on one that was held.
            with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("forkserver")) as pool:
                for fut in as_completed([pool.submit(_fast_chunk, job) for job in jobs]):
                    take(fut.result())
    finally:
        if bar:
            bar.stop()
    from conformance.trace import parse

    target = ModelTarget()
    for sig, text in sorted(found.items()):
        original = parse(text)
        shrunk = _shrink_fast_failure(target, original, sig, max_shrink_runs)
        summary.failures.append(_finish_failure(target, "model", original, shrunk, sig, reruns=1,
                                                regressions_dir=regressions_dir, found_by="fast"))
    summary.duration_s = time.monotonic() - t0
    return summary


def fuzz_hypothesis(target: Any, *, examples: int, seed: int, out_dir: Path, run_id: str,
                    config: GenConfig = LIVE_CONFIG, regressions_dir: Path | None = REGRESSIONS_DIR,
                    reruns: int = 3, max_shrinks: int = 60, progress: bool = True, with_model: bool = True,
                    on_tick: Callable[[FuzzSummary], None] | None = None, writer_tag: str = "h",
                    stop_when: Callable[[FailureRecord], bool] | None = None, polish_runs: int = 30) -> FuzzSummary:
    """Hypothesis-generated traces on ``target`` (live or model), shrinking each new failure."""
    from conformance.targets.model import ModelTarget

    t0 = time.monotonic()
    corpus_dir = Path(out_dir) / "corpus"
    name = getattr(target, "name", "target")
    summary = FuzzSummary(run_id, name, "hypothesis", corpus_dir=str(corpus_dir))
    done = completed_traces(corpus_dir, run_id)
    model = ModelTarget()
    known: set[tuple[str, str]] = set()
    bar = _progress(examples, name) if progress else None
    task = bar.add_task(f"fuzz {name}", total=examples, info="") if bar else None

    # Incremental: a live trace takes seconds, so every trace's rows reach disk within ~2 s.
    writer = _ChunkWriter(corpus_dir, run_id, writer_tag, flush_every=50_000, flush_interval_s=2.0)

    def on_example(trace: Trace, history: History, report: Any) -> None:
        writer.add(history, report.verdicts)
        model_report = report
        if with_model and name != "model":
            model_history, model_report = run_and_judge(model, trace)
            writer.add(model_history, model_report.verdicts)
        _tally(summary, trace, report, model_report)
        if bar:
            bar.update(task, advance=1, info=f"{summary.failed} FAIL")
        if on_tick:
            on_tick(summary)

    def skip(trace: Trace) -> bool:
        if trace.header.trace_id in done:
            summary.skipped += 1
            if bar:
                bar.update(task, advance=1)
            return True
        return False

    if bar:
        bar.start()
    try:
        round_seed = seed
        while summary.examples + summary.skipped < examples:
            left = examples - summary.examples - summary.skipped
            before = summary.examples + summary.skipped
            _, found = hypothesis_search(target, config=config, max_examples=left, seed=round_seed, known=known,
                                         on_example=on_example, skip=skip, max_shrinks=max_shrinks,
                                         shrink_seconds=5.0 if name == "model" else 240.0)
            round_seed += 1_000_003
            if found is None:
                if summary.examples + summary.skipped == before:
                    break  # Hypothesis ran out of distinct examples
                continue
            original, shrunk, sig = found
            known.add(sig)
            # Polish Hypothesis' result by deleting ops with their dependents (free on the model,
            # ~1 s a run on a broker, hence the smaller budget there).
            shrunk = _shrink_fast_failure(target, shrunk, sig, 500 if name == "model" else polish_runs)
            if bar:
                bar.update(task, info=f"{summary.failed} FAIL; confirming {sig[0]}")
            summary.failures.append(_finish_failure(target, name, original, shrunk, sig, reruns=reruns,
                                                    regressions_dir=regressions_dir, found_by="hypothesis"))
            if stop_when is not None and stop_when(summary.failures[-1]):
                break
    finally:
        writer.close()
        if bar:
            bar.stop()
    summary.duration_s = time.monotonic() - t0
    return summary


def _live_worker(job: dict[str, Any]) -> FuzzSummary:
    """Worker process: its own client (and namespace per trace), optionally its own broker."""
    from conformance.targets.pulsar import BrokerTarget
    from fixtures.provider import broker_for

    def go(endpoint: Any) -> FuzzSummary:
        return fuzz_hypothesis(BrokerTarget(endpoint), examples=job["examples"], seed=job["seed"],
                               out_dir=Path(job["out_dir"]), run_id=job["run_id"], config=job["config"],
                               regressions_dir=job["regressions_dir"], reruns=job["reruns"],
                               max_shrinks=job["max_shrinks"], progress=False, writer_tag=f"w{job['worker']}",
                               on_tick=(lambda s: job["ticks"].put(s.failed)) if job.get("ticks") is not None else None)

    if job.get("endpoint") is not None:
        return go(job["endpoint"])
    with broker_for(job["spec"]) as endpoint:
        return go(endpoint)


def fuzz(target_name: str, *, examples: int, seed: int, out_dir: Path, run_id: str | None = None,
         workers: int = 1, broker_per_worker: bool = False, generator: str | None = None,
         regressions_dir: Path | None = REGRESSIONS_DIR, reruns: int | None = None, max_shrinks: int = 60,
         progress: bool = True, endpoint: Any = None, target: Any = None, admin_url: str | None = None,
         token: str | None = None) -> FuzzSummary:
    """The whole command: pick a generator, obtain the broker(s), run, write ``summary.json``."""
    from fixtures.endpoint import parse_target

    run_id = run_id or uuid.uuid4().hex[:12]
    out_dir = Path(out_dir)
    spec = parse_target(target_name, admin_url=admin_url)
    generator = generator or ("fast" if spec.kind == "model" else "hypothesis")
    if spec.kind == "model" and generator == "fast":
        summary = fuzz_model_fast(examples=examples, seed=seed, out_dir=out_dir, run_id=run_id, workers=workers,
                                  regressions_dir=regressions_dir, progress=progress)
    elif spec.kind == "model":
        from conformance.targets.model import ModelTarget

        summary = fuzz_hypothesis(target or ModelTarget(), examples=examples, seed=seed, out_dir=out_dir, run_id=run_id,
                                  config=MODEL_CONFIG, regressions_dir=regressions_dir, reruns=reruns or 1,
                                  max_shrinks=max_shrinks * 10, progress=progress)
    elif target is not None or workers <= 1:
        summary = _live_single(spec, target, endpoint, token, examples=examples, seed=seed, out_dir=out_dir, run_id=run_id,
                               regressions_dir=regressions_dir, reruns=reruns or 3, max_shrinks=max_shrinks,
                               progress=progress)
    else:
        summary = _live_parallel(spec, endpoint, token, examples=examples, seed=seed, out_dir=out_dir, run_id=run_id,
                                 workers=workers, broker_per_worker=broker_per_worker, regressions_dir=regressions_dir,
                                 reruns=reruns or 3, max_shrinks=max_shrinks, progress=progress)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(summary.to_json(), indent=2) + "\n", encoding="utf-8")
    return summary


def _live_single(spec, target, endpoint, token, **kw) -> FuzzSummary:
    from conformance.targets.pulsar import BrokerTarget
    from fixtures.provider import broker_for

    if target is not None:
        return fuzz_hypothesis(target, **kw)
    if endpoint is not None:
        return fuzz_hypothesis(BrokerTarget(endpoint), **kw)
    with broker_for(spec, token=token, progress=lambda s: print(s, file=sys.stderr)) as ep:
        return fuzz_hypothesis(BrokerTarget(ep), **kw)


def _live_parallel(spec, endpoint, token, *, examples, seed, out_dir, run_id, workers, broker_per_worker,
                   regressions_dir, reruns, max_shrinks, progress) -> FuzzSummary:
    import contextlib
    import multiprocessing

    from fixtures.provider import broker_for

    t0 = time.monotonic()
    summary = FuzzSummary(run_id, spec.name, "hypothesis", corpus_dir=str(Path(out_dir) / "corpus"))
    shares = [examples // workers + (1 if w < examples % workers else 0) for w in range(workers)]
    with contextlib.ExitStack() as stack:
        if endpoint is None and not broker_per_worker:
            endpoint = stack.enter_context(broker_for(spec, token=token, progress=lambda s: print(s, file=sys.stderr)))
        jobs = [{"examples": n, "seed": seed + 7919 * w, "out_dir": str(out_dir), "run_id": run_id,
                 "config": LIVE_CONFIG, "regressions_dir": regressions_dir, "reruns": reruns, "max_shrinks": max_shrinks,
                 "endpoint": None if broker_per_worker else endpoint, "spec": spec, "worker": w}
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
        try:
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                pending = {pool.submit(_live_worker, job) for job in jobs}
                while pending:
                    try:
                        failed = ticks.get(timeout=0.5)
                        if bar:
                            bar.update(task, advance=1, info=f"{failed} FAIL in a worker" if failed else "")
                    except queue.Empty:
                        pass
                    for fut in [f for f in pending if f.done()]:
                        pending.discard(fut)
                        part = fut.result()
                        summary.merge(part)
                        summary.failures += part.failures
                        if bar:
                            bar.update(task, info=f"{summary.failed} FAIL")
        finally:
            if bar:
                bar.stop()
    summary.duration_s = time.monotonic() - t0
    return summary


def fuzz_budget(target: Any, *, examples: int, seed: int, out_dir: Path | str,
                regressions_dir: Path | None = None, reruns: int = 2, max_shrinks: int = 40) -> FuzzSummary:
    """A small fuzz budget for the main job: ``target`` is a target name ("model", "embedded",
    a URL) or a runnable target object (``ModelTarget``, ``BrokerTarget``). No progress bar."""
    out_dir = Path(out_dir)
    if isinstance(target, str):
        return fuzz(target, examples=examples, seed=seed, out_dir=out_dir, regressions_dir=regressions_dir,
                    reruns=reruns, max_shrinks=max_shrinks, progress=False)
    name = getattr(target, "name", "target")
    config = MODEL_CONFIG if name == "model" else LIVE_CONFIG
    summary = fuzz_hypothesis(target, examples=examples, seed=seed, out_dir=out_dir, run_id=uuid.uuid4().hex[:12],
                              config=config, regressions_dir=regressions_dir, reruns=1 if name == "model" else reruns,
                              max_shrinks=max_shrinks * (10 if name == "model" else 1), progress=False)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "summary.json").write_text(json.dumps(summary.to_json(), indent=2) + "\n", encoding="utf-8")
    return summary


# --------------------------------------------------------------------------- command line


def add_fuzz_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``fuzz`` to ``pulsar-conformance``'s subcommands (``conformance/cli.py``)."""
    p = subparsers.add_parser("fuzz", help="generated traces on the model and a target; shrink and save failures",
                              description=__doc__.split("\n\n")[0] if __doc__ else None,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", default="model", help="model (default), embedded, docker, or pulsar://HOST:PORT")
    p.add_argument("--pulsar-admin-url", default=None, help="an external cluster's admin URL (default http://HOST:8080)")
    p.add_argument("--token-env", default=None, help="environment variable holding an auth token (external cluster)")
    p.add_argument("--token-file", default=None, help="file holding an auth token (external cluster)")
    p.add_argument("--examples", type=int, default=1000, help="traces to generate (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generator (default 0)")
    p.add_argument("--out", default="out/fuzz", help="output folder: corpus/ and summary.json (default out/fuzz)")
    p.add_argument("--workers", type=int, default=1, help="parallel worker processes (default 1)")
    p.add_argument("--broker-per-worker", action="store_true", help="each worker starts its own embedded/docker broker")
    p.add_argument("--resume", default=None, metavar="RUN_ID", help="continue run RUN_ID, skipping traces it recorded")
    p.add_argument("--generator", choices=("fast", "hypothesis"), default=None,
                   help="fast (seeded, default on the model) or hypothesis (default on a broker)")
    p.add_argument("--reruns", type=int, default=None, help="re-runs of a shrunk failure to tell FAIL from FLAKY (default 3 live, 1 model)")
    p.add_argument("--max-shrinks", type=int, default=60, help="target runs spent shrinking one live failure (default 60)")
    p.add_argument("--regressions", default=str(REGRESSIONS_DIR), help="where failing traces are saved (default conformance/regressions)")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_fuzz)
    return p


def cmd_fuzz(args: argparse.Namespace) -> int:
    from fixtures.endpoint import read_token

    token = read_token(env_var=args.token_env, token_file=args.token_file) if "://" in args.target else None
    summary = fuzz(args.target, admin_url=args.pulsar_admin_url, token=token, examples=args.examples, seed=args.seed, out_dir=Path(args.out),
                   run_id=args.resume, workers=args.workers, broker_per_worker=args.broker_per_worker,
                   generator=args.generator, regressions_dir=Path(args.regressions) if args.regressions else None,
                   reruns=args.reruns, max_shrinks=args.max_shrinks, progress=not args.no_progress)
    print(summary.text())
    print(f"\nrun id {summary.run_id}; corpus {summary.corpus_dir}; summary {Path(args.out) / 'summary.json'}")
    return 0 if not summary.failures and summary.ok else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pulsar-conformance")
    add_fuzz_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["fuzz", *(argv if argv is not None else sys.argv[1:])])
    try:
        return args.func(args)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
