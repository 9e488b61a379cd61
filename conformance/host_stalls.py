"""Host stalls: the moments the machine did not run the broker, the harness or its client, measured,
so that a timing FAIL can say whether the lateness it saw can be told apart from the host.

Pulsar part: none; this is the harness's own evidence, like the timing bands (``conformance.timing``).
A band is measured once, at the start of a run; the load on a shared machine changes within minutes.
In the fresh-clone CI runs of 3 Dec 2026, four of five failed on one Java nack redelivery 97-292 ms
past its 50-239 ms band (nack-fixed-delay-java, dlq-java, cross-dlq-counts-go) while the other pytest
worker loaded the two cores. The suite's brokers log their GC pauses, and those logs hold young
pauses of 55-192 ms on this machine: one such pause when a redelivery falls due delays it by as much.
With three busy loops beside a live run, a watchdog thread in the harness and one in another JVM saw
the same 20-200 ms gaps at the same instants (docs/timing-bands.md#host-stalls).

What is measured, as stalls ``[from, to]`` on the monotonic clock, each at least ``MIN_STALL_MS``:
- the harness: a watchdog thread sleeps ``PERIOD_MS`` at a time; a wake-up past its due time is a
  stall of the process that runs the Python client (its C++ core runs in the harness process);
- the Java driver: the same watchdog in its JVM (CPU share, GC, safepoints; docs/java-driver.md,
  op ``stalls``). Java's ``System.nanoTime`` and Python's ``time.monotonic`` both read
  CLOCK_MONOTONIC on Linux; the harness drops the driver's report if the two disagree by more than
  ``CLOCK_AGREEMENT_MS``;
- the embedded broker: the stop-the-world pauses its JVM logs (``-Xlog:gc*``, fixtures/embedded.py),
  stamped with the wall clock and mapped onto the monotonic one;
- the CPU itself: Linux's pressure stall information (``/proc/pressure/cpu``, "some": the wall time
  in which at least one runnable task waited for a CPU; kernel Documentation/accounting/psi.rst),
  read every ``PRESSURE_PERIOD_MS``. A slowdown made of many waits shorter than ``MIN_STALL_MS`` is
  invisible to the watchdogs and shows here: in the stressed run of 4 Dec 2026 a Java nack came
  183 ms after its due time, 50 ms past its band, while the watchdogs saw 31 ms. Each period with
  ``PRESSURE_MIN_MS`` or more of waiting is a stall ``[start, start + waited]`` seen by
  ``CPU_PRESSURE``, so the periods' stalls never overlap and their union is the waiting they add up to.
``conformance.targets.stall_sources`` collects them; a live history carries them in its header
(``host_stalls``, ms since the trace started), so a replay of the file is judged the same way.

How a verdict uses them (``excuses``). Let a timing deadline be D, the band B, and a receive end at
E > D + B without the message (or with it, late): it is X = E - D - B ms past the band. Let the
stalls cover S ms of [D, E] (their union, clipped to it). If S >= X, the time the machine did not
run the parties covers the whole lateness: the verdict is INDETERMINATE, with both figures, and the
case's test runs it again (pulsar_conformance/suite). If S < X the FAIL stands and says S. A real
late delivery still FAILs: on a quiet host, and on a loaded one whenever it is later than the
stalls seen (a nack never redelivered, a backoff ignored: seconds against tens of ms). S is the
larger of the watchdogs' and GC's union and the CPU pressure's total, never their sum: a watchdog
that waited for a CPU is counted by both.

Not measured: an external broker's pauses (its GC log is not ours to read; the CPU pressure is this
machine's), the Go driver's own watchdog (its timings have not flaked; the CPU pressure covers its
process too), and CPU pressure on a kernel without PSI (before Linux 4.20, or booted with
``psi=0``): there the file is absent and the source gives no stalls.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Sequence

PERIOD_MS = 10.0  # how long a watchdog sleeps between looks at the clock
MIN_STALL_MS = 15.0  # a wake-up (or GC pause) this long past its due time is a stall (timer slack: 0.1-5 ms)
CLOCK_AGREEMENT_MS = 1000.0  # a driver whose monotonic clock differs from the harness's by more: its stalls are dropped
NOT_JUDGED = "not judged: the host stalled"  # how an excused verdict's explanation begins, after "("

PRESSURE_PERIOD_MS = 20.0  # how often the CPU pressure is read; a stall's placement within its period is not known
PRESSURE_MIN_MS = 1.0  # a period with less waiting than this is not recorded (a quiet host's noise)

HARNESS = "harness"
JAVA_DRIVER = "java driver"
BROKER_GC = "broker GC"
CPU_PRESSURE = "cpu pressure"


@dataclass(frozen=True)
class Stall:
    """An interval, in ms since the trace started, in which ``seen_by``'s watchdog did not run."""

    from_ms: float
    to_ms: float
    seen_by: str

    @property
    def ms(self) -> float:
        return self.to_ms - self.from_ms

    def to_json(self) -> list[Any]:
        return [round(self.from_ms, 3), round(self.to_ms, 3), self.seen_by]


