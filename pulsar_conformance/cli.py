"""``pulsar-conformance``: the command line. It parses arguments, calls the job, and prints.

  run           the main job (``run_job.py``): every case on the model and on the target, per
                client; a fuzz budget; JUnit XML, summary.json, client matrix, Spark report
  replay        run one trace (or the trace of a history) on a target and print the verdicts
  check         judge an existing history file against the model, without running anything
  diff-clients  one trace with the Python and the Java client (and Go): where they agree, differ, and why
  fuzz          generated traces on the model and a target; failures shrunk and saved
                (``conformance.fuzz``; docs/fuzzing.md)
  report        JUnit XML (xunit2), HTML and summary.json from an outcome corpus (Spark)
  rules         list the rule registry; ``rules ID`` is ``explain ID``
  explain       one rule: its text, source, releases and clients, detector, and the cases that name it
  matrix        the case suite on several broker releases, one report: rule x release x client
  broker        start / status / stop an embedded broker that outlives the command; versions
                (what can be had here); compare VERSION (assembled lib/ vs the tarball's)
  rejudge       judge every recorded history under a folder again with this model and checker
  cache         list what the user cache holds (brokers, driver builds, run folders); prune it

Exit codes (one function decides them for run, replay and check:
``conformance.verdict_exit.exit_code``):

  0  every rule the run was meant to judge is PASS, or an excused known deviation
  1  a conformance FAIL (``fuzz``: a FAIL or FLAKY failure found; ``diff-clients``: a
     difference no rule explains)
  2  bad input (one line naming the file, the line or field, and what to do: docs/bad-input.md),
     bad usage, or no broker (``broker status`` of a broker that is not running)
  3  inconclusive: a rule the run was meant to judge ended INDETERMINATE or was never judged
  4  harness error: the suite itself failed (a target raised, the Java driver died, the
     checker crashed, the client matrix or the report job failed)
  when several apply: 4, then 1, then 3. ``report`` returns the report job's own code;
  130 on Ctrl-C.

Layers point one way: reference_model <- conformance <- reports <- spark_reports <- this package.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import traceback
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from conformance.targets.java_driver import JavaDriverError
from conformance.verdict_exit import EXIT_CODES_TEXT, EXIT_FAIL, EXIT_HARNESS, EXIT_OK, EXIT_USAGE, exit_code
from fixtures.endpoint import TargetSpec, parse_target
from fixtures.errors import BrokerError, TargetSpecError
from pulsar_conformance import commands
from pulsar_conformance.targets import CLIENT_CHOICES, DEFAULT_CLIENTS, parse_clients, say as _say


def _out(*items: Any, **kwargs: Any) -> None:
    """``print`` for the command's result on stdout, with every secret blanked (``fixtures.secrets``):
    with ``say`` (stderr), the one way this command line writes to the terminal."""
    from fixtures.secrets import redact

    print(*(redact(str(item)) for item in items), **kwargs)


# --------------------------------------------------------------------------- target options


def add_target_options(p: argparse.ArgumentParser, *, default: str | None = "embedded") -> None:
    g = p.add_argument_group("target")
    g.add_argument("--target", default=None, help=f"model, embedded, docker, or a broker URL pulsar://HOST:PORT (default: {default})")
    g.add_argument("--pulsar-url", default=None, help="an existing cluster's service URL (same as --target URL)")
    g.add_argument("--pulsar-admin-url", default=None, help="its admin URL (default: http://HOST:8080)")
    g.add_argument("--token-env", default=None, help="environment variable holding an auth token (default PULSAR_CONFORMANCE_TOKEN)")
    g.add_argument("--token-file", default=None, help="file holding an auth token")
    g.add_argument("--broker-version", default=None, help="broker release or line for embedded/docker, e.g. 3.0.7, 4.2, "
                   "4.0.8:assembled (default 4.0.8; 'pulsar-conformance broker versions' lists them)")
    g.add_argument("--config-override", action="append", default=[], metavar="KEY=VALUE", help="broker config key for embedded/docker; repeatable")


def add_profile_option(p: argparse.ArgumentParser) -> None:
    from reference_model.vendors import VENDORS

    p.add_argument("--profile", default="apache", choices=VENDORS,
                   help="vendor profile the rules are judged under (reference_model/vendors.py): apache (default) or "
                        "tdmq (TDMQ for Pulsar's tag filtering and 10-day delay limit; an embedded broker then loads "
                        "the reference tag filter and the limit). Recorded in every history header and the report")


TOLERANCE_HELP = ("judge timing with this lateness band (ms) instead of the measured one: run skips calibration; "
                  "check and replay replace the band the history recorded (docs/timing-bands.md)")


def milliseconds(text: str) -> float:
    """``--timing-tolerance-ms``: a finite number >= 0 (argparse turns the ValueError into a usage error)."""
    import math

    value = float(text)
    if not math.isfinite(value) or value < 0:
        raise ValueError(text)
    return value


def target_spec_from(args: argparse.Namespace, *, default: str = "embedded") -> TargetSpec:
    if args.pulsar_url and args.target and args.target != args.pulsar_url:
        raise TargetSpecError("give either --target or --pulsar-url, not both")
    return parse_target(args.pulsar_url or args.target or default, admin_url=args.pulsar_admin_url)


# --------------------------------------------------------------------------- run


def cmd_run(args: argparse.Namespace) -> int:
    from pulsar_conformance.run_job import RunOptions, run

    options = RunOptions(
        target=target_spec_from(args), clients=tuple(parse_clients(",".join(args.client or DEFAULT_CLIENTS))), out=Path(args.out),
        cases=Path(args.cases) if args.cases else None, only=tuple(args.only), fuzz_examples=args.fuzz_examples,
        fuzz_seed=args.fuzz_seed, no_report=args.no_report, token_env=args.token_env, token_file=args.token_file,
        broker_version=args.broker_version, config_override=tuple(args.config_override),
        java_client_version=args.java_client_version, timing_tolerance_ms=args.timing_tolerance_ms,
        on_broker_death=args.on_broker_death, resume=args.resume, profile=args.profile)
    code = run(options)
    if args.github if args.github is not None else os.environ.get("GITHUB_ACTIONS") == "true":
        code = _github(Path(args.out), code)
    return code


def _github(out: Path, code: int) -> int:
    """``run --github``: the ranked annotations on stdout and the verdict table appended to
    ``$GITHUB_STEP_SUMMARY`` (reports/github.py), read from what the run wrote into ``out``. The
    run's exit code stands; a surface that cannot be written is a harness error (exit 4)."""
    from reports import github

    try:
        found = github.publish(out, step_summary=os.environ.get("GITHUB_STEP_SUMMARY") or None)
    except (github.GithubSurfaceError, OSError) as err:
        _say(f"error: the GitHub annotations and job summary were not written: {err}")
        return code if code in (130, 143) else EXIT_HARNESS  # 4 wins over 1 and 3; an interruption stays one
    shown = min(len(found), github.MAX_ANNOTATIONS)
    _say(f"github: {shown} annotation(s) for {len(found)} problem(s)"
         + (f"; job summary appended to {os.environ['GITHUB_STEP_SUMMARY']}" if os.environ.get("GITHUB_STEP_SUMMARY") else
            "; no GITHUB_STEP_SUMMARY, so no job summary"))
    return code


