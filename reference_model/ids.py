"""Message ids: what they are made of and how they are ordered.

Pulsar part: ``MessageId`` (C++ ``lib/MessageIdImpl.h``, ``lib/MessageId.cc``; Python
``pulsar.MessageId``).
Rule ids: PLS-MSGID-001 (fields and -1 conventions), PLS-MSGID-002 (ordering within a topic).

A message id is ``(ledger, entry, partition, batch_index)``:
- ``ledger`` and ``entry`` locate the stored entry in BookKeeper; entry ids grow by one per
  entry within a ledger, and ledger ids are chosen by the broker (opaque, but increasing).
- ``partition`` is -1 on a non-partitioned topic (PLS-MSGID-001).
- ``batch_index`` is -1 for a message that was not batched (PLS-MSGID-001).

Ordering (C++/Python ``<``) is lexicographic on ``(ledger, entry, batch_index)``; the partition
is *ignored* by ``<`` but part of ``==`` (PLS-MSGID-002), so ids from two partitions may be
neither less, greater nor equal.

Not modelled: chunked-message ids, batch size, the ack-grouping tracker's order (which treats
batch_index -1 as +infinity), ledger rollover (the model keeps one ledger per topic).
Choices: the model numbers ledgers per topic in creation order starting at ``FIRST_LEDGER``.
"""

from __future__ import annotations

from dataclasses import dataclass

INT64_MAX = 2**63 - 1
FIRST_LEDGER = 1


@dataclass(frozen=True)
class MessageId:
    ledger: int
    entry: int
    partition: int = -1
    batch_index: int = -1

    def sort_key(self) -> tuple[int, int, int]:
        """The key C++ ``operator<`` compares: partition is not part of it (PLS-MSGID-002)."""
        return (self.ledger, self.entry, self.batch_index)

    def precedes(self, other: "MessageId") -> bool:
        """C++ ``self < other``: a non-batched id (-1) sorts before index 0 of the same entry."""
        return self.sort_key() < other.sort_key()

    def to_list(self) -> list[int]:
        """The trace format's ``[ledger, entry, partition, batch_index]``."""
        return [self.ledger, self.entry, self.partition, self.batch_index]

    @staticmethod
    def from_list(values) -> "MessageId":
        ledger, entry, partition, batch_index = (int(v) for v in values)
        return MessageId(ledger, entry, partition, batch_index)

    def __str__(self) -> str:  # C++/Python str(id)
        return f"({self.ledger},{self.entry},{self.partition},{self.batch_index})"


EARLIEST = MessageId(-1, -1, -1, -1)
LATEST = MessageId(INT64_MAX, INT64_MAX, -1, -1)


def id_conventions_violation(values, *, partitioned: bool, batched: bool) -> str | None:
    """Why an observed id breaks PLS-MSGID-001, or None if it keeps the -1 conventions."""
    ledger, entry, partition, batch_index = (int(v) for v in values)
    if not partitioned and partition != -1:
        return f"partition is {partition} on a non-partitioned topic; expected -1"
    if partitioned and partition < 0:
        return f"partition is {partition} on a partitioned topic; expected >= 0"
    if not batched and batch_index != -1:
        return f"batch_index is {batch_index} for a message sent without batching; expected -1"
    if ledger < 0 or entry < 0:
        return f"ledger/entry ({ledger},{entry}) negative for a stored message"
    return None
