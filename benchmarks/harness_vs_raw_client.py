"""The live harness next to raw pulsar-client: the same sends, receives and acks, same broker, same run.

    python benchmarks/harness_vs_raw_client.py [--messages 2000] [--rounds 3] [--client python|java]
                                               [--service-url URL --admin-url URL]

Without ``--service-url`` it starts the suite's embedded broker (``fixtures.embedded``) and stops
it at the end. Workload per round, on a fresh topic: create a producer and an Exclusive
subscription (Earliest), send N messages synchronously, then receive and acknowledge each.
- harness: one trace with those 2 + 3N ops, run by ``BrokerTarget.run`` (which also makes and
  deletes a namespace and records every op's outcome and timing); timed two ways: the whole
  ``run`` call, and the ops alone (first op start to last op end, from the history);
- raw: the same calls on ``pulsar.Client`` directly (namespace made beforehand, not timed).
Rounds alternate harness/raw; medians are printed. Target: harness/raw throughput >= 0.5.
``--client java`` drives the harness side through the Java driver (docs/java-driver.md: one JSON
line each way per op) and also prints the driver's build (cached or not) and start times; the raw
side stays the Python client, so the ratio then compares the two clients as the suite drives them.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pulsar  # noqa: E402

from conformance.targets.pulsar import BrokerTarget  # noqa: E402
from conformance.trace import make_trace  # noqa: E402
from fixtures.admin import AdminClient  # noqa: E402
from fixtures.endpoint import BrokerEndpoint  # noqa: E402


def harness_trace(n: int):
    ops = [("create_producer", {"producer": "p1", "topic": "t"}),
           ("subscribe", {"consumer": "c1", "topic": "t", "subscription": "s", "type": "Exclusive",
                          "initial_position": "Earliest"})]
    ops += [("send", {"producer": "p1", "payload": f"m{i}"}) for i in range(n)]
    for i in range(n):
        ops += [("receive", {"consumer": "c1", "timeout_ms": 5000}), ("ack", {"consumer": "c1", "message": f"m{i}"})]
    return make_trace(f"bench-harness-{n}", ops)


def run_harness(target: BrokerTarget, n: int) -> tuple[float, float, int]:
    trace = harness_trace(n)
    t0 = time.perf_counter()
    history = target.run(trace)
    total = time.perf_counter() - t0
    ops_only = (history.events[-1].t_end_ms - history.events[0].t_start_ms) / 1000.0
    bad = sum(1 for e in history.events if e.outcome.status != "ok"
              or (e.op.op == "receive" and not (e.outcome.value or {}).get("message")))
    return total, ops_only, bad


def run_raw(endpoint: BrokerEndpoint, n: int) -> float:
    admin = AdminClient(endpoint.admin_url, token=endpoint.token)
    namespace = admin.fresh_namespace()
    topic = f"persistent://{namespace}/t-{uuid.uuid4().hex[:6]}"
    quiet = logging.getLogger("bench.raw")
    quiet.setLevel(logging.CRITICAL)
    try:
        t0 = time.perf_counter()
        client = pulsar.Client(endpoint.service_url, operation_timeout_seconds=15, logger=quiet)
        producer = client.create_producer(topic, batching_enabled=False)
        consumer = client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Exclusive,
                                    initial_position=pulsar.InitialPosition.Earliest)
        for i in range(n):
            producer.send(f"m{i}".encode())
        for _ in range(n):
            msg = consumer.receive(timeout_millis=5000)
            consumer.acknowledge(msg)
        client.close()
        return time.perf_counter() - t0
    finally:
        admin.delete_namespace(namespace, force=True)
        admin.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--service-url", default=None)
    parser.add_argument("--admin-url", default=None)
    parser.add_argument("--client", default="python", choices=["python", "java"])
    args = parser.parse_args()
    broker = None
    if args.service_url:
        endpoint = BrokerEndpoint("external", args.service_url, args.admin_url or "http://127.0.0.1:8080")
    else:
        from fixtures.embedded import EmbeddedBroker

        broker = EmbeddedBroker()
        t0 = time.perf_counter()
        endpoint = broker.start()
        print(f"embedded broker {endpoint.version} ready in {time.perf_counter() - t0:.1f} s")
    target = BrokerTarget(endpoint, client=args.client)
    try:
        if args.client == "java":
            from conformance.targets.java_driver import build_driver, client_version_for

            t0 = time.perf_counter()
            build_driver(client_version_for(endpoint.version))
            print(f"Java driver build (cached if ~0 s): {time.perf_counter() - t0:.1f} s")
            t0 = time.perf_counter()
            target.java_driver()
            print(f"Java driver JVM start to ready line: {time.perf_counter() - t0:.2f} s")
        n = args.messages
        ops = 2 + 3 * n
        run_raw(endpoint, min(n, 100))  # warm-up: JIT, topic creation paths
        totals, op_times, raws = [], [], []
        for r in range(args.rounds):
            total, ops_only, bad = run_harness(target, n)
            raw = run_raw(endpoint, n)
            totals.append(total)
            op_times.append(ops_only)
            raws.append(raw)
            print(f"round {r + 1}: harness {total:.2f} s total ({ops_only:.2f} s in ops, {bad} non-ok ops), raw {raw:.2f} s")
        total, ops_only, raw = statistics.median(totals), statistics.median(op_times), statistics.median(raws)
        print(f"workload: {n} sends + {n} receives + {n} acks ({ops} ops) per round, {args.rounds} rounds, medians:")
        print(f"  raw pulsar-client: {ops / raw:,.0f} ops/s ({raw:.2f} s)")
        print(f"  harness, ops only: {ops / ops_only:,.0f} ops/s ({ops_only:.2f} s); ratio {raw / ops_only:.2f}")
        print(f"  harness, whole run (namespace create/delete, client, history): {ops / total:,.0f} ops/s "
              f"({total:.2f} s); ratio {raw / total:.2f}  (target >= 0.5)")
    finally:
        target.close()
        if broker is not None:
            broker.stop()


if __name__ == "__main__":
    main()
