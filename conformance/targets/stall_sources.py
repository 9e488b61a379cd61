"""Where host stalls come from during a live run: the harness's watchdog, the Java driver's, the
embedded broker's GC log and the CPU pressure (what they mean and how verdicts use them:
``conformance.host_stalls``).

Choices:
- One watchdog per process, started on first use and never stopped (a daemon thread): it costs
  one wake-up every ``PERIOD_MS`` and keeps the last ``MAX_KEPT`` stalls.
- The GC log is read from where the last read stopped (``GcLog``), so a long session does not
  read its log again per trace; a log that shrank was rotated and is read from its start.
- A source that cannot be read (no log yet, a line in another format) gives no stalls rather than
  an error: the stalls only ever turn a FAIL into INDETERMINATE, so missing ones keep the
  verdict as strict as it was without them.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from datetime import datetime
from pathlib import Path
from typing import Any, Iterable

from conformance.host_stalls import (CLOCK_AGREEMENT_MS, MIN_STALL_MS, PERIOD_MS, PRESSURE_MIN_MS, PRESSURE_PERIOD_MS,
                                     Stall, overlapping)

MAX_KEPT = 20_000  # stalls a source keeps (the oldest are dropped first)


class _StallLog:
    """The stalls a source recorded (the newest ``MAX_KEPT``), written by its own thread and read by the run's."""

    def __init__(self) -> None:
        self._stalls: deque[tuple[float, float]] = deque(maxlen=MAX_KEPT)
        self._lock = threading.Lock()

    def _record(self, from_s: float, to_s: float) -> None:
        with self._lock:
            self._stalls.append((from_s, to_s))

    def between(self, start_s: float, end_s: float) -> list[tuple[float, float]]:
        """The stalls that overlap [start_s, end_s] (monotonic seconds)."""
        with self._lock:
            return overlapping(self._stalls, start_s, end_s)


class StallWatch(_StallLog):
    """A watchdog thread: sleeps ``PERIOD_MS``, records each wake-up ``MIN_STALL_MS`` or more past its
    due time as a stall (monotonic seconds)."""

    def __init__(self, *, period_ms: float = PERIOD_MS, min_stall_ms: float = MIN_STALL_MS,
                 clock: Any = time.monotonic, sleep: Any = time.sleep):
        super().__init__()
        self.period_s = period_ms / 1000.0
        self.min_stall_s = min_stall_ms / 1000.0
        self._clock = clock
        self._sleep = sleep
        self._thread: threading.Thread | None = None

    def start(self) -> "StallWatch":
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="host-stall-watch", daemon=True)
            self._thread.start()
        return self

    def _loop(self) -> None:
        before = self._clock()
        while True:
            self._sleep(self.period_s)
            now = self._clock()
            self.observe(before, now)
            before = now

    def observe(self, before_s: float, now_s: float) -> None:
        """One look at the clock: a sleep of one period begun at ``before_s`` ended at ``now_s``."""
        due = before_s + self.period_s
        if now_s - due >= self.min_stall_s:
            self._record(due, now_s)


_HARNESS_WATCH: StallWatch | None = None
_HARNESS_LOCK = threading.Lock()


def harness_watch() -> StallWatch:
    """This process's watchdog, started on first use."""
    global _HARNESS_WATCH
    with _HARNESS_LOCK:
        if _HARNESS_WATCH is None:
            _HARNESS_WATCH = StallWatch().start()
        return _HARNESS_WATCH


PSI_CPU = Path("/proc/pressure/cpu")


def psi_some_total_us(text: str) -> int | None:
    """The ``some ... total=`` figure of a ``/proc/pressure/cpu`` read (microseconds in which at least one
    runnable task waited for a CPU, since boot), or None if the text has no such line."""
    for line in text.splitlines():
        fields = line.split()
        if fields and fields[0] == "some":
            for f in fields[1:]:
                if f.startswith("total="):
                    try:
                        return int(f[len("total="):])
                    except ValueError:
                        return None
    return None


def _read_psi() -> int | None:
    try:
        return psi_some_total_us(PSI_CPU.read_text())
    except OSError:
        return None


class CpuPressureWatch(_StallLog):
    """A thread that reads the CPU pressure every ``PRESSURE_PERIOD_MS`` and keeps each period's waiting
    of ``PRESSURE_MIN_MS`` or more as a stall ``(start, start + waited)`` (monotonic seconds). The
    waiting is capped at the period's length (``some`` is wall time), so the stalls of two periods
    never overlap."""

    def __init__(self, *, period_ms: float = PRESSURE_PERIOD_MS, min_ms: float = PRESSURE_MIN_MS,
                 read: Any = _read_psi, clock: Any = time.monotonic, sleep: Any = time.sleep):
        super().__init__()
        self.period_s = period_ms / 1000.0
        self.min_s = min_ms / 1000.0
        self._read, self._clock, self._sleep = read, clock, sleep
        self._thread: threading.Thread | None = None
        self._last: tuple[float, int] | None = None

    @property
    def available(self) -> bool:
        """Whether this kernel reports CPU pressure (PSI; Linux 4.20 or later, not booted with psi=0)."""
        return self._read() is not None

    def start(self) -> "CpuPressureWatch":
        if self._thread is None and self.available:
            self._thread = threading.Thread(target=self._loop, name="cpu-pressure-watch", daemon=True)
            self._thread.start()
        return self

    def _loop(self) -> None:
        while True:
            self.observe(self._clock(), self._read())
            self._sleep(self.period_s)

    def observe(self, now_s: float, total_us: int | None) -> None:
        """One read: the pressure's running total was ``total_us`` at ``now_s``."""
        if total_us is None:
            return
        last, self._last = self._last, (now_s, total_us)
        if last is None or now_s <= last[0] or total_us < last[1]:
            return
        waited = min((total_us - last[1]) / 1e6, now_s - last[0])
        if waited >= self.min_s:
            self._record(last[0], last[0] + waited)


