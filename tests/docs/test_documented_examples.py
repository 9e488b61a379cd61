"""Every Python example in README.md, reference_model/README.md and docs/*.md runs, and shows what the code returns.

Each ```python block is executed as written, in a fresh namespace, from an empty working
folder (so an example that writes ``out/...`` writes there, never into the source tree). Where
an expression statement is followed by ``# -> VALUE`` (at the end of its last line, or alone on
the next line), the expression's value must equal VALUE, a Python literal; prose may follow
after ``;`` (``# -> (10000, 11000); below 10 s: ValueError``). So a documented example cannot
drift from the code: change one, and this test says which file and line disagree.

Blocks that are not meant to run (shell, output, fragments) are fenced ``bash`` or left
unlabelled, never ``python``.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [ROOT / "README.md", ROOT / "reference_model" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
SHOWN = re.compile(r"#\s*->\s*(.*)$")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # line of the block's first code line in the document
    code: str

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def python_blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    return [Block(path, text.count("\n", 0, m.start(1)) + 1, m.group(1)) for m in FENCE.finditer(text)]


BLOCKS = [b for path in DOCUMENTS for b in python_blocks(path)]


def shown_value(comment_text: str):
    """The literal after ``# ->``, up to the first ``;`` outside brackets and strings."""
    depth, end = 0, len(comment_text)
    tokens = tokenize.generate_tokens(io.StringIO(comment_text).readline)
    try:
        for tok in tokens:
            if tok.type == tokenize.OP and tok.string in "([{":
                depth += 1
            elif tok.type == tokenize.OP and tok.string in ")]}":
                depth -= 1
            elif tok.type == tokenize.OP and tok.string == ";" and depth == 0:
                end = tok.start[1]
                break
    except tokenize.TokenError:
        pass  # prose after the value may not tokenize; the value before it did
    literal = comment_text[:end].strip()
    try:
        return ast.literal_eval(literal)
    except (ValueError, SyntaxError) as err:
        raise AssertionError(f"'# -> {comment_text}': {literal!r} is not a Python literal; write "
                             "'# -> VALUE' or '# -> VALUE; prose'") from err


def expectations(code: str) -> dict[int, tuple[str, str]]:
    """For each top-level expression statement with a shown value: its index -> (source, value text)."""
    lines = code.splitlines()
    tree = ast.parse(code)
    out = {}
    for i, node in enumerate(tree.body):
        # the comment ending the statement's last line, else a comment alone on the next line
        candidates = [text for line, text in _comments(code) if line == node.end_lineno]
        nxt = node.end_lineno  # 0-based index of the line after the statement
        if nxt < len(lines) and lines[nxt].lstrip().startswith("#"):
            candidates.append(lines[nxt].lstrip())
        shown = [m.group(1) for m in map(SHOWN.search, candidates) if m]
        if not shown:
            continue
        if not isinstance(node, ast.Expr):
            raise AssertionError(f"line {node.lineno}: '# ->' follows a statement that is not an expression")
        out[i] = (ast.get_source_segment(code, node), shown[0])
    return out


def _comments(code: str) -> list[tuple[int, str]]:
    return [(tok.start[0], tok.string) for tok in tokenize.generate_tokens(io.StringIO(code).readline)
            if tok.type == tokenize.COMMENT]


def test_the_docs_have_python_examples():
    # the README's spec example at least; a fence typo would otherwise make this test vacuous
    assert any(b.path.name == "README.md" for b in BLOCKS)
    assert len(BLOCKS) >= 3, [b.id for b in BLOCKS]


def run_block(block: Block) -> list[str]:
    """Execute ``block`` statement by statement; the shown values that differ, one line each."""
    tree = ast.parse(block.code, filename=block.id)
    shown = expectations(block.code)
    namespace: dict = {"__name__": "__doc_example__"}
    wrong = []
    for i, node in enumerate(tree.body):
        where = f"{block.path.name} line {block.line + node.lineno - 1}"
        if i in shown:
            source, text = shown[i]
            value = eval(compile(ast.Expression(node.value), where, "eval"), namespace)  # noqa: S307 - our own docs
            expected = shown_value(text)
            if value != expected:
                wrong.append(f"{where}: {source}\n    shows  {expected!r}\n    is     {value!r}")
        else:
            exec(compile(ast.Module([node], type_ignores=[]), where, "exec"), namespace)  # noqa: S102 - our own docs
    return wrong


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_documented_example_runs_and_shows_the_right_values(block: Block, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    wrong = run_block(block)
    assert not wrong, "documented values differ from the code:\n" + "\n".join(wrong)


def test_a_drifted_value_is_caught():
    block = Block(ROOT / "README.md", 1, 'from reference_model.spec import java_string_hash\n'
                                         'java_string_hash("é")   # -> 233\n'
                                         'java_string_hash("e")\n# -> 233; prose\n'
                                         'x = 1  # a plain comment is not a shown value\n')
    assert run_block(block) == ['README.md line 3: java_string_hash("e")\n    shows  233\n    is     101']


def test_shown_value_reads_literal_then_prose():
    assert shown_value("(10000, 11000); below 10 s: ValueError") == (10000, 11000)
    assert shown_value("'b'; whatever the order") == "b"
    assert shown_value("{'a': 'c2'}") == {"a": "c2"}
    with pytest.raises(AssertionError, match="not a Python literal"):
        shown_value("'b', whatever the order")


def test_the_model_readme_lists_every_module_once():
    """reference_model/README.md's tables name every module of the model, so a reader who
    follows it reads the whole spec, and a new chapter cannot be added without its row."""
    text = (ROOT / "reference_model" / "README.md").read_text(encoding="utf-8")
    listed = re.findall(r"^\|[^|]*\|[^|]*\| `([\w/]+\.py)` \|", text, re.MULTILINE) + \
        re.findall(r"^\| `([\w/]+\.py)` \|", text, re.MULTILINE)
    modules = sorted(str(p.relative_to(ROOT / "reference_model")) for p in (ROOT / "reference_model").rglob("*.py")
                     if p.name != "__init__.py")
    assert sorted(set(listed)) == modules
    assert len(listed) == len(set(listed)), "a module is listed twice"
