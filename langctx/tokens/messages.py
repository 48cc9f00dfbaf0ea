"""Counting chat messages: what a message costs besides its text, and the per-message cache.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> class Chars(MessageCounter):
    ...     name = "chars"
    ...     def count_text(self, text: str) -> int:
    ...         return len(text)
    >>> Chars().count_message(HumanMessage("hello")) == 5 + MESSAGE_OVERHEAD_TOKENS
    True
"""

from __future__ import annotations

import json
from collections.abc import Hashable, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from langctx.blocks import PROVIDER_COMPACTION_TOKENS
from langctx.errors import ConfigError, InvalidMessageError
from langctx.lru import LRU

DEFAULT_CACHE_SIZE = 100_000
"""How many per-message counts a counter remembers (least recently used are dropped)."""

MESSAGE_OVERHEAD_TOKENS = 3
"""Tokens every message costs besides its text (role and delimiters)."""

IMAGE_TOKENS = 85
"""Fixed cost of one image block (OpenAI's low-detail image price; base64 data is not text)."""

TOOL_CALL_OVERHEAD_TOKENS = 3
"""Tokens per tool call besides its name and JSON arguments (call id and framing)."""

TOOL_RESULT_OVERHEAD_TOKENS = 3
"""Tokens a `ToolMessage` costs for its ``tool_call_id``."""

_IMAGE_BLOCK_TYPES = frozenset({"image", "image_url", "input_image"})
_TEXT_BLOCK_TYPES = frozenset({"text", "reasoning", "thinking"})  # text under the type's key
_TOOL_CALL_BLOCK_TYPES = frozenset({"tool_use", "tool_call", "function_call"})
_OPAQUE_BLOB_TYPES = frozenset({"compaction", "redacted_thinking", "reasoning"})


def _hash_value(value: Any) -> int:
    """Hash a JSON-like value (strings cache their hash)."""
    if isinstance(value, str | int | float | bool) or value is None:
        return hash((type(value), value))
    if isinstance(value, dict):
        return hash(("dict", *((str(k), _hash_value(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return hash(("list", *(_hash_value(v) for v in value)))
    return hash(("repr", repr(value)))


def _message_key(message: BaseMessage) -> Hashable:
    """A cache key holding hashes only, so it never keeps a large content string alive."""
    content = message.content
    content_key = (
        (len(content), hash(content)) if isinstance(content, str) else _hash_value(content)
    )
    extra: tuple[Any, ...] = ()
    if isinstance(message, AIMessage) and (message.tool_calls or message.invalid_tool_calls):
        extra = (_hash_value(message.tool_calls), _hash_value(message.invalid_tool_calls))
    elif isinstance(message, ToolMessage):
        extra = (message.tool_call_id,)
    return (message.id, message.type, message.name, content_key, extra)


# json.dumps with options builds an encoder per call
_to_json = json.JSONEncoder(ensure_ascii=False, default=str).encode


class MessageCounter:
    """Shared message logic: split a message into text and fixed costs, cache the result.

    Args:
        cache_size: how many per-message counts to remember.
        message_overhead: tokens added per message besides its text.
        image_tokens: tokens per image block.
    """

    name: str

    def __init__(
        self,
        *,
        cache_size: int = DEFAULT_CACHE_SIZE,
        message_overhead: int = MESSAGE_OVERHEAD_TOKENS,
        image_tokens: int = IMAGE_TOKENS,
    ) -> None:
        for option, value in (
            ("cache_size", cache_size),
            ("message_overhead", message_overhead),
            ("image_tokens", image_tokens),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                msg = f"{option} must be a non-negative int, got {value!r}. Pass e.g. {option}=0."
                raise ConfigError(msg)
        self.message_overhead = message_overhead
        self.image_tokens = image_tokens
        self._cache = LRU[Hashable, int](cache_size)

    def count_text(self, text: str) -> int:  # pragma: no cover - every subclass overrides it
        raise NotImplementedError

    def count_message(self, message: BaseMessage) -> int:
        """The tokens of ``message`` (cached): content (images as ``image_tokens``, other blocks
        as JSON), tool calls' names and JSON arguments, the ``name`` and the overheads.

        Raises:
            InvalidMessageError: ``message`` is not a langchain-core message.
        """
        if not isinstance(message, BaseMessage):
            msg = (
                f"count_message expects a langchain BaseMessage, got {type(message).__name__}. "
                "Convert it first with langchain_core.messages.convert_to_messages."
            )
            raise InvalidMessageError(msg)
        key = _message_key(message)
        count = self._cache.get(key)
        if count is None:
            count = self._count_uncached(message)
            self._cache.put(key, count)
        return count

    def count_uncached(self, message: BaseMessage) -> int:
        """`count_message` without this counter's cache (for a caller that caches the count)."""
        if not isinstance(message, BaseMessage):
            return self.count_message(message)  # its error
        return self._count_uncached(message)

    def count_messages(self, messages: Sequence[BaseMessage]) -> int:
        """The sum of `count_message` over ``messages``."""
        return sum(self.count_message(message) for message in messages)

    def clear_cache(self) -> None:
        """Forget every cached per-message count."""
        self._cache.clear()

    def _count_uncached(self, message: BaseMessage) -> int:
        total = self.message_overhead
        calls: list[tuple[str, str]] = []  # (name, JSON arguments) of each call, invalid ones too
        tool_call_ids: set[str] = set()
        if isinstance(message, AIMessage):
            calls = [(c["name"], _to_json(c["args"])) for c in message.tool_calls]
            calls += [
                (c.get("name") or "", c.get("args") or "") for c in message.invalid_tool_calls
            ]
            tool_call_ids = {str(c["id"]) for c in message.tool_calls if c.get("id")}
        elif isinstance(message, ToolMessage):
            total += TOOL_RESULT_OVERHEAD_TOKENS
        for name, args in calls:
            total += TOOL_CALL_OVERHEAD_TOKENS + self.count_text(name) + self.count_text(args)
        if message.name:
            total += 1 + self.count_text(message.name)
        if isinstance(message.content, str):
            return total + self.count_text(message.content)
        return total + sum(self._count_block(block, tool_call_ids) for block in message.content)

    def _count_block(self, block: Any, tool_call_ids: set[str]) -> int:
        if isinstance(block, str):
            return self.count_text(block)
        if not isinstance(block, dict):
            return self.count_text(_to_json(block))
        block_type = block.get("type")
        if block_type in _IMAGE_BLOCK_TYPES:
            return self.image_tokens
        if block_type in _TOOL_CALL_BLOCK_TYPES and str(block.get("id")) in tool_call_ids:
            return 0  # the same call is in message.tool_calls (Anthropic format): count it once
        if block_type in _TEXT_BLOCK_TYPES:
            text = block.get(block_type, block.get("text"))
            if isinstance(text, str):
                return self.count_text(text)
        if block_type in _OPAQUE_BLOB_TYPES:
            return self._count_opaque(block)
        return self.count_text(_to_json(block))

    def _count_opaque(self, block: dict[str, Any]) -> int:
        """Signed or encrypted blocks: their readable text (``content``, a reasoning summary), else
        `PROVIDER_COMPACTION_TOKENS`; never the blob's length."""
        content = block.get("content")
        texts = [content] if isinstance(content, str) else []
        texts += [
            part["text"]
            for part in block.get("summary") or []
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        return sum(map(self.count_text, texts)) if texts else PROVIDER_COMPACTION_TOKENS
