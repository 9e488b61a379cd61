"""Rule x release x client: where broker releases differ from each other and from the model.

Input: the rule matrix of the corpus report (``spark_reports.jobs.report.rule_matrix``: one
verdict per rule per target|version|client combo) and, optionally, the runs' ``summary.json``
documents, whose ``known_deviations`` say which FAILs are recorded broker bugs
(``conformance/deviations.yaml``). Output, per client, one row per rule and one cell per release
(oldest first) with:

- ``verdict``: the rule's verdict on that release (PASS, FAIL, INDETERMINATE, NOT_APPLICABLE,
  NOT_EXERCISED);
- ``differs_from_previous``: the verdict is not the one of the previous release (of those the
  client ran) where the rule was judged on both;
- ``differs_from_model``: the model, run as that release's model line with the same client, gave
  a different judged verdict (the model is the reference: it PASSes what it asserts);
- ``deviation``: the known deviation that excuses a FAIL there, if any;
- ``needs_verdict``: a FAIL no known deviation explains, or an INDETERMINATE: the cells issue 14
  asks a person to give a verdict (a rule ``applies_to``, a known deviation, or a suite fix).

Pure: no Spark, no I/O; the report job and the ``matrix`` command call it.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from conformance.verdicts import FAIL, INDETERMINATE, NOT_APPLICABLE, NOT_EXERCISED, PASS, is_judged
from reference_model import releases

MODEL = "model"
MODEL_CLIENT = {"python": "cpp", "mixed": "mixed", "java": "java"}


def _model_client_names(client: str) -> set[str]:
    return {client, MODEL_CLIENT.get(client, client)}


def deviations_by_cell(summaries: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], str]:
    """(broker_version, client, rule) -> deviation id, from the runs' summary documents."""
    out: dict[tuple[str, str, str], str] = {}
    for doc in summaries:
        version, client = str(doc.get("broker_version") or ""), str(doc.get("client") or "")
        for dev in (doc.get("known_deviations") or {}).values():
            out[(version, client, dev["rule"])] = dev["id"]
    return out


