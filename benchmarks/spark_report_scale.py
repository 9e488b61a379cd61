"""Benchmark: the report's two heavy queries at several corpus sizes, Spark beside DuckDB, with memory peaks.

    python3 benchmarks/spark_report_scale.py [--rows 1000000,10000000,50000000] [--spark-master local[2]] [--keep DIR]

For each size a corpus is generated from the model (``spark_reports.generate``, not timed), then
each engine runs in a process of its own (so each memory peak is that engine's alone) the same two
queries as ``benchmarks/spark_report_10m.py`` (the model-vs-broker diff counted, and the per-rule
summary), twice: a first pass (cold) and a second (warm). Printed per size: rows, Parquet bytes,
both engines' first and second pass, the ratio, seconds per million rows (linear growth keeps it
flat), and the peaks: Spark's JVM (VmHWM of the SparkSubmit process) plus its Python driver, and
DuckDB's process (ru_maxrss). Results of the two engines are compared row for row at every size.
Figures are printed, never asserted; docs/performance.md records a run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _vm_hwm_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def child(engine: str, corpus: Path, master: str | None) -> dict:
    """One engine over ``corpus`` in this process: times, results digest, memory peaks (MiB)."""
    import hashlib

    from spark_report_10m import _norm, run_duckdb, run_spark

    if engine == "spark":
        from spark_reports.jobs.common import spark_jvms

        startup, times, diff, summary = run_spark(corpus, master)
        jvm_peak = sum(_vm_hwm_kib(pid) for pid in spark_jvms()) // 1024
        out = {"startup_s": startup, "jvm_peak_mib": jvm_peak}
    else:
        times, diff, summary = run_duckdb(corpus, os.cpu_count() or 2)
        out = {}
    # VmHWM, not ru_maxrss: a child's ru_maxrss starts at its parent's peak (kept across exec)
    out["python_peak_mib"] = _vm_hwm_kib(os.getpid()) // 1024
    out["times"] = times
    out["digest"] = hashlib.sha256(repr((_norm(diff), _norm(summary))).encode()).hexdigest()
    return out


def _run_child(engine: str, corpus: Path, master: str | None) -> dict:
    cmd = [sys.executable, __file__, "--child", engine, "--corpus", str(corpus)]
    if master:
        cmd += ["--spark-master", master]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{engine} on {corpus} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000,50000000")
    parser.add_argument("--spark-master", default=None)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", default=None, help="generate the corpora into DIR and keep them (reused when present)")
    parser.add_argument("--child", choices=("spark", "duckdb"), help=argparse.SUPPRESS)
    parser.add_argument("--corpus", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, Path(args.corpus), args.spark_master)))
        return 0

    from spark_reports.generate import GenerateConfig, generate

    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="corpus-scale-"))
    sizes = [int(x) for x in args.rows.split(",")]
    print(f"machine: {os.cpu_count()} cores; Spark {args.spark_master or 'local[2]'}; DuckDB {os.cpu_count()} threads")
    print(f"{'rows':>12} {'parquet MB':>10} | {'spark 1st':>9} {'spark 2nd':>9} {'s/M rows':>8} {'JVM MiB':>8} "
          f"{'py MiB':>6} | {'duck 1st':>8} {'duck 2nd':>8} {'s/M rows':>8} {'MiB':>6} | {'ratio 2nd':>9} agree")
    agree_all = True
    try:
        for rows in sizes:
            corpus = base / f"rows-{rows}"
            if not (corpus / "manifest.json").is_file():
                shutil.rmtree(corpus, ignore_errors=True)
                t0 = time.perf_counter()
                generate(corpus, GenerateConfig(rows=rows, seed=args.seed))
                print(f"  (generated {rows:,} rows in {time.perf_counter() - t0:.0f} s)", flush=True)
            size_mb = sum(p.stat().st_size for p in corpus.glob("part-*.parquet")) / 1e6
            s = _run_child("spark", corpus, args.spark_master)
            d = _run_child("duckdb", corpus, None)
            agree = s["digest"] == d["digest"]
            agree_all &= agree
            m = rows / 1e6
            print(f"{rows:>12,} {size_mb:>10.0f} | {s['times'][0]:>8.1f}s {s['times'][1]:>8.1f}s {s['times'][1] / m:>8.2f} "
                  f"{s['jvm_peak_mib']:>8} {s['python_peak_mib']:>6} | {d['times'][0]:>7.1f}s {d['times'][1]:>7.1f}s "
                  f"{d['times'][1] / m:>8.2f} {d['python_peak_mib']:>6} | {s['times'][1] / d['times'][1]:>8.2f}x {agree}",
                  flush=True)
        print(f"load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0 if agree_all else 1


if __name__ == "__main__":
    sys.exit(main())
