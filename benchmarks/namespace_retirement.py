"""Deleting a run's namespace at once vs retiring it (fixtures/namespaces.py), on one release, same run.

    python benchmarks/namespace_retirement.py [--version 3.3.6] [--rounds 4] [--settle-s 5]

For each setting (settle 0 s: the deletion the harness made before; then ``--settle-s``), it
starts a fresh embedded broker of ``--version`` and runs every case in conformance/cases/keyshared
and conformance/cases/subscriptions ``--rounds`` times with the Python client. It counts the runs
whose history holds a client TimeOut, and the broker log's "Transaction buffer failed to recover
snapshot!" lines (the 30 s hang of a transaction buffer recovering in a deleted namespace), and
prints both with the wall time of each setting and their ratio. Figures are printed, never
asserted. A 3.x release shows the hang; on 4.0.8 the recovery no longer blocks other topics.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.case_files import load_case  # noqa: E402
from conformance.runner import run_case  # noqa: E402
from conformance.targets.pulsar import BrokerTarget  # noqa: E402
from fixtures import namespaces  # noqa: E402
from fixtures.embedded import EmbeddedBroker  # noqa: E402

CASE_FOLDERS = ("keyshared", "subscriptions")
STUCK_RECOVERY = "failed to recover snapshot"


def one_setting(version: str, settle_s: float, rounds: int) -> dict:
    root = Path(__file__).resolve().parent.parent / "conformance" / "cases"
    cases = [load_case(p) for folder in CASE_FOLDERS for p in sorted((root / folder).glob("*.yaml"))]
    broker = EmbeddedBroker(version=version)
    endpoint = broker.start()
    namespaces.reaper_for(endpoint.admin_url, endpoint.token).settle_s = settle_s
    target = BrokerTarget(endpoint)
    runs = timed_out = 0
    t0 = time.monotonic()
    try:
        for _ in range(rounds):
            for case in cases:
                result = run_case(case, target, client="python")
                runs += 1
                events = result.history.events if result.history is not None else ()  # None: not run on the broker
                timed_out += any("client timeout" in (e.outcome.detail or "") for e in events)
        namespaces.reaper_for(endpoint.admin_url).reap(everything=True)
        wall_s = time.monotonic() - t0
    finally:
        log = Path(broker.run_dir) / "broker.log" if broker.run_dir else None
        stuck = log.read_text(errors="replace").count(STUCK_RECOVERY) if log and log.exists() else -1
        target.close()
        broker.stop()
    return {"settle_s": settle_s, "runs": runs, "runs_with_timeout": timed_out, "stuck_recoveries": stuck, "wall_s": wall_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", default="3.3.6")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--settle-s", type=float, default=namespaces.SETTLE_S)
    args = parser.parse_args()
    before = one_setting(args.version, 0.0, args.rounds)
    after = one_setting(args.version, args.settle_s, args.rounds)
    print(f"broker {args.version}, {before['runs']} case runs per setting")
    for row in (before, after):
        print(f"  settle {row['settle_s']:>4.1f} s: {row['runs_with_timeout']} runs with a client TimeOut, "
              f"{row['stuck_recoveries']} stuck transaction-buffer recoveries, wall {row['wall_s']:.0f} s")
    print(f"  wall time ratio retired/immediate: {after['wall_s'] / before['wall_s']:.2f}")


if __name__ == "__main__":
    main()
