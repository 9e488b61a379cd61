"""Benchmark: diff and summarise N outcome rows (default 10 M) with Spark local mode and DuckDB.

Prints the wall time of each engine for the same two results, checks that the two engines agree
row for row, and prints the ratio. The corpus is generated from the model
(``spark_reports.generate``) unless ``--corpus DIR`` names an existing one.

    python3 benchmarks/spark_report_10m.py [--rows 10000000] [--corpus DIR] [--spark-master URL]

What is timed, per engine (the same queries; Spark's plan is ``spark_reports.transforms``):
1. the model-vs-broker diff counted per target, broker version, client, diff and verdict
   (``model_vs_broker`` + ``diff_counts``: a join on run, trace, step, and null-safely line and
   client kind; not on profile since issue 20);
2. the summary per rule, anomaly, target, version, client and profile (``summarise``: explode).
Each engine runs the two queries twice (first pass: cold, Spark's JIT warming up; second
pass: warm); Spark's times exclude starting the JVM (printed separately), DuckDB's include
connecting. DuckDB's SQL is written the way Spark executes the transforms (plain equality on
the NOT NULL keys, IS NOT DISTINCT FROM on the nullable ones, observations by 64-bit hash), and
the two engines' results are compared row for row.
Targets: Spark under 60 s for 10 M rows, within 3x of DuckDB. Not an assertion: a figure.

Measured with corpus schema v1 (2 cores, 24 GiB, Spark 4.0.5 local[2], DuckDB 2.0.0, 10 M
generated rows, 61 MB of zstd Parquet in 11 parts; the machine shared with other jobs, load
average 5-7):
Spark 34.3 s first pass / 18.2 s second, DuckDB 8.0 s / 4.7 s: 4.3x / 3.8x. What mattered:
asserting the NOT NULL keys non-null so null-safe equality becomes plain equi-join keys (2x on
the join), comparing observations by fingerprint (only 8 bytes per row cross the shuffle), and
counting the summary by (rule_ids, anomalies) arrays before exploding them (3-4x on the summary).
Shuffle partitions (2/4/8/16), shuffled-hash vs sort-merge join, and GC choice changed little;
turning shuffle compression off made it 2x slower.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

def _duckdb_line() -> str:
    """``transforms.line_of`` in DuckDB SQL, built from the same table (``releases.LINE_SPANS``)."""
    from reference_model import releases

    v = "lower(trim({v}))"
    major, minor = f"regexp_extract({v}, '^(\\d+)', 1)", f"regexp_extract({v}, '^\\d+\\.(\\d+)', 1)"
    lines = ", ".join(f"'{line}'" for line in releases.MODEL_LINES)
    whens = [f"WHEN {{v}} IS NULL OR trim({{v}}) = '' THEN '{releases.DEFAULT_LINE}'", f"WHEN {v} IN ({lines}) THEN {v}"]
    for line, line_major, lowest, highest in releases.LINE_SPANS:
        in_line = f"{major} = '{line_major}' AND {minor} <> '' AND TRY_CAST({minor} AS INTEGER) >= {lowest}"
        if highest is not None:
            in_line += f" AND TRY_CAST({minor} AS INTEGER) <= {highest}"
        if line.endswith(".x"):
            in_line = f"{major} = '{line_major}' AND ({minor} = '' OR ({in_line}))"
        whens.append(f"WHEN {in_line} THEN '{line}'")
    return "CASE\n  " + "\n  ".join(whens) + f"\n  ELSE {v} END"


DUCKDB_LINE = _duckdb_line()
DUCKDB_KIND = ("CASE WHEN starts_with(lower(trim({c})), 'java') THEN 'java' WHEN starts_with(lower(trim({c})), 'go') THEN 'go' "
               "WHEN lower(trim({c})) = 'mixed' THEN 'mixed' ELSE 'cpp' END")


def duckdb_queries(glob: str, *, exact: bool = False) -> tuple[str, str]:
    """The same two results in DuckDB SQL, written as Spark runs them: plain equality on the
    NOT NULL keys, IS NOT DISTINCT FROM on the nullable ones, observations by 64-bit hash
    (``exact``: by the strings)."""
    line_b, kind_b = DUCKDB_LINE.format(v="b.broker_version"), DUCKDB_KIND.format(c="b.client")
    line_m, kind_m = DUCKDB_LINE.format(v="broker_version"), DUCKDB_KIND.format(c="client")
    obs_m = "observation_key" if exact else "CASE WHEN observation_key IS NULL THEN NULL ELSE hash(observation_key) END"
    obs_b = "b.observation_key" if exact else "CASE WHEN b.observation_key IS NULL THEN NULL ELSE hash(b.observation_key) END"
    diff = f"""
    WITH c AS (SELECT * FROM read_parquet('{glob}')),
    m AS (SELECT run_id, trace_id, step, {line_m} AS line, {kind_m} AS kind,
                 outcome_status AS m_status, {obs_m} AS m_obs, TRUE AS has_model
          FROM c WHERE target = 'model')
    SELECT b.target, b.broker_version, b.client,
           CASE WHEN m.has_model IS NULL THEN 'no_prediction'
                WHEN b.outcome_status IS NOT DISTINCT FROM m.m_status
                 AND {obs_b} IS NOT DISTINCT FROM m.m_obs THEN 'same'
                ELSE 'differs' END AS diff,
           b.verdict, count(*) AS rows
    FROM c b LEFT JOIN m
      ON b.run_id = m.run_id AND b.trace_id = m.trace_id
     AND b.step = m.step AND {line_b} IS NOT DISTINCT FROM m.line
     AND {kind_b} IS NOT DISTINCT FROM m.kind
    WHERE b.target <> 'model'
    GROUP BY ALL"""
    summary = f"""
    WITH e AS (
      SELECT unnest(rule_ids) AS rule_id, failed_rule_ids, indeterminate_rule_ids, anomalies,
             target, broker_version, client, profile
      FROM read_parquet('{glob}') WHERE len(rule_ids) > 0),
    g AS (
      SELECT *, coalesce(list_contains(failed_rule_ids, rule_id), false) AS failed,
             coalesce(list_contains(indeterminate_rule_ids, rule_id), false)
               AND NOT coalesce(list_contains(failed_rule_ids, rule_id), false) AS unknown
      FROM e),
    f AS (
      SELECT rule_id,
             unnest(CASE WHEN (failed OR unknown) AND anomalies IS NOT NULL AND len(anomalies) > 0
                         THEN anomalies ELSE [NULL::VARCHAR] END) AS anomaly,
             target, broker_version, client, profile, failed, unknown FROM g)
    SELECT rule_id, anomaly, target, broker_version, client, profile, count(*) AS rows,
           count(*) FILTER (WHERE NOT failed AND NOT unknown) AS pass, count(*) FILTER (WHERE failed) AS fail,
           count(*) FILTER (WHERE unknown) AS indeterminate
    FROM f GROUP BY ALL"""
    return diff, summary


def _norm(rows: list[tuple]) -> list[tuple]:
    return sorted((tuple("" if v is None else v for v in r) for r in rows), key=repr)


def run_duckdb(corpus: Path, threads: int, passes: int = 2) -> tuple[list[float], list[tuple], list[tuple]]:
    """Wall time of each pass (connect + both queries), and the results of the last."""
    import duckdb

    times = []
    for _ in range(passes):
        t0 = time.perf_counter()
        con = duckdb.connect()
        con.execute(f"SET threads = {threads}")
        diff_q, summary_q = duckdb_queries(str(corpus / "part-*.parquet"))
        diff = con.execute(diff_q).fetchall()
        summary = con.execute(summary_q).fetchall()
        con.close()
        times.append(time.perf_counter() - t0)
    return times, diff, summary


def run_spark(corpus: Path, master: str | None, passes: int = 2) -> tuple[float, list[float], list[tuple], list[tuple]]:
    """JVM start time, the wall time of each pass (read + diff + summary), and the results."""
    from spark_reports import transforms as T
    from spark_reports.jobs.common import read_corpus, session

    t0 = time.perf_counter()
    spark = session(master, app="spark-report-10m")
    spark.range(1).collect()  # JVM up
    startup = time.perf_counter() - t0
    times = []
    for _ in range(passes):
        t1 = time.perf_counter()
        df = read_corpus(spark, corpus)
        diff = [tuple(r) for r in T.diff_counts(T.model_vs_broker(df)).collect()]
        summary = [tuple(r) for r in T.summarise(df).collect()]
        times.append(time.perf_counter() - t1)
    return startup, times, diff, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--corpus", help="an existing corpus folder (else one is generated into a temporary folder)")
    parser.add_argument("--spark-master", default=None)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="keep the generated corpus (its path is printed)")
    args = parser.parse_args(argv)

    tmp = None
    if args.corpus:
        corpus = Path(args.corpus)
    else:
        from spark_reports.generate import GenerateConfig, generate

        tmp = Path(tempfile.mkdtemp(prefix="corpus-bench-"))
        corpus = tmp
        t0 = time.perf_counter()
        manifest = generate(corpus, GenerateConfig(rows=args.rows, seed=args.seed))
        print(f"generated {manifest['rows']:,} rows ({manifest['runs']} runs, {manifest['parts']} parts) "
              f"in {time.perf_counter() - t0:.1f} s into {corpus}")
    try:
        import pyarrow.parquet as pq

        rows = sum(pq.ParquetFile(p).metadata.num_rows for p in corpus.glob("part-*.parquet"))
        import os

        threads = os.cpu_count() or 2
        startup, spark_t, s_diff, s_summary = run_spark(corpus, args.spark_master)
        duck_t, d_diff, d_summary = run_duckdb(corpus, threads)
        agree = _norm(s_diff) == _norm(d_diff) and _norm(s_summary) == _norm(d_summary)
        differing = sum(r[-1] for r in s_diff if r[3] != "same")
        print(f"rows: {rows:,}")
        print(f"spark ({args.spark_master or 'local[2]'}): first pass {spark_t[0]:.2f} s, second pass {spark_t[1]:.2f} s "
              f"(JVM start {startup:.1f} s not included; the first pass includes JIT warm-up)")
        print(f"duckdb ({threads} threads): first pass {duck_t[0]:.2f} s, second pass {duck_t[1]:.2f} s")
        print(f"ratio spark/duckdb: first pass {spark_t[0] / duck_t[0]:.2f}x, second pass {spark_t[1] / duck_t[1]:.2f}x "
              f"(targets: spark < 60 s, ratio <= 3x)")
        print(f"results agree: {agree} ({len(s_diff)} diff groups, {len(s_summary)} summary groups, "
              f"{differing:,} broker rows differ from the model)")
        manifest_path = corpus / "manifest.json"
        if manifest_path.is_file():
            import json

            expected = json.loads(manifest_path.read_text())["expected"]["divergent_rows"]
            print(f"injected divergent rows (manifest): {expected:,}; found: {differing:,}; "
                  f"{'exact' if expected == differing else 'MISMATCH'}")
            agree = agree and expected == differing
        try:
            import os as _os

            print(f"load average during the run: {', '.join(f'{x:.1f}' for x in _os.getloadavg())} on {threads} cores")
        except OSError:
            pass
        return 0 if agree else 1
    finally:
        if tmp is not None and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp is not None:
            print(f"corpus kept at {tmp}")


if __name__ == "__main__":
    sys.exit(main())
