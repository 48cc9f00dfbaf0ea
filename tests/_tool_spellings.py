"""Test helper: the same tool under the names other agents give it.

``SPELLINGS`` maps a spelling's name to a function from a tool name to that spelling: an MCP
prefix (``mcp__workspace__read_file``), Goose's ``developer__`` prefix, a dotted namespace,
camelCase (``readFile``), PascalCase (``ReadFile``) and kebab-case (``read-file``).
:func:`respell` renames every tool of a batch of messages (the AI messages' calls and the tool
messages' ``name``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

__all__ = ["SPELLINGS", "respell"]

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def _words(name: str) -> list[str]:
    return [word for word in name.split("_") if word]


def _camel(name: str) -> str:
    if not _IDENTIFIER.match(name):
        return name  # a program's own name (``./rock``, ``RsaCtfTool.py``) is not re-spelled
    first, *rest = _words(name)
    return first.lower() + "".join(word.capitalize() for word in rest)


def _pascal(name: str) -> str:
    if not _IDENTIFIER.match(name):
        return name
    return "".join(word.capitalize() for word in _words(name))


def _kebab(name: str) -> str:
    if not _IDENTIFIER.match(name):
        return name
    return "-".join(word.lower() for word in _words(name))


SPELLINGS: dict[str, Callable[[str], str]] = {
    "mcp": lambda name: f"mcp__workspace__{name}",
    "goose": lambda name: f"developer__{name}",
    "dotted": lambda name: f"functions.{name}",
    "camel": _camel,
    "pascal": _pascal,
    "kebab": _kebab,
}


def respell(messages: Sequence[BaseMessage], spell: Callable[[str], str]) -> list[BaseMessage]:
    """Copies of ``messages`` with every tool name passed through ``spell``."""
    out: list[BaseMessage] = []
    for message in messages:
        if isinstance(message, AIMessage) and message.tool_calls:
            calls = [{**call, "name": spell(call["name"])} for call in message.tool_calls]
            message = message.model_copy(update={"tool_calls": calls})
        elif isinstance(message, ToolMessage) and message.name:
            message = message.model_copy(update={"name": spell(message.name)})
        out.append(message)
    return out
