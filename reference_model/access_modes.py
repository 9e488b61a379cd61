"""Producer access modes: who may publish on a topic, and what a refused or fenced producer sees.

Pulsar part: ``apache/pulsar pulsar-broker/src/main/java/org/apache/pulsar/broker/service/
AbstractTopic.java`` (``incrementTopicEpochIfNeeded``, ``internalAddProducer``: same-name
producers), ``BrokerServiceException.java#getClientErrorCode`` (ProducerBusy / ProducerFenced);
client ``apache/pulsar-client-cpp lib/ProducerImpl.cc#handleCreateProducer`` (a ProducerFenced
answer is final; any other failure of an already-created producer is retried).
Rule ids: PLS-ACCESS-001 .. PLS-ACCESS-006.

A new producer on a topic, given the producers already there (Python exceptions):

| new \\ present             | none | Shared only             | an exclusive holder        |
|---------------------------|------|-------------------------|----------------------------|
| Shared                    | ok   | ok (PLS-ACCESS-001)     | ProducerBusy (ACCESS-003)  |
| Exclusive                 | ok   | ProducerFenced (ACCESS-002) | ProducerFenced (ACCESS-002) |
| ExclusiveWithFencing      | ok   | ok, fences them (ACCESS-004) | ok, fences it (ACCESS-004) |
| WaitForExclusive          | ok   | waits (ACCESS-005)      | waits (ACCESS-005)         |

An "exclusive holder" is a producer created with Exclusive, ExclusiveWithFencing, or a
WaitForExclusive producer that got its turn. A WaitForExclusive producer still queued counts as one for
a new Shared producer (ProducerBusy) and a new Exclusive one (ProducerFenced):
``AbstractTopic#incrementTopicEpochIfNeeded`` refuses both while ``waitingExclusiveProducers`` is not
empty (live 4.0.8, 3.3.6 and 5.0.0-M1, 27 Nov 2026: a Shared producer, a WaitForExclusive one queued
behind it, a second Shared producer refused with ProducerBusy; regression
pls-access-001-unexpected-rejection-c98a4c0f3f5d). A waiting WaitForExclusive producer completes when
the holder (or the last shared producer) goes away (brokers before apache/pulsar PR #24516, 4.0.6,
never woke a waiter queued behind Shared producers).

A fenced producer (PLS-ACCESS-004) is closed by the broker and reconnects: an Exclusive or
ExclusiveWithFencing producer is answered ProducerFenced, final, so its next send fails with
ProducerFenced; a Shared producer is answered ProducerBusy and a WaitForExclusive one is queued,
both retried forever, so their next send fails with Timeout after ``send_timeout_millis``.
A send that leaves before the client learns of the fence reaches the broker on the closed producer, and
the connection closes (the C++ client closes it on any SendError: ``ClientConnection::handleSendError``):
every handle of that client reconnects, a C++ consumer with its receiver queue cleared. Which way the
race went is not in a history (live 4.0.8, 27 Nov 2026: 2 runs in 6), so the checker judges none of
those handles after such a send (``Checker._connection_may_have_closed``).
A second producer with a name already connected on the topic is refused with ProducerBusy
(PLS-ACCESS-006), unless the access mode acts first (``AbstractTopic#addProducer`` runs the epoch
step before ``internalAddProducer``'s name check): an ExclusiveWithFencing producer fences the
named one and gets the topic (or, when the fenced producer is not yet gone at the name check, is refused
with ProducerBusy: seen on 4.0.0, so the composed model does not judge that race), a WaitForExclusive one
is queued, an Exclusive one is refused with
ProducerFenced, a Shared one next to a holder with ProducerBusy (PLS-ACCESS-003) (measured on 4.0.8
and 5.0.0-M1, 2026-11-27).

Not modelled: topic epochs across broker restarts, the order of several waiters, partitioned
topics (each partition decides alone), the broker's error texts (Python shows only the result name).
Choices: outcomes are small values; ``fences`` lists which present producers lose the topic.
"""

from __future__ import annotations

from dataclasses import dataclass

SHARED, EXCLUSIVE, EXCLUSIVE_WITH_FENCING, WAIT_FOR_EXCLUSIVE = "Shared", "Exclusive", "ExclusiveWithFencing", "WaitForExclusive"
MODES = (SHARED, EXCLUSIVE, EXCLUSIVE_WITH_FENCING, WAIT_FOR_EXCLUSIVE)