# --------------------------------------------------------------------------- replay / check


def _print_judged(judged: commands.Judged, *, as_json: bool) -> None:
    report = judged.report
    if as_json:
        _out(json.dumps({"rules": report.rule_verdicts(), "verdicts": [v.to_json() if hasattr(v, "to_json") else vars(v) for v in report.verdicts]}, indent=2, default=str))
        return
    for v in report.verdicts:
        if v.status != "PASS":
            _out(f"{v.status:<13} {v.rule_id:<20} step {v.step}" + (f" [{v.anomaly}]" if v.anomaly else ""))
            _out(f"    {v.explanation}")
    for rule_id, status in sorted(report.rule_verdicts().items()):
        _out(f"{rule_id:<20} {status}")
    bands = report.tolerances
    _say(f"timing bands ({bands.source}): late {bands.dispatch_latency_ms:g} ms, early {bands.early_ms:g} ms; {bands.derivation}")
    unjudged = sorted(r for r, s in judged.rule_verdicts.items() if s == "UNJUDGED")
    if unjudged:
        _say(f"the trace names {', '.join(unjudged)}, which no detector judged: inconclusive")


def cmd_replay(args: argparse.Namespace) -> int:
    from conformance.trace import save

    trace = commands.with_vendor(commands.load_trace(args.trace), args.profile)
    args.profile = trace.header.profile.get("vendor", args.profile)  # a tdmq trace starts a tdmq broker
    judged = commands.replay(trace, target_spec_from(args, default="model"), args, client=args.client)
    if args.save:
        save(judged.history, args.save)
        _say(f"history written to {args.save}")
    _print_judged(judged, as_json=args.json)
    return exit_code(judged.rule_verdicts)


def cmd_check(args: argparse.Namespace) -> int:
    judged = commands.check_file(args.history, timing_tolerance_ms=args.timing_tolerance_ms)
    _print_judged(judged, as_json=args.json)
    return exit_code(judged.rule_verdicts)


# --------------------------------------------------------------------------- diff-clients


