"""The BookKeeper chapter (reference_model/bookkeeper.py) against the vectors of
docs/research/bookkeeper-placement.md, worked by hand from BookKeeper 4.16.6/4.17.2's
RoundRobinDistributionSchedule, PendingAddOp, LedgerHandle and LedgerMetadataImpl and Pulsar's
AdminResource#validatePersistencePolicies (never from this module's output)."""

from __future__ import annotations

import pytest

from reference_model import bookkeeper as bk
from reference_model.bookkeeper import Quorums


@pytest.mark.parametrize("e,w,entry,expected", [
    (1, 1, 0, (0,)), (1, 1, 7, (0,)),
    (3, 3, 0, (0, 1, 2)), (3, 3, 1, (1, 2, 0)), (3, 3, 5, (2, 0, 1)),
    (3, 2, 0, (0, 1)), (3, 2, 1, (1, 2)), (3, 2, 2, (2, 0)), (3, 2, 3, (0, 1)),
    (5, 3, 0, (0, 1, 2)), (5, 3, 3, (3, 4, 0)), (5, 3, 4, (4, 0, 1)), (5, 3, 7, (2, 3, 4)),
    (5, 2, 9, (4, 0)), (5, 3, 1_000_003, (3, 4, 0)), (3, 2, 2_147_483_646, (0, 1)),
])
def test_write_set_stripes_round_robin(e, w, entry, expected):
    assert bk.write_set(Quorums(e, w, 1), entry) == expected


@pytest.mark.parametrize("e,w,position,expected", [
    (3, 2, 0, (0, 2, 3, 5, 6, 8)), (3, 2, 1, (0, 1, 3, 4, 6, 7)), (3, 2, 2, (1, 2, 4, 5, 7, 8)),
])
def test_entries_per_bookie_e3_qw2(e, w, position, expected):
    assert bk.entries_on_position(Quorums(e, w, 1), position, 0, 8) == expected


def test_entries_per_bookie_e5_qw3():
    q = Quorums(5, 3, 2)
    assert bk.entries_on_position(q, 0, 0, 9) == (0, 3, 4, 5, 8, 9)
    assert bk.entries_on_position(q, 4, 0, 9) == (2, 3, 4, 7, 8, 9)


ENSEMBLES = {0: ("A", "B", "C"), 5: ("A", "D", "C"), 9: ("E", "D", "C")}


@pytest.mark.parametrize("entry,expected", [
    (0, ("A", "B")), (4, ("B", "C")), (5, ("C", "A")), (6, ("A", "D")), (8, ("C", "A")), (9, ("E", "D")), (100, ("D", "C")),
])
def test_bookies_of_an_entry_follow_its_ensemble(entry, expected):
    assert bk.bookies_of(Quorums(3, 2, 2), ENSEMBLES, entry) == expected


def test_ensemble_changes_start_after_the_lac_and_replace_in_place():
    start = {0: ("A", "B", "C")}
    one = bk.ensemble_change(start, 4, {1: "D"})
    assert one == {0: ("A", "B", "C"), 5: ("A", "D", "C")}
    two = bk.ensemble_change(one, 4, {1: "F"})  # nothing confirmed since: key 5 is replaced
    assert two == {0: ("A", "B", "C"), 5: ("A", "F", "C")}
    three = bk.ensemble_change(two, 8, {0: "G"})
    assert three == {0: ("A", "B", "C"), 5: ("A", "F", "C"), 9: ("G", "F", "C")}


def test_an_ensemble_change_before_the_last_ensemble_is_refused():
    with pytest.raises(ValueError, match="after LAC"):
        bk.ensemble_change(ENSEMBLES, 3, {0: "X"})


def _replay(q, sent, acks):
    return [(p.delivered, p.lac) for p in bk.acknowledge(q, sent, acks)]


