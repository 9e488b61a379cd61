"""Reach: how often a generated trace gives each lie of ``conformance/mutation.py`` something to lie about.

    python3 -m benchmarks.lie_reach [--traces 300] [--seed 1] [--only OPERATOR]... [--hypothesis]

The time-to-detection benchmark (``benchmarks/time_to_detection.py``) asks the fuzzer to find each
injected difference within 200 traces; a difference it never finds is often one no generated trace
reached: the lie had nothing to lie about (its ``chances`` column is 0). This benchmark measures that
reach alone, on the model, in seconds instead of minutes: for each operator, of ``--traces`` generated
traces, the share whose model history the operator can mutate into a history the spec forbids and a
registered rule states (a *lie*, what ``LyingTarget`` would tell), for the whole pool (``MODEL_CONFIG``)
and for the pool focused on the operator's area (``AREA_FOCUS``, what ``fuzz --focus`` does).

Two generators: the seeded one (``random_traces``: what ``fuzz --target model`` draws, the default) and,
with ``--hypothesis``, Hypothesis' own draws of ``strategies.traces`` (what ``fuzz --generator
hypothesis`` and the time-to-detection benchmark draw: shorter traces, and Hypothesis' search).
A rule of thumb from the 27 Nov runs: a difference whose focused reach is under 1 % was found on no seed
in 200 traces; above 5 %, on every seed.

Printed per operator: area, lies per 100 traces (whole pool, focused), and the seconds the run took.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.time_to_detection import AREA_FOCUS, AREAS  # noqa: E402
from conformance import mutation  # noqa: E402
from conformance.strategies import MODEL_CONFIG, GenConfig, RandomChooser, TraceBuilder, focused, traces  # noqa: E402
from conformance.trace import History  # noqa: E402


def histories_seeded(config: GenConfig, count: int, seed: int) -> list[History]:
    """The model histories of ``count`` seeded traces (``fuzz --target model``'s generator)."""
    out = []
    for i in range(count):
        builder = TraceBuilder(RandomChooser(random.Random(f"{seed}:{i}")), config)
        out.append(builder.model_history(builder.build()))
    return out


def histories_hypothesis(config: GenConfig, count: int, seed: int) -> list[History]:
    """The model histories of ``count`` traces Hypothesis draws (no shrinking: each draw once)."""
    from hypothesis import HealthCheck, given, seed as hyp_seed, settings

    from conformance.targets.model import ModelTarget

    out: list[History] = []
    model = ModelTarget()

    @hyp_seed(seed)
    @settings(max_examples=count, database=None, deadline=None, phases=("generate",),
              suppress_health_check=list(HealthCheck))
    @given(traces(config))
    def draw(trace):
        out.append(model.run(trace))

    draw()
    return out[:count]


def lies_in(operator: str, histories: list[History]) -> int:
    """How many of ``histories`` the operator turns into a lie (a mutant neither allowed nor unstated)."""
    tell = mutation.OPERATORS[operator]
    return sum(any(m.allowed is None and m.unstated is None for m in tell(h)) for h in histories)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--traces", type=int, default=300)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--only", action="append", default=[], help="an operator name (repeatable)")
    p.add_argument("--hypothesis", action="store_true", help="Hypothesis' draws instead of the seeded generator")
    args = p.parse_args(argv)
    unknown = [o for o in args.only if o not in mutation.OPERATORS]
    if unknown:
        p.error(f"unknown operator(s) {', '.join(unknown)}; known: {', '.join(sorted(mutation.OPERATORS))}")
    make = histories_hypothesis if args.hypothesis else histories_seeded
    t0 = time.monotonic()
    whole = make(MODEL_CONFIG, args.traces, args.seed)
    print(f"generator: {'hypothesis' if args.hypothesis else 'seeded'}, {args.traces} traces per pool, seed {args.seed}")
    print(f"{'operator':32} {'area':40} {'whole %':>8} {'focused %':>9}")
    per_area: dict[str, list[History]] = {}
    rows = 0
    for area, operators in AREAS.items():
        for operator in operators:
            if args.only and operator not in args.only:
                continue
            if area not in per_area:
                per_area[area] = make(focused(MODEL_CONFIG, AREA_FOCUS[area]), args.traces, args.seed)
            w = 100 * lies_in(operator, whole) / len(whole)
            f = 100 * lies_in(operator, per_area[area]) / len(per_area[area])
            print(f"{operator:32} {area[:40]:40} {w:8.1f} {f:9.1f}", flush=True)
            rows += 1
    print(f"{rows} operators in {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
