"""The ``/compact [focus instructions]`` command (pure, core).

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> parse_compact_command(HumanMessage("/compact keep the lexer notes"))
    'keep the lexer notes'
    >>> parse_compact_command(HumanMessage("/compact"))
    ''
    >>> parse_compact_command(HumanMessage("please /compact")) is None
    True
"""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage

__all__ = ["COMPACT_COMMAND", "parse_compact_command"]

COMPACT_COMMAND = "/compact"


def parse_compact_command(message: BaseMessage) -> str | None:
    """The focus instructions of a ``/compact`` human message ("" when none), else None."""
    if not isinstance(message, HumanMessage):
        return None
    text = message.text.strip()
    if (
        text != COMPACT_COMMAND
        and not text.startswith(COMPACT_COMMAND + " ")
        and not text.startswith(COMPACT_COMMAND + "\n")
    ):
        return None
    return text[len(COMPACT_COMMAND) :].strip()
