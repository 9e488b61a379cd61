"""Timing bands: how late (or early) a live target may be, derived from what this run measured.

Pulsar part: none directly; this is the harness's own error budget. Every timing rule states a
window in which something happens (PLS-NACK-001/003/004/005, PLS-ACKTIMEOUT-002/004/005,
PLS-DELAY-001/003/004/005, PLS-REDELIVER-001, PLS-SHARED-002, PLS-FAILOVER-003's activation
delay) or how long the broker may lag behind the client (PLS-BACKLOG-001, C++ acks grouped every
100 ms). The reference model computes the documented window; what a live history records is the
instant a harness op *returned*, which is later than the instant the broker or client acted by
what the harness itself adds: the client call's own overhead, timer overshoot and scheduling
delay on a shared machine, and the broker's dispatch over loopback. A band is that addition,
measured at the start of the run (``calibrate``) instead of one blanket constant.

The derivation (``TimingBands.from_calibration``), in milliseconds, with S = ``safety_factor``
(default 2) and p99.9 the nearest-rank 99.9th percentile of a ``Calibration`` distribution:

0. Every p99.9 below is first scaled by ``tail_factor(n) = max(1, ln 1000 / ln n)`` for the
   distribution's sample count n. The start-of-run probe has 30-250 samples per quantity, so its
   "p99.9" is really its largest sample, about the (1 - 1/n) quantile; on an exponential-like
   tail the p99.9 lies ln 1000 / ln n times as far out (n = 50: x1.77; n = 30: x2.03). Without
   this, 12 default probes on this machine gave bands of 5-26 ms, below the p99.9 lateness the
   1000-sample runs measured for the same client (up to 23 ms; docs/timing-bands.md). At n >=
   1000 the factor is 1.
1. ``harness = p99.9(timer_overshoot) + p99.9(call_overhead)``. Timer overshoot (a receive with a
   timeout returning later than asked) is how late any client timer (the C++ nack timer, the
   ack-timeout tick, the broker-side wake-up seen through it) fires under this machine's current
   scheduling; call overhead (a receive of a message already in the receiver queue) is the
   harness's share between a message's arrival and the recorded end of the op. Both add to every
   delivery the rules time, so a deadline met by the client is seen at most ``harness`` later.
2. ``observed = max(0, p99.9(nack_lateness), p99.9(redeliver_lateness), p99.9(delivery_lateness))``:
   the direct evidence, how far past a documented window end real deliveries were recorded: single
   nacks of the minimum delay d = 100 ms (PLS-NACK-002; window end ``nack.end + d + d/3`` for C++,
   ``nack.end + d`` for Java), single-message ``redeliver_unacked`` (PLS-REDELIVER-001: due when
   the call returns), and a new message's first delivery (due when its send returns, PLS-SUB-002:
   the deadline the checker sets most often). They hold the broker's dispatch and the trip over
   loopback (or through the fault proxy), which (1) does not. The first delivery is measured since
   3 Dec 2026: under CI load a pattern consumer behind the fault proxy received a new message
   more than 173 ms after its send returned, while the nack and redeliver tails of the same probe
   gave a 153 ms band (regression pls-nack-001-late-redelivery-e043c266c59b); with two busy loops
   beside it, 1 first delivery in 8 took over 173 ms. A calibration recorded before then has no
   ``delivery_lateness_ms``; its band is derived without it.
3. ``dispatch_latency_ms = ceil(S * max(harness, observed))``, at least ``MIN_LATE_MS`` (1 ms:
   the clients count deadlines in whole milliseconds). S = 2: with 1000-sample distributions the
   bands (25-46 ms) covered every lateness measured on this machine, idle and under load, except
   one 46.2 ms Java sample against 46 (docs/timing-bands.md); S = 2 leaves a real late delivery,
   which shows up as tens of ms or more against windows 33 ms (100 ms nack) to 1000 ms (C++
   ack-timeout tick) wide, visible. Bands from the default short probe are tighter and keep a
   small risk for the Java client (its rare 20-46 ms stalls); the page says how small.
4. ``delayed_late_ms = 2 * broker_tick_ms + dispatch_latency_ms``: how long past ``deliver_at`` a
   strict-mode delayed message may come (PLS-DELAY-001/003/004). The broker only looks at its
   delayed-message tracker on its tick timer (``delayedDeliveryTickTimeMillis``; the suite's
   broker sets 100 ms), and the docs bound the delay by "deliverAt time plus the tickTimeMillis
   for the topic plus the delayedDeliveryTickTimeMillis" (two ticks); the measured band covers
   the dispatch after that. ``reference_model.delayed.delivery_span(..., dispatch_slack_ms=0)``
   ends at ``deliver_at + 2 * tick``, so judging its ``high + dispatch_latency_ms`` is the same.
5. ``early_ms = max(MIN_EARLY_MS, ceil(S * max(0, p99.9(nack_earliness))))``: how long before a
   window opens an arrival may be recorded. The harness and the clients read the same monotonic
   clock, so the measured earliness is normally <= 0; 1 ms covers the clients' truncation of
   deadlines to whole milliseconds.
6. ``ack_grouping_ms`` is documented, not measured: the C++ client flushes grouped acks every
   100 ms (``ackGroupingTimeMs``, PLS-BACKLOG-001), so the broker may not see an ack for that
   long, plus ``dispatch_latency_ms`` for the trip (the checker adds the two).

``with_override(ms)`` (``--timing-tolerance-ms``) replaces the measured lateness band by ``ms``
(wider or narrower) and keeps the measurements, so a report shows both.

The model target gets zeros (``for_model``): virtual time has no harness.

Not modelled: a per-rule band for the Failover activation stall (the old 1000 ms constant came
from one ~0.5 s stall after a rewind on a Failover subscription; the probe does not provoke one,
so that stall is judged with the same band as everything else and FAILs with its figures if it
recurs); clock skew between machines (``deliver_at`` is client wall time compared with the
broker's clock: on one machine they agree); the ack-timeout tick's own overshoot beyond the one
measured for receive timeouts.

Choices: percentiles are nearest-rank over the raw samples (no interpolation), so every figure
is one that was measured. A band is rounded up to a whole millisecond.
"""