def cmd_diff_clients(args: argparse.Namespace) -> int:
    """One trace (a file, or a case id) once per client, compared step by step (conformance/client_diff.py)."""
    from conformance.client_diff import UNEXPLAINED
    from conformance.runner import write_json

    diff = commands.diff_clients(args.trace, target_spec_from(args), args)
    _out(diff.text())
    if args.out:
        write_json(Path(args.out), diff.to_json())
        _say(f"wrote {args.out}")
    return EXIT_FAIL if any(s.verdict == UNEXPLAINED for s in diff.steps) else EXIT_OK


# --------------------------------------------------------------------------- fuzz

FUZZ_USAGE = """Differential fuzzing: generated traces on the model and on a target, judged, shrunk, stored.

  pulsar-conformance fuzz --target model|embedded|docker|URL [--examples N] [--seed S]
                          [--out DIR] [--workers W] [--broker-per-worker] [--resume RUN_ID]
                          [--client python|java|mixed] [--faults] [--broker-configs all|NAME,...]
                          [--features core|all] [--focus FEATURE,...] [--broker-version RELEASE]
                          [--engine local|spark] [--spark-master URL]

Exit codes: 0 no failure; 1 a FAIL or FLAKY failure was found; 2 bad input or no broker;
4 a generated trace crashed the target or the checker (HARNESS-ERROR)."""


