"""The summarizer calls of a compaction: timeout, fallback to the local summary, cap."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from langctx.engine.plan import Plan
from langctx.summarize import (
    SummaryRequest,
    truncate_to_tokens,
)

if TYPE_CHECKING:
    from langctx.memory import LayeredChatMemory

logger = logging.getLogger("langctx")

_EXECUTOR = concurrent.futures.ThreadPoolExecutor(
    max_workers=4, thread_name_prefix="langctx-summarizer"
)


def _run(
    self: LayeredChatMemory, plan: Plan, call: Callable[[SummaryRequest], str]
) -> tuple[str, str]:
    if plan.request is None:
        return "", plan.quality
    if plan.quality in ("local", "mechanical"):
        return self._local.summarize(plan.request), plan.quality
    return self._checked(plan.request, call)


async def _arun(self: LayeredChatMemory, plan: Plan) -> tuple[str, str]:
    if plan.request is None:
        return "", plan.quality
    if plan.quality in ("local", "mechanical"):
        return self._local.summarize(plan.request), plan.quality
    try:
        coro = self.summarizer.asummarize(plan.request)
        text = await asyncio.wait_for(coro, self.config.summary_timeout)
    except Exception as exc:
        return self._fallback(plan.request, exc)
    return self._accept(plan.request, text)


def _call_sync(self: LayeredChatMemory, request: SummaryRequest) -> str:
    timeout = self.config.summary_timeout
    if timeout is None or self.summarizer is self._local:  # local: no thread hand-off
        return self.summarizer.summarize(request)
    ctx = contextvars.copy_context()  # keep callbacks / run tree of the caller
    future = _EXECUTOR.submit(ctx.run, self.summarizer.summarize, request)
    return future.result(timeout=timeout)


def _checked(
    self: LayeredChatMemory, request: SummaryRequest, call: Callable[[SummaryRequest], str]
) -> tuple[str, str]:
    try:
        text = call(request)
    except Exception as exc:
        return self._fallback(request, exc)
    return self._accept(request, text)


def _accept(self: LayeredChatMemory, request: SummaryRequest, text: object) -> tuple[str, str]:
    if not isinstance(text, str) or not text.strip():
        return self._fallback(request, ValueError("the summarizer returned no text"))
    quality = "merged" if request.kind == "merge" else "model"
    return self._cap(text.strip()), quality


def _fallback(
    self: LayeredChatMemory, request: SummaryRequest, exc: BaseException
) -> tuple[str, str]:
    reason = (
        "timed out"
        if isinstance(exc, TimeoutError | concurrent.futures.TimeoutError)
        else repr(exc)
    )
    logger.warning("langctx: summarizer failed (%s); using the local summary", reason[:300])
    self._record("summarizer_fallback", request.kind, [], 0, reason[:300])
    return self._local.summarize(request), "fallback"


def _cap(self: LayeredChatMemory, text: str) -> str:
    return truncate_to_tokens(
        text, self.config.max_summary_tokens_resolved, self.counter.count_text
    )
