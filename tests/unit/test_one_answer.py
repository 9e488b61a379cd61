"""One answer (issue 43): every outcome of ``pulsar-conformance run`` through the real ``run`` code
path, and the five surfaces that must agree on it: the exit code, the last line, summary.json
(``overall``, ``exit_code``, ``reasons``), junit.xml and the HTML banner.

The outcomes are made from inputs built here: case files copied from a passing built-in case and
broken on purpose (an ``expect:`` line that cannot hold; a rule named that the trace never
exercises), a model target that raises on one case, an interruption, and a stand-in live broker that
replays KD-001's recorded evidence (a known deviation). Expected values come from those inputs
(which case, which rule, which client), never from the code's own output.
"""

from __future__ import annotations

import contextlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import xmlschema

import conformance.runner as runner
from conformance.targets.model import ModelTarget
from conformance.trace import load
from fixtures.endpoint import TargetSpec
from pulsar_conformance import run_job
from pulsar_conformance.run_job import RunOptions, run
from reports.html import outcome_banner

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "conformance/cases/acks/ack-cumulative-failover.yaml"  # PLS-ACK-002, passes on the model
KD1 = ROOT / "conformance/evidence/KD-001-backlog-after-seek-4.0.8.history.jsonl"
KD1_CASE = "backlog-after-seek-individual-acks"
EXIT = {"PASS": 0, "KNOWN_DEVIATIONS": 0, "FAIL": 1, "INCONCLUSIVE": 3, "ERROR": 4, "INTERRUPTED": 130}
SCHEMA = xmlschema.XMLSchema(str(ROOT / "tests/data/junit-10.xsd"))
COLOUR = {"PASS": "ok", "KNOWN_DEVIATIONS": "known", "FAIL": "bad", "ERROR": "bad", "INCONCLUSIVE": "unsure",
          "INTERRUPTED": "unsure"}


def _case(folder: Path, case_id: str, *, rules: str = "[PLS-ACK-002]", last_expect: str = "payload: null") -> None:
    text = BASE.read_text(encoding="utf-8")
    assert "id: ack-cumulative-failover" in text and "rules: [PLS-ACK-002]" in text and "{step: 10, status: ok, payload: null}" in text
    text = (text.replace("id: ack-cumulative-failover", f"id: {case_id}").replace("rules: [PLS-ACK-002]", f"rules: {rules}")
            .replace("{step: 10, status: ok, payload: null}", "{step: 10, status: ok, " + last_expect + "}"))
    (folder / f"{case_id}.yaml").write_text(text, encoding="utf-8")


def _run(tmp_path: Path, cases: Path | None = None, **kw) -> tuple[int, list[str], Path]:
    out = tmp_path / "out"
    said: list[str] = []
    options = RunOptions(target=kw.pop("target", TargetSpec("model")), clients=("python",), out=out, cases=cases,
                         fuzz_examples=0, no_report=True, **kw)
    code = run(options, say=said.append)
    return code, said, out


def _surfaces(code: int, said: list[str], out: Path, overall: str) -> tuple[dict, ET.Element, str]:
    """The five surfaces agree on ``overall``; returns summary.json, the junit outcome suite and the last line."""
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert code == EXIT[overall] == summary["exit_code"]
    assert summary["overall"] == overall
    last = said[-1]
    word = "PASS with known deviations" if overall == "KNOWN_DEVIATIONS" else overall
    assert last.startswith(f"{word} (exit {code})"), last
    SCHEMA.validate(str(out / "junit.xml"))
    root = ET.parse(out / "junit.xml").getroot()
    (suite,) = [s for s in root.findall("testsuite") if s.get("name") == "pulsar-conformance.outcome"]
    (outcome_case,) = [c for c in suite.findall("testcase") if c.get("name") == "run outcome"]
    bad = outcome_case.find("failure") if outcome_case.find("failure") is not None else outcome_case.find("error")
    if code == 0:
        assert bad is None
    else:  # a CI page shows a non-zero run as not green: failures or errors in the file
        assert bad is not None and bad.get("type") == overall and bad.get("message").startswith(f"{word} (exit {code})")
        assert int(root.get("failures")) + int(root.get("errors")) > 0
    banner = outcome_banner(summary)
    assert f'class="{COLOUR[overall]}"' in banner and f'data-overall="{overall}"' in banner
    assert f'data-exit-code="{code}"' in banner and f"{word} (exit {code})" in banner
    return summary, suite, last


