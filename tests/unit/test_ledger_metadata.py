"""``fixtures.admin.parse_ledger_metadata``: BookKeeper's LedgerMetadata#toSafeString as the broker's
internalStats?metadata=true gives it; the example is the one in Pulsar's admin docs
(admin-api-transactions), the open form as BookKeeper 4.17's toStringRepresentation writes it."""

from __future__ import annotations

import pytest

from fixtures.admin import parse_ledger_metadata

CLOSED = ("LedgerMetadata{formatVersion=3, ensembleSize=1, writeQuorumSize=1, ackQuorumSize=1, state=CLOSED, length=63, "
          "lastEntryId=2, digestType=CRC32C, password=OMITTED, ensembles={0=[10.20.240.119:3181]}, "
          "customMetadata={component=base64:bWFuYWdlZC1sZWRnZXI=, application=base64:cHVsc2Fy}}")
OPEN = ("LedgerMetadata{formatVersion=3, ensembleSize=3, writeQuorumSize=2, ackQuorumSize=2, state=OPEN, digestType=CRC32C, "
        "password=OMITTED, ensembles={0=[a:3181, b:3181, c:3181], 5=[a:3181, d:3181, c:3181]}, customMetadata={}}")


def test_a_closed_ledger():
    assert parse_ledger_metadata(CLOSED) == {"ensemble_size": 1, "write_quorum": 1, "ack_quorum": 1, "state": "CLOSED",
                                             "last_entry_id": 2, "ensembles": {0: ("10.20.240.119:3181",)}}


def test_an_open_ledger_after_an_ensemble_change():
    meta = parse_ledger_metadata(OPEN)
    assert (meta["ensemble_size"], meta["write_quorum"], meta["ack_quorum"], meta["state"]) == (3, 2, 2, "OPEN")
    assert meta["last_entry_id"] is None
    assert meta["ensembles"] == {0: ("a:3181", "b:3181", "c:3181"), 5: ("a:3181", "d:3181", "c:3181")}


@pytest.mark.parametrize("text,problem", [
    (None, "not a BookKeeper ledger metadata string"),
    ("{}", "not a BookKeeper ledger metadata string"),
    ("LedgerMetadata{formatVersion=3, state=OPEN, ensembles={0=[a:1]}}", "without.*ackQuorumSize"),
    ("LedgerMetadata{formatVersion=3, ensembleSize=1, writeQuorumSize=1, ackQuorumSize=1}", "state or ensembles"),
])
def test_anything_else_is_named_as_not_metadata(text, problem):
    with pytest.raises(ValueError, match=problem):
        parse_ledger_metadata(text)
