"""Model throughput on a long generated trace: ops per second on one core, and the checker.

    python benchmarks/model_throughput.py [--ops 200000] [--seed 1]

The trace mixes what real traces do: sends with keys and properties, receives on an Exclusive
and on two Shared consumers, individual and cumulative acks, nacks followed by time advancing
past the nack delay, and redeliver-unacked. It is built so every op is meaningful for the model
(acks name messages the consumer received in the model's canonical dispatch), and the run
checks that: a history with rejected or indeterminate ops means the generator drifted from the
model, and the script says so instead of printing a flattering figure. Figures are printed,
never asserted.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.checker import check  # noqa: E402
from conformance.targets.model import ModelTarget  # noqa: E402
from conformance.trace import make_trace  # noqa: E402

NACK_DELAY_MS = 100


def generate(n_ops: int, seed: int):
    rng = random.Random(seed)
    ops: list[tuple[str, dict]] = [
        ("create_producer", {"producer": "p", "topic": "t"}),
        ("subscribe", {"consumer": "ex", "topic": "t", "subscription": "excl", "type": "Exclusive", "consumer_name": "ex", "nack_delay_ms": NACK_DELAY_MS}),
        ("subscribe", {"consumer": "s1", "topic": "t2", "subscription": "sh", "type": "Shared", "consumer_name": "s1", "nack_delay_ms": NACK_DELAY_MS}),
        ("create_producer", {"producer": "p2", "topic": "t2"}),
    ]
    n = 0
    while len(ops) < n_ops:
        block = rng.random()
        n += 1
        label = f"m{n}"
        if block < 0.45:  # Exclusive: send, receive, ack
            ops += [
                ("send", {"producer": "p", "payload": label, "key": f"k{n % 17}", "properties": {"i": str(n)}}),
                ("receive", {"consumer": "ex", "timeout_ms": 10}),
                ("ack", {"consumer": "ex", "message": label}),
            ]
        elif block < 0.6:  # Exclusive: two sends, two receives, one cumulative ack
            n += 1
            second = f"m{n}"
            ops += [
                ("send", {"producer": "p", "payload": label}),
                ("send", {"producer": "p", "payload": second}),
                ("receive", {"consumer": "ex", "timeout_ms": 10}),
                ("receive", {"consumer": "ex", "timeout_ms": 10}),
                ("ack_cumulative", {"consumer": "ex", "message": second}),
            ]
        elif block < 0.85:  # Shared: send, receive, ack
            ops += [
                ("send", {"producer": "p2", "payload": label, "event_time": n}),
                ("receive", {"consumer": "s1", "timeout_ms": 10}),
                ("ack", {"consumer": "s1", "message": label}),
            ]
        else:  # Shared: nack, wait past the delay, receive the redelivery, ack it
            ops += [
                ("send", {"producer": "p2", "payload": label}),
                ("receive", {"consumer": "s1", "timeout_ms": 10}),
                ("nack", {"consumer": "s1", "message": label}),
                ("advance_time", {"ms": NACK_DELAY_MS * 2}),
                ("receive", {"consumer": "s1", "timeout_ms": 10}),
                ("ack", {"consumer": "s1", "message": label}),
            ]
    return make_trace(f"bench-{seed}", ops, title="model throughput benchmark")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    trace = generate(args.ops, args.seed)
    target = ModelTarget()
    t0 = time.perf_counter()
    history = target.run(trace)
    model_s = time.perf_counter() - t0
    statuses: dict[str, int] = {}
    for event in history.events:
        statuses[event.outcome.status] = statuses.get(event.outcome.status, 0) + 1
    empty = sum(1 for e in history.events if e.op.op == "receive" and e.outcome.status == "ok" and not e.outcome.value.get("message"))
    n = len(trace.ops)
    print(f"trace: {n:,} ops; outcomes {statuses}; empty receives {empty}")
    if statuses.get("rejected") or statuses.get("indeterminate") or empty:
        print("WARNING: the generator and the model disagree; the figure below is not representative")
    print(f"model: {n / model_s:,.0f} ops/s on one core ({model_s:.2f} s for {n:,} ops)")
    t1 = time.perf_counter()
    report = check(history)
    check_s = time.perf_counter() - t1
    fails = sum(1 for v in report.verdicts if v.status == "FAIL")
    print(f"checker: {n / check_s:,.0f} events/s ({check_s:.2f} s; {len(report.verdicts):,} verdicts, {fails} FAIL)")


if __name__ == "__main__":
    main()
