"""``pulsar-conformance run`` interrupted (Ctrl-C, SIGTERM, a crash before the corpus flush) and
``--resume``d, on the model target: every case judged exactly once, and no corpus row twice."""

from __future__ import annotations

import json
import os
import signal
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import conformance.runner as runner
from conformance.corpus import CorpusWriter
from fixtures.endpoint import TargetSpec
from pulsar_conformance import run_job
from pulsar_conformance.run_job import Journal, RunOptions, resume_command, run

ONLY = ("*nack*", "*seek*")  # a few dozen cases, a second on the model
CLIENTS = ("python", "java")


def _options(out: Path, **kw) -> RunOptions:
    return RunOptions(target=TargetSpec("model"), clients=CLIENTS, out=out, only=ONLY, fuzz_examples=0, no_report=True, **kw)


def _expected(out: Path) -> dict[str, list[str]]:
    cases = run_job.select_cases(_options(out))
    return {run_job._model_label(c): [x.id for x in cases if x.runs_on(c)] for c in CLIENTS}  # in run order


def _interrupt_on_call(monkeypatch, n: int, raise_it) -> list[str]:
    """``run_case`` raises (through ``raise_it``) on its ``n``-th call; returns the ids it was called with."""
    calls: list[str] = []
    real = runner.run_case

    def wrapped(case, target, **kw):
        calls.append(case.id)
        if len(calls) == n:
            raise_it()
        return real(case, target, **kw)

    monkeypatch.setattr(runner, "run_case", wrapped)
    return calls


def _corpus_rows(out: Path) -> list[tuple]:
    rows = []
    for part in sorted((out / "corpus").glob("part-*.parquet")):
        t = pq.read_table(part, columns=["run_id", "trace_id", "target", "client", "step"])
        rows += list(zip(*(t.column(c).to_pylist() for c in t.column_names)))
    return rows


def _assert_complete(out: Path, expected: dict[str, list[str]]) -> None:
    summary = json.loads((out / "summary.json").read_text())
    assert summary["not_run"] == {} and summary["not_run_by_label"] == {}
    for client, label in zip(CLIENTS, expected):
        doc = json.loads((out / f"summary-{client}.json").read_text())
        assert sorted(doc["cases"]) == sorted(expected[label])
    rows = _corpus_rows(out)
    dup = [k for k, n in Counter(rows).items() if n > 1]
    assert not dup, f"corpus rows written twice: {dup[:5]}"
    assert len({r[0] for r in rows}) == 1  # one run id: the resumed run continues the first one
    # every judged case with a history has its rows, per target label (client)
    traces = Counter((r[1], r[3]) for r in rows if r[4] == 1)
    assert all(n == 1 for n in traces.values())
    assert len(traces) == sum(len(v) for v in expected.values())


def test_ctrl_c_then_resume_runs_each_case_once(tmp_path, monkeypatch):
    out = tmp_path / "run"
    expected = _expected(out)
    said: list[str] = []

    def boom():
        raise KeyboardInterrupt

    calls = _interrupt_on_call(monkeypatch, 9, boom)
    code = run(_options(out), say=said.append)
    assert code == 130
    assert said[-1].startswith("INTERRUPTED (exit 130): interrupted (SIGINT)")
    assert said[-1].endswith(f"continue with: {resume_command(_options(out))}") and said[-1].endswith("--resume")
    journaled = [json.loads(line)["case"] for line in Journal.path(out, "model").read_text().splitlines()
                 if json.loads(line)["type"] == "case"]
    assert journaled == calls[:8]  # the case in flight is not kept
    partial = json.loads((out / "summary.json").read_text())
    assert set(partial["not_run"]) == set(expected["model"]) - set(calls[:8])
    assert set(partial["not_run"].values()) == {"interrupted (SIGINT)"}

    calls2 = _interrupt_on_call(monkeypatch, 10**6, boom)
    code = run(_options(out, resume=True), say=said.append)
    assert code in (0, 3)
    assert len(expected["model"]) > 9
    assert calls2 == [c for c in expected["model"] if c not in calls[:8]] + expected["model-java"]
    _assert_complete(out, expected)


def test_sigterm_exits_143_and_resume_completes(tmp_path, monkeypatch):
    out = tmp_path / "run"
    expected = _expected(out)
    n_python = len(expected["model"])
    calls = _interrupt_on_call(monkeypatch, n_python + 3, lambda: os.kill(os.getpid(), signal.SIGTERM))
    before = signal.getsignal(signal.SIGTERM)
    assert run(_options(out), say=lambda s: None) == 143
    assert signal.getsignal(signal.SIGTERM) == before  # the run's handler is gone with the run
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary["not_run_by_label"]["model-java"].values()) == {"interrupted (SIGTERM)"}
    assert len(summary["not_run_by_label"]["model-java"]) == len(expected["model-java"]) - 2
    calls2 = _interrupt_on_call(monkeypatch, 10**6, lambda: None)
    assert run(_options(out, resume=True), say=lambda s: None) in (0, 3)
    assert calls2 == [c for c in expected["model-java"] if c not in calls[n_python:n_python + 2]]
    _assert_complete(out, expected)


