"""A case's ``profile.broker_config`` on a live broker (issue 46, per-case broker settings): the runner runs the case
when the broker has every key at the case's value, and otherwise reports it NOT_APPLICABLE, naming each key, the
broker's value and the ``--config-override`` that gives a broker the case can run on. The Key_Shared selector's keys
are exempt (the checker follows the selector the broker reports). ``tests/live/test_delay_limit_live.py`` runs a
case whose broker has the key; here the decision is checked against stated runtime configurations."""

from __future__ import annotations

from conformance.case_files import discover_cases
from conformance.runner import NOT_APPLICABLE, broker_config_conflict, run_case


class ConfiguredBroker:
    """What the runner asks a live target for: its name, its release and its runtime broker config (values are
    strings there, as ``GET /admin/v2/brokers/configuration/runtime`` gives them). It runs nothing: a case it is
    given that it should not run fails the test."""

    name = "embedded"

    def __init__(self, config: dict[str, str]):
        self.config = config

    def broker_config(self) -> dict[str, str]:
        return self.config

    def broker_version(self) -> str:
        return "4.0.8"

    def run(self, trace):
        raise AssertionError("the runner ran a case this broker cannot run")


def _case(case_id: str):
    (case,) = [c for c in discover_cases() if c.id == case_id]
    return case


def test_a_broker_without_the_cases_setting_cannot_run_it_and_says_which():
    case = _case("delay-max-delay-java")
    why = broker_config_conflict(case, ConfiguredBroker({"delayedDeliveryMaxDelayInMillis": "0"}))
    assert "delayedDeliveryMaxDelayInMillis=2000 (this broker has 0)" in why
    assert "--config-override delayedDeliveryMaxDelayInMillis=2000" in why
    result = run_case(case, ConfiguredBroker({"delayedDeliveryMaxDelayInMillis": "0"}), client="java")
    assert result.status == NOT_APPLICABLE and result.message == why


def test_a_setting_the_broker_does_not_report_is_not_assumed():
    why = broker_config_conflict(_case("up-java-b-keyless-pass-through-retain"), ConfiguredBroker({}))
    assert "topicCompactionRetainNullKey=true (this broker's value cannot be read)" in why


def test_a_broker_with_the_setting_runs_the_case():
    assert broker_config_conflict(_case("delay-max-delay-java"),
                                  ConfiguredBroker({"delayedDeliveryMaxDelayInMillis": "2000"})) == ""
    assert broker_config_conflict(_case("up-java-b-keyless-pass-through-retain"),
                                  ConfiguredBroker({"topicCompactionRetainNullKey": "TRUE"})) == ""


def test_the_key_shared_selector_is_followed_not_required():
    case = _case("keyshared-join-leave")
    assert case.trace.header.profile["broker_config"]["subscriptionKeySharedUseConsistentHashing"] == "false"
    assert broker_config_conflict(case, ConfiguredBroker({"subscriptionKeySharedUseConsistentHashing": "true"})) == ""


def test_the_model_takes_the_cases_config_as_its_own():
    class Model(ConfiguredBroker):
        name = "model"

    assert broker_config_conflict(_case("delay-max-delay-java"), Model({})) == ""
