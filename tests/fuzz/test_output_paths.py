"""Output paths are the user's (issue 15, item 5): a fuzz that finds failures writes its corpus,
summary and shrunk regressions under ``--out`` (or ``out_dir``), never into the package.

The checker's model is broken on purpose (``test_broken_model_is_caught``'s
``ForgetsSharedCumulativeRefusal``) so the seeded traces on the model do fail and get shrunk and
saved. Before and after, the test lists every regression-like file under the package folders
(with mtimes) and the package's own store, ``conformance/regressions/``; it runs from an empty
working folder, which must stay empty.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_broken_model_is_caught import ForgetsSharedCumulativeRefusal

import conformance
import conformance.checker as checker_module
import pulsar_conformance
from conformance.fuzz import REGRESSIONS_DIR, fuzz_budget
from conformance.fuzz.judge import check_history, signature
from conformance.targets.model import ModelTarget
from conformance.trace import load
from reference_model.broker import Broker as RealBroker

REPO = Path(__file__).resolve().parents[2]
PACKAGES = [Path(conformance.__file__).parent, Path(pulsar_conformance.__file__).parent]
SAVED = ("*.trace.jsonl", "*.history.jsonl", "*.verdicts.json", "*.parquet", "summary.json")


def _snapshot() -> dict[str, int]:
    """Every file a fuzz could write, under the packages (the store included), with its mtime."""
    files = {p for root in PACKAGES for pattern in SAVED for p in root.rglob(pattern)}
    files |= set(REGRESSIONS_DIR.iterdir())
    return {str(p): p.stat().st_mtime_ns for p in files}


@pytest.fixture
def broken_checker(monkeypatch, tmp_path):
    monkeypatch.setattr(checker_module, "Broker", ForgetsSharedCumulativeRefusal)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    before = _snapshot()
    yield tmp_path
    assert _snapshot() == before, "the fuzz wrote into the package"
    assert list(cwd.iterdir()) == [], "the fuzz wrote into the working folder"


def _saved_under(folder: Path, failures: list[dict]) -> None:
    assert failures, "the broken checker found nothing: the test proves nothing"
    # mostly the refusal the broken model forgets; a campaign may also reach another rule it breaks (a Java retry
    # consumer's cumulative ack on Shared: PLS-ACK-001 wrong-error), so each failure is checked to be the broken
    # checker's: the real checker passes its history
    assert ["PLS-OP-001", "unexpected-rejection"] in [f["signature"] for f in failures]
    for failure in failures:
        assert set(failure["paths"]) == {"trace", "history", "verdicts"}
        for path in failure["paths"].values():
            assert Path(path).parent == folder and Path(path).is_file()
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(checker_module, "Broker", RealBroker)
            assert signature(check_history(load(failure["paths"]["history"]))) is None, failure["signature"]


BROKEN_FUZZ = """
import sys
sys.path[:0] = [sys.argv[1], sys.argv[1] + "/tests/fuzz"]
import conformance.checker
from test_broken_model_is_caught import ForgetsSharedCumulativeRefusal
conformance.checker.Broker = ForgetsSharedCumulativeRefusal
from pulsar_conformance.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.mark.parametrize("generator", ["fast", "hypothesis"])
def test_the_fuzz_command_saves_its_regressions_under_out(broken_checker, generator):
    """In a process of its own, from the empty working folder (Hypothesis caches what it reads of
    the code once per process, into ``.hypothesis/``: here under --out)."""
    out = broken_checker / "out"
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    # seed 3: a campaign whose 300 traces reach a Shared cumulative ack with both generators (the draws move
    # when a feature pool changes: with the transactions pool, seed 1's Hypothesis campaign no longer does)
    # (when the model's choices move, a seed may miss it: the next is tried, at most eight, each in a fresh --out)
    for seed in (3, 5, 11, 17, 23, 29, 31, 37):
        if out.exists():
            shutil.rmtree(out)
        proc = subprocess.run([sys.executable, "-c", BROKEN_FUZZ, str(REPO), "fuzz", "--target", "model", "--generator", generator,
                               "--examples", "300", "--seed", str(seed), "--out", str(out), "--no-progress"],
                              capture_output=True, text=True, env=env, timeout=300)
        if proc.returncode == 1:
            break
    assert proc.returncode == 1, proc.stdout + proc.stderr
    summary = json.loads((out / "summary.json").read_text())
    _saved_under(out / "regressions", summary["failures"])
    extra = [".hypothesis"] if generator == "hypothesis" else []
    assert sorted(p.name for p in out.iterdir()) == sorted(["corpus", "regressions", "summary.json", *extra])


@pytest.mark.parametrize("target", ["model", ModelTarget()], ids=["name", "object"])
def test_the_library_budget_saves_its_regressions_under_out_dir(broken_checker, target):
    out = broken_checker / "budget"
    # 300 traces may or may not reach a Shared cumulative ack (the in-process Hypothesis budget's draws depend on the
    # pools and on what ran before in the session): the next seed is tried until one does, at most three
    for seed in (5, 3, 11):
        summary = fuzz_budget(target, examples=300, seed=seed, out_dir=out)
        if summary.failures:
            break
    _saved_under(out / "regressions", [f.to_json() for f in summary.failures])