def test_rows_lost_before_the_flush_are_completed_from_the_histories(tmp_path, monkeypatch):
    """A run killed before its corpus buffer reached a part: the journal has the cases, the corpus
    does not; resume adds their rows from the saved histories and runs nothing twice."""
    out = tmp_path / "run"
    expected = _expected(out)
    monkeypatch.setattr(CorpusWriter, "flush", lambda self: self._rows.clear())  # nothing reaches a part

    def boom():
        raise KeyboardInterrupt

    calls = _interrupt_on_call(monkeypatch, 6, boom)
    assert run(_options(out), say=lambda s: None) == 130
    assert _corpus_rows(out) == []
    monkeypatch.undo()
    calls2 = _interrupt_on_call(monkeypatch, 10**6, lambda: None)
    assert run(_options(out, resume=True), say=lambda s: None) in (0, 3)
    assert calls2 == [c for c in expected["model"] if c not in calls[:5]] + expected["model-java"]
    _assert_complete(out, expected)


def test_a_fresh_run_forgets_the_old_journal(tmp_path, monkeypatch):
    out = tmp_path / "run"
    expected = _expected(out)
    assert run(_options(out), say=lambda s: None) in (0, 3)
    calls = _interrupt_on_call(monkeypatch, 10**6, lambda: None)
    assert run(_options(out), say=lambda s: None) in (0, 3)  # no --resume: everything again
    assert len(calls) == sum(len(v) for v in expected.values())
    said: list[str] = []
    calls.clear()
    assert run(_options(out, resume=True), say=said.append) in (0, 3)  # all judged: nothing runs
    assert calls == [] and any("cases to run" in s and ", 0 cases to run" in s for s in said)


def test_the_resume_command_repeats_the_options():
    options = RunOptions(target=TargetSpec("embedded"), clients=("python",), out=Path("out/x y"), only=("nack",),
                         fuzz_examples=0, no_report=True, timing_tolerance_ms=200.0, on_broker_death="restart",
                         config_override=("a=b",))
    assert resume_command(options) == ("pulsar-conformance run --target embedded --client python --out 'out/x y' --only nack "
                                       "--fuzz-examples 0 --no-report --config-override a=b --timing-tolerance-ms 200 "
                                       "--on-broker-death restart --resume")


def test_a_target_exception_is_one_line_with_the_traceback_in_the_log(tmp_path):
    from conformance.case_files import discover_cases

    case = next(c for c in discover_cases() if "nack" in c.id)

    class Broken:
        name = "embedded"

        def run(self, trace):
            raise ConnectionRefusedError("[Errno 111] Connection refused\nwhile creating the namespace")

    log = tmp_path / "harness-errors.log"
    result = runner.run_case(case, Broken(), client="python", harness_log=log)
    assert result.status == runner.ERROR
    assert "\n" not in result.message and "ConnectionRefusedError: [Errno 111] Connection refused while" in result.message
    assert str(log) in result.message
    assert "Traceback (most recent call last)" in log.read_text() and case.id in log.read_text()


def test_a_fuzz_budget_cut_short_runs_again_and_only_its_own_parts_join_the_corpus(tmp_path, monkeypatch):
    import conformance.fuzz as fuzz

    out = tmp_path / "run"
    options = RunOptions(target=TargetSpec("model"), clients=("python",), out=out, only=("nack-fixed*",), fuzz_examples=1,
                         no_report=True)
    real = fuzz.fuzz_budget

    def finished_then_interrupted(*args, **kw):
        real(*args, **kw)  # its parts are written under out/fuzz, not yet joined to the run's corpus
        raise KeyboardInterrupt

    monkeypatch.setattr(fuzz, "fuzz_budget", finished_then_interrupted)
    assert run(options, say=lambda s: None) == 130
    monkeypatch.setattr(fuzz, "fuzz_budget", real)
    assert run(options.__class__(**{**options.__dict__, "resume": True}), say=lambda s: None) in (0, 3)
    rows = _corpus_rows(out)
    # the cases' run and the one fuzz budget that finished (the cut one's parts stay under out/fuzz)
    assert len({r[0] for r in rows}) == 2
    fuzz_parts = list((out / "fuzz").rglob("part-*.parquet"))
    assert len({p.name.split("-")[1] for p in fuzz_parts}) == 2
    calls = []
    monkeypatch.setattr(fuzz, "fuzz_budget", lambda *a, **kw: calls.append(1))
    assert run(options.__class__(**{**options.__dict__, "resume": True}), say=lambda s: None) in (0, 3)
    assert calls == [] and _corpus_rows(out) == rows  # done once: not again


def test_a_signal_while_a_case_is_recorded_waits_until_it_is_recorded(tmp_path, monkeypatch):
    """SIGTERM between the journal line and the corpus rows: the case is kept (journal, results,
    rows), listed as judged in the partial summary, and not run again."""
    out = tmp_path / "run"
    expected = _expected(out)
    real_write = Journal.write
    written: list[str] = []

    def write_then_signal(self, label, entry):
        real_write(self, label, entry)
        if entry.get("type") == "case":
            written.append(entry["case"])
            if len(written) == 4:
                os.kill(os.getpid(), signal.SIGTERM)

    monkeypatch.setattr(Journal, "write", write_then_signal)
    assert run(_options(out), say=lambda s: None) == 143
    partial = json.loads((out / "summary.json").read_text())
    assert list(partial["cases"]) == written and not set(partial["not_run"]) & set(written)
    assert len({(r[1], r[3]) for r in _corpus_rows(out)}) == 4  # the four cases' rows are in a part
    monkeypatch.undo()
    calls = _interrupt_on_call(monkeypatch, 10**6, lambda: None)
    assert run(_options(out, resume=True), say=lambda s: None) in (0, 3)
    assert calls == [c for c in expected["model"] if c not in written] + expected["model-java"]
    _assert_complete(out, expected)
