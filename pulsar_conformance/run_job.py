"""The main job (``pulsar-conformance run``): every case on the model and on the target, per client.

For each client in ``clients`` (python, java, mixed) every case that runs with it goes to the
model and to the live target driven by that client. Writes into ``out``: ``junit.xml`` and
``summary.json`` (one verdict per rule for the first client, and ``by_client`` with every
client's), ``summary-<client>.json``, the client x feature matrix (``client-matrix.*``), the
histories of every case, ``corpus/`` (the outcome corpus of everything judged, Parquet),
``fuzz/`` (the fuzz budget's summary) and ``report/`` (HTML, xunit2 JUnit, summary; Spark).

One answer (issue 43): ``conformance.verdict_exit.decide`` gives the run's outcome (PASS,
KNOWN_DEVIATIONS, FAIL, INCONCLUSIVE, ERROR, INTERRUPTED), its exit code (``exit_code`` over the
rules each run, model and live, per client, was meant to judge) and its reasons (which rules x
clients, which cases), over every label's verdicts (``label_verdicts``), the harness errors met on
the way (a case that ended ERROR, a fuzz trace that crashed the target or checker, a broker death,
the client matrix or the report job failing) and the conformance failures no rule verdict shows (a
case's broken ``expect:`` line, a fuzz failure). A case that FAILed as a recorded known deviation
of the broker (``conformance/deviations.yaml``) is excused. The outcome is written into
``summary.json`` (``overall``, ``exit_code``, ``reasons``) before the report job reads it, into
``junit.xml`` (``reports.junit``: an outcome suite) and is the last line printed
(``Outcome.line``), after the headline sentence.

Interruptions (issue 15). Every judged case is appended to ``journal-<label>.jsonl`` in ``out``
(one line, fsynced, before its rows go to the corpus). ``--resume`` keeps the journaled results,
adds the corpus rows of any case whose part was never finished (from its saved history), and runs
the other cases under the same corpus run id, so no case runs twice and no corpus row is written
twice; a case the target could not run (ERROR without a history) runs again. Ctrl-C and SIGTERM
raise ``KeyboardInterrupt`` in the main thread: the ``with`` blocks stop the Java driver and the
broker (each trace's ``finally`` deletes its namespace), ``summary.json`` lists the cases not run,
the resume command is printed, and the exit code is 130 / 143.

After every case on a live broker, ``broker_health.BrokerMonitor`` checks it (process gone, ports
closed). A dead broker is reported once (pid, exit status or signal, log tail); the case in flight
is ERROR, not judged (what it saw may be the death); then the run stops (the cases left go to
``summary.json`` ``not_run`` with the reason) or, with ``--on-broker-death restart``, a new broker
(new ports) runs the cases left, at most ``MAX_RESTARTS`` times. ``summary.json`` has
``broker_deaths``. A run in which the broker died exits 4 (harness error) even when a restarted
broker judged every case left: the case in flight was lost, so the verdicts are incomplete until
``--resume`` runs it.

Choices: one broker serves every client; progress goes to ``say`` (stderr by default), so the
command's stdout stays clean.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from fixtures.endpoint import TargetSpec
from fixtures.secrets import copy_redacted, redact
from pulsar_conformance.broker_health import BrokerDeath, BrokerDied, BrokerMonitor
from pulsar_conformance.targets import DEFAULT_CLIENTS, applies_for, describe_target, live_target, model_target, open_endpoint, say as _say
from conformance.runner import one_line_cause, write_json
from conformance.timing import CalibrationError, TimingBands, calibrate
from conformance.verdict_exit import (EXIT_FAIL, EXIT_HARNESS, EXIT_INCONCLUSIVE, EXIT_OK, EXIT_USAGE, LabelVerdicts, Outcome,
                                      decide, outcome_of_error)
from conformance.verdicts import NOT_EXERCISED

FUZZ_MODEL_FACTOR = 20  # the model is cheap: it runs 20 generated traces for every live one
MAX_RESTARTS = 3  # --on-broker-death restart: new brokers at most per run (a case that kills every broker ends it)
HARNESS_LOG = "harness-errors.log"  # under --out: the full traceback of every exception inside a target


@dataclass(frozen=True)
class RunOptions:
    """What ``pulsar-conformance run`` was asked to do (names match its options)."""

    target: TargetSpec
    clients: tuple[str, ...] = DEFAULT_CLIENTS
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
    # --profile: the vendor profile (reference_model.vendors) every case is judged under
    profile: str = "apache"


@dataclass
class _Run:
    """One client's cases on one target (the model or the live broker)."""

    label: str
    client: str
    info: dict[str, Any]
    results: list[Any]
    doc: dict[str, Any]
    excused_rules: set[str] = field(default_factory=set)
    fuzz: dict[str, Any] | None = None  # the fuzz budget's journal entry (harness_errors, failures)

    @property
    def on_model(self) -> bool:
        return self.label.startswith("model")


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


