"""Every conformance case, from its case file, against the model and against the target broker.

A case passes on a target when the checker finds every observation allowed by the model and the
case's pinned expectations hold. A case the registry marks as a known deviation of the broker's
release (conformance/deviations.yaml) is an expected failure there, strictly: it is reported as
skipped (``xfail``) with the deviation's id and reason, and if the broker starts conforming the
test fails and says so. A live case left INDETERMINATE only because the host stalled where it was
due (conformance/host_stalls.py) runs again, at most ``conformance.runner.STALL_RERUNS`` times; each
such run is named in the test's ``host_stall:<n>`` property.

Test ids read ``<client>-<release>-<case id>-<rule ids>``: ``python-4.0.8-ack-basic-PLS-ACK-001``
(the release is the one asked for: ``--broker-version``, the embedded default, or ``external`` for
a cluster given by URL, whose reported version is recorded as the ``broker_version`` property).
The repository's own tests import this module (tests/conformance/test_cases.py): the suite a
user installs is the suite CI runs.
"""

from __future__ import annotations

import pytest

from conformance.case_files import discover_cases, is_upstream
from conformance.deviations import known_deviations
from conformance.runner import (FAIL, NOT_APPLICABLE, PASS, first_undecided, required_broker_config, run_case,
                                run_case_past_stalls, unexcused_failures)
from conformance.trace import injects_faults

def _cases_for(client: str, *, live: bool, chosen: tuple[str, ...]) -> list:
    out = []
    for case in discover_cases():
        if not case.runs_in(client, chosen):
            if live or client != "python":
                continue  # e.g. Java-client-only rules: the Python client cannot do them (NOT_APPLICABLE)
        if live and case.not_live:
            continue  # a target that cannot run the case at all: `run` reports it NOT_APPLICABLE
        if live and required_broker_config(case):
            continue  # needs broker settings of its own: `run` reports it NOT_APPLICABLE with the --config-override
            # to use (tests/live/test_delay_limit_live.py runs delay-max-delay-java on such a broker)
        if live and injects_faults(case.trace):
            continue  # needs the broker behind the fault proxy: the repository's tests/live/test_faults_live.py
        if live and case.profile.get("vendor", "apache") != "apache":
            continue  # a vendor's case needs that vendor's broker: `run --profile` / tests/live/test_tdmq_profile_live.py
        out.append(case)
    return out


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "case" not in metafunc.fixturenames:
        return
    from conformance.plugin import chosen_clients, requested_release

    live = metafunc.function.__name__ == "test_case_on_broker"
    release = requested_release(metafunc.config) if live else "model"
    params = []
    chosen = chosen_clients(metafunc.config)
    for client in chosen:
        for case in _cases_for(client, live=live, chosen=chosen):
            marks = [pytest.mark.rule(*case.rules)]
            if is_upstream(case):  # marked, so CI's live tier can leave them to their own run
                marks.append(pytest.mark.upstream)
            params.append(pytest.param(case, client, id=f"{client}-{release}-{case.id}-{'+'.join(case.rules)}",
                                       marks=marks))
    metafunc.parametrize(("case", "client"), params)


def test_case_on_model(case, client, model_target, tmp_path, request):
    request.node.user_properties.append(("client", client))
    result = run_case(case, model_target, client=client, history_dir=tmp_path)
    assert result.status == PASS, result.failure_text()


@pytest.mark.live
def test_case_on_broker(case, client, calibrated_target_for, tmp_path, request):
    target = calibrated_target_for(client)
    version = target.broker_version()
    deviation = known_deviations(case.id, version) or None

    def stalled(attempt, result):  # that run proved nothing either way; its figures stay in the test's properties
        request.node.user_properties.append((f"host_stall:{attempt}", first_undecided(result)))

    result = run_case_past_stalls(case, target, client=client, history_dir=tmp_path, on_stall=stalled)
    if result.status == NOT_APPLICABLE:
        pytest.skip(result.message)  # e.g. a broker setting this broker does not have (runner.broker_config_conflict)
    request.node.user_properties.append(("client", client))
    request.node.user_properties.append(("broker_version", version))
    for rule, verdict in sorted(result.rule_verdicts.items()):
        request.node.user_properties.append((f"verdict:{rule}", verdict))
    if deviation is not None and result.status == FAIL:
        # the deviation excuses its own rule, anomaly and step; any other failure here is a FAIL
        assert not unexcused_failures(result, deviation), "\n".join(unexcused_failures(result, deviation))
        pytest.xfail("known deviation " + "; ".join(f"{d.id}: {d.reason}" for d in deviation))
    if deviation is not None and not all(d.intermittent for d in deviation):
        assert result.status != PASS, (f"known deviation {', '.join(d.id for d in deviation)} no longer shows on {version}: "
                                       "the broker now conforms; remove the entry")
    assert result.status == PASS, result.failure_text()
