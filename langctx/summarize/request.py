"""What a summarizer is given, the summarizer protocol, and normalising a summarizer spec."""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from langchain_core.language_models import BaseLanguageModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable

from langctx.errors import ConfigError
from langctx.summarize.prompts import PROMPT_VERSION


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryRequest:
    """Everything one summary is made from.

    ``messages``: the evicted batch (``"turns"``); ``summaries``: earlier summaries it absorbs, or
    those a ``"merge"`` merges (oldest first).
    """

    kind: Literal["turns", "merge", "tool_output"]
    messages: Sequence[BaseMessage] = ()
    summaries: Sequence[str] = ()
    facts: dict[str, Any] = field(default_factory=dict)
    """Mechanical facts (files, commands, errors, constraints, next step)."""
    task: str | None = None
    """The pinned original task, for context."""
    instructions: str | None = None
    """Focus instructions from a manual ``/compact`` or ``compact(instructions=...)``."""
    max_tokens: int = 200
    """The cap the summary will be cut to."""
    level: int = 1
    output: str = ""
    """For ``kind="tool_output"``: the tool call, its facts and its (clipped) output."""
    context: Sequence[BaseMessage] = ()
    """For ``kind="turns"``, when the summarizer ``wants_context``: what the model was sent last."""
    tool_kind: str = "default"
    """For ``kind="tool_output"``: what the tool did (a ``ToolKind``), which picks the prompt."""


def request_digest(request: SummaryRequest) -> str:
    """A digest of what a summary is made from and the prompts' version (not ``context``)."""
    messages = [
        [m.type, m.id, m.content, getattr(m, "tool_calls", None), getattr(m, "tool_call_id", None)]
        for m in request.messages
    ]
    parts: list[Any] = [PROMPT_VERSION, request.kind, messages, list(request.summaries)]
    parts += [request.facts, request.task, request.instructions, request.max_tokens, request.level]
    parts += [request.output, request.tool_kind]
    text = json.dumps(parts, sort_keys=True, ensure_ascii=False, default=repr)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


@runtime_checkable
class Summarizer(Protocol):
    """Turns a :class:`SummaryRequest` into summary text."""

    def summarize(self, request: SummaryRequest) -> str: ...

    async def asummarize(self, request: SummaryRequest) -> str:
        """Async version of `summarize`."""


class CallableSummarizer:
    """Wraps a plain function ``fn(request) -> str`` (sync or async) as a summarizer.

    Example:
        >>> s = CallableSummarizer(lambda req: f"{len(req.messages)} messages")
        >>> s.summarize(SummaryRequest(kind="turns"))
        '0 messages'
    """

    def __init__(self, fn: Callable[[SummaryRequest], str | Awaitable[str]]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", type(fn).__name__)

    def summarize(self, request: SummaryRequest) -> str:
        """Call the function; an async function is run to completion."""
        out = self.fn(request)
        return asyncio.run(_await(out)) if inspect.isawaitable(out) else out

    async def asummarize(self, request: SummaryRequest) -> str:
        """Async version of `summarize` (a sync function runs in a worker thread)."""
        out = self.fn(request) if _is_async(self.fn) else await asyncio.to_thread(self.fn, request)
        return await out if inspect.isawaitable(out) else out


def _is_async(fn: object) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 (a callable object's async __call__)
    )


async def _await(value: Awaitable[str]) -> str:
    return await value


def resolve_summarizer(spec: object) -> Summarizer:
    """Normalise a summarizer spec: ``None``/``"local"``, a chat model or Runnable, an object
    with ``summarize``, or a callable.

    Raises:
        ConfigError: a class, something not callable, or a callable that cannot take a request.

    Example:
        >>> type(resolve_summarizer(None)).__name__
        'LocalSummarizer'
        >>> from langchain_core.language_models.fake_chat_models import FakeListChatModel
        >>> resolve_summarizer(FakeListChatModel)
        Traceback (most recent call last):
        ...
        langctx.errors.ConfigError: summarizer=FakeListChatModel is a class, not a summarizer; pass an instance, e.g. summarizer=FakeListChatModel(...).
    """
    from langctx.summarize.local import LocalSummarizer
    from langctx.summarize.model import ModelSummarizer

    if spec is None or spec == "local":
        return LocalSummarizer()
    if inspect.isclass(spec):
        name = spec.__name__
        msg = (
            f"summarizer={name} is a class, not a summarizer; pass an instance, "
            f"e.g. summarizer={name}(...)."
        )
        raise ConfigError(msg)
    if isinstance(spec, BaseLanguageModel | Runnable):
        return ModelSummarizer(spec)
    summarize = getattr(spec, "summarize", None)
    if callable(summarize):
        _check_takes_a_request(summarize, f"{type(spec).__name__}.summarize")
        if not hasattr(spec, "asummarize"):
            return CallableSummarizer(summarize)
        return spec  # type: ignore[return-value]
    if callable(spec):
        _check_takes_a_request(spec, getattr(spec, "__name__", type(spec).__name__))
        return CallableSummarizer(spec)
    msg = (
        f"summarizer must be None, 'local', a chat model / Runnable, an object with "
        f"summarize(request), or a callable; got {type(spec).__name__}."
    )
    if isinstance(spec, str):
        msg = (
            f"summarizer={spec!r} is not a summarizer; pass a chat model, e.g. "
            f"summarizer=init_chat_model({spec!r}), or 'local'."
        )
    raise ConfigError(msg)


def _check_takes_a_request(fn: Callable[..., Any], name: str) -> None:
    """Refuse a callable that cannot be called with one :class:`SummaryRequest`."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # no signature to read (a builtin): trust it
        return
    try:
        signature.bind(SummaryRequest(kind="turns"))
    except TypeError as exc:
        msg = f"summarizer {name}{signature} cannot take a SummaryRequest ({exc}); make it take one argument."
        raise ConfigError(msg) from None
