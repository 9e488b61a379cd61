"""Transactions: what a message produced in a transaction looks like to consumers, and which
operations an ended transaction refuses.

Pulsar part: broker ``apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/
transaction/buffer/impl/TopicTransactionBuffer.java`` (``maxReadPosition``: the dispatcher reads no
further than the position before the first message of the oldest transaction still ongoing on the
topic; ``appendBufferToTxn``, ``commitTxn`` / ``abortTxn`` write a commit or abort *marker* entry
to the topic), ``.../service/AbstractBaseDispatcher.java`` (``filterEntriesForConsumer``: entries
of an aborted transaction and marker entries are acked by the dispatcher and never sent),
``pulsar-transaction/coordinator/.../TransactionMetadataStore`` with the broker's
``TransactionTimeoutTrackerImpl`` (a transaction still open at its timeout is aborted);
Java client ``pulsar-client/.../transaction/TransactionImpl.java`` (``checkState``: a send, an
ack, a commit or an abort on a transaction that is not OPEN fails with
``TransactionCoordinatorClientException.InvalidTxnStatusException``; the client's own timer puts
the transaction in ``TIME_OUT`` at its timeout) and ``TransactionBuilderImpl`` (default timeout
60 s). Docs: ``apache/pulsar-site docs/txn-what.md``, ``docs/txn-how.md``.
Rule ids: PLS-TXN-001 .. PLS-TXN-011 (``reference_model/rules.py``).

The rules, for a topic whose log holds positions ``0 .. n-1``:
1. A message produced in a transaction is not delivered before the transaction commits
   (PLS-TXN-001); one produced in a transaction that aborted, or timed out, is never delivered
   (PLS-TXN-002).
2. The topic is readable up to, not including, the first position that belongs to a transaction
   still open; every later message waits for that transaction to end, whether it was produced in
   a transaction or not (PLS-TXN-003). Committed messages keep their log positions: they arrive in
   the order they were appended, among the other messages, not in commit order.
3. Once a transaction has committed, aborted or timed out, the client refuses to send, commit or
   abort with it: ``InvalidTxnStatus`` (PLS-TXN-004).
4. A transaction still open ``timeout_ms`` after it began is aborted by the broker (PLS-TXN-005):
   its messages are dropped as for an abort, and the messages it held back become readable.
5. The Python client (3.x, C++ core) has no API to begin a transaction (PLS-TXN-006).
Each commit or abort writes one marker entry to every topic (partition) the transaction produced
to, so the next message's entry id there is one higher than it would be otherwise. Live, broker
4.0.8 + Java client 4.0.8: ``a1`` (txn), ``n1``, ``a2`` (txn) at entries 0, 1, 2; nothing
delivered until the commit; then ``a1, n1, a2``; the commit marker took entry 3.

Acknowledgements (broker ``.../transaction/pendingack/impl/PendingAckHandleImpl.java``,
``PersistentSubscription#endTxn``):
6. A message acked individually in an open transaction is *pending*: it is not redelivered on that
   subscription while the transaction is open, whatever happens (redeliver_unacked, the consumer's
   close, a nack, an ack timeout) (PLS-TXN-007). The commit makes the ack final (PLS-TXN-008). An
   abort (or a timeout) undoes it: on Shared / Key_Shared the message is redelivered at once with
   its redelivery count one higher; on Exclusive / Failover the subscription rewinds to its first
   unacknowledged message, as a redeliver does (PLS-TXN-009). A cumulative ack in a transaction
   (Exclusive / Failover) is only a claim: nothing moves until the commit, so a rewind still
   redelivers what it covers, and an abort redelivers nothing. Live: ``x1`` acked in D, ``x0``
   acked plainly, D aborted: the Exclusive consumer got x1, x2, x3 again; a cumulative ack of x2 in
   D, then redeliver_unacked: x0, x1, x2 came again.
7. Acking in a transaction a message pending in another open one, or one acked already, fails
   with TransactionConflict (PLS-TXN-010); that transaction then cannot commit: the Java client
   answers TransactionHasOperationFailed and aborts it, the Go client holds it in its error state,
   refusing every later op with it, until the broker's timeout aborts it (PLS-TXN-011).
8. A cumulative ack in a transaction conflicts at or below the cursor's mark-delete position (the
   broker's: a pending individual ack does not move it), with another transaction's pending
   cumulative ack, or at or before the transaction's own, which a later one moves on; another
   transaction's pending individual acks are no conflict (PLS-TXN-010,
   ``PendingAckHandleImpl#cumulativeAcknowledgeMessage``).
9. An ack outside any transaction, or a committed cumulative one, deletes a message another
   transaction holds pending: that transaction's abort brings it nothing back, though an Exclusive
   or Failover subscription still rewinds (live 4.0.8, 5 Dec 2026).
A partitioned topic's partitions each follow these rules: a send is routed, then held by its
partition's buffer; an ack goes through the partition the message came from. A delayed message in
a transaction is both held until the commit and delayed.

Not modelled: a second ack of a message in the same transaction, a transactional ack of a message
the consumer does not hold, acks of batched messages in a transaction, batching, chunking, async
sends and non-persistent topics in transactions, the backlog and unacked counts of a topic with
transactions (markers are entries until the dispatcher acks them), transaction coordinator
failures, and the transaction buffer's snapshot and recovery after a broker restart.

Choices: a transaction is a frozen value; the broker (``reference_model/broker.py``) keeps one per
trace handle and asks these functions. Times are the trace's virtual milliseconds; the moments a
timeout takes effect are windows (``Span``), since the client's timer and the broker's timeout
tracker each fire somewhat after the deadline.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Mapping

from reference_model.rejections import Rejected
from reference_model.timing import Span

OPEN, COMMITTED, ABORTED, TIMED_OUT = "OPEN", "COMMITTED", "ABORTED", "TIME_OUT"
ENDED = (COMMITTED, ABORTED, TIMED_OUT)

# TransactionBuilderImpl: a transaction built without withTransactionTimeout times out after 60 s.
DEFAULT_TIMEOUT_MS = 60_000
# How long after the deadline the client's own timer may put the transaction in TIME_OUT (a
# HashedWheelTimer tick) and the broker's timeout tracker may abort it: the tracker checks every
# 100 ms (TransactionTimeoutTrackerImpl), then the abort writes its markers and pending-ack marks.
# Live (4.0.8): a message held back by a transaction with a 2 000 ms timeout was delivered 2 050 ms
# after the transaction began. Tentative bounds (1 s for the broker), widened by the run's slack.
CLIENT_TIMER_MS = 100.0
BROKER_TIMEOUT_TICK_MS = 1_000.0


@dataclass(frozen=True)
class Txn:
    """One transaction as the model follows it."""

    name: str
    opened: Span  # the new_txn op that began it
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    state: str = OPEN
    ended: Span | None = None  # when it committed, aborted or timed out
    produced: tuple[tuple[str, int], ...] = ()  # (topic full name, position), in send order
    # individual acks: (topic full name, subscription, position, consumer handle, the lowest and highest redelivery count
    # the broker kept for it then)
    acked: tuple[tuple[str, str, int, str, tuple[int, int]], ...] = ()
    # cumulative acks: (topic full name, subscription, (the position acked up to,))
    cumulative: tuple[tuple[str, str, tuple[int, ...]], ...] = ()
    failed: bool = False  # an op in it failed (a conflicting ack): it can no longer commit (PLS-TXN-011)


def begin(name: str, at: Span, timeout_ms: int | None) -> Txn:
    return Txn(name, at, DEFAULT_TIMEOUT_MS if timeout_ms is None else int(timeout_ms))


def client_timeout(txn: Txn, slack_ms: float = 0.0) -> Span:
    """When the client's timer puts ``txn`` in TIME_OUT (PLS-TXN-004/005)."""
    return Span(txn.opened.start + txn.timeout_ms, txn.opened.end + txn.timeout_ms + CLIENT_TIMER_MS + slack_ms)


