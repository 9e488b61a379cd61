"""Upstream Apache Pulsar bugs fixed between runnable releases (issue 14, item 4), helper C's: one history
recorded live on an affected release and one on a fixed release per bug, judged offline (no broker).
The deviations are in conformance/deviations.d/helper-c-upstream.yaml.
"""

from __future__ import annotations

import pytest

from upstream_bug_histories import assert_pinned_verdicts

# history -> (rules that must FAIL, the known deviation excusing them or None, why)
CASES = {
    "live-4.0.1-access-wait-for-exclusive-after-shared": (
        {"PLS-ACCESS-005"}, "KD-301",
        "apache/pulsar PR #24516: the WaitForExclusive producer queued behind a Shared producer stays pending after "
        "that producer closes; the send on it is refused with Timeout"),
    "live-4.0.8-access-wait-for-exclusive-after-shared": (
        set(), None, "fixed (4.0.6+): the waiter gets the topic when the last Shared producer closes and sends"),
    "live-3.0.2-compact-acked-not-redelivered-after-resubscribe": (
        {"PLS-ACK-002"}, "KD-303",
        "apache/pulsar PR #21187: a read_compacted consumer resubscribing with Earliest gets the acked compacted view again"),
    "live-3.0.7-compact-acked-not-redelivered-after-resubscribe": (
        set(), None, "fixed (3.0.3+): the consumer resumes after its cumulative ack and receives nothing"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_upstream_bug_history_verdicts(name):
    assert_pinned_verdicts(name, *CASES[name])
