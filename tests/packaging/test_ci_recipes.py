"""The CI recipes of docs/ci-recipes.md, run as written.

The GitHub recipe's shell commands (its ``run:`` steps) run in order with bash in a copy of the sources
(what the CI checkout holds), with ``python3`` being a fresh venv's (dependencies from the machine's
site-packages). ``PYTEST_ADDOPTS`` narrows the suite to a few cases, a known deviation among them, as
the doc says users can; the commands themselves are not edited. The JUnit file the recipe's CI would
read is then validated against junit-10.xsd. The GitLab recipe's ``script:`` is the same commands in
one shell (``test_the_gitlab_script_is_the_github_steps``), so that one run stands for both: each
took 80 s of CI's live tier, as did a third run of the same wheel against the broker
(tests/packaging/test_installed_wheel.py had one; its checks are here now).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ci-recipes.md"
JUNIT_XSD = ROOT / "tests" / "data" / "junit-10.xsd"
# a slice of the cases: a known deviation (KD-001, an xfail naming its id) and cases both clients pass
CHOSEN = "backlog-after-seek-individual-acks or ack-individual or ack-cumulative-failover or redelivery-count"
NARROW = f"-k '{CHOSEN}'"


def recipe(name: str) -> dict:
    text = DOC.read_text(encoding="utf-8")
    m = re.search(rf"<!-- recipe: {name} -->\s*```yaml\n(.*?)```", text, re.DOTALL)
    assert m, f"docs/ci-recipes.md has no '<!-- recipe: {name} -->' yaml block"
    return yaml.safe_load(m.group(1))


def github_commands() -> list[str]:
    (job,) = recipe("github")["jobs"].values()
    return [step["run"] for step in job["steps"] if "run" in step]


def gitlab_commands() -> list[str]:
    return list(recipe("gitlab")["conformance"]["script"])


def test_the_recipes_set_up_what_the_suite_needs():
    from fixtures.embedded import cache_root

    (job,) = recipe("github")["jobs"].values()
    uses = {step["uses"].split("@")[0]: step.get("with", {}) for step in job["steps"] if "uses" in step}
    assert uses["actions/setup-python"]["python-version"] == "3.11"
    assert uses["actions/setup-java"]["java-version"] == "17"
    default_cache = Path("~/.cache/pulsar-conformance")
    assert Path(uses["actions/cache"]["path"]) == default_cache
    if not os.environ.get("PULSAR_CONFORMANCE_CACHE") and not os.environ.get("XDG_CACHE_HOME"):
        assert cache_root() == default_cache.expanduser()  # the folder the recipe caches is the one the suite fills
    gitlab = recipe("gitlab")["conformance"]
    assert any("openjdk-17" in line and "maven" in line for line in gitlab["before_script"])
    assert gitlab["variables"]["PULSAR_CONFORMANCE_CACHE"].endswith(gitlab["cache"]["paths"][0])
    assert gitlab["artifacts"]["reports"]["junit"] == "reports/conformance.xml"
    uploaded = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact"))
    assert uploaded["with"]["path"] == "reports/conformance.xml"


def _checkout(where: Path) -> Path:
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode()
    for rel in filter(None, listed.split("\0")):
        if (ROOT / rel).is_file():
            (where / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, where / rel)
    return where


def _lines(commands: list[str]) -> list[str]:
    return [line.strip() for command in commands for line in command.splitlines() if line.strip()]


def test_the_gitlab_script_is_the_github_steps():
    """GitLab runs a job's script lines in one shell (a ``cd`` carries over), each GitHub step is its own
    shell, and each step that changes folder does so before its own commands: the same lines in the same
    order are the same run, and the live test runs them once."""
    assert _lines(gitlab_commands()) == _lines(github_commands())
    assert all("cd " not in step.splitlines()[-1] for step in github_commands()), "a step ending in cd changes nothing"


@pytest.mark.live
def test_the_recipe_runs_as_written(tmp_path):
    checkout = _checkout(tmp_path / "checkout")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_XDIST_WORKER")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    env["PYTEST_ADDOPTS"] = NARROW
    for script in github_commands():
        done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=checkout, env=env, capture_output=True,
                              text=True, timeout=2400)
        assert done.returncode == 0, f"{script}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    report = checkout / "reports" / "conformance.xml"
    import xmlschema

    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(str(report))
    cases = {c.get("name"): c for c in ET.parse(report).getroot().iter("testcase")}
    names = list(cases)
    on_broker = [n for n in names if n.startswith("test_case_on_broker[")]
    assert {n.split("[", 1)[1].split("-", 1)[0] for n in on_broker} == {"python", "java"}, names
    assert all("-4.0.8-" in n and "PLS-" in n for n in on_broker), on_broker
    kd = cases["test_case_on_broker[python-4.0.8-backlog-after-seek-individual-acks-PLS-BACKLOG-001+PLS-SEEK-002]"]
    skipped = kd.find("skipped")
    assert skipped is not None and "KD-001" in skipped.get("message", ""), ET.tostring(kd, encoding="unicode")
    passed = [n for n in on_broker if len(cases[n]) == 0]
    assert len(passed) >= 4, f"expected passing cases on both clients, got {sorted(on_broker)}"
    installed = subprocess.run([str(venv / "bin" / "python"), "-c", "import conformance; print(conformance.__file__)"],
                               cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
    assert installed.startswith(str(venv)), installed
