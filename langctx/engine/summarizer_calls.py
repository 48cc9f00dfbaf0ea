"""The summarizer calls of a compaction, written once as steps that yield each call: the fallback to
the local summary, the cap, and the sync and async drivers that make the calls."""

from __future__ import annotations

from collections.abc import Generator
from typing import TYPE_CHECKING, TypeVar

from langctx.engine import writing
from langctx.errors import ConfigError, SummarizerError
from langctx.steps import adrive as steps_adrive
from langctx.steps import drive as steps_drive
from langctx.summarize import SummaryRequest, acall_summarizer, call_summarizer, truncate_to_tokens
from langctx.summarize.calls import failure_reason, warn_failure

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore

MAX_OVERRUN = 10
"""A summary over this many times its cap is refused, not cut (the model ignored its prompt)."""

T = TypeVar("T")
Steps = Generator[SummaryRequest, str, T]
"""Steps that yield each summarizer request and are sent its text (a failure is thrown in)."""


def drive(mem: MemoryCore, steps: Steps[T]) -> T:
    """Run ``steps``, making each summarizer call they ask for."""
    return steps_drive(steps, lambda r: call_summarizer(mem.summarizer, r, timeout=_deadline(mem)))


async def adrive(mem: MemoryCore, steps: Steps[T]) -> T:
    """Async version of `drive`."""
    return await steps_adrive(
        steps, lambda r: acall_summarizer(mem.summarizer, r, timeout=_deadline(mem))
    )


def summarizing(mem: MemoryCore, request: SummaryRequest) -> Steps[tuple[str, str]]:
    """The summary text and its quality ("model", "merged", or "fallback" after a failure)."""
    mem._blocking_calls += 1
    try:
        text = checked(mem, (yield request))
    except Exception as exc:  # the local summary instead (warned, recorded); a ConfigError raised
        if isinstance(exc, ConfigError):
            raise
        warn_failure(exc, "the local summary")
        writing.record(mem, "summarizer_fallback", request.kind, [], 0, failure_reason(exc))
        return mem._local.summarize(request), "fallback"
    return text, "merged" if request.kind == "merge" else "model"


def _deadline(mem: MemoryCore) -> float | None:
    """The summarizer's deadline; the local one runs in the caller's thread, unbounded."""
    return None if mem.summarizer is mem._local else mem.config.summary_timeout


def cap(mem: MemoryCore, text: str) -> str:
    return truncate_to_tokens(text, mem.config.max_summary_tokens_resolved, mem.counter.count_text)


def checked(mem: MemoryCore, text: str) -> str:
    """A summarizer's ``text`` cut to the summary cap.

    Raises:
        SummarizerError: it is over :data:`MAX_OVERRUN` times the cap (the caller falls back).
    """
    limit = MAX_OVERRUN * mem.config.max_summary_tokens_resolved
    if len(text) > limit and (tokens := mem.counter.count_text(text)) > limit:
        msg = (
            f"the summary has {tokens} tokens, over {MAX_OVERRUN} times its cap of "
            f"{limit // MAX_OVERRUN}; check the summarizer's model and prompt."
        )
        raise SummarizerError(msg)
    return cap(mem, text)