_PRESSURE_WATCH: CpuPressureWatch | None = None


def cpu_pressure_watch() -> CpuPressureWatch:
    """This process's CPU pressure reader, started on first use (it records nothing where the kernel
    has no PSI)."""
    global _PRESSURE_WATCH
    with _HARNESS_LOCK:
        if _PRESSURE_WATCH is None:
            _PRESSURE_WATCH = CpuPressureWatch().start()
        return _PRESSURE_WATCH


# `-Xlog:gc*:...:time,uptime` (fixtures/embedded.py): the line is written when the pause ends, e.g.
# [2026-12-03T18:28:29.168+0000][73.480s] GC(17) Pause Young (Normal) (G1 Evacuation Pause) 188M->75M(256M) 64.675ms
_PAUSE = re.compile(r"^\[(?P<wall>\d{4}-\d\d-\d\dT[\d:.]+[+-]\d{4})\]\[[\d.]+s\] GC\(\d+\) Pause .*? (?P<ms>\d+(?:\.\d+)?)ms\s*$")


def gc_pause(line: str) -> tuple[float, float] | None:
    """A GC log line's stop-the-world pause as (from, to) in wall-clock seconds, or None."""
    m = _PAUSE.match(line)
    if m is None:
        return None
    try:
        end = datetime.strptime(m.group("wall"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()
    except ValueError:
        return None
    return end - float(m.group("ms")) / 1000.0, end


class GcLog:
    """The pauses of the broker JVM whose GC logs are ``<folder>/pulsar_gc_*.log*``, read as they grow."""

    def __init__(self, folder: str | Path, *, min_stall_ms: float = MIN_STALL_MS):
        self.folder = Path(folder)
        self.min_stall_s = min_stall_ms / 1000.0
        self._offsets: dict[Path, int] = {}
        self._pauses: deque[tuple[float, float]] = deque(maxlen=MAX_KEPT)
        self._lock = threading.Lock()

    def _read_new(self) -> None:
        for path in sorted(self.folder.glob("pulsar_gc_*.log*")):
            try:
                size = path.stat().st_size
                start = self._offsets.get(path, 0)
                if size < start:  # rotated: a new file under the old name
                    start = 0
                with path.open("rb") as f:
                    f.seek(start)
                    data = f.read(size - start)
            except OSError:
                continue
            done = data.rfind(b"\n") + 1  # a line still being written is read next time
            self._offsets[path] = start + done
            for raw in data[:done].splitlines():
                pause = gc_pause(raw.decode("utf-8", "replace"))
                if pause is not None and pause[1] - pause[0] >= self.min_stall_s:
                    self._pauses.append(pause)

    def between(self, start_wall_s: float, end_wall_s: float) -> list[tuple[float, float]]:
        """The pauses that overlap [start_wall_s, end_wall_s] (wall-clock seconds)."""
        with self._lock:
            self._read_new()
            return overlapping(self._pauses, start_wall_s, end_wall_s)


def relative(intervals: Iterable[tuple[float, float]], t0_s: float, seen_by: str) -> list[Stall]:
    """Intervals in seconds on the clock ``t0_s`` is read on, as ``Stall`` s in ms since ``t0_s`` (to the
    microsecond, as a history file writes them)."""
    return [Stall(round((a - t0_s) * 1000.0, 3), round((b - t0_s) * 1000.0, 3), seen_by) for a, b in intervals]


def driver_stalls(answer_value: Any, asked_s: float, answered_s: float) -> list[tuple[float, float]] | None:
    """The stalls in a driver's ``stalls`` answer (``{"now_ns", "stalls": [[from_ns, to_ns], ...]}``) as
    monotonic seconds, or None when its clock is not the harness's (``now_ns`` outside
    [asked_s, answered_s] by more than ``CLOCK_AGREEMENT_MS``) or the answer is not that shape."""
    if not isinstance(answer_value, dict):
        return None
    now_ns, stalls = answer_value.get("now_ns"), answer_value.get("stalls")
    if not isinstance(now_ns, int) or not isinstance(stalls, list):
        return None
    slack = CLOCK_AGREEMENT_MS / 1000.0
    if not asked_s - slack <= now_ns / 1e9 <= answered_s + slack:
        return None
    out = []
    for item in stalls:
        if isinstance(item, list) and len(item) == 2 and all(isinstance(x, int) for x in item) and item[0] <= item[1]:
            out.append((item[0] / 1e9, item[1] / 1e9))
    return out

