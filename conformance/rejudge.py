"""Re-judging recorded histories with this version of the model and the checker.

``pulsar-conformance rejudge --corpus DIR`` finds every history under ``DIR``
(``*.history.jsonl``: what ``run`` keeps in ``OUT/histories/``, ``fuzz`` in its regressions, a
known deviation's evidence) and judges each again, so a model fix is re-checked against every
history ever recorded, without a broker. The new verdicts go to a fresh outcome corpus
(``OUT/corpus``, one run id, ``docs/outcome-corpus.md``); where ``DIR`` holds the corpus the
histories were first judged into, each trace instance's verdict there (its worst verdict and
failing rules over the recorded rows) is compared with the new one, and the changes are listed
in ``OUT/rejudge.json``.

The work is split into chunks of history files; a chunk is judged by ``rejudge_chunk`` in this
process, in worker processes, or on Spark executors (``--engine spark``: the same function, so the
same rows), and writes its own corpus part.

Choices:
- A file that is not a history (unreadable, cut short, a trace without outcomes, a header the
  model cannot take) is an error named with its path; the other files are still judged, and the
  command exits 2 (bad input) after writing everything else.
- A history whose new verdict FAILs only on the rules a known deviation of its case and broker
  release excuses (``conformance/deviations.yaml``) is reported with the deviation's id and does
  not fail the command, as in ``run``.
- Model histories are re-judged like any other: a FAIL there is a model or checker bug.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from conformance.verdicts import FAIL, INDETERMINATE, PASS, worst_judged

HISTORY_GLOB = "*.history.jsonl"
CHUNK_FILES = 200  # histories per chunk: one corpus part, one task
REPORT_NAME = "rejudge.json"
SHOWN = 15  # lines per kind (changed, failing, excused, errors) the summary prints


def history_files(folder: Path, *, exclude: Path | None = None) -> list[Path]:
    """Every ``*.history.jsonl`` under ``folder``, sorted (files under ``exclude`` left out)."""
    return _outside(sorted(p for p in Path(folder).rglob(HISTORY_GLOB) if p.is_file()), exclude)


def _outside(paths: list[Path], exclude: Path | None) -> list[Path]:
    """``paths`` without those under ``exclude`` (rejudge's own --out inside --corpus)."""
    if exclude is None:
        return paths
    ex = Path(exclude).resolve()
    return [p for p in paths if ex not in p.resolve().parents]


InstanceKey = tuple[str, str, str, str]  # trace id, target, broker version, client


def _key(trace_id: Any, target: Any, broker_version: Any, client: Any) -> InstanceKey:
    return (str(trace_id), str(target or ""), str(broker_version or ""), str(client or ""))


def recorded_verdicts(folder: Path, *, exclude: Path | None = None) -> dict[InstanceKey, dict[str, Any]]:
    """The verdict each trace instance got when it was first judged, from the corpus parts under
    ``folder`` (none: an empty map): its worst verdict and the rules that failed, over every
    recorded row of it (several runs of one trace: the worst of them)."""
    import pyarrow.parquet as pq

    from conformance.corpus import CorpusError, check_part

    parts = _outside(sorted(Path(folder).rglob("part-*.parquet")), exclude)
    out: dict[InstanceKey, dict[str, Any]] = {}
    columns = ["trace_id", "target", "broker_version", "client", "verdict", "failed_rule_ids"]
    for part in parts:
        try:
            check_part(part)
        except (CorpusError, ValueError) as err:
            raise CorpusError(f"{err}; move it out of {folder} or give --corpus a folder whose corpus is whole") from None
        for row in pq.read_table(part, columns=columns).to_pylist():
            key = _key(row["trace_id"], row["target"], row["broker_version"], row["client"])
            seen = out.setdefault(key, {"verdict": PASS, "failed_rules": set()})
            seen["verdict"] = worst_judged((seen["verdict"], row["verdict"]), PASS)
            seen["failed_rules"].update(row["failed_rule_ids"] or ())
    return {k: {"verdict": v["verdict"], "failed_rules": sorted(v["failed_rules"])} for k, v in out.items()}


@dataclass
class Judgement:
    """One history's new verdict (or why it could not be judged)."""

    path: str
    trace_id: str = ""
    target: str = ""
    broker_version: str = ""
    client: str = ""
    verdict: str = ""
    failed_rules: list[str] = field(default_factory=list)
    indeterminate_rules: list[str] = field(default_factory=list)
    known_deviations: list[str] = field(default_factory=list)  # ids excusing every failed rule
    error: str | None = None

    @property
    def key(self) -> InstanceKey:
        return _key(self.trace_id, self.target, self.broker_version, self.client)

    @property
    def excused(self) -> bool:
        return self.verdict == FAIL and bool(self.known_deviations)

    def to_json(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, [], "")}


