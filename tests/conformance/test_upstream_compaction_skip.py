"""A compaction skipped on a topic whose transaction buffer is still recovering (KD-205), judged offline on
histories recorded live (no broker): 4.2.4 (Python and Java clients) reads the superseded value and FAILs
PLS-COMPACT-001, excused by KD-205; 4.0.8, which lacks apache/pulsar PR #24449's check, compacts and PASSes.
The deviation is in conformance/deviations.d/compaction.yaml; the case is compact-right-after-first-sends.
"""

from __future__ import annotations

import pytest

from conformance.deviations import known_deviation
from upstream_bug_histories import assert_pinned_verdicts

# history -> (rules that must FAIL, the known deviation excusing them or None, why)
CASES = {
    "live-4.2.4-compact-right-after-first-sends": (
        {"PLS-COMPACT-001"}, "KD-205",
        "apache/pulsar PR #24449 (4.1.0): the trigger found nothing to compact while the transaction buffer "
        "recovered; the compacted reader read m1 (superseded by m2)"),
    "live-4.2.4-java-compact-right-after-first-sends": (
        {"PLS-COMPACT-001"}, "KD-205", "the same skip seen through the Java client: r1 read m1"),
    "live-4.0.8-compact-right-after-first-sends": (
        set(), None, "4.0.8 has no such check: the compaction ran and r1 read m2 only"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compaction_skip_history_verdicts(name):
    assert_pinned_verdicts(name, *CASES[name])


@pytest.mark.parametrize("release, excused", [("4.0.8", False), ("4.0.7", False), ("4.1.0", True), ("4.2.4", True),
                                              ("5.0.0-M1", True)])
def test_the_deviation_covers_the_releases_with_the_check(release, excused):
    """KD-205's range starts where PR #24449 landed (4.1.0); a 4.0.x release compacts and is not excused."""
    found = known_deviation("compact-right-after-first-sends", release)
    assert (found is not None and found.id == "KD-205") is excused
