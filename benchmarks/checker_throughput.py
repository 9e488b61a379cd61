"""Checker throughput: history events judged per second on one core, on generated traces.

    python benchmarks/checker_throughput.py [--traces 2000] [--seed 1] [--profile]

The histories are the model's runs of traces from the fuzz generator (``conformance.strategies``,
every feature the model supports, swarm subsets), so the mix is what ``pulsar-conformance fuzz``
feeds the checker. Model execution and checking are timed separately. ``--profile`` runs the
checking under cProfile and prints the functions with the most own time and cumulative time.
Targets (issue 20): model >= 150 000 ops/s and checker >= 150 000 events/s on one core. Figures are
printed, never asserted; docs/performance.md records a run.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.checker import check  # noqa: E402
from conformance.strategies import MODEL_CONFIG, random_trace  # noqa: E402
from conformance.targets.model import ModelTarget  # noqa: E402

TARGET_EVENTS_PER_S = 150_000  # issue 20, for the model's ops/s and the checker's events/s alike


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--without", action="append", default=[], metavar="FEATURE",
                        help="leave a generator feature out (e.g. Key_Shared); repeatable")
    args = parser.parse_args()
    config = replace(MODEL_CONFIG, features=tuple(f for f in MODEL_CONFIG.features if f not in args.without))

    t0 = time.perf_counter()
    traces = [random_trace(random.Random(f"{args.seed}:{i}"), config) for i in range(args.traces)]
    gen_s = time.perf_counter() - t0
    n_ops = sum(len(t.ops) for t in traces)
    print(f"generated {len(traces):,} traces, {n_ops:,} ops in {gen_s:.2f} s ({n_ops / gen_s:,.0f} ops/s, "
          f"generation includes running the model alongside)")

    target = ModelTarget()
    t1 = time.perf_counter()
    histories = [target.run(t) for t in traces]
    model_s = time.perf_counter() - t1
    print(f"model: {n_ops / model_s:,.0f} ops/s on one core ({model_s:.2f} s); target {TARGET_EVENTS_PER_S:,}/s: "
          f"{'met' if n_ops / model_s >= TARGET_EVENTS_PER_S else 'NOT met'}")

    t2 = time.perf_counter()
    verdicts = fails = 0
    crashes = 0
    for h in histories:
        try:
            report = check(h)
        except Exception:  # noqa: BLE001 - the checker is being edited: count, do not stop
            crashes += 1
            continue
        verdicts += len(report.verdicts)
        fails += len(report.failures())
    check_s = time.perf_counter() - t2
    rate = n_ops / check_s
    print(f"checker: {rate:,.0f} events/s on one core ({check_s:.2f} s; {verdicts:,} verdicts, {fails} FAIL, {crashes} checker crashes); "
          f"target {TARGET_EVENTS_PER_S:,}/s: {'met' if rate >= TARGET_EVENTS_PER_S else 'NOT met'}")

    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
        for h in histories:
            try:
                check(h)
            except Exception:  # noqa: BLE001
                pass
        prof.disable()
        for key in ("tottime", "cumulative"):
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats(key).print_stats(18)
            print(f"\n--- cProfile, sorted by {key} ---")
            print("\n".join(line for line in out.getvalue().splitlines() if line.strip())[:6000])


if __name__ == "__main__":
    main()
