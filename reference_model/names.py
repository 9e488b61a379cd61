"""Topic names: how a name a user writes becomes the topic the broker serves.

Pulsar part: topic name parsing (C++ ``lib/TopicName.cc``), partition naming.
Rule ids: PLS-TOPIC-001 (expansion), PLS-TOPIC-002 (partition suffix), PLS-TOPIC-003 (invalid
names are refused with ``InvalidTopicName``), PLS-DLQ-001 / PLS-RETRY-001 (derived names).

- A short name ``x`` means ``persistent://public/default/x``; ``tenant/ns/x`` means
  ``persistent://tenant/ns/x`` (PLS-TOPIC-001). A two-part ``a/b`` is invalid (PLS-TOPIC-003).
- A full name is ``domain://tenant/namespace/local`` (or the legacy
  ``domain://tenant/cluster/namespace/local``). The domain is ``persistent`` or
  ``non-persistent``; tenant, cluster and namespace use ``[A-Za-z0-9_-=:.]``; the local name is
  not checked and may itself contain ``/`` (PLS-TOPIC-003).
- Partition i of topic T is the topic ``T-partition-i`` (PLS-TOPIC-002).

Not modelled: the ``segment`` domain of the newest C++ client; the quirks of parsing a partition
index (``x-partition-00`` -> 0).
Choices: invalid names are a ``Rejected`` value naming PLS-TOPIC-003, not an exception.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from reference_model.rejections import Rejected

DOMAINS = ("persistent", "non-persistent")
DEFAULT_TENANT = "public"
DEFAULT_NAMESPACE = "default"
PARTITION_SUFFIX = "-partition-"
_NAMESPACE_PART = re.compile(r"^[A-Za-z0-9_\-=:.]+$")


@dataclass(frozen=True)
class TopicName:
    domain: str
    tenant: str
    namespace: str
    local: str
    cluster: str | None = None  # only for legacy V1 names

    @property
    def full(self) -> str:
        middle = f"{self.tenant}/{self.cluster}/{self.namespace}" if self.cluster else f"{self.tenant}/{self.namespace}"
        return f"{self.domain}://{middle}/{self.local}"

    @property
    def partition_index(self) -> int:
        """-1 unless the local name ends in ``-partition-<N>`` (PLS-TOPIC-002)."""
        head, sep, tail = self.local.rpartition(PARTITION_SUFFIX)
        return int(tail) if sep and head and tail.isdigit() else -1


def _invalid(name: str, why: str) -> Rejected:
    return Rejected("InvalidTopicName", "PLS-TOPIC-003", f"invalid topic name {name!r}: {why}")


@functools.lru_cache(maxsize=4096)  # pure; every op re-parses its topic
def parse_topic(name: str) -> TopicName | Rejected:
    """Parse a topic name as the C++ client does; a ``Rejected`` names what is wrong."""
    if not name:
        return _invalid(name, "empty")
    if "://" not in name:
        # PLS-TOPIC-001: short forms.
        parts = name.split("/")
        if len(parts) == 1:
            return TopicName("persistent", DEFAULT_TENANT, DEFAULT_NAMESPACE, name)
        if len(parts) == 3:
            return _checked(name, TopicName("persistent", parts[0], parts[1], parts[2]))
        return _invalid(name, "a short name is 'x' or 'tenant/namespace/x'")
    domain, _, rest = name.partition("://")
    if domain not in DOMAINS:
        return _invalid(name, f"domain {domain!r} is not one of {', '.join(DOMAINS)}")
    parts = rest.split("/")
    if len(parts) < 3:
        return _invalid(name, "expected domain://tenant/namespace/topic")
    if len(parts) == 3:
        return _checked(name, TopicName(domain, parts[0], parts[1], parts[2]))
    # Legacy V1 name: tenant/cluster/namespace/local (local may contain '/').
    return _checked(name, TopicName(domain, parts[0], parts[2], "/".join(parts[3:]), cluster=parts[1]))


def _checked(name: str, topic: TopicName) -> TopicName | Rejected:
    for label, part in (("tenant", topic.tenant), ("cluster", topic.cluster), ("namespace", topic.namespace)):
        if part is not None and not _NAMESPACE_PART.match(part):
            return _invalid(name, f"{label} {part!r} may only use letters, digits and _-=:.")
    if not topic.local:
        return _invalid(name, "the topic part is empty")
    return topic


@functools.lru_cache(maxsize=4096)  # pure; every op re-parses its topic
def expand(name: str) -> str | Rejected:
    """The fully qualified name of ``name`` (PLS-TOPIC-001), or why it is invalid (PLS-TOPIC-003)."""
    parsed = parse_topic(name)
    return parsed if isinstance(parsed, Rejected) else parsed.full


def partition_name(topic: str, index: int) -> str:
    """Partition ``index`` of ``topic`` is ``<topic>-partition-<index>`` (PLS-TOPIC-002)."""
    if index < 0:
        raise ValueError(f"partition index must be >= 0, got {index}")
    return f"{topic}{PARTITION_SUFFIX}{index}"


def partition_of(name: str) -> int | None:
    """The index ``i`` of a partition's name ``<topic>-partition-<i>`` (PLS-TOPIC-002), None for any other name."""
    base, sep, index = name.rpartition(PARTITION_SUFFIX)
    return int(index) if sep and base and index.isdigit() else None


def partitioned_parent(name: str) -> str:
    """The partitioned topic a partition's name ``<topic>-partition-<i>`` belongs to (PLS-TOPIC-002); any other
    name is its own. A partition follows its partitioned topic's topic-level policies (PLS-POLICY-001)."""
    base, sep, index = name.rpartition(PARTITION_SUFFIX)
    return base if sep and base and index.isdigit() else name


@functools.lru_cache(maxsize=4096)  # pure; every op re-parses its topic
def expand_trace(name: str) -> str | Rejected:
    """A trace's topic name, fully qualified (docs/trace-format.md#names).

    As ``expand``, plus the trace format's short form of a non-persistent topic:
    ``non-persistent://t`` (no tenant or namespace) is ``non-persistent://public/default/t``, the way
    ``t`` is ``persistent://public/default/t``. (A Pulsar client would refuse that spelling; targets
    expand it before a client sees it.)
    """
    domain, sep, rest = name.partition("://")
    if sep and domain == "non-persistent" and rest and "/" not in rest:
        return f"non-persistent://{DEFAULT_TENANT}/{DEFAULT_NAMESPACE}/{rest}"
    return expand(name)


def is_persistent(full: str) -> bool:
    """``persistent://...`` topics store messages; ``non-persistent://...`` ones do not (PLS-NP-001)."""
    return not full.startswith("non-persistent://")


def short_name(full: str) -> str:
    """The trace's short form of a name in ``public/default`` (other namespaces stay full).

    A non-persistent topic keeps its domain: ``non-persistent://public/default/t`` -> ``non-persistent://t``.
    """
    prefix = f"persistent://{DEFAULT_TENANT}/{DEFAULT_NAMESPACE}/"
    if full.startswith(prefix):
        return full[len(prefix):]
    np_prefix = f"non-persistent://{DEFAULT_TENANT}/{DEFAULT_NAMESPACE}/"
    return "non-persistent://" + full[len(np_prefix):] if full.startswith(np_prefix) else full
