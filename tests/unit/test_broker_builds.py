"""Which releases the embedded broker runs and how: build specs, the assembly pom, the checks an
assembled lib/ must pass, per-line start flags, and the lib/ comparison (fixtures/broker_builds.py,
fixtures/assembly.py, fixtures/embedded.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fixtures import assembly, broker_builds, embedded
from fixtures.broker_builds import ASSEMBLED, TARBALL, resolve_build
from fixtures.errors import BrokerStartError


@pytest.mark.parametrize("spec, release, how", [
    ("4.0.8", "4.0.8", TARBALL),            # Maven Central has its tarball
    ("4.0.8:assembled", "4.0.8", ASSEMBLED),
    ("3.0.7", "3.0.7", ASSEMBLED),          # no 3.0.x tarball on Central
    ("3.0", "3.0.7", ASSEMBLED),
    ("2.10", "2.10.5", ASSEMBLED),
    ("2.10.1", "2.10.1", TARBALL),
    ("4.0.4", "4.0.4", TARBALL),            # tarball present, parent pom missing: fetched by path
    ("5.0", "5.0.0-M1", ASSEMBLED),
    ("3.1.1", "3.1.1", ASSEMBLED),          # not in the catalog: probed when started
])
def test_build_specs(spec, release, how):
    build = resolve_build(spec)
    assert (build.release, build.how, build.requested) == (release, how, spec)


@pytest.mark.parametrize("spec, words", [
    ("2.9.5", "older than 2.10"),
    ("5.0.0-M1:tarball", "no server distribution"),
    ("3.3.6:assembled", "jetcd-core-shaded:3.3.6"),
    ("4.0.8:docker", "must be one of tarball, assembled"),
    ("4.0.8-SNAPSHOT", "suffix"),
    ("4.1", "neither a release"),
])
def test_bad_build_specs_are_named(spec, words):
    with pytest.raises(BrokerStartError) as err:
        resolve_build(spec)
    assert err.value.step == "download" and words in err.value.problem


@pytest.mark.parametrize("release, mode, conf", [
    ("2.10.5", "zookeeper", "2.10.1"), ("2.11.0", "rocksdb", "3.3.6"), ("3.2.3", "rocksdb", "3.3.6"),
    ("4.2.4", "rocksdb", "4.0.8"), ("5.0.0-M1", "rocksdb-5", "4.0.8"),
])
def test_metadata_mode_and_shipped_conf_per_line(release, mode, conf):
    build = resolve_build(release)
    assert build.metadata_mode == mode
    assert build.shipped_conf_release == conf
    assert assembly.shipped_conf(build).exists()


def test_start_flags_follow_the_line(tmp_path):
    def flags(spec):
        return embedded.standalone_flags(resolve_build(spec), tmp_path, conf=tmp_path / "c.conf", bookie_port=1, zk_port=2)

    zk = flags("2.10.5")
    assert "--zookeeper-port" in zk and "--metadata-dir" not in zk and zk[:2] == ["--config", str(tmp_path / "c.conf")]
    rocks = flags("3.0.7")
    assert "--metadata-dir" in rocks and "--bookkeeper-port" in rocks and "--zookeeper-port" not in rocks
    five = flags("5.0.0-M1")
    assert "--metadata-dir" in five and "--bookkeeper-port" not in five
    # a distribution's bin/pulsar passes the config file itself
    assert "--config" not in embedded.standalone_flags(resolve_build("4.0.8"), tmp_path, conf=None, bookie_port=1, zk_port=2)
    one = embedded.standalone_flags(resolve_build("4.0.8"), tmp_path, conf=None, bookie_port=1, zk_port=2)
    three = embedded.standalone_flags(resolve_build("4.0.8"), tmp_path, conf=None, bookie_port=1, zk_port=2, bookies=3)
    assert "--num-bookies" not in one and three[three.index("--num-bookies") + 1] == "3"


def test_the_assembly_pom_imports_the_release_bom_and_pins():
    pom = assembly.assembly_pom("3.0.7")
    assert "<artifactId>pulsar</artifactId>" in pom and "<scope>import</scope>" in pom and "pulsar-broker" in pom
    pinned = assembly.assembly_pom("4.0.8")
    assert "<artifactId>jetcd-core-shaded</artifactId><version>4.0.7</version>" in pinned
    five = assembly.assembly_pom("5.0.0-M1")
    assert "<artifactId>pulsar-dependencies</artifactId>" in five and "bc-fips" in five


def test_missing_artifacts_are_named_from_the_maven_log():
    log = ("[ERROR] Failed to execute goal ... on project x: Could not resolve dependencies for project a:b:pom:1: "
           "Could not find artifact org.apache.pulsar:jetcd-core-shaded:jar:shaded:4.0.8 in central (https://repo.maven.apache.org/maven2)")
    assert assembly.missing_artifact(log) == "org.apache.pulsar:jetcd-core-shaded:jar:shaded:4.0.8"
    assert assembly.missing_artifact("BUILD SUCCESS") is None


def _lib(tmp_path: Path, names: list[str]) -> Path:
    lib = tmp_path / "lib"
    lib.mkdir(parents=True)
    for n in names:
        (lib / n).write_bytes(b"x" * 10)
    return lib


def test_an_assembled_lib_needs_the_broker_and_one_slf4j_binding(tmp_path):
    ok = ["org.apache.pulsar.pulsar-broker-3.0.7.jar", "org.apache.logging.log4j.log4j-slf4j-impl-2.18.0.jar"]
    assert assembly.check_lib(_lib(tmp_path / "a", ok)) == (2, 20)
    for names, words in (
        (["org.apache.logging.log4j.log4j-slf4j-impl-2.18.0.jar"], "no pulsar-broker jar"),
        ([*ok, "ch.qos.logback.logback-classic-1.2.3.jar"], "excludes"),
        ([*ok, "org.apache.logging.log4j.log4j-slf4j2-impl-2.23.1.jar"], "2 SLF4J bindings"),
        (["org.apache.pulsar.pulsar-broker-3.0.7.jar"], "0 SLF4J bindings"),
    ):
        folder = tmp_path / str(abs(hash(tuple(names))))
        with pytest.raises(BrokerStartError) as err:
            assembly.check_lib(_lib(folder, names))
        assert err.value.step == "unpack" and words in err.value.problem


def test_lib_difference_reads_both_namings(tmp_path):
    tarball = _lib(tmp_path / "t", ["org.apache.pulsar-pulsar-broker-4.0.8.jar", "io.netty-netty-common-4.1.118.Final.jar",
                                     "org.apache.pulsar-pulsar-proxy-4.0.8.jar", "org.bouncycastle-bcutil-jdk18on-1.81.1.jar"])
    assembled = _lib(tmp_path / "a", ["org.apache.pulsar.pulsar-broker-4.0.8.jar", "io.netty.netty-common-4.1.118.Final.jar",
                                      "org.bouncycastle.bcutil-jdk18on-1.81.jar", "com.github.spotbugs.spotbugs-annotations-4.7.3.jar"])
    diff = assembly.lib_difference(tarball, assembled)
    assert diff["same"] == ["io-netty-netty-common", "org-apache-pulsar-pulsar-broker"]
    assert diff["only_in_tarball"] == ["org-apache-pulsar-pulsar-proxy-4.0.8"]
    assert diff["only_assembled"] == ["com-github-spotbugs-spotbugs-annotations-4.7.3"]
    assert diff["different_version"] == [("org-bouncycastle-bcutil-jdk18on", "1.81.1", "1.81")]


def test_an_assembled_broker_is_configured_from_the_shipped_conf(tmp_path):
    build = resolve_build("3.0.7")
    home = tmp_path / "home"
    home.mkdir()  # no conf/: an assembled home
    conf = embedded.write_config(home, tmp_path, broker_port=11, web_port=12, overrides={"backlogQuotaDefaultLimitGB": "-1"},
                                 template=assembly.shipped_conf(build))
    text = conf.read_text()
    assert "brokerServicePort=11" in text and "backlogQuotaDefaultLimitGB=-1" in text
    assert "managedLedgerCacheEvictionFrequency=" in text  # a shipped value the class default differs from
    with pytest.raises(BrokerStartError) as err:
        embedded.write_config(home, tmp_path, broker_port=11, web_port=12, overrides={"backlogQuotaDefaultLimitGBB": "1"},
                              template=assembly.shipped_conf(build))
    assert "did you mean backlogQuotaDefaultLimitGB" in err.value.problem


def test_the_catalog_lists_every_line_default():
    rows = {r["release"]: r for r in broker_builds.catalog()}
    for line, release in broker_builds.LINE_RELEASES.items():
        assert rows[release]["default_for_line"] == line
    assert rows["4.0.8"]["ways"] == "tarball,assembled"
    assert all(r["release"] != "2.5.1" for r in rows.values())


def test_borrowed_templates_are_corrected_where_the_release_differs(tmp_path):
    """3.0.7 keeps keyless messages through compaction by default (PIP-318's cherry-pick, class
    default true); the 3.3.6 template it borrows says false: the release's value is written."""
    assert resolve_build("3.0.7").shipped_corrections() == {"topicCompactionRetainNullKey": "true"}
    assert resolve_build("3.2.3").shipped_corrections() == {}
    assert resolve_build("3.3.6").shipped_corrections() == {}  # a tarball: its own conf
    home = tmp_path / "home"
    home.mkdir()
    build = resolve_build("3.0.7")
    conf = embedded.write_config(home, tmp_path, broker_port=1, web_port=2, overrides={}, template=assembly.shipped_conf(build),
                                 shipped=build.shipped_corrections()).read_text()
    assert "topicCompactionRetainNullKey=true" in conf and "topicCompactionRetainNullKey=false" not in conf
    # the user's override still wins
    conf = embedded.write_config(home, tmp_path, broker_port=1, web_port=2, overrides={"topicCompactionRetainNullKey": "false"},
                                 template=assembly.shipped_conf(build), shipped=build.shipped_corrections()).read_text()
    assert "topicCompactionRetainNullKey=false" in conf and "topicCompactionRetainNullKey=true" not in conf
