"""Calling a summarizer: a deadline, and nothing but text accepted as its answer.

Compaction and Context-mode call summarizers through these, so a model that hangs, raises,
answers with nothing or with a non-text value (a dict, a list of blocks without text) fails the
same way everywhere, and each caller falls back to what it has (the local summary, the reduction).

Example:
    >>> from langctx.summarize.request import CallableSummarizer, SummaryRequest
    >>> call_summarizer(CallableSummarizer(lambda r: " Goal: x "), SummaryRequest(kind="turns"), timeout=5)
    'Goal: x'
    >>> summary_text({"summary": "x"})
    Traceback (most recent call last):
    ...
    langctx.errors.SummarizerError: the summarizer returned a dict, not text; return a str or a chat message.
"""

from __future__ import annotations

from langchain_core.messages import BaseMessage

from langctx.errors import SummarizerError
from langctx.summarize.request import Summarizer, SummaryRequest
from langctx.timeouts import acall_with_timeout, call_with_timeout

__all__ = ["acall_summarizer", "call_summarizer", "summary_text"]


def summary_text(answer: object) -> str:
    """The text of a summarizer's (or its model's) answer, stripped.

    Raises:
        SummarizerError: the answer is not a str or a chat message, or it holds no text.

    Example:
        >>> from langchain_core.messages import AIMessage
        >>> summary_text(AIMessage(" Goal: fix it. "))
        'Goal: fix it.'
    """
    if isinstance(answer, BaseMessage):
        text = str(answer.text)
    elif isinstance(answer, str):
        text = answer
    else:
        msg = (
            f"the summarizer returned a {type(answer).__name__}, not text; "
            "return a str or a chat message."
        )
        raise SummarizerError(msg)
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
        SummarizerError: the answer is not text (see :func:`summary_text`).
    """
    return summary_text(call_with_timeout(lambda: summarizer.summarize(request), timeout))


async def acall_summarizer(
    summarizer: Summarizer, request: SummaryRequest, *, timeout: float | None
) -> str:
    """Async version of `call_summarizer` (the call is cancelled on timeout)."""
    answer = await acall_with_timeout(lambda: summarizer.asummarize(request), timeout)
    return summary_text(answer)
