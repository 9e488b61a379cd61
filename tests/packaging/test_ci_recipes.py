"""The CI recipes of docs/ci-recipes.md, run as written.

Each recipe's shell commands (GitHub Actions ``run:`` steps, GitLab ``script:`` lines) run in order
with bash in a copy of the sources (what the CI checkout holds), with ``python3`` being a fresh
venv's (dependencies from the machine's site-packages). ``PYTEST_ADDOPTS`` narrows the suite to a
few cases, as the doc says users can; the commands themselves are not edited. The JUnit file the
recipe's CI would read is then validated against junit-10.xsd.
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
NARROW = "-k ack-individual"


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


@pytest.mark.live
@pytest.mark.parametrize("name", ["github", "gitlab"])
def test_a_recipe_runs_as_written(name, tmp_path):
    checkout = _checkout(tmp_path / "checkout")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_XDIST_WORKER")}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
    env["PYTEST_ADDOPTS"] = NARROW
    commands = github_commands() if name == "github" else gitlab_commands()
    # GitLab runs a job's script lines in one shell (a `cd` carries over); each GitHub step is its own shell
    scripts = ["\n".join(commands)] if name == "gitlab" else commands
    for script in scripts:
        done = subprocess.run(["bash", "-eo", "pipefail", "-c", script], cwd=checkout, env=env, capture_output=True,
                              text=True, timeout=2400)
        assert done.returncode == 0, f"{script}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    report = checkout / "reports" / "conformance.xml"
    import xmlschema

    xmlschema.XMLSchema(str(JUNIT_XSD)).validate(str(report))
    names = [c.get("name") for c in ET.parse(report).getroot().iter("testcase")]
    on_broker = [n for n in names if n.startswith("test_case_on_broker[")]
    assert {n.split("[", 1)[1].split("-", 1)[0] for n in on_broker} == {"python", "java"}, names
    assert all("-4.0.8-" in n and "PLS-" in n for n in on_broker), on_broker
    installed = subprocess.run([str(venv / "bin" / "python"), "-c", "import conformance; print(conformance.__file__)"],
                               cwd=tmp_path, env=env, capture_output=True, text=True, check=True).stdout
    assert installed.startswith(str(venv)), installed
