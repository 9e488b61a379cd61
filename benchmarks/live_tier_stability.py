"""Is the live tier stable? Run it back to back with busy loops beside it and count false alarms.

    python benchmarks/live_tier_stability.py [--runs 5] [--busy 2] [--workers 2] [--out /tmp/live-stability] [-- PYTEST ARGS]

Each run is ``.ci/run``'s live tier (``python3 -m pytest -m "live and not releases and not upstream and not extended" -n 2``, the same
options, its own JUnit file) against the embedded brokers of the default release (one per xdist
worker), while ``--busy`` processes spin on the CPU (the machine has 2 cores: two loops take a whole
core each from the brokers, the clients and the checker). Every run starts its own brokers, as CI does.

A correct broker (the default release, whose known deviations are xfails) gives no FAIL: so every
failed test is a false FAIL, and every error a harness ERROR. The script prints, per run, the wall
time and the counts from the JUnit file (passed, failed, errors, xfailed, skipped), then the totals and
the failing test ids, and writes ``stability.json`` under ``--out``. Arguments after ``--`` go to
pytest (e.g. ``-- tests/live/test_harness.py`` to try a slice).

Not a test: it takes a run of the live tier per ``--runs`` (minutes each) and its figures depend on
the machine. docs/ci.md records its results.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _spin(stop_at: float) -> None:
    x = 0
    while time.time() < stop_at:
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF


def junit_counts(path: Path) -> dict:
    """passed / failed / errors / xfailed / skipped and the ids that failed or errored, from a pytest JUnit file."""
    counts = {"passed": 0, "failed": 0, "errors": 0, "xfailed": 0, "skipped": 0, "failing": []}
    for case in ET.parse(path).getroot().iter("testcase"):
        test_id = f"{case.get('classname')}::{case.get('name')}"
        if case.find("failure") is not None:
            counts["failed"] += 1
            counts["failing"].append(test_id)
        elif case.find("error") is not None:
            counts["errors"] += 1
            counts["failing"].append(test_id + " (error)")
        elif (skipped := case.find("skipped")) is not None:
            counts["xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"] += 1
        else:
            counts["passed"] += 1
    return counts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--busy", type=int, default=2, help="CPU-spinning processes beside each run")
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers, as in .ci/run's live tier")
    parser.add_argument("--out", type=Path, default=Path("/tmp/live-stability"))
    parser.add_argument("pytest_args", nargs="*", help="after --: extra pytest arguments")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    runs = []
    for n in range(1, args.runs + 1):
        junit = args.out / f"live-{n}.xml"
        cmd = [sys.executable, "-m", "pytest", "-m", "live and not releases and not upstream and not extended", "-n", str(args.workers),
               "-p", "no:cacheprovider", "-q", "-o", "junit_family=xunit1", f"--junitxml={junit}", *args.pytest_args]
        started = time.time()
        spinners = [multiprocessing.Process(target=_spin, args=(started + 6 * 3600,), daemon=True) for _ in range(args.busy)]
        for s in spinners:
            s.start()
        try:
            with open(args.out / f"live-{n}.log", "w") as log:
                code = subprocess.run(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ)).returncode
        finally:
            for s in spinners:
                s.terminate()
        wall = time.time() - started
        counts = junit_counts(junit) if junit.exists() else {"failing": ["no JUnit file"], "failed": 0, "errors": 1}
        runs.append({"run": n, "exit": code, "wall_s": round(wall, 1), **counts})
        print(f"run {n}: exit {code}, {wall:.0f} s, {counts.get('passed', 0)} passed, {counts['failed']} failed, "
              f"{counts['errors']} errors, {counts.get('xfailed', 0)} xfailed, {counts.get('skipped', 0)} skipped"
              f" (busy loops: {args.busy})", flush=True)
        for test_id in counts["failing"]:
            print(f"    {test_id}", flush=True)
    false_fail = sum(r["failed"] for r in runs)
    errors = sum(r["errors"] for r in runs)
    walls = [r["wall_s"] for r in runs]
    print(f"{len(runs)} runs with {args.busy} busy loops: {false_fail} false FAIL, {errors} ERROR; "
          f"wall {min(walls):.0f}-{max(walls):.0f} s (mean {sum(walls) / len(walls):.0f} s)")
    (args.out / "stability.json").write_text(json.dumps({"busy": args.busy, "runs": runs, "false_fail": false_fail,
                                                          "errors": errors}, indent=2))
    return 0 if false_fail == 0 and errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
