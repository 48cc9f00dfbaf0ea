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


def surrogate_field(message: BaseMessage) -> str | None:
    """The field of ``message`` holding a lone surrogate (``content``, ``tool_calls``, ...), or
    None when every string in it is encodable."""
    fields = message.__dict__
    for name in ("content", "tool_calls", "invalid_tool_calls", "additional_kwargs", "name"):
        if _has_surrogate(fields.get(name)):
            return name
    return None


def _has_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        if value.isascii():
            return False
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return True
        return False
    if isinstance(value, dict):
        return any(_has_surrogate(k) or _has_surrogate(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_has_surrogate(v) for v in value)
    return False
