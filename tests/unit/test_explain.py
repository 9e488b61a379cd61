"""``pulsar-conformance explain ID`` (and ``rules ID``): one rule at the prompt, from the records
that own each fact; and ``run`` and ``matrix`` driving the same clients by default (issue 43).

Expected values come from the sources themselves (the rule record's fields, the detector table's
row, the case YAML files read here with yaml), not from the command's output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from pulsar_conformance.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "conformance" / "cases"


def _cases_naming(rule_id: str) -> list[tuple[str, str]]:
    found = []
    for path in sorted(CASES.rglob("*.yaml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        if rule_id in (doc.get("rules") or []):
            found.append((doc["id"], path.relative_to(ROOT).as_posix()))
    return found


def _labelled(out: str) -> dict[str, str]:
    """Label -> value, continuation lines joined (the layout: ``label:`` padded to one column)."""
    fields: dict[str, str] = {}
    label = None
    for line in out.splitlines():
        head, sep, rest = line.partition(": ")
        if sep and not line.startswith(" ") and head.replace(" ", "").isalpha():
            label = head
            fields[label] = rest.strip()
        elif label is not None:
            fields[label] += " " + line.strip()
    return fields


def test_explain_prints_the_rule_its_source_its_detector_and_its_cases(capsys):
    assert main(["explain", "PLS-NACK-001"]) == 0
    out = capsys.readouterr().out
    f = _labelled(out)
    assert f["rule"] == "PLS-NACK-001 (normative)"
    assert f["text"].startswith("C++/Python nack: redelivered after the fixed negative_ack_redelivery_delay d")
    assert f["source"] == "apache/pulsar-client-python pulsar/__init__.py#Consumer.negative_acknowledge"
    assert "marked for redelivery after some fixed delay" in f["quote"]
    assert f["applies to"] == "brokers *; clients python, cpp; vendor profiles apache, tdmq"
    assert f["detector"] == "_Checker._receive in conformance.checker (judges at: receive)"
    assert f["violated if"].startswith("a message nacked on a C++/Python consumer with delay d comes back before d")
    expected = _cases_naming("PLS-NACK-001")
    assert expected and "nack-fixed-delay" in [c for c, _ in expected]
    assert f["cases"].startswith(f"{len(expected)}: ")
    for case_id, file in expected:
        assert f"{case_id}: {file}" in out
    assert all(len(line) <= 120 for line in out.splitlines())


def test_rules_id_prints_what_explain_prints(capsys):
    assert main(["explain", "PLS-ACK-001"]) == 0
    explained = capsys.readouterr().out
    assert main(["rules", "pls-ack-001"]) == 0  # ids are matched whatever their case
    assert capsys.readouterr().out == explained
    assert main(["rules"]) == 0  # without an id: still the registry listing
    listing = capsys.readouterr().out
    assert "PLS-ACK-001" in listing and "PLS-NACK-001" in listing and "detector:" not in listing


def test_explain_json_holds_the_same_facts(capsys):
    assert main(["explain", "PLS-NACK-002", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["id"] == "PLS-NACK-002" and doc["status"] == "inferred"
    assert doc["source"] == "apache/pulsar-client-cpp lib/NegativeAcksTracker.cc" and doc["quote"] == ""
    assert doc["applies_to"] == {"brokers": "*", "clients": ["python", "cpp"], "vendors": ["apache", "tdmq"]}
    assert doc["detector"]["function"] == "nack_delay_floor" and doc["detector"]["module"] == "conformance.detectors"
    assert doc["detector"]["violated_if"].startswith("Violated if ")
    assert [(c["id"], c["file"]) for c in doc["cases"]] == _cases_naming("PLS-NACK-002")


def test_a_withdrawn_rule_has_no_detector(capsys):
    assert main(["explain", "PLS-FAILOVER-001"]) == 0
    f = _labelled(capsys.readouterr().out)
    assert f["rule"] == "PLS-FAILOVER-001 (withdrawn)"
    assert f["detector"].startswith("none: the rule is withdrawn")
    assert "violated if" not in f


@pytest.mark.parametrize("argv", [["explain", "PLS-NACK-01"], ["rules", "PLS-NAK-001"]])
def test_an_unknown_id_is_exit_2_with_one_line_naming_close_ids(argv, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: unknown rule id")
    assert "PLS-NACK-001" in lines[0]


def test_run_and_matrix_default_to_the_same_clients(monkeypatch, tmp_path):
    from pulsar_conformance import run_job
    from pulsar_conformance.matrix_job import MatrixOptions

    seen = []
    monkeypatch.setattr(run_job, "run", lambda options: seen.append(options.clients) or 0)
    assert main(["run", "--target", "model", "--out", str(tmp_path / "out"), "--no-github"]) == 0
    matrix_default = build_parser().parse_args(["matrix", "--versions", "4.0.8"]).client
    assert seen == [("python", "java", "mixed")]
    assert matrix_default.split(",") == list(seen[0]) == list(MatrixOptions(versions=("4.0.8",)).clients.split(","))
    # RunOptions (run_job.py) still spells its own default: it must say the same until it imports the constant
    assert run_job.RunOptions(target=None).clients == seen[0]
    for command in ("run", "matrix"):
        helped = " ".join(build_parser()._subparsers._group_actions[0].choices[command].format_help().split())
        assert "default python,java,mixed" in helped, command
