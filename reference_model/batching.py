"""Batching: how a producer groups messages into entries, and what comes back after a redelivery.

Pulsar part: the C++ producer's batch containers (``apache/pulsar-client-cpp
lib/BatchMessageContainerBase.h#hasEnoughSpace/isFull``, ``lib/BatchMessageContainer.cc``,
``lib/BatchMessageKeyBasedContainer.cc``, ``lib/ProducerImpl.cc#sendAsyncWithStatsUpdate``
and its batch timer); the consumer's batch handling (``lib/ConsumerImpl.cc``
``receiveIndividualMessagesFromBatch`` skips indexes set in the broker's ack set;
``lib/BatchMessageAcker.h`` sends the entry ack only when every index is acked;
``lib/NegativeAcksTracker.cc`` nacks the whole entry); the broker's batch index ack
(``acknowledgmentAtBatchIndexLevelEnabled``, ``.../service/Consumer.java``).
Rule ids: PLS-BATCH-001 .. PLS-BATCH-007, PLS-BACKLOG-001.

Producer (PLS-BATCH-002), for each message ``m`` of ``len(m)`` payload bytes:
1. If ``m`` is delayed it is not batched at all: it is sent alone, at once (PLS-DELAY-006). The
   C++ client leaves the open batch open, so ``m`` is written ahead of it
   (``ProducerImpl::sendAsyncWithStatsUpdate`` sends a message ``canAddToBatch`` refuses without
   touching the container); the Java client sends the open batch first
   (``ProducerImpl#processOpSendMsg`` calls ``batchMessageAndSend`` before a non-batched message).
   Measured on 4.0.8, 2026-11-27: async m1, m2 (a full batch of 2), m3, then a delayed m4: C++
   writes m1+m2, m4, m3; Java m1+m2, m3, m4.
2. If the open batch has no room (``count >= max_messages`` or ``bytes + len(m) > max_bytes``),
   send the open batch first.
3. Add ``m``; if it is the first message of a batch, start the ``max_publish_delay`` timer.
4. If the batch is now full (``count >= max_messages`` or ``bytes >= max_bytes``), send it.
5. When the timer fires, or on ``flush()``, send the open batch.
KeyBased (PLS-BATCH-003): one sub-batch per key (ordering key if set, else partition key; keyless
messages share the ``""`` sub-batch); room and fullness are counted over all sub-batches
together; sending writes one entry per sub-batch, in order of each sub-batch's first sequence id.
The Java client (PLS-BATCH-003 too, apache/pulsar pulsar-client
``.../impl/BatchMessageKeyBasedContainer.java#createOpSendMsgs``) first sets each sub-batch's
lowest sequence id to its highest, then sorts: its entries go out in order of each sub-batch's
*last* message; and it keys an ordering key by its Base64 text, apart from partition keys.

Ids (PLS-BATCH-001): the messages of one entry get ``(ledger, entry, partition, i)`` for
``i = 0 .. n-1`` in the order they were added.

Consumer (PLS-BATCH-004/005/006): an entry is acked at the broker when all its indexes are acked.
When the entry is redelivered (nack of any of its messages, ack timeout, consumer close), the
client gets the whole entry again and hands over:
- without batch index ack: every index, the acked ones too (PLS-BATCH-004);
- with batch index ack on both broker and consumer: only the indexes not acked (PLS-BATCH-005).
A nack of one message redelivers the whole entry (PLS-BATCH-006). The backlog counts entries,
not messages (PLS-BACKLOG-001). Python's default is ``batching_enabled=False`` (PLS-BATCH-007).

Not modelled: the byte size the C++ container adds per message (it counts payload bytes only),
compression, the memory limit and queue-full flush, partitioned producers, cumulative ack
inside a batch (C++ acks the previous entry), chunking (a batching producer never chunks).
Choices: timers and flushes are explicit ``Flush`` items in the input; entries are numbered
from ``first_entry`` in the order they are sent.
"""

from __future__ import annotations

from dataclasses import dataclass

from reference_model.ids import MessageId

# pulsar-client-python 3.13 create_producer defaults.
PY_DEFAULT_BATCHING_ENABLED = False
DEFAULT_MAX_MESSAGES = 1000
DEFAULT_MAX_BYTES = 131_072
DEFAULT_MAX_PUBLISH_DELAY_MS = 10


@dataclass(frozen=True)
class BatchConfig:
    max_messages: int = DEFAULT_MAX_MESSAGES
    max_bytes: int = DEFAULT_MAX_BYTES
    key_based: bool = False
    key_order: str = "first"  # PLS-BATCH-003: "first" (C++) or "last" (Java)
    delayed_sends_open_batch: bool = False  # step 1: the open batch goes before a delayed message (Java), or after (C++)

    def __post_init__(self) -> None:
        if self.max_messages < 1 or self.max_bytes < 1:
            raise ValueError(f"batch limits must be positive, got {self.max_messages=}, {self.max_bytes=}")
        if self.key_order not in ("first", "last"):
            raise ValueError(f"key_order must be 'first' (C++) or 'last' (Java), got {self.key_order!r}")


