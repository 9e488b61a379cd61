"""A static, self-contained HTML report over an outcome corpus: one file, no network.

Everything is inline: CSS, a few lines of JS (a "failing rules only" filter), and every figure
as SVG drawn here (no plotting library). Sections:

0. the one-line answer (``reports.headline``): from the run's ``summary.json`` when the report has
   it (``summary=``; ``write_html`` also finds the one ``pulsar-conformance run`` writes beside its
   corpus), else from the corpus's rule matrix (which cannot count errored cases);
1. the headline figures, with rule coverage ("Rules exercised: N of M"), cases errored, and runs
   counted as invocations (a run's case run id), fuzz budgets apart;
2. the rule x target/version/client matrix with distinct marks: PASS, FAIL, NOT_APPLICABLE
   (the rule does not speak about that client/version: ``reference_model.rules`` ``applies_to``),
   NOT_EXERCISED (nothing judged it), and INDETERMINATE where that occurs; with more than one
   client (python, java, mixed), its columns and the coverage figure are split by client;
2b. the client x feature matrix (``reports/client_matrix.py``), when the caller gives one: the
   rows of Pulsar's client feature matrix, its claims, our verdicts per client, disagreements;
3. one section per failing rule: the rule, where it fails, the minimal witness (shortest failing
   trace) drawn as a sequence diagram with lifelines for the trace's producers, consumers and
   readers and the broker, the checker's explanation, and the witness as a listing;
4. timing: every timing rule judged on a broker (``TIMING_RULES``: nack redelivery, negative-ack
   backoff, ack timeout, redelivery on request, delayed delivery) with its judged and failed steps,
   and, where the corpus pairs a redelivery with the model's, the broker's instant minus the
   model's against the band the checker's live tolerances allow;
5. trends: the share of failing trace instances per run (invocations in run-id order; fuzz
   budgets, which have their own run ids, are not runs);
6. divergences: model vs broker diff counts, version-vs-version changes, flaky traces.

Choices: colour is never the only carrier of a verdict (each mark has its own glyph and text);
the page is readable printed or without JS.
"""

from __future__ import annotations

from fixtures.secrets import redact


import math
import re
import zlib
from pathlib import Path
from typing import Any, Iterable, Mapping

from conformance.corpus import CORPUS_SCHEMA_VERSION
from reports.client_matrix import CLIENT_ORDER, to_html as client_matrix_html
from reports.headline import Headline, corpus_headline, headlines_by_client, summary_headline
from reports.marks import MARKS, esc
from reports.xunit2 import MODEL, model_events, ms, observation_text, witness_events, witness_listing

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")

CSS = """
:root { --fail:#b3261e; --fail-bg:#fde7e4; --pass:#1e7b34; --pass-bg:#e5f4e8; --na:#5f6368; --indet:#8a5a00; --indet-bg:#fff1cc;
  --kd:#5b3f9e; --kd-bg:#efe9fb; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1f1f1f; background: #fafafa; }
header { background: #263238; color: #fff; padding: 18px 28px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
header .sub { opacity: .8; font-size: 13px; }
main { padding: 8px 28px 40px; max-width: 1500px; }
section { background: #fff; border: 1px solid #e0e0e0; border-radius: 6px; padding: 14px 18px; margin: 16px 0; }
h2 { font-size: 18px; margin: 0 0 10px; }
h3 { font-size: 15px; margin: 14px 0 6px; }
.cards { display: flex; flex-wrap: wrap; gap: 12px; }
.card { border: 1px solid #e0e0e0; border-radius: 6px; padding: 8px 14px; min-width: 150px; background: #fff; }
.card .n { font-size: 22px; font-weight: 600; }
.card.bad .n { color: var(--fail); }
table { border-collapse: collapse; }
th, td { border: 1px solid #e3e3e3; padding: 3px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; font-weight: 600; }
table.matrix th.combo { writing-mode: vertical-rl; transform: rotate(180deg); white-space: nowrap; font-size: 12px; padding: 6px 2px; }
table.matrix th.combo.model { background: #eef3f8; }
table.matrix td.rule { white-space: nowrap; font-family: ui-monospace, monospace; font-size: 12px; }
table.matrix td.title { font-size: 12px; max-width: 420px; }
td.cell { text-align: center; font-weight: 700; width: 34px; font-size: 13px; }
.m-pass { color: var(--pass); background: var(--pass-bg); }
.m-fail { color: #fff; background: var(--fail); }
.m-fail a { color: #fff; text-decoration: none; display: block; }
.m-na { color: var(--na); background: repeating-linear-gradient(45deg, #f1f1f1, #f1f1f1 4px, #e2e2e2 4px, #e2e2e2 8px); font-weight: 500; font-size: 11px; }
.m-nx { color: #9e9e9e; background: #fff; outline: 1px dashed #bdbdbd; outline-offset: -4px; }
.m-indet { color: var(--indet); background: var(--indet-bg); }
.legend span.mark { display: inline-block; min-width: 34px; text-align: center; padding: 2px 6px; margin-right: 4px; font-weight: 700; border-radius: 3px; }
.legend { display: flex; flex-wrap: wrap; gap: 16px; margin: 6px 0 10px; align-items: center; }
pre { background: #f6f8fa; border: 1px solid #e1e4e8; padding: 8px; overflow-x: auto; font-size: 12px; }
.explanation { border-left: 4px solid var(--fail); background: var(--fail-bg); padding: 8px 12px; margin: 8px 0; }
.quote { color: #555; font-style: italic; }
.muted { color: #666; font-size: 12px; }
#headline { border-left: 6px solid var(--pass); background: var(--pass-bg); }
#headline.bad { border-left-color: var(--fail); background: var(--fail-bg); }
#headline.unsure { border-left-color: var(--indet); background: var(--indet-bg); }
#headline.known { border-left-color: var(--kd); background: var(--kd-bg); }
#outcome-line { font-size: 15px; font-weight: 700; margin: 0 0 6px; }
#outcome-reasons li.known-deviation { color: var(--kd); }
.card.known .n { color: var(--kd); }
.card.unsure .n { color: var(--indet); }
#coverage-by-client .kd { color: var(--kd); }
#headline-sentence { font-size: 17px; font-weight: 600; margin: 0 0 4px; }
.kd-note { border-left: 4px solid var(--indet); background: var(--indet-bg); padding: 8px 12px; margin: 8px 0; }
.rule-section.kd { border-left-color: var(--indet); }
td.cell.kd, td.cell.m-fail.kd { color: #fff; background: var(--kd); outline: 3px solid var(--kd); outline-offset: -3px; }
.rule-section { border-left: 5px solid var(--fail); }
svg text { font-family: system-ui, sans-serif; }
.controls { margin: 4px 0 8px; }
body.only-failing table.matrix tr.no-fail { display: none; }
table.matrix th.client-group { text-align: center; font-size: 12px; border-bottom: 3px solid #263238; }
table.matrix th.client-group.model { background: #eef3f8; }
#coverage-by-client ul { margin: 4px 0; }
table.client-matrix td.title { font-size: 12px; white-space: nowrap; }
table.client-matrix td.rules { font-family: ui-monospace, monospace; font-size: 11px; max-width: 420px; }
table.client-matrix td.cell { width: auto; white-space: nowrap; }
table.release-matrix td.rm-cell { text-align: center; font-weight: 700; font-size: 13px; min-width: 48px; }
table.release-matrix td.rm-cell small { font-weight: 400; font-size: 10px; }
table.client-matrix tr.cm-section th { background: #eceff1; text-align: left; }
td.m-nc { color: #9e9e9e; background: #fff; font-weight: 400; font-size: 11px; }
td.cm-disagree { outline: 3px solid #8a5a00; outline-offset: -3px; }
.claim { font-weight: 400; }
.disagree { color: #8a5a00; }
td.m-fail .disagree { color: #fff; }
"""

