"""The client x feature matrix (``reports/client_matrix.py``): Pulsar's own feature-matrix rows,
their claims, our verdicts per client (python, java, mixed), and where the two disagree.
No Spark here: the input is summary.json documents."""

from __future__ import annotations

import json

import pytest

from reference_model.rules import RULES, active_rules, rules_by_area
from reports import client_matrix as cm

ACTIVE = {r.id: r for r in active_rules()}


def summary(client: str, verdicts: dict[str, str] | None = None, *, version: str = "4.0.8", default: str | None = None) -> dict:
    """A summary.json as ``conformance.runner.summary`` writes it: every active rule, PASS where it
    applies to the client (mixed: to any client), NOT_APPLICABLE elsewhere, then ``verdicts``."""
    rules = {}
    for r in active_rules():
        applies = client == "mixed" or client in r.applies_to.clients
        rules[r.id] = default or ("PASS" if applies else "NOT_APPLICABLE")
    rules.update(verdicts or {})
    return {"target": "embedded", "broker_version": version, "client": client, "client_version": "x",
            "rules": rules, "counts": {}, "cases": {}}


# --------------------------------------------------------------------------- the rows


def test_rows_are_the_feature_matrix_rows_with_their_claims():
    names = [r.name for r in cm.FEATURE_ROWS]
    assert len(names) == len(set(names)) == 88
    assert [s for s in dict.fromkeys(r.section for r in cm.FEATURE_ROWS)] == ["Client", "Producer", "Consumer", "Reader", "TableView"]
    row = {r.name: r for r in cm.FEATURE_ROWS}
    # verbatim names, sub-features under their feature
    for name in ("Client \u203a Authentication \u203a HTTP Basic", "Producer \u203a Sync | Async Send",
                 "Consumer \u203a ACK \u203a Batch-Index ACK", "Consumer \u203a ACK \u203a NACK Backoff",
                 "Consumer \u203a Seek \u203a Inclusive/Non-inclusive", "Consumer \u203a Retry letter topic",
                 "Consumer \u203a Dead letter topic", "Reader \u203a Seek \u203a by timestamp", "TableView \u203a Listener"):
        assert name in row, name
    # what data/matrix.js says (Java, C++, Python)
    nb = row["Consumer \u203a ACK \u203a NACK Backoff"]
    assert (nb.java, nb.cpp, nb.python) == (2, 0, 0)
    assert (nb.claim("java"), nb.claim("python"), nb.claim("mixed")) == ("supported", "not supported", "unknown")
    rt = row["Reader \u203a Seek \u203a by timestamp"]
    assert (rt.java, rt.cpp, rt.python) == (2, 2, 0)  # C++ yes, Python no
    assert "C++ column" in rt.claim_source("python")
    assert row["Consumer \u203a Schema \u203a Native avro"].java == 0
    assert cm.SOURCE["path"] == "data/matrix.js" and cm.SOURCE["repository"] == "apache/pulsar-site"


def test_every_mapped_rule_and_area_exists_and_is_active():
    areas = set(rules_by_area())
    for row in cm.FEATURE_ROWS:
        assert set(row.areas) <= areas, row.name
        for rid in row.rules:
            assert rid in ACTIVE, f"{row.name}: {rid} is not an active rule"
        assert row.covered == bool(row.rule_ids())
    covered = {r.name for r in cm.FEATURE_ROWS if r.covered}
    assert "Consumer \u203a ACK \u203a NACK Backoff" in covered and "Client \u203a TLS encryption" not in covered
    row = {r.name: r for r in cm.FEATURE_ROWS}
    assert row["Consumer \u203a ACK \u203a NACK Backoff"].rule_ids() == ("PLS-NACK-004", "PLS-NACK-007")
    assert row["Consumer \u203a Retry letter topic"].rule_ids() == ("PLS-RETRY-001", "PLS-RETRY-002", "PLS-RETRY-003", "PLS-RETRY-004")
    assert set(row["Consumer \u203a Dead letter topic"].rule_ids()) == {r.id for r in rules_by_area()["DLQ"] if r.status != "withdrawn"}
    # withdrawn rules are never behind a row, and every active rule is either behind a row or listed as behind none
    withdrawn = {r.id for r in RULES if r.status == "withdrawn"}
    mapped = {rid for r in cm.FEATURE_ROWS for rid in r.rule_ids()}
    assert not mapped & withdrawn
    assert mapped | set(cm.rules_behind_no_row()) == set(ACTIVE)
    assert not mapped & set(cm.rules_behind_no_row())