from __future__ import annotations

import math
import os
import platform
import time
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timezone
from typing import Any, Iterable, Mapping, Sequence

TIMING_FORMAT_VERSION = 1
DEFAULT_SAFETY_FACTOR = 2.0
DEFAULT_BROKER_TICK_MS = 100  # fixtures/embedded.py CONFORMANCE_CONFIG: delayedDeliveryTickTimeMillis
DOCUMENTED_ACK_GROUPING_MS = 100  # C++ ackGroupingTimeMs (reference_model.profiles ack_grouping_ms)
MIN_LATE_MS = 1.0
DEFAULT_LIVE_LATE_MS = 100.0  # TimingBands.default_live: ~2 x the widest measured p99.9 lateness (46.2 ms)
DEFAULT_LIVE_EARLY_MS = 2.0  # clients truncate deadlines to whole ms; measured earliness stayed <= -1.2 ms
MIN_EARLY_MS = 1.0
PROBE_NACK_DELAY_MS = 100  # the minimum nack delay both clients allow (PLS-NACK-002)
PROBE_RECEIVE_TIMEOUT_MS = 20
# Probe samples dropped as warm-up: the first nacks and receives of a fresh client or Java driver
# pay one-time costs (class loading, JIT: a cold driver's first nack came back 30 ms late, the
# next 49 at 2-8 ms) that the cases run after the probe, on the same warm client, do not pay.
PROBE_WARMUP = 3

# The distributions a Calibration must hold for from_calibration.
REQUIRED = ("call_overhead_ms", "timer_overshoot_ms", "nack_lateness_ms", "nack_earliness_ms", "redeliver_lateness_ms")


class CalibrationError(RuntimeError):
    """The calibration probe could not measure what it needs (no broker, a failed op, too few
    samples). The message says which step failed; pass ``--timing-tolerance-ms`` to run with an
    explicit band instead."""


# How long the whole probe may take before it is abandoned (``ProbeWatch``): the default probe
# takes 8-15 s here, ~60 s on a loaded 2-core machine; past this something waits for what will not
# come (a producer that never connected left 253 receives of 5 s each: 21 minutes, silent).
PROBE_DEADLINE_S = 180.0
# A receive with at least this timeout is one that waits for a message the probe sent (steps 2, 3, 5);
# the short ones of step 4 are meant to come back empty.
_EXPECTING_MS = 1000


class ProbeWatch:
    """Watches the probe's ops as they end (``BrokerTarget.run``'s ``on_event``) and stops it with a
    ``CalibrationError`` naming the step and what it waited for, instead of letting it run on:

    - an op that did not end ``ok`` (a producer or consumer that never connected: every later op
      would wait on it);
    - a receive that waited for a message the probe sent and got none (nothing reached the consumer:
      the next receives would wait as long each);
    - the whole probe past ``deadline_s`` (``PROBE_DEADLINE_S``).

    Each op is bounded on its own (a receive by its timeout, the others by the client's operation
    timeout), so the probe ends at most one op after its deadline. ``where``: the service URL the
    clients use, for the message."""

    def __init__(self, *, deadline_s: float = PROBE_DEADLINE_S, where: str = "", clock: Any = time.monotonic):
        self.deadline_s = deadline_s
        self.where = where
        self.clock = clock
        self.started = clock()

    def _stop(self, ev: Any, what: str) -> CalibrationError:
        args = ", ".join(f"{k}={v}" for k, v in ev.op.args.items())
        return CalibrationError(f"timing calibration stopped at probe step {ev.step} ({ev.op.op} {args}"
                                f"{' on ' + self.where if self.where else ''}): {what}; check the broker and the "
                                "fault proxy's listener, or pass --timing-tolerance-ms to skip calibration")

    def __call__(self, ev: Any) -> None:
        from conformance.trace import received_message

        if ev.outcome.status != "ok":
            detail = " ".join(f"{ev.outcome.error or ''} {ev.outcome.detail or ''}".split())
            raise self._stop(ev, f"it ended {ev.outcome.status}{': ' + detail if detail else ''}")
        if ev.op.op == "receive" and int(ev.op.args.get("timeout_ms", 0)) >= _EXPECTING_MS \
                and received_message(ev.outcome) is None:
            raise self._stop(ev, f"waited {ev.op.args['timeout_ms']} ms for a message the probe sent to consumer "
                                 f"{ev.op.args.get('consumer')} and none came")
        spent = self.clock() - self.started
        if spent > self.deadline_s:
            raise self._stop(ev, f"the probe has run {spent:.0f} s, past its deadline of {self.deadline_s:.0f} s")