def label_verdicts(runs: list[_Run], labels: list["_Label"] = ()) -> list[LabelVerdicts]:
    """What ``conformance.verdict_exit.decide`` reads of every label: each run's verdicts, meant
    rules, known deviations, cases, errors and cases not run; a label that never started (the
    broker was never reached) with its cases not run."""
    from conformance.runner import ERROR

    out = []
    for run in runs:
        doc = run.doc
        meant = doc.get("meant_to_judge")
        if meant is None:  # a summary without the list: every rule a case that ran names
            meant = sorted({rule for r in run.results for rule in r.case.rules})
        excused: dict[str, list[str]] = {}
        excused_cases: dict[str, list[str]] = {}
        for dev in (doc.get("known_deviations") or {}).values():
            excused.setdefault(dev["rule"], []).append(dev["id"])
            excused_cases.setdefault(dev["case"], []).append(dev["id"])
        fuzz = run.fuzz or {}
        out.append(LabelVerdicts(
            run.label, run.client, run.on_model, dict(doc.get("rules") or {}), tuple(meant), excused,
            dict(doc.get("cases") or {}), excused_cases, {r.case.id: tuple(r.case.rules) for r in run.results},
            {r.case.id: " ".join(str(r.message or r.failure_text()).split())[:200] for r in run.results if r.status == ERROR},
            dict(doc.get("not_run") or {}), int(fuzz.get("failures", 0)), int(fuzz.get("harness_errors", 0)),
            {r.case.id: tuple(sorted(rule for rule, v in r.rule_verdicts.items() if v == "FAIL")) for r in run.results}))
    seen = {run.label for run in runs}
    out += [LabelVerdicts(lab.label, lab.client, lab.on_model, not_run=dict(lab.not_run))
            for lab in labels if lab.label not in seen and lab.not_run]
    return out


def select_cases(options: RunOptions) -> list[Any]:
    from conformance.case_files import CASES_DIR, discover_cases, select_cases as select

    cases = discover_cases(Path(options.cases) if options.cases else CASES_DIR)
    if options.only:
        cases = select(cases, options.only)  # exact case ids, exact rule ids, explicit globs
    return [c.with_vendor(options.profile) for c in cases]


def run(options: RunOptions, *, say: Callable[[str], None] = _say) -> int:
    """Run the main job; return its exit code (``conformance.verdict_exit``; 130/143 when
    interrupted by Ctrl-C/SIGTERM). A fresh run first moves the previous run's results aside
    (``retire_previous_results``); every exit, errors included, leaves a summary.json with the
    overall verdict, the exit code and the errors (``stamp_summary``)."""
    all_cases = select_cases(options)
    if not all_cases:
        say("no cases selected: nothing to run")
        return EXIT_USAGE
    if not any(c.runs_in(client, options.clients) for c in all_cases for client in options.clients):
        # said before anything is written: a run with no case for its clients has nothing to judge or report
        theirs = sorted({cl for c in all_cases for cl in c.clients})
        say(f"error: no selected case runs with --client {','.join(options.clients)}: the selected cases name the "
            f"clients {', '.join(theirs)}; pass one of them with --client")
        return EXIT_USAGE
    out = Path(options.out)
    if not options.resume:
        retired = retire_previous_results(out)
        if retired is not None:
            say(f"the previous results in {out} were moved to {retired} (every earlier generation is kept): "
                f"this run's results replace them")
    out.mkdir(parents=True, exist_ok=True)
    try:
        outcome, errors = _run(options, all_cases, out, say)
    except BaseException as err:
        from fixtures.errors import BrokerError, TargetSpecError

        code = (130 if isinstance(err, KeyboardInterrupt) else
                EXIT_USAGE if isinstance(err, (BrokerError, TargetSpecError, ValueError)) else EXIT_HARNESS)
        stamp_summary(out, outcome_of_error(code, one_line_cause(err)), errors=[one_line_cause(err)])
        raise
    stamp_summary(out, outcome, errors=errors)
    return outcome.exit_code


def _run(options: RunOptions, all_cases: list[Any], out: Path, say: Callable[[str], None]) -> tuple[Outcome, list[str]]:
    """The run proper: its outcome and its errors (one line each) for summary.json."""
    from conformance.corpus import CorpusWriter

    corpus_dir = out / "corpus"
    previous = Journal.load(out) if options.resume else None
    if options.resume and previous is None:
        say(f"--resume: no journal in {out} (journal-*.jsonl): running every case")
    if previous is None:
        Journal.clear(out)
    run_id = previous.run_id if previous is not None else uuid.uuid4().hex[:12]
    journal = Journal(out, run_id)
    writer = CorpusWriter(corpus_dir, run_id=run_id)
    spec = options.target
    # mixed: cross-client cases (those with a Go handle only when go is among the clients: Case.runs_in)
    cases_for = {client: [c for c in all_cases if c.runs_in(client, options.clients)] for client in options.clients}
    model_labels = [_Label(_model_label(c), c, cases_for[c], on_model=True, vendor=options.profile)
                    for c in options.clients if cases_for[c]]
    live_labels = ([_Label(spec.kind if c == "python" else f"{spec.kind}-{c}", c, cases_for[c], on_model=False,
                           vendor=options.profile)
                    for c in options.clients if cases_for[c]] if spec.kind != "model" else [])
    labels = model_labels + live_labels
    if previous is not None:
        kept = _restore(previous, labels, writer=writer, corpus_dir=corpus_dir, say=say)
        say(f"--resume {out} (run {run_id}): {kept} case results kept, "
            f"{sum(len(lab.remaining()) for lab in labels)} cases to run")
    deaths: list[BrokerDeath] = []
    calibrated: dict[str, TimingBands] = {}
    model_release = _model_release(options)
    interrupted: int | None = None
    try:
        with _stop_signals(say) as fired:
            try:
                for lab in model_labels:
                    if lab.pending(options):
                        target = model_target(lab.client, model_release)
                        lab.start(target, TimingBands.for_model(), journal)
                        _run_label_cases(target, lab, out=out, writer=writer, journal=journal, say=say)
                        _fuzz_on(target, lab, options, out=out, corpus_dir=corpus_dir, journal=journal, say=say)
                if spec.kind != "model":
                    for c in options.clients:
                        if not cases_for[c]:
                            say(f"== no selected case runs with client {c}; skipped")
                if any(lab.pending(options) for lab in live_labels):
                    _live(options, live_labels, out=out, writer=writer, journal=journal, calibrated=calibrated,
                          deaths=deaths, say=say)
            except KeyboardInterrupt:
                interrupted = fired[0] if fired else int(signal.SIGINT)
    except CalibrationError as err:
        error = f"timing calibration failed: {one_line_cause(err)}"
        outcome = outcome_of_error(EXIT_HARNESS, error)
        say(outcome.line())
        return outcome, [error]
    finally:
        writer.close()
    if interrupted is not None:
        reason = f"interrupted ({signal.Signals(interrupted).name})"
        for lab in labels:
            lab.mark_not_run(reason)
        runs = _finish_labels(labels)
        if runs:
            _write_summaries(runs, labels, deaths, out)
        judged = sum(len(lab.results) for lab in labels)
        say(f"{reason}: the broker, the Java driver and the trace namespaces are stopped; {judged} case results are kept "
            f"in {out}/journal-*.jsonl (summary.json lists the {sum(len(lab.not_run) for lab in labels)} cases not run)")
        outcome = decide(label_verdicts(runs, labels), errors=_death_lines(deaths), interrupted=128 + interrupted,
                         signal_name=signal.Signals(interrupted).name, resume=resume_command(options))
        if runs:
            _write_junit(runs, out, outcome)
        say(outcome.line())
        return outcome, [f"{reason} (run {run_id}); continue with: {resume_command(options)}"]
    runs = _finish_labels(labels)
    outcome = _report(runs, labels, deaths, options, out=out, corpus_dir=corpus_dir, say=say)
    return outcome, _error_lines(runs, deaths)