# --------------------------------------------------------------------------- folding and claims


def test_three_clients_fold_per_row_and_client():
    m = cm.build([summary("python"), summary("java"), summary("mixed", {"PLS-SEEK-001": "FAIL"})])
    assert m.clients == ("python", "java", "mixed")
    backoff = m.row("Consumer \u203a ACK \u203a NACK Backoff")
    assert backoff.cell("python").verdict == "NOT_APPLICABLE"  # Java-only rule: unsupported, not failing
    assert backoff.cell("java").verdict == "PASS"
    # the Go rule of the row (PLS-NACK-007) does not speak about Java: not applicable there, not failing
    assert backoff.cell("java").rules == (("PLS-NACK-004", "PASS"), ("PLS-NACK-007", "NOT_APPLICABLE"))
    seek = m.row("Consumer \u203a Seek \u203a by messageID")
    assert seek.cell("mixed").verdict == "FAIL" and dict(seek.cell("mixed").rules)["PLS-SEEK-001"] == "FAIL"
    assert seek.cell("mixed").claim == "unknown" and seek.cell("mixed").disagreement is None
    tls = m.row("Client \u203a TLS encryption")
    assert all(c.verdict is None and c.rules == () for c in tls.cells)  # not covered by any rule
    assert tls.cell("java").claim == "supported"


def test_the_fold_is_fail_then_indeterminate_then_pass_then_na_then_not_exercised():
    row = "Consumer \u203a ACK \u203a NACK"  # PLS-NACK-001..003 (C++/Python), PLS-BATCH-006 (all)
    def verdict(**v):
        return cm.build([summary("python", v)]).row(row).cell("python").verdict

    assert verdict() == "PASS"
    assert verdict(**{"PLS-NACK-002": "INDETERMINATE"}) == "INDETERMINATE"
    assert verdict(**{"PLS-NACK-002": "INDETERMINATE", "PLS-BATCH-006": "FAIL"}) == "FAIL"
    assert verdict(**{r: "NOT_APPLICABLE" for r in ("PLS-NACK-001", "PLS-NACK-002", "PLS-NACK-003", "PLS-BATCH-006")}) == "NOT_APPLICABLE"
    assert verdict(**{"PLS-NACK-001": "NOT_APPLICABLE", "PLS-NACK-002": "NOT_EXERCISED", "PLS-NACK-003": "NOT_APPLICABLE",
                      "PLS-BATCH-006": "NOT_APPLICABLE"}) == "NOT_EXERCISED"
    # several summaries of one client (two broker versions): worst of both, per rule
    m = cm.build([summary("java", version="4.0.8"), summary("java", {"PLS-NACK-004": "FAIL"}, version="3.3.6")])
    cell = m.row("Consumer \u203a ACK \u203a NACK Backoff").cell("java")
    assert (cell.verdict, cell.rules) == ("FAIL", (("PLS-NACK-004", "FAIL"), ("PLS-NACK-007", "NOT_APPLICABLE")))
    # a rule missing from every summary counts as not exercised
    doc = summary("java")
    del doc["rules"]["PLS-NACK-004"]
    assert cm.build([doc]).row("Consumer \u203a ACK \u203a NACK Backoff").cell("java").verdict == "NOT_EXERCISED"