# --------------------------------------------------------------------------- distributions


def tail_factor(n: int) -> float:
    """Step 0: how much further out the p99.9 lies than the largest of ``n`` samples."""
    if n < 2:
        raise ValueError(f"a tail needs at least 2 samples, got {n}")
    return max(1.0, math.log(1000) / math.log(n))


def percentile(samples: Sequence[float], q: float) -> float:
    """Nearest-rank percentile: the smallest sample with at least ``q``% of the samples <= it."""
    if not samples:
        raise ValueError("percentile of no samples")
    if not 0 < q <= 100:
        raise ValueError(f"q must be in (0, 100], got {q}")
    ordered = sorted(samples)
    rank = math.ceil(round(q * len(ordered) / 100, 9))  # round: 99.9 / 100 * 1000 is 999.0000000000001
    return float(ordered[max(rank, 1) - 1])


@dataclass(frozen=True)
class Distribution:
    """A summary of one measured quantity, in ms: count and nearest-rank percentiles."""

    n: int
    min: float
    p50: float
    p90: float
    p99: float
    p999: float
    max: float

    @staticmethod
    def of(samples: Iterable[float]) -> "Distribution":
        xs = [float(x) for x in samples]
        if not xs:
            raise ValueError("a distribution needs at least one sample")
        return Distribution(len(xs), min(xs), percentile(xs, 50), percentile(xs, 90), percentile(xs, 99),
                            percentile(xs, 99.9), max(xs))

    def to_json(self) -> dict[str, float]:
        return {f.name: (self.n if f.name == "n" else round(getattr(self, f.name), 3)) for f in fields(self)}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> "Distribution":
        try:
            return Distribution(int(data["n"]), *(float(data[k]) for k in ("min", "p50", "p90", "p99", "p999", "max")))
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"a distribution needs n, min, p50, p90, p99, p999, max: {err}") from None


@dataclass(frozen=True)
class Calibration:
    """What the probe measured on one target with one client, at one time.

    ``distributions``: name -> ``Distribution``; the probe fills ``REQUIRED``:
    ``call_overhead_ms`` (wall time of a receive of an already-queued message),
    ``timer_overshoot_ms`` (wall time of an empty receive minus its timeout),
    ``nack_lateness_ms`` (redelivery end minus the window end, only receives that started
    before the window closed, as the checker judges them), ``nack_earliness_ms`` (window
    start minus redelivery end; > 0 means early) and ``redeliver_lateness_ms`` (a single
    message's redelivery end minus the end of the ``redeliver_unacked`` that asked for it); and, from
    every probe since 3 Dec 2026 (a calibration recorded before lacks it; step 2 uses it when present),
    ``delivery_lateness_ms`` (a new message's first receipt end minus its send's end)."""

    target: str
    client: str
    when: str  # ISO 8601 UTC
    distributions: Mapping[str, Distribution]
    client_version: str | None = None
    broker_version: str | None = None
    machine: str = ""
    nack_delay_ms: int = PROBE_NACK_DELAY_MS
    duration_s: float = 0.0
    broker_tick_ms: float | None = None  # the broker's delayedDeliveryTickTimeMillis, if it could be read

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target, "client": self.client, "when": self.when, "broker_tick_ms": self.broker_tick_ms,
            "client_version": self.client_version, "broker_version": self.broker_version,
            "machine": self.machine, "nack_delay_ms": self.nack_delay_ms, "duration_s": round(self.duration_s, 2),
            "distributions": {k: d.to_json() for k, d in sorted(self.distributions.items())},
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> "Calibration":
        if not isinstance(data, Mapping) or not isinstance(data.get("distributions"), Mapping):
            raise ValueError("a calibration is an object with target, client, when and distributions")
        return Calibration(
            target=str(data.get("target")), client=str(data.get("client")), when=str(data.get("when")),
            distributions={k: Distribution.from_json(v) for k, v in data["distributions"].items()},
            client_version=data.get("client_version"), broker_version=data.get("broker_version"),
            machine=str(data.get("machine", "")), nack_delay_ms=int(data.get("nack_delay_ms", PROBE_NACK_DELAY_MS)),
            duration_s=float(data.get("duration_s", 0.0)),
            broker_tick_ms=float(data["broker_tick_ms"]) if data.get("broker_tick_ms") is not None else None,
        )