def judge_file(path: Path) -> tuple[Judgement, Any, Any]:
    """Judge the history in ``path``: (its judgement, the history, the verdicts), or a judgement
    carrying ``error`` (and ``None``, ``None``) when the file cannot be judged."""
    from conformance.checker import check
    from conformance.timing import bands_from_header
    from conformance.trace import History, load

    judgement = Judgement(str(path))
    try:
        item = load(path)
        if not isinstance(item, History):
            raise ValueError("a trace without outcomes, not a history; run it with 'replay' first")
        bands_from_header(item.header)  # a header whose timing cannot be read is bad input, named
    except (ValueError, TypeError, KeyError, OSError) as err:
        judgement.error = " ".join(f"{type(err).__name__}: {err}".split())[:500]
        return judgement, None, None
    header = item.header
    judgement.trace_id, judgement.target = header.trace_id, header.target or "unknown"
    judgement.broker_version, judgement.client = header.broker_version or "", header.client or ""
    try:
        report = check(item)
    except Exception as err:  # noqa: BLE001 - a checker crash on a recorded history is a finding, named
        judgement.error = f"the checker raised {type(err).__name__}: {err}"[:500]
        return judgement, item, None
    verdicts = list(report.verdicts)
    judgement.verdict = worst_judged((v.status for v in verdicts), PASS)
    judgement.failed_rules = sorted({v.rule_id for v in verdicts if v.status == FAIL})
    judgement.indeterminate_rules = sorted({v.rule_id for v in verdicts if v.status == INDETERMINATE}
                                           - set(judgement.failed_rules))
    if judgement.failed_rules and header.target != "model" and header.broker_version:
        from conformance.deviations import known_deviations

        kds = known_deviations(header.trace_id, header.broker_version)
        fails = [v for v in verdicts if v.status == FAIL]
        excusing = [[kd.id for kd in kds if kd.excuses(header.trace_id, v.rule_id, v.anomaly, v.step)] for v in fails]
        if all(excusing):  # every FAIL verdict is one a known deviation names (rule, anomaly, step)
            judgement.known_deviations = sorted({i for ids in excusing for i in ids})
    return judgement, item, verdicts


def rejudge_chunk(job: dict[str, Any]) -> list[Judgement]:
    """Judge the chunk's history files; their rows reach ``job['corpus_dir']`` as one part
    (``part-<run id>-j<chunk>-000.parquet``), written whole when the chunk ends."""
    from conformance.corpus import ChunkWriter

    writer = ChunkWriter(Path(job["corpus_dir"]), job["run_id"], f"j{job['chunk']:06d}")
    out = []
    for path in job["paths"]:
        judgement, history, verdicts = judge_file(Path(path))
        if history is not None and verdicts is not None:
            writer.add(history, verdicts)
        out.append(judgement)
    writer.close()
    return out


def plan(paths: list[Path], *, run_id: str, corpus_dir: Path, chunk: int = CHUNK_FILES) -> list[dict[str, Any]]:
    return [{"run_id": run_id, "corpus_dir": str(corpus_dir), "chunk": n, "paths": [str(p) for p in paths[i:i + chunk]]}
            for n, i in enumerate(range(0, len(paths), chunk))]


@dataclass
class RejudgeSummary:
    run_id: str
    source: str
    corpus_dir: str
    engine: str
    histories: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)
    errors: list[dict[str, str]] = field(default_factory=list)
    changed: list[dict[str, Any]] = field(default_factory=list)
    unchanged: int = 0
    not_recorded: int = 0  # histories with no recorded verdict to compare with
    excused: list[dict[str, Any]] = field(default_factory=list)
    failing: list[dict[str, Any]] = field(default_factory=list)  # FAIL, not excused
    duration_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)

    def text(self) -> str:
        counts = ", ".join(f"{n} {v}" for v, n in sorted(self.verdicts.items()))
        lines = [f"rejudge {self.run_id}: {self.histories} histories under {self.source} judged again in "
                 f"{self.duration_s:.1f} s ({self.engine}): {counts or 'none judged'}; {len(self.errors)} could not be "
                 f"judged; against the recorded verdicts: {len(self.changed)} changed, {self.unchanged} unchanged, "
                 f"{self.not_recorded} with no recorded verdict"]
        def some(items: list[Any]) -> list[Any]:  # the terminal gets the first few; rejudge.json has them all
            return items[:SHOWN]

        for c in some(self.changed):
            lines.append(f"  changed {c['trace_id']} on {c['target']} {c['broker_version']} {c['client']}: "
                         f"{c['before']['verdict']} {c['before']['failed_rules'] or ''} -> "
                         f"{c['after']['verdict']} {c['after']['failed_rules'] or ''}")
        for f in some(self.failing):
            lines.append(f"  FAIL {f['trace_id']} on {f['target']} {f['broker_version']} {f['client']}: "
                         f"{', '.join(f['failed_rules'])} ({f['path']})")
        for e in some(self.excused):
            lines.append(f"  FAIL excused by {', '.join(e['known_deviations'])}: {e['trace_id']} on {e['broker_version']}")
        for e in some(self.errors):
            lines.append(f"  cannot judge {e['path']}: {e['error']}")
        hidden = sum(max(0, len(x) - SHOWN) for x in (self.changed, self.failing, self.excused, self.errors))
        if hidden:
            lines.append(f"  ... and {hidden} more lines like these in {REPORT_NAME}")
        return "\n".join(lines)


