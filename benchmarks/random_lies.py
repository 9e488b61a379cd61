"""Random lies: how many of the lies a random perturbation tells does the checker catch?

Issue 45, item 2 ("Random lies, not only aimed ones"). ``benchmarks/mutation_score.py`` grades the
checker on the aimed operators of ``conformance/mutation.py``, each built against the rule it
breaks; this benchmark grades it on lies it was not tuned for, in the manner of Jepsen's history
perturbation (a checker is as good as the altered histories it rejects). For every recorded
history under ``--histories`` it draws ``--lies-per-history`` seeded perturbations of observed
values (``conformance.perturb.KINDS``), checks the original and each perturbed history with
``conformance.checker.check``, and counts, in one run:

- lies            perturbations made (each one valid: it went through ``trace.dumps`` / ``parse``);
- caught covering a rule FAILs that did not FAIL on the original, and one such rule's detector speaks
                  about the perturbed op and field (``perturb.covering_rules``);
- caught elsewhere a new FAIL, but only on rules that do not speak about that op and field;
- crashed         the checker raised on a valid history;
- survivors       no new FAIL, classified from the rule texts (``perturb.classify``) as allowed (a
                  correct broker could have produced it), missed (it contradicts a named rule) or
                  unclassified (the classifier cannot tell; the reason is listed);

by perturbation kind, by client (``header.client``), by target (``header.target``) and by step kind
(the perturbed op), with the time taken. Caught lies are classified too: a caught lie classified
``allowed`` is a possible false alarm and is listed. ``--out FILE.json`` writes every lie.

    python3 benchmarks/random_lies.py --histories DIR [--lies-per-history N] [--seed S] [--out FILE.json]

It also tabulates the lies by step context (``step_context``: the first delivery after each kind of seek, after a
membership change, a commit or an abort; the ids of delayed, chunked and transactional messages; schema
registrations), listing as a gap a context with a missed lie or with none to lie about in the corpus.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from conformance import perturb  # noqa: E402
from conformance.checker import check  # noqa: E402
from conformance.trace import History, TraceFormatError, load  # noqa: E402

COLUMNS = ("lies", "covering", "elsewhere", "crashed", "allowed", "missed", "unclassified")


def load_histories(root: Path) -> tuple[list[tuple[str, History]], list[str]]:
    out, refused = [], []
    for path in sorted(root.rglob("*.jsonl")):
        try:
            item = load(path)
        except TraceFormatError as err:
            refused.append(f"{path.relative_to(root)}: {err.problem}")
            continue
        if isinstance(item, History):
            out.append((str(path.relative_to(root)), item))
    if not out:
        raise SystemExit(f"no history files (*.jsonl) under {root}; pass --histories DIR")
    return out, refused


def column(r: dict[str, Any]) -> str:
    """The one column a judged lie counts in."""
    if r["outcome"] == perturb.CAUGHT_COVERING:
        return "covering"
    if r["outcome"] == perturb.CAUGHT_ELSEWHERE:
        return "elsewhere"
    if r["outcome"] == perturb.CRASHED:
        return "crashed"
    return r["classification"]["class"]


def run(histories: list[tuple[str, History]], lies_per_history: int, seed: int) -> dict[str, Any]:
    results: list[dict[str, Any]] = []
    baseline: dict[str, list[str]] = {}
    for name, history in histories:
        base = check(history)
        fails = perturb.fails_of(base)
        if fails:
            baseline[name] = sorted(fails)
        ctx = perturb._Ctx(history)
        for p in perturb.perturbations(history, count=lies_per_history, seed=seed):
            r = perturb.judge(history, p, base, ctx=ctx)
            r.update(history=name, client=history.header.client or "-", target=history.header.target or "-",
                     step_kind=history.events[p.index].op.op, context=step_context(history, p.index))
            r.pop("detail", None)
            results.append(r)
    return {"results": results, "baseline_failures": baseline}


_DELAY_ARGS = ("deliver_after_ms", "deliver_at_ms", "deliver_at")


def step_context(history: History, index: int) -> str:
    """What a rule text singles out about the perturbed step (issue 45: "the first delivery after each kind of seek,
    ownership after each membership change, the ids of delayed, chunked and transactional messages, what a commit or
    an abort makes visible, what a schema registration returns"), or the bare op kind. Read off the history, never
    off the checker: the first delivery to the handle since its last seek / reset / commit or abort / a change of
    its subscription's consumers; the kind of message a delivery or an id is of; an op that registers a schema."""
    events = history.events
    e = events[index]
    op, a = e.op.op, e.op.args
    sends = {x.op.args.get("payload"): x.op.args for x in events[:index] if x.op.op == "send"}
    chunking = {x.op.args.get("producer") for x in events if x.op.op == "create_producer" and x.op.args.get("chunking")}

    def kind_of(label: Any) -> str | None:
        args = sends.get(label)
        if args is None:
            return None
        if any(k in args for k in _DELAY_ARGS):
            return "delayed"
        if "txn" in args:
            return "transactional"
        if args.get("producer") in chunking:
            return "chunked"
        return None

    if op in ("create_producer", "subscribe", "create_reader") and "schema" in a or op in ("get_schemas", "delete_schema"):
        return f"{op}: schema registration"
    if op in ("send", "flush") and e.outcome.status == "ok":
        labels = [a.get("payload")] if op == "send" else list(((e.outcome.value or {}).get("message_ids") or {}))
        kinds = sorted({k for k in map(kind_of if op == "flush" else (lambda x: kind_of(x) or _send_kind(a, chunking)), labels) if k})
        return f"{op}: id of a {kinds[0]} message" if kinds else op
    if op not in ("receive", "read_next"):
        return op
    handle = a.get("consumer") or a.get("reader")
    sub_of: dict[str, tuple[Any, Any]] = {x.op.args["consumer"]: (x.op.args.get("topic"), x.op.args.get("subscription"))
                                          for x in events[:index] if x.op.op == "subscribe" and "consumer" in x.op.args
                                          and x.outcome.status == "ok"}
    mine = sub_of.get(handle)
    for x in reversed(events[:index]):
        xa = x.op.args
        if x.op.op in ("receive", "read_next") and (xa.get("consumer") or xa.get("reader")) == handle \
                and x.outcome.status == "ok" and (x.outcome.value or {}).get("message"):
            break  # the handle got something since: not a first delivery after anything
        if x.outcome.status != "ok":
            continue
        if x.op.op == "seek" and xa.get("consumer") == handle:
            how = ("by id" if "message" in xa else "by publish time" if "publish_time_of" in xa
                   else f"to {xa.get('position')}")
            return f"{op}: first delivery after a seek {how}"
        if x.op.op == "reset_cursor" and mine is not None and (xa.get("topic"), xa.get("subscription")) == mine:
            return f"{op}: first delivery after an admin reset_cursor"
        if x.op.op in ("commit_txn", "abort_txn"):
            return f"{op}: first delivery after {'a commit' if x.op.op == 'commit_txn' else 'an abort'}"
        if mine is not None and (x.op.op == "subscribe" and xa.get("consumer") != handle and sub_of.get(xa.get("consumer")) == mine
                                 or x.op.op in ("close", "unsubscribe") and xa.get("handle", xa.get("consumer")) != handle
                                 and sub_of.get(xa.get("handle", xa.get("consumer"))) == mine):
            return f"{op}: first delivery after a membership change"
    msg = (e.outcome.value or {}).get("message") if e.outcome.status == "ok" else None
    kind = kind_of(msg.get("payload")) if isinstance(msg, dict) else None
    return f"{op}: of a {kind} message" if kind else op


def _send_kind(args: Any, chunking: set) -> str | None:
    """A send's own kind when its payload is not yet in ``sends`` (the send being perturbed)."""
    if any(k in args for k in _DELAY_ARGS):
        return "delayed"
    if "txn" in args:
        return "transactional"
    return "chunked" if args.get("producer") in chunking else None


def tables(results: list[dict[str, Any]]) -> dict[str, dict[str, Counter]]:
    out: dict[str, dict[str, Counter]] = {"overall": defaultdict(Counter), "kind": defaultdict(Counter),
                                          "client": defaultdict(Counter), "target": defaultdict(Counter),
                                          "step_kind": defaultdict(Counter), "context": defaultdict(Counter)}
    for r in results:
        col = column(r)
        for by, key in (("overall", "all"), ("kind", r["kind"]), ("client", r["client"]), ("target", r["target"]),
                        ("step_kind", r["step_kind"]), ("context", r.get("context", r["step_kind"]))):
            out[by][key]["lies"] += 1
            out[by][key][col] += 1
    return out


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:5.1f}%" if whole else "    -"


