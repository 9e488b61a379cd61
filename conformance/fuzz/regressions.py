"""The regressions store: a shrunk failure confirmed by re-runs, saved, and replayed by the tests.

Part of the differential fuzzer (``conformance.fuzz``). A shrunk trace is re-run ``reruns``
times: FAIL when every re-run shows the signature, FLAKY otherwise (never retried away). It is
saved to ``<folder>/<id>.trace.jsonl`` with ``<id>.history.jsonl`` and ``<id>.verdicts.json``
(signature, status, re-run counts, program, the checker's report). The folder is the caller's:
the fuzz command's default is ``OUT/regressions``. ``REGRESSIONS_DIR`` is the suite's own store in
the source tree, which ``tests/fuzz/test_regressions.py`` replays; a triaged finding is copied there
by hand, nothing writes there unless told to.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from conformance.fuzz.judge import FAIL, FLAKY, has_signature, run_and_judge
from conformance.fuzz.program import program
from conformance.strategies import trace_id_for
from conformance.trace import History, Trace, TraceHeader, save

REGRESSIONS_DIR = Path(__file__).resolve().parent.parent / "regressions"


@dataclass
class FailureRecord:
    signature: tuple[str, str]
    status: str  # FAIL or FLAKY
    target: str
    trace_id: str
    original_ops: int
    shrunk_ops: int
    reruns_failed: int
    reruns: int
    program: str
    explanation: str
    found_by: str  # "hypothesis" | "fast"
    paths: dict[str, str] = field(default_factory=dict)
    shrunk: Trace | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        out.pop("shrunk")
        out["signature"] = list(self.signature)
        return out


def confirm(target: Any, trace: Trace, sig: tuple[str, str], reruns: int):
    """Re-run ``trace`` ``reruns`` times: (how many showed ``sig``, last failing history, report)."""
    failed, last = 0, None
    for _ in range(reruns):
        history, report = run_and_judge(target, trace)
        if has_signature(report, sig):
            failed += 1
            last = (history, report)
        elif last is None:
            last = (history, report)
    return failed, last


def save_regression(directory: Path, record: FailureRecord, history: History, report: Any) -> dict[str, str]:
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    # a harness error's anomaly names where it came from ("target:StopIteration"): a file name keeps [a-z0-9-] only
    anomaly = re.sub(r"[^a-z0-9]+", "-", (record.signature[1] or "fail").lower()).strip("-")
    rid = f"{record.signature[0].lower()}-{anomaly}-{record.trace_id[3:]}"
    trace = Trace(TraceHeader(trace_id=rid, title=f"fuzz: {record.signature[0]} {record.signature[1]} on {record.target}",
                              rules=(record.signature[0],)), record.shrunk.ops)
    paths = {
        "trace": str(save(trace, directory / f"{rid}.trace.jsonl")),
        "history": str(save(history, directory / f"{rid}.history.jsonl")),
    }
    doc = {"id": rid, "status": record.status, "target": record.target, "signature": list(record.signature),
           "reruns": [record.reruns_failed, record.reruns], "program": record.program.splitlines(),
           "classification": "unclassified", "report": report.to_json()}
    path = directory / f"{rid}.verdicts.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    paths["verdicts"] = str(path)
    return paths


def finish_failure(target: Any, target_name: str, original: Trace, shrunk: Trace, sig: tuple[str, str], *,
                    reruns: int, regressions_dir: Path | None, found_by: str) -> FailureRecord:
    failed, last = confirm(target, shrunk, sig, reruns)
    history, report = last
    status = FAIL if failed == reruns else FLAKY
    first = next((v for v in report.verdicts if v.status == "FAIL" and (v.rule_id, v.anomaly or "") == sig), None)
    record = FailureRecord(sig, status, target_name, trace_id_for(shrunk), len(original.ops), len(shrunk.ops),
                           failed, reruns, program(shrunk, history, report),
                           first.explanation if first else "(did not fail on re-run)", found_by, shrunk=shrunk)
    if regressions_dir is not None:
        record.paths = save_regression(regressions_dir, record, history, report)
    return record

