"""What no request may carry, read from one message alone: the refusals of
:class:`~langctx.errors.InvalidMessageError` that need no other message (pairs are the log's).

Example:
    >>> from langchain_core.messages import AIMessage
    >>> refusal(AIMessage("", id="a", tool_calls=[{"name": "bash", "args": {}, "id": ""}]))[:40]
    "message 'a' has a tool call 'bash' witho"
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage

from langctx.surrogates import surrogate_field, surrogate_text

MAX_NESTING = 100
"""Levels of nested lists and dicts a message's content, tool calls or extra fields may hold."""


def refusal(message: BaseMessage) -> str | None:
    """Why ``message`` cannot be logged or sent (a one-line error message), or None."""
    if (deep := too_deep(message)) is not None:
        return (
            f"message {message.id!r} nests its {deep} more than {MAX_NESTING} levels deep, past "
            "what langctx (and a provider request's JSON) reads; flatten it first."
        )
    if (where := surrogate_field(message) or _surrogate_id(message)) is not None:
        return (
            f"message {message.id!r} holds a lone surrogate in its {where} (text decoded with "
            "errors='surrogateescape'), which no provider request can encode; decode it "
            "with errors='replace' first."
        )
    if isinstance(message, ToolMessage) and not message.tool_call_id:
        return (
            f"tool result {message.id!r} has no tool_call_id, so it answers no tool call and no "
            "provider accepts it; give it the id of the call it answers."
        )
    if (call := call_without_id(message)) is not None:
        return (
            f"message {message.id!r} has a tool call {call!r} without an id, which no tool result "
            "can answer and no provider accepts; give each tool call its id."
        )
    return None


def _surrogate_id(message: BaseMessage) -> str | None:
    """``id`` or ``tool_call_id`` when it holds a lone surrogate (an id is never rewritten)."""
    for name in ("id", "tool_call_id"):
        value = message.__dict__.get(name)
        if isinstance(value, str) and not value.isascii() and surrogate_text(value):
            return name
    return None


def call_without_id(message: BaseMessage) -> str | None:
    """The name of a tool call of ``message`` whose id is missing or empty (None: there is none)."""
    for tc in getattr(message, "tool_calls", None) or ():
        if not tc.get("id"):
            return str(tc.get("name"))[:80]
    return None


def too_deep(message: BaseMessage) -> str | None:
    """The part of ``message`` nested deeper than :data:`MAX_NESTING` (read without recursion)."""
    parts = {
        "content": message.content,
        "tool calls": getattr(message, "tool_calls", None),
        "additional_kwargs": message.additional_kwargs,
    }
    for where, value in parts.items():
        stack: list[tuple[Any, int]] = [(value, 0)]
        while stack:
            item, depth = stack.pop()
            if isinstance(item, dict | list | tuple):
                if depth > MAX_NESTING:
                    return where
                values = item.values() if isinstance(item, dict) else item
                stack.extend((v, depth + 1) for v in values)
    return None