def print_table(title: str, rows: dict[str, Counter]) -> None:
    print(f"\n{title}")
    head = f"{'':<24}" + "".join(f"{c:>13}" for c in COLUMNS) + "   caught  caught/lies-allowed"
    print(head)
    for key in sorted(rows, key=lambda k: (-rows[k]["lies"], k)):
        c = rows[key]
        caught = c["covering"] + c["elsewhere"]
        lies_not_allowed = c["lies"] - c["allowed"]
        print(f"{key[:24]:<24}" + "".join(f"{c[x]:>13}" for x in COLUMNS) + f"   {_pct(caught, c['lies'])}"
              f"  {_pct(caught, lies_not_allowed)}")


# the step contexts issue 45 names; one with no lie in a corpus is listed as a gap of the corpus
CONTEXTS_ASKED = tuple(f"receive: first delivery after a seek {how}" for how in
                       ("by id", "by publish time", "to earliest", "to latest")) + (
    "receive: first delivery after an admin reset_cursor", "receive: first delivery after a membership change",
    "send: id of a delayed message", "send: id of a chunked message", "send: id of a transactional message",
    "flush: id of a delayed message", "flush: id of a chunked message",
    "receive: first delivery after a commit", "receive: first delivery after an abort",
    "create_producer: schema registration", "subscribe: schema registration", "get_schemas: schema registration")


