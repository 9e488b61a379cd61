"""The pytest plugin (entry point ``pytest11``): broker fixtures and rule ids in JUnit XML.

Options take the same names as the command line: ``--target model|embedded|docker|URL``
(default ``embedded``), ``--pulsar-url``, ``--pulsar-admin-url``, ``--token-env``,
``--token-file``, ``--broker-version``, ``--config-override KEY=VALUE``, ``--client`` (repeatable:
python, java, go, mixed; default python, java, mixed). They are checked when pytest starts, before
any test or broker: a token file that does not exist, a release that is not one, a client that is not
one, or a broker option given with ``--target model`` is a usage error (exit 4).

The conformance cases themselves are the test module ``pulsar_conformance.suite``:
``pytest --pyargs pulsar_conformance.suite --target embedded --junitxml=junit.xml``.

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
JUnit XML, with the other per-test properties (client, broker_version, verdicts), when the file is
written in the ``xunit1`` family (``-o junit_family=xunit1``). The default family, xunit2, is what
Jenkins' junit-10.xsd describes and it allows no properties on a test case: there the rule ids,
client and release are in the test id, and the broker's facts are suite properties.
"""

from __future__ import annotations


import uuid
from typing import Any, Iterator

import pytest

from conformance.case_files import DEFAULT_CLIENTS as DEFAULT_SUITE_CLIENTS  # run's and matrix's default too
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
    g.addoption("--client", action="append", default=[], dest="pulsar_clients", metavar="CLIENT",
                help="a client that drives the broker in the conformance suite: python, java, go, mixed; repeatable or "
                     "comma-separated (default python, java, mixed)")


SUITE_CLIENTS = ("python", "java", "go", "mixed")


def chosen_clients(config: pytest.Config) -> tuple[str, ...]:
    """The ``--client`` values in order, without repeats (default python, java, mixed)."""
    given = [c.strip() for item in config.getoption("pulsar_clients") or () for c in item.split(",") if c.strip()]
    return tuple(dict.fromkeys(given or DEFAULT_SUITE_CLIENTS))


def requested_release(config: pytest.Config) -> str:
    """The broker release a test id names: ``--broker-version``, else the embedded default; ``external``
    for a cluster given by URL (its reported version is a property of each test)."""
    from fixtures.broker_builds import DEFAULT_VERSION

    spec = _target_spec(config)
    if spec.kind == "external":
        return "external"
    return config.getoption("--broker-version") or DEFAULT_VERSION


def _target_spec(config: pytest.Config) -> TargetSpec:
    url = config.getoption("--pulsar-url")
    name = config.getoption("--target")
    if url and name and url != name:
        raise pytest.UsageError("give either --target or --pulsar-url, not both")
    return parse_target(url or name, admin_url=config.getoption("--pulsar-admin-url"))


def _check_options(config: pytest.Config) -> None:
    """Refuse, before any test runs, what cannot work: the same checks as the command line's."""
    from fixtures.endpoint import TargetSpecError, target_option_problem

    try:
        spec = _target_spec(config)
    except (TargetSpecError, ValueError) as err:
        raise pytest.UsageError(str(err)) from None
    bad = [c for c in chosen_clients(config) if c not in SUITE_CLIENTS]
    if bad:
        raise pytest.UsageError(f"--client {', '.join(bad)}: not a client; choose from {', '.join(SUITE_CLIENTS)}")
    token_file = config.getoption("--token-file")
    found = target_option_problem(spec, broker_version=config.getoption("--broker-version"),
                                  token_env=config.getoption("--token-env"), token_file=token_file,
                                  config_override=config.getoption("--config-override"))
    if found is not None:
        option, problem, todo = found
        raise pytest.UsageError(f"{option}: {problem}; {todo}")
    if token_file is not None:
        from pathlib import Path

        if not Path(token_file).is_file():
            raise pytest.UsageError(f"--token-file {token_file}: no such file")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "rule(*ids): rule ids the test exercises (written to JUnit XML)")
    config.addinivalue_line("markers", "live: needs a live broker")
    config.addinivalue_line("markers", "upstream: a case translated from Pulsar's own tests (docs/upstream-tests.md)")
    _check_options(config)


def _properties_per_test(config: pytest.Config) -> bool:
    """xunit2 (pytest's default, and Jenkins' junit-10.xsd) allows no <properties> on a test case."""
    return config.getini("junit_family") in ("xunit1", "legacy")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _properties_per_test(config):
        return
    for item in items:
        for mark in item.iter_markers("rule"):
            for rule_id in mark.args:
                item.user_properties.append(("rule", rule_id))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo) -> Iterator[None]:
    report = yield
    # the properties tests add at run time (client, broker_version, verdicts) would make an xunit2
    # file invalid: the JUnit writer reads them from the teardown report, so they leave that one
    # (they stay on the item, in the test id and in the suite properties)
    if call.when == "teardown" and not _properties_per_test(item.config):
        report.user_properties = []
    return report


@pytest.fixture(scope="session")
def pulsar_target_spec(pytestconfig: pytest.Config) -> TargetSpec:
    return _target_spec(pytestconfig)


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
    try:
        client.close()
    except pulsar.AlreadyClosed:
        # The C++ client's close reports the first error of closing its producers, and a producer an
        # ExclusiveWithFencing producer fenced is closed already (live-tier stability run, 2 Dec 2026,
        # test_access_mode_table[ExclusiveWithFencing-Exclusive], under load): the client is closed
        # either way, and a test's verdict never depends on its fixture's cleanup.
        pass


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


def _measured_bands(endpoint: Any, target: Any, client: str) -> Any:
    """The timing bands measured on ``endpoint``'s broker with ``client`` (conformance/timing.py,
    about 10 s)."""
    from conformance.timing import TimingBands, calibrate

    cal = calibrate(endpoint.service_url, endpoint.admin_url, client=client, token=endpoint.token, target=target)
    return TimingBands.from_calibration(cal)


def bands_measured_on(endpoint: Any, target: Any, client: str = "python") -> dict[str, Any]:
    """The timing bands (as a target's ``timing`` JSON) for a broker a test starts of its own (behind the
    fault proxy, or with a broker setting of its own): measured there with ``client``, never narrower
    than the default live bands its cases were written under (``TimingBands.no_narrower_than_default``)."""
    return _measured_bands(endpoint, target, client).no_narrower_than_default().to_json()


@pytest.fixture(scope="session")
def calibrated_target_for(live_target_for: Any, pulsar_broker: Any) -> Any:
    """``live_target_for(client)`` judged with timing bands measured on this broker for that client
    (conformance/timing.py, about 10 s per client, once a session), as ``pulsar-conformance run``
    does: a loaded CI machine widens the bands instead of failing the timing rules. A mixed run gets
    the widest of the Python and Java bands."""
    from conformance.timing import TimingBands

    measured: dict[str, Any] = {}

    def bands(one: str) -> Any:
        if one not in measured:
            measured[one] = _measured_bands(pulsar_broker, live_target_for(one), one)
        return measured[one]

    def _for(client: str):
        target = live_target_for(client)
        if getattr(target, "timing", None) is None:
            chosen = TimingBands.widest([bands("python"), bands("java")]) if client == "mixed" else bands(client)
            target.timing = chosen.to_json()
        return target

    return _for


@pytest.fixture(scope="session")
def model_target() -> Any:
    from conformance.targets.model import ModelTarget

    return ModelTarget()