def _error_lines(runs: list[_Run], deaths: list[BrokerDeath]) -> list[str]:
    """The run's harness errors for summary.json: each ERRORed case (label, case, cause) and each broker death."""
    from conformance.runner import ERROR

    lines = [f"{run.label} {r.case.id}: {' '.join(str(r.message or r.failure_text()).split())[:300]}"
             for run in runs for r in run.results if r.status == ERROR]
    return lines + [f"broker death: {' '.join(str(d.to_json()).split())[:300]}" for d in deaths]


def _death_lines(deaths: list[BrokerDeath]) -> list[str]:
    """Each broker death as one harness error of the outcome (``decide``'s ``errors``)."""
    return [f"the broker died{' at case ' + d.at_case if d.at_case else ''}{' (' + d.label + ')' if d.label else ''}"
            f"{', ' + d.action if getattr(d, 'action', None) else ''}" for d in deaths]


BROKER_LOGS = "broker-logs"  # under --out: each embedded broker's log, copied before its run folder is removed
# what a run writes under --out (and nothing else there is touched): moved aside together when a
# new run starts, so a run that fails cannot leave the previous run's results looking like its own
RUN_OUTPUTS = ("summary.json", "summary-*.json", "junit.xml", "client-matrix.json", "client-matrix.md", "corpus", "fuzz",
               "histories", "journal-*.jsonl", "report", "broker.json", BROKER_LOGS, HARNESS_LOG)


@contextlib.contextmanager
def _broker_log_kept(endpoint: Any, out: Path, restarts: int) -> Iterator[None]:
    """Copy the broker's log into ``out/broker-logs/`` when the run is done with it: a cleanly
    stopped embedded broker's run folder, log included, is removed from the cache."""
    try:
        yield
    finally:
        log = Path(endpoint.log_path) if getattr(endpoint, "log_path", None) else None
        if log is not None and log.is_file():
            (out / BROKER_LOGS).mkdir(parents=True, exist_ok=True)
            copy_redacted(log, out / BROKER_LOGS / f"broker-{restarts}.log")  # no secret leaves in a copied log


def retire_previous_results(out: Path) -> Path | None:
    """Move the previous run's results out of ``out`` into a new numbered sibling folder
    ``<out>.previous-N`` (N one more than the highest there, so every earlier generation is kept,
    a crashed run's results and broker logs included: nothing a run wrote is ever deleted), and
    return it; ``None`` when ``out`` holds none. Only the names a run writes (``RUN_OUTPUTS``) move:
    ``--out .`` never moves a user's other files. A user removes old generations when done with them."""
    if not out.is_dir():
        return None
    found = sorted({p for pattern in RUN_OUTPUTS for p in out.glob(pattern)})
    if not found:
        return None
    aside = _next_generation(out.resolve())
    for path in found:
        path.rename(aside / path.name)
    return aside


def _next_generation(out: Path) -> Path:
    """Create and return ``<out>.previous-N`` for the lowest N above every existing generation. The
    folder is made with ``exist_ok=False``, so two runs retiring into the same ``--out`` at once
    never share a generation."""
    prefix = out.name + ".previous-"
    taken = [int(p.name[len(prefix):]) for p in out.parent.glob(prefix + "*") if p.name[len(prefix):].isdigit()]
    number = max(taken, default=0) + 1
    while True:
        aside = out.with_name(f"{prefix}{number}")
        try:
            aside.mkdir()
            return aside
        except FileExistsError:
            number += 1


def stamp_summary(out: Path, outcome: Outcome, *, errors: list[str] = ()) -> None:
    """Write the run's one answer into ``out/summary.json``: ``overall`` (PASS, KNOWN_DEVIATIONS,
    FAIL, INCONCLUSIVE, ERROR or INTERRUPTED), ``exit_code``, ``reasons`` (``decide``'s) and
    ``errors`` (harness and broker errors, one line each, not repeated). A run that stopped before
    any verdict still gets a summary.json saying so, so a CI job never reads a missing or stale one
    as this run's."""
    path = out / "summary.json"
    try:
        doc = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except ValueError:
        doc = {}
    doc.update(outcome.to_json())
    before = doc.get("errors") if isinstance(doc.get("errors"), list) else []
    doc["errors"] = [*before, *(e for e in errors if e not in before)]
    out.mkdir(parents=True, exist_ok=True)
    write_json(path, doc)