def test_pass(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    _case(cases, "one-passing")
    code, said, out = _run(tmp_path, cases)
    summary, suite, last = _surfaces(code, said, out, "PASS")
    assert summary["reasons"] == [] and int(suite.get("failures")) == 0 and int(suite.get("errors")) == 0
    assert "conforms to" in last


def test_fail_names_the_case_whose_expect_line_broke_with_no_rule_failing(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    _case(cases, "one-passing")
    _case(cases, "expect-broken", last_expect="payload: m1")  # the model delivers nothing there
    code, said, out = _run(tmp_path, cases)
    summary, _, last = _surfaces(code, said, out, "FAIL")
    assert "expect-broken" in last and "one-passing" not in last and "python client" in last
    (reason,) = [r for r in summary["reasons"] if r["kind"] == "failed-case"]
    assert reason["cases"] == ["expect-broken"] and reason["client"] == "python"


def test_inconclusive_names_the_rule_the_client_did_not_exercise_and_is_not_green_in_junit(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    _case(cases, "names-a-nack-rule", rules="[PLS-ACK-002, PLS-NACK-001]")  # no nack in its ops
    code, said, out = _run(tmp_path, cases)
    summary, suite, last = _surfaces(code, said, out, "INCONCLUSIVE")
    assert "PLS-NACK-001" in last and "not exercised" in last and "python client" in last and "names-a-nack-rule" in last
    (reason,) = summary["reasons"]
    assert (reason["kind"], reason["rules"], reason["cases"]) == ("inconclusive", ["PLS-NACK-001"], ["names-a-nack-rule"])
    (rule_case,) = [c for c in suite.findall("testcase") if c.get("name").startswith("PLS-NACK-001")]
    assert rule_case.find("failure").get("message").startswith("inconclusive: not exercised: PLS-NACK-001")
    # the sentence before it counts the same rule as inconclusive, not "0 inconclusive"
    assert "1 inconclusive" in said[-2]


class _RaisesOn(ModelTarget):
    def __init__(self, case_id: str, **kw):
        super().__init__(**kw)
        self.case_id = case_id

    def run(self, trace):
        if trace.header.trace_id.startswith(self.case_id):
            raise RuntimeError("the scripted target broke on purpose")
        return super().run(trace)


def test_error_names_the_case_and_its_error(tmp_path, monkeypatch):
    cases = tmp_path / "cases"
    cases.mkdir()
    _case(cases, "one-passing")
    _case(cases, "target-raises")
    monkeypatch.setattr(run_job, "model_target", lambda client, release=None: _RaisesOn("target-raises"))
    code, said, out = _run(tmp_path, cases)
    summary, _, last = _surfaces(code, said, out, "ERROR")
    assert "target-raises" in last and "the scripted target broke on purpose" in last and "one-passing" not in last
    (reason,) = [r for r in summary["reasons"] if r["kind"] == "error"]
    assert reason["cases"] == ["target-raises"]


def test_interrupted_says_how_many_cases_did_not_run_and_how_to_continue(tmp_path, monkeypatch):
    cases = tmp_path / "cases"
    cases.mkdir()
    for i in range(3):
        _case(cases, f"case-{i}")
    calls: list[str] = []
    real = runner.run_case

    def interrupts_second(case, target, **kw):
        calls.append(case.id)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(case, target, **kw)

    monkeypatch.setattr(runner, "run_case", interrupts_second)
    code, said, out = _run(tmp_path, cases)
    summary, _, last = _surfaces(code, said, out, "INTERRUPTED")
    assert "2 cases not run" in last and last.endswith("--resume")
    assert set(summary["not_run"]) == {"case-0", "case-1", "case-2"} - {calls[0]}


class _Endpoint:
    kind, service_url, admin_url, token, log_path, pid = "embedded", "pulsar://127.0.0.1:1", "http://127.0.0.1:1", None, None, None

    def describe(self):
        return {"target": "embedded", "broker_version": "4.0.8"}


class _ReplaysKd1(ModelTarget):
    """A live 4.0.8 broker that does what KD-001 recorded (its evidence history) and nothing else here."""

    def describe(self):
        return {"target": "embedded", "broker_version": "4.0.8", "client": "python", "client_version": "scripted"}

    def run(self, trace):
        return load(KD1)


class _Alive:
    def __init__(self, endpoint):
        pass

    def check(self, *, suspect=False):
        return None


def test_known_deviations_only_is_exit_0_in_its_own_colour_and_a_skip_in_junit(tmp_path, monkeypatch):
    monkeypatch.setattr(run_job, "open_endpoint", lambda spec, options, **kw: contextlib.nullcontext(_Endpoint()))
    monkeypatch.setattr(run_job, "live_target", lambda endpoint, options, **kw: contextlib.nullcontext(_ReplaysKd1()))
    monkeypatch.setattr(run_job, "BrokerMonitor", _Alive)
    code, said, out = _run(tmp_path, target=TargetSpec("embedded"), only=(KD1_CASE,), timing_tolerance_ms=50.0)
    summary, _, last = _surfaces(code, said, out, "KNOWN_DEVIATIONS")
    (reason,) = summary["reasons"]
    assert (reason["kind"], reason["rules"], reason["deviations"], reason["cases"]) == (
        "known-deviation", ["PLS-BACKLOG-001"], ["KD-001"], [KD1_CASE])
    assert "KD-001" in last
    root = ET.parse(out / "junit.xml").getroot()
    skipped = [c.find("skipped") for c in root.iter("testcase") if c.get("name").startswith(KD1_CASE)]
    live = [s for s in skipped if s is not None]
    assert len(live) == 1 and "KD-001" in live[0].get("message")  # the broker's; the model's case passed
    assert 'id="known-deviations"' in outcome_banner(summary)