JS = """
document.addEventListener('DOMContentLoaded', function () {
  var box = document.getElementById('only-failing');
  if (box) box.addEventListener('change', function () { document.body.classList.toggle('only-failing', box.checked); });
  // "#focus=<id>": show that section alone (a link to one failing rule, or a screenshot of it)
  if (location.hash.indexOf('#focus=') === 0) {
    var id = decodeURIComponent(location.hash.slice(7));
    var keep = document.getElementById(id);
    if (keep) {
      Array.prototype.forEach.call(document.querySelectorAll('main > section, main > h2'), function (el) {
        if (el !== keep) el.style.display = 'none';
      });
    }
  }
});
"""


def _key(target: Any, version: Any, client: Any) -> str:
    return f"{target}|{version}|{client}"


# The model's rows name the client *profile* they were judged under (``reference_model.profiles``):
# ``cpp`` for the Python client, which wraps the C++ one. The report names the client that ran.
MODEL_CLIENT_NAMES = {"cpp": "python"}


def model_client(client: Any) -> str:
    """The client a model column stands for: ``python`` for the ``cpp`` profile, else as recorded."""
    return MODEL_CLIENT_NAMES.get(str(client or ""), str(client or ""))


def _combo_label(c: Mapping[str, Any]) -> str:
    if c["target"] == MODEL:
        return f"model {c['broker_version']} ({model_client(c['client'])} client)"
    return f"{c['target']} {c['broker_version']} / {c['client']}"


# --------------------------------------------------------------------------- matrix


def broker_clients(data: Mapping[str, Any]) -> list[str]:
    """The clients of the broker combos, python, java, mixed first, then any other, sorted."""
    found = {c["client"] or "" for c in data["combos"] if c["target"] != MODEL}
    return [c for c in CLIENT_ORDER if c in found] + sorted(found - set(CLIENT_ORDER))


def _client_group(c: Mapping[str, Any]) -> str:
    return MODEL if c["target"] == MODEL else (c["client"] or "")


