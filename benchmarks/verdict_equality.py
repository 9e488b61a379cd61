"""Equality fingerprint of the model and the checker on generated traces: one sha256 to compare before/after a speed change.

    python benchmarks/verdict_equality.py [--traces 1500] [--seeds 1 7]

For each seed and i < traces, the trace ``random_trace(Random(f"{seed}:{i}"), MODEL_CONFIG)`` is run by the
model (``ModelTarget``) and its history judged (``check``). The digest covers the JSON-lines text of every
history (``trace.dumps``) and every verdict in full (``Verdict.to_json``), so a speed change that alters a
single event or verdict, or a checker crash text, changes the hash. Equal hashes are the contract.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance.checker import check  # noqa: E402
from conformance.strategies import MODEL_CONFIG, random_trace  # noqa: E402
from conformance.targets.model import ModelTarget  # noqa: E402
from conformance.trace import dumps  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--traces", type=int, default=1500, help="traces per seed")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 7])
    args = parser.parse_args()
    histories_digest, verdicts_digest = hashlib.sha256(), hashlib.sha256()
    target = ModelTarget()
    n_verdicts = 0
    for seed in args.seeds:
        for i in range(args.traces):
            history = target.run(random_trace(random.Random(f"{seed}:{i}"), MODEL_CONFIG))
            histories_digest.update(dumps(history).encode())
            try:
                verdicts = [v.to_json() for v in check(history).verdicts]
            except Exception as err:  # noqa: BLE001 - a crash is a result too: it must stay the same
                verdicts = [{"crash": f"{type(err).__name__}: {err}"}]
            n_verdicts += len(verdicts)
            verdicts_digest.update(json.dumps(verdicts, sort_keys=True).encode())
    print(f"traces {len(args.seeds) * args.traces} verdicts {n_verdicts}")
    print(f"histories sha256 {histories_digest.hexdigest()}")
    print(f"verdicts  sha256 {verdicts_digest.hexdigest()}")


if __name__ == "__main__":
    main()
