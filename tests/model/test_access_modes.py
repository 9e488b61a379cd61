"""Chapter access_modes.py: producer access modes, fencing and busy names (PLS-ACCESS-001..006)."""

from __future__ import annotations

import pytest

from reference_model import access_modes as am


# ---------------------------------------------------------------- PLS-ACCESS-*


_OBSERVED_TABLE = {
    # (first, second) -> second's create result, as observed live
    ("Shared", "Shared"): "ok",
    ("Shared", "Exclusive"): "ProducerFenced",
    ("Shared", "ExclusiveWithFencing"): "ok",
    ("Exclusive", "Shared"): "ProducerBusy",
    ("Exclusive", "Exclusive"): "ProducerFenced",
    ("Exclusive", "ExclusiveWithFencing"): "ok",
    ("ExclusiveWithFencing", "Shared"): "ProducerBusy",
    ("ExclusiveWithFencing", "Exclusive"): "ProducerFenced",
    ("ExclusiveWithFencing", "ExclusiveWithFencing"): "ok",
    ("WaitForExclusive", "Shared"): "ProducerBusy",
    ("WaitForExclusive", "Exclusive"): "ProducerFenced",
    ("WaitForExclusive", "ExclusiveWithFencing"): "ok",
    ("Exclusive", "WaitForExclusive"): "waiting",
}


@pytest.mark.parametrize("first,second", sorted(_OBSERVED_TABLE))
def test_access_mode_table(first, second):
    got = am.create_producer((am.PresentProducer("p1", first),), second, "p2")
    assert got.result == _OBSERVED_TABLE[(first, second)]
    assert got.fences == (("p1",) if second == "ExclusiveWithFencing" else ())


def test_fenced_producer_send_errors_and_same_name():
    assert [am.fenced_send_error(m) for m in am.MODES] == ["Timeout", "ProducerFenced", "ProducerFenced", "Timeout"]
    got = am.create_producer((am.PresentProducer("same", "Shared"),), "Shared", "same")
    assert (got.result, got.rule) == ("ProducerBusy", "PLS-ACCESS-006")
    assert am.create_producer((), "Exclusive").result == "ok"
    with pytest.raises(ValueError):
        am.create_producer((), "Bogus")
