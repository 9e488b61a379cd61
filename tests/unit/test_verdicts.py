"""conformance.verdicts: one vocabulary of verdict statuses and one order, used everywhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from conformance import verdict_exit, verdicts
from conformance.verdicts import (ERROR, FAIL, INDETERMINATE, NOT_APPLICABLE, NOT_EXERCISED, PASS, UNJUDGED,
                                  is_judged, severity, worst, worst_judged)

ROOT = Path(__file__).resolve().parents[2]


def test_folding_keeps_the_most_severe_verdict():
    # the documented order: judged beats "not judged", FAIL beats INDETERMINATE beats PASS
    assert worst([PASS, FAIL, INDETERMINATE]) == FAIL
    assert worst([PASS, INDETERMINATE]) == INDETERMINATE
    assert worst([NOT_EXERCISED, PASS, NOT_APPLICABLE]) == PASS
    assert worst([NOT_APPLICABLE, NOT_EXERCISED]) == NOT_EXERCISED
    assert worst([UNJUDGED, NOT_EXERCISED]) == UNJUDGED
    assert worst([FAIL, ERROR]) == ERROR
    assert worst([], default=PASS) == PASS
    assert worst([]) is None


def test_worst_judged_ignores_what_no_detector_said():
    assert worst_judged([NOT_EXERCISED, PASS, NOT_APPLICABLE]) == PASS
    assert worst_judged([NOT_EXERCISED, NOT_APPLICABLE]) is None
    assert worst_judged([NOT_EXERCISED], default=PASS) == PASS
    assert worst_judged(iter([INDETERMINATE, PASS])) == INDETERMINATE
    assert [s for s in verdicts.ORDER if is_judged(s)] == [PASS, INDETERMINATE, FAIL]


def test_an_unknown_status_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown verdict status 'OK'"):
        severity("OK")
    with pytest.raises(ValueError, match="unknown verdict status 'pass'"):
        worst([PASS, "pass"])


def test_every_status_has_exactly_one_exit_code_class():
    classes = (verdict_exit.FINE, verdict_exit.FAILED, verdict_exit.INCONCLUSIVE, verdict_exit.BROKEN)
    assert frozenset().union(*classes) == verdicts.STATUSES
    assert sum(len(c) for c in classes) == len(verdicts.STATUSES)


def test_no_module_keeps_its_own_severity_table():
    """A dict from a verdict status to a rank anywhere but conformance/verdicts.py is a second
    order that can drift from ``verdicts.ORDER``."""
    table = re.compile(r"""["'](?:PASS|FAIL|INDETERMINATE|NOT_APPLICABLE|NOT_EXERCISED)["']\s*:\s*-?\d""")
    offenders = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in ("tests", "build") or rel.parts[0].startswith(".") or rel == Path("conformance/verdicts.py"):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if table.search(line):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == []
