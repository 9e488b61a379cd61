"""Case files: which clients a case names, cross-client handles, and the topic/properties pins."""

from __future__ import annotations

import textwrap

import pytest

from conformance.case_files import check_expectations, load_case
from conformance.targets.model import ModelTarget
from conformance.trace import TraceFormatError


def write(tmp_path, text: str):
    path = tmp_path / "case.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


BASE = """
    id: c
    title: t
    rules: [PLS-MSG-001]
    {clients}
    ops:
      - subscribe: {{consumer: c1, topic: t, subscription: s{c1}}}
      - create_producer: {{producer: p1, topic: t{p1}}}
      - send: {{producer: p1, payload: m1, properties: {{ORIGIN: "(12,3,-1,-1)", k: v}}}}
      - receive: {{consumer: c1, timeout_ms: 1000}}
    expect:
      - {{step: 4, topic: t, properties: {{k: v, ORIGIN: "re:\\\\(\\\\d+,\\\\d+,-1,-1\\\\)"}}}}
"""


def test_an_unknown_client_is_refused_naming_the_choices(tmp_path):
    with pytest.raises(TraceFormatError, match="python, cpp, java, go, mixed"):
        load_case(write(tmp_path, BASE.format(clients="clients: [cobol]", c1="", p1="")))


def test_ops_that_name_a_client_need_a_mixed_case(tmp_path):
    with pytest.raises(TraceFormatError, match="clients: \\[mixed\\]"):
        load_case(write(tmp_path, BASE.format(clients="", c1=", client: java", p1="")))


def test_a_mixed_case_must_name_its_handles_clients(tmp_path):
    with pytest.raises(TraceFormatError, match="must name the client of its handles"):
        load_case(write(tmp_path, BASE.format(clients="clients: [mixed]", c1="", p1="")))


def test_topic_and_property_pins_hold_and_break(tmp_path):
    case = load_case(write(tmp_path, BASE.format(clients="clients: [mixed]", c1=", client: java", p1=", client: python")))
    history = ModelTarget(client="mixed").run(case.trace)
    assert [r.passed for r in check_expectations(case, history)] == [True], check_expectations(case, history)[0].message
    wrong = load_case(write(tmp_path, BASE.format(clients="clients: [mixed]", c1=", client: java", p1=", client: python")
                            .replace('k: v, ORIGIN', 'k: w, ORIGIN').replace("topic: t, properties", "topic: u, properties")))
    message = check_expectations(wrong, history)[0].message
    assert "topic 't', expected 'u'" in message and "property k = 'v', expected 'w'" in message


def test_a_bad_property_regex_is_refused(tmp_path):
    with pytest.raises(TraceFormatError, match="bad regular expression"):
        load_case(write(tmp_path, BASE.format(clients="", c1="", p1="").replace('"re:\\\\(\\\\d+', '"re:(\\\\d+')))