# --------------------------------------------------------------------------- bands

_DELAY_RULES = frozenset({"PLS-DELAY-001", "PLS-DELAY-003", "PLS-DELAY-004", "PLS-DELAY-005"})


@dataclass(frozen=True)
class TimingBands:
    """The timing slack a check allows, in ms, and where it came from (see the module docstring).

    - ``dispatch_latency_ms``: how long after a window's end a due message may still be recorded.
    - ``ack_grouping_ms``: how long the broker may not have seen a C++ client's ack (documented).
    - ``early_ms``: how long before a window opens a message may be recorded.
    - ``delayed_late_ms``: how long after ``deliver_at`` a strict delayed message may come.
    - ``broker_tick_ms``: the broker's delayed-delivery tick the band was derived with.
    - ``source``: ``model`` | ``calibrated`` | ``override`` | ``default``; ``derivation``: the
      figures and formula, in words, for the report; ``calibration``: the raw measurements.
    """

    dispatch_latency_ms: float = 0.0
    ack_grouping_ms: float = 0.0
    early_ms: float = 0.0
    delayed_late_ms: float = 0.0
    broker_tick_ms: float = 0.0
    source: str = "model"
    derivation: str = "the model target: virtual time, no harness, no slack"
    safety_factor: float = DEFAULT_SAFETY_FACTOR
    calibration: Calibration | None = field(default=None, compare=False)

    @staticmethod
    def for_model() -> "TimingBands":
        """Zero slack: the model target runs on virtual time."""
        return TimingBands()

    @staticmethod
    def default_live() -> "TimingBands":
        """The bands for a live history that recorded none (written before bands were recorded,
        or run by ``run_case`` without calibration): ``DEFAULT_LIVE_LATE_MS`` lateness, about twice
        the widest p99.9 lateness measured on the reference machine (46.2 ms, Java ack-timeout
        backoff under load; docs/timing-bands.md), so a redelivery 0.3 s late still FAILs."""
        late = DEFAULT_LIVE_LATE_MS
        return TimingBands(dispatch_latency_ms=late, ack_grouping_ms=float(DOCUMENTED_ACK_GROUPING_MS),
                           early_ms=DEFAULT_LIVE_EARLY_MS, delayed_late_ms=2 * DEFAULT_BROKER_TICK_MS + late,
                           broker_tick_ms=float(DEFAULT_BROKER_TICK_MS), source="default",
                           derivation=(f"no calibration recorded with this history: {late:g} ms, about 2 x the widest "
                                       "p99.9 lateness measured on the reference machine (46.2 ms; docs/timing-bands.md); "
                                       "calibrate with `pulsar-conformance run` or pass --timing-tolerance-ms"))

    @staticmethod
    def for_target(target_name: str | None) -> "TimingBands":
        """Zero slack for the model target (or a history naming none); ``default_live`` otherwise."""
        return TimingBands.for_model() if target_name in (None, "model") else TimingBands.default_live()

    def no_narrower_than_default(self) -> "TimingBands":
        """These bands, each figure widened to at least ``default_live``'s: for a broker a test starts
        of its own, whose histories are judged as the findings were kept (under the default bands).
        A loaded CI machine failed a first delivery 176 ms late against the default 100 ms alone
        (CI of 2 Dec 2026), so the measured figure wins where it is wider. Applying it twice is
        applying it once."""
        floor = TimingBands.default_live()
        figures = ("dispatch_latency_ms", "ack_grouping_ms", "early_ms", "delayed_late_ms", "broker_tick_ms")
        if all(getattr(self, f) >= getattr(floor, f) for f in figures):
            return self
        return TimingBands.widest([self, floor])

    def describe(self) -> str:
        """``35 ms (calibrated)``: the lateness band and where it came from, for FAIL texts."""
        return f"{self.dispatch_latency_ms:g} ms ({self.source})"

    @staticmethod
    def from_calibration(cal: Calibration, *, broker_tick_ms: float | None = None,
                         safety_factor: float = DEFAULT_SAFETY_FACTOR,
                         ack_grouping_ms: float = DOCUMENTED_ACK_GROUPING_MS) -> "TimingBands":
        """Steps 1-6 of the module docstring. ``broker_tick_ms`` None: the tick the probe read from
        the broker (``cal.broker_tick_ms``), else ``DEFAULT_BROKER_TICK_MS`` (the suite's broker)."""
        if broker_tick_ms is None:
            broker_tick_ms = cal.broker_tick_ms if cal.broker_tick_ms is not None else DEFAULT_BROKER_TICK_MS
        missing = [k for k in REQUIRED if k not in cal.distributions]
        if missing:
            raise ValueError(f"the calibration lacks {', '.join(missing)}; run calibrate() again")
        if safety_factor < 1:
            raise ValueError(f"safety_factor must be >= 1, got {safety_factor}")
        if broker_tick_ms < 0:
            raise ValueError(f"broker_tick_ms must be >= 0, got {broker_tick_ms}")
        d = cal.distributions

        def tail(name: str) -> float:  # step 0 (a negative figure is not stretched)
            dist = d[name]
            return dist.p999 * tail_factor(max(dist.n, 2)) if dist.p999 > 0 else dist.p999

        harness = tail("timer_overshoot_ms") + tail("call_overhead_ms")  # step 1
        delivery = tail("delivery_lateness_ms") if "delivery_lateness_ms" in d else None
        observed = max(0.0, tail("nack_lateness_ms"), tail("redeliver_lateness_ms"), delivery or 0.0)  # step 2
        delivery_text = f", p99.9' first delivery {delivery:.3f}" if delivery is not None else ""
        late = max(MIN_LATE_MS, float(math.ceil(round(safety_factor * max(harness, observed), 9))))  # step 3
        early = max(MIN_EARLY_MS, float(math.ceil(round(safety_factor * max(0.0, tail("nack_earliness_ms")), 9))))  # step 5
        derivation = (f"dispatch_latency = ceil({safety_factor:g} x max(p99.9' timer overshoot {tail('timer_overshoot_ms'):.3f} "
                      f"+ p99.9' call overhead {tail('call_overhead_ms'):.3f}, p99.9' nack lateness {tail('nack_lateness_ms'):.3f}, "
                      f"p99.9' redeliver lateness {tail('redeliver_lateness_ms'):.3f}{delivery_text})) = {late:g} ms (p99.9' = p99.9 x tail_factor(n)); "
                      f"delayed = 2 x tick {broker_tick_ms:g} + {late:g} ms; early = {early:g} ms "
                      f"(p99.9 nack earliness {d['nack_earliness_ms'].p999:.3f}); ack grouping {ack_grouping_ms:g} ms documented; "
                      f"measured on {cal.target} with the {cal.client} client at {cal.when}")
        return TimingBands(dispatch_latency_ms=late, ack_grouping_ms=float(ack_grouping_ms), early_ms=early,
                           delayed_late_ms=2 * broker_tick_ms + late, broker_tick_ms=float(broker_tick_ms),
                           source="calibrated", derivation=derivation, safety_factor=safety_factor, calibration=cal)

    def with_override(self, ms: float) -> "TimingBands":
        """``--timing-tolerance-ms ms``: the lateness band is ``ms``, whatever was measured."""
        if ms is None or not math.isfinite(ms) or ms < 0:
            raise ValueError(f"--timing-tolerance-ms must be a number >= 0, got {ms!r}")
        measured = f"; measured band was {self.dispatch_latency_ms:g} ms ({self.source})"
        return replace(self, dispatch_latency_ms=float(ms), delayed_late_ms=2 * self.broker_tick_ms + float(ms),
                       source="override", derivation=f"--timing-tolerance-ms {ms:g}{measured}")

    @staticmethod
    def widest(bands: Sequence["TimingBands"]) -> "TimingBands":
        """One set of bands for a run that drives several clients (``--client python,java,mixed``):
        each figure the widest of ``bands`` (a mixed history may hold either client's handles).
        The calibration kept is the one that set ``dispatch_latency_ms``."""
        if not bands:
            raise ValueError("widest() needs at least one TimingBands")
        top = max(bands, key=lambda b: b.dispatch_latency_ms)
        return replace(top, ack_grouping_ms=max(b.ack_grouping_ms for b in bands), early_ms=max(b.early_ms for b in bands),
                       delayed_late_ms=max(b.delayed_late_ms for b in bands), broker_tick_ms=max(b.broker_tick_ms for b in bands),
                       derivation=" | ".join(b.derivation for b in bands),
                       source=top.source if len({b.source for b in bands}) == 1 else "mixed")

    def late_ms(self, rule_id: str) -> float:
        """How late past its window's end an arrival judged by ``rule_id`` may be recorded.

        The DELAY rules' figure is past ``deliver_at`` (step 4); every other rule's is past the
        model's window end."""
        return self.delayed_late_ms if rule_id in _DELAY_RULES else self.dispatch_latency_ms

    def tolerances_json(self) -> dict[str, float]:
        """The three figures ``conformance.checker.Tolerances`` reported, for old readers."""
        return {"dispatch_latency_ms": self.dispatch_latency_ms, "ack_grouping_ms": self.ack_grouping_ms,
                "early_ms": self.early_ms}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"version": TIMING_FORMAT_VERSION}
        for f in fields(self):
            if f.name != "calibration":
                out[f.name] = getattr(self, f.name)
        out["calibration"] = self.calibration.to_json() if self.calibration is not None else None
        return out

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> "TimingBands":
        if not isinstance(data, Mapping):
            raise ValueError(f"timing bands must be an object, got {data!r}")
        version = data.get("version", TIMING_FORMAT_VERSION)
        if version != TIMING_FORMAT_VERSION:
            raise ValueError(f"timing bands version {version!r} is not supported (this reader knows {TIMING_FORMAT_VERSION})")
        numbers = {}
        for name in ("dispatch_latency_ms", "ack_grouping_ms", "early_ms", "delayed_late_ms", "broker_tick_ms", "safety_factor"):
            if name in data:
                value = data[name]
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                    raise ValueError(f"timing band {name} must be a number >= 0, got {value!r}")
                numbers[name] = float(value)
        cal = data.get("calibration")
        return TimingBands(**numbers, source=str(data.get("source", "default")), derivation=str(data.get("derivation", "")),
                           calibration=Calibration.from_json(cal) if cal is not None else None)


