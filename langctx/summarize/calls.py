"""Calling a summarizer: a deadline, and nothing but text accepted as its answer.

Example:
    >>> from langctx.summarize.request import CallableSummarizer, SummaryRequest
    >>> call_summarizer(CallableSummarizer(lambda r: " Goal: x "), SummaryRequest(kind="turns"), timeout=5)
    'Goal: x'
"""

from __future__ import annotations

import logging
import threading

from langchain_core.messages import BaseMessage

from langctx.errors import ConfigError, SummarizerError
from langctx.summarize.request import Summarizer, SummaryRequest
from langctx.timeouts import acall_with_timeout, call_with_timeout

logger = logging.getLogger("langctx")

_warned: set[str] = set()
_warned_lock = threading.Lock()
_MAX_KINDS = 64


def summary_text(answer: object) -> str:
    """The text of a summarizer's (or its model's) answer, stripped.

    Raises:
        ConfigError: the answer is not a str or a chat message (no fallback: it can never work).
        SummarizerError: the answer holds no text (the caller falls back on it).

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> summary_text(AIMessage(" Goal: fix it. ")), summary_text(" x ")
        ('Goal: fix it.', 'x')
        >>> summary_text({"summary": "x"})
        Traceback (most recent call last):
        ...
        langctx.errors.ConfigError: the summarizer returned a dict, not text; make it return a str or a chat message.
    """
    if isinstance(answer, BaseMessage):
        text = str(answer.text)
    elif isinstance(answer, str):
        text = answer
    else:
        msg = (
            f"the summarizer returned a {type(answer).__name__}, not text; "
            "make it return a str or a chat message."
        )
        raise ConfigError(msg)
    text = text.strip()
    if not text:
        msg = "the summarizer returned no text; check the model and its prompt."
        raise SummarizerError(msg)
    return text


def call_summarizer(
    summarizer: Summarizer, request: SummaryRequest, *, timeout: float | None
) -> str:
    """``summarizer.summarize(request)`` within ``timeout`` seconds (None: no limit), as text.

    Raises:
        GuardTimeoutError: no answer in time (a ``TimeoutError``; the call is left to finish).
    """
    return summary_text(call_with_timeout(lambda: summarizer.summarize(request), timeout))


async def acall_summarizer(
    summarizer: Summarizer, request: SummaryRequest, *, timeout: float | None
) -> str:
    """Async version of `call_summarizer` (the call is cancelled on timeout)."""
    return summary_text(await acall_with_timeout(lambda: summarizer.asummarize(request), timeout))


def failure_reason(exc: BaseException) -> str:
    """How a failed summarizer call is recorded: ``"timed out"`` or the error's repr, clipped."""
    return "timed out" if isinstance(exc, TimeoutError) else repr(exc)[:300]


def warn_failure(exc: BaseException, fallback: str) -> None:
    """Log a failure the caller falls back on ``fallback``: a warning once per kind, then DEBUG."""
    kind = "TimeoutError" if isinstance(exc, TimeoutError) else type(exc).__name__
    with _warned_lock:
        first = kind not in _warned
        if first and len(_warned) < _MAX_KINDS:
            _warned.add(kind)
    if first:
        logger.warning(
            "langctx: the summarizer failed (%s); using %s. Later %s failures are logged at "
            "DEBUG level (each fallback is in the eviction log).",
            failure_reason(exc),
            fallback,
            kind,
        )
    else:
        logger.debug("langctx: the summarizer failed (%s); using %s", failure_reason(exc), fallback)