@dataclass(frozen=True)
class PresentProducer:
    name: str
    mode: str

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"unknown access mode {self.mode!r}; use one of {MODES}")


@dataclass(frozen=True)
class CreateOutcome:
    """``result`` is ``ok``, ``waiting`` or an error name; ``fences`` the producers that lose the topic."""

    result: str
    rule: str
    fences: tuple[str, ...] = ()


def mode_the_broker_reads(mode: str, *, fencing_known: bool) -> str:
    """The access mode the broker acts on. A broker before 2.11.0 does not know ExclusiveWithFencing
    (PIP-161, apache/pulsar PR #15488): the wire enum value is unknown to its protobuf reader, so the field
    reads as its default, Shared. Live 2.10.5, 27 Nov 2026: a Shared producer joined an ExclusiveWithFencing
    one (regression pls-access-003-missing-rejection-f2609bebae13), and ExclusiveWithFencing behind a
    WaitForExclusive holder was refused ProducerBusy (pls-access-004-unexpected-rejection-d80def55cf26)."""
    if mode not in MODES:
        raise ValueError(f"unknown access mode {mode!r}; use one of {MODES}")
    return SHARED if mode == EXCLUSIVE_WITH_FENCING and not fencing_known else mode


def create_producer(present: tuple[PresentProducer, ...], mode: str, name: str | None = None, *,
                    waiters: int = 0) -> CreateOutcome:
    """The outcome of creating a producer in ``mode`` next to ``present`` (the table above), with ``waiters``
    WaitForExclusive producers still queued on the topic."""
    if mode not in MODES:
        raise ValueError(f"unknown access mode {mode!r}; use one of {MODES}")
    if mode == WAIT_FOR_EXCLUSIVE and (present or waiters):
        # queued before any name check: AbstractTopic#addProducer waits for the topic epoch first and runs
        # internalAddProducer (the ProducerBusy name check) at its turn (live 4.0.8, 2026-11-27: a second
        # WaitForExclusive producer with a connected producer's name waited; regression
        # pls-access-006-missing-rejection-35783b18bd6f)
        return CreateOutcome("waiting", "PLS-ACCESS-005")
    if mode == EXCLUSIVE_WITH_FENCING:
        # the epoch bump fences the present producers before the name check, so a same-named one is fenced
        # too (live 4.0.8, Java, 2026-11-27: regression pls-access-006-missing-rejection-d2dc93fc47c0)
        return CreateOutcome("ok", "PLS-ACCESS-004", fences=tuple(p.name for p in present))
    # a waiting WaitForExclusive is never "present", but it blocks Shared and Exclusive newcomers as a holder does
    holder = any(p.mode != SHARED for p in present) or waiters > 0
    # the epoch step refuses before internalAddProducer's name check, so a same-named newcomer gets the access
    # mode's error (live 5.0.0-M1 and 4.0.8, 27 Nov 2026: an Exclusive producer named as a connected Shared one
    # was refused ProducerFenced; regression pls-access-006-wrong-error-18ef24aec9e2)
    if mode == EXCLUSIVE and (present or waiters):
        return CreateOutcome("ProducerFenced", "PLS-ACCESS-002")
    if mode == SHARED and holder:
        return CreateOutcome("ProducerBusy", "PLS-ACCESS-003")
    if name is not None and any(p.name == name for p in present):
        return CreateOutcome("ProducerBusy", "PLS-ACCESS-006")
    if mode == SHARED:
        return CreateOutcome("ok", "PLS-ACCESS-001")
    if mode == EXCLUSIVE:
        return CreateOutcome("ok", "PLS-ACCESS-002")
    return CreateOutcome("ok", "PLS-ACCESS-005")  # WaitForExclusive on a topic nobody holds or waits for


def fenced_send_error(mode: str) -> str:
    """PLS-ACCESS-004: the error a fenced producer's next send fails with."""
    if mode in (EXCLUSIVE, EXCLUSIVE_WITH_FENCING):
        return "ProducerFenced"
    if mode in (SHARED, WAIT_FOR_EXCLUSIVE):
        return "Timeout"
    raise ValueError(f"unknown access mode {mode!r}; use one of {MODES}")
