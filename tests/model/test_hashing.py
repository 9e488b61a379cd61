"""Chapter hashing.py: Murmur3, Java and C++ string hashes, sticky keys (PLS-HASH-001/002, PLS-KEYSHARED-001).

Where the vectors come from (each was computed outside this model):
- ``JAVA``: Pulsar 4.0.8's own ``org.apache.pulsar.common.util.Murmur3_32Hash.makeHash`` and
  ``String.hashCode`` run on a JVM (pulsar-common-4.0.8.jar from the suite's broker distribution).
- ``CPP``: apache/pulsar-client-cpp ``lib/JavaStringHash.cc`` (HEAD 1d08b2b3) compiled with g++
  on x86-64 and run.
- Canonical MurmurHash3_x86_32 seed-0 vectors ("hello", the quick brown fox), the Pulsar docs'
  example ``murmur32("Order-3459134") = 3112179635``.
"""

from __future__ import annotations

import pytest

from reference_model import hashing
from reference_model.spec_keyshared import java_string_hash, murmur3_32


# key -> (Pulsar makeHash = murmur3 & 0x7fffffff, Java hashCode)          source: JAVA
JAVA = {
    "": (0, 0),
    "hello": (613153351, 99162322),
    "Order-3459134": (964695987, -1064845362),
    "The quick brown fox jumps over the lazy dog": (776992547, -609428141),
    "é": (269551495, 233),
    "key-1": (414258592, 101943363),
    "abc": (870159354, 96354),
    "a\0b": (1871496870, 93315),
    "日本語": (631534231, 25921943),
    "\U0001F600": (1051995898, 1772899),
    "c1\x000\x000": (1186414766, -1415382642),
    "consumer1\x000\x0099": (970150870, -1721072939),
}
# key -> C++ JavaStringHash::makeHash                                     source: CPP
CPP = {"": 0, "hello": 99162322, "Order-3459134": 1082638286, "é": 2147481670, "日本語": 1439989690,
       "\U0001F600": 2146910423, "key-1": 101943363}


@pytest.mark.rule("PLS-HASH-001")
def test_murmur3_unsigned_canonical_vectors():
    assert murmur3_32(b"") == 0
    assert murmur3_32("hello") == 613153351 == 0x248BFA47
    assert murmur3_32("The quick brown fox jumps over the lazy dog") == 0x2E4FF723
    assert murmur3_32("Order-3459134") == 3112179635  # the docs' number: unsigned
    assert murmur3_32("Order-3459134") & 0x7FFFFFFF == 964695987  # what Pulsar uses
    assert hashing.murmur3_32(b"hello", seed=1) != hashing.murmur3_32(b"hello")


@pytest.mark.rule("PLS-HASH-001", "PLS-HASH-002")
@pytest.mark.parametrize("key", sorted(JAVA))
def test_pulsar_murmur3_and_java_hashcode_match_the_jvm(key):
    masked, java_hash_code = JAVA[key]
    assert hashing.pulsar_murmur3(key) == masked
    assert hashing.pulsar_murmur3(key.encode("utf-8")) == masked
    assert java_string_hash(key) == java_hash_code
    assert hashing.java_string_hash(key) == java_hash_code & 0x7FFFFFFF


@pytest.mark.rule("PLS-HASH-002")
@pytest.mark.parametrize("key", sorted(CPP))
def test_cpp_java_string_hash_matches_the_compiled_client(key):
    assert hashing.cpp_java_string_hash(key) == CPP[key]


def test_cpp_and_java_string_hash_agree_on_ascii_only():
    assert hashing.cpp_java_string_hash("Order-3459134") == hashing.java_string_hash("Order-3459134")
    assert java_string_hash("é") == 233 and hashing.cpp_java_string_hash("é") == 2147481670
    # unsigned char (ARM builds): the bytes are 0xC3 0xA9 -> 31*195 + 169
    assert hashing.cpp_java_string_hash("é", char_is_signed=False) == 31 * 195 + 169


def test_utf16_units_and_java_compare():
    assert hashing.utf16_units("\U0001F600") == [0xD83D, 0xDE00]
    # Java orders by UTF-16 units: a surrogate pair (0xD83D..) sorts before U+FB01; Python does the opposite
    assert hashing.utf16_units("\U0001F600") < hashing.utf16_units("\uFB01")
    assert "\U0001F600" > "\uFB01"


@pytest.mark.rule("PLS-KEYSHARED-001")
def test_sticky_key_precedence_and_keyless_marker():
    assert hashing.sticky_key(ordering_key=b"o", partition_key="p") == b"o"
    assert hashing.sticky_key(partition_key="p") == b"p"
    assert hashing.sticky_key(partition_key="aGk=", partition_key_b64_encoded=True) == b"hi"
    assert hashing.sticky_key(producer_name="p", sequence_id=7) == b"NONE_KEY"  # 3.x
    assert hashing.sticky_key(producer_name="p", sequence_id=7, producer_sequence_fallback=True) == b"p-7"  # 4.x
    assert hashing.sticky_key(partition_key="", producer_name="p", sequence_id=7, producer_sequence_fallback=True) == b""
    batch = [{"partition_key": "first"}, {"partition_key": "second"}]
    assert hashing.batch_sticky_key(batch) == b"first"
    with pytest.raises(ValueError, match="partition_key"):
        hashing.sticky_key(partition_key="***", partition_key_b64_encoded=True)


def test_murmur3_vectors():
    from reference_model.hashing import murmur3_32, pulsar_murmur3

    assert murmur3_32(b"") == 0
    assert murmur3_32(b"hello") == 0x248BFA47
    assert murmur3_32(b"The quick brown fox jumps over the lazy dog") == 0x2E4FF723
    assert pulsar_murmur3("hello") == 0x248BFA47 & 0x7FFFFFFF