def broker_timeout(txn: Txn, slack_ms: float = 0.0) -> Span:
    """When the broker aborts ``txn`` if it is still open (PLS-TXN-005)."""
    return Span(txn.opened.start + txn.timeout_ms, txn.opened.end + txn.timeout_ms + BROKER_TIMEOUT_TICK_MS + slack_ms)


def produced(txn: Txn, topic: str, pos: int) -> Txn:
    return replace(txn, produced=txn.produced + ((topic, pos),))


def acked(txn: Txn, topic: str, subscription: str, pos: int, handle: str, counts: tuple[int, int]) -> Txn:
    """``txn`` with an individual ack of ``pos`` by ``handle`` added; ``counts``: the lowest and highest redelivery count
    the broker keeps for it then (an abort redelivers it with one more, PLS-TXN-009)."""
    return replace(txn, acked=txn.acked + ((topic, subscription, pos, handle, counts),))


def acked_cumulatively(txn: Txn, topic: str, subscription: str, positions: Iterable[int]) -> Txn:
    return replace(txn, cumulative=txn.cumulative + ((topic, subscription, tuple(positions)),))


def failed(txn: Txn) -> Txn:
    return replace(txn, failed=True)


def ack_refusal(txn: Txn, label: str, *, pending_in: str | None, already_acked: bool) -> Rejected | None:
    """The refusal of an ack of ``label`` in ``txn`` on one subscription (PLS-TXN-010).

    Let ``label`` be pending in another open transaction there (acked in it, not yet committed or
    aborted), or acked already (outside a transaction, or by one that committed). Then the broker
    refuses the ack with TransactionConflict, and ``txn`` can no longer commit (PLS-TXN-011).
    """
    if pending_in is not None and pending_in != txn.name:
        return Rejected("TransactionConflict", "PLS-TXN-010",
                        f"{label} is acked in transaction {pending_in!r}, still open, so acking it in {txn.name!r} conflicts")
    if pending_in is None and already_acked:
        return Rejected("TransactionConflict", "PLS-TXN-010", f"{label} is acked already, so acking it in {txn.name!r} conflicts")
    return None


