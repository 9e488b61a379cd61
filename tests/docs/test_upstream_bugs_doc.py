"""docs/upstream-bugs.md and README's deviation table stay in step with the recorded deviations:
every known deviation is in the bug table, every id the table names is recorded, and every case
and rule a row names exists."""

from __future__ import annotations

import re
from pathlib import Path

from conformance.case_files import discover_cases
from conformance.deviations import load_deviations
from reference_model.rules import rule

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "upstream-bugs.md").read_text(encoding="utf-8")


def test_every_deviation_is_in_the_bug_doc_and_every_id_there_is_recorded():
    recorded = {d.id for d in load_deviations()}
    named = set(re.findall(r"\bKD-\d{3}\b", DOC))
    assert recorded - named == set(), f"deviations missing from docs/upstream-bugs.md: {sorted(recorded - named)}"
    assert named - recorded == set(), f"docs/upstream-bugs.md names unknown deviations: {sorted(named - recorded)}"
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert recorded - set(re.findall(r"\bKD-\d{3}\b", readme)) == set()


def test_the_cases_and_rules_the_table_names_exist():
    cases = {c.id for c in discover_cases()}
    for case in re.findall(r"`([a-z0-9]+(?:-[a-z0-9]+)+)`", DOC):
        assert case in cases, f"docs/upstream-bugs.md names case {case!r}, which does not exist"
    for rule_id in set(re.findall(r"\bPLS-[A-Z]+-\d{3}\b", DOC)):
        rule(rule_id)  # raises on an unknown id


def test_each_bug_row_cites_an_upstream_pull_request():
    rows = [line for line in DOC.splitlines() if re.match(r"^\| \d+ \|", line)]
    assert len(rows) >= 8
    for row in rows:
        assert "github.com/apache/pulsar/pull/" in row, row
