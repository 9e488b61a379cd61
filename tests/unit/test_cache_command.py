"""``pulsar-conformance cache list|prune`` on a fabricated cache root, and the embedded broker's
run-folder disposal with stand-in processes (no JVM): what is listed with which size, what prune
removes and keeps, and the bad input it refuses with exit 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fixtures import embedded
from fixtures.embedded import RUN_OWNER_FILE, EmbeddedBroker, process_start_time
from pulsar_conformance import cache_command, cli
from pulsar_conformance.cache_command import CacheCommandError, Proc, prune, scan



def _file(path: Path, size: int) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    return path


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _run_folder(root: Path, name: str, size: int, owner: dict | None, *, age_s: float = 3600) -> Path:
    folder = root / "runs" / name
    _file(folder / "broker.log", size)
    if owner is not None:
        (folder / RUN_OWNER_FILE).write_text(json.dumps(owner))
    when = time.time() - age_s
    os.utime(folder, (when, when))
    return folder


@pytest.fixture
def root(tmp_path, monkeypatch) -> Path:
    """A cache root with one of everything; its sizes are the files' lengths written here."""
    root = tmp_path / "cache"
    monkeypatch.setenv("PULSAR_CONFORMANCE_CACHE", str(root))
    _file(root / "dist" / "4.0.8" / "apache-pulsar-4.0.8" / "lib" / "a.jar", 5000)
    _file(root / "dist" / "4.0.8" / ".complete", 10)
    _file(root / "dist" / "3.0.7-assembled" / "lib" / "b.jar", 3000)
    _file(root / "dist" / "3.0.7-assembled" / "build.json", 20)
    _file(root / "dist" / "3.0.7-assembled.fetch.log", 7)
    _file(root / "dist" / "3.3.6" / "download" / "partial.tar.gz", 100)  # no .complete: an interrupted download
    _file(root / "java-driver" / "4.0.8-abc" / "driver.jar", 400)
    _file(root / "java-driver" / "build-4.0.8.log", 40)
    _file(root / "go-driver" / "0.19.0-def" / "driver", 900)
    _file(root / "tools" / "toxiproxy-v2.5.0" / "server", 800)
    _file(root / "entry-filters" / "4.0.8-123" / "tdmq-tags.nar", 60)
    me = os.getpid()
    _run_folder(root, "broker-4.0.8-dead0001", 1000, {"pid": _dead_pid(), "broker_pid": _dead_pid()})
    _run_folder(root, "broker-4.0.8-mine0001", 2000, {"pid": me, "pid_start": process_start_time(me)})
    _run_folder(root, "broker-4.0.8-reused01", 300, {"pid": me, "pid_start": -1})  # our pid, another process's start
    _run_folder(root, "broker-3.0.7-kept0001", 500, {"pid": me, "pid_start": process_start_time(me), "stopped": 1.0,
                                                     "kept": "the broker (pid 1) had died"})
    _run_folder(root, "broker-4.0.8-legacy01", 70, None)  # from before owner.json, old
    _run_folder(root, "broker-4.0.8-fresh001", 30, None, age_s=0)  # just made: a broker may be starting
    _file(root / "brokers" / "gone.json", 0).write_text(json.dumps({"pid": _dead_pid()}))
    _file(root / "notes.txt", 5)
    return root


def _by_name(entries):
    return {e.name: e for e in entries}


