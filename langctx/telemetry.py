"""OpenTelemetry spans of compactions (with the ``otel`` extra; see docs/observability.md), and
the thread a summarizer call belongs to (:func:`current_thread_id`)."""

from __future__ import annotations

import contextvars
import functools
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from types import ModuleType
from typing import TYPE_CHECKING, Any

from langchain_core.runnables.config import var_child_runnable_config

from langctx.markers import NO_THREAD

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore
    from langctx.engine.plan import CompactionEvent, Plan

TRACER_NAME = "langctx"
"""The instrumentation scope of langctx's spans."""

SPAN_NAME = "langctx.compaction"
"""The name of a compaction's span."""

_provider: Any = None
_thread: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "langctx_compaction_thread", default=None
)


def set_tracer_provider(provider: Any) -> None:
    """Make langctx's spans go to ``provider`` (None: OpenTelemetry's global provider)."""
    global _provider
    _provider = provider


def current_thread_id() -> str | None:
    """The thread of the compaction running in this context, else the run's ``thread_id``."""
    thread = _thread.get()
    return thread if thread is not None else _run_thread()


def _run_thread() -> str | None:
    config = var_child_runnable_config.get() or {}
    tid = (config.get("configurable") or {}).get("thread_id")
    return None if tid is None or tid == NO_THREAD else str(tid)


@functools.cache
def _trace_api() -> ModuleType | None:
    try:
        from opentelemetry import trace
    except ImportError:  # the optional extra is not installed
        return None
    return trace


class CompactionSpan:
    """One compaction's span while it runs (attributes: docs/observability.md); :meth:`record`
    gives it the end event's figures."""

    def __init__(
        self, memory: MemoryCore, plan: Plan, thread: str | None, trace: ModuleType | None
    ) -> None:
        self.memory = memory
        self.trace = trace
        self.span: Any = None
        self._start_ns = time.time_ns()
        self._marks = (len(memory._entries), len(memory._edits))
        self._first: dict[str, Any] = {}
        if trace is not None:
            self._first = {
                "gen_ai.conversation.id": thread,
                "langctx.trigger": plan.trigger,
                "langctx.tokens_before": plan.tokens_before,
                "langctx.messages_before": None,
                **_model_attributes(memory.summarizer),
            }
            if not (plan.batch or plan.placeholders):  # a span only if the view changes after all
                self._first["langctx.messages_before"] = len(memory.build_context())

    def open(self) -> Any:
        """Start the span (with the figures of the view before the compaction)."""
        assert self.trace is not None
        tracer = self.trace.get_tracer(TRACER_NAME, tracer_provider=_provider)
        self.span = tracer.start_span(SPAN_NAME, start_time=self._start_ns)
        if self.span.is_recording():
            if self._first["langctx.messages_before"] is None:
                self._first["langctx.messages_before"] = len(self.memory.build_context())
            _set(self.span, self._first)
        return self.span

    def record(self, event: CompactionEvent) -> None:
        """The figures of the compaction's end (opening the span of one that changed the view
        after all)."""
        memory = self.memory
        changed = (len(memory._entries), len(memory._edits)) != self._marks
        if self.span is None and self.trace is not None and changed:
            self.open()
        if self.span is None or not self.span.is_recording():  # (never opened without trace)
            return
        written = memory._entries[self._marks[0] :]
        entry = event.entry
        _set(
            self.span,
            {
                "langctx.tokens_after": event.tokens_after,
                "langctx.messages_after": len(memory.build_context()),
                "langctx.level": max((e["level"] for e in written), default=None),
                "langctx.quality": entry["quality"] if entry is not None else None,
                "langctx.entry_id": entry["id"] if entry is not None else None,
                "langctx.on_critical_path": event.mode != "background",
                "langctx.mode": event.mode,
                "langctx.edits": event.edits,
            },
        )


@contextmanager
def compaction_span(memory: MemoryCore, plan: Plan) -> Iterator[CompactionSpan]:
    """The span of one compaction, current inside (none without OpenTelemetry or for a plan that
    changes nothing), with the memory's thread as :func:`current_thread_id`."""
    thread = memory.thread_id if memory.thread_id not in (None, NO_THREAD) else _run_thread()
    trace = _trace_api()
    span = CompactionSpan(memory, plan, thread, trace)
    # a plan that changes the view opens its span now, current in the block; else `record` may
    now = trace if plan.batch or plan.placeholders else None
    token = _thread.set(thread)
    try:
        with now.use_span(span.open(), end_on_exit=True) if now is not None else nullcontext():
            yield span
    finally:
        if now is None and span.span is not None:
            span.span.end()
        _thread.reset(token)


def _set(span: Any, attributes: dict[str, Any]) -> None:
    span.set_attributes({k: v for k, v in attributes.items() if v is not None})


def _model_attributes(summarizer: object) -> dict[str, Any]:
    """``gen_ai.request.model`` and ``gen_ai.provider.name`` of a model summarizer, when known."""
    model = getattr(summarizer, "model", None)
    inner = getattr(model, "bound", model)
    params = getattr(inner, "_get_ls_params", None)
    if params is None:
        return {}
    try:
        ls = params()
    except Exception:  # a model whose tracing params need arguments: no names then
        return {}
    return {
        "gen_ai.request.model": ls.get("ls_model_name"),
        "gen_ai.provider.name": ls.get("ls_provider"),
    }
