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


@pytest.mark.rule("PLS-TAG-001")
def test_a_broker_without_the_filter_fails_the_tag_rule(pulsar_broker):
    """The suite's plain embedded broker has no tag filter: m-c (tag c) reaches sub-a (tags a, b)."""
    from conformance.runner import FAIL

    result = _run(pulsar_broker, "python")
    assert result.rule_verdicts["PLS-TAG-001"] == FAIL, result.failure_text()
    failed = [v for v in result.verdicts if v.rule_id == "PLS-TAG-001" and v.status == FAIL]
    assert failed and "m-c" in failed[0].explanation


@pytest.mark.rule("PLS-DELAY-007")
def test_the_ten_day_delay_limit_under_the_tdmq_profile(tdmq_endpoint):
    from conformance.runner import PASS

    result = _run(tdmq_endpoint, "java", DELAY_CASE_ID)
    assert result.status == PASS, result.failure_text()
    assert result.rule_verdicts["PLS-DELAY-007"] == PASS
    refused = result.history.events[2].outcome
    assert refused.status == "rejected" and refused.error == "NotAllowedError", refused


@pytest.mark.rule("PLS-DELAY-007")
def test_a_broker_without_the_limit_fails_the_delay_rule(pulsar_broker):
    """The plain broker has no delay limit: the message delayed 10 days and 1 s is stored."""
    from conformance.runner import FAIL

    result = _run(pulsar_broker, "java", DELAY_CASE_ID)
    assert result.rule_verdicts["PLS-DELAY-007"] == FAIL, result.failure_text()


JOIN_CASE_ID = "tdmq-tags-consumers-differ"


@pytest.mark.rule("PLS-TAG-003")
def test_a_subscription_keeps_its_creators_tags_under_the_tdmq_profile(tdmq_endpoint):
    """c2 joins s (created with the tag a) giving the tag b: it gets m-a and m-plain, never m-b."""
    from conformance.runner import PASS

    result = _run(tdmq_endpoint, "java", JOIN_CASE_ID)
    assert result.status == PASS, result.failure_text()
    assert result.rule_verdicts["PLS-TAG-003"] == PASS
    assert result.rule_verdicts["PLS-TAG-001"] == PASS


@pytest.mark.rule("PLS-TAG-003")
def test_a_broker_without_the_filter_fails_the_kept_tags_rule(pulsar_broker):
    """On the plain broker m-b (tag b, which the joiner c2 gave) reaches c2: PLS-TAG-003 FAILs on it, and m-c
    (tag c, which neither gave) FAILs PLS-TAG-001."""
    from conformance.runner import FAIL

    result = _run(pulsar_broker, "java", JOIN_CASE_ID)
    assert result.rule_verdicts["PLS-TAG-003"] == FAIL, result.failure_text()
    failed = [v for v in result.verdicts if v.rule_id == "PLS-TAG-003" and v.status == FAIL]
    assert failed and "m-b" in failed[0].explanation
    assert result.rule_verdicts["PLS-TAG-001"] == FAIL


RECONSUME_CASE_ID = "tdmq-reconsume-later-delay-limit"


@pytest.mark.rule("PLS-RETRY-004")
def test_a_reconsume_later_past_the_limit_fails_and_brings_the_original_back(tdmq_endpoint):
    from conformance.runner import PASS

    result = _run(tdmq_endpoint, "java", RECONSUME_CASE_ID)
    assert result.status == PASS, result.failure_text()
    assert result.rule_verdicts["PLS-DELAY-007"] == PASS
    assert result.rule_verdicts["PLS-RETRY-004"] == PASS
    back = result.history.events[6].outcome.value["message"]
    assert (back["topic"], back["redelivery_count"]) == ("t", 1), back


@pytest.mark.rule("PLS-DELAY-007")
def test_a_broker_without_the_limit_fails_the_reconsume_later_delay(pulsar_broker):
    """The plain broker takes the retry copy delayed 10 days and 1 s: the reconsume_later succeeds."""
    from conformance.runner import FAIL

    result = _run(pulsar_broker, "java", RECONSUME_CASE_ID)
    assert result.rule_verdicts["PLS-DELAY-007"] == FAIL, result.failure_text()
