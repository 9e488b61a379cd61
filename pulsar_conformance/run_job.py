"""The main job (``pulsar-conformance run``): every case on the model and on the target, per client.

For each client in ``clients`` (python, java, mixed) every case that runs with it goes to the
model and to the live target driven by that client. Writes into ``out``: ``junit.xml`` and
``summary.json`` (one verdict per rule for the first client, and ``by_client`` with every
client's), ``summary-<client>.json``, the client x feature matrix (``client-matrix.*``), the
histories of every case, ``corpus/`` (the outcome corpus of everything judged, Parquet),
``fuzz/`` (the fuzz budget's summary) and ``report/`` (HTML, xunit2 JUnit, summary; Spark).

The exit code comes from ``conformance.verdict_exit.exit_code`` over the rules each run (model
and live, per client) was meant to judge (``run_rule_verdicts``), the harness errors met on the
way (a case that ended ERROR, a fuzz trace that crashed the target or checker, the client matrix
or the report job failing) and the conformance failures no rule verdict shows (a case's broken
``expect:`` line, a fuzz failure). A case that FAILed as a recorded known deviation of the
broker (``conformance/deviations.yaml``) is excused.

Choices: one broker serves every client; progress goes to ``say`` (stderr by default), so the
command's stdout stays clean.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from fixtures.endpoint import TargetSpec
from pulsar_conformance.targets import applies_for, describe_target, live_target, model_target, open_endpoint, say as _say
from conformance.timing import CalibrationError, TimingBands, calibrate
from conformance.trace import FAULT_OPS
from conformance.verdict_exit import EXIT_HARNESS, EXIT_USAGE, exit_code

FUZZ_MODEL_FACTOR = 20  # the model is cheap: it runs 20 generated traces for every live one


@dataclass(frozen=True)
class RunOptions:
    """What ``pulsar-conformance run`` was asked to do (names match its options)."""

    target: TargetSpec
    clients: tuple[str, ...] = ("python", "java", "mixed")
    out: Path = Path("out/run")
    cases: Path | None = None  # a folder of case files; None: the built-in cases
    only: tuple[str, ...] = ()  # case id substrings or rule ids
    fuzz_examples: int = 10
    fuzz_seed: int = 0
    no_report: bool = False
    # how to obtain the broker and its clients (pulsar_conformance.targets.open_endpoint)
    token_env: str | None = None
    token_file: str | None = None
    broker_version: str | None = None
    config_override: tuple[str, ...] = ()
    java_client_version: str | None = None
    # --timing-tolerance-ms: judge with this lateness band instead of calibrating one per client
    timing_tolerance_ms: float | None = None
    # --on-broker-death: "stop" the run cleanly when the embedded broker dies, or "restart" it and go on
    on_broker_death: str = "stop"
    # --resume: keep the cases already judged in ``out``, run the others
    resume: bool = False


@dataclass
class _Run:
    """One client's cases on one target (the model or the live broker)."""

    label: str
    client: str
    info: dict[str, Any]
    results: list[Any]
    doc: dict[str, Any]
    excused_rules: set[str] = field(default_factory=set)

    @property
    def on_model(self) -> bool:
        return self.label.startswith("model")


@dataclass
class _Tally:
    harness_errors: int = 0
    failed_cases: int = 0  # conformance failures, known deviations left out


def run_rule_verdicts(runs: list[_Run]) -> tuple[dict[str, str], set[str]]:
    """The verdicts of the rules each run was meant to judge, keyed ``"<label> <rule id>"``, and
    the keys whose FAIL is an excused known deviation."""
    verdicts: dict[str, str] = {}
    excused: set[str] = set()
    for run in runs:
        rules = run.doc.get("rules", {})
        meant = run.doc.get("meant_to_judge")
        if meant is None:  # a summary without the list: every rule a case that ran names
            meant = {rule for r in run.results for rule in r.case.rules}
        for rule in meant:
            if rule in rules:
                verdicts[f"{run.label} {rule}"] = rules[rule]
        excused |= {f"{run.label} {rule}" for rule in run.excused_rules}
    return verdicts, excused


def select_cases(options: RunOptions) -> list[Any]:
    from conformance.case_files import CASES_DIR, discover_cases

    cases = discover_cases(Path(options.cases) if options.cases else CASES_DIR)
    if options.only:
        cases = [c for c in cases if any(sel in c.id or sel in c.rules for sel in options.only)]
    return cases