def stalls_from_json(data: Any) -> tuple[Stall, ...]:
    """A header's ``host_stalls`` list; ``ValueError`` naming the first entry that is not
    ``[from_ms, to_ms, seen_by]`` with from_ms <= to_ms."""
    if not isinstance(data, list):
        raise ValueError(f"host_stalls must be a list of [from_ms, to_ms, seen_by], got {type(data).__name__}")
    out = []
    for i, item in enumerate(data):
        ok = (isinstance(item, list) and len(item) == 3 and isinstance(item[2], str)
              and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in item[:2]) and item[0] <= item[1])
        if not ok:
            raise ValueError(f"host_stalls[{i}] must be [from_ms, to_ms, seen_by] with from_ms <= to_ms, got {item!r}")
        out.append(Stall(float(item[0]), float(item[1]), item[2]))
    return tuple(out)


def overlapping(intervals: Iterable[tuple[float, float]], start: float, end: float) -> list[tuple[float, float]]:
    """The intervals ``(from, to)`` that overlap [start, end], in any one unit."""
    return [(a, b) for a, b in intervals if b > start and a < end]


def not_judged(why: str, explanation: str) -> str:
    """A verdict's explanation, marked as left undecided because the host stalled (``why``: ``excuses``)."""
    return f"({why}) {explanation}"


def was_excused(explanation: str) -> bool:
    """Whether a verdict's explanation is one ``not_judged`` marked."""
    return explanation.startswith("(" + NOT_JUDGED)


def stalled_ms(stalls: Iterable[Stall], start_ms: float, end_ms: float) -> float:
    """How many ms of [start_ms, end_ms] some watchdog saw stalled: the length of the union of the
    stalls, each clipped to the interval."""
    pieces = sorted((max(a, start_ms), min(b, end_ms))
                    for a, b in overlapping(((s.from_ms, s.to_ms) for s in stalls), start_ms, end_ms))
    total, reach = 0.0, start_ms
    for lo, hi in pieces:
        lo = max(lo, reach)
        if hi > lo:
            total += hi - lo
            reach = hi
    return total


def covered_ms(stalls: Iterable[Stall], start_ms: float, end_ms: float) -> float:
    """How many ms of [start_ms, end_ms] the host is known not to have run the parties: the larger of
    the watchdogs' and GC pauses' union and the CPU pressure's waiting (``stalled_ms`` of each), not
    their sum, since one wait for a CPU can show in both."""
    stalls = list(stalls)
    pressure = [s for s in stalls if s.seen_by == CPU_PRESSURE]
    others = [s for s in stalls if s.seen_by != CPU_PRESSURE]
    return max(stalled_ms(others, start_ms, end_ms), stalled_ms(pressure, start_ms, end_ms))


def excuses(stalls: Sequence[Stall], due_ms: float, band_ms: float, end_ms: float) -> str | None:
    """Why a receive ending at ``end_ms``, past ``due_ms`` + ``band_ms``, cannot be judged late
    (the stalls seen in [due_ms, end_ms] explain the lateness, as the module docstring says), or
    None: the lateness stands."""
    past = end_ms - due_ms - band_ms
    if past <= 0 or not stalls:
        return None
    seen = covered_ms(stalls, due_ms, end_ms)
    if seen < past:
        return None
    by = sorted({s.seen_by for s in stalls if overlapping([(s.from_ms, s.to_ms)], due_ms, end_ms)})
    return (f"{NOT_JUDGED} {seen:.0f} ms between {due_ms:g} and {end_ms:g} ms (seen by: {', '.join(by)}; "
            f"conformance/host_stalls.py), which covers the {past:.0f} ms past the band")
