"""Cache hygiene with the real embedded broker (issue 21, item 6): a clean stop removes the broker's
run folder, so repeated starts (``STARTS``) leave ``runs/`` as it was; a broker killed with SIGKILL, or one that fails
to start, keeps its folder and the error names it; ``cache prune`` then removes it.

Each test uses its own cache root (``tmp_path``) whose ``dist/`` is a link to the user cache's, so the
broker release is not fetched again and brokers other people start in the user cache do not change
the counts. About 20-30 s per start on 2 cores.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fixtures.admin import AdminClient
from fixtures.embedded import EmbeddedBroker, cache_root, wait_gone
from fixtures.errors import BrokerStartError
from pulsar_conformance import cache_command
from pulsar_conformance.broker_health import BrokerMonitor

pytestmark = pytest.mark.live

STARTS = 3  # each start and stop is checked on its own: three show the folder goes every time


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """A cache root of its own that shares the user cache's broker distributions."""
    real = cache_root() / "dist"
    real.mkdir(parents=True, exist_ok=True)
    root = tmp_path / "cache"
    root.mkdir()
    (root / "dist").symlink_to(real, target_is_directory=True)
    return root


def _runs(root: Path) -> tuple[int, int]:
    """(run folders, their bytes) under ``root/runs``."""
    runs = root / "runs"
    folders = [p for p in runs.iterdir()] if runs.is_dir() else []
    return len(folders), sum(cache_command.tree_bytes(p) for p in folders)



@pytest.mark.extended  # docs/ci.md: the extended tier (broker starts and stops)
def test_repeated_starts_and_clean_stops_leave_the_runs_folder_as_it_was(cache):
    before = _runs(cache)
    would_have_grown = 0
    for i in range(STARTS):
        broker = EmbeddedBroker(cache=cache)
        endpoint = broker.start()
        run_dir = broker.run_dir
        try:
            admin = AdminClient(endpoint.admin_url)
            assert admin.is_ready()
            admin.close()
            assert (run_dir / "broker.log").stat().st_size > 0
            # while it runs the folder is in use: prune must leave it
            [entry] = [e for e in cache_command.scan(cache) if e.kind == "run"]
            assert entry.in_use and str(endpoint.pid) in entry.in_use, entry
            assert cache_command.prune(cache).removed == []
            would_have_grown += cache_command.tree_bytes(run_dir)
        finally:
            broker.stop()
        assert wait_gone(endpoint.pid)
        assert broker.kept_run_dir is None, broker.kept_because
        assert not run_dir.exists(), f"start {i + 1}: a clean stop left {run_dir}"
        assert _runs(cache) == before, f"start {i + 1}: runs/ grew from {before} to {_runs(cache)}"
    print(f"\n{STARTS} starts: runs/ before {before[0]} folders {before[1]} bytes, after {_runs(cache)[0]} folders "
          f"{_runs(cache)[1]} bytes; the run folders held {would_have_grown} bytes at their stops "
          f"({would_have_grown / STARTS / 1e6:.1f} MB each), which a clean stop removed")


@pytest.mark.extended  # docs/ci.md: the extended tier (broker starts and stops)
def test_a_killed_broker_keeps_its_run_folder_and_names_it_then_prune_removes_it(cache):
    said: list[str] = []
    broker = EmbeddedBroker(cache=cache, progress=said.append)
    endpoint = broker.start()
    run_dir = broker.run_dir
    try:
        os.killpg(endpoint.pid, signal.SIGKILL)  # as test_broker_death.py does to the run's broker
        assert wait_gone(endpoint.pid)
        death = BrokerMonitor(endpoint, grace_s=1.0).check()
        assert death is not None and str(run_dir) in death.report(), "the death report must name the log in the run folder"
    finally:
        broker.stop()
    assert run_dir.is_dir() and (run_dir / "broker.log").stat().st_size > 0, "the log of a crashed broker was removed"
    assert broker.kept_run_dir == run_dir and "had died" in (broker.kept_because or "")
    assert [line for line in said if str(run_dir) in line and "is kept" in line], said
    [entry] = [e for e in cache_command.scan(cache) if e.kind == "run"]
    assert entry.in_use is None and entry.note.startswith("kept: ")
    freed = cache_command.tree_bytes(run_dir)
    result = cache_command.prune(cache)
    assert [e.paths[0] for e in result.removed] == [run_dir] and result.freed_bytes == freed
    assert not run_dir.exists() and _runs(cache) == (0, 0)


def test_a_failed_start_keeps_its_run_folder_and_the_error_names_it(cache):
    broker = EmbeddedBroker(cache=cache, overrides={"managedLedgerDefaultEnsembleSize": "not-a-number"}, readiness_timeout_s=120)
    with pytest.raises(BrokerStartError) as err:
        broker.start()
    assert err.value.step in ("jvm-start", "readiness")
    assert f"the run folder {broker.run_dir}" in str(err.value) and "cache prune" in str(err.value)
    assert (broker.run_dir / "broker.log").exists() and (broker.run_dir / "standalone.conf").exists()


def test_a_config_error_before_any_jvm_leaves_no_run_folder(cache):
    with pytest.raises(BrokerStartError) as err:
        EmbeddedBroker(cache=cache, overrides={"noSuchBrokerKey": "1"}).start()
    assert err.value.step == "configure"
    assert _runs(cache) == (0, 0)


@pytest.mark.extended  # docs/ci.md: the extended tier (broker starts and stops)
def test_cli_broker_start_stop_removes_the_run_folder_and_cache_list_shows_it_in_use(cache):
    env = dict(os.environ, PULSAR_CONFORMANCE_CACHE=str(cache))
    cli = [sys.executable, "-m", "pulsar_conformance"]
    started = subprocess.run(cli + ["broker", "start", "--json", "--name", "hygiene"], capture_output=True, text=True, env=env, timeout=300)
    assert started.returncode == 0, started.stderr
    state = json.loads(started.stdout)
    run_dir = Path(state["run_dir"])
    try:
        assert run_dir.parent == cache / "runs"
        listed = subprocess.run(cli + ["cache", "list", "--json"], capture_output=True, text=True, env=env, timeout=60)
        assert listed.returncode == 0, listed.stderr
        runs = [e for e in json.loads(listed.stdout)["entries"] if e["kind"] == "run"]
        assert [(r["name"], bool(r["in_use"])) for r in runs] == [(run_dir.name, True)]  # the starter exited; the JVM runs
    finally:
        stopped = subprocess.run(cli + ["broker", "stop", "--name", "hygiene"], capture_output=True, text=True, env=env, timeout=120)
    assert stopped.returncode == 0, stopped.stderr
    assert wait_gone(state["pid"])
    assert not run_dir.exists() and _runs(cache) == (0, 0)