def add_fuzz_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``fuzz`` to ``pulsar-conformance``'s subcommands. ``conformance.fuzz`` (and Hypothesis with it,
    about 0.9 s) is imported only when fuzz runs, not to build the parser every command uses."""
    p = subparsers.add_parser("fuzz", help="generated traces on the model and a target; shrink and save failures",
                              description=FUZZ_USAGE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", default="model", help="model (default), embedded, docker, or pulsar://HOST:PORT")
    p.add_argument("--pulsar-admin-url", default=None, help="an external cluster's admin URL (default http://HOST:8080)")
    p.add_argument("--token-env", default=None, help="environment variable holding an auth token (external cluster)")
    p.add_argument("--token-file", default=None, help="file holding an auth token (external cluster)")
    p.add_argument("--broker-version", default=None, help="broker release or line for embedded/docker, e.g. 3.3.6, 4.2 "
                   "(default 4.0.8; 'pulsar-conformance broker versions' lists them); with an external cluster, the "
                   "release it must run. The model follows the release the broker reports")
    p.add_argument("--examples", type=int, default=1000, help="traces to generate (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="seed of the generator (default 0)")
    p.add_argument("--out", default="out/fuzz", help="output folder: corpus/ and summary.json (default out/fuzz)")
    p.add_argument("--workers", type=int, default=1, help="parallel worker processes (default 1)")
    p.add_argument("--broker-per-worker", action="store_true", help="each worker starts its own embedded/docker broker")
    p.add_argument("--resume", default=None, metavar="RUN_ID", help="continue run RUN_ID, skipping traces it recorded")
    p.add_argument("--generator", choices=("fast", "hypothesis"), default=None,
                   help="fast (seeded, default on the model) or hypothesis (default on a broker)")
    p.add_argument("--reruns", type=int, default=None, help="re-runs of a shrunk failure to tell FAIL from FLAKY (default 3 live, 1 model)")
    p.add_argument("--max-shrinks", type=int, default=60, help="target runs spent shrinking one live failure (default 60)")
    p.add_argument("--regressions", default=None, help="where failing traces are saved (default OUT/regressions; "
                   "the suite's own replayed store is conformance/regressions/ in the source tree)")
    p.add_argument("--faults", action="store_true", help="on a broker, draw the fault ops too (cut connections, latency, "
                   "stalls, broker restarts; docs/faults.md): an embedded broker behind the fault proxy; the model always draws them")
    p.add_argument("--client", default=None, choices=("python", "java", "go", "mixed"),
                   help="the client of every generated handle: python, java (the Java driver, docs/java-driver.md), go (the "
                   "Go driver, docs/go-driver.md), or mixed (drawn per handle); default mixed on the model, python on a broker")
    p.add_argument("--java-client-version", default=None,
                   help="org.apache.pulsar:pulsar-client release for the Java driver (default: the broker's); with --client "
                   "java or mixed on a broker")
    p.add_argument("--features", default=None, choices=("core", "all"),
                   help="on a broker: core (default: the pools the live campaigns have cleared) or all (every op and "
                   "option the model knows, as on the model; docs/fuzzing.md)")
    p.add_argument("--broker-configs", default=None, metavar="all|NAME,...",
                   help="broker configurations to draw (fixtures/broker_configs.py: suite, batch-index-acks-off, "
                   "key-shared-range-hashing, delayed-delivery-stock, dedup-on): one embedded broker per config in turn, "
                   "the traces split between them; the corpus records each trace's config")
    p.add_argument("--focus", default=None, metavar="FEATURE,...",
                   help="feature(s) every generated trace has on, on top of the swarm's draws (e.g. dead_letter or "
                   "transactions,java_handles; conformance/strategies.py ALL_FEATURES lists them): a campaign aimed at "
                   "one area (docs/fuzzing.md)")
    p.add_argument("--engine", choices=("local", "spark"), default="local",
                   help="where the model's generated traces are generated, run and judged: local (default: this "
                   "machine, --workers processes) or spark (one Spark task per chunk of 500 seeds, each executor "
                   "writing its corpus part; --target model only; docs/performance.md)")
    p.add_argument("--spark-master", default=None, metavar="URL",
                   help="with --engine spark: local[N] (default local[2]) or a cluster such as spark://HOST:7077, "
                   "whose workers run this same pulsar-conformance and see --out at the same path")
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=cmd_fuzz)
    return p


def cmd_fuzz(args: argparse.Namespace) -> int:
    from conformance.fuzz import HARNESS_ERROR, fuzz
    from fixtures.endpoint import read_token

    _check_engine_options(args)
    if args.engine == "spark" and args.target != "model":
        raise ValueError("--engine spark runs the model's generated traces on Spark executors: it needs --target model "
                         "(judge a broker's recorded histories on Spark with 'pulsar-conformance rejudge --engine spark')")
    if args.generator == "fast" and args.target != "model":
        # it was taken silently, and Hypothesis ran instead (2 Dec 2026): a flag a run does not honour is refused
        raise ValueError("--generator fast: the seeded generator runs on --target model only; a broker's traces come from "
                         "Hypothesis (drop --generator, or give --generator hypothesis)")
    token = read_token(env_var=args.token_env, token_file=args.token_file) if "://" in args.target else None
    run_id = args.resume or uuid.uuid4().hex[:12]  # chosen here, so an interrupted run can say how to resume it
    try:
        with _engine(args.engine, args.spark_master, Path(args.out), app="pulsar-conformance-fuzz") as engine:
            summary = _fuzz_run(args, fuzz, token, run_id, engine)
    except KeyboardInterrupt as err:
        if getattr(err, "resume_announced", False):
            return 130
        # stopped before the fuzz proper (a broker or Spark starting): nothing judged yet, same resume
        again = [a for i, a in enumerate(args.argv) if a != "--resume" and (i == 0 or args.argv[i - 1] != "--resume")
                 and not a.startswith("--resume=")]
        _say(f"interrupted: fuzz run {run_id}; the traces judged so far are in {Path(args.out) / 'corpus'}; "
             f"continue with: {shlex.join(['pulsar-conformance', *again, '--resume', run_id])}")
        return 130
    _out(summary.text())
    _out(f"\nrun id {summary.run_id}; corpus {summary.corpus_dir}; summary {Path(args.out) / 'summary.json'}")
    if any(f.signature[0] == HARNESS_ERROR for f in summary.failures):
        return EXIT_HARNESS
    return EXIT_OK if not summary.failures and summary.ok else EXIT_FAIL


def _fuzz_run(args: argparse.Namespace, fuzz: Any, token: str | None, run_id: str, engine: Any) -> Any:
    """``fuzz`` with the command's options (one call, so the interruption handling stays apart)."""
    return fuzz(args.target, admin_url=args.pulsar_admin_url, token=token, examples=args.examples, seed=args.seed,
                out_dir=Path(args.out), run_id=run_id, workers=args.workers, broker_per_worker=args.broker_per_worker,
                generator=args.generator,
                regressions_dir=Path(args.regressions) if args.regressions else Path(args.out) / "regressions",
                reruns=args.reruns, max_shrinks=args.max_shrinks, progress=not args.no_progress, faults=args.faults,
                client=args.client, broker_configs=args.broker_configs, features=args.features,
                broker_version=args.broker_version, focus=args.focus, java_client_version=args.java_client_version,
                map_chunks=engine.map_chunks if engine is not None else None)


def _check_engine_options(args: argparse.Namespace) -> None:
    """``--engine``, ``--spark-master`` and ``--workers`` of fuzz and rejudge: refuse what does not go together."""
    if args.spark_master and args.engine != "spark":
        raise ValueError("--spark-master needs --engine spark")
    if args.engine == "spark" and args.workers != 1:
        raise ValueError("--workers counts the local engine's processes; with --engine spark the tasks run in the "
                         "Spark master's task slots (local[N] or the cluster's cores): drop --workers")