def overall_verdict(code: int) -> str:
    """The word for an exit code alone (conformance/verdict_exit.py); ``decide`` tells PASS from
    KNOWN_DEVIATIONS, which share exit 0."""
    return {EXIT_OK: "PASS", EXIT_FAIL: "FAIL", EXIT_INCONCLUSIVE: "INCONCLUSIVE", 130: "INTERRUPTED",
            143: "INTERRUPTED"}.get(code, "ERROR")


def _model_label(client: str) -> str:
    return "model" if client == "python" else f"model-{client}"


def _live(options: RunOptions, live_labels: list["_Label"], *, out: Path, writer: Any, journal: "Journal",
          calibrated: dict[str, TimingBands], deaths: list[BrokerDeath], say: Callable[[str], None]) -> None:
    """The live labels' remaining cases on one broker; when it dies, report it once and stop, or
    (``--on-broker-death restart``) start a new broker and go on with the cases left."""
    from conformance.trace import injects_faults

    spec = options.target
    # a fault proxy in front of an embedded broker when a case injects faults (docs/faults.md)
    faults = spec.kind == "embedded" and any(injects_faults(c.trace) for lab in live_labels for c in lab.cases)
    if faults:
        from fixtures.embedded import cache_root
        from fixtures.errors import BrokerStartError
        from fixtures.faults import toxiproxy_binary

        try:
            toxiproxy_binary(cache_root(), progress=say)
        except BrokerStartError as err:
            say(f"the fault cases cannot run here ({err}); they are reported NOT_APPLICABLE")
            faults = False
    restarts = 0
    while any(lab.pending(options) for lab in live_labels):
        opened = False
        try:
            with open_endpoint(spec, options, progress=say, faults=faults) as endpoint, \
                    _broker_log_kept(endpoint, out, restarts):  # one broker for every client
                opened = True
                write_json(out / "broker.json", {**endpoint.describe(), "restarts": restarts,
                                                 **({"log_copy": str(out / BROKER_LOGS / f"broker-{restarts}.log")}
                                                    if endpoint.log_path else {})})
                monitor = BrokerMonitor(endpoint)
                for lab in live_labels:
                    if not lab.pending(options):
                        continue
                    try:
                        with live_target(endpoint, options, client=lab.client, progress=say) as target:
                            bands = timing_bands(endpoint, target, lab.client, options, calibrated, say=say)
                            target.timing = bands.to_json()
                            lab.start(target, bands, journal)
                            _run_label_cases(target, lab, out=out, writer=writer, journal=journal, say=say, monitor=monitor)
                            _fuzz_on(target, lab, options, out=out, corpus_dir=writer.out_dir, journal=journal, say=say,
                                     monitor=monitor)
                    except (BrokerDied, KeyboardInterrupt):
                        raise
                    except Exception as err:  # noqa: BLE001 - a dead broker explains it, or it is the harness's own error
                        death = monitor.check(suspect=True)
                        if death is None:
                            raise
                        death.label = lab.label
                        say(f"   ({lab.label}: {one_line_cause(err)})")
                        raise BrokerDied(death) from err
        except BrokerDied as died:
            death = died.death
            deaths.append(death)
            left = sum(len(lab.remaining()) for lab in live_labels)
            if options.on_broker_death == "restart" and spec.kind != "external" and restarts < MAX_RESTARTS:
                death.action = "restarted"
                say(death.report())
                restarts += 1
                say(f"== --on-broker-death restart: starting a new broker for the {left} cases left (restart {restarts} of "
                    f"at most {MAX_RESTARTS})")
                continue
            say(death.report())
            if options.on_broker_death == "restart":
                say("--on-broker-death restart: " + ("the suite cannot restart an external broker" if spec.kind == "external"
                                                     else f"{MAX_RESTARTS} new brokers died already") + "; stopping")
            where = f"broker died at case {death.at_case}" if death.at_case else "broker died"
            for lab in live_labels:
                lab.mark_not_run(f"{where} ({death.label})" if death.label else where)
            say(f"stopping the run: {left} cases not run (summary.json \"not_run\"); "
                + ("" if options.on_broker_death == "restart" else "--on-broker-death restart starts a new broker and goes on; ")
                + f"run them later with: {resume_command(options)}")
            return
        except Exception as err:  # noqa: BLE001
            if opened or not deaths:
                raise
            # the new broker after a death could not be had: the cases left cannot run
            say(f"the broker could not be restarted: {one_line_cause(err)}")
            for lab in live_labels:
                lab.mark_not_run(f"broker died at case {deaths[-1].at_case}; a new broker could not start")
            deaths[-1].action = "restart failed"
            return


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


# --------------------------------------------------------------------------- one label's cases


@dataclass
class _Label:
    """One client's cases on one target (the model or the live broker), across broker restarts
    and resumed runs: what is judged, what was lost to a broker death, what did not run."""

    label: str
    client: str
    cases: list[Any]
    on_model: bool
    info: dict[str, Any] | None = None
    results: dict[str, Any] = field(default_factory=dict)  # case id -> CaseResult: judged and kept
    lost: dict[str, Any] = field(default_factory=dict)  # case id -> CaseResult (ERROR): in flight when the broker died
    not_run: dict[str, str] = field(default_factory=dict)  # case id -> why it did not run
    fuzz: dict[str, Any] | None = None  # the fuzz budget's journal entry, once it ran
    vendor: str = "apache"  # --profile (reference_model.vendors)

    def remaining(self) -> list[Any]:
        return [c for c in self.cases if c.id not in self.results and c.id not in self.lost]

    def wants_fuzz(self, options: RunOptions) -> bool:
        return options.fuzz_examples > 0 and self.client == "python"

    def pending(self, options: RunOptions) -> bool:
        return bool(self.remaining()) or (self.wants_fuzz(options) and self.fuzz is None)

    def start(self, target: Any, bands: TimingBands | None, journal: "Journal") -> None:
        info = describe_target(target, client=self.client)
        info["client"] = self.client
        info["vendor"] = self.vendor
        if bands is not None:
            info["timing"] = bands.to_json()
        self.info = info
        journal.write(self.label, {"type": "label", "info": info})

    def mark_not_run(self, reason: str) -> None:
        for case in self.remaining():
            self.not_run.setdefault(case.id, reason)

    def ordered_results(self) -> list[Any]:
        return [self.results.get(c.id) or self.lost[c.id] for c in self.cases if c.id in self.results or c.id in self.lost]


