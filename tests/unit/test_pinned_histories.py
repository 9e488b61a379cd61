"""Every trace and history pinned in the tree carries ``op_count`` in its header
(conformance/trace.py OP_COUNT), so one cut at a line end is refused, never judged PASS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.trace import OP_COUNT, TraceFormatError, load, parse

ROOT = Path(__file__).resolve().parents[2]
PINNED = sorted(p for d in ("tests", "conformance") for pattern in ("*.history.jsonl", "*.trace.jsonl")
                for p in (ROOT / d).rglob(pattern))


def test_there_are_pinned_histories():
    assert len(PINNED) > 100


def test_every_pinned_trace_and_history_has_op_count_and_it_is_right():
    missing, wrong = [], []
    for path in PINNED:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        header = json.loads(lines[0])
        if OP_COUNT not in header:
            missing.append(str(path.relative_to(ROOT)))
        elif header[OP_COUNT] != len(lines) - 1:
            wrong.append(str(path.relative_to(ROOT)))
    assert missing == [] and wrong == []


@pytest.mark.parametrize("path", PINNED[:: max(1, len(PINNED) // 12)], ids=lambda p: p.name)
def test_a_pinned_file_cut_at_a_line_end_is_refused(path):
    load(path)  # whole, it loads
    text = path.read_text(encoding="utf-8")
    cut = "\n".join(text.rstrip("\n").split("\n")[:-1]) + "\n"
    with pytest.raises(TraceFormatError, match="truncated or damaged"):
        parse(cut, source=str(path))
