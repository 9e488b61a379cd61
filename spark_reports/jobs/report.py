"""``pulsar-conformance report --outcomes DIR [--out DIR] [--spark-master URL] [--summary FILE]...``: the corpus report.

Reads an outcome corpus (``docs/outcome-corpus.md``), computes the figures with
``spark_reports.transforms`` and writes, into ``--out``:

- ``junit.xml``: JUnit XML (xunit2), one test case per rule x target x broker version x client
  (``reports/xunit2.py``);
- ``index.html``: a static, self-contained HTML report (``reports/html.py``);
- ``summary.json``: the machine-readable twin (the main job's shape, extended per version/client
  and per client);
- ``client-matrix.json`` / ``client-matrix.md``: the client x feature matrix
  (``reports/client_matrix.py``), from the corpus's verdicts, or from ``--summary FILE`` (the
  run's ``summary-<client>.json``), also a section of ``index.html``;
- ``data/report.json``: every figure the two documents were drawn from.

The job only reads, calls transforms and writes. Bad input (a missing folder, a part file of
another schema version or with other columns, a truncated or corrupt file) is refused with exit
status 2 and one line naming the file (docs/bad-input.md); the part files' footers are checked
with pyarrow before Spark starts, and a corrupt page Spark meets is mapped back to its part. The
JVM's own output goes to a log file, named when the job fails (exit 4). Nothing in ``--out`` is
replaced until the new report is complete: it is built in a temporary sibling folder, then
swapped in (the old report is removed last). Ctrl-C or SIGTERM stops Spark and ends its JVM
(exit 130 or 143).

Runs in local mode (``local[2]``) unless ``--spark-master URL`` names a cluster; on a cluster the
corpus path must be readable by the executors (a shared file system or object store), and the
outputs are small and written by the driver.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from conformance import interruption
from conformance.interruption import exit_code as interrupted_exit_code, signal_name
from conformance.verdicts import FAIL, INDETERMINATE, NOT_APPLICABLE, NOT_EXERCISED, PASS, is_judged, severity
from reference_model import releases
from spark_reports import transforms as T
from spark_reports.schemas import REGENERATE, CorpusError, check_corpus_folder

EXIT_OK, EXIT_BAD_INPUT, EXIT_HARNESS = 0, 2, 4
DEFAULT_OUT = "out/report"
MAX_DIFF_ROWS = 2000
MAX_TIMING_POINTS_PER_RULE = 3000


# --------------------------------------------------------------------------- collecting


def _rows(df: DataFrame, limit: int | None = None) -> list[dict[str, Any]]:
    if limit is not None:
        df = df.limit(limit)
    return [r.asDict(recursive=True) for r in df.collect()]


def combo_key(target: str | None, broker_version: str | None, client: str | None) -> str:
    return f"{target}|{broker_version}|{client}"


def collect_report_data(spark: Any, corpus_dir: Path, *, log: Any = None) -> dict[str, Any]:
    """Everything the writers need, as plain JSON-able data (the only Spark work of the job)."""
    from spark_reports.jobs.common import read_corpus

    say = log or (lambda s: None)
    t0 = time.monotonic()
    # one model column per release and client: the fuzz builder's model rows name the line only.
    # The corpus and its model-vs-broker pairs are kept (memory, spilling to disk) while the job runs:
    # a dozen actions below read them, and each would otherwise read the corpus and join it again.
    df = T.model_release_of_line(read_corpus(spark, corpus_dir)).persist(StorageLevel.MEMORY_AND_DISK)
    diff = T.model_vs_broker(df).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        return _collect(spark, corpus_dir, df, diff, say, t0)
    finally:
        diff.unpersist()
        df.unpersist()


def _collect(spark: Any, corpus_dir: Path, df: Any, diff: Any, say: Any, t0: float) -> dict[str, Any]:
    """``collect_report_data`` over the kept corpus ``df`` and its model-vs-broker pairs ``diff``."""
    say("summary by rule, anomaly, version, client, profile")
    summary = _rows(T.summarise(df))
    say("combos and runs")
    combos = _rows(df.groupBy("target", "broker_version", "client").agg(
        F.count(F.lit(1)).alias("rows"), F.countDistinct("run_id").alias("runs"),
        F.array_sort(F.collect_set("client_version")).alias("client_versions"),
        F.array_sort(F.collect_set("profile")).alias("profiles")))
    say("model vs broker diff")
    diff_counts = _rows(T.diff_counts(diff))
    # per divergent row, the rules that failed there: which rows a known deviation explains
    divergent_rules = _rows(T.divergent_rule_counts(diff).orderBy("target", "broker_version", "client", "trace_id"))
    differing = diff.filter(F.col("diff") != T.SAME)
    diff_rows = _rows(T.with_model_observation(differing.orderBy("run_id", "trace_id", "broker_version", "client", "step")
                                               .limit(MAX_DIFF_ROWS), df).orderBy("run_id", "trace_id", "broker_version", "client", "step"))
    say("flaky traces")
    flaky = _rows(T.flaky_traces(df).orderBy("trace_id", "target", "broker_version", "client"))
    say("minimal witnesses")
    witnesses = _rows(T.minimal_witnesses(df))
    say("trends")
    trend = _rows(T.trend_by_run(df).orderBy("run_id"))
    say("timing")
    timing = _rows(T.timing_points(diff))
    say("unobserved steps")
    unobserved = _rows(T.unobserved_steps(df).groupBy("target", "broker_version", "client")
                       .agg(F.count(F.lit(1)).alias("steps")))
    versions = sorted({c["broker_version"] for c in combos if c["target"] != T.MODEL and c["broker_version"]},
                      key=releases.sort_key)
    version_diffs = []
    for base, other in zip(versions, versions[1:]):
        say(f"version diff {base} vs {other}")
        # changed steps are bounded by the distinct (trace, step, client, profile): collect them all
        changed = _rows(T.version_vs_version(df, base, other).filter("changed"))
        changed.sort(key=lambda r: (r["trace_id"], r["client"] or "", r["step"]))
        version_diffs.append({"base": base, "other": other, "changed_steps": len(changed), "examples": changed[:50]})
    # the rows of every broker witness trace (each failing rule's minimal witness per target,
    # version and client: the xunit2 failures list theirs), every target of that run (the model's
    # rows give the listing its predictions); bounded by failing rules x combos
    rule_witness = _overall_witnesses(witnesses)
    wanted = sorted({(w["run_id"], w["trace_id"]) for w in witnesses if w["target"] != T.MODEL}
                    | {(w["run_id"], w["trace_id"]) for w in rule_witness.values()})
    witness_rows: list[dict[str, Any]] = []
    if wanted:
        keys = [f"{r}\u0000{t}" for r, t in wanted]
        witness_rows = _rows(df.filter(F.concat_ws("\u0000", "run_id", "trace_id").isin(keys))
                             .orderBy("run_id", "trace_id", "target", "broker_version", "client", "step"))
    manifest = _read_manifest(corpus_dir)
    return {
        "corpus": str(corpus_dir),
        "generated_at": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "seconds": round(time.monotonic() - t0, 1),
        "spark_version": spark.version,
        "spark_master": spark.sparkContext.master,
        "manifest": {k: manifest[k] for k in ("generator", "generator_id", "config", "persistent") if k in manifest} if manifest else None,
        "combos": sorted(combos, key=lambda c: (c["target"] != T.MODEL, c["target"], releases.sort_key(c["broker_version"]), c["client"] or "")),
        "summary": summary,
        "diff_counts": diff_counts,
        "divergent_rules": divergent_rules,
        "diff_rows": diff_rows,
        "flaky": flaky,
        "witnesses": witnesses,
        "rule_witness": rule_witness,
        "witness_rows": witness_rows,
        "trend": trend,
        "timing": _sample_timing(timing),
        "timing_total": len(timing),
        "unobserved": unobserved,
        "version_diffs": version_diffs,
    }


def _overall_witnesses(witnesses: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per rule: the shortest failing broker trace over every target, version and client."""
    best: dict[str, dict[str, Any]] = {}
    for w in witnesses:
        if w["target"] == T.MODEL:
            continue
        key = (w["length"], w["trace_id"], w["run_id"], w["broker_version"] or "", w["client"] or "", w["step"])
        cur = best.get(w["rule_id"])
        if cur is None or key < (cur["length"], cur["trace_id"], cur["run_id"], cur["broker_version"] or "", cur["client"] or "", cur["step"]):
            best[w["rule_id"]] = w
    return dict(sorted(best.items()))