def test_disagreements_between_the_claims_and_the_verdicts():
    m = cm.build([summary("python"), summary("java"), summary("mixed")])
    found = {(r.feature.name, c.client): c.disagreement for r, c in m.disagreements}
    # the matrix says C++/Python have no dead letter topic and no batch index ack; the Python client PASSed their rules
    assert found[("Consumer \u203a Dead letter topic", "python")] == cm.CLAIMS_NO_SUPPORT_BUT_PASSED
    assert found[("Consumer \u203a ACK \u203a Batch-Index ACK", "python")] == cm.CLAIMS_NO_SUPPORT_BUT_PASSED
    # the matrix says Java has ack timeouts, and the Java ack-timeout rules (PLS-ACKTIMEOUT-003..005) PASSed
    assert ("Consumer \u203a ACK \u203a ACK Timeout", "java") not in found
    # agreement: Java-only features unsupported in Python are N/A there; Java PASSes them
    assert ("Consumer \u203a ACK \u203a NACK Backoff", "python") not in found
    assert ("Consumer \u203a Retry letter topic", "java") not in found
    # no claim for cross-client use, and no verdict on an uncovered row: never a disagreement
    assert not [k for k in found if k[1] == "mixed"]
    assert not [k for k in found if not m.row(k[0]).feature.covered]
    cell = m.row("Consumer \u203a Dead letter topic").cell("python")
    assert "PLS-DLQ-001" in cell.explanation and "does not support" in cell.explanation
    # a FAIL is not "the client did it": only a PASS contradicts "not supported"
    failing = summary("python", {r: "FAIL" for r in m.row("Consumer \u203a Dead letter topic").feature.rule_ids()})
    assert cm.build([failing]).row("Consumer \u203a Dead letter topic").cell("python").disagreement is None


def test_a_main_summary_with_by_client_counts_every_client():
    py, ja, mx = summary("python"), summary("java", {"PLS-NACK-004": "FAIL"}), summary("mixed")
    main = {**py, "by_client": {c: {k: d[k] for k in ("client_version", "rules", "counts", "cases")} for c, d in
                                (("python", py), ("java", ja), ("mixed", mx))}}
    m = cm.build([main], sources=["out/run/summary.json"])
    assert m.clients == ("python", "java", "mixed")
    assert m.row("Consumer \u203a ACK \u203a NACK Backoff").cell("java").verdict == "FAIL"
    assert {s.source for s in m.summaries} == {f"out/run/summary.json (by_client.{c})" for c in ("python", "java", "mixed")}
    assert all(s.broker_version == "4.0.8" for s in m.summaries)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize("doc, words", [
    ({"rules": {}}, ["summary-x.json", "'client'"]),
    ({"client": "python"}, ["summary-x.json", "'rules'"]),
    ({"client": "python", "rules": ["PLS-ACK-001"]}, ["summary-x.json", "'rules'"]),
    ({"client": "cobol", "rules": {}}, ["summary-x.json", "'client'", "cobol"]),
    ({"client": "java", "rules": {"PLS-ACK-001": "OK"}}, ["summary-x.json", "rules.PLS-ACK-001", "'OK'"]),
    ({"client": "java", "rules": {"PLS-ACK-001": "ERROR"}}, ["summary-x.json", "'ERROR'"]),
])
def test_bad_input_is_refused_naming_the_summary_and_field(doc, words):
    with pytest.raises(ValueError) as err:
        cm.build([doc], sources=["summary-x.json"])
    for w in words:
        assert w in str(err.value)


def test_bad_input_without_sources_names_the_position():
    with pytest.raises(ValueError, match=r"summary #2: missing field 'client'"):
        cm.build([summary("python"), {"rules": {}}])
    with pytest.raises(ValueError, match="list of summary.json documents"):
        cm.build(summary("python"))  # one document, not a list
    with pytest.raises(ValueError, match="no summaries"):
        cm.build([])


# --------------------------------------------------------------------------- outputs


