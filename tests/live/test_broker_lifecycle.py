"""The embedded broker's lifecycle: side by side, overrides, clean stops, no orphan JVMs.

These start extra brokers (about 7 s each on a warm cache), beside the session broker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from fixtures.admin import AdminClient
from fixtures.embedded import EmbeddedBroker, process_alive, wait_gone
from fixtures.errors import BrokerStartError

pytestmark = pytest.mark.live



def test_second_broker_runs_beside_the_first_with_its_override(pulsar_broker):
    broker = EmbeddedBroker(overrides={"subscriptionKeySharedUseConsistentHashing": "false"})
    endpoint = broker.start()
    try:
        assert endpoint.service_url != pulsar_broker.service_url
        assert endpoint.admin_url != pulsar_broker.admin_url
        admin = AdminClient(endpoint.admin_url)
        runtime = admin.request("GET", "/admin/v2/brokers/configuration/runtime")
        assert runtime["subscriptionKeySharedUseConsistentHashing"] == "false"
        assert runtime["delayedDeliveryTickTimeMillis"] == "100"
        assert runtime["brokerDeleteInactiveTopicsEnabled"] == "false"
        admin.close()
        other = AdminClient(pulsar_broker.admin_url)
        assert other.is_ready(), "starting a second broker disturbed the first"
        other.close()
        listeners = [line for line in subprocess.run(["ss", "-ltnp"], capture_output=True, text=True).stdout.splitlines() if f"pid={endpoint.pid}," in line]
        assert len(listeners) >= 3, listeners  # broker, web, bookie
        assert all(" 127.0.0.1:" in line for line in listeners), f"a listener is not on loopback: {listeners}"
    finally:
        broker.stop()
    assert wait_gone(endpoint.pid), f"broker pid {endpoint.pid} outlived stop()"


def test_broker_dies_with_a_crashed_parent():
    """SIGKILL the process that started the broker: the kernel must take the JVM down too."""
    script = (
        "import json,sys,time\n"
        "from fixtures.embedded import EmbeddedBroker\n"
        "ep = EmbeddedBroker().start()\n"
        "print(json.dumps({'pid': ep.pid}), flush=True)\n"
        "time.sleep(600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=os.getcwd())
    try:
        line = parent.stdout.readline()
        assert line, "the helper process did not start a broker"
        pid = json.loads(line)["pid"]
        assert process_alive(pid)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=10)
        assert wait_gone(pid), f"JVM {pid} outlived its crashed parent"
    finally:
        if parent.poll() is None:
            parent.kill()


def test_failed_jvm_start_names_the_step_and_shows_the_log():
    broker = EmbeddedBroker(overrides={"managedLedgerDefaultEnsembleSize": "not-a-number"}, readiness_timeout_s=120)
    with pytest.raises(BrokerStartError) as err:
        broker.start()
    text = str(err.value)
    assert err.value.step in ("jvm-start", "readiness")
    assert "broker log:" in text and "last lines of the broker log" in text
    assert "--target pulsar://" in text, "the error must say how to use an existing broker"


def test_cli_broker_start_status_stop_leaves_no_java(tmp_path):
    env = dict(os.environ)
    cli = [sys.executable, "-m", "pulsar_conformance", "broker"]
    name = ["--name", f"test-{os.getpid()}"]
    started = subprocess.run(cli + ["start", "--json"] + name, capture_output=True, text=True, env=env, timeout=300)
    assert started.returncode == 0, started.stderr
    state = json.loads(started.stdout)
    pid = state["pid"]
    try:
        status = subprocess.run(cli + ["status", "--json"] + name, capture_output=True, text=True, env=env, timeout=60)
        assert status.returncode == 0, status.stderr
        info = json.loads(status.stdout)
        assert info["alive"] and info["ready"]
        assert info["version"] == "4.0.8"
        assert info["service_url"].startswith("pulsar://127.0.0.1:")
        assert os.path.exists(info["log_path"])
    finally:
        stopped = subprocess.run(cli + ["stop"] + name, capture_output=True, text=True, env=env, timeout=120)
    assert stopped.returncode == 0, stopped.stderr
    assert wait_gone(pid)
    after = subprocess.run(cli + ["status"] + name, capture_output=True, text=True, env=env, timeout=60)
    assert after.returncode == 2 and "no broker" in after.stderr
