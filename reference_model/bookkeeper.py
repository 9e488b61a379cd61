"""BookKeeper, the storage under every persistent topic: where each entry is written, when an add is
acknowledged, and what a reader may read.

Pulsar part: the storage layer (concepts-architecture-overview.md#apache-bookkeeper). A message id
is ``ledger:entry:partition[:batch-index]``; ``entry`` is the BookKeeper entry id inside ledger
``ledger`` (one entry holds one non-batched message or one whole batch). Each ledger is written
with an ensemble size E, a write quorum Qw and an ack quorum Qa, fixed when the ledger is created
from the topic's persistence policy (else the namespace's, else the broker's
``managedLedgerDefault*``: 1/1/1 in standalone.conf, 2/2/2 in broker.conf).

Read in the BookKeeper sources of the releases Pulsar ships (bookkeeper-server 4.16.6 in Pulsar
3.0.7, 4.17.2 in 4.0.8; ``bookkeeper-server/src/main/java/org/apache/bookkeeper/``) and in
apache/pulsar; the research, with vectors, is docs/research/bookkeeper-placement.md. Rule ids
(this chapter's; not in the registry, because no trace observes placement: the live part is
tests/live/test_bookkeeper_live.py, which asks the broker for its ledgers' metadata):

- PLS-BK-001 ``persistence_refusal``: the admin API refuses a persistence policy unless
  0 < E <= max, 0 < Qw <= max, 0 < Qa <= max and E >= Qw >= Qa (pulsar-broker
  ``admin/AdminResource.java#validatePersistencePolicies``; HTTP 400 with these reasons).
- PLS-BK-002 ``write_set``: entry i is written to the bookies at ensemble positions
  (i + w) mod E for w = 0..Qw-1, in that order (``client/RoundRobinDistributionSchedule.java``,
  getWriteSet). E = Qw is no striping: every bookie holds every entry.
- PLS-BK-003 ``ensemble_at`` / ``bookies_of``: entry i uses the ensemble under the greatest
  first-entry key <= i (``client/LedgerMetadataImpl.java#getEnsembleAt``).
- PLS-BK-004 ``ensemble_change``: when bookies fail, the new ensemble starts at the writer's
  LAC + 1, replacing the last one if nothing was confirmed since it began; a failed bookie's
  replacement takes the same position (``client/LedgerHandle.java#ensembleChangeLoop``,
  ``EnsembleUtils.replaceBookiesInEnsemble``).
- PLS-BK-005 ``acknowledge``: an add completes once Qa distinct bookies of its write set have
  acked it (no coverage condition), and completions are delivered to the writer in entry-id
  order: entry n is never acknowledged before 0..n-1 (``client/PendingAddOp.java#writeComplete``,
  ``LedgerHandle#sendAddSuccessCallbacks``). The writer's LAC is the last entry delivered.
- PLS-BK-006 ``covered``: a LAC read or a recovery has heard enough once every window of Qw
  consecutive positions holds fewer than Qa bookies that have not answered
  (``RoundRobinDistributionSchedule.RRQuorumCoverageSet#checkCovered``).
- PLS-BK-007 ``read_refusal``: a normal read of entries first..last is refused if first < 0 or
  first > last (IncorrectParameter, -14) or last > the reader's LAC (ReadException, -1); only
  an unconfirmed read may go past the LAC (``LedgerHandle#asyncReadEntries``). The broker reads its
  own open ledgers up to the managed ledger's last confirmed entry, not through this bound.

Not modelled: the fault-domain gate on acks (``enforceMinNumFaultDomainsForWrite``, off by
default and not set by Pulsar), explicit LAC (off: ``bookkeeperExplicitLacIntervalInMills=0``),
recovery's re-writes, and the 32-bit overflow of ``getWriteSetBookieIndex`` past entry 2^31 - Qw
(Pulsar rolls a ledger over at 50 000 entries).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

# ServiceConfiguration managedLedgerMax{EnsembleSize,WriteQuorum,AckQuorum}: 5 each by default.
MAX_QUORUM = 5
# LedgerHandle.INVALID_ENTRY_ID: "no entry" (an empty ledger's LAC).
NO_ENTRY = -1
INCORRECT_PARAMETER = -14  # BKException.Code.IncorrectParameterException
READ_EXCEPTION = -1  # BKException.Code.ReadException
# Pulsar never writes an entry id this high into one ledger; past it BookKeeper's add path overflows.
MAX_ENTRY_ID = 2**31


@dataclass(frozen=True)
class Quorums:
    """A ledger's ensemble size, write quorum and ack quorum."""

    ensemble: int
    write: int
    ack: int

    def __post_init__(self) -> None:
        if not (self.ensemble >= self.write >= self.ack >= 1):
            raise ValueError(f"E={self.ensemble}, Qw={self.write}, Qa={self.ack}: a ledger needs E >= Qw >= Qa >= 1 "
                             "(persistence_refusal says what the admin API answers to other values)")


def persistence_refusal(ensemble: int, write: int, ack: int, *, max_ensemble: int = MAX_QUORUM,
                        max_write: int = MAX_QUORUM, max_ack: int = MAX_QUORUM) -> str | None:
    """PLS-BK-001: the reason the admin API gives (HTTP 400) for a persistence policy, checked in
    the broker's order; None when the policy is accepted."""
    if not 0 < ensemble <= max_ensemble:
        return f"Bookkeeper-Ensemble must be <= {max_ensemble} and > 0."
    if not 0 < write <= max_write:
        return f"Bookkeeper-WriteQuorum must be <= {max_write} and > 0."
    if not 0 < ack <= max_ack:
        return f"Bookkeeper-AckQuorum must be <= {max_ack} and > 0."
    if not ensemble >= write >= ack:
        return f"Bookkeeper Ensemble ({ensemble}) >= WriteQuorum ({write}) >= AckQuorum ({ack})"
    return None


