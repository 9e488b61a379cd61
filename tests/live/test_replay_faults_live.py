"""``replay`` of a fault case on ``--target embedded`` puts the broker behind the fault proxy, as
``run`` does (it exited 4 with "has no fault proxy" before issue 44). The real CLI, one embedded
broker (~1 minute here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]


def test_replay_of_a_fault_case_on_embedded_runs_it_behind_the_proxy(tmp_path):
    history = tmp_path / "cut.history.jsonl"
    done = subprocess.run([sys.executable, "-m", "pulsar_conformance", "replay", "fault-cut-exclusive-resumes",
                           "--target", "embedded", "--save", str(history)], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "fault proxy (Toxiproxy" in done.stderr
    verdicts = dict(line.split() for line in done.stdout.splitlines() if line.startswith("PLS-") and len(line.split()) == 2)
    assert verdicts.get("PLS-FAULT-003") == "PASS", done.stdout
    assert '"op": "cut_connections"' in history.read_text()