def _excusal(lab: _Label, result: Any) -> tuple[list[Any], bool]:
    """The known deviations recorded for the case on this broker, and whether they excuse it (when
    they explain every failure of the case)."""
    from conformance.deviations import known_deviations
    from conformance.runner import FAIL, unexcused_failures

    devs = known_deviations(result.case.id, (lab.info or {}).get("broker_version")) if not lab.on_model else []
    return devs, bool(devs) and result.status == FAIL and not unexcused_failures(result, devs)


def _run_label_cases(target: Any, lab: _Label, *, out: Path, writer: Any, journal: "Journal", say: Callable[[str], None],
               monitor: BrokerMonitor | None = None) -> None:
    """Run ``lab``'s remaining cases on ``target``. Each finished case goes to the journal (flushed)
    and then to the corpus. With a ``monitor``, the broker is checked after every case: if it is
    dead, the case is lost (ERROR, never a verdict) and ``BrokerDied`` is raised."""
    from conformance.runner import ERROR, FAIL, STALL_RERUNS, first_undecided, run_case_past_stalls

    info = lab.info or {}
    cases = lab.remaining()
    before = len(lab.results) + len(lab.lost)
    say(f"== {len(cases)} cases on {lab.label} ({info.get('broker_version') or 'reference model'}, client {lab.client})"
        + (f"; {before} judged before" if before else ""))
    total = len(lab.cases)
    started, done_here = time.monotonic(), 0
    for case in cases:
        i = lab.cases.index(case) + 1

        def stalled(attempt: int, result: Any) -> None:
            say(f"  [{i:>3}/{total}] {result.status:<14} {case.id}: the host stalled where it was due, running it again "
                f"({attempt}/{STALL_RERUNS}): {first_undecided(result)[:200]}")

        result = run_case_past_stalls(case, target, client=lab.client, history_dir=out / "histories" / lab.label,
                                      harness_log=out / HARNESS_LOG, on_stall=stalled)
        if monitor is not None:
            death = monitor.check(suspect=result.status == ERROR)
            if death is not None:
                death.at_case, death.label = case.id, lab.label
                lab.lost[case.id] = _lost(result, death)
                say(f"  [{i:>3}/{total}] {ERROR:<14} {case.id}  ({result.duration_s:.1f} s)  not judged: the broker died")
                raise BrokerDied(death)
        with _HOLD_SIGNALS:  # journal, corpus and results agree: a signal here waits for the three
            journal.write(lab.label, _case_entry(result))
            if result.history is not None:
                writer.add(result.history, result.corpus_verdicts())
            lab.results[case.id] = result
        devs, excused = _excusal(lab, result)
        mark = f"  (known deviation {', '.join(d.id for d in devs)})" if excused else ""
        done_here += 1
        eta = time_left(time.monotonic() - started, done_here, len(cases) - done_here)
        say(f"  [{i:>3}/{total}] {result.status:<14} {case.id}  ({result.duration_s:.1f} s){mark}{eta}")
        if result.status in (FAIL, ERROR) and not excused:
            for line in result.failure_text().splitlines():
                say(f"        {line}")


def _run_cases(target: Any, label: str, client: str, cases: list[Any], *, out: Path, writer: Any,
               say: Callable[[str], None], bands: TimingBands | None = None) -> _Run:
    """``cases`` on ``target`` from start to end, as one label of a run with no journal and no
    broker watch (its outcome: ``decide(label_verdicts([run]))``, as the main job's)."""
    vendors_of_cases = {c.trace.header.profile.get("vendor", "apache") for c in cases}
    lab = _Label(label, client, list(cases), on_model=label.startswith("model"),
                 vendor=vendors_of_cases.pop() if len(vendors_of_cases) == 1 else "apache")
    journal = _NoJournal(out, "")
    lab.start(target, bands, journal)
    _run_label_cases(target, lab, out=out, writer=writer, journal=journal, say=say)
    return _finish_labels([lab])[0]


def time_left(elapsed_s: float, done: int, left: int) -> str:
    """``"  ~4 min left"`` from the pace so far; empty while nothing is left or the pace says under a
    minute (a line per case is the progress; an estimate is worth printing only for long stretches)."""
    if done <= 0 or left <= 0:
        return ""
    seconds = elapsed_s / done * left
    if seconds < 60:
        return ""
    return f"  ~{seconds / 60:.0f} min left" if seconds < 5400 else f"  ~{seconds / 3600:.1f} h left"


def _lost(result: Any, death: BrokerDeath) -> Any:
    """The case in flight when the broker died: ERROR, no verdict (what it saw may be the death)."""
    from conformance.runner import ERROR, CaseResult

    return CaseResult(result.case, result.target, ERROR, {}, [], [], None, result.history_path, result.duration_s,
                      f"the broker died during this case ({death.exit_status}): not judged; --resume runs it again")


