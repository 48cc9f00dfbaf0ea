"""Recognising "the request is too long" errors from any provider (pure, core).

Providers say it differently; the matcher is a list of patterns over the exception's type name,
code and message, and users can add their own.

Example:
    >>> is_context_overflow(ValueError("This model's maximum context length is 8192 tokens"))
    True
    >>> is_context_overflow(ValueError("rate limit exceeded"))
    False
    >>> matcher = OverflowMatcher(extra_patterns=[r"payload too big"])
    >>> matcher(RuntimeError("Payload too big for model"))
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["DEFAULT_OVERFLOW_PATTERNS", "OverflowMatcher", "is_context_overflow"]

DEFAULT_OVERFLOW_PATTERNS: tuple[str, ...] = (
    r"context_length_exceeded",  # OpenAI error code
    r"maximum context length",  # OpenAI message
    r"prompt is too long",  # Anthropic
    r"input is too long",  # Bedrock / Anthropic on Bedrock
    r"too many (input )?tokens",
    r"exceeds? the (model'?s? )?(maximum )?context (window|length|limit)",
    r"context (window|length) (is |was )?exceeded",
    r"input token count .* exceeds",  # Gemini
    r"request too large",
    r"reduce the length of the messages",
    r"string too long",
    r"longer than the model'?s? context length",  # vLLM / TGI
    r"tokens? (limit|length) exceeded",
    r"model_context_window_exceeded",
)


class OverflowMatcher:
    """Decides whether an exception means "the prompt does not fit the model's window"."""

    def __init__(
        self,
        *,
        patterns: Iterable[str] = DEFAULT_OVERFLOW_PATTERNS,
        extra_patterns: Iterable[str] = (),
    ) -> None:
        self.patterns = (*patterns, *extra_patterns)
        self._regex = re.compile("|".join(f"(?:{p})" for p in self.patterns), re.IGNORECASE)

    def __call__(self, exc: BaseException) -> bool:
        """True when ``exc`` (or an exception it was raised from) is a context overflow."""
        seen: set[int] = set()
        cur: BaseException | None = exc
        while cur is not None and id(cur) not in seen:
            seen.add(id(cur))
            if self._match_one(cur):
                return True
            cur = cur.__cause__ or cur.__context__
        return False

    def _match_one(self, exc: BaseException) -> bool:
        parts = [type(exc).__name__, str(exc)]
        code = getattr(exc, "code", None)
        if isinstance(code, str):
            parts.append(code)
        body = getattr(exc, "body", None)
        if body is not None:
            parts.append(str(body))
        return bool(self._regex.search(" ".join(parts)))


_DEFAULT = OverflowMatcher()


def is_context_overflow(exc: BaseException) -> bool:
    """True when ``exc`` says the request exceeded the model's context window (default patterns)."""
    return _DEFAULT(exc)
