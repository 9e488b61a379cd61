"""The Go driver's build, from the harness's side, without running the Go toolchain: what it refuses and how
its cache key follows the sources (conformance/targets/go_driver.py)."""

from __future__ import annotations

import shutil

import pytest

from conformance.targets import go_driver
from conformance.targets.go_driver import GoDriverError
from conformance.targets.java_driver import JavaDriverError


def test_a_version_that_is_not_a_release_is_refused_before_any_build(tmp_path):
    with pytest.raises(GoDriverError, match="not a release like 0.19.0"):
        go_driver.build_driver("latest", cache=tmp_path)
    assert not (tmp_path / "go-driver").exists(), "nothing is written for a refused version"


def test_missing_sources_are_named(tmp_path):
    with pytest.raises(GoDriverError, match="no driver sources"):
        go_driver.build_driver("0.19.0", cache=tmp_path, sources=tmp_path / "nowhere")


def test_the_pinned_client_is_read_from_go_mod():
    assert go_driver.pinned_version() == go_driver.DEFAULT_CLIENT_VERSION


def test_an_edit_of_any_go_source_changes_the_cache_key(tmp_path):
    copy = tmp_path / "go"
    shutil.copytree(go_driver.DRIVER_SOURCES, copy)
    before = go_driver.sources_digest(copy)
    main = copy / "main.go"
    main.write_text(main.read_text() + "\n// an edit\n")
    assert go_driver.sources_digest(copy) != before


def test_go_driver_errors_are_harness_errors_with_their_own_name():
    err = GoDriverError("it broke")
    assert isinstance(err, JavaDriverError), "the runner reports JavaDriverError (and so this) as ERROR, never FAIL"
    assert str(err).startswith("Go client driver: it broke")