def _sample_timing(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every non-PASS point, plus an even sample of the PASS ones, per rule (a figure, not a table)."""
    out = []
    by_rule: dict[str, list[dict[str, Any]]] = {}
    for p in points:
        by_rule.setdefault(p["rule_id"], []).append(p)
    for rule_id, pts in sorted(by_rule.items()):
        pts.sort(key=lambda p: (p["run_id"], p["trace_id"], p["broker_version"] or "", p["client"] or "", p["step"]))
        bad = [p for p in pts if p["verdict"] != PASS]
        good = [p for p in pts if p["verdict"] == PASS]
        room = max(0, MAX_TIMING_POINTS_PER_RULE - len(bad))
        stride = max(1, -(-len(good) // room)) if room else len(good) + 1
        out.extend(bad + good[::stride])
    return out


def _read_manifest(corpus_dir: Path) -> dict[str, Any] | None:
    path = Path(corpus_dir) / "manifest.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


# --------------------------------------------------------------------------- rule matrix


def rule_matrix(data: dict[str, Any]) -> dict[str, Any]:
    """Per combo, one verdict per active rule: NOT_APPLICABLE (registry ``applies_to``), else the
    worst verdict of the steps that judged it, else NOT_EXERCISED. Plus coverage figures."""
    from reference_model.rules import active_rules, applies
    from reports.html import vendors_in

    rules = active_rules()
    judged: dict[str, dict[str, str]] = {}
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for s in data["summary"]:
        key = combo_key(s["target"], s["broker_version"], s["client"])
        verdict = FAIL if s["fail"] else INDETERMINATE if s["indeterminate"] else PASS
        cur = judged.setdefault(key, {}).get(s["rule_id"])
        if cur is None or severity(verdict) > severity(cur):
            judged[key][s["rule_id"]] = verdict
        c = counts.setdefault(key, {}).setdefault(s["rule_id"], {"rows": 0, "fail": 0, "indeterminate": 0})
        c["rows"] += s["rows"]
        c["fail"] += s["fail"]
        c["indeterminate"] += s["indeterminate"]
    matrix: dict[str, dict[str, str]] = {}
    for combo in data["combos"]:
        key = combo_key(combo["target"], combo["broker_version"], combo["client"])
        row = {}
        vendors = vendors_in(combo.get("profiles"))
        for r in rules:
            if not any(_applies(applies, r, combo["broker_version"], combo["client"], v) for v in vendors):
                row[r.id] = NOT_APPLICABLE
            else:
                row[r.id] = judged.get(key, {}).get(r.id, NOT_EXERCISED)
        matrix[key] = row
    broker_keys = [k for k in matrix if not k.startswith(T.MODEL + "|")]
    exercised = sorted({r for k in broker_keys for r, v in matrix[k].items() if is_judged(v)})
    exercised_model = sorted({r for k in matrix if k.startswith(T.MODEL + "|") for r, v in matrix[k].items() if is_judged(v)})
    failing = sorted({r for k in broker_keys for r, v in matrix[k].items() if v == FAIL})
    # per client (over its targets and versions): what was exercised, what can be, what fails
    by_client: dict[str, dict[str, Any]] = {}
    for combo in data["combos"]:
        if combo["target"] == T.MODEL:
            continue
        row = matrix[combo_key(combo["target"], combo["broker_version"], combo["client"])]
        c = by_client.setdefault(combo["client"] or "", {"exercised": set(), "applicable": set(), "failing": set()})
        c["exercised"] |= {r for r, v in row.items() if is_judged(v)}
        c["applicable"] |= {r for r, v in row.items() if v != NOT_APPLICABLE}
        c["failing"] |= {r for r, v in row.items() if v == FAIL}
    coverage_by_client = {
        client: {"exercised": len(c["exercised"]), "of": len(rules), "applicable": len(c["applicable"]),
                 "exercised_rules": sorted(c["exercised"]), "failing_rules": sorted(c["failing"]),
                 "not_exercised_rules": [r.id for r in rules if r.id in c["applicable"] and r.id not in c["exercised"]]}
        for client, c in sorted(by_client.items())}
    return {
        "rules": [{"id": r.id, "area": r.area, "title": r.title, "status": r.status, "quote": r.quote,
                   "source": r.source, "clients": list(r.applies_to.clients), "brokers": r.applies_to.brokers} for r in rules],
        "matrix": matrix,
        "counts": counts,
        "coverage": {"exercised": len(exercised), "of": len(rules), "exercised_rules": exercised,
                     "not_exercised_rules": [r.id for r in rules if r.id not in exercised],
                     "exercised_by_model": len(exercised_model), "by_client": coverage_by_client},
        "failing_rules": failing,
    }


def _applies(applies: Any, rule: Any, broker_version: str | None, client: str | None, vendor: str = "apache") -> bool:
    """Registry ``applies`` for a combo under the vendor profile ``vendor``. A cross-client trace (client
    ``mixed``) has handles of both clients, so a rule applies to it when it applies to any client the
    registry knows."""
    from reference_model.rules import CLIENTS

    try:
        if (client or "").lower() == "mixed":
            return any(applies(rule, broker_version=broker_version or "4.0", client=c, vendor=vendor) for c in CLIENTS)
        return applies(rule, broker_version=broker_version or "4.0", client=(client or "python"), vendor=vendor)
    except ValueError:
        return True  # an unreadable version: let the data speak


def summary_json(data: dict[str, Any], matrix: dict[str, Any]) -> dict[str, Any]:
    """``summary.json``: the main job's shape (``target``, ``broker_version``, ``client``, ``rules``)
    for the brokers taken together, extended with one entry per target x version x client, the
    model's entries under ``reference``, and the model-vs-broker diff's figures
    (``reports.html.model_vs_broker_figures``)."""
    from reports.html import model_vs_broker_figures

    def entry(combo: dict[str, Any]) -> dict[str, Any]:
        key = combo_key(combo["target"], combo["broker_version"], combo["client"])
        rules = matrix["matrix"][key]
        counts: dict[str, int] = {}
        for v in rules.values():
            counts[v] = counts.get(v, 0) + 1
        return {"target": combo["target"], "broker_version": combo["broker_version"], "client": combo["client"],
                "client_version": ",".join(combo.get("client_versions") or []) or None,
                "rules": rules, "counts": counts, "rows": combo["rows"], "runs": combo["runs"]}

    brokers = [entry(c) for c in data["combos"] if c["target"] != T.MODEL]
    reference = [entry(c) for c in data["combos"] if c["target"] == T.MODEL]
    overall: dict[str, str] = {}
    for e in brokers:
        for r, v in e["rules"].items():
            if r not in overall or severity(v) > severity(overall[r]):
                overall[r] = v
    counts: dict[str, int] = {}
    for v in overall.values():
        counts[v] = counts.get(v, 0) + 1
    by_client: dict[str, dict[str, Any]] = {}
    for e in brokers:
        c = by_client.setdefault(e["client"] or "", {"broker_versions": [], "rules": {}})
        if e["broker_version"] and e["broker_version"] not in c["broker_versions"]:
            c["broker_versions"].append(e["broker_version"])
        for r, v in e["rules"].items():
            if r not in c["rules"] or severity(v) > severity(c["rules"][r]):
                c["rules"][r] = v
    for c in by_client.values():
        c["broker_versions"].sort(key=releases.sort_key)
        c["counts"] = {}
        for v in c["rules"].values():
            c["counts"][v] = c["counts"].get(v, 0) + 1
    targets = sorted({e["target"] for e in brokers})
    versions = sorted({e["broker_version"] for e in brokers if e["broker_version"]}, key=releases.sort_key)
    clients = sorted({e["client"] for e in brokers if e["client"]})
    return {
        "target": targets[0] if len(targets) == 1 else ",".join(targets) or None,
        "broker_version": versions[0] if len(versions) == 1 else ",".join(versions) or None,
        "client": clients[0] if len(clients) == 1 else ",".join(clients) or None,
        "rules": overall,
        "counts": counts,
        "coverage": {k: matrix["coverage"][k] for k in ("exercised", "of")},
        "by_version_client": brokers,
        "by_client": dict(sorted(by_client.items())),
        "reference": reference,
        "flaky_traces": len(data["flaky"]),
        "model_vs_broker": model_vs_broker_figures(data.get("diff_counts", [])),
        "corpus": data["corpus"],
        "rows": sum(c["rows"] for c in data["combos"]),
    }


# --------------------------------------------------------------------------- writing


def client_summaries(data: dict[str, Any], matrix: dict[str, Any]) -> list[dict[str, Any]]:
    """The corpus's verdicts as ``summary.json`` documents, one per broker target x version x
    client (the input ``reports.client_matrix.build`` takes)."""
    from reports.client_matrix import CLIENT_ORDER

    return [e for e in summary_json(data, matrix)["by_version_client"] if e.get("client") in CLIENT_ORDER]


def run_summary(summaries: list[dict[str, Any]] | None, sources: list[str] | None = None) -> dict[str, Any] | None:
    """The run's ``summary.json`` for the page's banner and figures (reports/headline.py), given the
    ``--summary`` documents (one ``summary-<client>.json`` per client of a run): the ``summary.json``
    that ``pulsar-conformance run`` wrote beside them when there is one whose ``by_client`` has every
    one of their clients (it alone carries the run's ``overall``, ``exit_code`` and ``reasons``);
    else the documents as that file reads (the first client's verdicts, ``by_client`` with each).
    None without any."""
    if not summaries:
        return None
    clients = {str(doc.get("client")) for doc in summaries}
    for source in sources or ():
        primary = Path(source).with_name("summary.json")
        if primary == Path(source) or not primary.is_file():
            continue
        try:
            doc = json.loads(primary.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("by_client"), dict) and clients <= set(doc["by_client"]):
            return doc
    by_client = {str(doc.get("client")): doc for doc in summaries}
    return {**summaries[0], "by_client": by_client}


def write_report(data: dict[str, Any], out_dir: Path, *, traces: dict[str, Any] | None = None,
                 summaries: list[dict[str, Any]] | None = None, summary_sources: list[str] | None = None) -> dict[str, Path]:
    """Write every output into ``out_dir`` (which must be new and empty: the caller swaps it in).

    The client x feature matrix (``client-matrix.json``/``.md``, and a section of the HTML) is
    drawn from ``summaries`` (the run's ``summary.json`` documents) when given, else from the
    corpus's own verdicts per target x version x client."""
    from reports import client_matrix
    from reports.html import write_html
    from reports.xunit2 import write_xunit2

    matrix = rule_matrix(data)
    bands = [doc["timing"] for doc in summaries or () if isinstance(doc.get("timing"), dict)]
    if bands and "timing_bands" not in data:
        data = {**data, "timing_bands": bands}  # the bands each live run was judged with, for the timing section
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "data").mkdir(exist_ok=True)
    if summaries:
        cm = client_matrix.build(summaries, sources=summary_sources)
        caption = "Verdicts: the run's summary.json documents."
    else:
        derived = client_summaries(data, matrix)
        cm = client_matrix.build(derived, sources=[f"corpus: {e['target']} {e['broker_version']} / {e['client']}" for e in derived]) \
            if derived else None
        caption = "Verdicts: this corpus, per target, broker version and client."
    from reports import release_matrix

    versions = {c["broker_version"] for c in data["combos"] if c["target"] != T.MODEL and c["broker_version"]}
    rm = release_matrix.build(matrix, summaries=summaries or ()) if len(versions) > 1 else None
    paths = {
        "junit": write_xunit2(out_dir / "junit.xml", data, matrix, traces=traces),
        "html": write_html(out_dir / "index.html", data, matrix, traces=traces, client_matrix=cm, client_matrix_caption=caption,
                           release_matrix=rm, summary=run_summary(summaries, summary_sources)),
    }
    if rm is not None:
        paths["release_matrix"] = out_dir / "release-matrix.json"
        paths["release_matrix"].write_text(json.dumps(rm, indent=1) + "\n", encoding="utf-8")
        (out_dir / "release-matrix.txt").write_text(release_matrix.text(rm) + "\n", encoding="utf-8")
    if cm is not None:
        paths["client_matrix_json"], paths["client_matrix_md"] = client_matrix.write(cm, out_dir)
    summary = summary_json(data, matrix)
    paths["summary"] = out_dir / "summary.json"
    paths["summary"].write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    paths["data"] = out_dir / "data" / "report.json"
    paths["data"].write_text(json.dumps({**data, "matrix": matrix}, indent=1, default=str) + "\n", encoding="utf-8")
    return paths


def swap_in(tmp: Path, out: Path) -> None:
    """Replace ``out`` by the finished ``tmp`` folder; the old report is removed only afterwards."""
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{uuid.uuid4().hex[:8]}")
        os.replace(out, old)
    os.replace(tmp, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def known_traces() -> dict[str, Any]:
    """Trace ops by trace id, from the conformance cases (for the sequence diagrams' handles)."""
    try:
        from conformance.case_files import discover_cases

        return {c.id: c.trace for c in discover_cases()}
    except Exception:  # noqa: BLE001 - diagrams fall back to one client lifeline
        return {}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="pulsar-conformance report",
                                     description="Report over an outcome corpus: JUnit XML (xunit2), HTML, summary.json")
    parser.add_argument("--outcomes", required=True, metavar="DIR", help="the outcome corpus folder (part-*.parquet)")
    parser.add_argument("--out", default=DEFAULT_OUT, metavar="DIR", help=f"where to write the report (default {DEFAULT_OUT})")
    parser.add_argument("--spark-master", default=None, metavar="URL",
                        help="Spark master URL (default local[2]); e.g. spark://host:7077")
    parser.add_argument("--summary", action="append", default=[], metavar="FILE",
                        help="a summary.json of pulsar-conformance run (repeatable, e.g. summary-python.json "
                             "summary-java.json summary-mixed.json): draw the client x feature matrix from these "
                             "instead of the corpus's verdicts")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args(argv)
    say = (lambda s: None) if args.quiet else (lambda s: print(f"report: {s}", file=sys.stderr, flush=True))

    corpus = Path(args.outcomes)
    try:
        parts = check_corpus_folder(corpus)
    except CorpusError as err:
        print(f"pulsar-conformance report: {' '.join(str(err).split())}", file=sys.stderr)
        return EXIT_BAD_INPUT
    summaries: list[dict[str, Any]] | None = None
    sources: list[str] | None = None
    if args.summary:
        from reports import client_matrix

        try:
            summaries, sources = client_matrix.load_summaries(args.summary)
            client_matrix.build(summaries, sources=sources)  # refuse bad input before Spark starts
        except ValueError as err:
            print(f"pulsar-conformance report: {' '.join(str(err).split())}", file=sys.stderr)
            return EXIT_BAD_INPUT
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{uuid.uuid4().hex[:8]}")
    say(f"{len(parts)} part files in {corpus}; building into {tmp}")
    from spark_reports.jobs.common import session, spark_jvms, spark_log_to, stop_session

    log = Path(tempfile.gettempdir()) / f"pulsar-conformance-report-{os.getpid()}.log"
    spark, owned, keep_log, jvms_before = None, False, False, spark_jvms()
    if not logging.getLogger().handlers:  # py4j logs an interrupted call on the root logger: not for the terminal
        logging.getLogger().addHandler(logging.NullHandler())
    # SIGTERM raises (as Ctrl-C does), so the finally below stops Spark. The helper is being renamed
    # (sigterm_raises -> interruptible) in conformance/interruption.py: take whichever is there.
    interruptible = getattr(interruption, "interruptible", None) or getattr(interruption, "sigterm_raises")
    with interruptible():
        try:
            with spark_log_to(log) as owned:  # the JVM's own output (launcher notes, log4j) goes to the log file
                spark = session(args.spark_master)
            data = collect_report_data(spark, corpus, log=say)
            paths = write_report(data, tmp, traces=known_traces(), summaries=summaries, summary_sources=sources)
            swap_in(tmp, out)  # the old report stays whole until the new one is complete
        except CorpusError as err:
            print(f"pulsar-conformance report: {' '.join(str(err).split())}", file=sys.stderr)
            return EXIT_BAD_INPUT
        except KeyboardInterrupt as err:
            print(f"pulsar-conformance report: interrupted ({signal_name(err)}); {out} is unchanged", file=sys.stderr)
            return interrupted_exit_code(err)
        except Exception as err:  # noqa: BLE001 - a bad part Spark found, else the job failing (exit 4)
            bad = bad_part(err, parts)
            if bad is not None:
                print(f"pulsar-conformance report: {bad}: Spark could not read this part (a corrupt page?); {REGENERATE}",
                      file=sys.stderr)
                return EXIT_BAD_INPUT
            keep_log = True
            print(f"pulsar-conformance report: the report job failed ({type(err).__name__}: {_first_line(err)}); "
                  f"{out} is unchanged; Spark's log: {log} (exit 4, a harness error)", file=sys.stderr)
            return EXIT_HARNESS
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            if owned:
                stop_session(spark, spare=jvms_before)  # no JVM outlives the job, whatever ended it
            if not keep_log:
                log.unlink(missing_ok=True)
    for name, path in paths.items():
        say(f"wrote {out / path.relative_to(tmp)} ({name})")
    return EXIT_OK


def bad_part(err: BaseException, parts: list[Path]) -> Path | None:
    """The part file a Spark read error names (FAILED_READ_FILE and friends), or None when the
    error is not about reading a file."""
    text = str(err)
    if not any(s in text for s in ("FAILED_READ_FILE", "CANNOT_READ_FILE_FOOTER", "is not a Parquet file",
                                   "ParquetDecodingException")):
        return None
    for part in parts:
        if str(part.resolve()) in text or part.name in text:
            return part
    found = re.search(r"file:(?://)?(/\S+?\.parquet)", text)
    return Path(found.group(1)) if found else None


def _first_line(err: BaseException) -> str:
    for line in str(err).splitlines():
        if line.strip():
            return line.strip()[:300]
    return type(err).__name__


if __name__ == "__main__":
    sys.exit(main())