def _fuzz_on(target: Any, lab: _Label, options: RunOptions, *, out: Path, corpus_dir: Path, journal: "Journal",
             say: Callable[[str], None], monitor: BrokerMonitor | None = None) -> None:
    from conformance.fuzz import HARNESS_ERROR, fuzz_budget

    if not lab.wants_fuzz(options) or lab.fuzz is not None:
        return
    examples = options.fuzz_examples * (FUZZ_MODEL_FACTOR if lab.on_model else 1)
    say(f"== fuzz budget on {lab.label}: {examples} generated traces (seed {options.fuzz_seed})")
    fuzz_out = out / "fuzz" / lab.label.split("/")[0]
    result = fuzz_budget(target, examples=examples, seed=options.fuzz_seed, out_dir=fuzz_out)
    say("   " + result.text().replace("\n", "\n   "))
    if monitor is not None:
        death = monitor.check()
        if death is not None:
            death.at_case, death.label = "(fuzz budget)", lab.label
            raise BrokerDied(death)
    harness = sum(1 for f in result.failures if f.signature[0] == HARNESS_ERROR)  # the target or the checker crashed
    # this budget's parts only: the fuzz corpus folder keeps those of earlier (maybe interrupted) budgets
    parts = sorted(p.name for p in Path(result.corpus_dir).glob(f"part-{result.run_id}-*.parquet"))
    entry = {"type": "fuzz", "harness_errors": harness, "failures": len(result.failures) - harness,
             "source": str(result.corpus_dir), "parts": parts}
    with _HOLD_SIGNALS:
        journal.write(lab.label, entry)  # first the journal, then the links: a resumed run completes them
        _link_fuzz_parts(entry, corpus_dir)
        lab.fuzz = entry


def _link_fuzz_parts(entry: dict[str, Any], corpus_dir: Path) -> None:
    """One corpus for the run: the fuzz parts join the case parts (file names are unique per run id)."""
    for name in entry.get("parts", []):
        source, target_path = Path(entry["source"]) / name, Path(corpus_dir) / name
        if source.exists() and not target_path.exists():
            os.link(source, target_path)


# --------------------------------------------------------------------------- the journal (--resume)


class Journal:
    """``out/journal-<label>.jsonl``: one JSON line per finished case (and per label start and fuzz
    budget), written and fsynced as it happens, so an interrupted run keeps what it judged."""

    def __init__(self, out: Path, run_id: str):
        self.out = Path(out)
        self.run_id = run_id

    @staticmethod
    def path(out: Path, label: str) -> Path:
        return Path(out) / f"journal-{re.sub(r'[^A-Za-z0-9_.-]', '_', label)}.jsonl"

    def write(self, label: str, entry: dict[str, Any]) -> None:
        line = redact(json.dumps({"run_id": self.run_id, "label": label, **entry}, sort_keys=False)) + "\n"
        with self.path(self.out, label).open("a", encoding="utf-8") as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    @staticmethod
    def clear(out: Path) -> None:
        for path in Path(out).glob("journal-*.jsonl"):
            path.unlink(missing_ok=True)

    @staticmethod
    def load(out: Path) -> "_Journaled | None":
        """What the journals in ``out`` hold (a torn last line is left out); None: no journal."""
        found = _Journaled(run_id="")
        for path in sorted(Path(out).glob("journal-*.jsonl")):
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if not isinstance(entry, dict) or "label" not in entry:
                    continue
                found.run_id = found.run_id or str(entry.get("run_id") or "")
                block = found.labels.setdefault(entry["label"], {"info": None, "cases": {}, "fuzz": None})
                kind = entry.get("type")
                if kind == "label":
                    block["info"] = entry.get("info")
                elif kind == "case":
                    block["cases"][entry["case"]] = entry
                elif kind == "fuzz":
                    block["fuzz"] = entry
        return found if found.run_id else None


class _NoJournal(Journal):
    def write(self, label: str, entry: dict[str, Any]) -> None:
        pass


@dataclass
class _Journaled:
    run_id: str
    labels: dict[str, dict[str, Any]] = field(default_factory=dict)


def _case_entry(result: Any) -> dict[str, Any]:
    from conformance.runner import ERROR

    history = result.history
    expectations = []
    for e in result.expectations:
        try:
            index = result.case.expectations.index(e.expectation)
        except ValueError:
            continue
        expectations.append({"index": index, "passed": e.passed, "observed": e.observed, "message": e.message})
    return {
        "type": "case",
        "case": result.case.id,
        "status": result.status,
        # a case the target could not run (no history) runs again on --resume; every other result is kept
        "final": not (result.status == ERROR and history is None),
        "target": result.target,
        "rule_verdicts": dict(result.rule_verdicts),
        "verdicts": [{"rule_id": v.rule_id, "step": v.step, "status": v.status, "anomaly": getattr(v, "anomaly", None),
                      "explanation": getattr(v, "explanation", "")} for v in result.verdicts],
        "expectations": expectations,
        "expectation_failures": [{"step": f.step, "message": f.message, "charged_to": list(f.charged_to),
                                  "indeterminate": f.indeterminate} for f in result.expectation_failures],
        "history_path": str(result.history_path) if result.history_path else None,
        "duration_s": result.duration_s,
        "message": result.message,
        "not_followed": list(result.not_followed),
        "corpus": None if history is None else _corpus_key_json(history),
    }


def _corpus_key_json(history: Any) -> dict[str, Any]:
    h = history.header
    return {"trace_id": h.trace_id, "target": h.target or "unknown", "client": h.client, "broker_version": h.broker_version}


