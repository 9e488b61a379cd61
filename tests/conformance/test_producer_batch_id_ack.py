"""An ack that names a batched message by the id its producer returned (PLS-BATCH-010).

Recorded live on 4.0.8 (6 Dec 2026; python 3.13.0, java 4.0.8, go 0.19.0): m1..m3 in one batch, c1 acks m2 (or
acks it cumulatively) before it ever received it, so the target acks by the id the producer's flush reported; m4
comes alone; then c1 closes and c2 takes the subscription over. What c2 gets shows what the broker holds: Java and
Go acked the whole entry (c2 gets m4 only), the C++ client with batch index ack too, and without it nothing (after
the received m1 and m3 were acked as well, c2 gets m1..m3 again). What c1 gets depends on whether the batch reached
its queue before the ack (kept) or after (dropped by the ack grouping tracker): both were recorded.

Before the rule, the model held the ack until every index was acked, and these histories FAILed: PLS-EXCL-002 where
c1's queue had dropped the entry, PLS-SUB-005 or a lost message where c2 got m4 alone.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conformance.checker import check
from conformance.trace import History, load
from reference_model.batching import producer_id_ack_reach

HERE = Path(__file__).parent / "live_histories"


def _history(name: str) -> History:
    return load(HERE / f"live-4.0.8-producer-batch-id-ack-{name}.jsonl")


def _payload(event) -> str | None:
    return ((event.outcome.value or {}).get("message") or {}).get("payload")


def _receives(history: History, consumer: str):
    return [e for e in history.events if e.op.op == "receive" and e.op.args.get("consumer") == consumer]


def _failed(history: History) -> set[str]:
    return {v.rule_id for v in check(history).failures()}


ALL = ["queued-java", "dropped-go", "cumulative-java", "siblings-python", "index-ack-python", "cumulative-python"]


@pytest.mark.parametrize("name", ALL)
def test_as_the_broker_played_it_no_rule_fails(name):
    report = check(_history(name))
    assert report.failures() == [], report.summary()
    assert not report.not_followed


@pytest.mark.parametrize("name, c2_got", [
    ("queued-java", ["m4"]), ("dropped-go", ["m4"]), ("cumulative-java", ["m4"]), ("index-ack-python", ["m4"]),
    ("siblings-python", ["m1", "m2", "m3"]), ("cumulative-python", ["m1", "m2", "m3", "m4"]),
])
def test_the_recordings_show_what_the_rule_says(name, c2_got):
    """The recordings themselves (not the model): what the new consumer got, i.e. what the broker held."""
    got = [p for p in map(_payload, _receives(_history(name), "c2")) if p is not None]
    assert got == c2_got


def _c2_first_receive_made(history: History, label: str) -> History:
    """``history`` with c2's first receive showing ``label`` (its recorded delivery to c1 if there was one, else c2's
    own receive renamed)."""
    earlier = next((e for e in history.events if e.op.op == "receive" and _payload(e) == label), None)
    first_c2 = _receives(history, "c2")[0]
    if earlier is None:  # c1's queue dropped the entry
        message = dict(first_c2.outcome.value["message"], payload=label)
        outcome = replace(first_c2.outcome, value={**first_c2.outcome.value, "message": message})
    else:
        outcome = earlier.outcome
    return History(history.header, tuple(replace(e, outcome=outcome) if e.step == first_c2.step else e
                                         for e in history.events))


@pytest.mark.parametrize("name, sibling", [
    ("queued-java", "m1"), ("dropped-go", "m1"), ("index-ack-python", "m1"), ("queued-java", "m3"),
    ("cumulative-java", "m3"),
])
def test_a_sibling_the_entry_ack_took_that_comes_again_fails_the_rule(name, sibling):
    """The sibling was never named by an ack (a cumulative ack of m2 names m1 as well, m3 not); the client acked it
    with m2's entry. Had the new consumer got it, the broker would have kept it."""
    failed = _failed(_c2_first_receive_made(_history(name), sibling))
    assert "PLS-BATCH-010" in failed
    assert not failed & {"PLS-ACK-001", "PLS-ACK-002"}, "the application never acked it: not its ack's rule"


def test_what_the_cumulative_ack_named_comes_again_fails_the_cumulative_rule():
    failed = _failed(_c2_first_receive_made(_history("cumulative-java"), "m1"))
    assert "PLS-ACK-002" in failed and "PLS-BATCH-010" not in failed


def test_a_cpp_producer_id_ack_that_took_the_entry_would_fail():
    """Without batch index ack the C++ client acks nothing for the producer's id: had the broker dropped the entry,
    the new consumer would have got nothing, and the model, which keeps m1..m3 for it, FAILs that."""
    history = _history("siblings-python")
    receives = _receives(history, "c2")
    nothing = receives[-1]
    assert _payload(nothing) is None
    lied = History(history.header, tuple(replace(e, outcome=nothing.outcome) if e.step in {r.step for r in receives}
                                         else e for e in history.events))
    assert _failed(lied), "m1..m3 never acked on an Exclusive subscription, and the new consumer got nothing"


@pytest.mark.parametrize("client, cumulative, index_ack, own, reach", [
    # measured live (4.0.8, 6 Dec 2026): what a new consumer got after the ack
    ("java", False, False, False, "entry"), ("java", True, False, False, "entry"), ("java", False, True, False, "entry"),
    ("java", True, True, False, "entry"),
    ("go", False, False, False, "entry"), ("go", True, False, False, "entry"), ("go", False, True, False, "entry"),
    ("go", True, True, False, "entry"),
    ("cpp", False, False, True, "nothing"), ("cpp", True, False, True, "before"), ("cpp", False, True, True, "entry"),
    ("cpp", True, True, True, "entry"),
    # read in the C++ client, not measured: another client's id is rebuilt as a plain MessageIdImpl (discardBatch)
    ("cpp", False, False, False, "entry"),
])
def test_the_reach_by_client(client, cumulative, index_ack, own, reach):
    assert producer_id_ack_reach(client, cumulative=cumulative, client_batch_index_ack=index_ack,
                                 own_producer_id=own) == reach


def test_the_lie_operator_breaks_the_rule_and_only_where_the_spec_forbids():
    """``mutation.deliver_entry_acked_by_producer_id``: on a recording where c1 closed, the mutant (a sibling delivered
    to c2) FAILs PLS-BATCH-010; where c1 unsubscribed instead, c2's subscription is a new one that may read the entry
    again, and no mutant is made (a review of 6 Dec 2026)."""
    from conformance.mutation import deliver_entry_acked_by_producer_id

    history = _history("queued-java")
    mutants = deliver_entry_acked_by_producer_id(history)
    assert mutants and all(m.meant_to_break == ("PLS-BATCH-010",) for m in mutants)
    assert "PLS-BATCH-010" in _failed(mutants[0].history)
    unsubscribed = History(history.header, tuple(
        replace(e, op=replace(e.op, op="unsubscribe", args={"consumer": e.op.args["handle"]})) if e.op.op == "close" else e
        for e in history.events))
    assert deliver_entry_acked_by_producer_id(unsubscribed) == []
