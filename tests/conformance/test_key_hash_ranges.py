"""Key_Shared reported hash ranges at ``stats``: the model states them, the checker judges them.

Rule ids: PLS-KEYSHARED-003 (ring), PLS-KEYSHARED-004 (AUTO_SPLIT), PLS-KEYSHARED-005 (STICKY).
The model's answer (``Broker.key_hash_ranges``) is the chapter functions' (``key_shared``
``ring_reported_ranges``, ``auto_split_assignments``, ``merge_ranges``); the checker's detectors
(``conformance.detectors.RANGE_DETECTORS``) PASS a history whose stats report those ranges and FAIL,
on the selector's rule, one that reports others. The live histories in ``key_hash_ranges/`` were
recorded on an embedded Pulsar 4.0.8 with pulsar-client 3.13.0 (the AUTO_SPLIT one with
``subscriptionKeySharedUseConsistentHashing=false``; in the STICKY one, recorded before the case named
every consumer, c3 has no ``consumer_name`` and the live target matched it by the name its client drew).
No broker is needed.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conformance import mutation
from conformance.case_files import load_case
from conformance.checker import check
from conformance.targets.model import ModelTarget
from conformance.trace import History, Outcome, TraceFormatError, load, make_trace, reported_consumers
from reference_model import key_shared as ks
from reference_model.broker import Broker
from reference_model.dispatch.key_shared import KeySharedSettings
from reference_model.timing import Span

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "conformance" / "cases" / "keyshared"
# recorded live on 4.0.8: the three reported-ranges cases (kept with the mutation evidence, which mutates
# their stats) and one with an unnamed consumer
LIVE = Path(__file__).parent / "key_hash_ranges"
LIVE_HISTORIES = sorted(LIVE.glob("*.jsonl")) + sorted(
    (ROOT / "conformance" / "evidence" / "mutation" / "python").glob("keyshared-*-reported-ranges.history.jsonl"))
RING, AUTO_SPLIT, STICKY = "PLS-KEYSHARED-003", "PLS-KEYSHARED-004", "PLS-KEYSHARED-005"


def _case_history(name: str) -> History:
    return ModelTarget(client="python").run(load_case(CASES / f"{name}.yaml").trace)


def _range_verdicts(history: History, rule: str) -> list:
    return [v for v in check(history).verdicts if v.rule_id == rule
            and history.events[v.step - 1].op.op == "stats"] if history.events else []


def _stats_events(history: History) -> list[int]:
    return [i for i, e in enumerate(history.events) if e.op.op == "stats" and "consumers" in (e.outcome.value or {})]


def _with_consumers(history: History, index: int, consumers: list[dict]) -> History:
    events = list(history.events)
    e = events[index]
    events[index] = replace(e, outcome=Outcome.ok({**e.outcome.value, "consumers": consumers}))
    return History(history.header, tuple(events))


# ---------------------------------------------------------------------------- the model calls the chapters


def _broker(config=None) -> Broker:
    return Broker(key_shared=KeySharedSettings.for_broker("4.0.8", config))


def _sub(b: Broker, handle: str, name: str | None, **extra) -> None:
    args = {"consumer": handle, "topic": "t", "subscription": "s", "type": "Key_Shared", **extra}
    if name is not None:
        args["consumer_name"] = name
    assert not isinstance(b.apply("subscribe", args, Span.at(0)), ks.Rejected)


def test_ring_ranges_are_ring_reported_ranges():
    b = _broker()
    for h, n in (("c1", "ks-a"), ("c2", "ks-b"), ("c3", "ks-c")):
        _sub(b, h, n)
    got = b.key_hash_ranges("t", "s", Span.at(0))
    ring = ks.new_ring(ks.PROFILE_4)
    members = {}
    for h, n in (("c1", "ks-a"), ("c2", "ks-b"), ("c3", "ks-c")):
        ring, members[h] = ks.ring_join(ring, n)
    want = ks.ring_reported_ranges(ring)
    assert got.rule == RING and got.selector == "consistent_hashing" and got.unknown == ""
    assert {h: list(rs) for h, rs in got.ranges.items()} == {h: want[m] for h, m in members.items()}
    assert got.names == {"c1": "ks-a", "c2": "ks-b", "c3": "ks-c"}


def test_auto_split_ranges_are_the_docs_diagram_and_follow_leaves():
    b = _broker({"subscriptionKeySharedUseConsistentHashing": "false"})
    for i in range(1, 5):
        _sub(b, f"c{i}", f"C{i}")
    got = b.key_hash_ranges("t", "s", Span.at(0))
    assert got.rule == AUTO_SPLIT
    assert dict(got.ranges) == {"c3": ((0, 16384),), "c2": ((16385, 32768),), "c4": ((32769, 49152),),
                                "c1": ((49153, 65536),)}
    b.apply("close", {"handle": "c1"}, Span.at(1))  # the top end passes to the next lower owner
    assert b.key_hash_ranges("t", "s", Span.at(1)).ranges["c4"] == ((32769, 65536),)


def test_sticky_ranges_are_declared_and_merged_on_4x():
    b = _broker()
    _sub(b, "c1", "st-a", key_shared={"mode": "Sticky", "ranges": [[100, 199], [0, 99], [1000, 2000]]})
    got = b.key_hash_ranges("t", "s", Span.at(0))
    assert got.rule == STICKY and dict(got.ranges) == {"c1": ((0, 199), (1000, 2000))}


def test_unnamed_ring_consumers_make_the_ranges_unknown():
    b = _broker()
    _sub(b, "c1", "ks-a")
    _sub(b, "c2", None)
    assert "c2" in b.key_hash_ranges("t", "s", Span.at(0)).unknown


def test_nothing_stated_off_key_shared_or_on_a_partitioned_topic():
    b = _broker()
    b.apply("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Shared"}, Span.at(0))
    assert b.key_hash_ranges("t", "s", Span.at(0)) is None
    b.apply("create_topic", {"topic": "p", "partitions": 2}, Span.at(0))
    b.apply("subscribe", {"consumer": "c2", "topic": "p", "subscription": "s", "type": "Key_Shared",
                          "consumer_name": "x"}, Span.at(0))
    assert b.key_hash_ranges("p", "s", Span.at(0)) is None
    assert b.key_hash_ranges("nope", "s", Span.at(0)) is None


# ---------------------------------------------------------------------------- the checker: PASS and FAIL


@pytest.mark.parametrize("case, rule", [("keyshared-ring-reported-ranges", RING),
                                        ("keyshared-auto-split-reported-ranges", AUTO_SPLIT),
                                        ("keyshared-sticky-reported-ranges", STICKY)])
def test_model_history_passes_and_a_wrong_range_fails_on_the_selector_rule(case, rule):
    history = _case_history(case)
    passes = _range_verdicts(history, rule)
    assert passes and all(v.status == "PASS" for v in passes), [(v.step, v.status) for v in passes]
    i = _stats_events(history)[0]
    consumers = [dict(c) for c in history.events[i].outcome.value["consumers"]]
    s, e = consumers[0]["key_hash_ranges"][0]
    consumers[0] = {**consumers[0], "key_hash_ranges": [[s, e - 1]] + consumers[0]["key_hash_ranges"][1:]}
    report = check(_with_consumers(history, i, consumers))
    failed = [v for v in report.failures() if v.rule_id == rule]
    assert [(v.step, v.anomaly) for v in failed] == [(i + 1, "wrong-value")]
    assert failed[0].explanation.startswith("Let ") and "Then " in failed[0].explanation
    assert {v.rule_id for v in report.failures()} == {rule}


@pytest.mark.parametrize("path", LIVE_HISTORIES, ids=lambda p: p.stem)
def test_live_histories_pass_and_their_range_mutants_fail(path):
    history = load(path)
    rule = {"ring": RING, "auto": AUTO_SPLIT, "sticky": STICKY}[path.stem.split("-")[1]]
    passes = _range_verdicts(history, rule)
    assert passes and all(v.status == "PASS" for v in passes), [(v.step, v.status, v.explanation) for v in passes]
    assert not check(history).failures()
    mutants = mutation.change_reported_ranges(history)
    assert mutants and all(m.meant_to_break == (rule,) and m.allowed is None for m in mutants)
    for m in mutants:
        assert rule in {v.rule_id for v in check(m.history).failures()}, m.description


def test_a_consumer_left_out_or_unknown_fails():
    history = _case_history("keyshared-ring-reported-ranges")
    i = _stats_events(history)[1]  # c1 and c2 connected
    consumers = [dict(c) for c in history.events[i].outcome.value["consumers"]]
    report = check(_with_consumers(history, i, consumers[:1]))
    assert [v.explanation for v in report.failures() if v.rule_id == RING][0].count("no such consumer") == 1
    stranger = {"consumer": None, "consumer_name": "stranger", "key_hash_ranges": [[1, 5]]}
    assert any(v.rule_id == RING for v in check(_with_consumers(history, i, consumers + [stranger])).failures())


def test_entries_without_a_handle_are_matched_by_fixed_name():
    history = _case_history("keyshared-ring-reported-ranges")
    i = _stats_events(history)[2]
    consumers = [{**c, "consumer": None} for c in history.events[i].outcome.value["consumers"]]
    verdicts = [v for v in check(_with_consumers(history, i, consumers)).verdicts if v.rule_id == RING and v.step == i + 1]
    assert [v.status for v in verdicts] == ["PASS"]
    consumers[0], consumers[1] = ({**consumers[0], "key_hash_ranges": consumers[1]["key_hash_ranges"]},
                                  {**consumers[1], "key_hash_ranges": consumers[0]["key_hash_ranges"]})
    assert any(v.rule_id == RING and v.step == i + 1 for v in check(_with_consumers(history, i, consumers)).failures())


def test_same_named_consumers_are_compared_as_a_group():
    trace = make_trace("same-names", [
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Key_Shared", "consumer_name": "dup"}),
        ("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Key_Shared", "consumer_name": "dup"}),
        ("stats", {"topic": "t", "subscription": "s"}),
    ])
    history = ModelTarget(client="python").run(trace)
    consumers = [{**c, "consumer": None} for c in reversed(history.events[2].outcome.value["consumers"])]
    assert consumers[0]["key_hash_ranges"] != consumers[1]["key_hash_ranges"]
    verdicts = [v for v in check(_with_consumers(history, 2, consumers)).verdicts if v.rule_id == RING and v.step == 3]
    assert [v.status for v in verdicts] == ["PASS"]
    consumers[0] = {**consumers[0], "key_hash_ranges": consumers[1]["key_hash_ranges"]}
    assert [v.status for v in check(_with_consumers(history, 2, consumers)).verdicts
            if v.rule_id == RING and v.step == 3] == ["FAIL"]


def test_a_ring_of_random_names_is_not_judged_and_unattributed_ranges_are_indeterminate():
    trace = make_trace("unnamed", [
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Key_Shared", "consumer_name": "ks-a"}),
        ("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Key_Shared"}),
        ("stats", {"topic": "t", "subscription": "s"}),
    ])
    history = ModelTarget(client="python").run(trace)
    # nobody's ranges can be predicted (the ring places c2 by a name the client drew): no verdict at all,
    # so a run is not made inconclusive by stats the rule says nothing about
    assert [v.status for v in check(history).verdicts if v.rule_id == RING and v.step == 3] == []
    sticky = make_trace("unnamed-sticky", [
        ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Key_Shared", "consumer_name": "a",
                       "key_shared": {"mode": "Sticky", "ranges": [[0, 10]]}}),
        ("subscribe", {"consumer": "c2", "topic": "t", "subscription": "s", "type": "Key_Shared",
                       "key_shared": {"mode": "Sticky", "ranges": [[20, 30]]}}),
        ("stats", {"topic": "t", "subscription": "s"}),
    ])
    history = ModelTarget(client="python").run(sticky)
    # a Java-run target cannot name c2's handle: it reports only the name the client drew
    consumers = [c if c["consumer"] == "c1" else {**c, "consumer": None, "consumer_name": "5a1b2c3d4e"}
                 for c in history.events[2].outcome.value["consumers"]]
    statuses = sorted(v.status for v in check(_with_consumers(history, 2, consumers)).verdicts
                      if v.rule_id == STICKY and v.step == 3)
    assert statuses == ["INDETERMINATE", "PASS"]


def test_histories_without_reported_ranges_are_not_judged_on_them():
    history = _case_history("keyshared-ring-reported-ranges")
    events = [replace(e, outcome=Outcome.ok({"backlog": e.outcome.value["backlog"]})) if e.op.op == "stats" else e
              for e in history.events]
    old = History(history.header, tuple(events))
    assert not [v for v in check(old).verdicts if v.rule_id == RING]
    assert reported_consumers(old.events[1].outcome) is None


def test_a_malformed_consumers_value_is_refused():
    with pytest.raises(TraceFormatError, match="key_hash_ranges"):
        reported_consumers(Outcome.ok({"backlog": 0, "consumers": [{"consumer": "c1", "key_hash_ranges": [[1]]}]}))
    with pytest.raises(TraceFormatError, match="list of objects"):
        reported_consumers(Outcome.ok({"backlog": 0, "consumers": "c1"}))
