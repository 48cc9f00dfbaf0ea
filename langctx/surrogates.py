"""Lone surrogates: text a provider request cannot encode, refused where messages enter.

A lone surrogate (``"\\ud800"``) is a valid Python ``str`` but not valid UTF-8; it comes from
bytes decoded with ``errors="surrogateescape"``. JSON encoders of the provider SDKs fail on it,
so langctx refuses such a message when it is added (:class:`~langctx.InvalidMessageError`) instead
of storing what can never be sent. Decode tool output with ``errors="replace"`` (Context-mode's
tool wrapper does).

Example:
    >>> from langchain_core.messages import ToolMessage
    >>> surrogate_field(ToolMessage("ok \\ud800", tool_call_id="c1"))
    'content'
    >>> surrogate_field(ToolMessage("ok", tool_call_id="c1")) is None
    True
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

__all__ = ["surrogate_field"]


_FIELDS = ("content", "tool_calls", "invalid_tool_calls", "additional_kwargs", "name")


def surrogate_field(message: BaseMessage) -> str | None:
    """The field of ``message`` holding a lone surrogate (``content``, ``tool_calls``, ...), or
    None when every string in it is encodable."""
    fields = message.__dict__
    for name in _FIELDS:
        value = fields.get(name)
        if not value or (isinstance(value, str) and value.isascii()):
            continue
        if _has_surrogate(value):
            return name
    return None


def _has_surrogate(value: Any) -> bool:
    """True when a string in ``value`` (nested dicts, lists and tuples; keys too) has a lone
    surrogate. Iterative: a message's fields are walked without a call per value."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            if not v.isascii():
                try:
                    v.encode("utf-8")
                except UnicodeEncodeError:
                    return True
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
    return False