def _check_entry(entry: int) -> None:
    if not 0 <= entry <= MAX_ENTRY_ID:
        raise ValueError(f"entry id {entry} is outside 0..2^31: a BookKeeper entry id is a non-negative position in its ledger")


def write_set(quorums: Quorums, entry: int) -> tuple[int, ...]:
    """PLS-BK-002: the ensemble positions that store ``entry``, in write order."""
    _check_entry(entry)
    return tuple((entry + w) % quorums.ensemble for w in range(quorums.write))


def entries_on_position(quorums: Quorums, position: int, first: int, last: int) -> tuple[int, ...]:
    """PLS-BK-002 read the other way: the entries in first..last that the bookie at ``position``
    stores (``RoundRobinDistributionSchedule#hasEntry``)."""
    if not 0 <= position < quorums.ensemble:
        raise ValueError(f"position {position} is not in an ensemble of {quorums.ensemble}")
    return tuple(e for e in range(first, last + 1) if position in write_set(quorums, e))


def ensemble_at(ensembles: Mapping[int, Sequence[str]], entry: int) -> tuple[str, ...]:
    """PLS-BK-003: the ensemble (bookie ids by position) that ``entry`` was written with."""
    _check_entry(entry)
    if 0 not in ensembles:
        raise ValueError(f"a ledger's ensembles start at entry 0; these start at {min(ensembles) if ensembles else 'nothing'}")
    return tuple(ensembles[max(k for k in ensembles if k <= entry)])


def bookies_of(quorums: Quorums, ensembles: Mapping[int, Sequence[str]], entry: int) -> tuple[str, ...]:
    """PLS-BK-002 and -003: the bookies that hold ``entry``, in write order."""
    members = ensemble_at(ensembles, entry)
    if len(members) != quorums.ensemble:
        raise ValueError(f"an ensemble of a ledger with E={quorums.ensemble} lists {len(members)} bookies: {list(members)}")
    return tuple(members[p] for p in write_set(quorums, entry))


def ensemble_change(ensembles: Mapping[int, Sequence[str]], lac: int, replacements: Mapping[int, str]) -> dict[int, tuple[str, ...]]:
    """PLS-BK-004: the ensembles after the bookies at the positions in ``replacements`` failed while
    the writer's LAC was ``lac``; each failed position gets its replacement bookie."""
    if not replacements:
        raise ValueError("an ensemble change replaces at least one bookie")
    start = lac + 1
    last_key = max(ensembles)
    if last_key > start:
        raise ValueError(f"the last ensemble starts at entry {last_key}, after LAC + 1 = {start}: "
                         "BookKeeper changes ensembles only at or after the last one's start")
    current = list(ensembles[last_key])
    for position, bookie in replacements.items():
        if not 0 <= position < len(current):
            raise ValueError(f"position {position} is not in an ensemble of {len(current)}")
        current[position] = bookie
    changed = {k: tuple(v) for k, v in ensembles.items()}
    changed[start] = tuple(current)  # replaces the last one when nothing was confirmed since it began
    return changed


@dataclass(frozen=True)
class AddProgress:
    """After one bookie's ack: the entries this ack delivered to the writer, in order, and the LAC."""

    delivered: tuple[int, ...]
    lac: int


def acknowledge(quorums: Quorums, sent: int, acks: Iterable[tuple[int, int]], *, lac: int = NO_ENTRY) -> tuple[AddProgress, ...]:
    """PLS-BK-005: replay bookie acks ``(entry, position)`` for entries ``lac+1 .. lac+sent``
    (sent, none failed) and say after each what reached the writer. An ack from a position
    outside the entry's write set is an error: BookKeeper never sends the entry there."""
    first = lac + 1
    acked: dict[int, set[int]] = {e: set() for e in range(first, first + sent)}
    progress = []
    for entry, position in acks:
        if entry not in acked:
            raise ValueError(f"an ack for entry {entry}, which is not among the {sent} entries sent after LAC {lac}")
        if position not in write_set(quorums, entry):
            raise ValueError(f"position {position} acked entry {entry}, which is written to positions {list(write_set(quorums, entry))} only")
        acked[entry].add(position)
        delivered = []
        while lac + 1 in acked and len(acked[lac + 1]) >= quorums.ack:
            lac += 1
            delivered.append(lac)
        progress.append(AddProgress(tuple(delivered), lac))
    return tuple(progress)


def covered(quorums: Quorums, answered: Iterable[int]) -> bool:
    """PLS-BK-006: True once the positions in ``answered`` leave every window of Qw consecutive
    positions with fewer than Qa silent bookies."""
    heard = set(answered)
    e, w, a = quorums.ensemble, quorums.write, quorums.ack
    return all(sum((s + j) % e not in heard for j in range(w)) < a for s in range(e))


def read_refusal(first: int, last: int, lac: int) -> int | None:
    """PLS-BK-007: the BookKeeper code a normal read of entries first..last gets from a handle whose
    LAC is ``lac``; None when the read is allowed."""
    if first < 0 or first > last:
        return INCORRECT_PARAMETER
    if last > lac:
        return READ_EXCEPTION
    return None
