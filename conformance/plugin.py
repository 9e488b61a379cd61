"""The pytest plugin (entry point ``pytest11``): broker fixtures and rule ids in JUnit XML.

Options take the same names as the command line: ``--target model|embedded|docker|URL``
(default ``embedded``), ``--pulsar-url``, ``--pulsar-admin-url``, ``--token-env``,
``--token-file``, ``--broker-version``, ``--config-override KEY=VALUE``.

Fixtures:
- ``pulsar_broker`` (session): a ``BrokerEndpoint``; the embedded broker is started once per
  session (per xdist worker) and stopped at the end, also on Ctrl-C; the kernel kills it if
  pytest itself dies (see fixtures/embedded.py).
- ``pulsar_admin`` (session), ``pulsar_namespace`` (a fresh namespace per test, deleted after),
  ``pulsar_client`` (a ``pulsar.Client`` per test), ``topic`` (a unique topic in that namespace),
  ``live_target`` (runs traces on the broker), ``live_target_for(client)`` (the same, driven by the
  python, java, go or mixed client), ``model_target``.

A live test never skips for want of a broker: if the broker cannot be obtained, the test errors
with the failed step and the broker log. Only when ``--target model`` was chosen on purpose do
live tests skip.

``@pytest.mark.rule("PLS-ACK-001", ...)`` records the rule ids as ``rule`` properties in the
JUnit XML.
"""

from __future__ import annotations


import uuid
from typing import Any, Iterator

import pytest

from fixtures.endpoint import TargetSpec, parse_target, read_token


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("pulsar-conformance")
    g.addoption("--target", default=None, help="model, embedded (default), docker, or a broker URL pulsar://HOST:PORT")
    g.addoption("--pulsar-url", default=None, help="an existing cluster's service URL (same as --target URL)")
    g.addoption("--pulsar-admin-url", default=None, help="the cluster's admin URL (default http://HOST:8080)")
    g.addoption("--token-env", default=None, help="environment variable holding an auth token")
    g.addoption("--token-file", default=None, help="file holding an auth token")
    g.addoption("--broker-version", default=None, help="Pulsar version or line for embedded/docker (default 4.0.8)")
    g.addoption("--config-override", action="append", default=[], metavar="KEY=VALUE", help="broker config for embedded/docker; repeatable")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rule(*ids): rule ids the test exercises (written to JUnit XML)")
    config.addinivalue_line("markers", "live: needs a live broker")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        for mark in item.iter_markers("rule"):
            for rule_id in mark.args:
                item.user_properties.append(("rule", rule_id))


@pytest.fixture(scope="session")
def pulsar_target_spec(pytestconfig: pytest.Config) -> TargetSpec:
    url = pytestconfig.getoption("--pulsar-url")
    name = pytestconfig.getoption("--target")
    if url and name and url != name:
        raise pytest.UsageError("give either --target or --pulsar-url, not both")
    return parse_target(url or name, admin_url=pytestconfig.getoption("--pulsar-admin-url"))


@pytest.fixture(scope="session")
def pulsar_broker(pulsar_target_spec: TargetSpec, pytestconfig: pytest.Config) -> Iterator[Any]:
    if pulsar_target_spec.kind == "model":
        pytest.skip("live test: the target is 'model' (pass --target embedded to run it)")
    from fixtures.embedded import parse_overrides
    from fixtures.provider import broker_for

    token = None
    if pulsar_target_spec.kind == "external":
        token = read_token(env_var=pytestconfig.getoption("--token-env"), token_file=pytestconfig.getoption("--token-file"))
    overrides = parse_overrides(pytestconfig.getoption("--config-override"))
    with broker_for(pulsar_target_spec, version=pytestconfig.getoption("--broker-version"), overrides=overrides, token=token) as endpoint:
        yield endpoint


@pytest.fixture(scope="session")
def pulsar_admin(pulsar_broker: Any) -> Iterator[Any]:
    from fixtures.admin import AdminClient

    admin = AdminClient(pulsar_broker.admin_url, token=pulsar_broker.token)
    yield admin
    admin.close()


@pytest.fixture
def pulsar_namespace(pulsar_broker: Any, pulsar_admin: Any) -> Iterator[str]:
    from fixtures.namespaces import reaper_for

    namespace = pulsar_admin.fresh_namespace()
    yield namespace
    # as BrokerTarget.run does: retired, and deleted once its topics have settled (a 3.x broker
    # hangs for 30 s on a namespace deleted during a transaction buffer's recovery)
    reaper_for(pulsar_broker.admin_url, pulsar_broker.token).retire(namespace, pulsar_admin)


@pytest.fixture
def pulsar_client(pulsar_broker: Any) -> Iterator[Any]:
    import logging

    import pulsar

    quiet = logging.getLogger("pulsar-conformance.client")
    quiet.setLevel(logging.CRITICAL)
    kwargs: dict[str, Any] = {"operation_timeout_seconds": 15, "logger": quiet}
    if pulsar_broker.token:
        kwargs["authentication"] = pulsar.AuthenticationToken(pulsar_broker.token)
    client = pulsar.Client(pulsar_broker.service_url, **kwargs)
    yield client
    client.close()


@pytest.fixture
def topic(pulsar_namespace: str) -> str:
    return f"persistent://{pulsar_namespace}/t-{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="session")
def live_target(pulsar_broker: Any) -> Any:
    from conformance.targets.pulsar import BrokerTarget

    return BrokerTarget(pulsar_broker)


@pytest.fixture(scope="session")
def live_target_for(pulsar_broker: Any) -> Iterator[Any]:
    """``live_target_for(client)``: a target on the session's broker driven by ``client``
    (python, java, go or mixed); one per client for the session, so the Java driver JVM is built and
    started once and stopped at the end."""
    from conformance.targets.pulsar import BrokerTarget

    targets: dict[str, Any] = {}

    def _for(client: str) -> Any:
        if client not in targets:
            targets[client] = BrokerTarget(pulsar_broker, client=client)
        return targets[client]

    yield _for
    for target in targets.values():
        target.close()


@pytest.fixture(scope="session")
def model_target() -> Any:
    from conformance.targets.model import ModelTarget

    return ModelTarget()
