"""The cases translated from Pulsar's own tests (conformance/cases/upstream/, issue 45 item 1) against
the model, and docs/upstream-tests.md, which records the verdict of each.

- Every case file (the suite's ``*.yaml`` and the ``pending/*.yaml.pending`` ones the model cannot judge
  yet) has exactly one row in the doc's table, and every case id in the table has a file.
- A case PASSes on the model exactly when its row says ``agree``; a pending case must not PASS: when the
  model learns to judge it, this test fails and says to move it into the suite.
- The totals at the top of the doc count the table's rows.
- The expectations of an agreeing case can fail: in each case that pins a payload, the first such pin
  replaced by a payload never sent is reported.

No broker: the model only (a few seconds).
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from pathlib import Path

import pytest

from conformance.case_files import CASES_DIR, check_expectations, load_case
from conformance.runner import PASS, run_case
from conformance.targets.model import ModelTarget

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "upstream-tests.md"
UPSTREAM = Path(CASES_DIR) / "upstream"
SUITE_FILES = sorted(UPSTREAM.glob("*.yaml"))
PENDING_FILES = sorted((UPSTREAM / "pending").glob("*.yaml.pending"))
VERDICTS = ("agree", "disagree", "cannot judge", "not expressible", "no rule")


def _rows() -> list[tuple[str, str, str]]:
    """(source, case id or '-', verdict kind) for each row of the doc's table."""
    rows = []
    # the model's verdicts: every section but "Live on ..." (a table of its own, of live findings)
    text = re.sub(r"\n## Live on.*?(?=\n## )", "\n", DOC.read_text(), flags=re.S)
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0].startswith("source") or set(cells[0]) <= {"-"}:
            continue
        m = re.match(r"`([^`]+)`", cells[1])
        kind = next((v for v in VERDICTS if cells[2].startswith(v)), None)
        assert kind is not None, f"docs/upstream-tests.md: row for {cells[0]!r} has verdict {cells[2]!r}; use one of {VERDICTS}"
        rows.append((cells[0], m.group(1) if m else "-", kind))
    return rows


ROWS = _rows()
VERDICT_OF = {case_id: kind for _, case_id, kind in ROWS if case_id != "-"}


def _model_result(path: Path):
    case = load_case(path)
    client = case.clients[0] if case.clients[0] in ("python", "java", "go") else "python"
    return case, run_case(case, ModelTarget(client=client), client=case.clients[0])


def test_every_case_file_has_one_row_and_every_row_a_file():
    ids = [load_case(p).id for p in SUITE_FILES + PENDING_FILES]
    table_ids = [case_id for _, case_id, _ in ROWS if case_id != "-"]
    assert len(table_ids) == len(set(table_ids)), "a case id appears twice in docs/upstream-tests.md"
    assert sorted(ids) == sorted(table_ids), (f"files without a row: {sorted(set(ids) - set(table_ids))}; "
                                              f"rows without a file: {sorted(set(table_ids) - set(ids))}")


def test_pending_files_are_exactly_the_cases_that_do_not_agree():
    pending = {load_case(p).id for p in PENDING_FILES}
    suite = {load_case(p).id for p in SUITE_FILES}
    assert {i for i in suite if VERDICT_OF[i] != "agree"} == set(), "a case in the suite must agree with the model"
    assert {i for i in pending if VERDICT_OF[i] == "agree"} == set(), "an agreeing case belongs in the suite, not pending/"


def test_totals_count_the_rows():
    text = DOC.read_text()
    counts = Counter(kind for _, _, kind in ROWS)

    def total(label: str) -> int:
        m = re.search(rf"^- {re.escape(label)}: (\d+)", text, re.M)
        assert m, f"docs/upstream-tests.md has no total '- {label}: N'"
        return int(m.group(1))

    assert total("assertions looked at") == len(ROWS)
    assert total("agree") == counts["agree"]
    assert total("disagree") == counts["disagree"]
    assert total("cannot judge (model)") == counts["cannot judge"]
    assert total("not expressible") == counts["not expressible"]
    assert total("no rule") == counts["no rule"]
    assert total("case files written") == len(SUITE_FILES) + len(PENDING_FILES)


@pytest.mark.parametrize("path", SUITE_FILES + PENDING_FILES, ids=lambda p: p.name)
def test_model_verdict_matches_the_table(path):
    case, result = _model_result(path)
    if VERDICT_OF[case.id] == "agree":
        assert result.status == PASS, result.failure_text()
    else:
        assert result.status != PASS, (f"{case.id} now PASSes on the model: move it from pending/ into the suite "
                                       "(rename to .yaml) and mark its row 'agree' in docs/upstream-tests.md")


PAYLOAD_PINNED = [p for p in SUITE_FILES if any(isinstance(e.payload, str) for e in load_case(p).expectations)]


@pytest.mark.parametrize("path", PAYLOAD_PINNED, ids=lambda p: p.name)
def test_a_wrong_payload_expectation_is_reported(path):
    case, result = _model_result(path)
    pinned = [e for e in case.expectations if isinstance(e.payload, str)]
    history = result.history
    assert history is not None, result.failure_text()
    wrong = dataclasses.replace(case, expectations=(dataclasses.replace(pinned[0], payload="never-sent"),))
    (outcome,) = check_expectations(wrong, history)
    assert not outcome.passed, f"{case.id}: step {pinned[0].step} would accept any payload"
