"""Batching: how a producer groups messages into entries, and what comes back after a redelivery.

Pulsar part: the C++ producer's batch containers (``apache/pulsar-client-cpp
lib/BatchMessageContainerBase.h#hasEnoughSpace/isFull``, ``lib/BatchMessageContainer.cc``,
``lib/BatchMessageKeyBasedContainer.cc``, ``lib/ProducerImpl.cc#sendAsyncWithStatsUpdate``
and its batch timer); the consumer's batch handling (``lib/ConsumerImpl.cc``
``receiveIndividualMessagesFromBatch`` skips indexes set in the broker's ack set;
``lib/BatchMessageAcker.h`` sends the entry ack only when every index is acked;
``lib/NegativeAcksTracker.cc`` nacks the whole entry); the broker's batch index ack
(``acknowledgmentAtBatchIndexLevelEnabled``, ``.../service/Consumer.java``).
Rule ids: PLS-BATCH-001 .. PLS-BATCH-007, PLS-BATCH-009, PLS-BATCH-010, PLS-BACKLOG-001.

Producer (PLS-BATCH-002), for each message ``m`` of ``len(m)`` payload bytes:
1. If ``m`` is delayed it is not batched at all: it is sent alone, at once (PLS-DELAY-006). The
   C++ client leaves the open batch open, so ``m`` is written ahead of it
   (``ProducerImpl::sendAsyncWithStatsUpdate`` sends a message ``canAddToBatch`` refuses without
   touching the container); the Java client sends the open batch first
   (``ProducerImpl#processOpSendMsg`` calls ``batchMessageAndSend`` before a non-batched message).
   Measured on 4.0.8, 2026-11-27: async m1, m2 (a full batch of 2), m3, then a delayed m4: C++
   writes m1+m2, m4, m3; Java m1+m2, m3, m4.
1b. Java only: if ``m``'s sequence id is at most the highest its producer was handed before it (an
   explicit sequence id below one used, or a generated one below an explicit one), ``m`` may be a
   duplicate, and the client sends the open batch first; the next message does the same, so ``m``
   travels in a batch of its own (``ProducerImpl#serializeAndSendMessage``:
   ``isLastSequenceIdPotentialDuplicated``, ``doBatchSendAndAdd``). Measured on 4.0.8 with the Java client,
   4 Dec 2026: async m1, sync m2 shared an entry; async m3 with sequence id 15, then a sync m4 (generated
   id 2) made two entries of one message each (found by the live campaign of issue 46:
   pls-batch-001-wrong-value-c86114d6793e). The C++ and Go clients have no such check.
2. If the open batch has no room (``count >= max_messages`` or ``bytes + len(m) > max_bytes``),
   send the open batch first.
3. Add ``m``; if it is the first message of a batch, start the ``max_publish_delay`` timer.
4. If the batch is now full (``count >= max_messages`` or ``bytes >= max_bytes``), send it. Not the Go client:
   its full batch waits for the next message (which does not fit, step 2), its timer or a flush
   (pulsar-client-go v0.19.0 ``producer_partition.go`` ``internalSend`` sends the current batch only when
   ``addRequestToBatch`` refuses a message). Measured on 4.0.8 with Go 0.19.0, 4 Dec 2026: batching_max_messages
   1, async m7, an async delayed m10, a flush: m10 was written before m7 (Java: m7 first); found by issue 46's
   focused campaign (pls-delay-006-wrong-value-f9cc21bdd16e).
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
A nack of one message redelivers the whole entry (PLS-BATCH-006). An ack that names a message by the id its
producer returned carries no batch tracker, and the clients differ (PLS-BATCH-010, ``producer_id_ack_reach``):
Java and Go ack the whole entry, C++ too with batch index ack on the consumer; a C++ producer's own id without it
acks nothing (individual) or only what came before the entry (cumulative). The backlog counts entries,
not messages (PLS-BACKLOG-001). Python's default is ``batching_enabled=False`` (PLS-BATCH-007).

When the open batch leaves (PLS-BATCH-009) is the client's choice within bounds, and the model keeps
every allowed outcome (``match_split``, ``leave_window``); the checker follows the one observed:
- C++ (``ProducerImpl::sendAsync``: ``batchTimer_->expires_from_now`` when the first message is added to
  an empty container, ``batchMessageTimeoutHandler`` sends it): the batch leaves ``max_publish_delay``
  after its first message was added, when full, or at a flush, whichever comes first.
- Java (``ProducerImpl``'s ``batchFlushTask``, rescheduled while batches flow, and not sending before
  ``batchingMaxPublishDelay`` since the last batch send, ``lastBatchSendNanoTime``, which is first set when the
  producer connects) and Go (``partitionProducer.runEventsLoop``: ``batchFlushTicker``, a periodic ticker from
  the producer's creation): the timer's phase is unknown, so the open batch may leave at any moment after a
  message was added (once the producer is older than the delay, ``BatchTimer.quiet_until``), and surely
  within one period (Go) or two (Java) of its last message's add.
- Every client: the batch leaves at the latest with the add that fills it (step 4; Go: the next add, step 2),
  whichever message the timer last let it start with (``leave_window``'s bound over the possible starts).
So: a batch is a contiguous run of one producer's pending messages (KeyBased: the sub-batches of one
run), within the container's limits; a cut between two messages that the container did not force
needs a timer firing between their adds (C++: its first message's add + the delay); no batch leaves
before its first message was sent, and the last leaves at the flush (or the sync send) at the latest.

A cumulative ack of a message inside a batch without batch index ack (PLS-BATCH-004) marks it and those before it
on the client and acks the whole entry once every index is marked, else only up to the entry before it (C++
``BatchMessageAcker``, Java ``MessageIdAdvUtils#prevMessageId``, Go ``internalAckIDCumulative``):
``FeatureOps._feature_ack_cumulative``.

Not modelled: the byte size the C++ container adds per message (it counts payload bytes only),
compression, the memory limit and queue-full flush, partitioned producers, chunking (a batching producer
never chunks), a timer firing late beyond its period (scheduling lateness is the checker's dispatch band).
Choices: timers and flushes are explicit ``Flush`` items in the input; entries are numbered
from ``first_entry`` in the order they are sent. The model's own timer (``BatchTimer.canonical``)
fires ``max_publish_delay`` after the batch's first message was sent, for every client.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from reference_model.ids import MessageId
from reference_model.timing import Span

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
    # step 1b (Java): a message whose sequence id may repeat one sent before it goes in a batch of its own
    repeats_send_open_batch: bool = False
    # step 4 (Go): a batch that is full waits for the next message, its timer or a flush
    full_batch_waits: bool = False

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
    # its sequence id is at most the highest its producer was handed before it: a possible duplicate (step 1b)
    repeats: bool = False

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
    return _plan(items, config, final_flush=final_flush)[0]


def _plan(items: Sequence[Pending | Flush], config: BatchConfig, *,
          final_flush: bool) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """``plan_entries``, and for each entry the index of the item whose add (or flush) sent it (``len(items)``:
    the final flush)."""
    entries: list[tuple[int, ...]] = []
    triggers: list[int] = []
    open_batches: dict[object, list[int]] = {}  # key -> indexes (one key, "", when not key based)
    first_seq: dict[object, int] = {}
    count = size = 0
    after_repeat = False  # step 1b: the message before was a possible duplicate

    def send_open(trigger: int) -> None:
        nonlocal count, size
        # PLS-BATCH-003: by each sub-batch's first message (C++), or by its last (Java)
        order = (lambda k: first_seq[k]) if config.key_order == "first" else (lambda k: open_batches[k][-1])
        for key in sorted(open_batches, key=order):
            entries.append(tuple(open_batches[key]))
            triggers.append(trigger)
        open_batches.clear()
        first_seq.clear()
        count = size = 0

    for index, item in enumerate(items):
        if isinstance(item, Flush):
            send_open(index)
            continue
        if item.delayed:  # step 1: sent alone; the open batch goes first (Java) or stays open (C++)
            if config.delayed_sends_open_batch:
                send_open(index)
            entries.append((index,))
            triggers.append(index)
            continue
        if config.repeats_send_open_batch and (item.repeats or after_repeat):  # step 1b
            send_open(index)
        after_repeat = item.repeats
        if not (count < config.max_messages and size + item.size <= config.max_bytes):  # step 2
            send_open(index)
        key: object = (item.batch_key if config.key_order == "first" else item.java_batch_key) if config.key_based else ""
        open_batches.setdefault(key, []).append(index)  # step 3
        first_seq.setdefault(key, index)
        count += 1
        size += item.size
        if not config.full_batch_waits and (count >= config.max_messages or size >= config.max_bytes):  # step 4
            send_open(index)
    if final_flush:
        send_open(len(items))  # step 5
    return tuple(entries), tuple(triggers)


def fills_alone(item: Pending, config: BatchConfig) -> bool:
    """Whether ``item`` alone fills a container (one message allowed, or it has the bytes), so that the client sends
    it, and before it the batch it had no room in (step 2), in the send call itself (step 4), whatever timer cuts came
    before. Not the Go client, whose full batch waits for the next message."""
    return not item.delayed and not config.full_batch_waits and (config.max_messages <= 1 or item.size >= config.max_bytes)


def open_batch(items: list[Pending | Flush], config: BatchConfig) -> tuple[int, ...]:
    """The indexes of ``items`` still in the open batch after them (no flush, no timer): what the
    client holds back while the entries ``plan_entries(..., final_flush=False)`` were written."""
    written = {i for entry in plan_entries(items, config, final_flush=False) for i in entry}
    return tuple(i for i, item in enumerate(items) if isinstance(item, Pending) and i not in written)


# --------------------------------------------------------------------------- when a batch leaves (PLS-BATCH-009)


@dataclass(frozen=True)
class BatchTimer:
    """The publish-delay timer of a client's batch container (PLS-BATCH-009)."""

    delay_ms: float
    periodic: bool = False  # Java, Go: its phase is unknown; C++: it starts with the batch's first message
    periods: int = 1  # how many periods after its last message's add a batch may still wait (Java: 2)
    # Java, Go: the timer sends nothing before this instant (its producer's creation + the delay; see for_client)
    quiet_until: float = float("-inf")

    @staticmethod
    def for_client(client: str, delay_ms: float, *, created_at: float | None = None) -> "BatchTimer":
        """C++ (``cpp``, the Python client's core): one-shot from the batch's first message; Go: a ticker;
        Java: a task that may be put off once more while the last batch send is younger than the delay.

        ``created_at`` (Java): when the producer's creation began. The Java task sends a batch only once
        ``batchingMaxPublishDelay`` has passed since the last batch send, and that time is first set when the
        producer connects (apache/pulsar ``ProducerImpl#batchFlushTask``, ``lastBatchSendNanoTime``: PR #14185 in
        2.10.0, initialised in the constructor by PR #15406 in 2.10.1, at connection by PR #17058 in 2.11.0), so
        no timer send comes before ``created_at + delay``: a batch filled sooner leaves full (step 4). Go: its
        ``batchFlushTicker`` is made with the partition producer (pulsar-client-go ``producer_partition.go``
        ``newPartitionProducer``: ``time.NewTicker(batchingMaxPublishDelay)``, v0.12.0 to v0.19.0 and on) and never
        reset, so its first tick too comes no sooner than ``created_at + delay``."""
        quiet = float("-inf") if created_at is None else created_at + float(delay_ms)
        if client == "java":
            return BatchTimer(float(delay_ms), periodic=True, periods=2, quiet_until=quiet)
        if client == "go":
            return BatchTimer(float(delay_ms), periodic=True, quiet_until=quiet)
        return BatchTimer(float(delay_ms))

    def canonical(self, first_sent: Span) -> float:
        """The model's own choice (a target must pick one): the timer fires ``delay`` after the open
        batch's first message was sent (C++ exactly; a phase the Java and Go timers may have)."""
        return first_sent.start + self.delay_ms


