"""The HTML report rendered by a real headless Chromium: what a person would see.

Chromium renders the page (``--dump-dom`` gives the DOM after scripts ran), with the network
pointed at a dead proxy so any external resource would fail to load; the test asserts on the
matrix cells and their four marks, the coverage figure, a failing rule's section with its
sequence diagram, and writes screenshots for people (``$REPORT_SCREENSHOTS``, else a temporary folder).

Needs Debian's chromium (``apt-get install -y chromium``); without it the test fails saying so
(CI must not skip it).
"""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def screenshots(tmp_path_factory):
    """Where the screenshots for people go: $REPORT_SCREENSHOTS when set, else a temporary folder
    (a test never writes into the source tree)."""
    import os

    folder = Path(os.environ["REPORT_SCREENSHOTS"]) if os.environ.get("REPORT_SCREENSHOTS") else tmp_path_factory.mktemp("shots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("no chromium on PATH: install it with `apt-get update && apt-get install -y chromium`")


def _run(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    profile.mkdir(parents=True, exist_ok=True)
    return subprocess.run([_chromium(), *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=120)


class _Dom(HTMLParser):
    """The elements we assert on: every tag with its attributes, and the text of a few ids."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str]]] = []
        self.text: dict[str, str] = {}
        self._open: list[tuple[str, str | None]] = []

    _VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}

    def handle_starttag(self, tag, attrs):
        a = {k: v or "" for k, v in attrs}
        self.elements.append((tag, a))
        if tag not in self._VOID:
            self._open.append((tag, a.get("id")))

    def handle_startendtag(self, tag, attrs):  # <rect/>: opened and closed at once
        self.elements.append((tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag):
        for i in range(len(self._open) - 1, -1, -1):
            if self._open[i][0] == tag:
                del self._open[i:]
                break

    def handle_data(self, data):
        for _, ident in self._open:
            if ident:
                self.text[ident] = self.text.get(ident, "") + data

    def find(self, tag=None, **attrs):
        want = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}  # class_ -> class, data_x -> data-x
        return [a for t, a in self.elements if (tag is None or t == tag)
                and all(a.get(k) == v if v is not True else k in a for k, v in want.items())]


@pytest.fixture(scope="module")
def rendered(report_dir, tmp_path_factory):
    path, manifest = report_dir
    index = path / "index.html"
    result = _run(["--virtual-time-budget=5000", "--dump-dom", index.as_uri()], tmp_path_factory.mktemp("chromium-profile"))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "<table" in result.stdout, "chromium produced no DOM"
    dom = _Dom()
    dom.feed(result.stdout)
    return dom, path, manifest, result.stdout


def test_the_page_is_self_contained(rendered):
    dom, path, _, _ = rendered
    source = (path / "index.html").read_text()
    assert not dom.find("link") and not any(a.get("src") for _, a in dom.elements)
    assert "https://" not in source and "http://" not in source.replace('xmlns="http://www.w3.org/2000/svg"', "")


def test_the_matrix_has_a_cell_per_rule_and_combo_with_four_marks(rendered):
    from reference_model.rules import active_rules

    dom, path, manifest, _ = rendered
    cells = dom.find("td", data_verdict=True)
    combos = dom.find("th", data_combo=True)
    assert len(combos) == 14
    assert len(cells) == len(active_rules()) * len(combos)
    verdicts = {c["data-verdict"] for c in cells}
    assert {"PASS", "FAIL", "NOT_APPLICABLE", "NOT_EXERCISED"} <= verdicts
    classes = {c["data-verdict"]: c["class"] for c in cells}
    assert len({classes[v] for v in ("PASS", "FAIL", "NOT_APPLICABLE", "NOT_EXERCISED")}) == 4  # four distinct marks
    legend = {a["data-mark"] for a in dom.find("span", data_mark=True)}
    assert {"PASS", "FAIL", "NOT_APPLICABLE", "NOT_EXERCISED"} <= legend
    # the persistent injected bug is a FAIL cell on its version/client, linking to its rule section
    p = manifest["persistent"][0]
    combo = f"embedded|{p['broker_version']}|{p['client']}"
    fails = [c for c in cells if c["data-combo"] == combo and c["data-verdict"] == "FAIL"]
    assert fails
    # a C++/Python-only rule is not applicable to the Java client
    nack = [c for c in cells if c["data-rule"] == "PLS-NACK-001" and c["data-combo"] == "embedded|4.0.8|java"]
    assert nack and nack[0]["data-verdict"] == "NOT_APPLICABLE"


def test_coverage_figure_is_shown(rendered):
    from reference_model.rules import active_rules

    dom, *_ = rendered
    (cov,) = dom.find("p", id="coverage")
    assert int(cov["data-of"]) == len(active_rules())
    assert 0 < int(cov["data-exercised"]) <= int(cov["data-applicable"]) <= int(cov["data-of"])
    assert f"Rules exercised: {cov['data-exercised']} of {cov['data-applicable']} applicable" in dom.text["coverage"]


def test_a_failing_rule_has_a_section_with_a_sequence_diagram(rendered):
    dom, path, manifest, html = rendered
    # a rule whose broker FAILs are all known deviations has its section too, classed "rule-section kd"
    sections = [a for t, a in dom.elements if t == "section" and "rule-section" in a.get("class", "").split()]
    assert sections
    failing = [c for c in dom.find("td", data_verdict="FAIL") if not c["data-combo"].startswith("model|")]
    assert {s["data-rule"] for s in sections} == {c["data-rule"] for c in failing}
    for s in sections:
        cells = [c for c in failing if c["data-rule"] == s["data-rule"]]
        assert (s["data-known-only"] == "true") == all("data-known-deviation" in c for c in cells), s["data-rule"]
    first = sections[0]["data-rule"]
    text = dom.text[f"rule-{first}"]
    assert "Minimal witness" in text and "FAIL" in text
    assert dom.find("svg", class_="seq-diagram")
    lifelines = {a["data-lifeline"] for a in dom.find("rect", class_="lifeline-head")}
    assert "broker" in lifelines and len(lifelines) >= 2
    assert dom.find("rect", class_="failing-step")
    assert dom.find("svg", class_="trend-plot")


def test_screenshots_for_people(rendered, tmp_path_factory, screenshots):
    dom, path, _, _ = rendered
    first = dom.find("section", class_="rule-section")[0]["data-rule"]
    top = screenshots / "report-top.png"
    result = _run(["--window-size=1400,2200", f"--screenshot={top}", (path / "index.html").as_uri()],
                  tmp_path_factory.mktemp("chromium-profile"))  # a new empty profile per start
    assert result.returncode == 0 and top.stat().st_size > 50_000, result.stderr[-2000:]
    rule = screenshots / "report-failing-rule.png"
    result = _run(["--window-size=1400,1400", f"--screenshot={rule}", (path / "index.html").as_uri() + f"#focus=rule-{first}"],
                  tmp_path_factory.mktemp("chromium-profile"))
    assert result.returncode == 0 and rule.stat().st_size > 20_000, result.stderr[-2000:]
    assert top.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# --------------------------------------------------------------------------- three clients


@pytest.fixture(scope="module")
def rendered_clients(clients_report_dir, tmp_path_factory):
    index = clients_report_dir / "index.html"
    result = _run(["--virtual-time-budget=5000", "--dump-dom", index.as_uri()], tmp_path_factory.mktemp("chromium-profile"))
    assert result.returncode == 0, result.stderr[-2000:]
    dom = _Dom()
    dom.feed(result.stdout)
    return dom, clients_report_dir


def test_three_clients_split_the_matrix_and_show_the_client_feature_matrix(rendered_clients, tmp_path_factory, screenshots):
    dom, path = rendered_clients
    groups = [a["data-client-group"] for a in dom.find("th", data_client_group=True)]
    assert groups == ["model", "python", "java", "mixed"]
    assert {a["data-client"] for a in dom.find("li", data_exercised=True)} == {"python", "java", "mixed"}
    (section,) = dom.find("section", id="client-matrix")
    text = dom.text["client-matrix"]
    assert "Client x feature matrix" in text and "Dead letter topic" in text and "NACK Backoff" in text
    marks = {(a["data-row"], a["data-client"]): a for a in dom.find("td", data_row=True)}
    assert marks[("Consumer \u203a ACK \u203a NACK Backoff", "java")]["data-row-verdict"] == "PASS"
    assert marks[("Consumer \u203a ACK \u203a NACK Backoff", "python")]["data-row-verdict"] == "NOT_APPLICABLE"
    assert marks[("Consumer \u203a Seek \u203a by timestamp", "java")]["data-row-verdict"] == "FAIL"
    # unsupported, failing and disagreeing cells look different from each other
    classes = {v: marks[k]["class"] for k, v in (
        (("Consumer \u203a ACK \u203a NACK Backoff", "python"), "n/a"), (("Consumer \u203a Seek \u203a by timestamp", "java"), "fail"),
        (("Consumer \u203a Dead letter topic", "python"), "disagree"), (("Client \u203a TLS encryption", "java"), "uncovered"))}
    assert len(set(classes.values())) == 4, classes
    assert "cm-disagree" in classes["disagree"]
    shot = screenshots / "report-client-matrix.png"
    result = _run(["--window-size=1400,2000", f"--screenshot={shot}", (path / "index.html").as_uri() + "#focus=client-matrix"],
                  tmp_path_factory.mktemp("chromium-profile"))
    assert result.returncode == 0 and shot.stat().st_size > 20_000, result.stderr[-2000:]


# --------------------------------------------------------------------------- a run's report


RUN_CLIENTS = {"cpp": "python", "java": "java", "mixed": "mixed"}  # model profile -> the client a live run names


def _live_copy(table, *, run_id: str | None = None, fail_backlog_step: int | None = None):
    """``table`` (model rows of ``run --target model``) as a conforming embedded 4.0.8 broker would
    have recorded them: same steps, observations and instants, target ``embedded``, the client that
    ran. With ``fail_backlog_step``, PLS-BACKLOG-001 FAILs there (wrong-backlog) on the python client:
    KD-001's symptom in its case."""
    import pyarrow as pa

    rows = table.to_pylist()
    for r in rows:
        r["target"], r["broker_version"], r["client"] = "embedded", "4.0.8", RUN_CLIENTS[r["client"]]
        if run_id is not None:
            r["run_id"] = run_id
        if (fail_backlog_step is not None and r["trace_id"] == "backlog-after-seek-individual-acks"
                and r["step"] == fail_backlog_step and r["client"] == "python"):
            r["verdict"], r["failed_rule_ids"], r["anomalies"] = "FAIL", ["PLS-BACKLOG-001"], ["wrong-backlog"]
            # what the broker said differs from the model's prediction: one divergent row, KD-001's
            r["observation"] = r["observation_key"] = '{"status": "ok", "value": {"msgBacklog": 1}}'
            r["explanation"] = "Let the backlog after the seek be 4. Then msgBacklog 1 is outside [4, 4]."
    return pa.Table.from_pylist(rows, schema=table.schema)


@pytest.fixture(scope="module")
def run_report(spark, tmp_path_factory):
    """A report over a corpus shaped like a live ``pulsar-conformance run``'s: the cases' run id with
    model and broker rows, a model fuzz budget and a live fuzz budget (their own run ids), one
    failure that is the known deviation KD-001, and the run's ``summary.json`` beside the corpus.
    Built from ``run --target model`` (seconds): its model rows, copied as a conforming 4.0.8 broker's."""
    import json
    import subprocess
    import sys

    import pyarrow.parquet as pq

    from spark_reports.jobs import report

    out = tmp_path_factory.mktemp("run-like") / "run"
    done = subprocess.run([sys.executable, "-m", "pulsar_conformance", "run", "--target", "model", "--out", str(out),
                           "--no-report", "--fuzz-examples", "1"], capture_output=True, text=True, timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    printed = done.stderr.strip().splitlines()[-1]
    corpus = out / "corpus"
    cases = [p for p in corpus.glob("part-*.parquet") if p.stem.split("-")[-1].isdigit() and p.stem.count("-") == 2]
    fuzz = sorted(set(corpus.glob("part-*.parquet")) - set(cases))
    assert cases and fuzz
    for i, part in enumerate(sorted(cases)):
        run_id = part.stem.split("-")[1]
        pq.write_table(_live_copy(pq.read_table(part), fail_backlog_step=23),
                       corpus / f"part-{run_id}-{900000 + i:06d}.parquet")
    live_fuzz = "f0f0f0f0f0f0"
    pq.write_table(_live_copy(pq.read_table(fuzz[0]), run_id=live_fuzz), corpus / f"part-{live_fuzz}-h-000.parquet")
    for part in corpus.glob("part-*.parquet"):  # the copies keep the schema version tag
        assert pq.read_schema(part).metadata[b"pulsar_conformance_corpus_version"]
    # the run's summary.json as a live run writes it: KD-001 excused the python client's FAIL
    summary = json.loads((out / "summary.json").read_text())
    summary["target"], summary["broker_version"] = "embedded", "4.0.8"
    py = summary["by_client"]["python"]
    py["rules"]["PLS-BACKLOG-001"] = "FAIL"
    py["cases"]["backlog-after-seek-individual-acks"] = "FAIL"
    py["known_deviations"] = {"backlog-after-seek-individual-acks#KD-001": {
        "id": "KD-001", "case": "backlog-after-seek-individual-acks", "rule": "PLS-BACKLOG-001",
        "reason": "After a seek back over individually acked messages, msgBacklog still subtracts those acks.",
        "evidence": "conformance/evidence/KD-001-backlog-after-seek-4.0.8.history.jsonl"}}
    kd = {"kind": "known-deviation", "label": "embedded", "client": "python", "rules": ["PLS-BACKLOG-001"],
          "cases": ["backlog-after-seek-individual-acks"], "deviations": ["KD-001"],
          "text": "PLS-BACKLOG-001 failed with the python client only as known deviation KD-001 "
                  "(cases backlog-after-seek-individual-acks)"}
    summary.update(overall="KNOWN_DEVIATIONS", exit_code=0, reasons=[kd])
    (out / "summary.json").write_text(json.dumps(summary))
    args = []
    for client, doc in summary["by_client"].items():  # as run passes them: one summary-<client>.json each
        own = json.loads((out / f"summary-{client}.json").read_text())
        own.update(doc, target="embedded", broker_version="4.0.8")
        (out / f"summary-{client}.json").write_text(json.dumps(own))
        args += ["--summary", str(out / f"summary-{client}.json")]
    assert report.main(["--outcomes", str(corpus), "--out", str(out / "report"), "--quiet", *args]) == 0
    return out, summary, printed


@pytest.fixture(scope="module")
def rendered_run(run_report, tmp_path_factory):
    out, summary, printed = run_report
    index = out / "report" / "index.html"
    result = _run(["--virtual-time-budget=5000", "--dump-dom", index.as_uri()], tmp_path_factory.mktemp("chromium-profile"))
    assert result.returncode == 0, result.stderr[-2000:]
    dom = _Dom()
    dom.feed(result.stdout)
    return dom, out, summary, printed


def test_a_runs_report_leads_with_its_answer(rendered_run, tmp_path_factory):
    from reports.headline import conformance_sentence

    dom, out, summary, printed = rendered_run
    (head,) = dom.find("section", id="headline")
    sentence = dom.text["headline-sentence"].strip()
    # the answer of the run: the known deviation is one, not a failure, and nothing is red
    assert sentence.startswith("broker 4.0.8 conforms to ")
    assert "(clients python, java, mixed); 0 failing; 1 known deviation (KD-001); 0 inconclusive;" in sentence
    assert head["class"] == "known" and head["data-overall"] == "KNOWN_DEVIATIONS" and head["data-exit-code"] == "0"
    assert head["data-failing"] == "0" and head["data-errored"] == "0"
    # the figures add up to the applicable rules
    figures = [int(x) for x in __import__("re").findall(r"(\d+) (?:failing|known deviation|inconclusive|not exercised)", sentence)]
    conforming, applicable = (int(x) for x in __import__("re").match(r"broker 4\.0\.8 conforms to (\d+) of (\d+)", sentence).groups())
    assert conforming + sum(figures) == applicable == int(head["data-applicable"])
    # the page says what `run` printed for the same summary (the model run printed the model's answer)
    assert sentence == conformance_sentence(summary)
    assert printed.startswith("PASS (exit 0): model 4.0 conforms to ") and "0 failing" in printed
    # KD-001's rule: headed as a known deviation, with its id and reason
    (section,) = dom.find("section", id="rule-PLS-BACKLOG-001")
    assert section["data-known-only"] == "true"
    text = dom.text["rule-PLS-BACKLOG-001"]
    assert "Known deviation KD-001" in text and "msgBacklog still subtracts" in text and "minimal trace" in text
    (cell,) = dom.find("td", data_rule="PLS-BACKLOG-001", data_combo="embedded|4.0.8|python")
    assert cell["data-verdict"] == "FAIL" and cell["data-known-deviation"] == "KD-001"


def test_a_runs_report_counts_one_run_and_fills_the_timing_section(rendered_run):
    from conformance.corpus import CORPUS_SCHEMA_VERSION

    dom, out, *_ = rendered_run
    # one invocation: its cases; the model's and the broker's fuzz budgets are not runs
    assert len(dom.find("div", data_card="runs")) == 1
    (trend_title,) = dom.find("text", data_runs=True)
    assert trend_title["data-runs"] == "1"
    html = (out / "report" / "index.html").read_text()
    assert '<div class="n">1</div><div class="muted">runs (invocations: a run&#x27;s cases share one run id); 2 fuzz budgets apart' in html
    # every timing family the cases judge has a row, judged on the broker
    rows = {a["data-timing-rule"] for a in dom.find("tr", data_timing_rule=True)}
    assert {"PLS-NACK-001", "PLS-NACK-004", "PLS-NACK-005", "PLS-ACKTIMEOUT-002", "PLS-DELAY-001"} <= rows
    judged = dom.find("span", data_combo="embedded|4.0.8|python", data_steps=True)
    assert judged and all(int(a["data-steps"]) > 0 for a in judged)
    assert "No redelivery judged" not in dom.text["timing"]
    assert dom.find("svg", class_="timing-plot")
    # the model's columns name the client that ran, not the C++ profile
    assert dom.find("th", class_="combo model")
    assert "model 4.0 (python client)" in html and "/ cpp" not in html
    assert f"schema v{CORPUS_SCHEMA_VERSION}" in dom.text.get("matrix", "")


def test_a_run_whose_every_case_errored_is_red(run_report, tmp_path_factory):
    import json

    from reports.html import write_html

    out, summary, _ = run_report
    data = json.loads((out / "report" / "data" / "report.json").read_text())
    matrix = data.pop("matrix")
    errored = json.loads(json.dumps(summary))
    for doc in errored["by_client"].values():
        doc["rules"] = {r: ("NOT_APPLICABLE" if v == "NOT_APPLICABLE" else "NOT_EXERCISED") for r, v in doc["rules"].items()}
        doc["cases"] = {c: "ERROR" for c in doc["cases"]}
        doc["known_deviations"] = {}
    cases = sum(len(doc["cases"]) for doc in errored["by_client"].values())
    errored.update(overall="ERROR", exit_code=4, reasons=[{"kind": "error", "text": f"{cases} cases ended ERROR"}])
    page = write_html(tmp_path_factory.mktemp("errored") / "index.html", data, matrix, summary=errored)
    result = _run(["--virtual-time-budget=5000", "--dump-dom", page.as_uri()], tmp_path_factory.mktemp("chromium-profile"))
    assert result.returncode == 0, result.stderr[-2000:]
    dom = _Dom()
    dom.feed(result.stdout)
    (head,) = dom.find("section", id="headline")
    assert head["class"] == "bad" and head["data-errored"] == str(cases) and head["data-judged"] == "0"
    sentence = dom.text["headline-sentence"]
    # (what the run did not follow, if anything, is said after it: "; N steps the model did not follow ...")
    assert "conforms" not in sentence and sentence.strip().split("; ")[0].endswith(f": {cases} cases errored")
    (card,) = dom.find("div", data_card="cases errored")
    assert "bad" in card["class"]


def test_screenshot_of_a_runs_headline(rendered_run, tmp_path_factory, screenshots):
    _, out, *_ = rendered_run
    shot = screenshots / "report-run-headline.png"
    result = _run(["--window-size=1400,1600", f"--screenshot={shot}", (out / "report" / "index.html").as_uri()],
                  tmp_path_factory.mktemp("chromium-profile"))
    assert result.returncode == 0 and shot.stat().st_size > 20_000, result.stderr[-2000:]

    # a known-deviations-only run: the banner is violet (--kd: #5b3f9e on #efe9fb), neither green nor red
    pixels = _png_pixels(shot)
    violet = sum(1 for p in pixels if _near(p, (0x5b, 0x3f, 0x9e)))
    violet_bg = sum(1 for p in pixels if _near(p, (0xef, 0xe9, 0xfb)))
    red = sum(1 for p in pixels if _near(p, (0xb3, 0x26, 0x1e)) or _near(p, (0xfd, 0xe7, 0xe4)))
    green_bg = sum(1 for p in pixels if _near(p, (0xe5, 0xf4, 0xe8)))
    assert violet > 100 and violet_bg > 20_000, (violet, violet_bg)
    assert red < violet and green_bg < violet_bg, (red, green_bg, violet, violet_bg)


def _near(p, want, tol=6):
    return all(abs(a - b) <= tol for a, b in zip(p, want))


def _png_pixels(path):
    """The RGB pixels of a PNG Chromium wrote (8-bit RGB or RGBA, non-interlaced), standard library only."""
    import struct
    import zlib

    data = Path(path).read_bytes()
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and color in (2, 6), (depth, color)
            bpp = 3 if color == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, out, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.extend(tuple(line[i:i + 3]) for i in range(0, stride, bpp * 4))  # every 4th pixel is enough
        prev = line
    return out


def _expected_figures(summary):
    """The figures summary.json says, worked out here from its verdicts (not by reports.headline):
    per client and over all clients, the applicable, not exercised, failing and known-deviation rules."""
    def fold(docs):
        rules = {r for d in docs.values() for r in d["rules"]}
        out = {"applicable": set(), "not_exercised": set(), "failing": set(), "known": set()}
        for r in rules:
            seen = {c: d["rules"][r] for c, d in docs.items() if d["rules"].get(r, "NOT_APPLICABLE") != "NOT_APPLICABLE"}
            if not seen:
                continue
            out["applicable"].add(r)
            excused = {c for c, d in docs.items() for k in (d.get("known_deviations") or {}).values() if k["rule"] == r}
            fails = {c for c, v in seen.items() if v == "FAIL"}
            if fails - excused:
                out["failing"].add(r)
            elif fails:
                out["known"].add(r)
            elif all(v in ("NOT_EXERCISED", "UNJUDGED") for v in seen.values()) and not any(
                    r in (docs[c].get("meant_to_judge") or ()) for c in seen):
                out["not_exercised"].add(r)
        return out

    return fold(summary["by_client"]), {c: fold({c: d}) for c, d in summary["by_client"].items()}


def test_every_figure_of_a_runs_page_reconciles_with_its_summary_json(rendered_run):
    import json
    import re

    dom, out, _, _ = rendered_run
    summary = json.loads((out / "summary.json").read_text())
    total, per_client = _expected_figures(summary)
    applicable, not_exercised = len(total["applicable"]), len(total["not_exercised"])
    exercised = applicable - not_exercised
    # the headline sentence
    sentence = dom.text["headline-sentence"].strip()
    m = re.match(r"broker 4\.0\.8 conforms to (\d+) of (\d+) applicable rules .*?; (\d+) failing; (\d+) known deviations?"
                 r"(?: \(([^)]*)\))?; (\d+) inconclusive; (\d+) not exercised", sentence)
    assert m, sentence
    conforming, app, failing, known, kd_ids, inconclusive, nx = m.groups()
    assert (int(app), int(failing), int(known), int(nx)) == (applicable, len(total["failing"]), len(total["known"]), not_exercised)
    assert int(conforming) + int(failing) + int(known) + int(inconclusive) + int(nx) == applicable
    assert kd_ids == "KD-001"
    # the overview: coverage line and cards say the same numbers
    (cov,) = dom.find("p", id="coverage")
    assert (int(cov["data-exercised"]), int(cov["data-applicable"]), int(cov["data-not-exercised"])) == (exercised, applicable, not_exercised)
    assert f"Rules exercised: {exercised} of {applicable} applicable" in dom.text["coverage"]
    html = (out / "report" / "index.html").read_text()

    def card(name):
        found = re.search(r'<div class="card( [a-z]+)?" data-card="' + re.escape(name) + r'"><div class="n">([^<]*)</div>', html)
        assert found, name
        return (found.group(1) or "").strip(), found.group(2)

    assert card("rules exercised") == ("", f"{exercised} of {applicable}")
    assert card("failing rules") == ("", "0")
    assert card("rules failing only by a known deviation") == ("known", "1")
    errored = sum(1 for d in summary["by_client"].values() for s in d["cases"].values() if s == "ERROR")
    assert card("cases errored") == ("", str(errored))
    # the divergent rows: KD-001's one row is explained, none is left red
    assert card("broker rows explained by known deviations") == ("known", "1")
    assert "broker rows explained by known deviations (KD-001)" in html
    assert card("broker rows the model does not allow") == ("", "0")
    # by client: the same definitions, client by client; a known deviation is never listed as failing
    items = {a["data-client"]: a for a in dom.find("li", data_exercised=True)}
    assert set(items) == set(summary["by_client"])
    for client, fig in per_client.items():
        a = items[client]
        assert int(a["data-applicable"]) == len(fig["applicable"]), client
        assert int(a["data-exercised"]) == len(fig["applicable"]) - len(fig["not_exercised"]), client
        assert int(a["data-failing"]) == len(fig["failing"]) and int(a["data-known-deviations"]) == len(fig["known"]), client
    listed = dom.text["coverage-by-client"]
    assert re.search(r"python: rules exercised \d+ of \d+ that apply to it \(\d+ active\); failing: none; known deviations: "
                     r"PLS-BACKLOG-001 \(KD-001\)", listed), listed
    # the rule matrix: the run's broker columns fail exactly the failing rules; KD-001's cell is violet
    for client in summary["by_client"]:
        cells = dom.find("td", data_combo=f"embedded|4.0.8|{client}", data_verdict="FAIL")
        assert {c["data-rule"] for c in cells if "kd" not in c["class"].split()} == per_client[client]["failing"]
    (cell,) = dom.find("td", data_rule="PLS-BACKLOG-001", data_combo="embedded|4.0.8|python")
    assert "kd" in cell["class"].split()
    # the client x feature matrix: a row failing only by KD-001 is violet, not a red cross
    # (PLS-BACKLOG-001 is behind no feature row: test_client_matrix checks a covered one)
    assert all("kd" in a["class"].split() for a in dom.find("td", data_client="python", data_row_verdict="FAIL"))
    # one model column per release and client
    models = [a["data-combo"] for a in dom.find("th", class_="combo model")]
    assert len(models) == len(set(m.split("|")[2] for m in models)), models