def _result_from(entry: dict[str, Any], case: Any) -> Any | None:
    """The ``CaseResult`` a journal entry recorded (None: it no longer fits the case file)."""
    from conformance.case_files import ExpectationResult
    from conformance.runner import CaseResult, CaseVerdict, ExpectationFailure

    try:
        expectations = [ExpectationResult(case.expectations[x["index"]], x["passed"], x["observed"], x["message"])
                        for x in entry.get("expectations", [])]
        verdicts = [CaseVerdict(v["rule_id"], v["step"], v["status"], v.get("anomaly"), v.get("explanation") or "")
                    for v in entry.get("verdicts", [])]
        failures = [ExpectationFailure(case.id, f["step"], f["message"], tuple(f["charged_to"]), bool(f["indeterminate"]))
                    for f in entry.get("expectation_failures", [])]
        path = entry.get("history_path")
        return CaseResult(case, entry["target"], entry["status"], dict(entry["rule_verdicts"]), verdicts, expectations, None,
                          Path(path) if path else None, float(entry.get("duration_s") or 0.0), entry.get("message") or "",
                          failures, [dict(x) for x in entry.get("not_followed") or ()])
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def _corpus_keys(corpus_dir: Path, run_id: str) -> set[tuple[Any, ...]]:
    """(trace id, target, client, broker version) of every trace run ``run_id`` has in a finished part."""
    import pyarrow.parquet as pq

    keys: set[tuple[Any, ...]] = set()
    for part in sorted(Path(corpus_dir).glob(f"part-{run_id}-*.parquet")):
        try:
            table = pq.read_table(part, columns=["trace_id", "target", "client", "broker_version"])
        except Exception:  # noqa: BLE001 - an unreadable part holds nothing this run can count on
            continue
        keys.update(zip(*(table.column(c).to_pylist() for c in ("trace_id", "target", "client", "broker_version"))))
    return keys


def _restore(previous: _Journaled, labels: list[_Label], *, writer: Any, corpus_dir: Path, say: Callable[[str], None]) -> int:
    """Put the journaled results back into ``labels``; return how many were kept. A journaled case
    whose rows never reached a finished corpus part gets them now (from its saved history), so no
    case is run twice and none is missing from the corpus; one without its history runs again."""
    from conformance.trace import History, load

    present = _corpus_keys(corpus_dir, previous.run_id)
    kept = 0
    for lab in labels:
        block = previous.labels.get(lab.label)
        if not block:
            continue
        if block.get("info"):
            lab.info = block["info"]
        by_id = {c.id: c for c in lab.cases}
        for case_id, entry in block["cases"].items():
            case = by_id.get(case_id)
            if case is None or not entry.get("final"):
                continue
            result = _result_from(entry, case)
            if result is None:
                continue
            key = entry.get("corpus")
            if key:
                k = (key["trace_id"], key["target"], key["client"], key["broker_version"])
                if k not in present:
                    try:
                        history = load(entry["history_path"]) if entry.get("history_path") else None
                    except (OSError, ValueError):
                        history = None
                    if not isinstance(history, History):
                        continue  # runs again
                    writer.add(history, result.verdicts)
                    present.add(k)
            lab.results[case_id] = result
            kept += 1
        if block.get("fuzz"):
            _link_fuzz_parts(block["fuzz"], corpus_dir)
            lab.fuzz = block["fuzz"]
    return kept


# --------------------------------------------------------------------------- summaries, exit code


def _finish_labels(labels: list[_Label]) -> list[_Run]:
    """A ``_Run`` for every label that ran (or was resumed), its known deviations sorted out
    (``decide`` counts its failures and harness errors from it)."""
    from conformance.runner import FAIL, summary

    runs = []
    for lab in labels:
        if lab.info is None:
            continue
        info = dict(lab.info)
        results = lab.ordered_results()
        deviations: dict[str, Any] = {}
        excused_rules: set[str] = set()
        for result in results:
            devs, excused = _excusal(lab, result)
            if excused:
                failed = {v.rule_id for v in result.verdicts if getattr(v, "status", None) == FAIL}
                for dev in devs:
                    if dev.rule in failed:
                        deviations[f"{result.case.id}#{dev.id}"] = {"id": dev.id, "case": result.case.id, "rule": dev.rule,
                                                                   "reason": dev.reason, "evidence": dev.evidence}
                        excused_rules.add(dev.rule)
        doc = summary(results, target_info=info, applies=applies_for(info))
        doc["known_deviations"] = deviations
        if info.get("timing") is not None:
            doc["timing"] = info["timing"]
        doc["not_run"] = dict(lab.not_run)
        judged_rules = {rule for r in results for rule in r.case.rules}
        doc["not_run_rules"] = {rule: reason for cid, reason in lab.not_run.items() for rule in _case_rules(lab, cid)
                                if rule not in judged_rules and doc["rules"].get(rule) == NOT_EXERCISED}
        runs.append(_Run(lab.label, lab.client, info, results, doc, excused_rules, lab.fuzz))
    return runs


def _case_rules(lab: _Label, case_id: str) -> tuple[str, ...]:
    return next((c.rules for c in lab.cases if c.id == case_id), ())


def _not_followed_total(runs: list[_Run]) -> dict[str, Any]:
    """summary.json ``not_followed`` over every client of the run: what the headline and the last line count."""
    from conformance.runner import merge_not_followed

    return merge_not_followed((r.client, r.doc.get("not_followed") or {}) for r in runs)


def _write_summaries(runs: list[_Run], labels: list[_Label], deaths: list[BrokerDeath], out: Path) -> list[_Run]:
    from conformance.runner import write_json as _write_json

    live = [r for r in runs if not r.on_model] or runs
    deaths_json = [d.to_json() for d in deaths]
    by_client = {}
    for r in live:
        if not r.on_model:
            r.doc["broker_deaths"] = deaths_json
        _write_json(out / f"summary-{r.client}.json", r.doc)
        by_client[r.client] = {k: r.doc[k] for k in ("client_version", "rules", "counts", "cases", "known_deviations", "not_run",
                                                     "meant_to_judge", "not_followed") if k in r.doc}
    primary = dict(live[0].doc)
    # --profile: the vendor profile every case was judged under (reference_model.vendors)
    primary["profile"] = next((lab.vendor for lab in labels), "apache")
    primary["by_client"] = by_client
    primary["not_followed"] = _not_followed_total(live)
    primary["reference"] = {r.client: {k: r.doc[k] for k in ("target", "broker_version", "client", "rules", "counts")}
                            for r in runs if r.on_model}
    # every label's cases that did not run, and why (a label the broker never reached has no summary of its own)
    primary["not_run_by_label"] = {lab.label: dict(lab.not_run) for lab in labels if lab.not_run}
    primary["broker_deaths"] = deaths_json
    primary["broker_restarts"] = sum(1 for d in deaths if d.action == "restarted")
    _write_json(out / "summary.json", primary)
    return live