@lru_cache(maxsize=4096)
def _forced_plan(items: tuple[Pending, ...], config: BatchConfig) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """``_plan(items, final_flush=False)``, kept: the batches the container sends when full, and the adds that send them."""
    return _plan(items, config, final_flush=False)


def _forced(items: tuple[Pending, ...], config: BatchConfig) -> tuple[tuple[int, ...], ...]:
    """``plan_entries(items, final_flush=False)``, kept: the batches the container sends when full."""
    return _forced_plan(items, config)[0]


def _sent_by_container(items: Sequence[Pending], config: BatchConfig, start: int, stop: int) -> bool:
    """Whether the container, filled from ``items[start]`` with no timer and no flush, sends its open
    batch exactly between ``items[stop - 1]`` and ``items[stop]`` (steps 2 and 4: full, or no room)."""
    for end in (stop, stop + 1):
        if end > len(items):
            continue
        entries = [{start + i for i in entry} for entry in _forced(tuple(items[start:end]), config)]
        before = set().union(*(e for e in entries if max(e) < stop)) if entries else set()
        if before == set(range(start, stop)) and not any(min(e) < stop <= max(e) for e in entries):
            return True
    return False


def open_since(items: Sequence[Pending], config: BatchConfig, start: int, stop: int) -> int:
    """The index of the first message of the batch that is open just before ``items[stop]``, the
    container filled from ``items[start]`` (after the batches it sent when full)."""
    first = start
    for c in range(start + 1, stop):
        if _sent_by_container(items, config, start, c):
            first = c
    return first


