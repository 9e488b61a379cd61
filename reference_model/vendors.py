"""Vendor profiles: where a vendor's Pulsar documents rules of its own on top of Apache Pulsar's.

Pulsar part: none of Apache Pulsar's own rules; the vendor's developer guide. Today one vendor:
Tencent Cloud's TDMQ for Pulsar (docs/research/tdmq-profile.md cites every page). Its broker-side
rules are reproduced on Apache Pulsar by the project's reference tag filter
(``fixtures/entry_filters/TagFilter.java``, a PIP-105 entry filter) and by the broker setting
``delayedDeliveryMaxDelayInMillis``.
Rule ids: PLS-TAG-001 (tags), PLS-TAG-002 (batches are not filtered), PLS-TAG-003 (tags fixed at creation), PLS-DELAY-007 (the delay limit, an Apache rule the profile sets).

A profile is chosen per run (``pulsar-conformance run --profile apache|tdmq``) and recorded in the
history header's ``profile`` object as ``vendor``; ``reference_model.profiles.profile_for`` applies
the vendor's settings (``VENDOR_SETTINGS``) before the trace's own overrides. Apache's rules hold
under every profile unless a rule says otherwise (``rules.AppliesTo.vendors``).

Tag filtering (TDMQ developer guide, "Message Tag Filtering", tencentcloud.com/document/product/1110/46518):
1. A message's tags are its properties whose value is the fixed word ``TAGS`` (key = tag).
2. A subscription's tags are the keys of its subscription properties (value reserved, ``1``).
3. A subscription without tags gets every message; a message without tags goes to every
   subscription; otherwise the message goes to the subscription when it carries at least one of
   the subscription's tags (tags are OR-ed), and is never delivered there when it carries none:
   the filter acknowledges it for that subscription (PIP-105 ``FilterResult.REJECT``).
4. A batched message is not filtered (PLS-TAG-002): the broker filters entries, and a batch entry's
   metadata carries none of its messages' properties, so the filter reads the batch as untagged and
   it goes to every subscription. TDMQ only says tags "do not support batching" (producers of tagged
   messages must disable it); the reference implementation (streamnative/pulsar-message-filter,
   ``DefaultEntryFilter``) accepts every batch; measured 27 Nov 2026 on 4.0.8 with the project's filter,
   Python (C++) and Java clients: batches of tags the subscription lacks all arrived (case
   ``tdmq-tags-batched-unfiltered``). A Java producer sends a lone message unbatched
   (PLS-BATCH-008): that one is filtered.

5. A subscription keeps the tags it was created with (PLS-TAG-003; TDMQ T4 "every consumer of a
   subscription must use the same tags" and T9 "the tags cannot be changed"): they come from the admin
   API's create-subscription or from the subscription properties of the consumer that creates it
   (``subscribe``'s ``subscription_properties``, Java only: the Python client has no such setting); a
   consumer that joins later giving other tags changes nothing. TDMQ leaves open which consumer's tags
   win; Apache's PersistentTopic#getDurableSubscription keeps an existing subscription's properties.
   Measured 28 Nov 2026 on 4.0.8 with the Java client and the project's filter (case
   ``tdmq-tags-consumers-differ``).

Retry and dead-letter rules of TDMQ's guide (docs/research/tdmq-profile.md, section 1.3) that are the
Apache Java client's, judged by Apache's rules under either profile: 16 retries by default, the 17th
to the DLQ (RetryMessageUtil.MAX_RECONSUMETIMES, PLS-RETRY-003, case retry-to-dlq-java); the names by
cluster generation, which are the Apache Java client's by release
(``profiles.Profile.java_retry_names_by_topic``: <sub>-RETRY before 2.8, <topic>-<sub>-RETRY after;
measured with the Java clients 2.7.4 and 2.10.5); a reconsumeLater delay of at most 864 000 s (R8), which
is the 10-day delay limit applied to the retry copy, a delayed message: refused with NotAllowedError
(PLS-DELAY-007), after which the client redelivers the original (PLS-RETRY-004; case
tdmq-reconsume-later-delay-limit, live 4.0.8).

A subscription's backlog counts an entry its filter rejects until the dispatcher reads it and acks it (PIP-105
entry filters): the model, which acks it at once, allows the backlog anywhere from its own count to its own plus
the rejected entries (``Broker.backlog``; case ``tdmq-tags-backlog``).

Not modelled: tags on a non-persistent topic's subscription (NotModelledError: whether the filter runs
there is not measured); reconsumeLater by level and the 2.6.1 clusters' lowercase -retry/-dlq names
(TDMQ's own client and clusters: no Apache release has either, and no TDMQ source is public); TDMQ's
SQL-92 filters.
Choices: tags are sets of strings; the rules are pure functions over message and subscription
properties.
"""

from __future__ import annotations

from typing import Any, Mapping

APACHE, TDMQ = "apache", "tdmq"
VENDORS = (APACHE, TDMQ)
TAG_VALUE = "TAGS"  # rule 1: a tag property's value
TDMQ_MAX_DELAY_MS = 864_000 * 1000  # "any time within 864,000 s (10 days)" (docs/research/tdmq-profile.md 1.2)

# Profile fields a vendor sets (reference_model.profiles.Profile), applied before a trace's overrides.
VENDOR_SETTINGS: Mapping[str, Mapping[str, Any]] = {
    APACHE: {},
    TDMQ: {"tag_filtering": True, "delayed_max_delay_ms": TDMQ_MAX_DELAY_MS},
}

# What the embedded broker needs to play a vendor (fixtures.embedded.EmbeddedBroker): broker.conf
# settings and entry filters (fixtures/entry_filters.py).
VENDOR_BROKER_CONFIG: Mapping[str, Mapping[str, str]] = {
    APACHE: {},
    TDMQ: {"delayedDeliveryMaxDelayInMillis": str(TDMQ_MAX_DELAY_MS)},
}
VENDOR_ENTRY_FILTERS: Mapping[str, tuple[str, ...]] = {APACHE: (), TDMQ: ("tdmq-tags",)}


def check_vendor(name: str) -> str:
    """``name`` if it is a known vendor profile; else a ValueError naming the known ones."""
    if name not in VENDORS:
        raise ValueError(f"unknown profile {name!r}; use one of {', '.join(VENDORS)}")
    return name


def message_tags(properties: Mapping[str, str] | None) -> frozenset[str]:
    """Rule 1: the tags of a message with these properties."""
    return frozenset(k for k, v in (properties or {}).items() if v == TAG_VALUE)


def subscription_tags(properties: Mapping[str, str] | None) -> frozenset[str]:
    """Rule 2: the tags of a subscription with these subscription properties."""
    return frozenset((properties or {}).keys())


def filtered_tags(properties: Mapping[str, str] | None, *, batched: bool) -> frozenset[str]:
    """Rules 1 and 4: the tags the broker's filter reads on the entry of a message with these properties: none
    when the message is in a batch (the batch entry's metadata does not carry its messages' properties)."""
    return frozenset() if batched else message_tags(properties)


def tag_accepts(message: frozenset[str], subscription: frozenset[str]) -> bool:
    """Rule 3: whether a message with tags ``message`` goes to a subscription with tags ``subscription``."""
    return not subscription or not message or bool(message & subscription)


def rejection_reason(message: frozenset[str], subscription: frozenset[str]) -> str:
    """Why rule 3 keeps a message from a subscription (for explanations)."""
    return (f"its tags {', '.join(sorted(message))} share none with the subscription's "
            f"{', '.join(sorted(subscription))} (PLS-TAG-001)")
