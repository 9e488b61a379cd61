"""Chunking: how a producer splits a payload larger than the broker's maximum message size.

Pulsar part: producer-side chunking of the C++ client (what the Python client runs):
``apache/pulsar-client-cpp lib/ProducerImpl.cc`` (constructor: when chunking is effective;
``sendAsyncWithStatsUpdate``: chunk size and MessageTooBig; ``getNumOfChunks``),
``lib/MessageId.cc`` (``operator<<`` of a chunk message id), ``lib/ChunkMessageIdImpl.h``;
Python's own check in ``apache/pulsar-client-python pulsar/__init__.py#Client.create_producer``.
Rule ids: PLS-CHUNK-001 .. PLS-CHUNK-008.

The Go client (``apache/pulsar-client-go pulsar/producer_partition.go``: ``genMetadata``,
``updateMetaData``, ``updateChunkInfo``; ``pulsar/internal/commands.go`` ``serializeMessage``) makes
the same split with one difference: the metadata it measures already carries
``uncompressed_size`` (field 9, the payload's size), so its ``m`` is larger by ``1 + varint(s)``
bytes and both the chunk boundary (PLS-CHUNK-007) and the limit without chunking (PLS-CHUNK-008)
sit that much lower (``GO_SIZING``). Without chunking it refuses a payload above the maximum
itself (``ErrMessageTooLarge``, MessageTooBig) and one whose metadata tips it over when it frames
the send (the internal ``ErrExceedMaxMessageSize``). It refuses chunking with batching when the
producer is created (``producer_impl.go``; PLS-CHUNK-004), and does not turn chunking off on a
non-persistent topic (not modelled).

The steps of one send, as C++ 4.2.0 does them (PLS-CHUNK-002/003):
1. Chunking is *effective* only if the producer asked for it, the topic is persistent and
   batching is off (``chunking and persistent and not batching``; PLS-CHUNK-006). Python refuses
   chunking together with batching before C++ sees it (PLS-CHUNK-004).
2. The metadata size ``m`` is the protobuf size of the message metadata *before* any chunk field
   is set: producer name, sequence id, publish time, plus what the application set (properties,
   partition key, ordering key, event time, deliver-at time). ``metadata_size`` computes it.
3. Effective chunking: if ``m >= max`` the send fails with MessageTooBig; else the payload chunk
   size is ``c = max - m`` and the chunk count is ``ceil(size / c)`` when ``size >= c``, else 1.
   A count of 1 means "not chunked": an ordinary single entry, even when ``size == c``.
4. No effective chunking (and no batching): the send fails with MessageTooBig when
   ``m + size > max``; a message of exactly ``max`` bytes on the wire is accepted.
5. Each chunk is its own entry (its own ledger/entry id); every chunk carries the same sequence
   id and ``uuid = "<producer name>-<sequence id>"``. The send returns, and the consumer
   reports, a *chunk message id* whose ``str`` is ``"(first chunk id);(last chunk id)"``
   (PLS-CHUNK-005); the consumer hands over one message with the whole payload (PLS-CHUNK-001).

Not modelled: compression (the chunked size is the compressed size), encryption, the
consumer's reassembly buffer (``max_pending_chunked_message``, the 60 s expiry of incomplete
messages), chunks interleaved from several producers, a single oversize message inside a
batch, the broker's own size check (it allows a frame padding above ``maxMessageSize``).
Choices: ``metadata_size`` covers the metadata fields a Python application can set; the
sizes are protobuf's (varints, one-byte tags below field 16, two-byte tags above).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from reference_model.ids import MessageId
from reference_model.rejections import Rejected

DEFAULT_MAX_MESSAGE_SIZE = 5_242_880  # broker maxMessageSize default, sent in CommandConnected

# The exact ValueError text of pulsar-client-python 3.13 (PLS-CHUNK-004).
CHUNKING_WITH_BATCHING_ERROR = "Batching and chunking of messages can't be enabled together."


# --------------------------------------------------------------------------- metadata size


def varint_size(value: int) -> int:
    """Bytes protobuf needs for ``value`` as a varint (negative int64 values take 10)."""
    if value < 0:
        return 10
    size = 1
    while value >= 0x80:
        value >>= 7
        size += 1
    return size


def _tag(field_number: int) -> int:
    return varint_size(field_number << 3)


def _length_delimited(field_number: int, length: int) -> int:
    return _tag(field_number) + varint_size(length) + length


def metadata_size(
    producer_name: str,
    sequence_id: int,
    publish_time_ms: int,
    *,
    properties: Mapping[str, str] | None = None,
    partition_key: str | None = None,
    ordering_key: bytes | str | None = None,
    event_time_ms: int | None = None,
    deliver_at_ms: int | None = None,
    uncompressed_size: int | None = None,
) -> int:
    """Protobuf size of ``MessageMetadata`` as C++ measures it before chunking (step 2); with
    ``uncompressed_size``, as Go measures it (the field is already set then: PLS-CHUNK-007).

    Fields (apache/pulsar-client-cpp proto/PulsarApi.proto): producer_name=1, sequence_id=2,
    publish_time=3 (always present), properties=4 (KeyValue key=1 value=2), partition_key=6,
    uncompressed_size=9, event_time=12, ordering_key=18, deliver_at_time=19.
    """
    size = _length_delimited(1, len(producer_name.encode()))
    size += _tag(2) + varint_size(sequence_id)
    size += _tag(3) + varint_size(publish_time_ms)
    for key, value in (properties or {}).items():
        kv = _length_delimited(1, len(key.encode())) + _length_delimited(2, len(value.encode()))
        size += _length_delimited(4, kv)
    if partition_key:
        size += _length_delimited(6, len(partition_key.encode()))
    if event_time_ms:
        size += _tag(12) + varint_size(event_time_ms)
    if ordering_key:
        raw = ordering_key.encode() if isinstance(ordering_key, str) else ordering_key
        size += _length_delimited(18, len(raw))
    if deliver_at_ms is not None:
        size += _tag(19) + varint_size(deliver_at_ms)
    if uncompressed_size is not None:
        size += _tag(9) + varint_size(uncompressed_size)
    return size


@dataclass(frozen=True)
class ClientSizing:
    """How a client measures a send against the maximum message size, and the rules that say so."""

    metadata_counts_uncompressed_size: bool  # Go: genMetadata sets uncompressed_size before the measure
    count_rule: str  # the chunk count (PLS-CHUNK-002 / 007)
    limit_rule: str  # the refusal without chunking (PLS-CHUNK-003 / 008)


CPP_SIZING = ClientSizing(False, "PLS-CHUNK-002", "PLS-CHUNK-003")
GO_SIZING = ClientSizing(True, "PLS-CHUNK-007", "PLS-CHUNK-008")
SIZINGS = {"cpp": CPP_SIZING, "go": GO_SIZING}


# --------------------------------------------------------------------------- the split


def chunking_effective(*, chunking_enabled: bool, batching_enabled: bool, persistent: bool) -> bool:
    """Step 1 (PLS-CHUNK-006): C++ silently turns chunking off on non-persistent topics and with batching."""
    return chunking_enabled and persistent and not batching_enabled


def check_producer_config(*, chunking_enabled: bool, batching_enabled: bool) -> str | None:
    """PLS-CHUNK-004: the Python ValueError text for chunking with batching, else None."""
    if chunking_enabled and batching_enabled:
        return CHUNKING_WITH_BATCHING_ERROR
    return None


def num_of_chunks(size: int, payload_chunk_size: int) -> int:
    """C++ ``ProducerImpl::getNumOfChunks``: ``ceil(size / c)`` if ``size >= c > 0``, else 1."""
    if payload_chunk_size != 0 and size >= payload_chunk_size:
        return size // payload_chunk_size + (0 if size % payload_chunk_size == 0 else 1)
    return 1


def chunk_count(payload_size: int, *, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE, metadata_size: int) -> int:
    """PLS-CHUNK-002: how many entries a chunking producer writes for ``payload_size`` bytes.

    1 means not chunked. Raises ``ValueError`` when ``metadata_size >= max_message_size``: that
    send is rejected with MessageTooBig (``send_plan`` returns the rejection as a value).
    """
    if payload_size < 0 or metadata_size < 0 or max_message_size <= 0:
        raise ValueError(f"sizes must be non-negative (max positive); got {payload_size=}, {metadata_size=}, {max_message_size=}")
    if metadata_size >= max_message_size:
        raise ValueError(
            f"metadata of {metadata_size} bytes leaves no room under max_message_size {max_message_size}: "
            "the send is rejected with MessageTooBig (see send_plan)"
        )
    return num_of_chunks(payload_size, max_message_size - metadata_size)


@dataclass(frozen=True)
class SendPlan:
    """What one send becomes: ``chunks`` entries, each carrying ``chunk_slices[i]`` of the payload."""

    chunks: int
    chunk_slices: tuple[tuple[int, int], ...]  # [begin, end) byte ranges of the payload


def chunk_slices(payload_size: int, payload_chunk_size: int, chunks: int) -> tuple[tuple[int, int], ...]:
    """The byte range each chunk carries: consecutive slices of ``payload_chunk_size`` bytes, the last one shorter."""
    out, begin = [], 0
    for _ in range(chunks):
        end = min(payload_size, begin + payload_chunk_size)
        out.append((begin, end))
        begin = end
    return tuple(out)


def send_plan(
    payload_size: int,
    *,
    metadata_size: int,
    chunking_enabled: bool,
    batching_enabled: bool = False,
    persistent: bool = True,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    sizing: ClientSizing = CPP_SIZING,
) -> SendPlan | Rejected:
    """Steps 1-4: the chunks of one (non-batched) send, or the MessageTooBig rejection.

    ``metadata_size`` is the client's own measure (``sizing`` says which; the caller computes it),
    and ``sizing`` names the rules a rejection answers to.

    A batching producer is not modelled here (its size check is per batch); calling with
    ``batching_enabled`` and ``chunking_enabled`` models C++ (chunking silently off); the Python
    client refuses that producer earlier (``check_producer_config``).
    """
    if batching_enabled:  # a caller's mistake, not a Pulsar behaviour: the model sizes a batch in reference_model.batching
        raise ValueError("send_plan sizes one unbatched send; a batching producer's size check is per batch "
                         "(reference_model.batching)")
    if chunking_effective(chunking_enabled=chunking_enabled, batching_enabled=batching_enabled, persistent=persistent):
        if metadata_size >= max_message_size:
            if sizing.metadata_counts_uncompressed_size:
                from reference_model.rejections import NotModelledError

                # Go: ErrMetaTooLarge, result InvalidMessage (producer_partition.go updateChunkInfo)
                raise NotModelledError("a Go chunked send whose metadata alone reaches maxMessageSize (ErrMetaTooLarge)")
            return Rejected("MessageTooBig", sizing.count_rule, f"metadata size {metadata_size} >= max message size {max_message_size}")
        n = chunk_count(payload_size, max_message_size=max_message_size, metadata_size=metadata_size)
        return SendPlan(n, chunk_slices(payload_size, max_message_size - metadata_size, n))
    if metadata_size + payload_size > max_message_size:
        return Rejected(
            "MessageTooBig", sizing.limit_rule,
            f"{metadata_size} + {payload_size} bytes exceed max message size {max_message_size} and chunking is not in effect",
        )
    return SendPlan(1, ((0, payload_size),))


def chunk_message_id_str(first: MessageId, last: MessageId) -> str:
    """PLS-CHUNK-005: ``str`` of a chunk message id (C++ ``operator<<``): first chunk id, ';', last chunk id."""
    return f"{first};{last}"


def chunk_entry_ids(first: MessageId, chunks: int) -> tuple[MessageId, ...]:
    """Ids of the entries of one chunked message when nothing else was written in between (one producer)."""
    return tuple(MessageId(first.ledger, first.entry + i, first.partition, -1) for i in range(chunks))