@contextmanager
def _engine(name: str, master: str | None, out: Path, *, app: str) -> Iterator[Any]:
    """``None`` for the local engine; for ``spark`` a started ``SparkEngine`` (its JVM's log in
    ``OUT/spark.log``), stopped on leaving."""
    if name != "spark":
        yield None
        return
    from spark_reports.distributed import ChunkFailed, CodeMismatch, SparkEngine

    out.mkdir(parents=True, exist_ok=True)
    _say(f"starting Spark ({master or 'local[2]'}); its log: {out / 'spark.log'}")
    try:
        engine = SparkEngine(master, app=app, log_path=out / "spark.log").__enter__()
    except CodeMismatch as err:  # the cluster cannot judge as this driver would: a harness problem
        raise commands.HarnessError(str(err)) from None
    try:
        _say(f"Spark {engine.spark.version} on {engine.spark.sparkContext.master}: {engine.parallelism} task slots")
        yield engine
    except ChunkFailed as err:  # an executor's exception: the suite failed, not a verdict
        raise commands.HarnessError(f"{err} (its traceback: {out / 'spark.log'})") from None
    finally:
        engine.__exit__(None, None, None)


def cmd_rejudge(args: argparse.Namespace) -> int:
    """Judge every recorded history under --corpus again with this model (conformance/rejudge.py)."""
    from conformance.rejudge import exit_status, rejudge

    if args.workers < 1:
        raise ValueError(f"--workers must be at least 1, not {args.workers}")
    _check_engine_options(args)
    out = Path(args.out)
    with _engine(args.engine, args.spark_master, out, app="pulsar-conformance-rejudge") as engine:
        summary = rejudge(Path(args.corpus), out, workers=args.workers, engine=args.engine,
                          map_chunks=engine.map_chunks if engine is not None else None)
    _out(summary.text())
    _out(f"\nnew corpus {summary.corpus_dir}; report {out / 'rejudge.json'}")
    return exit_status(summary)


def fuzz_main(argv: list[str] | None = None) -> int:
    """``pulsar-conformance fuzz ARGS`` with ``argv`` = ARGS (the fuzz options alone)."""
    return main(["fuzz", *(sys.argv[1:] if argv is None else argv)])


# --------------------------------------------------------------------------- report / rules / broker


def cmd_report(args: argparse.Namespace) -> int:
    from spark_reports.jobs.report import main as report_main

    return report_main(list(args.report_args))


def cmd_rules(args: argparse.Namespace) -> int:
    from reference_model import rules as registry

    if args.rule_id:  # ``rules ID``: the one rule, as ``explain ID`` prints it
        return cmd_explain(args)
    if args.json:
        _out(registry.to_json())
        return EXIT_OK
    for area, items in registry.rules_by_area().items():
        _out(f"{area}")
        for r in items:
            _out(f"  {r.id:<20} [{r.status}] {r.title}")
    return EXIT_OK


def cmd_explain(args: argparse.Namespace) -> int:
    """One rule at the prompt (pulsar_conformance/explain.py); an unknown id is a ValueError: exit 2."""
    import shutil

    from pulsar_conformance import explain

    found = explain.explain(args.rule_id)
    _out(explain.to_json(found) if args.json else explain.text(found, width=min(shutil.get_terminal_size().columns, 120)))
    return EXIT_OK


def cmd_matrix(args: argparse.Namespace) -> int:
    from pulsar_conformance.matrix_job import MatrixOptions, run_matrix

    if args.parallel < 1:
        raise ValueError(f"--parallel must be at least 1, not {args.parallel}")
    parse_clients(args.client)
    return run_matrix(MatrixOptions(versions=tuple(args.versions.split(",")), clients=args.client, out=Path(args.out),
                                    only=tuple(args.only), fuzz_examples=args.fuzz_examples, parallel=args.parallel,
                                    timing_tolerance_ms=args.timing_tolerance_ms, config_override=tuple(args.config_override),
                                    rerun=None if args.rerun is None else tuple(v for v in args.rerun.split(",") if v.strip())))


