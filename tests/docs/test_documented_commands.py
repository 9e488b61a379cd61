"""Every command line in README.md and docs/*.md shell blocks names a real command and real options.

``pulsar-conformance ...`` lines are parsed by the command line's own parser (a synopsis line with
``[optional]`` parts is parsed with those parts left out); ``python3 -m pytest ...`` lines' options
must be ones pytest knows with this package's plugin loaded. Running them is other tests' work
(the main job: tests/live/test_main_job_diff_live.py; the installed suite and the CI recipes:
tests/packaging; the cache commands: tests/unit/test_cache_command.py); this test keeps the
documents from naming an option that does not exist, or no longer does.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = re.compile(r"^```(?:bash|sh)[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def command_lines() -> list[tuple[str, str]]:
    found = []
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        for block in SHELL.finditer(text):
            joined = block.group(1).replace("\\\n", " ")
            for line in joined.splitlines():
                line = line.split("  #", 1)[0].strip()
                for part in re.split(r"\s*(?:&&|;)\s*", line):
                    if part.startswith(("pulsar-conformance ", "python3 -m pytest ")):
                        where = f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, block.start()) + 1}"
                        found.append((where, part))
    return found


COMMANDS = command_lines()


def _without_optional_parts(line: str) -> str:
    return re.sub(r"\s*\[[^\]]*\](?:\.\.\.)?", "", line)


@pytest.mark.parametrize("where, line", [c for c in COMMANDS if c[1].startswith("pulsar-conformance ")],
                         ids=[f"{w}:{l[:50]}" for w, l in COMMANDS if l.startswith("pulsar-conformance ")])
def test_a_documented_command_parses(where, line):
    from pulsar_conformance.cli import build_parser

    argv = shlex.split(re.sub(r"\$\w+", "1", _without_optional_parts(line)))[1:]  # a shell loop's $s: a number
    if argv[0] == "report":  # the report job owns its parser: its --help lists every option it takes
        done = subprocess.run([sys.executable, "-m", "pulsar_conformance", "report", "--help"], capture_output=True,
                              text=True, timeout=120)
        unknown = [a for a in argv if a.startswith("--") and a.split("=")[0] not in done.stdout]
        assert not unknown, f"{where}: report does not take {unknown}"
        return
    try:
        build_parser().parse_args(argv)
    except SystemExit as exit_:
        pytest.fail(f"{where}: `{line}` does not parse (exit {exit_.code})")


def test_documented_pytest_options_exist():
    lines = [(w, l) for w, l in COMMANDS if l.startswith("python3 -m pytest ")]
    assert lines, "no pytest command documented: the installed suite's form should be"
    helped = subprocess.run([sys.executable, "-m", "pytest", "--help", "-p", "no:cacheprovider"], capture_output=True,
                            text=True, timeout=120, cwd=ROOT).stdout
    aliases = {"--junitxml": "--junit-xml"}  # pytest's help lists the alias's other spelling
    unknown = [(w, opt) for w, l in lines for opt in re.findall(r"(?<!\S)(--[a-z][a-z-]*)", l)
               if aliases.get(opt, opt) not in helped]
    assert not unknown, unknown


def test_there_are_documented_commands_to_check():
    assert len([c for c in COMMANDS if c[1].startswith("pulsar-conformance ")]) >= 15
