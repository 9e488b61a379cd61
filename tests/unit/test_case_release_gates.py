"""A case's ``brokers`` and ``java_clients`` (docs/trace-format.md#cases): a live run on releases outside them
reports the case NOT_APPLICABLE, naming the spec and the run's release, and never runs its ops; inside them,
and on the model, the case runs."""

from __future__ import annotations

import pytest

from conformance.case_files import discover_cases
from conformance.runner import NOT_APPLICABLE, PASS, run_case
from conformance.targets.model import ModelTarget


class _UnreachedLiveTarget:
    """What the runner reads of a live target before it runs a case: its name and releases. Running a case on it
    is a test failure (the gate must answer first)."""

    name = "embedded"

    def __init__(self, broker: str, java: str):
        self._broker, self._java = broker, java

    def broker_version(self) -> str:
        return self._broker

    def java_driver_version(self) -> str:
        return self._java

    def run(self, trace):
        raise AssertionError(f"the case ran on broker {self._broker} with Java client {self._java}")


def _case(case_id: str):
    (case,) = [c for c in discover_cases() if c.id == case_id]
    return case


@pytest.mark.parametrize("broker,java,why", [
    ("4.0.8", "2.10.5", "Java client releases >=2.11 (its java_clients), and this run's is 2.10.5"),
    ("4.0.8", "2.7.4", "this run's is 2.7.4"),
])
def test_a_java_client_outside_the_case_is_not_applicable(broker, java, why):
    case = _case("tdmq-tags-consumers-differ").with_vendor("tdmq")
    result = run_case(case, _UnreachedLiveTarget(broker, java), client="java")
    assert result.status == NOT_APPLICABLE
    assert why in result.message
    assert set(result.rule_verdicts.values()) == {NOT_APPLICABLE}


def test_a_broker_outside_the_case_is_not_applicable():
    case = _case("tdmq-delay-limit-10-days").with_vendor("tdmq")
    result = run_case(case, _UnreachedLiveTarget("3.0.7", "3.0.7"), client="java")
    assert result.status == NOT_APPLICABLE
    assert "broker releases >=3.3 (its brokers), and this run's is 3.0.7" in result.message


def test_the_model_runs_the_case_whatever_its_releases():
    case = _case("tdmq-tags-consumers-differ").with_vendor("tdmq")
    assert run_case(case, ModelTarget(client="java"), client="java").status == PASS
