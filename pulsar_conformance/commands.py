"""The work behind the smaller commands: replay, check, diff-clients, broker. No printing here;
``pulsar_conformance.cli`` prints what these return.

Rule ids: none of its own; a replayed or checked history is judged by ``conformance.checker``,
and the rules its trace header names but no detector judged are ``UNJUDGED``
(``conformance.verdict_exit``).
"""

from __future__ import annotations

from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

from fixtures.endpoint import TargetSpec
from fixtures.errors import BrokerError, TargetSpecError
from pulsar_conformance.targets import live_target, open_endpoint, open_target, say as _say


class HarnessError(RuntimeError):
    """The suite itself failed (a target or the checker raised): exit code 4, never a verdict."""


@dataclass(frozen=True)
class Judged:
    """A history, the checker's report on it, and one verdict per rule the trace was meant to judge."""

    history: Any
    report: Any
    rule_verdicts: dict[str, str]


def load_trace(path: str) -> Any:
    """The trace in ``path``: a trace file, the trace a history file ran, a case file (``.yaml``),
    or a built-in case's id (``conformance/cases/``)."""
    from conformance.case_files import discover_cases, load_case
    from conformance.trace import History, load

    if path.endswith((".yaml", ".yml")) and Path(path).exists():
        return load_case(Path(path)).trace
    if not Path(path).exists():
        found = [c for c in discover_cases() if c.id == path]
        if found:
            return found[0].trace
    item = load(path)
    trace = item.trace() if isinstance(item, History) else item
    check_profile(trace.header, source=path)
    return trace


def judge(history: Any, *, client: str | None = None, timing_tolerance_ms: float | None = None) -> Judged:
    """Check ``history``; the rules its header names that no detector judged are UNJUDGED (or
    NOT_APPLICABLE where they are not in force for its broker and client).

    Timing is judged with the bands the history's header recorded (else the checker's defaults);
    ``timing_tolerance_ms`` (``--timing-tolerance-ms``) replaces their lateness band."""
    from conformance.checker import check
    from conformance.runner import not_in_force
    from conformance.timing import TimingBands, bands_from_header

    bands = None
    if timing_tolerance_ms is not None:
        bands = (bands_from_header(history.header) or TimingBands.for_target(history.header.target)).with_override(timing_tolerance_ms)
    try:
        report = check(history, tolerances=bands)
    except Exception as err:  # noqa: BLE001 - a checker crash is a harness error, not a verdict
        raise HarnessError(f"the checker raised {type(err).__name__}: {err}") from err
    if report.harness_errors:
        raise HarnessError("the history holds ops the harness could not run: " + "; ".join(report.harness_errors))
    verdicts = dict(report.rule_verdicts())
    named = tuple(history.header.rules)
    off = not_in_force(named, history, client=client or history.header.client or "python")
    for rule in named:
        if rule not in verdicts:
            verdicts[rule] = "NOT_APPLICABLE" if rule in off else "UNJUDGED"
    return Judged(history, report, verdicts)


def with_vendor(trace: Any, vendor: str) -> Any:
    """``trace`` judged under the vendor profile ``vendor`` (``reference_model.vendors``): its header's
    ``profile`` names it (a trace that names another vendor is refused: it was written for that one)."""
    from dataclasses import replace

    from reference_model.vendors import APACHE, check_vendor

    check_vendor(vendor)
    named = trace.header.profile.get("vendor")
    if named is not None and named != vendor and vendor != APACHE:
        raise TargetSpecError(f"the trace names the vendor profile {named!r}; --profile {vendor} contradicts it")
    if vendor == APACHE or named == vendor:
        return trace
    return replace(trace, header=replace(trace.header, profile={**dict(trace.header.profile), "vendor": vendor}))


