"""Provider content blocks valid only byte for byte and in place: thinking, reasoning, compaction.

Example:
    >>> ai = AIMessage([{"type": "thinking", "thinking": "hm", "signature": "s1"}, "Reading."])
    >>> starts_with_thinking(ai), has_thinking(ai), cut_text_blocks(ai.content, lambda t: t[:3])[1]
    (True, True, 'Rea')
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage

THINKING_BLOCK_TYPES = frozenset({"thinking", "redacted_thinking"})
"""Anthropic's signed reasoning blocks."""

_COMPACTION_TYPES = frozenset({"compaction"})
_OPAQUE_TYPES = frozenset({*THINKING_BLOCK_TYPES, "reasoning", *_COMPACTION_TYPES})

PROVIDER_COMPACTION_TOKENS = 500
"""Estimate for an encrypted provider compaction item until provider usage calibrates it."""


def _blocks(message: BaseMessage) -> list[Any]:
    return message.content if isinstance(message.content, list) else []


def _type(block: Any) -> str | None:
    return block.get("type") if isinstance(block, dict) else None


def has_thinking(message: BaseMessage) -> bool:
    """True when an AI message carries a thinking or redacted_thinking block."""
    if not isinstance(message, AIMessage):
        return False
    return any(_type(b) in THINKING_BLOCK_TYPES for b in _blocks(message))


def starts_with_thinking(message: BaseMessage) -> bool:
    """True when an AI message's first content block is thinking or redacted_thinking."""
    blocks = _blocks(message)
    return (
        isinstance(message, AIMessage) and bool(blocks) and _type(blocks[0]) in THINKING_BLOCK_TYPES
    )


def has_opaque_blocks(message: BaseMessage) -> bool:
    """True when the message holds a thinking, reasoning or compaction block (never cut)."""
    if isinstance(message, AIMessage) and "reasoning" in message.additional_kwargs:
        return True
    return any(_type(b) in _OPAQUE_TYPES for b in _blocks(message))


def is_provider_compaction(message: BaseMessage) -> bool:
    """True when the message holds a provider compaction item (Anthropic or OpenAI Responses)."""
    return any(_type(b) in _COMPACTION_TYPES for b in _blocks(message))


def cut_text_blocks(
    content: list[Any], cut: Callable[[str], str], *, any_type: bool = False
) -> list[Any]:
    """The blocks with each text block's text (or string) passed through ``cut``, others kept as
    they are; ``any_type``: every dict with a string ``text`` is a text block."""
    out: list[Any] = []
    for block in content:
        if isinstance(block, str):
            out.append(cut(block))
        elif isinstance(block, dict) and (any_type or block.get("type") == "text"):
            text = block.get("text")
            out.append({**block, "text": cut(text)} if isinstance(text, str) else block)
        else:
            out.append(block)
    return out


def strip_thinking(message: BaseMessage) -> BaseMessage:
    """The message without its thinking blocks; one left empty says so in a text block."""
    if not has_thinking(message):
        return message
    kept = [b for b in _blocks(message) if _type(b) not in THINKING_BLOCK_TYPES]
    if not kept and not getattr(message, "tool_calls", None):
        kept = [{"type": "text", "text": "(reasoning omitted)"}]
    return message.model_copy(update={"content": kept})