def print_context_table(rows: dict[str, Counter]) -> None:
    """By step context (``step_context``): of the lies there that break a rule (caught or missed), how many FAIL a
    covering rule; a context with a missed lie, or none to lie about, is a gap."""
    print("\nby step context (the steps a rule text singles out): lies, breaking a rule (caught + missed), "
          "caught on a covering rule, missed")
    for key in sorted(set(rows) | set(CONTEXTS_ASKED)):
        if ":" not in key and key not in CONTEXTS_ASKED:
            continue  # a bare op kind: in the step-kind table above
        c = rows.get(key, Counter())
        breaking = c["covering"] + c["elsewhere"] + c["missed"]
        gap = ("  GAP: no lie here in this corpus" if not c["lies"] else
               f"  GAP: {c['missed']} missed" if c["missed"] else "")
        print(f"  {key[:58]:<58} {c['lies']:>6} {breaking:>6} {c['covering']:>6} {_pct(c['covering'], breaking)}"
              f" {c['missed']:>4}{gap}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--histories", type=Path, required=True, help="folder of recorded histories (*.jsonl, any depth)")
    parser.add_argument("--lies-per-history", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, help="write every lie and the figures here (JSON)")
    parser.add_argument("--list", type=int, default=3, help="examples listed per missed / unclassified group")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    hs, refused = load_histories(args.histories)
    loaded = time.perf_counter()
    result = run(hs, args.lies_per_history, args.seed)
    elapsed = time.perf_counter() - started
    results = result["results"]
    t = tables(results)
    o = t["overall"]["all"]
    caught = o["covering"] + o["elsewhere"]
    survivors = o["allowed"] + o["missed"] + o["unclassified"]
    print(f"{len(hs)} histories from {args.histories} ({len(refused)} refused by the loader), "
          f"{args.lies_per_history} lies asked per history, seed {args.seed}")
    print(f"time: {elapsed:.1f} s ({loaded - started:.1f} s loading, {elapsed - (loaded - started):.1f} s perturbing, "
          f"checking and classifying)")
    print(f"lies made:           {o['lies']}")
    print(f"caught:              {caught} ({_pct(caught, o['lies'])})")
    print(f"  on a covering rule {o['covering']} ({_pct(o['covering'], o['lies'])})")
    print(f"  elsewhere only     {o['elsewhere']} ({_pct(o['elsewhere'], o['lies'])})")
    print(f"checker crashed:     {o['crashed']}")
    print(f"survivors:           {survivors} ({_pct(survivors, o['lies'])})")
    print(f"  allowed            {o['allowed']} ({_pct(o['allowed'], o['lies'])})")
    print(f"  missed             {o['missed']} ({_pct(o['missed'], o['lies'])})")
    print(f"  unclassified       {o['unclassified']} ({_pct(o['unclassified'], o['lies'])})")
    judged = caught + o["missed"]
    print(f"caught / (caught + missed) = {_pct(caught, judged)}; "
          f"caught / (lies - allowed) = {_pct(caught, o['lies'] - o['allowed'])}")
    for by in ("kind", "client", "target", "step_kind"):
        print_table(f"by {by.replace('_', ' ')}", t[by])
    print_context_table(t["context"])
    false_alarms = [r for r in results if r["outcome"] in (perturb.CAUGHT_COVERING, perturb.CAUGHT_ELSEWHERE)
                    and r["classification"]["class"] == perturb.ALLOWED]
    print(f"\ncaught but classified allowed (possible false alarms, or a classifier too generous): {len(false_alarms)}")
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in false_alarms:
        groups[f"{r['kind']} FAIL {','.join(r['new_fails'])}"].append(r)
    for g, rs in sorted(groups.items(), key=lambda x: -len(x[1]))[:15]:
        print(f"  {len(rs):>5}  {g}: e.g. {rs[0]['history']}: {rs[0]['description']} ({rs[0]['classification']['reason'][:140]})")
    crashed = [r for r in results if r["outcome"] == perturb.CRASHED]
    if crashed:
        print(f"\ncrashes: {len(crashed)}")
        for r in crashed[:10]:
            print(f"  {r['history']}: {r['description']}: {r['crash']}")
    missed = [r for r in results if r["outcome"] == perturb.SURVIVED and r["classification"]["class"] == "missed"]
    unsure = [r for r in missed if set(r["new_indets"]) & set(r["classification"]["rules"])]
    unfollowed = [r for r in missed if r.get("not_followed") and r not in unsure]
    print(f"\nmissed: {len(missed)}, of which the checker said INDETERMINATE on a rule the lie contradicts: {len(unsure)}, "
          f"said it does not follow the lie's step (listed in the run as not followed): {len(unfollowed)} "
          f"(silent: {len(missed) - len(unsure) - len(unfollowed)})")
    for cls in ("missed", "unclassified"):
        groups = defaultdict(list)
        for r in results:
            if r["outcome"] == perturb.SURVIVED and r["classification"]["class"] == cls:
                rules = ",".join(r["classification"]["rules"]) or "-"
                unsure_mark = (" (checker INDETERMINATE)" if set(r["new_indets"]) & set(r["classification"]["rules"])
                               else " (step not followed)" if r.get("not_followed") else "")
                groups[f"{rules} [{r['kind']}]{unsure_mark}" if cls == "missed" else f"{r['kind']}"].append(r)
        print(f"\nsurvivors classified {cls}, grouped by {'the rule text they contradict' if cls == 'missed' else 'kind'}:")
        for g, rs in sorted(groups.items(), key=lambda x: -len(x[1])):
            print(f"  {len(rs):>5}  {g}")
            for r in rs[: args.list]:
                print(f"         {r['history']}: {r['description']}")
                print(f"           why: {r['classification']['reason'][:220]}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        figures = {by: {k: dict(v) for k, v in rows.items()} for by, rows in t.items()}
        args.out.write_text(json.dumps({"histories": len(hs), "refused": refused, "lies_per_history": args.lies_per_history,
                                        "seed": args.seed, "seconds": round(elapsed, 1), "figures": figures,
                                        "baseline_failures": result["baseline_failures"], "lies": results}, indent=1,
                                       default=str))
        print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
