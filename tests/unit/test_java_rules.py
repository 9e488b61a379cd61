"""The Java client's rules in the registry, their cases, and the spec functions that answer them."""

from __future__ import annotations

import doctest

import pytest

from conformance.case_files import discover_cases
from reference_model import rules as R
from reference_model import spec

NEW_JAVA_RULES = ("PLS-NACK-005", "PLS-ACKTIMEOUT-003", "PLS-ACKTIMEOUT-004", "PLS-ACKTIMEOUT-005", "PLS-ACK-006",
                  "PLS-RETRY-002", "PLS-RETRY-003", "PLS-ROUTE-004", "PLS-SUB-007", "PLS-SUB-008", "PLS-SHARED-003",
                  "PLS-FAILOVER-005")
NOW_BOTH_CLIENTS = ("PLS-NACK-003", "PLS-DLQ-002", "PLS-DLQ-003", "PLS-SEEK-001")


@pytest.mark.parametrize("rule_id", NEW_JAVA_RULES)
def test_new_java_rules_are_java_only_and_record_the_live_run(rule_id):
    r = R.rule(rule_id)
    assert r.applies_to.clients == ("java",)
    # confirmed through the Java driver: normative where the docs say it, else inferred, with the run noted
    assert r.status == ("normative" if r.quote else "inferred")
    assert "Live 4.0.8 with the Java client 4.0.8" in r.note
    assert "java" in r.source.lower() or r.quote, f"{rule_id}: cite the Java source or quote the docs"


@pytest.mark.parametrize("rule_id", NOW_BOTH_CLIENTS)
def test_rules_both_clients_share_apply_to_java_too(rule_id):
    assert R.applies(R.rule(rule_id), broker_version="4.0.8", client="java")
    assert R.applies(R.rule(rule_id), broker_version="4.0.8", client="python")


def test_a_mixed_run_may_speak_to_every_clients_rules():
    assert R.applies(R.rule("PLS-NACK-005"), broker_version="4.0.8", client="mixed")
    assert R.applies(R.rule("PLS-NACK-001"), broker_version="4.0.8", client="mixed")
    assert not R.applies(R.rule("PLS-FAILOVER-001"), broker_version="4.0.8", client="mixed")  # withdrawn


def test_every_new_java_rule_has_a_java_only_case():
    cases = [c for c in discover_cases() if c.clients == ("java",)]
    cited = {r for c in cases for r in c.rules}
    assert set(NEW_JAVA_RULES) <= cited, sorted(set(NEW_JAVA_RULES) - cited)
    assert cases and not any(c.runs_on("python") for c in cases)


def test_spec_windows_per_client():
    assert spec.nack_redelivery_window_ms(1000) == (1000, 1333)
    assert spec.nack_redelivery_window_ms(1000, client="java") == (745, 1000)
    assert spec.nack_redelivery_window_ms(10, client="java") == (0, 100)  # the 100 ms floor
    assert spec.nack_redelivery_window_ms(client="java", backoff=(500, 2000, 2.0), redelivery_count=1) == (745, 1000)
    with pytest.raises(ValueError, match="backoff"):
        spec.nack_redelivery_window_ms(client="python", backoff=(500, 2000, 2.0))
    assert spec.ack_timeout_redelivery_window_ms(1000, 100, client="java") == (1000, 1100)
    with pytest.raises(ValueError, match="tick"):
        spec.ack_timeout_redelivery_window_ms(1000, 50, client="java")
    with pytest.raises(ValueError, match="1 seconds"):
        spec.ack_timeout_redelivery_window_ms(999, 100, client="java")


def test_spec_doctests():
    finder, runner = doctest.DocTestFinder(), doctest.DocTestRunner(verbose=False)
    for test in finder.find(spec.nack_redelivery_window_ms, "nack_redelivery_window_ms", globs={"nack_redelivery_window_ms": spec.nack_redelivery_window_ms}):
        runner.run(test)
    assert runner.summarize(verbose=False).failed == 0
