"""Every conformance case, from the same file, against the model and against the live broker.

A case passes on a target when the checker finds every observation allowed by the model and
the case's pinned expectations hold. A case the registry marks as a known deviation of a
broker version (conformance/deviations.yaml) is an expected failure there, strictly: if the
broker starts conforming, the test says so.
"""

from __future__ import annotations

import pytest

from conformance.case_files import discover_cases
from conformance.deviations import known_deviations
from conformance.runner import FAIL, PASS, run_case, unexcused_failures
from conformance.trace import injects_faults

CASES = discover_cases()
LIVE_CLIENTS = ("python", "java", "go", "mixed")


def _params(*, live: bool):
    out = []
    for client in LIVE_CLIENTS if live else ("python", "java", "go", "mixed"):
        for case in CASES:
            if not case.runs_on(client):
                if live or client != "python":
                    continue  # e.g. Java-client-only rules: not applicable to a Python-driven broker run
            if live and case.not_live:
                continue  # e.g. a broker setting the suite's broker does not use: the run reports NOT_APPLICABLE
            if live and injects_faults(case.trace):
                continue  # needs the broker behind the fault proxy: tests/live/test_faults_live.py runs it
            if live and case.profile.get("vendor", "apache") != "apache":
                continue  # a vendor's case needs that vendor's broker: tests/live/test_tdmq_profile_live.py runs it
            out.append(pytest.param(case, client, id=f"{client}-{case.id}", marks=[pytest.mark.rule(*case.rules)]))
    return out


@pytest.mark.parametrize(("case", "client"), _params(live=False))
def test_case_on_model(case, client, model_target, tmp_path):
    result = run_case(case, model_target, client=client, history_dir=tmp_path)
    assert result.status == PASS, result.failure_text()


@pytest.mark.live
@pytest.mark.parametrize(("case", "client"), _params(live=True))
def test_case_on_broker(case, client, live_target_for, tmp_path, request):
    target = live_target_for(client)
    version = target.broker_version()
    deviation = known_deviations(case.id, version) or None
    result = run_case(case, target, client=client, history_dir=tmp_path)
    request.node.user_properties.append(("client", client))
    for rule, verdict in sorted(result.rule_verdicts.items()):
        request.node.user_properties.append((f"verdict:{rule}", verdict))
    if deviation is not None and result.status == FAIL:
        # the deviation excuses its own rule, anomaly and step; any other failure here is a FAIL
        assert not unexcused_failures(result, deviation), "\n".join(unexcused_failures(result, deviation))
        pytest.xfail("known deviation " + "; ".join(f"{d.id}: {d.reason}" for d in deviation))
    if deviation is not None:
        assert result.status != PASS, (f"known deviation {', '.join(d.id for d in deviation)} no longer shows on {version}: "
                                       "the broker now conforms; remove the entry")
    assert result.status == PASS, result.failure_text()