def bands_from_header(header: Any) -> TimingBands | None:
    """The bands a history was judged with (``TraceHeader.timing``), or None for a history
    written before bands were recorded: the checker then uses its defaults."""
    timing = getattr(header, "timing", None)
    return None if timing is None else TimingBands.from_json(timing)


# --------------------------------------------------------------------------- the probe


def machine_description() -> str:
    """``Linux x86_64, 2 CPUs, load 0.31`` (for the report; no host names)."""
    try:
        load = f", load {os.getloadavg()[0]:.2f}"
    except OSError:
        load = ""
    return f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}{load}"


def probe_trace(samples: int, *, nack_samples: int = 50, delay_ms: int = PROBE_NACK_DELAY_MS, overshoot_samples: int = 30,
                receive_timeout_ms: int = PROBE_RECEIVE_TIMEOUT_MS, subscribe_extra: Mapping[str, Any] | None = None,
                redeliver_samples: int = 30, warmup: int = PROBE_WARMUP, delivery_samples: int | None = None):
    """The probe as a trace, so it runs through the very op loop the run uses (``BrokerTarget``).

    1. Send ``samples + nack_samples`` messages and let them reach the receiver queue (300 ms).
    2. Receive them all: each receive of a queued message is a call-overhead sample.
    3. ``nack_samples`` times: nack one message with the minimum delay and wait for it to come
       back. One at a time, because only a receive that is waiting when the window closes can
       show lateness (a burst comes back as one redelivery: one sample, whatever its size).
    4. ``overshoot_samples`` receives with a short timeout on the now empty consumer.
    5. ``redeliver_samples`` times, on a second topic and consumer: send one message, receive
       it, ``redeliver_unacked``, receive it again (how long after the call it comes), ack it.
    6. ``delivery_samples`` times (default ``redeliver_samples``), on a third topic, through a
       multi-topic consumer (``topics``: one more hop in the client, from the topic's consumer to
       the multi-topic queue): send one message and receive it. Steps 5 and 6 give the
       first-delivery samples (the Go client, which has no ``redeliver_unacked``, step 6 alone).
    ``subscribe_extra``: more subscribe args (e.g. a Java ``nack_backoff``, benchmarks only).
    ``warmup`` more nacks come first in step 3 (``PROBE_WARMUP``; ``probe_distributions`` drops them)."""
    from conformance.trace import make_trace

    labels = [f"m{i}" for i in range(samples + warmup + nack_samples)]
    ops: list[tuple[str, dict[str, Any]]] = [
        ("create_producer", {"producer": "p", "topic": "calibration"}),
        ("subscribe", {"consumer": "c", "topic": "calibration", "subscription": "s", "type": "Shared",
                       "nack_delay_ms": delay_ms, **dict(subscribe_extra or {})}),
    ]
    ops += [("send", {"producer": "p", "payload": label}) for label in labels]  # step 1
    ops.append(("advance_time", {"ms": 300}))
    ops += [("receive", {"consumer": "c", "timeout_ms": 5000}) for _ in labels]  # step 2
    for label in labels[samples:]:  # step 3
        ops += [("nack", {"consumer": "c", "message": label}), ("receive", {"consumer": "c", "timeout_ms": 5000})]
    ops += [("receive", {"consumer": "c", "timeout_ms": receive_timeout_ms}) for _ in range(overshoot_samples)]  # step 4
    ops += [("create_producer", {"producer": "p2", "topic": "calibration-redeliver"}),  # step 5
            ("subscribe", {"consumer": "d", "topic": "calibration-redeliver", "subscription": "s", "type": "Shared"})]
    for i in range(redeliver_samples):
        ops += [("send", {"producer": "p2", "payload": f"r{i}"}), ("receive", {"consumer": "d", "timeout_ms": 5000}),
                ("redeliver_unacked", {"consumer": "d"}), ("receive", {"consumer": "d", "timeout_ms": 5000}),
                ("ack", {"consumer": "d", "message": f"r{i}"})]
    ops += [("create_producer", {"producer": "p3", "topic": "calibration-multi"}),  # step 6
            ("subscribe", {"consumer": "e", "topics": ["calibration-multi"], "subscription": "s", "type": "Shared"})]
    for i in range(redeliver_samples if delivery_samples is None else delivery_samples):
        ops += [("send", {"producer": "p3", "payload": f"f{i}"}), ("receive", {"consumer": "e", "timeout_ms": 5000}),
                ("ack", {"consumer": "e", "message": f"f{i}"})]
    return make_trace("timing-calibration", ops, title="timing calibration probe", rules=("PLS-NACK-001", "PLS-NACK-005"))