def run(options: RunOptions, *, say: Callable[[str], None] = _say) -> int:
    """Run the main job; return its exit code (``conformance.verdict_exit``)."""
    from conformance.corpus import CorpusWriter
    from conformance.runner import write_json

    all_cases = select_cases(options)
    if not all_cases:
        say("no cases selected: nothing to run")
        return EXIT_USAGE
    out = Path(options.out)
    out.mkdir(parents=True, exist_ok=True)
    corpus_dir = out / "corpus"
    writer = CorpusWriter(corpus_dir, run_id=uuid.uuid4().hex[:12])
    runs: list[_Run] = []
    tally = _Tally()
    spec = options.target
    cases_for = {client: [c for c in all_cases if c.runs_on(client)] for client in options.clients}  # mixed: cross-client cases

    def run_on(target: Any, label: str, client: str, bands: TimingBands) -> None:
        runs.append(_run_cases(target, label, client, cases_for[client], out=out, writer=writer, tally=tally, say=say,
                               bands=bands))
        if options.fuzz_examples > 0 and client == "python":
            _fuzz_on(target, label, options, out=out, corpus_dir=corpus_dir, tally=tally, say=say)

    calibrated: dict[str, TimingBands] = {}
    model_release = _model_release(options)
    try:
        for client in options.clients:
            if cases_for[client]:
                run_on(model_target(client, model_release), "model" if client == "python" else f"model-{client}", client,
                       TimingBands.for_model())
        if spec.kind != "model":
            faults = any(op.op in FAULT_OPS for c in all_cases for op in c.trace.ops)  # a fault proxy in front of the broker
            with open_endpoint(spec, options, progress=say, faults=faults) as endpoint:  # one broker for every client
                for client in options.clients:
                    if not cases_for[client]:
                        say(f"== no selected case runs with client {client}; skipped")
                        continue
                    with live_target(endpoint, options, client=client, progress=say) as target:
                        bands = timing_bands(endpoint, target, client, options, calibrated, say=say)
                        target.timing = bands.to_json()
                        run_on(target, spec.kind if client == "python" else f"{spec.kind}-{client}", client, bands)
    except CalibrationError as err:
        say(f"timing calibration failed: {err}")
        return EXIT_HARNESS
    finally:
        writer.close()

    live = [r for r in runs if not r.on_model] or runs
    by_client = {}
    for r in live:
        write_json(out / f"summary-{r.client}.json", r.doc)
        by_client[r.client] = {k: r.doc[k] for k in ("client_version", "rules", "counts", "cases", "known_deviations")}
    primary = dict(live[0].doc)
    primary["by_client"] = by_client
    primary["reference"] = {r.client: {k: r.doc[k] for k in ("target", "broker_version", "client", "rules", "counts")}
                            for r in runs if r.on_model}
    write_json(out / "summary.json", primary)
    from reports.junit import write_junit

    write_junit(out / "junit.xml", [(r.results, r.info) for r in runs])
    try:
        from reports import client_matrix

        written = client_matrix.write(client_matrix.build([r.doc for r in live],
                                                          sources=[str(out / f"summary-{r.client}.json") for r in live]), out)
        say("wrote the client x feature matrix: " + ", ".join(str(p) for p in written))
    except Exception as err:  # noqa: BLE001 - the verdicts above stand even if the matrix cannot be drawn
        say(f"the client x feature matrix failed: {type(err).__name__}: {err}")
        tally.harness_errors += 1
    for r in runs:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(r.doc["counts"].items()))
        say(f"{r.label}: rules {counts}")
    say(f"wrote {out / 'junit.xml'} and {out / 'summary.json'}; outcome corpus in {corpus_dir}")
    if not options.no_report:
        from spark_reports.jobs.report import main as report_main

        say("== report (Spark, local mode)")
        summaries = [a for r in live for a in ("--summary", str(out / f"summary-{r.client}.json"))]
        code = report_main(["--outcomes", str(corpus_dir), "--out", str(out / "report"), "--quiet", *summaries])
        if code != 0:
            say(f"the report failed (exit {code}); the JUnit XML and summary.json above are complete")
            tally.harness_errors += 1
        else:
            say(f"wrote the report: {out / 'report' / 'index.html'}")
    verdicts, excused = run_rule_verdicts(runs)
    return exit_code(verdicts, harness_errors=tally.harness_errors, failed_cases=tally.failed_cases, excused=excused)


def _model_release(options: RunOptions) -> str | None:
    """The release the model plays in this run: the embedded broker's (so the model's line and
    Key_Shared selectors are those of the release under test), else the default line."""
    if options.target.kind != "embedded":
        return None
    from fixtures.broker_builds import release_of

    return release_of(options.broker_version)


