"""The CLI reference is complete: every command's ``--help`` works and every option is documented.

The reference is the README's "## Command line" section once it is there, else ``docs/cli.md``
(where it is written before being merged into the README). Model: sqlite-utils ``tests/test_docs.py``.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from langctx.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
HEADING = "## Command line"


def _reference() -> tuple[str, str]:
    """(where, text) of the "## Command line" section."""
    readme = ROOT / "README.md"
    for path in (readme, ROOT / "docs" / "cli.md"):
        if path.exists():
            text = path.read_text(encoding="utf-8")
            if re.search(rf"^{re.escape(HEADING)}\s*$", text, re.M):
                section = re.split(rf"^{re.escape(HEADING)}\s*$", text, maxsplit=1, flags=re.M)[1]
                section = re.split(r"^## ", section, maxsplit=1, flags=re.M)[0]
                return path.name, section
    pytest.fail(f"no {HEADING!r} section in README.md or docs/cli.md")


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
    assert f"### `langctx {name}`" in text, f"no '### `langctx {name}`' heading in {where}"
    missing = []
    for action in _commands()[name]._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        tokens = list(action.option_strings) or [str(action.metavar or action.dest)]
        missing += [t for t in tokens if not _documented(text, t)]
    assert missing == [], f"langctx {name}: {missing} not documented in {where}"


def test_no_documented_command_is_gone() -> None:
    where, text = _reference()
    documented = set(re.findall(r"^### `langctx ([\w-]+)`", text, re.M))
    assert documented == set(COMMANDS), where


def test_python_blocks_of_the_reference_run() -> None:
    where, text = _reference()
    for block in re.findall(r"```python\n(.*?)```", text, re.S):
        exec(compile(block, where, "exec"), {})
