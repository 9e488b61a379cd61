"""reference_model.releases: one reading of a broker version for the whole project.

The expected values are the documented vocabulary (the module docstring): a release is
MAJOR.MINOR.PATCH with an optional suffix, a line MAJOR.MINOR, a major MAJOR.x; model lines 3.x
(every 3.*), 4.0 (4.0.*) and 4.1 (every later 4.*).
"""

from __future__ import annotations

import pytest

from fixtures import embedded
from fixtures.errors import BrokerStartError
from reference_model import key_shared, releases, rules
from reference_model.dispatch.key_shared import KeySharedSettings
from reference_model.profiles import profile_for


@pytest.mark.parametrize("text, major, minor, patch, suffix", [
    ("4.0.8", 4, 0, 8, ""),
    (" 3.3.6 ", 3, 3, 6, ""),
    ("4.0.8-SNAPSHOT", 4, 0, 8, "-snapshot"),
    ("4.0.8.2", 4, 0, 8, ".2"),
    ("4.1", 4, 1, None, ""),
    ("3.x", 3, None, None, ""),
    ("3.X", 3, None, None, ""),
    ("4", 4, None, None, ""),
])
def test_parse_reads_releases_lines_and_majors(text, major, minor, patch, suffix):
    assert releases.parse(text) == releases.Release(major, minor, patch, suffix)


@pytest.mark.parametrize("bad", ["", "abc", "v4.0.8", "4.0.8 (build 3)", "3.x.1", "4..0"])
def test_parse_refuses_what_is_not_a_version_and_says_what_is(bad):
    with pytest.raises(ValueError, match="expected a release like '4.0.8'|a major .* has no patch"):
        releases.parse(bad)


@pytest.mark.parametrize("version, line", [
    (None, "4.0"), ("", "4.0"), ("3.0.0", "3.x"), ("3.3.6", "3.x"), ("3.x", "3.x"), ("3", "3.x"),
    ("4.0", "4.0"), ("4.0.8", "4.0"), ("4.0.8-SNAPSHOT", "4.0"), ("4.1", "4.1"), ("4.1.2", "4.1"),
    ("4.2.4", "4.1"), ("4.10.0", "4.1"), ("2.10.5", "2.x"), ("2.11.0", "2.x"), ("2.x", "2.x"),
    ("5.0.0-M1", "5.x"), ("5.0.1", "5.x"),
])
def test_model_line(version, line):
    assert releases.model_line(version) == line


@pytest.mark.parametrize("version", ["4.x", "4", "2.9.0", "1.10.0", "garbage"])
def test_model_line_refuses_versions_no_model_line_covers(version):
    with pytest.raises(ValueError, match=r"broker version|cannot read"):
        releases.model_line(version)
    assert releases.model_line_or_text(version) == version.lower()


def test_the_model_profile_and_the_line_are_one_reading():
    for version in ("3.3.6", "4.0.8", "4.2.4", "3.x", None):
        assert profile_for(version, "python").broker == releases.model_line(version)
    with pytest.raises(ValueError, match="unknown broker version '2.9.0'"):
        profile_for("2.9.0", "python")


def test_release_number_and_sort_key():
    assert releases.release_number("4.0.8-SNAPSHOT") == "4.0.8"
    assert releases.release_number("4.0") is None
    assert releases.release_number("unknown") is None
    assert releases.release_number(None) is None
    ordered = ["3.x", "3.3", "3.3.6", "4.0", "4.0.8", "4.0.8-SNAPSHOT", "4.1.2", "4.10.0", "", "zzz"]
    assert sorted(reversed(ordered), key=releases.sort_key) == ordered


def test_applies_to_bounds_compare_release_tuples():
    # a line reads as its .0 release and a snapshot as its release when compared with a bound
    assert releases.version_tuple("4.0.8-SNAPSHOT") == (4, 0, 8)
    assert releases.version_tuple("4.1") == (4, 1, 0)
    compact = rules.rule("PLS-COMPACT-002")  # applies_to brokers "==4.0.8" (withdrawn: it applies nowhere)
    keyshared = rules.rule("PLS-KEYSHARED-006")  # applies_to brokers ">=4.0"
    assert rules._applies_to_version(compact, "4.0.8-SNAPSHOT")
    assert not rules._applies_to_version(compact, "4.0.7")
    assert not rules._applies_to_version(compact, "4.0")
    assert not rules.applies(compact, broker_version="4.0.8", client="python")
    assert rules.applies(keyshared, broker_version="4.0", client="java")
    assert not rules.applies(keyshared, broker_version="3.x", client="java")
    with pytest.raises(ValueError, match="cannot read a broker version"):
        rules.applies(keyshared, broker_version="latest", client="java")


def test_key_shared_profiles_accept_the_same_vocabulary():
    assert key_shared.profile_for_broker("4.0.8-SNAPSHOT") is key_shared.PROFILE_4
    assert key_shared.profile_for_broker("4.x") is key_shared.PROFILE_4
    assert key_shared.profile_for_broker("3.x") is key_shared.PROFILE_3_NAME_INDEX
    assert KeySharedSettings.for_broker("3.x").profile is key_shared.PROFILE_3_NAME_INDEX
    assert KeySharedSettings.for_broker("4.2.4").profile is key_shared.PROFILE_4
    assert KeySharedSettings.for_broker(
        "4.0", {"subscriptionKeySharedUseClassicPersistentImplementation": "true"}).profile is key_shared.PROFILE_4_CLASSIC


def test_the_embedded_fixture_downloads_only_full_releases():
    assert embedded.resolve_version("4.0") == "4.0.8"
    assert embedded.resolve_version(" 4.2.4 ") == "4.2.4"
    for bad in ("4.0.8-SNAPSHOT", "4.1", "3.x", "2.9.0", "nope", "4.0.8:docker"):
        with pytest.raises(BrokerStartError):
            embedded.resolve_version(bad)
