"""Chapter chunking.py: chunk counts, send plans and chunk ids (PLS-CHUNK-001..006)."""

from __future__ import annotations

import pytest

from reference_model import chunking
from reference_model.ids import MessageId
from reference_model.rejections import NotModelledError, Rejected

MAX = chunking.DEFAULT_MAX_MESSAGE_SIZE
NOW = 1_790_000_000_000  # a 2026 epoch-ms publish time: a 6-byte varint


# ---------------------------------------------------------------- PLS-CHUNK-*


def test_metadata_size_of_a_plain_message():
    # name 'pchunk' (1+1+6) + sequence id 0..127 (1+1) + publish time (1+6) = 17, as measured live
    assert chunking.metadata_size("pchunk", 0, NOW) == 17
    assert chunking.metadata_size("pchunk", 200, NOW) == 18  # two-byte varint
    assert chunking.metadata_size("p", 0, NOW, properties={"a": "b"}) == 3 + 2 + 7 + (1 + 1 + 6)
    assert chunking.metadata_size("p", 0, NOW, partition_key="pk") == 12 + 4
    assert chunking.metadata_size("p", 0, NOW, ordering_key="ok") == 12 + 2 + 1 + 2  # field 18: two-byte tag


@pytest.mark.parametrize("size,chunks", [
    (100, 1), (MAX - 40, 1), (MAX - 17, 1), (MAX - 16, 2), (MAX, 2), (2 * MAX, 3), (2 * MAX + 10, 3),
    (2 * (MAX - 17), 2), (2 * (MAX - 17) + 1, 3),
])
def test_chunk_count_matches_the_live_broker(size, chunks):
    assert chunking.chunk_count(size, metadata_size=17) == chunks


def test_chunk_count_refuses_metadata_that_fills_the_message():
    with pytest.raises(ValueError, match="MessageTooBig"):
        chunking.chunk_count(10, max_message_size=100, metadata_size=100)
    got = chunking.send_plan(10, metadata_size=100, chunking_enabled=True, max_message_size=100)
    assert isinstance(got, Rejected) and got.error == "MessageTooBig" and got.rule == "PLS-CHUNK-002"


def test_send_plan_slices_the_payload_into_equal_chunks_and_a_remainder():
    plan = chunking.send_plan(25, metadata_size=2, chunking_enabled=True, max_message_size=12)
    assert plan == chunking.SendPlan(3, ((0, 10), (10, 20), (20, 25)))
    assert plan.chunks > 1


def test_without_chunking_metadata_plus_payload_above_max_is_too_big():
    assert chunking.send_plan(MAX - 17, metadata_size=17, chunking_enabled=False) == chunking.SendPlan(1, ((0, MAX - 17),))
    got = chunking.send_plan(MAX - 16, metadata_size=17, chunking_enabled=False)
    assert isinstance(got, Rejected) and (got.error, got.rule) == ("MessageTooBig", "PLS-CHUNK-003")


def test_chunking_is_off_on_non_persistent_topics():
    got = chunking.send_plan(6_000_000, metadata_size=17, chunking_enabled=True, persistent=False)
    assert isinstance(got, Rejected) and got.error == "MessageTooBig"
    assert not chunking.chunking_effective(chunking_enabled=True, batching_enabled=False, persistent=False)
    with pytest.raises(ValueError, match="per batch"):  # sizing a batch is reference_model.batching's
        chunking.send_plan(10, metadata_size=1, chunking_enabled=True, batching_enabled=True)


def test_python_refuses_chunking_with_batching():
    assert chunking.check_producer_config(chunking_enabled=True, batching_enabled=True) == \
        "Batching and chunking of messages can't be enabled together."
    assert chunking.check_producer_config(chunking_enabled=True, batching_enabled=False) is None


def test_chunk_message_id_text():
    ids = chunking.chunk_entry_ids(MessageId(1634, 3), 2)
    assert ids == (MessageId(1634, 3), MessageId(1634, 4))
    assert chunking.chunk_message_id_str(ids[0], ids[-1]) == "(1634,3,-1,-1);(1634,4,-1,-1)"


# ---------------------------------------------------------------- the Go client (PLS-CHUNK-007/008)


def test_go_metadata_counts_uncompressed_size():
    # 'pchunk' + sequence id 0 + publish time (17, as C++) + uncompressed_size (field 9: tag 1 + a 4-byte varint
    # for sizes from 2 MiB to 256 MiB): 22, the size the Go client's own error reported live
    # ('encryptedPayload exceeds MaxMessageSize, size: 5242885' for a 5242863-byte payload)
    assert chunking.metadata_size("pchunk", 0, NOW, uncompressed_size=MAX - 17) == 22
    assert chunking.metadata_size("pchunk", 0, NOW, uncompressed_size=100) == 17 + 2


@pytest.mark.parametrize("size,chunks", [
    (MAX - 23, 1), (MAX - 22, 1), (MAX - 21, 2), (MAX - 17, 2), (MAX - 16, 2), (100, 1),
])
def test_go_chunk_boundary_matches_the_live_broker(size, chunks):
    # live 4.0.8 with pulsar-client-go 0.19.0, 28 Nov 2026: producer 'pchunk', ids '9:0:0' .. '9:6:0;9:7:0'
    m = chunking.metadata_size("pchunk", 0, NOW, uncompressed_size=size)
    plan = chunking.send_plan(size, metadata_size=m, chunking_enabled=True, sizing=chunking.GO_SIZING)
    assert plan.chunks == chunks


@pytest.mark.parametrize("size,refused", [(MAX - 22, False), (MAX - 21, True), (MAX - 17, True), (MAX, True), (MAX + 1, True)])
def test_go_without_chunking_refuses_metadata_plus_payload_above_max(size, refused):
    m = chunking.metadata_size("pnochk", 0, NOW, uncompressed_size=size)
    plan = chunking.send_plan(size, metadata_size=m, chunking_enabled=False, sizing=chunking.GO_SIZING)
    assert isinstance(plan, Rejected) == refused
    if refused:
        assert (plan.error, plan.rule) == ("MessageTooBig", "PLS-CHUNK-008")


def test_go_metadata_that_fills_the_message_is_not_modelled():
    # Go refuses it with ErrMetaTooLarge (result InvalidMessage), not MessageTooBig
    with pytest.raises(NotModelledError, match="ErrMetaTooLarge"):
        chunking.send_plan(10, metadata_size=100, chunking_enabled=True, max_message_size=100, sizing=chunking.GO_SIZING)