def timer_cut_possible(sent: Sequence[Span], first: int, before: int, timer: BatchTimer) -> bool:
    """PLS-BATCH-009: whether the timer may have sent the open batch (opened by message ``first``)
    after message ``before - 1`` was added and before message ``before`` was: a periodic timer may fire
    in any instant of positive length between the two adds (Java, Go: not before ``quiet_until``); C++'s fires
    ``delay`` after ``first``'s add."""
    if timer.periodic:
        return sent[before].end > sent[before - 1].start and sent[before].end >= timer.quiet_until
    return sent[first].start + timer.delay_ms <= sent[before].end


class RunPlans:
    """``_sent_by_container`` and the messages ``_forced`` sends from each start, for one list of pending messages,
    each computed once: ``leave_window`` of every message of a run asks the same questions (without this, the
    windows of a run of n messages cost n^3 container plans; with it, n^2)."""

    def __init__(self, items: Sequence[Pending], config: BatchConfig):
        self.items, self.config = items, config
        self._cuts: dict[int, frozenset[int]] = {}
        self._covered: dict[int, frozenset[int]] = {}
        self._sent_at: dict[int, dict[int, int]] = {}
        self._itself: dict[int, int | None] = {}
        self._starts: dict[tuple[int, float], list[int]] = {}

    def sent_by_container(self, start: int, stop: int) -> bool:
        """``_sent_by_container(items, config, start, stop)``, read off one plan of ``items[start:]``."""
        cuts = self._cuts.get(start)
        if cuts is None:
            cuts = self._cuts[start] = self._container_cuts(start)
        return stop in cuts

    def _container_cuts(self, start: int) -> frozenset[int]:
        """Every ``stop`` for which ``_sent_by_container(items, config, start, stop)`` holds, from one plan of
        ``items[start:]``: the entries the container has sent by ``end``'s add (end ``stop`` or ``stop + 1``) are
        those whose trigger comes before ``end``; those ending before ``stop`` must be exactly ``items[start:stop]``,
        and none of them may hold both ``stop - 1`` and ``stop``."""
        entries, triggers = _forced_plan(tuple(self.items[start:]), self.config)
        spans = [(min(e), max(e), len(e), t) for e, t in zip(entries, triggers)]
        cuts = set()
        for stop in range(1, len(self.items) - start):
            for end in (stop, stop + 1):
                sent = [x for x in spans if x[3] < end]
                if sum(n for lo, hi, n, _ in sent if hi < stop) == stop and not any(lo < stop <= hi for lo, hi, _, _ in sent):
                    cuts.add(start + stop)
                    break
        return frozenset(cuts)

    def covered(self, k: int) -> frozenset[int]:
        """The indexes of the messages a container filled from ``items[k]`` sends when full (``_forced``)."""
        found = self._covered.get(k)
        if found is None:
            found = self._covered[k] = frozenset(k + i for entry in _forced(tuple(self.items[k:]), self.config) for i in entry)
        return found

    def starts(self, run_start: int, first_cut: float, sent: Sequence[Span]) -> list[int]:
        """The messages from ``run_start`` on that may open a batch (``leave_window``): the run's first, one a timer may
        have cut before (not before ``first_cut``), one the container's own sends leave first; ascending."""
        key = (run_start, first_cut)
        found = self._starts.get(key)
        if found is None:
            found = self._starts[key] = [k for k in range(run_start, len(self.items))
                                         if k == run_start or first_cut <= sent[k].end
                                         or self.sent_by_container(run_start, k)]
        return found

    def sent_from_itself(self, j: int) -> int | None:
        """``sent_at(j).get(j)``, read off the few messages that can matter: a batch opened by ``items[j]`` is full, or
        has no room, by ``max_messages`` adds later (None: it is still open when the messages end)."""
        found = self._itself.get(j, -1)
        if found == -1:
            window = tuple(self.items[j:j + self.config.max_messages + 2])
            entries, triggers = _forced_plan(window, self.config)
            found = self._itself[j] = next((j + t for entry, t in zip(entries, triggers) if 0 in entry), None)
        return found

    def sent_at(self, k: int) -> dict[int, int]:
        """For a container filled from ``items[k]`` with no timer and no flush: message index -> the index of the
        message whose add sends it (full, step 4; no room, step 2; a delayed or repeated message, steps 1 and 1b)."""
        found = self._sent_at.get(k)
        if found is None:
            entries, triggers = _forced_plan(tuple(self.items[k:]), self.config)
            found = self._sent_at[k] = {k + i: k + t for entry, t in zip(entries, triggers) for i in entry}
        return found


