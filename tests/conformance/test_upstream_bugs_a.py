"""Upstream Apache Pulsar bugs fixed between runnable releases (issue 14, item 4), helper A's: per-consumer
unacked accounting (reference_model/unacked.py). One history recorded live on an affected release and one
on a fixed release per bug, judged offline.

The affected release's history must FAIL exactly the rule the bug breaks, and that FAIL must be the known
deviation registered for it (conformance/deviations.d/unacked.yaml); the fixed release's history must
PASS. No broker is needed: the histories are data.
"""

from __future__ import annotations

import pytest

from upstream_bug_histories import assert_pinned_verdicts

# history -> (rules that must FAIL, the known deviation excusing them or None, why)
CASES = {
    "live-4.0.1-unacked-limit-one-resumes": (
        {"PLS-UNACKED-001"}, "KD-101",
        "apache/pulsar PR #23796: with maxUnackedMessagesPerConsumer 1 the ack of m0 leaves c1 blocked; m1 never comes"),
    "live-4.2.4-unacked-limit-one-resumes": (set(), None, "fixed (3.3.5, 4.0.3): the ack of m0 unblocks c1 and m1 comes"),
    "live-3.0.2-unacked-non-persistent-zero": (
        {"PLS-UNACKED-003"}, "KD-102",
        "apache/pulsar PR #21592: a non-persistent Shared consumer's unackedMessages counts every message received"),
    "live-3.0.7-unacked-non-persistent-zero": (set(), None, "fixed (3.0.3): the count is 0"),
    "live-4.0.1-unacked-expired-leave-count": (
        {"PLS-UNACKED-002"}, "KD-103",
        "apache/pulsar PR #25581: the expired messages c1 held stay in its unackedMessages (5, then 6)"),
    "live-4.2.4-unacked-expired-leave-count": (set(), None, "fixed (4.2.2): 0 after the expiry, 1 after m5"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_upstream_bug_history_verdicts(name):
    assert_pinned_verdicts(name, *CASES[name])
