"""Chapter batching.py: batches, their ids, redelivery and backlog (PLS-BATCH-001..007, PLS-BACKLOG-001)."""

from __future__ import annotations

import pytest

from case_history_helpers import failures, java_history, replace_outcome
from conformance.checker import check
from conformance.trace import Outcome
from reference_model import batching


# ---------------------------------------------------------------- PLS-BATCH-*


def test_size_flush_makes_entries_of_two_two_one():
    items = [batching.Pending(40) for _ in range(5)]
    assert batching.plan_entries(items, batching.BatchConfig(max_bytes=100)) == ((0, 1), (2, 3), (4,))


def test_count_flush_and_exact_fit():
    items = [batching.Pending(1) for _ in range(10)]
    assert batching.plan_entries(items, batching.BatchConfig(max_messages=5)) == ((0, 1, 2, 3, 4), (5, 6, 7, 8, 9))
    # bytes == max: added (<= max), then full, sent alone
    assert batching.plan_entries([batching.Pending(100), batching.Pending(1)], batching.BatchConfig(max_bytes=100)) == ((0,), (1,))


def test_explicit_flush_and_delayed_message_bypass():
    items = [batching.Pending(1), batching.Pending(1, delayed=True), batching.Pending(1), batching.Flush(), batching.Pending(1)]
    entries = batching.plan_entries(items, batching.BatchConfig())
    assert entries == ((1,), (0, 2), (4,))
    ids = batching.assign_ids(entries, ledger=2108, single_messages=frozenset({1}))
    assert [str(ids[i]) for i in (1, 0, 2)] == ["(2108,0,-1,-1)", "(2108,1,-1,0)", "(2108,1,-1,1)"]


def test_delayed_message_and_the_open_batch_per_client():
    # Measured on 4.0.8, 2026-11-27 (case delay-ahead-of-open-batch): batches of 2, async m1 m2 m3,
    # then a delayed m4. C++ entries m1+m2, m4, m3 (m3 at the flush); Java m1+m2, m3, m4.
    items = [batching.Pending(2), batching.Pending(2), batching.Pending(2), batching.Pending(2, delayed=True)]
    cpp = batching.BatchConfig(max_messages=2)
    java = batching.BatchConfig(max_messages=2, key_order="last", delayed_sends_open_batch=True)
    assert batching.plan_entries(items, cpp) == ((0, 1), (3,), (2,))
    assert batching.plan_entries(items, java) == ((0, 1), (2,), (3,))
    # what is sent by the time m4 goes, and what the client still holds
    assert batching.plan_entries(items, cpp, final_flush=False) == ((0, 1), (3,))
    assert batching.open_batch(items, cpp) == (2,)
    assert batching.open_batch(items, java) == ()


def test_key_based_batching_groups_by_key_in_first_sequence_order():
    keys = ["a", "b", "a", "", "b", "a"]
    items = [batching.Pending(2, partition_key=k or None) for k in keys]
    entries = batching.plan_entries(items, batching.BatchConfig(key_based=True))
    assert entries == ((0, 2, 5), (1, 4), (3,))
    ids = batching.assign_ids(entries, ledger=2054)
    assert [str(ids[i]) for i in range(6)] == [
        "(2054,0,-1,0)", "(2054,1,-1,0)", "(2054,0,-1,1)", "(2054,2,-1,0)", "(2054,1,-1,1)", "(2054,0,-1,2)"]
    assert batching.Pending(1, partition_key="p", ordering_key="o").batch_key == "o"


def test_redelivered_indexes_with_and_without_batch_index_ack():
    assert batching.nack_redelivers(4, 1, {0, 2}, batch_index_ack=False) == (0, 1, 2, 3)
    assert batching.nack_redelivers(4, 1, {0, 2}, batch_index_ack=True) == (1, 3)
    assert batching.redelivered_indexes(4, {0, 3}, batch_index_ack=True) == (1, 2)
    assert batching.redelivered_indexes(4, {0, 1, 2, 3}, batch_index_ack=False) == ()
    with pytest.raises(ValueError):
        batching.nack_redelivers(4, 4, set(), batch_index_ack=False)


def test_backlog_counts_entries():
    assert batching.backlog_entries([5, 5], [set(), set()]) == 2
    assert batching.backlog_entries([4], [{0, 2}]) == 1
    assert batching.backlog_entries([4, 1], [{0, 1, 2, 3}, set()]) == 1
    assert batching.backlog_entries([1, 1, 1], [{0}, set(), {0}]) == 1  # unbatched: one entry per message


# ---------------------------------------------------------------- PLS-BATCH-003 (Java order)


