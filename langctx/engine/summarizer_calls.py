"""The summarizer calls of a compaction: the fallback to the local summary, and the cap.

The deadline and the answer check are :mod:`langctx.summarize.calls` (one rule for compaction and
Context-mode); here a failed call (timeout, error, no text) becomes the local summary, recorded as
``summarizer_fallback`` in the eviction log and warned once per kind of failure; an answer that is
not text at all raises (the summarizer can never work).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langctx.engine.plan import Plan
from langctx.errors import ConfigError
from langctx.summarize import (
    SummaryRequest,
    acall_summarizer,
    call_summarizer,
    truncate_to_tokens,
)
from langctx.summarize.calls import failure_reason, warn_failure

if TYPE_CHECKING:
    from langctx.memory import LayeredChatMemory


def _run(self: LayeredChatMemory, plan: Plan) -> tuple[str, str]:
    if plan.request is None or plan.quality in ("local", "mechanical"):
        return self._unasked(plan)
    return self._summarize(plan.request)


async def _arun(self: LayeredChatMemory, plan: Plan) -> tuple[str, str]:
    if plan.request is None or plan.quality in ("local", "mechanical"):
        return self._unasked(plan)
    return await self._asummarize(plan.request)


def _unasked(self: LayeredChatMemory, plan: Plan) -> tuple[str, str]:
    """The summary of a plan that asks no summarizer (nothing to fold, or a local-only plan)."""
    if plan.request is None:
        return "", plan.quality
    return self._local.summarize(plan.request), plan.quality


def _summarize(self: LayeredChatMemory, request: SummaryRequest) -> tuple[str, str]:
    """The summary text and its quality ("model", "merged", or "fallback" after a failure)."""
    self._blocking_calls += 1
    try:
        text = call_summarizer(self.summarizer, request, timeout=self._deadline())
    except Exception as exc:
        return self._fallback(request, exc)
    return self._accepted(request, text)


async def _asummarize(self: LayeredChatMemory, request: SummaryRequest) -> tuple[str, str]:
    self._blocking_calls += 1
    try:
        text = await acall_summarizer(self.summarizer, request, timeout=self._deadline())
    except Exception as exc:
        return self._fallback(request, exc)
    return self._accepted(request, text)


def _deadline(self: LayeredChatMemory) -> float | None:
    """The summarizer's deadline; the local one runs in the caller's thread, unbounded."""
    return None if self.summarizer is self._local else self.config.summary_timeout


def _accepted(self: LayeredChatMemory, request: SummaryRequest, text: str) -> tuple[str, str]:
    quality = "merged" if request.kind == "merge" else "model"
    return self._cap(text), quality


def _fallback(
    self: LayeredChatMemory, request: SummaryRequest, exc: BaseException
) -> tuple[str, str]:
    """The local summary in place of a failed call (network error, timeout, no text), warned
    once per kind of failure; a summarizer that can never work (its answer is not text) raises
    its :class:`~langctx.errors.ConfigError` instead."""
    if isinstance(exc, ConfigError):
        raise exc
    warn_failure(exc, "the local summary")
    self._record("summarizer_fallback", request.kind, [], 0, failure_reason(exc))
    return self._local.summarize(request), "fallback"


def _cap(self: LayeredChatMemory, text: str) -> str:
    return truncate_to_tokens(
        text, self.config.max_summary_tokens_resolved, self.counter.count_text
    )