def leave_window(items: Sequence[Pending], sent: Sequence[Span], j: int, config: BatchConfig, timer: BatchTimer,
                 *, run_start: int = 0, settled_by: float | None = None, plans: RunPlans | None = None) -> Span:
    """PLS-BATCH-009: when the batch holding ``items[j]`` may reach the broker: not before ``j`` was sent
    (C++: not before the timer, ``delay`` after the run's first message, unless a full container sends
    it sooner; Java, Go: not before the timer's quiet period ends, unless so), and surely by ``delay`` (Java: twice)
    after ``j``'s send, by the add that fills its batch or finds no room in it, or by ``settled_by`` (the flush,
    sync send or close that ends the run). ``run_start``: the first message since the container was
    surely empty (the last flush or sync send)."""
    earliest = sent[j].start
    latest = sent[j].end + timer.delay_ms * timer.periods
    if isinstance(items[j], Pending) and fills_alone(items[j], config):
        latest = min(latest, sent[j].end)  # step 4: sent in its own send call
    # the batch holding j starts at the run's start, after a batch the container sent, or after a timer cut (C++:
    # not before the run's first message + the delay; Java, Go: not before its quiet period ends); it may be full by
    # j's add or later
    plans = plans or RunPlans(items, config)  # ``plans``: the caller's, for these very items and config
    first_cut = sent[run_start].start + timer.delay_ms if not timer.periodic else timer.quiet_until

    every_start = plans.starts(run_start, first_cut, sent)
    starts = every_start[:bisect_right(every_start, j)]
    if first_cut > sent[j].start and not any(j in plans.covered(k) for k in starts):
        earliest = max(earliest, first_cut)  # only a timer (or the flush) sends it
    # whichever start the batch holding j had, the container sends it at the latest with the add that fills it, or
    # leaves no room in it (a timer may send it sooner): then that add bounds when it leaves. A batch that started
    # sooner holds more, so it fills no later: when j itself may start one, its own start bounds every other
    if starts and starts[-1] == j:
        by_start = [plans.sent_from_itself(j)]
    else:
        by_start = [plans.sent_at(k).get(j) for k in starts]
    if all(m is not None for m in by_start):
        latest = min(latest, max(sent[m].end for m in by_start))
    if settled_by is not None:
        latest = min(latest, settled_by)
        earliest = min(earliest, settled_by)
    return Span(earliest, max(earliest, latest))