def replay(trace: Any, spec: TargetSpec, options: Any, *, client: str = "python") -> Judged:
    """Run ``trace`` on the target ``spec`` names and judge the history. On a live target with
    ``options.calibrate`` the timing bands are measured first (``conformance.timing.calibrate``,
    ~10 s per client) and recorded in the history; ``options.timing_tolerance_ms`` overrides them."""
    if client == "python" and any(op.args.get("client") for op in trace.ops):
        client = "mixed"  # the trace names its handles' clients
    tolerance = getattr(options, "timing_tolerance_ms", None)
    with _replay_target(spec, options, trace, client) as target:
        if getattr(target, "endpoint", None) is not None:  # live
            from conformance.timing import TimingBands
            from pulsar_conformance.run_job import timing_bands

            if tolerance is not None:
                target.timing = TimingBands.default_live().with_override(tolerance).to_json()
            elif getattr(options, "calibrate", False):
                target.timing = timing_bands(target.endpoint, target, client, options, {}).to_json()
        try:
            history = target.run(trace)
        except (TargetSpecError, BrokerError):
            raise
        except Exception as err:  # noqa: BLE001 - the target crashed: a harness error
            raise HarnessError(f"the target {getattr(target, 'name', '?')} raised {type(err).__name__}: {err}") from err
    return judge(history, client=client, timing_tolerance_ms=tolerance)


@contextmanager
def _replay_target(spec: TargetSpec, options: Any, trace: Any, client: str) -> Iterator[Any]:
    """The target ``replay`` runs ``trace`` on: as ``run`` does, an embedded broker is put behind the
    fault proxy (``fixtures.faults``) when the trace injects faults (docs/faults.md)."""
    from conformance.trace import injects_faults

    if spec.kind != "embedded" or not injects_faults(trace):
        with open_target(spec, options, client=client) as target:
            yield target
        return
    with open_endpoint(spec, options, faults=True) as endpoint, live_target(endpoint, options, client=client) as target:
        yield target


def check_file(path: str, *, timing_tolerance_ms: float | None = None) -> Judged:
    """Judge the history saved in ``path`` (no run)."""
    from conformance.trace import History, TraceFormatError, load

    item = load(path)
    if not isinstance(item, History):
        raise TraceFormatError("this file is a trace without outcomes; run it with 'replay' first", source=path, line=1)
    check_run_facts(item, source=path)
    return judge(item, timing_tolerance_ms=timing_tolerance_ms)


def check_run_facts(history: Any, *, source: str) -> None:
    """Refuse a history whose header the checker cannot read (its timing bands, its model profile,
    its broker version), naming the file, the header field and what to do; ``TraceFormatError``."""
    from conformance.timing import bands_from_header
    from conformance.trace import TraceFormatError

    header = history.header
    try:
        bands_from_header(header)
    except (ValueError, TypeError, KeyError, AttributeError) as err:
        raise TraceFormatError(f"header timing: {err}; delete the header's timing to judge with the default bands, "
                               "or regenerate the history", source=source, line=1) from None
    check_profile(header, source=source, broker_version=header.broker_version, client=header.client)


def check_profile(header: Any, *, source: str, broker_version: str | None = None, client: str | None = None) -> None:
    """Refuse a header whose model profile (with ``broker_version`` and ``client``) the model cannot
    take, naming the file and the field; ``TraceFormatError``."""
    from conformance.trace import TraceFormatError
    from reference_model.broker import split_profile
    from reference_model.profiles import profile_for

    try:
        overrides, _ = split_profile(header.profile)
        profile_for(broker_version, client, overrides or None)
    except (ValueError, TypeError, KeyError, AttributeError) as err:
        fields = "profile" if broker_version is None and client is None else "profile/broker_version/client"
        raise TraceFormatError(f"header {fields}: {' '.join(str(err).split())}; fix the header field",
                               source=source, line=1) from None


class BadInputError(ValueError):
    """A file or option given on the command line is unusable: exit 2, one line naming it and what to do."""

    def __init__(self, where: str, problem: str, todo: str):
        self.where, self.problem, self.todo = where, problem, todo
        super().__init__(f"{where}: {problem}; {todo}")


def check_cases_folder(folder: str | None) -> None:
    """``run --cases DIR``: a folder holding case files, or ``BadInputError`` (before anything runs)."""
    if folder is None:
        return
    path = Path(folder)
    if not path.is_dir():
        raise BadInputError(str(path), "no such case folder", "give --cases a folder of case files (*.yaml), or leave it out for the built-in cases")
    if not any(path.rglob("*.yaml")):
        raise BadInputError(str(path), "no case files (*.yaml) in this folder", "put case files in it (docs/trace-format.md#cases)")


