"""The Key_Shared, routing and partition cases on brokers whose Key_Shared rules differ.

Each broker is started here, through ``fixtures.embedded.EmbeddedBroker`` (3.3.6 is fetched
from Maven Central on first use, about 245 MB): 4.0.8 with
``subscriptionKeySharedUseConsistentHashing=false`` (AUTO_SPLIT hash ranges, PLS-KEYSHARED-004)
and 3.3.6 (3.x ring, NONE_KEY for keyless messages, no draining hashes but the recently-joined
rule). The live target reads the broker's version and runtime config into the history header,
and the checker judges each history with that broker's selector.

Rules whose behaviour differs by version: PLS-KEYSHARED-001 (keyless sticky key),
PLS-KEYSHARED-002/003 (ring slot and point keys), PLS-KEYSHARED-004 (only with consistent
hashing off), PLS-KEYSHARED-005 (the broker's STICKY checks), PLS-KEYSHARED-006 (4.x only;
3.x reaches the same result through another rule). Every case must PASS on every broker; and a
3.3.6 history judged as if 4.0.8 had produced it must FAIL (so the difference is real). A case
whose rules do not apply to a release (PLS-KEYSHARED-006 before 4.0) is NOT_APPLICABLE there, and
a known bug of a release (KD-201 STICKY gaps, KD-202 incompatible policies on 3.3.6) is an
expected failure, excused only as recorded.

Pinned expectations use keys whose owner is the same under every selector, so they are
checked too.
"""

from __future__ import annotations

import pytest

from conformance.case_files import discover_cases
from conformance.checker import check
from conformance.deviations import known_deviations
from conformance.runner import FAIL, NOT_APPLICABLE, PASS, run_case, unexcused_failures
from conformance.trace import History, replace_header

pytestmark = [pytest.mark.live, pytest.mark.releases]  # another release's broker: the releases tier (docs/ci.md)

_FOLDERS = ("keyshared", "routing", "partitions")
CASES = [c for c in discover_cases() if c.path.parent.name in _FOLDERS and c.runs_on("python")]

BROKERS = {
    "4.0.8-ranges": ("4.0.8", {"subscriptionKeySharedUseConsistentHashing": "false"}),
    "3.3.6": ("3.3.6", {}),
}


@pytest.fixture(scope="module", params=sorted(BROKERS))
def versioned_target(request):
    from conformance.targets.pulsar import BrokerTarget
    from fixtures.embedded import EmbeddedBroker

    version, overrides = BROKERS[request.param]
    broker = EmbeddedBroker(version=version, overrides=overrides)
    endpoint = broker.start()
    try:
        yield request.param, BrokerTarget(endpoint)
    finally:
        broker.stop()


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=[pytest.mark.rule(*c.rules)]) for c in CASES])
def test_case_passes_on_versioned_broker(versioned_target, case, tmp_path):
    label, target = versioned_target
    result = run_case(case, target, client="python", history_dir=tmp_path)
    if result.status == NOT_APPLICABLE:  # no rule the case names applies to this release
        assert label != "4.0.8-ranges", f"{case.id} must apply to 4.0.8"
        return
    deviations = known_deviations(case.id, BROKERS[label][0])
    if deviations and result.status == FAIL:  # a known broker bug of this release, excused only as recorded
        assert not unexcused_failures(result, deviations), "\n".join(unexcused_failures(result, deviations))
        pytest.xfail(f"known deviation {', '.join(d.id for d in deviations)} on {label}")
    assert result.status == PASS, f"{case.id} on {label}:\n{result.failure_text()}"
    header = result.history.header
    assert header.broker_version.startswith(BROKERS[label][0])
    config = dict(header.profile).get("broker_config", {})
    for key, value in BROKERS[label][1].items():
        assert str(config.get(key)).lower() == value, f"the history header must report {key}={value}: {config}"


def test_version_difference_is_real(versioned_target):
    """Judged with the wrong broker's selector, the same history fails: the checker is exact."""
    label, target = versioned_target
    case = next(c for c in CASES if c.id == "keyshared-version-keys")
    history = target.run(case.trace)
    assert check(history).ok, check(history).summary()
    if label == "3.3.6":
        wrong = replace_header(history.header, broker_version="4.0.8")
    else:
        profile = dict(history.header.profile)
        profile["broker_config"] = dict(profile.get("broker_config") or {}, subscriptionKeySharedUseConsistentHashing="true")
        wrong = replace_header(history.header, profile=profile)
    report = check(History(wrong, history.events))
    anomalies = {v.anomaly for v in report.failures()}
    assert "key-stickiness-violation" in anomalies, report.summary()