def ordered_combos(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The model's columns first (the reference), then the brokers' grouped by client (in
    ``broker_clients`` order); within a group, the corpus order (target, version)."""
    groups = [MODEL, *broker_clients(data)]
    return sorted(data["combos"], key=lambda c: groups.index(_client_group(c)))  # stable: keeps the rest


def matrix_section(data: Mapping[str, Any], matrix: Mapping[str, Any],
                   excused: Mapping[str, Mapping[str, Any]] | None = None) -> str:
    """The rule x combo matrix; a FAIL cell that a known deviation explains (``excused``: combo key ->
    rule id -> deviation ids) keeps its FAIL mark, outlined, with the deviation ids in its tooltip."""
    excused = excused or {}
    clients = broker_clients(data)
    split = len(clients) > 1
    combos = ordered_combos(data) if split else data["combos"]
    legend = "".join(
        f'<span><span class="mark {cls}" data-mark="{v}">{esc(glyph)}</span>{esc(label)}</span>'
        for v, (glyph, cls, label) in MARKS.items())
    head = "".join(
        f'<th class="combo{" model" if c["target"] == MODEL else ""}" data-combo="{esc(_key(c["target"], c["broker_version"], c["client"]))}" '
        f'data-client="{esc(c["client"])}">{esc(_combo_label(c))}</th>' for c in combos)
    group_head = ""
    if split:  # one header per client over its columns (the model's columns are the reference)
        spans: list[list[Any]] = []
        for c in combos:
            g = _client_group(c)
            if spans and spans[-1][0] == g:
                spans[-1][1] += 1
            else:
                spans.append([g, 1])
        group_head = '<tr><th colspan="2"></th>' + "".join(
            f'<th class="client-group{" model" if g == MODEL else ""}" data-client-group="{esc(g)}" colspan="{n}">'
            f'{"model (reference)" if g == MODEL else "client " + esc(g)}</th>' for g, n in spans) + "</tr>"
    rows = []
    failing = set(matrix["failing_rules"])
    for rule in matrix["rules"]:
        cells = []
        for c in combos:
            key = _key(c["target"], c["broker_version"], c["client"])
            v = matrix["matrix"][key][rule["id"]]
            glyph, cls, label = MARKS[v]
            counts = matrix["counts"].get(key, {}).get(rule["id"])
            tip = f"{rule['id']} on {_combo_label(c)}: {label}"
            if counts:
                tip += f" ({counts['rows']} judged steps, {counts['fail']} failed)"
            inner = esc(glyph)
            kd = list(excused.get(key, {}).get(rule["id"]) or ()) if v == "FAIL" else []
            if kd:
                tip += f"; known deviation {', '.join(kd)}"
            if v == "FAIL" and rule["id"] in failing:
                inner = f'<a href="#rule-{esc(rule["id"])}">{inner}</a>'
            kd_attr = f' data-known-deviation="{esc(",".join(kd))}"' if kd else ""
            cells.append(f'<td class="cell {cls}{" kd" if kd else ""}" data-rule="{esc(rule["id"])}" data-combo="{esc(key)}" '
                         f'data-verdict="{v}"{kd_attr} title="{esc(tip)}">{inner}</td>')
        cls = "" if rule["id"] in failing else ' class="no-fail"'
        rows.append(f'<tr{cls}><td class="rule">{esc(rule["id"])}</td><td class="title">{esc(rule["title"])}</td>{"".join(cells)}</tr>')
    return f"""
<section id="matrix"><h2>Rules x broker version / client</h2>{f'<p class="muted">Columns grouped by client: {esc(", ".join(clients))}.</p>' if split else ''}
<div class="legend" id="legend">{legend}</div>
<div class="controls"><label><input type="checkbox" id="only-failing"> show failing rules only</label>
<span class="muted"> Model columns (blue) are the reference: the model's own histories judged by the checker.
Each rule's cell is its own verdict at each step (corpus schema v{CORPUS_SCHEMA_VERSION}: failed_rule_ids, indeterminate_rule_ids).
A FAIL in violet is a known deviation (conformance/deviations.yaml), not a failure.</span></div>
<div style="overflow-x:auto"><table class="matrix" id="rule-matrix"><thead>{group_head}<tr><th>rule</th><th>title</th>{head}</tr></thead>
<tbody>{"".join(rows)}</tbody></table></div></section>"""


# --------------------------------------------------------------------------- sequence diagram


def sequence_diagram(events: list[Mapping[str, Any]], trace: Any = None, *, title: str = "") -> str:
    """An SVG sequence diagram of one trace instance: lifelines for the trace's handles and the broker."""
    ops = {o.step: o for o in trace.ops} if trace is not None else {}
    lanes: list[str] = []

    def lane_of(step: int) -> str:
        op = ops.get(step)
        if op is None:
            return "client"
        h = op.args.get("producer") or op.args.get("consumer") or op.args.get("reader") or op.args.get("handle")
        return str(h) if h else "admin / clock"

    for e in events:
        lane = lane_of(e["step"])
        if lane not in lanes:
            lanes.append(lane)
    lanes.append("broker")
    col_w, left, top, row_h = 150, 92, 56, 40
    width = left + col_w * len(lanes) + 300
    height = top + row_h * len(events) + 30
    x = {name: left + col_w * i + col_w // 2 for i, name in enumerate(lanes)}
    parts = [f'<svg class="seq-diagram" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="{esc(title or "sequence diagram")}">',
             '<defs><marker id="arr" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
             '<path d="M0,0 L8,4 L0,8 z" fill="#333"/></marker>'
             '<marker id="arrf" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
             '<path d="M0,0 L8,4 L0,8 z" fill="#b3261e"/></marker></defs>']
    for name in lanes:
        cx = x[name]
        fill = "#263238" if name == "broker" else "#eceff1"
        color = "#fff" if name == "broker" else "#263238"
        parts.append(f'<rect class="lifeline-head" data-lifeline="{esc(name)}" x="{cx - 55}" y="8" width="110" height="28" rx="4" fill="{fill}" stroke="#263238"/>')
        parts.append(f'<text x="{cx}" y="27" text-anchor="middle" font-size="13" fill="{color}">{esc(name)}</text>')
        parts.append(f'<line x1="{cx}" y1="36" x2="{cx}" y2="{height - 10}" stroke="#90a4ae" stroke-dasharray="4,4"/>')
    for i, e in enumerate(events):
        y = top + row_h * i
        failing = e["verdict"] == "FAIL"
        color = "#b3261e" if failing else "#333"
        marker = "arrf" if failing else "arr"
        src, dst = x[lane_of(e["step"])], x["broker"]
        op = ops.get(e["step"])
        label = e["op"]
        if op is not None:
            for k in ("payload", "message", "type", "ms"):
                if k in op.args:
                    label += f" {op.args[k]}"
                    break
        if failing:
            parts.append(f'<rect x="4" y="{y - 12}" width="{width - 8}" height="{row_h - 4}" fill="#fde7e4" class="failing-step" data-step="{e["step"]}"/>')
        parts.append(f'<text x="8" y="{y + 4}" font-size="11" fill="#555">{e["step"]}. t={ms(e["t_end_ms"])}ms</text>')
        parts.append(f'<line x1="{src}" y1="{y}" x2="{dst - 3}" y2="{y}" stroke="{color}" stroke-width="1.4" marker-end="url(#{marker})"/>')
        parts.append(f'<text x="{(src + dst) / 2}" y="{y - 4}" text-anchor="middle" font-size="11" fill="{color}">{esc(label)}</text>')
        reply = observation_text(e["observation"])
        reply = reply if len(reply) <= 44 else reply[:43] + "\u2026"
        parts.append(f'<line x1="{dst}" y1="{y + 14}" x2="{src + 3}" y2="{y + 14}" stroke="{color}" stroke-dasharray="3,3" marker-end="url(#{marker})"/>')
        parts.append(f'<text x="{(src + dst) / 2}" y="{y + 25}" text-anchor="middle" font-size="10" fill="{color}">{esc(reply)}</text>')
        if failing:
            note = "FAIL " + ", ".join(e.get("anomalies") or [])
            parts.append(f'<text x="{x["broker"] + 20}" y="{y + 8}" font-size="12" font-weight="700" fill="#b3261e">{esc(note)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def rule_sections(data: Mapping[str, Any], matrix: Mapping[str, Any], traces: Mapping[str, Any],
                  deviations: Mapping[str, list[Mapping[str, Any]]] | None = None, known_only: Iterable[str] = ()) -> str:
    """One section per rule that FAILs on a broker: its docs quote and source, where it fails, a link
    to and the drawing of its minimal witness. ``deviations`` (rule id -> the known deviations that
    explain its FAILs: ``id``, ``reason``, ``evidence``, ``where``) adds a note naming each;
    a rule in ``known_only`` fails only by them and is headed as a known deviation, not a failure."""
    deviations = deviations or {}
    known_only = set(known_only)
    rules = {r["id"]: r for r in matrix["rules"]}
    out = []
    by_rule: dict[str, list[Mapping[str, Any]]] = {}
    for w in data.get("witnesses", []):
        if w["target"] != MODEL:
            by_rule.setdefault(w["rule_id"], []).append(w)
    for rule_id in matrix["failing_rules"]:
        r = rules[rule_id]
        w = data["rule_witness"].get(rule_id)
        where = "".join(
            f'<tr><td>{esc(x["target"])}</td><td>{esc(x["broker_version"])}</td><td>{esc(x["client"])}</td>'
            f'<td>{x["failing_instances"]}</td><td>{esc(x["trace_id"])} ({x["length"]} steps, run {esc(x["run_id"])})</td></tr>'
            for x in sorted(by_rule.get(rule_id, []), key=lambda x: (x["broker_version"] or "", x["client"] or "")))
        body = ""
        if w is not None:
            events = witness_events(data, w)
            trace = traces.get(w["trace_id"])
            title = f"minimal witness of {rule_id}: {w['trace_id']} on {w['broker_version']} / {w['client']}"
            body = f"""
<h3 id="witness-{esc(rule_id)}">Minimal witness: <code>{esc(w['trace_id'])}</code> on {esc(w['target'])} {esc(w['broker_version'])} / {esc(w['client'])}
 <span class="muted">(run {esc(w['run_id'])}, {w['length']} steps; fails at step {w['step']}, {esc(w['op'])})</span></h3>
<div class="explanation"><b>{esc(', '.join(w.get('anomalies') or []) or 'FAIL')}</b>: {esc(w.get('explanation') or '')}</div>
<div class="diagram" style="overflow-x:auto">{sequence_diagram(events, trace, title=title)}</div>
<pre>{esc(witness_listing(events, trace, model_events(data, w)))}</pre>"""
        notes = deviations.get(rule_id) or []
        kd_html = "".join(
            f'<div class="kd-note" data-known-deviation="{esc(d["id"])}"><b>Known deviation {esc(d["id"])}</b>'
            f'{" on " + esc(d["where"]) if d.get("where") else ""}: {esc(" ".join(str(d.get("reason") or "").split()))}'
            f'{" <span class=muted>(evidence " + esc(d["evidence"]) + ")</span>" if d.get("evidence") else ""}</div>'
            for d in notes)
        known = rule_id in known_only
        heading = (f"known deviation ({esc(', '.join(dict.fromkeys(d['id'] for d in notes)))}), not counted as a failure"
                   if known else "FAIL")
        links = (f'<a href="#witness-{esc(rule_id)}">minimal trace</a> &middot; ' if w is not None else "") + \
            (f'<a href="#quote-{esc(rule_id)}">docs quote</a> &middot; ' if r.get("quote") else "") + f"source {esc(r['source'])}"
        out.append(f"""
<section class="rule-section{' kd' if known else ''}" id="rule-{esc(rule_id)}" data-rule="{esc(rule_id)}" data-known-only="{str(known).lower()}">
<h2>{esc(rule_id)}: {esc(r['title'])} <span class="muted">&middot; {heading}</span></h2>
<div class="muted">status {esc(r['status'])} &middot; {links}</div>
{kd_html}
{f'<p class="quote" id="quote-{esc(rule_id)}">&ldquo;{esc(r["quote"])}&rdquo;</p>' if r.get('quote') else ''}
<table><thead><tr><th>target</th><th>version</th><th>client</th><th>failing trace instances</th><th>minimal witness</th></tr></thead>
<tbody>{where}</tbody></table>{body}</section>""")
    if not out:
        return '<section id="failing"><h2>Failing rules</h2><p>No rule fails.</p></section>'
    return '<h2 id="failing" style="margin-top:24px">Failing rules</h2>' + "".join(out)


# --------------------------------------------------------------------------- plots


def _nice_ticks(lo: float, hi: float, n: int = 6) -> list[float]:
    span = hi - lo or 1.0
    step = 10 ** math.floor(math.log10(span / n))
    for m in (1, 2, 5, 10):
        if span / (step * m) <= n:
            step *= m
            break
    start = math.ceil(lo / step) * step
    ticks, t = [], start
    while t <= hi + 1e-9:
        ticks.append(round(t, 6))
        t += step
    return ticks


def timing_plot(rule_id: str, points: list[Mapping[str, Any]], band: tuple[float, float]) -> str:
    """A strip plot: one column per broker version/client, delta = broker instant - model instant."""
    cats = sorted({(p["broker_version"] or "", p["client"] or "") for p in points})
    if not cats:
        return ""
    deltas = [p["delta_ms"] for p in points if p["delta_ms"] is not None]
    # the y range follows the data (a live band can be far wider than any point); the band is
    # clipped to it and its label says where it really ends
    lo = min(min(deltas, default=0.0), band[0], 0.0)
    hi = max(max(deltas, default=0.0), 50.0)
    pad = (hi - lo) * 0.08
    lo, hi = lo - pad, hi + pad
    band_lo, band_hi = max(band[0], lo), min(band[1], hi)
    w_col, left, top, plot_h = 120, 64, 30, 260
    width, height = left + w_col * len(cats) + 30, top + plot_h + 60

    def y(v: float) -> float:
        return top + plot_h - (v - lo) / (hi - lo) * plot_h

    parts = [f'<svg class="timing-plot" data-rule="{esc(rule_id)}" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
             f'viewBox="0 0 {width} {height}" role="img" aria-label="timing of {esc(rule_id)}">',
             f'<text x="{left}" y="18" font-size="13" font-weight="600">{esc(rule_id)}: redelivery instant, broker minus model (ms)</text>',
             f'<rect x="{left}" y="{y(band_hi):.1f}" width="{w_col * len(cats)}" height="{y(band_lo) - y(band_hi):.1f}" fill="#e5f4e8" stroke="#1e7b34" stroke-dasharray="4,3"/>',
             f'<text x="{left + w_col * len(cats) - 4}" y="{y(band_hi) + 12:.1f}" font-size="10" text-anchor="end" fill="#1e7b34">allowed band [{band[0]:g}, +{band[1]:g}] ms'
             f'{" (continues above)" if band[1] > hi else ""}</text>']
    for t in _nice_ticks(lo, hi):
        parts.append(f'<line x1="{left - 4}" y1="{y(t):.1f}" x2="{left + w_col * len(cats)}" y2="{y(t):.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{left - 6}" y="{y(t) + 4:.1f}" font-size="10" text-anchor="end">{t:g}</text>')
    parts.append(f'<line x1="{left}" y1="{y(0):.1f}" x2="{left + w_col * len(cats)}" y2="{y(0):.1f}" stroke="#555"/>')
    for i, (version, client) in enumerate(cats):
        cx = left + w_col * i + w_col / 2
        parts.append(f'<text x="{cx}" y="{top + plot_h + 18}" font-size="11" text-anchor="middle">{esc(version)} / {esc(client)}</text>')
        for p in points:
            if (p["broker_version"] or "", p["client"] or "") != (version, client) or p["delta_ms"] is None:
                continue
            jitter = (zlib.crc32(f"{p['run_id']}{p['trace_id']}{p['step']}".encode()) % 1000) / 1000 - 0.5
            fail = p["verdict"] == "FAIL"
            parts.append(f'<circle cx="{cx + jitter * w_col * 0.6:.1f}" cy="{y(p["delta_ms"]):.1f}" r="{3.2 if fail else 2.2}" '
                         f'fill="{"#b3261e" if fail else "#1f77b4"}" fill-opacity="{0.9 if fail else 0.35}" class="{"pt-fail" if fail else "pt-pass"}"/>')
    n_fail = sum(p["verdict"] == "FAIL" for p in points)
    parts.append(f'<text x="{left}" y="{height - 8}" font-size="10" fill="#555">{len(points)} points shown '
                 f'(blue: PASS, red: FAIL = {n_fail}); the checker judges each against the rule\'s own window.</text>')
    parts.append("</svg>")
    return "".join(parts)


# The rules that state *when* a message may arrive (conformance/timing.py's list; the checker's
# _REDELIVERY_RULES and _DELAY_RULES), by what they time. PLS-FAILOVER-003's activation delay and
# PLS-BACKLOG-001's ack grouping use the bands too but time nothing themselves.
TIMING_RULES: dict[str, str] = {
    "PLS-NACK-001": "nack redelivery", "PLS-NACK-002": "nack redelivery", "PLS-NACK-003": "nack redelivery",
    "PLS-NACK-005": "nack redelivery", "PLS-NACK-006": "nack redelivery",
    "PLS-NACK-004": "negative-ack backoff", "PLS-NACK-007": "negative-ack backoff",
    "PLS-ACKTIMEOUT-002": "ack timeout", "PLS-ACKTIMEOUT-004": "ack timeout", "PLS-ACKTIMEOUT-005": "ack timeout",
    "PLS-REDELIVER-001": "redelivery on request", "PLS-SHARED-002": "redelivery on request",
    "PLS-DELAY-001": "delayed delivery", "PLS-DELAY-003": "delayed delivery", "PLS-DELAY-004": "delayed delivery",
    "PLS-DELAY-005": "delayed delivery",
}


def timing_rows(data: Mapping[str, Any], matrix: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every timing rule (``TIMING_RULES``) judged on a broker combo of the corpus, in that order:
    per combo, the steps its detector judged, how many failed, and the verdict.

    Taken from the rule matrix's step counts, not from the redelivery instants: those exist only
    for redeliveries the report job pairs with a model row (``spark_reports.transforms.timing_points``
    over its own four rules), so a corpus whose timing rules were all judged could still have no
    instant to draw; a section drawn from instants alone then read "No redelivery judged by a
    timing rule in this corpus"."""
    titles = {r["id"]: r["title"] for r in matrix["rules"]}
    out = []
    for rule_id, what in TIMING_RULES.items():
        per = []
        for c in data["combos"]:
            if c["target"] == MODEL:
                continue
            key = _key(c["target"], c["broker_version"], c["client"])
            counts = matrix["counts"].get(key, {}).get(rule_id)
            if counts and counts["rows"]:
                per.append({"combo": _combo_label(c), "key": key, "steps": counts["rows"], "fail": counts["fail"],
                            "indeterminate": counts.get("indeterminate", 0), "verdict": matrix["matrix"][key][rule_id]})
        if per:
            out.append({"rule_id": rule_id, "what": what, "title": titles.get(rule_id, ""), "combos": per})
    return out


def timing_section(data: Mapping[str, Any], matrix: Mapping[str, Any] | None = None) -> str:
    from conformance.timing import TimingBands

    recorded = [TimingBands.from_json(b) for b in data.get("timing_bands", ())]
    # the bands the run was judged with (widest, if its clients' differ); else the documented live default
    tol = TimingBands.widest(recorded) if recorded else TimingBands.default_live()
    band = (-tol.early_ms, tol.dispatch_latency_ms)
    points = data.get("timing", [])
    by_rule: dict[str, list[Mapping[str, Any]]] = {}
    for p in points:
        if p["target"] != MODEL:
            by_rule.setdefault(p["rule_id"], []).append(p)
    plots = "".join(f'<div class="plot">{timing_plot(r, pts, band)}</div>' for r, pts in sorted(by_rule.items()))
    rows = timing_rows(data, matrix) if matrix is not None else []
    table = ""
    if rows:
        body = "".join(
            f'<tr data-timing-rule="{esc(t["rule_id"])}"><td class="rule">{esc(t["rule_id"])}</td><td>{esc(t["what"])}</td>'
            f'<td>{esc(t["title"])}</td><td>' + "<br>".join(
                f'<span data-combo="{esc(c["key"])}" data-steps="{c["steps"]}" data-fail="{c["fail"]}">{esc(c["combo"])}: '
                f'{c["steps"]} steps judged, {c["fail"]} failed &middot; {esc(MARKS[c["verdict"]][2])}</span>' for c in t["combos"])
            + f'</td><td>{len(by_rule.get(t["rule_id"], []))}</td></tr>' for t in rows)
        table = ('<table id="timing-rules"><thead><tr><th>rule</th><th>times</th><th>title</th><th>judged on the broker</th>'
                 f'<th>instants drawn</th></tr></thead><tbody>{body}</tbody></table>')
    elif not plots:
        table = "<p>No timing rule was judged on a broker in this corpus.</p>"
    if rows and not plots:
        plots = ("<p class=\"muted\">No redelivery instant to draw: the corpus pairs none of these judged steps with a "
                 "model redelivery (instants are drawn for PLS-NACK-001/002/004 and PLS-ACKTIMEOUT-002 redeliveries).</p>")
    return f"""<section id="timing"><h2>Timing rules</h2>
<p class="muted">Every rule that times a delivery (nack redelivery, negative-ack backoff, ack timeout, redelivery on request,
delayed delivery), judged on a broker: how many steps its detector judged and failed.</p>{table}
<h3>Redelivery instants</h3>
<p class="muted">Each point is a redelivered message (redelivery_count &gt; 0) at a step judged by a timing rule: the broker's
delivery instant minus the model's (the model delivers at the earliest instant the rule allows). The band is the checker's live
tolerance around it (early {tol.early_ms:g} ms, dispatch latency {tol.dispatch_latency_ms:g} ms; bands {esc(tol.source)}:
{esc(tol.derivation)}); a rule's own window can be wider
(e.g. C++ nack: [d, d + d/3]). {data.get('timing_total', len(points))} points in the corpus.</p>{plots}</section>"""


# A fuzz budget's parts (conformance.corpus.ChunkWriter): part-<run id>-<tag>-<n>.parquet, tag "h"
# (Hypothesis), "w<k>" (a worker), "c<chunk>" (the fast model fuzzer). A run's cases are written by
# CorpusWriter as part-<run id>-<n>.parquet, a generated corpus's as part-<generator id>-<n>.parquet.
FUZZ_PART = re.compile(r"^part-(?P<run>.+)-(?P<tag>[A-Za-z][A-Za-z0-9]*)-\d+\.parquet$")


def fuzz_run_ids(part_names: Iterable[str]) -> set[str]:
    """The run ids of the fuzz budgets among a corpus's part file names."""
    return {m.group("run") for m in (FUZZ_PART.match(Path(n).name) for n in part_names) if m}


def corpus_runs(data: Mapping[str, Any], fuzz_runs: Iterable[str] = ()) -> tuple[list[str], list[str]]:
    """(runs, fuzz budgets) of the corpus, each a sorted list of run ids.

    One ``pulsar-conformance run`` writes its cases under one run id (``--resume`` keeps it) and each
    fuzz budget (the model's, the broker's) under its own: those are not runs. ``fuzz_runs``: the
    fuzz budgets' run ids (``fuzz_run_ids`` of the part names; ``data["fuzz_run_ids"]`` when given).
    The tiles and the trend both count these runs."""
    fuzz = set(fuzz_runs) | set(data.get("fuzz_run_ids") or ())
    ids = {r["run_id"] for r in data.get("trend", [])}
    return sorted(ids - fuzz), sorted(ids & fuzz)


def trend_plot(data: Mapping[str, Any], max_points: int = 200, fuzz_runs: Iterable[str] = ()) -> str:
    """Per run (``corpus_runs``; fuzz budgets left out) and broker combo: the share of its trace
    instances that failed."""
    runs, fuzz = corpus_runs(data, fuzz_runs)
    rows = [r for r in data.get("trend", []) if r["target"] != MODEL and r["run_id"] in set(runs)]
    left_out = f" ({len(fuzz)} fuzz budgets not counted as runs)" if fuzz else ""
    if not rows:
        return f"<p>No broker rows in the {len(runs)} runs of this corpus{left_out}.</p>"
    index = {run: i for i, run in enumerate(runs)}
    series: dict[tuple[str, str, str], list[tuple[int, float]]] = {}
    for r in rows:
        series.setdefault((r["target"], r["broker_version"], r["client"]), []).append(
            (index[r["run_id"]], r["failing_traces"] / r["traces"] if r["traces"] else 0.0))
    buckets = max(1, math.ceil(len(runs) / max_points))
    left, top, pw, ph = 60, 30, 820, 240
    width, height = left + pw + 230, top + ph + 50
    ymax = max((v for pts in series.values() for _, v in pts), default=0.0)
    ymax = max(ymax * 1.15, 0.01)

    def px(i: float) -> float:
        return left + (i / max(1, len(runs) - 1)) * pw

    def py(v: float) -> float:
        return top + ph - v / ymax * ph

    parts = [f'<svg class="trend-plot" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img" aria-label="failing traces per run">',
             f'<text x="{left}" y="18" font-size="13" font-weight="600" data-runs="{len(runs)}">Failing trace instances per run (share), {len(runs)} runs{esc(left_out)}'
             f'{f", averaged over {buckets} runs per point" if buckets > 1 else ""}</text>']
    for t in _nice_ticks(0, ymax, 5):
        parts.append(f'<line x1="{left}" y1="{py(t):.1f}" x2="{left + pw}" y2="{py(t):.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{left - 6}" y="{py(t) + 4:.1f}" font-size="10" text-anchor="end">{t * 100:.2g}%</text>')
    parts.append(f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="#555"/>')
    parts.append(f'<text x="{left}" y="{top + ph + 16}" font-size="10">{esc(runs[0])}</text>')
    parts.append(f'<text x="{left + pw}" y="{top + ph + 16}" font-size="10" text-anchor="end">{esc(runs[-1])}</text>')
    parts.append(f'<text x="{left + pw / 2}" y="{top + ph + 34}" font-size="11" text-anchor="middle">run (in run-id order)</text>')
    for n, (key, pts) in enumerate(sorted(series.items(), key=lambda kv: (kv[0][0], kv[0][1] or "", kv[0][2] or ""))):
        color = PALETTE[n % len(PALETTE)]
        pts.sort()
        agg: dict[int, list[float]] = {}
        for i, v in pts:
            agg.setdefault(i // buckets, []).append(v)
        coords = " ".join(f"{px(b * buckets + buckets / 2 if buckets > 1 else b):.1f},{py(sum(v) / len(v)):.1f}" for b, v in sorted(agg.items()))
        parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="1.6" points="{coords}"/>')
        ly = top + 14 * n + 6
        parts.append(f'<rect x="{left + pw + 16}" y="{ly - 8}" width="12" height="4" fill="{color}"/>')
        parts.append(f'<text x="{left + pw + 32}" y="{ly - 3}" font-size="11">{esc(key[1])} / {esc(key[2])}</text>')
    parts.append("</svg>")
    return "".join(parts)


# --------------------------------------------------------------------------- tables


def _table(headers: Iterable[str], rows: Iterable[Iterable[Any]], *, cls: str = "") -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def model_vs_broker_figures(diff_counts: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """The model-vs-broker diff in four figures (``spark_reports.transforms.diff_counts`` rows):
    ``divergent``, broker rows that differ from the model's prediction and that the checker
    FAILed (the broker did what the model does not allow); ``differs_allowed``, rows that differ
    but the checker did not fail (nondeterminism the model allows: another consumer got it, a
    later instant); ``no_prediction``, rows with no model row of the same run, trace and step;
    ``same``, rows equal to the prediction."""
    out = {"divergent": 0, "differs_allowed": 0, "no_prediction": 0, "same": 0}
    for r in diff_counts:
        if r["diff"] == "differs":
            out["divergent" if r["verdict"] == "FAIL" else "differs_allowed"] += r["rows"]
        elif r["diff"] in out:
            out[r["diff"]] += r["rows"]
    return out


def divergent_split(data: Mapping[str, Any], excusals: Mapping[str, Mapping[str, list[Mapping[str, Any]]]]
                    ) -> dict[str, Any]:
    """The divergent broker rows (``model_vs_broker_figures``' ``divergent``) split by what explains
    them, from ``data["divergent_rules"]`` (``spark_reports.transforms.divergent_rule_counts``: per
    combo, trace and the rules that failed at the step): ``explained``, rows whose every failed rule
    a known deviation excuses on that combo (``excusals``: combo key -> rule -> deviations, each
    with its ``id`` and ``case``) for that trace; ``unexplained``, the rest (the broker did what the
    model does not allow); ``deviations``, the ids that explain rows. A report.json without
    ``divergent_rules`` explains none."""
    total = model_vs_broker_figures(data.get("diff_counts", []))["divergent"]
    explained, ids = 0, set()
    for r in data.get("divergent_rules") or ():
        if r["target"] == MODEL:
            continue
        on = excusals.get(_key(r["target"], r["broker_version"], r["client"]), {})
        devs = [[d for d in on.get(rule) or () if d.get("case") in (None, "", r["trace_id"])] for rule in r["failed_rule_ids"] or ()]
        if devs and all(devs):
            explained += r["rows"]
            ids.update(d["id"] for found in devs for d in found)
    return {"explained": explained, "unexplained": total - explained, "deviations": sorted(ids)}


def divergence_section(data: Mapping[str, Any]) -> str:
    counts = sorted((r for r in data.get("diff_counts", []) if r["diff"] != "same"),
                    key=lambda r: (r["broker_version"] or "", r["client"] or "", r["diff"], r["verdict"]))
    diff_tbl = _table(["target", "version", "client", "diff", "broker verdict", "rows"],
                      [(r["target"], r["broker_version"], r["client"], r["diff"], r["verdict"], r["rows"]) for r in counts]) if counts else "<p>Every broker row equals the model's prediction.</p>"
    examples = _table(["run", "trace", "version", "client", "step", "op", "broker", "model", "verdict"],
                      [(r["run_id"], r["trace_id"], r["broker_version"], r["client"], r["step"], r["op"],
                        observation_text(r["observation"]), observation_text(r.get("model_observation")), r["verdict"])
                       for r in data.get("diff_rows", [])[:40]])
    vv = "".join(f"<h3>{esc(v['base'])} vs {esc(v['other'])}: {v['changed_steps']} changed steps</h3>" + (_table(
        ["trace", "client", "step", "op", f"{v['base']} verdicts", f"{v['other']} verdicts", f"{v['base']} FAIL rows", f"{v['other']} FAIL rows"],
        [(e["trace_id"], e["client"], e["step"], e["op"], ",".join(e["base_verdicts"]), ",".join(e["other_verdicts"]),
          e["base_fail_rows"], e["other_fail_rows"]) for e in v["examples"][:15]]) if v["examples"] else "")
        for v in data.get("version_diffs", []))
    flaky = data.get("flaky", [])
    flaky_tbl = _table(["trace", "target", "version", "client", "runs", "failing runs", "verdicts", "first failing run"],
                       [(f["trace_id"], f["target"], f["broker_version"], f["client"], f["runs"], f["fail_runs"],
                         ",".join(f["verdicts"]), f["first_fail_run"]) for f in flaky[:60]]) if flaky else "<p>No flaky trace.</p>"
    unobserved = data.get("unobserved", [])
    unobs = _table(["target", "version", "client", "model steps never recorded"],
                   [(u["target"], u["broker_version"], u["client"], u["steps"]) for u in unobserved]) if unobserved else "<p>Every model step of every broker trace was recorded.</p>"
    return f"""<section id="divergences"><h2>Model vs broker</h2>{diff_tbl}
<h3>First differing rows</h3>{examples}<h3>Steps the broker never recorded</h3>{unobs}</section>
<section id="versions"><h2>Version against version (same traces)</h2>{vv or '<p>One broker version only.</p>'}</section>
<section id="flaky"><h2>Flaky traces ({len(flaky)})</h2><p class="muted">Same trace, target, version and client; different verdicts across runs.</p>{flaky_tbl}</section>"""


# --------------------------------------------------------------------------- page


def coverage_by_client(per_client: Mapping[str, Headline], of: int) -> str:
    """"Rules exercised" per client (``reports.headline.headlines_by_client``: the headline's
    definitions, one client at a time), when the run or corpus has more than one broker client. A
    rule whose every FAIL with that client is a known deviation is listed under known deviations
    (violet), never under failing."""
    if len(per_client) < 2:
        return ""
    items = []
    for c, h in per_client.items():
        known = (f'; <span class="kd">known deviations: {esc(", ".join(h.deviation_rules))} ({esc(", ".join(h.deviations))})</span>'
                 if h.deviation_rules else "")
        items.append(
            f'<li data-client="{esc(c)}" data-exercised="{h.judged}" data-applicable="{h.applicable}" data-of="{of}" '
            f'data-failing="{len(h.failing)}" data-known-deviations="{len(h.deviation_rules)}" '
            f'data-inconclusive="{h.inconclusive}" data-not-exercised="{h.not_exercised}"><b>{esc(c)}</b>: '
            f'rules exercised {h.judged} of {h.applicable} that apply to it ({of} active); '
            f'failing: {esc(", ".join(h.failing) or "none")}{known}</li>')
    return f'<div id="coverage-by-client"><b>By client</b><ul>{"".join(items)}</ul></div>'


def vendors_in(profiles: Any) -> list[str]:
    """The vendor profiles (reference_model/vendors.py) named by history ``profile`` objects (mappings,
    or their JSON text as an outcome corpus stores them); one that names none is Apache's."""
    import json

    found = set()
    for profile in profiles or ():
        try:
            value = json.loads(profile) if isinstance(profile, str) else dict(profile or {})
        except (ValueError, TypeError):
            value = {}
        found.add(str(value.get("vendor") or "apache") if isinstance(value, dict) else "apache")
    return sorted(found) or ["apache"]


def _vendors(combos: Any) -> list[str]:
    """The vendor profiles the corpus's histories were judged under."""
    return vendors_in([p for combo in combos for p in combo.get("profiles") or ()])


def summary_excusals(data: Mapping[str, Any], summary: Mapping[str, Any]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Per broker combo key, per rule: the known deviations the run's ``summary.json`` says excused
    its FAIL there (``by_client[client].known_deviations``; the run's broker version)."""
    by_client = summary.get("by_client") or {summary.get("client") or "": summary}
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for c in data["combos"]:
        doc = by_client.get(c["client"] or "")
        if c["target"] == MODEL or doc is None or str(c["broker_version"]) != str(summary.get("broker_version")):
            continue
        for dev in (doc.get("known_deviations") or {}).values():
            out.setdefault(_key(c["target"], c["broker_version"], c["client"]), {}).setdefault(dev["rule"], []).append(dict(dev))
    return out


def corpus_excusals(data: Mapping[str, Any], deviations: Iterable[Any]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Per broker combo key, per rule: the known deviations (``conformance.deviations.Deviation``)
    that explain *every* FAIL of that rule there, as far as the corpus shows it: one failing trace
    instance, that deviation's case, recorded for that broker version, every failing anomaly the
    deviation's, and (for a deviation pinned to a step) one failing step, the witness's, at it."""
    from conformance.deviations import broker_matches

    deviations = list(deviations)
    fails: dict[tuple[str, str], dict[str, Any]] = {}
    for s in data.get("summary", []):
        if s["target"] == MODEL or not s["fail"]:
            continue
        f = fails.setdefault((_key(s["target"], s["broker_version"], s["client"]), s["rule_id"]), {"anomalies": set(), "rows": 0})
        f["anomalies"].add(s.get("anomaly") or "")
        f["rows"] += s["fail"]
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for w in data.get("witnesses", []):
        key = _key(w["target"], w["broker_version"], w["client"])
        f = fails.get((key, w["rule_id"]))
        if w["target"] == MODEL or f is None or w.get("failing_instances") != 1:
            continue
        devs = [d for d in deviations if d.case == w["trace_id"] and d.rule == w["rule_id"]
                and any(broker_matches(b, str(w["broker_version"])) for b in d.brokers)]
        if not devs or not f["anomalies"] <= {d.anomaly for d in devs}:
            continue
        if any(d.step is not None for d in devs) and not (f["rows"] == 1 and any(d.step in (None, w["step"]) for d in devs)):
            continue
        out.setdefault(key, {})[w["rule_id"]] = [{"id": d.id, "case": d.case, "rule": d.rule, "reason": d.reason,
                                                  "evidence": d.evidence} for d in devs]
    return out


def _deviation_notes(data: Mapping[str, Any], excusals: Mapping[str, Mapping[str, list[Mapping[str, Any]]]]
                     ) -> dict[str, list[dict[str, Any]]]:
    """Rule id -> one note per (deviation, combo) that excuses a FAIL of it (for the rule sections)."""
    labels = {_key(c["target"], c["broker_version"], c["client"]): _combo_label(c) for c in data["combos"]}
    notes: dict[str, list[dict[str, Any]]] = {}
    for key, rules in excusals.items():
        for rule, devs in rules.items():
            for d in devs:
                notes.setdefault(rule, []).append({**d, "where": labels.get(key, key)})
    return notes


def headline_of(data: Mapping[str, Any], matrix: Mapping[str, Any], summary: Mapping[str, Any] | None,
                excusals: Mapping[str, Mapping[str, list[Mapping[str, Any]]]]) -> Headline:
    """The page's one-line answer: the run's (``summary``), else the corpus's (no error count)."""
    if summary is not None:
        return summary_headline(summary)
    ids = {k: {r: [d["id"] for d in devs] for r, devs in rules.items()} for k, rules in excusals.items()}
    return corpus_headline(data["combos"], matrix["matrix"], ids)


# the banner's colour per outcome (conformance.verdict_exit.OUTCOMES): known deviations neither red nor green
OUTCOME_CLASS = {"PASS": "ok", "KNOWN_DEVIATIONS": "known", "FAIL": "bad", "ERROR": "bad", "INCONCLUSIVE": "unsure",
                 "INTERRUPTED": "unsure"}


def banner_class(h: Headline, outcome: Any = None) -> str:
    """The banner's class: from the run's outcome when there is one (the same answer as the exit
    code, the last line, summary.json and junit.xml), else from the corpus's figures."""
    if outcome is not None:
        return OUTCOME_CLASS[outcome.overall]
    bad = bool(h.failing or h.failed_cases or h.errored_cases or h.judged == 0)
    unsure = bool(h.inconclusive or h.not_run_cases)
    return "bad" if bad else "unsure" if unsure else "known" if h.deviation_rules else "ok"


def headline_section(h: Headline, source: str, outcome: Any = None) -> str:
    """The answer first: the outcome's line and reasons (``summary.json`` ``overall``, ``exit_code``,
    ``reasons``; known deviations in a list of their own), then the sentence. Red on FAIL and ERROR,
    amber on INCONCLUSIVE and INTERRUPTED, violet on known deviations only, green on PASS."""
    cls = banner_class(h, outcome)
    top = ""
    if outcome is not None:
        from conformance.verdict_exit import KIND_KNOWN

        known = [r for r in outcome.reasons if r.kind == KIND_KNOWN]
        others = [r for r in outcome.reasons if r.kind != KIND_KNOWN]
        items = "".join(f'<li class="{esc(r.kind)}" data-kind="{esc(r.kind)}">{esc(r.text)}</li>' for r in others)
        kd = "".join(f'<li class="known-deviation" data-kind="{KIND_KNOWN}" data-deviations="{esc(",".join(r.deviations))}">'
                     f'{esc(r.text)}</li>' for r in known)
        top = (f'<p id="outcome-line" data-overall="{esc(outcome.overall)}" data-exit-code="{outcome.exit_code}">'
               f'{esc(outcome.line(h.sentence()))}</p>'
               + (f'<ul id="outcome-reasons">{items}</ul>' if items else "")
               + (f'<p><b>Known deviations</b></p><ul id="known-deviations">{kd}</ul>' if kd else ""))
    return (f'<section id="headline" class="{cls}" data-overall="{esc(outcome.overall) if outcome else ""}" '
            f'data-exit-code="{outcome.exit_code if outcome else ""}" data-failing="{len(h.failing)}" '
            f'data-known-deviations="{len(h.deviation_rules)}" '
            f'data-errored="{"" if h.errored_cases is None else h.errored_cases}" data-judged="{h.judged}" '
            f'data-applicable="{h.applicable}">{top}<p id="headline-sentence">{esc(h.sentence())}</p>'
            f'<p class="muted">{esc(source)}</p></section>')


def not_followed_section(summary: Mapping[str, Any] | None) -> str:
    """The steps the model did not follow, by reason, with the cases they were in (summary.json ``not_followed``):
    what came after them was judged less, so the page says where. Empty without a run's summary."""
    if summary is None:
        return ""
    doc = summary.get("not_followed") or {}
    steps = int(doc.get("steps") or 0)
    if not steps:
        return ('<section id="not-followed" data-steps="0"><h2>Steps the model did not follow</h2>'
                '<p>None: the model followed every step of every case.</p></section>')
    rows = "".join(f'<tr><td>{esc(reason)}</td><td class="num">{n}</td></tr>'
                   for reason, n in (doc.get("by_reason") or {}).items())
    cases = ", ".join(f"{esc(c)} ({n})" for c, n in (doc.get("cases") or {}).items())
    return (f'<section id="not-followed" data-steps="{steps}"><h2>Steps the model did not follow</h2>'
            f'<p>{steps} step{"" if steps == 1 else "s"} the model leaves unspecified or does not describe; the handles and '
            f'topics they touched were judged less after them (what the checker could not follow, it does not judge). '
            f'By reason:</p><table><tr><th>reason</th><th>steps</th></tr>{rows}</table>'
            f'<p class="muted">In: {cases}</p></section>')


def outcome_banner(summary: Mapping[str, Any]) -> str:
    """The page's banner for a run's ``summary.json`` alone (no corpus, no Spark): what
    ``render_html`` puts first when it is given that summary."""
    from conformance.verdict_exit import Outcome

    return headline_section(summary_headline(summary), "From the run's summary.json.", Outcome.from_summary(summary))


def render_html(data: Mapping[str, Any], matrix: Mapping[str, Any], *, traces: Mapping[str, Any] | None = None,
                client_matrix: Any = None, client_matrix_caption: str = "", release_matrix: Any = None,
                summary: Mapping[str, Any] | None = None, summary_source: str = "", fuzz_runs: Iterable[str] = (),
                deviations: Iterable[Any] | None = None) -> str:
    """The report page. ``client_matrix`` (a ``reports.client_matrix.ClientMatrix``), when given,
    adds the client x feature matrix section after the rule matrix; ``release_matrix``
    (``reports.release_matrix.build``), when given, the rules x release section before it.
    ``summary``: the run's ``summary.json`` (``pulsar-conformance run``), for the one-line answer,
    the errored cases and the known deviations; without it they come from the corpus and
    ``deviations`` (default: ``conformance.deviations.load_deviations()``). ``fuzz_runs``: the
    corpus's fuzz budgets' run ids (``fuzz_run_ids``), which are not counted as runs."""
    from reports import release_matrix as rm

    traces = traces or {}
    fuzz_runs = list(fuzz_runs)
    rm_section = rm.to_html(release_matrix) if release_matrix else ""
    cm_section = ""
    if client_matrix is not None:
        cm_section = client_matrix_html(client_matrix, caption=client_matrix_caption)
    if summary is not None:
        excusals = summary_excusals(data, summary)
        source = (f"From the run's summary.json{' (' + summary_source + ')' if summary_source else ''}: every rule in one "
                  "figure, a rule that FAILs only by a known deviation counted as one, cases that errored counted.")
    else:
        if deviations is None:
            from conformance.deviations import load_deviations

            deviations = load_deviations()
        excusals = corpus_excusals(data, deviations)
        source = ("From the outcome corpus (no summary.json of the run was given): every rule in one figure, a rule that "
                  "FAILs only by a known deviation counted as one; a case that errored left no row, so errors are not counted.")
    head = headline_of(data, matrix, summary, excusals)
    from conformance.verdict_exit import Outcome

    outcome = Outcome.from_summary(summary) if summary is not None else None
    cov = matrix["coverage"]
    rows = sum(c["rows"] for c in data["combos"])
    runs, fuzz = corpus_runs(data, fuzz_runs)
    diff = model_vs_broker_figures(data.get("diff_counts", []))
    manifest = data.get("manifest") or {}
    seed = (manifest.get("config") or {}).get("seed")
    brokers = [c for c in data["combos"] if c["target"] != MODEL]
    versions = sorted({c["broker_version"] for c in brokers if c["broker_version"]})
    clients = broker_clients(data)
    errored = head.errored_cases
    split = divergent_split(data, excusals)
    known_rows = f" ({', '.join(split['deviations'])})" if split["deviations"] else ""
    cards = [
        ("rows", f"{rows:,}", ""),
        (f"runs (invocations: a run's cases share one run id){f'; {len(fuzz)} fuzz budgets apart' if fuzz else ''}",
         f"{len(runs):,}", ""),
        (f"rules exercised (of the applicable; {cov['of']} active)", f"{head.judged} of {head.applicable}", ""),
        ("failing rules (known deviations apart)", str(len(head.failing)), "bad" if head.failing else ""),
        ("rules failing only by a known deviation", str(len(head.deviation_rules)), "known" if head.deviation_rules else ""),
        ("cases errored" if errored is not None else "cases errored (not in the corpus: no summary.json)",
         "?" if errored is None else str(errored), "bad" if errored or head.judged == 0 else ""),
        # the divergent rows split by what explains them: a known deviation's (its case and rule), or nothing
        ("broker rows explained by known deviations" + known_rows, f"{split['explained']:,}", "known" if split["explained"] else ""),
        ("broker rows the model does not allow", f"{split['unexplained']:,}", "bad" if split["unexplained"] else ""),
        ("broker rows differing as the model allows", f"{diff['differs_allowed']:,}", ""),
        ("broker rows without a model prediction", f"{diff['no_prediction']:,}", "bad" if diff["no_prediction"] else ""),
        ("flaky traces", str(len(data.get("flaky", []))), "bad" if data.get("flaky") else ""),
    ]
    if summary is not None:
        cards.append(("steps the model did not follow (summary.json not_followed)", str(head.not_followed_steps),
                      "unsure" if head.not_followed_steps else ""))
    cards_html = "".join(f'<div class="card{" " + cls if cls else ""}" data-card="{esc(label.split(" (")[0])}"><div class="n">{esc(n)}</div>'
                         f'<div class="muted">{esc(label)}</div></div>' for label, n, cls in cards)
    sub = (f"corpus {esc(data['corpus'])} (schema v{CORPUS_SCHEMA_VERSION}) &middot; brokers {esc(', '.join(versions))} &middot; clients {esc(', '.join(clients))}"
           f" &middot; generated {esc(data.get('generated_at'))} with Spark {esc(data.get('spark_version'))} ({esc(data.get('spark_master'))})"
           + (f" &middot; generator seed {esc(seed)}" if seed is not None else "")
           + f" &middot; profile {esc(', '.join(_vendors(data['combos'])))}")
    known_only = set(head.deviation_rules)
    kd_ids = {k: {r: [d["id"] for d in devs] for r, devs in v.items()} for k, v in excusals.items()}
    per_client = headlines_by_client(summary, combos=data["combos"], matrix=matrix["matrix"], excused=kd_ids)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>pulsar-conformance report</title><style>{CSS}</style><script>{JS}</script></head>
<body><header><h1>pulsar-conformance report</h1><div class="sub">{sub}</div></header><main>
{headline_section(head, source, outcome)}
<section id="overview"><h2>Overview</h2><div class="cards">{cards_html}</div>
<p id="coverage" data-exercised="{head.judged}" data-applicable="{head.applicable}" data-not-exercised="{head.not_exercised}" data-of="{cov['of']}"><b>Rules exercised: {head.judged} of {head.applicable} applicable</b>
 ({head.not_exercised} not exercised: no client judged them and no case that ran names them; {cov['of']} active rules in the registry;
 the same figures as the answer above{", from the run's summary.json" if summary is not None else ", from the corpus"}). The model exercises {cov['exercised_by_model']}.</p>
{coverage_by_client(per_client, cov["of"])}
<p class="muted">Contents: <a href="#matrix">matrix</a>{' &middot; <a href="#release-matrix">rules x release</a>' if rm_section else ''}{' &middot; <a href="#client-matrix">client x feature matrix</a>' if cm_section else ''} &middot; <a href="#failing">failing rules</a> &middot; <a href="#timing">timing</a>
 &middot; <a href="#not-followed">not followed</a> &middot; <a href="#trends">trends</a> &middot; <a href="#divergences">model vs broker</a> &middot; <a href="#versions">versions</a> &middot; <a href="#flaky">flaky traces</a></p></section>
{matrix_section(data, matrix, kd_ids)}
{rm_section}
{cm_section}
{rule_sections(data, matrix, traces, _deviation_notes(data, excusals), known_only)}
{not_followed_section(summary)}
{timing_section(data, matrix)}
<section id="trends"><h2>Trends across runs</h2>{trend_plot(data, fuzz_runs=fuzz_runs)}</section>
{divergence_section(data)}
<footer class="muted">Self-contained: no external resources. Data: data/report.json; machine-readable twin: summary.json; CI: junit.xml (xunit2).</footer>
</main></body></html>
"""


def run_summary_beside(corpus: Any) -> Path | None:
    """The ``summary.json`` that ``pulsar-conformance run`` writes beside its corpus folder
    (``<out>/corpus`` and ``<out>/summary.json``), or None (another layout, or not a local path)."""
    try:
        folder = Path(str(corpus))
    except (TypeError, ValueError):
        return None
    found = folder.parent / "summary.json"
    return found if folder.name == "corpus" and found.is_file() else None


def write_html(path: Path, data: Mapping[str, Any], matrix: Mapping[str, Any], *, traces: Mapping[str, Any] | None = None,
               client_matrix: Any = None, client_matrix_caption: str = "", release_matrix: Any = None,
               summary: Mapping[str, Any] | None = None) -> Path:
    """Write the page to ``path`` (atomically). The only reads: the corpus folder's part names (to
    tell fuzz budgets from runs) and, when ``summary`` is not given, the run's ``summary.json``
    beside a ``corpus`` folder (``run_summary_beside``)."""
    import json

    path = Path(path)
    corpus = Path(str(data.get("corpus") or ""))
    names = [p.name for p in corpus.glob("part-*.parquet")] if data.get("corpus") and corpus.is_dir() else []
    source = ""
    if summary is None:
        found = run_summary_beside(data.get("corpus"))
        if found is not None:
            try:
                summary, source = json.loads(found.read_text(encoding="utf-8")), str(found)
            except (OSError, ValueError):
                summary = None
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(redact(render_html(data, matrix, traces=traces, client_matrix=client_matrix,  # no secret shows
                                      client_matrix_caption=client_matrix_caption, release_matrix=release_matrix,
                                      summary=summary, summary_source=source, fuzz_runs=fuzz_run_ids(names))),
                   encoding="utf-8")
    tmp.replace(path)
    return path


__all__ = ["render_html", "write_html", "sequence_diagram", "timing_plot", "trend_plot", "MARKS", "ordered_combos", "broker_clients",
           "TIMING_RULES", "timing_rows", "corpus_runs", "fuzz_run_ids", "corpus_excusals", "summary_excusals", "headline_of",
           "model_client", "run_summary_beside", "divergent_split", "coverage_by_client"]
