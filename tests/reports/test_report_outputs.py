"""The report command's outputs: the folder swapped in whole, and summary.json in the main job's
shape, extended per broker version and client."""

from __future__ import annotations

import json

from reference_model.rules import active_rules


def test_the_new_report_replaced_the_old_one_whole(report_dir):
    out, _ = report_dir
    assert sorted(p.name for p in out.iterdir()) == ["client-matrix.json", "client-matrix.md", "data", "index.html",
                                                     "junit.xml", "release-matrix.json", "release-matrix.txt", "summary.json"]
    assert not list(out.parent.glob(".out.*"))  # no temporary or old folder left behind


def test_summary_json_has_the_main_job_shape_per_version_and_client(report_dir):
    out, manifest = report_dir
    summary = json.loads((out / "summary.json").read_text())
    assert {"target", "broker_version", "client", "rules"} <= set(summary)
    assert summary["target"] == "embedded"
    assert set(summary["rules"]) == {r.id for r in active_rules()}
    per = {(e["broker_version"], e["client"]): e for e in summary["by_version_client"]}
    assert set(per) == {(v, c) for v in ("3.3.9", "4.0.7", "4.0.8", "4.1.2") for c in ("python", "java")}
    for e in per.values():
        assert {"target", "broker_version", "client", "rules"} <= set(e)
        assert set(e["rules"].values()) <= {"PASS", "FAIL", "INDETERMINATE", "NOT_APPLICABLE", "NOT_EXERCISED"}
    p = manifest["persistent"][0]
    assert "FAIL" in per[(p["broker_version"], p["client"])]["rules"].values()
    assert per[("4.0.8", "java")]["rules"]["PLS-NACK-001"] == "NOT_APPLICABLE"  # a C++/Python-only rule
    assert {e["target"] for e in summary["reference"]} == {"model"}
    assert all("FAIL" not in e["rules"].values() for e in summary["reference"])
    assert summary["coverage"]["of"] == len(active_rules())
    assert set(summary["by_client"]) == {"python", "java"}
    assert summary["by_client"]["java"]["broker_versions"] == ["3.3.9", "4.0.7", "4.0.8", "4.1.2"]
    assert summary["by_client"]["java"]["rules"]["PLS-NACK-001"] == "NOT_APPLICABLE"


def test_a_corpus_of_several_releases_gets_the_rules_x_release_matrix(report_dir):
    """Four releases x two clients: per client, the releases oldest first, every active rule a row,
    and the HTML section with one cell per rule shown and release."""
    out, _ = report_dir
    rm = json.loads((out / "release-matrix.json").read_text())
    assert set(rm["clients"]) == {"python", "java"}
    for block in rm["clients"].values():
        assert block["versions"] == ["3.3.9", "4.0.7", "4.0.8", "4.1.2"]
        assert set(block["rules"]) == {r.id for r in active_rules()}
    html = (out / "index.html").read_text()
    assert 'id="release-matrix"' in html
    shown = {rule for block in rm["clients"].values() for rule, cells in block["rules"].items()
             if any(c["verdict"] not in ("PASS", "NOT_APPLICABLE", "NOT_EXERCISED") or c["differs_from_previous"]
                    or c["differs_from_model"] for c in cells.values())}
    assert html.count('class="rm-cell') == sum(4 for block in rm["clients"].values() for rule in block["rules"]
                                               if rule in shown and any(
                                                   c["verdict"] not in ("PASS", "NOT_APPLICABLE", "NOT_EXERCISED")
                                                   or c["differs_from_previous"] or c["differs_from_model"]
                                                   for c in block["rules"][rule].values()))
