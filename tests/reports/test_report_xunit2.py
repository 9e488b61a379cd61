"""The xunit2 JUnit file of a corpus report: one test case per rule x target x version x client,
failures carrying the minimal witness, properties on suites only."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from reference_model.rules import active_rules


def test_one_case_per_rule_and_combo_with_witness_failures(report_dir):
    path, manifest = report_dir
    root = ET.parse(path / "junit.xml").getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    # 6 model profiles + 4 versions x 2 clients
    assert len(suites) == 14
    rules = [r.id for r in active_rules()]
    for suite in suites:
        cases = suite.findall("testcase")
        assert [c.get("name") for c in cases] == rules
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(1 for c in cases if c.find("failure") is not None)
        assert int(suite.get("skipped")) == sum(1 for c in cases if c.find("skipped") is not None)
        props = {p.get("name"): p.get("value") for p in suite.find("properties")}
        assert {"target", "broker_version", "client", "corpus_rows", "runs", "generator_seed"} <= set(props)
        assert props["generator_seed"] == str(manifest["config"]["seed"])
        for case in cases:  # xunit2: no properties below a test case
            assert case.find("properties") is None
        # how many steps judged each rule: a PASS always rests on one or more
        for case in cases:
            steps = int(props[f"judged_steps:{case.get('name')}"])
            if case.find("failure") is None and case.find("skipped") is None:
                assert steps > 0, case.get("name")
    total_failures = sum(int(s.get("failures")) for s in suites)
    assert int(root.get("failures")) == total_failures > 0
    # a persistent injected bug fails on its version/client with a witness message and text
    p = manifest["persistent"][0]
    suite = next(s for s in suites if f"embedded {p['broker_version']} {p['client']}]" in s.get("name"))
    failures = [c.find("failure") for c in suite.findall("testcase") if c.find("failure") is not None]
    assert failures
    f = failures[0]
    assert "minimal witness: trace" in f.get("message")
    assert "Explanation (checker):" in f.text and "Witness:" in f.text and "FAIL" in f.text
    # model suites are the reference: nothing fails there
    for s in suites:
        if s.get("name").startswith("pulsar-conformance[model"):
            assert s.get("failures") == "0"
    skipped = [c.find("skipped").get("message") for s in suites for c in s.findall("testcase") if c.find("skipped") is not None]
    assert any(m.startswith("NOT_APPLICABLE") for m in skipped) and any(m.startswith("NOT_EXERCISED") for m in skipped)
