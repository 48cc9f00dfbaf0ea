"""The CLI reference is complete: every command's ``--help`` works and every option is documented.

The reference is ``docs/cli.md`` (the README names it), one ``## `langctx COMMAND``` section per
command. Model: sqlite-utils ``tests/test_docs.py``.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from langctx.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "cli.md"
HEADING = "# Command line"


def _reference() -> tuple[str, str]:
    """(where, text) of the CLI reference, ``docs/cli.md``."""
    if not REFERENCE.exists():
        pytest.fail("no docs/cli.md")
    text = REFERENCE.read_text(encoding="utf-8")
    if not re.search(rf"^{re.escape(HEADING)}\s*$", text, re.M):
        pytest.fail(f"docs/cli.md does not start with {HEADING!r}")
    return "docs/cli.md", text


def test_the_readme_points_at_the_reference() -> None:
    assert "`docs/cli.md`" in (ROOT / "README.md").read_text(encoding="utf-8")


def _commands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    pytest.fail("the parser has no subcommands")


def _documented(text: str, token: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", text) is not None


COMMANDS = sorted(_commands())


def test_top_level_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: langctx")
    for name in COMMANDS:
        assert name in out


@pytest.mark.parametrize("name", COMMANDS)
def test_help_works(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args([name, "--help"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: langctx {name}")


@pytest.mark.parametrize("name", COMMANDS)
def test_command_and_every_option_are_documented(name: str) -> None:
    where, text = _reference()
    assert re.search(rf"^## `langctx {name}`\s*$", text, re.M), (
        f"no '## `langctx {name}`' heading in {where}"
    )
    section = re.split(rf"^## `langctx {name}`\s*$", text, maxsplit=1, flags=re.M)[1]
    section = re.split(r"^## ", section, maxsplit=1, flags=re.M)[0]
    missing = []
    for action in _commands()[name]._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        tokens = list(action.option_strings) or [str(action.metavar or action.dest)]
        missing += [t for t in tokens if not _documented(section, t)]
    assert missing == [], f"langctx {name}: {missing} not documented in its section of {where}"


def test_no_documented_command_is_gone() -> None:
    where, text = _reference()
    documented = set(re.findall(r"^## `langctx ([\w-]+)`", text, re.M))
    assert documented == set(COMMANDS), where


def test_python_blocks_of_the_reference_run() -> None:
    where, text = _reference()
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        exec(compile(block, where, "exec"), {})


_FENCE = re.compile(r"^```(?P<lang>[\w-]*)[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
_INVOCATION = re.compile(
    r"(?:^|(?<=[\s`(]))(?<!from )(?<!import )langctx\s+(?P<command>[a-z][\w-]*)(?=\s|$)"
)


def _invocations(text: str) -> list[tuple[str, list[str]]]:
    """(command, options) of each ``langctx COMMAND ...`` in a shell line (comment cut off,
    ``&&`` / ``|`` / ``;`` split), an inline code span, or a usage block."""
    found = []
    for piece in re.split(r"&&|\|\||;|\n", text):
        piece = piece.split(" #")[0]
        m = _INVOCATION.search(piece)
        if m:
            found.append((m["command"], re.findall(r"(?<![\w-])--[\w-]+", piece[m.end() :])))
    return found


def _doc_invocations() -> list[tuple[str, str, list[str]]]:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    found = []
    for path in pages:
        text = path.read_text(encoding="utf-8")
        code = [
            m["body"] for m in _FENCE.finditer(text) if m["lang"] in ("", "bash", "sh", "console")
        ]
        code += re.findall(r"`([^`\n]+)`", _FENCE.sub("", text))
        for snippet in code:
            for command, options in _invocations(snippet):
                found.append((path.name, command, options))
    return found


def test_documented_invocations_name_real_commands_and_options() -> None:
    """Every ``langctx COMMAND --option`` the README and docs/ show (shell blocks, usage blocks,
    code spans) names a command the CLI has and options that command takes."""
    commands = _commands()
    wrong = []
    for page, command, options in _doc_invocations():
        if command not in commands:
            wrong.append(f"{page}: langctx {command}")
            continue
        known = {o for a in commands[command]._actions for o in a.option_strings}
        wrong += [f"{page}: langctx {command} {o}" for o in options if o not in known]
    assert wrong == []
    assert len(_doc_invocations()) > 15


def test_the_invocation_parser() -> None:
    assert _invocations(
        "langctx demo --db demo.sqlite && langctx inspect --db demo.sqlite  # --x"
    ) == [
        ("demo", ["--db"]),
        ("inspect", ["--db"]),
    ]
    assert _invocations("langctx inspect: thread 'node-thread'") == []
    assert _invocations("pip install 'langctx[cli]'") == []
    assert _invocations("from langctx import LangctxMiddleware") == []