def build(matrix: Mapping[str, Any], *, summaries: Iterable[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The release matrix of a rule matrix (see the module docstring)."""
    combos = [key.split("|", 2) for key in matrix["matrix"]]
    live = [(t, v, c) for t, v, c in combos if t != MODEL and v]
    clients = sorted({c for _, _, c in live})
    excused = deviations_by_cell(summaries)
    rules = [r["id"] for r in matrix["rules"]]
    out_clients: dict[str, Any] = {}
    for client in clients:
        versions = sorted({v for t, v, c in live if c == client}, key=releases.sort_key)
        target_of = {v: t for t, v, c in live if c == client}
        rows = {}
        for rule in rules:
            cells = {}
            previous = None
            for version in versions:
                verdict = matrix["matrix"][f"{target_of[version]}|{version}|{client}"].get(rule, NOT_EXERCISED)
                model = _model_verdict(matrix, version, client, rule)
                deviation = excused.get((version, client, rule)) if verdict == FAIL else None
                cells[version] = {
                    "verdict": verdict,
                    "differs_from_previous": bool(previous is not None and is_judged(previous) and is_judged(verdict)
                                                  and previous != verdict),
                    "differs_from_model": bool(model is not None and is_judged(model) and is_judged(verdict) and model != verdict),
                    "model": model,
                    "deviation": deviation,
                    "needs_verdict": (verdict == FAIL and deviation is None) or verdict == INDETERMINATE,
                }
                if verdict != NOT_APPLICABLE and verdict != NOT_EXERCISED:
                    previous = verdict
            rows[rule] = cells
        out_clients[client] = {"versions": versions, "rules": rows}
    needs = [{"client": client, "broker_version": v, "rule": rule, "verdict": cell["verdict"]}
             for client, block in out_clients.items() for rule, cells in block["rules"].items()
             for v, cell in cells.items() if cell["needs_verdict"]]
    differing = sorted({rule for block in out_clients.values() for rule, cells in block["rules"].items()
                        if any(c["differs_from_previous"] or c["differs_from_model"] for c in cells.values())})
    return {"clients": out_clients, "needs_verdict": needs, "differing_rules": differing}


def _model_verdict(matrix: Mapping[str, Any], version: str, client: str, rule: str) -> str | None:
    """The model's verdict on ``rule`` for ``version``'s model line and ``client``, if the model ran it."""
    try:
        line = releases.model_line(version)
    except ValueError:
        return None
    names = _model_client_names(client)
    found = None
    for key, row in matrix["matrix"].items():
        target, v, c = key.split("|", 2)
        if target == MODEL and c in names and releases.model_line_or_text(v) == line:
            verdict = row.get(rule)
            if verdict is not None and (found is None or (not is_judged(found) and is_judged(verdict))):
                found = verdict
    return found


def text(release_matrix: Mapping[str, Any], *, only_interesting: bool = True) -> str:
    """A plain-text rendering: per client, the rules that are not PASS everywhere or that differ."""
    short = {PASS: "pass", FAIL: "FAIL", INDETERMINATE: "indet", NOT_APPLICABLE: "n/a", NOT_EXERCISED: "-"}
    lines = []
    for client, block in release_matrix["clients"].items():
        versions = block["versions"]
        lines.append(f"client {client}: " + "  ".join(versions))
        width = max(9, *(len(v) for v in versions))
        lines.append(f"{'rule':<22}" + "".join(f"{v:>{width + 1}}" for v in versions))
        for rule, cells in block["rules"].items():
            interesting = any(c["verdict"] not in (PASS, NOT_APPLICABLE, NOT_EXERCISED) or c["differs_from_previous"]
                              or c["differs_from_model"] for c in cells.values())
            if only_interesting and not interesting:
                continue
            row = []
            for v in versions:
                c = cells[v]
                mark = short.get(c["verdict"], c["verdict"])
                if c["deviation"]:
                    mark = c["deviation"]
                elif c["needs_verdict"]:
                    mark += "!"
                if c["differs_from_previous"]:
                    mark += "^"
                row.append(f"{mark:>{width + 1}}")
            lines.append(f"{rule:<22}" + "".join(row))
        lines.append("")
    lines.append("legend: KD-nnn = FAIL excused by that known deviation; ! = needs a verdict; ^ = differs from the previous release")
    return "\n".join(lines)


def to_html(release_matrix: Mapping[str, Any]) -> str:
    """The ``release-matrix`` section of the HTML report: per client, rules x releases, with the
    marks of ``build`` (a changed verdict against the previous release, against the model, the
    known deviation that excuses a FAIL, and the cells that still need a verdict)."""
    from reports.marks import MARKS, esc

    blocks = []
    for client, block in release_matrix["clients"].items():
        versions = block["versions"]
        head = "".join(f'<th class="combo">{esc(v)}</th>' for v in versions)
        rows = []
        for rule, cells in block["rules"].items():
            if all(c["verdict"] in (PASS, NOT_APPLICABLE, NOT_EXERCISED) and not c["differs_from_previous"]
                   and not c["differs_from_model"] for c in cells.values()):
                continue
            tds = []
            for v in versions:
                c = cells[v]
                glyph, cls, label = MARKS[c["verdict"]]
                notes = []
                if c["deviation"]:
                    notes.append(c["deviation"])
                if c["differs_from_previous"]:
                    notes.append("&#916;prev")
                if c["differs_from_model"]:
                    notes.append("&#8800;model")
                if c["needs_verdict"]:
                    notes.append("needs a verdict")
                tip = f"{rule} on {v} / {client}: {label}" + (f"; model: {c['model']}" if c["model"] else "")
                tds.append(f'<td class="rm-cell {cls}" data-rule="{esc(rule)}" data-version="{esc(v)}" data-client="{esc(client)}" '
                           f'data-rm-verdict="{c["verdict"]}" data-differs-previous="{str(c["differs_from_previous"]).lower()}" '
                           f'data-differs-model="{str(c["differs_from_model"]).lower()}" title="{esc(tip)}">{esc(glyph)}'
                           + (f'<br><small>{" ".join(notes)}</small>' if notes else "") + "</td>")
            rows.append(f'<tr><td class="rule">{esc(rule)}</td>{"".join(tds)}</tr>')
        body = "".join(rows) or f'<tr><td colspan="{len(versions) + 1}">every rule the same on every release</td></tr>'
        blocks.append(f'<h3>client {esc(client)}</h3><div style="overflow-x:auto"><table class="release-matrix" '
                      f'data-client="{esc(client)}"><thead><tr><th>rule</th>{head}</tr></thead><tbody>{body}</tbody></table></div>')
    needs = release_matrix["needs_verdict"]
    needs_html = ("<p><b>Cells that need a verdict:</b> " + ", ".join(
        esc(f"{n['rule']} on {n['broker_version']} / {n['client']} ({n['verdict']})") for n in needs) + "</p>") if needs else \
        "<p>Every non-PASS cell has a verdict (not applicable by the rule's <code>applies_to</code>, or a known deviation).</p>"
    return (f'<section id="release-matrix"><h2>Rules x release</h2><p class="muted">Only rules that are not PASS on '
            "every release, or whose verdict changes, are shown. &#916;prev: differs from the previous release; "
            "&#8800;model: differs from the model run as that release's line; KD-nnn: a known deviation excuses the FAIL "
            f"(conformance/deviations.yaml).</p>{needs_html}{''.join(blocks)}</section>")
