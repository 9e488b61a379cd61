"""Chapter ids.py: message ids, their -1 conventions and their order (PLS-MSGID-001/002)."""

from __future__ import annotations

from reference_model.ids import EARLIEST, LATEST, MessageId, id_conventions_violation


# ---------------------------------------------------------------- PLS-MSGID-001/002


def test_message_id_ordering_ignores_partition():
    a, b = MessageId(3, 0, 1, -1), MessageId(3, 0, 2, -1)
    assert not a.precedes(b) and not b.precedes(a) and a != b
    assert MessageId(3, 0).precedes(MessageId(3, 1))
    assert MessageId(3, 5).precedes(MessageId(4, 0))
    assert MessageId(3, 0, -1, -1).precedes(MessageId(3, 0, -1, 0))  # non-batched before index 0
    assert EARLIEST.to_list() == [-1, -1, -1, -1] and LATEST.partition == -1
    assert str(MessageId(3, 0)) == "(3,0,-1,-1)"
    assert MessageId.from_list([3, 0, -1, -1]) == MessageId(3, 0)


def test_id_conventions():
    assert id_conventions_violation([3, 0, -1, -1], partitioned=False, batched=False) is None
    assert "partition" in id_conventions_violation([3, 0, 0, -1], partitioned=False, batched=False)
    assert "batch_index" in id_conventions_violation([3, 0, -1, 0], partitioned=False, batched=False)
    assert id_conventions_violation([3, 0, -1, 0], partitioned=False, batched=True) is None
