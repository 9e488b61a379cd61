"""Differential fuzzing: generated traces on the model and on a target, judged, shrunk, stored.

One module per concern:

  driver.py       the generation driver: the seeded fast generator and the Hypothesis search,
                  single and parallel runs, the outcome corpus, ``FuzzSummary``, ``fuzz_budget``
  judge.py        run one trace and judge it; a failure's signature; crashes as ``ErrorReport``
  shrink.py       ``ddmin``: delete ops with their dependents, drop optional arguments
  regressions.py  confirm by re-runs (FAIL / FLAKY) and save (default ``OUT/regressions/``)
  program.py      a trace (and its history) as a short program a person reads

The command line (``pulsar-conformance fuzz``) is ``pulsar_conformance.cli``; see docs/fuzzing.md.
The names below are the package's interface (``from conformance.fuzz import ...``).
"""

from conformance.fuzz.driver import (
    FuzzSummary,
    fuzz,
    fuzz_budget,
    fuzz_hypothesis,
    fuzz_model_fast,
    hypothesis_search,
)
from conformance.fuzz.judge import (
    FAIL,
    FLAKY,
    HARNESS_ERROR,
    INDET,
    PASS,
    ErrorReport,
    has_signature,
    run_and_judge,
    signature,
    trace_status,
)
from conformance.fuzz.program import op_line, program
from conformance.fuzz.regressions import REGRESSIONS_DIR, FailureRecord, confirm, save_regression
from conformance.fuzz.shrink import OPTIONAL_ARGS, ddmin

__all__ = [
    "FAIL", "FLAKY", "HARNESS_ERROR", "INDET", "OPTIONAL_ARGS", "PASS", "REGRESSIONS_DIR",
    "ErrorReport", "FailureRecord", "FuzzSummary",
    "confirm", "ddmin", "fuzz", "fuzz_budget", "fuzz_hypothesis", "fuzz_model_fast", "has_signature",
    "hypothesis_search", "op_line", "program", "run_and_judge", "save_regression", "signature", "trace_status",
]