@dataclass(frozen=True)
class Pending:
    """A message handed to ``send_async``: its payload size, keys, and whether it is delayed."""

    size: int
    partition_key: str | None = None
    ordering_key: str | None = None
    delayed: bool = False

    @property
    def batch_key(self) -> str:
        """``BatchMessageKeyBasedContainer`` getKey: ordering key if set, else partition key ('' if none)."""
        return self.ordering_key if self.ordering_key else (self.partition_key or "")

    @property
    def java_batch_key(self) -> tuple[str, str] | None:
        """Java getKey: Base64 of the ordering key if set, else the partition key (None if none);
        tagged so an ordering key never shares a batch with an equal partition key text."""
        if self.ordering_key:
            return ("ordering", self.ordering_key)
        return None if self.partition_key is None else ("partition", self.partition_key)


@dataclass(frozen=True)
class Flush:
    """The batch timer fired or the application called ``flush()``."""


def plan_entries(items: list[Pending | Flush], config: BatchConfig, *, final_flush: bool = True) -> tuple[tuple[int, ...], ...]:
    """Steps 1-5: the entries written, each a tuple of indexes into ``items`` (Flush items excluded).

    The input ends with an implicit flush; with ``final_flush=False`` it does not, and the
    messages still in the open batch are in no entry (``open_batch``).
    """
    entries: list[tuple[int, ...]] = []
    open_batches: dict[object, list[int]] = {}  # key -> indexes (one key, "", when not key based)
    first_seq: dict[object, int] = {}
    count = size = 0

    def send_open() -> None:
        nonlocal count, size
        # PLS-BATCH-003: by each sub-batch's first message (C++), or by its last (Java)
        order = (lambda k: first_seq[k]) if config.key_order == "first" else (lambda k: open_batches[k][-1])
        for key in sorted(open_batches, key=order):
            entries.append(tuple(open_batches[key]))
        open_batches.clear()
        first_seq.clear()
        count = size = 0

    for index, item in enumerate(items):
        if isinstance(item, Flush):
            send_open()
            continue
        if item.delayed:  # step 1: sent alone; the open batch goes first (Java) or stays open (C++)
            if config.delayed_sends_open_batch:
                send_open()
            entries.append((index,))
            continue
        if not (count < config.max_messages and size + item.size <= config.max_bytes):  # step 2
            send_open()
        key: object = (item.batch_key if config.key_order == "first" else item.java_batch_key) if config.key_based else ""
        open_batches.setdefault(key, []).append(index)  # step 3
        first_seq.setdefault(key, index)
        count += 1
        size += item.size
        if count >= config.max_messages or size >= config.max_bytes:  # step 4
            send_open()
    if final_flush:
        send_open()  # step 5
    return tuple(entries)


def open_batch(items: list[Pending | Flush], config: BatchConfig) -> tuple[int, ...]:
    """The indexes of ``items`` still in the open batch after them (no flush, no timer): what the
    client holds back while the entries ``plan_entries(..., final_flush=False)`` were written."""
    written = {i for entry in plan_entries(items, config, final_flush=False) for i in entry}
    return tuple(i for i, item in enumerate(items) if isinstance(item, Pending) and i not in written)


def assign_ids(entries: tuple[tuple[int, ...], ...], *, ledger: int, first_entry: int = 0, partition: int = -1,
               single_messages: frozenset[int] = frozenset()) -> dict[int, MessageId]:
    """PLS-BATCH-001: message index -> id. Entries in ``single_messages`` (delayed, sent alone) get batch index -1."""
    ids: dict[int, MessageId] = {}
    for offset, entry in enumerate(entries):
        for batch_index, message in enumerate(entry):
            bi = -1 if (len(entry) == 1 and message in single_messages) else batch_index
            ids[message] = MessageId(ledger, first_entry + offset, partition, bi)
    return ids


# --------------------------------------------------------------------------- consumer side


def entry_acked(batch_size: int, acked_indexes: frozenset[int] | set[int]) -> bool:
    """The broker deletes the entry only once every index is acked."""
    return set(range(batch_size)) <= set(acked_indexes)


def redelivered_indexes(batch_size: int, acked_indexes: frozenset[int] | set[int], *, batch_index_ack: bool) -> tuple[int, ...]:
    """PLS-BATCH-004/005: the indexes the application gets again when the entry is redelivered.

    ``batch_index_ack`` is true only if both the broker (``acknowledgmentAtBatchIndexLevelEnabled``)
    and the consumer (``batch_index_ack_enabled``) have it on.
    """
    if entry_acked(batch_size, acked_indexes):
        return ()
    if batch_index_ack:
        return tuple(i for i in range(batch_size) if i not in acked_indexes)
    return tuple(range(batch_size))


def nack_redelivers(batch_size: int, nacked_index: int, acked_indexes: frozenset[int] | set[int], *, batch_index_ack: bool) -> tuple[int, ...]:
    """PLS-BATCH-006: a nack of index ``nacked_index`` redelivers the whole entry (filtered as above)."""
    if not 0 <= nacked_index < batch_size:
        raise ValueError(f"batch index {nacked_index} outside a batch of {batch_size}")
    return redelivered_indexes(batch_size, acked_indexes, batch_index_ack=batch_index_ack)


def backlog_entries(entry_sizes: list[int], acked: list[set[int]]) -> int:
    """PLS-BACKLOG-001: entries (batches) not fully acked; ``acked[i]`` holds the acked indexes of entry i."""
    if len(entry_sizes) != len(acked):
        raise ValueError("one acked-index set per entry")
    return sum(1 for n, a in zip(entry_sizes, acked) if not entry_acked(n, a))
