"""Is the run's broker still there? The check ``run`` makes after every case, and the one report of a death.

A harness error (a case that ended ERROR, a target that raised) may be the broker dying under the
run. ``BrokerMonitor.check`` tells the two apart: an embedded broker is dead when its process is
gone (its exit status read from the zombie's ``/proc/<pid>/stat``, or from ``waitpid`` when this
process is its parent); any broker is dead when neither its service port nor its admin port
accepts a connection for ``grace_s`` seconds (an external broker that stopped answering). The
death is described once (``BrokerDeath.report``): pid, exit status or signal, and the last lines
of the broker's log.

Choices: a live process whose ports are closed gets ``grace_s`` to answer again (a broker
restarted by a trace's ``restart_broker`` op is back before its case ends); the check reads
``endpoint.pid`` each time, since that restart changes it. A process with SIGKILL pending is
already dead: a JVM takes a while to tear down after ``kill -9``, and meanwhile it is neither a
zombie nor closed to connections (the kernel still completes handshakes on its listening socket),
so without this the case in flight could end ERROR, pass the check, and the death be charged to
the next case (the CI of afb37ff, tests/live/test_broker_death.py). After a case that ended ERROR,
``check(suspect=True)`` also gives the process ``settle_s`` to show that it is dying.
"""

from __future__ import annotations

import os
import signal
import socket
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlparse

LOG_TAIL_LINES = 20
DYING_WAIT_S = 10.0  # how long a process with SIGKILL pending is waited for before it is reported as it is


class BrokerDied(Exception):
    """Raised inside ``run`` when the broker is found dead; carries the death and the case it ended."""

    def __init__(self, death: "BrokerDeath"):
        super().__init__(death.headline())
        self.death = death


@dataclass
class BrokerDeath:
    kind: str  # embedded, docker, external
    pid: int | None
    exit_status: str  # "killed by signal 9 (SIGKILL)", "exited with code 1", "unknown (...)"
    log_path: str | None
    log_tail: str
    service_url: str
    at_case: str | None = None  # the case in flight when it was found dead
    label: str | None = None  # the run label (embedded, embedded-java, ...)
    time: float = 0.0
    action: str = "stopped"  # "stopped" or "restarted"

    def headline(self) -> str:
        who = f"the broker (pid {self.pid})" if self.pid else f"the broker at {self.service_url}"
        verb = "died" if self.pid else "stopped answering"
        where = f" during case {self.at_case} ({self.label})" if self.at_case else ""
        return f"{who} {verb}{where}: {self.exit_status}"

    def report(self) -> str:
        text = self.headline()
        if self.log_path:
            tail = self.log_tail.rstrip() or "(empty)"
            text += f"; last {LOG_TAIL_LINES} lines of {self.log_path}:\n" + "\n".join("    " + line for line in tail.splitlines())
        return text

    def to_json(self) -> dict[str, Any]:
        return {"time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.time)), "case": self.at_case, "label": self.label,
                "pid": self.pid, "exit_status": self.exit_status, "log_path": self.log_path, "action": self.action}


