"""The checker: histories that must fail, histories that must pass (rule ids in every test)."""

from __future__ import annotations

import itertools

import pytest

from reference_model.anomalies import ANOMALIES
from conformance.checker import CheckReport, Tolerances, Verdict, check
from conformance.targets.model import ModelTarget
from conformance.trace import make_trace
from model_history_helpers import H, msg


def failures(report: CheckReport) -> list[tuple[str, str | None]]:
    return [(v.rule_id, v.anomaly) for v in report.failures()]


def three_messages(h: H) -> H:
    return h.producer().send("m0", 0).send("m1", 1).send("m2", 2)


# ---------------------------------------------------------------------------- must fail


def test_shared_duplicate_without_cause_fails():
    # PLS-SHARED-001: m0 held by c1 (received, not acked) reaches c2 with no redelivery cause.
    h = three_messages(H().sub("c1", "Shared").sub("c2", "Shared"))
    h.recv("c1", "m0", 0).recv("c2", "m0", 0)
    report = check(h.history())
    assert ("PLS-SHARED-001", "duplicate-delivery") in failures(report)
    assert report.rule_verdicts()["PLS-SHARED-001"] == "FAIL"


def test_acked_message_redelivered_fails_exclusive():
    # PLS-ACK-001 on Exclusive: acked m0 comes back.
    h = three_messages(H().sub("c1"))
    h.recv("c1", "m0", 0).ok("ack", {"consumer": "c1", "message": "m0"}).recv("c1", "m0", 0)
    assert ("PLS-ACK-001", "ack-resurrection") in failures(check(h.history()))


def test_acked_message_redelivered_fails_shared_after_close():
    # PLS-ACK-001 on Shared: c1 acks m0 then closes; c2 must never see m0.
    h = three_messages(H().sub("c1", "Shared").sub("c2", "Shared"))
    h.recv("c1", "m0", 0).ok("ack", {"consumer": "c1", "message": "m0"}).ok("close", {"handle": "c1"})
    h.recv("c2", "m0", 0)
    assert ("PLS-ACK-001", "ack-resurrection") in failures(check(h.history()))


def test_nack_redelivery_earlier_than_delay_fails():
    # PLS-NACK-001: nacked at 412 ms with d=300 ms, it may return in [712, 812] ms; it came at 650.
    h = H().sub("c1", "Shared", nack_delay_ms=300, t=0).sub("c2", "Shared", t=0)
    h.producer(t=0).send("m3", 0, t=0)
    h.recv("c1", "m3", 0, t=100)
    h.ok("nack", {"consumer": "c1", "message": "m3"}, t=412)
    h.recv("c2", "m3", 0, count=1, t=(600, 650))
    report = check(h.history())
    assert ("PLS-NACK-001", "early-redelivery") in failures(report)
    fail = report.failures()[0]
    assert "[712-0, 812+0] ms" in fail.explanation and "650" in fail.explanation


def test_nack_redelivery_inside_window_passes():
    h = H().sub("c1", "Shared", nack_delay_ms=300, t=0).sub("c2", "Shared", t=0)
    h.producer(t=0).send("m3", 0, t=0)
    h.recv("c1", "m3", 0, t=100)
    h.ok("nack", {"consumer": "c1", "message": "m3"}, t=412)
    h.recv("c2", "m3", 0, count=1, t=(700, 750))
    report = check(h.history())
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-NACK-001"] == "PASS"


def test_second_exclusive_consumer_accepted_fails():
    # PLS-EXCL-001: the model predicts ConsumerBusy; the broker accepted.
    h = H().sub("c1").sub("c2")
    report = check(h.history())
    assert ("PLS-EXCL-001", "missing-rejection") in failures(report)


def test_second_exclusive_consumer_refused_passes():
    h = H().sub("c1").rejected("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Exclusive"}, "ConsumerBusy")
    report = check(h.history())
    assert report.ok and report.rule_verdicts()["PLS-EXCL-001"] == "PASS"


