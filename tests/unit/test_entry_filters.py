"""fixtures/entry_filters.py: bad input is named before anything is built (the build itself runs
in tests/live/test_tag_filter_live.py, against each broker release's lib/)."""

from __future__ import annotations

import pytest

from fixtures import entry_filters
from fixtures.errors import BrokerStartError


def test_an_unknown_filter_is_named_with_the_ones_that_exist(tmp_path):
    with pytest.raises(BrokerStartError, match=r"unknown entry filter\(s\) \['tags'\]; the project has: \['tdmq-tags'\]"):
        entry_filters.build(("tags",), tmp_path, tmp_path, broker_version="4.0.8")


def test_a_broker_without_lib_is_named(tmp_path):
    with pytest.raises(BrokerStartError, match="has no lib/ folder"):
        entry_filters.build(("tdmq-tags",), tmp_path / "pulsar", tmp_path, broker_version="4.0.8")
    assert not (tmp_path / "entry-filters").exists(), "nothing is written for a refused build"