def test_acks_are_delivered_in_entry_order_e3_qw2_qa2():
    got = _replay(Quorums(3, 2, 2), 3, [(1, 1), (1, 2), (0, 0), (2, 2), (2, 0), (0, 1)])
    assert got == [((), -1), ((), -1), ((), -1), ((), -1), ((), -1), ((0, 1, 2), 2)]


def test_a_repeated_ack_counts_once_e3_qw3_qa2():
    got = _replay(Quorums(3, 3, 2), 3, [(0, 0), (2, 1), (2, 0), (0, 0), (1, 2), (0, 2), (1, 0)])
    assert got == [((), -1), ((), -1), ((), -1), ((), -1), ((), -1), ((0,), 0), ((1, 2), 2)]


def test_acks_e5_qw3_qa2():
    got = _replay(Quorums(5, 3, 2), 4, [(0, 0), (3, 3), (3, 4), (1, 1), (0, 2), (2, 2), (1, 3), (2, 4)])
    assert got == [((), -1)] * 4 + [((0,), 0), ((), 0), ((1,), 1), ((2, 3), 3)]


def test_a_late_ack_changes_nothing_e2_qw2_qa1():
    got = _replay(Quorums(2, 2, 1), 3, [(2, 0), (1, 0), (0, 1), (0, 0)])
    assert got == [((), -1), ((), -1), ((0, 1, 2), 2), ((), 2)]


def test_an_ack_from_outside_the_write_set_is_an_error():
    with pytest.raises(ValueError, match="written to positions"):
        bk.acknowledge(Quorums(3, 2, 2), 1, [(0, 2)])


@pytest.mark.parametrize("e,w,a,answered,expected", [
    (3, 2, 2, {0}, False), (3, 2, 2, {1}, False), (3, 2, 2, {0, 1}, True),
    (3, 3, 2, {0}, False), (3, 3, 2, {0, 2}, True),
    (3, 2, 1, {0, 1}, False), (3, 2, 1, {0, 1, 2}, True),
    (5, 3, 2, {0, 1, 2, 3}, True), (5, 3, 2, {0, 2, 4}, False), (5, 3, 2, {0, 1, 3}, False),
    (1, 1, 1, set(), False), (1, 1, 1, {0}, True),
])
def test_coverage(e, w, a, answered, expected):
    assert bk.covered(Quorums(e, w, a), answered) is expected


@pytest.mark.parametrize("e,w,a,reason", [
    (3, 2, 2, None), (2, 2, 2, None), (1, 1, 1, None),
    (2, 3, 2, "Bookkeeper Ensemble (2) >= WriteQuorum (3) >= AckQuorum (2)"),
    (3, 2, 3, "Bookkeeper Ensemble (3) >= WriteQuorum (2) >= AckQuorum (3)"),
    (3, 2, 0, "Bookkeeper-AckQuorum must be <= 5 and > 0."),
    (6, 3, 2, "Bookkeeper-Ensemble must be <= 5 and > 0."),
    (0, 0, 0, "Bookkeeper-Ensemble must be <= 5 and > 0."),
    (3, 6, 2, "Bookkeeper-WriteQuorum must be <= 5 and > 0."),
])
def test_persistence_policy_refusals(e, w, a, reason):
    assert bk.persistence_refusal(e, w, a) == reason


@pytest.mark.parametrize("first,last,lac,code", [
    (0, 3, 3, None), (0, 4, 3, bk.READ_EXCEPTION), (-1, 2, 3, bk.INCORRECT_PARAMETER), (3, 2, 3, bk.INCORRECT_PARAMETER),
    (0, 0, bk.NO_ENTRY, bk.READ_EXCEPTION),
])
def test_a_normal_read_stops_at_the_lac(first, last, lac, code):
    assert bk.read_refusal(first, last, lac) == code


def test_a_ledger_needs_ordered_quorums():
    with pytest.raises(ValueError, match="E >= Qw >= Qa >= 1"):
        Quorums(2, 3, 2)
