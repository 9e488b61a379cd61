"""Random lies (conformance/perturb.py, issue 45 item 2): seeded, valid, judged and classified.

The expected classes and rules come from the rule texts (reference_model/rules.py), quoted at each
test, never from what the classifier or the checker printed: a hand-written history, one lie, and
the sentence that makes it a lie (or not).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance import perturb
from conformance.checker import check
from conformance.trace import History, dumps, load, parse
from model_history_helpers import H

ROOT = Path(__file__).resolve().parents[2]
RECORDED = sorted((ROOT / "conformance" / "evidence" / "mutation").rglob("*.jsonl"))[:12]


def acked_then_empty(type_: str = "Exclusive") -> History:
    """c1 gets m0 and m1, acks m0, then a receive that waits 1 s and gets nothing."""
    h = H().sub("c1", type_, t=0).producer(t=0).send("m0", 0, t=1).send("m1", 1, t=2)
    h.recv("c1", "m0", 0, t=(3, 4)).recv("c1", "m1", 1, t=(4, 5))
    h.ok("ack", {"consumer": "c1", "message": "m0"}, t=(6, 7))
    h.recv("c1", None, t=(10, 1010))
    return h.history()


def two_first_deliveries(type_: str) -> History:
    """c1 (alone on its subscription) gets m0 then m1, both stored before either receive."""
    h = H().sub("c1", type_, t=0).producer(t=0).send("m0", 0, t=1).send("m1", 1, t=2)
    h.recv("c1", "m0", 0, t=(3, 4)).recv("c1", "m1", 1, t=(4, 5))
    return h.history()


def nacked_and_back() -> History:
    """A C++ consumer with nack delay d = 300 ms nacks m0 at 100 ms; it is back at 420 ms, inside [d, d + d/3]."""
    h = H().sub("c1", "Shared", nack_delay_ms=300, t=0).producer(t=0).send("m0", 0, t=1)
    h.recv("c1", "m0", 0, t=(2, 3)).ok("nack", {"consumer": "c1", "message": "m0"}, t=100)
    h.recv("c1", "m0", 0, count=1, t=(100, 420))
    return h.history()


def of_kind(history: History, kind: str, count: int = 60, seed: int = 1) -> list[perturb.Perturbation]:
    return perturb.perturbations(history, count=count, seed=seed, kinds=[kind])


# --------------------------------------------------------------------------- the engine


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_same_seed_same_lies_other_seed_other_lies(path):
    history = load(path)
    first = perturb.perturbations(history, count=15, seed=7)
    again = perturb.perturbations(history, count=15, seed=7)
    other = perturb.perturbations(history, count=15, seed=8)
    assert first, "a recorded history offers something to lie about"
    assert [p.description for p in first] == [p.description for p in again]
    assert [dumps(p.history) for p in first] == [dumps(p.history) for p in again]
    assert [p.description for p in first] != [p.description for p in other]


@pytest.mark.parametrize("path", RECORDED, ids=lambda p: p.name)
def test_every_lie_round_trips_and_changes_one_line(path):
    history = load(path)
    lies = perturb.perturbations(history, count=40, seed=3)
    assert len({p.description for p in lies}) == len(lies), "no lie twice for one history"
    original = dumps(history).splitlines()
    for p in lies:
        text = dumps(p.history)
        back = parse(text)
        assert isinstance(back, History) and dumps(back) == text
        assert "\n" not in p.description and p.kind in p.description and f"step {p.step}" in p.description
        changed = [n for n, (a, b) in enumerate(zip(original, text.splitlines())) if a != b]
        assert changed, p.description
        if p.kind not in ("shift_time", "drop_delivery", "swap_deliveries"):  # those also move later events / trade two
            assert changed == [p.index + 1], p.description  # line 0 is the header


def test_every_kind_makes_a_valid_lie_on_a_rich_history():
    h = H().sub("c1", "Shared", nack_delay_ms=300, t=0).producer(t=0)
    h.send("m0", 0, t=1).send("m1", 1, t=2)
    h.recv("c1", "m0", 0, t=(3, 4)).recv("c1", "m1", 1, t=(4, 5))
    h.ok("stats", {"topic": "t", "subscription": "s"},
         {"backlog": 2, "consumer_unacked": [{"consumer_name": "c1", "unacked_messages": 2, "blocked": False}]}, t=(6, 7))
    h.ok("ack", {"consumer": "c1", "message": "m0"}, t=(8, 9))
    h.recv("c1", None, t=(10, 1010))
    h.rejected("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Exclusive"}, "ConsumerBusy",
               t=(1011, 1012))
    history = h.history()
    made = {p.kind for p in perturb.perturbations(history, count=300, seed=0)}
    # all but the kinds this history has nothing for: no fault op (reconnect_figure), no schema (schema_version)
    expected = set(perturb.KINDS) - {"reconnect_figure", "schema_version"}
    assert expected <= made, sorted(expected - made)


# --------------------------------------------------------------------------- judging and classifying


def test_acked_message_delivered_again_is_caught_by_ack_001():
    # PLS-ACK-001: "An individually acked message is never delivered again on that subscription."
    history = acked_then_empty()
    lies = [p for p in of_kind(history, "duplicate_delivery") if p.new.startswith("m0")]
    assert lies, "the empty receive after the ack can be given a copy of m0"
    r = perturb.judge(history, lies[0])
    assert "PLS-ACK-001" in r["new_fails"]
    assert r["outcome"] == perturb.CAUGHT_COVERING and "PLS-ACK-001" in r["covering_rules"]
    assert r["classification"]["class"] == perturb.MISSED  # a lie: "missed" is what it would be had no rule FAILed
    assert r["classification"]["rules"] == ["PLS-ACK-001"]


def test_copy_inside_the_ack_grouping_band_is_allowed_live():
    # PLS-ACK-001's detector: "delivered on that subscription again after the ack-grouping tolerance":
    # on a live history (100 ms ack grouping plus the dispatch band) a copy 3 ms after the ack is allowed.
    h = H(target="embedded").sub("c1", t=0).producer(t=0).send("m0", 0, t=1)
    h.recv("c1", "m0", 0, t=(3, 4)).ok("ack", {"consumer": "c1", "message": "m0"}, t=(6, 7))
    h.recv("c1", None, t=(8, 10))
    history = h.history()
    (lie,) = [p for p in of_kind(history, "duplicate_delivery") if p.new.startswith("m0")][:1]
    c = perturb.classify(history, lie)
    assert c.cls == perturb.ALLOWED and "ack grouping" in c.reason


def test_first_delivery_with_count_one_is_a_lie_on_ack_005():
    # PLS-ACK-005: "Redelivery count is 0 on first delivery and +1 each time the message is redelivered on request".
    history = two_first_deliveries("Shared")
    lies = [p for p in of_kind(history, "redelivery_count") if p.old == 0]
    assert lies
    for p in lies:
        r = perturb.judge(history, p)
        assert r["classification"]["class"] == perturb.MISSED and "PLS-ACK-005" in r["classification"]["rules"]
        assert "PLS-ACK-005" in perturb.covering_rules(p)
        assert r["outcome"] == perturb.CAUGHT_COVERING


def test_swapped_first_deliveries_allowed_on_shared_missed_on_exclusive():
    # PLS-SHARED-001 says which consumer gets a message ("delivered to only one consumer"), not in what
    # order one consumer gets them; PLS-EXCL-002: "An Exclusive consumer receives messages in publish order".
    shared = two_first_deliveries("Shared")
    (lie,) = of_kind(shared, "swap_deliveries")
    assert perturb.classify(shared, lie).cls == perturb.ALLOWED
    assert perturb.judge(shared, lie)["outcome"] == perturb.SURVIVED, "the checker must not FAIL an allowed order"
    exclusive = two_first_deliveries("Exclusive")
    (lie,) = of_kind(exclusive, "swap_deliveries")
    c = perturb.classify(exclusive, lie)
    assert c.cls == perturb.MISSED and "PLS-EXCL-002" in c.rules
    assert "PLS-EXCL-002" in perturb.judge(exclusive, lie)["new_fails"]


def test_a_plain_delivery_arriving_later_is_allowed():
    # No rule fixes when a stored message reaches an Exclusive consumer that has it (PLS-EXCL-002 states the
    # order, and a due message only when the receive got nothing): the same deliveries later are allowed.
    history = two_first_deliveries("Exclusive")
    later = [p for p in of_kind(history, "shift_time", count=80) if p.step == 5 and p.detail["delta_ms"] > 0]
    assert later
    for p in later:
        c = perturb.classify(history, p)
        assert c.cls == perturb.ALLOWED, (p.description, c.reason)


def test_a_nack_redelivery_moved_out_of_its_window_is_a_lie_on_nack_001():
    # PLS-NACK-001: "C++/Python nack: redelivered after the fixed negative_ack_redelivery_delay d, inside
    # [d, d + d/3]": nacked at 100 ms with d = 300 ms, it is due in [400, 500] ms (no slack on the model).
    history = nacked_and_back()
    outside = [p for p in of_kind(history, "shift_time", count=120) if p.step == 6
               and not 400 <= p.history.events[5].t_end_ms <= 500]
    inside = [p for p in of_kind(history, "shift_time", count=120) if p.step == 6
              and 400 <= p.history.events[5].t_end_ms <= 500]
    assert outside
    for p in outside:
        c = perturb.classify(history, p)
        assert c.cls == perturb.MISSED and "PLS-NACK-001" in c.rules, (p.description, c.reason)
        assert "PLS-NACK-001" in perturb.judge(history, p)["new_fails"]
    for p in inside:
        assert perturb.classify(history, p).cls != perturb.MISSED, p.description


def test_a_dropped_delivery_of_a_stored_message_is_a_lie_on_exclusive():
    # PLS-EXCL-002's detector: "Violated if an Exclusive consumer receives ... nothing while a message was due by
    # the timing band": m1 was stored at 2 ms; the receive now waits its whole 1000 ms timeout for nothing.
    history = two_first_deliveries("Exclusive")
    lies = [p for p in of_kind(history, "drop_delivery") if p.step == 6]
    assert lies
    r = perturb.judge(history, lies[0])
    assert r["classification"]["class"] == perturb.MISSED and "PLS-EXCL-002" in r["classification"]["rules"]
    assert r["outcome"] == perturb.CAUGHT_COVERING


def test_a_harness_reconnect_figure_is_allowed():
    # No registered rule states how long a reconnect takes (PLS-FAULT-* state what survives a fault).
    h = H(target="embedded").sub("c1", t=0)
    h.ok("cut_connections", {}, {"reconnected_ms": 150.5}, t=(1, 200))
    history = h.history()
    (lie,) = of_kind(history, "reconnect_figure", count=1)
    assert perturb.classify(history, lie).cls == perturb.ALLOWED


def test_a_masked_lie_is_not_counted_missed():
    # A lie on a rule the original already FAILs cannot show as a new FAIL: it is unclassified, with why.
    history = acked_then_empty()
    lie = [p for p in of_kind(history, "duplicate_delivery") if p.new.startswith("m0")][0]
    c = perturb.classify(history, lie, baseline_fails={"PLS-ACK-001"})
    assert c.cls == perturb.UNCLASSIFIED and c.reason.startswith("masked")


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="unknown perturbation kind"):
        perturb.perturbations(two_first_deliveries("Shared"), count=1, kinds=["no_such_kind"])


def test_checking_the_original_is_clean():
    # the hand-written histories above are true: every catch is the lie's
    for history in (acked_then_empty(), two_first_deliveries("Shared"), two_first_deliveries("Exclusive"), nacked_and_back()):
        assert not check(history).failures()


def _drop_at(history: History, step: int) -> dict:
    lies = [p for p in of_kind(history, "drop_delivery", count=200) if p.step == step]
    assert lies, f"no drop_delivery lie at step {step}"
    return perturb.judge(history, lies[0])


LIVE = ROOT / "tests" / "conformance" / "live_histories"


def test_a_non_persistent_message_sent_before_the_first_permits_may_be_dropped():
    """Go, live 4.0.8: c2 (Shared, the only consumer of sx1 on a non-persistent topic) subscribed by 100.9 ms and m1
    was sent at 109.2 ms. The Go client sends its first flow permits after its subscribe returned, so the broker may
    drop m1 for want of permits (reference_model.non_persistent rule 6): a receive that gets nothing is allowed."""
    r = _drop_at(load(LIVE / "live-4.0.8-go-non-persistent-send-right-after-subscribe.jsonl"), 7)
    assert r["classification"]["class"] == perturb.ALLOWED and "rule 6" in r["classification"]["reason"]


def test_a_failover_consumer_is_owed_a_message_only_after_the_activation_delay():
    """Java, live 4.0.8: c2 and c3 joined Failover sx1 at 207 and 212 ms; m1 was stored at 217 ms; c2 closed at
    826 ms; c3 got m1 at 1213 ms. The broker reads for a newly picked active consumer only after
    activeConsumerFailoverDelayTimeMillis (1000 ms), so after c2's close c3 is surely reading only by 1826 ms: a
    500 ms receive ending at 1326 ms with nothing is allowed, not a lie on PLS-FAILOVER-003."""
    r = _drop_at(load(LIVE / "live-4.0.8-java-failover-active-consumer-reads-after-delay.jsonl"), 11)
    assert r["classification"]["class"] != perturb.MISSED, r["classification"]
