"""The tdmq vendor profile (reference_model/vendors.py) on embedded brokers: PLS-TAG-001 judged by the
checker on the case tdmq-tags-or-untagged with both clients, on a broker that loads the reference tag
filter and the 10-day delay limit the profile asks for (``open_endpoint`` with ``profile="tdmq"``: what
``pulsar-conformance run --profile tdmq`` starts). The same case on a broker without the filter is the
rule broken for real: the checker must FAIL it on PLS-TAG-001. The case tdmq-delay-limit-10-days checks the
profile's 10-day delay limit (PLS-DELAY-007 with the limit TDMQ documents) with the Java client; on the plain
broker, which has no limit, the 10-day-and-1-s message is stored and the checker FAILs PLS-DELAY-007."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.live

CASE_ID = "tdmq-tags-or-untagged"


DELAY_CASE_ID = "tdmq-delay-limit-10-days"


def _case(case_id: str = CASE_ID):
    from conformance.case_files import discover_cases

    (case,) = [c for c in discover_cases() if c.id == case_id]
    return case.with_vendor("tdmq")


@pytest.fixture(scope="module")
def tdmq_endpoint():
    from fixtures.endpoint import parse_target
    from pulsar_conformance.targets import open_endpoint

    options = SimpleNamespace(profile="tdmq", broker_version="4.0.8", config_override=(), token_env=None, token_file=None)
    with open_endpoint(parse_target("embedded"), options) as endpoint:
        yield endpoint


def _run(endpoint, client: str, case_id: str = CASE_ID):
    from conformance.runner import run_case
    from conformance.targets.pulsar import BrokerTarget

    target = BrokerTarget(endpoint, client=client)
    try:
        return run_case(_case(case_id), target, client=client)
    finally:
        target.close()


@pytest.mark.rule("PLS-TAG-001")
@pytest.mark.parametrize("client", ["python", "java"])
def test_tags_are_filtered_under_the_tdmq_profile(tdmq_endpoint, client):
    from conformance.runner import PASS

    result = _run(tdmq_endpoint, client)
    header = result.history.header
    assert header.profile["vendor"] == "tdmq"
    assert str(header.profile["broker_config"]["delayedDeliveryMaxDelayInMillis"]) == "864000000"
    assert result.status == PASS, result.failure_text()
    assert result.rule_verdicts["PLS-TAG-001"] == PASS


@pytest.mark.rule("PLS-DELAY-007")
def test_the_ten_day_delay_limit_under_the_tdmq_profile(tdmq_endpoint):
    from conformance.runner import PASS

    result = _run(tdmq_endpoint, "java", DELAY_CASE_ID)
    assert result.status == PASS, result.failure_text()
    assert result.rule_verdicts["PLS-DELAY-007"] == PASS
    refused = result.history.events[2].outcome
    assert refused.status == "rejected" and refused.error == "NotAllowedError", refused


JOIN_CASE_ID = "tdmq-tags-consumers-differ"
RECONSUME_CASE_ID = "tdmq-reconsume-later-delay-limit"


@pytest.mark.parametrize(("case_id", "rules"), [
    # c2 joins s (created with the tag a) giving the tag b: it gets m-a and m-plain, never m-b or m-c
    pytest.param(JOIN_CASE_ID, ("PLS-TAG-003", "PLS-TAG-001"), marks=pytest.mark.rule("PLS-TAG-003")),
    # the retry copy delayed past 10 days is refused, and m1 comes back at once from t with count 1 (step 7)
    pytest.param(RECONSUME_CASE_ID, ("PLS-DELAY-007", "PLS-RETRY-004"), marks=pytest.mark.rule("PLS-RETRY-004")),
])
def test_the_java_cases_of_the_profile_pass_under_it(tdmq_endpoint, case_id, rules):
    from conformance.runner import PASS

    result = _run(tdmq_endpoint, "java", case_id)
    assert result.status == PASS, result.failure_text()
    assert {r: result.rule_verdicts[r] for r in rules} == {r: PASS for r in rules}


@pytest.mark.parametrize(("case_id", "client", "rules", "label"), [
    # no tag filter: m-c (tag c) reaches sub-a (tags a, b)
    pytest.param(CASE_ID, "python", ("PLS-TAG-001",), "m-c", marks=pytest.mark.rule("PLS-TAG-001")),
    # no delay limit: the message delayed 10 days and 1 s is stored
    pytest.param(DELAY_CASE_ID, "java", ("PLS-DELAY-007",), None, marks=pytest.mark.rule("PLS-DELAY-007")),
    # no tag filter: m-b (tag b, which the joiner c2 gave) reaches c2, and so does m-c (tag c, which neither gave)
    pytest.param(JOIN_CASE_ID, "java", ("PLS-TAG-003", "PLS-TAG-001"), "m-b", marks=pytest.mark.rule("PLS-TAG-003")),
    # no delay limit: the retry copy delayed 10 days and 1 s is stored, so the reconsume_later succeeds
    pytest.param(RECONSUME_CASE_ID, "java", ("PLS-DELAY-007",), None, marks=pytest.mark.rule("PLS-DELAY-007")),
])
def test_the_plain_broker_breaks_the_profiles_rules(pulsar_broker, case_id, client, rules, label):
    """The suite's plain embedded broker has neither the reference tag filter nor the 10-day limit: each tdmq case
    FAILs on the rule it exists for, and the first FAIL of the first rule names the message that broke it."""
    from conformance.runner import FAIL

    result = _run(pulsar_broker, client, case_id)
    for rule_id in rules:
        assert result.rule_verdicts[rule_id] == FAIL, result.failure_text()
    if label is not None:
        failed = [v for v in result.verdicts if v.rule_id == rules[0] and v.status == FAIL]
        assert failed and label in failed[0].explanation
