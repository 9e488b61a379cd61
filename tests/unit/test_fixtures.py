"""Broker plumbing that needs no broker: target names, tokens, config rendering, Docker."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from fixtures import embedded
from fixtures.docker_broker import DockerBroker, container_spec
from fixtures.endpoint import BrokerEndpoint, parse_target, read_token
from fixtures.errors import BrokerStartError, NoDockerEngineError, TargetSpecError


@pytest.mark.parametrize(
    "name, kind, service, admin",
    [
        ("model", "model", None, None),
        ("embedded", "embedded", None, None),
        ("docker", "docker", None, None),
        ("pulsar://10.1.2.3:6650", "external", "pulsar://10.1.2.3:6650", "http://10.1.2.3:8080"),
        ("pulsar://broker", "external", "pulsar://broker:6650", "http://broker:8080"),
        ("pulsar+ssl://broker", "external", "pulsar+ssl://broker:6651", "https://broker:8443"),
    ],
)
def test_target_names(name, kind, service, admin):
    spec = parse_target(name)
    assert (spec.kind, spec.service_url, spec.admin_url) == (kind, service, admin)


def test_default_target_is_embedded(monkeypatch):
    monkeypatch.delenv("PULSAR_CONFORMANCE_TARGET", raising=False)
    assert parse_target(None).kind == "embedded"


@pytest.mark.parametrize("bad", ["kafka://x:9092", "embeded", "http://x:8080"])
def test_unknown_target_is_refused_with_the_choices(bad):
    with pytest.raises(TargetSpecError, match="model', 'embedded', 'docker'"):
        parse_target(bad)


def test_admin_url_only_for_external():
    assert parse_target("pulsar://h:1", admin_url="http://h:2/").admin_url == "http://h:2"
    with pytest.raises(TargetSpecError):
        parse_target("embedded", admin_url="http://h:2")


def test_token_from_file_and_env_never_printed(tmp_path, monkeypatch):
    secret = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.sig"
    path = tmp_path / "token"
    path.write_text(secret + "\n")
    assert read_token(token_file=str(path)) == secret
    monkeypatch.setenv("MY_TOKEN", secret)
    assert read_token(env_var="MY_TOKEN") == secret
    endpoint = BrokerEndpoint("external", "pulsar://h:6650", "http://h:8080", token=secret)
    assert secret not in repr(endpoint)
    assert secret not in str(endpoint.describe())
    assert endpoint.describe()["auth"] == "token"
    with pytest.raises(TargetSpecError, match="empty"):
        (tmp_path / "empty").write_text("")
        read_token(token_file=str(tmp_path / "empty"))
    with pytest.raises(TargetSpecError, match="NOPE"):
        read_token(env_var="NOPE")


def test_render_config_edits_in_place_and_never_duplicates():
    template = "a=1\n# b=2\nc=3\nc=4\n"
    out = embedded.render_config(template, {"a": "9", "c": "7", "d": "5"})
    lines = out.splitlines()
    assert lines[0] == "a=9"
    assert "# b=2" in lines
    assert [line for line in lines if line.startswith("c=")] == ["c=7"]
    assert lines.count("d=5") == 1


def test_overrides_parse_and_refuse_harness_keys():
    assert embedded.parse_overrides(["x.y=1", " k = v "]) == {"x.y": "1", "k": "v"}
    for bad, words in [("noequals", "key=value"), ("brokerServicePort=6650", "set by the harness"), ("1bad=x", "not a valid")]:
        with pytest.raises(BrokerStartError, match=words) as err:
            embedded.parse_overrides([bad])
        assert err.value.step == "configure"


def test_unknown_config_key_suggests_the_close_one(tmp_path):
    home = tmp_path / "apache-pulsar-0"
    (home / "conf").mkdir(parents=True)
    (home / "conf" / "standalone.conf").write_text("clusterName=x\n#delayedDeliveryTickTimeMillis=1000\n")
    with pytest.raises(BrokerStartError, match="did you mean delayedDeliveryTickTimeMillis"):
        embedded.write_config(home, tmp_path, broker_port=1, web_port=2, overrides={"delayedDeliveryTickTimeMilis": "5"})
    conf = embedded.write_config(home, tmp_path, broker_port=1, web_port=2, overrides={"delayedDeliveryTickTimeMillis": "5"})
    text = conf.read_text()
    assert "delayedDeliveryTickTimeMillis=5" in text and "brokerServicePort=1" in text and "metadataStoreUrl=" in text


@pytest.mark.parametrize("version, resolved", [("4.0", "4.0.8"), ("3.3", "3.3.6"), (None, embedded.DEFAULT_VERSION), ("4.2.4", "4.2.4"),
                                               ("4.2", "4.2.4"), ("2.10", "2.10.5"), ("5.0", "5.0.0-M1"), ("5.0.0-m1", "5.0.0-M1"),
                                               ("4.0.8:assembled", "4.0.8")])
def test_versions(version, resolved):
    assert embedded.resolve_version(version) == resolved


@pytest.mark.parametrize("bad", ["latest", "4", "4.1", "2.9.0", "5.0.0:tarball", "3.1.2:assembled", "4.0.8:zip"])
def test_unpublished_versions_are_refused(bad):
    with pytest.raises(BrokerStartError) as err:
        embedded.resolve_version(bad)
    assert err.value.step == "download"


def test_cache_folder_follows_env(monkeypatch, tmp_path):
    monkeypatch.setenv("PULSAR_CONFORMANCE_CACHE", str(tmp_path / "c"))
    assert embedded.cache_root() == tmp_path / "c"
    monkeypatch.delenv("PULSAR_CONFORMANCE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert embedded.cache_root() == tmp_path / "x" / "pulsar-conformance"


def test_missing_maven_names_the_download_step(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # no mvn anywhere
    with pytest.raises(BrokerStartError) as err:
        embedded.ensure_distribution("4.0.8", cache=tmp_path / "cache")
    assert err.value.step == "download"
    assert "Maven" in str(err.value) and "--target pulsar://" in str(err.value)


def test_docker_without_engine_fails_fast(monkeypatch):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    t0 = time.monotonic()
    with pytest.raises(NoDockerEngineError) as err:
        DockerBroker().start()
    assert time.monotonic() - t0 < 10
    assert "no Docker engine" in str(err.value) and "--target embedded" in str(err.value)


def test_docker_container_spec_carries_the_conformance_config():
    spec = container_spec("4.0", {"subscriptionKeySharedUseConsistentHashing": "false"})
    assert spec["image"] == "apachepulsar/pulsar:4.0.8"
    env = spec["environment"]
    assert env["PULSAR_PREFIX_delayedDeliveryTickTimeMillis"] == "100"
    assert env["PULSAR_PREFIX_subscriptionKeySharedUseConsistentHashing"] == "false"
    assert "PULSAR_PREFIX_bindAddress" not in env
    assert all(host == "127.0.0.1" for host, _ in spec["ports"].values())
    assert "standalone" in spec["command"][-1]


def test_tail_reads_the_end(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("\n".join(f"line {i}" for i in range(100)))
    assert embedded.tail(log, 3).splitlines() == ["line 97", "line 98", "line 99"]
    assert embedded.tail(tmp_path / "missing.log") == ""
