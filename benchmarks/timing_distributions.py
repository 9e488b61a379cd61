"""Measured lateness per timing rule, idle and under load, and the timing bands derived from it.

    python benchmarks/timing_distributions.py --service-url pulsar://127.0.0.1:6650 --admin-url http://127.0.0.1:8080
        [--samples 1000] [--phases idle,load] [--only NAME,...] [--out out/timing] [--write-docs docs/timing-bands.md]

Every sample is an op of a real history recorded by ``BrokerTarget.run`` (the harness the run
uses, Python client or Java driver), except the ack lag, which needs a poll loop the trace
vocabulary does not have (raw ``pulsar.Client`` + the admin REST API). For each sample:
- lateness = the instant the harness recorded the arrival (op end) minus the window's end as the
  reference model computes it (``reference_model.redelivery`` / ``.delayed`` with no slack);
  counted only when the receive began before the window closed, as the checker judges it;
- earliness = the window's start minus the recorded arrival (> 0: early).

Scenarios (rule ids; how samples are made; what one sample is):
- ``nack-cpp`` (PLS-NACK-001/002/003), ``nack-java`` (PLS-NACK-005), ``nack-java-backoff``
  (PLS-NACK-004, backoff min 100 ms): ``conformance.timing.probe_trace`` with 1000 single nacks of
  the minimum delay, each waited for: every sample is an independent redelivery. The same
  histories give the call overhead (1000 receives of queued messages), the timer overshoot
  (1000 empty 20 ms receives) and 1000 single-message ``redeliver_unacked`` round trips, from
  which ``TimingBands.from_calibration`` derives the bands.
- ``acktimeout-cpp`` (PLS-ACKTIMEOUT-002, T = 10 s, tick 1 s fixed): rounds of 250 messages
  received and left unacked; one redelivery event per round and tick, so samples in a round are
  correlated: the table gives the number of events too.
- ``acktimeout-java`` (PLS-ACKTIMEOUT-004, T = 1 s, tick 100 ms), ``acktimeout-java-backoff``
  (PLS-ACKTIMEOUT-005, + backoff min 100 ms): rounds of ``--java-ack-round`` (default 100).
- ``delay-strict`` (PLS-DELAY-001/004, Shared, the suite broker's strict 100 ms tick): rounds of
  100 messages with deliver_after 200..699 ms (7 ms apart, so they fall due on different ticks);
  window ``[deliver_at, deliver_at + 2 x tick]`` (the documented two ticks).
- ``redeliver-unacked`` (PLS-REDELIVER-001) and ``shared-close`` (PLS-SHARED-002): rounds of 100;
  due when ``redeliver_unacked`` / the other consumer's ``close`` returns; lateness is how long
  after that each message was recorded (every receive begins after the op, so none is filtered).
  One event per round: the k-th message of a round includes k receives.
- ``ack-lag-cpp`` (PLS-BACKLOG-001): ack one message, poll topic stats every ~2 ms until the
  backlog drops; lateness = lag - 100 ms (the C++ ack grouping time).

Load: ``--phases load`` runs two busy-looping Python processes (one per core; the machine has 2)
for the whole phase, started and stopped by this script (each also stops itself after
``--load-limit-s``). Figures are printed and written, never asserted.
Not measured: the Failover activation stall (PLS-FAILOVER-003: one sample per consumer switch of
1 s or more; not provoked here).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pulsar  # noqa: E402

from conformance.targets.pulsar import BrokerTarget  # noqa: E402
from conformance.timing import (  # noqa: E402
    Calibration, Distribution, TimingBands, calibrate, machine_description, probe_distributions, probe_trace,
)
from conformance.trace import make_trace, received_message  # noqa: E402
from fixtures.admin import AdminClient  # noqa: E402
from fixtures.endpoint import BrokerEndpoint  # noqa: E402
from reference_model.profiles import profile_for  # noqa: E402
from reference_model.redelivery import ack_timeout_window  # noqa: E402
from reference_model.timing import Span  # noqa: E402

JAVA_ACK_ROUND = [100]  # --java-ack-round: messages per Java ack-timeout round
BROKER_TICK_MS = 100  # fixtures/embedded.py CONFORMANCE_CONFIG delayedDeliveryTickTimeMillis
OVERSHOOT_TIMEOUT_MS = 20


@dataclass
class Result:
    name: str
    rules: str
    client: str
    late: list[float] = field(default_factory=list)
    early: list[float] = field(default_factory=list)
    events: int = 0  # independent redelivery / dispatch events behind the samples
    extra: dict[str, Any] = field(default_factory=dict)


def _received(ev):
    return received_message(ev.outcome) if ev.op.op == "receive" else None


# ------------------------------------------------------------------ nacks (probe traces)


def nack_scenario(target: BrokerTarget, name: str, rules: str, n: int, backoff=None) -> Result:
    extra = {"nack_backoff": {"min_delay_ms": backoff[0], "max_delay_ms": backoff[1], "multiplier": backoff[2]}} if backoff else None
    history = target.run(probe_trace(0, nack_samples=n, overshoot_samples=n, receive_timeout_ms=OVERSHOOT_TIMEOUT_MS,
                                     subscribe_extra=extra, redeliver_samples=n))
    client = "java" if target.client == "java" else "python"
    d = probe_distributions(history.events, client=client, delay_ms=100, receive_timeout_ms=OVERSHOOT_TIMEOUT_MS,
                            nack_samples=n, backoff=backoff)
    from conformance.timing import nack_samples_of

    late, early, back = nack_samples_of(history.events, client=client, delay_ms=100, backoff=backoff)
    cal = Calibration(target=history.header.target or "", client=client,
                      when=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), distributions=d,
                      client_version=history.header.client_version, broker_version=history.header.broker_version,
                      machine=machine_description())
    return Result(name, rules, client, late, early, events=len(late), extra={"calibration": cal, "back": back})


# ------------------------------------------------------------------ ack timeouts


def ack_timeout_scenario(target: BrokerTarget, name: str, rules: str, n: int, per_round: int, timeout_ms: int,
                         tick_ms: int | None, backoff=None) -> Result:
    client = "java" if target.client == "java" else "python"
    profile = profile_for(None, "java" if client == "java" else "cpp")
    sub: dict[str, Any] = {"consumer": "c", "topic": "t", "subscription": "s", "type": "Shared", "ack_timeout_ms": timeout_ms}
    if tick_ms:
        sub["ack_timeout_tick_ms"] = tick_ms
    if backoff:
        sub["ack_timeout_backoff"] = {"min_delay_ms": backoff[0], "max_delay_ms": backoff[1], "multiplier": backoff[2]}
    rounds = -(-n // per_round)
    ops: list[tuple[str, dict]] = [("create_producer", {"producer": "p", "topic": "t"}), ("subscribe", sub)]
    wait = timeout_ms + 2 * (tick_ms or profile.ack_timeout_tick_ms) + (backoff[1] if backoff else 0) + 5000
    for r in range(rounds):
        labels = [f"r{r}m{i}" for i in range(per_round)]
        ops += [("send", {"producer": "p", "payload": x}) for x in labels]
        ops += [("receive", {"consumer": "c", "timeout_ms": 5000}) for _ in labels]
        ops += [("receive", {"consumer": "c", "timeout_ms": wait}) for _ in labels]
        ops += [("ack", {"consumer": "c", "message": x}) for x in labels]
    history = target.run(make_trace(f"bench-{name}", ops))
    res = Result(name, rules, client)
    first: dict[str, Span] = {}
    for ev in history.events:
        msg = _received(ev)
        if msg is None:
            continue
        if msg.payload not in first:
            first[msg.payload] = Span(ev.t_start_ms, ev.t_end_ms)
            continue
        w = ack_timeout_window(first.pop(msg.payload), timeout_ms, profile, tick_ms=tick_ms, backoff=backoff)
        res.early.append(w.low - ev.t_end_ms)
        if ev.t_start_ms <= w.high:
            res.late.append(ev.t_end_ms - w.high)
        if ev.t_end_ms - ev.t_start_ms > 1.0:  # this receive waited: a new redelivery event
            res.events += 1
    res.extra["missing"] = len(first)
    return res


# ------------------------------------------------------------------ delayed delivery


def delay_scenario(target: BrokerTarget, n: int, per_round: int = 100) -> Result:
    rounds = -(-n // per_round)
    ops: list[tuple[str, dict]] = [("create_producer", {"producer": "p", "topic": "t"}),
                                   ("subscribe", {"consumer": "c", "topic": "t", "subscription": "s", "type": "Shared"})]
    delays: dict[str, int] = {}
    for r in range(rounds):
        for i in range(per_round):
            label = f"r{r}m{i}"
            delays[label] = 200 + (i * 7) % 500
            ops.append(("send", {"producer": "p", "payload": label, "deliver_after_ms": delays[label]}))
        ops += [("receive", {"consumer": "c", "timeout_ms": 5000}) for _ in range(per_round)]
        ops += [("ack", {"consumer": "c", "message": f"r{r}m{i}"}) for i in range(per_round)]
    history = target.run(make_trace("bench-delay", ops))
    res = Result("delay-strict", "PLS-DELAY-001/004", "python")
    sent: dict[str, Span] = {}
    for ev in history.events:
        if ev.op.op == "send":
            sent[ev.op.args["payload"]] = Span(ev.t_start_ms, ev.t_end_ms)
        msg = _received(ev)
        if msg is None or msg.payload not in sent:
            continue
        s = sent.pop(msg.payload)
        d = delays[msg.payload]
        low, high = s.start + d, s.end + d + 2 * BROKER_TICK_MS  # strict: [deliver_at, deliver_at + 2 ticks]
        res.early.append(low - ev.t_end_ms)
        res.extra.setdefault("past_deliver_at", []).append(ev.t_end_ms - (s.end + d))
        if ev.t_start_ms <= high:
            res.late.append(ev.t_end_ms - high)
        if ev.t_end_ms - ev.t_start_ms > 1.0:
            res.events += 1
    res.extra["missing"] = len(sent)
    return res


# ------------------------------------------------------------------ redeliver_unacked, close on Shared


def release_scenario(target: BrokerTarget, kind: str, n: int, per_round: int = 100) -> Result:
    rounds = -(-n // per_round)
    ops: list[tuple[str, dict]] = [("create_producer", {"producer": "p", "topic": "t"})]
    for r in range(rounds):
        c1, c2 = f"a{r}", f"b{r}"
        labels = [f"r{r}m{i}" for i in range(per_round)]
        ops.append(("subscribe", {"consumer": c1, "topic": "t", "subscription": "s", "type": "Shared"}))
        ops += [("send", {"producer": "p", "payload": x}) for x in labels]
        ops += [("receive", {"consumer": c1, "timeout_ms": 5000}) for _ in labels]
        if kind == "redeliver":
            ops.append(("redeliver_unacked", {"consumer": c1}))
            ops += [("receive", {"consumer": c1, "timeout_ms": 5000}) for _ in labels]
            ops += [("ack", {"consumer": c1, "message": x}) for x in labels]
            ops.append(("close", {"handle": c1}))
        else:
            ops.append(("subscribe", {"consumer": c2, "topic": "t", "subscription": "s", "type": "Shared"}))
            ops.append(("close", {"handle": c1}))
            ops += [("receive", {"consumer": c2, "timeout_ms": 5000}) for _ in labels]
            ops += [("ack", {"consumer": c2, "message": x}) for x in labels]
            ops.append(("close", {"handle": c2}))
    history = target.run(make_trace(f"bench-{kind}", ops))
    res = Result("redeliver-unacked" if kind == "redeliver" else "shared-close",
                 "PLS-REDELIVER-001" if kind == "redeliver" else "PLS-SHARED-002", "python")
    window: Span | None = None  # from the redeliver_unacked / close until the round's acks
    for ev in history.events:
        if (kind == "redeliver" and ev.op.op == "redeliver_unacked") or (
                kind == "close" and ev.op.op == "close" and ev.op.args["handle"].startswith("a")):
            window = Span(ev.t_start_ms, ev.t_end_ms)
            continue
        if ev.op.op == "ack":
            window = None
        msg = _received(ev)
        if msg is None or window is None:
            continue
        res.early.append(window.start - ev.t_end_ms)
        # Due when the op returned, so every receive after it begins after the window closed: the
        # checker judges these rules by an empty receive ending past window end + band. What
        # matters is how long after the op each message came: that is the lateness here.
        res.late.append(ev.t_end_ms - window.end)
        if ev.t_end_ms - ev.t_start_ms > 1.0:
            res.events += 1
    return res


# ------------------------------------------------------------------ ack lag (raw client + admin)


def ack_lag_scenario(endpoint: BrokerEndpoint, n: int) -> Result:
    admin = AdminClient(endpoint.admin_url, token=endpoint.token)
    ns = admin.fresh_namespace()
    quiet = logging.getLogger("bench-timing")
    quiet.setLevel(logging.CRITICAL)
    client = pulsar.Client(endpoint.service_url, logger=quiet)
    res = Result("ack-lag-cpp", "PLS-BACKLOG-001", "python")
    lags = []
    try:
        topic = f"persistent://{ns}/t"
        consumer = client.subscribe(topic, "s", consumer_type=pulsar.ConsumerType.Shared)
        producer = client.create_producer(topic, batching_enabled=False)
        for i in range(n):
            producer.send(f"m{i}".encode())
        msgs = [consumer.receive(timeout_millis=5000) for _ in range(n)]

        def backlog() -> int:
            return int(admin.topic_stats(topic)["subscriptions"]["s"]["msgBacklog"])

        expected = backlog()
        for m in msgs:
            consumer.acknowledge(m)
            acked = time.monotonic()
            deadline = acked + 5
            while True:
                b = backlog()
                now = time.monotonic()
                if b < expected or now > deadline:
                    break
                time.sleep(0.002)
            if b < expected:
                lags.append((now - acked) * 1000)
                expected = b
        res.extra["lag"] = lags
        res.late = [x - 100 for x in lags]  # past the C++ ack grouping time
        res.events = len(lags)
        res.extra["missing"] = n - len(lags)
    finally:
        client.close()
        admin.delete_namespace(ns, force=True)
        admin.close()
    return res


# ------------------------------------------------------------------ driver


SCENARIOS: dict[str, Callable[..., Result]] = {
    "nack-cpp": lambda py, jv, ep, n: nack_scenario(py, "nack-cpp", "PLS-NACK-001/002/003", n),
    "nack-java": lambda py, jv, ep, n: nack_scenario(jv, "nack-java", "PLS-NACK-005", n),
    "nack-java-backoff": lambda py, jv, ep, n: nack_scenario(jv, "nack-java-backoff", "PLS-NACK-004", n, backoff=(100, 1000, 2.0)),
    "acktimeout-cpp": lambda py, jv, ep, n: ack_timeout_scenario(py, "acktimeout-cpp", "PLS-ACKTIMEOUT-002", n, 250, 10_000, None),
    "acktimeout-java": lambda py, jv, ep, n: ack_timeout_scenario(jv, "acktimeout-java", "PLS-ACKTIMEOUT-004", n, JAVA_ACK_ROUND[0], 1000, 100),
    "acktimeout-java-backoff": lambda py, jv, ep, n: ack_timeout_scenario(jv, "acktimeout-java-backoff", "PLS-ACKTIMEOUT-005", n, JAVA_ACK_ROUND[0], 1000, 100, backoff=(100, 1000, 2.0)),
    "delay-strict": lambda py, jv, ep, n: delay_scenario(py, n),
    "redeliver-unacked": lambda py, jv, ep, n: release_scenario(py, "redeliver", n),
    "shared-close": lambda py, jv, ep, n: release_scenario(py, "close", n),
    "ack-lag-cpp": lambda py, jv, ep, n: ack_lag_scenario(ep, n),
}


def start_load(limit_s: int) -> list[subprocess.Popen]:
    code = f"import time\nt = time.monotonic() + {limit_s}\nwhile time.monotonic() < t:\n    pass\n"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(os.cpu_count() or 2)]


def stop_load(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        p.wait(10)


def _fmt(d: Distribution | None) -> str:
    if d is None:
        return "| 0 | | | | | | |"
    return f"| {d.n} | {d.min:.1f} | {d.p50:.1f} | {d.p90:.1f} | {d.p99:.1f} | {d.p999:.1f} | {d.max:.1f} |"


def table(results: list[Result]) -> list[str]:
    lines = ["| scenario | rules | client | what | events | n | min | p50 | p90 | p99 | p99.9 | max |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        for what, xs in (("lateness", r.late), ("earliness", r.early)):
            if xs:
                lines.append(f"| {r.name} | {r.rules} | {r.client} | {what} | {r.events} {_fmt(Distribution.of(xs))}")
        if r.extra.get("past_deliver_at"):
            lines.append(f"| {r.name} | {r.rules} | {r.client} | past deliver_at | {r.events} {_fmt(Distribution.of(r.extra['past_deliver_at']))}")
        if r.extra.get("lag"):
            lines.append(f"| {r.name} | {r.rules} | {r.client} | ack lag | {r.events} {_fmt(Distribution.of(r.extra['lag']))}")
    return lines


def probe_table(cals: dict[str, Calibration]) -> list[str]:
    lines = ["| phase / client | quantity | n | min | p50 | p90 | p99 | p99.9 | max |", "|---|---|---|---|---|---|---|---|---|"]
    for key, cal in cals.items():
        for q in ("call_overhead_ms", "timer_overshoot_ms", "nack_lateness_ms", "nack_earliness_ms", "redeliver_lateness_ms"):
            lines.append(f"| {key} | {q} {_fmt(cal.distributions[q])}")
    return lines


def bands_table(cals: dict[str, Calibration]) -> list[str]:
    lines = ["| phase / client | dispatch_latency_ms | delayed_late_ms | early_ms | ack_grouping_ms |", "|---|---|---|---|---|"]
    for key, cal in cals.items():
        b = TimingBands.from_calibration(cal, broker_tick_ms=BROKER_TICK_MS)
        lines.append(f"| {key} | {b.dispatch_latency_ms:g} | {b.delayed_late_ms:g} | {b.early_ms:g} | {b.ack_grouping_ms:g} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--service-url", required=True)
    ap.add_argument("--admin-url", required=True)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--phases", default="idle,load")
    ap.add_argument("--only", default="", help="comma-separated scenario names (default all; 'none' for none): " + ", ".join(SCENARIOS))
    ap.add_argument("--out", default="out/timing", help="where the raw figures go (JSON)")
    ap.add_argument("--write-docs", default=None, help="also write the markdown report here (e.g. docs/timing-bands.md)")
    ap.add_argument("--load-limit-s", type=int, default=1800)
    ap.add_argument("--default-probes", type=int, default=0,
                    help="in each phase, also run calibrate() with its defaults this many times per client")
    ap.add_argument("--java-ack-round", type=int, default=100,
                    help="messages per Java ack-timeout round: fewer gives more independent redelivery events")
    args = ap.parse_args(argv)
    JAVA_ACK_ROUND[0] = args.java_ack_round
    names = [] if args.only == "none" else ([x for x in args.only.split(",") if x] or list(SCENARIOS))
    unknown = set(names) - set(SCENARIOS)
    if unknown:
        ap.error(f"unknown scenario(s) {sorted(unknown)}; known: {', '.join(SCENARIOS)}")
    endpoint = BrokerEndpoint("external", args.service_url, args.admin_url)
    py, jv = BrokerTarget(endpoint, client="python"), BrokerTarget(endpoint, client="java")
    started = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {"machine": machine_description(), "started": started, "broker_version": py.broker_version(),
                              "python_client": pulsar.__version__, "java_client": jv.java_driver_version(), "phases": {}}
    all_results: dict[str, list[Result]] = {}
    cals: dict[str, Calibration] = {}
    try:
        for phase in args.phases.split(","):
            load = start_load(args.load_limit_s) if phase == "load" else []
            results = []
            t_phase = time.monotonic()
            try:
                for name in names:
                    t0 = time.monotonic()
                    r = SCENARIOS[name](py, jv, endpoint, args.samples)
                    results.append(r)
                    print(f"[{phase}] {name}: {len(r.late)} lateness, {len(r.early)} earliness samples, {r.events} events, "
                          f"{time.monotonic() - t0:.0f} s", flush=True)
                    if "calibration" in r.extra:
                        cals[f"{phase} / {name}"] = r.extra["calibration"]
                for k in range(args.default_probes):
                    for client, target in (("python", py), ("java", jv)):
                        cal = calibrate(args.service_url, args.admin_url, client=client, target=target)
                        cals[f"{phase} / calibrate() #{k + 1} {client}"] = cal
                        print(f"[{phase}] calibrate() {client}: {cal.duration_s:.1f} s", flush=True)
            finally:
                stop_load(load)
            all_results[phase] = results
            report["phases"][phase] = {
                "seconds": round(time.monotonic() - t_phase),
                "load": f"{len(load)} busy-looping processes" if load else "none started by this script",
                "results": [{"name": r.name, "rules": r.rules, "client": r.client, "events": r.events,
                             "late": Distribution.of(r.late).to_json() if r.late else None,
                             "early": Distribution.of(r.early).to_json() if r.early else None,
                             **({"lag": Distribution.of(r.extra["lag"]).to_json()} if r.extra.get("lag") else {}),
                             **({"past_deliver_at": Distribution.of(r.extra["past_deliver_at"]).to_json()} if r.extra.get("past_deliver_at") else {}),
                             "missing": r.extra.get("missing", 0)} for r in results],
            }
            print("\n".join([f"\n## {phase}"] + table(results)), flush=True)
    finally:
        jv.close()
    report["calibrations"] = {k: c.to_json() for k, c in cals.items()}
    report["bands"] = {k: TimingBands.from_calibration(c, broker_tick_ms=BROKER_TICK_MS).to_json() for k, c in cals.items()}
    (out / "timing-distributions.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    print("\n".join(["\n## probe quantities"] + probe_table(cals) + ["\n## bands"] + bands_table(cals)))
    if args.write_docs:
        write_docs(Path(args.write_docs), report, all_results, cals, " ".join(sys.argv))
    return 0


def write_docs(path: Path, report: dict, results: dict[str, list[Result]], cals: dict[str, Calibration], command: str) -> None:
    lines = [
        "# Timing bands: measured distributions",
        "",
        "How late (or early) the live harness records what the timing rules time, measured on this",
        "project's development machine, and the bands `conformance.timing.TimingBands.from_calibration`",
        "derives from it (the formula and its reasoning are in `conformance/timing.py`'s docstring).",
        "Written by `benchmarks/timing_distributions.py`; all figures in ms.",
        "",
        f"- Run: {report['started']}, `{command}`",
        f"- Machine: {report['machine']} (shared with other engineers' work while measuring: \"idle\" means",
        "  no load started by the benchmark, not an idle machine)",
        f"- Broker: Apache Pulsar {report['broker_version']} standalone (the suite's embedded broker: strict",
        "  delayed delivery, tick 100 ms), loopback",
        f"- Clients: Python pulsar-client {report['python_client']} (C++ core), Java pulsar-client {report['java_client']} through the driver",
        "- Load phase: two busy-looping Python processes, one per core, for the whole phase.",
        "",
        "Lateness = recorded arrival (the op's end) minus the model's window end (no slack), counted only",
        "for receives that began before the window closed (as the checker judges). Earliness = window",
        "start minus recorded arrival; > 0 would be early. `events` = receives that waited, i.e. distinct",
        "redelivery / dispatch events behind the samples (samples of one event are correlated).",
        "",
    ]
    for phase, rs in results.items():
        lines += [f"## {phase} ({report['phases'][phase]['seconds']} s)", ""] + table(rs) + [""]
    lines += ["## Probe quantities and derived bands", "",
              "The nack scenarios are `calibrate()`'s probe at full size (1000 queued receives, 1000 single",
              "nacks, 1000 empty 20 ms receives); `calibrate()` at the start of a run takes the same",
              "measurements with 200 / 50 / 30 samples.", ""]
    lines += probe_table(cals) + ["", "Bands (`TimingBands.from_calibration(cal, broker_tick_ms=100)`):", ""] + bands_table(cals) + [""]
    path.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