def test_java_key_based_batches_go_out_by_their_last_message():
    history = java_history("batch-key-based-java")
    report = check(history)
    assert report.ok, report.summary()
    flush = next(e for e in history.events if e.op.op == "flush")
    ids = flush.outcome.value["message_ids"]
    assert [ids[k][1] for k in ("k3", "k1", "k4", "k0", "k2", "k5")] == [0, 1, 1, 2, 2, 2]


def test_cpp_batch_order_from_a_java_producer_fails():
    history = java_history("batch-key-based-java")
    flush = next(e for e in history.events if e.op.op == "flush")
    cpp_order = {"k0": [1, 0, -1, 0], "k2": [1, 0, -1, 1], "k5": [1, 0, -1, 2], "k1": [1, 1, -1, 0], "k4": [1, 1, -1, 1],
                 "k3": [1, 2, -1, 0]}
    broken = replace_outcome(history, flush.step, Outcome.ok({"message_ids": cpp_order, "id_texts": {}}))
    assert ("PLS-BATCH-003", "wrong-value") in failures(broken)


# ---------------------------------------------------------------- PLS-BATCH-009: when a batch leaves

def _spans(*starts: float, length: float = 0.5) -> list:
    from reference_model.timing import Span
    return [Span(s, s + length) for s in starts]


def test_a_timer_cut_needs_an_instant_between_two_adds():
    """Java and Go (periodic timers, phase unknown): any split into runs is allowed when the sends took time;
    two messages added at the same instant cannot be split by the timer."""
    items = [batching.Pending(2) for _ in range(4)]
    java = batching.BatchTimer.for_client("java", 1)
    assert batching.match_split(items, _spans(0, 1, 2, 3), [(0,), (1, 2), (3,)], batching.BatchConfig(), java).allowed
    assert batching.match_split(items, _spans(0, 1, 2, 3), [(0, 1, 2, 3)], batching.BatchConfig(), java).cuts == ()
    same = batching.match_split(items, _spans(0, 0, 0, 0, length=0), [(0,), (1, 2, 3)], batching.BatchConfig(), java)
    assert [r for r, _ in same.violations] == ["PLS-BATCH-009"]


def test_a_cpp_batch_leaves_on_its_timer_not_sooner():
    """C++: the timer fires the delay after the batch's first message was added: a batch cut 1.5 ms after it with a
    10 ms delay is not the timer's (nor the full container's)."""
    items = [batching.Pending(2) for _ in range(4)]
    cpp = batching.BatchTimer.for_client("cpp", 10)
    early = batching.match_split(items, _spans(0, 1, 2, 3), [(0,), (1, 2, 3)], batching.BatchConfig(), cpp)
    assert not early.allowed and "could not fire" in early.violations[0][1]
    late = batching.match_split(items, _spans(0, 1, 12, 13), [(0, 1), (2, 3)], batching.BatchConfig(), cpp)
    assert late.allowed and late.cuts == (2,)


def test_a_batch_is_a_run_in_send_order_within_the_container():
    items = [batching.Pending(2) for _ in range(4)]
    java = batching.BatchTimer.for_client("java", 1)
    sent = _spans(0, 1, 2, 3)
    gap = batching.match_split(items, sent, [(0, 2), (1, 3)], batching.BatchConfig(), java)
    assert {r for r, _ in gap.violations} == {"PLS-BATCH-001", "PLS-BATCH-009"}
    swap = batching.match_split(items, sent, [(1, 0), (2, 3)], batching.BatchConfig(), java)
    assert "not a run" in swap.violations[0][1]
    big = batching.match_split(items, sent, [(0, 1, 2, 3)], batching.BatchConfig(max_messages=3), java)
    assert "more than the container takes" in big.violations[0][1]
    # full at 3 messages: the cut after the third is the container's, not the timer's
    full = batching.match_split(items, _spans(0, 0, 0, 0, length=0), [(0, 1, 2), (3,)], batching.BatchConfig(max_messages=3), java)
    assert full.allowed and full.cuts == ()
    lost = batching.match_split(items, sent, [(0, 1), (2,)], batching.BatchConfig(), java)
    assert "in no entry" in lost.violations[0][1]


def test_a_sync_send_empties_the_container():
    items = [batching.Pending(2) for _ in range(4)]
    java = batching.BatchTimer.for_client("java", 1)
    sent = _spans(0, 1, 2, 3)
    assert batching.match_split(items, sent, [(0, 1), (2, 3)], batching.BatchConfig(), java, certain_cuts=[2]).cuts == ()
    across = batching.match_split(items, sent, [(0,), (1, 2, 3)], batching.BatchConfig(), java, certain_cuts=[2])
    assert not across.allowed and "sync send" in across.violations[0][1]


