"""Message deduplication: which sends the broker drops, and what the producer sees.

Pulsar part: broker ``apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/service/
persistent/MessageDeduplication.java`` (``isDuplicate``: the per-producer ``highestSequencedPushed``
and ``highestSequencedPersisted`` maps; ``recordMessagePersisted``), ``PersistentTopic#publishMessage``
(a duplicate is acknowledged with ledger/entry -1/-1); client ``apache/pulsar-client-cpp
lib/ProducerImpl.cc`` (constructor and ``handleCreateProducer``: where sequence ids start;
``ackReceived``: ``last_sequence_id``); Python ``pulsar/__init__.py`` (``if sequence_id:``).
Rule ids: PLS-DEDUP-001 .. PLS-DEDUP-006.

Broker rule, per producer *name*, for a message whose (first) sequence id is ``s`` and whose
highest sequence id is ``h`` (``h == s`` except for batches):
1. ``s <= pushed`` and ``s <= persisted``  -> Dup: not stored; the send succeeds with id
   ``(-1, -1, partition, -1)`` (PLS-DEDUP-001).
2. ``s <= pushed`` and ``s > persisted``   -> Unknown: the message is still in flight; the
   publish fails (MessageDupUnknownException) and the client retries (PLS-DEDUP-004).
3. otherwise                                -> NotDup: stored; ``pushed := h``; once the write
   completes, ``persisted := h``.
With deduplication off every send is NotDup and nothing is tracked (PLS-DEDUP-003).

Client rule (C++): ``last_sequence_id`` starts at ``initial_sequence_id`` (-1 when not given)
and the generator at that + 1. When a producer connects with neither a configured initial id nor
a message sent yet, it adopts the broker's last sequence id for its name: the highest persisted
one when dedup is on, -1 when off (PLS-DEDUP-002). Each acknowledged send, duplicate or not,
sets ``last_sequence_id`` to that send's sequence id; an explicit ``sequence_id=`` does not move
the generator (PLS-DEDUP-006). Python drops ``sequence_id=0`` and ``initial_sequence_id=0``
(falsy) so 0 means "not given" (PLS-DEDUP-005).

Not modelled: the dedup snapshot cursor and its recovery after a broker restart, the purge of
inactive producers (``brokerDeduplicationProducerInactivityTimeoutMinutes``), replicated
messages, chunks (the broker checks only the last chunk), send timeouts and resends.
Choices: state is immutable; ``publish`` and ``persist`` are separate steps so a trace can put
a duplicate between them (the Unknown case).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from reference_model.ids import MessageId

NOT_DUP, DUP, UNKNOWN = "NotDup", "Dup", "Unknown"


def _get(pairs: tuple[tuple[str, int], ...], name: str) -> int | None:
    for k, v in pairs:
        if k == name:
            return v
    return None


def _put(pairs: tuple[tuple[str, int], ...], name: str, value: int) -> tuple[tuple[str, int], ...]:
    return tuple((k, v) for k, v in pairs if k != name) + ((name, value),)


@dataclass(frozen=True)
class DedupState:
    """The broker's per-topic dedup maps: producer name -> highest sequence id pushed / persisted."""

    enabled: bool = True
    pushed: tuple[tuple[str, int], ...] = ()
    persisted: tuple[tuple[str, int], ...] = ()

    def highest_pushed(self, producer: str) -> int | None:
        return _get(self.pushed, producer)

    def highest_persisted(self, producer: str) -> int | None:
        return _get(self.persisted, producer)


def classify(state: DedupState, producer: str, sequence_id: int) -> str:
    """Steps 1-3 without changing state: NotDup, Dup or Unknown."""
    if not state.enabled:
        return NOT_DUP
    pushed = state.highest_pushed(producer)
    if pushed is not None and sequence_id <= pushed:
        persisted = state.highest_persisted(producer)
        return DUP if persisted is not None and sequence_id <= persisted else UNKNOWN
    return NOT_DUP


def publish(state: DedupState, producer: str, sequence_id: int, highest_sequence_id: int | None = None) -> tuple[DedupState, str]:
    """The broker receives a message: its status, and ``pushed`` advanced when it is NotDup."""
    status = classify(state, producer, sequence_id)
    if status == NOT_DUP and state.enabled:
        h = sequence_id if highest_sequence_id is None else highest_sequence_id
        state = replace(state, pushed=_put(state.pushed, producer, h))
    return state, status


def persist(state: DedupState, producer: str, highest_sequence_id: int) -> DedupState:
    """The write of a NotDup message completed (``recordMessagePersisted``)."""
    if not state.enabled:
        return state
    return replace(state, persisted=_put(state.persisted, producer, highest_sequence_id))


