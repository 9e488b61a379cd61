"""Obtaining a runnable target for a command: the model, or a live broker driven by one client.

``options`` below is anything with the attributes the command line's target options set
(``token_env``, ``token_file``, ``broker_version``, ``config_override``, ``java_client_version``):
an ``argparse.Namespace`` or a ``BrokerOptions``. A missing attribute means its default.

Choices: the broker is obtained once (``open_endpoint``) and shared by every client's target
(``live_target``), so a run with three clients starts one broker; each target's Java driver
(if it started one) stops when its ``with`` block ends.
"""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from conformance.case_files import DEFAULT_CLIENTS  # noqa: F401 - the one default of run, matrix and the suite
from fixtures.endpoint import TargetSpec, read_token
from fixtures.errors import TargetSpecError

CLIENT_CHOICES = ("python", "java", "go", "mixed")


def say(text: str) -> None:
    """Progress for a person: stderr, so stdout stays the command's result; no secret shows
    (``fixtures.secrets.redact``)."""
    from fixtures.secrets import redact

    print(redact(str(text)), file=sys.stderr, flush=True)


@dataclass(frozen=True)
class BrokerOptions:
    """How to obtain a live broker and its clients (field names match the CLI's option names)."""

    token_env: str | None = None
    token_file: str | None = None
    broker_version: str | None = None
    config_override: tuple[str, ...] = ()
    java_client_version: str | None = None


def parse_clients(text: str) -> list[str]:
    """``python,java,mixed`` -> the clients to run, in order; an unknown name is refused."""
    names = [c.strip() for c in (text or "").split(",") if c.strip()]
    bad = [c for c in names if c not in CLIENT_CHOICES]
    if not names or bad:
        raise TargetSpecError(f"--client {text!r}: use one or more of {', '.join(CLIENT_CHOICES)}, comma-separated")
    return list(dict.fromkeys(names))


def model_target(client: str, broker_version: str | None = None) -> Any:
    """The reference model playing ``client`` (python is the model's default, C++-core profile)
    for ``broker_version`` (a release or line; None: the model's default line)."""
    from conformance.targets.model import ModelTarget

    return ModelTarget(client=None if client == "python" else client, broker_version=broker_version)


@contextlib.contextmanager
def open_target(spec: TargetSpec, options: Any, *, client: str = "python") -> Iterator[Any]:
    """A runnable target for ``spec``: the model (with ``client``'s profile), or a live broker
    obtained for the duration, driven by ``client`` (the Java driver is stopped at the end)."""
    if spec.kind == "model":
        yield model_target(client)
        return
    with open_endpoint(spec, options) as endpoint:
        with live_target(endpoint, options, client=client) as target:
            yield target


@contextlib.contextmanager
def open_endpoint(spec: TargetSpec, options: Any, *, progress: Callable[[str], None] = say, faults: bool = False) -> Iterator[Any]:
    """The live broker for ``spec`` (started, or reached by URL) for the duration. ``faults``: put
    the fault proxy between the clients and an embedded broker (``fixtures.faults``), so traces
    may cut connections, add latency and restart the broker."""
    from fixtures.embedded import parse_overrides
    from fixtures.provider import broker_for

    from reference_model import vendors

    token_env, token_file = getattr(options, "token_env", None), getattr(options, "token_file", None)
    token = read_token(env_var=token_env, token_file=token_file) if spec.kind == "external" else None
    overrides = parse_overrides(list(getattr(options, "config_override", None) or ()))
    vendor = vendors.check_vendor(getattr(options, "profile", None) or vendors.APACHE)
    entry_filters: tuple[str, ...] = ()
    if spec.kind != "external":
        # a broker the suite starts plays the vendor: its broker.conf settings and entry filters
        overrides = {**vendors.VENDOR_BROKER_CONFIG[vendor], **overrides}
        entry_filters = vendors.VENDOR_ENTRY_FILTERS[vendor]
    with broker_for(spec, version=getattr(options, "broker_version", None), overrides=overrides, token=token,
                    progress=progress, faults=faults, entry_filters=entry_filters) as endpoint:
        yield endpoint


@contextlib.contextmanager
def live_target(endpoint: Any, options: Any, *, client: str, progress: Callable[[str], None] = say) -> Iterator[Any]:
    """A target on ``endpoint`` driven by ``client``; its Java driver (if started) stops at the end."""
    from conformance.targets.pulsar import BrokerTarget

    target = BrokerTarget(endpoint, client=client, java_client_version=getattr(options, "java_client_version", None),
                          progress=progress)
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


def applies_for(info: dict[str, Any]) -> Callable[[str], bool]:
    """Whether a rule applies to the target ``info`` describes (its broker line and client).

    The same on every target: the model playing the Python client and a broker driven by it call a
    Java-only rule NOT_APPLICABLE alike (the model could judge it, but not as that client), and
    NOT_EXERCISED is left for a rule the client can do that no case judged."""
    from reference_model.rules import applies, rule

    broker = info.get("broker_version") or "4.0"
    client = info.get("client") or "python"
    vendor = info.get("vendor") or "apache"

    def check(rule_id: str) -> bool:
        found = rule(rule_id)
        if client == "mixed":  # a cross-client run plays both clients
            return any(applies(found, broker_version=broker, client=c, vendor=vendor) for c in found.applies_to.clients) \
                or applies(found, broker_version=broker, client=client, vendor=vendor)
        return applies(found, broker_version=broker, client=client, vendor=vendor)

    return check