def check_config_overrides(items: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``--config-override KEY=VALUE`` items, parsed as the broker launcher will, or ``BadInputError``
    naming the item (before any broker or case starts)."""
    from fixtures.embedded import parse_overrides
    from fixtures.errors import BrokerStartError

    for item in items:
        try:
            parse_overrides([item])
        except BrokerStartError as err:
            raise BadInputError(f"--config-override {item!r}", err.problem,
                                "give KEY=VALUE with a broker.conf key, e.g. --config-override "
                                "subscriptionKeySharedUseConsistentHashing=false") from None
    return parse_overrides(list(items))


def check_token(spec: TargetSpec, *, token_env: str | None, token_file: str | None) -> str | None:
    """The token of an external target (``--token-file`` / ``--token-env``), read before anything runs;
    ``BadInputError`` naming the file or variable (never the token) otherwise."""
    from fixtures.endpoint import read_token

    if spec.kind != "external":
        return None
    try:
        return read_token(env_var=token_env, token_file=token_file)
    except TargetSpecError as err:
        where = f"--token-file {token_file}" if token_file else f"--token-env {token_env}"
        raise BadInputError(where, str(err).splitlines()[0], "put the cluster's auth token in it (one line), or leave the "
                            "option out for a cluster without authentication") from None


def check_target_options(spec: TargetSpec, *, broker_version: str | None, token_env: str | None, token_file: str | None,
                         config_override: Any) -> None:
    """``BadInputError`` for an option the target cannot use (``fixtures.endpoint.target_option_problem``)."""
    from fixtures.endpoint import target_option_problem

    found = target_option_problem(spec, broker_version=broker_version, token_env=token_env, token_file=token_file,
                                  config_override=config_override)
    if found is not None:
        raise BadInputError(*found)


def check_selection(cases_folder: str | None, only: "list[str] | tuple[str, ...]", clients: "list[str] | tuple[str, ...]") -> None:
    """``run`` / ``matrix``: ``--only`` selects cases (``conformance.case_files.select_cases``: exact
    ids, rule ids, explicit globs) and at least one of them runs with one of ``clients``; otherwise
    ``BadInputError`` (exit 2, one line), before any folder is made or broker started."""
    from conformance.case_files import CASES_DIR, discover_cases, select_cases

    cases = select_cases(discover_cases(Path(cases_folder) if cases_folder else CASES_DIR), only)
    if not only or any(c.runs_in(client, tuple(clients)) for c in cases for client in clients):
        return
    theirs = sorted({k for c in cases for k in ("python", "java", "go", "mixed") if c.runs_in(k, (*clients, "go"))})
    chosen = ",".join(clients)
    raise BadInputError(f"--only {' --only '.join(only)} --client {chosen}",
                        f"no selected case runs with client {chosen} ({len(cases)} selected; they run with "
                        f"{', '.join(theirs) or 'no client'})",
                        f"choose --client {','.join(theirs) or 'python'}, or select other cases")


def check_out_writable(out: str | None) -> None:
    """``--out`` can be made and written, or ``BadInputError`` naming it: a read-only place is bad
    input (exit 2), never a harness error. Probed by making and removing a folder in the nearest
    folder on its path that exists (``os.access`` says yes to root on a read-only mount), so the
    check leaves nothing behind."""
    import tempfile

    if out is None:
        return
    path = Path(out)
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is None or not existing.is_dir():
        return  # check_out_folder names a file on the path
    try:
        Path(tempfile.mkdtemp(prefix=".pulsar-conformance-probe-", dir=existing)).rmdir()
    except OSError as err:
        where = "is not writable" if existing == path else f"cannot be made: {existing} is not writable"
        raise BadInputError(f"--out {out}", f"{where} ({err.strerror})", "give a folder you can write to") from None


def check_out_folder(out: str | None) -> None:
    """``--out`` must be a folder (or not exist yet): naming a file is refused, never written over."""
    if out is None:
        return
    path = Path(out)
    if path.exists() and not path.is_dir():
        raise BadInputError(f"--out {out}", "is a file, not a folder", "give a folder (created if missing)")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise BadInputError(f"--out {out}", f"{parent} is a file, not a folder", "give a folder path")
            break


def diff_clients(trace_or_case: str, spec: TargetSpec, options: Any) -> Any:
    """One trace (a file, or a case id) once per client on one broker, compared step by step
    (``conformance.client_diff``)."""
    from conformance.case_files import discover_cases
    from conformance.client_diff import diff_clients as compare
    from pulsar_conformance.targets import model_target

    if Path(trace_or_case).exists():
        trace = load_trace(trace_or_case)
    else:
        found = [c for c in discover_cases() if c.id == trace_or_case]
        if not found:
            raise ValueError(f"{trace_or_case!r} is neither a trace file nor a case id (see conformance/cases/)")
        trace = found[0].trace
    if spec.kind == "model":
        raise ValueError("diff-clients compares what two client libraries do on a broker; give --target embedded or a URL")
    clients = client_list(getattr(options, "clients", None) or "python,java")
    with open_endpoint(spec, options) as endpoint, ExitStack() as stack:
        targets = {c: stack.enter_context(live_target(endpoint, options, client=c)) for c in clients}
        return compare(trace, run_on=lambda c: targets[c].run(trace), model_on=lambda c: model_target(c).run(trace),
                       clients=clients)


def client_list(text: str) -> tuple[str, ...]:
    """``diff-clients --clients``: two or more different clients among python, java and go."""
    from conformance.client_diff import check_clients

    return check_clients((c.strip() for c in text.split(",") if c.strip()), given=f"--clients {text!r}")


# --------------------------------------------------------------------------- broker


class BrokerRunning(Exception):
    """``broker start`` found a live broker recorded under the same name."""


def broker_start(name: str, *, version: str | None, config_override: list[str],
                 progress: Callable[[str], None] = _say) -> dict[str, Any]:
    """Start a detached embedded broker recorded under ``name``; its recorded state."""
    from fixtures import embedded

    state = embedded.load_state(name)
    if state and embedded.process_alive(state.get("pid")):
        raise BrokerRunning(f"a broker named {name!r} already runs (pid {state['pid']}); stop it first")
    broker = embedded.EmbeddedBroker(version=version, overrides=embedded.parse_overrides(config_override),
                                     detached=True, progress=progress)
    broker.start()
    embedded.save_state(broker, name)
    return embedded.load_state(name)


def broker_versions() -> list[dict[str, Any]]:
    """Every release the embedded broker can run (``fixtures.broker_builds.catalog``), with what the
    cache already holds: ``cached`` lists the ways (tarball, assembled) unpacked there."""
    from fixtures import broker_builds, embedded

    dist = embedded.cache_root() / "dist"
    rows = []
    for row in broker_builds.catalog():
        cached = []
        if (dist / row["release"] / ".complete").exists():
            cached.append(broker_builds.TARBALL)
        if (dist / f"{row['release']}-assembled" / "build.json").exists():
            cached.append(broker_builds.ASSEMBLED)
        rows.append({**row, "cached": ",".join(cached)})
    return rows


def broker_compare(version: str, progress: Callable[[str], None] = _say) -> dict[str, Any]:
    """How the assembled lib/ of ``version`` differs from its tarball's (both obtained if needed)."""
    from fixtures import embedded
    from fixtures.assembly import lib_difference

    tarball = embedded.ensure_distribution(f"{version}:tarball", progress=progress)
    assembled = embedded.ensure_distribution(f"{version}:assembled", progress=progress)
    diff = lib_difference(tarball.home / "lib", assembled.home / "lib")
    return {"release": tarball.version, "tarball_lib": str(tarball.home / "lib"), "assembled_lib": str(assembled.home / "lib"),
            "same": len(diff["same"]), **{k: v for k, v in diff.items() if k != "same"}}


def broker_status(name: str) -> dict[str, Any] | None:
    """The recorded state of broker ``name`` with ``alive`` (and ``ready`` when alive), or None."""
    from fixtures import embedded

    state = embedded.load_state(name)
    if state is None:
        return None
    state["alive"] = embedded.process_alive(state.get("pid"))
    if state["alive"]:
        from fixtures.admin import AdminClient

        admin = AdminClient(state["admin_url"], timeout_s=3)
        state["ready"] = admin.is_ready()
        admin.close()
    return state


def broker_stop(name: str) -> dict[str, Any] | None:
    """Stop broker ``name``; its last recorded state, or None when none was recorded."""
    from fixtures import embedded

    return embedded.stop_recorded(name)
