"""Mutation score of the checker: of the lies the operators tell, how many does it catch, and charge right?

Applies every operator of ``conformance.mutation`` to every recorded history (default
``conformance/evidence/mutation/``), checks each mutant with ``conformance.checker.check`` and
prints, per rule and overall, in one run:

- mutants      mutants meant to break the rule (a mutant meant to break several counts for each);
- caught       overall and per operator: the checker gave FAIL to one of the rules the mutant was
               meant to break; per rule: FAIL on that very rule;
- elsewhere    FAIL only on other rules (caught, but charged to the wrong rule; per rule: FAIL, but
               not on this rule);
- indet        no FAIL, but INDETERMINATE on a rule the mutant was meant to break;
- missed       no FAIL at all (and no INDETERMINATE on a meant rule);
- crashed      the checker raised;
- allowed      the spec still allows the mutant (the operator says why): not counted as a miss;
- unstated     Pulsar does not allow it, but no registered rule states it (a registry gap, not judged);
- confounded   the unmutated history already FAILs every rule the mutant is meant to break.

A FAIL the unmutated history already had (same rule) does not count as catching anything.
Then every survivor (missed, indet, elsewhere, crashed) is listed with the operator, the history,
the step and why. ``--json OUT`` writes the full result.

    python3 benchmarks/mutation_score.py [--histories DIR] [--json OUT] [--survivors N]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance.checker import FAIL, INDET, check  # noqa: E402
from conformance.mutation import Mutant, mutants  # noqa: E402
from conformance.trace import History, load  # noqa: E402

DEFAULT_HISTORIES = ROOT / "conformance" / "evidence" / "mutation"
CLASSES = ("caught", "elsewhere", "indet", "missed", "crashed", "allowed", "unstated", "confounded")
NOT_JUDGED = ("allowed", "unstated", "confounded")


def load_histories(root: Path) -> list[tuple[str, History]]:
    out = []
    for path in sorted(root.rglob("*.jsonl")):
        item = load(path)
        if isinstance(item, History):
            out.append((str(path.relative_to(root)), item))
    if not out:
        raise SystemExit(f"no history files (*.jsonl) under {root}; record some (see its README.md) or pass --histories")
    return out


def classify(mutant: Mutant, baseline_fails: set[str]) -> dict[str, Any]:
    """Check one mutant; say whether the checker caught it and on which rules."""
    base = {"mutant": mutant.to_json()}
    if mutant.allowed is not None:
        return {**base, "class": "allowed", "why": mutant.allowed, "fails": [], "indets": []}
    if mutant.unstated is not None:
        return {**base, "class": "unstated", "why": mutant.unstated, "fails": [], "indets": []}
    if set(mutant.meant_to_break) <= baseline_fails:
        return {**base, "class": "confounded", "why": "the unmutated history already FAILs "
                + ", ".join(mutant.meant_to_break), "fails": [], "indets": []}
    try:
        report = check(mutant.history)
    except Exception as err:  # the checker crashed on a well-formed history: a finding in itself
        return {**base, "class": "crashed", "why": f"{type(err).__name__}: {err}", "fails": [], "indets": []}
    fails = sorted({v.rule_id for v in report.verdicts if v.status == FAIL} - baseline_fails)
    indets = sorted({v.rule_id for v in report.verdicts if v.status == INDET})
    meant = set(mutant.meant_to_break)
    if meant & set(fails):
        cls, why = "caught", ""
    elif fails:
        cls, why = "elsewhere", f"FAIL on {', '.join(fails)} only"
    elif meant & set(indets):
        cls, why = "indet", f"INDETERMINATE on {', '.join(sorted(meant & set(indets)))}"
    else:
        cls, why = "missed", "no FAIL"
    return {**base, "class": cls, "why": why, "fails": fails, "indets": indets}


def score(histories: Iterable[tuple[str, History]]) -> dict[str, Any]:
    results = []
    baseline: dict[str, list[str]] = {}
    for name, history in histories:
        base = check(history)
        base_fails = {v.rule_id for v in base.failures()}
        if base_fails:
            baseline[name] = sorted(base_fails)
        for m in mutants(history):
            r = classify(m, base_fails)
            r["history"] = name
            results.append(r)
    per_rule: dict[str, Counter] = defaultdict(Counter)
    per_op: dict[str, Counter] = defaultdict(Counter)
    overall: Counter = Counter()
    for r in results:
        overall[r["class"]] += 1
        per_op[r["mutant"]["operator"]][r["class"]] += 1
        for rule in r["mutant"]["meant_to_break"]:
            # per rule, "caught" means FAIL on that very rule; FAIL only on others is "elsewhere"
            cls = r["class"]
            if cls in ("caught", "elsewhere"):
                cls = "caught" if rule in r["fails"] else "elsewhere"
            per_rule[rule][cls] += 1
    judged = sum(overall[c] for c in CLASSES if c not in NOT_JUDGED)
    return {
        "mutants": len(results),
        "judged": judged,
        "overall": dict(overall),
        "score": overall["caught"] / judged if judged else 0.0,
        "per_rule": {k: dict(v) for k, v in sorted(per_rule.items())},
        "per_operator": {k: dict(v) for k, v in sorted(per_op.items())},
        "baseline_failures": baseline,
        "results": results,
    }


def _row(name: str, c: Counter | dict) -> str:
    n = sum(c.get(k, 0) for k in CLASSES)
    judged = n - sum(c.get(k, 0) for k in NOT_JUDGED)
    pct = f"{100 * c.get('caught', 0) / judged:5.1f}%" if judged else "    -"
    return f"{name:<26} {n:>7} " + " ".join(f"{c.get(k, 0):>9}" for k in CLASSES) + f"  {pct}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=Path, default=DEFAULT_HISTORIES, help="folder of recorded histories (*.jsonl)")
    parser.add_argument("--json", type=Path, help="write the full result here")
    parser.add_argument("--survivors", type=int, default=-1, help="list at most N survivors (default all)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    hs = load_histories(args.histories)
    result = score(hs)
    elapsed = time.perf_counter() - started
    head = f"{'':<26} {'mutants':>7} " + " ".join(f"{k:>9}" for k in CLASSES) + "  caught/judged"
    print(f"{len(hs)} histories from {args.histories}, {result['mutants']} mutants, checked in {elapsed:.1f} s")
    if result["baseline_failures"]:
        print("unmutated histories that already FAIL (those rules are not counted as caught in their mutants):")
        for name, rules in result["baseline_failures"].items():
            print(f"  {name}: {', '.join(rules)}")
    print("\nper rule (a mutant counts once for each rule it is meant to break; caught = FAIL on this rule)")
    print(head)
    for rule, c in result["per_rule"].items():
        print(_row(rule, c))
    print("\nper operator")
    print(head)
    for op, c in result["per_operator"].items():
        print(_row(op, c))
    print()
    print(head)
    print(_row("OVERALL", result["overall"]))
    print(f"\nscore: caught and charged to a meant rule = {result['overall'].get('caught', 0)} / {result['judged']} "
          f"judged mutants = {100 * result['score']:.1f}%")
    survivors = [r for r in result["results"] if r["class"] in ("missed", "indet", "elsewhere", "crashed")]
    print(f"\nsurvivors ({len(survivors)}):")
    for r in survivors[: None if args.survivors < 0 else args.survivors]:
        m = r["mutant"]
        print(f"  [{r['class']}] {m['operator']} {r['history']} steps {m['steps']} meant {','.join(m['meant_to_break'])}: "
              f"{m['description']} -> {r['why']}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=1))
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
