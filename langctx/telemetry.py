"""OpenTelemetry spans of compactions and of their summarizer calls (with the ``otel`` extra; see
docs/observability.md), and the thread a summarizer call belongs to (:func:`current_thread_id`).

Observability never fails the agent: an exception raised while a span is built, made current or
ended, by an ``on_compaction`` listener, a callback handler or a stream writer is logged (one
WARNING line per kind of failure and exception type, DEBUG after: :func:`report_failure`) and the
work goes on.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import ModuleType
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from langchain_core.runnables.config import var_child_runnable_config

from langctx.markers import NO_THREAD

if TYPE_CHECKING:
    from langctx.engine.core import MemoryCore
    from langctx.engine.plan import CompactionEvent, Plan

TRACER_NAME = "langctx"
"""The instrumentation scope of langctx's spans."""

SPAN_NAME = "langctx.compaction"
"""The name of a compaction's span."""

COMPACTION_OPERATION = "compaction"
"""The compaction span's ``gen_ai.operation.name`` (as the summarizer run's ``ls_agent_type``)."""

CHAT_OPERATION = "chat"
"""The ``gen_ai.operation.name`` of a summarizer's model call (its span: ``chat {model}``)."""

_log = logging.getLogger(__name__)
_P = ParamSpec("_P")
_R = TypeVar("_R")
_E = TypeVar("_E")

_provider: Any = None
_reported: set[tuple[str, str]] = set()
_reported_lock = threading.Lock()
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


def report_failure(kind: str, exc: BaseException, consequence: str) -> None:
    """Log that an observability hook (``kind``) raised ``exc``: a WARNING line the first time
    per kind and exception type in this process, DEBUG after (a failing exporter would otherwise
    log at every compaction)."""
    key = (kind, type(exc).__qualname__)
    with _reported_lock:
        first = key not in _reported
        _reported.add(key)
    _log.log(
        logging.WARNING if first else logging.DEBUG,
        "langctx telemetry: %s raised %r; %s (its next %s failures: DEBUG)",
        kind,
        exc,
        consequence,
        type(exc).__name__,
    )


def forget_reported_failures() -> None:
    """Log the next failure of every kind at WARNING again (for tests)."""
    with _reported_lock:
        _reported.clear()


def notify(listener: Callable[[_E], object] | None, event: _E) -> None:
    """``listener(event)`` unless None; what it raises is reported, never raised."""
    if listener is None:
        return
    try:
        listener(event)
    except Exception as exc:
        report_failure("an on_compaction listener", exc, "the compaction goes on")


def _quiet(fn: Callable[_P, _R]) -> Callable[_P, _R | None]:
    """``fn``, logging what it raises and returning None instead (telemetry never fails a run)."""

    @functools.wraps(fn)
    def call(*args: _P.args, **kwargs: _P.kwargs) -> _R | None:
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            report_failure("OpenTelemetry", exc, f"{fn.__name__}: its span is left out")
            return None

    return call


@functools.cache
def _trace_api() -> ModuleType | None:
    try:
        from opentelemetry import trace
    except ImportError:  # the optional extra is not installed
        return None
    return trace


class CompactionSpan:
    """One compaction's span while it runs (attributes: docs/observability.md); :meth:`record`
    gives it the end event's figures. Every method logs what OpenTelemetry raises instead of
    raising it."""

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
                "gen_ai.operation.name": COMPACTION_OPERATION,
                "gen_ai.conversation.id": thread,
                "langctx.trigger": plan.trigger,
                "langctx.tokens_before": plan.tokens_before,
                "langctx.messages_before": None,
                **_model_attributes(memory.summarizer),
            }
            if not (plan.batch or plan.placeholders):  # a span only if the view changes after all
                self._first["langctx.messages_before"] = len(memory.build_context())

    @_quiet
    def open(self) -> None:
        """Start the span (with the figures of the view before the compaction)."""
        if self.trace is None:
            return
        tracer = self.trace.get_tracer(TRACER_NAME, tracer_provider=_provider)
        span = tracer.start_span(SPAN_NAME, start_time=self._start_ns)
        self.span = span
        if span.is_recording():
            if self._first["langctx.messages_before"] is None:
                self._first["langctx.messages_before"] = len(self.memory.build_context())
            _set(span, self._first)

    @_quiet
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


