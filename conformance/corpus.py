"""The outcome corpus: every judged event of every run, as versioned Parquet, written as it goes.

One row per event (an op of a history on one target) with what was observed and what the
checker said about it. Rows are flushed to a new part file every ``flush_every`` rows or
``flush_interval_s`` seconds (checked at each trace end, so a live run, slower than that per
trace, flushes every trace), each part written to a temporary name and renamed, so an interrupted run keeps
every part it finished and a reader never sees half a file. ``completed_traces`` tells a resumed
run which traces are already recorded. The schema is documented in ``docs/outcome-corpus.md``;
its version is stored in each file's metadata and checked on read.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from conformance.trace import History
from conformance.verdicts import FAIL, INDETERMINATE, PASS, worst_judged

CORPUS_SCHEMA_VERSION = 2
VERSION_KEY = b"pulsar_conformance_corpus_version"

SCHEMA = pa.schema(
    [
        pa.field("run_id", pa.string(), nullable=False),
        pa.field("trace_id", pa.string(), nullable=False),
        pa.field("step", pa.int32(), nullable=False),
        pa.field("op", pa.string(), nullable=False),
        pa.field("target", pa.string(), nullable=False),
        pa.field("broker_version", pa.string()),
        pa.field("client", pa.string()),
        pa.field("client_version", pa.string()),
        pa.field("profile", pa.string()),  # JSON object
        pa.field("rule_ids", pa.list_(pa.string())),
        pa.field("anomalies", pa.list_(pa.string())),
        pa.field("failed_rule_ids", pa.list_(pa.string())),  # v2: the rules that FAILed at this step
        pa.field("indeterminate_rule_ids", pa.list_(pa.string())),  # v2: INDETERMINATE (and not FAIL)
        pa.field("verdict", pa.string(), nullable=False),  # worst verdict at this step, PASS if none
        pa.field("outcome_status", pa.string(), nullable=False),
        pa.field("observation", pa.string()),  # JSON: the outcome as recorded in the history
        pa.field("observation_key", pa.string()),  # v2: the observation without broker-chosen values
        pa.field("explanation", pa.string()),
        pa.field("t_start_ms", pa.float64()),
        pa.field("t_end_ms", pa.float64()),
    ],
    metadata={VERSION_KEY: str(CORPUS_SCHEMA_VERSION).encode()},
)

# Values a broker or client chooses freely (ledger ids, clocks, generated names, error prose):
# two conforming targets differ in them, so comparisons across targets leave them out.
UNCOMPARABLE_KEYS = frozenset({"message_id", "publish_time", "producer_name", "partition_producer_names", "id_text", "ids",
                               "detail"})


def observation_key(outcome_json: Any) -> str:
    """The observation as JSON, minus ``UNCOMPARABLE_KEYS`` at any depth: what the model and a
    broker can be compared on (payload labels, keys, properties, counts, statuses, errors)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in UNCOMPARABLE_KEYS}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(outcome_json), sort_keys=True)


class CorpusError(ValueError):
    """A corpus file is missing, truncated or of another schema version (the message names it)."""


