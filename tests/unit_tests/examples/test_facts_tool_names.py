"""The examples of `langctx.facts.tool_names`'s helpers, moved here from their docstrings."""

from __future__ import annotations

from langctx.facts.tool_names import tool_base_name, tool_name_forms


def test_tool_base_name() -> None:
    assert (
        tool_base_name("mcp__shell__run_command"),
        tool_base_name("fs/read"),
        tool_base_name("Bash"),
    ) == ("run_command", "read", "Bash")


def test_tool_name_forms() -> None:
    assert tool_name_forms("mcp__x__MultiEdit") == (
        "mcp__x__MultiEdit",
        "mcp__x__multiedit",
        "MultiEdit",
        "multiedit",
        "multi_edit",
    )