def test_json_markdown_and_html_outputs(tmp_path):
    m = cm.build([summary("python"), summary("java"), summary("mixed", {"PLS-SEEK-001": "FAIL"})],
                 sources=["summary-python.json", "summary-java.json", "summary-mixed.json"])
    doc = cm.to_json(m)
    assert json.loads(json.dumps(doc)) == doc
    assert doc["clients"] == ["python", "java", "mixed"] and doc["source"]["commit"] == cm.SOURCE["commit"]
    rows = {r["name"]: r for r in doc["rows"]}
    assert len(rows) == len(cm.FEATURE_ROWS)
    tls = rows["Client \u203a TLS encryption"]
    assert tls["cells"]["java"]["verdict"] == "not covered by any rule" and tls["rules"] == []
    dlq = rows["Consumer \u203a Dead letter topic"]
    assert dlq["matrix"] == {"java": 2, "cpp": 0, "python": 0}
    assert dlq["cells"]["python"] == {**dlq["cells"]["python"], "verdict": "PASS", "claim": "not supported",
                                      "disagreement": cm.CLAIMS_NO_SUPPORT_BUT_PASSED}
    assert dlq["cells"]["mixed"]["claim"] == "unknown"
    assert {(d["row"], d["client"]) for d in doc["disagreements"]} >= {("Consumer \u203a Dead letter topic", "python")}
    assert "PLS-TTL-001" in doc["rules_behind_no_row"]

    md = cm.to_markdown(m)
    assert "| row | python | java | mixed | rules |" in md
    assert "| Sync \\| Async Send |" in md  # the row's own "|" escaped
    assert "not covered by any rule" in md and "## Disagreements" in md and "data/matrix.js" in md
    assert "| ACK \u203a NACK Backoff | n/a \u00b7 matrix \u2212 | \u2713 PASS \u00b7 matrix + | \u2713 PASS \u00b7 matrix ? |" in md

    html = cm.to_html(m, caption="from three summaries")
    assert html.strip().startswith('<section id="client-matrix">')
    assert html.count('data-client="mixed" data-row-verdict=') == len(cm.FEATURE_ROWS)  # a cell per row and client
    assert html.count('data-client="mixed" data-row-verdict="NOT_COVERED"') == sum(not r.covered for r in cm.FEATURE_ROWS)
    assert 'data-disagreement="claims-unsupported-but-passed"' in html and "from three summaries" in html
    assert "pulsar.apache.org/client-feature-matrix/" in html and "https://" not in html

    written = cm.write(m, tmp_path / "out")
    assert [p.name for p in written] == ["client-matrix.json", "client-matrix.md"]
    assert json.loads(written[0].read_text()) == doc
    assert not list((tmp_path / "out").glob("*.tmp"))


def test_the_command_line(tmp_path, capsys):
    paths = []
    for client in ("python", "java", "mixed"):
        p = tmp_path / f"summary-{client}.json"
        p.write_text(json.dumps(summary(client)))
        paths.append(str(p))
    out = tmp_path / "matrix"
    assert cm.main([*paths, "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["client-matrix.json", "client-matrix.md"]
    doc = json.loads((out / "client-matrix.json").read_text())
    assert [s["source"] for s in doc["summaries"]] == paths
    bad = tmp_path / "summary-bad.json"
    bad.write_text(json.dumps({"client": "java", "rules": {"PLS-ACK-001": "MAYBE"}}))
    assert cm.main([paths[0], str(bad), "--out", str(out)]) == 2
    assert f"{bad}: field 'rules.PLS-ACK-001' has unknown verdict 'MAYBE'" in capsys.readouterr().err
    (tmp_path / "broken.json").write_text("{")
    assert cm.main([str(tmp_path / "broken.json"), "--out", str(out)]) == 2
    assert "broken.json: not JSON" in capsys.readouterr().err


def test_a_row_failing_only_by_a_known_deviation_is_violet_not_a_failure():
    from reports.client_matrix import build, to_html, to_json

    kd = {"x#KD-009": {"id": "KD-009", "case": "delay-deliver-at", "rule": "PLS-DELAY-001"}}
    docs = [{"client": "python", "rules": {"PLS-DELAY-001": "FAIL", "PLS-NP-004": "PASS"}, "known_deviations": kd},
            {"client": "java", "rules": {"PLS-DELAY-001": "FAIL"}, "known_deviations": {}}]
    m = build(docs)
    row = m.row("Producer \u203a Delayed message delivery")
    assert row.cell("python").verdict == "FAIL" and row.cell("python").deviations == ("KD-009",)
    assert row.cell("java").deviations == ()  # an unexcused FAIL stays a failure
    html = to_html(m)
    py = html.split('data-row="Producer \u203a Delayed message delivery" data-client="python"')[0].rsplit("<td", 1)[1]
    java = html.split('data-row="Producer \u203a Delayed message delivery" data-client="java"')[0].rsplit("<td", 1)[1]
    assert " kd" in py and 'data-known-deviation="KD-009"' in py and " kd" not in java
    assert to_json(m)["rows"][[r["name"] for r in to_json(m)["rows"]].index(row.feature.name)]["cells"]["python"]["known_deviations"] == ["KD-009"]
