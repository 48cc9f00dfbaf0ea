"""What the stateless engine remembers across calls: message token counts and rendered blocks.

Both are bounded LRUs keyed by content (a message's id and a fingerprint of what it holds; the
ids, levels and texts of the summaries of a block), so an entry can never describe another state:
a thread rebuilt on every call costs a lookup per message already counted, in any worker.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> from langctx.tokens import ApproximateCounter
    >>> counter = CachedCounter(ApproximateCounter(), MessageCountCache(maxsize=8))
    >>> m = HumanMessage("Fix the parser in src/parse.py", id="h1")
    >>> counter.count_message(m) == counter.count_message(m), counter.cache.misses
    (True, 1)
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from langctx.lru import LRU
from langctx.tokens import ApproximateCounter, TiktokenCounter, TokenCounter

__all__ = [
    "DEFAULT_CACHE_SIZE",
    "CachedCounter",
    "MessageCountCache",
    "counter_key",
    "shared_blocks",
    "shared_cache",
]

DEFAULT_CACHE_SIZE = 100_000
"""Message counts kept per process (about 100 bytes each)."""


class MessageCountCache:
    """A bounded LRU: (counter key, message id, content fingerprint) -> tokens, with hit counts.

    Every version of a message is its own entry, so a message and its edited or stripped views
    (same id, other content) do not evict each other.
    """

    def __init__(self, maxsize: int = DEFAULT_CACHE_SIZE) -> None:
        self.maxsize = maxsize
        self._lru = LRU[tuple[tuple[Hashable, str], int], int](maxsize)
        self.hits = 0
        self.misses = 0

    def get(self, key: tuple[Hashable, str], fingerprint: int) -> int | None:
        found = self._lru.get((key, fingerprint))
        if found is None:
            self.misses += 1
        else:
            self.hits += 1
        return found

    def put(self, key: tuple[Hashable, str], fingerprint: int, tokens: int) -> None:
        self._lru.put((key, fingerprint), tokens)

    def clear(self) -> None:
        """Forget every count (a cold worker, for benchmarks)."""
        self._lru.clear()
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._lru)


_SHARED = MessageCountCache()


_BLOCKS = LRU[Hashable, Any](256)
"""Rendered summary blocks (message, tokens) and active-summary lists, by their content."""


def shared_blocks() -> LRU[Hashable, Any]:
    """The process-wide cache of rendered summary blocks."""
    return _BLOCKS


def counter_key(counter: TokenCounter) -> Hashable:
    """What identifies a counter's counts: a built-in counter by its name and options (two alike
    count alike), any other by identity."""
    inner = counter.inner if isinstance(counter, CachedCounter) else counter
    if type(inner) in (ApproximateCounter, TiktokenCounter):
        return (
            inner.name,
            getattr(inner, "message_overhead", None),
            getattr(inner, "image_tokens", None),
        )
    return id(inner)


def shared_cache() -> MessageCountCache:
    """The process-wide cache the integrations use."""
    return _SHARED


class CachedCounter:
    """A :class:`~langctx.tokens.TokenCounter` whose message counts come from a cache when known.

    Messages without an id are counted every time. Text counts are not cached (summaries are few).
    """

    def __init__(self, inner: TokenCounter, cache: MessageCountCache | None = None) -> None:
        self.inner = inner
        self.cache = cache if cache is not None else _SHARED
        self.name = inner.name
        self._key = counter_key(inner)

    def count_text(self, text: str) -> int:
        return self.inner.count_text(text)

    def count_message(self, message: BaseMessage) -> int:
        if message.id is None:
            return self.inner.count_message(message)
        key = (self._key, message.id)
        fingerprint = _fingerprint(message)
        tokens = self.cache.get(key, fingerprint)
        if tokens is None:
            tokens = self.inner.count_message(message)
            self.cache.put(key, fingerprint, tokens)
        return tokens

    def count_messages(self, messages: Sequence[BaseMessage]) -> int:
        return sum(self.count_message(m) for m in messages)


def _fingerprint(message: BaseMessage) -> int:
    """A hash of everything a counter reads: type, content, tool calls, name, extra fields.

    String content is hashed as is (Python caches a string's hash, so a message seen again
    costs nothing); block lists, tool calls and extra fields through their ``repr``.
    """
    content = message.content
    calls = getattr(message, "tool_calls", None)
    extra = message.additional_kwargs
    return hash(
        (
            message.type,
            content if isinstance(content, str) else repr(content),
            repr(calls) if calls else None,
            message.name,
            repr(extra) if extra else None,
        )
    )
