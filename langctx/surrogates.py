"""Lone surrogates (``"\\ud800"``): valid ``str`` that no provider request can encode as UTF-8.

Example:
    >>> from langchain_core.messages import ToolMessage
    >>> surrogate_field(ToolMessage("ok \\ud800", tool_call_id="c1"))
    'content'
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

_FIELDS = ("content", "tool_calls", "invalid_tool_calls", "additional_kwargs", "name")


def surrogate_field(message: BaseMessage) -> str | None:
    """The field of ``message`` holding a lone surrogate (``content``, ``name``...), or None."""
    fields = message.__dict__
    return next((name for name in _FIELDS if _has_surrogate(fields.get(name))), None)


def surrogate_text(text: str) -> bool:
    """True when ``text`` holds a lone surrogate."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _has_surrogate(value: Any) -> bool:
    """True when a string in ``value`` (nested, dict keys too) has a lone surrogate."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if not v.isascii() and surrogate_text(v):
                return True
        elif isinstance(v, dict):
            stack.extend([*v, *v.values()])
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return False


def replace_surrogates(message: BaseMessage) -> BaseMessage:
    """A copy of ``message`` with every lone surrogate in its fields written as its escape."""
    fields = message.__dict__
    update = {name: _replaced(fields[name]) for name in _FIELDS if fields.get(name)}
    return message.model_copy(update=update)


def encodable_text(text: str) -> str:
    """``text`` with each lone surrogate written as its escape (``text`` itself when it has none)."""
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _replaced(value: Any) -> Any:
    if isinstance(value, str):
        return encodable_text(value)
    if isinstance(value, dict):
        return {_replaced(k): _replaced(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(_replaced(v) for v in value)
    return value
