"""The wheel alone is the product: built from the sources, installed into a fresh virtual
environment outside the checkout, and run from an empty folder.

The venv sees the machine's site-packages for the dependencies (pyspark, pulsar-client, ...:
downloading them again would test PyPI, not us), but every one of the project's own packages must
be imported from the venv's copy: ``test_the_installed_packages_are_the_wheels`` checks that, so
nothing here can pass by reading the checkout. The suite is run in its documented form
(docs/ci-recipes.md): ``pytest --pyargs pulsar_conformance.suite``, here on the model; the same wheel
against the embedded broker, with the Python and Java clients, is the CI recipe's run
(tests/packaging/test_ci_recipes.py).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
JUNIT_XSD = ROOT / "tests" / "data" / "junit-10.xsd"
OWN_PACKAGES = ("reference_model", "conformance", "pulsar_conformance", "fixtures", "reports", "spark_reports", "drivers")
# run-time data a run reads (package-data in pyproject.toml): every tracked file under these must be in the wheel
RUNTIME_DATA = ("conformance/cases", "conformance/deviations.yaml", "conformance/deviations.d", "conformance/evidence",
                "conformance/regressions", "drivers/java", "drivers/go", "fixtures/entry_filters", "fixtures/shipped_conf")


def _source_files() -> list[str]:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode()
    return [f for f in listed.split("\0") if f and (ROOT / f).is_file()]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel pip builds from a copy of the sources (a build writes build/ and *.egg-info next to
    its sources: never into the checkout)."""
    work = tmp_path_factory.mktemp("wheel")
    src = work / "src"
    for rel in _source_files():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, src / rel)
    dist = work / "dist"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q",
                           "-w", str(dist), str(src)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    (built,) = dist.glob("pulsar_conformance-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory) -> Path:
    """A fresh venv holding the wheel (dependencies from the machine's site-packages)."""
    where = tmp_path_factory.mktemp("venv") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(where)], check=True, timeout=300)
    done = subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--force-reinstall",
                           "--disable-pip-version-check", "-q", str(wheel)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return where


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS", "PYTEST_XDIST_WORKER")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _in_empty_folder(venv: Path, folder: Path, *args: str, timeout: int = 1800) -> subprocess.CompletedProcess:
    folder.mkdir(parents=True, exist_ok=True)
    return subprocess.run([str(venv / "bin" / "python"), *args], cwd=folder, env=_env(), capture_output=True, text=True,
                          timeout=timeout)


def _valid_junit(path: Path) -> ET.Element:
    import xmlschema

    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(str(path))
    return ET.parse(path).getroot()


def test_the_wheel_carries_what_a_run_reads(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    needed = [f for f in _source_files() if f.startswith(RUNTIME_DATA) and not f.endswith(".md")]
    assert len(needed) > 500, f"only {len(needed)} run-time data files found: is RUNTIME_DATA still right?"
    missing = sorted(f for f in needed if f not in names)
    assert not missing, f"{len(missing)} files a run reads are not in the wheel (pyproject package-data), e.g. {missing[:5]}"
    assert "pulsar_conformance/suite/test_conformance_cases.py" in names


def test_the_installed_packages_are_the_wheels(venv, tmp_path):
    done = _in_empty_folder(venv, tmp_path / "empty", "-c",
                            "import importlib, sys\n"
                            f"for name in {OWN_PACKAGES!r}:\n"
                            "    print(name, importlib.import_module(name).__file__)\n")
    assert done.returncode == 0, done.stderr
    places = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    outside = {name: path for name, path in places.items() if not path.startswith(str(venv))}
    assert set(places) == set(OWN_PACKAGES) and not outside, f"imported from outside the venv: {outside}"


def test_the_suite_runs_on_the_model_from_an_empty_folder(venv, tmp_path):
    """The documented form on the model, split over two xdist workers, writes a valid JUnit file
    with every case for both clients, and nothing else into the folder it ran from."""
    folder = tmp_path / "empty"
    done = _in_empty_folder(venv, folder, "-m", "pytest", "-p", "no:cacheprovider", "--pyargs", "pulsar_conformance.suite",
                            "--target", "model", "--client", "python", "--client", "java", "--junitxml", "junit.xml",
                            "-q", "-m", "not live", "-n", "2")  # xdist: two workers share nothing but the cases
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    root = _valid_junit(folder / "junit.xml")
    cases = list(root.iter("testcase"))
    names = [c.get("name") for c in cases]
    assert len(cases) > 200 and not any(c.find("failure") is not None or c.find("error") is not None for c in cases)
    assert any(n.startswith("test_case_on_model[java-model-") for n in names)
    assert "test_case_on_model[python-model-backlog-after-seek-individual-acks-PLS-BACKLOG-001+PLS-SEEK-002]" in names
    assert sorted(p.name for p in folder.iterdir()) == ["junit.xml"], "the suite wrote into the folder it ran from"


def test_bad_options_are_refused_before_any_test(venv, tmp_path):
    done = _in_empty_folder(venv, tmp_path / "empty", "-m", "pytest", "-p", "no:cacheprovider", "--pyargs",
                            "pulsar_conformance.suite", "--target", "embedded", "--broker-version", "4.9.x")
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, done.stdout + done.stderr
    assert "--broker-version" in done.stderr and "4.9.x" in done.stderr


def test_the_command_line_runs_from_the_wheel(venv, tmp_path):
    """``run --target model`` reads the cases, the known deviations and their evidence from the wheel."""
    out = tmp_path / "out"
    done = subprocess.run([str(venv / "bin" / "pulsar-conformance"), "run", "--target", "model", "--no-report",
                           "--client", "python", "--out", str(out)], cwd=tmp_path, env=_env(), capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert (out / "summary.json").is_file() and (out / "junit.xml").is_file()