def cmd_broker(args: argparse.Namespace) -> int:
    if args.action == "versions":
        rows = commands.broker_versions()
        if args.json:
            _out(json.dumps(rows, indent=2))
            return EXIT_OK
        _out(f"{'release':<10} {'ways':<18} {'line default':<13} {'cached':<18} pins")
        for r in rows:
            _out(f"{r['release']:<10} {r['ways']:<18} {r['default_for_line']:<13} {r['cached'] or '-':<18} {r['pins']}")
        _out("ways: tarball = the server distribution from Maven Central; assembled = pulsar-broker's dependency closure "
              "(pass RELEASE:assembled to force it). Other releases from 2.10 on are probed when asked for.")
        return EXIT_OK
    if args.action == "compare":
        if not args.version:
            raise ValueError("broker compare needs --version RELEASE (one with a tarball, e.g. 4.0.8)")
        diff = commands.broker_compare(args.version)
        if args.json:
            _out(json.dumps(diff, indent=2))
            return EXIT_OK
        _out(f"Pulsar {diff['release']}: {diff['same']} jars identical in name and version")
        for key in ("only_in_tarball", "only_assembled", "different_version"):
            _out(f"{key} ({len(diff[key])}):")
            for item in diff[key]:
                _out("  " + (" ".join(item) if isinstance(item, (list, tuple)) else item))
        return EXIT_OK
    if args.action == "start":
        try:
            state = commands.broker_start(args.name, version=args.version, config_override=args.config_override)
        except commands.BrokerRunning as err:
            _say(str(err))
            return EXIT_USAGE
        _print_status(state, as_json=args.json)
        return EXIT_OK
    if args.action == "status":
        state = commands.broker_status(args.name)
        if state is None:
            _say(f"no broker named {args.name!r} is recorded; start one with 'pulsar-conformance broker start'")
            return EXIT_USAGE
        _print_status(state, as_json=args.json)
        return EXIT_OK if state["alive"] else EXIT_USAGE
    state = commands.broker_stop(args.name)
    if state is None:
        _say(f"no broker named {args.name!r} is recorded; nothing to stop")
        return EXIT_OK
    _say(f"stopped broker pid {state.get('pid')} (Pulsar {state.get('version')})")
    return EXIT_OK


def _print_status(state: dict | None, *, as_json: bool) -> None:
    if state is None:
        return
    if as_json:
        _out(json.dumps(state, indent=2))
        return
    for key in ("version", "service_url", "admin_url", "pid", "log_path", "alive", "ready"):
        if key in state:
            _out(f"{key:<12} {state[key]}")


