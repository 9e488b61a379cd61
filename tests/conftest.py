"""The repository's own test run: the conformance suite with every client.

A user's ``pytest --pyargs pulsar_conformance.suite`` defaults to python, java and mixed; the
repository's run (tests/conformance/test_cases.py imports that suite) also drives the Go client,
unless ``--client`` was given. Set here, not in pyproject's addopts: those would also apply to a
user's run of the installed suite from inside a checkout (the CI recipes do exactly that).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Callable

import pytest

EVERY_CLIENT = ["python", "java", "go", "mixed"]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("pulsar_clients", default=None):
        config.option.pulsar_clients = list(EVERY_CLIENT)


# The fixtures that reach a live broker (conformance/plugin.py): a test that asks for one of them,
# directly or through another fixture, is live whatever its module says, so the deterministic tier
# (`-m "not live"`, .ci/run) never starts a broker by accident.
BROKER_FIXTURES = frozenset({"pulsar_broker", "pulsar_admin", "pulsar_namespace", "pulsar_client", "topic",
                             "live_target", "live_target_for", "calibrated_target_for", "fault_target"})


# The modules that take longest (test time of each tier measured on 3 Dec 2026, docs/ci.md), longest first.
# .ci/run hands whole modules to its two workers (`--dist loadfile --no-loadscope-reorder`), so a module's
# fixtures (a Spark cluster, a broker behind the fault proxy, the main job) are built once, not once per
# worker; handed out longest first, the last module to start is a short one and both workers end together.
LONGEST_FIRST = (
    # the live tier
    "tests/conformance/test_cases.py", "tests/live/test_faults_live.py", "tests/live/test_broker_death.py",
    "tests/fuzz/test_regressions.py", "tests/live/test_main_job_diff_live.py", "tests/live/test_tdmq_profile_live.py",
    "tests/live/test_cache_hygiene.py", "tests/packaging/test_ci_recipes.py", "tests/live/test_key_shared_live.py",
    "tests/live/test_broker_lifecycle.py", "tests/live/test_fuzz_clients_live.py",
    # the gate
    "tests/reports/test_html_report_browser.py", "tests/fuzz/test_interrupt_resume.py", "tests/spark/test_spark_cluster.py",
    "tests/spark/test_spark_engine.py", "tests/spark/test_spark_generated_corpus.py", "tests/packaging/test_installed_wheel.py",
    "tests/spark/test_spark_clients.py", "tests/spark/test_spark_transforms.py", "tests/unit/test_bad_input.py",
    "tests/fuzz/test_output_paths.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if BROKER_FIXTURES & set(getattr(item, "fixturenames", ())) and not item.get_closest_marker("live"):
            item.add_marker(pytest.mark.live)
    rank = {path: i for i, path in enumerate(LONGEST_FIRST)}
    root = Path(str(config.rootpath))

    def module_rank(item: pytest.Item) -> int:
        try:
            return rank.get(Path(str(item.path)).relative_to(root).as_posix(), len(rank))
        except ValueError:
            return len(rank)

    items.sort(key=module_rank)  # stable: the rest keep their collection order


@pytest.fixture(scope="session")
def built_once(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str, Callable[[Path], None]], Path]:
    """``built_once(name, make)``: the folder ``make`` filled, made once per test run and shared by its
    pytest-xdist workers (the first takes a lock and builds; the others wait and read it). .ci/run hands
    whole modules to its workers (``--dist loadfile``), and the tests over one costly artefact (the
    100,000-row corpus, which report and Spark modules share) sit in several modules (docs/ci.md).
    A build that fails leaves no completion mark: the next test to ask builds it again."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's own base folder, the parent of every worker's

    def build(name: str, make: Callable[[Path], None]) -> Path:
        folder, complete = root / f"built-once-{name}", root / f"built-once-{name}.complete"
        with open(root / f"built-once-{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not complete.exists():
                shutil.rmtree(folder, ignore_errors=True)
                folder.mkdir()
                make(folder)
                complete.touch()
        return folder

    return build


@pytest.fixture(scope="session")
def generated_corpus(built_once) -> tuple[Path, dict]:
    """A corpus of 100,000 rows the generator made from the model, with injected divergences (seed 5, 1 %
    sporadic), and its manifest: built once per run for the report tests and the Spark tests
    (``spark_reports.generate``; the figures for 10 M rows are ``benchmarks/spark_report_10m.py``'s)."""
    from spark_reports.generate import GenerateConfig, generate

    folder = built_once("generated-corpus", lambda out: generate(out, GenerateConfig(rows=100_000, seed=5, sporadic_rate=0.01)))
    return folder, json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def fault_target():
    """A 4.0.8 broker behind the fault proxy (``fixtures/faults.py``: Toxiproxy between the clients
    and the broker; ``restart_broker`` restarts it on its own data), judged with bands measured through
    the proxy (``conformance.plugin.bands_measured_on``). The session broker of the other live tests
    has no proxy, and a fault op needs one."""
    from conformance.plugin import bands_measured_on
    from conformance.targets.pulsar import BrokerTarget
    from fixtures.embedded import EmbeddedBroker

    broker = EmbeddedBroker(faults=True)
    endpoint = broker.start()
    target = BrokerTarget(endpoint)
    try:
        target.timing = bands_measured_on(endpoint, target)
        yield target
    finally:
        target.close()
        broker.stop()
