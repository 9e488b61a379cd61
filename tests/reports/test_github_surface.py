"""``run --github``: ranked GitHub annotations on stdout and the verdict table in the job summary
(reports/github.py), read from what a real ``run --target model`` wrote, and from a hand-made run
folder where rules FAIL, to show the ranking, the escaping and the cap of 10.

Annotation lines are read back with a parser written here from GitHub's workflow-command syntax
(``::level key=value,key=value::message``; properties escape % CR LF : and ,; the message % CR LF)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pulsar_conformance.cli import main
from reference_model.rules import active_rules

ROOT = Path(__file__).resolve().parents[2]
COMMAND = re.compile(r"^::(error|warning|notice)(?: ([^:]*))?::(.*)$")


def _unescape(text: str) -> str:
    for code, char in (("%2C", ","), ("%3A", ":"), ("%0A", "\n"), ("%0D", "\r"), ("%25", "%")):
        text = text.replace(code, char)
    return text


def parse(line: str) -> tuple[str, dict[str, str], str]:
    m = COMMAND.match(line)
    assert m, f"not a workflow command: {line!r}"
    props = {}
    for part in filter(None, (m.group(2) or "").split(",")):  # a raw ',' inside a value would split it: escaped
        key, _, value = part.partition("=")
        props[key] = _unescape(value)
    return m.group(1), props, _unescape(m.group(3))


def _run(out: Path, *extra: str, env: dict[str, str], monkeypatch) -> int:
    for key in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return main(["run", "--target", "model", "--out", str(out), "--no-report", "--fuzz-examples", "0", *extra])


def _table_rows(markdown: str) -> dict[str, list[str]]:
    rows = {}
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and re.fullmatch(r"PLS-[A-Z]+-\d{3}", cells[0]):
            rows[cells[0]] = cells[1:]
    return rows


def test_a_passing_run_annotates_nothing_and_its_summary_lists_every_rule(tmp_path, monkeypatch, capsys):
    step_summary = tmp_path / "step-summary.md"
    step_summary.write_text("earlier step's summary\n")
    code = _run(tmp_path / "out", "--only", "ack-*", "--only", "cross-cumulative-ack-shared",  # --only: ids and globs
                env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(step_summary)}, monkeypatch=monkeypatch)
    out = capsys.readouterr().out
    assert code == 0
    assert not [line for line in out.splitlines() if line.startswith("::")]
    text = step_summary.read_text()
    assert text.startswith("earlier step's summary\n")  # appended, never replaced
    rows = _table_rows(text)
    assert set(rows) == {r.id for r in active_rules()}  # every rule the run gave a verdict
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    clients = list(summary["by_client"])
    assert clients == ["python", "java", "mixed"]
    header = next(line for line in text.splitlines() if line.startswith("| rule |"))
    assert [c.strip() for c in header.strip("|").split("|")] == ["rule", *clients, "cases"]
    for rule, cells in rows.items():
        assert cells[:3] == [summary["by_client"][c]["rules"][rule] for c in clients], rule
    assert "ack-individual" in rows["PLS-ACK-001"][3].split(", ")  # conformance/cases/acks/ack-individual.yaml names it


def test_no_github_means_no_annotations_even_on_github(tmp_path, monkeypatch, capsys):
    step_summary = tmp_path / "step-summary.md"
    code = _run(tmp_path / "out", "--only", "ack-individual", "--no-github",
                env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(step_summary)}, monkeypatch=monkeypatch)
    assert code == 0 and not step_summary.exists()


def test_a_failing_case_is_an_error_annotation_on_its_case_file(tmp_path, monkeypatch, capsys):
    """A real run of a case whose expect line is wrong (m1 where the broker model gives m2)."""
    cases = tmp_path / "conformance" / "cases" / "acks"
    cases.mkdir(parents=True)
    good = (ROOT / "conformance" / "cases" / "acks" / "ack-individual.yaml").read_text()
    wrong = good.replace("id: ack-individual", "id: ack-individual-wrong").replace(
        "{step: 9, status: ok, payload: m2, redelivery_count: 1}", "{step: 9, status: ok, payload: m1, redelivery_count: 1}")
    assert wrong != good
    (cases / "ack-individual-wrong.yaml").write_text(wrong)
    (cases / "ack-individual.yaml").write_text(good)
    code = _run(tmp_path / "out", "--cases", str(tmp_path / "conformance" / "cases"), "--client", "python", "--github",
                env={}, monkeypatch=monkeypatch)
    out = capsys.readouterr().out
    assert code == 1
    lines = [parse(line) for line in out.splitlines() if line.startswith("::")]
    assert len(lines) == 1, out
    level, props, message = lines[0]
    assert level == "error"
    assert props["file"] == "conformance/cases/acks/ack-individual-wrong.yaml"
    assert props["title"] == "PLS-ACK-001 FAIL: case ack-individual-wrong"
    assert "expected 'm1'" in message and "python" in message and "\n" not in message


# --------------------------------------------------------------------------- a hand-made run folder


def _hand_made(out: Path) -> None:
    """A run where 13 rules FAIL with the python client (one excused by a known deviation), a case
    ERRORs, a rule is INDETERMINATE, a named rule was never judged, and the run recorded an error."""
    failing = [f"PLS-ACK-{n:03d}" for n in range(1, 6)] + [f"PLS-NACK-{n:03d}" for n in range(1, 8)] + ["PLS-SUB-001"]
    rules = {r.id: "PASS" for r in active_rules()}
    rules.update({rule: "FAIL" for rule in failing})
    rules["PLS-SEEK-001"] = "INDETERMINATE"
    rules["PLS-SEEK-002"] = "NOT_EXERCISED"
    kd = {"sub-case#KD-900": {"id": "KD-900", "case": "sub-case", "rule": "PLS-SUB-001", "reason": "r", "evidence": "e"}}
    own = {"target": "embedded", "broker_version": "4.0.8", "client": "python", "rules": rules,
           "meant_to_judge": ["PLS-SEEK-002"], "known_deviations": kd, "cases": {}}
    summary = {**own, "by_client": {"python": own}, "reference": {}, "overall": "ERROR", "exit_code": 4,
               "errors": ["the broker died: pid 42, signal 9"]}
    (out / "summary.json").write_text(json.dumps(summary))
    (out / "summary-python.json").write_text(json.dumps(own))
    props = ['<property name="target" value="embedded"/>', '<property name="client" value="python"/>']
    cases = []
    for i, rule in enumerate(failing[:-1]):
        cid = f"case-{i:02d}"
        props += [f'<property name="rules:{cid}" value="{rule}"/>', f'<property name="verdict:{cid}:{rule}" value="FAIL"/>']
        explanation = "Let m1 be nacked at 10 ms, 50% late: a, b. Then it came back at 9 ms." if i == 0 else f"Let {rule}."
        cases.append(f'<testcase name="{cid} [{rule}]"><failure type="FAIL" message="x">[{rule}] step 3 FAIL: '
                     f'{explanation}&#10;[expect] step 4: other</failure>'
                     f'<system-out>case file: /ci/conformance/cases/odd,name:{i}.yaml</system-out></testcase>')
    props += ['<property name="rules:sub-case" value="PLS-SUB-001"/>', '<property name="verdict:sub-case:PLS-SUB-001" value="FAIL"/>']
    cases.append('<testcase name="sub-case [PLS-SUB-001]"><skipped type="known-deviation" message="known deviation KD-900: r">'
                 '[PLS-SUB-001] step 1 FAIL: excused</skipped></testcase>')
    props += ['<property name="rules:broken" value="PLS-TOPIC-001"/>']
    cases.append('<testcase name="broken [PLS-TOPIC-001]"><error type="ERROR" message="the Java driver died"/></testcase>')
    props += ['<property name="rules:seek" value="PLS-SEEK-001,PLS-SEEK-002"/>',
              '<property name="verdict:seek:PLS-SEEK-001" value="INDETERMINATE"/>']
    cases.append('<testcase name="seek [PLS-SEEK-001, PLS-SEEK-002]"><skipped type="INDETERMINATE" message="m">'
                 '[PLS-SEEK-001] step 2 INDETERMINATE: the seek timed out</skipped></testcase>')
    (out / "junit.xml").write_text('<?xml version="1.0"?><testsuites><testsuite name="s"><properties>' + "".join(props)
                                   + "</properties>" + "".join(cases) + "</testsuite></testsuites>")


def test_annotations_rank_fail_error_inconclusive_escape_and_stop_at_10(tmp_path):
    from reports import github

    _hand_made(tmp_path)
    printed: list[str] = []
    found = github.publish(tmp_path, write=printed.append, step_summary=str(tmp_path / "step.md"))
    # 12 unexcused FAILs (PLS-SUB-001's only FAIL is excused), 2 ERRORs, 2 INCONCLUSIVE
    assert [p.kind for p in found] == ["FAIL"] * 12 + ["ERROR"] * 2 + ["INCONCLUSIVE"] * 2
    assert "PLS-SUB-001" not in {p.rule_id for p in found}
    assert len(printed) == 10 and all("\n" not in line and "\r" not in line for line in printed)
    parsed = [parse(line) for line in printed]
    assert [level for level, _, _ in parsed[:9]] == ["error"] * 9
    assert [props["title"].split(":")[0] for _, props, _ in parsed[:9]] == [
        "PLS-ACK-001 FAIL", "PLS-ACK-002 FAIL", "PLS-ACK-003 FAIL", "PLS-ACK-004 FAIL", "PLS-ACK-005 FAIL",
        "PLS-NACK-001 FAIL", "PLS-NACK-002 FAIL", "PLS-NACK-003 FAIL", "PLS-NACK-004 FAIL"]
    level, props, message = parsed[0]
    assert props == {"file": "conformance/cases/odd,name:0.yaml", "title": "PLS-ACK-001 FAIL: case case-00"}
    assert "file=conformance/cases/odd%2Cname%3A0.yaml,title=PLS-ACK-001 FAIL%3A case case-00::" in printed[0]
    assert "50% late: a, b." in message and "50%25 late: a, b." in printed[0]  # the message keeps ',' and ':' as they are
    assert message.startswith("PLS-ACK-001 FAIL: case case-00 on embedded 4.0.8, python: [PLS-ACK-001] step 3 FAIL: Let m1")
    assert message.endswith("(pulsar-conformance explain PLS-ACK-001)")
    level, props, message = parsed[9]  # the tenth says what is left: 3 FAIL, 2 ERROR, 2 INCONCLUSIVE
    assert level == "error" and props["title"] == "7 more problems"
    assert "(3 FAIL, 2 ERROR, 2 INCONCLUSIVE)" in message and "job summary" in message


def test_the_job_summary_lists_every_problem_and_every_rule(tmp_path):
    from reports import github

    _hand_made(tmp_path)
    text = github.summary_markdown(tmp_path)
    rows = _table_rows(text)
    assert set(rows) == {r.id for r in active_rules()}
    assert rows["PLS-SUB-001"][0] == "FAIL (KD-900)" and rows["PLS-ACK-001"][0] == "FAIL"
    assert rows["PLS-SEEK-001"] == ["INDETERMINATE", "seek"]
    problems = [line for line in text.splitlines() if re.match(r"^\| (FAIL|ERROR|INCONCLUSIVE) \|", line)]
    assert len(problems) == 16
    assert any("the broker died: pid 42, signal 9" in line for line in problems)
    assert any("the Java driver died" in line and "PLS-TOPIC-001" in line for line in problems)
    assert any("PLS-SEEK-002" in line and "NOT_EXERCISED" in line for line in problems)


def test_a_folder_without_summary_json_is_refused(tmp_path):
    from reports import github

    with pytest.raises(github.GithubSurfaceError, match="summary.json does not exist"):
        github.publish(tmp_path, write=print)


def test_the_documented_workflow_runs_the_main_job_with_github_surfaces():
    """docs/ci-recipes.md's github-run recipe: its run step is a command the parser takes, with --github."""
    import shlex

    import yaml

    from pulsar_conformance.cli import build_parser

    text = (ROOT / "docs" / "ci-recipes.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- recipe: github-run -->\s*```yaml\n(.*?)```", text, re.DOTALL)
    assert m, "docs/ci-recipes.md has no github-run recipe"
    (job,) = yaml.safe_load(m.group(1))["jobs"].values()
    runs = [line for step in job["steps"] if "run" in step for line in step["run"].splitlines()
            if line.startswith("pulsar-conformance run ")]
    assert len(runs) == 1, runs
    args = build_parser().parse_args(shlex.split(runs[0])[1:])
    assert args.github is True and args.out == "out/run"
    uploaded = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert uploaded["with"]["path"] == args.out
