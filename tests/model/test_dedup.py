"""Chapter dedup.py: message deduplication and producer sequence ids (PLS-DEDUP-001..006)."""

from __future__ import annotations

from reference_model import dedup, spec
from reference_model.ids import MessageId


# ---------------------------------------------------------------- PLS-DEDUP-*


def test_dedup_classification_dup_unknown_notdup():
    s = dedup.DedupState()
    s, st = dedup.publish(s, "p", 5)
    assert st == dedup.NOT_DUP and s.highest_pushed("p") == 5
    assert dedup.classify(s, "p", 5) == dedup.UNKNOWN  # pushed, not yet persisted (PLS-DEDUP-004)
    s = dedup.persist(s, "p", 5)
    assert dedup.classify(s, "p", 3) == dedup.DUP
    assert dedup.classify(s, "p", 6) == dedup.NOT_DUP
    assert dedup.classify(s, "other", 0) == dedup.NOT_DUP  # per producer name
    assert dedup.duplicate_reply_id() == MessageId(-1, -1, -1, -1)
    assert str(dedup.duplicate_reply_id()) == "(-1,-1,-1,-1)"


def test_dedup_live_sequence_is_reproduced_exactly():
    """The live probe of PLS-DEDUP-001/002/005/006, step by step."""
    state = dedup.DedupState(enabled=True)
    seq = dedup.producer_connected(dedup.ProducerSequence.create(None), dedup.broker_last_sequence_id(state, "pd"))
    assert seq.last == -1
    stored, lasts = [], []
    for explicit in (None, None, None, 1, 2, 10, None, 5, 0):
        state, seq, out = spec.dedup_send(state, seq, "pd", explicit)
        stored.append(out.stored)
        lasts.append(seq.last)
    assert stored == [True, True, True, False, False, True, False, False, False]
    assert lasts == [0, 1, 2, 1, 2, 10, 3, 5, 4]
    # restart with the same name: continues after 10
    seq = dedup.producer_connected(dedup.ProducerSequence.create(None), dedup.broker_last_sequence_id(state, "pd"))
    assert seq.last == 10
    state, seq, out = spec.dedup_send(state, seq, "pd")
    assert (out.sequence_id, out.stored, seq.last) == (11, True, 11)
    # restart with initial_sequence_id=3: the configured id wins, next send is a duplicate
    seq = dedup.producer_connected(dedup.ProducerSequence.create(3), dedup.broker_last_sequence_id(state, "pd"))
    assert seq.last == 3
    state, seq, out = spec.dedup_send(state, seq, "pd")
    assert (out.sequence_id, out.status, seq.last) == (4, dedup.DUP, 4)


def test_dedup_off_stores_everything_and_restarts_at_minus_one():
    state = dedup.DedupState(enabled=False)
    seq = dedup.ProducerSequence.create(None)
    state, seq, a = spec.dedup_send(state, seq, "pd")
    state, seq, b = spec.dedup_send(state, seq, "pd", seq.last)
    assert a.stored and b.stored
    assert dedup.broker_last_sequence_id(state, "pd") == -1


def test_python_zero_means_not_given():
    assert dedup.python_sequence_argument(0) is None
    assert dedup.ProducerSequence.create(0) == dedup.ProducerSequence.create(None)