def _write_junit(runs: list[_Run], out: Path, outcome: Outcome) -> None:
    from reports.junit import write_junit

    write_junit(out / "junit.xml", [(r.results, r.info) for r in runs], outcome=outcome)


def _report(runs: list[_Run], labels: list[_Label], deaths: list[BrokerDeath], options: RunOptions, *, out: Path,
            corpus_dir: Path, say: Callable[[str], None]) -> Outcome:
    """Write the summaries, the client matrix, the outcome (summary.json, junit.xml) and the report;
    print the headline sentence and then the outcome's line, last. The outcome is decided before the
    report job runs (it draws the banner from summary.json); a report that fails makes it ERROR."""
    live = _write_summaries(runs, labels, deaths, out)
    errors = _death_lines(deaths)
    try:
        from reports import client_matrix

        written = client_matrix.write(client_matrix.build([r.doc for r in live],
                                                          sources=[str(out / f"summary-{r.client}.json") for r in live]), out)
        say("wrote the client x feature matrix: " + ", ".join(str(p) for p in written))
    except Exception as err:  # noqa: BLE001 - the verdicts above stand even if the matrix cannot be drawn
        say(f"the client x feature matrix failed: {type(err).__name__}: {err}")
        errors.append(f"the client x feature matrix failed: {type(err).__name__}: {one_line_cause(err)}")
    verdicts = label_verdicts(runs, labels)
    outcome = decide(verdicts, errors=errors)
    stamp_summary(out, outcome)
    _write_junit(runs, out, outcome)
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
            outcome = decide(verdicts, errors=[*errors, f"the report job failed (exit {code}): see the lines above"])
            stamp_summary(out, outcome)
            _write_junit(runs, out, outcome)
        else:
            say(f"wrote the report: {out / 'report' / 'index.html'}")
    not_run = sum(len(lab.not_run) for lab in labels)
    if deaths:
        restarted = sum(1 for d in deaths if d.action == "restarted")
        say(f"the verdicts are incomplete (exit {EXIT_HARNESS}): {len(deaths)} broker death(s), {restarted} restart(s), "
            f"{not_run} cases not run (summary.json: broker_deaths, not_run)")
    from reports.headline import conformance_sentence  # the figures, from the summary.json written above

    sentence = conformance_sentence(json.loads((out / "summary.json").read_text(encoding="utf-8")))
    if outcome.overall != "PASS":
        say(sentence)
    say(outcome.line(sentence))
    return outcome


# --------------------------------------------------------------------------- Ctrl-C, SIGTERM


class _Interrupted(KeyboardInterrupt):
    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class _SignalHold:
    """``with _HOLD_SIGNALS:`` a block the run's signal handler does not break into: a signal that
    comes meanwhile is raised when the block ends."""

    def __init__(self) -> None:
        self.depth = 0
        self.pending: int | None = None

    def __enter__(self) -> None:
        self.depth += 1

    def __exit__(self, *exc: object) -> None:
        self.depth -= 1
        if self.depth == 0 and self.pending is not None:
            signum, self.pending = self.pending, None
            raise _Interrupted(signum)


_HOLD_SIGNALS = _SignalHold()


@contextlib.contextmanager
def _stop_signals(say: Callable[[str], None]) -> Iterator[list[int]]:
    """SIGINT and SIGTERM raise ``KeyboardInterrupt`` in the main thread (once: a second signal while
    the ``with`` blocks close the broker, the driver and the namespaces is ignored, so cleanup ends).
    Yields the list the signal's number is put into."""
    fired: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield fired
        return

    def handler(signum: int, frame: Any) -> None:
        if fired:
            say(f"{signal.Signals(signum).name}: already stopping (cleaning up the broker, the driver, the namespaces)")
            return
        fired.append(signum)
        if _HOLD_SIGNALS.depth:
            _HOLD_SIGNALS.pending = signum
            return
        raise _Interrupted(signum)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield fired
    finally:
        _HOLD_SIGNALS.pending = None
        for sig, old in previous.items():
            signal.signal(sig, old)


def resume_command(options: RunOptions) -> str:
    """The command line that continues this run (``--resume``)."""
    spec = options.target
    args = ["pulsar-conformance", "run", "--target", spec.service_url if spec.kind == "external" else spec.kind]
    if spec.kind == "external" and spec.admin_url:
        args += ["--pulsar-admin-url", spec.admin_url]
    args += ["--client", ",".join(options.clients), "--out", str(options.out)]
    if options.cases:
        args += ["--cases", str(options.cases)]
    for sel in options.only:
        args += ["--only", sel]
    args += ["--fuzz-examples", str(options.fuzz_examples)]
    if options.fuzz_seed:
        args += ["--fuzz-seed", str(options.fuzz_seed)]
    if options.no_report:
        args.append("--no-report")
    for flag, value in (("--token-env", options.token_env), ("--token-file", options.token_file),
                        ("--broker-version", options.broker_version), ("--java-client-version", options.java_client_version)):
        if value:
            args += [flag, value]
    for item in options.config_override:
        args += ["--config-override", item]
    if options.timing_tolerance_ms is not None:
        args += ["--timing-tolerance-ms", f"{options.timing_tolerance_ms:g}"]
    if options.on_broker_death != "stop":
        args += ["--on-broker-death", options.on_broker_death]
    args.append("--resume")
    return shlex.join(args)
