"""Campaign: millions of model-judged ops generated on a Spark standalone cluster, then reported.

    python3 benchmarks/spark_cluster_fuzz.py [--ops 10000000] [--workers 2] [--seed 11] [--out DIR]
                                             [--check-traces 20000] [--master spark://HOST:7077]

Starts a master and ``--workers`` workers (one core each) on loopback from pyspark's distribution
(``spark_reports.standalone``) unless ``--master`` names a running cluster, then runs the user's
command against it:

    pulsar-conformance fuzz --target model --engine spark --spark-master URL --examples N --seed S

with N traces enough for ``--ops`` model-judged ops (estimated from a local sample of 500 traces,
the same seeds), then ``pulsar-conformance report --outcomes OUT/corpus --spark-master URL``. Then
the first ``--check-traces`` traces are run again by the local engine (``--workers 2``, no Spark)
and their corpus parts are compared chunk by chunk (``conformance.corpus.part_digests``) with the
cluster's: the same seeds must give the same rows. Prints traces, ops, rows, each stage's wall
time and rate, the failures found (the model FAILing its own checker: findings, saved under
OUT/campaign/regressions), and the comparison. The numbers, not assertions; exit 1 if the comparison
fails or the campaign judged fewer ops than asked. ``--reuse`` keeps a finished campaign in ``--out``.
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
from contextlib import nullcontext
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHUNK = 500  # conformance.fuzz.driver.fuzz_model_fast's chunk


def _cli(env: dict, *args: str, ok: tuple[int, ...] = (0,)) -> float:
    """Run ``pulsar-conformance ARGS``; its wall time. An exit code outside ``ok`` stops the campaign
    (fuzz exits 1 when it found failures: a campaign's findings, printed, not a reason to stop)."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pulsar_conformance", *args], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode not in ok:
        raise SystemExit(f"failed (exit {done.returncode}): pulsar-conformance {' '.join(args)}\n{done.stdout[-4000:]}")
    print("   " + "\n   ".join([line for line in done.stdout.strip().splitlines() if line.strip()][-2:]), flush=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ops", type=int, default=10_000_000)
    parser.add_argument("--workers", type=int, default=2, help="standalone workers started (one core each)")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--out", default=None, help="campaign folder (default: a temporary one, removed)")
    parser.add_argument("--check-traces", type=int, default=20_000, help="traces re-run locally and compared")
    parser.add_argument("--master", default=None, help="an already running cluster's master URL")
    parser.add_argument("--reuse", action="store_true", help="keep a finished campaign in --out (its summary.json): "
                        "run only the report and the comparison")
    args = parser.parse_args(argv)

    from conformance.corpus import part_digests
    from spark_reports.standalone import LoopbackCluster

    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="spark-campaign-"))
    out.mkdir(parents=True, exist_ok=True)
    reuse = args.reuse and (out / "campaign" / "summary.json").is_file()
    for name in ("report", "local") if reuse else ("sample", "campaign", "report", "local"):
        shutil.rmtree(out / name, ignore_errors=True)
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1"}
    print(f"machine: {os.cpu_count()} cores, load average {', '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    if not reuse:
        _cli(env, "fuzz", "--target", "model", "--examples", str(CHUNK), "--seed", str(args.seed),
             "--out", str(out / "sample"), "--no-progress", ok=(0, 1))
    per_trace = json.loads((out / "sample" / "summary.json").read_text())["ops"] / CHUNK
    examples = int(args.ops / per_trace * 1.02) // CHUNK * CHUNK + CHUNK
    print(f"sample: {per_trace:.1f} ops per trace: {examples:,} traces for {args.ops:,} ops", flush=True)

    cluster = nullcontext(None) if args.master else LoopbackCluster(out / "cluster", workers=args.workers)
    with cluster as running:
        master = args.master or running.master_url
        if running is not None:
            env = running.env
            print(f"cluster: {master}, {args.workers} workers x 1 core", flush=True)
        if not reuse:
            _cli(env, "fuzz", "--target", "model", "--engine", "spark", "--spark-master", master, "--examples",
                 str(examples), "--seed", str(args.seed), "--out", str(out / "campaign"), "--no-progress", ok=(0, 1))
        summary = json.loads((out / "campaign" / "summary.json").read_text())
        fuzz_s = summary["duration_s"]
        print(f"fuzz on the cluster: {summary['examples']:,} traces, {summary['ops']:,} ops in {fuzz_s:.0f} s "
              f"({summary['ops'] / fuzz_s:,.0f} ops/s, {summary['examples'] / fuzz_s:,.0f} traces/s); "
              f"{summary['passed']:,} pass, {summary['indeterminate']} indeterminate, {summary['failed']} FAIL, "
              f"{summary['model_failed']} FAIL on the model; signatures {summary['signatures']}", flush=True)
        report_s = _cli(env, "report", "--outcomes", str(out / "campaign" / "corpus"), "--out", str(out / "report"),
                        "--spark-master", master, "--quiet")
        report = json.loads((out / "report" / "summary.json").read_text())
        print(f"report on the cluster: {report['rows']:,} rows in {report_s:.0f} s (JVM start included)", flush=True)

    check = min(args.check_traces, examples)
    local_s = _cli(env, "fuzz", "--target", "model", "--examples", str(check), "--seed", str(args.seed),
                   "--out", str(out / "local"), "--workers", "2", "--no-progress", ok=(0, 1))
    local_parts = part_digests(out / "local" / "corpus")
    cluster_parts = part_digests(out / "campaign" / "corpus", only=local_parts)
    same = all(cluster_parts.get(tag) == digest for tag, digest in local_parts.items())
    print(f"local engine, first {check:,} traces: {local_s:.0f} s; its {len(local_parts)} chunk parts equal the "
          f"cluster's: {same}", flush=True)
    ok = same and summary["ops"] >= args.ops and report["rows"] == summary["ops"]
    if not args.out:
        shutil.rmtree(out, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
