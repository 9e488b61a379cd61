"""The rules x release matrix (reports/release_matrix.py), deviation matching by release
(conformance/deviations.broker_matches) and the matrix command's input (pulsar_conformance/matrix_job.py)."""

from __future__ import annotations

import pytest

from conformance.deviations import broker_matches
from pulsar_conformance import matrix_job
from reports import release_matrix

P, F, NA, NE, IND = "PASS", "FAIL", "NOT_APPLICABLE", "NOT_EXERCISED", "INDETERMINATE"


def _matrix() -> dict:
    rules = ["R-COMPACT", "R-BACKLOG", "R-TXN", "R-SAME", "R-FLAKY"]
    cells = {
        # releases as run, oldest first after sorting: 3.0.7, 3.3.6, 4.0.8, 4.2.4
        "embedded|4.0.8|python": {"R-COMPACT": F, "R-BACKLOG": F, "R-TXN": P, "R-SAME": P, "R-FLAKY": P},
        "embedded|3.0.7|python": {"R-COMPACT": P, "R-BACKLOG": F, "R-TXN": NA, "R-SAME": P, "R-FLAKY": P},
        "embedded|3.3.6|python": {"R-COMPACT": P, "R-BACKLOG": F, "R-TXN": NE, "R-SAME": P, "R-FLAKY": IND},
        "embedded|4.2.4|python": {"R-COMPACT": P, "R-BACKLOG": P, "R-TXN": P, "R-SAME": P, "R-FLAKY": P},
        "model|3.x|cpp": {r: P for r in rules},
        "model|4.0|cpp": {r: P for r in rules},
    }
    return {"rules": [{"id": r} for r in rules], "matrix": cells}


def _summary(version: str, *devs: tuple[str, str]) -> dict:
    return {"broker_version": version, "client": "python",
            "known_deviations": {case: {"id": kd, "rule": rule} for case, (kd, rule) in zip((f"c{i}" for i in range(9)), devs)}}


def test_cells_are_marked_against_the_previous_release_and_the_model():
    rm = release_matrix.build(_matrix(), summaries=[_summary("4.0.8", ("KD-003", "R-COMPACT")), _summary("3.0.7", ("KD-001", "R-BACKLOG"))])
    block = rm["clients"]["python"]
    assert block["versions"] == ["3.0.7", "3.3.6", "4.0.8", "4.2.4"]
    compact = block["rules"]["R-COMPACT"]
    assert [compact[v]["differs_from_previous"] for v in block["versions"]] == [False, False, True, True]
    assert compact["4.0.8"]["differs_from_model"] and compact["4.0.8"]["deviation"] == "KD-003"
    assert not compact["4.0.8"]["needs_verdict"]
    backlog = block["rules"]["R-BACKLOG"]
    assert backlog["3.0.7"]["deviation"] == "KD-001" and not backlog["3.0.7"]["needs_verdict"]
    # 3.3.6 and 4.0.8 FAIL R-BACKLOG with no deviation recorded for them: they need a verdict
    assert backlog["3.3.6"]["needs_verdict"] and backlog["4.0.8"]["needs_verdict"]
    assert backlog["4.2.4"]["differs_from_previous"] and not backlog["3.3.6"]["differs_from_previous"]
    # not applicable and not exercised cells are neither compared nor in need of a verdict
    txn = block["rules"]["R-TXN"]
    assert not any(c["differs_from_previous"] or c["needs_verdict"] for c in txn.values())
    assert block["rules"]["R-FLAKY"]["3.3.6"]["needs_verdict"]
    assert {(n["broker_version"], n["rule"]) for n in rm["needs_verdict"]} == {
        ("3.3.6", "R-BACKLOG"), ("4.0.8", "R-BACKLOG"), ("3.3.6", "R-FLAKY")}
    assert rm["differing_rules"] == ["R-BACKLOG", "R-COMPACT", "R-FLAKY"]


def test_the_model_cell_is_the_releases_model_line():
    m = _matrix()
    m["matrix"]["model|3.x|cpp"]["R-SAME"] = F  # a model failing on its 3.x line only
    rm = release_matrix.build(m)
    same = rm["clients"]["python"]["rules"]["R-SAME"]
    assert same["3.0.7"]["differs_from_model"] and same["3.3.6"]["differs_from_model"]
    assert not same["4.0.8"]["differs_from_model"]