def test_scan_lists_every_kind_with_its_size_and_state(root):
    entries = _by_name(scan(root, procs=[]))
    assert entries["4.0.8 (tarball)"].bytes == 5010 and entries["4.0.8 (tarball)"].note == ""
    assert entries["3.0.7 (assembled)"].bytes == 3027  # the fetch log goes with it
    assert entries["3.3.6 (tarball)"].note.startswith("incomplete")
    assert entries["4.0.8-abc"].kind == "java-driver" and entries["4.0.8-abc"].bytes == 400
    assert entries["0.19.0-def"].kind == "go-driver" and entries["toxiproxy-v2.5.0"].kind == "tool"
    assert entries["4.0.8-123"].kind == "entry-filter"
    assert entries["notes.txt"].kind == "other"
    runs = {n: e for n, e in entries.items() if e.kind == "run"}
    assert {n for n, e in runs.items() if e.in_use} == {"broker-4.0.8-mine0001", "broker-4.0.8-fresh001"}
    assert "started it" in runs["broker-4.0.8-mine0001"].in_use
    assert runs["broker-4.0.8-dead0001"].note.startswith("stale:")
    assert runs["broker-4.0.8-reused01"].note.startswith("stale:")  # a reused pid is not the owner
    assert runs["broker-3.0.7-kept0001"].note == "kept: the broker (pid 1) had died"
    assert runs["broker-4.0.8-dead0001"].bytes == 1000 + len((root / "runs" / "broker-4.0.8-dead0001" / RUN_OWNER_FILE).read_bytes())
    assert entries["gone"].kind == "broker-state" and entries["gone"].in_use is None


def test_a_process_naming_a_folder_keeps_it_in_use(root):
    legacy = root / "runs" / "broker-4.0.8-legacy01"
    jvm = Proc(4242, f"java -Dpulsar.log.dir={legacy}/logs -cp {root}/dist/4.0.8/apache-pulsar-4.0.8/lib/a.jar", "/")
    entries = _by_name(scan(root, procs=[jvm]))
    assert entries["broker-4.0.8-legacy01"].in_use == "used by pid 4242"
    assert entries["4.0.8 (tarball)"].in_use == "used by pid 4242"
    assert entries["3.0.7 (assembled)"].in_use is None
    # a longer name that merely starts with the folder's is not the folder
    other = Proc(4343, f"java -cp {legacy}0/x", "/")
    assert _by_name(scan(root, procs=[other]))["broker-4.0.8-legacy01"].in_use is None