def nack_samples_of(events: Sequence[Any], *, client: str, delay_ms: int,
                    backoff: tuple[int, int, float] | None = None, skip: int = 0) -> tuple[list[float], list[float], int]:
    """``(lateness, earliness, redeliveries)`` of every nack in ``events`` whose message came back.

    Windows are the model's own (``reference_model.redelivery``): C++ ``[start + d, end + d + d/3]``,
    Java ``JavaNackTracker`` (``[start + d - 255, end + d]``, later if an armed timer holds it).
    Lateness counts only receives that began before the window closed (the checker judges no
    other: a receive that starts after the window end finds the message already there).
    ``backoff``: a Java ``(min, max, multiplier)`` nack backoff (PLS-NACK-004); every nacked
    message is taken to be on its first delivery (count 0), as in ``probe_trace``. ``skip``: the
    first nacks to leave out (warm-up)."""
    from conformance.trace import received_message
    from reference_model.profiles import profile_for
    from reference_model.redelivery import JavaNackTracker, consumer_nack_window
    from reference_model.timing import Span

    profile = profile_for(None, client)
    tracker = JavaNackTracker()
    windows: dict[tuple[str, str], Any] = {}
    late: list[float] = []
    early: list[float] = []
    back = 0
    nacks = 0
    for ev in events:
        if ev.op.op == "nack" and ev.outcome.status == "ok":
            nacks += 1
            if nacks <= skip:
                continue
            windows[(ev.op.args["consumer"], ev.op.args["message"])] = consumer_nack_window(
                Span(ev.t_start_ms, ev.t_end_ms), delay_ms, backoff, 0, profile, tracker)
        elif ev.op.op == "receive":
            msg = received_message(ev.outcome)
            key = (ev.op.args["consumer"], msg.payload) if msg is not None else None
            if key is None or key not in windows:
                continue
            window = windows.pop(key)
            back += 1
            early.append(window.low - ev.t_end_ms)
            if ev.t_start_ms <= window.high:
                late.append(ev.t_end_ms - window.high)
    return late, early, back


