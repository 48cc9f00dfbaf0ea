"""Compaction events for LangGraph's custom stream and LangChain callbacks (docs/observability.md).

Example:
    >>> from langctx import CompactionEvent
    >>> p = event_payload(CompactionEvent(phase="start", trigger="manual", tokens_before=900))
    >>> p["event"], p["phase"], p["tokens_before"]
    ('langctx_compaction', 'start', 900)
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, Unpack

from langchain_core.callbacks import adispatch_custom_event, dispatch_custom_event
from langgraph.config import get_stream_writer

from langctx.entries import covered_count
from langctx.memory import CompactionEvent
from langctx.state_memory import MemoryOptions, MemorySettings
from langctx.telemetry import notify, report_failure

__all__ = [
    "COMPACTION_EVENT",
    "deferred_callbacks",
    "emit_compaction_event",
    "emitting",
    "event_payload",
]

COMPACTION_EVENT = "langctx_compaction"
"""Name of the custom event (callbacks) and the ``event`` field of the custom-stream chunk."""

_NO_RUN = "without a parent run id"  # langchain-core's error outside a run

_DEFERRED: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "langctx_deferred_events", default=None
)


def event_payload(event: CompactionEvent) -> dict[str, Any]:
    """The JSON data of a compaction event (the same for the stream and the callbacks)."""
    entry = event.entry
    return {
        "event": COMPACTION_EVENT,
        "phase": event.phase,
        "trigger": event.trigger,
        "tokens_before": event.tokens_before,
        "tokens_after": event.tokens_after,
        "duration_s": None if event.duration_s is None else round(event.duration_s, 4),
        "quality": entry["quality"] if entry is not None else None,
        "entry_id": entry["id"] if entry is not None else None,
        "level": entry["level"] if entry is not None else None,
        "covered": covered_count(entry) if entry is not None else 0,
        "edits": event.edits,
        "mode": event.mode,
        "detail": event.detail,
        "waited_s": round(event.waited_s, 4),
    }


def emit_compaction_event(event: CompactionEvent) -> None:
    """Send one event to the custom stream and the callbacks of the current run; never raises
    (a failing consumer or handler is reported: :func:`~langctx.telemetry.report_failure`)."""
    payload = event_payload(event)
    try:
        writer = get_stream_writer()
    except (RuntimeError, KeyError, AttributeError):
        writer = None  # outside a graph run
    if writer is not None:
        try:
            writer(payload)
        except Exception as exc:  # a user's stream consumer must not break compaction
            report_failure("the custom stream writer", exc, "the event is not streamed")
    deferred = _DEFERRED.get()
    if deferred is not None:
        deferred.append(payload)
        return
    try:
        dispatch_custom_event(COMPACTION_EVENT, payload)
    except Exception as exc:
        _dispatch_failed(exc)


def _dispatch_failed(exc: Exception) -> None:
    """Report a callback handler's failure (outside a run there is nobody to tell: no report)."""
    if isinstance(exc, RuntimeError) and _NO_RUN in str(exc):
        return
    report_failure("a callback handler", exc, "the compaction goes on")


@asynccontextmanager
async def deferred_callbacks() -> AsyncIterator[None]:
    """Async context: collect the callback events raised inside (a sync dispatch cannot reach
    async handlers safely), dispatch them with ``adispatch`` on the way out.

    Example:
        >>> import asyncio
        >>> async def main():
        ...     async with deferred_callbacks():
        ...         pass
        >>> asyncio.run(main())
    """
    events: list[dict[str, Any]] = []
    token = _DEFERRED.set(events)
    try:
        yield
    except Exception:
        _DEFERRED.reset(token)
        await _dispatch(events)
        raise
    _DEFERRED.reset(token)
    await _dispatch(events)


async def _dispatch(events: list[dict[str, Any]]) -> None:
    for payload in events:
        try:
            await adispatch_custom_event(COMPACTION_EVENT, payload)
        except Exception as exc:
            _dispatch_failed(exc)


def emitting(**options: Unpack[MemoryOptions]) -> MemorySettings:
    """Settings whose compactions are also emitted as events (the user's listener still runs)."""
    user = options.get("on_compaction")

    def on_compaction(event: CompactionEvent) -> None:
        emit_compaction_event(event)
        notify(user, event)

    return MemorySettings.of(**options).with_listener(on_compaction)