class NoSpan:
    """What :func:`compaction_span` gives when its span could not be built."""

    span: Any = None

    def open(self) -> None:
        """Nothing to start."""

    def record(self, event: CompactionEvent) -> None:
        """Nothing to record."""


@contextmanager
def compaction_span(memory: MemoryCore, plan: Plan) -> Iterator[CompactionSpan | NoSpan]:
    """The span of one compaction, current inside (none without OpenTelemetry or for a plan that
    changes nothing), with the memory's thread as :func:`current_thread_id`."""
    thread = memory.thread_id if memory.thread_id not in (None, NO_THREAD) else _run_thread()
    trace = _trace_api()
    span = _quiet(CompactionSpan)(memory, plan, thread, trace) or NoSpan()
    token = _thread.set(thread)
    try:
        # a plan that changes the view opens its span now, current in the block; else `record` may
        if plan.batch or plan.placeholders:
            span.open()
        with _current(trace, span.span):
            yield span
    finally:
        _thread.reset(token)
        _end(span.span)


class ChatSpan:
    """The span of one summarizer model call (``chat {model}``, a client span); :meth:`record`
    gives it the answer's token usage."""

    def __init__(self, model: object) -> None:
        self.span: Any = None
        trace = _trace_api()
        if trace is None:
            return
        names = _model_attributes(model)
        name = " ".join(x for x in (CHAT_OPERATION, names.get("gen_ai.request.model")) if x)
        tracer = trace.get_tracer(TRACER_NAME, tracer_provider=_provider)
        self.span = tracer.start_span(name, kind=trace.SpanKind.CLIENT)
        if self.span.is_recording():
            _set(self.span, {"gen_ai.operation.name": CHAT_OPERATION, **names})

    @_quiet
    def record(self, answer: object) -> None:
        """The answer's usage (``usage_metadata``) and response model, when it reports them."""
        if self.span is None or not self.span.is_recording():
            return
        usage = getattr(answer, "usage_metadata", None) or {}
        meta = getattr(answer, "response_metadata", None) or {}
        _set(
            self.span,
            {
                "gen_ai.usage.input_tokens": usage.get("input_tokens"),
                "gen_ai.usage.output_tokens": usage.get("output_tokens"),
                "gen_ai.response.model": meta.get("model_name") or meta.get("model"),
                "gen_ai.response.id": getattr(answer, "id", None),
            },
        )


@contextmanager
def chat_span(model: object) -> Iterator[ChatSpan | None]:
    """The span of a summarizer call to ``model``, current inside (None when it cannot be built:
    no OpenTelemetry, or it raised)."""
    span = _quiet(ChatSpan)(model)
    try:
        with _current(_trace_api(), span.span if span is not None else None):
            yield span
    finally:
        _end(span.span if span is not None else None)


@contextmanager
def _current(trace: ModuleType | None, span: Any) -> Iterator[None]:
    """``span`` current inside; an exception from inside is recorded on it (``error.type``)."""
    token = _quiet(_attach)(trace, span) if span is not None else None
    try:
        yield
    except Exception as exc:
        _quiet(_failed)(span, exc)
        raise
    finally:
        if token is not None:
            _quiet(_detach)(token)


def _attach(trace: ModuleType | None, span: Any) -> object:
    from opentelemetry import context

    assert trace is not None
    return context.attach(trace.set_span_in_context(span))


def _detach(token: Any) -> None:
    from opentelemetry import context

    context.detach(token)


def _failed(span: Any, exc: BaseException) -> None:
    if span is None or not span.is_recording():
        return
    from opentelemetry.trace import Status, StatusCode

    span.record_exception(exc)
    span.set_attribute("error.type", type(exc).__qualname__)
    span.set_status(Status(StatusCode.ERROR, str(exc)))


@_quiet
def _end(span: Any) -> None:
    if span is not None:
        span.end()


def _set(span: Any, attributes: dict[str, Any]) -> None:
    span.set_attributes({k: v for k, v in attributes.items() if v is not None})


def _model_attributes(summarizer: object) -> dict[str, Any]:
    """``gen_ai.request.model`` and ``gen_ai.provider.name`` of a model summarizer (or of a chat
    model), when known."""
    model = getattr(summarizer, "model", summarizer)
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
