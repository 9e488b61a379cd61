"""``pulsar-conformance cache list|prune``: what the user cache holds, and removing what no broker needs.

The cache (``fixtures.embedded.cache_root``: ``$PULSAR_CONFORMANCE_CACHE``, else
``$XDG_CACHE_HOME/pulsar-conformance``, else ``~/.cache/pulsar-conformance``) holds, by folder:

- ``dist/<release>/`` a broker release's unpacked server tarball (about 300 MB), ``dist/<release>-assembled/``
  one assembled from Maven artifacts (fixtures/assembly.py), and their fetch logs;
- ``java-driver/<client>-<digest>/``, ``go-driver/<client>-<digest>/`` the driver builds, one per client
  release and source digest, and their build logs;
- ``tools/toxiproxy-<version>/`` the fault proxy; ``entry-filters/<release>-<digest>/`` the built entry filters;
- ``runs/broker-<release>-*/`` one folder per broker start (config, log, data: about 9 MB), which the
  broker removes when it stops cleanly and keeps when it died (fixtures/embedded.py);
- ``brokers/<name>.json`` the state of brokers started by ``pulsar-conformance broker start``.

``list`` prints each with its size and a total. ``prune`` removes the run folders no running process
uses and the state files of brokers that are gone; ``--versions 3.0.7`` also drops those broker releases;
``--all`` drops everything not in use (``--keep-distributions``: but the broker releases, the one
download that costs minutes). Nothing a live process uses is removed: a run folder is in use while its
broker or the process that started it runs (``owner.json``: pids with their start times, so a reused
pid does not count), or while any process names it on its command line or works in it (folders from
before ``owner.json``); any other entry while a process names it or works in it.

Choices:
- Sizes are apparent sizes (the sum of the files' lengths), the figure ``ls`` and the tests can check;
  ``du`` may show a little more (blocks).
- A run folder without ``owner.json`` younger than ``FRESH_S`` is left alone: a broker may be
  starting in it (the owner file is written just after the folder is made).
- Entries the suite does not write (anything else under the root) are listed as ``other`` and never
  removed: the root may be a folder the user shares with something else.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable

from fixtures import embedded

FRESH_S = 120.0

# list order and headings; the kinds prune --all may remove (``other`` is never removed)
KINDS = {
    "distribution": "broker distributions",
    "java-driver": "Java driver builds",
    "go-driver": "Go driver builds",
    "tool": "tools",
    "entry-filter": "entry filters",
    "run": "run folders",
    "broker-state": "broker state files",
    "other": "other (not written by the suite; never removed)",
}
REMOVABLE = set(KINDS) - {"other"}
RELEASE = re.compile(r"\d+\.\d+\.\d+(?:-[A-Za-z0-9.]+)?")
FORMS = ("tarball", "assembled")


class CacheCommandError(ValueError):
    """Bad input to ``cache`` (the command line's exit code 2): names the option and what to give."""


@dataclass
class Entry:
    """One thing the cache holds: what it is, where, how big, and whether a live process needs it."""

    kind: str  # a key of KINDS
    name: str  # "4.0.8 (tarball)", "broker-4.0.8-abcd1234", ...
    paths: list[Path]  # removed together (a distribution and its fetch log)
    bytes: int
    in_use: str | None = None  # why it must stay, or None
    note: str = ""  # what a person should know: "stale: ...", "kept: ...", "incomplete"
    version: str | None = None  # distributions and run folders: the broker release
    form: str | None = None  # distributions: tarball or assembled

    def to_json(self) -> dict:
        data = asdict(self)
        data["paths"] = [str(p) for p in self.paths]
        return data


@dataclass
class Pruned:
    """What ``prune`` did: the entries removed (or that would be, with ``dry_run``), those asked for but
    kept because a process uses them, and removals that failed."""

    removed: list[Entry] = field(default_factory=list)
    kept_in_use: list[Entry] = field(default_factory=list)
    failed: list[tuple[Entry, str]] = field(default_factory=list)

    @property
    def freed_bytes(self) -> int:
        return sum(e.bytes for e in self.removed)


# --------------------------------------------------------------------------- sizes and processes


def tree_bytes(path: Path) -> int:
    """The apparent size of ``path``: its length for a file, the sum of its files' lengths for a
    folder (symlinks are not followed: a link counts as itself)."""
    try:
        st = path.lstat()
    except OSError:
        return 0
    if not path.is_dir() or path.is_symlink():
        return st.st_size
    total = 0
    for folder, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                pass  # removed while we walked
    return total


@dataclass(frozen=True)
class Proc:
    pid: int
    cmdline: str
    cwd: str


def process_table() -> list[Proc]:
    """Every process this user can see, with its command line and working folder (``/proc``)."""
    procs = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            cwd = ""
        procs.append(Proc(int(entry.name), cmdline, cwd))
    return procs


def _named_by(path: Path, procs: Iterable[Proc]) -> Proc | None:
    """A process whose command line names ``path`` (or something under it) or that works in it."""
    forms = {str(path)}
    try:
        forms.add(str(path.resolve()))
    except OSError:
        pass
    patterns = [re.compile(re.escape(f) + r"(?=$|[/\s:=,;])") for f in forms]
    for proc in procs:
        if any(proc.cwd == f or proc.cwd.startswith(f + "/") for f in forms):
            return proc
        if any(p.search(proc.cmdline) for p in patterns):
            return proc
    return None


def _same_process(pid: object, start: object) -> bool:
    """``pid`` is alive and, when its start time was recorded, is still the process that had it."""
    if not isinstance(pid, int) or not embedded.process_alive(pid):
        return False
    return start is None or embedded.process_start_time(pid) == start


# --------------------------------------------------------------------------- scan


def scan(root: Path, *, procs: list[Proc] | None = None, now: float | None = None) -> list[Entry]:
    """Everything under the cache ``root``, in ``KINDS`` order. Raises CacheCommandError when ``root``
    exists but is not a folder."""
    if root.exists() and not root.is_dir():
        raise CacheCommandError(f"the cache root {root} is a file, not a folder; point $PULSAR_CONFORMANCE_CACHE at a folder")
    if not root.is_dir():
        return []
    procs = process_table() if procs is None else procs
    now = time.time() if now is None else now
    entries: list[Entry] = []
    for top in _listed(root):
        if top.name == "dist" and top.is_dir():
            entries += _distributions(top)
        elif top.name in ("java-driver", "go-driver") and top.is_dir():
            entries += _builds(top, top.name)
        elif top.name == "tools" and top.is_dir():
            entries += _builds(top, "tool")
        elif top.name == "entry-filters" and top.is_dir():
            entries += _builds(top, "entry-filter")
        elif top.name == "runs" and top.is_dir():
            entries += _runs(top, procs, now)
        elif top.name == "brokers" and top.is_dir():
            entries += _broker_states(top)
        else:
            entries.append(Entry("other", top.name, [top], tree_bytes(top)))
    live_versions = {e.version for e in entries if e.kind == "run" and e.in_use}
    for e in entries:
        if e.in_use or e.kind in ("run", "broker-state"):
            continue
        user = _named_by(e.paths[0], procs)
        if user is not None:
            e.in_use = f"used by pid {user.pid}"
        elif e.kind == "distribution" and e.version in live_versions:
            e.in_use = f"a running broker of {e.version} may use it"
    order = list(KINDS)
    entries.sort(key=lambda e: (order.index(e.kind), e.name))
    return entries


def _listed(folder: Path) -> list[Path]:
    """``folder``'s entries, less the artifact locks (``fixtures.artifact_lock``: ``.<name>.lock``).
    A lock is a few bytes, and deleting one that a process holds would let a newcomer make the same
    artifact beside it, so ``list`` never shows one and ``prune`` never removes one."""
    return sorted(p for p in folder.iterdir() if not (p.name.startswith(".") and p.name.endswith(".lock")))


def _distributions(dist: Path) -> list[Entry]:
    out: list[Entry] = []
    logs = {p.name: p for p in _listed(dist) if p.is_file()}
    for folder in (p for p in _listed(dist) if p.is_dir()):
        if folder.name.endswith("-assembled"):
            version, form = folder.name[: -len("-assembled")], "assembled"
            complete = (folder / "build.json").exists()
            log = logs.pop(f"{folder.name}.fetch.log", None)
        else:
            version, form = folder.name, "tarball"
            complete = (folder / ".complete").exists()
            log = None
        paths = [folder] + ([log] if log else [])
        out.append(Entry("distribution", f"{version} ({form})", paths, sum(tree_bytes(p) for p in paths),
                         note="" if complete else "incomplete (a download or unpack did not finish)",
                         version=version, form=form))
    for name, path in sorted(logs.items()):
        m = re.fullmatch(r"(.+)-assembled\.fetch\.log", name)
        out.append(Entry("distribution", f"{m.group(1)} (assembled) fetch log" if m else name, [path], tree_bytes(path),
                         version=m.group(1) if m else None, form="assembled" if m else None))
    return out


def _builds(folder: Path, kind: str) -> list[Entry]:
    out = []
    files = []
    for item in _listed(folder):
        if item.is_dir():
            out.append(Entry(kind, item.name, [item], tree_bytes(item)))
        else:
            files.append(item)
    if files:
        out.append(Entry(kind, f"{len(files)} build log(s)", files, sum(tree_bytes(p) for p in files)))
    return out


def _runs(runs: Path, procs: list[Proc], now: float) -> list[Entry]:
    out = []
    for folder in sorted(runs.iterdir()):
        m = re.fullmatch(r"broker-(.+)-[^-]+", folder.name)
        entry = Entry("run", folder.name, [folder], tree_bytes(folder), version=m.group(1) if m else None)
        entry.in_use, entry.note = _run_folder_use(folder, procs, now)
        out.append(entry)
    return out


def _run_folder_use(folder: Path, procs: list[Proc], now: float) -> tuple[str | None, str]:
    """(why the run folder is in use or None, a note for a person)."""
    owner: dict | None = None
    owner_path = folder / embedded.RUN_OWNER_FILE
    if owner_path.exists():
        try:
            owner = json.loads(owner_path.read_text())
        except (OSError, ValueError):
            owner = None
    if owner and owner.get("stopped"):
        return None, f"kept: {owner.get('kept') or 'its broker stopped'}"
    if owner:
        if _same_process(owner.get("broker_pid"), owner.get("broker_pid_start")):
            return f"its broker (pid {owner['broker_pid']}) runs", ""
        if _same_process(owner.get("pid"), owner.get("pid_start")):
            return f"the process that started it (pid {owner['pid']}) runs", ""
    user = _named_by(folder, procs)
    if user is not None:
        return f"used by pid {user.pid}", ""
    if owner is None:
        try:
            age = now - folder.stat().st_mtime
        except OSError:
            age = FRESH_S
        if age < FRESH_S:
            return f"created {age:.0f} s ago, no owner recorded yet (a broker may be starting)", ""
        return None, "stale: no owner recorded and no process uses it"
    gone = [f"pid {owner[k]}" for k in ("broker_pid", "pid") if owner.get(k)]
    return None, f"stale: its broker and the process that started it ({', '.join(gone)}) are gone"


def _broker_states(folder: Path) -> list[Entry]:
    out = []
    for path in sorted(folder.iterdir()):
        pid = None
        try:
            pid = json.loads(path.read_text()).get("pid") if path.is_file() else None
        except (OSError, ValueError, AttributeError):
            pass
        alive = isinstance(pid, int) and embedded.process_alive(pid)
        out.append(Entry("broker-state", path.stem, [path], tree_bytes(path),
                         in_use=f"broker pid {pid} runs ('pulsar-conformance broker stop --name {path.stem}')" if alive else None,
                         note="" if alive else f"its broker{f' (pid {pid})' if pid else ''} is gone"))
    return out


# --------------------------------------------------------------------------- prune


def parse_versions(text: str | None) -> list[tuple[str, str | None]]:
    """``"3.0.7,4.0.8:assembled"`` -> ``[("3.0.7", None), ("4.0.8", "assembled")]``; refuses anything
    that is not a release (``X.Y.Z``) with an optional ``:tarball``/``:assembled``."""
    if text is None:
        return []
    items = [t.strip() for t in text.split(",")]
    if not any(items):
        raise CacheCommandError("--versions is empty; give broker releases, e.g. --versions 3.0.7,3.3.6 ('cache list' shows the cached ones)")
    out = []
    for item in items:
        release, _, form = item.partition(":")
        if not RELEASE.fullmatch(release) or (form and form not in FORMS):
            raise CacheCommandError(f"--versions: {item!r} is not a broker release; give X.Y.Z, optionally with :tarball or "
                                    f":assembled (e.g. 3.0.7 or 3.0.7:assembled)")
        out.append((release, form or None))
    return out


def prune(root: Path, *, versions: str | None = None, everything: bool = False, keep_distributions: bool = False,
          dry_run: bool = False, procs: list[Proc] | None = None, now: float | None = None) -> Pruned:
    """Remove from the cache ``root`` what no live process needs: the run folders and broker state
    files of brokers that are gone; plus the broker releases ``versions`` names; or, ``everything``,
    every entry the suite wrote (but the broker releases with ``keep_distributions``). Entries a
    live process uses are never removed (``kept_in_use``). Raises CacheCommandError on bad options,
    checked before anything is removed."""
    if keep_distributions and not everything:
        raise CacheCommandError("--keep-distributions only applies with --all (plain 'cache prune' never removes distributions)")
    wanted = parse_versions(versions)
    if wanted and everything and not keep_distributions:
        raise CacheCommandError("--all already removes every broker release; drop --versions, or add --keep-distributions "
                                "to keep all releases but those --versions names")
    entries = scan(root, procs=procs, now=now)
    dists = [e for e in entries if e.kind == "distribution" and e.version]
    for release, form in wanted:
        if not any(e.version == release and (form is None or e.form == form) for e in dists):
            cached = sorted({f"{e.version}:{e.form}" for e in dists})
            raise CacheCommandError(f"--versions: no broker release {release}{':' + form if form else ''} is in the cache "
                                    f"{root} (cached: {', '.join(cached) or 'none'}); 'pulsar-conformance cache list' shows them")

    def chosen(e: Entry) -> bool:
        if e.kind == "other":
            return False
        if e.kind in ("run", "broker-state"):
            return True
        if e.kind == "distribution" and any(e.version == r and (f is None or e.form == f) for r, f in wanted):
            return True
        if everything:
            return not (e.kind == "distribution" and keep_distributions)
        return False

    result = Pruned()
    for e in entries:
        if not chosen(e):
            continue
        if e.in_use:
            result.kept_in_use.append(e)
            continue
        if dry_run:
            result.removed.append(e)
            continue
        try:
            for path in e.paths:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink(missing_ok=True)
            result.removed.append(e)
        except OSError as err:
            result.failed.append((e, str(err)))
    return result


# --------------------------------------------------------------------------- printing and the command


def human(n: int) -> str:
    """Bytes for a person, in the decimal units the README uses (245 MB)."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def root_origin() -> str:
    """Which setting chose the cache root, for the first line of ``list``."""
    if os.environ.get("PULSAR_CONFORMANCE_CACHE"):
        return "$PULSAR_CONFORMANCE_CACHE"
    if os.environ.get("XDG_CACHE_HOME"):
        return "$XDG_CACHE_HOME/pulsar-conformance"
    return "default: ~/.cache/pulsar-conformance; set $PULSAR_CONFORMANCE_CACHE to move it"


def format_list(root: Path, entries: list[Entry]) -> str:
    lines = [f"cache root: {root} ({root_origin()})"]
    if not root.exists():
        lines.append("(empty: the folder does not exist yet; the first broker start fills it)")
    for kind, heading in KINDS.items():
        group = [e for e in entries if e.kind == kind]
        if not group:
            continue
        extra = ""
        if kind == "run":
            used = sum(1 for e in group if e.in_use)
            extra = f": {len(group)}, {used} in use, {len(group) - used} removable by 'cache prune'"
        lines.append(f"{heading} ({human(sum(e.bytes for e in group))}{extra})")
        for e in group:
            state = f"in use: {e.in_use}" if e.in_use else e.note
            where = ", ".join(str(p.relative_to(root)) if p.is_relative_to(root) else str(p) for p in e.paths[:1])
            lines.append(f"  {e.name:<34} {human(e.bytes):>9}  {where}" + (f"  [{state}]" if state else ""))
    lines.append(f"total {human(sum(e.bytes for e in entries))} ({sum(e.bytes for e in entries)} bytes)")
    return "\n".join(lines)


def format_pruned(root: Path, result: Pruned, *, dry_run: bool) -> str:
    verb = "would remove" if dry_run else "removed"
    lines = [f"{verb} {e.kind} {e.name} ({human(e.bytes)}): {e.paths[0]}" for e in result.removed]
    lines += [f"kept {e.kind} {e.name}: in use ({e.in_use})" for e in result.kept_in_use]
    lines += [f"could not remove {e.kind} {e.name}: {why}" for e, why in result.failed]
    lines.append(f"{verb} {len(result.removed)} entries, {'would free' if dry_run else 'freed'} "
                 f"{human(result.freed_bytes)} ({result.freed_bytes} bytes) in {root}")
    return "\n".join(lines)


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """The ``cache`` subcommand (registered by cli.build_parser)."""
    p = sub.add_parser("cache", help="what the user cache holds (broker releases, driver builds, run folders) and pruning it",
                       description="list: every entry of the cache with its size. prune: remove the run folders and broker "
                                   "state files of brokers that are gone (and more with --versions / --all). Nothing a "
                                   "running process uses is removed. The root is $PULSAR_CONFORMANCE_CACHE, else "
                                   "$XDG_CACHE_HOME/pulsar-conformance, else ~/.cache/pulsar-conformance.")
    p.add_argument("action", choices=["list", "prune"])
    p.add_argument("--versions", default=None, metavar="RELEASES",
                   help="prune: also remove these broker releases' distributions, comma-separated (3.0.7, 3.0.7:assembled)")
    p.add_argument("--all", dest="everything", action="store_true",
                   help="prune: remove everything not in use (distributions, driver builds, tools, run folders)")
    p.add_argument("--keep-distributions", action="store_true",
                   help="with --all: keep the broker distributions (the download that costs minutes)")
    p.add_argument("--dry-run", action="store_true", help="prune: print what would be removed, remove nothing")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """``cache list`` / ``cache prune``: 0, or 4 when a removal failed; CacheCommandError (exit 2) on bad options."""
    root = embedded.cache_root()
    if args.action == "list":
        for opt, given in (("--versions", args.versions), ("--all", args.everything),
                           ("--keep-distributions", args.keep_distributions), ("--dry-run", args.dry_run)):
            if given:
                raise CacheCommandError(f"{opt} applies to 'cache prune', not to 'cache list'")
        entries = scan(root)
        if args.json:
            print(json.dumps({"root": str(root), "total_bytes": sum(e.bytes for e in entries),
                              "entries": [e.to_json() for e in entries]}, indent=2))
        else:
            print(format_list(root, entries))
        return 0
    result = prune(root, versions=args.versions, everything=args.everything, keep_distributions=args.keep_distributions,
                   dry_run=args.dry_run)
    if args.json:
        print(json.dumps({"root": str(root), "dry_run": args.dry_run, "freed_bytes": result.freed_bytes,
                          "removed": [e.to_json() for e in result.removed],
                          "kept_in_use": [e.to_json() for e in result.kept_in_use],
                          "failed": [{**e.to_json(), "error": why} for e, why in result.failed]}, indent=2))
    else:
        print(format_pruned(root, result, dry_run=args.dry_run))
    if result.failed:
        print(f"error: {len(result.failed)} entries could not be removed (see above); check their permissions", file=sys.stderr)
        return 4
    return 0