def probe_distributions(events: Sequence[Any], *, client: str, delay_ms: int, receive_timeout_ms: int,
                        nack_samples: int, backoff: tuple[int, int, float] | None = None,
                        warmup: int = PROBE_WARMUP) -> dict[str, Distribution]:
    """The four ``REQUIRED`` distributions from the events of a ``probe_trace`` history (pure)."""
    from conformance.trace import received_message

    first_nack = next((i for i, ev in enumerate(events) if ev.op.op == "nack"), len(events))
    queued = [ev for ev in events[:first_nack] if ev.op.op == "receive"]
    overhead = [ev.t_end_ms - ev.t_start_ms for ev in queued[warmup:] if received_message(ev.outcome) is not None]
    queued = queued[warmup:]
    last_nack = max((i for i, ev in enumerate(events) if ev.op.op == "nack"), default=len(events))
    empty = [ev for ev in events[last_nack + 2:] if ev.op.op == "receive" and ev.op.args["consumer"] == "c"
             and ev.outcome.status == "ok" and received_message(ev.outcome) is None]
    redeliver = []
    delivery = []  # steps 5 and 6: how long after a send returned its message was recorded received
    for i, ev in enumerate(events[:-1]):
        after = events[i + 1]
        if ev.op.op == "redeliver_unacked" and after.op.op == "receive" and received_message(after.outcome) is not None:
            redeliver.append(after.t_end_ms - ev.t_end_ms)
        if ev.op.op == "send" and ev.op.args.get("producer") in ("p2", "p3") and ev.outcome.status == "ok" \
                and after.op.op == "receive" and received_message(after.outcome) is not None:
            delivery.append(after.t_end_ms - ev.t_end_ms)
    overshoot = [(ev.t_end_ms - ev.t_start_ms) - receive_timeout_ms for ev in empty]
    late, early, back = nack_samples_of(events, client=client, delay_ms=delay_ms, backoff=backoff, skip=warmup)
    problems = []
    if len(overhead) < len(queued) or not queued:
        problems.append(f"{len(queued) - len(overhead)} of {len(queued)} queued messages were not received")
    if back < nack_samples:
        problems.append(f"{nack_samples - back} of {nack_samples} nacked messages did not come back within 5 s")
    if not overshoot:
        problems.append("no empty receive timed out normally")
    if not late:
        problems.append("no redelivery was waited for")
    if not redeliver and client != "go":
        problems.append("no message came back after redeliver_unacked")
    if not delivery:
        problems.append("no message sent in steps 5 and 6 was received")
    if problems:
        raise CalibrationError("the timing probe is incomplete: " + "; ".join(problems)
                               + ". Is the broker overloaded? Pass --timing-tolerance-ms to skip calibration.")
    return {"call_overhead_ms": Distribution.of(overhead), "timer_overshoot_ms": Distribution.of(overshoot),
            "nack_lateness_ms": Distribution.of(late), "nack_earliness_ms": Distribution.of(early),
            # the Go client has no redeliver_unacked: its nack lateness stands in (the band takes the larger tail)
            "redeliver_lateness_ms": Distribution.of(redeliver if redeliver or client != "go" else late),
            "delivery_lateness_ms": Distribution.of(delivery)}


