"""``pulsar-conformance rejudge``: recorded histories judged again with this model (conformance/rejudge.py).

The histories are the suite's own recorded ones (a known deviation's evidence from broker 4.0.8, a
shrunk fuzz failure from the live campaigns); "a model fix" is played by swapping the checker for
one that drops a rule's FAIL verdicts, so the re-judged verdict changes and must be listed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import rejudge as R

ROOT = Path(__file__).resolve().parents[2]
KD_001 = ROOT / "conformance" / "evidence" / "KD-001-backlog-after-seek-4.0.8.history.jsonl"
OPEN_FAILURE = ROOT / "conformance" / "regressions" / "pls-backlog-001-unexpected-rejection-cbdab9c2d7b2.history.jsonl"


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pulsar_conformance", "rejudge", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def recorded(tmp_path):
    folder = tmp_path / "recorded"
    (folder / "histories").mkdir(parents=True)
    shutil.copy(KD_001, folder / "histories")
    return folder


def test_a_known_deviation_is_excused_and_the_command_passes(recorded, tmp_path):
    done = _cli("--corpus", str(recorded), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads((tmp_path / "out" / "rejudge.json").read_text())
    assert doc["histories"] == 1 and doc["verdicts"] == {"FAIL": 1}
    (excused,) = doc["excused"]
    assert excused["known_deviations"] == ["KD-001"] and excused["failed_rules"] == ["PLS-BACKLOG-001"]
    assert doc["failing"] == [] and doc["not_recorded"] == 1  # no corpus under --corpus to compare with
    assert "excused by KD-001" in done.stdout


def test_an_unexcused_failure_fails_the_command(tmp_path):
    folder = tmp_path / "recorded"
    folder.mkdir()
    shutil.copy(OPEN_FAILURE, folder)
    done = _cli("--corpus", str(folder), "--out", str(tmp_path / "out"))
    assert done.returncode == 1, done.stdout + done.stderr
    (failing,) = json.loads((tmp_path / "out" / "rejudge.json").read_text())["failing"]
    # stats refused on a subscription the model has: no rule gives a reason (PLS-OP-001)
    assert failing["failed_rules"] == ["PLS-OP-001"] and failing["broker_version"] == "4.0.8"


def test_a_model_change_is_listed_against_the_recorded_verdicts(recorded, tmp_path, monkeypatch):
    # first judgement, recorded as a corpus beside the histories (as a run keeps OUT/corpus)
    first = R.rejudge(recorded, tmp_path / "first")
    shutil.copytree(tmp_path / "first" / "corpus", recorded / "corpus")
    assert first.excused and not first.changed

    import conformance.checker as checker

    real = checker.check

    def fixed_model(history, **kw):  # "the model now allows what 4.0.8 did": PLS-BACKLOG-001 no longer fails
        report = real(history, **kw)
        from dataclasses import replace

        return replace(report, verdicts=tuple(v for v in report.verdicts if v.rule_id != "PLS-BACKLOG-001"))

    monkeypatch.setattr(checker, "check", fixed_model)
    second = R.rejudge(recorded, tmp_path / "second")
    (change,) = second.changed
    assert change["trace_id"] == "backlog-after-seek-individual-acks" and change["broker_version"] == "4.0.8"
    assert change["before"] == {"verdict": "FAIL", "failed_rules": ["PLS-BACKLOG-001"]}
    assert change["after"]["verdict"] == "PASS" and change["after"]["failed_rules"] == []
    assert R.exit_status(second) == 0
    # the new corpus holds the new verdicts, one row per event of the history
    import pyarrow.parquet as pq

    (part,) = sorted((tmp_path / "second" / "corpus").glob("part-*.parquet"))
    rows = pq.read_table(part).to_pylist()
    assert len(rows) == len(KD_001.read_text().splitlines()) - 1
    assert all("PLS-BACKLOG-001" not in r["failed_rule_ids"] for r in rows)


def test_a_file_that_is_not_a_whole_history_is_named_and_the_rest_judged(recorded, tmp_path):
    lines = KD_001.read_text().splitlines(keepends=True)
    (recorded / "histories" / "cut.history.jsonl").write_text("".join(lines[:5]) + lines[5][:40])
    done = _cli("--corpus", str(recorded), "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stdout + done.stderr
    doc = json.loads((tmp_path / "out" / "rejudge.json").read_text())
    (error,) = doc["errors"]
    assert error["path"].endswith("cut.history.jsonl")
    assert doc["verdicts"] == {"FAIL": 1}  # the whole one was still judged
    assert "cannot judge" in done.stdout and "cut.history.jsonl" in done.stdout


def test_bad_input_is_refused_before_any_work(tmp_path):
    missing = _cli("--corpus", str(tmp_path / "nope"), "--out", str(tmp_path / "out"))
    assert missing.returncode == 2 and "no such folder" in missing.stderr
    (tmp_path / "empty").mkdir()
    empty = _cli("--corpus", str(tmp_path / "empty"), "--out", str(tmp_path / "out"))
    assert empty.returncode == 2 and "no *.history.jsonl" in empty.stderr
    foreign = tmp_path / "foreign"
    (foreign / "corpus").mkdir(parents=True)
    (foreign / "corpus" / "part-abc-000000.parquet").write_bytes(b"not ours")
    (tmp_path / "h").mkdir()
    shutil.copy(KD_001, tmp_path / "h")
    refused = _cli("--corpus", str(tmp_path / "h"), "--out", str(foreign))
    assert refused.returncode == 2 and "rejudge did not write" in refused.stderr
    assert (foreign / "corpus" / "part-abc-000000.parquet").read_bytes() == b"not ours"  # nothing lost
    assert not (tmp_path / "out").exists()


def test_a_second_rejudge_into_the_same_out_replaces_the_first(recorded, tmp_path):
    R.rejudge(recorded, tmp_path / "out")
    R.rejudge(recorded, tmp_path / "out")
    parts = list((tmp_path / "out" / "corpus").glob("part-*.parquet"))
    assert len(parts) == 1  # never the two runs' rows mixed


def test_the_local_worker_pool_gives_the_same_corpus(tmp_path):
    from conformance.corpus import corpus_digest

    folder = tmp_path / "h"
    shutil.copytree(ROOT / "conformance" / "evidence", folder)
    one = R.rejudge(folder, tmp_path / "one", chunk=40)
    two = R.rejudge(folder, tmp_path / "two", chunk=40, workers=2)
    assert one.histories == two.histories > 100
    assert (one.verdicts, one.excused, one.failing) == (two.verdicts, two.excused, two.failing)
    assert corpus_digest(tmp_path / "one" / "corpus") == corpus_digest(tmp_path / "two" / "corpus")