def event_rows(history: History, verdicts: Iterable[Any], *, run_id: str) -> list[dict[str, Any]]:
    """Rows for one judged history: verdicts are grouped onto the step they judge.

    End-of-history verdicts (step ``None``: liveness, e.g. a message never delivered) belong to
    no op; they are recorded on the last event, which is where the history ended.
    """
    last_step = history.events[-1].step if history.events else 0
    by_step: dict[int, list[Any]] = {}
    for verdict in verdicts:
        step = getattr(verdict, "step", None)
        by_step.setdefault(int(step) if step else last_step, []).append(verdict)
    header = history.header
    rows = []
    for event in history.events:
        judged = by_step.get(event.step, [])
        worst = worst_judged((v.status for v in judged), PASS)
        explanation = " | ".join(v.explanation for v in judged if v.status in (FAIL, INDETERMINATE)) or None
        rows.append(
            {
                "run_id": run_id,
                "trace_id": header.trace_id,
                "step": event.step,
                "op": event.op.op,
                "target": header.target or "unknown",
                "broker_version": header.broker_version,
                "client": header.client,
                "client_version": header.client_version,
                "profile": json.dumps(dict(header.profile), sort_keys=True),
                "rule_ids": sorted({v.rule_id for v in judged}),
                "anomalies": sorted({v.anomaly for v in judged if getattr(v, "anomaly", None)}),
                "failed_rule_ids": sorted({v.rule_id for v in judged if v.status == FAIL}),
                "indeterminate_rule_ids": sorted({v.rule_id for v in judged if v.status == INDETERMINATE}
                                                 - {v.rule_id for v in judged if v.status == FAIL}),
                "verdict": worst,
                "outcome_status": event.outcome.status,
                "observation": json.dumps(event.outcome.to_json(), sort_keys=True),
                "observation_key": observation_key(event.outcome.to_json()),
                "explanation": explanation,
                "t_start_ms": float(event.t_start_ms),
                "t_end_ms": float(event.t_end_ms),
            }
        )
    return rows