def publish_and_persist(state: DedupState, producer: str, sequence_id: int) -> tuple[DedupState, str]:
    """A send with nothing else in flight: publish, and persist when stored."""
    state, status = publish(state, producer, sequence_id)
    if status == NOT_DUP:
        state = persist(state, producer, sequence_id)
    return state, status


def follow_stored(state: DedupState, producer: str, sequence_id: int) -> DedupState:
    """The broker stored a message the model could not classify (``FeatureOps._dedup_open``): its sequence id is the
    producer's highest pushed and persisted one from here on."""
    if not state.enabled:
        return state
    return replace(state, pushed=_put(state.pushed, producer, sequence_id),
                   persisted=_put(state.persisted, producer, sequence_id))


def duplicate_reply_id(partition: int = -1) -> MessageId:
    """PLS-DEDUP-001: the id a Dup send returns (the broker acks with ledger/entry -1/-1)."""
    return MessageId(-1, -1, partition, -1)


def broker_last_sequence_id(state: DedupState, producer: str) -> int:
    """What the broker returns to a connecting producer: highest persisted (dedup on), else -1."""
    if not state.enabled:
        return -1
    persisted = state.highest_persisted(producer)
    return -1 if persisted is None else persisted


# --------------------------------------------------------------------------- the C++/Python producer


def python_sequence_argument(value: int | None, *, python: bool = True) -> int | None:
    """PLS-DEDUP-005: Python passes ``sequence_id`` / ``initial_sequence_id`` on only when truthy;
    the Java client takes 0 as given (``python=False``: ProducerImpl's constructor sets
    ``lastSequenceIdPublished`` to any configured initial id; live 4.0.8, 2026-11-26)."""
    if not python:
        return value
    return value if value else None


@dataclass(frozen=True)
class ProducerSequence:
    """C++ ``ProducerImpl``: ``last`` (= ``last_sequence_id()``) and the next generated id."""

    configured_initial: int = -1
    last: int = -1
    next_generated: int = 0

    @staticmethod
    def create(initial_sequence_id: int | None = None, *, python: bool = True) -> "ProducerSequence":
        init = python_sequence_argument(initial_sequence_id, python=python)
        init = -1 if init is None else init
        return ProducerSequence(configured_initial=init, last=init, next_generated=init + 1)


def producer_connected(seq: ProducerSequence, broker_last: int) -> ProducerSequence:
    """PLS-DEDUP-002 (``handleCreateProducer``): adopt the broker's id if nothing is known locally."""
    if seq.last == -1 and seq.configured_initial == -1:
        return replace(seq, last=broker_last, next_generated=broker_last + 1)
    return seq


def next_sequence_id(seq: ProducerSequence, explicit: int | None = None, *, python: bool = True) -> tuple[ProducerSequence, int]:
    """The sequence id of the next send; an explicit (Python-truthy) id does not move the generator."""
    explicit = python_sequence_argument(explicit, python=python)
    if explicit is not None:
        return seq, explicit
    # (the constructor, not dataclasses.replace: this runs once per send)
    return ProducerSequence(seq.configured_initial, seq.last, seq.next_generated + 1), seq.next_generated


def batch_acknowledged(seq: ProducerSequence, sequence_ids: "list[int] | tuple[int, ...]", *,
                       highest: bool = False, first: bool = False) -> ProducerSequence:
    """PLS-DEDUP-006 for one batch (one entry), acknowledged by one receipt. The C++ client sets
    ``last_sequence_id`` to the batch's first sequence id plus its message count minus one
    (apache/pulsar-client-cpp lib/ProducerImpl.cc ``ProducerImpl::ackReceived``: it assumes the ids are
    consecutive, so a batch holding 0 and 2 reports 1; live 4.0.8, 2026-11-27, regression
    pls-dedup-006-wrong-value-9745a1bf7f4b); the Java client keeps the highest id acknowledged; with ``first``
    (the Go client: apache/pulsar-client-go pulsar/producer_partition.go ``ReceivedSendReceipt``) it is the
    batch's own sequence id, its first message's."""
    if first:
        return send_acknowledged(seq, sequence_ids[0])
    if highest:
        return send_acknowledged(seq, max(sequence_ids), highest=True)
    return send_acknowledged(seq, sequence_ids[0] + len(sequence_ids) - 1)


def send_acknowledged(seq: ProducerSequence, sequence_id: int, *, highest: bool = False) -> ProducerSequence:
    """PLS-DEDUP-006: every acknowledged send (stored or duplicate) sets ``last_sequence_id`` (C++); with
    ``highest`` (the Java client) it keeps the highest id acknowledged."""
    last = max(seq.last, sequence_id) if highest else sequence_id
    return ProducerSequence(seq.configured_initial, last, seq.next_generated)
