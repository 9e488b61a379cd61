"""Every conformance case, from the same file, against the model and against the live broker.

A case passes on a target when the checker finds every observation allowed by the model and
the case's pinned expectations hold. A case the registry marks as a known deviation of a
broker version (conformance/deviations.yaml) is an expected failure there, strictly: if the
broker starts conforming, the test says so.
"""

from __future__ import annotations

import pytest

from conformance.case_files import discover_cases
from conformance.deviations import known_deviation
from conformance.runner import PASS, run_case

CASES = discover_cases()
CLIENT = "python"


def _params(*, live: bool):
    out = []
    for case in CASES:
        if live and not case.runs_on(CLIENT):
            continue  # e.g. Java-client-only rules: not applicable to a Python-driven broker run
        if live and case.not_live:
            continue  # e.g. a broker setting the suite's broker does not use: the run reports NOT_APPLICABLE
        out.append(pytest.param(case, id=case.id, marks=[pytest.mark.rule(*case.rules)]))
    return out


@pytest.mark.parametrize("case", _params(live=False))
def test_case_on_model(case, model_target, tmp_path):
    result = run_case(case, model_target, client=CLIENT, history_dir=tmp_path)
    assert result.status == PASS, result.failure_text()


@pytest.mark.live
@pytest.mark.parametrize("case", _params(live=True))
def test_case_on_broker(case, live_target, tmp_path, request):
    version = live_target.broker_version()
    deviation = known_deviation(case.id, version)
    result = run_case(case, live_target, client=CLIENT, history_dir=tmp_path)
    for rule, verdict in sorted(result.rule_verdicts.items()):
        request.node.user_properties.append((f"verdict:{rule}", verdict))
    if deviation is not None:
        assert result.status != PASS, f"known deviation {deviation.id} no longer shows on {version}: the broker now conforms; remove the entry"
        pytest.xfail(f"known deviation {deviation.id}: {deviation.reason}")
    assert result.status == PASS, result.failure_text()