@dataclass
class CorpusWriter:
    """Append judged histories to ``out_dir`` as Parquet parts of one run."""

    out_dir: Path
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])
    flush_every: int = 50_000
    flush_interval_s: float = 2.0
    _last_flush: float = field(default_factory=time.monotonic)
    _rows: list[dict[str, Any]] = field(default_factory=list)
    _part: int = 0
    rows_written: int = 0
    metadata: dict[bytes, bytes] = field(default_factory=dict)  # more key-values for the parts' footer

    def __post_init__(self) -> None:
        self.out_dir = Path(self.out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self._part = len(list(self.out_dir.glob(f"part-{self.run_id}-*.parquet")))

    def add(self, history: History, verdicts: Iterable[Any], *more: tuple[History, Iterable[Any]]) -> None:
        """Add a judged history, and ``more`` (history, verdicts) pairs with it: all or none of them
        reach a part, so an interruption never splits a trace's histories (target and model)."""
        rows = [row for h, v in ((history, verdicts), *more) for row in event_rows(h, v, run_id=self.run_id)]
        self._rows.extend(rows)
        if len(self._rows) >= self.flush_every or time.monotonic() - self._last_flush >= self.flush_interval_s:
            self.flush()

    def add_rows(self, rows: Iterable[dict[str, Any]]) -> None:
        self._rows.extend(rows)
        if len(self._rows) >= self.flush_every:
            self.flush()

    def part_name(self) -> str:
        return f"part-{self.run_id}-{self._part:06d}.parquet"

    def flush(self) -> Path | None:
        if not self._rows:
            return None
        from fixtures.secrets import redact

        schema = SCHEMA.with_metadata({**SCHEMA.metadata, **self.metadata}) if self.metadata else SCHEMA
        # no secret reaches a part: an error text or a property a client echoed is written as <token>
        rows = [{k: redact(v) if isinstance(v, str) else v for k, v in row.items()} for row in self._rows]
        table = pa.Table.from_pylist(rows, schema=schema)
        path = self.out_dir / self.part_name()
        tmp = path.with_name(path.name + ".tmp")
        pq.write_table(table, tmp, compression="zstd")
        os.replace(tmp, path)  # a reader (or a resumed run) sees the whole part or none of it
        self._part += 1
        self.rows_written += len(self._rows)
        self._rows = []
        self._last_flush = time.monotonic()
        return path

    def close(self) -> None:
        self.flush()

    def __enter__(self) -> "CorpusWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class ChunkWriter(CorpusWriter):
    """A corpus writer whose part names carry a chunk tag (``part-<run>-<tag>-<n>.parquet``), so
    parallel workers (processes, Spark executors) writing parts of one run never collide; by
    default one part per chunk, written when the chunk closes."""

    def __init__(self, out_dir: Path, run_id: str, tag: str, *, flush_every: int = 1 << 30,
                 flush_interval_s: float = float("inf")):
        super().__init__(Path(out_dir), run_id, flush_every=flush_every, flush_interval_s=flush_interval_s)
        self.tag = tag
        self._part = len(list(self.out_dir.glob(f"part-{run_id}-{tag}-*.parquet")))  # resume appends

    def part_name(self) -> str:
        return f"part-{self.run_id}-{self.tag}-{self._part:03d}.parquet"


def part_files(corpus_dir: Path) -> list[Path]:
    corpus_dir = Path(corpus_dir)
    if not corpus_dir.is_dir():
        raise CorpusError(f"{corpus_dir}: no such corpus folder")
    return sorted(corpus_dir.glob("part-*.parquet"))


def check_part(path: Path) -> None:
    """Refuse a truncated file or one written with another schema version, naming it."""
    try:
        meta = pq.read_schema(path).metadata or {}
    except (pa.ArrowInvalid, OSError) as err:
        raise CorpusError(f"{path}: not a readable Parquet file (truncated or corrupt?): {err}") from None
    version = meta.get(VERSION_KEY)
    if version is None:
        raise CorpusError(f"{path}: no {VERSION_KEY.decode()} in its metadata; not an outcome corpus file")
    if int(version) != CORPUS_SCHEMA_VERSION:
        raise CorpusError(f"{path}: corpus schema version {int(version)}, this reader knows {CORPUS_SCHEMA_VERSION}")


def read_corpus(corpus_dir: Path) -> pa.Table:
    parts = part_files(corpus_dir)
    for part in parts:
        check_part(part)
    if not parts:
        return SCHEMA.empty_table()
    return pa.concat_tables([pq.read_table(p, schema=SCHEMA) for p in parts])


def completed_traces(corpus_dir: Path, run_id: str) -> set[str]:
    """Trace ids a run already recorded (to resume it without redoing them)."""
    corpus_dir = Path(corpus_dir)
    if not corpus_dir.exists():
        return set()
    done: set[str] = set()
    for part in sorted(corpus_dir.glob(f"part-{run_id}-*.parquet")):
        check_part(part)
        done.update(pq.read_table(part, columns=["trace_id"]).column("trace_id").to_pylist())
    return done


def remove_partial_parts(corpus_dir: Path, run_id: str) -> int:
    """Delete the temporary files of parts a stopped run was writing (never visible as parts)."""
    removed = 0
    for tmp in Path(corpus_dir).glob(f"part-{run_id}-*.parquet.tmp"):
        tmp.unlink(missing_ok=True)
        removed += 1
    return removed


def part_digests(corpus_dir: Path, *, only: Iterable[str] | None = None) -> dict[str, tuple[int, str]]:
    """Per part of a corpus, its content without the run id: ``{tag: (rows, sha256)}``, the tag
    being the part's name without its run id (``part-c000012-000.parquet``: the chunk it holds);
    ``only``: just the parts with these tags. Parts are read one at a time, so memory stays one part's."""
    import hashlib

    wanted = None if only is None else set(only)
    out: dict[str, tuple[int, str]] = {}
    for part in part_files(Path(corpus_dir)):
        if wanted is not None and not any(part.name.endswith(tag[len("part"):]) for tag in wanted):
            continue
        check_part(part)
        table = pq.read_table(part)
        tag = part.name
        for run_id in set(table.column("run_id").to_pylist()):  # part-<run>-<tag>.parquet
            tag = tag.replace(f"part-{run_id}-", "part-", 1)
        if wanted is not None and tag not in wanted:
            continue
        body = json.dumps(table.drop_columns(["run_id"]).to_pylist(), sort_keys=True, default=str)
        out[tag] = (table.num_rows, hashlib.sha256(body.encode()).hexdigest())
    return out


def corpus_digest(corpus_dir: Path) -> tuple[int, str]:
    """(rows, digest) of a corpus's content without its run id: equal for two runs that judged the
    same traces the same way, whatever their run ids and wherever their parts were written (a
    process pool, Spark executors)."""
    import hashlib

    parts = part_digests(corpus_dir)
    total = hashlib.sha256("\n".join(f"{t} {d}" for t, (_, d) in sorted(parts.items())).encode()).hexdigest()
    return sum(n for n, _ in parts.values()), total
