"""Measure the embedded broker: download size, first start, cached start, resident memory.

    python benchmarks/broker_startup.py [--version 4.0.8] [--starts 3] [--fresh]

``--fresh`` measures a true first start: an empty cache folder and an empty Maven repository
(so the ~245 MB distribution is downloaded from Maven Central). Without it, the first start uses
whatever ~/.m2 holds. Resident memory is read from /proc after the broker is ready and has
served one admin call, per start; the median is printed. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fixtures.admin import AdminClient  # noqa: E402
from fixtures.embedded import EmbeddedBroker  # noqa: E402


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def one_start(version: str, cache: Path) -> tuple[float, float, float, int]:
    broker = EmbeddedBroker(version=version, cache=cache)
    t0 = time.monotonic()
    endpoint = broker.start()
    wall = time.monotonic() - t0
    try:
        admin = AdminClient(endpoint.admin_url)
        admin.broker_version()
        admin.close()
        time.sleep(2)  # let start-up allocation settle before reading RSS
        rss = rss_mib(endpoint.pid)
    finally:
        broker.stop()
    return wall, broker.timings.get("start_s", float("nan")), rss, broker.downloaded_bytes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--version", default="4.0.8")
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--fresh", action="store_true", help="empty cache and empty Maven repository for the first start")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="pc-bench-") as tmp:
        cache = Path(tmp) / "cache"
        if args.fresh:
            os.environ["PULSAR_CONFORMANCE_MAVEN_REPO"] = str(Path(tmp) / "m2")
        wall, jvm, rss, downloaded = one_start(args.version, cache)
        print(f"first start (empty cache{', empty Maven repo' if args.fresh else ''}): {wall:.1f} s wall "
              f"(JVM to ready {jvm:.1f} s), distribution {downloaded:,} bytes, RSS {rss:.0f} MiB")
        walls, rsss = [], [rss]
        for _ in range(args.starts):
            wall, jvm, rss, downloaded = one_start(args.version, cache)
            assert downloaded == 0, "a cached start downloaded something"
            walls.append(wall)
            rsss.append(rss)
        print(f"cached start x{args.starts}: " + ", ".join(f"{w:.1f}" for w in walls) + f" s; median {statistics.median(walls):.1f} s")
        print(f"broker RSS after ready, {len(rsss)} starts: " + ", ".join(f"{r:.0f}" for r in rsss) + f" MiB; median {statistics.median(rsss):.0f} MiB")


if __name__ == "__main__":
    main()
