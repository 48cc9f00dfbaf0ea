"""The summarizer calls of a compaction: the fallback to the local summary, and the cap."""

from __future__ import annotations

from typing import TYPE_CHECKING

from langctx.engine import writing
from langctx.engine.plan import Plan
from langctx.errors import ConfigError
from langctx.summarize import SummaryRequest, acall_summarizer, call_summarizer, truncate_to_tokens
from langctx.summarize.calls import failure_reason, warn_failure

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore


def run(mem: MemoryCore, plan: Plan) -> tuple[str, str]:
    if plan.request is None or plan.quality in ("local", "mechanical"):
        return _unasked(mem, plan)
    return summarize(mem, plan.request)


async def arun(mem: MemoryCore, plan: Plan) -> tuple[str, str]:
    if plan.request is None or plan.quality in ("local", "mechanical"):
        return _unasked(mem, plan)
    return await asummarize(mem, plan.request)


def _unasked(mem: MemoryCore, plan: Plan) -> tuple[str, str]:
    """The summary of a plan that asks no summarizer (nothing to fold, or a local-only plan)."""
    text = "" if plan.request is None else mem._local.summarize(plan.request)
    return text, plan.quality


def summarize(mem: MemoryCore, request: SummaryRequest) -> tuple[str, str]:
    """The summary text and its quality ("model", "merged", or "fallback" after a failure)."""
    mem._blocking_calls += 1
    try:
        text = call_summarizer(mem.summarizer, request, timeout=_deadline(mem))
    except Exception as exc:
        return _fallback(mem, request, exc)
    return _accepted(mem, request, text)


async def asummarize(mem: MemoryCore, request: SummaryRequest) -> tuple[str, str]:
    mem._blocking_calls += 1
    try:
        text = await acall_summarizer(mem.summarizer, request, timeout=_deadline(mem))
    except Exception as exc:
        return _fallback(mem, request, exc)
    return _accepted(mem, request, text)


def _deadline(mem: MemoryCore) -> float | None:
    """The summarizer's deadline; the local one runs in the caller's thread, unbounded."""
    return None if mem.summarizer is mem._local else mem.config.summary_timeout


def _accepted(mem: MemoryCore, request: SummaryRequest, text: str) -> tuple[str, str]:
    return cap(mem, text), "merged" if request.kind == "merge" else "model"


def _fallback(mem: MemoryCore, request: SummaryRequest, exc: BaseException) -> tuple[str, str]:
    """The local summary in place of a failed call (warned, recorded); a ConfigError is raised."""
    if isinstance(exc, ConfigError):
        raise exc
    warn_failure(exc, "the local summary")
    writing.record(mem, "summarizer_fallback", request.kind, [], 0, failure_reason(exc))
    return mem._local.summarize(request), "fallback"


def cap(mem: MemoryCore, text: str) -> str:
    return truncate_to_tokens(text, mem.config.max_summary_tokens_resolved, mem.counter.count_text)
