"""Judging a history recorded live for an upstream bug (issue 14, item 4): shared by the
test_upstream_bugs_<helper>.py files.

An affected release's history must FAIL exactly the rules the bug breaks, each excused by the known
deviation registered for that case and release; a fixed release's history must FAIL nothing and
match no deviation.
"""

from __future__ import annotations

from pathlib import Path

from conformance.checker import check
from conformance.deviations import known_deviation
from conformance.trace import load

LIVE_HISTORIES = Path(__file__).parent / "live_histories"


def assert_pinned_verdicts(name: str, must_fail: set[str], deviation: str | None, why: str) -> None:
    """Judge ``live_histories/<name>.jsonl``: it FAILs ``must_fail`` exactly, excused by ``deviation``."""
    history = load(LIVE_HISTORIES / f"{name}.jsonl")
    report = check(history)
    assert {v.rule_id for v in report.failures()} == must_fail, f"{why}\n{report.summary()}"
    found = known_deviation(history.header.trace_id, history.header.broker_version)
    assert (found.id if found else None) == deviation, why
    if found is not None:
        assert all(found.excuses(history.header.trace_id, v.rule_id, v.anomaly, v.step) for v in report.failures()), why