@dataclass(frozen=True)
class SplitMatch:
    """How ``match_split`` read an observed split: the timer cuts it needs (before these indexes), and
    what breaks the batch rules (``(rule, sentence)``; none when the split is allowed)."""

    cuts: tuple[int, ...]
    violations: tuple[tuple[str, str], ...]

    @property
    def allowed(self) -> bool:
        return not self.violations


def match_split(items: Sequence[Pending], sent: Sequence[Span], entries: Sequence[Sequence[int]], config: BatchConfig,
                timer: BatchTimer, *, certain_cuts: Sequence[int] = (), names: Sequence[str] | None = None) -> SplitMatch:
    """PLS-BATCH-001/003/009: whether ``entries`` (indexes into ``items``, each entry's messages in batch-index
    order, the entries in the order they were written) is a split the client may have made of the pending
    messages ``items``, sent during ``sent``. ``certain_cuts``: indexes before which the container was surely
    emptied (a sync send flushes its batch). Each run between cuts is written as ``plan_entries`` writes
    it; a cut the container did not force is a timer cut, which ``timer_cut_possible`` must allow.

    Violated if: a message is in no entry or in two; an entry's messages are not a run of the producer's
    pending messages in send order (a gap, a swap, a member of another run); an entry holds more than the
    container takes (its limits would have sent part of it sooner); the entries are written out of order;
    or a cut falls where no timer could have fired (C++: before ``delay`` since the batch's first message)."""
    label = (lambda i: names[i]) if names is not None else (lambda i: f"#{i}")
    n = len(items)
    want = [tuple(e) for e in entries]
    held = sorted(i for e in want for i in e)
    if held != list(range(n)):
        missing = sorted(set(range(n)) - set(held))
        twice = sorted({i for i in held if held.count(i) > 1})
        what = "; ".join(([f"{', '.join(map(label, missing))} in no entry"] if missing else [])
                         + ([f"{', '.join(map(label, twice))} in two entries"] if twice else [])) or "stray members"
        return SplitMatch((), (("PLS-BATCH-009", what),))
    stops = sorted({c for c in certain_cuts if 0 < c < n} | {n})
    seen: dict[tuple[int, int], tuple[int, ...] | None] = {}
    stuck: list[tuple[int, int, str | None]] = []  # (r, written, why a timer cut is impossible) where a reading ended

    def read(r: int, written: int) -> tuple[int, ...] | None:
        """The timer cuts that make the runs from ``items[r]`` on the entries ``want[written:]``, if any."""
        if r == n:
            return () if written == len(want) else None
        if (r, written) in seen:
            return seen[(r, written)]
        seen[(r, written)] = None
        limit = next(c for c in stops if c > r)
        timer_why = None
        for b in range(r + 1, limit + 1):
            trial = [tuple(r + i for i in e) for e in plan_entries(list(items[r:b]), config)]
            if trial != want[written:written + len(trial)]:
                continue
            timed = b < limit and not _sent_by_container(items, config, r, b)
            if timed:
                first = open_since(items, config, r, b)
                if not timer_cut_possible(sent, first, b, timer):
                    timer_why = (f"the batch of {label(first)} left before {label(b)} was added, but its timer could not "
                                 f"fire then: " + (f"{label(b - 1)} was added from {sent[b - 1].start:g} ms and {label(b)} "
                                                   f"by {sent[b].end:g} ms, with no instant between" if timer.periodic else
                                                   f"{label(first)} was sent from {sent[first].start:g} ms, the delay is "
                                                   f"{timer.delay_ms:g} ms, and {label(b)} was sent by {sent[b].end:g} ms"))
                    continue
            rest = read(b, written + len(trial))
            if rest is not None:
                seen[(r, written)] = ((b,) if timed else ()) + rest
                return seen[(r, written)]
        stuck.append((r, written, timer_why))
        return None

    cuts = read(0, 0)
    if cuts is not None:
        return SplitMatch(cuts, ())
    r, written, timer_why = max(stuck)
    if timer_why is not None:
        return SplitMatch((), (("PLS-BATCH-009", timer_why),))
    limit = next(c for c in stops if c > r)
    entry = next((e for e in want[written:] if r in e), want[written] if written < len(want) else (r,))
    run = list(range(min(entry), min(entry) + len(entry)))
    if not config.key_based and list(entry) != run:
        why = (f"the entry of {', '.join(map(label, entry))} is not a run of the producer's messages in send "
               f"order (expected {', '.join(map(label, run))})")
        return SplitMatch((), (("PLS-BATCH-001", why), ("PLS-BATCH-009", why)))
    if not config.key_based and len(plan_entries(list(items[min(entry):max(entry) + 1]), config)) > 1:
        why = (f"the entry of {', '.join(map(label, entry))} holds more than the container takes "
               f"(max {config.max_messages} messages, {config.max_bytes} bytes): it was full sooner")
        return SplitMatch((), (("PLS-BATCH-009", why),))
    why = (f"no run of the messages from {label(r)} on is written as the entries "
           f"{'; '.join(', '.join(map(label, e)) for e in want[written:written + 3])}"
           + (" (one entry per key, in the client's key order)" if config.key_based else "")
           + (f"; {label(limit)} came after a sync send, which flushed the batch before it" if limit < n else ""))
    return SplitMatch((), (("PLS-BATCH-003" if config.key_based else "PLS-BATCH-009", why),))


