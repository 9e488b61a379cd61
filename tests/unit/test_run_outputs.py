"""What ``run`` leaves in ``--out``: never the previous run's results looking like this one's, and
always a summary.json with the overall verdict, the exit code and the errors."""

from __future__ import annotations

import json

from pulsar_conformance.cli import main


def _run(out, *target: str) -> int:
    return main(["run", *target, "--out", str(out), "--client", "python", "--no-report", "--fuzz-examples", "0",
                 "--only", "PLS-ACK-001"])


def _summary(out) -> dict:
    return json.loads((out / "summary.json").read_text(encoding="utf-8"))


def test_a_passing_run_says_so_in_summary_json(tmp_path):
    out = tmp_path / "out"
    assert _run(out, "--target", "model") == 0
    doc = _summary(out)
    assert (doc["overall"], doc["exit_code"], doc["errors"]) == ("PASS", 0, [])
    assert doc["rules"]["PLS-ACK-001"] == "PASS"


def test_a_run_that_cannot_reach_its_cluster_leaves_no_stale_results(tmp_path, capfd):
    out = tmp_path / "out"
    assert _run(out, "--target", "model") == 0
    (out / "notes.txt").write_text("the user's own file\n")
    old_junit = (out / "junit.xml").read_text(encoding="utf-8")
    # nothing listens on loopback port 9: the cluster cannot be reached after the model's cases ran
    code = _run(out, "--target", "pulsar://127.0.0.1:9", "--pulsar-admin-url", "http://127.0.0.1:9")
    err = capfd.readouterr().err
    assert code == 2, err
    assert "pass --target pulsar://" not in err, "the user gave --target already: the advice must be to check the cluster"
    assert "Check that the cluster is up" in err
    doc = _summary(out)
    assert (doc["overall"], doc["exit_code"]) == ("ERROR", 2)
    assert len(doc["errors"]) == 1 and "127.0.0.1:9" in doc["errors"][0] and "does not answer" in doc["errors"][0]
    assert not (out / "junit.xml").exists(), "the previous run's junit.xml would read as this run's"
    previous = tmp_path / "out.previous-1"
    assert (previous / "junit.xml").read_text(encoding="utf-8") == old_junit  # kept, not lost
    assert _summary(previous)["overall"] == "PASS"
    assert (out / "notes.txt").read_text() == "the user's own file\n"  # only what a run writes moves


def test_resume_keeps_the_results_in_place(tmp_path):
    out = tmp_path / "out"
    assert _run(out, "--target", "model") == 0
    assert main(["run", "--target", "model", "--out", str(out), "--client", "python", "--no-report", "--fuzz-examples",
                 "0", "--only", "PLS-ACK-001", "--resume"]) == 0
    assert not list(tmp_path.glob("out.previous*"))
    assert _summary(out)["overall"] == "PASS"


def test_reruns_keep_every_generation_and_the_crashed_runs_evidence(tmp_path):
    """A crashed run, then two reruns: each rerun moves the results before it into a new numbered
    generation, so the crashed run's summary and its broker log are still there after both."""
    out = tmp_path / "out"
    assert _run(out, "--target", "model") == 0
    first_junit = (out / "junit.xml").read_text(encoding="utf-8")
    # the crashed run: it could not reach its cluster, and (as an embedded run does) left a broker log
    assert _run(out, "--target", "pulsar://127.0.0.1:9", "--pulsar-admin-url", "http://127.0.0.1:9") == 2
    (out / "broker-logs").mkdir()
    (out / "broker-logs" / "broker-0.log").write_text("the broker's last words\n", encoding="utf-8")
    assert _run(out, "--target", "model") == 0
    assert _run(out, "--target", "model") == 0
    generations = sorted(p.name for p in tmp_path.glob("out.previous*"))
    assert generations == ["out.previous-1", "out.previous-2", "out.previous-3"]
    assert (tmp_path / "out.previous-1" / "junit.xml").read_text(encoding="utf-8") == first_junit
    crashed = tmp_path / "out.previous-2"
    assert _summary(crashed)["overall"] == "ERROR"
    assert (crashed / "broker-logs" / "broker-0.log").read_text(encoding="utf-8") == "the broker's last words\n"
    assert _summary(tmp_path / "out.previous-3")["overall"] == "PASS"
    assert _summary(out)["overall"] == "PASS"


def test_not_applicable_means_the_same_on_the_model_and_on_a_broker():
    """One vocabulary: for the same client and release, a rule is NOT_APPLICABLE on the model exactly
    when it is on a broker (a Java-only rule under the Python client is not applicable on both)."""
    from pulsar_conformance.targets import applies_for
    from reference_model.rules import RULES

    java_only = [r.id for r in RULES if set(r.applies_to.clients) == {"java"}]
    assert java_only, "no Java-only rule in the registry: pick another pair of clients for this test"
    for client in ("python", "java", "go", "mixed"):
        on_model = applies_for({"target": "model", "broker_version": "4.0.8", "client": client})
        on_broker = applies_for({"target": "embedded", "broker_version": "4.0.8", "client": client})
        differ = [r.id for r in RULES if r.status != "withdrawn" and on_model(r.id) != on_broker(r.id)]
        assert not differ, (client, differ)
    python_on_model = applies_for({"target": "model", "broker_version": "4.0.8", "client": "python"})
    assert not any(python_on_model(r) for r in java_only)


def test_a_java_only_rule_is_not_applicable_in_a_python_model_run(tmp_path):
    from reference_model.rules import RULES

    out = tmp_path / "out"
    assert main(["run", "--target", "model", "--out", str(out), "--client", "python", "--no-report",
                 "--fuzz-examples", "0"]) == 0
    rules = _summary(out)["rules"]
    java_only = [r.id for r in RULES if set(r.applies_to.clients) == {"java"} and r.status != "withdrawn"]
    assert {rules[r] for r in java_only} == {"NOT_APPLICABLE"}


def test_a_fuzz_stopped_before_it_began_says_its_run_id_and_how_to_resume(tmp_path, capfd, monkeypatch):
    """Ctrl-C while the fuzz is still being set up (a broker or Spark starting: the generator has not
    run, so the driver has nothing to announce) prints the run id and the command that resumes it."""
    import shlex

    import conformance.fuzz as fuzz_package

    def stopped_while_starting(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fuzz_package, "fuzz", stopped_while_starting)
    out = tmp_path / "fz"
    code = main(["fuzz", "--target", "model", "--examples", "5", "--out", str(out), "--no-progress"])
    err = capfd.readouterr().err
    assert code == 130, err
    line = next(line for line in err.splitlines() if "continue with: " in line)
    run_id = line.split("fuzz run ", 1)[1].split(";", 1)[0]
    assert shlex.split(line.split("continue with: ", 1)[1]) == [
        "pulsar-conformance", "fuzz", "--target", "model", "--examples", "5", "--out", str(out), "--no-progress",
        "--resume", run_id]


def test_the_time_left_follows_the_pace_so_far():
    from pulsar_conformance.run_job import time_left

    assert time_left(100.0, 10, 50) == "  ~8 min left"  # 10 s a case, 50 cases: 500 s
    assert time_left(3600.0, 10, 100) == "  ~10.0 h left"  # 360 s a case, 100 cases: 36 000 s
    assert time_left(10.0, 1, 3) == ""  # 30 s: not worth an estimate
    assert time_left(100.0, 10, 0) == "" and time_left(0.0, 0, 5) == ""
