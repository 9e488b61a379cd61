"""A realistic outcome corpus of any size, made from the reference model, with known divergences.

How it is made (the figures in a report over it can be checked exactly against the manifest):

1. **Base block.** Every conformance case (``conformance.case_files.discover_cases``) runs on
   ``conformance.targets.model.ModelTarget`` under each model profile (line ``3.x``/``4.0``/``4.1``
   x client ``cpp``/``java``, where the case runs on that client) and is judged by
   ``conformance.checker.check``; ``conformance.corpus.event_rows`` turns each judged history
   into rows. These are the *model rows*. Each simulated broker (version x client, e.g. ``4.0.8``
   / ``python``) gets the model history of its line and client kind as its *broker rows*: a
   broker that behaves exactly as the model predicts.
2. **Mutants.** For each history, a few single-event mutations (a redelivery count bumped, a
   delivery dropped, a property added, a redelivery moved early, a refusal accepted, a wrong
   error, a backlog off by one, ...) are judged again by the real checker, with a live target's
   tolerances; only mutants that the checker FAILs at some step are kept, with their verdicts.
3. **Tiling.** Runs are the base block with a run id; a broker trace instance is replaced by one
   of its mutants (same rows, same order) *persistently* (a bug in one version/client, in every
   run from a given run: two from the first run, one "regression" from the middle run) or
   *sporadically* (each broker trace instance of each run with probability ``sporadic_rate``).
   Broker rows get a seeded latency: step k is late by (k + U[0,1)) x ``step_latency_ms``. All of it is
   vectorised with pyarrow: ``Table.take`` over a pool of base and mutant rows.
4. **Manifest** (``manifest.json`` beside the parts): the seed, the layout, every injection
   (run, trace, version, client, mutation, the step changed, the FAIL steps with their rules and
   anomalies) and the totals a report must find: divergent rows, FAIL rows, FAIL rows per rule,
   flaky traces.

Choices: the corpus has exactly ``rows`` rows; the last run is cut short when ``rows`` is not a
multiple of the block (an interrupted run) and gets no injections. Run ids sort in run order
(``g<seed>-r000042``), which is what trends use.

Not modelled: live-broker message ids and publish times (broker rows carry the model's), and
divergences spanning several events (every mutant changes one event).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from conformance.case_files import Case, discover_cases
from conformance.checker import check
from conformance.corpus import SCHEMA, event_rows
from conformance.targets.model import ModelTarget
from conformance.trace import Event, History, Outcome, replace_header
from conformance.verdicts import FAIL, PASS, worst_judged
from reference_model import releases
from reference_model.profiles import profile_for

MANIFEST = "manifest.json"
LINES = ("3.x", "4.0", "4.1")
KINDS = ("cpp", "java")
BROKER_VERSIONS = ("3.3.9", "4.0.7", "4.0.8", "4.1.2")
CLIENTS = ("python", "java")
CLIENT_VERSIONS = {"python": "3.13.0", "java": "4.0.8"}
BROKER_TARGET = "embedded"


@dataclass(frozen=True)
class GenerateConfig:
    rows: int
    seed: int = 7
    broker_versions: tuple[str, ...] = BROKER_VERSIONS
    clients: tuple[str, ...] = CLIENTS
    sporadic_rate: float = 0.002  # per broker trace instance per run
    persistent: int = 3  # bugs that fail in every run (the last one from the middle run on)
    step_latency_ms: float = 3.0  # a broker row's time is late by (step + U[0,1)) * this
    runs_per_part: int = 0  # 0: about 1 M rows per part file
    mutants_per_history: int = 4


@dataclass
class _Instance:
    """One trace instance of the block: where its rows are, and what may replace them."""

    offset: int
    length: int
    trace_id: str
    target: str
    broker_version: str
    client: str
    profile: str
    mutants: list[dict[str, Any]] = field(default_factory=list)  # {pool_offset, mutation, step, changed, fails}


# --------------------------------------------------------------------------- 1. model histories


def _client_name(kind: str) -> str:
    return "python" if kind == "cpp" else "java"


def _kind(client: str) -> str:
    return profile_for(None, client).client


def model_histories(cases: list[Case], skipped: dict[str, str] | None = None) -> dict[tuple[str, str, str], tuple[History, list[Any]]]:
    """(line, kind, case id) -> (model history, its verdicts), for every case that runs on the kind.

    A case the model or checker cannot run (e.g. a profile field this model does not know) is
    left out and noted in ``skipped`` (case id -> why): the corpus is made of what the model does.
    """
    out = {}
    for case in cases:
        for line in LINES:
            for kind in KINDS:
                if not case.runs_on(_client_name(kind)):
                    continue
                try:
                    history = ModelTarget(profile_for(line, kind, case.profile or None)).run(case.trace)
                    verdicts = list(check(history).verdicts)
                except Exception as err:  # noqa: BLE001 - a case the model cannot run is skipped, and said so
                    if skipped is not None:
                        skipped[case.id] = f"{type(err).__name__}: {err}"[:300]
                    continue
                out[(line, kind, case.id)] = (history, verdicts)
    return out


# --------------------------------------------------------------------------- 2. mutants


def _message(event: Event) -> dict[str, Any] | None:
    value = event.outcome.value if event.outcome.status == "ok" else None
    return dict(value["message"]) if value and value.get("message") else None


def _with_message(event: Event, message: dict[str, Any] | None, **times: float) -> Event:
    return replace(event, outcome=Outcome.ok({"message": message}), **times)


def _mutations(event: Event) -> list[tuple[str, Callable[[Event], Event]]]:
    """The single-event mutations that make sense for ``event``."""
    op, out = event.op.op, event.outcome
    muts: list[tuple[str, Callable[[Event], Event]]] = []
    msg = _message(event) if op in ("receive", "read_next") else None
    if msg is not None:
        muts.append(("redelivery-count+1", lambda e: _with_message(e, {**msg, "redelivery_count": msg["redelivery_count"] + 1})))
        muts.append(("extra-property", lambda e: _with_message(e, {**msg, "properties": {**msg["properties"], "injected": "1"}})))
        timeout = float(event.op.args.get("timeout_ms", 1000))
        muts.append(("drop-delivery", lambda e: _with_message(e, None, t_end_ms=e.t_start_ms + timeout)))
        if msg["redelivery_count"] > 0:
            muts.append(("early-redelivery", lambda e: _with_message(
                e, msg, t_start_ms=min(e.t_start_ms, e.t_end_ms - 150.0), t_end_ms=e.t_end_ms - 150.0)))
    # No mutation of message ids or publish times: those are the broker's to choose, so the
    # model-vs-broker diff leaves them out (corpus observation_key); the checker judges their order.
    if out.status == "rejected":
        muts.append(("refusal-accepted", lambda e: replace(e, outcome=Outcome.ok({}))))
        if out.error != "OtherError":
            muts.append(("wrong-error", lambda e: replace(e, outcome=Outcome.rejected("OtherError", "injected"))))
    if op in ("subscribe", "create_producer") and out.status == "ok":
        muts.append(("unexpected-refusal", lambda e: replace(e, outcome=Outcome.rejected("ConsumerBusy" if op == "subscribe" else "ProducerBusy", "injected"))))
    if op == "stats" and out.status == "ok" and "backlog" in (out.value or {}):
        muts.append(("backlog+1", lambda e: replace(e, outcome=Outcome.ok({**out.value, "backlog": out.value["backlog"] + 1}))))
    return muts


def find_mutants(history: History, rng: random.Random, limit: int) -> list[dict[str, Any]]:
    """Up to ``limit`` single-event mutants of ``history`` (a broker-headed history) that the
    checker FAILs at some step; each with its history, verdicts and what changed."""
    candidates = [(i, name, fn) for i, e in enumerate(history.events) for name, fn in _mutations(e)]
    rng.shuffle(candidates)
    # prefer variety: round-robin over mutation names (the first of each name, then the second, ...)
    rank: Counter[str] = Counter()
    order = []
    for c in candidates:
        order.append((rank[c[1]], c))
        rank[c[1]] += 1
    candidates = [c for _, c in sorted(order, key=lambda x: x[0])]
    found = []
    for i, name, fn in candidates[: limit * 4]:
        if len(found) >= limit:
            break
        event = history.events[i]
        mutated = fn(event)
        events = history.events[:i] + (mutated,) + history.events[i + 1:]
        mutant = History(history.header, events)
        try:
            verdicts = list(check(mutant).verdicts)
        except Exception:  # noqa: BLE001 - a mutant the checker cannot judge is not a usable divergence
            continue
        fail_steps = sorted({v.step for v in verdicts if v.status == FAIL and v.step})
        if not fail_steps:
            continue
        changed = mutated.outcome != event.outcome
        found.append({"mutation": name, "step": event.step, "changed": changed, "history": mutant,
                      "verdicts": verdicts, "fail_steps": fail_steps})
    return found


# --------------------------------------------------------------------------- block and pool


def build_pool(config: GenerateConfig, cases: list[Case] | None = None, skipped: dict[str, str] | None = None
               ) -> tuple[pa.Table, int, list[_Instance]]:
    """The pool table (base block first, then every mutant's rows), the block length, and the
    block's trace instances (broker ones carry their mutants)."""
    cases = discover_cases() if cases is None else cases
    histories = model_histories(cases, skipped)
    if not histories:
        raise ValueError("the model could run none of the cases: nothing to generate a corpus from")
    rows: list[dict[str, Any]] = []
    instances: list[_Instance] = []

    def add(history: History, verdicts: list[Any]) -> _Instance:
        new = event_rows(history, verdicts, run_id="")
        inst = _Instance(len(rows), len(new), history.header.trace_id, new[0]["target"], new[0]["broker_version"],
                         new[0]["client"], new[0]["profile"])
        rows.extend(new)
        return inst

    for (line, kind, _), (history, verdicts) in histories.items():
        instances.append(add(history, verdicts))
    broker_histories = []
    for version in config.broker_versions:
        for client in config.clients:
            line, kind = releases.model_line(version), _kind(client)
            for (h_line, h_kind, _), (history, verdicts) in histories.items():
                if (h_line, h_kind) != (line, kind):
                    continue
                header = replace_header(history.header, target=BROKER_TARGET, broker_version=version, client=client,
                                        client_version=CLIENT_VERSIONS.get(client, "unknown"))
                broker = History(header, history.events)
                instances.append(add(broker, verdicts))
                broker_histories.append((instances[-1], broker))
    block_len = len(rows)
    # mutants: judged once per (line, kind, case) shape, instantiated per broker header
    for inst, broker in broker_histories:
        for mutant in find_mutants(broker, random.Random(f"{config.seed}:{inst.trace_id}:{inst.broker_version}:{inst.client}"),
                                   config.mutants_per_history):
            pool_offset = len(rows)
            new = event_rows(mutant["history"], mutant["verdicts"], run_id="")
            assert len(new) == inst.length
            rows.extend(new)
            fails = [{"step": r["step"], "rule_ids": r["failed_rule_ids"], "anomalies": r["anomalies"]}
                     for r in new if r["verdict"] == FAIL]
            if not fails:
                del rows[pool_offset:]
                continue
            inst.mutants.append({"pool_offset": pool_offset, "mutation": mutant["mutation"], "step": mutant["step"],
                                 "changed": mutant["changed"], "fails": fails})
    pool = pa.Table.from_pylist(rows, schema=SCHEMA)
    return pool, block_len, instances


# --------------------------------------------------------------------------- 3. injections


def plan_injections(config: GenerateConfig, instances: list[_Instance], runs: int
                    ) -> tuple[dict[int, dict[int, dict[str, Any]]], list[dict[str, Any]]]:
    """(run -> {instance index -> mutant}, the persistent bugs): persistent first, then sporadic."""
    rng = random.Random(config.seed * 7919 + 1)
    mutable = [i for i, inst in enumerate(instances) if inst.mutants]
    plan: dict[int, dict[int, dict[str, Any]]] = defaultdict(dict)
    # persistent: distinct mutation names, distinct (version, client) where possible
    chosen, used_names, used_combos = [], set(), set()
    for i in rng.sample(mutable, len(mutable)):
        if len(chosen) >= config.persistent:
            break
        inst = instances[i]
        mutant = next((m for m in inst.mutants if m["mutation"] not in used_names), None)
        combo = (inst.broker_version, inst.client)
        if mutant is None or combo in used_combos:
            continue
        chosen.append((i, mutant))
        used_names.add(mutant["mutation"])
        used_combos.add(combo)
    persistent = []
    for n, (i, mutant) in enumerate(chosen):
        first = runs // 2 if (n == len(chosen) - 1 and len(chosen) > 1) else 0
        persistent.append({"instance": i, "mutation": mutant["mutation"], "from_run": first})
        for r in range(first, runs):
            plan[r][i] = mutant
    for r in range(runs):
        for i in mutable:
            if i in plan[r]:
                continue
            if rng.random() < config.sporadic_rate:
                plan[r][i] = rng.choice(instances[i].mutants)
    return plan, persistent


# --------------------------------------------------------------------------- 4. writing


def generate(out_dir: str | Path, config: GenerateConfig, *, cases: list[Case] | None = None, log: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Write ``config.rows`` corpus rows as ``part-*.parquet`` plus ``manifest.json`` into
    ``out_dir`` (created; existing parts of the same generator id are replaced). Returns the manifest."""
    t0 = time.monotonic()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    gen_id = f"g{config.seed}"
    for old in out.glob(f"part-{gen_id}-*.parquet"):
        old.unlink()
    skipped: dict[str, str] = {}
    pool, block_len, instances = build_pool(config, cases, skipped)
    if log and skipped:
        log(f"  skipped {len(skipped)} case(s) the model cannot run: {', '.join(sorted(skipped))}")
    full_runs, tail = divmod(config.rows, block_len)
    if full_runs == 0 and (config.persistent or config.sporadic_rate):
        # injections go into whole runs: a corpus shorter than one run would hold none, and read as all PASS
        raise ValueError(f"rows {config.rows} is less than one run of the {len(instances)} case histories "
                         f"({block_len} rows), so no divergence could be injected; ask for at least {block_len} rows "
                         "(the block grows with the cases)")
    runs = full_runs + (1 if tail else 0)
    plan, persistent = plan_injections(config, instances, full_runs)
    run_ids = [f"{gen_id}-r{r:06d}" for r in range(runs)]
    runs_per_part = config.runs_per_part or max(1, 1_000_000 // block_len)
    base_index = pa.array(range(block_len), type=pa.int64())
    is_broker_block = pa.array([inst.target != "model" for inst in instances for _ in range(inst.length)])
    mutant_index: dict[int, pa.Array] = {}
    positions: dict[int, pa.Array] = {}

    def run_indices(r: int) -> pa.Array:
        injections = plan.get(r)
        if not injections:
            return base_index
        pieces, pos = [], 0
        for i in sorted(injections):
            inst, m = instances[i], injections[i]
            pieces.append(base_index.slice(pos, inst.offset - pos))
            key = m["pool_offset"]
            if key not in mutant_index:
                mutant_index[key] = pa.array(range(key, key + inst.length), type=pa.int64())
            pieces.append(mutant_index[key])
            pos = inst.offset + inst.length
        pieces.append(base_index.slice(pos))
        return pa.concat_arrays(pieces)

    written, part = 0, 0
    for first in range(0, runs, runs_per_part):
        chunk = range(first, min(runs, first + runs_per_part))
        indices = pa.concat_arrays([run_indices(r) for r in chunk])
        if first + len(chunk) == runs and tail:
            indices = indices.slice(0, len(indices) - (block_len - tail))
        n = len(indices)
        table = pool.take(indices)
        if n not in positions:
            positions[n] = pa.array(range(n), type=pa.int64())
        position = positions[n]
        run_no = pc.add(pc.divide(position, block_len), chunk.start)
        run_id = pc.take(pa.array(run_ids), run_no)
        broker = pc.take(is_broker_block, pc.subtract(position, pc.multiply(pc.divide(position, block_len), block_len)))
        # live latency: step k of a broker trace is late by k*s + u*s (u uniform in [0, 1)), so
        # times stay in step order and a later step has accumulated more dispatch latency
        s = config.step_latency_ms
        late = pc.multiply(pc.add(pc.cast(table.column("step"), pa.float64()), pc.random(n, initializer=config.seed * 1_000_003 + part)), s)
        jitter = pc.if_else(broker, late, 0.0)
        table = table.set_column(0, SCHEMA.field("run_id"), run_id)
        for name in ("t_start_ms", "t_end_ms"):
            idx = SCHEMA.get_field_index(name)
            table = table.set_column(idx, SCHEMA.field(name), pc.round(pc.add(table.column(name), jitter), 3))
        table = table.replace_schema_metadata(SCHEMA.metadata)
        path = out / f"part-{gen_id}-{part:06d}.parquet"
        tmp = path.with_name(path.name + ".tmp")
        pq.write_table(table, tmp, compression="zstd", row_group_size=256 * 1024)
        os.replace(tmp, path)
        written += n
        part += 1
        if log:
            log(f"  {path.name}: {n} rows ({written}/{config.rows}, {time.monotonic() - t0:.1f} s)")
    base_verdicts = pool.column("verdict").slice(0, block_len).to_pylist()
    manifest = _manifest(config, gen_id, instances, plan, persistent, run_ids, full_runs, tail, base_verdicts, written, part)
    manifest["skipped_cases"] = skipped
    manifest["seconds"] = round(time.monotonic() - t0, 2)
    tmp = out / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, out / MANIFEST)
    return manifest


def _manifest(config: GenerateConfig, gen_id: str, instances: list[_Instance], plan: dict[int, dict[int, dict[str, Any]]],
              persistent: list[dict[str, Any]], run_ids: list[str], full_runs: int, tail: int, base_verdicts: list[str],
              rows: int, parts: int) -> dict[str, Any]:
    """What a report over this corpus must find, computed from the plan (not from the files)."""
    injections = []
    fail_by_rule: Counter[str] = Counter()
    fail_by_anomaly: Counter[str] = Counter()
    divergent_rows = fail_rows = 0
    # rows of the base block that FAIL on their own (none for a model-made block, but be exact)
    base_fail_rows = sum(v == FAIL for v in base_verdicts)
    fail_rows += base_fail_rows * full_runs + sum(v == FAIL for v in base_verdicts[:tail])
    for r in range(full_runs):
        for i, m in sorted(plan.get(r, {}).items()):
            inst = instances[i]
            injections.append({
                "run_id": run_ids[r], "trace_id": inst.trace_id, "target": inst.target,
                "broker_version": inst.broker_version, "client": inst.client, "profile": inst.profile,
                "mutation": m["mutation"], "step": m["step"], "observation_changed": m["changed"], "fails": m["fails"],
            })
            divergent_rows += 1 if m["changed"] else 0
            base_fails = sum(v == FAIL for v in base_verdicts[inst.offset:inst.offset + inst.length])
            fail_rows += len(m["fails"]) - base_fails
            for f in m["fails"]:
                fail_by_rule.update(f["rule_ids"])
                fail_by_anomaly.update(f["anomalies"])
    # flaky: a trace instance key whose per-run verdict takes more than one value
    flaky = []
    for i, inst in enumerate(instances):
        base = worst_judged(base_verdicts[inst.offset:inst.offset + inst.length], PASS)
        seen = {FAIL if i in plan.get(r, {}) else base for r in range(full_runs)}
        if tail > inst.offset:  # the cut-short last run holds a prefix of this instance
            seen.add(worst_judged(base_verdicts[inst.offset:min(inst.offset + inst.length, tail)], PASS))
        if len(seen) > 1:
            flaky.append([inst.trace_id, inst.target, inst.broker_version, inst.client, inst.profile])
    return {
        "generator": "spark_reports.generate",
        "generator_id": gen_id,
        "config": {**config.__dict__, "broker_versions": list(config.broker_versions), "clients": list(config.clients)},
        "corpus_schema_version": int(SCHEMA.metadata[b"pulsar_conformance_corpus_version"]),
        "rows": rows,
        "parts": parts,
        "runs": len(run_ids),
        "full_runs": full_runs,
        "block_rows": len(base_verdicts),
        "model_rows_per_run": sum(inst.length for inst in instances if inst.target == "model"),
        "broker_rows_per_run": sum(inst.length for inst in instances if inst.target != "model"),
        "persistent": [{"trace_id": instances[p["instance"]].trace_id, "broker_version": instances[p["instance"]].broker_version,
                        "client": instances[p["instance"]].client, "mutation": p["mutation"],
                        "from_run_id": run_ids[p["from_run"]] if p["from_run"] < len(run_ids) else None}
                       for p in persistent],
        "expected": {
            "injections": len(injections),
            "divergent_rows": divergent_rows,
            "fail_rows": fail_rows,
            "fail_rows_by_rule": dict(sorted(fail_by_rule.items())),
            "fail_rows_by_anomaly": dict(sorted(fail_by_anomaly.items())),
            "flaky_traces": sorted(flaky),
        },
        "injections": injections,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spark_reports.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, required=True, help="how many corpus rows to write")
    parser.add_argument("--out", required=True, help="corpus folder to write (part-*.parquet + manifest.json)")
    parser.add_argument("--seed", type=int, default=GenerateConfig.seed)
    parser.add_argument("--sporadic-rate", type=float, default=GenerateConfig.sporadic_rate,
                        help="probability that a broker trace instance of a run is replaced by a failing mutant")
    parser.add_argument("--persistent", type=int, default=GenerateConfig.persistent)
    args = parser.parse_args(argv)
    if args.rows <= 0:
        parser.error("--rows must be positive")
    config = GenerateConfig(rows=args.rows, seed=args.seed, sporadic_rate=args.sporadic_rate, persistent=args.persistent)
    manifest = generate(args.out, config, log=lambda s: print(s, file=sys.stderr))
    exp = manifest["expected"]
    print(f"wrote {manifest['rows']} rows in {manifest['parts']} parts, {manifest['runs']} runs "
          f"({manifest['seconds']} s); injected {exp['injections']} divergences: {exp['divergent_rows']} divergent rows, "
          f"{exp['fail_rows']} FAIL rows, {len(exp['flaky_traces'])} flaky traces")
    return 0


if __name__ == "__main__":
    sys.exit(main())