def summarise(judgements: Iterable[Judgement], recorded: dict[InstanceKey, dict[str, Any]], summary: RejudgeSummary) -> RejudgeSummary:
    """Fold the judgements into ``summary``, comparing each with its recorded verdict."""
    counts: Counter[str] = Counter()
    for j in judgements:
        summary.histories += 1
        if j.error is not None:
            summary.errors.append({"path": j.path, "error": j.error})
            continue
        counts[j.verdict] += 1
        after = {"verdict": j.verdict, "failed_rules": j.failed_rules}
        if j.excused:
            summary.excused.append(j.to_json())
        elif j.verdict == FAIL:
            summary.failing.append(j.to_json())
        before = recorded.get(j.key)
        if before is None:
            summary.not_recorded += 1
        elif before == after:
            summary.unchanged += 1
        else:
            summary.changed.append({"trace_id": j.trace_id, "target": j.target, "broker_version": j.broker_version,
                                    "client": j.client, "path": j.path, "before": before, "after": after})
    summary.verdicts = dict(counts)
    return summary


def write_report(out_dir: Path, summary: RejudgeSummary) -> Path:
    import os

    path = Path(out_dir) / REPORT_NAME
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(summary.to_json(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def rejudge(corpus: Path, out_dir: Path, *, workers: int = 1, map_chunks: Any = None, engine: str = "local",
            run_id: str | None = None, chunk: int = CHUNK_FILES) -> RejudgeSummary:
    """The whole command: find the histories under ``corpus``, judge them in chunks (here, in
    ``workers`` processes, or through ``map_chunks``: ``SparkEngine.map_chunks``), write
    ``OUT/corpus`` and ``OUT/rejudge.json``. Bad input (no such folder, no history, ``OUT``
    holding another command's corpus) is refused before any work (``ValueError``)."""
    import time
    import uuid

    t0 = time.monotonic()
    corpus, out_dir = Path(corpus), Path(out_dir)
    if not corpus.is_dir():
        raise ValueError(f"--corpus {corpus}: no such folder; give the output folder of a run or a fuzz campaign "
                         "(the histories are under OUT/histories), or any folder of *.history.jsonl files")
    if out_dir.is_file():
        raise ValueError(f"--out {out_dir} is a file; give a folder")
    paths = history_files(corpus, exclude=out_dir)
    if not paths:
        raise ValueError(f"--corpus {corpus}: no {HISTORY_GLOB} files under it; 'pulsar-conformance run' keeps its "
                         "histories in OUT/histories")
    new_corpus = out_dir / "corpus"
    earlier = sorted(new_corpus.glob("part-*.parquet")) if new_corpus.is_dir() else []
    if earlier and not (out_dir / REPORT_NAME).is_file():
        raise ValueError(f"--out {out_dir}: {new_corpus} holds corpus parts rejudge did not write; give an empty folder")
    recorded = recorded_verdicts(corpus, exclude=out_dir)  # before anything under OUT changes
    for part in earlier:  # an earlier rejudge's output: replaced, never mixed with this one's
        part.unlink()
    (out_dir / REPORT_NAME).unlink(missing_ok=True)
    new_corpus.mkdir(parents=True, exist_ok=True)
    run_id = run_id or uuid.uuid4().hex[:12]
    jobs = plan(paths, run_id=run_id, corpus_dir=new_corpus, chunk=chunk)
    if map_chunks is not None:
        results = map_chunks(rejudge_chunk, jobs)
    elif workers <= 1 or len(jobs) <= 1:
        results = [rejudge_chunk(job) for job in jobs]
    else:
        import multiprocessing

        from conformance.interruption import worker_ignores_sigint

        with multiprocessing.get_context("forkserver").Pool(min(workers, len(jobs)), initializer=worker_ignores_sigint) as pool:
            results = pool.map(rejudge_chunk, jobs)
    summary = RejudgeSummary(run_id, str(corpus), str(new_corpus), engine)
    summarise((j for chunk_result in results for j in chunk_result), recorded, summary)
    summary.duration_s = round(time.monotonic() - t0, 2)
    write_report(out_dir, summary)
    return summary


def exit_status(summary: RejudgeSummary) -> int:
    """2 when a file could not be judged, else 1 on a FAIL no known deviation excuses, else 3 when a
    history ended INDETERMINATE, else 0 (``conformance.verdict_exit``'s codes)."""
    from conformance.verdict_exit import EXIT_FAIL, EXIT_INCONCLUSIVE, EXIT_OK, EXIT_USAGE

    if summary.errors:
        return EXIT_USAGE
    if summary.failing:
        return EXIT_FAIL
    return EXIT_INCONCLUSIVE if summary.verdicts.get(INDETERMINATE) else EXIT_OK