def read_broker_tick_ms(target: Any) -> float | None:
    """``delayedDeliveryTickTimeMillis`` from the broker's runtime configuration (admin API), or
    None when the endpoint refuses (e.g. a token without superuser rights)."""
    from fixtures.errors import AdminError

    admin = target.admin()
    try:
        runtime = admin.request("GET", "/admin/v2/brokers/configuration/runtime") or {}
        value = runtime.get("delayedDeliveryTickTimeMillis")
        return float(value) if value not in (None, "") else None
    except (AdminError, ValueError, TypeError):
        return None
    finally:
        admin.close()


def calibrate(service_url: str, admin_url: str, *, client: str = "python", samples: int = 200, nack_samples: int = 50,
              overshoot_samples: int = 30, redeliver_samples: int = 30, token: str | None = None,
              target: Any = None, deadline_s: float = PROBE_DEADLINE_S) -> Calibration:
    """Measure what the harness adds on this target with ``client`` (python, java or go): ~8-12 s
    with the defaults (``nack_samples`` single nacks of ~150 ms each dominate).

    ``target``: an existing ``conformance.targets.pulsar.BrokerTarget`` to reuse (its Java driver
    stays up for the run); otherwise one is made for ``service_url``/``admin_url`` and closed.
    Runs ``probe_trace`` in a fresh namespace like any trace, watched by ``ProbeWatch``: a failed op,
    a message that does not come, or ``deadline_s`` passed stops it. Raises ``CalibrationError``
    naming the step."""
    if client not in ("python", "java", "go"):
        raise ValueError(f"calibrate() measures the python, java or go client, got {client!r}")
    if samples < 10 or min(nack_samples, overshoot_samples, redeliver_samples) < 1:
        raise ValueError(f"calibrate() needs samples >= 10 and nack_samples, overshoot_samples, redeliver_samples >= 1; "
                         f"got {samples}, {nack_samples}, {overshoot_samples}, {redeliver_samples}")
    from conformance.targets.pulsar import BrokerTarget
    from fixtures.endpoint import BrokerEndpoint

    own = target is None
    if own:
        target = BrokerTarget(BrokerEndpoint("external", service_url, admin_url, token=token), client=client)
    elif target.client != client:
        raise ValueError(f"the target given runs the {target.client} client, not {client}")
    started = time.monotonic()
    when = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    broker_tick = read_broker_tick_ms(target)
    try:
        # the Go client has no redeliver_unacked (PLS-GO-001): its probe leaves that part out
        controls = getattr(getattr(target, "endpoint", None), "controls", None)
        watch = ProbeWatch(deadline_s=deadline_s, where=getattr(controls, "service_url", None) or service_url)
        history = target.run(probe_trace(samples, nack_samples=nack_samples, overshoot_samples=overshoot_samples,
                                         redeliver_samples=0 if client == "go" else redeliver_samples,
                                         delivery_samples=redeliver_samples), on_event=watch)
    except CalibrationError:
        raise
    except Exception as err:  # noqa: BLE001 - any failure of the probe is a calibration failure
        raise CalibrationError(f"the timing probe could not run on {service_url} ({type(err).__name__}: {err}); "
                               "check the broker, or pass --timing-tolerance-ms to skip calibration") from err
    finally:
        if own:
            target.close()
    failed = [ev for ev in history.events if ev.outcome.status != "ok"]
    if failed:
        ev = failed[0]
        raise CalibrationError(f"the timing probe's step {ev.step} ({ev.op.op}) ended {ev.outcome.status}: "
                               f"{ev.outcome.error or ''} {ev.outcome.detail or ''}".strip())
    dists = probe_distributions(history.events, client=client, delay_ms=PROBE_NACK_DELAY_MS,
                                receive_timeout_ms=PROBE_RECEIVE_TIMEOUT_MS, nack_samples=nack_samples)
    return Calibration(target=history.header.target or service_url, client=client, when=when, distributions=dists,
                       client_version=history.header.client_version, broker_version=history.header.broker_version,
                       machine=machine_description(), nack_delay_ms=PROBE_NACK_DELAY_MS,
                       duration_s=time.monotonic() - started, broker_tick_ms=broker_tick)