def sigkill_pending(pid: int) -> bool:
    """Whether ``pid`` has SIGKILL pending (``/proc/<pid>/status``): it is exiting."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            return sigkill_in_status(f.read())
    except OSError:
        return False


def sigkill_in_status(status: str) -> bool:
    """Whether a ``/proc/<pid>/status`` text shows SIGKILL pending, for a thread (SigPnd) or the process (ShdPnd):
    after ``kill -9`` it stays there until the kernel has released the whole process."""
    bit = 1 << (signal.SIGKILL - 1)
    for line in status.splitlines():
        if line.startswith(("SigPnd:", "ShdPnd:")):
            try:
                if int(line.split()[1], 16) & bit:
                    return True
            except (IndexError, ValueError):
                continue
    return False


def exit_status_of(pid: int) -> str | None:
    """How ``pid`` ended: from its zombie's ``/proc/<pid>/stat`` (field 52, the wait status), else
    ``waitpid`` when it is a child of this process (which reaps it). None: not known."""
    status: int | None = None
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        if fields[0] == "Z" and len(fields) > 49:
            status = int(fields[49])
    except (OSError, IndexError, ValueError):
        pass
    if status is None:
        try:
            found, raw = os.waitpid(pid, os.WNOHANG)
            if found == pid:
                status = raw
        except (ChildProcessError, OSError):
            pass
    if status is None:
        return None
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = "?"
        return f"killed by signal {sig} ({name})"
    if os.WIFEXITED(status):
        return f"exited with code {os.WEXITSTATUS(status)}"
    return f"wait status {status}"


def port_open(url: str | None, timeout_s: float = 1.0) -> bool:
    if not url:
        return False
    parsed = urlparse(url)
    default = {"http": 80, "https": 443, "pulsar": 6650, "pulsar+ssl": 6651}.get(parsed.scheme, 0)
    try:
        with socket.create_connection((parsed.hostname or "127.0.0.1", parsed.port or default), timeout=timeout_s):
            return True
    except OSError:
        return False


class BrokerMonitor:
    """Watches one endpoint (``fixtures.endpoint.BrokerEndpoint``)."""

    def __init__(self, endpoint: Any, *, grace_s: float = 5.0):
        self.endpoint = endpoint
        self.grace_s = grace_s

    def _process_gone(self) -> bool:
        from fixtures.embedded import process_alive

        pid = getattr(self.endpoint, "pid", None)
        return getattr(self.endpoint, "kind", None) == "embedded" and bool(pid) and not process_alive(pid)

    def _process_dying(self) -> bool:
        """An embedded broker with SIGKILL pending: it cannot live on, though it may not be gone yet."""
        pid = getattr(self.endpoint, "pid", None)
        return getattr(self.endpoint, "kind", None) == "embedded" and bool(pid) and sigkill_pending(pid)

    def _answering(self) -> bool:
        return port_open(self.endpoint.service_url) or port_open(self.endpoint.admin_url)

    def check(self, *, suspect: bool = False, settle_s: float = 2.0) -> BrokerDeath | None:
        """None while the broker lives and answers; else its ``BrokerDeath`` (case and label unset).
        ``suspect``: the case just run ended ERROR, so an embedded broker's process gets ``settle_s`` to be seen
        dying before its open ports count as life."""
        from fixtures.embedded import wait_gone

        embedded = getattr(self.endpoint, "kind", None) == "embedded" and bool(getattr(self.endpoint, "pid", None))
        if suspect and embedded:
            deadline = time.monotonic() + settle_s
            while not (self._process_gone() or self._process_dying()) and time.monotonic() < deadline:
                time.sleep(0.1)
        if self._process_dying():
            wait_gone(self.endpoint.pid, timeout_s=DYING_WAIT_S)  # for its exit status; _death says if it outlived this
        elif not self._process_gone():
            deadline = time.monotonic() + self.grace_s
            while True:
                if self._answering():
                    return None
                if self._process_gone() or time.monotonic() >= deadline:
                    break
                time.sleep(0.5)
        return self._death()

    def _death(self) -> BrokerDeath:
        from fixtures.embedded import tail

        pid = getattr(self.endpoint, "pid", None)
        kind = getattr(self.endpoint, "kind", "external")
        if self._process_gone():
            status = exit_status_of(pid) or "exit status unknown (the process is gone)"
        elif self._process_dying():
            status = f"killed by signal 9 (SIGKILL), still exiting {DYING_WAIT_S:g} s later"
        elif pid and kind == "embedded":
            status = f"the process is alive but its ports ({self.endpoint.service_url}, {self.endpoint.admin_url}) are closed"
        else:
            status = f"its ports ({self.endpoint.service_url}, {self.endpoint.admin_url}) refuse connections"
        log_path = getattr(self.endpoint, "log_path", None)
        return BrokerDeath(kind=kind, pid=pid if kind == "embedded" else None, exit_status=status, log_path=log_path,
                           log_tail=tail(log_path, LOG_TAIL_LINES) if log_path else "", service_url=self.endpoint.service_url,
                           time=time.time())
