"""A broker assembled from Maven artifacts (no server tarball) starts and runs the suite.

Pulsar 3.0.7 has no ``pulsar-server-distribution`` on Maven Central, so ``--broker-version 3.0``
assembles it from ``org.apache.pulsar:pulsar-broker``'s dependency closure
(``fixtures/assembly.py``; about 210 MB on first use, then cached). This is the CI proof that the
assembled path works end to end: it starts, reports its release over the admin API, runs with
the shipped 3.x config values, and the cases of several chapters PASS on it, or FAIL only as a
known deviation recorded for 3.0.7 (``conformance/deviations.yaml``, ``deviations.d/``).
The whole version matrix is its own command (``pulsar-conformance matrix``), not CI.
"""

from __future__ import annotations

import pytest

from conformance.case_files import discover_cases
from conformance.deviations import known_deviations
from conformance.runner import FAIL, PASS, run_case, unexcused_failures

pytestmark = [pytest.mark.live, pytest.mark.releases]  # another release's broker: the releases tier (docs/ci.md)

RELEASE = "3.0.7"
_FOLDERS = ("acks", "redelivery", "seek", "subscriptions", "dedup", "delayed", "compaction", "retention")
CASES = [c for c in discover_cases() if c.path.parent.name in _FOLDERS and c.runs_on("python") and not c.not_live]


@pytest.fixture(scope="module")
def assembled_target():
    from conformance.targets.pulsar import BrokerTarget
    from fixtures.embedded import EmbeddedBroker

    broker = EmbeddedBroker(version="3.0")
    endpoint = broker.start()
    try:
        yield endpoint, BrokerTarget(endpoint)
    finally:
        broker.stop()


def test_the_assembled_broker_is_the_release_asked_for(assembled_target):
    from fixtures.admin import AdminClient

    endpoint, _ = assembled_target
    assert endpoint.build == "assembled" and endpoint.version == RELEASE
    admin = AdminClient(endpoint.admin_url)
    try:
        assert admin.broker_version().startswith(RELEASE)
    finally:
        admin.close()


def test_there_are_cases_to_run():
    assert len(CASES) >= 20, [c.id for c in CASES]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=[pytest.mark.rule(*c.rules)]) for c in CASES])
def test_case_on_the_assembled_broker(assembled_target, case, tmp_path):
    _, target = assembled_target
    result = run_case(case, target, client="python", history_dir=tmp_path)
    assert result.history is not None, f"{case.id}: {result.status} {result.message}"
    assert result.history.header.broker_version.startswith(RELEASE)
    deviations = known_deviations(case.id, RELEASE)
    if deviations and result.status == FAIL:
        assert not unexcused_failures(result, deviations), "\n".join(unexcused_failures(result, deviations))
        pytest.xfail(f"known deviation {', '.join(d.id for d in deviations)} on {RELEASE}")
    assert result.status == PASS, f"{case.id} on {RELEASE} (assembled):\n{result.failure_text()}"
