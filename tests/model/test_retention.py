"""Chapter retention.py: TTL expiry and retention (PLS-TTL-001..003, PLS-RETENTION-001/002)."""

from __future__ import annotations

import pytest

from reference_model import batching, retention


# ---------------------------------------------------------------- PLS-TTL-*, PLS-RETENTION-*


def test_ttl_expires_a_prefix_and_keeps_younger_messages():
    backlog = (retention.Stored("m0", 0), retention.Stored("m1", 10), retention.Stored("m2", 20), retention.Stored("fresh", 1300))
    assert retention.expire(backlog, 1350, 1) == (retention.Stored("fresh", 1300),)
    assert retention.expire(backlog, 1000, 1) == backlog  # nothing older than 1 s yet (now > publish + ttl)
    assert retention.expire(backlog, 1001, 1) == backlog[1:]
    assert retention.expire(backlog, 10_000, 0) == backlog  # TTL 0: off


def test_retention_answers():
    assert retention.acked_may_be_read(retention_covers=True) == frozenset({True})
    assert retention.acked_may_be_read(retention_covers=False) == frozenset({True, False})
    with pytest.raises(ValueError):
        batching.backlog_entries([1, 2], [set()])