def test_cache_list_prints_the_root_each_entry_and_the_total(root, capsys):
    assert cli.main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"cache root: {root} ($PULSAR_CONFORMANCE_CACHE)")
    for heading in ("broker distributions", "Java driver builds", "Go driver builds", "tools", "run folders", "other"):
        assert heading in out
    assert "run folders (" in out and ": 6, 2 in use, 4 removable by 'cache prune')" in out
    total = sum(e.bytes for e in scan(root))
    assert out.rstrip().endswith(f"({total} bytes)")
    assert cli.main(["cache", "list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["root"] == str(root) and data["total_bytes"] == total
    assert len(data["entries"]) == len(scan(root))


def test_prune_removes_stale_run_folders_and_dead_brokers_state_only(root, capsys):
    expected = {e.name: e.bytes for e in scan(root) if e.kind in ("run", "broker-state") and not e.in_use}
    assert set(expected) == {"broker-4.0.8-dead0001", "broker-4.0.8-reused01", "broker-3.0.7-kept0001",
                             "broker-4.0.8-legacy01", "gone"}
    assert cli.main(["cache", "prune"]) == 0
    out = capsys.readouterr().out
    assert f"removed 5 entries, freed" in out and f"({sum(expected.values())} bytes)" in out
    left = sorted(p.name for p in (root / "runs").iterdir())
    assert left == ["broker-4.0.8-fresh001", "broker-4.0.8-mine0001"]
    assert not (root / "brokers" / "gone.json").exists()
    assert (root / "dist" / "4.0.8" / ".complete").exists() and (root / "go-driver" / "0.19.0-def").exists()
    assert cli.main(["cache", "prune"]) == 0
    assert "removed 0 entries, freed 0 B (0 bytes)" in capsys.readouterr().out


def test_dry_run_removes_nothing(root, capsys):
    before = sorted(str(p) for p in root.rglob("*"))
    assert cli.main(["cache", "prune", "--all", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would remove" in out and "would free" in out
    assert sorted(str(p) for p in root.rglob("*")) == before


def test_prune_versions_drops_that_release_only(root):
    result = prune(root, versions="3.0.7", procs=[])
    dropped = {e.name for e in result.removed if e.kind == "distribution"}
    assert dropped == {"3.0.7 (assembled)"}
    assert not (root / "dist" / "3.0.7-assembled").exists() and not (root / "dist" / "3.0.7-assembled.fetch.log").exists()
    assert (root / "dist" / "4.0.8").exists() and (root / "dist" / "3.3.6").exists()


def test_prune_all_keeps_what_is_in_use_and_what_is_not_ours(root):
    jvm = Proc(4242, f"java -cp {root}/dist/4.0.8/apache-pulsar-4.0.8/lib/a.jar", "/")
    result = prune(root, everything=True, procs=[jvm])
    assert {e.name for e in result.kept_in_use} == {"4.0.8 (tarball)", "broker-4.0.8-mine0001", "broker-4.0.8-fresh001"}
    assert sorted(p.name for p in root.iterdir()) == ["brokers", "dist", "entry-filters", "go-driver", "java-driver", "notes.txt", "runs", "tools"]  # the folders stay, emptied
    assert sorted(p.name for p in (root / "dist").iterdir()) == ["4.0.8"]
    assert not any((root / "go-driver").iterdir()) and not any((root / "tools").iterdir())
    assert result.freed_bytes == sum(e.bytes for e in result.removed) > 0


def test_prune_all_keep_distributions(root):
    prune(root, everything=True, keep_distributions=True, procs=[])
    assert sorted(p.name for p in (root / "dist").iterdir()) == ["3.0.7-assembled", "3.0.7-assembled.fetch.log", "3.3.6", "4.0.8"]
    assert not any((root / "java-driver").iterdir())
    # but those --versions names
    prune(root, everything=True, keep_distributions=True, versions="3.3.6", procs=[])
    assert not (root / "dist" / "3.3.6").exists() and (root / "dist" / "4.0.8").exists()


@pytest.mark.parametrize("argv, says", [
    (["cache", "prune", "--keep-distributions"], "--keep-distributions only applies with --all"),
    (["cache", "prune", "--versions", "abc"], "'abc' is not a broker release"),
    (["cache", "prune", "--versions", "4.0.8:docker"], "is not a broker release"),
    (["cache", "prune", "--versions", ""], "--versions is empty"),
    (["cache", "prune", "--versions", "9.9.9"], "no broker release 9.9.9 is in the cache"),
    (["cache", "prune", "--versions", "3.0.7:tarball"], "cached: 3.0.7:assembled, 3.3.6:tarball, 4.0.8:tarball"),
    (["cache", "prune", "--all", "--versions", "4.0.8"], "--all already removes every broker release"),
    (["cache", "list", "--all"], "--all applies to 'cache prune'"),
])
def test_bad_input_is_refused_with_exit_2_before_anything_is_removed(root, capsys, argv, says):
    before = sorted(str(p) for p in root.rglob("*"))
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and says in err, err
    assert sorted(str(p) for p in root.rglob("*")) == before


def test_an_unknown_action_is_a_usage_error(root):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["cache", "clean"])
    assert exit_.value.code == 2


def test_a_cache_root_that_is_a_file_is_refused(tmp_path, monkeypatch, capsys):
    path = _file(tmp_path / "afile", 3)
    monkeypatch.setenv("PULSAR_CONFORMANCE_CACHE", str(path))
    assert cli.main(["cache", "list"]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    with pytest.raises(CacheCommandError):
        scan(path)


def test_a_missing_cache_root_lists_as_empty(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("PULSAR_CONFORMANCE_CACHE", str(tmp_path / "none"))
    assert cli.main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    assert "does not exist yet" in out and "total 0 B (0 bytes)" in out


# --------------------------------------------------------------------------- the broker's own disposal


def _broker_with(tmp_path: Path, cmd: list[str], **kw) -> EmbeddedBroker:
    """An EmbeddedBroker whose 'JVM' is ``cmd`` in its own process group, with a run folder."""
    run_dir = tmp_path / "runs" / "broker-4.0.8-test0001"
    _file(run_dir / "broker.log", 100)
    broker = EmbeddedBroker(cache=tmp_path, **kw)
    broker.run_dir = run_dir
    broker._proc = subprocess.Popen(cmd, start_new_session=True)
    broker._record_owner(pid=os.getpid(), broker_pid=broker._proc.pid, broker_pid_start=process_start_time(broker._proc.pid))
    return broker


def test_a_clean_stop_removes_the_run_folder(tmp_path, monkeypatch):
    monkeypatch.delenv(embedded.KEEP_RUN_DIRS_ENV, raising=False)
    broker = _broker_with(tmp_path, ["sleep", "60"])
    [entry] = [e for e in scan(tmp_path, procs=[]) if e.kind == "run"]
    assert entry.in_use and str(broker._proc.pid) in entry.in_use
    run_dir = broker.run_dir
    broker.stop()
    assert not run_dir.exists() and broker.kept_run_dir is None
    broker.stop()  # twice is harmless


def test_a_broker_that_died_before_stop_keeps_its_folder_and_says_so(tmp_path, capsys):
    said: list[str] = []
    broker = _broker_with(tmp_path, [sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"],
                          progress=said.append)
    broker._proc.wait()
    run_dir = broker.run_dir
    broker.stop()
    assert run_dir.is_dir() and broker.kept_run_dir == run_dir
    assert broker.kept_because == f"the broker (pid {broker.kept_because.split('pid ')[1].split(')')[0]}) had died (killed by signal 9) before it was stopped"
    assert said == [f"the broker's run folder {run_dir} is kept ({broker.kept_because}): broker.log and logs/ say what "
                    f"happened; 'pulsar-conformance cache prune' removes it"]
    owner = json.loads((run_dir / RUN_OWNER_FILE).read_text())
    assert owner["kept"] == broker.kept_because and owner["stopped"]
    # stopped: no longer in use though this process (its starter) lives; prune removes it
    assert [e.paths[0] for e in prune(tmp_path, procs=[]).removed] == [run_dir]


def test_a_broker_that_needs_sigkill_keeps_its_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(embedded, "STOP_GRACE_S", 0.5)
    script = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
    run_dir = tmp_path / "runs" / "broker-4.0.8-test0002"
    _file(run_dir / "broker.log", 10)
    broker = EmbeddedBroker(cache=tmp_path, progress=lambda _: None)
    broker.run_dir = run_dir
    broker._proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True, stdout=subprocess.PIPE, text=True)
    assert broker._proc.stdout.readline() == "ready\n"  # SIGTERM is ignored from here on
    broker.stop()
    assert run_dir.is_dir() and "did not stop within 0 s of SIGTERM" in broker.kept_because


def test_keep_run_dirs_setting_keeps_a_cleanly_stopped_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(embedded.KEEP_RUN_DIRS_ENV, "1")
    broker = _broker_with(tmp_path, ["sleep", "60"], progress=lambda _: None)
    broker.stop()
    assert broker.run_dir.is_dir() and embedded.KEEP_RUN_DIRS_ENV in broker.kept_because


def test_artifact_locks_are_neither_listed_nor_pruned(root):
    """The lock files of fixtures.artifact_lock (``.<artifact>.lock``) are no entries: listing them
    would show noise, and pruning one a process holds would let a newcomer make that artifact beside it."""
    locks = [_file(root / "dist" / ".4.0.8.lock", 0), _file(root / "go-driver" / ".0.19.0-def.lock", 0),
             _file(root / "tools" / ".toxiproxy-v2.5.0.lock", 0)]
    names = {e.name for e in scan(root, procs=[])}
    assert not any(name.endswith(".lock") for name in names), sorted(names)
    assert not any(e.kind in ("go-driver", "tool") and "build log" in e.name for e in scan(root, procs=[]))
    prune(root, everything=True, procs=[])
    assert all(lock.exists() for lock in locks)
