"""Each context rule's detector, proved able to FAIL: a case's model history, altered so that it breaks
exactly that rule, must FAIL on that rule (and is not charged to a rule it does not break).

The alterations are the ones a user tried on live histories (issue "Verdicts a user can trust"): an
early delayed delivery, a message dead-lettered too late or never, a delivery to the inactive
Failover consumer, a non-persistent message redelivered, a cumulative ack that acted on one message
only, an expired message still delivered, a compacted reader shown a key-less or superseded message or a tombstone,
a duplicate on Exclusive. Each unaltered history passes (the last test), so the FAIL comes from the
alteration.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from conformance.case_files import discover_cases
from conformance.checker import check
from conformance.runner import run_case
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome

CASES = {c.id: c for c in discover_cases()}


def model_history(case_id: str) -> History:
    case = CASES[case_id]
    client = "python" if case.runs_on("python") else case.clients[0]
    result = run_case(case, ModelTarget(client=None if client == "python" else client), client=client)
    assert result.status == "PASS", result.failure_text()
    return result.history


def _message(history: History, label: str, *, count: int = 0, topic: str | None = None) -> dict:
    """The observed form of ``label`` as some receive of this history showed it, with ``count``."""
    for e in history.events:
        m = (e.outcome.value or {}).get("message") if e.op.op in ("receive", "read_next") else None
        if m and m["payload"] == label and (topic is None or m["topic"] == topic):
            return {**m, "redelivery_count": count}
    raise AssertionError(f"{label} is never received in this history")


def alter(history: History, step: int, *, message: dict | None | str = "keep", t: tuple[float, float] | None = None,
          handle: str | None = None) -> History:
    """``history`` with the receive at ``step`` showing ``message`` (None: nothing), at ``t``, on ``handle``."""
    events = list(history.events)
    i = next(i for i, e in enumerate(events) if e.step == step)
    ev = events[i]
    op = ev.op
    if handle is not None:
        key = "consumer" if "consumer" in op.args else "reader"
        op = replace(op, args={**op.args, key: handle})
    outcome = ev.outcome if message == "keep" else Outcome.ok({"message": message})
    start, end = t if t is not None else (ev.t_start_ms, ev.t_end_ms)
    events[i] = Event(op, outcome, start, end)
    return History(history.header, tuple(events))


def failed(history: History) -> set[tuple[str, str | None]]:
    return {(v.rule_id, v.anomaly) for v in check(history).failures()}


def failed_rules(history: History) -> set[str]:
    return {rule for rule, _ in failed(history)}


def test_an_early_delayed_delivery_fails_the_hold_and_the_strict_window():
    # delay-shared-holds: 'late' (deliver_after 400 ms) came at 400; now at 200.
    h = model_history("delay-shared-holds")
    broken = alter(h, 6, t=(0, 200))
    assert {("PLS-DELAY-001", "early-delivery"), ("PLS-DELAY-004", "early-delivery")} <= failed(broken)


def test_a_message_dead_lettered_too_late_fails_dlq_002():
    # dlq-max-plus-one-deliveries: with max_redeliver_count 2 the application sees m1 with counts 0, 1, 2;
    # a fourth delivery (count 3) instead of the move to the DLQ breaks PLS-DLQ-002.
    h = model_history("dlq-max-plus-one-deliveries")
    broken = alter(h, 10, message=_message(h, "m1", count=3, topic="t"), t=(200, 300))
    assert "PLS-DLQ-002" in failed_rules(broken)
    assert "PLS-ACK-001" not in failed_rules(broken)


def test_a_message_never_dead_lettered_fails_dlq_002():
    # ... and a DLQ watcher that waits 2 s and gets nothing: the copy it was owed never came.
    h = model_history("dlq-max-plus-one-deliveries")
    broken = alter(h, 12, message=None, t=(800, 2800))
    assert ("PLS-DLQ-002", "lost-message") in failed(broken)


def test_a_delivery_to_the_inactive_failover_consumer_fails_failover_003_not_the_withdrawn_001():
    h = model_history("failover-single-active")
    broken = alter(h, 9, message=_message(h, "m2"), t=(2000, 2100))
    rules = failed_rules(broken)
    assert "PLS-FAILOVER-003" in rules and "PLS-FAILOVER-001" not in rules


def test_a_redelivered_non_persistent_message_fails_np_002():
    h = model_history("np-no-redelivery-no-delay")
    broken = alter(h, 6, message=_message(h, "x", count=1), t=(0, 150))
    assert ("PLS-NP-002", "duplicate-delivery") in failed(broken)
    assert "PLS-ACK-001" not in failed_rules(broken)


def test_a_cumulative_ack_that_acked_one_message_only_fails_ack_002():
    # ack-cumulative: the cumulative ack of m2 covers m1 and m2; after a reconnect c2 gets m2 again.
    h = model_history("ack-cumulative")
    broken = alter(h, 14, message=_message(h, "m2"))
    assert ("PLS-ACK-002", "ack-resurrection") in failed(broken)
    assert "PLS-ACK-001" not in failed_rules(broken)


def test_an_expired_message_still_delivered_fails_ttl_001():
    # ttl-expire-pass: m1 (never delivered) expired at the pass; c2 then gets it.
    h = model_history("ttl-expire-pass")
    broken = alter(h, 16, message=_message(h, "m0") | {"payload": "m1", "message_id": [1, 1, -1, -1]})
    assert ("PLS-TTL-001", "ack-resurrection") in failed(broken)


def test_an_expired_message_delivered_before_the_pass_comes_back_fails_ttl_003():
    h = model_history("ttl-expire-pass")
    broken = alter(h, 16, message=_message(h, "m0", count=1))
    assert "PLS-TTL-003" in failed_rules(broken)


def test_a_compacted_reader_shown_a_keyless_message_fails_compact_003():
    h = model_history("compact-latest-per-key")
    keyless = {**_message(h, "a2"), "payload": "nokey", "key": None, "message_id": [1, 3, -1, -1]}
    broken = alter(h, 13, message=keyless)  # the compacted reader reads b1, a2, c1, d1 at steps 12..15
    assert "PLS-COMPACT-003" in failed_rules(broken)


def test_a_compacted_reader_shown_a_superseded_value_fails_compact_001():
    h = model_history("compact-latest-per-key")
    superseded = {**_message(h, "a2"), "payload": "a1", "message_id": [1, 0, -1, -1]}
    broken = alter(h, 12, message=superseded)
    assert "PLS-COMPACT-001" in failed_rules(broken)


def test_a_compacted_reader_shown_a_tombstone_fails_compact_006():
    # compact-tombstone-deletes-key: b1, b'' (key b), c1, c null (key c), d1; compact; the reader reads d1 at step 10
    h = model_history("compact-tombstone-deletes-key")
    tombstone = {**_message(h, "d1"), "payload": "b-empty", "key": "b", "message_id": [1, 1, -1, -1]}
    assert ("PLS-COMPACT-006", "wrong-value") in failed(alter(h, 10, message=tombstone))
    # the superseded value before it is PLS-COMPACT-001's, not the tombstone rule's
    stale = {**_message(h, "d1"), "payload": "b1", "key": "b", "message_id": [1, 0, -1, -1]}
    rules = failed_rules(alter(h, 10, message=stale))
    assert "PLS-COMPACT-001" in rules and "PLS-COMPACT-006" not in rules


def test_a_duplicate_on_exclusive_fails_the_order_rule_not_the_nack_rule():
    # ack-cumulative: c1 received m1, m2, m3 on Exclusive; m1 again at step 8 (no nack, no rewind).
    h = model_history("ack-cumulative")
    broken = alter(h, 8, message=_message(h, "m1"))
    rules = failed_rules(broken)
    assert "PLS-EXCL-002" in rules and "PLS-NACK-003" not in rules


def test_a_moved_key_held_back_despite_allow_out_of_order_fails_keyshared_006():
    # keyshared-out-of-order: both consumers allow out-of-order delivery, so m2 (key-10, now owned by ks-b)
    # is owed to ks-b at once although ks-a still holds m1; an empty 2 s receive breaks the exemption.
    h = model_history("keyshared-out-of-order")
    assert "PLS-KEYSHARED-006" in failed_rules(alter(h, 7, message=None, t=(0, 2000)))


def test_a_moved_key_delivered_while_draining_fails_keyshared_006():
    # keyshared-draining: without allow_out_of_order, ks-b must not get m2 while ks-a holds m1.
    h = model_history("keyshared-draining")
    step = next(e.step for e in h.events if e.op.op == "receive" and e.op.args.get("consumer") == "c2")
    assert ("PLS-KEYSHARED-006", "draining-violation") in failed(alter(h, step, message=_message(h, "m2")))


@pytest.mark.parametrize("case_id", ["delay-shared-holds", "dlq-max-plus-one-deliveries", "failover-single-active",
                                     "np-no-redelivery-no-delay", "ack-cumulative", "ttl-expire-pass",
                                     "compact-latest-per-key", "compact-tombstone-deletes-key", "keyshared-out-of-order",
                                     "keyshared-draining"])
def test_the_unaltered_histories_pass_and_judge_every_rule_their_case_names(case_id):
    report = check(model_history(case_id))
    assert not report.failures()
    assert set(CASES[case_id].rules) <= {r for r, s in report.rule_verdicts().items() if s == "PASS"}
