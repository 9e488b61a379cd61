"""``pulsar_conformance.broker_health``: a dead broker told from a live one, with real processes and
sockets standing for the broker's process and ports (the live test kills a real broker)."""

from __future__ import annotations

import signal
import socket
import subprocess
import threading
import time

import pytest

from fixtures.embedded import process_alive
from fixtures.endpoint import BrokerEndpoint
from pulsar_conformance.broker_health import BrokerMonitor, exit_status_of, sigkill_in_status, sigkill_pending


def _gone(proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 10
    while process_alive(proc.pid):
        assert time.monotonic() < deadline
        time.sleep(0.02)


@pytest.fixture
def listening():
    """Two listening loopback sockets: a service port and an admin port that accept connections."""
    socks = []
    for _ in range(2):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(16)
        socks.append(s)
    yield [s.getsockname()[1] for s in socks], socks
    for s in socks:
        s.close()


def test_exit_status_names_the_signal_or_the_code():
    killed = subprocess.Popen(["sleep", "30"])
    killed.send_signal(signal.SIGKILL)
    _gone(killed)
    assert exit_status_of(killed.pid) == "killed by signal 9 (SIGKILL)"
    exited = subprocess.Popen(["sh", "-c", "exit 3"])
    _gone(exited)
    assert exit_status_of(exited.pid) == "exited with code 3"


def test_a_live_broker_is_left_alone_and_a_dead_one_reported_once_with_its_log(tmp_path, listening):
    (service, admin), socks = listening
    log = tmp_path / "broker.log"
    log.write_text("".join(f"line {i}\n" for i in range(50)))
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    endpoint = BrokerEndpoint(kind="embedded", service_url=f"pulsar://127.0.0.1:{service}", admin_url=f"http://127.0.0.1:{admin}",
                              pid=proc.pid, log_path=str(log))
    monitor = BrokerMonitor(endpoint, grace_s=0.5)
    assert monitor.check() is None
    proc.send_signal(signal.SIGKILL)
    _gone(proc)
    death = monitor.check()  # the process is gone: dead at once, though its ports still answer here
    assert death is not None and death.pid == proc.pid and death.exit_status == "killed by signal 9 (SIGKILL)"
    death.at_case, death.label = "ack-individual", "embedded"
    report = death.report()
    assert report.startswith(f"the broker (pid {proc.pid}) died during case ack-individual (embedded): killed by signal 9")
    assert report.count("line ") == 20 and "line 49" in report and "line 29" not in report
    assert death.to_json()["exit_status"] == "killed by signal 9 (SIGKILL)"


def test_an_external_broker_that_stops_answering_is_dead_after_the_grace(listening):
    (service, admin), socks = listening
    endpoint = BrokerEndpoint(kind="external", service_url=f"pulsar://127.0.0.1:{service}", admin_url=f"http://127.0.0.1:{admin}")
    monitor = BrokerMonitor(endpoint, grace_s=0.5)
    assert monitor.check() is None
    socks[0].close()
    assert monitor.check() is None  # the admin port still answers
    socks[1].close()
    t0 = time.monotonic()
    death = monitor.check()
    assert death is not None and time.monotonic() - t0 >= 0.5
    assert death.pid is None and death.headline().startswith(f"the broker at pulsar://127.0.0.1:{service} stopped answering")


def test_a_case_that_ended_error_waits_for_a_broker_being_killed(listening):
    """The CI of afb37ff: the kill reached the JVM while its case was in flight; the case ended ERROR
    before the process was gone, the check found it alive and answering, and the death was charged to
    the next case. After an ERROR (``suspect``) the check gives the process time to be seen dying."""
    (service, admin), socks = listening
    for suspect, expect_death in ((False, False), (True, True)):
        proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
        endpoint = BrokerEndpoint(kind="embedded", service_url=f"pulsar://127.0.0.1:{service}",
                                  admin_url=f"http://127.0.0.1:{admin}", pid=proc.pid)
        assert not sigkill_pending(proc.pid)
        killer = threading.Timer(0.3, proc.send_signal, (signal.SIGKILL,))
        killer.start()
        death = BrokerMonitor(endpoint, grace_s=0.5).check(suspect=suspect, settle_s=3.0)
        killer.join()
        _gone(proc)
        assert (death is not None) == expect_death, (suspect, death)
        if death is not None:
            assert death.exit_status == "killed by signal 9 (SIGKILL)"


def test_sigkill_pending_is_read_from_the_status_pending_masks():
    """A JVM torn down after ``kill -9`` is neither gone nor a zombie for a while; its status shows SIGKILL (bit 9,
    mask 0x100) pending, per thread or for the whole process. A live process here shows none."""
    live = "Name:\tjava\nState:\tR (running)\nSigPnd:\t0000000000000000\nShdPnd:\t0000000000000000\n"
    assert not sigkill_in_status(live)
    assert sigkill_in_status(live.replace("ShdPnd:\t0000000000000000", "ShdPnd:\t0000000000000100"))
    assert sigkill_in_status(live.replace("SigPnd:\t0000000000000000", "SigPnd:\t0000000000004100"))
    assert not sigkill_in_status(live.replace("ShdPnd:\t0000000000000000", "ShdPnd:\t0000000000004000"))  # SIGTERM only
    import os
    assert not sigkill_pending(os.getpid())


def test_an_external_broker_after_an_error_case_is_not_waited_for(listening):
    (service, admin), _ = listening
    endpoint = BrokerEndpoint(kind="external", service_url=f"pulsar://127.0.0.1:{service}", admin_url=f"http://127.0.0.1:{admin}")
    t0 = time.monotonic()
    assert BrokerMonitor(endpoint, grace_s=0.5).check(suspect=True, settle_s=3.0) is None
    assert time.monotonic() - t0 < 1.5
