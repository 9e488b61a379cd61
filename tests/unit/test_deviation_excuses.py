"""A known deviation excuses exactly the rule, anomaly and step it names; any other failure in its case is a FAIL."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.case_files import discover_cases
from conformance.deviations import Deviation, load_deviations
from conformance.runner import FAIL, run_case, unexcused_failures
from conformance.trace import Event, History, Outcome, load

ROOT = Path(__file__).resolve().parents[2]
KD1 = ROOT / "conformance/evidence/KD-001-backlog-after-seek-4.0.8.history.jsonl"
CASE_ID = "backlog-after-seek-individual-acks"


class _Replay:
    name = "replayed"

    def __init__(self, history: History):
        self.history = history

    def run(self, trace):
        return self.history


def _case():
    return next(c for c in discover_cases() if c.id == CASE_ID)


def _kd1() -> Deviation:
    return next(d for d in load_deviations() if d.id == "KD-001")


def test_the_deviation_names_rule_anomaly_and_step():
    dev = _kd1()
    assert (dev.rule, dev.anomaly, dev.step) == ("PLS-BACKLOG-001", "wrong-backlog", 23)


def test_its_own_failure_is_excused():
    result = run_case(_case(), _Replay(load(KD1)), client="python")
    assert result.status == FAIL
    assert unexcused_failures(result, _kd1()) == []
    assert unexcused_failures(result, None)  # without the deviation it is a plain FAIL


def test_another_failure_in_the_same_case_is_not_excused():
    history = load(KD1)
    events = list(history.events)
    # the first stats (step 20, backlog 3 on every release) now says 2: the same rule and anomaly,
    # at a step the deviation does not name
    i = next(i for i, e in enumerate(events) if e.step == 20)
    ev = events[i]
    assert ev.op.op == "stats"
    events[i] = Event(ev.op, Outcome.ok({**(ev.outcome.value or {}), "backlog": ev.outcome.value["backlog"] - 1}), ev.t_start_ms, ev.t_end_ms)
    result = run_case(_case(), _Replay(History(history.header, tuple(events))), client="python")
    left = unexcused_failures(result, _kd1())
    assert any("step 20" in line and "PLS-BACKLOG-001" in line for line in left), left


def test_a_deviation_without_an_anomaly_is_refused(tmp_path):
    bad = tmp_path / "deviations.yaml"
    bad.write_text(f"- {{id: KD-X, case: c, rule: PLS-BACKLOG-001, brokers: ['4.0'], reason: r, evidence: {KD1.relative_to(ROOT)}}}\n")
    with pytest.raises(ValueError, match="anomaly"):
        load_deviations(bad)


# ---------------------------------------------------------------- KD-002: KD-001's bug on broker 3.3.6

KD2 = ROOT / "conformance/evidence/KD-002-backlog-after-seek-3.3.6.history.jsonl"


def test_the_backlog_bug_shows_on_3_3_6_too():
    dev = next(d for d in load_deviations() if d.id == "KD-002")
    assert (dev.case, dev.rule, dev.anomaly, dev.step) == (CASE_ID, "PLS-BACKLOG-001", "wrong-backlog", 23)
    history = load(KD2)
    assert history.header.broker_version == "3.3.6"
    result = run_case(_case(), _Replay(history), client="python")
    assert result.status == FAIL
    assert unexcused_failures(result, dev) == []
    stats = next(e for e in history.events if e.step == 23)
    assert stats.outcome.value["backlog"] == 1  # 4 entries unacknowledged, as on 4.0.8


# ---------------------------------------------------------------- KD-003: 4.0.x keeps non-batched tombstones

KD3 = ROOT / "conformance/evidence/KD-003-compact-tombstone-4.0.8.history.jsonl"
TOMBSTONE_CASE = "compact-tombstone-deletes-key"


def _tombstone_case():
    return next(c for c in discover_cases() if c.id == TOMBSTONE_CASE)


def test_broker_4_0_8_reads_the_tombstones_and_only_the_tombstone_rule_fails():
    dev = next(d for d in load_deviations() if d.id == "KD-003")
    assert (dev.case, dev.rule, dev.anomaly, dev.step) == (TOMBSTONE_CASE, "PLS-COMPACT-006", "wrong-value", None)
    history = load(KD3)
    assert history.header.broker_version == "4.0.8"
    read = [(e.outcome.value or {}).get("message") for e in history.events if e.op.op == "read_next"]
    assert [m and m["payload"] for m in read] == ["b-empty", "c-null"]  # the docs: d1, then nothing
    result = run_case(_tombstone_case(), _Replay(history), client="python")
    assert result.status == FAIL
    assert {(v.rule_id, v.anomaly, v.step) for v in result.verdicts if v.status == FAIL} == {
        ("PLS-COMPACT-006", "wrong-value", 10), ("PLS-COMPACT-006", "wrong-value", 11)}
    assert unexcused_failures(result, dev) == []


def test_broker_3_3_6_deletes_the_tombstoned_keys():
    history = load(ROOT / "tests/conformance/live_histories/live-3.3.6-compact-tombstone-deletes-key.jsonl")
    assert history.header.broker_version == "3.3.6"
    result = run_case(_tombstone_case(), _Replay(history), client="python")
    assert result.status == "PASS", result.failure_text()


def test_several_deviations_excuse_a_case_together_and_only_together():
    """2.11.0 breaks two rules in the seek case (KD-004 backlog, KD-007 a redelivered acked message):
    both entries together excuse it, either alone leaves the other's failure (and its shifted
    receives are excused only with it)."""
    from conformance.deviations import known_deviations

    history = load(ROOT / "conformance/evidence/seek/KD-007-seek-acked-redelivered-2.11.0.history.jsonl")
    result = run_case(_case(), _Replay(history), client="python")
    assert result.status == FAIL
    both = known_deviations(CASE_ID, "2.11.0")
    assert [d.id for d in both] == ["KD-004", "KD-007"]
    assert unexcused_failures(result, both) == []
    only_backlog = unexcused_failures(result, [both[0]])
    assert any("PLS-ACK-001" in line for line in only_backlog) and any("[expect] step 25" in line for line in only_backlog)
    only_ack = unexcused_failures(result, [both[1]])
    assert any("PLS-BACKLOG-001" in line for line in only_ack)
    # the releases the deviations name do not leak to the neighbours
    assert [d.id for d in known_deviations(CASE_ID, "2.10.5")] == ["KD-004"]
    assert [d.id for d in known_deviations(CASE_ID, "4.2.4")] == []


@pytest.mark.parametrize("dev", load_deviations(), ids=lambda d: d.id)
def test_every_deviations_evidence_fails_its_rule(dev):
    """The recorded evidence of each known deviation still FAILs the rule the deviation excuses: a checker change
    that stopped seeing it would make the excuse (and the XFAIL it gives) say nothing."""
    from conformance.checker import check
    from conformance.trace import load

    history = load(ROOT / dev.evidence)
    failed = {v.rule_id for v in check(history).failures()}
    assert dev.rule in failed, f"{dev.id}: {dev.evidence} no longer FAILs {dev.rule} (it FAILs {sorted(failed)})"
