"""How many copies ``redeliver_unacked`` may bring: one more per call that covered the message.

Two live recordings (broker 4.0.8), each a fuzz finding that the checker used to FAIL as
PLS-SHARED-001 duplicate-delivery (``docs/fuzzing.md``, the Java/mixed campaign's FLAKY rows and
the time-to-detection by-product):

- ``live-4.0.8-java-redeliver-in-flight``: a Java Shared consumer, five async sends, then the call.
  The Java client clears its queue (``ConsumerImpl#redeliverUnacknowledgedMessages``) but bumps its
  epoch on Exclusive and Failover only (PIP-84), so the copies on the wire land in the cleared
  queue: m2..m5 came with count 0, then every message with count 1.
- ``live-4.0.8-redeliver-twice-three-copies``: a C++ (Python client) Shared consumer calls it twice;
  m1 came three times, counts 0, 1 and 2 (its prefetched copy, then one broker copy per call).

Each must PASS as recorded, and FAIL on PLS-SHARED-001 with one copy more than the calls allow:
the reading is as wide as the broker and no wider.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conformance.checker import check
from conformance.trace import load

HERE = Path(__file__).parent / "live_histories"


def _lines(name: str) -> list[dict]:
    return [json.loads(line) for line in (HERE / f"{name}.jsonl").read_text().splitlines() if line.strip()]


def _received(row: dict) -> tuple[str, int] | None:
    if row.get("op") != "receive":
        return None
    message = (row.get("outcome") or {}).get("value", {}).get("message")
    return (message["payload"], message["redelivery_count"]) if message else None


def _with_one_more_copy(rows: list[dict], payload: str, count: int, tmp_path: Path) -> Path:
    """The recording with a receive of ``payload`` (redelivery count ``count``) appended right
    after its last received message, as one extra receive by the same consumer."""
    copy = next(r for r in rows if _received(r) == (payload, count))
    last = max((r for r in rows if r.get("kind") == "op" and _received(r)), key=lambda r: r["step"])
    extra = json.loads(json.dumps(copy))
    extra["t_start_ms"] = last["t_end_ms"] + 0.1
    extra["t_end_ms"] = last["t_end_ms"] + 0.5
    kept = [r for r in rows if r.get("kind") != "op" or r["step"] <= last["step"]]
    extra["step"] = last["step"] + 1
    path = tmp_path / "mutated.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in kept + [extra]))
    return path


CASES = {
    # history -> (payload, count) of the copy the mutant repeats, and the copies recorded of it
    "live-4.0.8-java-redeliver-in-flight": (("m2", 1), [("m2", 0), ("m2", 1)]),
    "live-4.0.8-redeliver-twice-three-copies": (("m1", 2), [("m1", 0), ("m1", 1), ("m1", 2)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_recorded_copies_pass(name):
    (payload, _), copies = CASES[name]
    rows = _lines(name)
    assert [c for c in map(_received, rows) if c and c[0] == payload] == copies, "the recording shows the copies"
    report = check(load(HERE / f"{name}.jsonl"))
    assert not report.failures(), report.summary()
    shared = [v for v in report.verdicts if v.rule_id == "PLS-SHARED-001"]
    assert shared and all(v.status == "PASS" for v in shared), report.summary()


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_copy_more_than_the_calls_allow_fails(name, tmp_path):
    (payload, count), _ = CASES[name]
    mutated = _with_one_more_copy(_lines(name), payload, count, tmp_path)
    report = check(load(mutated))
    failed = {(v.rule_id, v.anomaly) for v in report.failures()}
    assert ("PLS-SHARED-001", "duplicate-delivery") in failed, report.summary()
