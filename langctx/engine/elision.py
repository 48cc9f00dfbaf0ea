"""Long tool-call arguments elided in place: a file written, an edit's text, a patch.

A placeholder edit of an AI message keeps each call's shape (every key, short values, paths) and
replaces the middle of each long string by a note of its size; the provider blocks that repeat
the arguments get the same values.

Example:
    >>> out = elide_args({"path": "a.py", "content": "x" * 1000})
    >>> out["path"], len(out["content"]) < 1000, "elided" in out["content"]
    ('a.py', True, True)
"""

from __future__ import annotations

import json
from typing import Any

from langctx.markers import ARGS_PLACEHOLDER_MARK

__all__ = ["ELIDED_ARG_CHARS", "elide_args", "with_call_args"]

ELIDED_ARG_CHARS = 400
"""String arguments of a tool call longer than this are elided by a placeholder edit."""
ELIDED_HEAD, ELIDED_TAIL = 160, 80
"""Characters of an elided argument kept before and after the note."""


def elide_args(value: Any) -> Any:
    """Tool-call arguments with every string longer than :data:`ELIDED_ARG_CHARS` cut to its
    head and tail around a note of what was cut (same shape: paths and short values stay)."""
    if isinstance(value, str):
        if len(value) <= ELIDED_ARG_CHARS:
            return value
        cut = len(value) - ELIDED_HEAD - ELIDED_TAIL
        return (
            f"{value[:ELIDED_HEAD]}\n{ARGS_PLACEHOLDER_MARK} {cut} chars]\n{value[-ELIDED_TAIL:]}"
        )
    if isinstance(value, dict):
        return {k: elide_args(v) for k, v in value.items()}
    if isinstance(value, list):
        return [elide_args(v) for v in value]
    return value


def with_call_args(content: str | list[Any], args: dict[str, Any]) -> str | list[Any]:
    """``content`` whose blocks carry the new ``args`` of their call (by call id): Anthropic
    ``tool_use`` inputs, OpenAI Responses ``function_call`` arguments, LangChain ``tool_call``
    blocks."""
    if isinstance(content, str):
        return content
    return [_elided_block(b, args) for b in content]


def _elided_block(block: Any, args: dict[str, Any]) -> Any:
    if not isinstance(block, dict):
        return block
    if block.get("type") == "tool_use" and block.get("id") in args:
        return {**block, "input": args[block["id"]]}
    if block.get("type") == "tool_call" and block.get("id") in args:  # LangChain's v1 blocks
        return {**block, "args": args[block["id"]]}
    if block.get("type") == "function_call" and block.get("call_id") in args:
        return {**block, "arguments": json.dumps(args[block["call_id"]], ensure_ascii=False)}
    return block
