"""The facade spec.py / spec_keyshared.py: its own refusals of bad arguments (ValueError naming the argument)."""

from __future__ import annotations

import pytest

from reference_model.spec_keyshared import key_shared_consumer_for_keys, partition_for_key, sticky_key_slot


def test_spec_functions_refuse_bad_selector_and_broker():
    with pytest.raises(ValueError, match="selector must be one of 'consistent_hashing', 'auto_split', 'sticky'"):
        sticky_key_slot("k", broker="4.0", selector="hash")
    with pytest.raises(ValueError, match="broker"):
        sticky_key_slot("k", broker="four", selector="sticky")
    with pytest.raises(ValueError, match="sticky_ranges"):
        key_shared_consumer_for_keys(["a"], ["k"], broker="4.0", selector="sticky")
    with pytest.raises(ValueError, match="replica_points"):
        key_shared_consumer_for_keys(["a"], ["k"], broker="4.0", replica_points=0)


def test_partition_for_key_refuses_bad_arguments():
    with pytest.raises(ValueError, match="hashing must be one of 'murmur3_32', 'java_string_hash'"):
        partition_for_key("k", 3, hashing="boost")
    with pytest.raises(ValueError, match="client must be one of 'java', 'cpp', 'go'"):
        partition_for_key("k", 3, hashing="murmur3_32", client="rust")
    with pytest.raises(ValueError, match="num_partitions"):
        partition_for_key("k", 0, hashing="murmur3_32")
