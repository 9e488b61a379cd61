"""The outcome corpus: rows per event, incremental parts, resume, and bad files named."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conformance.corpus import SCHEMA, CorpusError, CorpusWriter, completed_traces, read_corpus
from conformance.trace import Event, History, Op, Outcome, TraceHeader


class _V:
    def __init__(self, step, rule_id, status, anomaly=None, explanation=""):
        self.step, self.rule_id, self.status, self.anomaly, self.explanation = step, rule_id, status, anomaly, explanation


def _history(trace_id: str) -> History:
    header = TraceHeader(trace_id=trace_id, target="model", broker_version="4.0", client="python")
    events = (
        Event(Op(1, "advance_time", {"ms": 1}), Outcome.ok(), 0.0, 1.0),
        Event(Op(2, "advance_time", {"ms": 1}), Outcome.ok(), 1.0, 2.0),
    )
    return History(header, events)


def test_rows_carry_the_worst_verdict_per_step(tmp_path):
    verdicts = [_V(2, "PLS-A-001", "PASS"), _V(2, "PLS-B-001", "FAIL", "lost-message", "Let ..."), _V(2, "PLS-C-001", "INDETERMINATE")]
    with CorpusWriter(tmp_path, run_id="r") as writer:
        writer.add(_history("t1"), verdicts)
    table = read_corpus(tmp_path).to_pylist()
    assert [r["verdict"] for r in table] == ["PASS", "FAIL"]
    assert table[1]["rule_ids"] == ["PLS-A-001", "PLS-B-001", "PLS-C-001"]
    assert table[1]["failed_rule_ids"] == ["PLS-B-001"], "only the rule that failed is charged"
    assert table[1]["indeterminate_rule_ids"] == ["PLS-C-001"]
    assert table[1]["anomalies"] == ["lost-message"]
    assert table[0]["rule_ids"] == []


def test_end_of_history_verdicts_land_on_the_last_event(tmp_path):
    verdicts = [_V(None, "PLS-SHARED-001", "FAIL", "lost-message", "m1 was never delivered")]
    with CorpusWriter(tmp_path, run_id="r") as writer:
        writer.add(_history("t1"), verdicts)
    rows = read_corpus(tmp_path).to_pylist()
    assert [r["verdict"] for r in rows] == ["PASS", "FAIL"]
    assert rows[1]["failed_rule_ids"] == ["PLS-SHARED-001"]
    assert rows[1]["explanation"] == "m1 was never delivered"


def test_parts_are_written_as_they_go_and_a_run_resumes(tmp_path):
    writer = CorpusWriter(tmp_path, run_id="r", flush_every=2)
    writer.add(_history("t1"), [])  # 2 rows: flushed at once
    assert len(list(tmp_path.glob("part-r-*.parquet"))) == 1
    # the process "dies" here without close(): what was flushed survives
    assert completed_traces(tmp_path, "r") == {"t1"}
    again = CorpusWriter(tmp_path, run_id="r", flush_every=2)
    again.add(_history("t2"), [])
    again.close()
    assert completed_traces(tmp_path, "r") == {"t1", "t2"}
    assert read_corpus(tmp_path).num_rows == 4
    assert not list(tmp_path.glob("*.tmp"))


def test_truncated_and_foreign_files_are_named(tmp_path):
    with CorpusWriter(tmp_path, run_id="r") as writer:
        writer.add(_history("t1"), [])
    part = next(tmp_path.glob("part-*.parquet"))
    data = part.read_bytes()
    part.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorpusError, match=part.name):
        read_corpus(tmp_path)
    part.unlink()
    other = tmp_path / "part-x-000000.parquet"
    pq.write_table(pa.table({"a": [1]}), other)
    with pytest.raises(CorpusError, match="not an outcome corpus file"):
        read_corpus(tmp_path)
    other.unlink()
    older = SCHEMA.with_metadata({b"pulsar_conformance_corpus_version": b"1"})
    pq.write_table(older.empty_table(), other)
    with pytest.raises(CorpusError, match="schema version 1, this reader knows 2"):
        read_corpus(tmp_path)
    with pytest.raises(CorpusError, match="no such corpus folder"):
        read_corpus(tmp_path / "missing")
