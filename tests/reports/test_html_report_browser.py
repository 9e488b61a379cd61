"""The HTML report rendered by a real headless Chromium: what a person would see.

Chromium renders the page (``--dump-dom`` gives the DOM after scripts ran), with the network
pointed at a dead proxy so any external resource would fail to load; the test asserts on the
matrix cells and their four marks, the coverage figure, a failing rule's section with its
sequence diagram, and writes screenshots for people to ``out/report-screenshots/``.

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
SCREENSHOTS = REPO / "out" / "report-screenshots"
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
    assert 0 < int(cov["data-exercised"]) <= int(cov["data-of"])
    assert f"Rules exercised: {cov['data-exercised']} of {cov['data-of']}" in dom.text["coverage"]


def test_a_failing_rule_has_a_section_with_a_sequence_diagram(rendered):
    dom, path, manifest, html = rendered
    sections = dom.find("section", class_="rule-section")
    assert sections
    failing_cells = {c["data-rule"] for c in dom.find("td", data_verdict="FAIL") if not c["data-combo"].startswith("model|")}
    assert {s["data-rule"] for s in sections} == failing_cells
    first = sections[0]["data-rule"]
    text = dom.text[f"rule-{first}"]
    assert "Minimal witness" in text and "FAIL" in text
    assert dom.find("svg", class_="seq-diagram")
    lifelines = {a["data-lifeline"] for a in dom.find("rect", class_="lifeline-head")}
    assert "broker" in lifelines and len(lifelines) >= 2
    assert dom.find("rect", class_="failing-step")
    assert dom.find("svg", class_="trend-plot")


def test_screenshots_for_people(rendered, tmp_path_factory):
    dom, path, _, _ = rendered
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    first = dom.find("section", class_="rule-section")[0]["data-rule"]
    top = SCREENSHOTS / "report-top.png"
    result = _run(["--window-size=1400,2200", f"--screenshot={top}", (path / "index.html").as_uri()],
                  tmp_path_factory.mktemp("chromium-profile"))  # a new empty profile per start
    assert result.returncode == 0 and top.stat().st_size > 50_000, result.stderr[-2000:]
    rule = SCREENSHOTS / "report-failing-rule.png"
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


def test_three_clients_split_the_matrix_and_show_the_client_feature_matrix(rendered_clients, tmp_path_factory):
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
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOTS / "report-client-matrix.png"
    result = _run(["--window-size=1400,2000", f"--screenshot={shot}", (path / "index.html").as_uri() + "#focus=client-matrix"],
                  tmp_path_factory.mktemp("chromium-profile"))
    assert result.returncode == 0 and shot.stat().st_size > 20_000, result.stderr[-2000:]