# --------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pulsar-conformance", description="Apache Pulsar conformance: reference model, checker, live broker",
                                     epilog=EXIT_CODES_TEXT, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    codes = {"epilog": EXIT_CODES_TEXT, "formatter_class": argparse.RawDescriptionHelpFormatter}

    p = sub.add_parser("run", help="run every case on the model and on the target; write JUnit XML and summary.json", **codes)
    add_target_options(p)
    add_profile_option(p)
    p.add_argument("--out", default="out/run", help="output folder (default out/run)")
    p.add_argument("--cases", default=None, help="folder of case files (default: the built-in cases)")
    p.add_argument("--workloads", action="store_true", help="run the production-shaped workload family (docs/workloads.md: "
                   "the OpenMessaging Benchmark Pulsar driver's defaults, 100,000 messages and more) instead of the cases")
    p.add_argument("--only", action="append", default=[], help="run only this case id, the cases naming this rule id, or those matching a glob "
                   "('fault-*', 'PLS-FAULT-*'; quote it); repeatable. A pattern that matches nothing is refused")
    p.add_argument("--client", action="append", default=None, help="clients driving the broker, comma-separated or repeated, among "
                   "python, java (the Java driver, built with Maven on first use), go (the Go driver, built with Go on first use; "
                   f"only the cases that list go) and mixed (cross-client cases); default {','.join(DEFAULT_CLIENTS)}, "
                   "as for matrix")
    p.add_argument("--java-client-version", default=None, help="org.apache.pulsar:pulsar-client release for the Java driver (default: the broker's)")
    p.add_argument("--fuzz-examples", type=int, default=10, help="generated traces per live target (x20 on the model); 0 skips fuzzing (default 10)")
    p.add_argument("--fuzz-seed", type=int, default=0)
    p.add_argument("--no-report", action="store_true", help="skip the Spark report at the end")
    p.add_argument("--timing-tolerance-ms", type=milliseconds, default=None, metavar="MS",
                   help=TOLERANCE_HELP)
    p.add_argument("--on-broker-death", choices=("stop", "restart"), default="stop",
                   help="when the embedded broker dies mid-run: stop the run cleanly (default), or start a new "
                        "broker and run the remaining cases")
    p.add_argument("--resume", action="store_true", help="continue the run in --out: keep the cases it already "
                   "judged, run the others")
    p.add_argument("--github", action=argparse.BooleanOptionalAction, default=None,
                   help="when the run ends, print at most 10 GitHub annotations (FAILs, then ERRORs, then inconclusive "
                   "rules) and append the verdict table to $GITHUB_STEP_SUMMARY (reports/github.py); default: on when "
                   "GITHUB_ACTIONS=true")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("replay", help="run a trace on a target and print the verdicts", **codes)
    p.add_argument("trace", help="a trace or history file (JSON lines)")
    add_target_options(p, default="model")
    add_profile_option(p)
    p.add_argument("--client", default="python", choices=CLIENT_CHOICES, help="client driving the broker (default python; a trace "
                   "whose handles name their client runs mixed)")
    p.add_argument("--java-client-version", default=None, help="org.apache.pulsar:pulsar-client release for the Java driver (default: the broker's)")
    p.add_argument("--save", default=None, help="write the resulting history here")
    p.add_argument("--json", action="store_true")
    p.add_argument("--calibrate", action="store_true", help="on a live target, measure the timing bands first (~10 s per client) "
                   "instead of the documented default (conformance/timing.py)")
    p.add_argument("--timing-tolerance-ms", type=milliseconds, default=None, metavar="MS",
                   help=TOLERANCE_HELP)
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("diff-clients", help="run one trace with the Python and the Java client (and Go, with --clients); where they agree and differ, and which rule explains it")
    p.add_argument("trace", help="a trace or history file, or a case id")
    add_target_options(p)
    p.add_argument("--clients", default="python,java", help="the clients compared, two or more comma-separated among python, "
                   "java and go (the Go driver, built with Go on first use); default python,java")
    p.add_argument("--java-client-version", default=None, help="org.apache.pulsar:pulsar-client release for the Java driver (default: the broker's)")
    p.add_argument("--out", default=None, help="also write the comparison as JSON here")
    p.set_defaults(func=cmd_diff_clients)

    p = sub.add_parser("check", help="judge a history file against the model", **codes)
    p.add_argument("history")
    p.add_argument("--json", action="store_true")
    p.add_argument("--timing-tolerance-ms", type=milliseconds, default=None, metavar="MS",
                   help=TOLERANCE_HELP)
    p.set_defaults(func=cmd_check)

    add_fuzz_parser(sub)

    p = sub.add_parser("rejudge", help="judge every recorded history under a folder again with this model and checker; "
                       "list the verdicts that changed", **codes)
    p.add_argument("--corpus", required=True, metavar="DIR",
                   help="a folder of recorded histories (*.history.jsonl, at any depth: a run's OUT, a fuzz campaign's "
                   "OUT, evidence/); the corpus parts under it give the verdicts to compare with")
    p.add_argument("--out", default="out/rejudge", help="output folder: corpus/ (the new verdicts) and rejudge.json "
                   "(default out/rejudge)")
    p.add_argument("--engine", choices=("local", "spark"), default="local",
                   help="local (default: --workers processes) or spark (one Spark task per 200 histories)")
    p.add_argument("--spark-master", default=None, metavar="URL", help="with --engine spark: local[N] (default local[2]) "
                   "or a cluster URL whose workers run this same pulsar-conformance and see both folders")
    p.add_argument("--workers", type=int, default=1, help="worker processes of the local engine (default 1)")
    p.set_defaults(func=cmd_rejudge)

    p = sub.add_parser("report", help="JUnit XML, HTML report and summary.json from an outcome corpus (Spark)", add_help=False)
    p.add_argument("report_args", nargs=argparse.REMAINDER, help="--outcomes DIR [--out DIR] [--spark-master URL]")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("rules", help="list the rule registry; 'rules ID' prints one rule as 'explain ID' does")
    p.add_argument("rule_id", nargs="?", default=None, metavar="ID", help="a rule id: print that rule as 'explain ID' does")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_rules)

    p = sub.add_parser("explain", help="one rule: its text, source, releases and clients, detector, and the cases that name it")
    p.add_argument("rule_id", metavar="ID", help="a rule id, e.g. PLS-NACK-001 ('pulsar-conformance rules' lists them)")
    p.add_argument("--json", action="store_true", help="the same facts as one JSON object")
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("matrix", help="the case suite on several broker releases into one report (rule x release x client)",
                       epilog="exit codes: 0 every non-PASS cell has a verdict; 1 a FAIL cell without a known deviation; "
                              "2 bad input; 3 an INDETERMINATE cell; 4 a release's run or the report met a harness error")
    p.add_argument("--versions", default=None, required=True, help="comma-separated releases or lines, e.g. "
                   "2.10.5,3.0.7,3.2.3,3.3.6,4.0.0,4.0.8,4.2.4 (RELEASE:assembled forces the assembled broker)")
    p.add_argument("--client", default=",".join(DEFAULT_CLIENTS), help="clients, comma-separated among python, java, go, "
                   f"mixed (default {','.join(DEFAULT_CLIENTS)}, as for run)")
    p.add_argument("--out", default="out/matrix", help="output folder (default out/matrix)")
    p.add_argument("--only", action="append", default=[], help="run only this case id, the cases naming this rule id, or those matching a glob "
                   "('fault-*', 'PLS-FAULT-*'; quote it); repeatable. A pattern that matches nothing is refused")
    p.add_argument("--fuzz-examples", type=int, default=0, help="generated traces per release (default 0)")
    p.add_argument("--parallel", type=int, default=1, help="releases run at once, each with its own broker (default 1)")
    p.add_argument("--rerun", default=None, metavar="VERSIONS", help="continue the matrix in --out: run these releases again "
                   "(comma-separated; '' for none) and any whose previous run did not finish, reuse the others' results")
    p.add_argument("--config-override", action="append", default=[], metavar="KEY=VALUE", help="broker config for every release; repeatable")
    p.add_argument("--timing-tolerance-ms", type=milliseconds, default=None, metavar="MS", help=TOLERANCE_HELP)
    p.set_defaults(func=cmd_matrix)

    p = sub.add_parser("broker", help="manage an embedded broker that outlives this command; list and compare releases")
    p.add_argument("action", choices=["start", "status", "stop", "versions", "compare"])
    p.add_argument("--version", default=None, help="Pulsar release or line, e.g. 3.0.7, 4.2, 4.0.8:assembled (default 4.0.8)")
    p.add_argument("--config-override", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--name", default="default", help="a name, to run several brokers side by side")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_broker)

    # cache list / prune (pulsar_conformance/cache_command.py: its options and its run(args))
    from pulsar_conformance import cache_command

    cache_command.add_parser(sub)
    return parser


# The target each command uses when none is given (for the checks before it starts).
DEFAULT_TARGET = {"replay": "model", "fuzz": "model"}


def preflight(args: argparse.Namespace) -> list[str]:
    """Check the files and options a command was given before anything starts: the config
    overrides, the case folder, and an external target's token (``--token-file`` / ``--token-env``).
    A bad one raises ``commands.BadInputError`` (exit 2, docs/bad-input.md). Returns the secrets
    read (the token), which no message may show."""
    commands.check_config_overrides(getattr(args, "config_override", None) or ())
    if getattr(args, "workloads", False):
        if args.cases:
            raise commands.BadInputError("--cases with --workloads", "two case folders asked for",
                                         "give either --cases or --workloads, not both")
        from conformance.case_files import WORKLOADS_DIR

        args.cases = str(WORKLOADS_DIR)  # the workload family is a case folder (docs/workloads.md)
    commands.check_cases_folder(getattr(args, "cases", None))
    if args.command in ("run", "fuzz", "matrix", "rejudge"):
        commands.check_out_folder(getattr(args, "out", None))
        commands.check_out_writable(getattr(args, "out", None))
    if args.command == "fuzz" and not args.resume:
        from conformance.fuzz.driver import check_fresh_corpus

        check_fresh_corpus(Path(args.out))
    if args.command in ("run", "matrix"):
        clients = args.client if isinstance(args.client, str) else ",".join(args.client or DEFAULT_CLIENTS)
        commands.check_selection(getattr(args, "cases", None), args.only, parse_clients(clients))
    if not hasattr(args, "token_file"):
        return []
    target = getattr(args, "pulsar_url", None) or args.target or DEFAULT_TARGET.get(args.command, "embedded")
    try:
        spec = parse_target(target, admin_url=args.pulsar_admin_url)
    except TargetSpecError:
        return []  # the command refuses the target itself, with its own message
    if args.command in ("run", "replay", "diff-clients", "fuzz"):
        commands.check_target_options(spec, broker_version=getattr(args, "broker_version", None), token_env=args.token_env,
                                      token_file=args.token_file, config_override=getattr(args, "config_override", None))
    token = commands.check_token(spec, token_env=args.token_env, token_file=args.token_file)
    return [token] if token else []


def one_line(err: BaseException, secrets: list[str] = ()) -> str:
    """An error as one line, with any secret (the auth token) blanked out."""
    text = " ".join(str(err).split())
    for secret in secrets:
        text = text.replace(secret, "<token>")
    return text


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["report"]:  # the report job owns its options (argparse cannot forward them)
        from spark_reports.jobs.report import main as report_main

        return report_main(argv[1:])
    args = build_parser().parse_args(argv)
    args.argv = argv  # the command as given: an interrupted fuzz prints it back with --resume RUN_ID
    secrets: list[str] = []
    try:
        secrets = preflight(args)
        return args.func(args)
    except (TargetSpecError, BrokerError) as err:
        _say(f"error: {one_line(err, secrets) if isinstance(err, TargetSpecError) else str(err)}")
        return EXIT_USAGE
    except (JavaDriverError, commands.HarnessError) as err:  # a harness problem, never a conformance verdict
        _say(f"error: {err}")
        return EXIT_HARNESS
    except ValueError as err:  # TraceFormatError, BadInputError and friends: bad input, named, one line
        _say(f"error: {one_line(err, secrets)}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _say("interrupted")
        return 130
    except BrokenPipeError:  # the reader of stdout stopped (``| head``): nothing failed
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as err:  # noqa: BLE001 - anything else is the suite failing: say where, exit 4
        _say("".join(traceback.format_exception(err)).rstrip())
        _say(f"error: the suite itself failed ({type(err).__name__}: {err}); this is a harness error (exit 4)")
        return EXIT_HARNESS


if __name__ == "__main__":
    sys.exit(main())