def entries_from_ids(labels: Sequence[str], ids: "dict[str, Sequence[int]]") -> list[tuple[int, ...]] | None:
    """The split that observed ids ``[ledger, entry, partition, batch_index]`` show, as indexes into
    ``labels`` (every label needs an id): one entry per (ledger, entry), written in id order, its members
    in batch-index order (index -1, a message sent alone, is an entry of its own). None if a label has none."""
    if any(x not in ids for x in labels):
        return None
    groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for i, x in enumerate(labels):
        mid = [int(v) for v in ids[x]]
        groups.setdefault((mid[0], mid[1]), []).append((mid[3], i))
    return [tuple(i for _, i in sorted(groups[key])) for key in sorted(groups)]


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


def producer_id_ack_reach(client: str, *, cumulative: bool, client_batch_index_ack: bool, own_producer_id: bool) -> str:
    """PLS-BATCH-010: what an ack that names a batched message by the id its producer returned (its consumer
    never received it, so the id carries no batch tracker) acks at the broker.

    ``client`` is the consumer's client (``cpp``, ``java``, ``go``); ``client_batch_index_ack`` the consumer's own
    setting (the broker's does not matter here); ``own_producer_id`` whether the id is the one a C++ producer
    handed back (another client's id is rebuilt from its numbers). Returns ``"entry"`` (the whole entry; a
    cumulative ack also everything before it), ``"nothing"`` or ``"before"`` (a cumulative ack of everything
    stored before the entry, none of it).
    """
    if client != "cpp" or client_batch_index_ack or not own_producer_id:
        return "entry"
    return "before" if cumulative else "nothing"


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
