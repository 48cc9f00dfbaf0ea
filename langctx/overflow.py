"""Recognising "the request is too long" errors from any provider: langchain-core's typed
``ContextOverflowError`` first, then patterns over the exception's type name, code and message,
through its ``__cause__`` / ``__context__`` chain (pure, core).

Example:
    >>> from langchain_core.exceptions import ContextOverflowError
    >>> is_context_overflow(ContextOverflowError("request exceeds limit"))
    True
    >>> is_context_overflow(ValueError("This model's maximum context length is 8192 tokens"))
    True
    >>> is_context_overflow(ValueError("Request too large for gpt-4o on tokens per min (TPM)"))
    False
    >>> matcher = OverflowMatcher(extra_patterns=[r"payload too big"])
    >>> matcher(RuntimeError("Payload too big for model"))
    True
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from langctx.errors import ProviderContextOverflowError

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

DEFAULT_RATE_LIMIT_PATTERNS: tuple[str, ...] = (
    r"rate[ _-]?limit",  # "rate limit reached", rate_limit_exceeded, RateLimitError
    r"tokens per (min|minute|day)",
    r"requests per (min|minute|day)",
    r"\b(TPM|RPM|TPD|RPD|ITPM|OTPM)\b",
    r"too many requests",
    r"\b429\b",
    r"quota",
    r"overloaded",  # Anthropic 529: retry later, the request itself fits
)
"""A rate limit or overload is never an overflow: compacting would not help, backing off does."""


class OverflowMatcher:
    """Decides whether an exception means "the prompt does not fit the model's window"."""

    def __init__(
        self,
        *,
        patterns: Iterable[str] = DEFAULT_OVERFLOW_PATTERNS,
        extra_patterns: Iterable[str] = (),
        rate_limit_patterns: Iterable[str] = DEFAULT_RATE_LIMIT_PATTERNS,
    ) -> None:
        self.patterns = (*patterns, *extra_patterns)
        self.rate_limit_patterns = tuple(rate_limit_patterns)
        self._regex = _compile(self.patterns)
        self._rate = _compile(self.rate_limit_patterns) if self.rate_limit_patterns else None

    def __call__(self, exc: BaseException) -> bool:
        """True when ``exc`` (or an exception it was raised from) is langchain-core's
        ``ContextOverflowError``, or says so in words and no exception of the chain is a rate
        limit."""
        chain = _chain(exc)
        if any(isinstance(e, ProviderContextOverflowError) for e in chain):
            return True
        if self.is_rate_limit(exc):
            return False
        return any(self._regex.search(_describe(e)) for e in chain)

    def is_rate_limit(self, exc: BaseException) -> bool:
        """True when ``exc`` (or an exception it was raised from) is a rate limit or overload."""
        rate = self._rate
        return any(
            getattr(e, "status_code", None) in (429, 529)
            or (rate is not None and rate.search(_describe(e)) is not None)
            for e in _chain(exc)
        )


def _compile(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


def _chain(exc: BaseException) -> list[BaseException]:
    out: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and not any(cur is e for e in out):
        out.append(cur)
        cur = cur.__cause__ or cur.__context__
    return out


def _describe(exc: BaseException) -> str:
    parts = [type(exc).__name__, str(exc)]
    if isinstance(code := getattr(exc, "code", None), str):
        parts.append(code)
    if (body := getattr(exc, "body", None)) is not None:
        parts.append(str(body))
    return " ".join(parts)


_DEFAULT = OverflowMatcher()


def is_context_overflow(exc: BaseException) -> bool:
    """True when ``exc`` says the request exceeded the model's context window (default patterns)."""
    return _DEFAULT(exc)


def is_rate_limit(exc: BaseException) -> bool:
    """True when ``exc`` is a rate limit or overload (back off and retry; do not compact)."""
    return _DEFAULT.is_rate_limit(exc)
