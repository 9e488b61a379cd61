"""Message TTL, retention and the backlog: what happens to messages nobody acknowledges, or everybody did.

Pulsar part: the broker's expiry monitor (``apache/pulsar pulsar-broker/src/main/java/org/apache/
pulsar/broker/service/persistent/PersistentMessageExpiryMonitor.java``,
``PersistentTopic#checkMessageExpiry``, run every ``messageExpiryCheckIntervalInMinutes``,
default 5, from ``ServiceConfiguration``); the admin ``expireMessages`` endpoint
(``.../admin/v2/PersistentTopics.java``); ledger trimming in ``ManagedLedgerImpl`` (acked data
is deleted a whole ledger at a time); namespace policies ``messageTTL`` and ``retention``.
Rule ids: PLS-TTL-001 .. PLS-TTL-003, PLS-RETENTION-001, PLS-RETENTION-002, PLS-BACKLOG-001.

TTL (PLS-TTL-001/003), per subscription: a message is *expired* at ``now`` when
``now > publish_time + ttl``. An expiry pass moves the subscription's cursor past the last
expired message, so every message up to it is gone from that subscription: never delivered
again, even if it was already delivered and not acked. Messages younger than the TTL stay.
When (PLS-TTL-002): only when a pass runs, i.e. at the periodic check (every
``messageExpiryCheckIntervalInMinutes``) or when the admin API asks for one
(``POST .../subscription/<sub>/expireMessages/<seconds>``). Between passes, expired messages
are still delivered.

Retention (PLS-RETENTION-001/002): without a retention policy acked messages *may* be deleted;
they are removed only when the ledger holding them is trimmed, and only a closed ledger is
(``ledger_closed_by``: an unload, or a rollover), so a new subscription at Earliest or a reader
may still read them. With a retention policy they must stay readable for the retention
time/size. The model therefore treats deletion of acked data as "allowed once their ledger may
be closed, never required" without retention, and "forbidden" inside retention.

Backlog (PLS-BACKLOG-001): a subscription's ``msgBacklog`` counts entries not yet acked
(``batching.backlog_entries``: a batch is one entry).

An admin pass is asynchronous (PLS-TTL-002): ``expireMessages`` answers once the pass is issued
(``PersistentMessageExpiryMonitor#expireMessages`` starts ``asyncFindNewestMatching``; the cursor's
mark-delete follows when the search ends), so stats read right after it may still count what it expires.
``expiry_settled_by`` bounds that: Pulsar's own admin test waits one second after the call "as it is
async" (``AdminApiTest``); live 5.0.0-M1, 27 Nov 2026, a pass over a topic holding a 5 MB chunked message
had not moved the cursor 3 ms after the call returned (issue 16's campaign, 1 run in 3).

Not modelled: retention limits (the size / time at which retained data goes), backlog quotas,
TTL at topic level vs namespace level precedence, broker-entry-metadata publish times, the
ledger size threshold (``managedLedgerMaxSizePerLedgerMbytes``: payloads are not sized), offload.
Not modelled either: the periodic check itself (it may expire a message any time in
``[publish + ttl, publish + ttl + interval]``, at the broker's uptime modulo the interval, which a
trace does not know); only a pass the trace asks for runs. The suite's broker sets the interval to
a day (``fixtures/embedded.py`` CONFORMANCE_CONFIG), so no periodic pass runs during a run there; on
another broker one may, and a history from it may show messages expired without a forced pass.
Choices: ``publish_time`` is the client-set publish timestamp (what ``Message.publish_timestamp()``
returns).
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_EXPIRY_CHECK_INTERVAL_MINUTES = 5  # ServiceConfiguration messageExpiryCheckIntervalInMinutes (not modelled)


@dataclass(frozen=True)
class Stored:
    """One message of a subscription's backlog, in topic order."""

    name: str
    publish_time_ms: int


def is_expired(publish_time_ms: float, now_ms: float, ttl_seconds: int) -> bool:
    """PLS-TTL-001: older than the TTL (a TTL of 0 means no TTL)."""
    return ttl_seconds > 0 and now_ms > publish_time_ms + ttl_seconds * 1000


def expire(backlog: tuple[Stored, ...], now_ms: float, ttl_seconds: int) -> tuple[Stored, ...]:
    """One expiry pass: drop everything up to and including the last expired message (PLS-TTL-001/003)."""
    last = -1
    for i, m in enumerate(backlog):
        if is_expired(m.publish_time_ms, now_ms, ttl_seconds):
            last = i
    return backlog[last + 1:]


EXPIRY_SETTLE_MS = 1000  # how long after expireMessages returns its cursor move may still be under way


def expiry_settled_by(pass_returned_ms: float) -> float:
    """PLS-TTL-002: when an admin expiry pass that returned at ``pass_returned_ms`` has surely moved the cursor.
    Before then the backlog may count the messages it expires, or not."""
    return pass_returned_ms + EXPIRY_SETTLE_MS


# ManagedLedgerConfig defaults, as ServiceConfiguration sets them (managedLedgerMinLedgerRolloverTimeMinutes,
# managedLedgerMaxLedgerRolloverTimeMinutes, managedLedgerMaxEntriesPerLedger); the suite's broker keeps them.
MIN_LEDGER_ROLLOVER_MS = 10 * 60_000
MAX_LEDGER_ROLLOVER_MS = 240 * 60_000
MAX_ENTRIES_PER_LEDGER = 50_000


def ledger_closed_by(*, first_written_ms: float, last_written_ms: float, now_ms: float,
                     unloads_ms: tuple[float, ...], entries_in_topic: int) -> str | None:
    """PLS-RETENTION-001: what may have closed the ledger holding messages written from
    ``first_written_ms`` to ``last_written_ms`` by ``now_ms`` (None: nothing; it is still open, so
    nothing in it can have been trimmed).

    A topic's current ledger is closed when the topic is unloaded (or its broker restarts) and,
    while it is written, when ``ManagedLedgerImpl#currentLedgerIsFull`` says so: it holds
    ``managedLedgerMaxEntriesPerLedger`` entries (or its size limit) or is
    ``managedLedgerMaxLedgerRolloverTimeMinutes`` old, *and* it is older than
    ``managedLedgerMinLedgerRolloverTimeMinutes``; ``trimConsumedLedgersInBackground`` deletes
    closed ledgers only. The ledger's creation time is not observed, so its age is taken from
    the first message the model knows in it (a lower bound), and either threshold alone is
    accepted: the answer may say "closed" where the broker would not, never the reverse.
    """
    after = [t for t in unloads_ms if t >= last_written_ms]
    if after:
        return f"the unload at {min(after):g} ms"
    age = now_ms - first_written_ms
    if age >= MIN_LEDGER_ROLLOVER_MS:
        return f"a rollover once the ledger was {MIN_LEDGER_ROLLOVER_MS // 60_000} minutes old"
    if entries_in_topic >= MAX_ENTRIES_PER_LEDGER:
        return f"a rollover at {MAX_ENTRIES_PER_LEDGER} entries"
    return None


def acked_may_be_read(*, retention_covers: bool) -> frozenset[bool]:
    """PLS-RETENTION-001/002: the allowed answers to "can a new Earliest reader still read an acked message?"."""
    return frozenset({True}) if retention_covers else frozenset({True, False})

