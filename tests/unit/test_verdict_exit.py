"""The exit code of run / replay / check (``conformance.verdict_exit``), and the one-way layers.

The codes are the documented contract (README "Commands", ``pulsar-conformance --help``):
0 all judged rules PASS or excused, 1 FAIL, 2 usage / no broker, 3 inconclusive, 4 harness error;
4 wins over 1, 1 over 3.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.verdict_exit import decide, exit_code

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("verdicts, kw, code", [
    ({}, {}, 0),
    ({"PLS-ACK-001": "PASS", "PLS-JAVA-001": "NOT_APPLICABLE"}, {}, 0),
    ({"PLS-ACK-001": "PASS", "PLS-ACK-002": "FAIL"}, {}, 1),
    ({"PLS-ACK-001": "INDETERMINATE"}, {}, 3),
    ({"PLS-ACK-001": "NOT_EXERCISED"}, {}, 3),
    ({"PLS-ACK-001": "UNJUDGED"}, {}, 3),  # named by a case, judged by no detector
    ({"PLS-ACK-001": "ERROR"}, {}, 4),
    ({"PLS-ACK-001": "PASS"}, {"harness_errors": 1}, 4),
    ({"PLS-ACK-001": "PASS"}, {"failed_cases": 1}, 1),  # a broken expect: line charged to no rule
    ({"PLS-BACKLOG-001": "FAIL"}, {"excused": {"PLS-BACKLOG-001"}}, 0),  # a known deviation
    ({"PLS-BACKLOG-001": "FAIL", "PLS-ACK-001": "FAIL"}, {"excused": {"PLS-BACKLOG-001"}}, 1),
    # precedence: 4 over 1 over 3
    ({"A": "FAIL", "B": "INDETERMINATE"}, {}, 1),
    ({"A": "FAIL", "B": "INDETERMINATE"}, {"harness_errors": 2}, 4),
    ({"A": "INDETERMINATE", "B": "ERROR"}, {}, 4),
])
def test_exit_code(verdicts, kw, code):
    assert exit_code(verdicts, **kw) == code


def test_an_unknown_status_is_refused_not_read_as_success():
    with pytest.raises(ValueError, match="unknown verdict status .*'PLS-ACK-001': 'pass'"):
        exit_code({"PLS-ACK-001": "pass"})
    with pytest.raises(ValueError, match="counts must be >= 0"):
        exit_code({}, harness_errors=-1)


def _check_cli(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pulsar_conformance", "check", str(path)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_check_exits_by_the_same_function(tmp_path):
    """``check`` (the real CLI, in a subprocess) on one history: as the model ran it 0; with the
    broker accepting a cumulative ack on Shared 1; naming a rule nothing judges 3; no file 2."""
    from dataclasses import replace

    from conformance.targets.model import ModelTarget
    from conformance.trace import History, Outcome, load, replace_header, save

    trace = load(ROOT / "tests" / "data" / "cumulative-ack-shared.trace.jsonl")
    history = ModelTarget().run(trace)  # names PLS-ACK-006, a Java-only rule: NOT_APPLICABLE here
    assert history.events[-1].op.op == "ack_cumulative" and history.events[-1].outcome.status == "rejected"
    accepted = History(history.header, history.events[:-1] + (replace(history.events[-1], outcome=Outcome.ok()),))
    unjudged = History(replace_header(history.header, rules=("PLS-ACK-003", "PLS-CHUNK-001")), history.events)
    codes = {name: _check_cli(save(h, tmp_path / f"{name}.history.jsonl")).returncode
             for name, h in [("model", history), ("accepted", accepted), ("unjudged", unjudged)]}
    codes["missing"] = _check_cli(tmp_path / "missing.jsonl").returncode
    assert codes == {"model": 0, "accepted": 1, "unjudged": 3, "missing": 2}


def test_the_main_job_counts_a_crashing_target_as_a_harness_error(tmp_path):
    """A target that raises mid-case: the case is ERROR (never a verdict) and the run exits 4."""
    from conformance.case_files import discover_cases
    from conformance.corpus import CorpusWriter
    from conformance.targets.model import ModelTarget
    from pulsar_conformance.run_job import _run_cases, label_verdicts, run_rule_verdicts

    class DriverDies(ModelTarget):
        def run(self, trace):
            raise RuntimeError("the driver process exited")

    cases = [c for c in discover_cases() if c.id in ("ack-individual", "ack-cumulative")]
    writer = CorpusWriter(tmp_path / "corpus", run_id="t")
    crashed = _run_cases(DriverDies(), "model", "python", cases[:1], out=tmp_path, writer=writer, say=lambda s: None)
    fine = _run_cases(ModelTarget(), "model-again", "python", cases[1:], out=tmp_path, writer=writer, say=lambda s: None)
    writer.close()
    assert [r.status for r in crashed.results + fine.results] == ["ERROR", "PASS"]
    verdicts, excused = run_rule_verdicts([crashed, fine])
    assert verdicts and set(verdicts.values()) <= {"PASS", "NOT_APPLICABLE"}  # the crash left no verdict behind
    outcome = decide(label_verdicts([crashed, fine]))  # the main job's one decision
    assert (outcome.exit_code, outcome.overall) == (4, "ERROR")
    assert any("ack-individual" in r.text or "ack-cumulative" in r.text for r in outcome.reasons), outcome.reasons


class _EveryOpTimesOut:
    """A broker that answers nothing: every op of every trace ends ``indeterminate`` (a timeout)."""

    name = "pulsar://127.0.0.1:1"

    def run(self, trace):
        from conformance.trace import Event, History, Outcome, replace_header

        header = replace_header(trace.header, target=self.name, broker_version="4.0.8", client="python")
        return History(header, tuple(Event(op, Outcome.indeterminate("Timeout: the operation timed out"), 15000.0 * i,
                                           15000.0 * (i + 1)) for i, op in enumerate(trace.ops)))

    def describe(self):
        return {"target": self.name, "broker_version": "4.0.8", "client": "python", "client_version": "3.13.0"}


def test_a_history_where_every_operation_timed_out_is_inconclusive(tmp_path):
    """``check`` (the real CLI) on such a history, and the main job's verdict fold over such a run,
    exit 3 (inconclusive), never 0."""
    from conformance.case_files import discover_cases
    from conformance.corpus import CorpusWriter
    from conformance.trace import save
    from pulsar_conformance.run_job import _run_cases, label_verdicts, run_rule_verdicts

    cases = [c for c in discover_cases() if c.id in ("ack-individual", "redelivery-count", "delay-shared-holds")]
    assert len(cases) == 3
    history = _EveryOpTimesOut().run(cases[0].trace)
    assert _check_cli(save(history, tmp_path / "timed-out.history.jsonl")).returncode == 3
    writer = CorpusWriter(tmp_path / "corpus", run_id="t")
    live = _run_cases(_EveryOpTimesOut(), "external", "python", cases, out=tmp_path, writer=writer, say=lambda s: None)
    writer.close()
    assert {r.status for r in live.results} == {"INDETERMINATE"}
    verdicts, excused = run_rule_verdicts([live])
    assert verdicts and "PASS" not in verdicts.values()
    outcome = decide(label_verdicts([live]))  # the main job's one decision
    assert (outcome.exit_code, outcome.overall) == (3, "INCONCLUSIVE")


# --------------------------------------------------------------------------- layers

# Layers point one way: reference_model <- conformance <- reports <- spark_reports <- pulsar_conformance
# (fixtures obtains brokers; conformance's targets use it; it reads a release as the model does,
# through reference_model.releases, the bottom layer).
MAY_IMPORT = {
    "reference_model": set(),
    "fixtures": {"reference_model"},
    "conformance": {"reference_model", "fixtures"},
    "reports": {"reference_model", "fixtures", "conformance"},
    "spark_reports": {"reference_model", "fixtures", "conformance", "reports"},
    "pulsar_conformance": {"reference_model", "fixtures", "conformance", "reports", "spark_reports"},
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found


def test_layers_point_one_way():
    wrong = []
    for package, allowed in MAY_IMPORT.items():
        for path in sorted((ROOT / package).rglob("*.py")):
            upward = (_imports(path) & set(MAY_IMPORT)) - allowed - {package}
            if upward:
                wrong.append(f"{path.relative_to(ROOT)} imports {sorted(upward)}")
    assert not wrong, "imports against the layers:\n" + "\n".join(wrong)




def test_an_op_the_harness_could_not_run_is_a_harness_error_not_a_verdict(tmp_path):
    """A receive on a consumer whose subscribe timed out comes back as the harness's UnknownHandle:
    no rule is charged, the checker reports a harness error, and ``check`` exits 4."""
    from conformance.checker import check
    from conformance.trace import Event, History, Op, Outcome, TraceHeader, save

    header = TraceHeader(trace_id="t", target="pulsar://127.0.0.1:6650", broker_version="4.0.8", client="python")
    events = (
        Event(Op(1, "subscribe", {"consumer": "c1", "topic": "t", "subscription": "s"}), Outcome.indeterminate("client timeout"), 0, 15000),
        Event(Op(2, "receive", {"consumer": "c1", "timeout_ms": 100}),
              Outcome.rejected("UnknownHandle", "c1 does not exist: its subscribe at step 1 did not succeed"), 15000, 15001),
    )
    history = History(header, events)
    report = check(history)
    assert report.harness_errors and "step 2" in report.harness_errors[0]
    assert not report.failures() and "PLS-SUB-001" not in {v.rule_id for v in report.verdicts if v.step == 2}
    assert _check_cli(save(history, tmp_path / "h.history.jsonl")).returncode == 4


def test_replay_takes_a_case_id_or_a_case_file():
    def replay(what: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "pulsar_conformance", "replay", what], capture_output=True, text=True,
                              timeout=120, cwd=ROOT)

    by_id = replay("ack-individual")
    assert by_id.returncode == 0 and "PLS-ACK-001" in by_id.stdout, by_id.stderr
    case_file = next((ROOT / "conformance" / "cases").rglob("ack-individual.yaml"))
    assert replay(str(case_file)).returncode == 0
    missing = replay("no-such-case-or-file")
    assert missing.returncode == 2 and "no-such-case-or-file" in missing.stderr


def test_a_case_failing_on_a_rule_it_does_not_name_says_which_rule():
    """Found on 6 Dec 2026: a probe case naming PLS-ACK-001 failed on PLS-EXCL-002, and the last line said it failed
    "with no rule failing (an expect: line)" while summary.json's rules had PLS-EXCL-002 FAIL (also when another
    case names the rule that failed)."""
    from conformance.verdict_exit import LabelVerdicts

    lab = LabelVerdicts("embedded-java", "java", False, rules={"PLS-ACK-001": "PASS", "PLS-EXCL-002": "FAIL"},
                        meant=("PLS-ACK-001", "PLS-EXCL-002"), cases={"probe": "FAIL", "other": "FAIL"},
                        case_rules={"probe": ("PLS-ACK-001",), "other": ("PLS-EXCL-002",)},
                        case_failed_rules={"probe": ("PLS-EXCL-002",), "other": ("PLS-EXCL-002",)})
    outcome = decide([lab])
    assert outcome.exit_code == 1
    assert "PLS-EXCL-002" in outcome.line() and "no rule failing" not in outcome.line(), outcome.line()
    expect_only = LabelVerdicts("embedded-java", "java", False, rules={"PLS-ACK-001": "PASS"}, meant=("PLS-ACK-001",),
                                cases={"probe": "FAIL"}, case_rules={"probe": ("PLS-ACK-001",)})
    assert "with no rule failing (an expect: line)" in decide([expect_only]).line()