def test_text_and_html_show_only_what_differs():
    rm = release_matrix.build(_matrix(), summaries=[_summary("4.0.8", ("KD-003", "R-COMPACT"))])
    table = release_matrix.text(rm)
    assert "R-COMPACT" in table and "KD-003" in table and "R-SAME" not in table and "FAIL!" in table
    html = release_matrix.to_html(rm)
    assert 'data-rule="R-COMPACT" data-version="4.0.8"' in html and "R-SAME" not in html and "needs a verdict" in html


@pytest.mark.parametrize("entry, version, expected", [
    ("4.0.8", "4.0.8", True), ("4.0.1", "4.0.10", False), ("4.0", "4.0.10", True), ("4.0", "4.1.0", False),
    ("3.x", "3.3.6", True), ("3.x", "4.0.0", False), (">=4.0.0,<4.0.7", "4.0.1", True), (">=4.0.0,<4.0.7", "4.0.7", False),
    (">=3.0.2,<3.3.6", "3.2.3", True), ("4.0.8", "garbage", False),
])
def test_deviation_entries_match_releases_lines_and_specs(entry, version, expected):
    assert broker_matches(entry, version) is expected


def test_matrix_versions_are_read_before_anything_starts():
    builds = matrix_job.parse_versions("3.0, 4.0.8 ,4.0.8:assembled")
    assert [(b.release, b.how) for b in builds] == [("3.0.7", "assembled"), ("4.0.8", "tarball"), ("4.0.8", "assembled")]
    assert [matrix_job.folder_name(b) for b in builds] == ["3.0.7", "4.0.8", "4.0.8-assembled"]
    for bad, words in (("4.0.8,4.0", "more than once"), (" , ", "names no release")):
        with pytest.raises(ValueError, match=words):
            matrix_job.parse_versions(bad)


def test_each_release_runs_the_main_job_with_its_own_broker(tmp_path):
    build = matrix_job.parse_versions("3.2")[0]
    cmd = matrix_job.run_command(build, matrix_job.MatrixOptions(versions=("3.2",), only=("ack",), timing_tolerance_ms=50.0), tmp_path)
    assert cmd[2:4] == ["pulsar_conformance", "run"]
    assert cmd[cmd.index("--broker-version") + 1] == "3.2" and "--no-report" in cmd and cmd[cmd.index("--only") + 1] == "ack"
    assert cmd[cmd.index("--out") + 1] == str(tmp_path) and cmd[cmd.index("--timing-tolerance-ms") + 1] == "50.0"


def test_a_matrix_continues_from_its_previous_run(tmp_path):
    """--rerun: the named releases and any whose previous run did not finish run again; the rest
    keep their recorded results (a campaign interrupted, or a release that met a harness error)."""
    import json

    builds = matrix_job.parse_versions("3.0.7,3.2.3,4.0.4,4.0.8")
    runs = [matrix_job.ReleaseRun(b, tmp_path / matrix_job.folder_name(b)) for b in builds]
    codes = {"3.0.7": 0, "3.2.3": 1, "4.0.4": 4}  # 4.0.8: never finished
    for run in runs:
        run.folder.mkdir()
        if run.build.release in codes:
            (run.folder / "summary-python.json").write_text("{}")
    (tmp_path / "matrix.json").write_text(json.dumps({"releases": [
        {"folder": str(r.folder), "exit_code": codes.get(r.build.release), "seconds": 10.0} for r in runs]}))
    said = []
    options = matrix_job.MatrixOptions(versions=("3.0.7", "3.2.3", "4.0.4", "4.0.8"), rerun=("3.2.3",))
    todo = matrix_job._reuse_previous(runs, options, tmp_path, said.append)
    assert [r.build.release for r in todo] == ["3.2.3", "4.0.4", "4.0.8"]
    assert runs[0].exit_code == 0 and any("3.0.7: reusing" in s for s in said)
    with pytest.raises(ValueError, match="matrix.json"):
        matrix_job._reuse_previous(runs, options, tmp_path / "nowhere", said.append)
