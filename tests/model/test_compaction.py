"""Chapter compaction.py: the compacted view and who may read it (PLS-COMPACT-001, -003..-006)."""

from __future__ import annotations

import pytest

from reference_model import compaction


# ---------------------------------------------------------------- PLS-COMPACT-*


def _probe_messages():
    K = compaction.KeyedMessage
    return (K("a1", "a", b"a1"), K("b1", "b", b"b1"), K("a2", "a", b"a2"), K("nokey", None, b"nokey"),
            K("c1", "c", b"c1"), K("b-empty", "b", b""), K("c-null", "c", b"", null_value=True), K("d1", "d", b"d1"))


def test_a_tombstone_deletes_its_key_as_the_docs_say():
    # PLS-COMPACT-006: b1 then b'' and c1 then a null value leave no message of b or c (live 3.3.6)
    view = compaction.compacted_view(_probe_messages())
    assert [m.name for m in view] == ["a2", "d1"]
    view = compaction.compacted_view(_probe_messages(), retain_null_key=True)
    assert [m.name for m in view] == ["a2", "nokey", "d1"]


def test_the_4_0_x_bug_keeps_non_batched_tombstones():
    # KD-003 (apache/pulsar PR #23285, fixed by #25817): what brokers 4.0.0-4.0.10 show a C++/Python producer's tombstones
    view = compaction.compacted_view(_probe_messages(), tombstones_kept=True)
    assert [m.name for m in view] == ["a2", "b-empty", "c-null", "d1"]


def test_a_later_value_revives_a_deleted_key():
    K = compaction.KeyedMessage
    msgs = (K("b1", "b", b"b1"), K("b-empty", "b", b""), K("b2", "b", b"b2"))
    assert [m.name for m in compaction.compacted_view(msgs)] == ["b2"]


def test_read_compacted_then_tail():
    msgs = _probe_messages() + (compaction.KeyedMessage("a3", "a", b"a3"),)
    assert [m.name for m in compaction.read_compacted(msgs, horizon=7)] == ["a2", "d1", "a3"]
    with pytest.raises(ValueError):
        compaction.read_compacted(msgs, horizon=9)


@pytest.mark.parametrize("sub,persistent,ok", [
    ("Exclusive", True, True), ("Failover", True, True), ("Shared", True, False), ("Key_Shared", True, False),
    ("Exclusive", False, False)])
def test_read_compacted_allowed_only_on_exclusive_failover_persistent(sub, persistent, ok):
    got = compaction.check_read_compacted(sub, persistent=persistent)
    assert (got is None) is ok
    if not ok:
        assert got.error == "InvalidConfiguration" and got.rule == "PLS-COMPACT-005"