def timing_bands(endpoint: Any, target: Any, client: str, options: RunOptions, calibrated: dict[str, TimingBands], *,
                 say: Callable[[str], None] = _say) -> TimingBands:
    """The timing bands the ``client`` run on ``target`` is judged with (``conformance.timing``):
    ``--timing-tolerance-ms`` if given, else measured now by ``calibrate`` on ``target`` (~10 s per
    client; a mixed run gets the widest of the Python and Java bands, measuring whichever this run
    has not). ``calibrated`` keeps what was measured, per client. Raises ``CalibrationError``."""
    if options.timing_tolerance_ms is not None:
        return TimingBands.default_live().with_override(options.timing_tolerance_ms)
    if client == "mixed":
        parts = []
        for one in ("python", "java"):
            if one not in calibrated:
                calibrated[one] = _calibrate(endpoint, None, one, say)
            parts.append(calibrated[one])
        return TimingBands.widest(parts)
    if client not in calibrated:
        calibrated[client] = _calibrate(endpoint, target, client, say)
    return calibrated[client]


def _calibrate(endpoint: Any, target: Any, client: str, say: Callable[[str], None]) -> TimingBands:
    say(f"== timing calibration with the {client} client (conformance/timing.py; skip with --timing-tolerance-ms)")
    measured = calibrate(endpoint.service_url, endpoint.admin_url, client=client, token=endpoint.token, target=target)
    bands = TimingBands.from_calibration(measured)
    say(f"   bands: late {bands.dispatch_latency_ms:g} ms, early {bands.early_ms:g} ms, delayed {bands.delayed_late_ms:g} ms "
        f"({measured.duration_s:.1f} s)")
    return bands


def _run_cases(target: Any, label: str, client: str, cases: list[Any], *, out: Path, writer: Any, tally: _Tally,
               say: Callable[[str], None], bands: TimingBands | None = None) -> _Run:
    from conformance.deviations import known_deviations
    from conformance.runner import ERROR, FAIL, run_case, summary, unexcused_failures

    info = describe_target(target, client=client)
    info["client"] = client
    results = []
    deviations = {}
    excused_rules: set[str] = set()
    say(f"== {len(cases)} cases on {label} ({info.get('broker_version') or 'reference model'}, client {client})")
    for i, case in enumerate(cases, start=1):
        result = run_case(case, target, client=client, history_dir=out / "histories" / label)
        results.append(result)
        if result.history is not None:
            writer.add(result.history, result.corpus_verdicts())
        devs = known_deviations(case.id, info["broker_version"]) if not label.startswith("model") else []
        # excused only when the recorded deviations explain every failure of the case
        excused = bool(devs) and result.status == FAIL and not unexcused_failures(result, devs)
        mark = f"  (known deviation {', '.join(d.id for d in devs)})" if excused else ""
        say(f"  [{i:>3}/{len(cases)}] {result.status:<14} {case.id}  ({result.duration_s:.1f} s){mark}")
        if excused:
            failed = {v.rule_id for v in result.verdicts if getattr(v, "status", None) == FAIL}
            for dev in devs:
                if dev.rule in failed:
                    deviations[f"{case.id}#{dev.id}"] = {"id": dev.id, "case": case.id, "rule": dev.rule, "reason": dev.reason,
                                                         "evidence": dev.evidence}
                    excused_rules.add(dev.rule)
        elif result.status == FAIL:
            tally.failed_cases += 1
        elif result.status == ERROR:
            tally.harness_errors += 1
        if result.status in (FAIL, ERROR):
            for line in result.failure_text().splitlines():
                say(f"        {line}")
    doc = summary(results, target_info=info, applies=applies_for(info))
    doc["known_deviations"] = deviations
    if bands is not None:
        doc["timing"] = info["timing"] = bands.to_json()
    return _Run(label, client, info, results, doc, excused_rules)


def _fuzz_on(target: Any, label: str, options: RunOptions, *, out: Path, corpus_dir: Path, tally: _Tally,
             say: Callable[[str], None]) -> None:
    from conformance.fuzz import HARNESS_ERROR, fuzz_budget

    examples = options.fuzz_examples * (FUZZ_MODEL_FACTOR if label.startswith("model") else 1)
    say(f"== fuzz budget on {label}: {examples} generated traces (seed {options.fuzz_seed})")
    fuzz_out = out / "fuzz" / label.split("/")[0]
    result = fuzz_budget(target, examples=examples, seed=options.fuzz_seed, out_dir=fuzz_out)
    say("   " + result.text().replace("\n", "\n   "))
    for failure in result.failures:
        if failure.signature[0] == HARNESS_ERROR:  # the target or the checker crashed on a generated trace
            tally.harness_errors += 1
        else:
            tally.failed_cases += 1
    # one corpus for the run: the fuzz parts join the case parts (file names are unique per run id)
    for part in Path(result.corpus_dir).glob("part-*.parquet"):
        target_path = corpus_dir / part.name
        if not target_path.exists():
            os.link(part, target_path)
