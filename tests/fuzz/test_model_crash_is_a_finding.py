"""A model that crashes while the fast generator runs it is a finding, not the end of the run.

The fast path draws each op against the model; an exception there (not ``NotModelledError``) used to
escape the worker and stop a mass run (a 200,000-trace campaign of 7 Dec 2026 stopped at trace 21,398
on a ``StopIteration`` in ``Broker.receive``). Now the ops drawn so far, the crashing one last, become a
trace that the model target replays, crashing the same way: a HARNESS-ERROR, shrunk and saved like any
FAIL, and the run goes on to its last trace.
"""

from __future__ import annotations

from pathlib import Path

from conformance.fuzz.driver import fuzz_model_fast
from conformance.trace import load
from reference_model.broker import Broker


def test_a_model_crash_in_the_generator_is_a_kept_harness_error(monkeypatch, tmp_path: Path):
    def nack_crashes(self, *args, **kwargs):
        raise RuntimeError("planted: the model cannot take a nack")

    monkeypatch.setattr(Broker, "STEPS", {**Broker.STEPS, "nack": nack_crashes})
    summary = fuzz_model_fast(examples=60, seed=3, out_dir=tmp_path / "out", run_id="crash", workers=1,
                              regressions_dir=tmp_path / "regressions", progress=False, max_shrink_runs=300)
    assert summary.examples == 60, summary.text()  # every trace was judged: the crash did not stop the run
    crashes = [f for f in summary.failures if f.signature == ("HARNESS-ERROR", "target:RuntimeError")]
    assert crashes, f"no trace reached a nack in 60, or its crash was not kept:\n{summary.text()}"
    kept = load(Path(crashes[0].paths["trace"]))
    assert kept.ops[-1].op == "nack"  # shrunk to what crashes: the nack is its last op
    assert Path(crashes[0].paths["trace"]).name.startswith("harness-error-target-runtimeerror-")
    others = [f for f in summary.failures if f not in crashes]
    assert not others, [f.signature for f in others]
