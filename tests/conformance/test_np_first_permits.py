"""Non-persistent rule 6 (PLS-NP-001): a message published before a Java or Go consumer's first flow permits surely
reached the broker may be dropped; the receipts decide. The C++ client (and so the Python one) sends its permits
before its subscribe returns, so there the same message is owed.

Found live: CI of 5 Dec 2026, case np-connected-only with the Go client 0.19.0 on 4.0.8: m2, sent 8 us after c2's
subscribe returned, never came, and the suite FAILed a correct broker (PLS-EXCL-002, PLS-SUB-005, PLS-NP-001).
The histories here are the case's model history with its receipts altered as the live one was.
"""

from __future__ import annotations

import pytest

from conformance.case_files import discover_cases
from conformance.checker import check
from conformance.runner import run_case
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome
from reference_model import maybe_absent, non_persistent

CASE = next(c for c in discover_cases() if c.id == "np-connected-only")
SUBSCRIBE_C2, SEND_M2, RECEIVE_1, RECEIVE_2 = 8, 9, 10, 11


def model_history(client: str) -> History:
    result = run_case(CASE, ModelTarget(client=client), client=client)
    assert result.status == "PASS", result.failure_text()
    return result.history


def _m2(history: History) -> dict:
    return next(e.outcome.value["message"] for e in history.events if e.step == RECEIVE_1)


def altered(history: History, *, first: str | None, second: str | None, send_later_ms: float = 0.0) -> History:
    """The history whose two last receives got ``first`` and ``second`` ("m2" or None: nothing, after the whole
    timeout), with m2's send and everything after it ``send_later_ms`` later."""
    m2 = _m2(history)
    events = []
    for e in history.events:
        start, end, outcome = e.t_start_ms, e.t_end_ms, e.outcome
        if e.step >= SEND_M2:
            start, end = start + send_later_ms, end + send_later_ms
        if e.step in (RECEIVE_1, RECEIVE_2):
            got = first if e.step == RECEIVE_1 else second
            outcome = Outcome.ok({"message": m2 if got else None})
            if got is None:
                end = start + e.op.args["timeout_ms"]
        events.append(Event(e.op, outcome, start, end))
    # keep the steps' times in order: a later receive starts after the one before ended
    fixed, last_end = [], 0.0
    for e in events:
        shift = max(0.0, last_end - e.t_start_ms) if e.step > RECEIVE_1 else 0.0
        fixed.append(Event(e.op, e.outcome, e.t_start_ms + shift, e.t_end_ms + shift))
        last_end = fixed[-1].t_end_ms
    return History(history.header, tuple(fixed))


def failures(history: History) -> set[str]:
    return {v.rule_id for v in check(history).failures()}


@pytest.mark.parametrize("client", ["go", "java"])
def test_a_message_sent_right_after_the_subscribe_may_be_dropped(client):
    history = model_history(client)
    assert not failures(history)
    assert not failures(altered(history, first=None, second=None))  # the live Go history's shape
    assert not failures(altered(history, first="m2", second=None))  # delivered: also allowed


@pytest.mark.parametrize("client", ["go", "java"])
def test_a_dropped_message_that_comes_later_fails(client):
    # the first receive waited past m2's due time and got nothing, so it was dropped; it cannot come after
    assert failures(altered(model_history(client), first=None, second="m2"))


@pytest.mark.parametrize("client", ["go", "java"])
def test_once_the_permits_surely_arrived_the_message_is_owed(client):
    history = altered(model_history(client), first=None, second=None, send_later_ms=500.0)
    assert "PLS-NP-001" in failures(history)


@pytest.mark.parametrize("client", ["python", "cpp"])
def test_a_cpp_consumer_has_its_permits_when_its_subscribe_returns(client):
    history = model_history(client)
    assert "PLS-NP-001" in failures(altered(history, first=None, second=None))


def test_before_first_permits():
    assert non_persistent.before_first_permits(10.0, [10.0])
    assert not non_persistent.before_first_permits(10.5, [10.0])
    assert not non_persistent.before_first_permits(1.0, [None])  # C++: sent before the subscribe returned
    assert not non_persistent.before_first_permits(1.0, [10.0, None])  # one consumer with permits takes it
    assert not non_persistent.before_first_permits(1.0, [])  # no consumer: rule 1, not rule 6


def test_what_a_receipt_tells_of_maybe_absent_positions():
    due = {3: 10.0, 4: 11.0, 5: 30.0}

    def resolve(maybe, received, ordered=True, asked_until=12.0):
        return maybe_absent.resolve(maybe, received, ordered=ordered, asked_until=asked_until, due=due)

    # in order: a later message came, so the earlier maybe-absent ones are absent; it and the later ones present
    assert resolve({3, 4, 5}, 4) == ({3}, {3, 4, 5})
    # a message after all of them came: all absent
    assert resolve({3, 4}, 7) == ({3, 4}, {3, 4})
    # a message before them came: nothing learnt
    assert resolve({3, 4}, 1) == (frozenset(), frozenset())
    # nothing came: those already due are absent, the others may still come
    assert resolve({3, 4, 5}, None) == ({3, 4}, {3, 4})
    # several consumers share the messages: an earlier one may be with another consumer; only presence is learnt
    assert resolve({3, 4, 5}, 4, ordered=False) == (frozenset(), {4, 5})
    assert resolve({3, 4, 5}, None, ordered=False) == (frozenset(), frozenset())
