"""The token-counter protocol every langctx counter satisfies, and its text-only form."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from langchain_core.messages import BaseMessage

from langctx.tokens.estimate import count_tokens_approximately


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens in text and chat messages."""

    name: str
    """A short stable description, e.g. ``"approximate"`` or ``"tiktoken:o200k_base"``."""

    def count_text(self, text: str) -> int: ...

    def count_message(self, message: BaseMessage) -> int:
        """The tokens of one message: content, tool calls, name and per-message overhead."""

    def count_messages(self, messages: Sequence[BaseMessage]) -> int:
        """The sum of `count_message` over ``messages``."""


TextCounter = Callable[[str], int]
"""Counts the tokens of a text: a `TokenCounter`'s ``count_text``, or any such function."""


def text_counter(counter: TokenCounter | TextCounter | None) -> TextCounter:
    """``counter.count_text``, the function itself, or (None) `count_tokens_approximately`.

    Example:
        >>> text_counter(len)("abc"), text_counter(None)("")
        (3, 0)
    """
    if counter is None:
        return count_tokens_approximately
    if isinstance(counter, TokenCounter):
        return counter.count_text
    return counter


def counting_label(counter: TokenCounter) -> str:
    """What actually counts the tokens: the counter's ``name``, or ``"approximate, <name>
    unavailable"`` when its ``exact`` (or its wrapped ``inner`` counter's) is False.

    Example:
        >>> from langctx.tokens import ApproximateCounter
        >>> counting_label(ApproximateCounter())
        'approximate'
    """
    inner: Any = counter
    while not hasattr(inner, "exact") and hasattr(inner, "inner"):  # a caching wrapper
        inner = inner.inner
    if getattr(inner, "exact", True):
        return counter.name
    return f"approximate, {counter.name} unavailable"
