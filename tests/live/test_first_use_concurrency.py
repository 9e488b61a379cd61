"""Two first uses at once of a real artifact: two processes ask for the Go driver on one empty cache folder
(``$PULSAR_CONFORMANCE_CACHE`` in a temp folder; the machine's Go module and build caches as they are).
One builds it, the other waits, says so once, and reuses the build (fixtures/artifact_lock.py).

Here, not in tests/unit: it runs the Go toolchain and reaches the Go module proxy on a machine whose Go caches
are cold (about 2 minutes on 2 cores then; 10 to 30 s once they are warm). It needs no broker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.targets import go_driver

pytestmark = pytest.mark.live

REPO = Path(__file__).resolve().parents[2]

WORKER = r"""
from conformance.targets.go_driver import GoDriver, build_driver
build = build_driver(progress=lambda line: print("progress:", line, flush=True))
with GoDriver(build) as driver:  # the binary runs: its ready line names the client
    print("ready:", driver.client_version, flush=True)
print("folder:", build.folder, flush=True)
"""


def test_two_first_uses_at_once_build_the_go_driver_once(tmp_path):
    env = dict(os.environ, PULSAR_CONFORMANCE_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p))
    procs = [subprocess.Popen([sys.executable, "-c", WORKER], cwd=tmp_path, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for _ in range(2)]
    outs = [p.communicate(timeout=go_driver.BUILD_TIMEOUT_S + 120)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    builders = [out for out in outs if "progress: building the Go driver" in out]
    waiters = [out for out in outs if "waiting for another process" in out]
    assert len(builders) == 1 and len(waiters) == 1, outs
    assert waiters[0].count("waiting for another process") == 1
    assert "reusing what the other process made" in waiters[0]
    folders = {line for out in outs for line in out.splitlines() if line.startswith("folder:")}
    assert len(folders) == 1, folders
    folder = Path(folders.pop().split(":", 1)[1].strip())
    assert json.loads((folder / "build.json").read_text())["CGO_ENABLED"] == "0"
    assert b"ld-linux" not in (folder / "driver").read_bytes()[:8192], "a cgo build is dynamically linked"
    assert [p.name for p in folder.parent.iterdir() if p.name.startswith("build-0") and p.is_dir()] == [], \
        "no staging folder is left behind"
    assert all(f"ready: {go_driver.DEFAULT_CLIENT_VERSION}" in out for out in outs), outs


DIST_WORKER = r"""
from fixtures.embedded import ensure_distribution
dist = ensure_distribution("4.0.8", progress=lambda line: print("progress:", line, flush=True))
print("home:", dist.home, dist.downloaded_bytes, flush=True)
"""


def test_two_first_uses_at_once_fetch_and_unpack_the_broker_once(tmp_path):
    """The collision seen on an empty cache: two Maven copies of 4.0.8 into one ``download/`` folder. With
    ~/.m2 warm this costs a Maven start and one unpack (about 245 MB read, 330 MB written under tmp_path);
    on a cold ~/.m2 it downloads the 245 MB tarball first."""
    env = dict(os.environ, PULSAR_CONFORMANCE_CACHE=str(tmp_path / "cache"),
               PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p))
    procs = [subprocess.Popen([sys.executable, "-c", DIST_WORKER], cwd=tmp_path, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for _ in range(2)]
    outs = [p.communicate(timeout=1900)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    fetchers = [out for out in outs if "progress: fetching org.apache.pulsar:pulsar-server-distribution" in out]
    waiters = [out for out in outs if "waiting for another process" in out]
    assert len(fetchers) == 1 and len(waiters) == 1, outs
    assert "reusing what the other process made" in waiters[0] and "home:" in waiters[0]
    homes = {line.split()[1] for out in outs for line in out.splitlines() if line.startswith("home:")}
    assert len(homes) == 1, homes
    home = Path(homes.pop())
    assert (home / "bin" / "pulsar").exists() and (home.parent / ".complete").exists()
    assert not any(p.name.startswith("unpack-") for p in home.parent.iterdir()), "no half-unpacked staging is left"
