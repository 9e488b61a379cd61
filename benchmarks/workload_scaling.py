"""How the model and the checker scale with a workload's length: the production-shaped workload cut to R rounds.

    python benchmarks/workload_scaling.py [--rounds 10 100]

The workload ``omb-1-topic-16-partitions`` (docs/workloads.md) is 100 rounds of 1,000 messages. For each R given, its
first R rounds (the last one waiting 2 s as the file's last round does) are run by the model target and the model's
history is judged by the checker; the script prints each size's seconds and microseconds per message, then the
ratio of the largest size's cost per message to the smallest's, measured in this run. Checking that grew with the
square of the history would show a ratio near the ratio of the sizes; linear checking shows a ratio near 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.case_files import WORKLOADS_DIR, load_case  # noqa: E402
from conformance.checker import check  # noqa: E402
from conformance.targets.model import ModelTarget  # noqa: E402

SETUP_OPS = 9  # the topic, six consumers, two producers
OPS_PER_ROUND = 10  # two send_many and two flushes, six consumes


def cut(trace, rounds: int):
    """The first ``rounds`` rounds of the workload, its last consumes waiting as long as the file's last round."""
    ops = list(trace.ops[:SETUP_OPS + rounds * OPS_PER_ROUND])
    last_idle = trace.ops[-1].args["idle_ms"]
    ops[-6:] = [replace(op, args={**op.args, "idle_ms": last_idle}) for op in ops[-6:]]
    return replace(trace, ops=tuple(ops))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, nargs="+", default=[10, 100], help="sizes to run, in rounds of 1,000 messages")
    args = parser.parse_args()
    case = load_case(WORKLOADS_DIR / "omb-1-topic-16-partitions.yaml")
    per_message: dict[int, tuple[float, float]] = {}
    for rounds in sorted(args.rounds):
        trace = cut(case.trace, rounds)
        messages = sum(op.args["count"] for op in trace.ops if op.op == "send_many")
        t0 = time.perf_counter()
        history = ModelTarget(client="mixed").run(trace)
        t1 = time.perf_counter()
        report = check(history)
        t2 = time.perf_counter()
        followed = "every step followed" if not report.not_followed else f"{len(report.not_followed)} steps not followed"
        print(f"{rounds:4d} rounds, {messages:7,d} messages: model {t1 - t0:7.1f} s ({(t1 - t0) / messages * 1e6:6.0f} us/message), "
              f"check {t2 - t1:7.1f} s ({(t2 - t1) / messages * 1e6:6.0f} us/message), "
              f"{'PASS' if report.ok else 'FAIL'}, {followed}, {len(report.verdicts):,d} verdicts")
        per_message[messages] = ((t1 - t0) / messages, (t2 - t1) / messages)
    if len(per_message) > 1:
        small, large = min(per_message), max(per_message)
        print(f"cost per message at {large:,d} over {small:,d} messages (size ratio {large / small:g}): "
              f"model {per_message[large][0] / per_message[small][0]:.2f}, check {per_message[large][1] / per_message[small][1]:.2f}")


if __name__ == "__main__":
    main()