def commit_refusal(txn: Txn) -> Rejected | None:
    """PLS-TXN-011: a transaction one of whose ops failed cannot commit; the Java client aborts it."""
    if txn.failed:
        return Rejected("TransactionHasOperationFailed", "PLS-TXN-011",
                        f"an op in transaction {txn.name!r} failed (a conflicting ack), so its commit fails and the client aborts it")
    return None


def end(txn: Txn, state: str, at: Span) -> Txn:
    if state not in ENDED:
        raise ValueError(f"a transaction ends COMMITTED, ABORTED or TIME_OUT, not {state!r}")
    return replace(txn, state=state, ended=at)


def refusal(txn: Txn, op: str, at: Span, slack_ms: float = 0.0) -> Rejected | None:
    """The refusal of ``op`` (send, commit_txn, abort_txn with ``txn``) during ``at``, if any.

    Let the transaction have ended (committed or aborted by the application, or timed out by the
    client's timer). Then the client refuses the op with InvalidTxnStatus (PLS-TXN-004). While the
    client's timer may or may not have fired, the refusal is predicted but not certain.
    """
    if txn.state in (COMMITTED, ABORTED):
        return Rejected("InvalidTxnStatus", "PLS-TXN-004",
                        f"transaction {txn.name!r} is {txn.state} (since {txn.ended.end:.0f} ms), so {op} with it is refused")
    deadline = client_timeout(txn, slack_ms)
    if at.end < deadline.start:
        return None
    certain = at.start >= deadline.end
    return Rejected("InvalidTxnStatus", "PLS-TXN-004",
                    f"transaction {txn.name!r} began at {txn.opened.start:.0f} ms with a timeout of {txn.timeout_ms} ms, so the "
                    f"client's timer put it in TIME_OUT by {deadline.end:.0f} ms and {op} with it is refused", certain=certain)


def readable_end(txn_of: Mapping[int, str], txns: Mapping[str, Txn], n: int) -> int:
    """How many positions of a topic with ``n`` entries a dispatcher may read (PLS-TXN-003): up to
    the first position produced in a transaction still open."""
    open_positions = [pos for pos, name in txn_of.items() if txns[name].state == OPEN]
    return min(open_positions, default=n)


def aborted_positions(txn_of: Mapping[int, str], txns: Mapping[str, Txn]) -> set[int]:
    """Positions produced in a transaction that aborted or timed out: never delivered (PLS-TXN-002)."""
    return {pos for pos, name in txn_of.items() if txns[name].state in (ABORTED, TIMED_OUT)}


def newly_readable(before: int, after: int) -> range:
    """The positions a transaction's end made readable (PLS-TXN-003)."""
    return range(before, max(before, after))


def topics_written(txn: Txn) -> Iterable[str]:
    """The topics that get a commit or abort marker entry when ``txn`` ends, in first-send order."""
    return dict.fromkeys(topic for topic, _ in txn.produced)
