"""Key_Shared histories recorded live on several broker releases (Python client), judged offline.

Two kinds, no broker needed:

- the selector profile of each release (``reference_model.key_shared.RELEASE_SPANS``): consumer stats
  keyHashRanges recorded on releases whose ring differs (2.10.5 and 3.1.0 ``name+i``, 3.2.2 ``name\\0i``)
  PASS only with that release's profile;
- upstream bugs (issue 14): the regression case FAILs on an affected release on exactly its rule and
  PASSes on a fixed one. keyshared-sticky-gap: apache/pulsar PR #24730 (KD-201), affected 4.0.1, fixed
  4.0.7. keyshared-incompatible-policy: PR #23449 (KD-202), affected 4.0.0, fixed 4.0.1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dataclasses import replace

from conformance.checker import check
from conformance.trace import load, replace_header

HERE = Path(__file__).parent / "live_histories"

# history -> (rules that must FAIL, why)
CASES = {
    "live-2.10.5-keyshared-ring-reported-ranges": (set(), "2.10.5: the name+i ring with sorted-list collisions"),
    "live-3.1.0-keyshared-ring-reported-ranges": (set(), "3.1.0: the name+i ring (before #22053)"),
    "live-3.2.2-keyshared-ring-reported-ranges": (set(), "3.2.2: the name\\0i ring (#22053, before #23327)"),
    "live-4.0.1-keyshared-sticky-gap": ({"PLS-KEYSHARED-005"},
                                        "4.0.1 (before #24730): the STICKY consumer got m2 from the gap between its ranges"),
    "live-4.0.7-keyshared-sticky-gap": (set(), "4.0.7 (#24730): m2 in the gap stays in the backlog"),
    "live-4.0.0-keyshared-incompatible-policy": ({"PLS-KEYSHARED-008"},
                                                 "4.0.0 (before #23449): STICKY and out-of-order newcomers accepted"),
    "live-4.0.1-keyshared-incompatible-policy": (set(), "4.0.1 (#23449): both refused with ConsumerBusy"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_keyshared_release_history_verdicts(name):
    must_fail, why = CASES[name]
    report = check(load(HERE / f"{name}.jsonl"))
    failed = {v.rule_id for v in report.failures()}
    assert failed == must_fail, f"{why}\n{report.summary()}"


@pytest.mark.parametrize("name,other", [("live-2.10.5-keyshared-ring-reported-ranges", "3.3.6"),
                                        ("live-3.2.2-keyshared-ring-reported-ranges", "3.1.0")])
def test_ring_history_fails_when_judged_as_another_release(name, other):
    """Each recording PASSes with its own release's profile only: judged as ``other``'s broker, the
    reported ranges break PLS-KEYSHARED-003 (so the profiles of RELEASE_SPANS are told apart live)."""
    history = load(HERE / f"{name}.jsonl")
    relabelled = replace(history, header=replace_header(history.header, broker_version=other))
    assert "PLS-KEYSHARED-003" in {v.rule_id for v in check(relabelled).failures()}


def _dropped(h, step: int):
    """``h`` told with the receive at ``step`` waiting its whole timeout for nothing (later events move with it)."""
    from conformance.trace import History, Outcome
    events = list(h.events)
    i = next(i for i, e in enumerate(events) if e.step == step)
    wait = events[i].op.args["timeout_ms"]
    events[i] = replace(events[i], outcome=Outcome.ok({"message": None}), t_end_ms=events[i].t_start_ms + wait)
    for j in range(i + 1, len(events)):
        events[j] = replace(events[j], t_start_ms=events[j].t_start_ms + wait, t_end_ms=events[j].t_end_ms + wait)
    return History(h.header, tuple(events))


def test_a_sticky_consumer_alone_is_owed_the_keys_of_its_ranges():
    """The random lies of 6 Dec 2026 (docs/mutation-score.md): live 4.0.7, st-gap alone on the STICKY subscription.
    m3 (key-24, slot in its range [20000, 29999]) is owed to it, so a receive that waits a second for nothing while
    m3 is there loses it (PLS-KEYSHARED-007, PLS-SHARED-001), even though m2 (key-15, slot in the gap) is owed to no
    one and the last receive, empty, is right."""
    h = load(HERE / "live-4.0.7-keyshared-sticky-gap.jsonl")
    assert check(h).ok
    found = {(v.rule_id, v.anomaly, v.step) for v in check(_dropped(h, 7)).failures()}
    assert ("PLS-KEYSHARED-007", "lost-message", 7) in found and ("PLS-SHARED-001", "lost-message", 7) in found, found
