"""The examples of `langctx.facts.tools`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.facts.tools import command_tool_set


def test_command_tool_set() -> None:
    assert sorted(command_tool_set(["bash", "runner"])) == ["bash", "runner"]
