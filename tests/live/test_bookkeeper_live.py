"""The BookKeeper chapter (reference_model/bookkeeper.py) where the broker shows it: the admin
API's persistence-policy refusals (PLS-BK-001) and the ledger metadata of a topic's ledger (E, Qw,
Qa, ensembles) with the message ids written into it (PLS-BK-002/003).

What stays model-only, and why: the embedded standalone runs one bookie, so the only quorums it can
write are 1/1/1 and every entry is on that bookie; striping (E > Qw), acks from several bookies,
coverage and ensemble changes need several bookies and a per-bookie read (``bookkeeper shell
readledger -b``), which this suite does not start yet (docs/research/bookkeeper-placement.md,
sections 6-7: ``--num-bookies`` exists in 3.0.7 and 4.0.8 but was not run)."""

from __future__ import annotations

import pytest

from fixtures.admin import parse_ledger_metadata
from fixtures.errors import AdminError
from reference_model import bookkeeper as bk

pulsar = pytest.importorskip("pulsar")

pytestmark = pytest.mark.live


@pytest.mark.parametrize("e,w,a", [(2, 3, 2), (3, 2, 3), (3, 2, 0), (6, 3, 2), (0, 0, 0), (3, 6, 2)])
def test_the_admin_api_refuses_what_the_chapter_refuses(pulsar_admin, pulsar_namespace, e, w, a):
    expected = bk.persistence_refusal(e, w, a)
    assert expected is not None
    with pytest.raises(AdminError) as refused:
        pulsar_admin.set_persistence(pulsar_namespace, ensemble=e, write_quorum=w, ack_quorum=a)
    assert refused.value.status == 400
    assert refused.value.reason == expected


def test_a_topic_ledger_is_written_with_the_namespace_quorums_and_holds_the_message_ids(pulsar_admin, pulsar_namespace, pulsar_client):
    assert bk.persistence_refusal(1, 1, 1) is None
    pulsar_admin.set_persistence(pulsar_namespace, ensemble=1, write_quorum=1, ack_quorum=1)
    topic = f"persistent://{pulsar_namespace}/bk"
    producer = pulsar_client.create_producer(topic, batching_enabled=False)
    ids = [producer.send(f"m{i}".encode()) for i in range(5)]
    stats = pulsar_admin.internal_stats(topic, metadata=True)
    ledgers = {item["ledgerId"]: item for item in stats["ledgers"]}
    written = {(m.ledger_id(), m.entry_id()) for m in ids}
    (ledger_id,) = {lid for lid, _ in written}  # one ledger: no rollover in 5 entries
    assert ledger_id in ledgers
    meta = parse_ledger_metadata(ledgers[ledger_id]["metadata"])
    assert (meta["ensemble_size"], meta["write_quorum"], meta["ack_quorum"]) == (1, 1, 1)
    assert meta["state"] == "OPEN"  # the producer's ledger is still being written
    quorums = bk.Quorums(meta["ensemble_size"], meta["write_quorum"], meta["ack_quorum"])
    assert sorted(e for _, e in written) == list(range(5)), "a fresh ledger numbers its entries from 0"
    (bookie,) = meta["ensembles"][0]
    for _, entry in written:
        assert bk.bookies_of(quorums, meta["ensembles"], entry) == (bookie,)
    assert stats["lastConfirmedEntry"] == f"{ledger_id}:4"


@pytest.fixture(scope="module")
def three_bookies():
    from fixtures.embedded import EmbeddedBroker

    broker = EmbeddedBroker(bookies=3)
    endpoint = broker.start()
    yield endpoint
    broker.stop()


def test_a_ledger_of_three_bookies_has_the_policy_quorums_and_e_distinct_bookies(three_bookies):
    from fixtures.admin import AdminClient

    admin = AdminClient(three_bookies.admin_url)
    client = pulsar.Client(three_bookies.service_url)
    try:
        namespace = admin.fresh_namespace()
        admin.set_persistence(namespace, ensemble=3, write_quorum=2, ack_quorum=2)
        topic = f"persistent://{namespace}/bk3"
        producer = client.create_producer(topic, batching_enabled=False)
        ids = [producer.send(f"m{i}".encode()) for i in range(6)]
        ledgers = {item["ledgerId"]: item for item in admin.internal_stats(topic, metadata=True)["ledgers"]}
        (ledger_id,) = {m.ledger_id() for m in ids}
        meta = parse_ledger_metadata(ledgers[ledger_id]["metadata"])
        assert (meta["ensemble_size"], meta["write_quorum"], meta["ack_quorum"]) == (3, 2, 2)
        assert list(meta["ensembles"]) == [0], "no bookie failed, so no ensemble change"
        ensemble = meta["ensembles"][0]
        assert len(set(ensemble)) == 3, f"an ensemble of 3 names 3 distinct bookies: {ensemble}"
        quorums = bk.Quorums(3, 2, 2)
        for m in ids:  # each entry's two copies go to two distinct bookies of the ensemble
            holders = bk.bookies_of(quorums, meta["ensembles"], m.entry_id())
            assert len(set(holders)) == 2 and set(holders) <= set(ensemble)
    finally:
        client.close()
        admin.close()
