"""The client dimension of the corpus report: a corpus with rows for python, java and mixed
(cross-client) traces gives one xunit2 suite per client, an HTML matrix and coverage split by
client, a summary per client, and the client x feature matrix (from the corpus, or from the
run's summary.json files given with ``--summary``)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

from reference_model.rules import active_rules
from spark_reports.samples import EXPECTED, sample_summaries

CLIENTS = ("python", "java", "mixed")


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {k: v or "" for k, v in attrs}))

    def find(self, tag: str, **want: str) -> list[dict[str, str]]:
        want = {k.replace("_", "-"): v for k, v in want.items()}
        return [a for t, a in self.tags if t == tag and all(a.get(k) == v for k, v in want.items())]


def _page(out) -> tuple[_Tags, str]:
    text = (out / "index.html").read_text(encoding="utf-8")
    tags = _Tags()
    tags.feed(text)
    return tags, text


def test_the_report_folder_has_the_client_matrix(clients_report_dir):
    assert sorted(p.name for p in clients_report_dir.iterdir()) == [
        "client-matrix.json", "client-matrix.md", "data", "index.html", "junit.xml", "summary.json"]


def test_xunit2_has_a_suite_per_client_and_mixed_is_judged_not_skipped(clients_report_dir):
    root = ET.parse(clients_report_dir / "junit.xml").getroot()
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {f"pulsar-conformance[embedded 4.0.8 {c}]" for c in CLIENTS} | \
        {f"pulsar-conformance[model 4.0 {k}]" for k in ("cpp", "java", "mixed")}
    rules = [r.id for r in active_rules()]

    def case(client: str, rule: str) -> ET.Element:
        suite = suites[f"pulsar-conformance[embedded 4.0.8 {client}]"]
        assert {p.get("name"): p.get("value") for p in suite.find("properties")}["client"] == client
        (c,) = [c for c in suite.findall("testcase") if c.get("name") == rule]
        assert c.get("classname") == f"pulsar-conformance.embedded.4_0_8.{client}"
        return c

    for s in suites.values():
        assert [c.get("name") for c in s.findall("testcase")] == rules
    # a cross-client FAIL carries its witness, with the model's prediction from the model's "mixed" rows
    failure = case("mixed", "PLS-ACK-003").find("failure")
    assert failure is not None and "cross-cumulative-ack-shared" in failure.get("message")
    assert "Witness:" in failure.text
    assert "(model: rejected CumulativeAcknowledgementNotAllowedError)" in failure.text
    # the Java client's FAIL too
    failure = case("java", "PLS-SEEK-002").find("failure")
    assert failure is not None and "Witness:" in failure.text and "(model: ok m3" in failure.text
    # a rule of either client applies to a mixed trace: judged where judged, else not exercised, never N/A
    assert case("mixed", "PLS-MSG-001").find("skipped") is None and case("mixed", "PLS-MSG-001").find("failure") is None
    assert case("mixed", "PLS-NACK-004").find("skipped").get("message").startswith("NOT_EXERCISED")
    assert case("mixed", "PLS-NACK-001").find("skipped").get("message").startswith("NOT_EXERCISED")
    # a single client's rules stay N/A for the other client
    assert case("python", "PLS-NACK-004").find("skipped").get("message").startswith("NOT_APPLICABLE")
    assert case("java", "PLS-NACK-001").find("skipped").get("message").startswith("NOT_APPLICABLE")
    assert root.get("failures") == "2"


def test_summary_json_is_split_by_client(clients_report_dir):
    summary = json.loads((clients_report_dir / "summary.json").read_text())
    assert summary["client"] == "java,mixed,python"
    assert set(summary["by_client"]) == set(CLIENTS)
    for client, rule in EXPECTED["fail"]:
        assert summary["by_client"][client]["rules"][rule] == "FAIL"
    for client, rule in EXPECTED["pass"]:
        assert summary["by_client"][client]["rules"][rule] == "PASS"
    assert summary["by_client"]["mixed"]["broker_versions"] == ["4.0.8"]
    # every Apache rule may apply to a mixed trace; a vendor's rules (PLS-TAG-001: tdmq) do not under the apache profile
    vendor_only = {r.id for r in active_rules() if "apache" not in r.applies_to.vendors}
    assert vendor_only and all(summary["by_client"]["mixed"]["rules"][r] == "NOT_APPLICABLE" for r in vendor_only)
    assert "NOT_APPLICABLE" not in [v for r, v in summary["by_client"]["mixed"]["rules"].items() if r not in vendor_only]


def test_html_matrix_and_coverage_split_by_client(clients_report_dir):
    tags, text = _page(clients_report_dir)
    groups = [a["data-client-group"] for a in tags.find("th") if "data-client-group" in a]
    assert groups == ["model", "python", "java", "mixed"]
    combos = [a["data-client"] for a in tags.find("th") if "data-combo" in a]
    assert combos[3:] == ["python", "java", "mixed"]  # broker columns grouped by client, after the model's
    per = {a["data-client"]: a for a in tags.find("li") if "data-exercised" in a}
    assert set(per) == set(CLIENTS)
    assert per["mixed"]["data-failing"] == "1" and per["python"]["data-failing"] == "0"
    apache_rules = [r for r in active_rules() if "apache" in r.applies_to.vendors]
    assert int(per["mixed"]["data-applicable"]) == len(apache_rules)  # every Apache rule may apply to a mixed trace
    assert int(per["python"]["data-applicable"]) < len(active_rules())
    assert int(per["java"]["data-exercised"]) == len({r for c, r in EXPECTED["pass"] | EXPECTED["fail"] if c == "java"})
    cell = tags.find("td", data_rule="PLS-ACK-003", data_combo="embedded|4.0.8|mixed")
    assert cell and cell[0]["data-verdict"] == "FAIL"


def test_html_embeds_the_client_feature_matrix(clients_report_dir):
    tags, text = _page(clients_report_dir)
    assert tags.find("section", id="client-matrix") and 'href="#client-matrix"' in text
    heads = [a["data-client"] for a in tags.find("th", **{"class": "client"})]
    assert heads == list(CLIENTS)
    dlq = {a["data-client"]: a for a in tags.find("td", data_row="Consumer \u203a Dead letter topic")}
    assert dlq["python"]["data-row-verdict"] == "PASS" and dlq["python"]["data-claim"] == "not supported"
    assert dlq["python"]["data-disagreement"] == "claims-unsupported-but-passed"
    assert dlq["java"]["data-row-verdict"] == "NOT_EXERCISED" and dlq["mixed"]["data-claim"] == "unknown"
    seek = {a["data-client"]: a for a in tags.find("td", data_row="Consumer \u203a Seek \u203a by timestamp")}
    assert seek["java"]["data-row-verdict"] == "FAIL"
    tls = {a["data-client"]: a for a in tags.find("td", data_row="Client \u203a TLS encryption")}
    assert {a["data-row-verdict"] for a in tls.values()} == {"NOT_COVERED"}
    doc = json.loads((clients_report_dir / "client-matrix.json").read_text())
    assert doc["clients"] == list(CLIENTS)
    assert {s["source"] for s in doc["summaries"]} == {f"corpus: embedded 4.0.8 / {c}" for c in CLIENTS}


def test_the_client_matrix_from_the_runs_summaries(spark, clients_corpus, tmp_path, capsys):
    from spark_reports.jobs import report

    paths = []
    for doc in sample_summaries():
        p = tmp_path / f"summary-{doc['client']}.json"
        p.write_text(json.dumps(doc))
        paths.append(p)
    out = tmp_path / "report"
    args = ["--outcomes", str(clients_corpus), "--out", str(out), "--quiet"]
    assert report.main([*args, *[a for p in paths for a in ("--summary", str(p))]]) == 0
    doc = json.loads((out / "client-matrix.json").read_text())
    assert [s["source"] for s in doc["summaries"]] == [str(p) for p in paths]
    rows = {r["name"]: r for r in doc["rows"]}
    assert rows["Consumer \u203a ACK \u203a NACK Backoff"]["cells"]["java"]["verdict"] == "PASS"
    assert rows["Consumer \u203a ACK \u203a Batch-Index ACK"]["cells"]["python"]["disagreement"] == "claims-unsupported-but-passed"
    assert "Verdicts: the run&#x27;s summary.json documents." in (out / "index.html").read_text()
    # a bad summary is refused before Spark runs, naming the file and field; --out is left alone
    bad = tmp_path / "summary-bad.json"
    bad.write_text(json.dumps({"client": "mixed", "rules": {"PLS-ACK-003": "BROKEN"}}))
    before = sorted(p.name for p in out.iterdir())
    assert report.main([*args, "--summary", str(bad)]) == 2
    assert f"{bad}: field 'rules.PLS-ACK-003' has unknown verdict 'BROKEN'" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == before
