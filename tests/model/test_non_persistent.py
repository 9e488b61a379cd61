"""Chapter non_persistent.py: only connected subscriptions get a message (PLS-NP-001..004)."""

from __future__ import annotations

import pytest

from reference_model import non_persistent, spec


# ---------------------------------------------------------------- PLS-NP-*


def test_non_persistent_delivers_only_to_connected_subscriptions():
    got = spec.non_persistent_deliveries([
        ("publish", "before"), ("connect", "s"), ("publish", "m1"), ("disconnect", "s"),
        ("publish", "while-closed"), ("connect", "s"), ("publish", "m2"), ("connect", "s2"), ("publish", "m3"),
    ])
    assert got == {"s": ["m1", "m2", "m3"], "s2": ["m3"]}
    assert str(non_persistent.message_id()) == "(0,0,-1,-1)"
    with pytest.raises(ValueError):
        spec.non_persistent_deliveries([("nack", "x")])
