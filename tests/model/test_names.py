"""Chapter names.py: topic names, partition names, invalid names (PLS-TOPIC-001/002/003)."""

from __future__ import annotations

import pytest

from broker_trace_helpers import run
from reference_model import names
from reference_model.rejections import Rejected


# ---------------------------------------------------------------- PLS-TOPIC-001/002/003


@pytest.mark.parametrize("name,full", [
    ("my-topic", "persistent://public/default/my-topic"),
    ("acme/orders/t", "persistent://acme/orders/t"),
    ("non-persistent://a/b/c", "non-persistent://a/b/c"),
    ("persistent://a/b/c/d", "persistent://a/c/d"),  # legacy V1 form, local name "d"
])
def test_topic_expansion(name, full):
    got = names.expand(name)
    if name.endswith("c/d"):
        assert names.parse_topic(name).cluster == "b"
        assert got == "persistent://a/b/c/d"
    else:
        assert got == full


@pytest.mark.parametrize("bad", ["", "a/b", "http://a/b/c", "persistent://a/b", "persistent://te nant/ns/x", "a/b/c/d"])
def test_invalid_topic_names_are_rejected_with_topic_003(bad):
    got = names.expand(bad)
    assert isinstance(got, Rejected) and got.error == "InvalidTopicName" and got.rule == "PLS-TOPIC-003"


def test_partition_names():
    assert names.partition_name("persistent://public/default/t", 2) == "persistent://public/default/t-partition-2"
    assert names.parse_topic("t-partition-3").partition_index == 3
    assert names.parse_topic("t").partition_index == -1
    with pytest.raises(ValueError):
        names.partition_name("t", -1)


def test_invalid_topic_rejected():
    # PLS-TOPIC-003
    h = run(("subscribe", {"consumer": "c1", "topic": "a/b", "subscription": "s"}))
    assert h.events[0].outcome.error == "InvalidTopicName"
