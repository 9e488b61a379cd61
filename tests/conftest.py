"""The repository's own test run: the conformance suite with every client.

A user's ``pytest --pyargs pulsar_conformance.suite`` defaults to python, java and mixed; the
repository's run (tests/conformance/test_cases.py imports that suite) also drives the Go client,
unless ``--client`` was given. Set here, not in pyproject's addopts: those would also apply to a
user's run of the installed suite from inside a checkout (the CI recipes do exactly that).
"""

from __future__ import annotations

import pytest

EVERY_CLIENT = ["python", "java", "go", "mixed"]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("pulsar_clients", default=None):
        config.option.pulsar_clients = list(EVERY_CLIENT)


# The fixtures that reach a live broker (conformance/plugin.py): a test that asks for one of them,
# directly or through another fixture, is live whatever its module says, so the deterministic tier
# (`-m "not live"`, .ci/run) never starts a broker by accident.
BROKER_FIXTURES = frozenset({"pulsar_broker", "pulsar_admin", "pulsar_namespace", "pulsar_client", "topic",
                             "live_target", "live_target_for", "calibrated_target_for", "fault_target"})


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if BROKER_FIXTURES & set(getattr(item, "fixturenames", ())) and not item.get_closest_marker("live"):
            item.add_marker(pytest.mark.live)


@pytest.fixture(scope="module")
def fault_target():
    """A 4.0.8 broker behind the fault proxy (``fixtures/faults.py``: Toxiproxy between the clients
    and the broker; ``restart_broker`` restarts it on its own data), judged with bands measured through
    the proxy (``conformance.plugin.bands_measured_on``). The session broker of the other live tests
    has no proxy, and a fault op needs one."""
    from conformance.plugin import bands_measured_on
    from conformance.targets.pulsar import BrokerTarget
    from fixtures.embedded import EmbeddedBroker

    broker = EmbeddedBroker(faults=True)
    endpoint = broker.start()
    target = BrokerTarget(endpoint)
    try:
        target.timing = bands_measured_on(endpoint, target)
        yield target
    finally:
        target.close()
        broker.stop()