def test_wrong_error_fails():
    h = H().sub("c1").rejected("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Shared"}, "OtherError")
    assert ("PLS-SUBTYPE-001", "wrong-error") in failures(check(h.history()))


def test_unexpected_rejection_fails():
    h = H().rejected("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared"}, "ConsumerBusy")
    assert ("PLS-SUB-001", "unexpected-rejection") in failures(check(h.history()))


def test_short_ack_timeout_accepted_fails():
    # PLS-ACKTIMEOUT-001: C++ refuses 0 < T < 10 s (Python ValueError -> InvalidArgument).
    h = H().sub("c1", ack_timeout_ms=5000)
    assert ("PLS-ACKTIMEOUT-001", "missing-rejection") in failures(check(h.history()))
    h2 = H().rejected("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "ack_timeout_ms": 5000}, "InvalidArgument")
    assert check(h2.history()).ok


def test_cumulative_ack_on_shared_accepted_fails():
    h = three_messages(H().sub("c1", "Shared")).recv("c1", "m0", 0)
    h.ok("ack_cumulative", {"consumer": "c1", "message": "m0"})
    assert ("PLS-ACK-003", "missing-rejection") in failures(check(h.history()))


def test_exclusive_out_of_order_fails():
    # PLS-EXCL-002: m1 before m0.
    h = three_messages(H().sub("c1")).recv("c1", "m1", 1)
    assert ("PLS-EXCL-002", "order-violation") in failures(check(h.history()))


def test_inactive_failover_consumer_receiving_fails():
    # PLS-FAILOVER-003: either consumer may be active (the ring depends on the namespace), but once
    # c2 is seen active and nobody joined or left, c1 may receive nothing.
    h = three_messages(H().sub("c1", "Failover").sub("c2", "Failover")).recv("c2", "m0", 0)
    assert check(h.history()).ok
    h.recv("c1", "m1", 1)
    assert ("PLS-FAILOVER-003", "wrong-consumer") in failures(check(h.history()))


def test_failover_either_consumer_may_be_active():
    for active, idle in (("c1", "c2"), ("c2", "c1")):
        h = three_messages(H().sub("c1", "Failover").sub("c2", "Failover"))
        h.recv(active, "m0", 0).recv(idle, None).recv(active, "m1", 1).recv(active, "m2", 2)
        report = check(h.history())
        assert report.ok, report.summary()
        assert report.rule_verdicts()["PLS-FAILOVER-003"] == "PASS"


def test_failover_takeover_passes():
    # PLS-FAILOVER-002: c1 closes with m1 unacked; c2 gets m1, m2.
    h = three_messages(H().sub("c1", "Failover").sub("c2", "Failover"))
    h.recv("c1", "m0", 0).ok("ack", {"consumer": "c1", "message": "m0"}).recv("c1", "m1", 1)
    h.recv("c2", None).ok("close", {"handle": "c1"}).recv("c2", "m1", 1).recv("c2", "m2", 2)
    report = check(h.history())
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-FAILOVER-002"] == "PASS"


def test_exclusive_consumer_getting_nothing_when_message_waits_fails():
    # A sole Exclusive consumer with m0 published must receive it.
    h = three_messages(H().sub("c1")).recv("c1", None, t=(0, 1000))
    assert ("PLS-EXCL-002", "lost-message") in failures(check(h.history()))


def test_late_rewind_fails():
    # PLS-NACK-003 rewinds; its timing is the nack's: PLS-NACK-001, nack at 0 with d=200 -> the rewind
    # is due by 266 ms; nothing came until 1300. Lateness breaks the rule that states the window.
    h = H().sub("c1", nack_delay_ms=200, t=0).producer(t=0).send("m0", 0, t=0)
    h.recv("c1", "m0", 0, t=0).ok("nack", {"consumer": "c1", "message": "m0"}, t=0)
    h.recv("c1", None, t=(300, 1300))
    assert ("PLS-NACK-001", "late-redelivery") in failures(check(h.history()))


def test_wrong_redelivery_count_fails():
    # PLS-ACK-005: Shared nack redelivery carries count 1, not 0.
    h = H().sub("c1", "Shared", nack_delay_ms=100, t=0).producer(t=0).send("m0", 0, t=0)
    h.recv("c1", "m0", 0, t=0).ok("nack", {"consumer": "c1", "message": "m0"}, t=0)
    h.recv("c1", "m0", 0, count=0, t=(0, 120))
    assert ("PLS-ACK-005", "wrong-redelivery-count") in failures(check(h.history()))


def test_wrong_backlog_fails_and_right_one_passes():
    h = three_messages(H().sub("c1")).recv("c1", "m0", 0).ok("ack", {"consumer": "c1", "message": "m0"})
    bad = H()
    bad.events = list(h.events)
    bad.ok("stats", {"topic": "t", "subscription": "s"}, {"backlog": 3})
    assert ("PLS-BACKLOG-001", "wrong-backlog") in failures(check(bad.history()))
    h.ok("stats", {"topic": "t", "subscription": "s"}, {"backlog": 2})
    assert check(h.history()).ok


def test_backlog_allows_unflushed_acks_on_live_target():
    # The C++ client flushes acks every 100 ms: right after an ack the broker may still count it.
    h = H(target="live", broker_version="4.0.8", client="cpp")
    three_messages(h.sub("c1")).recv("c1", "m0", 0, t=10).ok("ack", {"consumer": "c1", "message": "m0"}, t=11)
    h.ok("stats", {"topic": "t", "subscription": "s"}, {"backlog": 3}, t=(20, 30))
    report = check(h.history())
    assert report.ok, report.summary()
    assert report.tolerances == Tolerances.for_target("live")


def test_changed_payload_fields_fail():
    # PLS-MSG-001: properties changed in transit.
    h = H().sub("c1").producer()
    h.ok("send", {"producer": "p", "payload": "m0", "properties": {"a": "1"}}, {"message_id": [1, 0, -1, -1], "publish_time": 0})
    bad = msg("m0", 0)
    bad["properties"] = {"a": "2"}
    h.ok("receive", {"consumer": "c1", "timeout_ms": 100}, {"message": bad})
    assert ("PLS-MSG-001", "wrong-value") in failures(check(h.history()))


def test_indeterminate_outcome_is_never_fail():
    # A lost receive may have taken m0 into the application: what follows is not judged FAIL.
    h = three_messages(H().sub("c1", "Shared").sub("c2", "Shared"))
    h.indeterminate("receive", {"consumer": "c1", "timeout_ms": 100})
    h.recv("c1", "m0", 0).recv("c2", "m0", 0)
    report = check(h.history())
    assert not report.failures(), report.summary()
    assert report.rule_verdicts()["PLS-SHARED-001"] == "INDETERMINATE"


def test_shared_lost_message_at_end_fails():
    # PLS-SHARED-001 liveness: both consumers drained yet m2 never arrived.
    h = three_messages(H().sub("c1", "Shared").sub("c2", "Shared"))
    h.recv("c1", "m0", 0).recv("c2", "m1", 1).recv("c1", None).recv("c2", None)
    assert ("PLS-SHARED-001", "lost-message") in failures(check(h.history()))


# ---------------------------------------------------------------------------- must pass


def test_every_shared_assignment_passes():
    # PLS-SHARED-001: any split of m0..m2 between two consumers, in any receive order, is allowed.
    for assignment in itertools.product(("c1", "c2"), repeat=3):
        for order in itertools.permutations(range(3)):
            h = three_messages(H().sub("c1", "Shared").sub("c2", "Shared"))
            for i in order:
                h.recv(assignment[i], f"m{i}", i)
            h.recv("c1", None).recv("c2", None)
            report = check(h.history())
            assert report.ok, (assignment, order, report.summary())
            assert report.rule_verdicts()["PLS-SHARED-001"] == "PASS"


def test_shared_close_redelivers_to_remaining_consumer():
    # PLS-SHARED-002: c1 held m0 and closes; c2 gets it. Count: 0 measured on 4.0.8; either on 3.x.
    h = three_messages(H(broker_version="4.0.8").sub("c1", "Shared").sub("c2", "Shared"))
    h.recv("c1", "m0", 0).ok("close", {"handle": "c1"}).recv("c2", "m0", 0, count=0)
    report = check(h.history())
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-SHARED-002"] == "PASS"
    bad = three_messages(H(broker_version="4.0.8").sub("c1", "Shared").sub("c2", "Shared"))
    bad.recv("c1", "m0", 0).ok("close", {"handle": "c1"}).recv("c2", "m0", 0, count=1)
    assert ("PLS-ACK-005", "wrong-redelivery-count") in failures(check(bad.history()))
    for count in (0, 1):
        h = three_messages(H(broker_version="3.3.0").sub("c1", "Shared").sub("c2", "Shared"))
        h.recv("c1", "m0", 0).ok("close", {"handle": "c1"}).recv("c2", "m0", 0, count=count)
        assert check(h.history()).ok


def test_measured_exclusive_rewind_history_passes_on_live_tolerances():
    # Live 4.0.8 / C++ 4.2.0: received m0, m1, nack m0 (d=200): m2 at once, then m0, m1, m2 at ~273 ms.
    h = H(target="live", broker_version="4.0.8", client="cpp")
    h.sub("c1", nack_delay_ms=200, t=(0, 5)).producer(t=(5, 6))
    h.send("m0", 0, t=(6, 8)).send("m1", 1, t=(8, 10)).send("m2", 2, t=(10, 12))
    h.recv("c1", "m0", 0, t=(12, 13)).recv("c1", "m1", 1, t=(13, 13))
    h.ok("nack", {"consumer": "c1", "message": "m0"}, t=(14, 14))
    h.recv("c1", "m2", 2, t=(14, 14)).recv("c1", "m0", 0, t=(15, 287))
    h.recv("c1", "m1", 1, t=(287, 287)).recv("c1", "m2", 2, t=(287, 288)).recv("c1", None, t=(288, 1288))
    report = check(h.history())
    assert report.ok, report.summary()
    assert report.rule_verdicts()["PLS-NACK-003"] == "PASS"
    # The same history judged with zero slack fails: the rewind arrived 7 ms after 280 ms.
    strict = check(h.history(), tolerances=Tolerances())
    assert ("PLS-NACK-001", "late-redelivery") in failures(strict)


def test_rewind_before_delay_is_early():
    h = H().sub("c1", nack_delay_ms=200, t=0).producer(t=0).send("m0", 0, t=0).send("m1", 1, t=0)
    h.recv("c1", "m0", 0, t=0).recv("c1", "m1", 1, t=0).ok("nack", {"consumer": "c1", "message": "m0"}, t=0)
    h.recv("c1", "m0", 0, t=(50, 60))
    # early: before the nack delay window of PLS-NACK-001 opens (the rewind of PLS-NACK-003 is not
    # what was broken; the time it came is)
    assert failures(check(h.history())) == [("PLS-NACK-001", "early-redelivery")]


def test_redeliver_unacked_shared_allows_stale_prefetched_copy():
    # PLS-REDELIVER-001: C++ keeps its queue, so c1 may still surface m1 that c2 now holds.
    h = three_messages(H().sub("c1", "Shared").sub("c2", "Shared"))
    h.recv("c1", "m0", 0).ok("redeliver_unacked", {"consumer": "c1"})
    h.recv("c2", "m1", 1, count=1).recv("c1", "m1", 1, count=1).recv("c2", "m0", 0, count=1)
    report = check(h.history())
    assert report.ok, report.summary()


def test_verdict_and_report_shapes():
    h = three_messages(H().sub("c1")).recv("c1", "m0", 0)
    report = check(h.history())
    v = report.verdicts[0]
    assert isinstance(v, Verdict) and v.status in ("PASS", "FAIL", "INDETERMINATE")
    assert all(v.anomaly is None or v.anomaly in ANOMALIES for v in report.verdicts)
    data = report.to_json()
    assert data["tolerances"] == {"dispatch_latency_ms": 0.0, "ack_grouping_ms": 0.0, "early_ms": 0.0}
    assert data["timing"]["source"] == "model" and data["timing"]["calibration"] is None


def test_rule_verdicts_fail_beats_indeterminate_beats_pass():
    report = CheckReport("x", "model", None, Tolerances(), (
        Verdict("R", 1, "PASS", None, "", "", ""),
        Verdict("R", 2, "INDETERMINATE", None, "", "", ""),
        Verdict("Q", 1, "PASS", None, "", "", ""),
        Verdict("Q", 2, "FAIL", "lost-message", "", "", ""),
        Verdict("Q", 3, "INDETERMINATE", None, "", "", ""),
    ))
    assert report.rule_verdicts() == {"R": "INDETERMINATE", "Q": "FAIL"}


def test_tolerances_for_targets():
    assert Tolerances.for_target("model") == Tolerances()
    live = Tolerances.for_target("pulsar")
    assert live.ack_grouping_ms == 100 and live.dispatch_latency_ms > 0


def test_key_shared_delivery_to_a_non_owner_while_another_holds_the_key_breaks_both_rules():
    """One delivery, two rules: the selector's (PLS-KEYSHARED-003, the ring gives the key elsewhere) and
    PLS-KEYSHARED-007 (the consumer that got the key's earlier message still holds it: two consumers at once)."""
    from pathlib import Path

    from conformance import mutation
    from conformance.trace import load

    history = load(Path(__file__).resolve().parents[2] / "conformance" / "evidence" / "mutation" / "python"
                   / "keyshared-join-leave.history.jsonl")
    assert not check(history).failures()
    moved = [m for m in mutation.move_to_other_consumer(history)
             if m.allowed is None and "PLS-KEYSHARED-007" in m.meant_to_break]
    assert moved, "the join/leave history has a delivery whose key another consumer still holds"
    for m in moved:
        failed = {v.rule_id for v in check(m.history).failures()}
        assert {"PLS-KEYSHARED-003", "PLS-KEYSHARED-007"} <= failed, (m.description, failed)
    held_elsewhere = [m for m in mutation.move_to_other_consumer(history)
                      if m.allowed is None and "PLS-KEYSHARED-007" not in m.meant_to_break]
    for m in held_elsewhere:  # a key nobody else held: the selector's rule alone
        assert "PLS-KEYSHARED-007" not in {v.rule_id for v in check(m.history).failures()}, m.description


def test_a_subscription_an_unfollowed_pattern_consumer_may_hold_is_not_judged():
    # Live 4.0.8 (Java campaign, 2026-11-27, pls-sub-001-unexpected-rejection-9a0fa71355b5): a pattern consumer
    # subscribed before any topic matched (not modelled: auto-discovery), found t once a producer created it,
    # and subscribed s1 there; the admin's create_subscription of t/s1 then got 409 Conflict.
    def history(subscription):
        return (H(target="embedded")
                .ok("subscribe", {"consumer": "c1", "topics_pattern": "[tu]", "subscription": "s1", "type": "Shared"}, t=(0, 30))
                .ok("create_producer", {"producer": "p1", "topic": "t"}, {"producer_name": "p", "last_sequence_id": -1}, t=(30, 40))
                .rejected("create_subscription", {"topic": "t", "subscription": subscription}, "OtherError", t=(40, 45))
                .history())

    report = check(history("s1"))
    assert not report.failures(), report.summary()
    assert any("may be held by a subscribe the model did not follow" in n for n in report.notes)
    # another subscription name is the model's to judge: it does not exist, so the refusal FAILs
    assert ("PLS-SUB-009", "unexpected-rejection") in {(v.rule_id, v.anomaly) for v in check(history("s9")).failures()}