def test_key_based_runs_are_written_per_key():
    items = [batching.Pending(2, ordering_key=k) for k in (None, "o2", None)]
    config = batching.BatchConfig(key_based=True, key_order="last")
    java = batching.BatchTimer.for_client("java", 1)
    assert batching.match_split(items, _spans(0, 0, 0, length=0), [(1,), (0, 2)], config, java).allowed
    assert not batching.match_split(items, _spans(0, 0, 0, length=0), [(0,), (1,), (2,)], config, java).allowed


def test_leave_window_per_client():
    items = [batching.Pending(2) for _ in range(3)]
    sent = _spans(0, 1, 2)
    cpp = batching.leave_window(items, sent, 2, batching.BatchConfig(), batching.BatchTimer.for_client("cpp", 10))
    assert (cpp.start, cpp.end) == (10, 12.5)  # the timer, from the run's first message; by 2.5 + 10 at the latest
    full = batching.leave_window(items, sent, 2, batching.BatchConfig(max_messages=3), batching.BatchTimer.for_client("cpp", 10))
    assert full.start == 2  # full at its own add
    java = batching.leave_window(items, sent, 1, batching.BatchConfig(), batching.BatchTimer.for_client("java", 1))
    assert (java.start, java.end) == (1, 3.5)  # any moment after its add; two periods at the latest
    flushed = batching.leave_window(items, sent, 1, batching.BatchConfig(), batching.BatchTimer.for_client("go", 10), settled_by=4)
    assert (flushed.start, flushed.end) == (1, 4)


def test_entries_from_ids():
    ids = {"a": [5, 3, -1, 0], "b": [5, 3, -1, 1], "c": [5, 4, -1, -1]}
    assert batching.entries_from_ids(["a", "b", "c"], ids) == [(0, 1), (2,)]
    assert batching.entries_from_ids(["a", "x"], ids) is None


def test_java_sends_a_possible_duplicate_in_a_batch_of_its_own():
    """Step 1b (Java): m2 may repeat a sequence id, so the open batch [m0, m1] goes first, m2 travels alone, and m3
    starts a new batch with m4. The C++ container (no such check) keeps all five in one batch."""
    items = [batching.Pending(1), batching.Pending(1), batching.Pending(1, repeats=True), batching.Pending(1),
             batching.Pending(1)]
    java = batching.BatchConfig(repeats_send_open_batch=True)
    assert batching.plan_entries(items, java) == ((0, 1), (2,), (3, 4))
    assert batching.plan_entries(items, batching.BatchConfig()) == ((0, 1, 2, 3, 4),)


def test_java_possible_duplicate_live_history_and_its_lie():
    """Live 4.0.8, Java client (4 Dec 2026): async m1 and sync m2 share an entry; async m3 with sequence id 15,
    then a sync m4 whose generated id (2) is below it: two entries of one message each, both plain (PLS-BATCH-008).
    The lie puts m4 into m3's batch, as the C++ and Go clients do: it must FAIL."""
    from pathlib import Path

    from conformance.trace import load

    h = load(Path(__file__).resolve().parents[1] / "conformance" / "live_histories"
             / "live-4.0.8-java-repeated-sequence-own-batch.jsonl")
    assert not [v for v in check(h).verdicts if v.status == "FAIL"]
    flushed = h.events[5].outcome.value["message_ids"]
    ledger, entry = flushed["m3"][0], flushed["m3"][1]
    lie = replace_outcome(h, 5, Outcome.ok({"message_id": [ledger, entry, -1, 1], "sequence_id": 15,
                                            "id_text": f"{ledger}:{entry}:-1:1"}))
    lie = replace_outcome(lie, 6, Outcome.ok({"message_ids": {"m1": flushed["m1"], "m3": [ledger, entry, -1, 0]}}))
    assert "FAIL" in [v.status for v in check(lie).verdicts if v.rule_id.startswith("PLS-BATCH")]


def test_a_go_full_batch_waits_for_the_next_message():
    """Step 4: a C++ or Java batch that is full leaves at once, so with one message per batch m0 is written before
    the delayed m1 (sent alone, step 1); a Go full batch waits for the next message, its timer or a flush, so the
    delayed m1 is written first and m0 with the final flush."""
    items = [batching.Pending(1), batching.Pending(1, delayed=True)]
    assert batching.plan_entries(items, batching.BatchConfig(max_messages=1)) == ((0,), (1,))
    assert batching.plan_entries(items, batching.BatchConfig(max_messages=1, full_batch_waits=True)) == ((1,), (0,))
    # the next message that does not fit sends it (step 2), as for the other clients
    three = [batching.Pending(1), batching.Pending(1), batching.Pending(1)]
    assert batching.plan_entries(three, batching.BatchConfig(max_messages=1, full_batch_waits=True)) == ((0,), (1,), (2,))
