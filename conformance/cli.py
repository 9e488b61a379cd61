"""``pulsar-conformance``: the command line.

  run       the main job: every case on the model and on the target; JUnit XML + summary.json
  replay    run one trace (or the trace of a history) on a target and print the verdicts
  check     judge an existing history file against the model, without running anything
  diff-clients  one trace with the Python and the Java client: where they agree, differ, and why
  fuzz      generated traces on the model and a target; failures shrunk and saved
  report    JUnit XML (xunit2), HTML and summary.json from an outcome corpus (Spark)
  rules     list the rule registry
  broker    start / status / stop an embedded broker that outlives the command

Exit codes: 0 all good, 1 a conformance FAIL or a harness ERROR, 2 bad input or no broker.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any, Iterator

from fixtures.endpoint import TargetSpec, parse_target, read_token
from conformance.targets.java_driver import JavaDriverError
from fixtures.errors import BrokerError, TargetSpecError

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- target options


def add_target_options(p: argparse.ArgumentParser, *, default: str | None = "embedded") -> None:
    g = p.add_argument_group("target")
    g.add_argument("--target", default=None, help=f"model, embedded, docker, or a broker URL pulsar://HOST:PORT (default: {default})")
    g.add_argument("--pulsar-url", default=None, help="an existing cluster's service URL (same as --target URL)")
    g.add_argument("--pulsar-admin-url", default=None, help="its admin URL (default: http://HOST:8080)")
    g.add_argument("--token-env", default=None, help="environment variable holding an auth token (default PULSAR_CONFORMANCE_TOKEN)")
    g.add_argument("--token-file", default=None, help="file holding an auth token")
    g.add_argument("--broker-version", default=None, help="broker version or line for embedded/docker (default 4.0.8)")
    g.add_argument("--config-override", action="append", default=[], metavar="KEY=VALUE", help="broker config key for embedded/docker; repeatable")


def target_spec_from(args: argparse.Namespace, *, default: str = "embedded") -> TargetSpec:
    if args.pulsar_url and args.target and args.target != args.pulsar_url:
        raise TargetSpecError("give either --target or --pulsar-url, not both")
    return parse_target(args.pulsar_url or args.target or default, admin_url=args.pulsar_admin_url)


CLIENT_CHOICES = ("python", "java", "mixed")


def parse_clients(text: str) -> list[str]:
    """``python,java,mixed`` -> the clients to run, in order; an unknown name is refused."""
    names = [c.strip() for c in (text or "").split(",") if c.strip()]
    bad = [c for c in names if c not in CLIENT_CHOICES]
    if not names or bad:
        raise TargetSpecError(f"--client {text!r}: use one or more of {', '.join(CLIENT_CHOICES)}, comma-separated")
    return list(dict.fromkeys(names))


@contextlib.contextmanager
def open_target(spec: TargetSpec, args: argparse.Namespace, *, client: str = "python") -> Iterator[Any]:
    """A runnable target for ``spec``: the model (with ``client``'s profile), or a live broker
    obtained for the duration, driven by ``client`` (the Java driver is stopped at the end)."""
    if spec.kind == "model":
        from conformance.targets.model import ModelTarget
        yield ModelTarget(client=None if client == "python" else client)
        return
    with open_endpoint(spec, args) as endpoint:
        with live_target(endpoint, args, client=client) as target:
            yield target


@contextlib.contextmanager
def open_endpoint(spec: TargetSpec, args: argparse.Namespace) -> Iterator[Any]:
    """The live broker for ``spec`` (started, or reached by URL) for the duration."""
    from fixtures.embedded import parse_overrides
    from fixtures.provider import broker_for

    token = read_token(env_var=args.token_env, token_file=args.token_file) if spec.kind == "external" else None
    overrides = parse_overrides(args.config_override)
    with broker_for(spec, version=args.broker_version, overrides=overrides, token=token, progress=_say) as endpoint:
        yield endpoint


@contextlib.contextmanager
def live_target(endpoint: Any, args: argparse.Namespace, *, client: str) -> Iterator[Any]:
    """A target on ``endpoint`` driven by ``client``; its Java driver (if started) stops at the end."""
    from conformance.targets.pulsar import BrokerTarget

    target = BrokerTarget(endpoint, client=client, java_client_version=getattr(args, "java_client_version", None), progress=_say)
    try:
        yield target
    finally:
        target.close()


def describe_target(target: Any, *, client: str) -> dict[str, Any]:
    """Target facts for reports; the model reports the broker line and client its profile models."""
    if hasattr(target, "describe"):
        info = dict(target.describe())
    else:
        from reference_model.profiles import profile_for

        profile = getattr(target, "profile", None) or profile_for(None, None, None)
        info = {"target": "model", "broker_version": profile.broker, "client": profile.client, "client_version": "reference-model"}
    info.setdefault("client", client)
    return info


def _applies_for(info: dict[str, Any]):
    from reference_model.rules import applies, rule

    broker = info.get("broker_version") or "4.0"
    client = info.get("client") or "python"
    is_model = info.get("target") == "model"

    def check(rule_id: str) -> bool:
        found = rule(rule_id)
        if is_model or client == "mixed":  # the model implements every client's rules; mixed runs both clients
            return any(applies(found, broker_version=broker, client=c) for c in found.applies_to.clients) or applies(found, broker_version=broker, client=client)
        return applies(found, broker_version=broker, client=client)

    return check


# --------------------------------------------------------------------------- run


def cmd_run(args: argparse.Namespace) -> int:
    """The main job: cases on the model and the target, per client, a fuzz budget, the report.

    For each client in ``--client`` (python, java, mixed) every case that runs with it goes to
    the model and to the live target driven by that client. Writes into ``--out``: ``junit.xml``
    and ``summary.json`` (one verdict per rule for the first client, and ``by_client`` with every
    client's), ``summary-<client>.json``, the client x feature matrix (``client-matrix.*``), the
    histories of every case, ``corpus/`` (the outcome corpus of everything judged, Parquet),
    ``fuzz/`` (the fuzz budget's summary) and ``report/`` (HTML, xunit2 JUnit, summary).
    """
    import os
    import uuid

    from conformance.case_files import CASES_DIR, discover_cases
    from conformance.corpus import CorpusWriter
    from conformance.deviations import known_deviation
    from conformance.runner import ERROR, FAIL, run_case, summary, write_json
    from conformance.targets.model import ModelTarget
    from reports.junit import write_junit

    spec = target_spec_from(args)
    clients = parse_clients(args.client)
    all_cases = discover_cases(Path(args.cases) if args.cases else CASES_DIR)
    if args.only:
        all_cases = [c for c in all_cases if any(sel in c.id or sel in c.rules for sel in args.only)]
    if not all_cases:
        _say("no cases selected: nothing to run")
        return EXIT_USAGE
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    corpus_dir = out / "corpus"
    writer = CorpusWriter(corpus_dir, run_id=uuid.uuid4().hex[:12])
    runs = []
    worst_exit = EXIT_OK

    cases_for = {client: [c for c in all_cases if c.runs_on(client)] for client in clients}  # mixed: cross-client cases

    def run_on(target: Any, label: str, client: str, cases: list[Any]) -> None:
        nonlocal worst_exit
        info = describe_target(target, client=client)
        info["client"] = client
        results = []
        deviations = {}
        _say(f"== {len(cases)} cases on {label} ({info.get('broker_version') or 'reference model'}, client {client})")
        for i, case in enumerate(cases, start=1):
            result = run_case(case, target, client=client, history_dir=out / "histories" / label)
            results.append(result)
            if result.history is not None:
                writer.add(result.history, result.corpus_verdicts())
            deviation = known_deviation(case.id, info["broker_version"]) if not label.startswith("model") else None
            mark = f"  (known deviation {deviation.id})" if deviation and result.status == FAIL else ""
            _say(f"  [{i:>3}/{len(cases)}] {result.status:<14} {case.id}  ({result.duration_s:.1f} s){mark}")
            if deviation and result.status == FAIL:
                deviations[case.id] = {"id": deviation.id, "rule": deviation.rule, "reason": deviation.reason, "evidence": deviation.evidence}
            elif result.status in (FAIL, ERROR):
                worst_exit = EXIT_FAIL
            if result.status in (FAIL, ERROR):
                for line in result.failure_text().splitlines():
                    _say(f"        {line}")
        doc = summary(results, target_info=info, applies=_applies_for(info))
        doc["known_deviations"] = deviations
        runs.append((results, info, doc, label, client))
        if args.fuzz_examples > 0 and client == "python":
            fuzz_on(target, label)

    def fuzz_on(target: Any, label: str) -> None:
        nonlocal worst_exit
        from conformance.fuzz import fuzz_budget

        examples = args.fuzz_examples * (20 if label.startswith("model") else 1)
        _say(f"== fuzz budget on {label}: {examples} generated traces (seed {args.fuzz_seed})")
        fuzz_out = out / "fuzz" / label.split("/")[0]
        result = fuzz_budget(target, examples=examples, seed=args.fuzz_seed, out_dir=fuzz_out)
        _say("   " + result.text().replace("\n", "\n   "))
        if result.failures:
            worst_exit = EXIT_FAIL
        # one corpus for the run: the fuzz parts join the case parts (file names are unique per run id)
        for part in Path(result.corpus_dir).glob("part-*.parquet"):
            target_path = corpus_dir / part.name
            if not target_path.exists():
                os.link(part, target_path)

    try:
        for client in clients:
            if cases_for[client]:
                run_on(ModelTarget(client=None if client == "python" else client), "model" if client == "python" else f"model-{client}",
                       client, cases_for[client])
        if spec.kind != "model":
            with open_endpoint(spec, args) as endpoint:  # one broker for every client
                for client in clients:
                    if not cases_for[client]:
                        _say(f"== no selected case runs with client {client}; skipped")
                        continue
                    with live_target(endpoint, args, client=client) as target:
                        run_on(target, spec.kind if client == "python" else f"{spec.kind}-{client}", client, cases_for[client])
    finally:
        writer.close()
    live = [r for r in runs if not r[3].startswith("model")] or runs
    by_client = {}
    for _, info, doc, label, client in live:
        write_json(out / f"summary-{client}.json", doc)
        by_client[client] = {k: doc[k] for k in ("client_version", "rules", "counts", "cases", "known_deviations")}
    primary = dict(live[0][2])
    primary["by_client"] = by_client
    primary["reference"] = {client: {k: doc[k] for k in ("target", "broker_version", "client", "rules", "counts")}
                            for _, _, doc, label, client in runs if label.startswith("model")}
    write_json(out / "summary.json", primary)
    write_junit(out / "junit.xml", [(r, i) for r, i, _, _, _ in runs])
    try:
        from reports import client_matrix

        written = client_matrix.write(client_matrix.build([doc for _, _, doc, _, _ in live],
                                                          sources=[str(out / f"summary-{c}.json") for *_, c in live]), out)
        _say("wrote the client x feature matrix: " + ", ".join(str(p) for p in written))
    except Exception as err:  # noqa: BLE001 - the verdicts above stand even if the matrix cannot be drawn
        _say(f"the client x feature matrix failed: {type(err).__name__}: {err}")
        worst_exit = max(worst_exit, EXIT_FAIL)
    for _, _, doc, label, _ in runs:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(doc["counts"].items()))
        _say(f"{label}: rules {counts}")
    _say(f"wrote {out / 'junit.xml'} and {out / 'summary.json'}; outcome corpus in {corpus_dir}")
    if not args.no_report:
        from spark_reports.jobs.report import main as report_main

        _say("== report (Spark, local mode)")
        summaries = [a for *_, c in live for a in ("--summary", str(out / f"summary-{c}.json"))]
        code = report_main(["--outcomes", str(corpus_dir), "--out", str(out / "report"), "--quiet", *summaries])
        if code != 0:
            _say(f"the report failed (exit {code}); the JUnit XML and summary.json above are complete")
            worst_exit = max(worst_exit, EXIT_FAIL)
        else:
            _say(f"wrote the report: {out / 'report' / 'index.html'}")
    return worst_exit


# --------------------------------------------------------------------------- replay / check


def _print_report(report: Any, *, as_json: bool) -> bool:
    failed = any(v.status == "FAIL" for v in report.verdicts)
    if as_json:
        print(json.dumps({"rules": report.rule_verdicts(), "verdicts": [v.to_json() if hasattr(v, "to_json") else vars(v) for v in report.verdicts]}, indent=2, default=str))
        return failed
    for v in report.verdicts:
        if v.status != "PASS":
            print(f"{v.status:<13} {v.rule_id:<20} step {v.step}" + (f" [{v.anomaly}]" if v.anomaly else ""))
            print(f"    {v.explanation}")
    for rule_id, status in sorted(report.rule_verdicts().items()):
        print(f"{rule_id:<20} {status}")
    return failed


def cmd_replay(args: argparse.Namespace) -> int:
    from conformance.checker import check
    from conformance.trace import History, load, save

    item = load(args.trace)
    trace = item.trace() if isinstance(item, History) else item
    spec = target_spec_from(args, default="model")
    client = args.client
    if client == "python" and any(op.args.get("client") for op in trace.ops):
        client = "mixed"  # the trace names its handles' clients
    with open_target(spec, args, client=client) as target:
        history = target.run(trace)
    if args.save:
        save(history, args.save)
        _say(f"history written to {args.save}")
    failed = _print_report(check(history), as_json=args.json)
    return EXIT_FAIL if failed else EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    from conformance.checker import check
    from conformance.trace import History, TraceFormatError, load

    item = load(args.history)
    if not isinstance(item, History):
        raise TraceFormatError("this file is a trace without outcomes; run it with 'replay' first", source=args.history)
    return EXIT_FAIL if _print_report(check(item), as_json=args.json) else EXIT_OK


# --------------------------------------------------------------------------- diff-clients


def cmd_diff_clients(args: argparse.Namespace) -> int:
    """One trace (a file, or a case id) once per client, compared step by step (conformance/client_diff.py)."""
    from conformance.case_files import discover_cases
    from conformance.client_diff import UNEXPLAINED, diff_clients
    from conformance.runner import write_json
    from conformance.targets.model import ModelTarget
    from conformance.trace import History, load

    if Path(args.trace).exists():
        item = load(args.trace)
        trace = item.trace() if isinstance(item, History) else item
    else:
        found = [c for c in discover_cases() if c.id == args.trace]
        if not found:
            raise ValueError(f"{args.trace!r} is neither a trace file nor a case id (see conformance/cases/)")
        trace = found[0].trace
    spec = target_spec_from(args)
    if spec.kind == "model":
        raise ValueError("diff-clients compares what two client libraries do on a broker; give --target embedded or a URL")
    with open_endpoint(spec, args) as endpoint, live_target(endpoint, args, client="python") as python_target, \
            live_target(endpoint, args, client="java") as java_target:
        targets = {"python": python_target, "java": java_target}
        diff = diff_clients(trace, run_on=lambda c: targets[c].run(trace),
                            model_on=lambda c: ModelTarget(client=None if c == "python" else c).run(trace))
    print(diff.text())
    if args.out:
        write_json(Path(args.out), diff.to_json())
        _say(f"wrote {args.out}")
    return EXIT_FAIL if any(s.verdict == UNEXPLAINED for s in diff.steps) else EXIT_OK


# --------------------------------------------------------------------------- report


def cmd_report(args: argparse.Namespace) -> int:
    from spark_reports.jobs.report import main as report_main

    return report_main(list(args.report_args))


# --------------------------------------------------------------------------- rules


def cmd_rules(args: argparse.Namespace) -> int:
    from reference_model import rules as registry

    if args.json:
        print(registry.to_json())
        return EXIT_OK
    for area, items in registry.rules_by_area().items():
        print(f"{area}")
        for r in items:
            print(f"  {r.id:<20} [{r.status}] {r.title}")
    return EXIT_OK


# --------------------------------------------------------------------------- broker


def cmd_broker(args: argparse.Namespace) -> int:
    from fixtures import embedded

    if args.action == "start":
        state = embedded.load_state(args.name)
        if state and embedded.process_alive(state.get("pid")):
            _say(f"a broker named {args.name!r} already runs (pid {state['pid']}); stop it first")
            return EXIT_USAGE
        broker = embedded.EmbeddedBroker(
            version=args.version, overrides=embedded.parse_overrides(args.config_override), detached=True, progress=_say
        )
        broker.start()
        embedded.save_state(broker, args.name)
        _print_status(embedded.load_state(args.name), as_json=args.json)
        return EXIT_OK
    if args.action == "status":
        state = embedded.load_state(args.name)
        if state is None:
            _say(f"no broker named {args.name!r} is recorded; start one with 'pulsar-conformance broker start'")
            return EXIT_FAIL
        state["alive"] = embedded.process_alive(state.get("pid"))
        if state["alive"]:
            from fixtures.admin import AdminClient

            admin = AdminClient(state["admin_url"], timeout_s=3)
            state["ready"] = admin.is_ready()
            admin.close()
        _print_status(state, as_json=args.json)
        return EXIT_OK if state["alive"] else EXIT_FAIL
    state = embedded.stop_recorded(args.name)
    if state is None:
        _say(f"no broker named {args.name!r} is recorded; nothing to stop")
        return EXIT_OK
    _say(f"stopped broker pid {state.get('pid')} (Pulsar {state.get('version')})")
    return EXIT_OK


def _print_status(state: dict | None, *, as_json: bool) -> None:
    if state is None:
        return
    if as_json:
        print(json.dumps(state, indent=2))
        return
    for key in ("version", "service_url", "admin_url", "pid", "log_path", "alive", "ready"):
        if key in state:
            print(f"{key:<12} {state[key]}")


# --------------------------------------------------------------------------- main


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pulsar-conformance", description="Apache Pulsar conformance: reference model, checker, live broker")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("run", help="run every case on the model and on the target; write JUnit XML and summary.json")
    add_target_options(p)
    p.add_argument("--out", default="out/run", help="output folder (default out/run)")
    p.add_argument("--cases", default=None, help="folder of case files (default: the built-in cases)")
    p.add_argument("--only", action="append", default=[], help="run only cases whose id contains this text or that exercise this rule id; repeatable")
    p.add_argument("--client", default="python,java,mixed", help="clients driving the broker, comma-separated among python, java "
                   "(the Java driver, built with Maven on first use) and mixed (cross-client cases); default python,java,mixed")
    p.add_argument("--java-client-version", default=None, help="org.apache.pulsar:pulsar-client release for the Java driver (default: the broker's)")
    p.add_argument("--fuzz-examples", type=int, default=10, help="generated traces per live target (x20 on the model); 0 skips fuzzing (default 10)")
    p.add_argument("--fuzz-seed", type=int, default=0)
    p.add_argument("--no-report", action="store_true", help="skip the Spark report at the end")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("replay", help="run a trace on a target and print the verdicts")
    p.add_argument("trace", help="a trace or history file (JSON lines)")
    add_target_options(p, default="model")
    p.add_argument("--client", default="python", choices=CLIENT_CHOICES, help="client driving the broker (default python; a trace "
                   "whose handles name their client runs mixed)")
    p.add_argument("--java-client-version", default=None, help="org.apache.pulsar:pulsar-client release for the Java driver (default: the broker's)")
    p.add_argument("--save", default=None, help="write the resulting history here")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_replay)

    p = sub.add_parser("diff-clients", help="run one trace with the Python and the Java client; where they agree and differ, and which rule explains it")
    p.add_argument("trace", help="a trace or history file, or a case id")
    add_target_options(p)
    p.add_argument("--java-client-version", default=None, help="org.apache.pulsar:pulsar-client release for the Java driver (default: the broker's)")
    p.add_argument("--out", default=None, help="also write the comparison as JSON here")
    p.set_defaults(func=cmd_diff_clients)

    p = sub.add_parser("check", help="judge a history file against the model")
    p.add_argument("history")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_check)

    from conformance.fuzz import add_fuzz_parser

    add_fuzz_parser(sub)

    p = sub.add_parser("report", help="JUnit XML, HTML report and summary.json from an outcome corpus (Spark)", add_help=False)
    p.add_argument("report_args", nargs=argparse.REMAINDER, help="--outcomes DIR [--out DIR] [--spark-master URL]")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("rules", help="list the rule registry")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_rules)

    p = sub.add_parser("broker", help="manage an embedded broker that outlives this command")
    p.add_argument("action", choices=["start", "status", "stop"])
    p.add_argument("--version", default=None, help="Pulsar version or line (default 4.0.8)")
    p.add_argument("--config-override", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--name", default="default", help="a name, to run several brokers side by side")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_broker)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["report"]:  # the report job owns its options (argparse cannot forward them)
        from spark_reports.jobs.report import main as report_main

        return report_main(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except (TargetSpecError, BrokerError) as err:
        _say(f"error: {err}")
        return EXIT_USAGE
    except JavaDriverError as err:  # a harness problem, never a conformance verdict
        _say(f"error: {err}")
        return EXIT_FAIL
    except ValueError as err:  # TraceFormatError and friends: bad input, named
        _say(f"error: {err}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _say("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
