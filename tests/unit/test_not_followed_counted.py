"""Steps the model did not follow are counted where users read the answer (issue 46: "What is not covered is
shown ... so no reader takes silence for a PASS"): summary.json ``not_followed``, the headline sentence (the last
line of a PASS), junit.xml and the HTML report, all with the same count, through the real ``run`` code path.

The input is a case built here whose seventh step the model leaves unspecified: a key given as bytes to a Java
producer that batches (which text its KeyBased container groups by is not modelled: ``NotModelledError`` in
``Broker._op_send``). Its other steps are judged and PASS. Expected values come from that input (one step, that
case, that op), never from the code's own output.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from conformance.checker import not_followed_reason
from fixtures.endpoint import TargetSpec
from pulsar_conformance.run_job import RunOptions, run
from reports.html import not_followed_section

CASE = """\
id: key-bytes-on-a-batching-producer
title: a step the model does not follow, beside steps it judges
rules: [PLS-ACK-001]
clients: [java]
ops:
  - subscribe: {consumer: c1, topic: t, subscription: s, type: Exclusive}
  - create_producer: {producer: p1, topic: t}
  - send: {producer: p1, payload: m1}
  - receive: {consumer: c1, timeout_ms: 500}
  - ack: {consumer: c1, message: m1}
  - create_producer: {producer: p2, topic: u, batching: true}
  - send: {producer: p2, payload: x1, key_bytes: "00ff"}
  - receive: {consumer: c1, timeout_ms: 300}
expect:
  - {step: 4, status: ok, payload: m1}
"""


def test_reasons_are_counted_across_traces_without_their_names():
    assert not_followed_reason("a Java consumer of a partitioned topic acking hello-2, sent by another client") == \
        not_followed_reason("a Java consumer of a partitioned topic acking m17, sent by another client")
    assert not_followed_reason("p1's fenced send may have closed its client's connection") == \
        "…'s fenced send may have closed its client's connection"


def test_a_step_not_followed_is_counted_on_every_surface(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "key-bytes-on-a-batching-producer.yaml").write_text(CASE, encoding="utf-8")
    out, said = tmp_path / "out", []
    code = run(RunOptions(target=TargetSpec("model"), clients=("java",), out=out, cases=cases, fuzz_examples=0,
                          no_report=True), say=said.append)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    # the step was not followed, yet the run's answer is about what was judged: the rule it names PASSes
    assert code == 0 and summary["overall"] == "PASS", said[-3:]
    doc = summary["not_followed"]
    assert doc["steps"] == 1, doc
    assert doc["cases"] == {"java/key-bytes-on-a-batching-producer": 1}, doc
    (reason,) = doc["by_reason"]
    assert "key given as bytes" in reason and doc["by_reason"][reason] == 1
    # the last line (a PASS carries the headline sentence) says it
    assert said[-1].startswith("PASS (exit 0)") and "1 step the model did not follow" in said[-1], said[-1]
    # junit.xml: the case's property names the step and the reason; the suite counts the steps
    root = ET.parse(out / "junit.xml").getroot()
    (suite,) = [s for s in root.findall("testsuite") if s.get("name") != "pulsar-conformance.outcome"]
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["not_followed_steps"] == "1"
    assert props["not_followed:key-bytes-on-a-batching-producer"].startswith("step 7 send: ")
    # the report's section lists the reason with its count
    section = not_followed_section(summary)
    assert 'data-steps="1"' in section and "key given as bytes" in section


def test_a_run_the_model_followed_throughout_says_so(tmp_path):
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "followed.yaml").write_text(CASE.replace("key-bytes-on-a-batching-producer", "followed")
                                         .replace('key_bytes: "00ff"', "key: k"), encoding="utf-8")
    out, said = tmp_path / "out", []
    assert run(RunOptions(target=TargetSpec("model"), clients=("java",), out=out, cases=cases, fuzz_examples=0,
                          no_report=True), say=said.append) == 0
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["not_followed"] == {"steps": 0, "cases": {}, "by_reason": {}}
    assert "did not follow" not in said[-1]
    assert 'data-steps="0"' in not_followed_section(summary)
