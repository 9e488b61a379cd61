"""The durable cursor of a subscription: which messages are acknowledged.

Pulsar part: ``ManagedCursor`` behind ``PersistentSubscription`` (mark-delete position plus the
"individually deleted messages" ranges).
Rule ids: PLS-ACK-001 (an acked message is never delivered again), PLS-ACK-002 (cumulative ack
acks everything up to and including M), PLS-ACK-004 (acking an acked message is a no-op),
PLS-SUB-005 (a reconnecting consumer resumes at the first unacked message, skipping holes),
PLS-BACKLOG-001 (backlog = entries not yet acked), PLS-SEEK-001/002/003 (seek resets it).

Positions are entry indexes within one topic (0, 1, 2, ...), in publish order. The cursor keeps:
- ``mark_delete``: every position ``<= mark_delete`` is acked (-1: none);
- ``holes_acked``: positions after ``mark_delete`` acked individually.
When the acked set becomes contiguous, ``mark_delete`` moves forward (as the broker does).

Not modelled: batch-index acks (batching is not modelled), ack persistence lag in BookKeeper.
Choices: mutable for speed; every method says what it changed.
"""

from __future__ import annotations

from typing import Sequence


class Cursor:
    __slots__ = ("mark_delete", "holes_acked")

    def __init__(self, mark_delete: int = -1):
        self.mark_delete = mark_delete
        self.holes_acked: set[int] = set()

    def is_acked(self, pos: int) -> bool:
        return pos <= self.mark_delete or pos in self.holes_acked

    def _compact(self) -> None:
        while self.mark_delete + 1 in self.holes_acked:
            self.mark_delete += 1
            self.holes_acked.discard(self.mark_delete)

    def ack(self, pos: int) -> bool:
        """Individual ack; True if ``pos`` was not acked before (PLS-ACK-004: else a no-op)."""
        if self.is_acked(pos):
            return False
        self.holes_acked.add(pos)
        self._compact()
        return True

    def ack_cumulative(self, pos: int) -> int:
        """Cumulative ack (PLS-ACK-002); returns how many positions became acked."""
        if pos <= self.mark_delete:
            return 0
        newly = (pos - self.mark_delete) - sum(1 for p in self.holes_acked if p <= pos)
        self.holes_acked = {p for p in self.holes_acked if p > pos}
        self.mark_delete = pos
        self._compact()
        return newly

    def unack(self, pos: int) -> bool:
        """Undo the ack of ``pos`` (a transaction that acked it aborted, PLS-TXN-009); the acks of
        other positions stay. True if ``pos`` was acked."""
        if not self.is_acked(pos):
            return False
        if pos in self.holes_acked:
            self.holes_acked.discard(pos)
            return True
        # pos is at or before the mark-delete position: it moves back before pos
        self.holes_acked |= set(range(pos + 1, self.mark_delete + 1))
        self.mark_delete = pos - 1
        return True

    def snapshot(self) -> tuple[int, frozenset[int]]:
        """What is acked now, for ``acked_since``: O(holes), not O(positions)."""
        return self.mark_delete, frozenset(self.holes_acked)

    def acked_since(self, before: tuple[int, frozenset[int]], end: int) -> set[int]:
        """The positions ``< end`` acked now that were not when ``before`` (a ``snapshot``) was taken."""
        mark, holes = before
        newly = {p for p in range(mark + 1, min(self.mark_delete + 1, end)) if p not in holes}
        newly.update(p for p in self.holes_acked if p < end and p > mark and p not in holes)
        return newly

    def first_unacked(self, start: int = 0) -> int:
        """The first position ``>= start`` not acked (may equal the end of the topic)."""
        p = max(start, self.mark_delete + 1)
        holes = self.holes_acked
        while p in holes:
            p += 1
        return p

    def reset(self, pos: int) -> None:
        """Seek: the next position to deliver is ``pos``; acks at or after it are forgotten."""
        self.mark_delete = pos - 1
        self.holes_acked = set()


def position_by_publish_time(publish_times: Sequence[int], t: int) -> int:
    """PLS-SEEK-002/004: where a reset to publish time ``t`` puts the cursor: the first position whose publish time
    is at or after ``t`` (``len(publish_times)`` when none is). The broker's ``PersistentMessageFinder`` finds the
    newest entry published before ``t`` (``MessageImpl.isEntryPublishedEarlierThan``) and resets to the next one;
    publish times are in position order, so both read the same."""
    return next((pos for pos, published in enumerate(publish_times) if published >= t), len(publish_times))
